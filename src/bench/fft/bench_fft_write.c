#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/fft/bench_fft_int.h"
#include "bench/options.h"
#include "bench/fft/options_fft.h"
#include "core/error.h"
#include "core/report.h"
#include "core/stats.h"
#include "core/timer.h"
#include "fftw/fft.h"
#include "io/results.h"
#include "par/comm.h"

/* One point being written: its group, what was measured, and the figures its table row shows. */
struct point_out {
    struct wb_fftb_ctx *c;
    int id;
    const struct wb_fftb_point *p;
    const struct wb_fftb_layout *l;
    const struct wb_fftb_request *rq;
    const struct wb_fftb_measured *m;
    char g[64];
    double med_s[4];              /* median of the slowest rank: distribute, compute, fft, gather */
    double med_slow_s[3];         /* medians of the slowest rank's distribute, compute, gather */
    double med_over_s;            /* median of t_total - (slowest distribute + compute + gather) */
    double *slow;                 /* [3][reps]: each repetition's slowest distribute, compute, gather */
    double total_flops;
    double *rates;                /* root: kB/s of every rank */
};

static const char *const phase_names[] = {"t_distribute", "t_compute", "t_fft", "t_gather"};

static double phase_s(const struct wb_fftb_timing *t, int k)
{
    return k == 0 ? t->t_dist_s : k == 1 ? t->t_comp_s : k == 2 ? t->t_fft_s : t->t_gather_s;
}

/* The point's attributes: what was run and how. */
static int write_attrs(struct point_out *w)
{
    struct wb_results *res = w->c->res;
    const struct wb_fftb_ctx *c = w->c;
    const struct wb_fft_opts *f = c->f;
    const char *g = w->g;
    int64_t sent;
    double batch = 0;
    int rc = wb_comm_sum_i64(w->m->bytes_in, &sent);
    /* Each rank times its own batch; the file keeps the largest any rank chose. */
    if (rc == 0)
        rc = wb_comm_max_f64((double)c->batch, &batch);
    wb_results_attr_str(res, g, "scenario", w->p->scenario);
    wb_results_attr_str(res, g, "mode", wb_fft_mode_names[f->mode]);
    wb_results_attr_str(res, g, "precision", wb_fft_precision_names[f->precision]);
    wb_results_attr_i64(res, g, "frame", f->mode == WB_MODE_STFT ? f->frame : 0);
    wb_results_attr_i64(res, g, "hop", f->mode == WB_MODE_STFT ? f->hop : 0);
    wb_results_attr_str(res, g, "window", wb_fft_window_names[f->window]);
    wb_results_attr_i64(res, g, "sample_rate", c->rank == 0 && w->rq->nfiles ? w->rq->rows[0].sample_rate : 0);
    wb_results_attr_i64(res, g, "nfiles", w->p->nfiles);
    wb_results_attr_f64(res, g, "seconds_per_file", w->m->seconds_per_file);
    wb_results_attr_i64(res, g, "input_bytes", w->rq->audio_bytes);
    wb_results_attr_i64(res, g, "sent_bytes", sent);
    wb_results_attr_i64(res, g, "transforms", w->l->nunits);
    wb_results_attr_i64(res, g, "reps", w->m->reps);
    wb_results_attr_i64(res, g, "warmup", c->o->common.warmup);
    wb_results_attr_str(res, g, "plan", wb_fft_effort_names[f->plan]);
    wb_results_attr_i64(res, g, "batch", (int64_t)batch);
    wb_results_attr_i64(res, g, "root_bytes_estimate", w->m->root_bytes_estimate);
    wb_results_attr_str(res, g, "schedule", wb_schedule_names[f->schedule]);
    wb_results_attr_i64(res, g, "root_computes", c->first_compute == 0);
    wb_results_attr_str(res, g, "local", c->use_shm ? "shm" : "mpi");
    wb_results_attr_str(res, g, "wire", c->input == WB_FFT_IN_S16 ? "s16" : f->precision ? "float64" : "float32");
    wb_results_attr_str(res, g, "result", wb_fft_result_names[f->result]);
    wb_results_attr_i64(res, g, "baseline", c->baseline);
    wb_results_attr_str(res, g, "input", c->nfiles_in ? "wav" : "synthetic");
    const struct wb_fftb_repinfo *ri = &w->m->info;
    wb_results_attr_str(res, g, "reps_mode", ri->autom ? "auto" : "fixed");
    wb_results_attr_str(res, g, "reps_stop_reason", wb_fftb_stop_names[ri->stop]);
    wb_results_attr_f64(res, g, "target_ci", ri->autom ? f->target_ci : NAN);
    wb_results_attr_f64(res, g, "ci_halfwidth_rel", ri->ci_halfwidth_rel);
    wb_results_attr_i64(res, g, "unstable", ri->autom && ri->stop != WB_FFTB_STOP_TARGET_CI);
    return rc;
}

/* Collective: per repetition, the distribute, compute and gather of the slowest rank (the largest sum of
 * the three) into w->slow on every rank, so that with t_total they make one consistent repetition. */
static int slowest_rank(struct point_out *w, double *col)
{
    int reps = w->m->reps;
    const struct wb_fftb_timing *tm = w->m->tm;
    for (int r = 0; r < reps; r++)
        col[r] = tm[r].t_dist_s + tm[r].t_comp_s + tm[r].t_gather_s;
    int rc = wb_comm_max_f64_n(col, (size_t)reps);
    for (int r = 0; r < reps; r++) {
        int mine = tm[r].t_dist_s + tm[r].t_comp_s + tm[r].t_gather_s == col[r];
        w->slow[r] = mine ? tm[r].t_dist_s : -INFINITY;
        w->slow[reps + r] = mine ? tm[r].t_comp_s : -INFINITY;
        w->slow[2 * reps + r] = mine ? tm[r].t_gather_s : -INFINITY;
    }
    int mrc = wb_comm_max_f64_n(w->slow, (size_t)reps * 3);
    return rc ? rc : mrc;
}

/* Root: per repetition, the slowest rank's phases over t_total (1 when they follow one another, more
 * when they overlap), and what is left of t_total beside them; the table shows the medians. */
static int write_overlap(struct point_out *w, double *col)
{
    int reps = w->m->reps;
    double *over = malloc((size_t)reps * sizeof *over);
    if (!over)
        return wb_error_set(WB_ENOMEM, "out of memory");
    for (int r = 0; r < reps; r++) {
        double sum = w->slow[r] + w->slow[reps + r] + w->slow[2 * reps + r], total = w->m->tm[r].t_total_s;
        col[r] = sum / total;
        over[r] = total - sum;
    }
    w->med_over_s = wb_stats_median(over, (size_t)reps);
    for (int k = 0; k < 3; k++)
        w->med_slow_s[k] = wb_stats_median(w->slow + (size_t)k * (size_t)reps, (size_t)reps);
    free(over);
    char d[96];
    uint64_t dims[1] = {(uint64_t)reps};
    snprintf(d, sizeof d, "%s/overlap", w->g);
    wb_results_write_f64(w->c->res, d, 1, dims, col, "1");
    double med = wb_stats_median(col, (size_t)reps);
    int rc = wb_results_attr_f64(w->c->res, d, "median", med);
    int arc = wb_results_attr_f64(w->c->res, w->g, "overlap", med);
    return rc ? rc : arc;
}

/* Collective: each rank's t_cpu, the CPU time its thread ran in its part of each repetition, and
 * cpu_share, that over the part's wall time: below 1 when the core was shared or the hypervisor
 * took it (steal), which the wall times alone cannot tell from slow code. */
static int write_cpu(struct wb_results *res, const char *g, const struct wb_fftb_timing *tm, int reps, double *col)
{
    char d[128];
    for (int r = 0; r < reps; r++)
        col[r] = tm[r].t_cpu_s;
    snprintf(d, sizeof d, "%s/t_cpu", g);
    int rc = wb_results_write_per_rank_f64(res, d, col, (size_t)reps, "s");
    for (int r = 0; r < reps; r++)
        col[r] = tm[r].t_wall_s > 0 ? tm[r].t_cpu_s / tm[r].t_wall_s : NAN;
    snprintf(d, sizeof d, "%s/cpu_share", g);
    int src = wb_results_write_per_rank_f64(res, d, col, (size_t)reps, "1");
    return rc ? rc : src;
}

/* With --paired-baseline: rank 0's runs alone, under baseline/, shaped as a one-process point. */
static int write_alone(struct point_out *w, double *col)
{
    const struct wb_fftb_timing *a = w->m->alone;
    struct wb_results *res = w->c->res;
    if (!w->c->paired)
        return 0;
    int reps = w->m->reps, rc;
    char g[96], d[128];
    snprintf(g, sizeof g, "%s/baseline", w->g);
    rc = wb_results_group(res, g);
    wb_results_attr_i64(res, g, "paired", 1);
    wb_results_attr_str(res, g, "order", "cluster-first");
    wb_results_attr_f64(res, g, "match_max_rel", w->m->info.alone_match);
    static const char *const names[] = {"t_read", "t_total", "t_compute", "t_fft", "t_distribute", "t_gather"};
    for (int k = 0; k < 6; k++) {
        for (int r = 0; r < reps; r++)
            col[r] = !a || k >= 4 ? 0.0 : k == 0 ? a[r].t_read_s : k == 1 ? a[r].t_total_s : k == 2 ? a[r].t_comp_s
                                                                                              : a[r].t_fft_s;
        uint64_t dims[2] = {(uint64_t)reps, 1};
        snprintf(d, sizeof d, "%s/%s", g, names[k]);
        rc = rc ? rc : wb_results_write_f64(res, d, k < 2 ? 1 : 2, dims, col, "s");
    }
    uint64_t dims[2] = {(uint64_t)reps, 1};
    for (int k = 0; k < 2; k++) {
        for (int r = 0; r < reps; r++)
            col[r] = !a ? NAN : k == 0 ? a[r].t_cpu_s : a[r].t_wall_s > 0 ? a[r].t_cpu_s / a[r].t_wall_s : NAN;
        snprintf(d, sizeof d, "%s/%s", g, k == 0 ? "t_cpu" : "cpu_share");
        rc = rc ? rc : wb_results_write_f64(res, d, 2, dims, col, k == 0 ? "s" : "1");
    }
    return rc;
}

/* t_read and t_total from the root, the phases per rank; med_s gets the table's medians. */
static int write_times(struct point_out *w, double *col)
{
    struct wb_results *res = w->c->res;
    int reps = w->m->reps, rc = 0;
    char d[96];
    uint64_t dims[1] = {(uint64_t)reps};
    for (int r = 0; r < reps; r++)
        col[r] = w->m->tm[r].t_read_s;
    snprintf(d, sizeof d, "%s/t_read", w->g);
    wb_results_write_f64(res, d, 1, dims, col, "s");
    for (int r = 0; r < reps; r++)
        col[r] = w->m->tm[r].t_total_s;
    snprintf(d, sizeof d, "%s/t_total", w->g);
    wb_results_write_f64(res, d, 1, dims, col, "s");
    for (int k = 0; k < 4; k++) {
        for (int r = 0; r < reps; r++)
            col[r] = phase_s(&w->m->tm[r], k);
        snprintf(d, sizeof d, "%s/%s", w->g, phase_names[k]);
        rc = rc ? rc : wb_results_write_per_rank_f64(res, d, col, (size_t)reps, "s");
        /* For the table: each repetition's slowest rank, then the median over repetitions. */
        if (rc == 0)
            rc = wb_comm_max_f64_n(col, (size_t)reps);
        w->med_s[k] = wb_stats_median(col, (size_t)reps);
    }
    rc = rc ? rc : write_cpu(res, w->g, w->m->tm, reps, col);
    rc = rc ? rc : slowest_rank(w, col);
    return rc ? rc : write_overlap(w, col);
}

/* Bytes, transforms and flops per rank. */
static int write_counts(struct point_out *w, int rc)
{
    struct wb_results *res = w->c->res;
    const char *const names[] = {"bytes_in", "bytes_out", "frames"}, *const units[] = {"bytes", "bytes", "count"};
    const int64_t vals[] = {w->m->bytes_in, w->m->bytes_out, w->m->units};
    char d[96];
    for (int k = 0; k < 3; k++) {
        int64_t iv = vals[k];
        snprintf(d, sizeof d, "%s/%s", w->g, names[k]);
        rc = rc ? rc : wb_results_write_per_rank_i64(res, d, &iv, 1, units[k]);
    }
    double flops = w->m->flops;
    snprintf(d, sizeof d, "%s/flops", w->g);
    rc = rc ? rc : wb_results_write_per_rank_f64(res, d, &flops, 1, "flop");
    double t_plan = w->m->t_plan_s;
    snprintf(d, sizeof d, "%s/t_plan", w->g);
    rc = rc ? rc : wb_results_write_per_rank_f64(res, d, &t_plan, 1, "s");
    int src = wb_comm_sum_f64(flops, &w->total_flops);
    return rc ? rc : src;
}

/* A rank's own rate: its share of the audio over its median distribute + compute + gather. */
static int write_rates(struct point_out *w, double *col, int rc)
{
    struct wb_fftb_ctx *c = w->c;
    int reps = w->m->reps;
    int64_t audio_bytes = w->rq->audio_bytes;
    int brc = wb_comm_bcast(&audio_bytes, sizeof audio_bytes, 0);
    rc = rc ? rc : brc;
    for (int r = 0; r < reps; r++)
        col[r] = w->m->tm[r].t_dist_s + w->m->tm[r].t_comp_s + w->m->tm[r].t_gather_s;
    double busy_s = wb_stats_median(col, (size_t)reps);
    double rank_kbps = w->l->nunits && w->m->units
                           ? (double)audio_bytes * (double)w->m->units / (double)w->l->nunits / 1000.0 / busy_s
                           : 0.0;
    char d[96];
    snprintf(d, sizeof d, "%s/rate_kBps", w->g);
    rc = rc ? rc : wb_results_write_per_rank_f64(c->res, d, &rank_kbps, 1, "kB/s");
    int grc = wb_comm_gather_f64(rank_kbps, w->rates);
    return rc ? rc : grc;
}

static void write_verify(struct point_out *w, const struct wb_fftb_verdict *v)
{
    struct wb_results *res = w->c->res;
    char d[96];
    snprintf(d, sizeof d, "%s/inputs", w->g);
    wb_results_write_inputs(res, d, w->rq->rows, w->c->rank == 0 ? (size_t)w->rq->nfiles : 0);
    snprintf(d, sizeof d, "%s/verify", w->g);
    wb_results_group(res, d);
    wb_results_attr_i64(res, d, "passed", v->passed);
    wb_results_attr_f64(res, d, "max_error", v->max_error);
    wb_results_attr_str(res, d, "check", v->check);
    wb_results_attr_f64(res, d, "parseval_max_rel", v->parseval);
    wb_results_attr_f64(res, d, "roundtrip_max_rel", v->roundtrip);
    wb_results_attr_f64(res, d, "crosscheck_max_rel", v->crosscheck);
    wb_results_attr_f64(res, d, "dft_max_rel", v->dft);
    wb_results_attr_i64(res, d, "tones_expected", v->tones_expected);
    wb_results_attr_i64(res, d, "tones_found", v->tones_found);
    wb_results_attr_f64(res, d, "tone_bin_error", v->tone_err);
#ifdef WB_TEST_FAULTS
    /* Test builds: the same results give the same digest, whatever batch or schedule made them. */
    wb_results_attr_i64(res, d, "test_results_digest", (int64_t)v->digest);
#endif
}

/* Bytes of one request that crossed the head node's link: samples out to ranks on other nodes, their
 * results in. Collective; the sums on rank 0. */
static int link_bytes(const struct wb_fftb_ctx *c, const struct wb_fftb_measured *m, int64_t *out, int64_t *in)
{
    const int *node = wb_comm_node_map(NULL);
    int away = node[c->rank] != node[0];
    int64_t o = away ? m->bytes_in : 0, i = away ? m->bytes_out : 0;
    int rc = wb_comm_sum_i64(o, out);
    return rc ? rc : wb_comm_sum_i64(i, in);
}

/* Root: the link attributes of group g, and the line the table prints under the point's row. */
static void write_link(struct wb_fftb_ctx *c, const char *g, const struct wb_fftb_measured *m, int64_t out,
                       int64_t in)
{
    double *tt = malloc((size_t)(m->reps ? m->reps : 1) * sizeof *tt), rate = c->f->link_rate_Bps;
    for (int r = 0; tt && r < m->reps; r++)
        tt[r] = m->tm[r].t_total_s;
    double med = tt ? wb_stats_median(tt, (size_t)m->reps) : NAN;
    free(tt);
    double bound = (double)(out > in ? out : in) / rate, use = bound / med;
    wb_results_attr_i64(c->res, g, "link_out_bytes", out);
    wb_results_attr_i64(c->res, g, "link_in_bytes", in);
    wb_results_attr_f64(c->res, g, "link_rate_Bps", rate);
    wb_results_attr_f64(c->res, g, "link_bound_s", bound);
    wb_results_attr_f64(c->res, g, "link_use", use);
    char *line = c->pipe.link_line;
    size_t cap = sizeof c->pipe.link_line;
    line[0] = '\0';
    if (c->rank != 0 || c->baseline)
        return;
    if (out == 0 && in == 0)
        snprintf(line, cap, "#      link: every rank is on the head node; nothing crossed its link\n");
    else if (isfinite(rate))
        snprintf(line, cap, "#      link use: %.1f%% of the full-duplex bound (out %.2f MB, in %.2f MB at %.2f MB/s: "
                 "%.3f s; t_total %.3f s)\n",
                 100.0 * use, (double)out / 1e6, (double)in / 1e6, rate / 1e6, bound, med);
    else
        snprintf(line, cap, "#      link: out %.2f MB, in %.2f MB per request; give --link-rate to see its use\n",
                 (double)out / 1e6, (double)in / 1e6);
}

/* Collective: every rank's events of the last repetition, as the timeline dataset of group g. */
static int write_timeline(struct wb_fftb_ctx *c, const char *g)
{
    struct wb_fftb_pipe *p = &c->pipe;
    int n = p->nev, *counts = NULL, *displs = NULL, total = 0;
    double *mine = malloc((size_t)(n ? n : 1) * 4 * sizeof *mine), *all = NULL;
    for (int i = 0; mine && i < n; i++) {
        mine[4 * i] = p->ev[i].chunk;
        mine[4 * i + 1] = p->ev[i].phase;
        mine[4 * i + 2] = p->ev[i].t_start_s;
        mine[4 * i + 3] = p->ev[i].t_end_s;
    }
    if (c->rank == 0) {
        counts = calloc((size_t)c->nranks, sizeof *counts);
        displs = calloc((size_t)c->nranks, sizeof *displs);
    }
    int rc = wb_comm_agree(mine && (c->rank != 0 || (counts && displs)) ? 0 : wb_error_set(WB_ENOMEM, "out of memory"));
    int n4 = 4 * n;
    rc = rc ? rc : wb_comm_check(MPI_Gather(&n4, 1, MPI_INT, counts, 1, MPI_INT, 0, wb_comm_world()), "MPI_Gather");
    for (int q = 0; rc == 0 && c->rank == 0 && q < c->nranks; q++) {
        displs[q] = total;
        total += counts[q];
    }
    if (rc == 0 && c->rank == 0 && !(all = malloc((size_t)(total ? total : 1) * sizeof *all)))
        rc = wb_error_set(WB_ENOMEM, "out of memory");
    rc = wb_comm_agree(rc);
    rc = rc ? rc : wb_comm_check(MPI_Gatherv(mine, n4, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, wb_comm_world()),
                                 "MPI_Gatherv of the timeline");
    struct wb_result_event *rows = c->rank == 0 && rc == 0 ? malloc((size_t)(total / 4 + 1) * sizeof *rows) : NULL;
    for (int q = 0; rows && q < c->nranks; q++)
        for (int i = 0; i < counts[q] / 4; i++) {
            const double *e = all + displs[q] + 4 * i;
            rows[displs[q] / 4 + i] = (struct wb_result_event){q, (int32_t)e[0], (uint8_t)e[1], e[2], e[3]};
        }
    char d[96];
    snprintf(d, sizeof d, "%s/timeline", g);
    int wrc = wb_results_write_timeline(c->res, d, rows, rows ? (size_t)total / 4 : 0);
    free(mine), free(all), free(counts), free(displs), free(rows);
    return rc ? rc : wrc;
}

#ifdef WB_TEST_FAULTS
/* Test-only: WB_DUMP_RESULTS=DIR makes the root write the results of a point's last repetition to
 * DIR/pNNN.bin, so tests can compare schedules byte for byte. */
static void dump_results(const struct wb_fftb_ctx *c, const char *g)
{
    const char *dir = getenv("WB_DUMP_RESULTS");
    if (!dir || c->rank != 0 || !c->pipe.res)
        return;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.bin", dir, strrchr(g, '/') + 1);
    FILE *fp = fopen(path, "wb");
    if (fp) {
        fwrite(c->pipe.res, 1, (size_t)c->pipe.res_bytes, fp);
        fclose(fp);
    }
}
#endif

/* Collective: the point's chunk_frames, link_* attributes and timeline dataset under group g; rank 0
 * composes the link line its row prints. */
static int write_schedule(struct wb_fftb_ctx *c, const char *g, const struct wb_fftb_measured *m)
{
    int64_t out = 0, in = 0;
    int rc = link_bytes(c, m, &out, &in);
    wb_results_attr_i64(c->res, g, "chunk_frames", c->f->schedule == WB_SCHED_PHASED || c->baseline ? 0 : c->pipe.chunk);
    if (rc == 0)
        write_link(c, g, m, out, in);
    int trc = write_timeline(c, g);
#ifdef WB_TEST_FAULTS
    dump_results(c, g);
#endif
    return rc ? rc : trc;
}

int wb_fftb_write_point(struct wb_fftb_ctx *c, int id, const struct wb_fftb_point *p, const struct wb_fftb_layout *l,
                        const struct wb_fftb_request *rq, const struct wb_fftb_measured *m,
                        const struct wb_fftb_verdict *v)
{
    struct point_out w = {.c = c, .id = id, .p = p, .l = l, .rq = rq, .m = m};
    snprintf(w.g, sizeof w.g, "/fft/p%03d", id);
    int rc = wb_results_group(c->res, w.g);
    int arc = write_attrs(&w);
    double *col = malloc((size_t)(m->reps ? m->reps : 1) * sizeof *col);
    w.slow = malloc((size_t)(m->reps ? m->reps : 1) * 3 * sizeof *w.slow);
    w.rates = c->rank == 0 ? calloc((size_t)c->nranks, sizeof *w.rates) : NULL;
    int mrc = col && w.slow && (c->rank != 0 || w.rates) ? 0 : wb_error_set(WB_ENOMEM, "out of memory");
    rc = wb_comm_agree(rc ? rc : arc ? arc : mrc);
    if (rc == 0) {
        rc = write_times(&w, col);
        rc = write_counts(&w, rc);
        rc = write_rates(&w, col, rc);
        int brc = write_alone(&w, col);
        int prc = write_schedule(c, w.g, m);
        char d[96];
        snprintf(d, sizeof d, "%s/health/nodes", w.g);
        int hrc = wb_results_write_health(c->res, d, m->health, m->nhealth);
        prc = prc ? prc : hrc;
        rc = rc ? rc : brc ? brc : prc;
        write_verify(&w, v);
        char bg[96];
        snprintf(bg, sizeof bg, "%s/baseline", w.g);
        int erc = wb_results_write_energy(c->res, w.g, &m->energy);
        erc = erc ? erc : wb_results_write_energy(c->res, bg, &m->energy_alone);
        erc = erc ? erc : m->net ? wb_results_write_net(c->res, w.g, m->net, (size_t)c->nranks) : 0;
        rc = rc ? rc : erc;
        /* On disk before its row is printed, so a kill or a full disk never loses a point that was shown. */
        int frc = wb_results_flush(c->res);
        rc = rc ? rc : frc;
        if (rc == 0) {
            struct wb_fftb_row row = {w.id, p->scenario, p->nfiles, m->seconds_per_file, rq->audio_bytes, w.med_s[2],
                                      {w.med_slow_s[0], w.med_slow_s[1], w.med_slow_s[2]}, w.med_over_s,
                                      w.total_flops, v->passed, w.rates};
            wb_fftb_print_row(c, &row, m, col);
        }
    }
    free(w.rates);
    free(w.slow);
    free(col);
    return rc;
}
