/* The figures of one fft point, computed once from what every rank measured: the slowest rank and
 * what its phases leave of t_total, the medians, flops and rates, the link's use and the paired
 * speedup. The writer stores them and the printer prints them; neither computes one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/fft/bench_fft_int.h"
#include "bench/fft/options_fft.h"
#include "core/error.h"
#include "core/ceiling.h"
#include "core/stats.h"
#include "fftw/fft.h"
#include "io/results.h"
#include "par/comm.h"

/* Collective: per repetition the slowest rank, the one with the largest t_distribute + t_compute +
 * t_gather (the lowest such rank on a tie), and its three phases, on every rank. One rank's phases
 * follow one another, so with t_total they make one consistent repetition. */
static int slowest_rank(struct wb_fftb_figures *fg, const struct wb_fftb_measured *m, int rank, double *col)
{
    int reps = m->reps;
    const struct wb_fftb_timing *tm = m->tm;
    for (int r = 0; r < reps; r++)
        col[r] = tm[r].t_dist_s + tm[r].t_comp_s + tm[r].t_gather_s;
    int rc = wb_comm_max_f64_n(col, (size_t)reps);
    /* The lowest rank among those with the largest sum: the largest -rank. */
    for (int r = 0; r < reps; r++)
        fg->over_s[r] = tm[r].t_dist_s + tm[r].t_comp_s + tm[r].t_gather_s == col[r] ? -(double)rank : -INFINITY;
    int src = rc ? rc : wb_comm_max_f64_n(fg->over_s, (size_t)reps);
    for (int r = 0; r < reps; r++) {
        fg->slowest_rank[r] = (int64_t)-fg->over_s[r];
        int mine = fg->slowest_rank[r] == rank;
        fg->slow_s[r] = mine ? tm[r].t_dist_s : -INFINITY;
        fg->slow_s[reps + r] = mine ? tm[r].t_comp_s : -INFINITY;
        fg->slow_s[2 * reps + r] = mine ? tm[r].t_gather_s : -INFINITY;
    }
    int mrc = src ? src : wb_comm_max_f64_n(fg->slow_s, (size_t)reps * 3);
    return rc ? rc : src ? src : mrc;
}

/* Root: per repetition what the slowest rank's phases leave of t_total (negative only when they
 * overlap), and their sum over t_total (the overlap: 1 when they follow one another); the medians. */
static void overhead(struct wb_fftb_figures *fg, const struct wb_fftb_measured *m)
{
    int reps = m->reps;
    for (int r = 0; r < reps; r++) {
        double sum = fg->slow_s[r] + fg->slow_s[reps + r] + fg->slow_s[2 * reps + r], total = m->tm[r].t_total_s;
        fg->overlap[r] = sum / total;
        fg->over_s[r] = total - sum;
    }
    fg->med_over_s = wb_stats_median(fg->over_s, (size_t)reps);
    fg->med_overlap = wb_stats_median(fg->overlap, (size_t)reps);
    for (int k = 0; k < 3; k++)
        fg->med_slow_s[k] = wb_stats_median(fg->slow_s + (size_t)k * (size_t)reps, (size_t)reps);
}

/* Collective: the medians of t_read, t_total and the longest rank's t_fft; flops; every rank's rate. */
static int medians_and_rates(struct wb_fftb_figures *fg, const struct wb_fftb_ctx *c, const struct wb_fftb_layout *l,
                             const struct wb_fftb_measured *m, double *col)
{
    int reps = m->reps;
    for (int r = 0; r < reps; r++)
        col[r] = m->tm[r].t_total_s;
    fg->med_total_s = wb_stats_median(col, (size_t)reps);
    for (int r = 0; r < reps; r++)
        col[r] = m->tm[r].t_read_s;
    fg->med_read_s = wb_stats_median(col, (size_t)reps);
    for (int r = 0; r < reps; r++)
        col[r] = m->tm[r].t_fft_s;
    int rc = wb_comm_max_f64_n(col, (size_t)reps);
    fg->med_fft_s = wb_stats_median(col, (size_t)reps);
    int frc = wb_comm_sum_f64(m->flops, &fg->total_flops);
    rc = rc ? rc : frc;
    fg->kbps = (double)fg->audio_bytes / 1000.0 / fg->med_total_s;
    /* A rank's own rate: its share of the audio over its median distribute + compute + gather. */
    int64_t audio_bytes = fg->audio_bytes;
    int brc = wb_comm_bcast(&audio_bytes, sizeof audio_bytes, 0);
    rc = rc ? rc : brc;
    for (int r = 0; r < reps; r++)
        col[r] = m->tm[r].t_dist_s + m->tm[r].t_comp_s + m->tm[r].t_gather_s;
    double busy_s = wb_stats_median(col, (size_t)reps);
    fg->rank_kbps = l->nunits && m->units ? (double)audio_bytes * (double)m->units / (double)l->nunits / 1000.0 / busy_s
                                         : 0.0;
    int grc = wb_comm_gather_f64(fg->rank_kbps, fg->rates);
    return rc ? rc : grc;
}

/* Collective: per repetition the span from the first rank's first transform to the last rank's last,
 * on the aligned clocks; the aggregate rate over the median span; one core's rate, the best any rank
 * had over its own median t_fft (or rank 0 alone, with --paired-baseline). Ranks that take turns on
 * a core leave gaps between their windows, and the span holds them. */
static int span_and_rate(struct wb_fftb_figures *fg, const struct wb_fftb_measured *m, double *col)
{
    int reps = m->reps;
    for (int r = 0; r < reps; r++) {
        col[r] = isnan(m->tm[r].t_fft_on_s) ? -INFINITY : -m->tm[r].t_fft_on_s;
        fg->span_s[r] = isnan(m->tm[r].t_fft_off_s) ? -INFINITY : m->tm[r].t_fft_off_s;
    }
    int rc = wb_comm_max_f64_n(col, (size_t)reps);
    rc = rc ? rc : wb_comm_max_f64_n(fg->span_s, (size_t)reps);
    for (int r = 0; r < reps; r++)
        fg->span_s[r] = isfinite(col[r]) && isfinite(fg->span_s[r]) ? fg->span_s[r] + col[r] : NAN;
    fg->med_span_s = wb_stats_median(fg->span_s, (size_t)reps);
    fg->gflops = fg->med_span_s > 0 ? fg->total_flops / fg->med_span_s / 1e9 : NAN;
    for (int r = 0; r < reps; r++)
        col[r] = m->tm[r].t_fft_s;
    double mine = wb_stats_median(col, (size_t)reps), core = m->flops > 0 && mine > 0 ? m->flops / mine / 1e9 : 0;
    if (m->alone) {
        for (int r = 0; r < reps; r++)
            col[r] = m->alone[r].t_fft_s;
        double alone = wb_stats_median(col, (size_t)reps);
        core = alone > 0 ? fmax(core, fg->total_flops / alone / 1e9) : core;
    }
    int crc = wb_comm_max_f64(core, &fg->core_gflops);
    return rc ? rc : crc;
}

/* Collective: the compute ceiling: per machine the ranks that computed, up to the cores they may use,
 * times one core's rate; the processing rate that ceiling allows, cut to the link's bound; whether
 * even the slowest repetition's rate passes it (beyond its own noise, then). */
static int ceiling(struct wb_fftb_figures *fg, const struct wb_fftb_ctx *c, const struct wb_fftb_measured *m)
{
    int nm = 0, *computing = c->rank == 0 ? calloc((size_t)c->nranks, sizeof *computing) : NULL;
    int rc = wb_comm_agree(c->rank == 0 && !computing ? wb_error_set(WB_ENOMEM, "out of memory") : 0);
    int did = m->flops > 0;
    rc = rc ? rc : wb_comm_check(MPI_Gather(&did, 1, MPI_INT, computing, 1, MPI_INT, 0, wb_comm_world()),
                                 "MPI_Gather of who computed");
    const int *machine_of = NULL;
    const struct wb_ceiling_machine *mach = wb_results_machines(c->res, &nm, &machine_of);
    fg->cores_used = 0;
    for (int i = 0; rc == 0 && c->rank == 0 && mach && machine_of && i < nm; i++) {
        int ranks = 0;
        for (int q = 0; q < c->nranks; q++)
            ranks += machine_of[q] == i && computing[q];
        fg->cores_used += mach[i].cores_usable > 0 && ranks > mach[i].cores_usable ? mach[i].cores_usable : ranks;
    }
    free(computing);
    if (c->rank != 0)
        return rc;
    fg->gflops_ceiling = fg->cores_used > 0 ? fg->cores_used * fg->core_gflops : NAN;
    fg->kbps_ceiling = fg->total_flops > 0 ? (double)fg->audio_bytes / 1000.0 * fg->gflops_ceiling * 1e9 / fg->total_flops
                                           : NAN;
    if (fg->link_bound_s > 0)
        fg->kbps_ceiling = fmin(fg->kbps_ceiling, (double)fg->audio_bytes / 1000.0 / fg->link_bound_s);
    double longest = -INFINITY;
    for (int r = 0; r < m->reps; r++)
        longest = isnan(fg->span_s[r]) ? longest : fmax(longest, fg->span_s[r]);
    fg->above = isfinite(longest) && longest > 0 && fg->total_flops / longest / 1e9 > fg->gflops_ceiling;
    double slowest = 0;
    for (int r = 0; r < m->reps; r++)
        slowest = fmax(slowest, m->tm[r].t_total_s);
    fg->kbps_above = slowest > 0 && (double)fg->audio_bytes / 1000.0 / slowest > fg->kbps_ceiling;
    return rc;
}

/* Ethernet's own bytes per frame: header 14, FCS 4, preamble and start 8, the gap after it 12. */
#define ETH_WIRE_BYTES 38
/* IPv4 20 and TCP 20 bytes of header, and 12 of the timestamp option Linux sends on every segment. */
#define IP_TCP_BYTES 52

double wb_fftb_framing(int32_t mtu)
{
    return mtu > IP_TCP_BYTES ? (double)(mtu + ETH_WIRE_BYTES) / (double)(mtu - IP_TCP_BYTES) : NAN;
}

/* Collective: bytes of one request that crossed the head node's link (samples out to ranks on other
 * nodes, their results in), summed on rank 0, and that traffic's bound at the link's rate. */
static int link(struct wb_fftb_figures *fg, const struct wb_fftb_ctx *c, const struct wb_fftb_measured *m)
{
    const int *node = wb_comm_node_map(NULL);
    int away = node[c->rank] != node[0];
    int rc = wb_comm_sum_i64(away ? m->bytes_in : 0, &fg->link_out_bytes);
    rc = rc ? rc : wb_comm_sum_i64(away ? m->bytes_out : 0, &fg->link_in_bytes);
    fg->link_rate_Bps = c->f->link_rate_Bps;
    int64_t most = fg->link_out_bytes > fg->link_in_bytes ? fg->link_out_bytes : fg->link_in_bytes;
    fg->link_bound_s = (double)most / fg->link_rate_Bps;
    fg->link_use = fg->link_bound_s / fg->med_total_s;
    fg->link_mtu = wb_results_link_mtu(c->res);
    fg->link_framing = wb_fftb_framing(fg->link_mtu);
    fg->link_wire_bound_s = fg->link_bound_s * fg->link_framing;
    fg->link_wire_use = fg->link_wire_bound_s / fg->med_total_s;
    return rc;
}

/* Root, --paired-baseline: every pair's speedup (rank 0 alone over the cluster, measured back to back)
 * and rank 0's median time alone. */
static void paired(struct wb_fftb_figures *fg, const struct wb_fftb_measured *m, double *col)
{
    if (!m->alone)
        return;
    int reps = m->reps;
    fg->paired = 1;
    for (int r = 0; r < reps; r++)
        col[r] = m->alone[r].t_total_s / m->tm[r].t_total_s;
    wb_stats_fill(col, (size_t)reps, &fg->speedup);
    for (int r = 0; r < reps; r++)
        col[r] = m->alone[r].t_total_s;
    fg->alone_med_s = wb_stats_median(col, (size_t)reps);
}

/* Each rank's CPU share of its part of a repetition: below 1 when the core was shared or the
 * hypervisor took it (steal), which the wall times alone cannot tell from slow code. */
static void cpu_shares(struct wb_fftb_figures *fg, const struct wb_fftb_measured *m)
{
    for (int r = 0; r < m->reps; r++) {
        fg->cpu_share[r] = m->tm[r].t_wall_s > 0 ? m->tm[r].t_cpu_s / m->tm[r].t_wall_s : NAN;
        const struct wb_fftb_timing *a = m->alone ? &m->alone[r] : NULL;
        fg->alone_cpu_share[r] = !a ? NAN : a->t_wall_s > 0 ? a->t_cpu_s / a->t_wall_s : NAN;
    }
}

/* FFTW's plan of each transform length rank 0 holds a kernel for (it plans every length, and shares
 * the plans' wisdom with the others), one "n=N: PLAN" line each; NULL if out of memory. */
static char *plan_text(const struct wb_fftb_ctx *c)
{
    size_t len = 1;
    char *all = calloc(1, 1);
    for (int i = 0; all && i < c->kern.count; i++) {
        char *one = wb_fft_kernel_plan_text(c->kern.k[i]), head[48];
        int h = snprintf(head, sizeof head, "%sn=%lld: ", i ? "\n" : "", (long long)c->kern.n[i]);
        char *grown = one ? realloc(all, len + (size_t)h + strlen(one)) : NULL;
        if (grown) {
            memcpy(grown + len - 1, head, (size_t)h);
            strcpy(grown + len - 1 + h, one);
            len += (size_t)h + strlen(one);
        } else {
            free(all);
        }
        all = grown;
        free(one);
    }
    return all;
}

int wb_fftb_figures_compute(struct wb_fftb_figures *fg, const struct wb_fftb_ctx *c, int id,
                            const struct wb_fftb_point *p, const struct wb_fftb_layout *l,
                            const struct wb_fftb_request *rq, const struct wb_fftb_measured *m,
                            const struct wb_fftb_verdict *v)
{
    int reps = m->reps;
    size_t n = (size_t)(reps ? reps : 1);
    *fg = (struct wb_fftb_figures){.id = id, .scenario = p->scenario, .nfiles = p->nfiles,
                                   .seconds = m->seconds_per_file, .audio_bytes = rq->audio_bytes,
                                   .reps = reps, .passed = v->passed};
    fg->slowest_rank = malloc(n * sizeof *fg->slowest_rank);
    fg->slow_s = malloc(3 * n * sizeof *fg->slow_s);
    fg->over_s = malloc(n * sizeof *fg->over_s);
    fg->overlap = malloc(n * sizeof *fg->overlap);
    fg->span_s = malloc(n * sizeof *fg->span_s);
    fg->cpu_share = malloc(n * sizeof *fg->cpu_share);
    fg->alone_cpu_share = malloc(n * sizeof *fg->alone_cpu_share);
    fg->rates = c->rank == 0 ? calloc((size_t)c->nranks, sizeof *fg->rates) : NULL;
    double *col = malloc(n * sizeof *col);
    int ok = fg->slowest_rank && fg->slow_s && fg->over_s && fg->overlap && fg->span_s && fg->cpu_share && fg->alone_cpu_share &&
             col && (c->rank != 0 || fg->rates);
    int rc = wb_comm_agree(ok ? 0 : wb_error_set(WB_ENOMEM, "out of memory"));
    if (rc == 0) {
        int64_t sent;
        double batch = 0;
        rc = wb_comm_sum_i64(m->bytes_in, &sent);
        fg->sent_bytes = sent;
        /* Each rank times its own batch; the file keeps the largest any rank chose. */
        rc = rc ? rc : wb_comm_max_f64((double)c->batch, &batch);
        fg->batch = (int64_t)batch;
        rc = rc ? rc : medians_and_rates(fg, c, l, m, col);
        rc = rc ? rc : slowest_rank(fg, m, c->rank, col);
        if (rc == 0)
            overhead(fg, m);
        rc = rc ? rc : link(fg, c, m);
        rc = rc ? rc : span_and_rate(fg, m, col);
        rc = rc ? rc : ceiling(fg, c, m);
        cpu_shares(fg, m);
        if (c->rank == 0)
            paired(fg, m, col);
    }
    if (rc == 0 && c->rank == 0)
        fg->plan_text = plan_text(c);
    free(col);
    return rc;
}

void wb_fftb_figures_free(struct wb_fftb_figures *fg)
{
    free(fg->slowest_rank), free(fg->slow_s), free(fg->over_s), free(fg->overlap), free(fg->span_s);
    free(fg->cpu_share), free(fg->alone_cpu_share), free(fg->rates), free(fg->plan_text);
    memset(fg, 0, sizeof *fg);
}
