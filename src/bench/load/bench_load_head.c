#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/load/bench_load_int.h"
#include "par/comm.h"
#include "core/error.h"
#include "core/report.h"
#include "core/timer.h"

/* What to do when an operation completes. */
enum { OP_SEND = 1, OP_REQ_DATA, OP_RESULT_DATA };

struct head {
    struct wb_load_ctx *c;
    struct wb_load_step *s;
    const struct wb_load_opts *t;
    double t0;                   /* step start, wb_timer_now_s time */
    struct wb_load_rec *recs;
    int64_t n, cap, active;
    int64_t *queue, qhead, qlen;  /* ring of record indices, capacity queue_limit */
    int64_t *wrec;               /* per worker: record in service or -1 */
    int *wdead;
    double *offset_s;            /* per worker: its clock minus the head's */
    int rr_next, dyn_next;
    struct wb_load_ops ops;
    struct wb_load_pool req_pool, res_pool;
    struct wb_load_source src;
    int head_source;
    int *cdone;                  /* per client rank */
    int64_t **seqmap, *seqcap, *from_client; /* per client rank: sequence number -> record */
    int stopping;
    double stop_abs;
    int rc;
    void **ref;                  /* per worker: its first result, to compare later ones with */
};

static double now_rel(const struct head *h) { return wb_timer_now_s() - h->t0; }

static int fail(struct head *h, int rc)
{
    if (h->rc == 0)
        h->rc = rc;
    return rc;
}

static int64_t new_rec(struct head *h, int client, int client_rank, int64_t seq, double t_submit)
{
    if (h->n == h->cap) {
        int64_t cap = h->cap ? 2 * h->cap : 1024;
        struct wb_load_rec *r = realloc(h->recs, (size_t)cap * sizeof *r);
        if (!r) {
            fail(h, wb_error_set(WB_ENOMEM, "out of memory for %lld load records", (long long)cap));
            return -1;
        }
        h->recs = r;
        h->cap = cap;
    }
    struct wb_load_rec *r = &h->recs[h->n];
    memset(r, 0, sizeof *r);
    r->client = client;
    r->client_rank = client_rank;
    r->worker = -1;
    r->seq = seq;
    r->status = WB_LOAD_PENDING;
    r->t_submit = t_submit;
    r->t_start = r->t_done = NAN;
    r->t_queue = r->t_dist = r->t_comp = r->t_fft = r->t_ret = r->t_client = NAN;
    r->warmup = t_submit < h->t->warmup_s;
    h->active++;
    return h->n++;
}

static int send_msg(struct head *h, int dest, int tag, const struct wb_load_msg *m)
{
    struct wb_load_msg *copy = malloc(sizeof *copy);
    if (!copy)
        return fail(h, wb_error_set(WB_ENOMEM, "out of memory for a message"));
    *copy = *m;
    MPI_Request r;
    int rc = wb_comm_check(MPI_Isend(copy, (int)sizeof *copy, MPI_BYTE, dest, tag, h->c->comm, &r), "MPI_Isend (load)");
    if (rc) {
        free(copy);
        return fail(h, rc);
    }
    if ((rc = wb_load_ops_add(&h->ops, r, (struct wb_load_op){.kind = OP_SEND, .rec = -1, .heap = copy})))
        return fail(h, rc);
    return 0;
}

/* Send data (nbytes at buf); if pool is set, buf returns to it once sent. */
static int send_data(struct head *h, int dest, int tag, void *buf, int64_t nbytes, struct wb_load_pool *pool)
{
    MPI_Request r;
    int rc = wb_comm_check(MPI_Isend(buf, (int)nbytes, MPI_BYTE, dest, tag, h->c->comm, &r), "MPI_Isend (load data)");
    if (rc) {
        if (pool)
            wb_load_pool_put(pool, buf);
        return fail(h, rc);
    }
    rc = wb_load_ops_add(&h->ops, r, (struct wb_load_op){.kind = OP_SEND, .rec = -1,
                                                         .pool_buf = pool ? buf : NULL, .pool = pool});
    return rc ? fail(h, rc) : 0;
}

/* The request's answer goes back to its client rank (results of done requests included). */
static int reply(struct head *h, int64_t i, void *result_buf)
{
    struct wb_load_rec *r = &h->recs[i];
    if (r->client_rank <= 0) {
        if (h->head_source)
            wb_load_source_answered(&h->src, r->client, now_rel(h), r->status == WB_LOAD_REJECTED);
        if (result_buf)
            wb_load_pool_put(&h->res_pool, result_buf);
        return 0;
    }
    struct wb_load_msg m = {.code = r->status, .step = h->s->index, .id = r->seq, .client = r->client,
                            .nbytes = result_buf ? h->c->res_bytes : 0};
    int rc = send_msg(h, r->client_rank, WB_LOAD_TAG_REPLY, &m);
    if (rc == 0 && result_buf)
        return send_data(h, r->client_rank, WB_LOAD_TAG_REPLY_DATA, result_buf, h->c->res_bytes, &h->res_pool);
    if (result_buf)
        wb_load_pool_put(&h->res_pool, result_buf);
    return rc;
}

static int finish(struct head *h, int64_t i, int status, void *result_buf)
{
    struct wb_load_rec *r = &h->recs[i];
    r->status = (uint8_t)status;
    h->active--;
    if (r->buf) {
        wb_load_pool_put(&h->req_pool, r->buf);
        r->buf = NULL;
    }
    return reply(h, i, result_buf);
}

/* A request is complete on the head: queue it, or reject it when the queue is full. */
static int admit(struct head *h, int64_t i)
{
    if (h->stopping)
        return finish(h, i, WB_LOAD_UNFINISHED, NULL);
    if (h->qlen >= h->t->queue_limit)
        return finish(h, i, WB_LOAD_REJECTED, NULL);
    h->queue[(h->qhead + h->qlen) % h->t->queue_limit] = i;
    h->qlen++;
    return 0;
}

static int pick_worker(struct head *h)
{
    int nw = h->c->nworkers;
    if (h->t->dispatch == WB_LOAD_ROUND_ROBIN) {
        /* Strictly in turn: the next request waits for its worker even if another is idle. */
        int w = h->rr_next;
        return h->wrec[w] < 0 && !h->wdead[w] ? w : -1;
    }
    for (int k = 0; k < nw; k++) {
        int w = (h->dyn_next + k) % nw;
        if (h->wrec[w] < 0 && !h->wdead[w])
            return w;
    }
    return -1;
}

static int dispatch(struct head *h)
{
    int started = 0;
    while (h->qlen > 0 && !h->stopping && h->rc == 0) {
        int w = pick_worker(h);
        if (w < 0)
            break;
        int64_t i = h->queue[h->qhead];
        h->qhead = (h->qhead + 1) % h->t->queue_limit;
        h->qlen--;
        struct wb_load_rec *r = &h->recs[i];
        struct wb_load_msg m = {.step = h->s->index, .id = i, .client = r->client, .nbytes = h->c->req_bytes};
        r->t_start = now_rel(h);
        r->worker = w + 1;
        h->wrec[w] = i;
        h->rr_next = (w + 1) % h->c->nworkers;
        h->dyn_next = (w + 1) % h->c->nworkers;
        if (send_msg(h, w + 1, WB_LOAD_TAG_JOB, &m))
            return h->rc;
        /* The received audio goes back to the pool once the worker has it; the head's own is shared. */
        void *buf = r->buf ? r->buf : h->c->payload;
        struct wb_load_pool *pool = r->buf ? &h->req_pool : NULL;
        r->buf = NULL;
        if (send_data(h, w + 1, WB_LOAD_TAG_JOB_DATA, buf, h->c->req_bytes, pool))
            return h->rc;
        started++;
    }
    return started;
}

/* Stop taking requests: cut the step off (timeout) or give up after an error. */
static void begin_stop(struct head *h)
{
    if (h->stopping)
        return;
    h->stopping = 1;
    h->stop_abs = wb_timer_now_s();
    for (int k = 0; k < h->c->nclient_ranks; k++) {
        struct wb_load_msg m = {.code = WB_LOAD_CTRL_STOP, .step = h->s->index};
        send_msg(h, h->c->first_client_rank + k, WB_LOAD_TAG_CTRL, &m);
    }
    while (h->qlen > 0) {
        int64_t i = h->queue[h->qhead];
        h->qhead = (h->qhead + 1) % h->t->queue_limit;
        h->qlen--;
        finish(h, i, WB_LOAD_UNFINISHED, NULL);
    }
}

static int result_in(struct head *h, int64_t i, void *buf)
{
    struct wb_load_rec *r = &h->recs[i];
    int w = r->worker - 1;
    if (h->stopping) {
        wb_load_pool_put(&h->res_pool, buf);
        return finish(h, i, WB_LOAD_UNFINISHED, NULL);
    }
    r->t_done = now_rel(h);
    double rt = r->t_done - r->t_start;
    /* Only the head's clock measures latency; the worker's clock (offset removed) only splits the round trip. */
    double comp = fmin(fmax(r->w_send - r->w_recv, 0.0), rt);
    double recv_on_head = r->w_recv - h->offset_s[w] - h->t0;
    double dist = fmin(fmax(recv_on_head - r->t_start, 0.0), rt - comp);
    r->t_queue = r->t_start - r->t_submit;
    r->t_comp = comp;
    r->t_dist = dist;
    r->t_ret = rt - comp - dist;
    if (!h->ref[w]) {
        h->ref[w] = malloc((size_t)h->c->res_bytes);
        if (h->ref[w])
            memcpy(h->ref[w], buf, (size_t)h->c->res_bytes);
    } else if (memcmp(h->ref[w], buf, (size_t)h->c->res_bytes) != 0) {
        /* Same input, same plan: any difference means the data was damaged on the way. */
        h->s->verify_mismatches++;
    }
    return finish(h, i, WB_LOAD_DONE, buf);
}

static int op_done(void *arg, struct wb_load_op *op, MPI_Status *st)
{
    struct head *h = arg;
    (void)st;
    switch (op->kind) {
    case OP_REQ_DATA:
        return admit(h, op->rec);
    case OP_RESULT_DATA: {
        void *buf = op->pool_buf;
        op->pool_buf = NULL; /* result_in passes it on */
        return result_in(h, op->rec, buf);
    }
    default:
        return 0;
    }
}

/* Receive a message that Iprobe has already seen. */
static int recv_small(struct head *h, void *buf, int nbytes, int src, int tag, const char *what)
{
    int rc = wb_load_irecv_wait(h->c, buf, nbytes, src, tag, wb_timer_now_s() + 30.0, MPI_STATUS_IGNORE, what);
    return rc ? fail(h, rc) : 0;
}

static int protocol_error(struct head *h, int src, const char *what)
{
    return fail(h, wb_error_set(WB_EMPI, "load step s%03d: rank %d sent %s; the ranks disagree about the protocol",
                                h->s->index, src, what));
}

static int on_request(struct head *h, int src)
{
    struct wb_load_msg m;
    if (recv_small(h, &m, (int)sizeof m, src, WB_LOAD_TAG_REQ, "receive a request header"))
        return h->rc;
    if (m.step != h->s->index || m.nbytes != h->c->req_bytes || m.id < 0)
        return protocol_error(h, src, "a request of another step or size");
    int k = src - h->c->first_client_rank;
    if (h->cdone[k])
        return protocol_error(h, src, "a request after its end-of-step report");
    int64_t i = new_rec(h, (int)m.client, src, m.id, now_rel(h));
    if (i < 0)
        return h->rc;
    if (m.id >= h->seqcap[k]) {
        int64_t cap = h->seqcap[k] ? 2 * h->seqcap[k] : 1024;
        while (cap <= m.id)
            cap *= 2;
        int64_t *map = realloc(h->seqmap[k], (size_t)cap * sizeof *map);
        if (!map)
            return fail(h, wb_error_set(WB_ENOMEM, "out of memory for request numbers"));
        for (int64_t j = h->seqcap[k]; j < cap; j++)
            map[j] = -1;
        h->seqmap[k] = map;
        h->seqcap[k] = cap;
    }
    h->seqmap[k][m.id] = i;
    h->from_client[k]++;
    struct wb_load_rec *r = &h->recs[i];
    r->buf = wb_load_pool_get(&h->req_pool);
    if (!r->buf)
        return fail(h, WB_ENOMEM);
    MPI_Request q;
    int rc = wb_comm_check(MPI_Irecv(r->buf, (int)m.nbytes, MPI_BYTE, src, WB_LOAD_TAG_REQ_DATA, h->c->comm, &q),
                           "MPI_Irecv (request audio)");
    if (rc == 0)
        rc = wb_load_ops_add(&h->ops, q, (struct wb_load_op){.kind = OP_REQ_DATA, .rec = i});
    return rc ? fail(h, rc) : 0;
}

static int on_result(struct head *h, int src)
{
    struct wb_load_msg m;
    if (recv_small(h, &m, (int)sizeof m, src, WB_LOAD_TAG_RESULT, "receive a result header"))
        return h->rc;
    int w = src - 1;
    if (w < 0 || w >= h->c->nworkers || m.step != h->s->index || m.id != h->wrec[w] || m.nbytes != h->c->res_bytes)
        return protocol_error(h, src, "a result the head did not ask for");
    struct wb_load_rec *r = &h->recs[m.id];
    r->w_recv = m.t[0];
    r->w_send = m.t[1];
    r->t_fft = m.t[3];
    h->wrec[w] = -1; /* the worker is free as soon as it has sent */
    void *buf = wb_load_pool_get(&h->res_pool);
    if (!buf)
        return fail(h, WB_ENOMEM);
    MPI_Request q;
    int rc = wb_comm_check(MPI_Irecv(buf, (int)m.nbytes, MPI_BYTE, src, WB_LOAD_TAG_RESULT_DATA, h->c->comm, &q),
                           "MPI_Irecv (result)");
    if (rc == 0)
        rc = wb_load_ops_add(&h->ops, q, (struct wb_load_op){.kind = OP_RESULT_DATA, .rec = m.id,
                                                             .pool_buf = buf, .pool = &h->res_pool});
    if (rc)
        wb_load_pool_put(&h->res_pool, buf);
    return rc ? fail(h, rc) : 0;
}

static int on_cdone(struct head *h, int src, MPI_Status *st)
{
    int k = src - h->c->first_client_rank, count = 0;
    if (k < 0 || k >= h->c->nclient_ranks || h->cdone[k])
        return protocol_error(h, src, "an unexpected end-of-step report");
    int rc = wb_comm_check(MPI_Get_count(st, MPI_BYTE, &count), "MPI_Get_count (client report)");
    if (rc)
        return fail(h, rc);
    char *buf = malloc(count > 0 ? (size_t)count : 1);
    if (!buf)
        return fail(h, wb_error_set(WB_ENOMEM, "out of memory for a client report"));
    if (recv_small(h, buf, count, src, WB_LOAD_TAG_CDONE, "receive a client's report")) {
        free(buf);
        return h->rc;
    }
    int64_t nsent, step;
    memcpy(&step, buf, sizeof step);
    memcpy(&nsent, buf + sizeof step, sizeof nsent);
    if (step != h->s->index || (size_t)count != 2 * sizeof(int64_t) + (size_t)nsent * sizeof(double)) {
        free(buf);
        return protocol_error(h, src, "a malformed report");
    }
    h->cdone[k] = 1;
    if (nsent != h->from_client[k]) {
        free(buf);
        return fail(h, wb_error_set(WB_EVERIFY, "load step s%03d: accounting: client rank %d sent %lld requests, "
                                                "the head received %lld", h->s->index, src, (long long)nsent,
                                    (long long)h->from_client[k]));
    }
    for (int64_t q = 0; q < nsent; q++) {
        double rtt;
        memcpy(&rtt, buf + 2 * sizeof(int64_t) + (size_t)q * sizeof rtt, sizeof rtt);
        int64_t i = q < h->seqcap[k] ? h->seqmap[k][q] : -1;
        if (i >= 0)
            h->recs[i].t_client = rtt;
    }
    free(buf);
    return 0;
}

static int on_fail(struct head *h, int src)
{
    struct wb_load_fail f;
    if (recv_small(h, &f, (int)sizeof f, src, WB_LOAD_TAG_FAIL, "receive an error report"))
        return h->rc;
    f.msg[sizeof f.msg - 1] = '\0';
    fail(h, wb_error_set((int)f.code < 0 ? (int)f.code : WB_EMPI, "rank %d: %s", src, f.msg));
    int w = src - 1;
    if (w >= 0 && w < h->c->nworkers) {
        h->wdead[w] = 1;
        if (h->wrec[w] >= 0) {
            int64_t i = h->wrec[w];
            h->wrec[w] = -1;
            finish(h, i, WB_LOAD_UNFINISHED, NULL);
        }
    }
    begin_stop(h);
    return 0;
}

/* Take a message nobody expects off the line, so that polling moves on. */
static void discard(struct head *h, MPI_Status *st)
{
    int count = 0;
    int rc = wb_comm_check(MPI_Get_count(st, MPI_BYTE, &count), "MPI_Get_count (unexpected message)");
    if (rc) {
        fail(h, rc);
        return;
    }
    char *buf = malloc(count > 0 ? (size_t)count : 1);
    if (buf)
        recv_small(h, buf, count, st->MPI_SOURCE, st->MPI_TAG, "discard a message");
    free(buf);
}

/* The step was cut off and its grace passed: a worker still holding a request has stopped answering. */
static void name_stopped_worker(struct head *h)
{
    double now = now_rel(h);
    for (int w = 0; w < h->c->nworkers; w++) {
        int64_t i = h->wrec[w];
        if (i >= 0 && now - h->recs[i].t_start > h->s->stopped_quiet_s) {
            h->s->stopped_worker = w + 1;
            h->s->stopped_quiet_s = now - h->recs[i].t_start;
        }
    }
}

/* Handle every message that has arrived (up to a bound, so dispatch keeps its turn). */
static int poll_messages(struct head *h, int *activity)
{
    for (int k = 0; k < 64; k++) {
        int flag = 0;
        MPI_Status st;
        if (wb_comm_check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, h->c->comm, &flag, &st), "MPI_Iprobe (load head)"))
            return fail(h, WB_EMPI);
        if (!flag)
            break;
        (*activity)++;
        int src = st.MPI_SOURCE;
        int is_client = src >= h->c->first_client_rank && h->c->nclient_ranks > 0;
        switch (st.MPI_TAG) {
        case WB_LOAD_TAG_REQ:
            if (!is_client) {
                discard(h, &st);
                return protocol_error(h, src, "a request but is no client rank");
            }
            on_request(h, src);
            break;
        case WB_LOAD_TAG_RESULT:
            on_result(h, src);
            break;
        case WB_LOAD_TAG_CDONE:
            on_cdone(h, src, &st);
            break;
        case WB_LOAD_TAG_FAIL:
            on_fail(h, src);
            break;
        default:
            discard(h, &st);
            return protocol_error(h, src, "a message with an unexpected tag");
        }
    }
    return h->rc;
}

/* Estimate every worker's clock offset: the probe with the shortest round trip wins. */
static int clock_offsets(struct head *h)
{
    struct wb_comm_clock k = {h->c->comm, WB_LOAD_TAG_PING, WB_LOAD_TAG_PONG, WB_LOAD_NPING};
    int nw = h->c->nworkers;
    int rc = wb_comm_clock_offsets(&k, 1, nw, 30.0, h->offset_s);
    if (rc)
        return fail(h, rc);
    /* The same offsets as wall-clock ones (what check reports), for the file. */
    const double *rmw = h->c->real_minus_wtime_s;
    free(h->s->clock_offset_s);
    if ((h->s->clock_offset_s = malloc((size_t)nw * sizeof(double))))
        for (int w = 0; w < nw; w++)
            h->s->clock_offset_s[w] = rmw ? h->offset_s[w] + rmw[1 + w] - rmw[0] : NAN;
    return 0;
}

static int setup(struct head *h, struct wb_load_ctx *c, struct wb_load_step *s)
{
    int nw = c->nworkers, nc = c->nclient_ranks;
    h->c = c;
    h->s = s;
    h->t = c->t;
    h->head_source = nc == 0;
    h->req_pool.size = (size_t)c->req_bytes;
    h->res_pool.size = (size_t)c->res_bytes;
    h->queue = calloc((size_t)c->t->queue_limit, sizeof *h->queue);
    h->wrec = malloc((size_t)nw * sizeof *h->wrec);
    h->wdead = calloc((size_t)nw, sizeof *h->wdead);
    h->offset_s = calloc((size_t)nw, sizeof *h->offset_s);
    h->ref = calloc((size_t)nw, sizeof *h->ref);
    h->cdone = calloc((size_t)nc + 1, sizeof *h->cdone);
    h->seqmap = calloc((size_t)nc + 1, sizeof *h->seqmap);
    h->seqcap = calloc((size_t)nc + 1, sizeof *h->seqcap);
    h->from_client = calloc((size_t)nc + 1, sizeof *h->from_client);
    if (!h->queue || !h->wrec || !h->wdead || !h->offset_s || !h->ref || !h->cdone || !h->seqmap || !h->seqcap ||
        !h->from_client)
        return wb_error_set(WB_ENOMEM, "out of memory for the head's queue of %lld", (long long)c->t->queue_limit);
    for (int w = 0; w < nw; w++)
        h->wrec[w] = -1;
    if (h->head_source)
        return wb_load_source_init(&h->src, c->t, s, 0, 1, c->seed);
    return 0;
}

static void teardown(struct head *h)
{
    wb_load_ops_free(&h->ops);
    wb_load_pool_destroy(&h->req_pool);
    wb_load_pool_destroy(&h->res_pool);
    if (h->head_source)
        wb_load_source_free(&h->src);
    for (int w = 0; h->ref && w < h->c->nworkers; w++)
        free(h->ref[w]);
    for (int k = 0; h->seqmap && k < h->c->nclient_ranks; k++)
        free(h->seqmap[k]);
    free(h->queue);
    free(h->wrec);
    free(h->wdead);
    free(h->offset_s);
    free(h->ref);
    free(h->cdone);
    free(h->seqmap);
    free(h->seqcap);
    free(h->from_client);
}

/* Tell workers and client ranks that the step is over, and wait (bounded) until they have it. */
static int shutdown_peers(struct head *h)
{
    int rc = 0;
    for (int w = 0; w < h->c->nworkers; w++) {
        struct wb_load_msg m = {.code = WB_LOAD_CTRL_STOP, .step = h->s->index};
        rc = rc ? rc : send_msg(h, w + 1, WB_LOAD_TAG_CTRL, &m);
    }
    for (int k = 0; k < h->c->nclient_ranks; k++) {
        struct wb_load_msg m = {.code = WB_LOAD_CTRL_END, .step = h->s->index};
        rc = rc ? rc : send_msg(h, h->c->first_client_rank + k, WB_LOAD_TAG_CTRL, &m);
    }
    double deadline = wb_timer_now_s() + h->c->grace_s;
    struct wb_timer_backoff idle = {0, h->c->poll_s};
    while (h->ops.n > 0) {
        int done = 0;
        int trc = wb_load_ops_test(&h->ops, NULL, NULL, &done);
        if (trc)
            return trc;
        if (h->ops.n == 0)
            break;
        if (wb_timer_now_s() > deadline)
            return wb_error_set(WB_ETIMEOUT, "load step s%03d: %d messages to workers or clients were never taken",
                                h->s->index, h->ops.n);
        wb_timer_backoff_wait(&idle, deadline);
    }
    return rc;
}

/* After the step's loop: the last times, open requests marked, peers told, the records handed to s. */
static int finish_step(struct head *h, struct wb_load_step *s)
{
    wb_report_progress_end();
    s->t_end_s = now_rel(h);
    if (!h->head_source)
        for (int64_t i = 0; i < h->n; i++)
            if (h->recs[i].t_submit > s->t_last_submit_s)
                s->t_last_submit_s = h->recs[i].t_submit;
    /* Anything still open after an error never finished. */
    for (int64_t i = 0; i < h->n; i++)
        if (h->recs[i].status == WB_LOAD_PENDING && h->rc)
            h->recs[i].status = WB_LOAD_UNFINISHED;
    int src = shutdown_peers(h);
    s->recs = h->recs;
    s->nrecs = h->n;
    h->recs = NULL;
    teardown(h);
    return h->rc ? h->rc : src;
}

int wb_load_head_step(struct wb_load_ctx *c, struct wb_load_step *s)
{
    struct head h;
    memset(&h, 0, sizeof h);
    int rc = setup(&h, c, s);
    if (rc == 0)
        rc = clock_offsets(&h);
    int brc = wb_load_start_barrier(c);
    if (rc || brc) {
        teardown(&h);
        return rc ? rc : brc;
    }
    h.t0 = wb_timer_now_s();
    s->t_last_submit_s = 0;
    struct wb_timer_backoff idle = {0, c->poll_s};
    double next_progress = 0.5;
    for (;;) {
        double now = now_rel(&h);
        int activity = 0;
        if (h.head_source && !h.stopping) {
            int client;
            double t_sched;
            while (h.rc == 0 && wb_load_source_due(&h.src, now, &client, &t_sched)) {
                /* The scheduled time, not the time the head got round to it, so a busy head shows as latency. */
                int64_t i = new_rec(&h, client, 0, -1, t_sched);
                if (i >= 0)
                    admit(&h, i);
                s->t_last_submit_s = t_sched;
                activity++;
            }
        }
        poll_messages(&h, &activity);
        int ndone = 0;
        if ((rc = wb_load_ops_test(&h.ops, op_done, &h, &ndone)))
            fail(&h, rc);
        activity += ndone;
        if (h.rc == 0) {
            int d = dispatch(&h);
            activity += d > 0 ? d : 0;
        }
        now = now_rel(&h);
        if (h.rc && !h.stopping)
            begin_stop(&h);
        if (!h.stopping && now >= s->timeout_s) {
            s->timed_out = 1;
            begin_stop(&h);
        }
        int sources_over = h.head_source ? (h.stopping || wb_load_source_exhausted(&h.src, now)) : 1;
        for (int k = 0; k < c->nclient_ranks; k++)
            sources_over = sources_over && h.cdone[k];
        if (sources_over && h.active == 0 && h.ops.n == 0)
            break;
        if (h.stopping && wb_timer_now_s() > h.stop_abs + c->grace_s) {
            fail(&h, wb_error_set(WB_ETIMEOUT, "load step s%03d: %lld requests still open %.0f s after the step was "
                                               "stopped; a worker or client rank stopped responding", s->index,
                                  (long long)h.active, c->grace_s));
            h.rc = WB_ETIMEOUT;
            name_stopped_worker(&h);
            break;
        }
        if (now >= next_progress) {
            double frac = s->duration_s > 0 ? now / s->duration_s : (double)h.n / (double)s->requests;
            wb_report_progress("load", fmin(frac, 1.0), now);
            next_progress = now + 0.5;
        }
        if (activity) {
            wb_timer_backoff_reset(&idle);
        } else {
            double wake = h.head_source && !h.stopping ? h.t0 + wb_load_source_next_s(&h.src) : INFINITY;
            wb_timer_backoff_wait(&idle, wake);
        }
    }
    return finish_step(&h, s);
}
