#define _POSIX_C_SOURCE 200809L
#include "bench_transfer_kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "timer.h"

enum { TAG_SYNC = 7101, TAG_DATA = 7102, TAG_ACK = 7103 };

/* Destination that stands for "every rank" in a payload's salt (bcast, allgather, reductions). */
#define DST_ALL 0xffff

#define TRY(call, what)                                  \
    do {                                                 \
        int rc_ = wb_comm_check((call), (what));         \
        if (rc_)                                         \
            return rc_;                                  \
    } while (0)

static uint64_t splitmix(uint64_t x)
{
    x += UINT64_C(0x9E3779B97F4A7C15);
    x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
    return x ^ (x >> 31);
}

/* The payload of one message: depends on test, size, call and both ends, so a stale or misrouted buffer shows. */
static uint64_t salt(const struct wb_transfer_ctx *c, int src, int dst)
{
    uint64_t h = splitmix((uint64_t)c->test);
    h = splitmix(h ^ (uint64_t)c->msg_bytes);
    h = splitmix(h ^ c->seq);
    return splitmix(h ^ ((uint64_t)(uint32_t)src << 32) ^ (uint32_t)dst);
}

static inline uint64_t lcg(uint64_t x) { return x * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407); }

/* Eight pattern bytes from one generator step; byte order is explicit so mixed-endian nodes agree. */
static inline void put8(unsigned char *p, size_t k, uint64_t v)
{
    for (size_t j = 0; j < k; j++)
        p[j] = (unsigned char)(v >> (8 * j));
}

static void fill(unsigned char *p, size_t n, uint64_t s)
{
    uint64_t x = s;
    for (size_t i = 0; i < n; i += 8) {
        x = lcg(x);
        put8(p + i, n - i < 8 ? n - i : 8, x ^ (x >> 29));
    }
}

/* Folds the pattern of salt s into acc with XOR (the expected result of MPI_BXOR on bytes). */
static void accumulate(unsigned char *acc, size_t n, uint64_t s)
{
    uint64_t x = s;
    for (size_t i = 0; i < n; i += 8) {
        x = lcg(x);
        uint64_t v = x ^ (x >> 29);
        size_t k = n - i < 8 ? n - i : 8;
        for (size_t j = 0; j < k; j++)
            acc[i + j] ^= (unsigned char)(v >> (8 * j));
    }
}

#ifdef WB_TEST_FAULTS
/* Test builds only: WB_FAULT=corrupt-transfer flips one byte of the first buffer this rank checks. */
static void inject_fault(unsigned char *p, size_t n)
{
    static int done;
    const char *f = getenv("WB_FAULT");
    if (!done && n > 0 && f && !strcmp(f, "corrupt-transfer")) {
        p[n / 2] ^= 0x5a;
        done = 1;
    }
}
#endif

static void note_bad(struct wb_transfer_ctx *c, int src, int dst, size_t at, unsigned got, unsigned want)
{
    if (c->bad++)
        return;
    const char *name = wb_transfer_test_name(c->test);
    char where[96];
    if (wb_transfer_tests[c->test].kind == WB_TRANSFER_KIND_P2P)
        snprintf(where, sizeof where, "pair %d:%d, data from rank %d to rank %d", c->role == 0 ? c->rank : c->peer,
                 c->role == 0 ? c->peer : c->rank, src, dst);
    else if (wb_transfer_tests[c->test].kind == WB_TRANSFER_KIND_RING)
        snprintf(where, sizeof where, "order %d, data from rank %d to rank %d", c->order, src, dst);
    else if (src < 0)
        snprintf(where, sizeof where, "reduced data at rank %d (root %d)", dst, c->root);
    else
        snprintf(where, sizeof where, "data from rank %d to rank %d (root %d)", src, dst, c->root);
    char rep[32];
    if (c->rep < 0)
        snprintf(rep, sizeof rep, "a warm-up repetition");
    else
        snprintf(rep, sizeof rep, "repetition %d", c->rep);
    snprintf(c->bad_msg, sizeof c->bad_msg,
             "transfer %s: %s, %lld bytes: received data differs from what was sent "
             "(%s, byte %zu is 0x%02x, expected 0x%02x)",
             name, where, (long long)c->msg_bytes, rep, at, got, want);
}

/* Compares a received buffer with the pattern of salt s; records the first mismatch in c. */
static void check(struct wb_transfer_ctx *c, unsigned char *p, size_t n, uint64_t s, int src, int dst)
{
#ifdef WB_TEST_FAULTS
    inject_fault(p, n);
#endif
    uint64_t x = s;
    for (size_t i = 0; i < n; i += 8) {
        x = lcg(x);
        uint64_t v = x ^ (x >> 29);
        size_t k = n - i < 8 ? n - i : 8;
        for (size_t j = 0; j < k; j++) {
            unsigned want = (unsigned char)(v >> (8 * j));
            if (p[i + j] != want) {
                note_bad(c, src, dst, i + j, p[i + j], want);
                return;
            }
        }
    }
}

/* Compares a reduced buffer with the byte-wise XOR of every rank's pattern. */
static void check_sum(struct wb_transfer_ctx *c, unsigned char *p, size_t n)
{
#ifdef WB_TEST_FAULTS
    inject_fault(p, n);
#endif
    memset(c->scratch, 0, n);
    for (int q = 0; q < c->nranks; q++)
        accumulate(c->scratch, n, salt(c, q, DST_ALL));
    for (size_t i = 0; i < n; i++)
        if (p[i] != c->scratch[i]) {
            note_bad(c, -1, c->rank, i, p[i], c->scratch[i]);
            return;
        }
}

static int barrier(struct wb_transfer_ctx *c) { return wb_comm_check(MPI_Barrier(c->comm), "MPI_Barrier"); }

/* Fills p with the bitwise complement of the pattern: a receive that writes nothing shows. */
static void poison(unsigned char *p, size_t n, uint64_t s)
{
    fill(p, n, s);
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)~p[i];
}

/* Leader: half a round trip, as the mean of c->batch back-to-back round trips timed together
 * (a lone round trip on shared memory is shorter than 100 timer ticks and slower than the steady
 * state other ping-pong tools measure). An untimed empty round trip first lines the pair up after
 * the barrier. As in NetPIPE, each side sends on the data it has just received, so what is sent
 * is in the sender's cache the way freshly arrived data is: round trip j receives into slot j
 * and the partner echoes slot j; the leader starts from the last slot of the previous repetition,
 * or from the freshly filled pattern when validating. */
static int k_pingpong(struct wb_transfer_ctx *c, double *t_op_s)
{
    size_t n = (size_t)c->msg_bytes;
    int count = (int)c->msg_bytes, k = c->batch;
    *t_op_s = NAN;
    if (c->role < 0)
        return barrier(c);
    int leader = c->role == 0 ? c->rank : c->peer, partner = c->role == 0 ? c->peer : c->rank;
    uint64_t pattern = salt(c, leader, partner);
    if (c->validate) {
        if (c->role == 0)
            fill(c->sbuf, n, pattern);
        for (int j = 0; j < k; j++)
            poison(c->rbuf + (size_t)j * n, n, pattern);
    }
    int rc = barrier(c);
    if (rc)
        return rc;
    if (c->role == 0) {
        TRY(MPI_Send(NULL, 0, MPI_BYTE, c->peer, TAG_SYNC, c->comm), "MPI_Send");
        TRY(MPI_Recv(NULL, 0, MPI_BYTE, c->peer, TAG_SYNC, c->comm, MPI_STATUS_IGNORE), "MPI_Recv");
        const unsigned char *src = c->validate ? c->sbuf : c->rbuf + (size_t)(k - 1) * n;
        double t0 = wb_timer_now_s();
        for (int j = 0; j < k; j++) {
            unsigned char *slot = c->rbuf + (size_t)j * n;
            TRY(MPI_Send(src, count, MPI_BYTE, c->peer, TAG_DATA, c->comm), "MPI_Send");
            TRY(MPI_Recv(slot, count, MPI_BYTE, c->peer, TAG_DATA, c->comm, MPI_STATUS_IGNORE), "MPI_Recv");
            src = slot;
        }
        *t_op_s = (wb_timer_now_s() - t0) / (2.0 * k);
    } else {
        TRY(MPI_Recv(NULL, 0, MPI_BYTE, c->peer, TAG_SYNC, c->comm, MPI_STATUS_IGNORE), "MPI_Recv");
        TRY(MPI_Send(NULL, 0, MPI_BYTE, c->peer, TAG_SYNC, c->comm), "MPI_Send");
        for (int j = 0; j < k; j++) {
            unsigned char *slot = c->rbuf + (size_t)j * n;
            TRY(MPI_Recv(slot, count, MPI_BYTE, c->peer, TAG_DATA, c->comm, MPI_STATUS_IGNORE), "MPI_Recv");
            TRY(MPI_Send(slot, count, MPI_BYTE, c->peer, TAG_DATA, c->comm), "MPI_Send");
        }
    }
    if (c->validate)
        for (int j = 0; j < k; j++)
            check(c, c->rbuf + (size_t)j * n, n, pattern, c->peer, c->rank);
    return 0;
}

/* Leader sends a window of messages and waits for the partner's ack; the partner's receives
 * are posted (and announced) before the clock starts, so no message arrives unexpected.
 * Each message has its own receive buffer: overlapping pending receives are erroneous MPI. */
static int k_bw(struct wb_transfer_ctx *c, double *t_op_s)
{
    size_t n = (size_t)c->msg_bytes;
    int count = (int)c->msg_bytes, w = c->window;
    *t_op_s = NAN;
    if (c->validate && c->role == 0)
        fill(c->sbuf, n, salt(c, c->rank, c->peer));
    int rc = barrier(c);
    if (rc || c->role < 0)
        return rc;
    if (c->role == 0) {
        TRY(MPI_Recv(NULL, 0, MPI_BYTE, c->peer, TAG_SYNC, c->comm, MPI_STATUS_IGNORE), "MPI_Recv");
        double t0 = wb_timer_now_s();
        for (int k = 0; k < w; k++)
            TRY(MPI_Isend(c->sbuf, count, MPI_BYTE, c->peer, TAG_DATA, c->comm, &c->reqs[k]), "MPI_Isend");
        TRY(MPI_Waitall(w, c->reqs, MPI_STATUSES_IGNORE), "MPI_Waitall");
        TRY(MPI_Recv(NULL, 0, MPI_BYTE, c->peer, TAG_ACK, c->comm, MPI_STATUS_IGNORE), "MPI_Recv");
        *t_op_s = (wb_timer_now_s() - t0) / w;
    } else {
        for (int k = 0; k < w; k++)
            TRY(MPI_Irecv(c->rbuf + (size_t)k * n, count, MPI_BYTE, c->peer, TAG_DATA, c->comm, &c->reqs[k]),
                "MPI_Irecv");
        TRY(MPI_Send(NULL, 0, MPI_BYTE, c->peer, TAG_SYNC, c->comm), "MPI_Send");
        TRY(MPI_Waitall(w, c->reqs, MPI_STATUSES_IGNORE), "MPI_Waitall");
        TRY(MPI_Send(NULL, 0, MPI_BYTE, c->peer, TAG_ACK, c->comm), "MPI_Send");
        if (c->validate)
            for (int k = 0; k < w; k++)
                check(c, c->rbuf + (size_t)k * n, n, salt(c, c->peer, c->rank), c->peer, c->rank);
    }
    return 0;
}

/* Both ranks send a window to each other at once; the leader's clock stops when its own
 * window is done and the partner's ack says the other direction is done too. */
static int k_bibw(struct wb_transfer_ctx *c, double *t_op_s)
{
    size_t n = (size_t)c->msg_bytes;
    int count = (int)c->msg_bytes, w = c->window;
    *t_op_s = NAN;
    if (c->validate && c->role >= 0)
        fill(c->sbuf, n, salt(c, c->rank, c->peer));
    int rc = barrier(c);
    if (rc || c->role < 0)
        return rc;
    for (int k = 0; k < w; k++)
        TRY(MPI_Irecv(c->rbuf + (size_t)k * n, count, MPI_BYTE, c->peer, TAG_DATA, c->comm, &c->reqs[k]),
            "MPI_Irecv");
    TRY(MPI_Sendrecv(NULL, 0, MPI_BYTE, c->peer, TAG_SYNC, NULL, 0, MPI_BYTE, c->peer, TAG_SYNC, c->comm,
                     MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
    double t0 = wb_timer_now_s();
    for (int k = 0; k < w; k++)
        TRY(MPI_Isend(c->sbuf, count, MPI_BYTE, c->peer, TAG_DATA, c->comm, &c->reqs[w + k]), "MPI_Isend");
    TRY(MPI_Waitall(2 * w, c->reqs, MPI_STATUSES_IGNORE), "MPI_Waitall");
    if (c->role == 0) {
        TRY(MPI_Recv(NULL, 0, MPI_BYTE, c->peer, TAG_ACK, c->comm, MPI_STATUS_IGNORE), "MPI_Recv");
        *t_op_s = (wb_timer_now_s() - t0) / w;
    } else {
        TRY(MPI_Send(NULL, 0, MPI_BYTE, c->peer, TAG_ACK, c->comm), "MPI_Send");
    }
    if (c->validate)
        for (int k = 0; k < w; k++)
            check(c, c->rbuf + (size_t)k * n, n, salt(c, c->peer, c->rank), c->peer, c->rank);
    return 0;
}

/* Every rank sends to its right neighbour and receives from its left one, all at once;
 * an untimed empty step first lines the neighbours up after the barrier. */
static int k_ring(struct wb_transfer_ctx *c, double *t_op_s)
{
    size_t n = (size_t)c->msg_bytes;
    int count = (int)c->msg_bytes;
    if (c->validate)
        fill(c->sbuf, n, salt(c, c->rank, c->right));
    int rc = barrier(c);
    if (rc)
        return rc;
    TRY(MPI_Sendrecv(NULL, 0, MPI_BYTE, c->right, TAG_SYNC, NULL, 0, MPI_BYTE, c->left, TAG_SYNC, c->comm,
                     MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
    double t0 = wb_timer_now_s();
    TRY(MPI_Sendrecv(c->sbuf, count, MPI_BYTE, c->right, TAG_DATA, c->rbuf, count, MPI_BYTE, c->left, TAG_DATA,
                     c->comm, MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
    *t_op_s = wb_timer_now_s() - t0;
    if (c->validate)
        check(c, c->rbuf, n, salt(c, c->left, c->rank), c->left, c->rank);
    return 0;
}

static int k_barrier(struct wb_transfer_ctx *c, double *t_op_s)
{
    int rc = barrier(c);
    if (rc)
        return rc;
    double t0 = wb_timer_now_s();
    TRY(MPI_Barrier(c->comm), "MPI_Barrier");
    *t_op_s = wb_timer_now_s() - t0;
    return 0;
}

static int k_bcast(struct wb_transfer_ctx *c, double *t_op_s)
{
    size_t n = (size_t)c->msg_bytes;
    int is_root = c->rank == c->root;
    if (c->validate && is_root)
        fill(c->sbuf, n, salt(c, c->root, DST_ALL));
    int rc = barrier(c);
    if (rc)
        return rc;
    double t0 = wb_timer_now_s();
    TRY(MPI_Bcast(c->sbuf, (int)n, MPI_BYTE, c->root, c->comm), "MPI_Bcast");
    *t_op_s = wb_timer_now_s() - t0;
    if (c->validate && !is_root)
        check(c, c->sbuf, n, salt(c, c->root, DST_ALL), c->root, c->rank);
    return 0;
}

static int k_scatter(struct wb_transfer_ctx *c, double *t_op_s)
{
    size_t n = (size_t)c->msg_bytes;
    if (c->validate && c->rank == c->root)
        for (int q = 0; q < c->nranks; q++)
            fill(c->sbuf + (size_t)q * n, n, salt(c, c->root, q));
    int rc = barrier(c);
    if (rc)
        return rc;
    double t0 = wb_timer_now_s();
    TRY(MPI_Scatter(c->sbuf, (int)n, MPI_BYTE, c->rbuf, (int)n, MPI_BYTE, c->root, c->comm), "MPI_Scatter");
    *t_op_s = wb_timer_now_s() - t0;
    if (c->validate)
        check(c, c->rbuf, n, salt(c, c->root, c->rank), c->root, c->rank);
    return 0;
}

static int k_gather(struct wb_transfer_ctx *c, double *t_op_s)
{
    size_t n = (size_t)c->msg_bytes;
    if (c->validate)
        fill(c->sbuf, n, salt(c, c->rank, c->root));
    int rc = barrier(c);
    if (rc)
        return rc;
    double t0 = wb_timer_now_s();
    TRY(MPI_Gather(c->sbuf, (int)n, MPI_BYTE, c->rbuf, (int)n, MPI_BYTE, c->root, c->comm), "MPI_Gather");
    *t_op_s = wb_timer_now_s() - t0;
    if (c->validate && c->rank == c->root)
        for (int q = 0; q < c->nranks; q++)
            check(c, c->rbuf + (size_t)q * n, n, salt(c, q, c->root), q, c->root);
    return 0;
}

static int k_allgather(struct wb_transfer_ctx *c, double *t_op_s)
{
    size_t n = (size_t)c->msg_bytes;
    if (c->validate)
        fill(c->sbuf, n, salt(c, c->rank, DST_ALL));
    int rc = barrier(c);
    if (rc)
        return rc;
    double t0 = wb_timer_now_s();
    TRY(MPI_Allgather(c->sbuf, (int)n, MPI_BYTE, c->rbuf, (int)n, MPI_BYTE, c->comm), "MPI_Allgather");
    *t_op_s = wb_timer_now_s() - t0;
    if (c->validate)
        for (int q = 0; q < c->nranks; q++)
            check(c, c->rbuf + (size_t)q * n, n, salt(c, q, DST_ALL), q, c->rank);
    return 0;
}

static int k_alltoall(struct wb_transfer_ctx *c, double *t_op_s)
{
    size_t n = (size_t)c->msg_bytes;
    if (c->validate)
        for (int q = 0; q < c->nranks; q++)
            fill(c->sbuf + (size_t)q * n, n, salt(c, c->rank, q));
    int rc = barrier(c);
    if (rc)
        return rc;
    double t0 = wb_timer_now_s();
    TRY(MPI_Alltoall(c->sbuf, (int)n, MPI_BYTE, c->rbuf, (int)n, MPI_BYTE, c->comm), "MPI_Alltoall");
    *t_op_s = wb_timer_now_s() - t0;
    if (c->validate)
        for (int q = 0; q < c->nranks; q++)
            check(c, c->rbuf + (size_t)q * n, n, salt(c, q, c->rank), q, c->rank);
    return 0;
}

/* Reductions XOR unsigned bytes: any size works, the expected result is exact, and no sum can
 * overflow (Open MPI 4.1's AVX MPI_SUM saturates unsigned bytes instead of wrapping, ompi#8045). */
static int k_reduce(struct wb_transfer_ctx *c, double *t_op_s)
{
    size_t n = (size_t)c->msg_bytes;
    if (c->validate)
        fill(c->sbuf, n, salt(c, c->rank, DST_ALL));
    int rc = barrier(c);
    if (rc)
        return rc;
    double t0 = wb_timer_now_s();
    TRY(MPI_Reduce(c->sbuf, c->rbuf, (int)n, MPI_UNSIGNED_CHAR, MPI_BXOR, c->root, c->comm), "MPI_Reduce");
    *t_op_s = wb_timer_now_s() - t0;
    if (c->validate && c->rank == c->root)
        check_sum(c, c->rbuf, n);
    return 0;
}

static int k_allreduce(struct wb_transfer_ctx *c, double *t_op_s)
{
    size_t n = (size_t)c->msg_bytes;
    if (c->validate)
        fill(c->sbuf, n, salt(c, c->rank, DST_ALL));
    int rc = barrier(c);
    if (rc)
        return rc;
    double t0 = wb_timer_now_s();
    TRY(MPI_Allreduce(c->sbuf, c->rbuf, (int)n, MPI_UNSIGNED_CHAR, MPI_BXOR, c->comm), "MPI_Allreduce");
    *t_op_s = wb_timer_now_s() - t0;
    if (c->validate)
        check_sum(c, c->rbuf, n);
    return 0;
}

const struct wb_transfer_testdef wb_transfer_tests[WB_TRANSFER_NTESTS] = {
    [WB_TRANSFER_PINGPONG] = {"pingpong", WB_TRANSFER_KIND_P2P, k_pingpong, 2, 0, 1,
                              "half a round trip (mean of a batch of round trips spanning 200 timer ticks)"},
    [WB_TRANSFER_BW] = {"bw", WB_TRANSFER_KIND_P2P, k_bw, 2, 0, 1,
                        "one message of a window of non-blocking sends, one way"},
    [WB_TRANSFER_BIBW] = {"bibw", WB_TRANSFER_KIND_P2P, k_bibw, 2, 0, 2,
                          "one message of a window sent both ways at once"},
    [WB_TRANSFER_RING] = {"ring", WB_TRANSFER_KIND_RING, k_ring, 2, 0, 1,
                          "one step in which every rank sends to its right neighbour"},
    [WB_TRANSFER_BARRIER] = {"barrier", WB_TRANSFER_KIND_COLL, k_barrier, 1, 0, 0, "one MPI_Barrier"},
    [WB_TRANSFER_BCAST] = {"bcast", WB_TRANSFER_KIND_COLL, k_bcast, 1, 1, 1, "one MPI_Bcast"},
    [WB_TRANSFER_SCATTER] = {"scatter", WB_TRANSFER_KIND_COLL, k_scatter, 1, 1, 1,
                             "one MPI_Scatter (bytes per rank)"},
    [WB_TRANSFER_GATHER] = {"gather", WB_TRANSFER_KIND_COLL, k_gather, 1, 1, 1, "one MPI_Gather (bytes per rank)"},
    [WB_TRANSFER_ALLGATHER] = {"allgather", WB_TRANSFER_KIND_COLL, k_allgather, 1, 0, 1,
                               "one MPI_Allgather (bytes per rank)"},
    [WB_TRANSFER_ALLTOALL] = {"alltoall", WB_TRANSFER_KIND_COLL, k_alltoall, 1, 0, 1,
                              "one MPI_Alltoall (bytes per rank pair)"},
    [WB_TRANSFER_REDUCE] = {"reduce", WB_TRANSFER_KIND_COLL, k_reduce, 1, 1, 1,
                            "one MPI_Reduce, MPI_BXOR of MPI_UNSIGNED_CHAR"},
    [WB_TRANSFER_ALLREDUCE] = {"allreduce", WB_TRANSFER_KIND_COLL, k_allreduce, 1, 0, 1,
                               "one MPI_Allreduce, MPI_BXOR of MPI_UNSIGNED_CHAR"},
};

/* Batches stay small: 100 round trips, 64 KiB of receive slots. */
#define BATCH_MAX 100
#define BATCH_BYTES 65536

int wb_transfer_batch_cap(int64_t msg_bytes)
{
    int64_t k = BATCH_BYTES / (msg_bytes > 0 ? msg_bytes : 1);
    return k < 1 ? 1 : k > BATCH_MAX ? BATCH_MAX : (int)k;
}

void wb_transfer_buffers(int test, int64_t msg_bytes, int nranks, int window, size_t *send_bytes,
                         size_t *recv_bytes)
{
    size_t n = (size_t)msg_bytes, all = n * (size_t)nranks;
    size_t s = n, r = n;
    switch (test) {
    case WB_TRANSFER_PINGPONG:
        r = n * (size_t)wb_transfer_batch_cap(msg_bytes);
        break;
    case WB_TRANSFER_BW:
    case WB_TRANSFER_BIBW:
        r = n * (size_t)window;
        break;
    case WB_TRANSFER_BARRIER:
        s = r = 0;
        break;
    case WB_TRANSFER_BCAST:
        r = 0;
        break;
    case WB_TRANSFER_SCATTER:
        s = all;
        break;
    case WB_TRANSFER_GATHER:
    case WB_TRANSFER_ALLGATHER:
        r = all;
        break;
    case WB_TRANSFER_ALLTOALL:
        s = r = all;
        break;
    default:
        break;
    }
    *send_bytes = s;
    *recv_bytes = r;
}
