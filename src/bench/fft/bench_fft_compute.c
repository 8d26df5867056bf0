#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/fft/bench_fft_int.h"
#include "core/error.h"
#include "core/timer.h"
#include "fftw/fft.h"
#include "bench/fft/options_fft.h"
#include "fftw/fft_wisdom.h"
#include "par/comm.h"

int wb_fftb_kernel_for(struct wb_fftb_ctx *c, int64_t n, struct wb_fft_kernel **out)
{
    for (int i = 0; i < c->kern.count; i++)
        if (c->kern.n[i] == n) {
            *out = c->kern.k[i];
            return 0;
        }
    if (c->kern.count == WB_FFTB_NKERNELS)
        wb_fftb_kernels_free(c);
    /* STFT frames go in blocks of the batch the CPU's caches suggest (wb_fft_batch_for_caches); whole
     * files one at a time. */
    int stft = c->f->mode == WB_MODE_STFT;
    struct wb_fft_spec spec = {c->f->precision, n, stft ? 0 : 1, c->f->window, c->f->plan, c->input};
#ifdef WB_TEST_FAULTS
    /* Test-only: force a batch, to show that results do not depend on it. */
    const char *forced = getenv("WB_FFT_BATCH");
    if (stft && forced && atoll(forced) > 0)
        spec.batch = atoll(forced);
#endif
    int rc = wb_fft_kernel_plan(out, &spec);
    if (rc == 0) {
        c->kern.k[c->kern.count] = *out;
        c->kern.n[c->kern.count++] = n;
        c->batch = wb_fft_kernel_batch(*out);
    }
    return rc;
}

void wb_fftb_kernels_free(struct wb_fftb_ctx *c)
{
    for (int i = 0; i < c->kern.count; i++)
        wb_fft_kernel_destroy(&c->kern.k[i]);
    c->kern.count = 0;
}

int wb_fftb_compute_units(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, int64_t u0, int64_t u1,
                          const char *base, int64_t base_off, char *dst, double *t_fft_s)
{
    double t_fft = 0;
    if (u1 > u0 && isnan(c->fft_on_s))
        c->fft_on_s = wb_timer_now_s();
    for (int64_t u = u0; u < u1;) {
        int64_t v = u;
        while (v + 1 < u1 && l->units[v + 1].file == l->units[u].file && l->units[v + 1].n == l->units[u].n)
            v++;
        struct wb_fft_kernel *k;
        int rc = wb_fftb_kernel_for(c, l->units[u].n, &k);
        if (rc)
            return rc;
        double t = 0;
        rc = wb_fft_kernel_run(k, base + (size_t)(l->units[u].off - base_off) * c->sb, v - u + 1, c->f->hop,
                               c->f->result, dst + (l->units[u].res_off - l->units[u0].res_off), &t);
        if (rc)
            return rc;
        t_fft += t;
        c->flops += (double)(v - u + 1) * wb_fft_flops(l->units[u].n);
        u = v + 1;
    }
#ifdef WB_TEST_FAULTS
    /* Test-only: corrupt one result so the verification path can be exercised. */
    const char *fault = getenv("WB_FAULT");
    if (fault && !strcmp(fault, "corrupt-fft") && u1 > u0)
        memset(dst, 0x7f, (size_t)l->units[u0].res_bytes / 2);
#endif
    if (u1 > u0)
        c->fft_off_s = wb_timer_now_s();
    *t_fft_s = t_fft;
    return 0;
}

int wb_fftb_share_plans(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l)
{
    if (c->nranks == 1 || c->f->plan == WB_FFT_ESTIMATE || c->baseline)
        return 0;
    int rc = 0;
    for (int64_t u = 0; c->rank == 0 && rc == 0 && u < l->nunits; u++) {
        struct wb_fft_kernel *k;
        if (u == 0 || l->units[u].n != l->units[u - 1].n)
            rc = wb_fftb_kernel_for(c, l->units[u].n, &k);
    }
    rc = wb_comm_agree(rc);
    return rc ? rc : wb_fft_wisdom_share(NULL);
}
