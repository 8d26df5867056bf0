#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio.h"
#include "bench.h"
#include "comm.h"
#include "error.h"
#include "fft.h"
#include "options.h"
#include "report.h"
#include "results.h"
#include "timer.h"

enum { TAG_CHUNK = 101, TAG_DATA, TAG_RESULT };

/* One transform: where its samples start in the request buffer, how long it is, where its result goes. */
struct unit {
    int32_t file;
    int64_t off;
    int64_t n;
    int64_t res_off;
    int64_t res_bytes;
};

/* The work of one point, the same on every rank (built from the file lengths). */
struct layout {
    int nfiles;
    int64_t nunits;
    struct unit *units;
    int64_t res_total;
};

/* One request: its files, back to back in one buffer of samples in the transform's precision.
 * Ranks compute straight from (a copy of) this buffer, so nothing is packed before sending. */
struct request {
    int nfiles;
    int64_t *file_samples;        /* every rank */
    int64_t *file_off;            /* every rank: where each file starts in buf */
    int64_t total_samples;
    char *buf;                    /* root, and ranks that map it (--local shm) */
    struct wb_result_input *rows; /* root only */
    int64_t audio_bytes;
};

/* A point of the sweep: which files, and how long. */
struct point {
    const char *scenario;
    int nfiles;
    double seconds;               /* per file; 0 = as the inputs are */
};

/* Transforms of each length this rank has needed, kept across points and repetitions. */
struct kernels {
    int count;
    struct wb_fft_kernel *k[64];
    int64_t n[64];
};

struct ctx {
    const struct wb_options *o;
    const struct wb_fft_opts *f;
    struct wb_results *res;
    int rank, nranks, baseline;
    int first_compute;            /* ranks first_compute..nranks-1 compute */
    int input;                    /* enum wb_fft_input: how samples are stored and sent */
    size_t sb;                    /* bytes per stored sample */
    char **files;                 /* root: the usable input files */
    int nfiles_in;
    struct wb_audio *synth_cache; /* root: synthetic files by index */
    int synth_cached;
    double synth_seconds;
    struct kernels kern;
    double t_start;
    MPI_Comm node;                /* ranks sharing this rank's node */
    int root_local;               /* rank 0's rank in node, or -1 */
    int shm;                      /* ranks on the root's node map its buffers */
    int *mapped;                  /* every rank: 1 if rank q maps the root's buffers */
    int *done_flags;              /* root: one per rank, for the end-of-gather handshake */
    double flops;                 /* transform work compute_units has done since it was last zeroed */
    const char *in_base;          /* this rank's samples in the last repetition, from offset in_base_off */
    int64_t in_base_off;
};

/* A buffer rank 0 owns; with --local shm, ranks on its node map it through an MPI shared-memory
 * window, so their samples and results need no copy. */
struct rootbuf {
    char *ptr;
    MPI_Win win;
};

/* Collective: bytes on rank 0 (others pass the same value); maps it where it can. */
static int rootbuf_alloc(struct ctx *c, struct rootbuf *b, int64_t bytes)
{
    b->ptr = NULL;
    b->win = MPI_WIN_NULL;
    int rc = 0;
    if (!c->shm) {
        if (c->rank == 0 && !(b->ptr = wb_fft_alloc((size_t)bytes)))
            rc = wb_error_set(WB_ENOMEM, "out of memory for %lld bytes", (long long)bytes);
        return c->baseline ? rc : wb_comm_agree(rc);
    }
    char *mine = NULL;
    rc = wb_comm_check(MPI_Win_allocate_shared(c->rank == 0 ? (MPI_Aint)bytes : 0, 1, MPI_INFO_NULL, c->node, &mine,
                                               &b->win),
                       "MPI_Win_allocate_shared");
    if (rc == 0 && c->rank == 0)
        b->ptr = mine;
    if (rc == 0 && c->rank != 0 && c->mapped[c->rank]) {
        MPI_Aint size;
        int unit;
        rc = wb_comm_check(MPI_Win_shared_query(b->win, c->root_local, &size, &unit, &b->ptr), "MPI_Win_shared_query");
    }
    /* One passive epoch for the whole point; MPI_Win_sync orders the plain loads and stores. */
    if (rc == 0)
        rc = wb_comm_check(MPI_Win_lock_all(MPI_MODE_NOCHECK, b->win), "MPI_Win_lock_all");
    return wb_comm_agree(rc);
}

static void rootbuf_sync(const struct rootbuf *b)
{
    if (b->win != MPI_WIN_NULL)
        MPI_Win_sync(b->win);
}

static void rootbuf_free(struct rootbuf *b)
{
    if (b->win != MPI_WIN_NULL) {
        MPI_Win_unlock_all(b->win);
        MPI_Win_free(&b->win);
    } else {
        wb_fft_free(b->ptr);
    }
    b->ptr = NULL;
}

struct timing {
    double t_read, t_dist, t_comp, t_fft, t_gather, t_total;
};

static int64_t frames_in(int64_t samples, int64_t frame, int64_t hop)
{
    return samples < frame ? 0 : 1 + (samples - frame) / hop;
}

static void layout_free(struct layout *l)
{
    free(l->units);
    l->units = NULL;
}

static int layout_build(struct layout *l, const struct ctx *c, const struct request *rq)
{
    const struct wb_fft_opts *f = c->f;
    int stft = f->mode == WB_MODE_STFT;
    int64_t total = 0;
    for (int j = 0; j < rq->nfiles; j++)
        total += stft ? frames_in(rq->file_samples[j], f->frame, f->hop) : 1;
    memset(l, 0, sizeof *l);
    l->units = malloc((size_t)(total ? total : 1) * sizeof *l->units);
    if (!l->units)
        return wb_error_set(WB_ENOMEM, "out of memory for %lld transforms", (long long)total);
    l->nfiles = rq->nfiles;
    l->nunits = total;
    int64_t u = 0, off = 0;
    for (int j = 0; j < rq->nfiles; j++) {
        int64_t count = stft ? frames_in(rq->file_samples[j], f->frame, f->hop) : 1;
        for (int64_t i = 0; i < count; i++, u++) {
            int64_t n = stft ? f->frame : rq->file_samples[j];
            l->units[u] = (struct unit){j, rq->file_off[j] + (stft ? i * f->hop : 0), n, off,
                                        (int64_t)wb_fft_result_bytes(f->precision, n, f->result)};
            off += l->units[u].res_bytes;
        }
    }
    l->res_total = off;
    return 0;
}

/* First sample and one past the last sample that units [u0, u1) read. */
static int64_t region_start(const struct layout *l, int64_t u0) { return l->units[u0].off; }

static int64_t region_end(const struct layout *l, int64_t u1) { return l->units[u1 - 1].off + l->units[u1 - 1].n; }

/* Bytes of results that units [u0, u1) produce. */
static int64_t result_span(const struct layout *l, int64_t u0, int64_t u1)
{
    return u1 > u0 ? l->units[u1 - 1].res_off + l->units[u1 - 1].res_bytes - l->units[u0].res_off : 0;
}

static int kernel_for(struct ctx *c, int64_t n, struct wb_fft_kernel **out)
{
    for (int i = 0; i < c->kern.count; i++)
        if (c->kern.n[i] == n) {
            *out = c->kern.k[i];
            return 0;
        }
    if (c->kern.count == 64) {
        for (int i = 0; i < 64; i++)
            wb_fft_kernel_destroy(&c->kern.k[i]);
        c->kern.count = 0;
    }
    /* Batches of 16 frames keep input and output in cache; whole files go one at a time. */
    int64_t batch = c->f->mode == WB_MODE_STFT ? 16 : 1;
    int rc = wb_fft_kernel_create(out, c->f->precision, n, batch, c->f->window, c->f->plan);
    if (rc == 0) {
        wb_fft_kernel_set_input(*out, c->input);
        c->kern.k[c->kern.count] = *out;
        c->kern.n[c->kern.count++] = n;
    }
    return rc;
}

/* Transform units [u0, u1); base holds the samples from absolute offset base_off on; results go to dst. */
static int compute_units(struct ctx *c, const struct layout *l, int64_t u0, int64_t u1, const char *base,
                         int64_t base_off, char *dst, double *t_fft_s)
{
    double t_fft = 0;
    for (int64_t u = u0; u < u1;) {
        int64_t v = u;
        while (v + 1 < u1 && l->units[v + 1].file == l->units[u].file && l->units[v + 1].n == l->units[u].n)
            v++;
        struct wb_fft_kernel *k;
        int rc = kernel_for(c, l->units[u].n, &k);
        if (rc)
            return rc;
        double t = 0;
        wb_fft_kernel_run(k, base + (size_t)(l->units[u].off - base_off) * c->sb, v - u + 1, c->f->hop, c->f->result,
                          dst + (l->units[u].res_off - l->units[u0].res_off), &t);
        t_fft += t;
        c->flops += (double)(v - u + 1) * wb_fft_flops(l->units[u].n);
        u = v + 1;
    }
#ifdef WB_TEST_FAULTS
    /* Test-only: corrupt one result so the verification path can be exercised. */
    const char *fault = getenv("WB_FAULT");
    if (fault && !strcmp(fault, "corrupt-fft") && u1 > u0)
        memset(dst, 0x7f, (size_t)l->units[u0].res_bytes / 2);
#endif
    *t_fft_s = t_fft;
    return 0;
}

/* Units of rank q under the static schedule: contiguous blocks as even as possible. */
static void static_block(const struct ctx *c, int64_t nunits, int q, int64_t *u0, int64_t *u1)
{
    int workers = c->nranks - c->first_compute;
    if (q < c->first_compute) {
        *u0 = *u1 = 0;
        return;
    }
    int w = q - c->first_compute;
    *u0 = nunits * w / workers;
    *u1 = nunits * (w + 1) / workers;
}

/* Rank q's samples under the static schedule: [*start, *end), of which [*start, *main_end) come by
 * MPI_Scatterv and the rest (frames overlapping the next rank's block) by a point-to-point message. */
static void static_region(const struct ctx *c, const struct layout *l, const struct request *rq, int q,
                          int64_t *start, int64_t *main_end, int64_t *end)
{
    int64_t a, b;
    static_block(c, l->nunits, q, &a, &b);
    if (b == a) {
        *start = *main_end = *end = 0;
        return;
    }
    *start = region_start(l, a);
    *end = region_end(l, b);
    int64_t next = b < l->nunits ? l->units[b].off : rq->total_samples;
    *main_end = *end < next ? *end : next;
}

static void free_request(struct request *rq)
{
    free(rq->file_samples);
    free(rq->file_off);
    free(rq->rows);
    memset(rq, 0, sizeof *rq);
}

/* Tile (repeat) or cut a decoded file to exactly want samples; want 0 keeps it. */
static int fit_length(struct wb_audio *a, int64_t want)
{
    if (want <= 0 || want == a->nsamples)
        return 0;
    float *s = malloc((size_t)want * sizeof *s);
    if (!s)
        return wb_error_set(WB_ENOMEM, "out of memory for %lld samples", (long long)want);
    for (int64_t i = 0; i < want; i++)
        s[i] = a->samples[i % a->nsamples];
    free(a->samples);
    a->samples = s;
    a->data_bytes = a->nsamples > 0 ? a->data_bytes * want / a->nsamples : 0;
    a->nsamples = want;
    return 0;
}

/* Synthetic file index of the given length, generated once and kept: reading it later is a copy,
 * as reading a file the page cache holds. */
static int synth_get(struct ctx *c, int index, double seconds, const struct wb_audio **out)
{
    if (seconds != c->synth_seconds) {
        for (int i = 0; i < c->synth_cached; i++)
            wb_audio_free(&c->synth_cache[i]);
        c->synth_cached = 0;
        c->synth_seconds = seconds;
    }
    if (index >= c->synth_cached) {
        struct wb_audio *grown = realloc(c->synth_cache, (size_t)(index + 1) * sizeof *grown);
        if (!grown)
            return wb_error_set(WB_ENOMEM, "out of memory for synthetic audio");
        c->synth_cache = grown;
        for (int i = c->synth_cached; i <= index; i++) {
            memset(&c->synth_cache[i], 0, sizeof c->synth_cache[i]);
            int rc = wb_audio_synth(&c->synth_cache[i], seconds, c->f->sample_rate_hz, c->o->common.seed, i);
            if (rc)
                return rc;
            /* Synthetic audio is accounted as the 16-bit PCM file it stands for. */
            c->synth_cache[i].data_bytes = c->synth_cache[i].nsamples * 2;
            c->synth_cache[i].bits = 16;
            c->synth_cache[i].is_float = 0;
            c->synth_cached = i + 1;
        }
    }
    *out = &c->synth_cache[index];
    return 0;
}

/* One file of a request, decoded: synthetic audio is borrowed from the cache, WAV is owned. */
static int get_file(struct ctx *c, const struct point *p, int j, struct wb_audio *owned, const struct wb_audio **a)
{
    if (c->nfiles_in == 0)
        return synth_get(c, j, p->seconds, a);
    int rc = wb_audio_read_wav(c->files[j % c->nfiles_in], owned);
    if (rc == 0 && p->seconds > 0)
        rc = fit_length(owned, (int64_t)llround(p->seconds * owned->sample_rate_hz));
    *a = owned;
    return rc;
}

/* Root: read and decode the files of one request into rq->buf. The first read (probe) only
 * learns the lengths and the table of inputs; later reads must find the same lengths. */
static int read_request(struct ctx *c, const struct point *p, struct request *rq, int probe)
{
    int rc = 0;
    if (probe) {
        rq->nfiles = p->nfiles;
        rq->file_samples = calloc((size_t)p->nfiles, sizeof *rq->file_samples);
        rq->file_off = calloc((size_t)p->nfiles, sizeof *rq->file_off);
        rq->rows = calloc((size_t)p->nfiles, sizeof *rq->rows);
        if (!rq->file_samples || !rq->file_off || !rq->rows)
            return wb_error_set(WB_ENOMEM, "out of memory");
        rq->audio_bytes = 0;
        for (int j = 0; j < p->nfiles && rc == 0; j++) {
            struct wb_audio owned = {0};
            const struct wb_audio *a;
            rc = get_file(c, p, j, &owned, &a);
            if (rc == 0) {
                rq->rows[j] = (struct wb_result_input){.sample_rate = a->sample_rate_hz, .channels = a->channels,
                                                       .bits = a->bits, .samples = a->nsamples,
                                                       .bytes = a->data_bytes, .peak_hz = NAN};
                snprintf(rq->rows[j].name, sizeof rq->rows[j].name, "%s", a->name);
                rq->file_samples[j] = a->nsamples;
                rq->file_off[j] = j ? rq->file_off[j - 1] + rq->file_samples[j - 1] : 0;
                rq->audio_bytes += a->data_bytes;
            }
            wb_audio_free(&owned);
        }
        return rc;
    }
    for (int j = 0; j < p->nfiles && rc == 0; j++) {
        struct wb_audio owned = {0};
        const struct wb_audio *a;
        rc = get_file(c, p, j, &owned, &a);
        if (rc == 0 && a->nsamples != rq->file_samples[j])
            rc = wb_error_set(WB_EINPUT, "%s changed length during the run (%lld samples, then %lld)", a->name,
                              (long long)rq->file_samples[j], (long long)a->nsamples);
        if (rc == 0)
            wb_fft_store(rq->buf + (size_t)rq->file_off[j] * c->sb, a->samples, a->nsamples, c->input, c->f->precision);
        wb_audio_free(&owned);
    }
    return rc;
}

/* Shares the file lengths of a request from the root, so every rank builds the same layout. */
static int share_lengths(struct ctx *c, struct request *rq, int nfiles)
{
    if (c->rank != 0) {
        rq->nfiles = nfiles;
        rq->file_samples = calloc((size_t)nfiles, sizeof *rq->file_samples);
        rq->file_off = calloc((size_t)nfiles, sizeof *rq->file_off);
        if (!rq->file_samples || !rq->file_off)
            return wb_error_set(WB_ENOMEM, "out of memory");
    }
    int rc = c->baseline ? 0 : wb_comm_bcast(rq->file_samples, (size_t)nfiles * sizeof(int64_t), 0);
    for (int j = 0; rc == 0 && j < nfiles; j++)
        rq->file_off[j] = j ? rq->file_off[j - 1] + rq->file_samples[j - 1] : 0;
    rq->total_samples = nfiles ? rq->file_off[nfiles - 1] + rq->file_samples[nfiles - 1] : 0;
    return rc;
}

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

/* One request under the static schedule. Every rank; the root holds all results afterwards. */
static int run_static(struct ctx *c, const struct layout *l, const struct request *rq, const struct rootbuf *inb,
                      const struct rootbuf *resb, char **inbuf, int64_t *inbuf_cap, struct timing *t, int64_t *my_units,
                      int64_t *my_bytes, int64_t *my_out)
{
    MPI_Comm w = wb_comm_world();
    char *results = resb->ptr;
    int64_t u0, u1, start, main_end, end;
    static_block(c, l->nunits, c->rank, &u0, &u1);
    static_region(c, l, rq, c->rank, &start, &main_end, &end);
    *my_units = u1 - u0;
    *my_bytes = (end - start) * (int64_t)c->sb;
    /* The root, and ranks that map its buffers, work in place; the others get copies. */
    int in_place = c->rank == 0 || (c->mapped && c->mapped[c->rank]);
    int rc = in_place ? 0 : ensure_inbuf(inbuf, inbuf_cap, *my_bytes);
    int64_t res_bytes = result_span(l, u0, u1);
    *my_out = res_bytes;
    char *myres = in_place ? results + (u1 > u0 ? l->units[u0].res_off : 0) : wb_fft_alloc((size_t)res_bytes);
    if (!myres)
        rc = wb_error_set(WB_ENOMEM, "out of memory for %lld bytes of results", (long long)res_bytes);
    int n = c->nranks, *counts = NULL, *displs = NULL, *rcounts = NULL, *rdispls = NULL;
    MPI_Request *halo = NULL;
    if (c->rank == 0 && !c->baseline && rc == 0) {
        counts = calloc((size_t)n, sizeof *counts);
        displs = calloc((size_t)n, sizeof *displs);
        rcounts = calloc((size_t)n, sizeof *rcounts);
        rdispls = calloc((size_t)n, sizeof *rdispls);
        halo = calloc((size_t)n, sizeof *halo);
        if (!counts || !displs || !rcounts || !rdispls || !halo)
            rc = wb_error_set(WB_ENOMEM, "out of memory");
        for (int q = 0; rc == 0 && q < n; q++) {
            int64_t s, m, e, a, b;
            static_region(c, l, rq, q, &s, &m, &e);
            static_block(c, l->nunits, q, &a, &b);
            int64_t bytes = (m - s) * (int64_t)c->sb, off = s * (int64_t)c->sb, rb = result_span(l, a, b);
            if (c->mapped && c->mapped[q])
                bytes = rb = 0;
            if (bytes > INT_MAX || off > INT_MAX || rb > INT_MAX || (b > a && l->units[a].res_off > INT_MAX))
                rc = wb_error_set(WB_ENOMEM, "rank %d would get %lld bytes at offset %lld, more than one MPI call "
                                             "addresses; use fewer or shorter files",
                                  q, (long long)bytes, (long long)off);
            counts[q] = (int)bytes;
            displs[q] = (int)off;
            rcounts[q] = (int)rb;
            rdispls[q] = b > a ? (int)l->units[a].res_off : 0;
        }
    }
    rc = c->baseline ? rc : wb_comm_agree(rc);
    if (rc) {
        if (!in_place)
            wb_fft_free(myres);
        free(counts), free(displs), free(rcounts), free(rdispls), free(halo);
        return rc;
    }
    double t0 = wb_timer_now_s();
    if (!c->baseline) {
        if (c->rank == 0)
            rc = wb_comm_check(MPI_Scatterv(rq->buf, counts, displs, MPI_BYTE, MPI_IN_PLACE, 0, MPI_BYTE, 0, w),
                               "MPI_Scatterv of samples");
        else
            rc = wb_comm_check(MPI_Scatterv(NULL, NULL, NULL, MPI_BYTE, *inbuf,
                                            in_place ? 0 : (int)((main_end - start) * (int64_t)c->sb), MPI_BYTE, 0, w),
                               "MPI_Scatterv of samples");
        /* Frames at a block's end reach into the next block: those samples follow separately,
         * since MPI_Scatterv may not read a location of the root twice. */
        for (int q = 1; rc == 0 && c->rank == 0 && q < n; q++) {
            int64_t s, m, e;
            static_region(c, l, rq, q, &s, &m, &e);
            halo[q] = MPI_REQUEST_NULL;
            if (e > m && !(c->mapped && c->mapped[q]))
                rc = wb_comm_check(MPI_Isend(rq->buf + (size_t)m * c->sb, (int)((e - m) * (int64_t)c->sb), MPI_BYTE, q,
                                             TAG_DATA, w, &halo[q]),
                                   "MPI_Isend of frame overlap");
        }
        if (rc == 0 && !in_place && end > main_end)
            rc = wb_comm_check(MPI_Recv(*inbuf + (size_t)(main_end - start) * c->sb, (int)((end - main_end) * (int64_t)c->sb),
                                        MPI_BYTE, 0, TAG_DATA, w, MPI_STATUS_IGNORE),
                               "MPI_Recv of frame overlap");
        if (rc == 0 && c->rank == 0)
            rc = wb_comm_check(MPI_Waitall(n - 1, halo + 1, MPI_STATUSES_IGNORE), "MPI_Waitall");
        /* The root stored the samples before the start barrier; make them visible here. */
        if (in_place && c->rank != 0)
            rootbuf_sync(inb);
    }
    double t1 = wb_timer_now_s();
    c->in_base = in_place ? rq->buf : *inbuf;
    c->in_base_off = in_place ? 0 : start;
    if (rc == 0)
        rc = compute_units(c, l, u0, u1, c->in_base, c->in_base_off, myres, &t->t_fft);
    double t2 = wb_timer_now_s();
    if (!c->baseline && rc == 0) {
        if (in_place && c->rank != 0)
            rootbuf_sync(resb);
        if (c->rank == 0)
            rc = wb_comm_check(MPI_Gatherv(MPI_IN_PLACE, 0, MPI_BYTE, results, rcounts, rdispls, MPI_BYTE, 0, w),
                               "MPI_Gatherv of results");
        else
            rc = wb_comm_check(MPI_Gatherv(myres, in_place ? 0 : (int)res_bytes, MPI_BYTE, NULL, NULL, NULL, MPI_BYTE,
                                           0, w),
                               "MPI_Gatherv of results");
        /* MPI_Gatherv need not wait for a rank that sends nothing: ranks that wrote their results in
         * place report done with a message of their own, so the root never reads ahead of them. */
        if (rc == 0 && c->shm) {
            int done = 1, *all = c->rank == 0 ? c->done_flags : NULL;
            rc = wb_comm_check(MPI_Gather(&done, 1, MPI_INT, all, 1, MPI_INT, 0, w), "MPI_Gather of done flags");
        }
        if (c->rank == 0)
            rootbuf_sync(resb);
    }
    double t3 = wb_timer_now_s();
    t->t_dist = t1 - t0;
    t->t_comp = t2 - t1;
    t->t_gather = t3 - t2;
    if (!in_place)
        wb_fft_free(myres);
    free(counts), free(displs), free(rcounts), free(rdispls), free(halo);
    return rc;
}

/* Root, dynamic schedule: send a chunk of units starting at *next to rank q (count 0 = stop). */
static int send_chunk(struct ctx *c, const struct layout *l, const struct request *rq, int q, int64_t *next)
{
    MPI_Comm w = wb_comm_world();
    int64_t count = l->nunits - *next < c->f->chunk ? l->nunits - *next : c->f->chunk;
    int64_t hdr[2] = {*next, count};
    int rc = wb_comm_check(MPI_Send(hdr, 2, MPI_INT64_T, q, TAG_CHUNK, w), "MPI_Send of a chunk header");
    if (rc == 0 && count > 0) {
        int64_t s = region_start(l, *next), e = region_end(l, *next + count);
        rc = wb_comm_check(MPI_Send(rq->buf + (size_t)s * c->sb, (int)((e - s) * (int64_t)c->sb), MPI_BYTE, q, TAG_DATA, w),
                           "MPI_Send of samples");
        *next += count;
    }
    return rc;
}

/* One request under the dynamic schedule: the root hands out chunks as workers finish them. */
static int run_dynamic(struct ctx *c, const struct layout *l, const struct request *rq, char *results, char **inbuf,
                       int64_t *inbuf_cap, struct timing *t, int64_t *my_units, int64_t *my_bytes, int64_t *my_out)
{
    MPI_Comm w = wb_comm_world();
    int64_t chunk = c->f->chunk, max_samples = 0, max_res = 0;
    for (int64_t u = 0; u < l->nunits; u += chunk) {
        int64_t e = u + chunk < l->nunits ? u + chunk : l->nunits;
        int64_t s = region_end(l, e) - region_start(l, u), r = result_span(l, u, e);
        max_samples = s > max_samples ? s : max_samples;
        max_res = r > max_res ? r : max_res;
    }
    *my_units = 0;
    *my_bytes = 0;
    *my_out = 0;
    memset(t, 0, sizeof *t);
    char *res = NULL;
    int rc = c->rank == 0 ? 0 : ensure_inbuf(inbuf, inbuf_cap, max_samples * (int64_t)c->sb);
    if (rc == 0 && c->rank != 0 && !(res = wb_fft_alloc((size_t)(max_res ? max_res : 1))))
        rc = wb_error_set(WB_ENOMEM, "out of memory for results");
    rc = wb_comm_agree(rc);
    if (rc) {
        wb_fft_free(res);
        return rc;
    }
    if (c->rank == 0) {
        int64_t next = 0;
        int active = 0;
        /* Prime every worker with a chunk, or a stop when there is nothing left. */
        for (int q = 1; q < c->nranks && rc == 0; q++) {
            double t0 = wb_timer_now_s();
            int had = next < l->nunits;
            rc = send_chunk(c, l, rq, q, &next);
            active += had;
            t->t_dist += wb_timer_now_s() - t0;
        }
        while (rc == 0 && (active > 0 || next < l->nunits)) {
            int pending = 0;
            if (active > 0)
                rc = wb_comm_check(MPI_Iprobe(MPI_ANY_SOURCE, TAG_RESULT, w, &pending, MPI_STATUS_IGNORE), "MPI_Iprobe");
            if (rc == 0 && !pending && next < l->nunits && (c->f->root_computes || active == 0)) {
                int64_t e = next + chunk < l->nunits ? next + chunk : l->nunits;
                double t1 = wb_timer_now_s(), tf = 0;
                rc = compute_units(c, l, next, e, rq->buf, 0, results + l->units[next].res_off, &tf);
                t->t_comp += wb_timer_now_s() - t1;
                t->t_fft += tf;
                *my_units += e - next;
                *my_out += result_span(l, next, e);
                *my_bytes += (region_end(l, e) - region_start(l, next)) * (int64_t)c->sb;
                next = e;
                continue;
            }
            if (rc || active == 0)
                continue;
            MPI_Status st;
            int64_t hdr[2];
            double t0 = wb_timer_now_s();
            rc = wb_comm_check(MPI_Recv(hdr, 2, MPI_INT64_T, MPI_ANY_SOURCE, TAG_RESULT, w, &st), "MPI_Recv of a result");
            if (rc == 0)
                rc = wb_comm_check(MPI_Recv(results + l->units[hdr[0]].res_off, (int)result_span(l, hdr[0], hdr[0] + hdr[1]),
                                            MPI_BYTE, st.MPI_SOURCE, TAG_DATA, w, MPI_STATUS_IGNORE),
                                   "MPI_Recv of a result");
            t->t_gather += wb_timer_now_s() - t0;
            t0 = wb_timer_now_s();
            int had = next < l->nunits;
            if (rc == 0)
                rc = send_chunk(c, l, rq, st.MPI_SOURCE, &next);
            active -= !had;
            t->t_dist += wb_timer_now_s() - t0;
        }
        return rc;
    }
    /* A worker whose transform fails still answers every chunk, so the root is never left waiting. */
    for (;;) {
        int64_t hdr[2];
        double t0 = wb_timer_now_s();
        int mrc = wb_comm_check(MPI_Recv(hdr, 2, MPI_INT64_T, 0, TAG_CHUNK, w, MPI_STATUS_IGNORE), "MPI_Recv of a chunk");
        if (mrc || hdr[1] == 0) {
            t->t_dist += wb_timer_now_s() - t0;
            rc = rc ? rc : mrc;
            break;
        }
        int64_t e = hdr[0] + hdr[1], s = region_start(l, hdr[0]), bytes = (region_end(l, e) - s) * (int64_t)c->sb;
        mrc = wb_comm_check(MPI_Recv(*inbuf, (int)bytes, MPI_BYTE, 0, TAG_DATA, w, MPI_STATUS_IGNORE),
                            "MPI_Recv of samples");
        double t1 = wb_timer_now_s(), tf = 0;
        t->t_dist += t1 - t0;
        if (rc == 0 && mrc == 0)
            rc = compute_units(c, l, hdr[0], e, *inbuf, s, res, &tf);
        double t2 = wb_timer_now_s();
        t->t_comp += t2 - t1;
        t->t_fft += tf;
        *my_units += hdr[1];
        *my_out += result_span(l, hdr[0], e);
        *my_bytes += bytes;
        mrc = mrc ? mrc : wb_comm_check(MPI_Send(hdr, 2, MPI_INT64_T, 0, TAG_RESULT, w), "MPI_Send of a result");
        mrc = mrc ? mrc : wb_comm_check(MPI_Send(res, rc ? 0 : (int)result_span(l, hdr[0], e), MPI_BYTE, 0, TAG_DATA, w),
                                        "MPI_Send of a result");
        t->t_gather += wb_timer_now_s() - t2;
        if (mrc) {
            rc = rc ? rc : mrc;
            break;
        }
    }
    wb_fft_free(res);
    return rc;
}

/* Value of result element i (a magnitude) in the run's precision. */
static double mag_at(const struct ctx *c, const char *p, int64_t i)
{
    return c->f->precision == WB_FFT_DOUBLE ? ((const double *)p)[i] : ((const float *)p)[i];
}

/* Root: strongest non-DC frequency of each file, and how many known tones stand out. */
static void analyse_results(const struct ctx *c, const struct layout *l, const struct request *rq, const char *results,
                            int *tones_expected, int *tones_found, double *max_tone_err)
{
    double freqs[8], amps[8];
    int ntones = wb_audio_synth_tones(freqs, amps, 8);
    int synthetic = c->nfiles_in == 0;
    *tones_expected = *tones_found = 0;
    *max_tone_err = 0;
    int64_t u0 = 0;
    for (int j = 0; j < l->nfiles; j++) {
        int64_t u1 = u0;
        while (u1 < l->nunits && l->units[u1].file == j)
            u1++;
        double rate = rq->rows[j].sample_rate;
        int64_t n = u1 > u0 ? l->units[u0].n : 0, nb = n / 2 + 1;
        double bin_hz = n ? rate / (double)n : 0;
        double *score = u1 > u0 ? calloc((size_t)nb, sizeof *score) : NULL;
        if (!score) {
            u0 = u1;
            continue;
        }
        /* Mean magnitude spectrum, or (peaks) magnitude-weighted votes for each frame's peak bin. */
        for (int64_t u = u0; u < u1; u++) {
            const char *r = results + l->units[u].res_off;
            if (c->f->result == WB_FFT_PEAKS) {
                const struct wb_fft_peak *pk = (const void *)r;
                if (pk->bin >= 0 && pk->bin < nb)
                    score[pk->bin] += pk->mag;
            } else {
                for (int64_t b = 0; b < nb; b++)
                    score[b] += mag_at(c, r, b) / (double)(u1 - u0);
            }
        }
        int64_t best = 1;
        for (int64_t b = 1; b < nb; b++)
            if (score[b] > score[best])
                best = b;
        rq->rows[j].peak_hz = (double)best * bin_hz;
        if (synthetic && c->f->result == WB_FFT_PEAKS) {
            /* Each frame's peak is the loudest tone. */
            (*tones_expected)++;
            double err = fabs(rq->rows[j].peak_hz - freqs[0]) / bin_hz;
            *max_tone_err = fmax(*max_tone_err, err);
            *tones_found += err <= 1.0;
        } else if (synthetic) {
            double *sorted = malloc((size_t)nb * sizeof *sorted);
            double median = sorted ? (memcpy(sorted, score, (size_t)nb * sizeof *sorted), wb_timer_median(sorted, (size_t)nb))
                                   : INFINITY;
            free(sorted);
            for (int i = 0; i < ntones; i++) {
                (*tones_expected)++;
                /* A tone stands out when the strongest bin within one bin of it is 10x the median level. */
                int64_t b = (int64_t)llround(freqs[i] / bin_hz), lo = b > 1 ? b - 1 : 1, hi = b + 1 < nb ? b + 1 : nb - 1;
                int64_t at = lo;
                for (int64_t k = lo; k <= hi; k++)
                    if (score[k] > score[at])
                        at = k;
                double err = fabs((double)at * bin_hz - freqs[i]) / bin_hz;
                *max_tone_err = fmax(*max_tone_err, err);
                *tones_found += score[at] > 10.0 * median && err <= 1.0;
            }
        }
        free(score);
        u0 = u1;
    }
}

/* Root: recompute a few units from its own samples and compare with what came back over the network. */
static int crosscheck(struct ctx *c, const struct layout *l, const struct request *rq, const char *results,
                      double *max_rel)
{
    *max_rel = 0;
    int64_t picks = l->nunits < 8 ? l->nunits : 8;
    for (int64_t i = 0; i < picks; i++) {
        int64_t u = picks > 1 ? i * (l->nunits - 1) / (picks - 1) : 0;
        char *out = wb_fft_alloc((size_t)l->units[u].res_bytes);
        double tf;
        int rc = out ? compute_units(c, l, u, u + 1, rq->buf, 0, out, &tf)
                     : wb_error_set(WB_ENOMEM, "out of memory for the cross-check");
        if (rc == 0) {
            const char *got = results + l->units[u].res_off;
            if (c->f->result == WB_FFT_PEAKS) {
                const struct wb_fft_peak *a = (const void *)got, *b = (const void *)out;
                double rel = a->bin == b->bin ? fabs(a->mag - b->mag) / fmax(fabs(b->mag), 1e-30) : 1.0;
                *max_rel = fmax(*max_rel, isfinite(rel) ? rel : INFINITY);
            } else {
                int64_t nb = l->units[u].n / 2 + 1;
                double peak = 0, diff = 0;
                for (int64_t b = 0; b < nb; b++) {
                    double x = mag_at(c, out, b), y = mag_at(c, got, b);
                    peak = fmax(peak, fabs(x));
                    diff = fmax(diff, isfinite(y) ? fabs(x - y) : INFINITY);
                }
                *max_rel = fmax(*max_rel, peak > 0 ? diff / peak : diff);
            }
        }
        wb_fft_free(out);
        if (rc)
            return rc;
    }
    return 0;
}

struct verdict {
    int passed;
    double max_error, parseval, roundtrip, crosscheck, tone_err;
    int tones_expected, tones_found;
    char check[256];
};

/* Parseval and round trip over a sample of units [u0, u1) whose samples start at base (offset base_off). */
static int check_units(struct ctx *c, const struct layout *l, int64_t u0, int64_t u1, const char *base,
                       int64_t base_off, double *p, double *r)
{
    int rc = 0;
    for (int64_t u = u0; rc == 0 && u < u1;) {
        int64_t v = u;
        while (v + 1 < u1 && l->units[v + 1].file == l->units[u].file && l->units[v + 1].n == l->units[u].n)
            v++;
        struct wb_fft_kernel *k;
        double pp = 0, rr = 0;
        rc = kernel_for(c, l->units[u].n, &k);
        if (rc == 0)
            rc = wb_fft_kernel_check(k, base + (size_t)(l->units[u].off - base_off) * c->sb, v - u + 1, c->f->hop, 4,
                                     &pp, &rr);
        *p = fmax(*p, pp);
        *r = fmax(*r, rr);
        u = v + 1;
    }
    return rc;
}

/* Checks the last repetition of a point: Parseval and round trip on every computing rank (static) or
 * the root (dynamic), the cross-check and the known tones on the root. Collective. */
static int verify_point(struct ctx *c, const struct layout *l, const struct request *rq, const char *results,
                        struct verdict *v)
{
    double p = 0, r = 0;
    int rc = 0;
    memset(v, 0, sizeof *v);
    if (c->f->schedule == WB_SCHED_STATIC || c->baseline) {
        int64_t u0, u1;
        static_block(c, l->nunits, c->rank, &u0, &u1);
        if (u1 > u0)
            rc = check_units(c, l, u0, u1, c->in_base, c->in_base_off, &p, &r);
    } else if (c->rank == 0) {
        rc = check_units(c, l, 0, l->nunits, rq->buf, 0, &p, &r);
    }
    rc = c->baseline ? rc : wb_comm_agree(rc);
    if (rc)
        return rc;
    v->parseval = c->baseline ? p : wb_comm_max_f64(p);
    v->roundtrip = c->baseline ? r : wb_comm_max_f64(r);
    if (c->rank == 0) {
        rc = crosscheck(c, l, rq, results, &v->crosscheck);
        analyse_results(c, l, rq, results, &v->tones_expected, &v->tones_found, &v->tone_err);
        int64_t n = l->nunits ? l->units[0].n : 2;
        double tol = wb_fft_tolerance(c->f->precision, n);
        v->max_error = fmax(fmax(v->parseval, v->roundtrip), v->crosscheck);
        v->passed = v->parseval <= tol && v->roundtrip <= tol && v->crosscheck <= tol &&
                    v->tones_found == v->tones_expected;
        snprintf(v->check, sizeof v->check, "parseval<=%.1e, roundtrip<=%.1e, crosscheck<=%.1e%s", tol, tol, tol,
                 c->nfiles_in == 0 ? ", known tones in their bins" : "");
    }
    rc = c->baseline ? rc : wb_comm_agree(rc);
    if (rc == 0 && !c->baseline)
        rc = wb_comm_bcast(&v->passed, sizeof v->passed, 0);
    return rc;
}

/* Writes one point and prints its row. Collective. */
static int write_point(struct ctx *c, int id, const struct point *p, const struct layout *l, const struct request *rq,
                       int reps, const struct timing *tm, int64_t my_units, int64_t my_bytes, int64_t my_res_bytes,
                       double flops,
                       const struct verdict *v)
{
    struct wb_results *res = c->res;
    const struct wb_fft_opts *f = c->f;
    char g[64], d[96];
    snprintf(g, sizeof g, "/fft/p%03d", id);
    int rc = wb_results_group(res, g);
    static const char *const modes[] = {"stft", "whole"}, *const precs[] = {"single", "double"},
                             *const plans[] = {"estimate", "measure", "patient"}, *const scheds[] = {"static", "dynamic"},
                             *const results[] = {"spectra", "peaks"}, *const windows[] = {"hann", "none"};
    double seconds = 0;
    int64_t sent = c->baseline ? my_bytes : wb_comm_sum_i64(my_bytes);
    for (int j = 0; c->rank == 0 && j < rq->nfiles; j++)
        seconds += (double)rq->rows[j].samples / rq->rows[j].sample_rate / rq->nfiles;
    wb_results_attr_str(res, g, "scenario", p->scenario);
    wb_results_attr_str(res, g, "mode", modes[f->mode]);
    wb_results_attr_str(res, g, "precision", precs[f->precision]);
    wb_results_attr_i64(res, g, "frame", f->mode == WB_MODE_STFT ? f->frame : 0);
    wb_results_attr_i64(res, g, "hop", f->mode == WB_MODE_STFT ? f->hop : 0);
    wb_results_attr_str(res, g, "window", windows[f->window]);
    wb_results_attr_i64(res, g, "sample_rate", c->rank == 0 && rq->nfiles ? rq->rows[0].sample_rate : 0);
    wb_results_attr_i64(res, g, "nfiles", p->nfiles);
    wb_results_attr_f64(res, g, "seconds_per_file", seconds);
    wb_results_attr_i64(res, g, "input_bytes", rq->audio_bytes);
    wb_results_attr_i64(res, g, "sent_bytes", sent);
    wb_results_attr_i64(res, g, "transforms", l->nunits);
    wb_results_attr_i64(res, g, "reps", reps);
    wb_results_attr_i64(res, g, "warmup", c->o->common.warmup);
    wb_results_attr_str(res, g, "plan", plans[f->plan]);
    wb_results_attr_str(res, g, "schedule", scheds[f->schedule]);
    wb_results_attr_i64(res, g, "root_computes", c->first_compute == 0);
    wb_results_attr_str(res, g, "local", c->shm ? "shm" : "mpi");
    wb_results_attr_str(res, g, "wire", c->input == WB_FFT_IN_S16 ? "s16" : f->precision ? "float64" : "float32");
    wb_results_attr_str(res, g, "result", results[f->result]);
    wb_results_attr_i64(res, g, "baseline", c->baseline);
    wb_results_attr_str(res, g, "input", c->nfiles_in ? "wav" : "synthetic");
    double *col = malloc((size_t)(reps ? reps : 1) * sizeof *col);
    double *rt = malloc((size_t)(reps ? reps : 1) * sizeof *rt);
    if (!col || !rt) {
        free(col);
        free(rt);
        return wb_error_set(WB_ENOMEM, "out of memory");
    }
    uint64_t dims[1] = {(uint64_t)reps};
    for (int r = 0; r < reps; r++)
        rt[r] = tm[r].t_read;
    snprintf(d, sizeof d, "%s/t_read", g);
    wb_results_write_f64(res, d, 1, dims, rt, "s");
    for (int r = 0; r < reps; r++)
        rt[r] = tm[r].t_total;
    snprintf(d, sizeof d, "%s/t_total", g);
    wb_results_write_f64(res, d, 1, dims, rt, "s");
    const char *names[] = {"t_distribute", "t_compute", "t_fft", "t_gather"};
    double med[4] = {0};
    for (int k = 0; k < 4; k++) {
        for (int r = 0; r < reps; r++)
            col[r] = k == 0 ? tm[r].t_dist : k == 1 ? tm[r].t_comp : k == 2 ? tm[r].t_fft : tm[r].t_gather;
        snprintf(d, sizeof d, "%s/%s", g, names[k]);
        rc = rc ? rc : wb_results_write_per_rank_f64(res, d, col, (size_t)reps, "s");
        /* For the table: each repetition's slowest rank, then the median over repetitions. */
        if (rc == 0 && !c->baseline)
            rc = wb_comm_max_f64_n(col, (size_t)reps);
        med[k] = wb_timer_median(col, (size_t)reps);
    }
    int64_t iv;
    snprintf(d, sizeof d, "%s/bytes_in", g);
    iv = my_bytes;
    rc = rc ? rc : wb_results_write_per_rank_i64(res, d, &iv, 1, "bytes");
    snprintf(d, sizeof d, "%s/bytes_out", g);
    iv = my_res_bytes;
    rc = rc ? rc : wb_results_write_per_rank_i64(res, d, &iv, 1, "bytes");
    snprintf(d, sizeof d, "%s/frames", g);
    iv = my_units;
    rc = rc ? rc : wb_results_write_per_rank_i64(res, d, &iv, 1, "count");
    snprintf(d, sizeof d, "%s/flops", g);
    rc = rc ? rc : wb_results_write_per_rank_f64(res, d, &flops, 1, "flop");
    double total_flops = c->baseline ? flops : wb_comm_sum_f64(flops);
    /* A rank's own rate: its share of the audio over its median distribute + compute + gather. */
    int64_t audio_bytes = rq->audio_bytes;
    if (!c->baseline)
        wb_comm_bcast(&audio_bytes, sizeof audio_bytes, 0);
    for (int r = 0; r < reps; r++)
        col[r] = tm[r].t_dist + tm[r].t_comp + tm[r].t_gather;
    double busy = wb_timer_median(col, (size_t)reps);
    double rank_kbps = l->nunits && my_units ? (double)audio_bytes * (double)my_units / (double)l->nunits / 1000.0 / busy
                                             : 0.0;
    snprintf(d, sizeof d, "%s/rate_kBps", g);
    rc = rc ? rc : wb_results_write_per_rank_f64(res, d, &rank_kbps, 1, "kB/s");
    double *rates = c->rank == 0 ? calloc((size_t)c->nranks, sizeof *rates) : NULL;
    if (c->baseline && rates)
        rates[0] = rank_kbps;
    else if (!c->baseline)
        wb_comm_gather_f64(rank_kbps, rates);
    snprintf(d, sizeof d, "%s/inputs", g);
    wb_results_write_inputs(res, d, rq->rows, c->rank == 0 ? (size_t)rq->nfiles : 0);
    snprintf(d, sizeof d, "%s/verify", g);
    wb_results_group(res, d);
    wb_results_attr_i64(res, d, "passed", v->passed);
    wb_results_attr_f64(res, d, "max_error", v->max_error);
    wb_results_attr_str(res, d, "check", v->check);
    wb_results_attr_f64(res, d, "parseval_max_rel", v->parseval);
    wb_results_attr_f64(res, d, "roundtrip_max_rel", v->roundtrip);
    wb_results_attr_f64(res, d, "crosscheck_max_rel", v->crosscheck);
    wb_results_attr_i64(res, d, "tones_expected", v->tones_expected);
    wb_results_attr_i64(res, d, "tones_found", v->tones_found);
    wb_results_attr_f64(res, d, "tone_bin_error", v->tone_err);
    double ttot = wb_timer_median(rt, (size_t)reps);
    for (int r = 0; r < reps; r++)
        rt[r] = tm[r].t_read;
    double t_read = wb_timer_median(rt, (size_t)reps);
    double kbps = (double)rq->audio_bytes / 1000.0 / ttot, gflops = total_flops / med[2] / 1e9;
    wb_report_printf("%-5d %-7s %6d %8.2f %6d %12lld %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %11.1f %7.2f %s\n", id,
                     p->scenario, p->nfiles, seconds, c->nranks, (long long)rq->audio_bytes,
                     1e3 * t_read, 1e3 * med[0],
                     1e3 * med[1], 1e3 * med[2], 1e3 * med[3], 1e3 * ttot, kbps, gflops, v->passed ? "ok" : "FAILED");
    if (rates && c->nranks > 1 && wb_report_enabled()) {
        char line[512];
        int len = snprintf(line, sizeof line, "#      kB/s per rank:");
        for (int q = 0; q < c->nranks && len < (int)sizeof line - 32; q++)
            len += snprintf(line + len, sizeof line - (size_t)len, " %d:%.0f", q, rates[q]);
        wb_report_printf("%s%s\n", line, len >= (int)sizeof line - 32 ? " ..." : "");
    }
    free(rates);
    free(col);
    free(rt);
    rc = rc ? rc : wb_results_flush(res);
    return rc;
}

/* Root: whether the run's --timeout has passed; shared so every rank stops together. */
static int out_of_time(const struct ctx *c)
{
    int stop = c->o->common.timeout_s > 0 && wb_timer_now_s() - c->t_start > c->o->common.timeout_s;
    if (!c->baseline)
        wb_comm_bcast(&stop, sizeof stop, 0);
    return stop;
}

/* Measures one point: warm-up and recorded repetitions, verification, writing. Collective. */
static int run_point(struct ctx *c, int id, const struct point *p, double *progress_done, double progress_total)
{
    struct request rq = {0};
    struct layout l = {0};
    int reps = c->o->common.reps, warm = c->o->common.warmup, done = 0, rc = 0, timed_out = 0;
    struct timing *tm = calloc((size_t)reps, sizeof *tm);
    char *results = NULL, *inbuf = NULL;
    struct rootbuf inb = {NULL, MPI_WIN_NULL}, resb = {NULL, MPI_WIN_NULL};
    int64_t inbuf_cap = 0, my_units = 0, my_bytes = 0, my_res = 0;
    double my_flops = 0;
    if (!tm)
        rc = wb_error_set(WB_ENOMEM, "out of memory");
    /* An untimed first read tells every rank the file lengths, so all build the same layout. */
    if (rc == 0 && c->rank == 0)
        rc = read_request(c, p, &rq, 1);
    rc = c->baseline ? rc : wb_comm_agree(rc);
    if (rc == 0)
        rc = share_lengths(c, &rq, p->nfiles);
    if (rc == 0)
        rc = layout_build(&l, c, &rq);
    rc = c->baseline ? rc : wb_comm_agree(rc);
    if (rc == 0)
        rc = rootbuf_alloc(c, &inb, rq.total_samples * (int64_t)c->sb);
    if (rc == 0)
        rc = rootbuf_alloc(c, &resb, l.res_total);
    rq.buf = inb.ptr;
    results = resb.ptr;
    /* Plans are made before timing, once per length, and reused by every repetition. */
    if (rc == 0) {
        int64_t u0 = 0, u1 = l.nunits;
        if (c->f->schedule == WB_SCHED_STATIC)
            static_block(c, l.nunits, c->rank, &u0, &u1);
        for (int64_t u = u0; rc == 0 && u < u1; u++) {
            struct wb_fft_kernel *k;
            if (u == u0 || l.units[u].n != l.units[u - 1].n)
                rc = kernel_for(c, l.units[u].n, &k);
        }
    }
    rc = c->baseline ? rc : wb_comm_agree(rc);
    for (int i = 0; rc == 0 && i < warm + reps; i++) {
        if (out_of_time(c)) {
            timed_out = 1;
            break;
        }
        struct timing t = {0};
        if (c->rank == 0) {
            double t0 = wb_timer_now_s();
            rc = read_request(c, p, &rq, 0);
            rootbuf_sync(&inb);
            t.t_read = wb_timer_now_s() - t0;
        }
        rc = c->baseline ? rc : wb_comm_agree(rc);
        if (rc == 0 && !c->baseline)
            rc = wb_comm_barrier();
        if (rc)
            break;
        double t0 = wb_timer_now_s();
        c->flops = 0;
        if (c->f->schedule == WB_SCHED_DYNAMIC && !c->baseline)
            rc = run_dynamic(c, &l, &rq, results, &inbuf, &inbuf_cap, &t, &my_units, &my_bytes, &my_res);
        else
            rc = run_static(c, &l, &rq, &inb, &resb, &inbuf, &inbuf_cap, &t, &my_units, &my_bytes, &my_res);
        t.t_total = c->rank == 0 ? wb_timer_now_s() - t0 : NAN;
        my_flops = c->flops;
        rc = c->baseline ? rc : wb_comm_agree(rc);
        if (rc == 0 && i >= warm)
            tm[done++] = t;
        *progress_done += 1;
        wb_report_progress("fft", *progress_done / progress_total, wb_timer_now_s() - c->t_start);
    }
    struct verdict v = {0};
    if (rc == 0 && done > 0)
        rc = verify_point(c, &l, &rq, results, &v);
    if (rc == 0 && done > 0) {
        rc = write_point(c, id, p, &l, &rq, done, tm, my_units, my_bytes, my_res, my_flops, &v);
        if (rc == 0 && !c->baseline)
            rc = wb_comm_agree(rc);
        double shortest = INFINITY;
        for (int r = 0; r < done; r++)
            shortest = fmin(shortest, fmin(tm[r].t_fft, tm[r].t_total));
        if (rc == 0 && c->rank == 0 && shortest > 0 && wb_timer_too_short(shortest))
            wb_report_warn("point %d: a timed phase lasts under 100 timer ticks (%.3g s); its times are coarse", id,
                           shortest);
    }
    free(tm);
    rootbuf_free(&inb);
    rootbuf_free(&resb);
    rq.buf = NULL;
    wb_fft_free(inbuf);
    layout_free(&l);
    free_request(&rq);
    if (rc == 0 && timed_out)
        rc = wb_error_set(WB_ETIMEOUT, "--timeout of %g s reached; the points measured so far are in the file",
                          c->o->common.timeout_s);
    if (rc == 0 && done > 0 && !v.passed)
        rc = wb_error_set(WB_EVERIFY, "point %d (%s, %d files) failed verification: max error %.3g, %d of %d tones",
                          id, p->scenario, p->nfiles, v.max_error, v.tones_found, v.tones_expected);
    return rc;
}

/* Root: list the inputs and decode each once, keeping the good ones (or failing on the first bad one). */
static int load_inputs(struct ctx *c)
{
    const struct wb_fft_opts *f = c->f;
    char **all = NULL;
    int nall = 0, rc = wb_audio_list_inputs(f->inputs, f->ninputs, &all, &nall);
    if (rc)
        return rc;
    c->files = calloc((size_t)nall, sizeof *c->files);
    if (!c->files) {
        wb_audio_free_list(&all, nall);
        return wb_error_set(WB_ENOMEM, "out of memory");
    }
    for (int i = 0; rc == 0 && i < nall; i++) {
        struct wb_audio a = {0};
        int bad = wb_audio_read_wav(all[i], &a);
        /* 16-bit samples travel as 16-bit only if every file is 8- or 16-bit PCM: that is exact. */
        if (bad == 0 && (a.is_float || a.bits > 16))
            c->input = WB_FFT_IN_NATIVE;
        if (bad == 0 && f->mode == WB_MODE_STFT && a.nsamples < f->frame && f->sweep == WB_SWEEP_NONE)
            bad = wb_error_set(WB_EINPUT, "%s: %lld samples is shorter than one frame of %lld; use a smaller --frame",
                               all[i], (long long)a.nsamples, (long long)f->frame);
        wb_audio_free(&a);
        if (bad && f->on_bad_input == WB_BAD_FAIL) {
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", wb_error_message());
            rc = wb_error_set(WB_EINPUT, "%s (add --on-bad-input skip to go on without it)", msg);
        } else if (bad) {
            wb_report_warn("skipping %s", wb_error_message());
        } else {
            c->files[c->nfiles_in++] = all[i];
            all[i] = NULL;
        }
    }
    wb_audio_free_list(&all, nall);
    if (rc == 0 && c->nfiles_in == 0)
        rc = wb_error_set(WB_EINPUT, "none of the --input files is usable; see the warnings above");
    return rc;
}

static int build_points(const struct ctx *c, struct point **out, int *n)
{
    const struct wb_fft_opts *f = c->f;
    int cap = f->nseconds + f->nfiles + 1, k = 0;
    struct point *p = calloc((size_t)cap, sizeof *p);
    if (!p)
        return wb_error_set(WB_ENOMEM, "out of memory");
    if (f->sweep == WB_SWEEP_SIZES || f->sweep == WB_SWEEP_BOTH)
        for (int i = 0; i < f->nseconds; i++)
            p[k++] = (struct point){"sizes", 1, f->seconds[i]};
    if (f->sweep == WB_SWEEP_FILES || f->sweep == WB_SWEEP_BOTH)
        for (int i = 0; i < f->nfiles; i++)
            p[k++] = (struct point){"files", (int)f->files[i], f->file_seconds};
    if (f->sweep == WB_SWEEP_NONE)
        p[k++] = (struct point){"inputs", c->nfiles_in, 0};
    *out = p;
    *n = k;
    return 0;
}

/* Rank 0 reads the wisdom file and every rank imports it, so a cluster plans once. */
static int share_wisdom(struct ctx *c)
{
    char *w = NULL;
    int64_t len = 0;
    if (c->rank == 0) {
        FILE *fp = fopen(c->f->wisdom, "r");
        if (fp) {
            fseek(fp, 0, SEEK_END);
            long sz = ftell(fp);
            rewind(fp);
            w = malloc((size_t)(sz > 0 ? sz : 0) + 1);
            len = w && sz > 0 && fread(w, 1, (size_t)sz, fp) == (size_t)sz ? sz : 0;
            if (w)
                w[len] = '\0';
            fclose(fp);
        }
    }
    int rc = c->baseline ? 0 : wb_comm_bcast(&len, sizeof len, 0);
    if (rc == 0 && len > 0) {
        if (c->rank != 0)
            w = malloc((size_t)len + 1);
        rc = w ? (c->baseline ? 0 : wb_comm_bcast(w, (size_t)len, 0)) : wb_error_set(WB_ENOMEM, "out of memory");
        if (rc == 0) {
            w[len] = '\0';
            rc = wb_fft_wisdom_import(w);
            if (rc)
                rc = wb_error_set(WB_EUSAGE, "--wisdom %s: %s; delete it to plan afresh", c->f->wisdom,
                                  wb_error_message());
        }
    }
    free(w);
    return c->baseline ? rc : wb_comm_agree(rc);
}

static void save_wisdom(const struct ctx *c)
{
    if (c->rank != 0)
        return;
    char *w = wb_fft_wisdom_export(), tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", c->f->wisdom);
    FILE *fp = w ? fopen(tmp, "w") : NULL;
    int ok = fp && fputs(w, fp) >= 0;
    if (fp && fclose(fp) != 0)
        ok = 0;
    if (!ok || rename(tmp, c->f->wisdom) != 0)
        wb_report_warn("could not save FFTW wisdom to %s", c->f->wisdom);
    free(w);
}

int wb_bench_fft_run(const struct wb_options *o, struct wb_results *res)
{
    struct ctx c = {.o = o, .f = &o->fft, .res = res, .rank = wb_comm_rank(), .nranks = wb_comm_size()};
    c.baseline = o->fft.baseline;
    c.input = o->fft.wire_native ? WB_FFT_IN_NATIVE : WB_FFT_IN_S16;
    c.first_compute = o->fft.root_computes || c.nranks == 1 ? 0 : 1;
    c.t_start = wb_timer_now_s();
    int rc = 0;
    if (c.baseline && c.nranks > 1)
        return wb_error_set(WB_EUSAGE, "--baseline runs in one process; start it with mpirun -np 1 (or without "
                                       "mpirun), not on %d ranks", c.nranks);
    c.node = MPI_COMM_NULL;
    if (!c.baseline && c.nranks > 1 && o->fft.local_shm && o->fft.schedule == WB_SCHED_STATIC) {
        c.mapped = calloc((size_t)c.nranks, sizeof *c.mapped);
        c.done_flags = calloc((size_t)c.nranks, sizeof *c.done_flags);
        rc = c.mapped && c.done_flags ? wb_comm_split_node(&c.node, &c.root_local)
                                      : wb_error_set(WB_ENOMEM, "out of memory");
        int me = rc == 0 && c.root_local >= 0;
        if (rc == 0)
            rc = wb_comm_check(MPI_Allgather(&me, 1, MPI_INT, c.mapped, 1, MPI_INT, wb_comm_world()), "MPI_Allgather");
        for (int q = 1; rc == 0 && q < c.nranks; q++)
            c.shm |= c.mapped[q];
        rc = wb_comm_agree(rc);
    }
    if (o->fft.ninputs > 0 && c.rank == 0)
        rc = load_inputs(&c);
    rc = c.baseline ? rc : wb_comm_agree(rc);
    if (rc == 0 && !c.baseline)
        rc = wb_comm_bcast(&c.nfiles_in, sizeof c.nfiles_in, 0);
    if (rc == 0 && !c.baseline)
        rc = wb_comm_bcast(&c.input, sizeof c.input, 0);
    c.sb = wb_fft_input_bytes(c.input, o->fft.precision);
    if (rc == 0 && o->fft.wisdom)
        rc = share_wisdom(&c);
    struct point *pts = NULL;
    int npts = 0;
    if (rc == 0)
        rc = build_points(&c, &pts, &npts);
    static const char *const modes[] = {"stft", "whole"}, *const precs[] = {"single", "double"},
                             *const scheds[] = {"static", "dynamic"};
    if (rc == 0) {
        if (o->fft.mode == WB_MODE_STFT)
            wb_report_printf("# wulfbench fft: stft frame %lld hop %lld, %s precision, %s schedule, %d rank%s%s\n",
                             (long long)o->fft.frame, (long long)o->fft.hop, precs[o->fft.precision],
                             scheds[o->fft.schedule], c.nranks, c.nranks > 1 ? "s" : "",
                             c.baseline ? " (baseline: no messaging)" : c.first_compute ? ", root only distributes" : "");
        else
            wb_report_printf("# wulfbench fft: %s transform per file, %s precision, %s schedule, %d rank%s%s\n",
                             modes[o->fft.mode], precs[o->fft.precision], scheds[o->fft.schedule], c.nranks,
                             c.nranks > 1 ? "s" : "", c.baseline ? " (baseline: no messaging)" : "");
        wb_report_printf("# times: median over %d reps of the slowest rank, in ms; kB/s = audio bytes / 1000 / t_total\n",
                         o->common.reps);
        wb_report_printf("%-5s %-7s %6s %8s %6s %12s %9s %9s %9s %9s %9s %9s %11s %7s %s\n", "#point", "scenario",
                         "files", "seconds", "ranks", "audio_bytes", "t_read", "t_dist", "t_comp", "t_fft", "t_gather",
                         "t_total", "kB/s", "GFLOPS", "verify");
    }
    int failed = 0;
    double progress = 0, total = (double)npts * (o->common.warmup + o->common.reps);
    for (int i = 0; rc == 0 && i < npts; i++) {
        rc = run_point(&c, i, &pts[i], &progress, total);
        if (rc == WB_EVERIFY) {
            wb_report_error("%s", wb_error_message());
            failed = 1;
            rc = 0;
        }
    }
    wb_report_progress_end();
    if (rc == 0 && o->fft.wisdom)
        save_wisdom(&c);
    for (int i = 0; i < c.kern.count; i++)
        wb_fft_kernel_destroy(&c.kern.k[i]);
    for (int i = 0; i < c.synth_cached; i++)
        wb_audio_free(&c.synth_cache[i]);
    free(c.synth_cache);
    for (int i = 0; c.files && i < c.nfiles_in; i++)
        free(c.files[i]);
    free(c.mapped);
    free(c.done_flags);
    if (c.node != MPI_COMM_NULL)
        MPI_Comm_free(&c.node);
    free(c.files);
    free(pts);
    if (rc == 0 && failed)
        rc = wb_error_set(WB_EVERIFY, "verification failed; the file is marked invalid (see the verify groups)");
    return rc;
}
