/* Reference for `make bench`: plain MPI_Send/MPI_Recv of BYTES from rank 0 to every other rank
 * in turn, as wulfbench's root hands out samples. Usage: sendrecv_ref BYTES [REPS]
 * Prints the median seconds per message and MB/s (1e6 bytes/s) for each receiving rank. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long bytes = argc > 1 ? atol(argv[1]) : 1 << 20;
    int reps = argc > 2 ? atoi(argv[2]) : 9;
    char *buf = malloc((size_t)bytes);
    /* Real data: an untouched calloc buffer maps the zero page, which copies unrealistically fast. */
    for (long i = 0; i < bytes; i++)
        buf[i] = (char)(i * 31 + rank);
    double *t = malloc(sizeof(double) * (size_t)reps);
    for (int q = 1; q < size; q++) {
        for (int r = -1; r < reps; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (rank == 0)
                MPI_Send(buf, (int)bytes, MPI_BYTE, q, 0, MPI_COMM_WORLD);
            else if (rank == q)
                MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (rank == q && r >= 0)
                t[r] = MPI_Wtime() - t0;
        }
        if (rank == q) {
            qsort(t, (size_t)reps, sizeof *t, cmp);
            printf("rank %d bytes %ld median_s %.6f MBps %.1f\n", q, bytes, t[reps / 2], (double)bytes / t[reps / 2] / 1e6);
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(buf);
    free(t);
    MPI_Finalize();
    return 0;
}
