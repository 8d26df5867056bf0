/* Reference pipelines for `make bench`, written without any wulfbench code.
 *
 *   fft_ref pipeline single|double FRAME FILES REPS [WISDOM]
 *     The whole compute of `wulfbench fft --baseline --sweep files --files FILES` done the best way
 *     found: FILES files of 5 s of 16-bit samples at 44.1 kHz, frames of FRAME, hop FRAME/2;
 *     16-bit samples times a Hann window with 1/32768 folded in, in the transform's precision; r2c
 *     one frame at a time with an FFTW_PATIENT plan (wisdom kept in WISDOM); sqrt(re^2 + im^2) into
 *     one array of spectra. Frames go through in blocks of the batch that ran fastest here (the
 *     quickest of three passes each).
 *   fft_ref r2c single|double LENGTH REPS [estimate|measure|patient [WISDOM]]
 *     A bare r2c of one array of LENGTH points (FFTW_MEASURE by default, input may be overwritten),
 *     as `--mode whole` plans it.
 * WISDOM is read (if it exists) and written in the format of wulfbench's --wisdom, so wulfbench
 * can run the very plan the reference timed.
 *   fft_ref phase FRAMES FRAME REPS
 *     The FFT phase alone: a batch-16 single-precision r2c plan (FFTW_MEASURE) streamed over FRAMES
 *     frames, no window and no magnitudes.
 * Each prints one line of key value pairs; median_s is the median over REPS of one pass. */
#define _POSIX_C_SOURCE 200809L
#include <fftw3.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PI 3.14159265358979323846

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

static void *xmalloc(size_t n)
{
    void *p = fftw_malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "fft_ref: out of memory for %zu bytes\n", n);
        exit(1);
    }
    return p;
}

static unsigned effort(const char *s)
{
    return !strcmp(s, "estimate") ? FFTW_ESTIMATE : !strcmp(s, "patient") ? FFTW_PATIENT : FFTW_MEASURE;
}

/* Wisdom in wulfbench's --wisdom format (double-precision wisdom, a newline, single-precision
 * wisdom), so a run of each can share one plan. A missing file is no error. */
static void wisdom_load(const char *path)
{
    FILE *fp = path ? fopen(path, "r") : NULL;
    if (!fp)
        return;
    char *w = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&w, &len);
    for (int ch; mem && (ch = fgetc(fp)) != EOF;)
        fputc(ch, mem);
    fclose(fp);
    if (!mem || fclose(mem) != 0 || !w)
        return;
    char *split = strstr(w, "\n(fftw-3");
    if (split)
        *split = '\0';
    if (!fftw_import_wisdom_from_string(w) || (split && !fftwf_import_wisdom_from_string(split + 1)))
        fprintf(stderr, "fft_ref: %s is not FFTW wisdom of this version; planning afresh\n", path);
    free(w);
}

static void wisdom_save(const char *path)
{
    char *d = fftw_export_wisdom_to_string(), *f = fftwf_export_wisdom_to_string();
    FILE *fp = path && d && f ? fopen(path, "w") : NULL;
    if (!fp || fprintf(fp, "%s\n%s", d, f) < 0 || fclose(fp) != 0)
        fprintf(stderr, "fft_ref: could not save wisdom to %s\n", path ? path : "(none)");
    free(d);
    free(f);
}

/* The work: files of 16-bit samples back to back, and the frames of each file. */
struct work {
    int dbl, n, nb, hop, files, batch;
    long file_samples, frames_per_file, frames;
    int16_t *pcm;
    void *win, *in, *out, *spectra;
    int in_stride, out_stride; /* reals between frames; complex values between spectra (64-byte multiples) */
    fftwf_plan pf;
    fftw_plan pd;
};

/* Windows, transforms and reduces frames [f0, f0 + count) of file j, count <= batch. */
static void block_f(struct work *w, long j, long f0, long count)
{
    const float *win = w->win;
    for (long f = 0; f < count; f++) {
        const int16_t *s = w->pcm + j * w->file_samples + (f0 + f) * w->hop;
        float *x = (float *)w->in + f * w->in_stride;
        for (int i = 0; i < w->n; i++)
            x[i] = (float)s[i] * win[i];
    }
    for (long f = 0; f < count; f++)
        fftwf_execute_dft_r2c(w->pf, (float *)w->in + f * w->in_stride, (fftwf_complex *)w->out + f * w->out_stride);
    for (long f = 0; f < count; f++) {
        const fftwf_complex *c = (const fftwf_complex *)w->out + f * w->out_stride;
        float *m = (float *)w->spectra + (j * w->frames_per_file + f0 + f) * w->nb;
        for (int b = 0; b < w->nb; b++)
            m[b] = sqrtf(c[b][0] * c[b][0] + c[b][1] * c[b][1]);
    }
}

static void block_d(struct work *w, long j, long f0, long count)
{
    const double *win = w->win;
    for (long f = 0; f < count; f++) {
        const int16_t *s = w->pcm + j * w->file_samples + (f0 + f) * w->hop;
        double *x = (double *)w->in + f * w->in_stride;
        for (int i = 0; i < w->n; i++)
            x[i] = (double)s[i] * win[i];
    }
    for (long f = 0; f < count; f++)
        fftw_execute_dft_r2c(w->pd, (double *)w->in + f * w->in_stride, (fftw_complex *)w->out + f * w->out_stride);
    for (long f = 0; f < count; f++) {
        const fftw_complex *c = (const fftw_complex *)w->out + f * w->out_stride;
        double *m = (double *)w->spectra + (j * w->frames_per_file + f0 + f) * w->nb;
        for (int b = 0; b < w->nb; b++)
            m[b] = sqrt(c[b][0] * c[b][0] + c[b][1] * c[b][1]);
    }
}

/* CPU seconds this thread has run: under a hypervisor that accounts steal apart (Linux's
 * paravirtual time accounting), the time another guest took is not in it. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double pass_cpu_s; /* the CPU time of the last pass */

static double pass(struct work *w)
{
    double t0 = now_s(), c0 = cpu_s();
    for (long j = 0; j < w->files; j++)
        for (long f = 0; f < w->frames_per_file; f += w->batch) {
            long count = w->frames_per_file - f < w->batch ? w->frames_per_file - f : w->batch;
            if (w->dbl)
                block_d(w, j, f, count);
            else
                block_f(w, j, f, count);
        }
    pass_cpu_s = cpu_s() - c0;
    return now_s() - t0;
}

/* The pipeline's buffers, plan, window and samples, and its own best batch; 0 or 1 (said why). */
static int pipeline_setup(struct work *ww, int dbl, int n, int files, const char *wisdom)
{
    static const int batches[] = {1, 2, 4, 8, 16, 32};
    struct work w = {.dbl = dbl, .n = n, .nb = n / 2 + 1, .hop = n / 2, .files = files, .file_samples = 220500};
    size_t sb = dbl ? sizeof(double) : sizeof(float);
    w.frames_per_file = w.file_samples < n ? 0 : 1 + (w.file_samples - n) / w.hop;
    w.frames = w.frames_per_file * files;
    w.in_stride = (int)((((size_t)n * sb + 63) / 64 * 64) / sb);
    w.out_stride = (int)((((size_t)w.nb * 2 * sb + 63) / 64 * 64) / (2 * sb));
    w.pcm = xmalloc(sizeof(int16_t) * (size_t)(w.file_samples * files));
    w.win = xmalloc(sb * (size_t)n);
    w.in = xmalloc(sb * (size_t)w.in_stride * 32);
    w.out = xmalloc(2 * sb * (size_t)w.out_stride * 32);
    w.spectra = xmalloc(sb * (size_t)w.nb * (size_t)w.frames);
    wisdom_load(wisdom);
    unsigned flags = FFTW_PATIENT; /* preserving the input, as wulfbench plans */
    if (dbl)
        w.pd = fftw_plan_dft_r2c_1d(n, w.in, w.out, flags);
    else
        w.pf = fftwf_plan_dft_r2c_1d(n, w.in, w.out, flags);
    if (dbl ? !w.pd : !w.pf) {
        fprintf(stderr, "fft_ref: FFTW could not plan r2c of %d points\n", n);
        return 1;
    }
    if (wisdom)
        wisdom_save(wisdom);
    for (int i = 0; i < n; i++) {
        double v = (0.5 - 0.5 * cos(2 * PI * i / n)) / 32768.0;
        if (dbl)
            ((double *)w.win)[i] = v;
        else
            ((float *)w.win)[i] = (float)v;
    }
    uint64_t x = 12345;
    for (long i = 0; i < w.file_samples * files; i++) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        w.pcm[i] = (int16_t)(x >> 48) / 4;
    }
    /* Its own best batch: after a first pass that touches every page, the fastest of three passes per
     * candidate, the order turning each round (one pass each picked a different batch run to run). */
    enum { NB = sizeof batches / sizeof batches[0] };
    w.batch = 1;
    pass(&w);
    double best[NB];
    for (int c = 0; c < NB; c++)
        best[c] = INFINITY;
    for (int r = 0; r < 3; r++)
        for (int i = 0; i < NB; i++) {
            int c = (i + r) % NB;
            w.batch = batches[c];
            best[c] = fmin(best[c], pass(&w));
        }
    int pick = 0;
    for (int c = 1; c < NB; c++)
        if (best[c] < best[pick])
            pick = c;
    w.batch = batches[pick];
    *ww = w;
    return 0;
}

static int pipeline(int dbl, int n, int files, int reps, const char *wisdom)
{
    struct work w;
    if (pipeline_setup(&w, dbl, n, files, wisdom))
        return 1;
    double *t = malloc(sizeof *t * (size_t)reps), *cpu = malloc(sizeof *cpu * (size_t)reps);
    for (int r = 0; r < reps; r++) {
        t[r] = pass(&w);
        cpu[r] = pass_cpu_s;
    }
    double med = median(t, reps), cmed = median(cpu, reps);
    printf("frames %ld n %d batch %d median_s %.6f min_s %.6f cpu_median_s %.6f\n", w.frames, n, w.batch, med, t[0], cmed);
    free(t);
    free(cpu);
    return 0;
}

static int bare_r2c(int dbl, int n, int reps, unsigned flags, const char *wisdom)
{
    wisdom_load(wisdom);
    size_t sb = dbl ? sizeof(double) : sizeof(float);
    void *in = xmalloc(sb * (size_t)n), *out = xmalloc(2 * sb * (size_t)(n / 2 + 1)), *keep = xmalloc(sb * (size_t)n);
    /* FFTW's default for r2c (the input preserved), as wulfbench and FFTW's own tools plan. */
    fftw_plan pd = dbl ? fftw_plan_dft_r2c_1d(n, in, out, flags) : NULL;
    fftwf_plan pf = dbl ? NULL : fftwf_plan_dft_r2c_1d(n, in, out, flags);
    if (dbl ? !pd : !pf) {
        fprintf(stderr, "fft_ref: FFTW could not plan r2c of %d points\n", n);
        return 1;
    }
    if (wisdom)
        wisdom_save(wisdom);
    for (int i = 0; i < n; i++) {
        double v = sin(0.001 * i);
        if (dbl)
            ((double *)keep)[i] = v;
        else
            ((float *)keep)[i] = (float)v;
    }
    double *t = malloc(sizeof *t * (size_t)reps);
    for (int r = -1; r < reps; r++) {
        memcpy(in, keep, sb * (size_t)n);
        double t0 = now_s();
        if (dbl)
            fftw_execute(pd);
        else
            fftwf_execute(pf);
        if (r >= 0)
            t[r] = now_s() - t0;
    }
    printf("n %d median_s %.6f\n", n, median(t, reps));
    free(t);
    return 0;
}

static int fft_phase(long frames, int n, int reps)
{
    int batch = 16, nb = n / 2 + 1;
    frames -= frames % batch;
    float *in = xmalloc(sizeof(float) * (size_t)n * (size_t)frames);
    fftwf_complex *out = xmalloc(sizeof(fftwf_complex) * (size_t)nb * (size_t)frames);
    fftwf_plan p = fftwf_plan_many_dft_r2c(1, &n, batch, in, NULL, 1, n, out, NULL, 1, nb, FFTW_MEASURE);
    if (!p) {
        fprintf(stderr, "fft_ref: FFTW could not plan r2c of %d points\n", n);
        return 1;
    }
    for (long i = 0; i < (long)n * frames; i++)
        in[i] = (float)sin(0.001 * (double)i);
    double *t = malloc(sizeof *t * (size_t)reps);
    for (int r = -1; r < reps; r++) {
        double t0 = now_s();
        for (long f = 0; f < frames; f += batch)
            fftwf_execute_dft_r2c(p, in + f * n, out + f * nb);
        if (r >= 0)
            t[r] = now_s() - t0;
    }
    double med = median(t, reps), flops = 2.5 * n * log2(n) * (double)frames;
    printf("frames %ld n %d median_s %.6f gflops %.3f\n", frames, n, med, flops / med / 1e9);
    free(t);
    return 0;
}

#ifndef FFT_REF_NO_MAIN
int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int dbl = argc > 2 && !strcmp(argv[2], "double");
    if (!strcmp(mode, "pipeline") && argc >= 6 && atoi(argv[3]) >= 16 && atoi(argv[4]) >= 1 && atoi(argv[5]) >= 1)
        return pipeline(dbl, atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), argc > 6 ? argv[6] : NULL);
    if (!strcmp(mode, "r2c") && argc >= 5 && atoi(argv[3]) >= 2 && atoi(argv[4]) >= 1)
        return bare_r2c(dbl, atoi(argv[3]), atoi(argv[4]), effort(argc > 5 ? argv[5] : "measure"),
                        argc > 6 ? argv[6] : NULL);
    if (!strcmp(mode, "phase") && argc >= 5 && atol(argv[2]) >= 16 && atoi(argv[3]) >= 16 && atoi(argv[4]) >= 1)
        return fft_phase(atol(argv[2]), atoi(argv[3]), atoi(argv[4]));
    fprintf(stderr, "usage: fft_ref pipeline single|double FRAME FILES REPS [WISDOM]\n"
                    "       fft_ref r2c single|double LENGTH REPS [estimate|measure|patient [WISDOM]]\n"
                    "       fft_ref phase FRAMES FRAME REPS\n");
    return 2;
}
#endif
