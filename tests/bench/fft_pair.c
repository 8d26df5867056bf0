/* fft_pair: wulfbench's compute against the reference pipeline, pass by pass in one process.
 *
 *   fft_pair single|double FRAME FILES ROUNDS WISDOM
 *
 * Four arms do the same work, the whole compute of `wulfbench fft --baseline --sweep files --files
 * FILES` (16-bit samples of 5 s files windowed, r2c one frame at a time, magnitudes), on the same
 * samples and with the same FFTW plan (the reference plans FFTW_PATIENT into WISDOM; wulfbench
 * plans from that wisdom):
 *   wb    wulfbench's kernel as every build has it (fftw/fft.c, fftw/kernels.c: the portable build,
 *         its loops picked for the CPU at start-up), called file by file as its compute does;
 *   wbn   the same from the NATIVE=1 build (-march=native), its names prefixed nat_ (the Makefile
 *         renames them with objcopy);
 *   ref   fft_ref's pipeline built like wulfbench (-O3), with its own best batch;
 *   refn  the same built with -O3 -march=native, as a user would build it for the machine.
 * Each round runs one pass of each arm, the order turning every round; the first two rounds warm
 * up and are not printed. Alternating passes of some 20 ms in one process means every arm sees the
 * same state of a shared machine, which moves on a scale of seconds: the paired ratios then decide a
 * few per cent where separate processes seconds apart cannot.
 *
 * Prints a header "# wb wbn ref refn wbc wbnc refc refnc" and one line a round: each arm's wall
 * seconds, then its thread CPU seconds. On stderr: the batches and the largest difference of
 * wulfbench's spectra from the reference's, relative to the largest magnitude. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/timer.h"
#include "fftw/fft.h"
#include "fftw/kernels.h"

struct work;
struct work *ref_o3_setup(int dbl, int n, int files, const char *wisdom);
double ref_o3_pass(struct work *w, double *cpu);
const void *ref_o3_pcm(const struct work *w, long *file_samples, long *frames_per_file, int *batch);
const void *ref_o3_spectra(const struct work *w);
struct work *ref_native_setup(int dbl, int n, int files, const char *wisdom);
double ref_native_pass(struct work *w, double *cpu);
const void *ref_native_pcm(const struct work *w, long *file_samples, long *frames_per_file, int *batch);
const void *ref_native_spectra(const struct work *w);

/* The NATIVE=1 build's kernel, renamed. */
int nat_wb_kern_init(void);
int nat_wb_fft_kernel_plan(struct wb_fft_kernel **k, const struct wb_fft_spec *spec);
int nat_wb_fft_kernel_run(struct wb_fft_kernel *k, const void *samples, int64_t nframes, int64_t hop, int result,
                          void *out, double *t_fft_s);
int64_t nat_wb_fft_kernel_batch(const struct wb_fft_kernel *k);

enum { WB, WBN, REF, REFN, ARMS, WARMUP = 2 };

struct wb_arm {
    struct wb_fft_kernel *k;
    int (*run)(struct wb_fft_kernel *, const void *, int64_t, int64_t, int, void *, double *);
    char *out;
};

/* One pass of a wulfbench arm: every file's frames through the kernel, as its compute runs them. */
static double wb_pass(const struct wb_arm *a, const int16_t *pcm, int files, long file_samples, long frames,
                      int64_t hop, size_t file_out, double *cpu)
{
    double t0 = wb_timer_now_s(), c0 = wb_timer_thread_cpu_s(), tf;
    for (int j = 0; j < files; j++)
        a->run(a->k, pcm + (size_t)j * (size_t)file_samples, frames, hop, WB_FFT_SPECTRA, a->out + (size_t)j * file_out,
               &tf);
    *cpu = wb_timer_thread_cpu_s() - c0;
    return wb_timer_now_s() - t0;
}

static double max_rel_diff(const char *a, const char *b, size_t values, int dbl)
{
    double diff = 0, top = 0;
    for (size_t i = 0; i < values; i++) {
        double x = dbl ? ((const double *)a)[i] : ((const float *)a)[i];
        double y = dbl ? ((const double *)b)[i] : ((const float *)b)[i];
        diff = fmax(diff, fabs(x - y));
        top = fmax(top, fabs(y));
    }
    return top > 0 ? diff / top : diff;
}

int main(int argc, char **argv)
{
    if (argc != 6 || (strcmp(argv[1], "single") && strcmp(argv[1], "double")) || atoi(argv[2]) < 16 ||
        atoi(argv[3]) < 1 || atoi(argv[4]) < 1) {
        fprintf(stderr, "usage: fft_pair single|double FRAME FILES ROUNDS WISDOM\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    int dbl = !strcmp(argv[1], "double"), n = atoi(argv[2]), files = atoi(argv[3]), rounds = atoi(argv[4]);
    const char *wisdom = argv[5];
    struct work *ref = ref_o3_setup(dbl, n, files, wisdom), *refn = ref_native_setup(dbl, n, files, wisdom);
    long file_samples, frames;
    int ref_batch, refn_batch;
    if (!ref || !refn || wb_kern_init() || nat_wb_kern_init()) {
        fprintf(stderr, "fft_pair: could not set up the arms\n");
        return 1;
    }
    const int16_t *pcm = ref_o3_pcm(ref, &file_samples, &frames, &ref_batch);
    ref_native_pcm(refn, &file_samples, &frames, &refn_batch);
    /* wulfbench plans from the wisdom the reference left in FFTW. */
    struct wb_fft_spec spec = {dbl ? WB_FFT_DOUBLE : WB_FFT_SINGLE, n, 0, WB_FFT_HANN, WB_FFT_PATIENT, WB_FFT_IN_S16};
    /* FFT_PAIR_BATCH: give wulfbench's arms this batch instead of the one their trial picks. */
    const char *forced = getenv("FFT_PAIR_BATCH");
    if (forced && atoll(forced) > 0)
        spec.batch = atoll(forced);
    size_t file_out = (size_t)frames * wb_fft_result_bytes(spec.precision, n, WB_FFT_SPECTRA);
    struct wb_arm arm[2] = {{NULL, wb_fft_kernel_run, NULL}, {NULL, nat_wb_fft_kernel_run, NULL}};
    if (wb_fft_kernel_plan(&arm[0].k, &spec) || nat_wb_fft_kernel_plan(&arm[1].k, &spec) ||
        !(arm[0].out = malloc(file_out * (size_t)files)) || !(arm[1].out = malloc(file_out * (size_t)files))) {
        fprintf(stderr, "fft_pair: could not plan wulfbench's kernel\n");
        return 1;
    }
    printf("# wb wbn ref refn wbc wbnc refc refnc\n");
    double t[ARMS], c[ARMS];
    for (int r = 0; r < rounds + WARMUP; r++) {
        for (int i = 0; i < ARMS; i++) {
            int a = (i + r) % ARMS;
            if (a == WB || a == WBN)
                t[a] = wb_pass(&arm[a], pcm, files, file_samples, frames, n / 2, file_out, &c[a]);
            else
                t[a] = a == REF ? ref_o3_pass(ref, &c[a]) : ref_native_pass(refn, &c[a]);
        }
        if (r >= WARMUP)
            printf("%.7f %.7f %.7f %.7f %.7f %.7f %.7f %.7f\n", t[WB], t[WBN], t[REF], t[REFN], c[WB], c[WBN], c[REF],
                   c[REFN]);
    }
    size_t values = (size_t)files * (size_t)frames * (size_t)(n / 2 + 1);
    fprintf(stderr, "batches: wb %lld, wbn %lld, ref %d, refn %d; kernel variant %s; spectra differ from the "
                    "reference's by at most %.2g (wb), %.2g (wbn) of the largest magnitude\n",
            (long long)wb_fft_kernel_batch(arm[0].k), (long long)nat_wb_fft_kernel_batch(arm[1].k), ref_batch,
            refn_batch, wb_kern_variant(), max_rel_diff(arm[0].out, ref_o3_spectra(ref), values, dbl),
            max_rel_diff(arm[1].out, ref_o3_spectra(ref), values, dbl));
    MPI_Finalize();
    return 0;
}
