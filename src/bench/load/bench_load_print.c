/* The load table on stdout (rank 0): the header, a row per step and the saturation line, from the
 * figures bench_load_figures.c computed. */
#include <math.h>
#include <stdio.h>

#include "bench/load/bench_load_int.h"
#include "bench/load/options_load.h"
#include "core/report.h"
#include "fftw/fft.h"

static void fmt_load(const struct wb_load_opts *t, double load, char *out, size_t cap)
{
    if (wb_load_closed_loop(t))
        snprintf(out, cap, "%.0f client%s", load, load == 1 ? "" : "s");
    else
        snprintf(out, cap, "%g req/s offered", load);
}

static void ms(char *out, size_t cap, double s)
{
    if (isnan(s))
        snprintf(out, cap, "%9s", "-");
    else
        snprintf(out, cap, "%9.1f", s * 1e3);
}

void wb_load_print_header(const struct wb_load_ctx *c)
{
    const struct wb_load_opts *t = c->t;
    char source[128];
    if (c->nclient_ranks > 0)
        snprintf(source, sizeof source, "%d client rank%s (%d-%d) send requests over MPI", c->nclient_ranks,
                 c->nclient_ranks == 1 ? "" : "s", c->first_client_rank, c->nranks - 1);
    else
        snprintf(source, sizeof source, "the head makes the requests itself");
    wb_report_printf("# load: %s loop; head rank 0, %d worker%s (1-%d), %s\n", wb_load_closed_loop(t) ? "closed" : "open",
                     c->nworkers, c->nworkers == 1 ? "" : "s", c->nworkers, source);
    wb_report_printf("# request: %d x %g s at %d Hz (%lld bytes, %s), frame %d hop %d, %s; dispatch %s, queue %lld, "
                     "SLO p95 %g ms%s\n", t->files_per_request, t->seconds, WB_LOAD_RATE_HZ,
                     (long long)c->req_bytes, wb_fft_precision_names[t->precision], WB_LOAD_FRAME,
                     WB_LOAD_HOP, wb_fft_result_names[t->result],
                     wb_load_dispatch_names[t->dispatch], (long long)t->queue_limit,
                     t->slo_ms, t->ramp ? ", ramp" : "");
    wb_report_printf("# %-5s %8s %10s %12s %9s %8s %10s %9s %9s %9s %9s  %s\n", "step",
                     wb_load_closed_loop(t) ? "clients" : "rate/s", "offered/s", "completed/s", "submitted", "rejected",
                     "unfinished", "p50_ms", "p95_ms", "p99_ms", "max_ms", "verdict");
}

void wb_load_print_row(const struct wb_load_opts *t, const struct wb_load_stats *st)
{
    char p50[16], p95[16], p99[16], mx[16];
    ms(p50, sizeof p50, st->p50_s);
    ms(p95, sizeof p95, st->p95_s);
    ms(p99, sizeof p99, st->p99_s);
    ms(mx, sizeof mx, st->max_s);
    wb_report_printf("  s%03d  %8.*f %10.2f %12.2f %9lld %8lld %10lld %s %s %s %s  %s%s%s\n", st->index,
                     wb_load_closed_loop(t) ? 0 : 2, st->load, st->offered_rps, st->completed_rps, (long long)st->submitted,
                     (long long)st->rejected, (long long)st->unfinished, p50, p95, p99, mx,
                     st->pass ? "ok" : wb_load_reason_names[st->reason], st->pass ? "" : ": ", st->detail);
}

void wb_load_print_summary(const struct wb_load_opts *t, const struct wb_load_stats *st, int sat, int ff,
                          const char *stop_reason)
{
    char a[64], b[64];
    if (sat >= 0) {
        fmt_load(t, st[sat].load, a, sizeof a);
        if (ff >= 0) {
            fmt_load(t, st[ff].load, b, sizeof b);
            wb_report_printf("saturation: %.2f req/s at %s (p95 %.1f ms); first failure at %s, %.2f req/s: %s (%s)\n",
                             st[sat].offered_rps, a, st[sat].p95_s * 1e3, b, st[ff].offered_rps,
                             wb_load_reason_names[st[ff].reason], st[ff].detail);
        } else {
            wb_report_printf("saturation: not reached; every load passed, the highest %s, %.2f req/s (p95 %.1f ms); "
                             "stopped: %s\n", a, st[sat].offered_rps, st[sat].p95_s * 1e3, stop_reason);
        }
    } else if (ff >= 0) {
        fmt_load(t, st[ff].load, b, sizeof b);
        wb_report_printf("saturation: none; the lowest load, %s at %.2f req/s, already fails: %s (%s)\n", b,
                         st[ff].offered_rps, wb_load_reason_names[st[ff].reason], st[ff].detail);
    } else {
        wb_report_printf("saturation: no step ran\n");
    }
}
