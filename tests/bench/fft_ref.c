/* Reference for `make bench`: a bare FFTW loop over the same frames wulfbench transforms.
 * Same plan (r2c, single precision, batches of 16, FFTW_MEASURE), frames streamed through
 * memory from one large buffer into another, as a real request's frames are.
 * Usage: fft_ref FRAMES [FRAME_SIZE] [REPS]; prints the median seconds and GFLOPS. */
#define _POSIX_C_SOURCE 200809L
#include <fftw3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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

int main(int argc, char **argv)
{
    long frames = argc > 1 ? atol(argv[1]) : 6784;
    int n = argc > 2 ? atoi(argv[2]) : 4096, reps = argc > 3 ? atoi(argv[3]) : 7, batch = 16;
    if (frames < batch || n < 16 || reps < 1) {
        fprintf(stderr, "usage: fft_ref FRAMES>=16 [FRAME_SIZE>=16] [REPS>=1]\n");
        return 2;
    }
    frames -= frames % batch;
    int nb = n / 2 + 1;
    float *in = fftwf_malloc(sizeof(float) * (size_t)n * (size_t)frames);
    fftwf_complex *out = fftwf_malloc(sizeof(fftwf_complex) * (size_t)nb * (size_t)frames);
    if (!in || !out) {
        fprintf(stderr, "fft_ref: out of memory\n");
        return 1;
    }
    fftwf_plan p = fftwf_plan_many_dft_r2c(1, &n, batch, in, NULL, 1, n, out, NULL, 1, nb, FFTW_MEASURE);
    for (long i = 0; i < (long)n * frames; i++)
        in[i] = (float)sin(0.001 * (double)i);
    double *t = malloc(sizeof(double) * (size_t)reps);
    for (int r = -1; r < reps; r++) {
        double t0 = now_s();
        for (long f = 0; f < frames; f += batch)
            fftwf_execute_dft_r2c(p, in + f * n, out + f * nb);
        if (r >= 0)
            t[r] = now_s() - t0;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp);
    double med = t[reps / 2], flops = 2.5 * n * log2(n) * (double)frames;
    printf("frames %ld n %d median_s %.6f gflops %.3f\n", frames, n, med, flops / med / 1e9);
    fftwf_destroy_plan(p);
    fftwf_free(in);
    fftwf_free(out);
    free(t);
    return 0;
}
