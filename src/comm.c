#define _POSIX_C_SOURCE 200809L
#include "comm.h"

#include <stdio.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "watchdog.h"

static MPI_Comm world = MPI_COMM_NULL;
static int my_rank, nranks = 1;

int wb_comm_init(int *argc, char ***argv)
{
    /* The watchdog thread calls no MPI: FUNNELED, which costs nothing over SINGLE. */
    int provided;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return wb_error_set(WB_EMPI, "MPI_Init failed; check that mpirun works with a plain program");
    /* Errors are returned so each can be reported with what failed before stopping. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Comm_dup(MPI_COMM_WORLD, &world);
    if (rc != MPI_SUCCESS)
        return wb_comm_check(rc, "MPI_Comm_dup");
    MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN);
    MPI_Comm_rank(world, &my_rank);
    MPI_Comm_size(world, &nranks);
    return 0;
}

void wb_comm_finalize(void)
{
    if (world != MPI_COMM_NULL)
        MPI_Comm_free(&world);
    MPI_Finalize();
}

_Noreturn void wb_comm_abort(int exit_status)
{
    MPI_Abort(MPI_COMM_WORLD, exit_status);
    _exit(exit_status);
}

int wb_comm_rank(void) { return my_rank; }

int wb_comm_size(void) { return nranks; }

MPI_Comm wb_comm_world(void) { return world; }

int wb_comm_check(int mpi_rc, const char *what)
{
    if (mpi_rc == MPI_SUCCESS)
        return 0;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(mpi_rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", mpi_rc);
    return wb_error_set(WB_EMPI, "%s failed: %s", what, text);
}

int wb_comm_agree(int rc)
{
    wb_watchdog_sync();
    int mine = rc ? my_rank : nranks, first = nranks;
    if (MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, world) != MPI_SUCCESS)
        return wb_error_set(WB_EMPI, "could not agree on the outcome between ranks");
    if (first == nranks)
        return 0;
    struct {
        int code;
        char msg[1000];
    } e = {0};
    if (my_rank == first) {
        e.code = rc;
        snprintf(e.msg, sizeof e.msg, "%s", wb_error_message());
    }
    if (MPI_Bcast(&e, sizeof e, MPI_BYTE, first, world) != MPI_SUCCESS)
        return wb_error_set(WB_EMPI, "could not share an error between ranks");
    if (my_rank != first) {
        if (first != 0 && strncmp(e.msg, "rank ", 5) != 0)
            wb_error_set(e.code, "rank %d: %s", first, e.msg);
        else
            wb_error_set(e.code, "%s", e.msg);
    } else if (first != 0) {
        char copy[1000];
        snprintf(copy, sizeof copy, "%s", e.msg);
        wb_error_set(e.code, "rank %d: %s", first, copy);
    }
    return e.code;
}

static double reduce_f64(double v, MPI_Op op)
{
    double out = v;
    MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, op, world);
    return out;
}

double wb_comm_max_f64(double v) { return reduce_f64(v, MPI_MAX); }
double wb_comm_min_f64(double v) { return reduce_f64(v, MPI_MIN); }
double wb_comm_sum_f64(double v) { return reduce_f64(v, MPI_SUM); }

static int64_t reduce_i64(int64_t v, MPI_Op op)
{
    int64_t out = v;
    MPI_Allreduce(&v, &out, 1, MPI_INT64_T, op, world);
    return out;
}

int64_t wb_comm_sum_i64(int64_t v) { return reduce_i64(v, MPI_SUM); }
int64_t wb_comm_max_i64(int64_t v) { return reduce_i64(v, MPI_MAX); }

int wb_comm_max_f64_n(double *v, size_t n)
{
    return wb_comm_check(MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_DOUBLE, MPI_MAX, world), "MPI_Allreduce");
}

int wb_comm_bcast(void *buf, size_t nbytes, int root)
{
    /* MPI counts are int: send large buffers in pieces. */
    char *p = buf;
    while (nbytes > 0) {
        int n = nbytes > (1u << 30) ? (1 << 30) : (int)nbytes;
        int rc = wb_comm_check(MPI_Bcast(p, n, MPI_BYTE, root, world), "MPI_Bcast");
        if (rc)
            return rc;
        p += n;
        nbytes -= (size_t)n;
    }
    return 0;
}

int wb_comm_bcast_str(char *s, size_t cap)
{
    int len = my_rank == 0 ? (int)strnlen(s, cap - 1) : 0;
    int rc = wb_comm_check(MPI_Bcast(&len, 1, MPI_INT, 0, world), "MPI_Bcast");
    if (rc)
        return rc;
    rc = wb_comm_bcast(s, (size_t)len, 0);
    s[len] = '\0';
    return rc;
}

int wb_comm_gather_f64(double v, double *out)
{
    return wb_comm_check(MPI_Gather(&v, 1, MPI_DOUBLE, out, 1, MPI_DOUBLE, 0, world), "MPI_Gather");
}

int wb_comm_gather_f64_n(const double *v, size_t n, double *out)
{
    return wb_comm_check(MPI_Gather(v, (int)n, MPI_DOUBLE, out, (int)n, MPI_DOUBLE, 0, world), "MPI_Gather");
}

int wb_comm_gather_i64(int64_t v, int64_t *out)
{
    return wb_comm_check(MPI_Gather(&v, 1, MPI_INT64_T, out, 1, MPI_INT64_T, 0, world), "MPI_Gather");
}

int wb_comm_nodes(int *node)
{
    char name[MPI_MAX_PROCESSOR_NAME] = {0};
    if (gethostname(name, sizeof name - 1) != 0)
        snprintf(name, sizeof name, "unknown");
    char *all = calloc((size_t)nranks, MPI_MAX_PROCESSOR_NAME);
    if (!all)
        return wb_error_set(WB_ENOMEM, "out of memory for host names");
    int rc = wb_comm_check(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME,
                                         MPI_CHAR, world),
                           "MPI_Allgather");
    int nnodes = 0;
    for (int r = 0; rc == 0 && r < nranks; r++) {
        node[r] = -1;
        for (int q = 0; q < r; q++)
            if (strcmp(all + (size_t)q * MPI_MAX_PROCESSOR_NAME, all + (size_t)r * MPI_MAX_PROCESSOR_NAME) == 0) {
                node[r] = node[q];
                break;
            }
        if (node[r] < 0)
            node[r] = nnodes++;
    }
    free(all);
    return rc ? rc : nnodes;
}

int wb_comm_split_node(MPI_Comm *node, int *root_local)
{
    int rc = wb_comm_check(MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, my_rank, MPI_INFO_NULL, node),
                           "MPI_Comm_split_type");
    if (rc)
        return rc;
    /* Ranks are keyed by world rank, so world rank 0, where present, is local rank 0. */
    int lowest = my_rank;
    rc = wb_comm_check(MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, *node), "MPI_Allreduce");
    *root_local = rc == 0 && lowest == 0 ? 0 : -1;
    return rc;
}

int wb_comm_barrier(void)
{
    wb_watchdog_sync();
    return wb_comm_check(MPI_Barrier(world), "MPI_Barrier");
}
