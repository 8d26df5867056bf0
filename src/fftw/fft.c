#include "fftw/fft.h"

#include <fftw3.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/sysinfo.h"
#include "core/timer.h"
#include "fftw/kernels.h"

#define PI 3.14159265358979323846

/* Frames start a multiple of a cache line apart in buffers that start on one (wb_fft_alloc), so
 * each has the SIMD alignment the one-frame plan was made with, as FFTW's new-array execute
 * requires, and no vector load or store of a frame straddles two lines. */
enum { FRAME_ALIGN_BYTES = WB_FFT_ALIGN_BYTES };

/* The largest batch the kernel picks when the caller leaves the choice to it. */
enum { BATCH_MOST = 32 };

struct wb_fft_kernel {
    int precision, window, input;
    int64_t n, batch, nbins;
    int64_t in_stride, out_stride; /* reals between frames in in; complex values between spectra in out */
    void *in, *out;                /* batch frames; batch spectra */
    void *win;                     /* n reals in the kernel's precision: the window times the input's scale */
    void *check_out;               /* n reals: c2r output of the round-trip check */
    int align_in, align_out;       /* fftw_alignment_of the arrays the plans were made with */
    fftwf_plan pf, pf_inv;
    fftw_plan pd, pd_inv;
};

static unsigned effort_flags(int effort)
{
    return effort == WB_FFT_ESTIMATE ? FFTW_ESTIMATE : effort == WB_FFT_PATIENT ? FFTW_PATIENT : FFTW_MEASURE;
}

size_t wb_fft_sample_bytes(int precision) { return precision == WB_FFT_DOUBLE ? sizeof(double) : sizeof(float); }

size_t wb_fft_result_bytes(int precision, int64_t n, int result)
{
    return result == WB_FFT_PEAKS ? sizeof(struct wb_fft_peak) : (size_t)(n / 2 + 1) * wb_fft_sample_bytes(precision);
}

/* On a cache line, not only at FFTW's SIMD alignment: fftw_malloc gives 32 bytes, and a frame
 * buffer the heap put 32 bytes off a line made every 64-byte load of the magnitudes loop touch two
 * lines. Where the heap put it changed from process to process, and t_compute with it (kernels.md). */
void *wb_fft_alloc(size_t nbytes)
{
    size_t line = WB_FFT_ALIGN_BYTES, want = nbytes ? nbytes : 1;
    /* aligned_alloc wants a multiple of the alignment. */
    return want > SIZE_MAX - line ? NULL : aligned_alloc(line, (want + line - 1) / line * line);
}

void wb_fft_free(void *p) { free(p); }

double wb_fft_flops(int64_t n) { return n > 1 ? 2.5 * (double)n * log2((double)n) : 0.0; }

double wb_fft_tolerance(int precision, int64_t n)
{
    double eps = precision == WB_FFT_DOUBLE ? DBL_EPSILON : FLT_EPSILON;
    /* FFT rounding error grows like log2(n); 50 ulps per stage leaves room for any algorithm FFTW picks. */
    return 50.0 * eps * fmax(1.0, log2((double)n));
}

void wb_fft_convert(void *dst, const float *src, int64_t n, int precision)
{
    if (precision == WB_FFT_DOUBLE) {
        double *d = dst;
        for (int64_t i = 0; i < n; i++)
            d[i] = src[i];
    } else {
        memcpy(dst, src, (size_t)n * sizeof(float));
    }
}

size_t wb_fft_input_bytes(int format, int precision)
{
    return format == WB_FFT_IN_S16 ? sizeof(int16_t) : wb_fft_sample_bytes(precision);
}

void wb_fft_store(void *dst, const float *src, int64_t n, int format, int precision)
{
    if (format != WB_FFT_IN_S16) {
        wb_fft_convert(dst, src, n, precision);
        return;
    }
    int16_t *d = dst;
    for (int64_t i = 0; i < n; i++) {
        float v = src[i] * 32768.0f;
        d[i] = (int16_t)(v >= 32767.0f ? 32767 : v <= -32768.0f ? -32768 : lrintf(v));
    }
}

static int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

static void fill_window(struct wb_fft_kernel *k)
{
    double scale = k->input == WB_FFT_IN_S16 ? 1.0 / 32768.0 : 1.0;
#ifdef WB_TEST_FAULTS
    /* Test-only: a conversion with the wrong scale gives spectra that agree with themselves (Parseval,
     * round trip, a rerun, tones in their bins), which only the DFT check against the samples sees. */
    const char *fault = getenv("WB_FAULT");
    if (fault && !strcmp(fault, "fft-scale"))
        scale *= 2.0;
#endif
    for (int64_t i = 0; i < k->n; i++) {
        /* Periodic Hann, the usual choice for STFT analysis; 16-bit input's scale is folded in. */
        double w = k->window == WB_FFT_HANN ? 0.5 - 0.5 * cos(2.0 * PI * (double)i / (double)k->n) : 1.0;
        if (k->precision == WB_FFT_DOUBLE)
            ((double *)k->win)[i] = w * scale;
        else
            ((float *)k->win)[i] = (float)(w * scale);
    }
}

int64_t wb_fft_kernel_batch(const struct wb_fft_kernel *k) { return k->batch; }

char *wb_fft_kernel_plan_text(const struct wb_fft_kernel *k)
{
    return k->precision == WB_FFT_DOUBLE ? fftw_sprint_plan(k->pd) : fftwf_sprint_plan(k->pf);
}

static void destroy_plans(struct wb_fft_kernel *k)
{
    if (k->pf) fftwf_destroy_plan(k->pf);
    if (k->pf_inv) fftwf_destroy_plan(k->pf_inv);
    if (k->pd) fftw_destroy_plan(k->pd);
    if (k->pd_inv) fftw_destroy_plan(k->pd_inv);
}

void wb_fft_kernel_destroy(struct wb_fft_kernel **kp)
{
    struct wb_fft_kernel *k = *kp;
    if (!k)
        return;
    destroy_plans(k);
    wb_fft_free(k->in);
    wb_fft_free(k->out);
    wb_fft_free(k->win);
    wb_fft_free(k->check_out);
    free(k);
    *kp = NULL;
}

static int alignment_of(const struct wb_fft_kernel *k, void *p)
{
    return k->precision == WB_FFT_DOUBLE ? fftw_alignment_of(p) : fftwf_alignment_of(p);
}

static void *frame_in(const struct wb_fft_kernel *k, int64_t f)
{
    return (char *)k->in + (size_t)(f * k->in_stride) * wb_fft_sample_bytes(k->precision);
}

static void *frame_out(const struct wb_fft_kernel *k, int64_t f)
{
    return (char *)k->out + (size_t)(f * k->out_stride) * 2 * wb_fft_sample_bytes(k->precision);
}

/* (Re)allocates the frame buffers for batch frames; every frame must keep the plans' alignment. */
static int alloc_frames(struct wb_fft_kernel *k, int64_t batch)
{
    size_t sb = wb_fft_sample_bytes(k->precision);
    wb_fft_free(k->in);
    wb_fft_free(k->out);
    k->batch = batch;
    k->in = wb_fft_alloc((size_t)(batch * k->in_stride) * sb);
    k->out = wb_fft_alloc((size_t)(batch * k->out_stride) * 2 * sb);
    if (!k->in || !k->out)
        return wb_error_set(WB_ENOMEM, "out of memory for FFT buffers of %lld x %lld points", (long long)batch,
                            (long long)k->n);
    for (int64_t f = 0; f < batch; f++)
        if (alignment_of(k, frame_in(k, f)) != k->align_in || alignment_of(k, frame_out(k, f)) != k->align_out)
            return wb_error_set(WB_EFFTW, "FFT frame buffers are not aligned as FFTW planned them");
    return 0;
}

static int make_plans(struct wb_fft_kernel *k, int effort)
{
    int ni = (int)k->n;
    /* The forward plan keeps FFTW's default for an out-of-place r2c, preserving the input: that is the
     * problem FFTW's own tool (fftwf-wisdom rof4096) and other programs plan and save, so their wisdom
     * is used. Allowing FFTW to overwrite the scratch input made it another problem: such wisdom never
     * matched, and --plan patient planned afresh in every process, perhaps another plan each time,
     * and no faster. The inverse is for checks only. */
    unsigned flags = effort_flags(effort);
    double t0 = wb_timer_now_s();
    if (k->precision == WB_FFT_DOUBLE) {
        k->pd = fftw_plan_dft_r2c_1d(ni, k->in, k->out, flags);
        k->pd_inv = fftw_plan_dft_c2r_1d(ni, k->out, k->check_out, FFTW_ESTIMATE | FFTW_DESTROY_INPUT);
    } else {
        k->pf = fftwf_plan_dft_r2c_1d(ni, k->in, k->out, flags);
        k->pf_inv = fftwf_plan_dft_c2r_1d(ni, k->out, k->check_out, FFTW_ESTIMATE | FFTW_DESTROY_INPUT);
    }
    wb_timer_part_add(WB_TIMER_PLAN, wb_timer_now_s() - t0);
    int ok = k->precision == WB_FFT_DOUBLE ? k->pd && k->pd_inv : k->pf && k->pf_inv;
    k->align_in = alignment_of(k, k->in);
    k->align_out = alignment_of(k, k->out);
    return ok ? 0 : wb_error_set(WB_EFFTW, "FFTW could not plan a real transform of %lld points", (long long)k->n);
}

/* Windowed frame at samples + off into dst: samples (16-bit or in the kernel's precision) times the
 * scaled window, in the kernel's precision; the loops are the kernels module's, for this CPU. */
static void load_f(const struct wb_fft_kernel *k, const void *samples, int64_t off, float *restrict dst)
{
    if (k->input == WB_FFT_IN_S16)
        wb_kern_window_s16_f(dst, (const int16_t *)samples + off, k->win, k->n);
    else if (k->window == WB_FFT_HANN)
        wb_kern_window_f(dst, (const float *)samples + off, k->win, k->n);
    else
        memcpy(dst, (const float *)samples + off, (size_t)k->n * sizeof *dst);
}

static void load_d(const struct wb_fft_kernel *k, const void *samples, int64_t off, double *restrict dst)
{
    if (k->input == WB_FFT_IN_S16)
        wb_kern_window_s16_d(dst, (const int16_t *)samples + off, k->win, k->n);
    else if (k->window == WB_FFT_HANN)
        wb_kern_window_d(dst, (const double *)samples + off, k->win, k->n);
    else
        memcpy(dst, (const double *)samples + off, (size_t)k->n * sizeof *dst);
}

static void load_frame(const struct wb_fft_kernel *k, const void *samples, int64_t off, int64_t slot)
{
    if (k->precision == WB_FFT_DOUBLE)
        load_d(k, samples, off, frame_in(k, slot));
    else
        load_f(k, samples, off, frame_in(k, slot));
}

static void execute_frame(const struct wb_fft_kernel *k, int64_t slot)
{
    if (k->precision == WB_FFT_DOUBLE)
        fftw_execute_dft_r2c(k->pd, frame_in(k, slot), frame_out(k, slot));
    else
        fftwf_execute_dft_r2c(k->pf, frame_in(k, slot), frame_out(k, slot));
}

/* Magnitudes sqrt(re^2 + im^2) of a spectrum, or its strongest non-DC bin (compared squared). */
static void reduce_f(const fftwf_complex *restrict c, int64_t nb, int result, void *restrict dst)
{
    if (result == WB_FFT_SPECTRA) {
        wb_kern_mag_f(dst, (const float *)c, nb);
        return;
    }
    float best;
    int32_t at = wb_kern_peak_f((const float *)c, nb, &best);
    *(struct wb_fft_peak *)dst = (struct wb_fft_peak){at, at ? sqrtf(best) : -1.0f};
}

static void reduce_d(const fftw_complex *restrict c, int64_t nb, int result, void *restrict dst)
{
    if (result == WB_FFT_SPECTRA) {
        wb_kern_mag_d(dst, (const double *)c, nb);
        return;
    }
    double best;
    int32_t at = wb_kern_peak_d((const double *)c, nb, &best);
    *(struct wb_fft_peak *)dst = (struct wb_fft_peak){at, at ? (float)sqrt(best) : -1.0f};
}

/* The CPU's cycle or timer counter: some 10 ns to read, a third of a clock_gettime here, which
 * counts when it brackets every block of a few frames. Its rate is not needed (below). A hypervisor
 * may trap the read and make it slower than the clock: then the clock is used (counter_ok). */
static int counter_ok = -1;

static uint64_t clock_ns(void) { return (uint64_t)(wb_timer_now_s() * 1e9); }

static inline uint64_t ticks(void) { return WB_TIMER_COUNTER && counter_ok ? wb_timer_counter() : clock_ns(); }

/* Whether the counter is cheaper to read than the clock, and moves: decided once, at the first plan. */
static void counter_decide(void)
{
    if (counter_ok >= 0)
        return;
#ifdef WB_TEST_FAULTS
    /* Test-only: WB_FFT_TIMER=clock times the FFT phase with the clock, to compare with the counter. */
    const char *forced = getenv("WB_FFT_TIMER");
    if (forced && !strcmp(forced, "clock")) {
        counter_ok = 0;
        return;
    }
#endif
    enum { READS = 256 };
    counter_ok = 1;
    volatile uint64_t sink = 0;
    uint64_t c0 = ticks();
    double t0 = wb_timer_now_s();
    for (int i = 0; i < READS; i++)
        sink += ticks();
    double t1 = wb_timer_now_s();
    for (int i = 0; i < READS; i++)
        sink += clock_ns();
    double t2 = wb_timer_now_s();
    counter_ok = ticks() > c0 && t1 - t0 <= t2 - t1;
    (void)sink;
}

int wb_fft_kernel_run(struct wb_fft_kernel *k, const void *samples, int64_t nframes, int64_t hop, int result,
                      void *out, double *t_fft_s)
{
    size_t rb = wb_fft_result_bytes(k->precision, k->n, result);
    /* t_fft is the FFT's share of the ticks of every TIME_EVERY-th block (the first among them) times
     * the call's wall time. That needs the counter to run at a steady rate during one call only, not
     * its rate; and the blocks are alike, the same plan on as many frames. Four reads in 8 blocks,
     * not two in each: at frames of 1024 in batches of 1, two reads a block were 3% of the compute. */
    enum { TIME_EVERY = 8 };
    uint64_t fft_ticks = 0, timed_ticks = 0;
    double wall0 = wb_timer_now_s();
    /* The batch only blocks the window and the reduction around the transforms, which are the same
     * one-frame plan on every frame: results do not depend on it. */
    for (int64_t f = 0, b = 0; f < nframes; f += k->batch, b++) {
        int64_t count = nframes - f < k->batch ? nframes - f : k->batch;
        int timed = t_fft_s && b % TIME_EVERY == 0;
        uint64_t a = timed ? ticks() : 0;
        for (int64_t j = 0; j < count; j++)
            load_frame(k, samples, (f + j) * hop, j);
        uint64_t t0 = timed ? ticks() : 0;
        for (int64_t j = 0; j < count; j++)
            execute_frame(k, j);
        uint64_t t1 = timed ? ticks() : 0;
        for (int64_t j = 0; j < count; j++) {
            char *dst = (char *)out + (size_t)(f + j) * rb;
            if (k->precision == WB_FFT_DOUBLE)
                reduce_d(frame_out(k, j), k->nbins, result, dst);
            else
                reduce_f(frame_out(k, j), k->nbins, result, dst);
        }
        if (timed) {
            fft_ticks += t1 - t0;
            timed_ticks += ticks() - a;
        }
    }
    double wall = wb_timer_now_s() - wall0;
    if (t_fft_s)
        *t_fft_s = nframes <= 0                                   ? 0
                   : timed_ticks > 0 && fft_ticks <= timed_ticks ? wall * ((double)fft_ticks / (double)timed_ticks)
                                                                 : NAN;
    return 0;
}

int64_t wb_fft_batch_for_caches(int64_t frame_bytes, int64_t l1_bytes, int64_t l2_bytes)
{
    if (l1_bytes <= 0)
        l1_bytes = WB_FFT_L1_GUESS;
    if (l2_bytes <= 0)
        l2_bytes = WB_FFT_L2_GUESS;
    if (frame_bytes <= 0 || frame_bytes <= l1_bytes / 2)
        return 1;
    int64_t best = 1;
    double target = (double)l2_bytes / 4, off = fabs(log((double)frame_bytes / target));
    for (int64_t b = 2; b <= BATCH_MOST && b * frame_bytes <= l2_bytes / 2; b *= 2) {
        double o = fabs(log((double)(b * frame_bytes) / target));
        if (o < off) {
            off = o;
            best = b;
        }
    }
    return best;
}

/* The batch for this kernel from the caches of the CPU it runs on (wb_fft_batch_for_caches). */
static int choose_batch(struct wb_fft_kernel *k)
{
    int64_t frame_bytes = (k->in_stride + 2 * k->out_stride) * (int64_t)wb_fft_sample_bytes(k->precision);
    int64_t l1 = wb_sysinfo_cache_bytes(1), l2 = wb_sysinfo_cache_bytes(2);
    return alloc_frames(k, wb_fft_batch_for_caches(frame_bytes, l1, l2));
}

int wb_fft_kernel_plan(struct wb_fft_kernel **kp, const struct wb_fft_spec *s)
{
    *kp = NULL;
    counter_decide();
    int64_t most = s->batch > 0 ? s->batch : BATCH_MOST;
    if (s->n < 2 || s->n > INT32_MAX - FRAME_ALIGN_BYTES || s->batch < 0 || most > INT32_MAX / s->n)
        return wb_error_set(WB_EUSAGE, "transform length %lld in batches of %lld is out of range", (long long)s->n,
                            (long long)s->batch);
    struct wb_fft_kernel *k = calloc(1, sizeof *k);
    if (!k)
        return wb_error_set(WB_ENOMEM, "out of memory for an FFT kernel");
    size_t sb = wb_fft_sample_bytes(s->precision);
    k->precision = s->precision;
    k->window = s->window;
    k->input = s->input;
    k->n = s->n;
    k->nbins = s->n / 2 + 1;
    k->in_stride = round_up(s->n, FRAME_ALIGN_BYTES / (int64_t)sb);
    k->out_stride = round_up(k->nbins, FRAME_ALIGN_BYTES / (2 * (int64_t)sb));
    k->in = wb_fft_alloc((size_t)k->in_stride * sb);
    k->out = wb_fft_alloc((size_t)k->out_stride * 2 * sb);
    k->check_out = wb_fft_alloc((size_t)k->n * sb);
    k->win = wb_fft_alloc((size_t)k->n * sb);
    int rc = k->in && k->out && k->check_out && k->win ? 0 : wb_error_set(WB_ENOMEM, "out of memory for FFT buffers");
    if (rc == 0) {
        fill_window(k);
        rc = make_plans(k, s->effort);
    }
    if (rc == 0)
        rc = s->batch > 0 ? alloc_frames(k, s->batch) : choose_batch(k);
    if (rc) {
        wb_fft_kernel_destroy(&k);
        return rc;
    }
    *kp = k;
    return 0;
}

int wb_fft_kernel_create(struct wb_fft_kernel **kp, int precision, int64_t n, int64_t batch, int window, int effort)
{
    if (batch < 1) {
        *kp = NULL;
        return wb_error_set(WB_EUSAGE, "a batch of %lld frames is out of range", (long long)batch);
    }
    struct wb_fft_spec s = {precision, n, batch, window, effort, WB_FFT_IN_NATIVE};
    return wb_fft_kernel_plan(kp, &s);
}

static double real_at(const struct wb_fft_kernel *k, const void *p, int64_t i)
{
    return k->precision == WB_FFT_DOUBLE ? ((const double *)p)[i] : ((const float *)p)[i];
}

/* Energy of the windowed frame in slot 0 (times n), and its largest absolute sample. */
static void time_energy(const struct wb_fft_kernel *k, double *e_time, double *peak_abs)
{
    double et = 0, pk = 0;
    for (int64_t i = 0; i < k->n; i++) {
        double x = real_at(k, k->in, i);
        et += x * x;
        pk = fmax(pk, fabs(x));
    }
    *e_time = et * (double)k->n;
    *peak_abs = pk;
}

/* Energy of the one-sided spectrum in slot 0. */
static double freq_energy(const struct wb_fft_kernel *k)
{
    double ef = 0;
    for (int64_t b = 0; b < k->nbins; b++) {
        double re = real_at(k, k->out, 2 * b), im = real_at(k, k->out, 2 * b + 1);
        /* Bins other than DC and (for even n) Nyquist stand for two conjugate bins. */
        int twice = b > 0 && !(k->n % 2 == 0 && b == k->n / 2);
        ef += (twice ? 2.0 : 1.0) * (re * re + im * im);
    }
    return ef;
}

/* The largest |y/n - x| of a c2r(r2c(x)) round trip, one loop per precision. */
static double roundtrip_err_d(const double *y, const double *x, int64_t n)
{
    double err = 0;
    for (int64_t i = 0; i < n; i++)
        err = fmax(err, fabs(y[i] / (double)n - x[i]));
    return err;
}

/* GCC 12 for aarch64 (Debian 12's, Raspberry Pi OS bookworm's) stops with an internal compiler error
 * in vect_transform_reduction when it vectorises an fmax reduction whose operands are widened from
 * float, as here (two double vectors per float vector). This check runs outside every timing, so its
 * loop is left scalar there; the double loop above and the kernels still vectorise (docs/kernels.md). */
#if defined(__aarch64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
__attribute__((optimize("no-tree-loop-vectorize")))
#endif
static double roundtrip_err_f(const float *y, const float *x, int64_t n)
{
    double err = 0;
    for (int64_t i = 0; i < n; i++)
        err = fmax(err, fabs((double)y[i] / (double)n - (double)x[i]));
    return err;
}

int wb_fft_kernel_check(struct wb_fft_kernel *k, const void *samples, int64_t nframes, int64_t hop,
                        int64_t max_check, double *parseval_rel, double *roundtrip_rel)
{
    double worst_p = 0, worst_r = 0;
    int64_t step = nframes > max_check && max_check > 0 ? nframes / max_check : 1;
    for (int64_t f = 0; f < nframes; f += step) {
        double et, pk;
        load_frame(k, samples, f * hop, 0);
        time_energy(k, &et, &pk);
        execute_frame(k, 0);
        double ef = freq_energy(k);
        worst_p = fmax(worst_p, fabs(et - ef) / fmax(et, DBL_MIN));
        if (k->precision == WB_FFT_DOUBLE)
            fftw_execute_dft_c2r(k->pd_inv, k->out, k->check_out);
        else
            fftwf_execute_dft_c2r(k->pf_inv, k->out, k->check_out);
        /* The transform may have overwritten its input: load the frame again to compare. */
        load_frame(k, samples, f * hop, 0);
        double err = k->precision == WB_FFT_DOUBLE ? roundtrip_err_d(k->check_out, k->in, k->n)
                                                   : roundtrip_err_f(k->check_out, k->in, k->n);
        /* A silent frame has nothing to compare; its round trip must then be silent too. */
        worst_r = fmax(worst_r, pk > 0 ? err / pk : err);
    }
    *parseval_rel = worst_p;
    *roundtrip_rel = worst_r;
    return 0;
}

/* Most bins one DFT check looks at, and how often its twiddles are recomputed exactly. */
enum { DFT_MAX_BINS = 16, DFT_RESYNC = 32 };

/* exp(-2 pi i j / n) for 0 <= j < n. */
static void twiddle(int64_t j, int64_t n, double *re, double *im)
{
    double a = 2.0 * PI * (double)j / (double)n;
    *re = cos(a);
    *im = -sin(a);
}

/* Magnitudes of bins[count] of the DFT of the windowed frame, by direct summation in one pass over
 * the samples. Twiddles advance by rotation and are recomputed exactly every DFT_RESYNC samples;
 * compensated sums keep the reference's own rounding far below any tolerance, whatever n. */
static void naive_bins(const struct wb_fft_kernel *k, const void *frame, const int64_t *bins, int count, double *mag)
{
    int64_t n = k->n;
    double re[DFT_MAX_BINS] = {0}, im[DFT_MAX_BINS] = {0}, cre[DFT_MAX_BINS] = {0}, cim[DFT_MAX_BINS] = {0};
    double wr[DFT_MAX_BINS], wi[DFT_MAX_BINS], sr[DFT_MAX_BINS], si[DFT_MAX_BINS], hr = 1, hi = 0, hsr, hsi;
    for (int i = 0; i < count; i++)
        twiddle(bins[i], n, &sr[i], &si[i]);
    twiddle(1, n, &hsr, &hsi);
    for (int64_t t = 0; t < n; t++) {
        if (t % DFT_RESYNC == 0) {
            twiddle(t, n, &hr, &hi);
            for (int i = 0; i < count; i++)
                twiddle((int64_t)((uint64_t)bins[i] * (uint64_t)t % (uint64_t)n), n, &wr[i], &wi[i]);
        }
        double s = k->input == WB_FFT_IN_S16 ? ((const int16_t *)frame)[t] / 32768.0 : real_at(k, frame, t);
        double x = s * (k->window == WB_FFT_HANN ? 0.5 - 0.5 * hr : 1.0);
        for (int i = 0; i < count; i++) {
            double yr = x * wr[i] - cre[i], yi = x * wi[i] - cim[i];
            double tr = re[i] + yr, ti = im[i] + yi;
            cre[i] = (tr - re[i]) - yr;
            cim[i] = (ti - im[i]) - yi;
            re[i] = tr;
            im[i] = ti;
            double r = wr[i] * sr[i] - wi[i] * si[i];
            wi[i] = wr[i] * si[i] + wi[i] * sr[i];
            wr[i] = r;
        }
        double r = hr * hsr - hi * hsi;
        hi = hr * hsi + hi * hsr;
        hr = r;
    }
    for (int i = 0; i < count; i++)
        mag[i] = sqrt(re[i] * re[i] + im[i] * im[i]);
}

/* The bins to check: the strongest the result names, DC, then bins drawn from seed. */
static int pick_bins(const struct wb_fft_kernel *k, int result, const void *got, int nbins, uint64_t seed,
                     int64_t *bins)
{
    int64_t strongest = 1;
    if (result == WB_FFT_PEAKS) {
        int32_t b = ((const struct wb_fft_peak *)got)->bin;
        strongest = b > 0 && b < k->nbins ? b : 1;
    } else {
        for (int64_t b = 2; b < k->nbins; b++)
            if (real_at(k, got, b) > real_at(k, got, strongest))
                strongest = b;
    }
    int count = 0;
    bins[count++] = strongest;
    if (nbins > 1 && strongest != 0)
        bins[count++] = 0;
    while (count < nbins) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        bins[count++] = (int64_t)((seed >> 33) % (uint64_t)k->nbins);
    }
    return count;
}

int wb_fft_kernel_dft_check(const struct wb_fft_kernel *k, const void *frame, int result, const void *got,
                            int nbins, uint64_t seed, double *max_rel)
{
    int64_t bins[DFT_MAX_BINS];
    double want[DFT_MAX_BINS];
    int count = pick_bins(k, result, got, nbins < 1 ? 1 : nbins > DFT_MAX_BINS ? DFT_MAX_BINS : nbins, seed, bins);
    naive_bins(k, frame, bins, count, want);
    double worst = 0;
    if (result == WB_FFT_PEAKS) {
        const struct wb_fft_peak *pk = got;
        double m = pk->mag;
        /* The peak's magnitude is stored as a float: only error beyond that rounding counts. */
        worst = pk->bin == bins[0] ? fmax(0.0, fabs(m - want[0]) / fmax(want[0], DBL_MIN) - 0.5 * FLT_EPSILON)
                                   : INFINITY;
        /* The peak must be at least as loud as every other bin checked. */
        for (int i = 1; i < count; i++)
            if (bins[i] > 0)
                worst = fmax(worst, (want[i] - m) / fmax(m, DBL_MIN));
    } else {
        double scale = fmax(fmax(want[0], fabs(real_at(k, got, bins[0]))), DBL_MIN);
        for (int i = 0; i < count; i++)
            worst = fmax(worst, fabs(real_at(k, got, bins[i]) - want[i]) / scale);
    }
    /* NaN anywhere (fmax drops it) shows as a failed comparison here. */
    for (int i = 0; i < count; i++)
        if (!isfinite(result == WB_FFT_PEAKS ? ((const struct wb_fft_peak *)got)->mag : real_at(k, got, bins[i])))
            worst = INFINITY;
    *max_rel = worst;
    return 0;
}

char *wb_fft_wisdom_export(void)
{
    /* Both precisions keep their own wisdom; store them one after the other. */
    char *d = fftw_export_wisdom_to_string(), *f = fftwf_export_wisdom_to_string();
    size_t len = (d ? strlen(d) : 0) + (f ? strlen(f) : 0) + 2;
    char *all = malloc(len);
    if (all)
        snprintf(all, len, "%s\n%s", d ? d : "", f ? f : "");
    free(d);
    free(f);
    return all;
}

/* One block of wisdom text: "(fftw-3.x.y fftw_wisdom ...)" for double, "fftwf_wisdom" for single. A file
 * may hold either or both, in any order: wulfbench saves double then single, and FFTW's own tools
 * (fftw-wisdom, fftwf-wisdom) or a program that planned only one precision save one block. */
static int import_block(const char *block, size_t len)
{
    char *b = malloc(len + 1);
    if (!b)
        return wb_error_set(WB_ENOMEM, "out of memory for wisdom");
    memcpy(b, block, len);
    b[len] = '\0';
    const char *kind = b + strcspn(b, " \t\n");
    kind += strspn(kind, " \t\n");
    int ok = 0;
    if (!strncmp(kind, "fftwf_wisdom", 12))
        ok = fftwf_import_wisdom_from_string(b);
    else if (!strncmp(kind, "fftw_wisdom", 11))
        ok = fftw_import_wisdom_from_string(b);
    free(b);
    return ok ? 0 : wb_error_set(WB_EFFTW, "the wisdom is not FFTW wisdom of this FFTW version");
}

int wb_fft_wisdom_import(const char *wisdom)
{
    const char *p = wisdom + strspn(wisdom, " \t\n");
    if (!*p)
        return 0;
    if (strncmp(p, "(fftw-3", 7) != 0)
        return wb_error_set(WB_EFFTW, "the wisdom is not FFTW wisdom of this FFTW version");
    while (p) {
        const char *next = strstr(p + 1, "\n(fftw-3");
        int rc = import_block(p, next ? (size_t)(next - p) : strlen(p));
        if (rc != 0)
            return rc;
        p = next ? next + 1 : NULL;
    }
    return 0;
}

const char *wb_fft_version(void) { return fftw_version; }
