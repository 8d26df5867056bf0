/* The dfft table on stdout (rank 0): the header, each point's rows and the ceiling line under them,
 * from the figures bench_dfft_figures.c computed (and the writer stored first). */
#include <math.h>
#include <stdio.h>

#include "bench/dfft/bench_dfft_int.h"
#include "bench/dfft/options_dfft.h"
#include "bench/options.h"
#include "core/report.h"

void wb_dfft_print_header(const struct wb_dfft_ctx *c)
{
    const struct wb_dfft_opts *d = c->d;
    wb_report_printf("# wulfbench dfft: %d-D %s, %s precision, %d rank%s, FFTW-MPI slabs%s, plan %s, direction %s\n",
                     d->dims, wb_dfft_kind_names[d->kind], wb_dfft_precision_names[d->precision], c->nranks,
                     c->nranks > 1 ? "s" : "", d->transposed_out ? ", transposed output" : "",
                     wb_dfft_plan_names[c->plan], wb_dfft_direction_names[d->direction]);
    if (c->plan_why[0])
        wb_report_printf("# plan: %s\n", c->plan_why);
    wb_report_printf("# times: median over %d reps of the slowest rank, in ms; GFLOPS: 5 N log2 N (r2c: half) / "
                     "t_total; MB/s: the slowest rank's transpose bytes / t_transp\n", c->o->common.reps);
    wb_report_printf("%-6s %-14s %-4s %-6s %-4s %5s %10s %10s %10s %7s %8s %10s %s\n", "#point", "shape", "kind",
                     "prec", "dir", "ranks", "t_total", "t_local", "t_transp", "transp%", "GFLOPS", "MB/s/rank",
                     "verify");
}

/* The ceiling line under a point's rows: the slowest rank's transpose MB/s against what the
 * machines allow; GFLOPS has none, since no one-core rate of this kernel is recorded. */
static void print_ceiling(const struct wb_dfft_figures *fg)
{
    double ceil = fg->ceiling_Bps, v = fg->rate_top_Bps;
    if (!isfinite(ceil) || !isfinite(v))
        wb_report_printf("#      ceiling: MB/s/rank unknown (the link reports no speed); GFLOPS: none recorded\n");
    else
        wb_report_printf("#      ceiling: MB/s/rank %.1f, %s %.1f (memcpy on one machine, else twice the slowest line "
                         "rate)%s; GFLOPS: none recorded (no one-core rate of this kernel)\n",
                         v / 1e6, v > ceil ? "ABOVE THE CEILING of" : "within", ceil / 1e6,
                         v > ceil ? ", likely cause: caches, a rank's blocks fit in one" : "");
}

/* One row per direction timed (fwd, bwd), and with --direction both the mean. */
void wb_dfft_print_point(const struct wb_dfft_ctx *c, int point, const struct wb_fftmpi_layout *l,
                         const struct wb_dfft_measured *m, const struct wb_dfft_figures *fg)
{
    const struct wb_dfft_dirfig *rows[3] = {&fg->dir[0], &fg->dir[1], &fg->mean};
    static const char *const names[3] = {"fwd", "bwd", "mean"};
    int direction = c->d->direction;
    for (int i = 0; i < 3; i++) {
        if ((i == 1 && direction == WB_DFFT_FORWARD) || (i == 0 && direction == WB_DFFT_BACKWARD) ||
            (i == 2 && direction != WB_DFFT_BOTH))
            continue;
        const struct wb_dfft_dirfig *t = rows[i];
        wb_report_printf("%-6d %-14s %-4s %-6s %-4s %5d %10.3f %10.3f %10.3f %7.1f %8.3f %10.1f %s\n", point,
                         fg->shape, wb_dfft_kind_names[l->kind], wb_dfft_precision_names[l->precision], names[i],
                         c->nranks, t->med_total * 1e3, t->med_local * 1e3, t->med_transpose * 1e3,
                         100 * t->transpose_share, t->gflops, t->transpose_Bps_min / 1e6, m->passed ? "ok" : "FAILED");
    }
    if (c->rank == 0)
        print_ceiling(fg);
}
