#include "bench/load/options_load.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/options.h"
#include "core/error.h"
#include "fftw/fft.h"
#include "core/optparse.h"

enum load_id {
    L_CLIENTS = 1, L_RATES, L_THINK, L_CLIENT_RANKS, L_FILES, L_SECONDS, L_DISPATCH, L_QUEUE, L_DURATION,
    L_REQUESTS, L_WARMUP_S, L_SLO, L_RAMP, L_MAX_LOAD, L_STEP_TIMEOUT, L_PRECISION, L_PLAN, L_RESULT,
    L_DELAY, L_POLL
};

const struct wb_optdef wb_load_optdefs[] = {
    {"clients", 1, 0, L_CLIENTS, "LIST", "closed loop: logical clients per step, e.g. 1,2,4 or 1:16; each 1 to 100000", "1,2,4"},
    {"rates", 1, 0, L_RATES, "LIST", "open loop: Poisson arrivals in requests/s per step, e.g. 5,10,20; each above 0, "
     "at most 1e6", "none (closed loop)"},
    {"think-ms", 1, 0, L_THINK, "MS", "closed loop: a client's pause after each answer, 0 to 3.6e6", "0"},
    {"client-ranks", 1, 0, L_CLIENT_RANKS, "K|auto",
     "ranks that act as remote clients, sending their audio over MPI; 0: the head makes the requests "
     "itself; auto: 1 with 3 or more ranks, else 0", "auto"},
    {"files-per-request", 1, 0, L_FILES, "N", "audio files in one request, 1 to 1024", "1"},
    {"seconds", 1, 0, L_SECONDS, "S", "seconds of 44.1 kHz synthetic audio per file, up to 3600", "5"},
    {"dispatch", 1, 0, L_DISPATCH, "dynamic|round-robin",
     "dynamic: any idle worker takes the next request; round-robin: workers in turn", "dynamic"},
    {"queue-limit", 1, 0, L_QUEUE, "N", "requests that may wait on the head, 1 to 1000000; more are rejected", "64"},
    {"duration", 1, 0, L_DURATION, "S", "length of a load step in seconds, 0.01 to 86400", "10"},
    {"requests", 1, 0, L_REQUESTS, "N", "end a step after N requests instead of a duration, 1 to 1e8", "none"},
    {"warmup-s", 1, 0, L_WARMUP_S, "S", "flag requests of a step's first S seconds as warm-up; below --duration", "1"},
    {"slo-ms", 1, 0, L_SLO, "MS", "p95 latency a load must stay within to count as served; above 0", "1000"},
    {"ramp", 0, 0, L_RAMP, NULL,
     "raise the load from the list's first value (doubling, then bisecting) until the saturation point is "
     "bracketed within 10%", NULL},
    {"max-load", 1, 0, L_MAX_LOAD, "X", "the ramp's ceiling: clients or requests/s, above 0",
     "256 clients / 4096 requests/s"},
    {"step-timeout", 1, 0, L_STEP_TIMEOUT, "S",
     "cut a step off after S seconds, mark its open requests unfinished and end the ramp; above --duration",
     "duration + max(duration, 10 s); 120 s with --requests"},
    {"precision", 1, 0, L_PRECISION, "single|double", "FFT precision", "single"},
    {"plan", 1, 0, L_PLAN, "estimate|measure|patient", "FFTW planning effort, once per worker", "measure"},
    {"result", 1, 0, L_RESULT, "peaks|spectra", "what a worker returns per frame", "peaks"},
    {"service-delay-ms", 1, 0, L_DELAY, "MS",
     "add a fixed delay per request on the worker, to model a slower node; 0 to 3.6e6", "0"},
    {"poll-us", 1, 0, L_POLL, "US",
     "longest idle sleep between polls, 0 to 1e6; lower is more precise but costs CPU, 0 spins", "200"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

const char wb_load_summary[] = "concurrent clients against a head node and its workers: latency, throughput and "
                               "the saturation point (study rows 10-11)";

static const double default_clients[] = {1, 2, 4};

void wb_load_opts_defaults(struct wb_options *o)
{
    struct wb_load_opts *t = wb_load_opts_of(o);
    memset(t, 0, sizeof *t);
    t->loop = WB_LOAD_CLOSED;
    t->client_ranks = WB_LOAD_CLIENT_RANKS_AUTO;
    t->files_per_request = 1;
    t->seconds = 5.0;
    t->dispatch = WB_LOAD_DYNAMIC;
    t->queue_limit = 64;
    t->duration_s = 10.0;
    t->warmup_s = 1.0;
    t->slo_ms = 1000.0;
    t->precision = WB_FFT_SINGLE;
    t->plan = WB_FFT_MEASURE;
    t->result = WB_FFT_PEAKS;
    t->poll_us = 200.0;
}

void wb_load_opts_compact(struct wb_options *o)
{
    struct wb_load_opts *t = wb_load_opts_of(o);
    wb_load_opts_defaults(o);
    t->ramp = 1;
    t->duration_s = 2.0;
    t->warmup_s = 0.5;
    t->max_load = 16;
    t->step_timeout_s = 10.0;
}

static void set_loads(struct wb_load_opts *t, const double *v, int n)
{
    for (int i = 0; i < n; i++)
        t->loads[i] = v[i];
    t->nloads = n;
}

const char *const wb_load_dispatch_names[] = {"dynamic", "round-robin", NULL};

/* A flat switch with one case per option: longer than 80 lines, and clearer so than split. */
int wb_load_opts_set(struct wb_options *o, int id, const char *arg)
{
    struct wb_load_opts *t = wb_load_opts_of(o);
    int64_t v, *iv = NULL;
    double d, *dv = NULL;
    int k, n, rc = 0;
    switch (id) {
    case L_CLIENTS:
        if ((rc = wb_optparse_size_list("--clients", arg, 1, 100000, WB_LOAD_MAX_LOADS, &iv, &n)) == 0) {
            double tmp[WB_LOAD_MAX_LOADS];
            for (int i = 0; i < n; i++)
                tmp[i] = (double)iv[i];
            set_loads(t, tmp, n);
            t->loop = WB_LOAD_CLOSED;
            t->clients_given = 1;
        }
        free(iv);
        break;
    case L_RATES:
        if ((rc = wb_optparse_double_list("--rates", arg, -DBL_MAX, DBL_MAX, WB_LOAD_MAX_LOADS, &dv, &n)) == 0) {
            for (int i = 0; i < n && rc == 0; i++)
                if (!(dv[i] > 0))
                    rc = wb_error_set(WB_EUSAGE, "--rates: %g is not a rate; give requests per second above 0, "
                                                 "e.g. --rates 5,10,20", dv[i]);
                else if (dv[i] > 1e6)
                    rc = wb_error_set(WB_EUSAGE, "--rates: %g requests/s is more than the 1000000 allowed", dv[i]);
            if (rc == 0) {
                set_loads(t, dv, n);
                t->loop = WB_LOAD_OPEN;
                t->rates_given = 1;
            }
        }
        free(dv);
        break;
    case L_THINK:
        rc = wb_optparse_double("--think-ms", arg, 0, 3.6e6, &t->think_ms);
        break;
    case L_CLIENT_RANKS:
        if (!strcmp(arg, "auto"))
            t->client_ranks = WB_LOAD_CLIENT_RANKS_AUTO;
        else if ((rc = wb_optparse_int("--client-ranks", arg, 0, 1000000, &v)) == 0)
            t->client_ranks = (int)v;
        break;
    case L_FILES:
        if ((rc = wb_optparse_int("--files-per-request", arg, 1, 1024, &v)) == 0)
            t->files_per_request = (int)v;
        break;
    case L_SECONDS:
        rc = wb_optparse_double("--seconds", arg, 0, 3600, &t->seconds);
        break;
    case L_DISPATCH:
        if ((rc = wb_optparse_choice("--dispatch", arg, wb_load_dispatch_names, &k)) == 0)
            t->dispatch = k;
        break;
    case L_QUEUE:
        if ((rc = wb_optparse_int("--queue-limit", arg, 0, 1000000, &v)) == 0) {
            if (v == 0)
                rc = wb_error_set(WB_EUSAGE, "--queue-limit 0: the queue must hold at least 1 request "
                                             "(0 would reject every request)");
            t->queue_limit = v;
        }
        break;
    case L_DURATION:
        if ((rc = wb_optparse_double("--duration", arg, 0.01, 86400, &t->duration_s)) == 0)
            t->duration_given = 1;
        break;
    case L_REQUESTS:
        rc = wb_optparse_int("--requests", arg, 1, 100000000, &t->requests);
        break;
    case L_WARMUP_S:
        rc = wb_optparse_double("--warmup-s", arg, 0, 86400, &t->warmup_s);
        break;
    case L_SLO:
        if ((rc = wb_optparse_double("--slo-ms", arg, 0, 3.6e6, &d)) == 0) {
            if (d <= 0)
                rc = wb_error_set(WB_EUSAGE, "--slo-ms: %g is not a latency target; give milliseconds above 0", d);
            t->slo_ms = d;
        }
        break;
    case L_RAMP:
        t->ramp = 1;
        break;
    case L_MAX_LOAD:
        if ((rc = wb_optparse_double("--max-load", arg, 0, 1e6, &d)) == 0) {
            if (d <= 0)
                rc = wb_error_set(WB_EUSAGE, "--max-load: %g is not a load; give clients or requests/s above 0", d);
            t->max_load = d;
        }
        break;
    case L_STEP_TIMEOUT:
        if ((rc = wb_optparse_double("--step-timeout", arg, 0, 1e6, &d)) == 0) {
            if (d <= 0)
                rc = wb_error_set(WB_EUSAGE, "--step-timeout: %g is not a time; give seconds above 0", d);
            t->step_timeout_s = d;
        }
        break;
    case L_PRECISION:
        if ((rc = wb_optparse_choice("--precision", arg, wb_fft_precision_names, &k)) == 0)
            t->precision = k == 0 ? WB_FFT_SINGLE : WB_FFT_DOUBLE;
        break;
    case L_PLAN:
        if ((rc = wb_optparse_choice("--plan", arg, wb_fft_effort_names, &k)) == 0)
            t->plan = k == 0 ? WB_FFT_ESTIMATE : k == 1 ? WB_FFT_MEASURE : WB_FFT_PATIENT;
        break;
    case L_RESULT:
        if ((rc = wb_optparse_choice("--result", arg, wb_fft_result_names, &k)) == 0)
            t->result = k == 0 ? WB_FFT_SPECTRA : WB_FFT_PEAKS;
        break;
    case L_DELAY:
        rc = wb_optparse_double("--service-delay-ms", arg, 0, 3.6e6, &t->service_delay_ms);
        break;
    case L_POLL:
        rc = wb_optparse_double("--poll-us", arg, 0, 1e6, &t->poll_us);
        break;
    default:
        rc = wb_error_set(WB_EUSAGE, "load: unknown option id %d", id);
    }
    return rc;
}

int wb_load_opts_loads(const struct wb_load_opts *t, const double **loads)
{
    if (t->nloads > 0) {
        *loads = t->loads;
        return t->nloads;
    }
    *loads = default_clients;
    /* A ramp starts from one value; without a list it starts at 1 client. */
    return t->ramp ? 1 : (int)(sizeof default_clients / sizeof default_clients[0]);
}

double wb_load_opts_stall_window_s(const struct wb_options *o, double stall_s)
{
    return stall_s > 0 ? fmax(stall_s, wb_load_opts_step_timeout_s(wb_load_opts_of(o)) + 60) : stall_s;
}

double wb_load_opts_step_timeout_s(const struct wb_load_opts *t)
{
    if (t->step_timeout_s > 0)
        return t->step_timeout_s;
    if (t->requests > 0)
        return 120.0;
    return t->duration_s + fmax(t->duration_s, 10.0);
}

double wb_load_opts_max_load(const struct wb_load_opts *t)
{
    if (t->max_load > 0)
        return t->max_load;
    return t->loop == WB_LOAD_CLOSED ? 256.0 : 4096.0;
}

int wb_load_opts_validate(struct wb_options *o)
{
    struct wb_load_opts *t = wb_load_opts_of(o);
    if (t->clients_given && t->rates_given)
        return wb_error_set(WB_EUSAGE, "--clients (closed loop) and --rates (open loop) exclude each other; give one");
    if (t->loop == WB_LOAD_OPEN && t->think_ms > 0)
        return wb_error_set(WB_EUSAGE, "--think-ms applies to the closed loop (--clients), not to --rates");
    if (t->duration_given && t->requests > 0)
        return wb_error_set(WB_EUSAGE, "--duration and --requests both end a step; give one of them");
    if (t->requests == 0 && t->warmup_s >= t->duration_s)
        return wb_error_set(WB_EUSAGE, "--warmup-s %g must be shorter than --duration %g", t->warmup_s,
                            t->duration_s);
    if (t->seconds * WB_LOAD_RATE_HZ < WB_LOAD_FRAME)
        return wb_error_set(WB_EUSAGE, "--seconds %g: a file needs at least %d samples (%.3f s at 44.1 kHz)",
                            t->seconds, WB_LOAD_FRAME, (double)WB_LOAD_FRAME / WB_LOAD_RATE_HZ);
    if (t->step_timeout_s > 0 && t->requests == 0 && t->step_timeout_s <= t->duration_s)
        return wb_error_set(WB_EUSAGE, "--step-timeout %g must be longer than --duration %g", t->step_timeout_s,
                            t->duration_s);
    const double *loads;
    wb_load_opts_loads(t, &loads);
    if (t->ramp && t->max_load > 0 && t->max_load < loads[0])
        return wb_error_set(WB_EUSAGE, "--max-load %g is below the ramp's first load %g", t->max_load, loads[0]);
    return 0;
}

void wb_load_opts_free(struct wb_options *o) { (void)o; }

struct wb_load_opts *wb_load_opts_of(const struct wb_options *o) { return wb_options_own(o, "load"); }
