/* `wulfbench load`: each step's records and the saturation summary in the result file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/load/bench_load_int.h"
#include "core/error.h"
#include "fftw/fft.h"
#include "io/results.h"
#include "par/comm.h"

const char *const wb_load_reason_names[] = {"none", "latency", "rejections", "throughput", NULL};

#define ATTR_S(name, v) (rc = rc ? rc : wb_results_attr_str(res, g, name, v))
#define ATTR_I(name, v) (rc = rc ? rc : wb_results_attr_i64(res, g, name, (int64_t)(v)))
#define ATTR_F(name, v) (rc = rc ? rc : wb_results_attr_f64(res, g, name, (double)(v)))

/* One step's records as columns (rank 0 fills them; the others hold zeros of the same length). */
#define NFIELDS 10
struct step_cols {
    int32_t *client, *client_rank, *worker;
    int64_t *bytes;
    uint8_t *status, *warm;
    double *f[NFIELDS];
};

static const char *const field_names[NFIELDS] = {"t_submit", "t_start", "t_done", "t_queue", "t_distribute",
                                                 "t_compute", "t_fft", "t_return", "t_client", "latency"};

static void cols_free(struct step_cols *k)
{
    free(k->client);
    free(k->client_rank);
    free(k->worker);
    free(k->bytes);
    free(k->status);
    free(k->warm);
    for (int j = 0; j < NFIELDS; j++)
        free(k->f[j]);
    memset(k, 0, sizeof *k);
}

static int cols_fill(struct step_cols *k, const struct wb_load_ctx *c, const struct wb_load_step *s, int64_t n)
{
    memset(k, 0, sizeof *k);
    k->client = calloc((size_t)n + 1, sizeof *k->client);
    k->client_rank = calloc((size_t)n + 1, sizeof *k->client_rank);
    k->worker = calloc((size_t)n + 1, sizeof *k->worker);
    k->bytes = calloc((size_t)n + 1, sizeof *k->bytes);
    k->status = calloc((size_t)n + 1, 1);
    k->warm = calloc((size_t)n + 1, 1);
    int ok = k->client && k->client_rank && k->worker && k->bytes && k->status && k->warm;
    for (int j = 0; j < NFIELDS; j++)
        ok = (k->f[j] = calloc((size_t)n + 1, sizeof(double))) != NULL && ok;
    if (!ok)
        return wb_error_set(WB_ENOMEM, "out of memory for %lld load records", (long long)n);
    for (int64_t i = 0; c->rank == 0 && i < n; i++) {
        const struct wb_load_rec *r = &s->recs[i];
        k->client[i] = r->client;
        k->client_rank[i] = r->client_rank;
        k->worker[i] = r->worker;
        k->bytes[i] = c->req_bytes;
        k->status[i] = r->status;
        k->warm[i] = r->warmup;
        double v[NFIELDS] = {r->t_submit, r->t_start, r->t_done, r->t_queue, r->t_dist, r->t_comp, r->t_fft,
                             r->t_ret, r->t_client, r->t_done - r->t_submit};
        for (int j = 0; j < NFIELDS; j++)
            k->f[j][i] = v[j];
    }
    return 0;
}

/* A flat list of the step's attributes, one line each. */
static int write_step_attrs(struct wb_results *res, const char *g, const struct wb_load_ctx *c,
                            const struct wb_load_step *s, const struct wb_load_stats *st)
{
    const struct wb_load_opts *t = c->t;
    int rc = 0;
    ATTR_S("loop", wb_load_closed_loop(t) ? "closed" : "open");
    ATTR_F("load", s->load);
    ATTR_I("clients", s->clients);
    ATTR_F("rate_rps", wb_load_closed_loop(t) ? NAN : s->rate_rps);
    ATTR_F("offered_rps", st->offered_rps);
    ATTR_F("duration_s", s->duration_s);
    ATTR_I("requests", s->requests);
    ATTR_F("warmup_s", t->warmup_s);
    ATTR_F("step_timeout_s", s->timeout_s);
    ATTR_I("files_per_request", t->files_per_request);
    ATTR_F("seconds_per_file", t->seconds);
    ATTR_I("sample_rate", WB_LOAD_RATE_HZ);
    ATTR_I("frame", WB_LOAD_FRAME);
    ATTR_I("hop", WB_LOAD_HOP);
    ATTR_S("window", "hann");
    ATTR_S("precision", wb_fft_precision_names[t->precision]);
    ATTR_S("plan", wb_fft_effort_names[t->plan]);
    ATTR_S("result", wb_fft_result_names[t->result]);
    ATTR_I("bytes_per_request", c->req_bytes);
    ATTR_I("result_bytes", c->res_bytes);
    ATTR_S("dispatch", wb_load_dispatch_names[t->dispatch]);
    ATTR_I("queue_limit", t->queue_limit);
    ATTR_F("slo_ms", t->slo_ms);
    ATTR_S("client_source", c->nclient_ranks > 0 ? "ranks" : "head");
    ATTR_I("client_ranks", c->nclient_ranks);
    ATTR_I("workers", c->nworkers);
    ATTR_F("think_ms", t->think_ms);
    ATTR_F("service_delay_ms", t->service_delay_ms);
    ATTR_F("poll_us", t->poll_us);
    ATTR_I("timed_out", st->timed_out);
    ATTR_I("submitted", st->submitted);
    ATTR_I("done", st->done);
    ATTR_I("rejected", st->rejected);
    ATTR_I("unfinished", st->unfinished);
    ATTR_I("measured", st->measured);
    ATTR_F("window_start_s", st->window_start_s);
    ATTR_F("window_end_s", st->window_end_s);
    ATTR_F("submitted_rps", st->submitted_rps);
    ATTR_F("completed_rps", st->completed_rps);
    ATTR_F("p50_s", st->p50_s);
    ATTR_F("p95_s", st->p95_s);
    ATTR_F("p99_s", st->p99_s);
    ATTR_F("max_s", st->max_s);
    ATTR_F("mean_s", st->mean_s);
    ATTR_F("t_end_s", st->t_end_s);
    ATTR_I("pass", st->pass);
    ATTR_S("fail_reason", wb_load_reason_names[st->reason]);
    ATTR_S("fail_detail", st->detail);
    ATTR_I("verify_mismatches", st->mismatches);
    return rc;
}

static int write_step_records(struct wb_results *res, const char *g, int64_t n, const struct step_cols *k, int rc)
{
    static const char *const status_names[] = {"done", "rejected", "unfinished"};
    static const char *const warmup_names[] = {"measured", "warmup"};
    uint64_t dims[1] = {(uint64_t)n};
    char d[96];
#define DSET(kind, name, data, units)                                                                                \
    do {                                                                                                             \
        snprintf(d, sizeof d, "%s/%s", g, name);                                                                     \
        rc = rc ? rc : wb_results_write_##kind(res, d, 1, dims, data, units);                                        \
    } while (0)
    DSET(i32, "client", k->client, "1");
    DSET(i32, "client_rank", k->client_rank, "1");
    DSET(i32, "worker", k->worker, "1");
    DSET(i64, "bytes", k->bytes, "bytes");
    for (int j = 0; j < NFIELDS; j++)
        DSET(f64, field_names[j], k->f[j], "s");
#undef DSET
    snprintf(d, sizeof d, "%s/status", g);
    rc = rc ? rc : wb_results_write_enum(res, d, (size_t)n, k->status, status_names, 3);
    snprintf(d, sizeof d, "%s/warmup", g);
    rc = rc ? rc : wb_results_write_enum(res, d, (size_t)n, k->warm, warmup_names, 2);
    return rc;
}

/* Collective, or on rank 0 alone (no MPI) when another rank can join no collective again. */
static int write_step(struct wb_results *res, const struct wb_load_ctx *c, const struct wb_load_step *s,
                      const struct wb_load_stats *st, int alone)
{
    char g[64];
    snprintf(g, sizeof g, "/load/s%03d", s->index);
    int64_t n = c->rank == 0 ? s->nrecs : 0;
    int rc = alone ? 0 : wb_comm_bcast(&n, sizeof n, 0);
    if (rc)
        return rc;
    struct step_cols k;
    rc = cols_fill(&k, c, s, n);
    if (!alone)
        rc = wb_comm_agree(rc);
    if (rc == 0) {
        rc = wb_results_group(res, g);
        rc = rc ? rc : write_step_attrs(res, g, c, s, st);
        rc = write_step_records(res, g, n, &k, rc);
        if (c->rank == 0 && s->clock_offset_s) {
            char d[80];
            uint64_t dims[1] = {(uint64_t)c->nworkers};
            snprintf(d, sizeof d, "%s/clock_offset_s", g);
            rc = rc ? rc : wb_results_write_f64(res, d, 1, dims, s->clock_offset_s, "s");
        }
        rc = rc ? rc : wb_results_write_energy(res, g, &s->energy);
        rc = rc ? rc : s->net ? wb_results_write_net(res, g, s->net, (size_t)c->nranks) : 0;
    }
    cols_free(&k);
    int frc = alone ? wb_results_flush_alone(res) : wb_results_flush(res);
    return rc ? rc : frc;
}

int wb_load_write_step(struct wb_results *res, const struct wb_load_ctx *c, const struct wb_load_step *s,
                      const struct wb_load_stats *st)
{
    return write_step(res, c, s, st, 0);
}

int wb_load_write_step_alone(struct wb_results *res, const struct wb_load_ctx *c, const struct wb_load_step *s,
                             const struct wb_load_stats *st)
{
    return write_step(res, c, s, st, 1);
}

int wb_load_write_summary(struct wb_results *res, const struct wb_load_opts *t, const struct wb_load_stats *st, int n,
                         int sat, int ff, const char *stop_reason, int ramp)
{
    const char *g = "/load";
    char sname[16] = "", fname[16] = "";
    if (sat >= 0)
        snprintf(sname, sizeof sname, "s%03d", st[sat].index);
    if (ff >= 0)
        snprintf(fname, sizeof fname, "s%03d", st[ff].index);
    int rc = wb_results_group(res, g);
    ATTR_S("loop", wb_load_closed_loop(t) ? "closed" : "open");
    ATTR_I("ramp", ramp);
    ATTR_I("steps", n);
    ATTR_S("stop_reason", stop_reason);
    ATTR_F("saturation_rps", sat >= 0 ? st[sat].offered_rps : NAN);
    ATTR_F("saturation_p95_s", sat >= 0 ? st[sat].p95_s : NAN);
    ATTR_F("saturation_load", sat >= 0 ? st[sat].load : NAN);
    ATTR_S("saturation_step", sname);
    ATTR_F("first_fail_rps", ff >= 0 ? st[ff].offered_rps : NAN);
    ATTR_F("first_fail_load", ff >= 0 ? st[ff].load : NAN);
    ATTR_S("first_fail_step", fname);
    ATTR_S("fail_reason", ff >= 0 ? wb_load_reason_names[st[ff].reason] : "none");
    int frc = wb_results_flush(res);
    return rc ? rc : frc;
}
