#include "fft.h"

#include <fftw3.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "timer.h"

struct wb_fft_kernel {
    int precision, window, input;
    int64_t n, batch, nbins;
    void *in, *out;         /* batch frames of n reals; batch spectra of nbins complex */
    void *win;              /* window coefficients, n reals in the kernel's precision (NULL: none) */
    void *check_out;        /* c2r output for round-trip checks */
    fftwf_plan pf_batch, pf_one, pf_inv;
    fftw_plan pd_batch, pd_one, pd_inv;
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

void *wb_fft_alloc(size_t nbytes) { return fftw_malloc(nbytes ? nbytes : 1); }

void wb_fft_free(void *p) { fftw_free(p); }

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

void wb_fft_kernel_set_input(struct wb_fft_kernel *k, int format) { k->input = format; }

static void destroy_plans(struct wb_fft_kernel *k)
{
    if (k->pf_batch) fftwf_destroy_plan(k->pf_batch);
    if (k->pf_one) fftwf_destroy_plan(k->pf_one);
    if (k->pf_inv) fftwf_destroy_plan(k->pf_inv);
    if (k->pd_batch) fftw_destroy_plan(k->pd_batch);
    if (k->pd_one) fftw_destroy_plan(k->pd_one);
    if (k->pd_inv) fftw_destroy_plan(k->pd_inv);
}

void wb_fft_kernel_destroy(struct wb_fft_kernel **kp)
{
    struct wb_fft_kernel *k = *kp;
    if (!k)
        return;
    destroy_plans(k);
    fftw_free(k->in);
    fftw_free(k->out);
    fftw_free(k->win);
    fftw_free(k->check_out);
    free(k);
    *kp = NULL;
}

static void fill_window(struct wb_fft_kernel *k)
{
    for (int64_t i = 0; i < k->n; i++) {
        /* Periodic Hann, the usual choice for STFT analysis. */
        double w = 0.5 - 0.5 * cos(2.0 * 3.14159265358979323846 * (double)i / (double)k->n);
        if (k->precision == WB_FFT_DOUBLE)
            ((double *)k->win)[i] = w;
        else
            ((float *)k->win)[i] = (float)w;
    }
}

int wb_fft_kernel_create(struct wb_fft_kernel **kp, int precision, int64_t n, int64_t batch, int window, int effort)
{
    *kp = NULL;
    if (n < 2 || n > INT32_MAX || batch < 1 || batch > INT32_MAX / n)
        return wb_error_set(WB_EUSAGE, "transform length %lld in batches of %lld is out of range", (long long)n,
                            (long long)batch);
    struct wb_fft_kernel *k = calloc(1, sizeof *k);
    if (!k)
        return wb_error_set(WB_ENOMEM, "out of memory for an FFT kernel");
    size_t sb = wb_fft_sample_bytes(precision);
    k->precision = precision;
    k->window = window;
    k->n = n;
    k->batch = batch;
    k->nbins = n / 2 + 1;
    k->in = fftw_malloc((size_t)(batch * n) * sb);
    k->out = fftw_malloc((size_t)(batch * k->nbins) * 2 * sb);
    k->check_out = fftw_malloc((size_t)n * sb);
    k->win = window == WB_FFT_HANN ? fftw_malloc((size_t)n * sb) : NULL;
    if (!k->in || !k->out || !k->check_out || (window == WB_FFT_HANN && !k->win)) {
        wb_fft_kernel_destroy(&k);
        return wb_error_set(WB_ENOMEM, "out of memory for FFT buffers of %lld x %lld points", (long long)batch,
                            (long long)n);
    }
    if (k->win)
        fill_window(k);
    int ni = (int)n, nb = (int)k->nbins;
    unsigned flags = effort_flags(effort);
    /* The inverse plan is for checks only and must not clobber the caller's spectra: plan it on scratch. */
    if (precision == WB_FFT_DOUBLE) {
        k->pd_batch = fftw_plan_many_dft_r2c(1, &ni, (int)batch, k->in, NULL, 1, ni, k->out, NULL, 1, nb, flags);
        k->pd_one = fftw_plan_dft_r2c_1d(ni, k->in, k->out, flags);
        k->pd_inv = fftw_plan_dft_c2r_1d(ni, k->out, k->check_out, FFTW_ESTIMATE | FFTW_DESTROY_INPUT);
    } else {
        k->pf_batch = fftwf_plan_many_dft_r2c(1, &ni, (int)batch, k->in, NULL, 1, ni, k->out, NULL, 1, nb, flags);
        k->pf_one = fftwf_plan_dft_r2c_1d(ni, k->in, k->out, flags);
        k->pf_inv = fftwf_plan_dft_c2r_1d(ni, k->out, k->check_out, FFTW_ESTIMATE | FFTW_DESTROY_INPUT);
    }
    int ok = precision == WB_FFT_DOUBLE ? (k->pd_batch && k->pd_one && k->pd_inv)
                                        : (k->pf_batch && k->pf_one && k->pf_inv);
    if (!ok) {
        wb_fft_kernel_destroy(&k);
        return wb_error_set(WB_EFFTW, "FFTW could not plan a real transform of %lld points", (long long)n);
    }
    *kp = k;
    return 0;
}

/* Copies frames (windowed) into the input buffer: count frames starting at samples + first*hop. */
static void load_frames(struct wb_fft_kernel *k, const void *samples, int64_t first, int64_t count, int64_t hop)
{
    const double s16 = 1.0 / 32768.0;
    for (int64_t f = 0; f < count; f++) {
        int64_t off = (first + f) * hop;
        if (k->precision == WB_FFT_DOUBLE) {
            const double *w = k->win;
            double *dst = (double *)k->in + f * k->n;
            if (k->input == WB_FFT_IN_S16) {
                const int16_t *src = (const int16_t *)samples + off;
                for (int64_t i = 0; i < k->n; i++)
                    dst[i] = src[i] * s16 * (w ? w[i] : 1.0);
            } else if (w) {
                const double *src = (const double *)samples + off;
                for (int64_t i = 0; i < k->n; i++)
                    dst[i] = src[i] * w[i];
            } else {
                memcpy(dst, (const double *)samples + off, (size_t)k->n * sizeof *dst);
            }
        } else {
            const float *w = k->win;
            float *dst = (float *)k->in + f * k->n;
            if (k->input == WB_FFT_IN_S16) {
                const int16_t *src = (const int16_t *)samples + off;
                for (int64_t i = 0; i < k->n; i++)
                    dst[i] = (float)(src[i] * s16) * (w ? w[i] : 1.0f);
            } else if (w) {
                const float *src = (const float *)samples + off;
                for (int64_t i = 0; i < k->n; i++)
                    dst[i] = src[i] * w[i];
            } else {
                memcpy(dst, (const float *)samples + off, (size_t)k->n * sizeof *dst);
            }
        }
    }
}

static void execute(struct wb_fft_kernel *k, int batched)
{
    if (k->precision == WB_FFT_DOUBLE)
        fftw_execute(batched ? k->pd_batch : k->pd_one);
    else
        fftwf_execute(batched ? k->pf_batch : k->pf_one);
}

/* Writes count spectra from the output buffer as magnitudes or peaks into out. */
static void store_results(const struct wb_fft_kernel *k, int64_t count, int result, char *out)
{
    int64_t nb = k->nbins;
    for (int64_t f = 0; f < count; f++) {
        struct wb_fft_peak peak = {0, -1.0f};
        if (k->precision == WB_FFT_DOUBLE) {
            const fftw_complex *c = (const fftw_complex *)k->out + f * nb;
            double *mag = (double *)out + f * nb;
            for (int64_t b = 0; b < nb; b++) {
                double m = hypot(c[b][0], c[b][1]);
                if (result == WB_FFT_SPECTRA)
                    mag[b] = m;
                else if (b > 0 && m > peak.mag)
                    peak = (struct wb_fft_peak){(int32_t)b, (float)m};
            }
        } else {
            const fftwf_complex *c = (const fftwf_complex *)k->out + f * nb;
            float *mag = (float *)out + f * nb;
            for (int64_t b = 0; b < nb; b++) {
                float m = sqrtf(c[b][0] * c[b][0] + c[b][1] * c[b][1]);
                if (result == WB_FFT_SPECTRA)
                    mag[b] = m;
                else if (b > 0 && m > peak.mag)
                    peak = (struct wb_fft_peak){(int32_t)b, m};
            }
        }
        if (result == WB_FFT_PEAKS)
            ((struct wb_fft_peak *)out)[f] = peak;
    }
}

int wb_fft_kernel_run(struct wb_fft_kernel *k, const void *samples, int64_t nframes, int64_t hop, int result,
                      void *out, double *t_fft_s)
{
    size_t rb = wb_fft_result_bytes(k->precision, k->n, result);
    double t_fft = 0;
    int64_t f = 0;
    while (f < nframes) {
        int64_t count = nframes - f >= k->batch ? k->batch : 1;
        load_frames(k, samples, f, count, hop);
        double t0 = wb_timer_now_s();
        execute(k, count == k->batch && k->batch > 1);
        t_fft += wb_timer_now_s() - t0;
        store_results(k, count, result, (char *)out + (size_t)f * rb);
        f += count;
    }
    if (t_fft_s)
        *t_fft_s = t_fft;
    return 0;
}

/* Energy of the windowed frame in the input buffer (times n) and of its one-sided spectrum. */
static void energies(const struct wb_fft_kernel *k, double *e_time, double *e_freq, double *peak_abs)
{
    double et = 0, ef = 0, pk = 0;
    for (int64_t i = 0; i < k->n; i++) {
        double x = k->precision == WB_FFT_DOUBLE ? ((double *)k->in)[i] : ((float *)k->in)[i];
        et += x * x;
        pk = fmax(pk, fabs(x));
    }
    for (int64_t b = 0; b < k->nbins; b++) {
        double re, im;
        if (k->precision == WB_FFT_DOUBLE) {
            re = ((fftw_complex *)k->out)[b][0];
            im = ((fftw_complex *)k->out)[b][1];
        } else {
            re = ((fftwf_complex *)k->out)[b][0];
            im = ((fftwf_complex *)k->out)[b][1];
        }
        /* Bins other than DC and (for even n) Nyquist stand for two conjugate bins. */
        int twice = b > 0 && !(k->n % 2 == 0 && b == k->n / 2);
        ef += (twice ? 2.0 : 1.0) * (re * re + im * im);
    }
    *e_time = et * (double)k->n;
    *e_freq = ef;
    *peak_abs = pk;
}

int wb_fft_kernel_check(struct wb_fft_kernel *k, const void *samples, int64_t nframes, int64_t hop,
                        int64_t max_check, double *parseval_rel, double *roundtrip_rel)
{
    double worst_p = 0, worst_r = 0;
    int64_t step = nframes > max_check && max_check > 0 ? nframes / max_check : 1;
    for (int64_t f = 0; f < nframes; f += step) {
        load_frames(k, samples, f, 1, hop);
        execute(k, 0);
        double et, ef, pk;
        energies(k, &et, &ef, &pk);
        worst_p = fmax(worst_p, fabs(et - ef) / fmax(et, DBL_MIN));
        if (k->precision == WB_FFT_DOUBLE)
            fftw_execute(k->pd_inv);
        else
            fftwf_execute(k->pf_inv);
        double err = 0;
        for (int64_t i = 0; i < k->n; i++) {
            double x = k->precision == WB_FFT_DOUBLE ? ((double *)k->in)[i] : ((float *)k->in)[i];
            double y = k->precision == WB_FFT_DOUBLE ? ((double *)k->check_out)[i] : ((float *)k->check_out)[i];
            err = fmax(err, fabs(y / (double)k->n - x));
        }
        /* A silent frame has nothing to compare; its round trip must then be silent too. */
        worst_r = fmax(worst_r, pk > 0 ? err / pk : err);
    }
    *parseval_rel = worst_p;
    *roundtrip_rel = worst_r;
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

int wb_fft_wisdom_import(const char *wisdom)
{
    const char *split = strstr(wisdom, "\n(fftw-3");
    if (!split)
        split = wisdom + strlen(wisdom);
    size_t dlen = (size_t)(split - wisdom);
    char *d = malloc(dlen + 1);
    if (!d)
        return wb_error_set(WB_ENOMEM, "out of memory for wisdom");
    memcpy(d, wisdom, dlen);
    d[dlen] = '\0';
    int ok = (dlen == 0 || fftw_import_wisdom_from_string(d)) && (!*split || fftwf_import_wisdom_from_string(split + 1));
    free(d);
    return ok ? 0 : wb_error_set(WB_EFFTW, "the wisdom is not FFTW wisdom of this FFTW version");
}

const char *wb_fft_version(void) { return fftw_version; }
