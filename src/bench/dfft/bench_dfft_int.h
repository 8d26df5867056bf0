/* bench_dfft_int: what the dfft benchmark's files share: the known input and its checks. */
#ifndef WB_BENCH_DFFT_INT_H
#define WB_BENCH_DFFT_INT_H

#include <stdint.h>

#include "fftw/fft_mpi.h"

/* Bytes of this rank's input (the part of a buffer the input occupies, padding included). */
int64_t wb_dfft_input_bytes(const struct wb_fftmpi_layout *l);

/* Fill buf (the layout's input) with the known input: a sum of a few complex exponentials (their
 * real part for r2c) at bins the check knows; random 1: a reproducible pseudo-random input instead,
 * the same for any rank count, which has no known spectrum. Local. 0 or WB_ENOMEM. */
int wb_dfft_fill(const struct wb_fftmpi_layout *l, void *buf, int random);

/* Largest |X - expected| over this rank's output bins, relative to N (the tones' amplitude is 1 at most).
 * Local: reduce it over ranks. */
double wb_dfft_spectrum_error(const struct wb_fftmpi_layout *l, const void *out);

/* Largest |y / N - x| over this rank's input points, relative to max |x| (x_max, over all ranks). Local. */
double wb_dfft_roundtrip_error(const struct wb_fftmpi_layout *l, const void *y, const void *x, double x_max);

/* Largest |x| over this rank's input points. Local. */
double wb_dfft_input_max(const struct wb_fftmpi_layout *l, const void *x);

/* Test builds: add a wrong value to one output bin, so the spectrum check must fail. Local. */
void wb_dfft_corrupt(const struct wb_fftmpi_layout *l, void *out);

/* Test builds: write this rank's input points and output bins to DIR/pNNN.{in,out,meta}.RANK for a
 * reference transform outside. Local. 0 or WB_EIO. */
int wb_dfft_dump(const char *dir, int point, int rank, const struct wb_fftmpi_layout *l, const void *in,
                 const void *out);

#endif
