#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/audio.h"
#include "core/pagecache.h"
#include "core/timer.h"
#include "bench/fft/bench_fft_int.h"
#include "par/comm.h"
#include "core/error.h"
#include "fftw/fft.h"
#include "bench/options.h"
#include "bench/fft/options_fft.h"
#include "core/report.h"
#include "io/results.h"

int wb_fftb_rootbuf_alloc(struct wb_fftb_ctx *c, struct wb_comm_shm *b, int64_t bytes)
{
    b->ptr = NULL;
    b->win = MPI_WIN_NULL;
    if (c->use_shm)
        return wb_comm_shm_alloc(b, &c->shm, bytes);
    int rc = 0;
    if (c->rank == 0 && !(b->ptr = wb_fft_alloc((size_t)bytes)))
        rc = wb_error_set(WB_ENOMEM, "out of memory for %lld bytes", (long long)bytes);
    return wb_comm_agree(rc);
}

void wb_fftb_rootbuf_free(struct wb_comm_shm *b)
{
    if (b->win != MPI_WIN_NULL)
        wb_comm_shm_free(b);
    else
        wb_fft_free(b->ptr);
    b->ptr = NULL;
}

void wb_fftb_request_free(struct wb_fftb_request *rq)
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

/* Samples wb_audio_synth makes for seconds at rate_hz (it rounds to the nearest sample); a
 * mismatch is caught when the file is made. */
static int64_t synth_samples(double seconds, int32_t rate_hz) { return (int64_t)floor(seconds * rate_hz + 0.5); }

/* A decoded file fitted to the point's length (points without one keep the file's). */
static int fit_point(const struct wb_fftb_point *p, struct wb_audio *a)
{
    return p->seconds > 0 ? fit_length(a, (int64_t)llround(p->seconds * a->sample_rate_hz)) : 0;
}

/* One WAV file of a request, decoded and fitted to the point's length. */
static int get_file(struct wb_fftb_ctx *c, const struct wb_fftb_point *p, int j, struct wb_audio *a,
                    double *io_s)
{
    int rc = wb_audio_read_wav_timed(c->files[j % c->nfiles_in], a, io_s);
    return rc ? rc : fit_point(p, a);
}

/* The table row of file j: a decoded WAV file, or (a == NULL) synthetic audio, accounted as the
 * 16-bit PCM file it stands for. */
static void describe_file(struct wb_fftb_ctx *c, const struct wb_fftb_point *p, int j, const struct wb_audio *a,
                          struct wb_result_input *row)
{
    if (a) {
        *row = (struct wb_result_input){.sample_rate = a->sample_rate_hz, .channels = a->channels, .bits = a->bits,
                                        .samples = a->nsamples, .bytes = a->data_bytes, .peak_hz = NAN};
        snprintf(row->name, sizeof row->name, "%s", a->name);
        return;
    }
    int64_t n = synth_samples(p->seconds, c->f->sample_rate_hz);
    *row = (struct wb_result_input){.sample_rate = c->f->sample_rate_hz, .channels = 1, .bits = 16, .samples = n,
                                    .bytes = 2 * n, .peak_hz = NAN};
    snprintf(row->name, sizeof row->name, "synth-%d", j);
}

/* The probe read: lengths, offsets and the table of inputs. */
static int probe_request(struct wb_fftb_ctx *c, const struct wb_fftb_point *p, struct wb_fftb_request *rq)
{
    int rc = 0;
    rq->nfiles = p->nfiles;
    rq->file_samples = calloc((size_t)p->nfiles, sizeof *rq->file_samples);
    rq->file_off = calloc((size_t)p->nfiles, sizeof *rq->file_off);
    rq->rows = calloc((size_t)p->nfiles, sizeof *rq->rows);
    if (!rq->file_samples || !rq->file_off || !rq->rows)
        return wb_error_set(WB_ENOMEM, "out of memory");
    rq->audio_bytes = 0;
    for (int j = 0; j < p->nfiles && rc == 0; j++) {
        struct wb_audio a = {0};
        int synthetic = c->nfiles_in == 0;
        double io_s;
        rc = synthetic ? 0 : get_file(c, p, j, &a, &io_s);
        if (rc == 0) {
            describe_file(c, p, j, synthetic ? NULL : &a, &rq->rows[j]);
            rq->file_samples[j] = rq->rows[j].samples;
            rq->file_off[j] = j ? rq->file_off[j - 1] + rq->file_samples[j - 1] : 0;
            rq->audio_bytes += rq->rows[j].bytes;
        }
        wb_audio_free(&a);
    }
    return rc;
}

/* Stores file j's decoded samples at its place in rq->buf, if it still has its probed length. */
static int store_file(struct wb_fftb_ctx *c, struct wb_fftb_request *rq, int j, const struct wb_audio *a)
{
    if (a->nsamples != rq->file_samples[j])
        return wb_error_set(WB_EINPUT, "%s changed length during the run (%lld samples, then %lld)", a->name,
                            (long long)rq->file_samples[j], (long long)a->nsamples);
    wb_fft_store(rq->buf + (size_t)rq->file_off[j] * c->sb, a->samples, a->nsamples, c->input, c->f->precision);
    return 0;
}

int wb_fftb_make_synthetic(struct wb_fftb_ctx *c, const struct wb_fftb_point *p, struct wb_fftb_request *rq)
{
    int rc = 0;
    for (int j = 0; c->nfiles_in == 0 && j < p->nfiles && rc == 0; j++) {
        struct wb_audio a = {0};
        rc = wb_audio_synth(&a, p->seconds, c->f->sample_rate_hz, c->o->common.seed, j);
        if (rc == 0)
            rc = store_file(c, rq, j, &a);
        wb_audio_free(&a);
    }
    return rc;
}

double wb_fftb_drop_inputs(struct wb_fftb_ctx *c, const struct wb_fftb_point *p)
{
    double most = 0, resident;
    /* A file listed again in one request is read cold once, then from memory, as any reader would. */
    for (int j = 0; j < p->nfiles && j < c->nfiles_in; j++) {
        wb_pagecache_drop(c->files[j], geteuid() == 0, &resident);
        most = fmax(most, resident);
    }
    return most;
}

/* A file's bytes read by a thread of its own while the caller decodes the file before it, so that a
 * request's read takes about the larger of the disk's time and the decode's, not their sum. */
struct ahead {
    const char *path;
    unsigned char *buf;
    size_t len;
    int ok, started;
    pthread_t thread;
};

static void *ahead_run(void *arg)
{
    struct ahead *a = arg;
    a->ok = wb_audio_load_quiet(a->path, &a->buf, &a->len) == 0;
    return NULL;
}

static void ahead_start(struct ahead *a, const char *path)
{
    *a = (struct ahead){.path = path};
    a->started = pthread_create(&a->thread, NULL, ahead_run, a) == 0;
}

/* Waits for the read started by ahead_start; the seconds waited. */
static double ahead_wait(struct ahead *a)
{
    double t0 = wb_timer_now_s();
    if (a->started)
        pthread_join(a->thread, NULL);
    a->started = 0;
    return wb_timer_now_s() - t0;
}

/* File j from the bytes read ahead; where that read failed (or its thread did not start), read again
 * here, which names what went wrong. */
static int take_file(struct wb_fftb_ctx *c, const struct wb_fftb_point *p, int j, struct ahead *a,
                     struct wb_audio *out, double *io_s)
{
    if (!a->ok)
        return get_file(c, p, j, out, io_s);
    *io_s = 0;
    int rc = wb_audio_decode_wav(a->buf, a->len, a->path, out);
    return rc ? rc : fit_point(p, out);
}

int wb_fftb_read_request(struct wb_fftb_ctx *c, const struct wb_fftb_point *p, struct wb_fftb_request *rq,
                         int probe)
{
    if (probe)
        return probe_request(c, p, rq);
    int rc = 0, n = c->nfiles_in > 0 ? p->nfiles : 0;
    /* two slots, each reused only after its thread was joined: file j's in slot j % 2 */
    struct ahead slot[2] = {0};
    rq->io_s = 0;
    if (n > 0)
        ahead_start(&slot[0], c->files[0]);
    for (int j = 0; j < n && rc == 0; j++) {
        struct ahead *cur = &slot[j % 2];
        struct wb_audio a = {0};
        double io_s = 0;
        /* t_read_io: the time the request waited for bytes, which the decode did not hide */
        rq->io_s += ahead_wait(cur);
        if (j + 1 < n)
            ahead_start(&slot[(j + 1) % 2], c->files[(j + 1) % c->nfiles_in]);
        rc = take_file(c, p, j, cur, &a, &io_s);
        rq->io_s += io_s;
        free(cur->buf);
        cur->buf = NULL;
        if (rc == 0)
            rc = store_file(c, rq, j, &a);
        wb_audio_free(&a);
    }
    for (int k = 0; k < 2; k++) {
        ahead_wait(&slot[k]);
        free(slot[k].buf);
    }
    return rc;
}

int wb_fftb_share_lengths(struct wb_fftb_ctx *c, struct wb_fftb_request *rq, int nfiles)
{
    int rc = 0;
    if (c->rank != 0) {
        rq->nfiles = nfiles;
        rq->file_samples = calloc((size_t)nfiles, sizeof *rq->file_samples);
        rq->file_off = calloc((size_t)nfiles, sizeof *rq->file_off);
        if (!rq->file_samples || !rq->file_off)
            rc = wb_error_set(WB_ENOMEM, "out of memory");
    }
    rc = wb_comm_agree(rc);
    if (rc == 0)
        rc = wb_comm_bcast(rq->file_samples, (size_t)nfiles * sizeof(int64_t), 0);
    for (int j = 0; rc == 0 && j < nfiles; j++)
        rq->file_off[j] = j ? rq->file_off[j - 1] + rq->file_samples[j - 1] : 0;
    rq->total_samples = rc == 0 && nfiles ? rq->file_off[nfiles - 1] + rq->file_samples[nfiles - 1] : 0;
    return rc;
}

/* One input file, decoded once: 0 if usable, else the reason. */
static int probe_input(struct wb_fftb_ctx *c, const char *path)
{
    const struct wb_fft_opts *f = c->f;
    struct wb_audio a = {0};
    int bad = wb_audio_read_wav(path, &a);
    /* 16-bit samples travel as 16-bit only if every file is 8- or 16-bit PCM: that is exact. */
    if (bad == 0 && (a.is_float || a.bits > 16))
        c->input = WB_FFT_IN_NATIVE;
    if (bad == 0 && f->mode == WB_MODE_STFT && a.nsamples < f->frame && f->sweep == WB_SWEEP_NONE)
        bad = wb_error_set(WB_EINPUT, "%s: %lld samples is shorter than one frame of %lld; use a smaller --frame",
                           path, (long long)a.nsamples, (long long)f->frame);
    wb_audio_free(&a);
    return bad;
}

int wb_fftb_load_inputs(struct wb_fftb_ctx *c)
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
        int bad = probe_input(c, all[i]);
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

void wb_fftb_inputs_free(struct wb_fftb_ctx *c)
{
    for (int i = 0; c->files && i < c->nfiles_in; i++)
        free(c->files[i]);
    free(c->files);
    c->files = NULL;
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
