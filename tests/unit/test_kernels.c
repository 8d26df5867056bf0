/* The kernels module: every variant this CPU runs against plain scalar loops, on lengths around
 * every vector width, with ties and NaN bins for the peak search; and whole FFT kernels per variant. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "fftw/fft.h"
#include "fftw/kernels.h"
#include "wbtest.h"

/* The scalar path the variants must match; kept out of the vectoriser where the compiler allows. */
#if defined(__GNUC__) && !defined(__clang__)
#define SCALAR __attribute__((optimize("no-tree-vectorize")))
#else
#define SCALAR
#endif

SCALAR static double ref_window(int precision, int s16, int64_t i, const void *s, const void *w)
{
    double x = s16 ? (double)((const int16_t *)s)[i]
                   : precision == WB_FFT_DOUBLE ? ((const double *)s)[i] : ((const float *)s)[i];
    if (precision == WB_FFT_DOUBLE)
        return x * ((const double *)w)[i];
    return (float)x * ((const float *)w)[i];
}

SCALAR static double ref_m2(int precision, const void *c, int64_t b)
{
    if (precision == WB_FFT_DOUBLE) {
        const double *d = c;
        return d[2 * b] * d[2 * b] + d[2 * b + 1] * d[2 * b + 1];
    }
    const float *f = c;
    return (float)(f[2 * b] * f[2 * b] + f[2 * b + 1] * f[2 * b + 1]);
}

/* The first strongest of bins 1..nb-1, NaN never winning: the loop fft.c had before the kernels. */
SCALAR static int32_t ref_peak(int precision, const void *c, int64_t nb, double *m2)
{
    double best = -1;
    int32_t at = 0;
    for (int64_t b = 1; b < nb; b++) {
        double v = ref_m2(precision, c, b);
        if (v > best) {
            best = v;
            at = (int32_t)b;
        }
    }
    *m2 = best;
    return at;
}

static double eps_of(int precision) { return precision == WB_FFT_DOUBLE ? DBL_EPSILON : FLT_EPSILON; }

static double get(int precision, const void *p, int64_t i)
{
    return precision == WB_FFT_DOUBLE ? ((const double *)p)[i] : ((const float *)p)[i];
}

static void put(int precision, void *p, int64_t i, double v)
{
    if (precision == WB_FFT_DOUBLE)
        ((double *)p)[i] = v;
    else
        ((float *)p)[i] = (float)v;
}

static double rel(double got, double want) { return fabs(got - want) / fmax(fabs(want), DBL_MIN); }

/* Window and magnitudes of one variant on length n against the scalar loops; the largest relative error. */
static double window_and_mag(int precision, int64_t n, unsigned seed)
{
    size_t sb = wb_fft_sample_bytes(precision);
    int16_t *s16 = malloc((size_t)n * sizeof *s16);
    void *s = malloc((size_t)n * sb), *w = malloc((size_t)n * sb), *dst = malloc((size_t)n * sb);
    void *c = malloc((size_t)(2 * n) * sb);
    srand(seed);
    for (int64_t i = 0; i < n; i++) {
        s16[i] = (int16_t)(rand() % 65536 - 32768);
        put(precision, s, i, (double)rand() / RAND_MAX - 0.5);
        put(precision, w, i, (double)rand() / RAND_MAX / 32768.0);
        put(precision, c, 2 * i, ((double)rand() / RAND_MAX - 0.5) * 1e3);
        put(precision, c, 2 * i + 1, ((double)rand() / RAND_MAX - 0.5) * 1e-3);
    }
    double worst = 0;
    for (int s16_in = 0; s16_in < 2; s16_in++) {
        if (precision == WB_FFT_DOUBLE)
            s16_in ? wb_kern_window_s16_d(dst, s16, w, n) : wb_kern_window_d(dst, s, w, n);
        else
            s16_in ? wb_kern_window_s16_f(dst, s16, w, n) : wb_kern_window_f(dst, s, w, n);
        for (int64_t i = 0; i < n; i++)
            worst = fmax(worst, rel(get(precision, dst, i), ref_window(precision, s16_in, i, s16_in ? (void *)s16 : s, w)));
    }
    if (precision == WB_FFT_DOUBLE)
        wb_kern_mag_d(dst, c, n);
    else
        wb_kern_mag_f(dst, c, n);
    for (int64_t b = 0; b < n; b++) {
        double want = precision == WB_FFT_DOUBLE ? sqrt(ref_m2(precision, c, b)) : sqrtf((float)ref_m2(precision, c, b));
        worst = fmax(worst, rel(get(precision, dst, b), want));
    }
    free(s16);
    free(s);
    free(w);
    free(dst);
    free(c);
    return worst;
}

static int32_t peak(int precision, const void *c, int64_t nb, double *m2)
{
    if (precision == WB_FFT_DOUBLE)
        return wb_kern_peak_d(c, nb, m2);
    float f;
    int32_t at = wb_kern_peak_f(c, nb, &f);
    *m2 = f;
    return at;
}

/* Peaks on nb bins: random, then ties (the first must win, wherever its lane), NaN bins, all NaN. */
static int peaks_agree(int precision, int64_t nb, unsigned seed)
{
    size_t sb = wb_fft_sample_bytes(precision);
    void *c = malloc((size_t)(2 * nb) * sb);
    int ok = 1;
    srand(seed);
    for (int round = 0; round < 4; round++) {
        for (int64_t i = 0; i < 2 * nb; i++)
            put(precision, c, i, round == 3 ? NAN : (double)(rand() % 7) - 3.0);
        if (round == 2)
            for (int64_t b = 0; b < nb; b += 3)
                put(precision, c, 2 * b, NAN);
        double want_m2, got_m2;
        int32_t want = ref_peak(precision, c, nb, &want_m2), got = peak(precision, c, nb, &got_m2);
        ok = ok && got == want && (got == 0 ? got_m2 == -1 : rel(got_m2, want_m2) <= eps_of(precision));
    }
    free(c);
    return ok;
}

/* A whole S16 Hann kernel under the current variant: spectra and peaks of a few frames. */
static void run_pipeline(int precision, int64_t n, void *spectra, struct wb_fft_peak *peaks)
{
    struct wb_fft_kernel *k = NULL;
    struct wb_fft_spec spec = {precision, n, 4, WB_FFT_HANN, WB_FFT_ESTIMATE, WB_FFT_IN_S16};
    int16_t *s = malloc((size_t)(8 * n) * sizeof *s);
    srand(7);
    for (int64_t i = 0; i < 8 * n; i++)
        s[i] = (int16_t)(rand() % 65536 - 32768);
    if (wb_fft_kernel_plan(&k, &spec) == 0) {
        wb_fft_kernel_run(k, s, 7, n, WB_FFT_SPECTRA, spectra, NULL);
        wb_fft_kernel_run(k, s, 7, n, WB_FFT_PEAKS, peaks, NULL);
    }
    wb_fft_kernel_destroy(&k);
    free(s);
}

int main(void)
{
    static const int64_t lengths[] = {1, 2, 3, 7, 15, 16, 17, 31, 33, 63, 65, 1024, 1025, 4099};
    enum { NLEN = sizeof lengths / sizeof lengths[0], PN = 1024, PBINS = PN / 2 + 1 };
    WBTEST_CHECK(wb_kern_init() == 0 && wb_kern_supported(wb_kern_variant()), "init picks a variant this CPU runs: %s",
                 wb_kern_variant());
    WBTEST_CHECK(wb_kern_select("no-such-isa") == WB_EUSAGE && strstr(wb_error_message(), "not in this build"),
                 "an unknown variant is refused: %s", wb_error_message());
    WBTEST_CHECK(wb_kern_supported(wb_kern_variant_names[0]), "the baseline %s runs everywhere", wb_kern_variant_names[0]);
    double base_spec[2][7 * PBINS];
    struct wb_fft_peak base_peaks[2][7];
    int tested = 0;
    for (int v = 0; wb_kern_variant_names[v]; v++) {
        const char *name = wb_kern_variant_names[v];
        if (!wb_kern_supported(name)) {
            WBTEST_SKIP("the %s kernels against the scalar loops: not on this CPU", name);
            WBTEST_CHECK(wb_kern_select(name) == WB_EUSAGE, "%s is refused on a CPU that lacks it", name);
            continue;
        }
        tested++;
        WBTEST_CHECK(wb_kern_select(name) == 0 && !strcmp(wb_kern_variant(), name), "select %s", name);
        for (int p = WB_FFT_SINGLE; p <= WB_FFT_DOUBLE; p++) {
            const char *pn = wb_fft_precision_names[p];
            double worst = 0;
            int peaks_ok = 1;
            for (int i = 0; i < NLEN; i++) {
                worst = fmax(worst, window_and_mag(p, lengths[i], 11u + (unsigned)i));
                peaks_ok = peaks_ok && peaks_agree(p, lengths[i], 23u + (unsigned)i);
            }
            WBTEST_CHECK(worst <= eps_of(p), "%s %s: window and magnitudes within %.2g of scalar (worst %.3g)", name,
                         pn, eps_of(p), worst);
            WBTEST_CHECK(peaks_ok, "%s %s: peaks are the scalar loop's bins, ties and NaN included", name, pn);
            double spec[7 * PBINS];
            struct wb_fft_peak pk[7];
            run_pipeline(p, PN, v == 0 ? (void *)base_spec[p] : (void *)spec, v == 0 ? base_peaks[p] : pk);
            if (v == 0)
                continue;
            double diff = 0, top = 0;
            int same_bins = 1;
            for (int64_t b = 0; b < 7 * PBINS; b++) {
                double a = p == WB_FFT_DOUBLE ? spec[b] : ((float *)spec)[b];
                double z = p == WB_FFT_DOUBLE ? base_spec[p][b] : ((float *)base_spec[p])[b];
                diff = fmax(diff, fabs(a - z));
                top = fmax(top, fabs(z));
            }
            for (int f = 0; f < 7; f++)
                same_bins = same_bins && pk[f].bin == base_peaks[p][f].bin;
            WBTEST_CHECK(top > 0 && diff / top <= wb_fft_tolerance(p, PN) && same_bins,
                         "%s %s: FFT kernel spectra within %.2g of %s (%.3g) and the same peak bins", name, pn,
                         wb_fft_tolerance(p, PN), wb_kern_variant_names[0], diff / top);
        }
    }
    WBTEST_CHECK(tested >= 1, "%d variant(s) run on this CPU", tested);
    return wbtest_done();
}
