#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "bench_fft_int.h"
#include "comm.h"
#include "error.h"
#include "fft.h"
#include "options_fft.h"
#include "timer.h"

/* This rank's input buffer, grown to at least nbytes and kept across repetitions. */
static int ensure_inbuf(char **inbuf, int64_t *cap, int64_t nbytes)
{
    if (nbytes <= *cap)
        return 0;
    wb_fft_free(*inbuf);
    *inbuf = wb_fft_alloc((size_t)nbytes);
    *cap = *inbuf ? nbytes : 0;
    return *inbuf ? 0 : wb_error_set(WB_ENOMEM, "out of memory for %lld bytes of samples", (long long)nbytes);
}

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

/* Whether rank q maps the root's buffers (and so gets no copies). */
static int mapped(const struct wb_fftb_ctx *c, int q) { return c->shm.mapped && c->shm.mapped[q]; }

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
        if (mapped(c, q))
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
        if (e > m && !mapped(c, q))
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

int wb_fftb_run_static(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const struct wb_fftb_request *rq,
                       const struct wb_comm_shm *inb, const struct wb_comm_shm *resb, char **inbuf,
                       int64_t *inbuf_cap, struct wb_fftb_timing *t, struct wb_fftb_measured *m)
{
    struct static_mine me;
    wb_fftb_block(l->nunits, c->nranks, c->first_compute, c->rank, &me.u0, &me.u1);
    wb_fftb_region(l, rq->total_samples, c->nranks, c->first_compute, c->rank, &me.start, &me.main_end, &me.end);
    me.in_place = c->rank == 0 || mapped(c, c->rank);
    m->units = me.u1 - me.u0;
    m->bytes_in = (me.end - me.start) * (int64_t)c->sb;
    int rc = me.in_place ? 0 : ensure_inbuf(inbuf, inbuf_cap, m->bytes_in);
    int64_t res_bytes = wb_fftb_result_span(l, me.u0, me.u1);
    m->bytes_out = res_bytes;
    char *myres = me.in_place ? resb->ptr + (me.u1 > me.u0 ? l->units[me.u0].res_off : 0)
                              : wb_fft_alloc((size_t)res_bytes);
    if (!myres)
        rc = wb_error_set(WB_ENOMEM, "out of memory for %lld bytes of results", (long long)res_bytes);
    struct static_plan sp = {0};
    if (c->rank == 0 && !c->baseline && rc == 0)
        rc = plan_static(c, l, rq, &sp);
    rc = wb_comm_agree(rc);
    /* The baseline times its work without any MPI call. */
    double t0 = wb_timer_now_s();
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
    t->t_gather_s = t3 - t2;
    if (!me.in_place)
        wb_fft_free(myres);
    plan_free(&sp);
    return rc;
}

/* Root, dynamic schedule: send a chunk of units starting at *next to rank q (count 0 = stop). */
static int send_chunk(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const struct wb_fftb_request *rq, int q,
                      int64_t *next)
{
    MPI_Comm w = wb_comm_world();
    int64_t count = l->nunits - *next < c->f->chunk ? l->nunits - *next : c->f->chunk;
    int64_t hdr[2] = {*next, count};
    int rc = wb_comm_check(MPI_Send(hdr, 2, MPI_INT64_T, q, WB_FFTB_TAG_CHUNK, w), "MPI_Send of a chunk header");
    if (rc == 0 && count > 0) {
        int64_t s = wb_fftb_region_start(l, *next), e = wb_fftb_region_end(l, *next + count);
        rc = wb_comm_check(MPI_Send(rq->buf + (size_t)s * c->sb, (int)((e - s) * (int64_t)c->sb), MPI_BYTE, q,
                                    WB_FFTB_TAG_DATA, w),
                           "MPI_Send of samples");
        *next += count;
    }
    return rc;
}

/* Root, dynamic schedule: units [u0, u1) on the root itself, from its own buffer. */
static int root_chunk(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const struct wb_fftb_request *rq,
                      char *results, int64_t u0, int64_t u1, struct wb_fftb_timing *t, struct wb_fftb_measured *m)
{
    double t1 = wb_timer_now_s(), tf = 0;
    int rc = wb_fftb_compute_units(c, l, u0, u1, rq->buf, 0, results + l->units[u0].res_off, &tf);
    t->t_comp_s += wb_timer_now_s() - t1;
    t->t_fft_s += tf;
    m->units += u1 - u0;
    m->bytes_out += wb_fftb_result_span(l, u0, u1);
    m->bytes_in += (wb_fftb_region_end(l, u1) - wb_fftb_region_start(l, u0)) * (int64_t)c->sb;
    return rc;
}

/* Root, dynamic schedule: hand out chunks as workers finish them, computing itself when it may. */
static int dynamic_root(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const struct wb_fftb_request *rq,
                        char *results, struct wb_fftb_timing *t, struct wb_fftb_measured *m)
{
    MPI_Comm w = wb_comm_world();
    int64_t next = 0, chunk = c->f->chunk;
    int active = 0, rc = 0;
    /* Prime every worker with a chunk, or a stop when there is nothing left. */
    for (int q = 1; q < c->nranks && rc == 0; q++) {
        double t0 = wb_timer_now_s();
        int had = next < l->nunits;
        rc = send_chunk(c, l, rq, q, &next);
        active += had;
        t->t_dist_s += wb_timer_now_s() - t0;
    }
    while (rc == 0 && (active > 0 || next < l->nunits)) {
        int pending = 0;
        if (active > 0)
            rc = wb_comm_check(MPI_Iprobe(MPI_ANY_SOURCE, WB_FFTB_TAG_RESULT, w, &pending, MPI_STATUS_IGNORE),
                               "MPI_Iprobe");
        if (rc == 0 && !pending && next < l->nunits && (c->f->root_computes || active == 0)) {
            int64_t e = next + chunk < l->nunits ? next + chunk : l->nunits;
            rc = root_chunk(c, l, rq, results, next, e, t, m);
            next = e;
            continue;
        }
        if (rc || active == 0)
            continue;
        MPI_Status st;
        int64_t hdr[2];
        double t0 = wb_timer_now_s();
        rc = wb_comm_check(MPI_Recv(hdr, 2, MPI_INT64_T, MPI_ANY_SOURCE, WB_FFTB_TAG_RESULT, w, &st),
                           "MPI_Recv of a result");
        if (rc == 0)
            rc = wb_comm_check(MPI_Recv(results + l->units[hdr[0]].res_off,
                                        (int)wb_fftb_result_span(l, hdr[0], hdr[0] + hdr[1]), MPI_BYTE, st.MPI_SOURCE,
                                        WB_FFTB_TAG_DATA, w, MPI_STATUS_IGNORE),
                               "MPI_Recv of a result");
        t->t_gather_s += wb_timer_now_s() - t0;
        t0 = wb_timer_now_s();
        int had = next < l->nunits;
        if (rc == 0)
            rc = send_chunk(c, l, rq, st.MPI_SOURCE, &next);
        active -= !had;
        t->t_dist_s += wb_timer_now_s() - t0;
    }
    return rc;
}

/* Worker, dynamic schedule. One whose transform fails still answers every chunk, so the root is never
 * left waiting. */
static int dynamic_worker(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, char *inbuf, char *res,
                          struct wb_fftb_timing *t, struct wb_fftb_measured *m)
{
    MPI_Comm w = wb_comm_world();
    int rc = 0;
    for (;;) {
        int64_t hdr[2];
        double t0 = wb_timer_now_s();
        int mrc = wb_comm_check(MPI_Recv(hdr, 2, MPI_INT64_T, 0, WB_FFTB_TAG_CHUNK, w, MPI_STATUS_IGNORE),
                                "MPI_Recv of a chunk");
        if (mrc || hdr[1] == 0) {
            t->t_dist_s += wb_timer_now_s() - t0;
            return rc ? rc : mrc;
        }
        int64_t e = hdr[0] + hdr[1], s = wb_fftb_region_start(l, hdr[0]);
        int64_t bytes = (wb_fftb_region_end(l, e) - s) * (int64_t)c->sb, span = wb_fftb_result_span(l, hdr[0], e);
        mrc = wb_comm_check(MPI_Recv(inbuf, (int)bytes, MPI_BYTE, 0, WB_FFTB_TAG_DATA, w, MPI_STATUS_IGNORE),
                            "MPI_Recv of samples");
        double t1 = wb_timer_now_s(), tf = 0;
        t->t_dist_s += t1 - t0;
        if (rc == 0 && mrc == 0)
            rc = wb_fftb_compute_units(c, l, hdr[0], e, inbuf, s, res, &tf);
        double t2 = wb_timer_now_s();
        t->t_comp_s += t2 - t1;
        t->t_fft_s += tf;
        m->units += hdr[1];
        m->bytes_out += span;
        m->bytes_in += bytes;
        mrc = mrc ? mrc : wb_comm_check(MPI_Send(hdr, 2, MPI_INT64_T, 0, WB_FFTB_TAG_RESULT, w), "MPI_Send of a result");
        mrc = mrc ? mrc : wb_comm_check(MPI_Send(res, rc ? 0 : (int)span, MPI_BYTE, 0, WB_FFTB_TAG_DATA, w),
                                        "MPI_Send of a result");
        t->t_gather_s += wb_timer_now_s() - t2;
        if (mrc)
            return rc ? rc : mrc;
    }
}

int wb_fftb_run_dynamic(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const struct wb_fftb_request *rq,
                        char *results, char **inbuf, int64_t *inbuf_cap, struct wb_fftb_timing *t,
                        struct wb_fftb_measured *m)
{
    int64_t chunk = c->f->chunk, max_samples = 0, max_res = 0;
    for (int64_t u = 0; u < l->nunits; u += chunk) {
        int64_t e = u + chunk < l->nunits ? u + chunk : l->nunits;
        int64_t s = wb_fftb_region_end(l, e) - wb_fftb_region_start(l, u), r = wb_fftb_result_span(l, u, e);
        max_samples = s > max_samples ? s : max_samples;
        max_res = r > max_res ? r : max_res;
    }
    m->units = m->bytes_in = m->bytes_out = 0;
    memset(t, 0, sizeof *t);
    char *res = NULL;
    int rc = c->rank == 0 ? 0 : ensure_inbuf(inbuf, inbuf_cap, max_samples * (int64_t)c->sb);
    if (rc == 0 && c->rank != 0 && !(res = wb_fft_alloc((size_t)(max_res ? max_res : 1))))
        rc = wb_error_set(WB_ENOMEM, "out of memory for results");
    rc = wb_comm_agree(rc);
    if (rc == 0)
        rc = c->rank == 0 ? dynamic_root(c, l, rq, results, t, m) : dynamic_worker(c, l, *inbuf, res, t, m);
    wb_fft_free(res);
    return rc;
}
