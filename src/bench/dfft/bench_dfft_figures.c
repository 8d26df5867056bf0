/* The figures of one dfft point, computed once from what every rank measured: per direction the
 * slowest rank's medians, GFLOPS, the transpose's share and rates and the exchange's own rate; the
 * mean of both directions; the ceiling of a rank's transpose. The writer stores them and the printer
 * prints them; neither computes one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/dfft/bench_dfft_int.h"
#include "bench/options.h"
#include "core/ceiling.h"
#include "core/error.h"
#include "core/stats.h"
#include "fftw/fft.h"
#include "par/comm.h"

const char *const wb_dfft_kind_names[] = {"c2c", "r2c"}, *const wb_dfft_precision_names[] = {"single", "double"},
                  *const wb_dfft_plan_names[] = {"estimate", "measure", "patient"};

void wb_dfft_shape_str(const struct wb_fftmpi_layout *l, char *out, size_t cap)
{
    int len = snprintf(out, cap, "%lld", (long long)l->n[0]);
    for (int d = 1; d < l->dims && len > 0 && (size_t)len < cap; d++)
        len += snprintf(out + len, cap - (size_t)len, "x%lld", (long long)l->n[d]);
}

/* Bytes this rank sends in the backward transform: the forward's, but with a transposed output the
 * backward skips the first transpose back, not the last, and the one left moves the other slab. */
static int64_t backward_bytes(const struct wb_fftmpi_layout *l)
{
    if (l->dims == 1 || !l->transposed_out)
        return l->bytes_transposed;
    return l->mid_count * (l->c0 - l->in_count) * l->c2 * 2 * (int64_t)wb_fft_sample_bytes(l->precision);
}

/* The exchange's own rate: the most bytes a rank sent in the transposes' MPI calls over the median,
 * across reps, of the shortest time a rank spent in them. A rank that reaches an exchange first
 * waits there for the others, so the last to arrive, which spends least, times the transfer alone.
 * Collective. */
static int exchange_rate(int reps, const struct wb_dfft_times *t, struct wb_dfft_dirfig *f)
{
    double *least = malloc((size_t)reps * sizeof *least), most = 0;
    if (!least)
        return wb_error_set(WB_ENOMEM, "out of memory");
    for (int i = 0; i < reps; i++)
        least[i] = -t->t_exchange[i];
    int rc = wb_comm_max_f64_n(least, (size_t)reps);
    for (int i = 0; i < reps; i++)
        least[i] = -least[i];
    rc = rc ? rc : wb_comm_max_f64((double)t->bytes_exchanged, &most);
    double s = rc == 0 ? wb_stats_median(least, (size_t)reps) : NAN;
    f->exchange_Bps = s > 0 && most > 0 ? most / s : NAN;
    free(least);
    return rc;
}

/* One direction's figures: medians over reps of the slowest rank, GFLOPS, the transpose's share and
 * rates. Collective. */
static int direction(int reps, const struct wb_fftmpi_layout *l, const struct wb_dfft_times *t,
                     struct wb_dfft_dirfig *f)
{
    double *slow = malloc((size_t)reps * 3 * sizeof *slow);
    if (!slow)
        return wb_error_set(WB_ENOMEM, "out of memory");
    memcpy(slow, t->t_total, (size_t)reps * sizeof *slow);
    memcpy(slow + reps, t->t_local, (size_t)reps * sizeof *slow);
    memcpy(slow + 2 * reps, t->t_transpose, (size_t)reps * sizeof *slow);
    int rc = wb_comm_max_f64_n(slow, (size_t)reps * 3);
    f->med_total = wb_stats_median(slow, (size_t)reps);
    f->med_local = l->dims > 1 ? wb_stats_median(slow + reps, (size_t)reps) : NAN;
    f->med_transpose = l->dims > 1 ? wb_stats_median(slow + 2 * reps, (size_t)reps) : NAN;
    f->gflops = wb_fftmpi_flops(l->kind, l->total) / f->med_total / 1e9;
    f->transpose_share = f->med_transpose / f->med_total;
    double mine = wb_stats_median(t->t_transpose, (size_t)reps);
    f->transpose_Bps = l->dims > 1 ? (double)f->bytes_transposed / mine : NAN;
    double bps = l->dims > 1 && mine > 0 && f->bytes_transposed > 0 ? (double)f->bytes_transposed / mine : NAN;
    double neg_min = NAN;
    if (rc == 0)
        rc = wb_comm_max_f64(isnan(bps) ? -INFINITY : -bps, &neg_min);
    f->transpose_Bps_min = rc == 0 ? -neg_min : NAN;
    if (!isfinite(f->transpose_Bps_min))
        f->transpose_Bps_min = NAN;
    free(slow);
    return rc ? rc : exchange_rate(reps, t, f);
}

/* The mean row of --direction both: times and GFLOPS of the mean of the two, as heFFTe's speed3d
 * reports, and the slower direction's transpose rate. */
static void mean_of_both(struct wb_dfft_figures *fg)
{
    const struct wb_dfft_dirfig *f = &fg->dir[0], *b = &fg->dir[1];
    fg->gflops_mean = fg->flops / (0.5 * (f->med_total + b->med_total)) / 1e9;
    fg->mean.med_total = 0.5 * (f->med_total + b->med_total);
    fg->mean.med_local = 0.5 * (f->med_local + b->med_local);
    fg->mean.med_transpose = 0.5 * (f->med_transpose + b->med_transpose);
    fg->mean.gflops = fg->gflops_mean;
    fg->mean.transpose_share = fg->mean.med_transpose / fg->mean.med_total;
    fg->mean.transpose_Bps_min = fmin(f->transpose_Bps_min, b->transpose_Bps_min);
}

/* Root: what a rank's transpose cannot pass on the run's machines (core/ceiling.h); NaN unknown. */
static double exchange_ceiling(const struct wb_results *res)
{
    int nm = 0;
    const struct wb_ceiling_machine *m = wb_results_machines(res, &nm, NULL);
    return m && nm > 0 ? wb_ceiling_exchange_Bps(m, nm) : NAN;
}

int wb_dfft_figures_compute(const struct wb_dfft_ctx *c, const struct wb_fftmpi_layout *l,
                            const struct wb_dfft_measured *m, struct wb_dfft_figures *fg)
{
    memset(fg, 0, sizeof *fg);
    wb_dfft_shape_str(l, fg->shape, sizeof fg->shape);
    fg->flops = wb_fftmpi_flops(l->kind, l->total);
    fg->dir[0].bytes_transposed = l->bytes_transposed;
    fg->dir[1].bytes_transposed = backward_bytes(l);
    int rc = 0;
    for (int d = 0; rc == 0 && d < m->ndir; d++)
        rc = direction(c->o->common.reps, l, &m->dir[d], &fg->dir[d]);
    if (rc == 0 && m->ndir > 1)
        mean_of_both(fg);
    fg->ceiling_Bps = exchange_ceiling(c->res);
    fg->rate_top_Bps = NAN;
    for (int d = 0; d < 2; d++) {
        double x = fg->dir[d].transpose_Bps_min;
        if (isfinite(x) && x > 0)
            fg->rate_top_Bps = isnan(fg->rate_top_Bps) ? x : fmax(fg->rate_top_Bps, x);
    }
    return rc;
}
