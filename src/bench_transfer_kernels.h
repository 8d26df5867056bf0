/* bench_transfer_kernels: one timed repetition of each transfer test, and the payload patterns it checks. */
#ifndef WB_BENCH_TRANSFER_KERNELS_H
#define WB_BENCH_TRANSFER_KERNELS_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "options_transfer.h"

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
    int window;                 /* bw, bibw: messages per window at this size */
    int batch;                  /* pingpong: back-to-back round trips timed as one repetition */
    int order;                  /* ring: index of the rank order */
    int left, right;            /* ring: receive from left, send to right */
    int root;                   /* rooted collectives: the root of this repetition */
    unsigned char *sbuf, *rbuf, *scratch;
    MPI_Request *reqs;          /* 2 * window */
    int bad;                    /* received buffers that did not match, this point */
    char bad_msg[400];          /* the first mismatch of this point, for the error message */
};

/* One repetition: fill (with --validate), barrier, the timed operation, check (with --validate).
 * Collective. *t_op_s is this rank's seconds per operation, NaN where this rank records nothing.
 * 0 or WB_EMPI. */
typedef int (*wb_transfer_kernel)(struct wb_transfer_ctx *c, double *t_op_s);

enum wb_transfer_kind { WB_TRANSFER_KIND_P2P, WB_TRANSFER_KIND_RING, WB_TRANSFER_KIND_COLL };

struct wb_transfer_testdef {
    const char *name;
    enum wb_transfer_kind kind;
    wb_transfer_kernel run;
    int min_ranks;
    int rooted;                 /* uses --root */
    double bytes_per_op;        /* bytes moved per operation, in message sizes (ring: per rank) */
    const char *what;           /* what one operation is, for the title line */
};

/* The tests, indexed by enum wb_transfer_test. */
extern const struct wb_transfer_testdef wb_transfer_tests[WB_TRANSFER_NTESTS];

/* Most round trips one pingpong repetition may time together at msg_bytes (each into its own slot). */
int wb_transfer_batch_cap(int64_t msg_bytes);

/* Send and receive buffer bytes one rank needs for test at msg_bytes with window messages per window. */
void wb_transfer_buffers(int test, int64_t msg_bytes, int nranks, int window, size_t *send_bytes,
                         size_t *recv_bytes);

#endif
