/* bench_transfer_kernels: one timed repetition of each transfer test, and the payload patterns it checks.
 * Internal to the transfer benchmark (bench_transfer*.c). */
#ifndef WB_BENCH_TRANSFER_KERNELS_H
#define WB_BENCH_TRANSFER_KERNELS_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "bench/transfer/options_transfer.h"

/* What a kernel needs for one repetition; the driver sets it up per point. */
struct wb_transfer_ctx {
    MPI_Comm comm;
    int rank, nranks;
    int test;                   /* enum wb_transfer_test */
    int validate;               /* fill before and check after every repetition */
    int64_t msg_bytes;          /* message size of this point */
    uint64_t seq;               /* call number, identical on every rank: makes each payload distinct */
    int rep;                    /* recorded repetition index, -1 during warm-up (for messages) */
    int role;                   /* p2p: 0 leader (sends first, records), 1 partner, -1 idle */
    int peer;                   /* p2p: the other rank of this rank's pair */
    int shift;                  /* --pairs shift round k (0 = not shifted): send to rank+k, receive from rank-k */
    int to, from;               /* shifted round: rank+k and rank-k (mod nranks) */
    int window;                 /* bw, bibw: messages per window at this size */
    int batch;                  /* pingpong: back-to-back round trips timed as one repetition */
    int pp_method;              /* enum wb_transfer_pp_method */
    int order;                  /* ring: index of the rank order */
    int left, right;            /* ring: receive from left, send to right */
    int root;                   /* rooted collectives: the root of this repetition */
    int dtype, op;              /* reductions: enum wb_transfer_dtype, enum wb_transfer_op */
    unsigned char *sbuf, *rbuf, *scratch;
    MPI_Request *reqs;          /* 2 * window + 2 */
    int bad;                    /* received buffers that did not match, this point */
    char bad_msg[400];          /* the first mismatch of this point, for the error message */
};

/* One repetition: fill (with --validate), barrier, the timed operation, check (with --validate).
 * Collective. *t_op_s is this rank's seconds per operation, NaN where this rank records nothing.
 * 0 or WB_EMPI. */
typedef int (*wb_transfer_kernel)(struct wb_transfer_ctx *c, double *t_op_s);

enum wb_transfer_kind { WB_TRANSFER_KIND_P2P, WB_TRANSFER_KIND_RING, WB_TRANSFER_KIND_COLL };

struct wb_transfer_testdef {
    enum wb_transfer_kind kind;
    wb_transfer_kernel run;
    wb_transfer_kernel shift;   /* the same measurement with every pair of a shifted round at once; or NULL */
    int min_ranks;
    int rooted;                 /* uses --root */
    double bytes_per_op;        /* bytes moved per operation, in message sizes (ring: per rank) */
    const char *what;           /* what one operation is, for the title line */
};

/* The tests, indexed by enum wb_transfer_test. */
extern const struct wb_transfer_testdef wb_transfer_tests[WB_TRANSFER_NTESTS];

/* Returns from the calling kernel with WB_EMPI (and the MPI error text) when an MPI call fails. */
#define WB_TRANSFER_TRY(call, what)                      \
    do {                                                 \
        int rc_ = wb_comm_check((call), (what));         \
        if (rc_)                                         \
            return rc_;                                  \
    } while (0)

/* The barrier before every repetition. Collective. 0 or WB_EMPI. */
int wb_transfer_barrier(struct wb_transfer_ctx *c);

/* The collective kernels (bench_transfer_coll.c). */
int wb_transfer_k_barrier(struct wb_transfer_ctx *c, double *t_op_s);
int wb_transfer_k_bcast(struct wb_transfer_ctx *c, double *t_op_s);
int wb_transfer_k_scatter(struct wb_transfer_ctx *c, double *t_op_s);
int wb_transfer_k_gather(struct wb_transfer_ctx *c, double *t_op_s);
int wb_transfer_k_allgather(struct wb_transfer_ctx *c, double *t_op_s);
int wb_transfer_k_alltoall(struct wb_transfer_ctx *c, double *t_op_s);
int wb_transfer_k_reduce(struct wb_transfer_ctx *c, double *t_op_s);
int wb_transfer_k_allreduce(struct wb_transfer_ctx *c, double *t_op_s);

/* Receive slots of the netpipe method at msg_bytes: round trip j lands in slot j mod this. */
int wb_transfer_netpipe_slots(int64_t msg_bytes);
/* Round trips per pingpong repetition, from the one-way time of a lone round trip: enough to span
 * 1 ms and 200 timer ticks, at most 1000. */
int wb_transfer_batch_for(double t_oneway_s, double tick_s);

/* Bytes of one element of a reduction's dtype (1, 4, 4, 8). */
int wb_transfer_elem_bytes(int dtype);

/* Send and receive buffer bytes one rank needs for test at msg_bytes with window messages per
 * window (shifted: a shifted round). */
void wb_transfer_buffers(int test, int64_t msg_bytes, int nranks, int window, int pp_method, int shifted,
                         size_t *send_bytes, size_t *recv_bytes);

/* Payload patterns (bench_transfer_payload.c). Local. */
#define WB_TRANSFER_DST_ALL 0xffff  /* destination that stands for "every rank" in a salt */
/* The salt of one message: depends on test, size, call and both ends, so a stale or misrouted buffer shows. */
uint64_t wb_transfer_salt(const struct wb_transfer_ctx *c, int src, int dst);
/* Fills p[n] with the pattern of salt s. */
void wb_transfer_fill(unsigned char *p, size_t n, uint64_t s);
/* Fills p[n] with the complement of the pattern: a receive that writes nothing shows. */
void wb_transfer_poison(unsigned char *p, size_t n, uint64_t s);
/* Compares p[n] with the pattern of salt s; records the first mismatch in c. */
void wb_transfer_check(struct wb_transfer_ctx *c, unsigned char *p, size_t n, uint64_t s, int src, int dst);
/* Reductions: fills this rank's count elements of c->dtype, values chosen so that c->op is exact. */
void wb_transfer_fill_reduce(const struct wb_transfer_ctx *c, unsigned char *p, int count);
/* Reductions: compares p with the reduction over every rank's elements; records a mismatch in c. */
void wb_transfer_check_reduce(struct wb_transfer_ctx *c, const unsigned char *p, int count);

#endif
