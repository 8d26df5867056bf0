/* The fft module against a naive DFT, plus its checks, peaks, batching and wisdom. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "fftw/fft.h"
#include "core/timer.h"
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

/* len samples stored as input (enum wb_fft_input) in samples, and the values they stand for in ref. */
static void make_samples(int precision, int input, int64_t len, unsigned seed, void *samples, double *ref)
{
    random_signal(ref, len, seed);
    for (int64_t i = 0; i < len; i++) {
        if (input == WB_FFT_IN_S16) {
            int16_t v = (int16_t)lrint(ref[i] * 32767.0);
            ((int16_t *)samples)[i] = v;
            ref[i] = v / 32768.0;
        } else if (precision == WB_FFT_DOUBLE) {
            ((double *)samples)[i] = ref[i];
        } else {
            ((float *)samples)[i] = (float)ref[i];
            ref[i] = (float)ref[i];
        }
    }
}

static struct wb_fft_kernel *plan(int precision, int input, int64_t n, int64_t batch, int window, int effort)
{
    struct wb_fft_kernel *k = NULL;
    struct wb_fft_spec spec = {precision, n, batch, window, effort, input};
    int rc = wb_fft_kernel_plan(&k, &spec);
    WBTEST_CHECK(rc == 0 && k, "plan n=%lld batch %lld (%s)", (long long)n, (long long)batch,
                 rc ? wb_error_message() : "ok");
    return k;
}

/* Runs the kernel over nframes frames (hop apart) and compares every frame with the naive DFT. */
static double compare_frames(int precision, int input, int64_t n, int64_t batch, int64_t nframes, int64_t hop,
                             int window)
{
    int64_t len = (nframes - 1) * hop + n, nb = n / 2 + 1;
    double *x = malloc((size_t)len * sizeof *x), *want = malloc((size_t)nb * sizeof *want);
    double *frame = malloc((size_t)n * sizeof *frame), *got = malloc((size_t)nb * sizeof *got);
    void *samples = wb_fft_alloc((size_t)len * wb_fft_input_bytes(input, precision));
    void *out = wb_fft_alloc((size_t)nframes * wb_fft_result_bytes(precision, n, WB_FFT_SPECTRA));
    make_samples(precision, input, len, (unsigned)n, samples, x);
    struct wb_fft_kernel *k = plan(precision, input, n, batch, window, WB_FFT_ESTIMATE);
    double worst = INFINITY, t_fft = -1;
    if (k && wb_fft_kernel_run(k, samples, nframes, hop, WB_FFT_SPECTRA, out, &t_fft) == 0) {
        worst = 0;
        for (int64_t f = 0; f < nframes; f++) {
            for (int64_t i = 0; i < n; i++) {
                double w = window == WB_FFT_HANN ? 0.5 - 0.5 * cos(2 * PI * (double)i / (double)n) : 1.0;
                frame[i] = x[f * hop + i] * w;
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
    free(x), free(want), free(frame), free(got);
    wb_fft_free(samples);
    wb_fft_free(out);
    return worst;
}

static const char *prec_name(int precision) { return precision == WB_FFT_DOUBLE ? "double" : "single"; }

static const char *input_name(int input) { return input == WB_FFT_IN_S16 ? "16-bit" : "native"; }

/* Spectra and peaks are bit for bit the same whatever the batch, including the chosen one. */
static void test_batch_invariance(int precision, int input, int64_t n, int64_t hop)
{
    const int64_t batches[] = {2, 3, 5, 16, 32, 0};
    int64_t nframes = 37, len = (nframes - 1) * hop + n;
    double *x = malloc((size_t)len * sizeof *x);
    void *samples = wb_fft_alloc((size_t)len * wb_fft_input_bytes(input, precision));
    make_samples(precision, input, len, 7u, samples, x);
    for (int result = WB_FFT_SPECTRA; result <= WB_FFT_PEAKS; result++) {
        size_t bytes = (size_t)nframes * wb_fft_result_bytes(precision, n, result);
        char *ref = wb_fft_alloc(bytes), *out = wb_fft_alloc(bytes);
        struct wb_fft_kernel *k = plan(precision, input, n, 1, WB_FFT_HANN, WB_FFT_MEASURE);
        if (k)
            wb_fft_kernel_run(k, samples, nframes, hop, result, ref, NULL);
        wb_fft_kernel_destroy(&k);
        for (size_t i = 0; i < sizeof batches / sizeof batches[0]; i++) {
            k = plan(precision, input, n, batches[i], WB_FFT_HANN, WB_FFT_MEASURE);
            if (!k)
                continue;
            int64_t used = wb_fft_kernel_batch(k);
            memset(out, 0, bytes);
            wb_fft_kernel_run(k, samples, nframes, hop, result, out, NULL);
            WBTEST_CHECK(memcmp(ref, out, bytes) == 0,
                         "%s %s %s n=%lld hop %lld: batch %lld gives the same bits as batch 1", prec_name(precision),
                         input_name(input), result ? "peaks" : "spectra", (long long)n, (long long)hop, (long long)used);
            if (batches[i] == 0)
                WBTEST_CHECK(used >= 1 && used <= 32 && (used & (used - 1)) == 0,
                             "the batch chosen from the caches is a power of two up to 32 (%lld)", (long long)used);
            wb_fft_kernel_destroy(&k);
        }
        wb_fft_free(ref);
        wb_fft_free(out);
    }
    free(x);
    wb_fft_free(samples);
}

/* The reference DFT check passes on the kernel's own results and catches corrupted ones. */
static void test_dft_check(int precision, int input, int64_t n, int64_t batch)
{
    int64_t nb = n / 2 + 1;
    double *x = malloc((size_t)(n + 1) * sizeof *x), tol = wb_fft_tolerance(precision, n), rel = -1;
    size_t ib = wb_fft_input_bytes(input, precision), sb = wb_fft_sample_bytes(precision);
    char *samples = wb_fft_alloc((size_t)(n + 1) * ib);
    char *mags = wb_fft_alloc((size_t)nb * sb);
    struct wb_fft_peak peak;
    make_samples(precision, input, n + 1, 11u, samples, x);
    struct wb_fft_kernel *k = plan(precision, input, n, batch, WB_FFT_HANN, WB_FFT_ESTIMATE);
    const char *what = prec_name(precision), *how = input_name(input);
    if (k) {
        wb_fft_kernel_run(k, samples, 1, n, WB_FFT_SPECTRA, mags, NULL);
        wb_fft_kernel_run(k, samples, 1, n, WB_FFT_PEAKS, &peak, NULL);
        int rc = wb_fft_kernel_dft_check(k, samples, WB_FFT_SPECTRA, mags, 12, 5u, &rel);
        WBTEST_CHECK(rc == 0 && rel <= tol, "%s %s n=%lld: spectrum matches the naive DFT of 12 bins (%.2e <= %.2e)",
                     what, how, (long long)n, rel, tol);
        rc = wb_fft_kernel_dft_check(k, samples, WB_FFT_PEAKS, &peak, 12, 5u, &rel);
        WBTEST_CHECK(rc == 0 && rel <= tol, "%s %s n=%lld: peak matches the naive DFT (%.2e <= %.2e)", what, how,
                     (long long)n, rel, tol);
        /* The spectrum without the window is a right transform of the wrong frame: Parseval, the
         * round trip and a rerun all agree with it, the DFT does not. */
        struct wb_fft_kernel *rect = plan(precision, input, n, 1, WB_FFT_RECT, WB_FFT_ESTIMATE);
        if (rect)
            wb_fft_kernel_run(rect, samples, 1, n, WB_FFT_SPECTRA, mags, NULL);
        wb_fft_kernel_destroy(&rect);
        double t0 = wb_timer_now_s();
        wb_fft_kernel_dft_check(k, samples, WB_FFT_SPECTRA, mags, 12, 5u, &rel);
        double t_check = wb_timer_now_s() - t0;
        WBTEST_CHECK(rel > tol, "%s %s: a spectrum of the unwindowed frame is caught (%.2e)", what, how, rel);
        printf("# %s %s n=%lld: one DFT check of 12 bins took %.2f ms\n", what, how, (long long)n, 1e3 * t_check);
        wb_fft_kernel_run(k, samples, 1, n, WB_FFT_SPECTRA, mags, NULL);
        /* The strongest bin is always checked: 0.1% too loud there is caught. */
        int64_t top = peak.bin;
        if (precision == WB_FFT_DOUBLE)
            ((double *)mags)[top] *= 1.001;
        else
            ((float *)mags)[top] *= 1.001f;
        wb_fft_kernel_dft_check(k, samples, WB_FFT_SPECTRA, mags, 12, 5u, &rel);
        WBTEST_CHECK(rel > tol, "%s %s: a strongest bin 0.1%% off is caught (%.2e)", what, how, rel);
        memset(mags, 0x7f, (size_t)nb * sb / 2);
        wb_fft_kernel_dft_check(k, samples, WB_FFT_SPECTRA, mags, 12, 5u, &rel);
        WBTEST_CHECK(rel > tol, "%s %s: half a spectrum overwritten is caught (%.2e)", what, how, rel);
        memset(mags, 0xff, (size_t)nb * sb);
        wb_fft_kernel_dft_check(k, samples, WB_FFT_SPECTRA, mags, 12, 5u, &rel);
        WBTEST_CHECK(rel > tol, "%s %s: a spectrum of NaN is caught (%.2e)", what, how, rel);
        struct wb_fft_peak moved = {peak.bin + 3, peak.mag};
        wb_fft_kernel_dft_check(k, samples, WB_FFT_PEAKS, &moved, 12, 5u, &rel);
        WBTEST_CHECK(rel > tol, "%s %s: a peak in the wrong bin is caught (%.2e)", what, how, rel);
    }
    wb_fft_kernel_destroy(&k);
    free(x);
    wb_fft_free(samples);
    wb_fft_free(mags);
}

/* The batch rule on the caches of this machine's CPU (48 KiB L1d, 2 MiB L2) and on others. */
static void test_batch_for_caches(void)
{
    const int64_t K = 1024, l1 = 48 * K, l2 = 2048 * K;
    /* Frames of 1024 (single: 4 KiB in, 4.1 KiB out) fit in half of L1: one at a time. */
    WBTEST_CHECK(wb_fft_batch_for_caches(8 * K + 64, l1, l2) == 1, "a frame in half of L1 goes alone");
    WBTEST_CHECK(wb_fft_batch_for_caches(16 * K + 64, l1, l2) == 1, "double 1024 goes alone");
    /* Larger frames: the block nearest 512 KiB, never over 1 MiB. */
    int64_t s4096 = 16 * K + 16448, d4096 = 32 * K + 32832, s16384 = 64 * K + 65552, d16384 = 128 * K + 131088;
    WBTEST_CHECK(wb_fft_batch_for_caches(s4096, l1, l2) == 16, "single 4096: %lld",
                 (long long)wb_fft_batch_for_caches(s4096, l1, l2));
    WBTEST_CHECK(wb_fft_batch_for_caches(d4096, l1, l2) == 8, "double 4096");
    WBTEST_CHECK(wb_fft_batch_for_caches(s16384, l1, l2) == 4, "single 16384");
    WBTEST_CHECK(wb_fft_batch_for_caches(d16384, l1, l2) == 2, "double 16384");
    /* A frame over half of L2 goes alone; small frames on a huge L2 stop at 32. */
    WBTEST_CHECK(wb_fft_batch_for_caches(l2, l1, l2) == 1, "a frame over half of L2 goes alone");
    WBTEST_CHECK(wb_fft_batch_for_caches(32 * K, 16 * K, 64 * 1024 * K) == 32, "at most 32 frames");
    /* Unknown caches take the guesses: a Pi 4's 32 KiB L1d, 512 KiB L2. */
    WBTEST_CHECK(wb_fft_batch_for_caches(d4096, -1, -1) == wb_fft_batch_for_caches(d4096, WB_FFT_L1_GUESS,
                                                                                  WB_FFT_L2_GUESS),
                 "unknown caches are the guesses");
    WBTEST_CHECK(wb_fft_batch_for_caches(d4096, -1, -1) == 2, "double 4096 on 512 KiB of L2: %lld",
                 (long long)wb_fft_batch_for_caches(d4096, -1, -1));
    WBTEST_CHECK(wb_fft_batch_for_caches(20 * K, -1, -1) == 8, "20 KiB frames on a Pi 4: %lld",
                 (long long)wb_fft_batch_for_caches(20 * K, -1, -1));
}

/* Every buffer starts on a cache line, wherever the heap stands: fftw_malloc's 32 bytes left a frame
 * buffer half a line off in some processes and not in others, and t_compute moved with it. */
static void test_alloc_on_lines(void)
{
    enum { N = 96 };
    void *pad[N], *buf[N];
    int off_line = 0;
    for (int i = 0; i < N; i++) {
        pad[i] = malloc((size_t)(16 * i + 8)); /* heap positions of every residue */
        size_t bytes = i % 3 == 0 ? (size_t)(32 * i + 1) : i % 3 == 1 ? (size_t)(16448 * (i % 8 + 1)) : (size_t)i;
        buf[i] = wb_fft_alloc(bytes);
        if (buf[i])
            memset(buf[i], 0xa5, bytes ? bytes : 1);
        off_line += !buf[i] || (uintptr_t)buf[i] % WB_FFT_ALIGN_BYTES != 0;
    }
    WBTEST_CHECK(off_line == 0, "%d of %d FFT buffers (1 byte to 128 KiB, heap shifted) start off a %d-byte line",
                 off_line, N, WB_FFT_ALIGN_BYTES);
    for (int i = 0; i < N; i++) {
        wb_fft_free(buf[i]);
        free(pad[i]);
    }
    WBTEST_CHECK(wb_fft_alloc(SIZE_MAX - 8) == NULL, "a size that cannot be rounded to a line is refused");
}

int main(void)
{
    test_batch_for_caches();
    test_alloc_on_lines();
    /* Lengths: powers of two, an odd one and a prime, as whole-file mode meets any length. */
    const int64_t lens[] = {16, 64, 1024, 4096, 1000, 127};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        int64_t n = lens[i];
        /* 16-bit input at the longest length is left to the DFT check below: the naive DFT here is O(n^2). */
        for (int in = WB_FFT_IN_NATIVE; in <= (n < 4096 ? WB_FFT_IN_S16 : WB_FFT_IN_NATIVE); in++) {
            double es = compare_frames(WB_FFT_SINGLE, in, n, 4, 9, n / 2 ? n / 2 : 1, WB_FFT_HANN);
            double ed = compare_frames(WB_FFT_DOUBLE, in, n, 4, 9, n / 2 ? n / 2 : 1, WB_FFT_HANN);
            WBTEST_CHECK(es < 1e-5, "single precision %s n=%lld matches the naive DFT (rel err %.2e)", input_name(in),
                         (long long)n, es);
            WBTEST_CHECK(ed < 1e-11, "double precision %s n=%lld matches the naive DFT (rel err %.2e)", input_name(in),
                         (long long)n, ed);
        }
    }
    double er = compare_frames(WB_FFT_DOUBLE, WB_FFT_IN_NATIVE, 256, 16, 5, 256, WB_FFT_RECT);
    WBTEST_CHECK(er < 1e-11, "no window, batch larger than the frame count (rel err %.2e)", er);
    er = compare_frames(WB_FFT_SINGLE, WB_FFT_IN_S16, 256, 0, 5, 256, WB_FFT_RECT);
    WBTEST_CHECK(er < 1e-5, "no window, 16-bit input, chosen batch (rel err %.2e)", er);

    for (int prec = WB_FFT_SINGLE; prec <= WB_FFT_DOUBLE; prec++)
        for (int in = WB_FFT_IN_NATIVE; in <= WB_FFT_IN_S16; in++) {
            /* 1000 and 127 points leave frames that are not a multiple of the SIMD width. */
            test_batch_invariance(prec, in, 1024, 512);
            test_batch_invariance(prec, in, 1000, 333);
            test_batch_invariance(prec, in, 127, 61);
            test_dft_check(prec, in, 4096, 0);
            test_dft_check(prec, in, 1000, 0);
        }
    /* Whole-file lengths: 220501 = 23 x 9587 points, one frame, as --mode whole plans it. */
    for (int prec = WB_FFT_SINGLE; prec <= WB_FFT_DOUBLE; prec++)
        test_dft_check(prec, WB_FFT_IN_S16, 220501, 1);

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
