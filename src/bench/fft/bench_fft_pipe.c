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
#include "fftw/fft_wisdom.h"
#include "bench/fft/options_fft.h"
#include "core/report.h"
#include "io/results.h"
#include "core/timer.h"

/* The line rate assumed when --link-rate is not given: 100 Mbit/s, a Raspberry Pi 3's port. */
#define ASSUMED_RATE_BPS 12.5e6
/* Seconds of the link one chunk should take: long enough that a message's overhead is small, short
 * enough that the first chunk arrives soon and the last leaves little to do after the link is idle. */
#define CHUNK_LINK_S 0.002
/* A timeline keeps at most this many events over all ranks. */
#define TIMELINE_MAX 4096

int wb_fftb_chunk_choose(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, int64_t *chunk)
{
    int workers = c->nranks - c->first_compute;
    int64_t biggest = (l->nunits + workers - 1) / workers, smallest = l->nunits / workers;
    const char *what = c->f->mode == WB_MODE_STFT ? "frames" : "files";
    if (c->f->chunk > 0 && c->f->chunk > biggest && l->nunits > 0)
        return wb_error_set(WB_EUSAGE, "--chunk %lld is larger than a rank's block (%lld %s of %lld on %d computing "
                                       "rank%s); give --chunk %lld or less, or leave it out",
                            (long long)c->f->chunk, (long long)biggest, what, (long long)l->nunits, workers,
                            workers > 1 ? "s" : "", (long long)(biggest ? biggest : 1));
    if (c->f->chunk > 0) {
        *chunk = c->f->chunk;
        return 0;
    }
    double rate = isfinite(c->f->link_rate_Bps) ? c->f->link_rate_Bps : ASSUMED_RATE_BPS;
    int64_t samples = l->nunits ? wb_fftb_region_end(l, l->nunits) - wb_fftb_region_start(l, 0) : 0;
    double unit_bytes = l->nunits ? (double)samples * (double)c->sb / (double)l->nunits : 1.0;
    int64_t k = (int64_t)(rate * CHUNK_LINK_S / fmax(unit_bytes, 1.0));
    int64_t cap = smallest / 4;
    k = k < cap ? k : cap;
    *chunk = k > 1 ? k : 1;
    return 0;
}

int wb_fftb_ensure_buf(char **buf, int64_t *cap, int64_t nbytes)
{
    if (nbytes <= *cap)
        return 0;
    wb_fft_free(*buf);
    *buf = wb_fft_alloc((size_t)nbytes);
    *cap = *buf ? nbytes : 0;
    return *buf ? 0 : wb_error_set(WB_ENOMEM, "out of memory for %lld bytes", (long long)nbytes);
}

int wb_fftb_pipe_start(struct wb_fftb_ctx *c)
{
    struct wb_fftb_pipe *p = &c->pipe;
    p->t0_s = wb_timer_now_s();
    p->t_ready_s = 0;
    p->nev = 0;
    if (!p->ev) {
        int per = TIMELINE_MAX / c->nranks;
        p->ev_cap = per > 16 ? per : 16;
        p->ev = malloc((size_t)p->ev_cap * sizeof *p->ev);
    }
    if (c->rank == 0 && !p->t_held_s)
        p->t_held_s = calloc((size_t)c->nranks, sizeof *p->t_held_s);
    if (c->rank == 0 && p->t_held_s)
        memset(p->t_held_s, 0, (size_t)c->nranks * sizeof *p->t_held_s);
    if (!p->ev || (c->rank == 0 && !p->t_held_s))
        return wb_error_set(WB_ENOMEM, "out of memory for the timeline");
    return 0;
}

void wb_fftb_pipe_event(struct wb_fftb_ctx *c, int64_t chunk, int phase, double a, double b)
{
    struct wb_fftb_pipe *p = &c->pipe;
    if (p->nev < p->ev_cap)
        p->ev[p->nev++] = (struct wb_fftb_event){(int32_t)chunk, phase, a - p->t0_s, b - p->t0_s};
}

/* A rank's block split in chunks of ch units: chunk k is units [*a, *b). */
static int64_t nchunks(int64_t u0, int64_t u1, int64_t ch) { return u1 > u0 ? (u1 - u0 + ch - 1) / ch : 0; }

static void chunk_units(int64_t u0, int64_t u1, int64_t ch, int64_t k, int64_t *a, int64_t *b)
{
    *a = u0 + k * ch;
    *b = *a + ch < u1 ? *a + ch : u1;
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
    wb_fftb_pipe_event(c, k, WB_FFTB_EV_COMPUTE, t1, t2);
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
        wb_fftb_pipe_event(c, *open, WB_FFTB_EV_SEND, posted_at[*open], wb_timer_now_s());
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
        wb_fftb_pipe_event(c, k, WB_FFTB_EV_RECV, prev, t1);
        prev = t1;
        t->t_dist_s = t1 - c->pipe.t0_s;
        char *dst = myres + (l->units[a].res_off - l->units[u0].res_off);
        if (rc == 0 && crc == 0)
            crc = wb_fftb_compute_units(c, l, a, b, inbuf, base, dst, &tf);
        double t2 = wb_timer_now_s();
        t->t_comp_s += t2 - t1;
        t->t_fft_s += tf;
        c->pipe.t_ready_s = t2 - c->pipe.t0_s;
        wb_fftb_pipe_event(c, k, WB_FFTB_EV_COMPUTE, t1, t2);
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
    int rc = wb_fftb_pipe_start(c);
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

int wb_fftb_sched_finish(struct wb_fftb_ctx *c, struct wb_fftb_timing *t)
{
    double held = c->rank == 0 && c->pipe.t_held_s ? c->pipe.t_held_s[0] : 0;
    int rc = 0;
    if (c->nranks > 1)
        rc = wb_comm_check(MPI_Scatter(c->pipe.t_held_s, 1, MPI_DOUBLE, &held, 1, MPI_DOUBLE, 0, wb_comm_world()),
                           "MPI_Scatter of result times");
    /* A rank without transforms is ready when its distribution ends. */
    double ready = fmax(c->pipe.t_ready_s, t->t_dist_s);
    t->t_gather_s = fmax(0.0, held - ready);
    if (c->rank != 0 && held == 0)
        t->t_gather_s = 0;
    return rc;
}

void wb_fftb_sched_free(struct wb_fftb_ctx *c)
{
    free(c->pipe.ev);
    free(c->pipe.t_held_s);
    c->pipe.ev = NULL;
    c->pipe.t_held_s = NULL;
    c->pipe.nev = c->pipe.ev_cap = 0;
}

int wb_fftb_share_plans(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l)
{
    if (c->nranks == 1 || c->f->plan == WB_FFT_ESTIMATE || c->baseline)
        return 0;
    int rc = 0;
    for (int64_t u = 0; c->rank == 0 && rc == 0 && u < l->nunits; u++) {
        struct wb_fft_kernel *k;
        if (u == 0 || l->units[u].n != l->units[u - 1].n)
            rc = wb_fftb_kernel_for(c, l->units[u].n, &k);
    }
    rc = wb_comm_agree(rc);
    return rc ? rc : wb_fft_wisdom_share(NULL);
}

/* Bytes of one request that crossed the head node's link: samples out to ranks on other nodes, their
 * results in. Collective; the sums on rank 0. */
static int link_bytes(const struct wb_fftb_ctx *c, const struct wb_fftb_measured *m, int64_t *out, int64_t *in)
{
    const int *node = wb_comm_node_map(NULL);
    int away = node[c->rank] != node[0];
    int64_t o = away ? m->bytes_in : 0, i = away ? m->bytes_out : 0;
    int rc = wb_comm_sum_i64(o, out);
    return rc ? rc : wb_comm_sum_i64(i, in);
}

/* Root: the link attributes of group g, and the line the table prints under the point's row. */
static void write_link(struct wb_fftb_ctx *c, const char *g, const struct wb_fftb_measured *m, int64_t out,
                       int64_t in)
{
    double *tt = malloc((size_t)(m->reps ? m->reps : 1) * sizeof *tt), rate = c->f->link_rate_Bps;
    for (int r = 0; tt && r < m->reps; r++)
        tt[r] = m->tm[r].t_total_s;
    double med = tt ? wb_timer_median(tt, (size_t)m->reps) : NAN;
    free(tt);
    double bound = (double)(out > in ? out : in) / rate, use = bound / med;
    wb_results_attr_i64(c->res, g, "link_out_bytes", out);
    wb_results_attr_i64(c->res, g, "link_in_bytes", in);
    wb_results_attr_f64(c->res, g, "link_rate_Bps", rate);
    wb_results_attr_f64(c->res, g, "link_bound_s", bound);
    wb_results_attr_f64(c->res, g, "link_use", use);
    char *line = c->pipe.link_line;
    size_t cap = sizeof c->pipe.link_line;
    line[0] = '\0';
    if (c->rank != 0 || c->baseline)
        return;
    if (out == 0 && in == 0)
        snprintf(line, cap, "#      link: every rank is on the head node; nothing crossed its link\n");
    else if (isfinite(rate))
        snprintf(line, cap, "#      link use: %.1f%% of the full-duplex bound (out %.2f MB, in %.2f MB at %.2f MB/s: "
                 "%.3f s; t_total %.3f s)\n",
                 100.0 * use, (double)out / 1e6, (double)in / 1e6, rate / 1e6, bound, med);
    else
        snprintf(line, cap, "#      link: out %.2f MB, in %.2f MB per request; give --link-rate to see its use\n",
                 (double)out / 1e6, (double)in / 1e6);
}

/* Collective: every rank's events of the last repetition, as the timeline dataset of group g. */
static int write_timeline(struct wb_fftb_ctx *c, const char *g)
{
    struct wb_fftb_pipe *p = &c->pipe;
    int n = p->nev, *counts = NULL, *displs = NULL, total = 0;
    double *mine = malloc((size_t)(n ? n : 1) * 4 * sizeof *mine), *all = NULL;
    for (int i = 0; mine && i < n; i++) {
        mine[4 * i] = p->ev[i].chunk;
        mine[4 * i + 1] = p->ev[i].phase;
        mine[4 * i + 2] = p->ev[i].t_start_s;
        mine[4 * i + 3] = p->ev[i].t_end_s;
    }
    if (c->rank == 0) {
        counts = calloc((size_t)c->nranks, sizeof *counts);
        displs = calloc((size_t)c->nranks, sizeof *displs);
    }
    int rc = wb_comm_agree(mine && (c->rank != 0 || (counts && displs)) ? 0 : wb_error_set(WB_ENOMEM, "out of memory"));
    int n4 = 4 * n;
    rc = rc ? rc : wb_comm_check(MPI_Gather(&n4, 1, MPI_INT, counts, 1, MPI_INT, 0, wb_comm_world()), "MPI_Gather");
    for (int q = 0; rc == 0 && c->rank == 0 && q < c->nranks; q++) {
        displs[q] = total;
        total += counts[q];
    }
    if (rc == 0 && c->rank == 0 && !(all = malloc((size_t)(total ? total : 1) * sizeof *all)))
        rc = wb_error_set(WB_ENOMEM, "out of memory");
    rc = wb_comm_agree(rc);
    rc = rc ? rc : wb_comm_check(MPI_Gatherv(mine, n4, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, wb_comm_world()),
                                 "MPI_Gatherv of the timeline");
    struct wb_result_event *rows = c->rank == 0 && rc == 0 ? malloc((size_t)(total / 4 + 1) * sizeof *rows) : NULL;
    for (int q = 0; rows && q < c->nranks; q++)
        for (int i = 0; i < counts[q] / 4; i++) {
            const double *e = all + displs[q] + 4 * i;
            rows[displs[q] / 4 + i] = (struct wb_result_event){q, (int32_t)e[0], (uint8_t)e[1], e[2], e[3]};
        }
    char d[96];
    snprintf(d, sizeof d, "%s/timeline", g);
    int wrc = wb_results_write_timeline(c->res, d, rows, rows ? (size_t)total / 4 : 0);
    free(mine), free(all), free(counts), free(displs), free(rows);
    return rc ? rc : wrc;
}

#ifdef WB_TEST_FAULTS
/* Test-only: WB_DUMP_RESULTS=DIR makes the root write the results of a point's last repetition to
 * DIR/pNNN.bin, so tests can compare schedules byte for byte. */
static void dump_results(const struct wb_fftb_ctx *c, const char *g)
{
    const char *dir = getenv("WB_DUMP_RESULTS");
    if (!dir || c->rank != 0 || !c->pipe.res)
        return;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.bin", dir, strrchr(g, '/') + 1);
    FILE *fp = fopen(path, "wb");
    if (fp) {
        fwrite(c->pipe.res, 1, (size_t)c->pipe.res_bytes, fp);
        fclose(fp);
    }
}
#endif

int wb_fftb_write_pipe(struct wb_fftb_ctx *c, const char *g, const struct wb_fftb_measured *m)
{
    int64_t out = 0, in = 0;
    int rc = link_bytes(c, m, &out, &in);
    wb_results_attr_i64(c->res, g, "chunk_frames", c->f->schedule == WB_SCHED_PHASED || c->baseline ? 0 : c->pipe.chunk);
    if (rc == 0)
        write_link(c, g, m, out, in);
    int trc = write_timeline(c, g);
#ifdef WB_TEST_FAULTS
    dump_results(c, g);
#endif
    return rc ? rc : trc;
}
