/* The fft table on stdout (rank 0): the header with what the run is, and each point's row with the
 * lines under it, from the figures bench_fft_figures.c computed (and the writer stored first). */
#include <math.h>
#include <stdio.h>

#include "bench/fft/bench_fft_int.h"
#include "bench/fft/options_fft.h"
#include "bench/options.h"
#include "core/report.h"
#include "fftw/fft.h"

/* The line under a row whose t_over is negative: the slowest rank's phases overlapped, which the
 * pipelined and dynamic schedules do on purpose. */
static void print_overlap(const struct wb_fftb_figures *fg)
{
    if (fg->med_over_s < 0)
        wb_report_printf("#      t_over < 0: the slowest rank's phases overlap; their sum is %.2f x t_total "
                         "(median over repetitions)\n", fg->med_overlap);
}

/* The link line: one request's bytes across the head node's link, and their bound at the link's rate. */
static void print_link(const struct wb_fftb_ctx *c, const struct wb_fftb_figures *fg)
{
    if (c->baseline)
        return;
    if (fg->link_out_bytes == 0 && fg->link_in_bytes == 0)
        wb_report_printf("#      link: every rank is on the head node; nothing crossed its link\n");
    else if (isfinite(fg->link_rate_Bps))
        wb_report_printf("#      link use: %.1f%% of the full-duplex bound (out %.2f MB, in %.2f MB at %.2f MB/s: "
                         "%.3f s; t_total %.3f s)\n",
                         100.0 * fg->link_use, (double)fg->link_out_bytes / 1e6, (double)fg->link_in_bytes / 1e6,
                         fg->link_rate_Bps / 1e6, fg->link_bound_s, fg->med_total_s);
    else
        wb_report_printf("#      link: out %.2f MB, in %.2f MB per request; give --link-rate to see its use\n",
                         (double)fg->link_out_bytes / 1e6, (double)fg->link_in_bytes / 1e6);
    if (isfinite(fg->link_rate_Bps) && isfinite(fg->link_wire_bound_s) && fg->link_in_bytes + fg->link_out_bytes > 0)
        wb_report_printf("#      link use on the wire: %.1f%% of the bound counting Ethernet's framing at MTU %d "
                         "(x%.3f: %.3f s), which no chunk size buys back\n",
                         100.0 * fg->link_wire_use, (int)fg->link_mtu, fg->link_framing, fg->link_wire_bound_s);
}

/* The ceiling line: the row's GFLOPS and kB/s against what the cores used (and the link) allow. */
static void print_ceiling(const struct wb_fftb_figures *fg)
{
    if (!isfinite(fg->gflops_ceiling))
        return;
    wb_report_printf("#      ceiling: %.1f GFLOPS (%d core%s x %.2f, the best rank's own rate), %.0f kB/s%s\n",
                     fg->gflops_ceiling, fg->cores_used, fg->cores_used == 1 ? "" : "s", fg->core_gflops,
                     fg->kbps_ceiling, fg->link_bound_s > 0 ? " (with the link's bound)" : "");
    if (fg->above || fg->kbps_above)
        wb_report_printf("#      ABOVE THE CEILING: %s%s%s even in the slowest repetition; not a rate the cores "
                         "can give (likely cause: the clock, or caches a smaller share fits in)\n",
                         fg->above ? "GFLOPS" : "", fg->above && fg->kbps_above ? " and " : "",
                         fg->kbps_above ? "kB/s" : "");
}

void wb_fftb_print_row(const struct wb_fftb_ctx *c, const struct wb_fftb_figures *fg)
{
    wb_report_printf("%-5d %-7s %6d %8.2f %6d %12lld %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %11.1f %7.2f %s\n",
                     fg->id, fg->scenario, fg->nfiles, fg->seconds, c->nranks, (long long)fg->audio_bytes,
                     1e3 * fg->med_read_s, 1e3 * fg->med_slow_s[0], 1e3 * fg->med_slow_s[1], 1e3 * fg->med_fft_s,
                     1e3 * fg->med_slow_s[2], 1e3 * fg->med_over_s, 1e3 * fg->med_total_s, fg->kbps, fg->gflops,
                     fg->passed ? "ok" : "FAILED");
    print_overlap(fg);
    print_ceiling(fg);
    int p = c->nranks - c->first_compute;
    if (fg->paired)
        wb_report_printf("#      paired baseline: rank 0 alone %.3f ms; speedup %.2f (min %.2f, max %.2f) over %d pairs%s\n",
                         1e3 * fg->alone_med_s, fg->speedup.median, fg->speedup.min, fg->speedup.max, fg->reps,
                         fg->speedup.min > p ? "; ABOVE THE CEILING p: the lone run was slow (a shared core) or "
                                               "a rank's share fits in a cache" : "");
    if (fg->rates && c->nranks > 1 && wb_report_enabled()) {
        char line[512];
        int len = snprintf(line, sizeof line, "#      kB/s per rank:");
        for (int q = 0; q < c->nranks && len < (int)sizeof line - 32; q++)
            len += snprintf(line + len, sizeof line - (size_t)len, " %d:%.0f", q, fg->rates[q]);
        wb_report_printf("%s%s\n", line, len >= (int)sizeof line - 32 ? " ..." : "");
    }
    if (c->rank == 0)
        print_link(c, fg);
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
                     "# kB/s = audio bytes / 1000 / median t_total\n"
                     "# GFLOPS = flops of every rank / median span from the first rank's first transform to the last\n"
                     "# rank's last, on clocks aligned to realtime\n");
    wb_report_printf("%-5s %-7s %6s %8s %6s %12s %9s %9s %9s %9s %9s %9s %9s %11s %7s %s\n", "#point", "scenario",
                     "files", "seconds", "ranks", "audio_bytes", "t_read", "t_dist", "t_comp", "t_fft", "t_gather",
                     "t_over", "t_total", "kB/s", "GFLOPS", "verify");
}
