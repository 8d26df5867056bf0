#include "fftw/fft.h"

const char *const wb_fft_precision_names[] = {"single", "double", NULL};
const char *const wb_fft_effort_names[] = {"estimate", "measure", "patient", NULL};
const char *const wb_fft_window_names[] = {"hann", "none", NULL};
const char *const wb_fft_result_names[] = {"spectra", "peaks", NULL};
