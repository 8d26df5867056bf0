#define _POSIX_C_SOURCE 200809L
#include "bench/transfer/bench_transfer_kernels.h"

#include <math.h>
#include <string.h>

#include "par/comm.h"
#include "core/timer.h"

#define TRY WB_TRANSFER_TRY

#define ALL WB_TRANSFER_DST_ALL

#define barrier wb_transfer_barrier

int wb_transfer_k_barrier(struct wb_transfer_ctx *c, double *t_op_s)
{
    int rc = barrier(c);
    if (rc)
        return rc;
    double t0 = wb_timer_now_s();
    TRY(MPI_Barrier(c->comm), "MPI_Barrier");
    *t_op_s = wb_timer_now_s() - t0;
    return 0;
}

int wb_transfer_k_bcast(struct wb_transfer_ctx *c, double *t_op_s)
{
    size_t n = (size_t)c->msg_bytes;
    int is_root = c->rank == c->root;
    if (c->validate && is_root)
        wb_transfer_fill(c->sbuf, n, wb_transfer_salt(c, c->root, ALL));
    int rc = barrier(c);
    if (rc)
        return rc;
    double t0 = wb_timer_now_s();
    TRY(MPI_Bcast(c->sbuf, (int)n, MPI_BYTE, c->root, c->comm), "MPI_Bcast");
    *t_op_s = wb_timer_now_s() - t0;
    if (c->validate && !is_root)
        wb_transfer_check(c, c->sbuf, n, wb_transfer_salt(c, c->root, ALL), c->root, c->rank);
    return 0;
}

int wb_transfer_k_scatter(struct wb_transfer_ctx *c, double *t_op_s)
{
    size_t n = (size_t)c->msg_bytes;
    if (c->validate && c->rank == c->root)
        for (int q = 0; q < c->nranks; q++)
            wb_transfer_fill(c->sbuf + (size_t)q * n, n, wb_transfer_salt(c, c->root, q));
    int rc = barrier(c);
    if (rc)
        return rc;
    double t0 = wb_timer_now_s();
    TRY(MPI_Scatter(c->sbuf, (int)n, MPI_BYTE, c->rbuf, (int)n, MPI_BYTE, c->root, c->comm), "MPI_Scatter");
    *t_op_s = wb_timer_now_s() - t0;
    if (c->validate)
        wb_transfer_check(c, c->rbuf, n, wb_transfer_salt(c, c->root, c->rank), c->root, c->rank);
    return 0;
}

int wb_transfer_k_gather(struct wb_transfer_ctx *c, double *t_op_s)
{
    size_t n = (size_t)c->msg_bytes;
    if (c->validate)
        wb_transfer_fill(c->sbuf, n, wb_transfer_salt(c, c->rank, c->root));
    int rc = barrier(c);
    if (rc)
        return rc;
    double t0 = wb_timer_now_s();
    TRY(MPI_Gather(c->sbuf, (int)n, MPI_BYTE, c->rbuf, (int)n, MPI_BYTE, c->root, c->comm), "MPI_Gather");
    *t_op_s = wb_timer_now_s() - t0;
    if (c->validate && c->rank == c->root)
        for (int q = 0; q < c->nranks; q++)
            wb_transfer_check(c, c->rbuf + (size_t)q * n, n, wb_transfer_salt(c, q, c->root), q, c->root);
    return 0;
}

int wb_transfer_k_allgather(struct wb_transfer_ctx *c, double *t_op_s)
{
    size_t n = (size_t)c->msg_bytes;
    if (c->validate)
        wb_transfer_fill(c->sbuf, n, wb_transfer_salt(c, c->rank, ALL));
    int rc = barrier(c);
    if (rc)
        return rc;
    double t0 = wb_timer_now_s();
    TRY(MPI_Allgather(c->sbuf, (int)n, MPI_BYTE, c->rbuf, (int)n, MPI_BYTE, c->comm), "MPI_Allgather");
    *t_op_s = wb_timer_now_s() - t0;
    if (c->validate)
        for (int q = 0; q < c->nranks; q++)
            wb_transfer_check(c, c->rbuf + (size_t)q * n, n, wb_transfer_salt(c, q, ALL), q, c->rank);
    return 0;
}

int wb_transfer_k_alltoall(struct wb_transfer_ctx *c, double *t_op_s)
{
    size_t n = (size_t)c->msg_bytes;
    if (c->validate)
        for (int q = 0; q < c->nranks; q++)
            wb_transfer_fill(c->sbuf + (size_t)q * n, n, wb_transfer_salt(c, c->rank, q));
    int rc = barrier(c);
    if (rc)
        return rc;
    double t0 = wb_timer_now_s();
    TRY(MPI_Alltoall(c->sbuf, (int)n, MPI_BYTE, c->rbuf, (int)n, MPI_BYTE, c->comm), "MPI_Alltoall");
    *t_op_s = wb_timer_now_s() - t0;
    if (c->validate)
        for (int q = 0; q < c->nranks; q++)
            wb_transfer_check(c, c->rbuf + (size_t)q * n, n, wb_transfer_salt(c, q, c->rank), q, c->rank);
    return 0;
}

static MPI_Datatype mpi_dtype(int dtype)
{
    switch (dtype) {
    case WB_TRANSFER_DT_BYTE: return MPI_UNSIGNED_CHAR;
    case WB_TRANSFER_DT_INT: return MPI_INT;
    case WB_TRANSFER_DT_DOUBLE: return MPI_DOUBLE;
    default: return MPI_FLOAT;
    }
}

static MPI_Op mpi_op(int op) { return op == WB_TRANSFER_OP_BXOR ? MPI_BXOR : op == WB_TRANSFER_OP_MAX ? MPI_MAX : MPI_SUM; }

/* reduce (root only) and allreduce (every rank) on c->msg_bytes / element size elements. */
static int reduction(struct wb_transfer_ctx *c, double *t_op_s, int all)
{
    int count = (int)(c->msg_bytes / wb_transfer_elem_bytes(c->dtype));
    if (c->validate)
        wb_transfer_fill_reduce(c, c->sbuf, count);
    int rc = barrier(c);
    if (rc)
        return rc;
    double t0 = wb_timer_now_s();
    if (all)
        TRY(MPI_Allreduce(c->sbuf, c->rbuf, count, mpi_dtype(c->dtype), mpi_op(c->op), c->comm), "MPI_Allreduce");
    else
        TRY(MPI_Reduce(c->sbuf, c->rbuf, count, mpi_dtype(c->dtype), mpi_op(c->op), c->root, c->comm),
            "MPI_Reduce");
    *t_op_s = wb_timer_now_s() - t0;
    if (c->validate && (all || c->rank == c->root))
        wb_transfer_check_reduce(c, c->rbuf, count);
    return 0;
}

int wb_transfer_k_reduce(struct wb_transfer_ctx *c, double *t_op_s) { return reduction(c, t_op_s, 0); }

int wb_transfer_k_allreduce(struct wb_transfer_ctx *c, double *t_op_s) { return reduction(c, t_op_s, 1); }
