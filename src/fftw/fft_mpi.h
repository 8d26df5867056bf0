/* fft_mpi: the fft module's FFTW-MPI part, the only place that includes fftw3-mpi.h: the slab layout,
 * plans of one transform spread over the ranks, timed execution by phase, wisdom sharing, flop counts. */
#ifndef WB_FFT_MPI_H
#define WB_FFT_MPI_H

#include <mpi.h>
#include <stdint.h>

enum wb_fftmpi_kind { WB_FFTMPI_C2C = 0, WB_FFTMPI_R2C = 1 };

/* Where this rank's part of one distributed transform lives. In 2-D and 3-D the transposes see a
 * complex array c0 x c1 of cells of c2 elements: (n0, n1, n2/2+1 or n2) in 3-D, (n0, n1/2+1 or n1, 1)
 * in 2-D. Input: rows in_start.. of n0, each row_elems complex elements apart (r2c: 2*row_elems reals,
 * the last dimension padded to 2*(n/2+1)). Output: the same rows, or with transposed_out rows
 * out_start.. of c1, each c0*c2 complex elements (FFTW_MPI_TRANSPOSED_OUT's n1 x n0 x n2 order).
 * In 1-D: elements in_start.. of the input and out_start.. of the output. */
struct wb_fftmpi_layout {
    int dims, kind, precision, transposed_out;
    int64_t n[3];               /* global shape; unused dimensions are 1 */
    int64_t total;              /* n0 * n1 * n2 */
    int64_t c0, c1, c2;
    int64_t row_elems;          /* c1 * c2 (1 in 1-D) */
    int64_t in_start, in_count;
    int64_t out_start, out_count;
    int64_t mid_start, mid_count; /* 2-D, 3-D: rows of c1 this rank holds after the first transpose */
    int64_t alloc_elems;        /* complex elements of each buffer, as fftw_mpi_local_size asks */
    int64_t local_n;            /* input elements (points) this rank holds */
    int64_t bytes_transposed;   /* bytes this rank sends to other ranks in one forward transform */
};

struct wb_fftmpi;

/* 1 if this build has FFTW-MPI; 0 if it was built without (e.g. MPI=mpich on Debian). */
int wb_fftmpi_available(void);

/* Start FFTW-MPI in both precisions (once; after MPI_Init). Collective. 0, or WB_EUSAGE in a build without it. */
int wb_fftmpi_init(void);

/* The slab layout of a transform of shape n[dims] on comm, from fftw_mpi_local_size_*. Collective.
 * 0, WB_EUSAGE (no FFTW-MPI in this build) or WB_EFFTW. */
int wb_fftmpi_layout(struct wb_fftmpi_layout *l, int dims, const int64_t *n, int kind, int precision,
                     int transposed_out, MPI_Comm comm);

/* Bytes each buffer of the layout needs on this rank (wb_fftmpi_create allocates two in 1-D, one else). */
int64_t wb_fftmpi_buffer_bytes(const struct wb_fftmpi_layout *l);

/* Allocate the buffers and make forward and backward plans (effort: enum wb_fft_effort); planning
 * overwrites the buffers. Collective. 0, WB_ENOMEM or WB_EFFTW. */
int wb_fftmpi_create(struct wb_fftmpi **p, const struct wb_fftmpi_layout *l, int effort, MPI_Comm comm);

/* Free plans and buffers; sets *p to NULL. Local. */
void wb_fftmpi_destroy(struct wb_fftmpi **p);

/* Where the input goes before wb_fftmpi_forward (and the backward result ends up), and where the
 * forward output is (the same buffer in 2-D and 3-D). Local. */
void *wb_fftmpi_in(struct wb_fftmpi *p);
void *wb_fftmpi_out(struct wb_fftmpi *p);

/* The forward transform. Collective. In 2-D and 3-D *t_local_s gets the seconds in local FFTs and
 * *t_transpose_s those in FFTW-MPI transposes; in 1-D both are NaN (one FFTW-MPI plan does it all). */
void wb_fftmpi_forward(struct wb_fftmpi *p, double *t_local_s, double *t_transpose_s);

/* The unnormalised backward transform of the forward output, back into wb_fftmpi_in. Collective.
 * Times by phase as wb_fftmpi_forward (either pointer may be NULL). */
void wb_fftmpi_backward(struct wb_fftmpi *p, double *t_local_s, double *t_transpose_s);

/* The seconds this rank spent inside the MPI calls of FFTW-MPI's transposes (the exchange, without
 * the packing and unpacking around it), and the bytes it sent to other ranks there, since the last
 * take; then zero. 2-D and 3-D; NaN without FFTW-MPI. Local. */
void wb_fftmpi_exchange_take(double *seconds, int64_t *bytes);
/* Times MPI exchanges from now on (on != 0) or no longer. Local; fft_mpi.c arms it for transposes. */
void wb_fftmpi_exchange_arm(int on);

/* Every rank's wisdom to rank 0: fftw_mpi_gather_wisdom. Collective. */
void wb_fftmpi_wisdom_gather(MPI_Comm comm);

/* HPCC's flop count of one transform of total points: 5 N log2 N for c2c, half that for r2c. */
double wb_fftmpi_flops(int kind, int64_t total);

#endif
