/* The fft module against a naive DFT, plus its checks, peaks, batching and wisdom. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fft.h"
#include "wbtest.h"

#define PI 3.14159265358979323846

/* Magnitudes of the one-sided DFT of x[n], computed the slow, obvious way. */
static void naive_dft(const double *x, int64_t n, double *mag)
{
    for (int64_t k = 0; k <= n / 2; k++) {
        double re = 0, im = 0;
        for (int64_t t = 0; t < n; t++) {
            double a = -2.0 * PI * (double)(k * t % n) / (double)n;
            re += x[t] * cos(a);
            im += x[t] * sin(a);
        }
        mag[k] = hypot(re, im);
    }
}

static double max_rel_diff(const double *a, const double *b, int64_t n)
{
    double peak = 0, diff = 0;
    for (int64_t i = 0; i < n; i++) {
        peak = fmax(peak, fabs(a[i]));
        diff = fmax(diff, fabs(a[i] - b[i]));
    }
    return diff / peak;
}

static void random_signal(double *x, int64_t n, unsigned seed)
{
    srand(seed);
    for (int64_t i = 0; i < n; i++)
        x[i] = (double)rand() / RAND_MAX - 0.5 + 0.3 * sin(2 * PI * 5 * (double)i / (double)n);
}

/* Runs the kernel over nframes frames of x (hop apart) and compares every frame with the naive DFT. */
static double compare_frames(int precision, int64_t n, int64_t batch, int64_t nframes, int64_t hop, int window)
{
    int64_t len = (nframes - 1) * hop + n, nb = n / 2 + 1;
    double *x = malloc((size_t)len * sizeof *x), *want = malloc((size_t)nb * sizeof *want);
    double *frame = malloc((size_t)n * sizeof *frame), *got = malloc((size_t)nb * sizeof *got);
    float *xf = malloc((size_t)len * sizeof *xf);
    void *samples = wb_fft_alloc((size_t)len * wb_fft_sample_bytes(precision));
    void *out = wb_fft_alloc((size_t)nframes * wb_fft_result_bytes(precision, n, WB_FFT_SPECTRA));
    random_signal(x, len, (unsigned)n);
    for (int64_t i = 0; i < len; i++)
        xf[i] = (float)x[i];
    if (precision == WB_FFT_DOUBLE)
        memcpy(samples, x, (size_t)len * sizeof *x);
    else
        wb_fft_convert(samples, xf, len, precision);
    struct wb_fft_kernel *k = NULL;
    double worst = INFINITY, t_fft = -1;
    if (wb_fft_kernel_create(&k, precision, n, batch, window, WB_FFT_ESTIMATE) == 0 &&
        wb_fft_kernel_run(k, samples, nframes, hop, WB_FFT_SPECTRA, out, &t_fft) == 0) {
        worst = 0;
        for (int64_t f = 0; f < nframes; f++) {
            for (int64_t i = 0; i < n; i++) {
                double w = window == WB_FFT_HANN ? 0.5 - 0.5 * cos(2 * PI * (double)i / (double)n) : 1.0;
                double s = precision == WB_FFT_DOUBLE ? x[f * hop + i] : (double)xf[f * hop + i];
                frame[i] = s * w;
            }
            naive_dft(frame, n, want);
            for (int64_t b = 0; b < nb; b++)
                got[b] = precision == WB_FFT_DOUBLE ? ((double *)out)[f * nb + b] : ((float *)out)[f * nb + b];
            worst = fmax(worst, max_rel_diff(want, got, nb));
        }
    }
    wb_fft_kernel_destroy(&k);
    WBTEST_CHECK(k == NULL, "destroy sets the kernel pointer to NULL");
    WBTEST_CHECK(t_fft >= 0, "t_fft reported (%g s)", t_fft);
    free(x), free(want), free(frame), free(got), free(xf);
    wb_fft_free(samples);
    wb_fft_free(out);
    return worst;
}

int main(void)
{
    /* Lengths: powers of two, an odd one and a prime, as whole-file mode meets any length. */
    const int64_t lens[] = {16, 64, 1024, 4096, 1000, 127};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        int64_t n = lens[i];
        double es = compare_frames(WB_FFT_SINGLE, n, 4, 9, n / 2 ? n / 2 : 1, WB_FFT_HANN);
        double ed = compare_frames(WB_FFT_DOUBLE, n, 4, 9, n / 2 ? n / 2 : 1, WB_FFT_HANN);
        WBTEST_CHECK(es < 1e-5, "single precision n=%lld matches the naive DFT (rel err %.2e)", (long long)n, es);
        WBTEST_CHECK(ed < 1e-11, "double precision n=%lld matches the naive DFT (rel err %.2e)", (long long)n, ed);
    }
    double er = compare_frames(WB_FFT_DOUBLE, 256, 16, 5, 256, WB_FFT_RECT);
    WBTEST_CHECK(er < 1e-11, "no window, batch larger than the frame count (rel err %.2e)", er);

    /* A pure tone must peak in its bin; Parseval and the round trip hold. */
    int64_t n = 4096, nframes = 8, hop = 2048, len = (nframes - 1) * hop + n;
    float *tone = malloc((size_t)len * sizeof *tone);
    double bin_hz = 44100.0 / (double)n;
    for (int64_t i = 0; i < len; i++)
        tone[i] = (float)(0.5 * sin(2 * PI * 100 * bin_hz * (double)i / 44100.0));
    for (int prec = WB_FFT_SINGLE; prec <= WB_FFT_DOUBLE; prec++) {
        void *s = wb_fft_alloc((size_t)len * wb_fft_sample_bytes(prec));
        wb_fft_convert(s, tone, len, prec);
        struct wb_fft_kernel *k = NULL;
        struct wb_fft_peak peaks[8];
        double p = -1, r = -1;
        int rc = wb_fft_kernel_create(&k, prec, n, 4, WB_FFT_HANN, WB_FFT_MEASURE);
        WBTEST_CHECK(rc == 0, "plan with FFTW_MEASURE (%s)", prec ? "double" : "single");
        if (rc == 0) {
            wb_fft_kernel_run(k, s, nframes, hop, WB_FFT_PEAKS, peaks, NULL);
            int all = 1;
            for (int f = 0; f < nframes; f++)
                all &= peaks[f].bin == 100 && peaks[f].mag > 0;
            WBTEST_CHECK(all, "peaks: every frame peaks in bin 100 (%s)", prec ? "double" : "single");
            wb_fft_kernel_check(k, s, nframes, hop, 4, &p, &r);
            double tol = wb_fft_tolerance(prec, n);
            WBTEST_CHECK(p <= tol, "Parseval holds (%.2e <= %.2e)", p, tol);
            WBTEST_CHECK(r <= tol, "round trip holds (%.2e <= %.2e)", r, tol);
        }
        wb_fft_kernel_destroy(&k);
        wb_fft_free(s);
    }
    free(tone);

    WBTEST_CHECK(fabs(wb_fft_flops(4096) - 2.5 * 4096 * 12) < 1e-6, "flop count 2.5 N log2 N");
    WBTEST_CHECK(wb_fft_result_bytes(WB_FFT_SINGLE, 4096, WB_FFT_SPECTRA) == 2049 * 4, "spectrum bytes");
    WBTEST_CHECK(wb_fft_tolerance(WB_FFT_DOUBLE, 4096) < wb_fft_tolerance(WB_FFT_SINGLE, 4096),
                 "double precision has the tighter tolerance");

    struct wb_fft_kernel *bad = NULL;
    WBTEST_CHECK(wb_fft_kernel_create(&bad, WB_FFT_SINGLE, 1, 1, WB_FFT_HANN, WB_FFT_ESTIMATE) == WB_EUSAGE && !bad,
                 "a transform of 1 point is refused");

    char *w = wb_fft_wisdom_export();
    WBTEST_CHECK(w && strstr(w, "fftw_wisdom") && strstr(w, "fftwf_wisdom"), "wisdom holds both precisions");
    WBTEST_CHECK(w && wb_fft_wisdom_import(w) == 0, "exported wisdom imports again");
    WBTEST_CHECK(wb_fft_wisdom_import("not wisdom") == WB_EFFTW, "garbage wisdom is refused");
    free(w);
    return wbtest_done();
}
