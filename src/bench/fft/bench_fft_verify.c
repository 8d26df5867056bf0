#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/audio.h"
#include "bench/fft/bench_fft_int.h"
#include "par/comm.h"
#include "core/error.h"
#include "fftw/fft.h"
#include "bench/options.h"
#include "bench/fft/options_fft.h"
#include "io/results.h"
#include "core/stats.h"

/* Value of result element i (a magnitude) in the run's precision. */
static double mag_at(const struct wb_fftb_ctx *c, const char *p, int64_t i)
{
    return c->f->precision == WB_FFT_DOUBLE ? ((const double *)p)[i] : ((const float *)p)[i];
}

/* Known tones found in one synthetic file's score (mean spectrum), and the worst bin error. */
static void count_tones(const double *score, int64_t nb, double bin_hz, int *expected, int *found, double *max_err)
{
    double freqs[8], amps[8];
    int ntones = wb_audio_synth_tones(freqs, amps, 8);
    double *sorted = malloc((size_t)nb * sizeof *sorted);
    double median = sorted ? (memcpy(sorted, score, (size_t)nb * sizeof *sorted), wb_stats_median(sorted, (size_t)nb))
                           : INFINITY;
    free(sorted);
    for (int i = 0; i < ntones; i++) {
        (*expected)++;
        /* A tone stands out when the strongest bin within one bin of it is 10x the median level. */
        int64_t b = (int64_t)llround(freqs[i] / bin_hz), lo = b > 1 ? b - 1 : 1, hi = b + 1 < nb ? b + 1 : nb - 1;
        int64_t at = lo;
        for (int64_t k = lo; k <= hi; k++)
            if (score[k] > score[at])
                at = k;
        double err = fabs((double)at * bin_hz - freqs[i]) / bin_hz;
        *max_err = fmax(*max_err, err);
        *found += score[at] > 10.0 * median && err <= 1.0;
    }
}

/* Root: strongest non-DC frequency of each file, and how many known tones stand out. */
static void analyse_results(const struct wb_fftb_ctx *c, const struct wb_fftb_layout *l,
                            const struct wb_fftb_request *rq, const char *results, int *tones_expected,
                            int *tones_found, double *max_tone_err)
{
    double freqs[8], amps[8];
    wb_audio_synth_tones(freqs, amps, 8);
    int synthetic = c->nfiles_in == 0;
    *tones_expected = *tones_found = 0;
    *max_tone_err = 0;
    int64_t u0 = 0;
    for (int j = 0; j < l->nfiles; j++) {
        int64_t u1 = u0;
        while (u1 < l->nunits && l->units[u1].file == j)
            u1++;
        double rate = rq->rows[j].sample_rate;
        int64_t n = u1 > u0 ? l->units[u0].n : 0, nb = n / 2 + 1;
        double bin_hz = n ? rate / (double)n : 0;
        double *score = u1 > u0 ? calloc((size_t)nb, sizeof *score) : NULL;
        if (!score) {
            u0 = u1;
            continue;
        }
        /* Mean magnitude spectrum, or (peaks) magnitude-weighted votes for each frame's peak bin. */
        for (int64_t u = u0; u < u1; u++) {
            const char *r = results + l->units[u].res_off;
            if (c->f->result == WB_FFT_PEAKS) {
                const struct wb_fft_peak *pk = (const void *)r;
                if (pk->bin >= 0 && pk->bin < nb)
                    score[pk->bin] += pk->mag;
            } else {
                for (int64_t b = 0; b < nb; b++)
                    score[b] += mag_at(c, r, b) / (double)(u1 - u0);
            }
        }
        int64_t best = 1;
        for (int64_t b = 1; b < nb; b++)
            if (score[b] > score[best])
                best = b;
        rq->rows[j].peak_hz = (double)best * bin_hz;
        if (synthetic && c->f->result == WB_FFT_PEAKS) {
            /* Each frame's peak is the loudest tone. */
            (*tones_expected)++;
            double err = fabs(rq->rows[j].peak_hz - freqs[0]) / bin_hz;
            *max_tone_err = fmax(*max_tone_err, err);
            *tones_found += err <= 1.0;
        } else if (synthetic) {
            count_tones(score, nb, bin_hz, tones_expected, tones_found, max_tone_err);
        }
        free(score);
        u0 = u1;
    }
}

/* Relative difference of a result that came back over the network (got) from one computed here (want). */
static double result_diff(const struct wb_fftb_ctx *c, const struct wb_fftb_unit *u, const char *got, const char *want)
{
    if (c->f->result == WB_FFT_PEAKS) {
        const struct wb_fft_peak *a = (const void *)got, *b = (const void *)want;
        double rel = a->bin == b->bin ? fabs(a->mag - b->mag) / fmax(fabs(b->mag), 1e-30) : 1.0;
        return isfinite(rel) ? rel : INFINITY;
    }
    int64_t nb = u->n / 2 + 1;
    double peak = 0, diff = 0;
    for (int64_t b = 0; b < nb; b++) {
        double x = mag_at(c, want, b), y = mag_at(c, got, b);
        peak = fmax(peak, fabs(x));
        diff = fmax(diff, isfinite(y) ? fabs(x - y) : INFINITY);
    }
    return peak > 0 ? diff / peak : diff;
}

/* Root: recompute a few units from its own samples and compare with what came back over the network. */
static int crosscheck(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const struct wb_fftb_request *rq,
                      const char *results, double *max_rel)
{
    *max_rel = 0;
    int64_t picks = l->nunits < 8 ? l->nunits : 8;
    for (int64_t i = 0; i < picks; i++) {
        int64_t u = picks > 1 ? i * (l->nunits - 1) / (picks - 1) : 0;
        char *out = wb_fft_alloc((size_t)l->units[u].res_bytes);
        double tf;
        int rc = out ? wb_fftb_compute_units(c, l, u, u + 1, rq->buf, 0, out, &tf)
                     : wb_error_set(WB_ENOMEM, "out of memory for the cross-check");
        if (rc == 0)
            *max_rel = fmax(*max_rel, result_diff(c, &l->units[u], results + l->units[u].res_off, out));
        wb_fft_free(out);
        if (rc)
            return rc;
    }
    return 0;
}

double wb_fftb_results_diff(const struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const char *a, const char *b)
{
    double worst = 0;
    for (int64_t u = 0; u < l->nunits; u++)
        worst = fmax(worst, result_diff(c, &l->units[u], a + l->units[u].res_off, b + l->units[u].res_off));
    return worst;
}

/* Parseval and round trip over a sample of units [u0, u1) whose samples start at base (offset base_off). */
static int check_units(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, int64_t u0, int64_t u1,
                       const char *base, int64_t base_off, double *p, double *r)
{
    int rc = 0;
    for (int64_t u = u0; rc == 0 && u < u1;) {
        int64_t v = u;
        while (v + 1 < u1 && l->units[v + 1].file == l->units[u].file && l->units[v + 1].n == l->units[u].n)
            v++;
        struct wb_fft_kernel *k;
        double pp = 0, rr = 0;
        rc = wb_fftb_kernel_for(c, l->units[u].n, &k);
        if (rc == 0)
            rc = wb_fft_kernel_check(k, base + (size_t)(l->units[u].off - base_off) * c->sb, v - u + 1, c->f->hop, 4,
                                     &pp, &rr);
        *p = fmax(*p, pp);
        *r = fmax(*r, rr);
        u = v + 1;
    }
    return rc;
}

/* Root: a naive DFT of a few bins of the middle unit, from the request's samples, against the result
 * that came back for it. Unlike the checks above it does not go through the kernel, so it tests the
 * transform itself (window, conversion, FFT, magnitudes). */
static int dft_check(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const struct wb_fftb_request *rq,
                     const char *results, double *max_rel)
{
    *max_rel = 0;
    if (l->nunits == 0)
        return 0;
    const struct wb_fftb_unit *u = &l->units[l->nunits / 2];
    struct wb_fft_kernel *k;
    int rc = wb_fftb_kernel_for(c, u->n, &k);
    if (rc == 0)
        rc = wb_fft_kernel_dft_check(k, rq->buf + (size_t)u->off * c->sb, c->f->result, results + u->res_off, 12,
                                     c->o->common.seed ^ (uint64_t)(l->nunits / 2), max_rel);
    return rc;
}

/* Root: the cross-check, the DFT check, the known tones and the verdict from the agreed Parseval and
 * round-trip maxima. */
static int judge(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const struct wb_fftb_request *rq,
                 const char *results, struct wb_fftb_verdict *v)
{
    int rc = crosscheck(c, l, rq, results, &v->crosscheck);
    if (rc == 0)
        rc = dft_check(c, l, rq, results, &v->dft);
    analyse_results(c, l, rq, results, &v->tones_expected, &v->tones_found, &v->tone_err);
#ifdef WB_TEST_FAULTS
    v->digest = 0xcbf29ce484222325u;
    for (int64_t i = 0; i < l->res_total; i++)
        v->digest = (v->digest ^ (unsigned char)results[i]) * 0x100000001b3u;
#endif
    int64_t n = l->nunits ? l->units[0].n : 2, n_dft = l->nunits ? l->units[l->nunits / 2].n : 2;
    double tol = wb_fft_tolerance(c->f->precision, n);
    v->max_error = fmax(fmax(fmax(v->parseval, v->roundtrip), v->crosscheck), v->dft);
    v->passed = v->parseval <= tol && v->roundtrip <= tol && v->crosscheck <= tol &&
                v->dft <= wb_fft_tolerance(c->f->precision, n_dft) && v->tones_found == v->tones_expected;
    snprintf(v->check, sizeof v->check, "parseval<=%.1e, roundtrip<=%.1e, crosscheck<=%.1e, dft<=%.1e%s", tol, tol,
             tol, tol, c->nfiles_in == 0 ? ", known tones in their bins" : "");
    return rc;
}

int wb_fftb_verify_point(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const struct wb_fftb_request *rq,
                         const char *results, struct wb_fftb_verdict *v)
{
    double p = 0, r = 0;
    int rc = 0;
    memset(v, 0, sizeof *v);
    if (c->f->schedule != WB_SCHED_DYNAMIC || c->baseline) {
        int64_t u0, u1;
        wb_fftb_block(l->nunits, c->nranks, c->first_compute, c->rank, &u0, &u1);
        if (u1 > u0)
            rc = check_units(c, l, u0, u1, c->in_base, c->in_base_off, &p, &r);
    } else if (c->rank == 0) {
        rc = check_units(c, l, 0, l->nunits, rq->buf, 0, &p, &r);
    }
    rc = wb_comm_agree(rc);
    if (rc == 0)
        rc = wb_comm_max_f64(p, &v->parseval);
    if (rc == 0)
        rc = wb_comm_max_f64(r, &v->roundtrip);
    if (rc)
        return rc;
    if (c->rank == 0)
        rc = judge(c, l, rq, results, v);
    rc = wb_comm_agree(rc);
    if (rc == 0)
        rc = wb_comm_bcast(&v->passed, sizeof v->passed, 0);
    return rc;
}
