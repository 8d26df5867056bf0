/* The pipelined static schedule: the same blocks as phased, but sent in chunks, transformed as they
 * arrive and returned at once, so samples flow out of the head node while results flow in. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/fft/bench_fft_int.h"
#include "par/comm.h"
#include "core/error.h"
#include "fftw/fft.h"
#include "bench/fft/options_fft.h"
#include "core/timer.h"

/* A rank's block split in chunks of ch units, after a ramp of 1, 2, 4, ... units (the powers of two
 * below ch): the first results leave after one unit's samples have arrived, not a whole chunk's, so
 * the pipeline fills in a fraction of a chunk's link time. Chunk k is units [*a, *b). */
static int ramp_len(int64_t ch)
{
    int r = 0;
    while (((int64_t)1 << r) < ch)
        r++;
    return r;
}

static int64_t nchunks(int64_t u0, int64_t u1, int64_t ch)
{
    int64_t len = u1 - u0, ramp = ((int64_t)1 << ramp_len(ch)) - 1;
    if (len <= 0)
        return 0;
    if (len > ramp)
        return ramp_len(ch) + (len - ramp + ch - 1) / ch;
    int64_t k = 0;
    while (((int64_t)1 << k) - 1 < len)
        k++;
    return k;
}

static void chunk_units(int64_t u0, int64_t u1, int64_t ch, int64_t k, int64_t *a, int64_t *b)
{
    int r = ramp_len(ch);
    int64_t size = k < r ? (int64_t)1 << k : ch;
    *a = u0 + (k < r ? ((int64_t)1 << k) - 1 : ((int64_t)1 << r) - 1 + (k - r) * ch);
    *b = *a + size < u1 ? *a + size : u1;
}

/* The samples chunk k brings: those its frames need that earlier chunks did not bring, [*s, *e). */
static void chunk_samples(const struct wb_fftb_layout *l, int64_t u0, int64_t u1, int64_t ch, int64_t k, int64_t *s,
                          int64_t *e)
{
    int64_t a, b;
    chunk_units(u0, u1, ch, k, &a, &b);
    *s = wb_fftb_region_start(l, a);
    *e = wb_fftb_region_end(l, b);
    if (k > 0 && wb_fftb_region_end(l, a) > *s)
        *s = wb_fftb_region_end(l, a);
}

/* Root: every result receive and sample send of the point, posted at once, and who each receive is from. */
struct root_reqs {
    MPI_Request *req;
    int *from;          /* rank whose result a request receives, or -1 for a send */
    int n, left;
    int *idx;
};

/* Root: post the receives of every result (and the done messages of mapped ranks), then the sends of
 * every chunk, chunk 0 of every rank first, so all ranks start early. */
static int root_post(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const struct wb_fftb_request *rq,
                     char *results, struct root_reqs *rr)
{
    MPI_Comm w = wb_comm_world();
    int64_t ch = c->pipe.chunk, most = 0, total = 0;
    for (int q = 1; q < c->nranks; q++) {
        int64_t u0, u1;
        wb_fftb_block(l->nunits, c->nranks, c->first_compute, q, &u0, &u1);
        int64_t k = wb_comm_shm_maps(&c->shm, q) ? 1 : 2 * nchunks(u0, u1, ch);
        total += k;
        most = nchunks(u0, u1, ch) > most ? nchunks(u0, u1, ch) : most;
    }
    rr->req = malloc((size_t)(total + 1) * sizeof *rr->req);
    rr->from = malloc((size_t)(total + 1) * sizeof *rr->from);
    rr->idx = malloc((size_t)(total + 1) * sizeof *rr->idx);
    if (!rr->req || !rr->from || !rr->idx)
        return wb_error_set(WB_ENOMEM, "out of memory for %lld requests", (long long)total);
    int rc = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int64_t k = 0; k < (pass ? most : most + 1); k++)
            for (int q = 1; rc == 0 && q < c->nranks; q++) {
                int64_t u0, u1, a, b, s, e;
                wb_fftb_block(l->nunits, c->nranks, c->first_compute, q, &u0, &u1);
                if (wb_comm_shm_maps(&c->shm, q)) {
                    if (pass == 0 && k == 0) {
                        rr->from[rr->n] = q;
                        rc = wb_comm_check(MPI_Irecv(NULL, 0, MPI_BYTE, q, WB_FFTB_TAG_RESULT, w, &rr->req[rr->n++]),
                                           "MPI_Irecv of a done message");
                    }
                    continue;
                }
                if (k >= nchunks(u0, u1, ch))
                    continue;
                chunk_units(u0, u1, ch, k, &a, &b);
                chunk_samples(l, u0, u1, ch, k, &s, &e);
                rr->from[rr->n] = pass ? -1 : q;
                rc = pass ? wb_comm_check(MPI_Isend(rq->buf + (size_t)s * c->sb, (int)((e - s) * (int64_t)c->sb),
                                                    MPI_BYTE, q, WB_FFTB_TAG_DATA, w, &rr->req[rr->n++]),
                                          "MPI_Isend of samples")
                          : wb_comm_check(MPI_Irecv(results + l->units[a].res_off, (int)wb_fftb_result_span(l, a, b),
                                                    MPI_BYTE, q, WB_FFTB_TAG_RESULT, w, &rr->req[rr->n++]),
                                          "MPI_Irecv of results");
            }
    rr->left = rr->n;
    return rc;
}

/* Root: take in what has completed (wait: at least one), noting when each rank's results arrived. */
static int root_progress(struct wb_fftb_ctx *c, struct root_reqs *rr, int wait)
{
    int done = 0;
    if (rr->left == 0)
        return 0;
    int rc = wait ? wb_comm_check(MPI_Waitsome(rr->n, rr->req, &done, rr->idx, MPI_STATUSES_IGNORE), "MPI_Waitsome")
                  : wb_comm_check(MPI_Testsome(rr->n, rr->req, &done, rr->idx, MPI_STATUSES_IGNORE), "MPI_Testsome");
    if (rc || done == MPI_UNDEFINED)
        return rc;
    double now = wb_timer_now_s() - c->pipe.t0_s;
    for (int i = 0; i < done; i++)
        if (rr->from[rr->idx[i]] >= 0)
            c->pipe.t_held_s[rr->from[rr->idx[i]]] = now;
    rr->left -= done;
    return 0;
}

/* Chunk k, units [a, b), transformed in place in the root's buffers (the root, and ranks that map
 * them), its time added to t and recorded as a compute event. */
static int compute_chunk(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const struct wb_fftb_request *rq,
                         const struct wb_comm_shm *resb, int64_t k, int64_t a, int64_t b, struct wb_fftb_timing *t)
{
    double t1 = wb_timer_now_s(), tf = 0;
    int rc = wb_fftb_compute_units(c, l, a, b, rq->buf, 0, resb->ptr + l->units[a].res_off, &tf);
    double t2 = wb_timer_now_s();
    t->t_comp_s += t2 - t1;
    t->t_fft_s += tf;
    c->pipe.t_ready_s = t2 - c->pipe.t0_s;
    wb_fftb_clock_event(c, k, WB_FFTB_EV_COMPUTE, t1, t2);
    return rc;
}

/* Root: its own block in chunks, in place, taking results in between; then every result. */
static int root_run(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const struct wb_fftb_request *rq,
                    const struct wb_comm_shm *resb, struct wb_fftb_timing *t)
{
    struct root_reqs rr = {0};
    int64_t u0, u1, ch = c->pipe.chunk;
    int rc = c->nranks > 1 ? root_post(c, l, rq, resb->ptr, &rr) : 0;
    wb_fftb_block(l->nunits, c->nranks, c->first_compute, 0, &u0, &u1);
    /* The root's samples are in place: its distribution is the setting up of every message. */
    t->t_dist_s = wb_timer_now_s() - c->pipe.t0_s;
    for (int64_t k = 0; rc == 0 && k < nchunks(u0, u1, ch); k++) {
        int64_t a, b;
        chunk_units(u0, u1, ch, k, &a, &b);
        rc = compute_chunk(c, l, rq, resb, k, a, b, t);
        if (rc == 0)
            rc = root_progress(c, &rr, 0);
    }
    /* A failed transform still takes every message in, so no rank is left waiting. */
    while (rr.req && rr.left > 0) {
        int prc = root_progress(c, &rr, 1);
        if (prc) {
            rc = rc ? rc : prc;
            break;
        }
    }
    double held = c->pipe.t_ready_s;
    for (int q = 1; q < c->nranks; q++)
        held = fmax(held, c->pipe.t_held_s[q]);
    c->pipe.t_held_s[0] = held;
    free(rr.req), free(rr.from), free(rr.idx);
    int src = c->use_shm ? wb_comm_shm_sync(resb) : 0;
    return rc ? rc : src;
}

/* Worker: note the result sends [*open, posted) that have left, in order (wait: all of them). */
static int sends_done(struct wb_fftb_ctx *c, MPI_Request *sends, const double *posted_at, int64_t posted,
                      int64_t *open, int wait)
{
    while (*open < posted) {
        int flag = 1;
        int rc = wait ? wb_comm_check(MPI_Wait(&sends[*open], MPI_STATUS_IGNORE), "MPI_Wait for a result send")
                      : wb_comm_check(MPI_Test(&sends[*open], &flag, MPI_STATUS_IGNORE), "MPI_Test of a result send");
        if (rc || !flag)
            return rc;
        wb_fftb_clock_event(c, *open, WB_FFTB_EV_SEND, posted_at[*open], wb_timer_now_s());
        ++*open;
    }
    return 0;
}

/* A rank that gets its samples by message: every chunk's receive posted at once, each chunk transformed
 * as soon as it is in and its results sent straight away. */
static int worker_run(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, int64_t u0, int64_t u1, char *inbuf,
                      char *myres, struct wb_fftb_timing *t)
{
    MPI_Comm w = wb_comm_world();
    int64_t ch = c->pipe.chunk, n = nchunks(u0, u1, ch), base = wb_fftb_region_start(l, u0);
    MPI_Request *rq = malloc((size_t)(2 * n + 1) * sizeof *rq);
    double *posted = malloc((size_t)(n + 1) * sizeof *posted);
    int rc = rq && posted ? 0 : wb_error_set(WB_ENOMEM, "out of memory for %lld requests", (long long)n);
    for (int64_t k = 0; rc == 0 && k < n; k++) {
        int64_t s, e;
        chunk_samples(l, u0, u1, ch, k, &s, &e);
        rq[n + k] = MPI_REQUEST_NULL;
        rc = wb_comm_check(MPI_Irecv(inbuf + (size_t)(s - base) * c->sb, (int)((e - s) * (int64_t)c->sb), MPI_BYTE, 0,
                                     WB_FFTB_TAG_DATA, w, &rq[k]),
                           "MPI_Irecv of samples");
    }
    double prev = c->pipe.t0_s;
    int crc = 0;
    int64_t open = 0;
    for (int64_t k = 0; rc == 0 && k < n; k++) {
        int64_t a, b;
        chunk_units(u0, u1, ch, k, &a, &b);
        rc = wb_comm_check(MPI_Wait(&rq[k], MPI_STATUS_IGNORE), "MPI_Wait for samples");
        double t1 = wb_timer_now_s(), tf = 0;
        wb_fftb_clock_event(c, k, WB_FFTB_EV_RECV, prev, t1);
        prev = t1;
        t->t_dist_s = t1 - c->pipe.t0_s;
        char *dst = myres + (l->units[a].res_off - l->units[u0].res_off);
        if (rc == 0 && crc == 0)
            crc = wb_fftb_compute_units(c, l, a, b, inbuf, base, dst, &tf);
        double t2 = wb_timer_now_s();
        t->t_comp_s += t2 - t1;
        t->t_fft_s += tf;
        c->pipe.t_ready_s = t2 - c->pipe.t0_s;
        wb_fftb_clock_event(c, k, WB_FFTB_EV_COMPUTE, t1, t2);
        posted[k] = t2;
        if (rc == 0)
            rc = wb_comm_check(MPI_Isend(dst, crc ? 0 : (int)wb_fftb_result_span(l, a, b), MPI_BYTE, 0,
                                         WB_FFTB_TAG_RESULT, w, &rq[n + k]),
                               "MPI_Isend of results");
        rc = rc ? rc : sends_done(c, rq + n, posted, k + 1, &open, 0);
    }
    rc = rc ? rc : sends_done(c, rq + n, posted, n, &open, 1);
    free(rq);
    free(posted);
    return rc ? rc : crc;
}

/* A rank on the head node that maps its buffers: no samples to wait for; its results are in place,
 * and one empty message tells the root they are done. */
static int mapped_run(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const struct wb_fftb_request *rq,
                      const struct wb_comm_shm *inb, const struct wb_comm_shm *resb, int64_t u0, int64_t u1,
                      struct wb_fftb_timing *t)
{
    int rc = wb_comm_shm_sync(inb), crc = 0;
    int64_t ch = c->pipe.chunk;
    for (int64_t k = 0; rc == 0 && crc == 0 && k < nchunks(u0, u1, ch); k++) {
        int64_t a, b;
        chunk_units(u0, u1, ch, k, &a, &b);
        crc = compute_chunk(c, l, rq, resb, k, a, b, t);
    }
    rc = rc ? rc : wb_comm_shm_sync(resb);
    int mrc = wb_comm_check(MPI_Send(NULL, 0, MPI_BYTE, 0, WB_FFTB_TAG_RESULT, wb_comm_world()), "MPI_Send of done");
    return rc ? rc : crc ? crc : mrc;
}

/* Every chunk message must fit one MPI call's int count. Local, the same answer on every rank. */
static int check_sizes(const struct wb_fftb_ctx *c, const struct wb_fftb_layout *l)
{
    int64_t ch = c->pipe.chunk;
    for (int q = c->first_compute; q < c->nranks; q++) {
        int64_t u0, u1;
        wb_fftb_block(l->nunits, c->nranks, c->first_compute, q, &u0, &u1);
        for (int64_t k = 0; k < nchunks(u0, u1, ch); k++) {
            int64_t a, b, s, e;
            chunk_units(u0, u1, ch, k, &a, &b);
            chunk_samples(l, u0, u1, ch, k, &s, &e);
            if ((e - s) * (int64_t)c->sb > INT_MAX || wb_fftb_result_span(l, a, b) > INT_MAX)
                return wb_error_set(WB_ENOMEM, "a chunk of %lld units is more than one MPI call addresses; give a "
                                               "smaller --chunk", (long long)ch);
        }
    }
    return 0;
}

int wb_fftb_run_pipelined(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const struct wb_fftb_request *rq,
                          const struct wb_comm_shm *inb, const struct wb_comm_shm *resb, char **inbuf,
                          int64_t *inbuf_cap, struct wb_fftb_timing *t, struct wb_fftb_measured *m)
{
    int64_t u0, u1, s, me, e;
    wb_fftb_block(l->nunits, c->nranks, c->first_compute, c->rank, &u0, &u1);
    wb_fftb_region(l, rq->total_samples, c->nranks, c->first_compute, c->rank, &s, &me, &e);
    int in_place = c->rank == 0 || wb_comm_shm_maps(&c->shm, c->rank);
    m->units = u1 - u0;
    m->bytes_in = u1 > u0 ? (e - s) * (int64_t)c->sb : 0;
    m->bytes_out = wb_fftb_result_span(l, u0, u1);
    int rc = wb_fftb_clock_start(c);
    rc = rc ? rc : wb_fftb_chunk_choose(c, l, &c->pipe.chunk);
    rc = rc ? rc : check_sizes(c, l);
    if (rc == 0 && !in_place)
        rc = wb_fftb_ensure_buf(inbuf, inbuf_cap, m->bytes_in ? m->bytes_in : 1);
    char *myres = in_place ? NULL : wb_fft_alloc((size_t)(m->bytes_out ? m->bytes_out : 1));
    if (rc == 0 && !in_place && !myres)
        rc = wb_error_set(WB_ENOMEM, "out of memory for %lld bytes of results", (long long)m->bytes_out);
    rc = wb_comm_agree(rc);
    if (rc == 0)
        rc = c->rank == 0        ? root_run(c, l, rq, resb, t)
             : in_place          ? mapped_run(c, l, rq, inb, resb, u0, u1, t)
                                 : worker_run(c, l, u0, u1, *inbuf, myres, t);
    c->in_base = in_place ? rq->buf : *inbuf;
    c->in_base_off = in_place ? 0 : s;
    c->pipe.res = resb->ptr;
    c->pipe.res_bytes = l->res_total;
    wb_fft_free(myres);
    return rc;
}

