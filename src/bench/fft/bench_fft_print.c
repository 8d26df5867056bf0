/* The fft table on stdout (rank 0): the header with what the run is, and each point's row with the
 * lines under it; the figures come from the writer, which put them in the file first. */
#include <stdio.h>

#include "bench/fft/bench_fft_int.h"
#include "bench/fft/options_fft.h"
#include "bench/options.h"
#include "core/report.h"
#include "core/stats.h"
#include "fftw/fft.h"

/* Root, --paired-baseline: the speedup of every pair (rank 0 alone over the cluster, each pair measured
 * back to back), as its median with min and max. */
static void print_paired(const struct wb_fftb_measured *m, double *col)
{
    if (!m->alone || !wb_report_enabled())
        return;
    int reps = m->reps;
    for (int r = 0; r < reps; r++)
        col[r] = m->alone[r].t_total_s / m->tm[r].t_total_s;
    struct wb_stats st;
    wb_stats_fill(col, (size_t)reps, &st);
    for (int r = 0; r < reps; r++)
        col[r] = m->alone[r].t_total_s;
    wb_report_printf("#      paired baseline: rank 0 alone %.3f ms; speedup %.2f (min %.2f, max %.2f) over %d pairs\n",
                     1e3 * wb_stats_median(col, (size_t)reps), st.median, st.min, st.max, reps);
}

void wb_fftb_print_row(const struct wb_fftb_ctx *c, const struct wb_fftb_row *w, const struct wb_fftb_measured *m,
                       double *col)
{
    int reps = m->reps;
    for (int r = 0; r < reps; r++)
        col[r] = m->tm[r].t_total_s;
    double ttot = wb_stats_median(col, (size_t)reps);
    for (int r = 0; r < reps; r++)
        col[r] = m->tm[r].t_read_s;
    double t_read = wb_stats_median(col, (size_t)reps);
    double kbps = (double)w->audio_bytes / 1000.0 / ttot, gflops = w->total_flops / w->t_fft_s / 1e9;
    wb_report_printf("%-5d %-7s %6d %8.2f %6d %12lld %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %11.1f %7.2f %s\n",
                     w->id, w->scenario, w->nfiles, w->seconds, c->nranks, (long long)w->audio_bytes,
                     1e3 * t_read, 1e3 * w->slow_s[0], 1e3 * w->slow_s[1], 1e3 * w->t_fft_s,
                     1e3 * w->slow_s[2], 1e3 * w->over_s,
                     1e3 * ttot, kbps, gflops, w->passed ? "ok" : "FAILED");
    print_paired(m, col);
    if (w->rates && c->nranks > 1 && wb_report_enabled()) {
        char line[512];
        int len = snprintf(line, sizeof line, "#      kB/s per rank:");
        for (int q = 0; q < c->nranks && len < (int)sizeof line - 32; q++)
            len += snprintf(line + len, sizeof line - (size_t)len, " %d:%.0f", q, w->rates[q]);
        wb_report_printf("%s%s\n", line, len >= (int)sizeof line - 32 ? " ..." : "");
    }
    if (c->rank == 0 && c->pipe.link_line[0])
        wb_report_printf("%s", c->pipe.link_line);
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
    if (c->o->common.reps_auto)
        wb_report_printf("# reps: auto, until the 95%% CI of the median t_total is within %.1f%% (%d to %d reps)\n",
                         100.0 * f->target_ci, f->min_reps, f->max_reps);
    wb_report_printf("# times in ms: per repetition the slowest rank's t_dist, t_comp and t_gather (t_fft: the longest), and\n"
                     "# t_over = t_total - t_dist - t_comp - t_gather (negative where phases overlap); each column is\n"
                     "# the median over repetitions, so the columns add up per repetition, not as printed.\n"
                     "# kB/s = audio bytes / 1000 / median t_total\n");
    wb_report_printf("%-5s %-7s %6s %8s %6s %12s %9s %9s %9s %9s %9s %9s %9s %11s %7s %s\n", "#point", "scenario",
                     "files", "seconds", "ranks", "audio_bytes", "t_read", "t_dist", "t_comp", "t_fft", "t_gather",
                     "t_over", "t_total", "kB/s", "GFLOPS", "verify");
}
