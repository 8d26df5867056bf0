/* kernels: the loops around FFTW (window, magnitudes, peaks), built for several instruction sets and
 * one picked at start-up for the CPU found, so one portable binary runs at the machine's speed. */
#ifndef WB_KERNELS_H
#define WB_KERNELS_H

#include <stdint.h>

/* Names of the variants this build holds, baseline first; NULL-terminated. x86-64: default (SSE2),
 * avx2 (the psABI level x86-64-v3: AVX2, FMA, BMI2), avx512 (x86-64-v4: AVX-512 F, BW, CD, DQ, VL);
 * aarch64: neon, and sve when the compiler offers it. */
extern const char *const wb_kern_variant_names[];

/* Pick the best variant this CPU runs. In the fault build WB_KERNEL_VARIANT=NAME forces one.
 * Local. 0, or WB_EUSAGE (unknown name, or the CPU lacks it). */
int wb_kern_init(void);

/* Pick a variant by name. Local. 0, or WB_EUSAGE if unknown or this CPU cannot run it. */
int wb_kern_select(const char *name);

/* 1 if this CPU can run the named variant, 0 if not or unknown. Local. */
int wb_kern_supported(const char *name);

/* The variant in use (its index in wb_kern_variant_names, and its name). wb_kern_init picks one
 * if none was picked yet. Local. */
int wb_kern_variant_index(void);
const char *wb_kern_variant(void);

/* dst[i] = s[i] * w[i] for 0 <= i < n: 16-bit samples (or samples in the precision) times a
 * window that carries any scale. dst must not overlap s or w. Local. */
void wb_kern_window_s16_f(float *dst, const int16_t *s, const float *w, int64_t n);
void wb_kern_window_s16_d(double *dst, const int16_t *s, const double *w, int64_t n);
void wb_kern_window_f(float *dst, const float *s, const float *w, int64_t n);
void wb_kern_window_d(double *dst, const double *s, const double *w, int64_t n);

/* mag[b] = sqrt(re^2 + im^2) of nb complex values c (interleaved re, im). Local. */
void wb_kern_mag_f(float *mag, const float *c, int64_t nb);
void wb_kern_mag_d(double *mag, const double *c, int64_t nb);

/* The strongest of bins 1..nb-1 of c (interleaved re, im), the first on ties, compared by
 * re^2 + im^2, which goes to *m2 (NaN bins never win). 0 and *m2 = -1 when no bin qualifies. Local. */
int32_t wb_kern_peak_f(const float *c, int64_t nb, float *m2);
int32_t wb_kern_peak_d(const double *c, int64_t nb, double *m2);

#endif
