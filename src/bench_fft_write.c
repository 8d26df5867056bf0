#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_fft_int.h"
#include "comm.h"
#include "error.h"
#include "fft.h"
#include "options.h"
#include "report.h"
#include "results.h"
#include "timer.h"

/* One point being written: its group, what was measured, and the figures its table row shows. */
struct point_out {
    struct wb_fftb_ctx *c;
    int id;
    const struct wb_fftb_point *p;
    const struct wb_fftb_layout *l;
    const struct wb_fftb_request *rq;
    const struct wb_fftb_measured *m;
    char g[64];
    double seconds;               /* mean length of the request's files (root) */
    double med_s[4];              /* median of the slowest rank: distribute, compute, fft, gather */
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
    for (int j = 0; c->rank == 0 && j < w->rq->nfiles; j++)
        w->seconds += (double)w->rq->rows[j].samples / w->rq->rows[j].sample_rate / w->rq->nfiles;
    wb_results_attr_str(res, g, "scenario", w->p->scenario);
    wb_results_attr_str(res, g, "mode", wb_fft_mode_names[f->mode]);
    wb_results_attr_str(res, g, "precision", wb_fft_precision_names[f->precision]);
    wb_results_attr_i64(res, g, "frame", f->mode == WB_MODE_STFT ? f->frame : 0);
    wb_results_attr_i64(res, g, "hop", f->mode == WB_MODE_STFT ? f->hop : 0);
    wb_results_attr_str(res, g, "window", wb_fft_window_names[f->window]);
    wb_results_attr_i64(res, g, "sample_rate", c->rank == 0 && w->rq->nfiles ? w->rq->rows[0].sample_rate : 0);
    wb_results_attr_i64(res, g, "nfiles", w->p->nfiles);
    wb_results_attr_f64(res, g, "seconds_per_file", w->seconds);
    wb_results_attr_i64(res, g, "input_bytes", w->rq->audio_bytes);
    wb_results_attr_i64(res, g, "sent_bytes", sent);
    wb_results_attr_i64(res, g, "transforms", w->l->nunits);
    wb_results_attr_i64(res, g, "reps", w->m->reps);
    wb_results_attr_i64(res, g, "warmup", c->o->common.warmup);
    wb_results_attr_str(res, g, "plan", wb_fft_effort_names[f->plan]);
    wb_results_attr_i64(res, g, "batch", (int64_t)batch);
    wb_results_attr_i64(res, g, "root_bytes_estimate", wb_fft_opts_point_bytes(f, w->p->nfiles, w->seconds));
    wb_results_attr_str(res, g, "schedule", wb_schedule_names[f->schedule]);
    wb_results_attr_i64(res, g, "root_computes", c->first_compute == 0);
    wb_results_attr_str(res, g, "local", c->use_shm ? "shm" : "mpi");
    wb_results_attr_str(res, g, "wire", c->input == WB_FFT_IN_S16 ? "s16" : f->precision ? "float64" : "float32");
    wb_results_attr_str(res, g, "result", wb_fft_result_names[f->result]);
    wb_results_attr_i64(res, g, "baseline", c->baseline);
    wb_results_attr_str(res, g, "input", c->nfiles_in ? "wav" : "synthetic");
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
        w->med_s[k] = wb_timer_median(col, (size_t)reps);
    }
    return rc;
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
    double busy_s = wb_timer_median(col, (size_t)reps);
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

/* The point's table row (rank 0 prints), and with several ranks each rank's rate. */
static void print_row(const struct point_out *w, const struct wb_fftb_verdict *v, double *col)
{
    const struct wb_fftb_ctx *c = w->c;
    int reps = w->m->reps;
    for (int r = 0; r < reps; r++)
        col[r] = w->m->tm[r].t_total_s;
    double ttot = wb_timer_median(col, (size_t)reps);
    for (int r = 0; r < reps; r++)
        col[r] = w->m->tm[r].t_read_s;
    double t_read = wb_timer_median(col, (size_t)reps);
    const double *med = w->med_s;
    double kbps = (double)w->rq->audio_bytes / 1000.0 / ttot, gflops = w->total_flops / med[2] / 1e9;
    wb_report_printf("%-5d %-7s %6d %8.2f %6d %12lld %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %11.1f %7.2f %s\n", w->id,
                     w->p->scenario, w->p->nfiles, w->seconds, c->nranks, (long long)w->rq->audio_bytes, 1e3 * t_read,
                     1e3 * med[0], 1e3 * med[1], 1e3 * med[2], 1e3 * med[3], 1e3 * ttot, kbps, gflops,
                     v->passed ? "ok" : "FAILED");
    if (w->rates && c->nranks > 1 && wb_report_enabled()) {
        char line[512];
        int len = snprintf(line, sizeof line, "#      kB/s per rank:");
        for (int q = 0; q < c->nranks && len < (int)sizeof line - 32; q++)
            len += snprintf(line + len, sizeof line - (size_t)len, " %d:%.0f", q, w->rates[q]);
        wb_report_printf("%s%s\n", line, len >= (int)sizeof line - 32 ? " ..." : "");
    }
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
    w.rates = c->rank == 0 ? calloc((size_t)c->nranks, sizeof *w.rates) : NULL;
    int mrc = col && (c->rank != 0 || w.rates) ? 0 : wb_error_set(WB_ENOMEM, "out of memory");
    rc = wb_comm_agree(rc ? rc : arc ? arc : mrc);
    if (rc) {
        free(w.rates);
        free(col);
        return rc;
    }
    rc = write_times(&w, col);
    rc = write_counts(&w, rc);
    rc = write_rates(&w, col, rc);
    write_verify(&w, v);
    print_row(&w, v, col);
    free(w.rates);
    free(col);
    return rc ? rc : wb_results_flush(c->res);
}

void wb_fftb_print_header(const struct wb_fftb_ctx *c)
{
    const struct wb_fft_opts *f = c->f;
    const char *ranks = c->nranks > 1 ? "s" : "";
    if (f->mode == WB_MODE_STFT)
        wb_report_printf("# wulfbench fft: stft frame %lld hop %lld, %s precision, %s schedule, %d rank%s%s\n",
                         (long long)f->frame, (long long)f->hop, wb_fft_precision_names[f->precision],
                         wb_schedule_names[f->schedule], c->nranks, ranks,
                         c->baseline ? " (baseline: no messaging)" : c->first_compute ? ", root only distributes" : "");
    else
        wb_report_printf("# wulfbench fft: %s transform per file, %s precision, %s schedule, %d rank%s%s\n",
                         wb_fft_mode_names[f->mode], wb_fft_precision_names[f->precision],
                         wb_schedule_names[f->schedule], c->nranks, ranks,
                         c->baseline ? " (baseline: no messaging)" : "");
    wb_report_printf("# times: median over %d reps of the slowest rank, in ms; kB/s = audio bytes / 1000 / t_total\n",
                     c->o->common.reps);
    wb_report_printf("%-5s %-7s %6s %8s %6s %12s %9s %9s %9s %9s %9s %9s %11s %7s %s\n", "#point", "scenario", "files",
                     "seconds", "ranks", "audio_bytes", "t_read", "t_dist", "t_comp", "t_fft", "t_gather", "t_total",
                     "kB/s", "GFLOPS", "verify");
}
