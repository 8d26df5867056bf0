#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/load/bench_load_int.h"
#include "par/comm.h"
#include "core/error.h"
#include "core/rng.h"
#include "core/timer.h"

uint64_t wb_load_rng_seed(uint64_t seed, uint64_t a, uint64_t b)
{
    uint64_t x = seed;
    uint64_t s = wb_rng_next(&x) ^ (a * 0xd1b54a32d192ed03ULL);
    x = s;
    s = wb_rng_next(&x) ^ (b * 0x8cb92ba72f3d8dd7ULL);
    x = s;
    return wb_rng_next(&x);
}

double wb_load_rng_uniform(uint64_t *state)
{
    /* 53 random bits, shifted off zero so that log() stays finite. */
    return ((double)(wb_rng_next(state) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

int wb_load_source_init(struct wb_load_source *src, const struct wb_load_opts *t, const struct wb_load_step *s,
                        int k, int nk, uint64_t seed)
{
    memset(src, 0, sizeof *src);
    src->loop = t->loop;
    src->rng = wb_load_rng_seed(seed, (uint64_t)s->index + 1, (uint64_t)k + 1);
    src->end_s = s->duration_s > 0 ? s->duration_s : INFINITY;
    src->think_s = t->think_ms * 1e-3;
    if (t->loop == WB_LOAD_OPEN) {
        src->open_id = k;
        src->rate_rps = s->rate_rps / nk;
        src->open_left = s->requests > 0 ? s->requests / nk + (k < s->requests % nk) : -1;
        src->next_arrival_s = -log(wb_load_rng_uniform(&src->rng)) / src->rate_rps;
        return 0;
    }
    int total = s->clients, n = 0;
    for (int c = k; c < total; c += nk)
        n++;
    src->nclients = n;
    src->ids = calloc((size_t)n + 1, sizeof *src->ids);
    src->next_s = calloc((size_t)n + 1, sizeof *src->next_s);
    src->left = calloc((size_t)n + 1, sizeof *src->left);
    if (!src->ids || !src->next_s || !src->left) {
        wb_load_source_free(src);
        return wb_error_set(WB_ENOMEM, "out of memory for %d load clients", n);
    }
    for (int i = 0; i < n; i++) {
        int c = k + i * nk;
        src->ids[i] = c;
        /* Spread the first requests over one think time so the clients do not start in lockstep. */
        src->next_s[i] = src->think_s > 0 ? src->think_s * wb_load_rng_uniform(&src->rng) : 0.0;
        src->left[i] = s->requests > 0 ? s->requests / total + (c < s->requests % total) : -1;
    }
    return 0;
}

void wb_load_source_free(struct wb_load_source *src)
{
    free(src->ids);
    free(src->next_s);
    free(src->left);
    src->ids = NULL;
    src->next_s = NULL;
    src->left = NULL;
}

int wb_load_source_due(struct wb_load_source *src, double now_s, int *client, double *t_sched_s)
{
    if (src->loop == WB_LOAD_OPEN) {
        if (src->open_left == 0 || src->next_arrival_s > now_s || src->next_arrival_s >= src->end_s)
            return 0;
        *client = src->open_id;
        *t_sched_s = src->next_arrival_s;
        src->next_arrival_s += -log(wb_load_rng_uniform(&src->rng)) / src->rate_rps;
        if (src->open_left > 0)
            src->open_left--;
        return 1;
    }
    int best = -1;
    for (int i = 0; i < src->nclients; i++)
        if (src->left[i] != 0 && src->next_s[i] <= now_s && src->next_s[i] < src->end_s &&
            (best < 0 || src->next_s[i] < src->next_s[best]))
            best = i;
    if (best < 0)
        return 0;
    *client = src->ids[best];
    *t_sched_s = src->next_s[best];
    src->next_s[best] = INFINITY;
    if (src->left[best] > 0)
        src->left[best]--;
    return 1;
}

void wb_load_source_answered(struct wb_load_source *src, int client, double now_s, int rejected)
{
    if (src->loop == WB_LOAD_OPEN)
        return;
    double pause = rejected && src->think_s < WB_LOAD_RETRY_S ? WB_LOAD_RETRY_S : src->think_s;
    for (int i = 0; i < src->nclients; i++)
        if (src->ids[i] == client)
            src->next_s[i] = now_s + pause;
}

int wb_load_source_exhausted(const struct wb_load_source *src, double now_s)
{
    if (src->loop == WB_LOAD_OPEN)
        return src->open_left == 0 || src->next_arrival_s >= src->end_s;
    /* A client answered before the end is due before it, even when the caller gets round to it after:
     * the source is not done until that request is sent (it once went out after its client rank had
     * reported the step's count to the head). */
    for (int i = 0; i < src->nclients; i++)
        if (src->left[i] != 0 && src->next_s[i] < src->end_s && src->next_s[i] <= now_s)
            return 0;
    if (now_s >= src->end_s)
        return 1;
    for (int i = 0; i < src->nclients; i++)
        if (src->left[i] != 0)
            return 0;
    return 1;
}

double wb_load_source_next_s(const struct wb_load_source *src)
{
    double next = INFINITY;
    if (src->loop == WB_LOAD_OPEN) {
        if (src->open_left != 0)
            next = src->next_arrival_s;
    } else {
        for (int i = 0; i < src->nclients; i++)
            if (src->left[i] != 0 && src->next_s[i] < next)
                next = src->next_s[i];
    }
    return next < src->end_s ? next : INFINITY;
}

int wb_load_ops_add(struct wb_load_ops *ops, MPI_Request r, struct wb_load_op op)
{
    if (ops->n == ops->cap) {
        int cap = ops->cap ? 2 * ops->cap : 64;
        MPI_Request *req = realloc(ops->req, (size_t)cap * sizeof *req);
        if (req)
            ops->req = req;
        struct wb_load_op *o = realloc(ops->op, (size_t)cap * sizeof *o);
        if (o)
            ops->op = o;
        int *idx = realloc(ops->idx, (size_t)cap * sizeof *idx);
        if (idx)
            ops->idx = idx;
        MPI_Status *st = realloc(ops->st, (size_t)cap * sizeof *st);
        if (st)
            ops->st = st;
        if (!req || !o || !idx || !st)
            return wb_error_set(WB_ENOMEM, "out of memory for %d messages in flight", cap);
        ops->cap = cap;
    }
    ops->req[ops->n] = r;
    ops->op[ops->n] = op;
    ops->n++;
    return 0;
}

int wb_load_ops_test(struct wb_load_ops *ops, int (*done)(void *arg, struct wb_load_op *op, MPI_Status *st),
                     void *arg, int *ncompleted)
{
    int outcount = 0, rc = 0;
    *ncompleted = 0;
    if (ops->n == 0)
        return 0;
    rc = wb_comm_check(MPI_Testsome(ops->n, ops->req, &outcount, ops->idx, ops->st), "MPI_Testsome (load)");
    if (rc || outcount == MPI_UNDEFINED || outcount == 0)
        return rc;
    /* Callbacks may start new operations (and grow the arrays): take the completed ones out first. */
    if (outcount > ops->done_cap) {
        struct wb_load_op *d = realloc(ops->done_op, (size_t)ops->cap * sizeof *d);
        if (d)
            ops->done_op = d;
        MPI_Status *ds = realloc(ops->done_st, (size_t)ops->cap * sizeof *ds);
        if (ds)
            ops->done_st = ds;
        if (!d || !ds)
            return wb_error_set(WB_ENOMEM, "out of memory for completed messages");
        ops->done_cap = ops->cap;
    }
    for (int i = 0; i < outcount; i++) {
        ops->done_op[i] = ops->op[ops->idx[i]];
        ops->done_st[i] = ops->st[i];
    }
    /* Completed requests are MPI_REQUEST_NULL now; keep the rest in order. */
    int m = 0;
    for (int i = 0; i < ops->n; i++)
        if (ops->req[i] != MPI_REQUEST_NULL) {
            ops->req[m] = ops->req[i];
            ops->op[m] = ops->op[i];
            m++;
        }
    ops->n = m;
    for (int i = 0; i < outcount; i++) {
        struct wb_load_op *op = &ops->done_op[i];
        if (done && rc == 0)
            rc = done(arg, op, &ops->done_st[i]);
        free(op->heap);
        if (op->pool_buf && op->pool)
            wb_load_pool_put(op->pool, op->pool_buf);
    }
    *ncompleted = outcount;
    return rc;
}

void wb_load_ops_free(struct wb_load_ops *ops)
{
    /* Operations still in flight belong to a step that failed: MPI may yet touch their buffers, so they leak. */
    free(ops->req);
    free(ops->op);
    free(ops->idx);
    free(ops->st);
    free(ops->done_op);
    free(ops->done_st);
    memset(ops, 0, sizeof *ops);
}

void *wb_load_pool_get(struct wb_load_pool *p)
{
    if (p->nfree > 0)
        return p->free[--p->nfree];
    void *b = malloc(p->size ? p->size : 1);
    if (!b)
        wb_error_set(WB_ENOMEM, "out of memory for a %zu-byte load buffer", p->size);
    return b;
}

void wb_load_pool_put(struct wb_load_pool *p, void *buf)
{
    if (!buf)
        return;
    if (p->nfree == p->cap) {
        int cap = p->cap ? 2 * p->cap : 16;
        void **f = realloc(p->free, (size_t)cap * sizeof *f);
        if (!f) {
            free(buf);
            return;
        }
        p->free = f;
        p->cap = cap;
    }
    p->free[p->nfree++] = buf;
}

void wb_load_pool_destroy(struct wb_load_pool *p)
{
    for (int i = 0; i < p->nfree; i++)
        free(p->free[i]);
    free(p->free);
    p->free = NULL;
    p->nfree = p->cap = 0;
}

int wb_load_isend_wait(struct wb_load_ctx *c, const void *buf, int64_t nbytes, int dest, int tag, double deadline,
                       const char *what)
{
    MPI_Request r;
    int rc = wb_comm_check(MPI_Isend(buf, (int)nbytes, MPI_BYTE, dest, tag, c->comm, &r), what);
    return rc ? rc : wb_comm_wait_until(&r, MPI_STATUS_IGNORE, deadline, c->poll_s, what);
}

int wb_load_irecv_wait(struct wb_load_ctx *c, void *buf, int64_t nbytes, int src, int tag, double deadline,
                       MPI_Status *st, const char *what)
{
    MPI_Request r;
    int rc = wb_comm_check(MPI_Irecv(buf, (int)nbytes, MPI_BYTE, src, tag, c->comm, &r), what);
    return rc ? rc : wb_comm_wait_until(&r, st, deadline, c->poll_s, what);
}

int wb_load_start_barrier(struct wb_load_ctx *c)
{
    MPI_Request bar;
    int rc = wb_comm_check(MPI_Ibarrier(c->comm, &bar), "MPI_Ibarrier (load step start)");
    /* The head probes every worker's clock first, which may take a while on a slow network. */
    return rc ? rc : wb_comm_wait_until(&bar, MPI_STATUS_IGNORE, wb_timer_now_s() + 120.0, c->poll_s, "load step start");
}
