/* A point's whole group in the result file: what every rank measured, and the figures
 * bench_fft_figures.c computed from it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/fft/bench_fft_int.h"
#include "bench/options.h"
#include "bench/fft/options_fft.h"
#include "core/error.h"
#include "core/timer.h"
#include "fftw/fft.h"
#include "io/results.h"
#include "par/comm.h"

/* One point being written: its group, what was measured, and the figures computed from it. */
struct point_out {
    struct wb_fftb_ctx *c;
    const struct wb_fftb_layout *l;
    const struct wb_fftb_request *rq;
    const struct wb_fftb_measured *m;
    const struct wb_fftb_figures *fg;
    char g[64];
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
    wb_results_attr_str(res, g, "scenario", w->fg->scenario);
    wb_results_attr_str(res, g, "mode", wb_fft_mode_names[f->mode]);
    wb_results_attr_str(res, g, "precision", wb_fft_precision_names[f->precision]);
    wb_results_attr_i64(res, g, "frame", f->mode == WB_MODE_STFT ? f->frame : 0);
    wb_results_attr_i64(res, g, "hop", f->mode == WB_MODE_STFT ? f->hop : 0);
    wb_results_attr_str(res, g, "window", wb_fft_window_names[f->window]);
    wb_results_attr_i64(res, g, "sample_rate", c->rank == 0 && w->rq->nfiles ? w->rq->rows[0].sample_rate : 0);
    wb_results_attr_i64(res, g, "nfiles", w->fg->nfiles);
    wb_results_attr_f64(res, g, "seconds_per_file", w->m->seconds_per_file);
    wb_results_attr_i64(res, g, "input_bytes", w->rq->audio_bytes);
    wb_results_attr_i64(res, g, "sent_bytes", w->fg->sent_bytes);
    wb_results_attr_i64(res, g, "transforms", w->l->nunits);
    wb_results_attr_i64(res, g, "reps", w->m->reps);
    wb_results_attr_i64(res, g, "warmup", c->o->common.warmup);
    wb_results_attr_str(res, g, "plan", wb_fft_effort_names[f->plan]);
    wb_results_attr_str(res, g, "fftw_plan", w->fg->plan_text ? w->fg->plan_text : "");
    wb_results_attr_i64(res, g, "batch", w->fg->batch);
    wb_results_attr_i64(res, g, "root_bytes_estimate", w->m->root_bytes_estimate);
    wb_results_attr_str(res, g, "schedule", wb_schedule_names[f->schedule]);
    wb_results_attr_i64(res, g, "root_computes", c->first_compute == 0);
    wb_results_attr_str(res, g, "local", c->use_shm ? "shm" : "mpi");
    wb_results_attr_str(res, g, "wire", c->input == WB_FFT_IN_S16 ? "s16" : f->precision ? "float64" : "float32");
    wb_results_attr_str(res, g, "result", wb_fft_result_names[f->result]);
    wb_results_attr_i64(res, g, "baseline", c->baseline);
    wb_results_attr_str(res, g, "input", c->nfiles_in ? "wav" : "synthetic");
    wb_results_attr_str(res, g, "input_cache", wb_input_cache_names[f->input_cache]);
    wb_results_attr_f64(res, g, "input_resident_max", w->m->input_resident_max);
    /* each file's bytes read by a thread while the one before decodes: t_read is about the larger of the two */
    wb_results_attr_i64(res, g, "input_read_ahead", c->nfiles_in > 0);
    const struct wb_fftb_repinfo *ri = &w->m->info;
    wb_results_attr_str(res, g, "reps_mode", ri->autom ? "auto" : "fixed");
    wb_results_attr_str(res, g, "reps_stop_reason", wb_fftb_stop_names[ri->stop]);
    wb_results_attr_f64(res, g, "target_ci", ri->autom ? f->target_ci : NAN);
    wb_results_attr_f64(res, g, "ci_halfwidth_rel", ri->ci_halfwidth_rel);
    return wb_results_attr_i64(res, g, "unstable", ri->autom && ri->stop != WB_FFTB_STOP_TARGET_CI);
}

/* Root: the slowest rank of each repetition, what its phases leave of t_total, and their overlap. */
static int write_overhead(struct point_out *w)
{
    const struct wb_fftb_figures *fg = w->fg;
    struct wb_results *res = w->c->res;
    char d[96];
    uint64_t dims[1] = {(uint64_t)fg->reps};
    snprintf(d, sizeof d, "%s/slowest_rank", w->g);
    int rc = wb_results_write_i64(res, d, 1, dims, fg->slowest_rank, "rank");
    snprintf(d, sizeof d, "%s/t_over", w->g);
    rc = rc ? rc : wb_results_write_f64(res, d, 1, dims, fg->over_s, "s");
    snprintf(d, sizeof d, "%s/overlap", w->g);
    rc = rc ? rc : wb_results_write_f64(res, d, 1, dims, fg->overlap, "1");
    rc = rc ? rc : wb_results_attr_f64(res, d, "median", fg->med_overlap);
    return rc ? rc : wb_results_attr_f64(res, w->g, "overlap", fg->med_overlap);
}

/* Collective: each rank's t_cpu, the CPU time its thread ran in its part of each repetition, and
 * cpu_share, that over the part's wall time. */
static int write_cpu(struct point_out *w, double *col)
{
    const struct wb_fftb_timing *tm = w->m->tm;
    int reps = w->m->reps;
    char d[128];
    for (int r = 0; r < reps; r++)
        col[r] = tm[r].t_cpu_s;
    snprintf(d, sizeof d, "%s/t_cpu", w->g);
    int rc = wb_results_write_per_rank_f64(w->c->res, d, col, (size_t)reps, "s");
    snprintf(d, sizeof d, "%s/cpu_share", w->g);
    int src = wb_results_write_per_rank_f64(w->c->res, d, w->fg->cpu_share, (size_t)reps, "1");
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
    for (int r = 0; r < reps; r++)
        col[r] = !a ? NAN : a[r].t_cpu_s;
    snprintf(d, sizeof d, "%s/t_cpu", g);
    rc = rc ? rc : wb_results_write_f64(res, d, 2, dims, col, "s");
    snprintf(d, sizeof d, "%s/cpu_share", g);
    return rc ? rc : wb_results_write_f64(res, d, 2, dims, w->fg->alone_cpu_share, "1");
}

/* t_read and t_total from the root, the phases per rank. */
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
        col[r] = w->m->tm[r].t_read_io_s;
    snprintf(d, sizeof d, "%s/t_read_io", w->g);
    wb_results_write_f64(res, d, 1, dims, col, "s");
    for (int r = 0; r < reps; r++)
        col[r] = w->m->tm[r].t_total_s;
    snprintf(d, sizeof d, "%s/t_total", w->g);
    wb_results_write_f64(res, d, 1, dims, col, "s");
    for (int r = 0; r < reps; r++)
        col[r] = w->m->tm[r].t_sync_s;
    snprintf(d, sizeof d, "%s/t_sync", w->g);
    rc = wb_results_write_f64(res, d, 1, dims, col, "s");
    for (int k = 0; k < 4; k++) {
        for (int r = 0; r < reps; r++)
            col[r] = phase_s(&w->m->tm[r], k);
        snprintf(d, sizeof d, "%s/%s", w->g, phase_names[k]);
        rc = rc ? rc : wb_results_write_per_rank_f64(res, d, col, (size_t)reps, "s");
    }
    rc = rc ? rc : write_cpu(w, col);
    return rc ? rc : write_overhead(w);
}

/* Bytes, transforms, flops, planning time and rate per rank. */
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
    const char *const fnames[] = {"flops", "t_plan", "rate_kBps"}, *const funits[] = {"flop", "s", "kB/s"};
    const double fvals[] = {w->m->flops, w->m->t_plan_s, w->fg->rank_kbps};
    for (int k = 0; k < 3; k++) {
        double fv = fvals[k];
        snprintf(d, sizeof d, "%s/%s", w->g, fnames[k]);
        rc = rc ? rc : wb_results_write_per_rank_f64(res, d, &fv, 1, funits[k]);
    }
    return rc;
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

/* Root: the link attributes: one request's bytes across the head node's link, and their bound. */
static void write_link(struct point_out *w)
{
    const struct wb_fftb_figures *fg = w->fg;
    struct wb_results *res = w->c->res;
    wb_results_attr_i64(res, w->g, "link_out_bytes", fg->link_out_bytes);
    wb_results_attr_i64(res, w->g, "link_in_bytes", fg->link_in_bytes);
    wb_results_attr_f64(res, w->g, "link_rate_Bps", fg->link_rate_Bps);
    wb_results_attr_f64(res, w->g, "link_bound_s", fg->link_bound_s);
    wb_results_attr_f64(res, w->g, "link_use", fg->link_use);
    wb_results_attr_i64(res, w->g, "link_mtu", fg->link_mtu);
    wb_results_attr_f64(res, w->g, "link_framing", fg->link_framing);
    wb_results_attr_f64(res, w->g, "link_wire_bound_s", fg->link_wire_bound_s);
    wb_results_attr_f64(res, w->g, "link_wire_use", fg->link_wire_use);
}

/* Root: the aggregate rate on the aligned clocks, and the ceilings it is held to. */
static int write_ceiling(struct point_out *w)
{
    const struct wb_fftb_figures *fg = w->fg;
    struct wb_results *res = w->c->res;
    char d[96];
    uint64_t dims[1] = {(uint64_t)fg->reps};
    snprintf(d, sizeof d, "%s/t_fft_span", w->g);
    int rc = wb_results_write_f64(res, d, 1, dims, fg->span_s, "s");
    wb_results_attr_f64(res, w->g, "gflops", fg->gflops);
    wb_results_attr_f64(res, w->g, "kBps", fg->kbps);
    wb_results_attr_f64(res, w->g, "core_gflops", fg->core_gflops);
    wb_results_attr_i64(res, w->g, "cores_used", fg->cores_used);
    wb_results_attr_f64(res, w->g, "gflops_ceiling", fg->gflops_ceiling);
    wb_results_attr_f64(res, w->g, "kBps_ceiling", fg->kbps_ceiling);
    wb_results_attr_i64(res, w->g, "gflops_above_ceiling", fg->above);
    wb_results_attr_i64(res, w->g, "kBps_above_ceiling", fg->kbps_above);
    return rc;
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

/* Collective: the point's chunk_frames, link_* attributes and timeline dataset. */
static int write_schedule(struct point_out *w)
{
    struct wb_fftb_ctx *c = w->c;
    wb_results_attr_i64(c->res, w->g, "chunk_frames",
                        c->f->schedule == WB_SCHED_PHASED || c->baseline ? 0 : c->pipe.chunk);
    write_link(w);
    int crc = write_ceiling(w);
    int trc = write_timeline(c, w->g);
    trc = trc ? trc : crc;
#ifdef WB_TEST_FAULTS
    dump_results(c, w->g);
#endif
    return trc;
}

int wb_fftb_write_point(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const struct wb_fftb_request *rq,
                        const struct wb_fftb_measured *m, const struct wb_fftb_verdict *v,
                        const struct wb_fftb_figures *fg)
{
    struct point_out w = {.c = c, .l = l, .rq = rq, .m = m, .fg = fg};
    snprintf(w.g, sizeof w.g, "/fft/p%03d", fg->id);
    int rc = wb_results_group(c->res, w.g);
    int arc = write_attrs(&w);
    double *col = malloc((size_t)(m->reps ? m->reps : 1) * sizeof *col);
    int mrc = col ? 0 : wb_error_set(WB_ENOMEM, "out of memory");
    rc = wb_comm_agree(rc ? rc : arc ? arc : mrc);
    if (rc == 0) {
        rc = write_times(&w, col);
        rc = write_counts(&w, rc);
        int brc = write_alone(&w, col);
        int prc = write_schedule(&w);
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
    }
    free(col);
    return rc;
}
