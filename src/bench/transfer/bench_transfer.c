#define _POSIX_C_SOURCE 200809L
#include "bench/transfer/bench_transfer.h"

#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/transfer/bench_transfer_int.h"
#include "par/comm.h"
#include "core/error.h"
#include "core/report.h"
#include "core/rng.h"
#include "core/sysinfo.h"
#include "core/timer.h"

/* Most unrecorded repetitions iters auto spends on timing a point. */
#define CAL_MAX 10
/* pingpong: lone round trips probed to size the batch. */
#define BATCH_PROBES 3
/* Tag of a pair's samples on their way to rank 0 (kernels use 71xx, the plan's probe 7201). */
enum { TAG_SAMPLES = 7301 };

static int is_on(const struct wb_transfer_opts *t, int test) { return (t->tests >> test) & 1u; }

static int runnable(const struct wb_transfer_run *r, int test)
{
    return is_on(r->t, test) && wb_transfer_tests[test].min_ranks <= r->nranks;
}

/* Checks that need the rank count; identical on every rank, before any collective. */
static int check_ranks(const struct wb_transfer_run *r)
{
    const struct wb_transfer_opts *t = r->t;
    for (int p = 0; t->pairs_mode == WB_TRANSFER_PAIRS_LIST && p < t->npairs; p++)
        for (int k = 0; k < 2; k++)
            if (t->pairs[p][k] >= r->nranks)
                return wb_error_set(WB_EUSAGE, "--pairs: rank %d does not exist; this run has ranks 0 to %d",
                                    t->pairs[p][k], r->nranks - 1);
    if (t->root >= r->nranks)
        return wb_error_set(WB_EUSAGE, "--root: rank %d does not exist; this run has ranks 0 to %d", t->root,
                            r->nranks - 1);
    if (t->pairs_mode == WB_TRANSFER_PAIRS_SHIFT && r->nranks < 2)
        return wb_error_set(WB_EUSAGE, "--pairs shift needs at least 2 ranks; this run has 1 (mpirun -np 2 or more)");
    return 0;
}

/* The lead swaps in src/rng.h at merge; until then this is the generator of the ring orders. */
/* Natural order first, then random permutations from --seed; the same on every rank. */
static void make_orders(int *orders, int norders, int n, uint64_t seed)
{
    uint64_t state = seed ^ UINT64_C(0x7472616e73666572);
    for (int o = 0; o < norders; o++) {
        int *row = orders + (size_t)o * n;
        for (int i = 0; i < n; i++)
            row[i] = i;
        for (int i = n - 1; o > 0 && i > 0; i--) {
            int j = (int)(wb_rng_next(&state) % (uint64_t)(i + 1));
            int tmp = row[i];
            row[i] = row[j];
            row[j] = tmp;
        }
    }
}

static void free_test(struct wb_transfer_test_run *tr)
{
    for (int s = 0; tr->samples && s < tr->nsizes; s++)
        free(tr->samples[s]);
    free(tr->samples);
    free(tr->bytes);
    free(tr->window);
    free(tr->pairs);
    free(tr->orders);
    free(tr->iters);
    free(tr->batch);
}

/* The pairs of a p2p test: 0:1, the list, every ordered pair, or every pair by shifted round. */
static void fill_pairs(const struct wb_transfer_run *r, struct wb_transfer_test_run *tr)
{
    const struct wb_transfer_opts *t = r->t;
    int n = r->nranks, p = 0;
    if (tr->shifted) {
        for (int k = 1; k < n; k++)
            for (int a = 0; a < n; a++) {
                tr->pairs[p][0] = a;
                tr->pairs[p++][1] = (a + k) % n;
            }
        tr->nunits = n - 1;
    } else if (t->pairs_mode == WB_TRANSFER_PAIRS_ALL || t->pairs_mode == WB_TRANSFER_PAIRS_SHIFT) {
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++)
                if (a != b) {
                    tr->pairs[p][0] = a;
                    tr->pairs[p++][1] = b;
                }
        tr->nunits = tr->npairs;
    } else if (t->pairs_mode == WB_TRANSFER_PAIRS_LIST) {
        memcpy(tr->pairs, t->pairs, (size_t)t->npairs * sizeof *tr->pairs);
    } else {
        tr->pairs[0][0] = 0;
        tr->pairs[0][1] = 1;
    }
}

static int setup_test(struct wb_transfer_run *r, struct wb_transfer_test_run *tr, int test, int shifted)
{
    const struct wb_transfer_opts *t = r->t;
    int n = r->nranks;
    tr->test = test;
    tr->shifted = shifted;
    tr->def = &wb_transfer_tests[test];
    tr->plan = &r->plan.test[shifted ? WB_TRANSFER_SHIFT : test];
    tr->verified = t->validate && test != WB_TRANSFER_BARRIER ? 1 : -1;
    tr->nsizes = tr->plan->nsizes;
    tr->bytes = calloc((size_t)tr->nsizes, sizeof *tr->bytes);
    tr->window = calloc((size_t)tr->nsizes, sizeof *tr->window);
    tr->iters = calloc((size_t)tr->nsizes, sizeof *tr->iters);
    tr->batch = calloc((size_t)tr->nsizes, sizeof *tr->batch);
    tr->samples = calloc((size_t)tr->nsizes, sizeof *tr->samples);
    if (!tr->bytes || !tr->window || !tr->iters || !tr->batch || !tr->samples)
        return wb_error_set(WB_ENOMEM, "transfer %s: out of memory", wb_transfer_test_name(test));
    for (int s = 0; s < tr->nsizes; s++) {
        tr->bytes[s] = tr->plan->bytes[s];
        tr->window[s] = test == WB_TRANSFER_BW || test == WB_TRANSFER_BIBW ? wb_transfer_window_at(t, tr->bytes[s]) : 1;
        tr->batch[s] = test == WB_TRANSFER_PINGPONG ? 0 : 1;
    }
    tr->nunits = 1;
    tr->ncols = shifted ? n * (n - 1) : (int)wb_transfer_test_cols(r, test);
    if (tr->def->kind == WB_TRANSFER_KIND_P2P) {
        tr->npairs = tr->ncols;
        tr->pairs = calloc((size_t)tr->npairs, sizeof *tr->pairs);
        if (!tr->pairs)
            return wb_error_set(WB_ENOMEM, "transfer %s: out of memory for pairs", wb_transfer_test_name(test));
        fill_pairs(r, tr);
    } else if (tr->def->kind == WB_TRANSFER_KIND_RING) {
        tr->norders = tr->ncols;
        tr->orders = calloc((size_t)tr->norders * (size_t)n, sizeof *tr->orders);
        if (!tr->orders)
            return wb_error_set(WB_ENOMEM, "transfer ring: out of memory for orders");
        make_orders(tr->orders, tr->norders, n, r->o->common.seed);
        tr->nunits = tr->norders;
    }
    return 0;
}

/* Sets this rank's part in unit u (its pair, its shifted round, or its neighbours in a ring order). */
static void enter_unit(const struct wb_transfer_test_run *tr, struct wb_transfer_ctx *c, int u)
{
    c->role = -1;
    c->peer = -1;
    c->shift = 0;
    if (tr->shifted) {
        c->shift = u + 1;
        c->to = (c->rank + c->shift) % c->nranks;
        c->from = (c->rank - c->shift + c->nranks) % c->nranks;
    } else if (tr->def->kind == WB_TRANSFER_KIND_P2P) {
        int lo = tr->nunits > 1 ? u : 0, hi = tr->nunits > 1 ? u + 1 : tr->npairs;
        for (int p = lo; p < hi; p++) {
            if (tr->pairs[p][0] == c->rank) {
                c->role = 0;
                c->peer = tr->pairs[p][1];
            } else if (tr->pairs[p][1] == c->rank) {
                c->role = 1;
                c->peer = tr->pairs[p][0];
            }
        }
    } else if (tr->def->kind == WB_TRANSFER_KIND_RING) {
        const int *row = tr->orders + (size_t)u * c->nranks;
        int i = 0;
        while (row[i] != c->rank)
            i++;
        c->order = u;
        c->left = row[(i + c->nranks - 1) % c->nranks];
        c->right = row[(i + 1) % c->nranks];
    }
}

static int root_of(const struct wb_transfer_run *r, int rep) { return r->t->root >= 0 ? r->t->root : rep % r->nranks; }

/* Rank 0 files the gathered samples g[nranks][iters] of unit u into column(s) of samples[s]. */
static void file_samples(const struct wb_transfer_run *r, struct wb_transfer_test_run *tr, int u, int s,
                         const double *g)
{
    int iters = tr->iters[s], C = tr->ncols, n = r->nranks;
    double *out = tr->samples[s];
    if (tr->shifted) {
        for (int a = 0; a < n; a++)
            for (int i = 0; i < iters; i++)
                out[(size_t)i * C + (size_t)u * n + a] = g[(size_t)a * iters + i];
    } else if (tr->def->kind == WB_TRANSFER_KIND_P2P) {
        int lo = tr->nunits > 1 ? u : 0, hi = tr->nunits > 1 ? u + 1 : tr->npairs;
        for (int p = lo; p < hi; p++)
            for (int i = 0; i < iters; i++)
                out[(size_t)i * C + p] = g[(size_t)tr->pairs[p][0] * iters + i];
    } else if (tr->def->kind == WB_TRANSFER_KIND_RING) {
        /* A ring step is over when the slowest rank is done. */
        for (int i = 0; i < iters; i++) {
            double m = -INFINITY;
            for (int q = 0; q < n; q++)
                m = fmax(m, g[(size_t)q * iters + i]);
            out[(size_t)i * C + u] = m;
        }
    } else {
        for (int q = 0; q < n; q++)
            for (int i = 0; i < iters; i++)
                out[(size_t)i * C + q] = g[(size_t)q * iters + i];
    }
}

/* Rank 0 gets the rows g[nranks][iters] that file_samples reads. For one pair of a map in turn only
 * the sender's row comes, so a map of n ranks moves n(n-1) rows to rank 0, not n(n-1) gathers of n. */
static int collect_samples(const struct wb_transfer_run *r, const struct wb_transfer_test_run *tr, int u,
                           const double *local, int iters, double *g)
{
    if (tr->shifted || tr->def->kind != WB_TRANSFER_KIND_P2P || tr->nunits == 1)
        return wb_comm_gather_f64_n(local, (size_t)iters, g);
    int a = tr->pairs[u][0], rc = 0;
    if (r->rank == 0 && a == 0)
        memcpy(g, local, (size_t)iters * sizeof *g);
    else if (r->rank == 0)
        rc = wb_comm_check(MPI_Recv(g + (size_t)a * iters, iters, MPI_DOUBLE, a, TAG_SAMPLES, wb_comm_world(),
                                    MPI_STATUS_IGNORE), "MPI_Recv of a pair's samples");
    else if (r->rank == a)
        rc = wb_comm_check(MPI_Send(local, iters, MPI_DOUBLE, 0, TAG_SAMPLES, wb_comm_world()),
                           "MPI_Send of a pair's samples");
    return wb_comm_agree(rc);
}

static int run_once(const struct wb_transfer_test_run *tr, struct wb_transfer_ctx *c, double *t_op)
{
    int rc = tr->shifted ? tr->def->shift(c, t_op) : tr->def->run(c, t_op);
    c->seq++;
    return rc;
}

/* pingpong: enough back-to-back round trips per repetition to span the batch's time, from the
 * fastest pair's lone round trips; rank 0 decides. Collective. */
static int decide_batch(const struct wb_transfer_run *r, struct wb_transfer_test_run *tr,
                        struct wb_transfer_ctx *c, int s)
{
    double fastest = INFINITY, t_op;
    c->batch = 1;
    for (int k = 0; k < BATCH_PROBES; k++) {
        c->rep = -1;
        int rc = run_once(tr, c, &t_op);
        if (rc)
            return rc;
        if (!isnan(t_op))
            fastest = fmin(fastest, t_op);
    }
    double all = INFINITY;
    int rc = wb_comm_check(MPI_Allreduce(&fastest, &all, 1, MPI_DOUBLE, MPI_MIN, c->comm), "MPI_Allreduce");
    int32_t batch = 1;
    if (rc == 0 && r->rank == 0)
        batch = wb_transfer_batch_for(all, wb_timer_tick_s());
    if (rc == 0)
        rc = wb_comm_bcast(&batch, sizeof batch, 0);
    c->batch = tr->batch[s] = batch < 1 ? 1 : batch;
    return rc;
}

/* iters auto: unrecorded repetitions, each timed as the slowest rank saw it, until a tenth of
 * --time-per-size is spent; every rank sees the same maxima, so all stop together. Collective. */
static int calibrate(const struct wb_transfer_run *r, const struct wb_transfer_test_run *tr,
                     struct wb_transfer_ctx *c, double *period)
{
    double per[CAL_MAX], spent = 0, dummy;
    int k = 0;
    while (k < CAL_MAX && spent < 0.1 * r->t->time_per_size_s) {
        c->rep = -1;
        c->root = root_of(r, k);
        double t0 = wb_timer_now_s();
        int rc = run_once(tr, c, &dummy);
        double mine = wb_timer_now_s() - t0;
        if (rc || (rc = wb_comm_check(MPI_Allreduce(&mine, &per[k], 1, MPI_DOUBLE, MPI_MAX, c->comm),
                                      "MPI_Allreduce")))
            return rc;
        spent += per[k++];
    }
    /* The mean, not the median: the reps then fill --time-per-size even when stalls are frequent. */
    *period = spent / k;
    return 0;
}

/* Warm-up, batch and calibration; then rank 0 decides the count and whether time is up, so every
 * rank runs the same loop. Collective. */
static int decide_iters(struct wb_transfer_run *r, struct wb_transfer_test_run *tr, struct wb_transfer_ctx *c,
                        int s, int *iters)
{
    const struct wb_transfer_opts *t = r->t;
    double dummy, period = 0;
    int rc = 0;
    for (int w = 0; w < r->o->common.warmup && rc == 0; w++) {
        c->rep = -1;
        c->root = root_of(r, w);
        rc = run_once(tr, c, &dummy);
    }
    if (rc == 0 && tr->batch[s] == 0)
        rc = decide_batch(r, tr, c, s);
    if (rc == 0 && t->iters == 0 && tr->iters[s] == 0)
        rc = calibrate(r, tr, c, &period);
    if (rc)
        return rc;
    struct {
        int32_t iters, stop;
    } d = {0, 0};
    if (r->rank == 0) {
        if (tr->iters[s])
            d.iters = tr->iters[s];
        else if (t->iters)
            d.iters = wb_transfer_plan_reps(r, tr, s, t->iters);
        else {
            double est = period > 0 ? ceil(t->time_per_size_s / period) : t->iters_max;
            d.iters = wb_transfer_plan_reps(r, tr, s, (int)fmin(fmax(est, t->iters_min), t->iters_max));
        }
        double timeout = r->o->common.timeout_s;
        d.stop = timeout > 0 && wb_timer_now_s() - r->t_start_s > timeout;
    }
    if ((rc = wb_comm_bcast(&d, sizeof d, 0)))
        return rc;
    if (d.stop) {
        tr->timed_out = 1;
        return wb_error_set(WB_ETIMEOUT, "transfer: --timeout %g s reached in %s at %lld bytes; what was measured "
                                         "before is in the result file",
                            r->o->common.timeout_s, wb_transfer_test_name(tr->test), (long long)tr->bytes[s]);
    }
    *iters = d.iters;
    return 0;
}

/* The agreed check of a point's received buffers (--validate): a mismatch is recorded, and the run goes on. */
static int agree_check(struct wb_transfer_run *r, struct wb_transfer_test_run *tr, struct wb_transfer_ctx *c)
{
    int rc = wb_comm_agree(c->bad ? wb_error_set(WB_EVERIFY, "%s", c->bad_msg) : 0);
    if (rc != WB_EVERIFY)
        return rc;
    tr->verified = 0;
    if (!r->failed)
        snprintf(r->first_failure, sizeof r->first_failure, "%s", wb_error_message());
    r->failed = 1;
    wb_transfer_say(r, "# FAILED: %s\n", wb_error_message());
    return 0;
}

/* One point: warm-up (which also sizes iters auto), the recorded repetitions, the agreed check. */
static int run_point(struct wb_transfer_run *r, struct wb_transfer_test_run *tr, struct wb_transfer_ctx *c, int u,
                     int s)
{
    c->msg_bytes = tr->bytes[s];
    c->window = tr->window[s];
    c->batch = tr->batch[s] ? tr->batch[s] : 1;
    c->bad = 0;
    int iters = 0, rc = decide_iters(r, tr, c, s, &iters);
    if (rc)
        return rc;
    if (tr->iters[s] == 0) {
        tr->iters[s] = iters;
        if (r->rank == 0 && (tr->samples[s] = malloc((size_t)iters * (size_t)tr->ncols * sizeof(double))))
            for (size_t i = 0; i < (size_t)iters * (size_t)tr->ncols; i++)
                tr->samples[s][i] = NAN;
    }
    double *local = malloc((size_t)iters * sizeof *local);
    double *g = r->rank == 0 ? malloc((size_t)iters * (size_t)r->nranks * sizeof *g) : NULL;
    if (!local || (r->rank == 0 && (!g || !tr->samples[s])))
        rc = wb_error_set(WB_ENOMEM, "transfer %s: out of memory for %d samples", wb_transfer_test_name(tr->test),
                          iters);
    rc = wb_comm_agree(rc);
    for (int i = 0; i < iters && rc == 0; i++) {
        c->rep = i;
        c->root = root_of(r, i);
        rc = run_once(tr, c, &local[i]);
    }
    if (rc == 0)
        rc = collect_samples(r, tr, u, local, iters, g);
    if (rc == 0 && r->rank == 0)
        file_samples(r, tr, u, s, g);
    free(local);
    free(g);
    if (rc == 0 && r->t->validate)
        rc = agree_check(r, tr, c);
    return rc;
}

/* Prints the table and writes the file for the sizes that finished. Collective. */
static int finish_test(struct wb_transfer_run *r, struct wb_transfer_test_run *tr)
{
    struct wb_transfer_summary sm = {.S = tr->sizes_done, .C = tr->ncols};
    if (sm.S == 0)
        return 0;
    for (int s = 0; s < sm.S; s++) {
        sm.R = tr->iters[s] > sm.R ? tr->iters[s] : sm.R;
        if (tr->bytes[s] < tr->bytes[sm.s_lat])
            sm.s_lat = s;
        if (tr->bytes[s] > tr->bytes[sm.s_bw])
            sm.s_bw = s;
    }
    sm.med_n = tr->def->kind == WB_TRANSFER_KIND_COLL ? (size_t)sm.S : (size_t)sm.S * sm.C;
    int rc = wb_comm_agree(r->rank == 0 ? wb_transfer_summarize(r, tr, &sm) : 0);
    if (rc == 0 && r->rank == 0) {
        int map = tr->def->kind == WB_TRANSFER_KIND_P2P && (tr->nunits > 1 || tr->shifted);
        if (tr->shifted) {
            wb_transfer_print_shift(r, tr, &sm, sm.node_ratio);
        } else {
            wb_transfer_print_test(r, tr, &sm);
            if (map)
                wb_transfer_print_pairs_all(r, tr, &sm);
        }
        if (map && !tr->shifted && !r->seq_bw && (r->seq_bw = malloc((size_t)r->nranks * r->nranks * sizeof(double))))
            memcpy(r->seq_bw, sm.bw_m, (size_t)r->nranks * r->nranks * sizeof(double));
    }
    if (rc == 0)
        rc = wb_netstat_end(&tr->net, r->res != NULL, &sm.net);
    if (rc == 0)
        rc = wb_transfer_write_test(r, tr, &sm);
    wb_transfer_summary_free(&sm);
    return rc;
}

static void *alloc_buffer(size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, 4096, n ? n : 1) != 0)
        return NULL;
    /* Touch every page now so first-use page faults do not land in a timed repetition. */
    memset(p, 0, n);
    return p;
}

/* Message buffers for every size of the test. Collective (agreed). */
static int alloc_ctx(struct wb_transfer_run *r, struct wb_transfer_test_run *tr, struct wb_transfer_ctx *c)
{
    size_t sbytes = 0, rbytes = 0;
    int maxw = 1;
    for (int s = 0; s < tr->nsizes; s++) {
        size_t sb, rb;
        wb_transfer_buffers(tr->test, tr->bytes[s], r->nranks, tr->window[s], r->t->pp_method, tr->shifted, &sb, &rb);
        sbytes = sb > sbytes ? sb : sbytes;
        rbytes = rb > rbytes ? rb : rbytes;
        maxw = tr->window[s] > maxw ? tr->window[s] : maxw;
    }
    c->sbuf = alloc_buffer(sbytes);
    c->rbuf = alloc_buffer(rbytes);
    c->reqs = calloc(2 * (size_t)maxw + 2, sizeof *c->reqs);
    int rc = 0;
    if (!c->sbuf || !c->rbuf || !c->reqs)
        rc = wb_error_set(WB_ENOMEM, "transfer %s: cannot allocate %.0f MiB of message buffers",
                          wb_transfer_test_name(tr->test), (double)(sbytes + rbytes) / 1048576.0);
    c->comm = wb_comm_world();
    c->rank = r->rank;
    c->nranks = r->nranks;
    c->test = tr->test;
    c->validate = r->t->validate;
    c->pp_method = r->t->pp_method;
    c->dtype = r->t->dtype;
    c->op = r->t->op;
    return wb_comm_agree(rc);
}

static int run_test(struct wb_transfer_run *r, int test, int shifted)
{
    struct wb_transfer_test_run tr = {0};
    struct wb_transfer_ctx c = {0};
    int rc = wb_comm_agree(setup_test(r, &tr, test, shifted));
    if (rc == 0)
        rc = alloc_ctx(r, &tr, &c);
    wb_netstat_begin(&tr.net);
    for (int u = 0; rc == 0 && u < tr.nunits; u++) {
        enter_unit(&tr, &c, u);
        for (int s = 0; rc == 0 && s < tr.nsizes; s++) {
            rc = run_point(r, &tr, &c, u, s);
            if (rc == 0 && u == tr.nunits - 1)
                tr.sizes_done = s + 1;
            if (rc == WB_ETIMEOUT && tr.nunits == 1)
                tr.sizes_done = s;
            r->est_done_s += tr.plan->est_s[s] / tr.nunits;
            wb_transfer_progress(r, &tr, 0);
        }
    }
    wb_report_progress_end();
    free(c.sbuf);
    free(c.rbuf);
    free(c.reqs);
    /* After a timeout the finished sizes are still written; after other errors nothing is. */
    if (rc == 0 || rc == WB_ETIMEOUT) {
        char keep[1024];
        snprintf(keep, sizeof keep, "%s", wb_error_message());
        int wrc = finish_test(r, &tr);
        if (rc == WB_ETIMEOUT && wrc == 0)
            wb_error_set(WB_ETIMEOUT, "%s", keep);
        else if (wrc)
            rc = wrc;
    }
    if (rc == 0)
        wb_transfer_progress(r, &tr, 1);
    free_test(&tr);
    return rc;
}

/* Rank 0: every rank's short host name (from comm's), for the link-map tables. Collective. */
static int gather_hosts(struct wb_transfer_run *r)
{
    int rc = 0;
    if (r->rank == 0 && !(r->hosts = calloc((size_t)r->nranks, WB_TRANSFER_HOST_CAP)))
        rc = wb_error_set(WB_ENOMEM, "out of memory for host names");
    for (int q = 0; rc == 0 && r->rank == 0 && q < r->nranks; q++) {
        char *h = r->hosts + (size_t)q * WB_TRANSFER_HOST_CAP;
        snprintf(h, WB_TRANSFER_HOST_CAP, "%s", wb_comm_hostname(q));
        h[strcspn(h, ".")] = '\0';
    }
    return wb_comm_agree(rc);
}

/* Names the tests a 1-rank run skips; 0 when nothing is left to run. */
static int count_runnable(const struct wb_transfer_run *r)
{
    char skipped[160] = "";
    int nrun = 0;
    for (int k = 0; k < WB_TRANSFER_NTESTS; k++) {
        if (is_on(r->t, k) && !runnable(r, k))
            snprintf(skipped + strlen(skipped), sizeof skipped - strlen(skipped), "%s%s", *skipped ? ", " : "",
                     wb_transfer_test_name(k));
        nrun += runnable(r, k);
    }
    if (*skipped && r->rank == 0)
        wb_report_warn("transfer: %s need%s at least 2 ranks; skipped with %d rank", skipped,
                       strchr(skipped, ',') ? "" : "s", r->nranks);
    return nrun;
}

/* Nodes, host names and the plan. Collective. */
static int prepare(struct wb_transfer_run *r)
{
    r->node = wb_comm_node_map(&r->nnodes);
    int rc = gather_hosts(r);
    if (rc == 0) {
        wb_timer_tick_s();
        rc = wb_transfer_plan_make(r);
    }
    if (rc == 0 && r->rank == 0)
        wb_transfer_plan_print(r);
    return rc;
}

static int run_all(struct wb_transfer_run *r)
{
    int rc = wb_transfer_write_run(r);
    r->t_measure_s = wb_timer_now_s();
    if (r->rank == 0)
        wb_transfer_print_begin(r);
    for (int k = 0; rc == 0 && k < WB_TRANSFER_NTESTS; k++) {
        if (!r->plan.test[k].on)
            continue;
        rc = run_test(r, k, 0);
        if (rc == 0 && k == r->plan.map_test && r->plan.test[WB_TRANSFER_SHIFT].on)
            rc = run_test(r, k, 1);
        if (r->t->format == WB_TRANSFER_FMT_TABLE)
            wb_report_printf("\n");
    }
    if (r->rank == 0 && rc == 0)
        wb_transfer_say(r, "# elapsed: %.1f s, estimated %.1f s%s\n", wb_timer_now_s() - r->t_start_s, r->plan.est_s,
                        r->runtime_cut ? "; repetitions were cut while running to keep to the budget" : "");
    if (r->rank == 0)
        wb_transfer_print_end(r);
    int wrc = wb_transfer_write_run(r);
    return rc ? rc : wrc;
}

int wb_bench_transfer_run(const struct wb_options *o, struct wb_results *res)
{
    struct wb_transfer_run r = {.o = o, .t = wb_transfer_opts_of(o), .res = res, .rank = wb_comm_rank(),
                                .nranks = wb_comm_size()};
    r.t_start_s = wb_timer_now_s();
    if (r.t->list) {
        if (r.rank == 0)
            wb_transfer_print_list();
        return 0;
    }
    int rc = check_ranks(&r);
    if (rc || count_runnable(&r) == 0)
        return rc;
    rc = prepare(&r);
    if (rc == 0 && !r.t->dry_run)
        rc = run_all(&r);
    free(r.hosts);
    free(r.seq_bw);
    if (rc == 0 && r.failed) {
        /* main prints no message for a failed check, and --quiet hides the table's FAILED lines. */
        wb_report_error("%s", r.first_failure);
        rc = wb_error_set(WB_EVERIFY, "%s", r.first_failure);
    }
    return rc;
}
