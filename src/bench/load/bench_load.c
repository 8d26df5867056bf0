/* `wulfbench load`: rank 0 is the head node that queues requests and dispatches them to worker ranks;
 * requests come from client ranks over MPI or from the head itself. Steps of rising load, each recorded
 * request by request; the saturation point is the highest load that keeps p95 within the SLO with no
 * rejections and rising throughput.
 *
 * Polling: the head, the workers and the client ranks never block in MPI. They poll (MPI_Iprobe,
 * MPI_Test) and, when idle, sleep with a back-off from 10 us up to --poll-us (default 200 us), so a
 * 2-core node is not burnt by spinning ranks. The price is at most --poll-us of extra latency per hop
 * (4 hops per request); --poll-us 0 spins. Every wait has a deadline, so no rank can hang. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/load/bench_load.h"
#include "bench/load/bench_load_int.h"
#include "bench/netstat.h"
#include "bench/options.h"
#include "bench/load/options_load.h"
#include "bench/power.h"
#include "core/audio.h"
#include "core/error.h"
#include "core/report.h"
#include "core/stats.h"
#include "core/sysinfo.h"
#include "core/timer.h"
#include "fftw/fft.h"
#include "io/results.h"
#include "par/comm.h"

/* What rank 0 tells everyone before each step. */
struct step_order {
    double load, timeout_s;
    int32_t go, pad;
};

/* Checks that need the rank count; every rank decides the same, before any collective. */
static int assign_roles(struct wb_load_ctx *c, const struct wb_load_opts *t, int nranks)
{
    int k = t->client_ranks == WB_LOAD_CLIENT_RANKS_AUTO ? (nranks >= 3 ? 1 : 0) : t->client_ranks;
    if (nranks < 2)
        return wb_error_set(WB_EUSAGE, "wulfbench load needs at least 2 ranks, a head (rank 0) and a worker; "
                                       "run it under mpirun -np 2 or more");
    if (k >= nranks)
        return wb_error_set(WB_EUSAGE, "--client-ranks %d: more client ranks than the %d ranks there are "
                                       "(one is the head, one at least a worker)", k, nranks);
    if (nranks - 1 - k < 1)
        return wb_error_set(WB_EUSAGE, "--client-ranks %d leaves no worker rank: %d ranks = 1 head + %d clients; "
                                       "use at most %d client ranks or start more ranks", k, nranks, k, nranks - 2);
    c->nclient_ranks = k;
    c->nworkers = nranks - 1 - k;
    c->first_client_rank = 1 + c->nworkers;
    return 0;
}

static int sizes(struct wb_load_ctx *c)
{
    const struct wb_load_opts *t = c->t;
    struct wb_audio a;
    memset(&a, 0, sizeof a);
    int rc = wb_audio_synth(&a, t->seconds, WB_LOAD_RATE_HZ, c->seed, 0);
    if (rc)
        return rc;
    c->nsamples = a.nsamples;
    wb_audio_free(&a);
    if (c->nsamples < WB_LOAD_FRAME)
        return wb_error_set(WB_EUSAGE, "--seconds %g gives %lld samples, fewer than one %d-sample frame", t->seconds,
                            (long long)c->nsamples, WB_LOAD_FRAME);
    c->frames = 1 + (c->nsamples - WB_LOAD_FRAME) / WB_LOAD_HOP;
    c->sample_bytes = wb_fft_sample_bytes(t->precision);
    c->req_bytes = (int64_t)t->files_per_request * c->nsamples * (int64_t)c->sample_bytes;
    c->res_bytes = (int64_t)t->files_per_request * c->frames *
                   (int64_t)wb_fft_result_bytes(t->precision, WB_LOAD_FRAME, t->result);
    if (c->req_bytes > INT_MAX || c->res_bytes > INT_MAX)
        return wb_error_set(WB_EUSAGE, "a request of %d x %g s is %lld bytes, more than one MPI message carries "
                                       "(2 GiB); lower --files-per-request or --seconds", t->files_per_request,
                            t->seconds, (long long)(c->req_bytes > c->res_bytes ? c->req_bytes : c->res_bytes));
    return 0;
}

/* The request audio a client (or the head, without client ranks) sends with every request. */
static int make_payload(struct wb_load_ctx *c)
{
    const struct wb_load_opts *t = c->t;
    c->payload = wb_fft_alloc((size_t)c->req_bytes);
    if (!c->payload)
        return wb_error_set(WB_ENOMEM, "out of memory for a %lld-byte request", (long long)c->req_bytes);
    for (int f = 0; f < t->files_per_request; f++) {
        struct wb_audio a;
        memset(&a, 0, sizeof a);
        int rc = wb_audio_synth(&a, t->seconds, WB_LOAD_RATE_HZ, c->seed, f);
        if (rc)
            return rc;
        if (a.nsamples != c->nsamples) {
            wb_audio_free(&a);
            return wb_error_set(WB_EINPUT, "synthetic file %d has %lld samples, file 0 %lld", f, (long long)a.nsamples,
                                (long long)c->nsamples);
        }
        wb_fft_convert((char *)c->payload + (size_t)f * (size_t)c->nsamples * c->sample_bytes, a.samples, a.nsamples,
                       t->precision);
        wb_audio_free(&a);
    }
    return 0;
}

static int setup(struct wb_load_ctx *c)
{
    const struct wb_load_opts *t = c->t;
    int rc = sizes(c);
    if (rc)
        return rc;
    if (c->role == WB_LOAD_CLIENT || (c->role == WB_LOAD_HEAD && c->nclient_ranks == 0))
        if ((rc = make_payload(c)))
            return rc;
    if (c->role == WB_LOAD_WORKER) {
        /* Plan once per worker and reuse it for every request of every step. */
        int64_t batch = c->frames < 16 ? c->frames : 16;
        if ((rc = wb_fft_kernel_create(&c->kernel, t->precision, WB_LOAD_FRAME, batch, WB_FFT_HANN, t->plan)))
            return rc;
        c->job_buf = wb_fft_alloc((size_t)c->req_bytes);
        if (!c->job_buf)
            return wb_error_set(WB_ENOMEM, "out of memory for a %lld-byte job", (long long)c->req_bytes);
    }
    if (c->role != WB_LOAD_HEAD) {
        c->res_buf = malloc((size_t)c->res_bytes);
        if (!c->res_buf)
            return wb_error_set(WB_ENOMEM, "out of memory for a %lld-byte result", (long long)c->res_bytes);
    }
    if (c->role == WB_LOAD_HEAD && c->nclient_ranks > 0) {
        int64_t avail = wb_sysinfo_mem_available();
        double need = (double)(t->queue_limit + c->nworkers) * (double)c->req_bytes;
        if (avail > 0 && need > 0.5 * (double)avail)
            wb_report_warn("a full queue (--queue-limit %lld) holds %.0f MB of requests, more than half the %.0f MB "
                           "available", (long long)t->queue_limit, need / 1e6, (double)avail / 1e6);
    }
    return 0;
}

/* Buffers MPI may still use after a failed step are left alone: the job is about to be stopped. */
static void cleanup_local(struct wb_load_ctx *c) { wb_fft_kernel_destroy(&c->kernel); }

static int cleanup(struct wb_load_ctx *c)
{
    wb_fft_kernel_destroy(&c->kernel);
    wb_fft_free(c->payload);
    wb_fft_free(c->job_buf);
    free(c->res_buf);
    free(c->real_minus_wtime_s);
    c->real_minus_wtime_s = NULL;
    c->payload = c->job_buf = c->res_buf = NULL;
    return c->comm != MPI_COMM_NULL ? wb_comm_check(MPI_Comm_free(&c->comm), "MPI_Comm_free (load)") : 0;
}

/* The ramp and the list: which load comes next, decided on rank 0. */
struct plan {
    int ramp, nlist, next_list;
    const double *list;
    double lo, hi, max_load, min_load;
    const char *stop_reason;
};

static int next_load(const struct wb_load_opts *t, struct plan *p, const struct wb_load_stats *st, double *next)
{
    if (st->timed_out) {
        p->stop_reason = "step_timeout";
        return 0;
    }
    if (!p->ramp) {
        if (p->next_list >= p->nlist) {
            p->stop_reason = "list";
            return 0;
        }
        *next = p->list[p->next_list++];
        return 1;
    }
    double x = st->load;
    if (st->pass)
        p->lo = fmax(p->lo, x);
    else
        p->hi = fmin(p->hi, x);
    if (isinf(p->hi)) {
        if (x >= p->max_load) {
            p->stop_reason = "max_load";
            return 0;
        }
        *next = fmin(2 * x, p->max_load);
    } else if (p->lo < 0) {
        if (x <= p->min_load) {
            p->stop_reason = "lowest_load";
            return 0;
        }
        *next = wb_load_closed_loop(t) ? floor(x / 2) : fmax(x / 2, p->min_load);
    } else {
        double width = p->hi - p->lo;
        if (width <= 0.1 * p->lo || (wb_load_closed_loop(t) && width <= 1)) {
            p->stop_reason = "bracketed";
            return 0;
        }
        *next = wb_load_closed_loop(t) ? floor((p->lo + p->hi) / 2) : 0.5 * (p->lo + p->hi);
    }
    if (wb_load_closed_loop(t) && *next < 1)
        *next = 1;
    return 1;
}

static void free_recs(struct wb_load_step *s)
{
    free(s->recs);
    free(s->clock_offset_s);
    s->clock_offset_s = NULL;
    free(s->net);
    s->net = NULL;
    wb_result_energy_free(&s->energy);
    s->recs = NULL;
    s->nrecs = 0;
}

/* Collective: roles, the private communicator, buffers and the header. */
static int load_begin(struct wb_load_ctx *c, const struct wb_options *o)
{
    const struct wb_load_opts *t = wb_load_opts_of(o);
    memset(c, 0, sizeof *c);
    c->comm = MPI_COMM_NULL;
    c->t = t;
    c->rank = wb_comm_rank();
    c->nranks = wb_comm_size();
    c->seed = o->common.seed;
    c->poll_s = t->poll_us * 1e-6;
    /* Long enough for any request in service to finish after a step is cut off. */
    c->grace_s = 10.0 + 2e-3 * t->service_delay_ms;
    int rc = assign_roles(c, t, c->nranks);
    if (rc)
        return rc;
    c->role = c->rank == 0 ? WB_LOAD_HEAD : c->rank < c->first_client_rank ? WB_LOAD_WORKER : WB_LOAD_CLIENT;
    /* A private communicator keeps the load protocol's tags apart from anything else. */
    if ((rc = wb_comm_check(MPI_Comm_dup(wb_comm_world(), &c->comm), "MPI_Comm_dup (load)")))
        return wb_comm_agree(rc);
    rc = wb_comm_agree(setup(c));
    /* Each rank's realtime - Wtime, so the head can give its Wtime clock offsets as wall-clock ones. */
    double rmw = wb_timer_real_minus_now_s();
    if (rc == 0 && c->rank == 0 && !(c->real_minus_wtime_s = calloc((size_t)c->nranks, sizeof(double))))
        rc = wb_error_set(WB_ENOMEM, "out of memory for %d clock offsets", c->nranks);
    rc = wb_comm_agree(rc);
    if (rc == 0)
        rc = wb_comm_check(MPI_Gather(&rmw, 1, MPI_DOUBLE, c->real_minus_wtime_s, 1, MPI_DOUBLE, 0, c->comm),
                           "MPI_Gather (load clocks)");
    if (rc) {
        cleanup(c);
        return rc;
    }
    wb_load_print_header(c);
    return 0;
}

/* Rank 0: whether the next step may start (steps and --timeout left), and its time limit. */
static void order_next(const struct wb_options *o, struct plan *p, struct step_order *order, int index,
                       double run_t0, double step_timeout)
{
    const struct wb_load_opts *t = wb_load_opts_of(o);
    order->timeout_s = step_timeout;
    if (index >= WB_LOAD_MAX_STEPS && order->go) {
        order->go = 0;
        p->stop_reason = "max_steps";
    }
    if (o->common.timeout_s > 0) {
        double left = o->common.timeout_s - (wb_timer_now_s() - run_t0);
        if (left < 1.0 || (t->requests == 0 && left <= t->duration_s)) {
            if (order->go)
                p->stop_reason = "timeout";
            order->go = 0;
        }
        order->timeout_s = fmin(order->timeout_s, left);
    }
}

/* One step in this rank's role. Collective over the load communicator. */
static int run_step(struct wb_load_ctx *c, const struct step_order *order, int index, struct wb_load_step *s)
{
    const struct wb_load_opts *t = c->t;
    *s = (struct wb_load_step){.index = index, .load = order->load, .timeout_s = order->timeout_s};
    if (wb_load_closed_loop(t)) {
        s->clients = (int)order->load;
    } else {
        s->rate_rps = order->load;
        s->clients = c->nclient_ranks > 0 ? c->nclient_ranks : 1;
    }
    s->duration_s = t->requests > 0 ? 0 : t->duration_s;
    s->requests = t->requests;
    if (c->role == WB_LOAD_HEAD)
        return wb_load_head_step(c, s);
    if (c->role == WB_LOAD_WORKER)
        return wb_load_worker_step(c, s);
    return wb_load_client_step(c, s);
}

/* Rank 0: the verification verdict of a step that was written. */
static int check_step(const struct wb_load_stats *st, int vrc)
{
    if (st->mismatches > 0 && vrc == 0) {
        vrc = wb_error_set(WB_EVERIFY, "load step s%03d: %lld results differed from the same worker's first "
                                       "result for the same audio; data was damaged on the way",
                           st->index, (long long)st->mismatches);
        wb_report_printf("# verify: FAILED: %s\n", wb_error_message());
    }
    return vrc;
}

/* The saturation summary, printed and written, and the run's verdict agreed. Collective. */
static int load_end(struct wb_results *res, const struct wb_options *o, const struct wb_load_ctx *c,
                    const struct wb_load_stats *stats, int nsteps, const struct plan *p, int vrc)
{
    const struct wb_load_opts *t = wb_load_opts_of(o);
    int sat = -1, ff = -1;
    char stop_reason[32];
    if (c->rank == 0) {
        wb_load_saturation(stats, nsteps, &sat, &ff);
        wb_load_print_summary(t, stats, sat, ff, p->stop_reason);
    }
    snprintf(stop_reason, sizeof stop_reason, "%s", p->stop_reason);
    int rc = wb_load_write_summary(res, t, stats, nsteps, sat, ff, stop_reason, t->ramp);
    if (rc == 0 && c->rank == 0 && !strcmp(p->stop_reason, "timeout"))
        vrc = vrc ? vrc : wb_error_set(WB_ETIMEOUT, "load: --timeout %g s reached after %d steps; the file "
                                                    "holds what was measured", o->common.timeout_s, nsteps);
    return rc ? rc : wb_comm_agree(vrc);
}

/* Rank 0: a worker stopped answering during step s. It can join no collective, so the step is written
 * on rank 0 alone, its requests marked unfinished, and main ends the run (WB_ESTOPPED). */
static int keep_stopped_step(struct wb_load_ctx *c, struct wb_results *res, struct wb_load_step *s,
                             struct wb_load_stats *stats, int nsteps)
{
    struct wb_load_stats *st = &stats[nsteps];
    int rc = wb_load_step_stats(c, s, st);
    if (rc == 0) {
        wb_load_evaluate(c->t, st, stats, nsteps);
        wb_load_print_row(c->t, st);
        rc = wb_load_write_step_alone(res, c, s, st);
    }
    char why[768] = "";
    if (rc)
        snprintf(why, sizeof why, "; the step could not be kept: %s", wb_error_message());
    free_recs(s);
    cleanup_local(c);
    return wb_error_set(WB_ESTOPPED, "load: worker rank %d stopped responding during step s%03d (no reply for "
                                     "%.0f s); its requests are marked unfinished%s", s->stopped_worker, s->index,
                        s->stopped_quiet_s, why);
}

int wb_bench_load_run(const struct wb_options *o, struct wb_results *res)
{
    const struct wb_load_opts *t = wb_load_opts_of(o);
    struct wb_load_ctx c;
    int rc = load_begin(&c, o);
    if (rc)
        return rc;
    const double *list;
    int nlist = wb_load_opts_loads(t, &list);
    struct plan p = {.ramp = t->ramp, .nlist = nlist, .next_list = 1, .list = list, .lo = -1, .hi = INFINITY,
                     .max_load = wb_load_opts_max_load(t), .stop_reason = "list"};
    p.min_load = wb_load_closed_loop(t) ? 1 : list[0] / 64;
    struct wb_load_stats stats[WB_LOAD_MAX_STEPS];
    int nsteps = 0, vrc = 0;
    double run_t0 = wb_timer_now_s(), step_timeout = wb_load_opts_step_timeout_s(t);
    struct step_order order = {.load = wb_load_closed_loop(t) ? fmax(1, round(list[0])) : list[0], .go = 1};
    for (int index = 0;; index++) {
        if (c.rank == 0)
            order_next(o, &p, &order, index, run_t0, step_timeout);
        if ((rc = wb_comm_bcast(&order, sizeof order, 0)) || !order.go)
            break;
        struct wb_load_step s;
        wb_power_rep_begin(WB_POWER_MAIN);
        struct wb_netstat net;
        wb_netstat_begin(&net);
        rc = run_step(&c, &order, index, &s);
        wb_power_rep_end(WB_POWER_MAIN);
        wb_power_rep_keep(WB_POWER_MAIN);
        if (c.rank == 0 && rc == WB_ETIMEOUT && s.stopped_worker > 0)
            return keep_stopped_step(&c, res, &s, stats, nsteps);
        if (rc == WB_EMPI || rc == WB_ETIMEOUT) {
            /* A rank stopped responding or broke the protocol: the ranks are out of step, and a collective
             * could wait forever. WB_EMPI makes main stop every rank. */
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", wb_error_message());
            free_recs(&s);
            cleanup_local(&c);
            return wb_error_set(WB_EMPI, "%s", msg);
        }
        if ((rc = wb_comm_agree(rc))) {
            free_recs(&s);
            break;
        }
        struct wb_load_stats *st = &stats[nsteps];
        memset(st, 0, sizeof *st);
        int src = 0;
        if (c.rank == 0) {
            src = wb_load_step_stats(&c, &s, st);
            wb_load_evaluate(t, st, stats, nsteps);
            if (src == 0)
                wb_load_print_row(t, st);
        }
        rc = wb_netstat_end(&net, res != NULL, &s.net);
        rc = rc ? rc : wb_power_point_take(&s.energy, NULL);
        rc = rc ? rc : wb_load_write_step(res, &c, &s, st);
        free_recs(&s);
        if (rc || (rc = wb_comm_agree(src)))
            break;
        nsteps++;
        if (c.rank == 0) {
            vrc = check_step(st, vrc);
            order.go = next_load(t, &p, st, &order.load);
        }
    }
    if (rc == 0)
        rc = load_end(res, o, &c, stats, nsteps, &p, vrc);
    int crc = cleanup(&c);
    return rc ? rc : crc;
}
