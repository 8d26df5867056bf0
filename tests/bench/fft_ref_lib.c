/* fft_ref's pipeline as a library, for fft_pair: compiled once as it is and once with -march=native
 * (REF_NATIVE), each under its own names, so that one process can run both. */
#define FFT_REF_NO_MAIN
/* The reference's other modes are not used here. */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "fft_ref.c"

#ifdef REF_NATIVE
#define REF(name) ref_native_##name
#else
#define REF(name) ref_o3_##name
#endif

struct work *REF(setup)(int dbl, int n, int files, const char *wisdom);
double REF(pass)(struct work *w, double *cpu);
const void *REF(pcm)(const struct work *w, long *file_samples, long *frames_per_file, int *batch);
const void *REF(spectra)(const struct work *w);

struct work *REF(setup)(int dbl, int n, int files, const char *wisdom)
{
    struct work *w = malloc(sizeof *w);
    if (!w || pipeline_setup(w, dbl, n, files, wisdom)) {
        free(w);
        return NULL;
    }
    return w;
}

double REF(pass)(struct work *w, double *cpu)
{
    double t = pass(w);
    *cpu = pass_cpu_s;
    return t;
}

const void *REF(pcm)(const struct work *w, long *file_samples, long *frames_per_file, int *batch)
{
    *file_samples = w->file_samples;
    *frames_per_file = w->frames_per_file;
    *batch = w->batch;
    return w->pcm;
}

const void *REF(spectra)(const struct work *w) { return w->spectra; }
