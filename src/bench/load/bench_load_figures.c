/* The figures of a load step, computed once on the head: counts, rates and latency percentiles, the
 * verdict against the SLO, and the saturation over the steps. The writer stores them, the printer prints them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/load/bench_load_int.h"
#include "bench/load/options_load.h"
#include "core/error.h"
#include "core/stats.h"

/* Counts, rates and latency percentiles; fails loudly if the requests do not add up. */
int wb_load_step_stats(const struct wb_load_ctx *c, const struct wb_load_step *s, struct wb_load_stats *st)
{
    const struct wb_load_opts *t = c->t;
    memset(st, 0, sizeof *st);
    st->index = s->index;
    st->load = s->load;
    st->clients = s->clients;
    st->rate_rps = s->rate_rps;
    st->timed_out = s->timed_out;
    st->mismatches = s->verify_mismatches;
    st->t_end_s = s->t_end_s;
    st->submitted = s->nrecs;
    for (int64_t i = 0; i < s->nrecs; i++) {
        int status = s->recs[i].status;
        st->done += status == WB_LOAD_DONE;
        st->rejected += status == WB_LOAD_REJECTED;
        st->unfinished += status == WB_LOAD_UNFINISHED;
    }
    if (st->done + st->rejected + st->unfinished != st->submitted)
        return wb_error_set(WB_EVERIFY, "load step s%03d: accounting: done %lld + rejected %lld + unfinished %lld "
                                        "!= submitted %lld", s->index, (long long)st->done, (long long)st->rejected,
                            (long long)st->unfinished, (long long)st->submitted);
    /* Statistics leave the warm-up out, unless it would leave nothing. */
    double w0 = t->warmup_s, w1 = s->duration_s > 0 ? s->duration_s : s->t_last_submit_s;
    if (w1 - w0 <= 0)
        w0 = 0;
    double *lat = malloc((size_t)(s->nrecs > 0 ? s->nrecs : 1) * sizeof *lat);
    if (!lat)
        return wb_error_set(WB_ENOMEM, "out of memory for latencies");
    double sum = 0;
    for (int64_t i = 0; i < s->nrecs; i++) {
        const struct wb_load_rec *r = &s->recs[i];
        if (r->status == WB_LOAD_DONE && r->t_done >= w0 && r->t_done <= w1)
            st->done_in_window++;
        if (r->t_submit < w0)
            continue;
        st->measured++;
        if (r->status == WB_LOAD_DONE) {
            lat[st->measured_done++] = r->t_done - r->t_submit;
            sum += r->t_done - r->t_submit;
        }
    }
    size_t nlat = (size_t)st->measured_done;
    st->p50_s = wb_stats_quantile(lat, nlat, 0.50);
    st->p95_s = wb_stats_quantile(lat, nlat, 0.95);
    st->p99_s = wb_stats_quantile(lat, nlat, 0.99);
    st->max_s = wb_stats_quantile(lat, nlat, 1.0);
    st->mean_s = st->measured_done ? sum / (double)st->measured_done : NAN;
    free(lat);
    st->window_start_s = w0;
    st->window_end_s = w1;
    /* Both rates count events inside the same window: steady-state throughput, not the drain after it. */
    st->submitted_rps = w1 > w0 ? (double)st->measured / (w1 - w0) : NAN;
    st->completed_rps = w1 > w0 ? (double)st->done_in_window / (w1 - w0) : NAN;
    st->offered_rps = wb_load_closed_loop(t) ? st->submitted_rps : s->rate_rps;
    return 0;
}

/* Pass or fail against the SLO; a closed-loop step is also compared with the nearest lower load run so far. */
void wb_load_evaluate(const struct wb_load_opts *t, struct wb_load_stats *st, const struct wb_load_stats *prev, int nprev)
{
    double slo_s = t->slo_ms * 1e-3;
    st->reason = WB_LOAD_R_NONE;
    st->detail[0] = '\0';
    if (st->rejected > 0) {
        st->reason = WB_LOAD_R_REJECTIONS;
        snprintf(st->detail, sizeof st->detail, "%lld of %lld rejected", (long long)st->rejected,
                 (long long)st->submitted);
    } else if (st->timed_out || st->unfinished > 0) {
        st->reason = WB_LOAD_R_LATENCY;
        snprintf(st->detail, sizeof st->detail, "%s%lld unfinished", st->timed_out ? "step timed out, " : "",
                 (long long)st->unfinished);
    } else if (st->measured_done > 0 && st->p95_s > slo_s) {
        st->reason = WB_LOAD_R_LATENCY;
        snprintf(st->detail, sizeof st->detail, "p95 %.1f ms > SLO %g ms", st->p95_s * 1e3, t->slo_ms);
    } else if (!wb_load_closed_loop(t)) {
        /* A shortfall counts when it is over 10% and over two standard deviations of the arrival count,
         * so that a short step's Poisson noise does not fail it. */
        double n = (double)st->measured, shortfall = n - (double)st->done_in_window;
        if (n > 0 && shortfall > fmax(0.1 * n, 2 * sqrt(n))) {
            st->reason = WB_LOAD_R_THROUGHPUT;
            snprintf(st->detail, sizeof st->detail, "completed %.2f/s, %.0f%% short of the %.2f/s submitted",
                     st->completed_rps, 100 * shortfall / n, st->submitted_rps);
        }
    } else {
        const struct wb_load_stats *ref = NULL;
        for (int i = 0; i < nprev; i++)
            if (prev[i].load < st->load && (!ref || prev[i].load > ref->load))
                ref = &prev[i];
        if (ref && ref->completed_rps > 0) {
            double load_gain = st->load / ref->load - 1, tput_gain = st->completed_rps / ref->completed_rps - 1;
            /* Less than a quarter of the proportional gain: the clients are only queueing. */
            if (tput_gain < 0.25 * load_gain) {
                st->reason = WB_LOAD_R_THROUGHPUT;
                snprintf(st->detail, sizeof st->detail, "completed/s %+.0f%% while clients %+.0f%% (vs %.0f)",
                         100 * tput_gain, 100 * load_gain, ref->load);
            }
        }
    }
    st->pass = st->reason == WB_LOAD_R_NONE;
}

/* Saturation: the highest passing load below the lowest failing one. */
void wb_load_saturation(const struct wb_load_stats *st, int n, int *sat, int *first_fail)
{
    *sat = *first_fail = -1;
    for (int i = 0; i < n; i++)
        if (!st[i].pass && (*first_fail < 0 || st[i].load < st[*first_fail].load))
            *first_fail = i;
    for (int i = 0; i < n; i++)
        if (st[i].pass && (*first_fail < 0 || st[i].load < st[*first_fail].load) &&
            (*sat < 0 || st[i].load > st[*sat].load))
            *sat = i;
}
