/* wbspectra: the STFT that `wulfbench fft` computes, over one WAV file, with its spectra and per-frame
 * peaks written out, so that builds for different architectures can be compared number by number.
 * It runs wulfbench's own kernel (fftw/fft and fftw/kernels) with the variant named, as fft does.
 *
 * Usage: wbspectra FILE.wav single|double FRAME HOP VARIANT|auto OUT
 * OUT (little-endian): int64 nframes, int64 nbins, nframes*nbins float64 magnitudes, then per frame
 * int32 peak bin, float32 peak magnitude. stdout: "variant NAME tolerance T nframes N nbins B". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/audio.h"
#include "core/error.h"
#include "fftw/fft.h"
#include "fftw/kernels.h"

static int fail(const char *what)
{
    fprintf(stderr, "wbspectra: %s: %s\n", what, wb_error_message());
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: wbspectra FILE.wav single|double FRAME HOP VARIANT|auto OUT\n");
        return 2;
    }
    int precision = !strcmp(argv[2], "double") ? WB_FFT_DOUBLE : WB_FFT_SINGLE;
    int64_t n = atoll(argv[3]), hop = atoll(argv[4]);
    if (n < 16 || hop < 1) {
        fprintf(stderr, "wbspectra: FRAME must be 16 or more and HOP 1 or more\n");
        return 2;
    }
    if (strcmp(argv[5], "auto") ? wb_kern_select(argv[5]) : wb_kern_init())
        return fail(argv[5]);
    struct wb_audio a;
    if (wb_audio_read_wav(argv[1], &a))
        return fail(argv[1]);
    int64_t nframes = a.nsamples < n ? 0 : (a.nsamples - n) / hop + 1, nbins = n / 2 + 1;
    struct wb_fft_kernel *k = NULL;
    struct wb_fft_spec spec = {precision, n, 0, WB_FFT_HANN, WB_FFT_ESTIMATE, WB_FFT_IN_NATIVE};
    if (wb_fft_kernel_plan(&k, &spec))
        return fail("plan");
    size_t sb = wb_fft_sample_bytes(precision);
    void *in = wb_fft_alloc((size_t)a.nsamples * sb);
    void *spectra = malloc((size_t)(nframes ? nframes : 1) * wb_fft_result_bytes(precision, n, WB_FFT_SPECTRA));
    struct wb_fft_peak *peaks = malloc((size_t)(nframes ? nframes : 1) * sizeof *peaks);
    double *row = malloc((size_t)nbins * sizeof *row);
    FILE *f = fopen(argv[6], "wb");
    if (!in || !spectra || !peaks || !row || !f) {
        fprintf(stderr, "wbspectra: out of memory or cannot write %s\n", argv[6]);
        return 1;
    }
    wb_fft_convert(in, a.samples, a.nsamples, precision);
    wb_fft_kernel_run(k, in, nframes, hop, WB_FFT_SPECTRA, spectra, NULL);
    wb_fft_kernel_run(k, in, nframes, hop, WB_FFT_PEAKS, peaks, NULL);
    fwrite(&nframes, sizeof nframes, 1, f);
    fwrite(&nbins, sizeof nbins, 1, f);
    for (int64_t fr = 0; fr < nframes; fr++) {
        for (int64_t b = 0; b < nbins; b++)
            row[b] = precision == WB_FFT_DOUBLE ? ((const double *)spectra)[fr * nbins + b]
                                                : ((const float *)spectra)[fr * nbins + b];
        fwrite(row, sizeof *row, (size_t)nbins, f);
    }
    for (int64_t fr = 0; fr < nframes; fr++) {
        fwrite(&peaks[fr].bin, sizeof peaks[fr].bin, 1, f);
        fwrite(&peaks[fr].mag, sizeof peaks[fr].mag, 1, f);
    }
    int rc = fclose(f) ? fail("close") : 0;
    printf("variant %s tolerance %.3g nframes %lld nbins %lld\n", wb_kern_variant(), wb_fft_tolerance(precision, n),
           (long long)nframes, (long long)nbins);
    free(row);
    free(peaks);
    free(spectra);
    wb_fft_free(in);
    wb_fft_kernel_destroy(&k);
    wb_audio_free(&a);
    return rc;
}
