#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/fft/bench_fft_int.h"
#include "par/comm.h"
#include "core/error.h"
#include "fftw/fft.h"
#include "bench/fft/options_fft.h"
#include "core/timer.h"

/* The root's plan of a static request: per rank, bytes and offsets of samples and results. */
struct static_plan {
    int *counts, *displs, *rcounts, *rdispls;
    MPI_Request *halo;
};

static void plan_free(struct static_plan *sp)
{
    free(sp->counts), free(sp->displs), free(sp->rcounts), free(sp->rdispls), free(sp->halo);
    memset(sp, 0, sizeof *sp);
}

/* Root: what MPI_Scatterv sends and MPI_Gatherv receives per rank; ranks that map the buffers get nothing. */
static int plan_static(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const struct wb_fftb_request *rq,
                       struct static_plan *sp)
{
    int n = c->nranks, rc = 0;
    sp->counts = calloc((size_t)n, sizeof *sp->counts);
    sp->displs = calloc((size_t)n, sizeof *sp->displs);
    sp->rcounts = calloc((size_t)n, sizeof *sp->rcounts);
    sp->rdispls = calloc((size_t)n, sizeof *sp->rdispls);
    sp->halo = calloc((size_t)n, sizeof *sp->halo);
    if (!sp->counts || !sp->displs || !sp->rcounts || !sp->rdispls || !sp->halo)
        return wb_error_set(WB_ENOMEM, "out of memory");
    for (int q = 0; rc == 0 && q < n; q++) {
        int64_t s, m, e, a, b;
        wb_fftb_region(l, rq->total_samples, c->nranks, c->first_compute, q, &s, &m, &e);
        wb_fftb_block(l->nunits, c->nranks, c->first_compute, q, &a, &b);
        int64_t bytes = (m - s) * (int64_t)c->sb, off = s * (int64_t)c->sb, rb = wb_fftb_result_span(l, a, b);
        if (wb_comm_shm_maps(&c->shm, q))
            bytes = rb = 0;
        if (bytes > INT_MAX || off > INT_MAX || rb > INT_MAX || (b > a && l->units[a].res_off > INT_MAX))
            rc = wb_error_set(WB_ENOMEM, "rank %d would get %lld bytes at offset %lld, more than one MPI call "
                                         "addresses; use fewer or shorter files",
                              q, (long long)bytes, (long long)off);
        sp->counts[q] = (int)bytes;
        sp->displs[q] = (int)off;
        sp->rcounts[q] = (int)rb;
        sp->rdispls[q] = b > a ? (int)l->units[a].res_off : 0;
    }
    return rc;
}

/* This rank's samples of a static request: [start, end), of which [start, main_end) by MPI_Scatterv. */
struct static_mine {
    int64_t u0, u1, start, main_end, end;
    int in_place;       /* the root, and ranks that map its buffers, work in place */
};

/* Samples out: the main part by MPI_Scatterv, the halo of each block by its own message. */
static int scatter_static(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const struct wb_fftb_request *rq,
                          const struct static_plan *sp, const struct static_mine *me, char *inbuf)
{
    MPI_Comm w = wb_comm_world();
    int rc;
    if (c->rank == 0)
        rc = wb_comm_check(MPI_Scatterv(rq->buf, sp->counts, sp->displs, MPI_BYTE, MPI_IN_PLACE, 0, MPI_BYTE, 0, w),
                           "MPI_Scatterv of samples");
    else
        rc = wb_comm_check(MPI_Scatterv(NULL, NULL, NULL, MPI_BYTE, inbuf,
                                        me->in_place ? 0 : (int)((me->main_end - me->start) * (int64_t)c->sb),
                                        MPI_BYTE, 0, w),
                           "MPI_Scatterv of samples");
    /* Frames at a block's end reach into the next block: those samples follow separately,
     * since MPI_Scatterv may not read a location of the root twice. */
    for (int q = 1; rc == 0 && c->rank == 0 && q < c->nranks; q++) {
        int64_t s, m, e;
        wb_fftb_region(l, rq->total_samples, c->nranks, c->first_compute, q, &s, &m, &e);
        sp->halo[q] = MPI_REQUEST_NULL;
        if (e > m && !wb_comm_shm_maps(&c->shm, q))
            rc = wb_comm_check(MPI_Isend(rq->buf + (size_t)m * c->sb, (int)((e - m) * (int64_t)c->sb), MPI_BYTE, q,
                                         WB_FFTB_TAG_DATA, w, &sp->halo[q]),
                               "MPI_Isend of frame overlap");
    }
    if (rc == 0 && !me->in_place && me->end > me->main_end)
        rc = wb_comm_check(MPI_Recv(inbuf + (size_t)(me->main_end - me->start) * c->sb,
                                    (int)((me->end - me->main_end) * (int64_t)c->sb), MPI_BYTE, 0, WB_FFTB_TAG_DATA, w,
                                    MPI_STATUS_IGNORE),
                           "MPI_Recv of frame overlap");
    if (rc == 0 && c->rank == 0)
        rc = wb_comm_check(MPI_Waitall(c->nranks - 1, sp->halo + 1, MPI_STATUSES_IGNORE), "MPI_Waitall");
    return rc;
}

/* Results back to the root by MPI_Gatherv; ranks that wrote in place only say they are done. */
static int gather_static(struct wb_fftb_ctx *c, const struct static_plan *sp, const struct static_mine *me,
                         const struct wb_comm_shm *resb, const char *myres, int64_t res_bytes)
{
    MPI_Comm w = wb_comm_world();
    int rc = 0;
    if (me->in_place && c->rank != 0)
        rc = wb_comm_shm_sync(resb);
    if (rc == 0 && c->rank == 0)
        rc = wb_comm_check(MPI_Gatherv(MPI_IN_PLACE, 0, MPI_BYTE, resb->ptr, sp->rcounts, sp->rdispls, MPI_BYTE, 0, w),
                           "MPI_Gatherv of results");
    else if (rc == 0)
        rc = wb_comm_check(MPI_Gatherv(myres, me->in_place ? 0 : (int)res_bytes, MPI_BYTE, NULL, NULL, NULL, MPI_BYTE,
                                       0, w),
                           "MPI_Gatherv of results");
    /* MPI_Gatherv need not wait for a rank that sends nothing: ranks that wrote their results in
     * place report done with a message of their own, so the root never reads ahead of them. */
    if (rc == 0 && c->use_shm) {
        int done = 1, *all = c->rank == 0 ? c->done_flags : NULL;
        rc = wb_comm_check(MPI_Gather(&done, 1, MPI_INT, all, 1, MPI_INT, 0, w), "MPI_Gather of done flags");
    }
    if (rc == 0 && c->rank == 0)
        rc = wb_comm_shm_sync(resb);
    return rc;
}

/* The phased schedule: MPI_Scatterv, compute, MPI_Gatherv, one after the other (and --baseline). */
int wb_fftb_run_phased(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const struct wb_fftb_request *rq,
                       const struct wb_comm_shm *inb, const struct wb_comm_shm *resb, char **inbuf,
                       int64_t *inbuf_cap, struct wb_fftb_timing *t, struct wb_fftb_measured *m)
{
    struct static_mine me;
    wb_fftb_block(l->nunits, c->nranks, c->first_compute, c->rank, &me.u0, &me.u1);
    wb_fftb_region(l, rq->total_samples, c->nranks, c->first_compute, c->rank, &me.start, &me.main_end, &me.end);
    me.in_place = c->rank == 0 || wb_comm_shm_maps(&c->shm, c->rank);
    m->units = me.u1 - me.u0;
    m->bytes_in = (me.end - me.start) * (int64_t)c->sb;
    int rc = me.in_place ? 0 : wb_fftb_ensure_buf(inbuf, inbuf_cap, m->bytes_in);
    int64_t res_bytes = wb_fftb_result_span(l, me.u0, me.u1);
    m->bytes_out = res_bytes;
    char *myres = me.in_place ? resb->ptr + (me.u1 > me.u0 ? l->units[me.u0].res_off : 0)
                              : wb_fft_alloc((size_t)res_bytes);
    if (!myres)
        rc = wb_error_set(WB_ENOMEM, "out of memory for %lld bytes of results", (long long)res_bytes);
    struct static_plan sp = {0};
    if (c->rank == 0 && !c->baseline && rc == 0)
        rc = plan_static(c, l, rq, &sp);
    rc = rc ? rc : wb_fftb_clock_start(c);
    rc = wb_comm_agree(rc);
    /* The baseline times its work without any MPI call. */
    double t0 = c->pipe.t0_s = wb_timer_now_s();
    if (rc == 0 && !c->baseline) {
        rc = scatter_static(c, l, rq, &sp, &me, *inbuf);
        /* The root stored the samples before the start barrier; make them visible here. */
        if (rc == 0 && me.in_place && c->rank != 0)
            rc = wb_comm_shm_sync(inb);
    }
    double t1 = wb_timer_now_s();
    c->in_base = me.in_place ? rq->buf : *inbuf;
    c->in_base_off = me.in_place ? 0 : me.start;
    if (rc == 0)
        rc = wb_fftb_compute_units(c, l, me.u0, me.u1, c->in_base, c->in_base_off, myres, &t->t_fft_s);
    double t2 = wb_timer_now_s();
    if (rc == 0 && !c->baseline)
        rc = gather_static(c, &sp, &me, resb, myres, res_bytes);
    double t3 = wb_timer_now_s();
    t->t_dist_s = t1 - t0;
    t->t_comp_s = t2 - t1;
    c->pipe.t_ready_s = t2 - t0;
    /* MPI_Gatherv tells the root only when it holds every result, so that is each rank's end. */
    for (int q = 0; c->rank == 0 && q < c->nranks; q++)
        c->pipe.t_held_s[q] = t3 - t0;
    /* The root's samples and results stay where they are: it has only a compute event. */
    if (c->rank != 0)
        wb_fftb_clock_event(c, 0, WB_FFTB_EV_RECV, t0, t1);
    wb_fftb_clock_event(c, 0, WB_FFTB_EV_COMPUTE, t1, t2);
    if (c->rank != 0)
        wb_fftb_clock_event(c, 0, WB_FFTB_EV_SEND, t2, t3);
    c->pipe.res = resb->ptr;
    c->pipe.res_bytes = l->res_total;
    if (!me.in_place)
        wb_fft_free(myres);
    plan_free(&sp);
    return rc;
}

/* Every schedule by the name --schedule gives (wb_schedule_names); a new one is an entry here. */
static const struct {
    const char *name;
    wb_fftb_schedule_fn run;
} schedules[] = {
    {"pipelined", wb_fftb_run_pipelined},
    {"phased", wb_fftb_run_phased},
    {"dynamic", wb_fftb_run_dynamic},
};

wb_fftb_schedule_fn wb_fftb_schedule(const struct wb_fftb_ctx *c)
{
    /* The baseline is the phased schedule with no message. */
    const char *name = c->baseline ? "phased" : wb_schedule_names[c->f->schedule];
    for (size_t i = 0; i < sizeof schedules / sizeof schedules[0]; i++)
        if (!strcmp(schedules[i].name, name))
            return schedules[i].run;
    return NULL;
}


/* Chunks a dynamic worker holds at once: one it transforms while the next is already there. */
#define DYN_INFLIGHT 2
/* Root-side send slots per worker: the chunks in flight and a stop. */
#define DYN_SLOTS (DYN_INFLIGHT + 1)

/* Root, dynamic schedule: one chunk's header and samples on their way to a worker, and its results'
 * receive, posted with them (a worker returns its chunks in the order it got them). */
struct dyn_slot {
    int64_t hdr[2];
    MPI_Request r[2];
};

/* Root, dynamic schedule: what each worker holds, the sends on their way and the result receives. */
struct dyn_root {
    struct dyn_slot *slot;        /* [nranks * DYN_SLOTS] */
    MPI_Request *res;             /* [nranks * DYN_SLOTS]: the result receive of each slot */
    int *idx;                     /* [nranks * DYN_SLOTS]: MPI_Testsome's answers */
    int *sent, *inflight;         /* [nranks] */
    int64_t next;
};

/* Root: send rank q the chunk of units at d->next, or a stop (count 0) when none is left, without
 * waiting for it to arrive; post the receive of its results into place. */
static int send_chunk(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const struct wb_fftb_request *rq,
                      char *results, struct dyn_root *d, int q)
{
    MPI_Comm w = wb_comm_world();
    int i = q * DYN_SLOTS + d->sent[q]++ % DYN_SLOTS;
    struct dyn_slot *sl = &d->slot[i];
    int rc = wb_comm_check(MPI_Waitall(2, sl->r, MPI_STATUSES_IGNORE), "MPI_Waitall for a chunk send");
    int64_t ch = c->pipe.chunk, a = d->next, count = l->nunits - a < ch ? l->nunits - a : ch;
    sl->hdr[0] = a;
    sl->hdr[1] = count;
    if (rc == 0)
        rc = wb_comm_check(MPI_Isend(sl->hdr, 2, MPI_INT64_T, q, WB_FFTB_TAG_CHUNK, w, &sl->r[0]),
                           "MPI_Isend of a chunk header");
    if (rc == 0 && count > 0) {
        int64_t s = wb_fftb_region_start(l, a), e = wb_fftb_region_end(l, a + count);
        rc = wb_comm_check(MPI_Irecv(results + l->units[a].res_off, (int)wb_fftb_result_span(l, a, a + count),
                                     MPI_BYTE, q, WB_FFTB_TAG_RESULT, w, &d->res[i]),
                           "MPI_Irecv of a result");
        rc = rc ? rc : wb_comm_check(MPI_Isend(rq->buf + (size_t)s * c->sb, (int)((e - s) * (int64_t)c->sb),
                                               MPI_BYTE, q, WB_FFTB_TAG_DATA, w, &sl->r[1]),
                                     "MPI_Isend of samples");
        d->next += count;
        d->inflight[q]++;
    }
    return rc;
}

/* Root, dynamic schedule: units [u0, u1) on the root itself, from its own buffer. */
static int root_chunk(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const struct wb_fftb_request *rq,
                      char *results, int64_t u0, int64_t u1, struct wb_fftb_timing *t, struct wb_fftb_measured *m)
{
    double t1 = wb_timer_now_s(), tf = 0;
    int rc = wb_fftb_compute_units(c, l, u0, u1, rq->buf, 0, results + l->units[u0].res_off, &tf);
    double t2 = wb_timer_now_s();
    t->t_comp_s += t2 - t1;
    t->t_fft_s += tf;
    c->pipe.t_ready_s = t2 - c->pipe.t0_s;
    wb_fftb_clock_event(c, u0 / c->pipe.chunk, WB_FFTB_EV_COMPUTE, t1, t2);
    m->units += u1 - u0;
    m->bytes_out += wb_fftb_result_span(l, u0, u1);
    m->bytes_in += (wb_fftb_region_end(l, u1) - wb_fftb_region_start(l, u0)) * (int64_t)c->sb;
    return rc;
}

/* Root: take in the results that have arrived (wait: at least one) and give each sender its next
 * chunk, or its stop once it holds nothing and nothing is left. */
static int take_results(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const struct wb_fftb_request *rq,
                        char *results, struct dyn_root *d, int wait, int *active)
{
    int n = c->nranks * DYN_SLOTS, done = 0;
    int rc = wait ? wb_comm_check(MPI_Waitsome(n, d->res, &done, d->idx, MPI_STATUSES_IGNORE), "MPI_Waitsome")
                  : wb_comm_check(MPI_Testsome(n, d->res, &done, d->idx, MPI_STATUSES_IGNORE), "MPI_Testsome");
    if (rc || done == MPI_UNDEFINED)
        return rc;
    double now = wb_timer_now_s() - c->pipe.t0_s;
    for (int k = 0; rc == 0 && k < done; k++) {
        int q = d->idx[k] / DYN_SLOTS;
        c->pipe.t_held_s[q] = now;
        d->inflight[q]--;
        if (d->next < l->nunits || d->inflight[q] == 0)
            rc = send_chunk(c, l, rq, results, d, q);
        *active -= d->inflight[q] == 0;
    }
    return rc;
}

/* Root, dynamic schedule: every worker holds up to two chunks; each result brings its sender the next
 * chunk; the root computes chunks itself while no result has come in. */
static int dynamic_root(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const struct wb_fftb_request *rq,
                        char *results, struct dyn_root *d, struct wb_fftb_timing *t, struct wb_fftb_measured *m)
{
    int active = 0, rc = 0;
    for (int k = 0; k < DYN_INFLIGHT; k++)
        for (int q = 1; q < c->nranks && rc == 0; q++)
            if (d->next < l->nunits || (k == 0 && d->inflight[q] == 0))
                rc = send_chunk(c, l, rq, results, d, q);
    for (int q = 1; q < c->nranks; q++)
        active += d->inflight[q] > 0;
    while (rc == 0 && (active > 0 || d->next < l->nunits)) {
        int before = active;
        int64_t was = d->next;
        rc = active > 0 ? take_results(c, l, rq, results, d, 0, &active) : 0;
        if (rc || active != before || d->next != was)
            continue;
        if (d->next < l->nunits && (c->f->root_computes || active == 0)) {
            int64_t e = d->next + c->pipe.chunk < l->nunits ? d->next + c->pipe.chunk : l->nunits;
            rc = root_chunk(c, l, rq, results, d->next, e, t, m);
            d->next = e;
        } else if (active > 0) {
            rc = take_results(c, l, rq, results, d, 1, &active);
        }
    }
    for (int i = 0; rc == 0 && i < c->nranks * DYN_SLOTS; i++)
        rc = wb_comm_check(MPI_Waitall(2, d->slot[i].r, MPI_STATUSES_IGNORE), "MPI_Waitall for chunk sends");
    double held = c->pipe.t_ready_s;
    for (int q = 1; q < c->nranks; q++)
        held = fmax(held, c->pipe.t_held_s[q]);
    c->pipe.t_held_s[0] = held;
    return rc;
}

/* Worker, dynamic schedule: the receives of one chunk (header and samples) and its results' sends. */
struct dyn_wslot {
    int64_t hdr[2];
    char *in, *res;
    MPI_Request r[2], s[2];
    double sent_at;
};

static int post_chunk_recv(struct dyn_wslot *sl, int64_t in_bytes)
{
    MPI_Comm w = wb_comm_world();
    int rc = wb_comm_check(MPI_Irecv(sl->hdr, 2, MPI_INT64_T, 0, WB_FFTB_TAG_CHUNK, w, &sl->r[0]),
                           "MPI_Irecv of a chunk header");
    return rc ? rc : wb_comm_check(MPI_Irecv(sl->in, (int)in_bytes, MPI_BYTE, 0, WB_FFTB_TAG_DATA, w, &sl->r[1]),
                                   "MPI_Irecv of samples");
}

/* Worker: wait until slot's results have left, noting when. */
static int wait_sent(struct wb_fftb_ctx *c, struct dyn_wslot *sl, int64_t chunk)
{
    if (sl->s[0] == MPI_REQUEST_NULL && sl->s[1] == MPI_REQUEST_NULL)
        return 0;
    int rc = wb_comm_check(MPI_Waitall(2, sl->s, MPI_STATUSES_IGNORE), "MPI_Waitall for a result send");
    wb_fftb_clock_event(c, chunk, WB_FFTB_EV_SEND, sl->sent_at, wb_timer_now_s());
    return rc;
}

/* Worker, dynamic schedule: two chunks' receives always posted, so the next chunk arrives while this
 * one is transformed. One whose transform fails still answers every chunk, so the root never waits. */
static int dynamic_worker(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, struct dyn_wslot *sl,
                          int64_t in_bytes, struct wb_fftb_timing *t, struct wb_fftb_measured *m)
{
    MPI_Comm w = wb_comm_world();
    int rc = 0, mrc = 0;
    for (int i = 0; mrc == 0 && i < DYN_INFLIGHT; i++)
        mrc = post_chunk_recv(&sl[i], in_bytes);
    double prev = c->pipe.t0_s;
    for (int64_t k = 0; mrc == 0; k++) {
        struct dyn_wslot *s = &sl[k % DYN_INFLIGHT];
        mrc = wb_comm_check(MPI_Wait(&s->r[0], MPI_STATUS_IGNORE), "MPI_Wait for a chunk header");
        if (mrc || s->hdr[1] == 0)
            break;
        mrc = wb_comm_check(MPI_Wait(&s->r[1], MPI_STATUS_IGNORE), "MPI_Wait for samples");
        double t1 = wb_timer_now_s(), tf = 0;
        wb_fftb_clock_event(c, s->hdr[0] / c->pipe.chunk, WB_FFTB_EV_RECV, prev, t1);
        prev = t1;
        t->t_dist_s = t1 - c->pipe.t0_s;
        int64_t a = s->hdr[0], e = a + s->hdr[1], st = wb_fftb_region_start(l, a);
        int64_t span = wb_fftb_result_span(l, a, e);
        mrc = mrc ? mrc : wait_sent(c, s, a / c->pipe.chunk);
        if (rc == 0 && mrc == 0)
            rc = wb_fftb_compute_units(c, l, a, e, s->in, st, s->res, &tf);
        double t2 = wb_timer_now_s();
        t->t_comp_s += t2 - t1;
        t->t_fft_s += tf;
        c->pipe.t_ready_s = t2 - c->pipe.t0_s;
        wb_fftb_clock_event(c, a / c->pipe.chunk, WB_FFTB_EV_COMPUTE, t1, t2);
        m->units += s->hdr[1];
        m->bytes_out += span;
        m->bytes_in += (wb_fftb_region_end(l, e) - st) * (int64_t)c->sb;
        s->sent_at = t2;
        /* The root knows which chunk this is: results come back in the order the chunks went out. */
        mrc = mrc ? mrc : wb_comm_check(MPI_Isend(s->res, rc ? 0 : (int)span, MPI_BYTE, 0, WB_FFTB_TAG_RESULT, w,
                                                  &s->s[1]), "MPI_Isend of a result");
        mrc = mrc ? mrc : post_chunk_recv(s, in_bytes);
    }
    /* After the stop, no message comes for the receives still posted. */
    for (int i = 0; i < DYN_INFLIGHT; i++)
        for (int j = 0; j < 2; j++)
            if (sl[i].r[j] != MPI_REQUEST_NULL) {
                MPI_Cancel(&sl[i].r[j]);
                MPI_Wait(&sl[i].r[j], MPI_STATUS_IGNORE);
            }
    for (int i = 0; mrc == 0 && i < DYN_INFLIGHT; i++)
        mrc = wait_sent(c, &sl[i], -1);
    return rc ? rc : mrc;
}

/* The largest samples and results of any dynamic chunk, in bytes. */
static void chunk_maxima(const struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, int64_t *in, int64_t *res)
{
    int64_t ch = c->pipe.chunk;
    *in = *res = 1;
    for (int64_t u = 0; u < l->nunits; u += ch) {
        int64_t e = u + ch < l->nunits ? u + ch : l->nunits;
        int64_t s = (wb_fftb_region_end(l, e) - wb_fftb_region_start(l, u)) * (int64_t)c->sb;
        int64_t r = wb_fftb_result_span(l, u, e);
        *in = s > *in ? s : *in;
        *res = r > *res ? r : *res;
    }
}

int wb_fftb_run_dynamic(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const struct wb_fftb_request *rq,
                        const struct wb_comm_shm *inb, const struct wb_comm_shm *resb, char **inbuf,
                        int64_t *inbuf_cap, struct wb_fftb_timing *t, struct wb_fftb_measured *m)
{
    /* Samples and results travel as messages: the root's shared windows are not used. */
    char *results = resb->ptr;
    /* The driver cleared t and set the root's t_read: only the counts start again here. */
    m->units = m->bytes_in = m->bytes_out = 0;
    int64_t in_max = 0, res_max = 0;
    int rc = wb_fftb_clock_start(c);
    rc = rc ? rc : wb_fftb_chunk_choose(c, l, &c->pipe.chunk);
    if (rc == 0)
        chunk_maxima(c, l, &in_max, &res_max);
    if (rc == 0 && (in_max > INT_MAX || res_max > INT_MAX))
        rc = wb_error_set(WB_ENOMEM, "a chunk of %lld units is more than one MPI call addresses; give a smaller "
                                     "--chunk", (long long)c->pipe.chunk);
    struct dyn_wslot sl[DYN_INFLIGHT];
    struct dyn_root d = {0};
    char *res = NULL;
    if (rc == 0 && c->rank != 0) {
        rc = wb_fftb_ensure_buf(inbuf, inbuf_cap, DYN_INFLIGHT * in_max);
        if (rc == 0 && !(res = wb_fft_alloc((size_t)(DYN_INFLIGHT * res_max))))
            rc = wb_error_set(WB_ENOMEM, "out of memory for results");
        for (int i = 0; rc == 0 && i < DYN_INFLIGHT; i++)
            sl[i] = (struct dyn_wslot){{0, 0}, *inbuf + i * in_max, res + i * res_max,
                                       {MPI_REQUEST_NULL, MPI_REQUEST_NULL}, {MPI_REQUEST_NULL, MPI_REQUEST_NULL}, 0};
    } else if (rc == 0) {
        size_t n = (size_t)c->nranks * DYN_SLOTS;
        d.slot = malloc(n * sizeof *d.slot);
        d.res = malloc(n * sizeof *d.res);
        d.idx = malloc(n * sizeof *d.idx);
        d.sent = calloc((size_t)c->nranks, sizeof *d.sent);
        d.inflight = calloc((size_t)c->nranks, sizeof *d.inflight);
        if (!d.slot || !d.res || !d.idx || !d.sent || !d.inflight)
            rc = wb_error_set(WB_ENOMEM, "out of memory");
        for (size_t i = 0; rc == 0 && i < n; i++)
            d.slot[i].r[0] = d.slot[i].r[1] = d.res[i] = MPI_REQUEST_NULL;
    }
    rc = wb_comm_agree(rc);
    c->pipe.t0_s = wb_timer_now_s();
    if (rc == 0)
        rc = c->rank == 0 ? dynamic_root(c, l, rq, results, &d, t, m) : dynamic_worker(c, l, sl, in_max, t, m);
    c->pipe.res = results;
    c->pipe.res_bytes = l->res_total;
    free(d.slot), free(d.res), free(d.idx), free(d.sent), free(d.inflight);
    wb_fft_free(res);
    return rc;
}
