#define _POSIX_C_SOURCE 200809L
#include "bench/transfer/bench_transfer_kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "par/comm.h"
#include "core/timer.h"

enum { TAG_SYNC = 7101, TAG_DATA = 7102, TAG_ACK = 7103, TAG_PONG = 7104 };

#define TRY WB_TRANSFER_TRY

int wb_transfer_barrier(struct wb_transfer_ctx *c) { return wb_comm_check(MPI_Barrier(c->comm), "MPI_Barrier"); }

#define barrier wb_transfer_barrier

/* An untimed empty exchange that puts both ends of a pair in step after the barrier. */
static int line_up(struct wb_transfer_ctx *c)
{
    if (c->role == 0) {
        TRY(MPI_Send(NULL, 0, MPI_BYTE, c->peer, TAG_SYNC, c->comm), "MPI_Send");
        TRY(MPI_Recv(NULL, 0, MPI_BYTE, c->peer, TAG_SYNC, c->comm, MPI_STATUS_IGNORE), "MPI_Recv");
    } else {
        TRY(MPI_Recv(NULL, 0, MPI_BYTE, c->peer, TAG_SYNC, c->comm, MPI_STATUS_IGNORE), "MPI_Recv");
        TRY(MPI_Send(NULL, 0, MPI_BYTE, c->peer, TAG_SYNC, c->comm), "MPI_Send");
    }
    return 0;
}

/* OSU's and IMB's method: c->batch back-to-back round trips, each side sending from its own send
 * buffer and receiving into its own receive buffer; the leader's time is the batch's mean. */
static int pingpong_osu(struct wb_transfer_ctx *c, double *t_op_s, uint64_t pattern)
{
    size_t n = (size_t)c->msg_bytes;
    int count = (int)c->msg_bytes, k = c->batch;
    if (c->validate) {
        wb_transfer_fill(c->sbuf, n, pattern);
        wb_transfer_poison(c->rbuf, n, pattern);
    }
    int rc = barrier(c);
    if (rc || (rc = line_up(c)))
        return rc;
    if (c->role == 0) {
        double t0 = wb_timer_now_s();
        for (int j = 0; j < k; j++) {
            TRY(MPI_Send(c->sbuf, count, MPI_BYTE, c->peer, TAG_DATA, c->comm), "MPI_Send");
            TRY(MPI_Recv(c->rbuf, count, MPI_BYTE, c->peer, TAG_DATA, c->comm, MPI_STATUS_IGNORE), "MPI_Recv");
        }
        *t_op_s = (wb_timer_now_s() - t0) / (2.0 * k);
    } else {
        for (int j = 0; j < k; j++) {
            TRY(MPI_Recv(c->rbuf, count, MPI_BYTE, c->peer, TAG_DATA, c->comm, MPI_STATUS_IGNORE), "MPI_Recv");
            TRY(MPI_Send(c->sbuf, count, MPI_BYTE, c->peer, TAG_DATA, c->comm), "MPI_Send");
        }
    }
    if (c->validate)
        wb_transfer_check(c, c->rbuf, n, pattern, c->peer, c->rank);
    return 0;
}

/* NetPIPE's method: each side sends on the data it has just received, so what is sent is in the
 * sender's cache the way freshly arrived data is. Round trip j lands in slot j mod the slot count
 * and is echoed from there; the leader starts from the slot the last batch ended in, or from the
 * fresh pattern when validating. Every round trip carries the same bytes, so each slot holds them. */
static int pingpong_netpipe(struct wb_transfer_ctx *c, double *t_op_s, uint64_t pattern)
{
    size_t n = (size_t)c->msg_bytes;
    int count = (int)c->msg_bytes, k = c->batch, slots = wb_transfer_netpipe_slots(c->msg_bytes);
    int used = k < slots ? k : slots;
    if (c->validate) {
        if (c->role == 0)
            wb_transfer_fill(c->sbuf, n, pattern);
        for (int j = 0; j < used; j++)
            wb_transfer_poison(c->rbuf + (size_t)j * n, n, pattern);
    }
    int rc = barrier(c);
    if (rc || (rc = line_up(c)))
        return rc;
    if (c->role == 0) {
        const unsigned char *src = c->validate ? c->sbuf : c->rbuf + (size_t)((k - 1) % slots) * n;
        double t0 = wb_timer_now_s();
        for (int j = 0; j < k; j++) {
            unsigned char *slot = c->rbuf + (size_t)(j % slots) * n;
            TRY(MPI_Send(src, count, MPI_BYTE, c->peer, TAG_DATA, c->comm), "MPI_Send");
            TRY(MPI_Recv(slot, count, MPI_BYTE, c->peer, TAG_DATA, c->comm, MPI_STATUS_IGNORE), "MPI_Recv");
            src = slot;
        }
        *t_op_s = (wb_timer_now_s() - t0) / (2.0 * k);
    } else {
        for (int j = 0; j < k; j++) {
            unsigned char *slot = c->rbuf + (size_t)(j % slots) * n;
            TRY(MPI_Recv(slot, count, MPI_BYTE, c->peer, TAG_DATA, c->comm, MPI_STATUS_IGNORE), "MPI_Recv");
            TRY(MPI_Send(slot, count, MPI_BYTE, c->peer, TAG_DATA, c->comm), "MPI_Send");
        }
    }
    if (c->validate)
        for (int j = 0; j < used; j++)
            wb_transfer_check(c, c->rbuf + (size_t)j * n, n, pattern, c->peer, c->rank);
    return 0;
}

/* Half a round trip, as the mean of c->batch round trips timed together (a lone round trip on
 * shared memory is shorter than 100 timer ticks and slower than the steady state). */
static int k_pingpong(struct wb_transfer_ctx *c, double *t_op_s)
{
    *t_op_s = NAN;
    if (c->role < 0)
        return barrier(c);
    int leader = c->role == 0 ? c->rank : c->peer, partner = c->role == 0 ? c->peer : c->rank;
    uint64_t pattern = wb_transfer_salt(c, leader, partner);
    return c->pp_method == WB_TRANSFER_PP_NETPIPE ? pingpong_netpipe(c, t_op_s, pattern)
                                                  : pingpong_osu(c, t_op_s, pattern);
}

/* bw and bibw send fresh bytes, as an exchange of new data does: every message of a window has its
 * own send buffer, all written just before the repetition (outside the timing), with or without
 * --validate. Resending one untouched buffer, OSU's way, lets a cache-sized message be read from
 * the caches: about 2x the rate of fresh data through shared memory. */
static void write_window(struct wb_transfer_ctx *c, uint64_t salt)
{
    size_t n = (size_t)c->msg_bytes;
    wb_transfer_fill(c->sbuf, n, salt);
    for (int k = 1; k < c->window; k++)
        memcpy(c->sbuf + (size_t)k * n, c->sbuf, n);
}

/* Leader sends a window of messages and waits for the partner's ack; the partner's receives
 * are posted (and announced) before the clock starts, so no message arrives unexpected.
 * Each message has its own receive buffer: overlapping pending receives are erroneous MPI. */
static int k_bw(struct wb_transfer_ctx *c, double *t_op_s)
{
    size_t n = (size_t)c->msg_bytes;
    int count = (int)c->msg_bytes, w = c->window;
    *t_op_s = NAN;
    if (c->role == 0)
        write_window(c, wb_transfer_salt(c, c->rank, c->peer));
    int rc = barrier(c);
    if (rc || c->role < 0)
        return rc;
    if (c->role == 0) {
        TRY(MPI_Recv(NULL, 0, MPI_BYTE, c->peer, TAG_SYNC, c->comm, MPI_STATUS_IGNORE), "MPI_Recv");
        double t0 = wb_timer_now_s();
        for (int k = 0; k < w; k++)
            TRY(MPI_Isend(c->sbuf + (size_t)k * n, count, MPI_BYTE, c->peer, TAG_DATA, c->comm, &c->reqs[k]),
                "MPI_Isend");
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
                wb_transfer_check(c, c->rbuf + (size_t)k * n, n, wb_transfer_salt(c, c->peer, c->rank), c->peer,
                                  c->rank);
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
    if (c->role >= 0)
        write_window(c, wb_transfer_salt(c, c->rank, c->peer));
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
        TRY(MPI_Isend(c->sbuf + (size_t)k * n, count, MPI_BYTE, c->peer, TAG_DATA, c->comm, &c->reqs[w + k]),
            "MPI_Isend");
    TRY(MPI_Waitall(2 * w, c->reqs, MPI_STATUSES_IGNORE), "MPI_Waitall");
    if (c->role == 0) {
        TRY(MPI_Recv(NULL, 0, MPI_BYTE, c->peer, TAG_ACK, c->comm, MPI_STATUS_IGNORE), "MPI_Recv");
        *t_op_s = (wb_timer_now_s() - t0) / w;
    } else {
        TRY(MPI_Send(NULL, 0, MPI_BYTE, c->peer, TAG_ACK, c->comm), "MPI_Send");
    }
    if (c->validate)
        for (int k = 0; k < w; k++)
            wb_transfer_check(c, c->rbuf + (size_t)k * n, n, wb_transfer_salt(c, c->peer, c->rank), c->peer,
                              c->rank);
    return 0;
}

/* Every rank sends to its right neighbour and receives from its left one, all at once;
 * an untimed empty step first lines the neighbours up after the barrier. */
static int k_ring(struct wb_transfer_ctx *c, double *t_op_s)
{
    size_t n = (size_t)c->msg_bytes;
    int count = (int)c->msg_bytes;
    if (c->validate)
        wb_transfer_fill(c->sbuf, n, wb_transfer_salt(c, c->rank, c->right));
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
        wb_transfer_check(c, c->rbuf, n, wb_transfer_salt(c, c->left, c->rank), c->left, c->rank);
    return 0;
}

/* A shifted round of pingpong: every rank pings rank+k and answers rank-k's pings at once. The time
 * is half of this rank's round trip to rank+k; pongs echo the received ping, so the pong checks both
 * ways. */
static int k_shift_pingpong(struct wb_transfer_ctx *c, double *t_op_s)
{
    size_t n = (size_t)c->msg_bytes;
    int count = (int)c->msg_bytes, k = c->batch;
    unsigned char *ping = c->rbuf + n;
    uint64_t pattern = wb_transfer_salt(c, c->rank, c->to);
    if (c->validate) {
        wb_transfer_fill(c->sbuf, n, pattern);
        wb_transfer_poison(c->rbuf, n, pattern);
    }
    int rc = barrier(c);
    if (rc)
        return rc;
    TRY(MPI_Sendrecv(NULL, 0, MPI_BYTE, c->to, TAG_SYNC, NULL, 0, MPI_BYTE, c->from, TAG_SYNC, c->comm,
                     MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
    double t0 = wb_timer_now_s();
    for (int j = 0; j < k; j++) {
        MPI_Request *q = c->reqs;
        TRY(MPI_Irecv(ping, count, MPI_BYTE, c->from, TAG_DATA, c->comm, &q[0]), "MPI_Irecv");
        TRY(MPI_Irecv(c->rbuf, count, MPI_BYTE, c->to, TAG_PONG, c->comm, &q[1]), "MPI_Irecv");
        TRY(MPI_Isend(c->sbuf, count, MPI_BYTE, c->to, TAG_DATA, c->comm, &q[2]), "MPI_Isend");
        TRY(MPI_Wait(&q[0], MPI_STATUS_IGNORE), "MPI_Wait");
        TRY(MPI_Isend(ping, count, MPI_BYTE, c->from, TAG_PONG, c->comm, &q[3]), "MPI_Isend");
        TRY(MPI_Wait(&q[1], MPI_STATUS_IGNORE), "MPI_Wait");
        TRY(MPI_Waitall(2, q + 2, MPI_STATUSES_IGNORE), "MPI_Waitall");
    }
    *t_op_s = (wb_timer_now_s() - t0) / (2.0 * k);
    if (c->validate)
        wb_transfer_check(c, c->rbuf, n, pattern, c->to, c->rank);
    return 0;
}

/* A shifted round of bw: every rank sends a window to rank+k and receives one from rank-k at once,
 * acking it when complete. The time is until rank+k's ack, per message: the link rank -> rank+k. */
static int k_shift_window(struct wb_transfer_ctx *c, double *t_op_s)
{
    size_t n = (size_t)c->msg_bytes;
    int count = (int)c->msg_bytes, w = c->window, ack_at = 2 * w, ack_out = 2 * w + 1;
    MPI_Request *q = c->reqs;
    write_window(c, wb_transfer_salt(c, c->rank, c->to));
    int rc = barrier(c);
    if (rc)
        return rc;
    for (int k = 0; k < w; k++)
        TRY(MPI_Irecv(c->rbuf + (size_t)k * n, count, MPI_BYTE, c->from, TAG_DATA, c->comm, &q[k]), "MPI_Irecv");
    TRY(MPI_Irecv(NULL, 0, MPI_BYTE, c->to, TAG_ACK, c->comm, &q[ack_at]), "MPI_Irecv");
    q[ack_out] = MPI_REQUEST_NULL;
    TRY(MPI_Sendrecv(NULL, 0, MPI_BYTE, c->from, TAG_SYNC, NULL, 0, MPI_BYTE, c->to, TAG_SYNC, c->comm,
                     MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
    double t0 = wb_timer_now_s(), t1 = t0;
    for (int k = 0; k < w; k++)
        TRY(MPI_Isend(c->sbuf + (size_t)k * n, count, MPI_BYTE, c->to, TAG_DATA, c->comm, &q[w + k]), "MPI_Isend");
    int received = 0;
    for (int left = 2 * w + 1; left > 0;) {
        int idx;
        TRY(MPI_Waitany(2 * w + 2, q, &idx, MPI_STATUS_IGNORE), "MPI_Waitany");
        if (idx == MPI_UNDEFINED)
            break;
        left--;
        if (idx == ack_at)
            t1 = wb_timer_now_s();
        else if (idx < w && ++received == w) {
            TRY(MPI_Isend(NULL, 0, MPI_BYTE, c->from, TAG_ACK, c->comm, &q[ack_out]), "MPI_Isend");
            left++;
        }
    }
    *t_op_s = (t1 - t0) / w;
    if (c->validate)
        for (int k = 0; k < w; k++)
            wb_transfer_check(c, c->rbuf + (size_t)k * n, n, wb_transfer_salt(c, c->from, c->rank), c->from,
                              c->rank);
    return 0;
}

const struct wb_transfer_testdef wb_transfer_tests[WB_TRANSFER_NTESTS] = {
    [WB_TRANSFER_PINGPONG] = {WB_TRANSFER_KIND_P2P, k_pingpong, k_shift_pingpong, 2, 0, 1,
                              "half a round trip (mean of a batch of back-to-back round trips)"},
    [WB_TRANSFER_BW] = {WB_TRANSFER_KIND_P2P, k_bw, k_shift_window, 2, 0, 1,
                        "one message of a window of non-blocking sends, one way"},
    [WB_TRANSFER_BIBW] = {WB_TRANSFER_KIND_P2P, k_bibw, k_shift_window, 2, 0, 2,
                          "one message of a window sent both ways at once"},
    [WB_TRANSFER_RING] = {WB_TRANSFER_KIND_RING, k_ring, NULL, 2, 0, 1,
                          "one step in which every rank sends to its right neighbour"},
    [WB_TRANSFER_BARRIER] = {WB_TRANSFER_KIND_COLL, wb_transfer_k_barrier, NULL, 1, 0, 0, "one MPI_Barrier"},
    [WB_TRANSFER_BCAST] = {WB_TRANSFER_KIND_COLL, wb_transfer_k_bcast, NULL, 1, 1, 1, "one MPI_Bcast"},
    [WB_TRANSFER_SCATTER] = {WB_TRANSFER_KIND_COLL, wb_transfer_k_scatter, NULL, 1, 1, 1,
                             "one MPI_Scatter (bytes per rank)"},
    [WB_TRANSFER_GATHER] = {WB_TRANSFER_KIND_COLL, wb_transfer_k_gather, NULL, 1, 1, 1,
                            "one MPI_Gather (bytes per rank)"},
    [WB_TRANSFER_ALLGATHER] = {WB_TRANSFER_KIND_COLL, wb_transfer_k_allgather, NULL, 1, 0, 1,
                               "one MPI_Allgather (bytes per rank)"},
    [WB_TRANSFER_ALLTOALL] = {WB_TRANSFER_KIND_COLL, wb_transfer_k_alltoall, NULL, 1, 0, 1,
                              "one MPI_Alltoall (bytes per rank pair)"},
    [WB_TRANSFER_REDUCE] = {WB_TRANSFER_KIND_COLL, wb_transfer_k_reduce, NULL, 1, 1, 1, "one MPI_Reduce"},
    [WB_TRANSFER_ALLREDUCE] = {WB_TRANSFER_KIND_COLL, wb_transfer_k_allreduce, NULL, 1, 0, 1, "one MPI_Allreduce"},
};

/* A repetition times round trips back to back for at least 1 ms and 200 timer ticks, at most 1000
 * of them, with either method (NetPIPE's own trials are longer still, about 0.25 s). netpipe's
 * receive slots: at most 100 and 64 KiB, reused in turn. */
#define BATCH_MAX 1000
#define BATCH_SPAN_S 1e-3
#define BATCH_TICKS 200
#define NETPIPE_SLOTS_MAX 100
#define NETPIPE_SLOT_BYTES 65536

int wb_transfer_netpipe_slots(int64_t msg_bytes)
{
    int64_t k = NETPIPE_SLOT_BYTES / (msg_bytes > 0 ? msg_bytes : 1);
    return k < 1 ? 1 : k > NETPIPE_SLOTS_MAX ? NETPIPE_SLOTS_MAX : (int)k;
}

int wb_transfer_batch_for(double t_oneway_s, double tick_s)
{
    double span = fmax(BATCH_TICKS * tick_s, BATCH_SPAN_S);
    if (!(t_oneway_s > 0) || !isfinite(t_oneway_s))
        return 1;
    double k = ceil(span / (2 * t_oneway_s));
    return k < 1 ? 1 : k > BATCH_MAX ? BATCH_MAX : (int)k;
}

void wb_transfer_buffers(int test, int64_t msg_bytes, int nranks, int window, int pp_method, int shifted,
                         size_t *send_bytes, size_t *recv_bytes)
{
    size_t n = (size_t)msg_bytes, all = n * (size_t)nranks;
    size_t s = n, r = n;
    switch (test) {
    case WB_TRANSFER_PINGPONG:
        r = shifted ? 2 * n
            : pp_method == WB_TRANSFER_PP_NETPIPE ? n * (size_t)wb_transfer_netpipe_slots(msg_bytes) : n;
        break;
    case WB_TRANSFER_BW:
    case WB_TRANSFER_BIBW:
        s = r = n * (size_t)window;
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
