/* fft: the only module that includes fftw3.h: plans, wisdom, blocked execution, checks, flop counts. */
#ifndef WB_FFT_H
#define WB_FFT_H

#include <stddef.h>
#include <stdint.h>

enum wb_fft_precision { WB_FFT_SINGLE = 0, WB_FFT_DOUBLE = 1 };
enum wb_fft_effort { WB_FFT_ESTIMATE = 0, WB_FFT_MEASURE = 1, WB_FFT_PATIENT = 2 };
enum wb_fft_window { WB_FFT_HANN = 0, WB_FFT_RECT = 1 };
enum wb_fft_result { WB_FFT_SPECTRA = 0, WB_FFT_PEAKS = 1 };
/* Names of the values above, as options and result files spell them; NULL-terminated. */
extern const char *const wb_fft_precision_names[];
extern const char *const wb_fft_effort_names[];
extern const char *const wb_fft_window_names[];
extern const char *const wb_fft_result_names[];
/* How the samples a kernel reads are stored: in its precision, or as 16-bit PCM (scaled by 1/32768). */
enum wb_fft_input { WB_FFT_IN_NATIVE = 0, WB_FFT_IN_S16 = 1 };

/* One result of --result peaks: the strongest non-DC bin of a frame. */
struct wb_fft_peak {
    int32_t bin;
    float mag;
};

/* A one-frame r2c plan, the window and the buffers for blocks of frames. */
struct wb_fft_kernel;

/* What a kernel transforms and how it plans. */
struct wb_fft_spec {
    int precision;  /* enum wb_fft_precision */
    int64_t n;      /* points per transform */
    int64_t batch;  /* frames windowed, transformed and reduced per block; 0: from the CPU's caches */
    int window;     /* enum wb_fft_window */
    int effort;     /* enum wb_fft_effort */
    int input;      /* enum wb_fft_input: how the samples it reads are stored */
};

/* Build (or reuse from wisdom) the r2c plan of one frame of spec->n points and, if spec->batch is 0,
 * pick the batch from CPU 0's caches (wb_fft_batch_for_caches). Results do not depend on the batch:
 * every frame goes through the same plan. Local. 0, WB_EUSAGE, WB_EFFTW or WB_ENOMEM. */
int wb_fft_kernel_plan(struct wb_fft_kernel **k, const struct wb_fft_spec *spec);

/* wb_fft_kernel_plan with native input and the batch given (at least 1). Local. */
int wb_fft_kernel_create(struct wb_fft_kernel **k, int precision, int64_t n, int64_t batch, int window,
                         int effort);

/* The cache sizes taken where the CPU does not say (a Raspberry Pi 4's L1d and a small core's L2). */
enum { WB_FFT_L1_GUESS = 32 << 10, WB_FFT_L2_GUESS = 512 << 10 };

/* Frames per block for frames of frame_bytes (a frame's samples and its spectrum) on a core with
 * these L1 data and L2 caches (<= 0: unknown, the guesses above). A frame that fits in half of L1
 * goes alone, and the block stays in L1; a larger frame goes in the power of two up to 32 whose
 * block is nearest a quarter of L2, never over half of it, so that each phase streams through L2
 * for long runs. Timing candidates at plan time could not tell these apart (docs/kernels.md). */
int64_t wb_fft_batch_for_caches(int64_t frame_bytes, int64_t l1_bytes, int64_t l2_bytes);

/* Frames per block this kernel works in (chosen or given). */
int64_t wb_fft_kernel_batch(const struct wb_fft_kernel *k);
/* FFTW's own description of the forward plan (fftw_sprint_plan): which algorithm and codelets its
 * planner picked. Two runs that print different text ran different transforms. Fresh (free it);
 * NULL if out of memory. Local. */
char *wb_fft_kernel_plan_text(const struct wb_fft_kernel *k);

/* Free plans and buffers; sets *k to NULL. Local. */
void wb_fft_kernel_destroy(struct wb_fft_kernel **k);

/* Bytes of one sample in this precision (4 or 8). */
size_t wb_fft_sample_bytes(int precision);

/* Bytes of one frame's result: (n/2+1) magnitudes, or one wb_fft_peak. */
size_t wb_fft_result_bytes(int precision, int64_t n, int result);

/* Transform nframes frames taken from samples (stored as the kernel's input format) at offsets
 * 0, hop, 2*hop, ...; write each frame's result (magnitudes or a peak) to out, in order.
 * *t_fft_s (may be NULL) receives the seconds spent inside FFTW execute. Local. Returns 0. */
int wb_fft_kernel_run(struct wb_fft_kernel *k, const void *samples, int64_t nframes, int64_t hop, int result,
                      void *out, double *t_fft_s);

/* Check up to max_check frames (spread over nframes) of samples outside any timing:
 * Parseval's identity of the windowed frame and a c2r round trip. Relative errors out. Local. */
int wb_fft_kernel_check(struct wb_fft_kernel *k, const void *samples, int64_t nframes, int64_t hop,
                        int64_t max_check, double *parseval_rel, double *roundtrip_rel);

/* Naive DFT of nbins (at most 16) bins of one frame (frame: its first sample, stored as the kernel reads them):
 * the strongest non-DC bin of got, DC, and bins drawn from seed. got is that frame's result as
 * wb_fft_kernel_run wrote it (result: enum wb_fft_result). *max_rel: the largest difference over the
 * frame's strongest magnitude (spectra), or over the peak's beyond its float rounding (peaks: also
 * any checked bin louder than the peak). O(n * nbins) in double precision, O(nbins) memory, for use
 * outside timing. Local. Returns 0. */
int wb_fft_kernel_dft_check(const struct wb_fft_kernel *k, const void *frame, int result, const void *got,
                            int nbins, uint64_t seed, double *max_rel);

/* The tolerance a check must stay under in this precision (relative error). */
double wb_fft_tolerance(int precision, int64_t n);

/* 2.5 * n * log2(n): the conventional flop count of one real transform of length n. */
double wb_fft_flops(int64_t n);

/* Copy float samples into dst in the given precision (float or double). Local. */
void wb_fft_convert(void *dst, const float *src, int64_t n, int precision);

/* Bytes of one stored sample: 2 for WB_FFT_IN_S16, else the precision's. */
size_t wb_fft_input_bytes(int format, int precision);

/* Store float samples as format: in the precision, or rounded to 16-bit PCM (exact for samples
 * that came from 8- or 16-bit PCM). Local. */
void wb_fft_store(void *dst, const float *src, int64_t n, int format, int precision);

/* Memory that starts on a cache line (WB_FFT_ALIGN_BYTES, more than any SIMD alignment FFTW asks);
 * free with wb_fft_free. NULL when out of memory. Local. */
enum { WB_FFT_ALIGN_BYTES = 64 };
void *wb_fft_alloc(size_t nbytes);
void wb_fft_free(void *p);

/* Wisdom as a string (caller frees with free), and import of such a string. Local. */
char *wb_fft_wisdom_export(void);
int wb_fft_wisdom_import(const char *wisdom);

/* FFTW's version string. */
const char *wb_fft_version(void);

#endif
