#include <stdlib.h>
#include <string.h>

#include "bench/fft/bench_fft_int.h"
#include "core/error.h"
#include "fftw/fft.h"
#include "bench/fft/options_fft.h"

int64_t wb_fftb_frames_in(int64_t samples, int64_t frame, int64_t hop)
{
    return samples < frame ? 0 : 1 + (samples - frame) / hop;
}

void wb_fftb_layout_free(struct wb_fftb_layout *l)
{
    free(l->units);
    l->units = NULL;
}

int wb_fftb_layout_build(struct wb_fftb_layout *l, const struct wb_fft_opts *f, int nfiles,
                         const int64_t *file_samples, const int64_t *file_off)
{
    int stft = f->mode == WB_MODE_STFT;
    int64_t total = 0;
    for (int j = 0; j < nfiles; j++)
        total += stft ? wb_fftb_frames_in(file_samples[j], f->frame, f->hop) : 1;
    memset(l, 0, sizeof *l);
    l->units = malloc((size_t)(total ? total : 1) * sizeof *l->units);
    if (!l->units)
        return wb_error_set(WB_ENOMEM, "out of memory for %lld transforms", (long long)total);
    l->nfiles = nfiles;
    l->nunits = total;
    int64_t u = 0, off = 0;
    for (int j = 0; j < nfiles; j++) {
        int64_t count = stft ? wb_fftb_frames_in(file_samples[j], f->frame, f->hop) : 1;
        for (int64_t i = 0; i < count; i++, u++) {
            int64_t n = stft ? f->frame : file_samples[j];
            l->units[u] = (struct wb_fftb_unit){j, file_off[j] + (stft ? i * f->hop : 0), n, off,
                                                (int64_t)wb_fft_result_bytes(f->precision, n, f->result)};
            off += l->units[u].res_bytes;
        }
    }
    l->res_total = off;
    return 0;
}

int64_t wb_fftb_region_start(const struct wb_fftb_layout *l, int64_t u0) { return l->units[u0].off; }

int64_t wb_fftb_region_end(const struct wb_fftb_layout *l, int64_t u1)
{
    return l->units[u1 - 1].off + l->units[u1 - 1].n;
}

int64_t wb_fftb_result_span(const struct wb_fftb_layout *l, int64_t u0, int64_t u1)
{
    return u1 > u0 ? l->units[u1 - 1].res_off + l->units[u1 - 1].res_bytes - l->units[u0].res_off : 0;
}

void wb_fftb_block(int64_t nunits, int nranks, int first_compute, int q, int64_t *u0, int64_t *u1)
{
    int workers = nranks - first_compute;
    if (q < first_compute) {
        *u0 = *u1 = 0;
        return;
    }
    int w = q - first_compute;
    *u0 = nunits * w / workers;
    *u1 = nunits * (w + 1) / workers;
}

void wb_fftb_region(const struct wb_fftb_layout *l, int64_t total_samples, int nranks, int first_compute, int q,
                    int64_t *start, int64_t *main_end, int64_t *end)
{
    int64_t a, b;
    wb_fftb_block(l->nunits, nranks, first_compute, q, &a, &b);
    if (b == a) {
        *start = *main_end = *end = 0;
        return;
    }
    *start = wb_fftb_region_start(l, a);
    *end = wb_fftb_region_end(l, b);
    int64_t next = b < l->nunits ? l->units[b].off : total_samples;
    *main_end = *end < next ? *end : next;
}
