#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_transfer_kernels.h"
#include "comm.h"
#include "error.h"
#include "options.h"
#include "report.h"
#include "results.h"
#include "sysinfo.h"
#include "timer.h"

/* Part of the available memory the buffers may take: the OS and MPI need the rest. */
#define MEM_SHARE 0.8
/* Bytes kept of each host name for the --pairs all summary. */
#define HOST_CAP 64
/* Most unrecorded repetitions iters auto spends on timing a point. */
#define CAL_MAX 10
/* pingpong: a repetition spans at least this many timer ticks; lone round trips probed to size it. */
#define BATCH_TICKS 200
#define BATCH_PROBES 3

/* What the tests of one run share. */
struct run {
    const struct wb_options *o;
    const struct wb_transfer_opts *t;
    struct wb_results *res;
    int rank, nranks, nnodes;
    int *node;                  /* [nranks] node index of every rank */
    char *hosts;                /* rank 0, for --pairs all: [nranks][HOST_CAP] */
    double t_start_s;
    int pairs_all_written;
    int short_warned;
    int failed;                 /* a received buffer did not match somewhere */
    char first_failure[1024];
};

/* One test in progress. Sizes run inside units; units (pairs of --pairs all, ring orders) run in turn. */
struct test_run {
    int test;
    const struct wb_transfer_testdef *def;
    int nsizes;
    int64_t *bytes;             /* [S] */
    int *window;                /* [S] messages per window */
    int (*pairs)[2];            /* p2p: [P] */
    int npairs;
    int *orders;                /* ring: [O][nranks] */
    int norders;
    int nunits;
    int ncols;                  /* third dimension of t: P, O or nranks */
    int *iters;                 /* [S], decided at the first unit */
    int *batch;                 /* [S] pingpong round trips per repetition, decided at the first unit */
    double **samples;           /* rank 0: [S][iters[s] * ncols] */
    int sizes_done;             /* sizes complete for every unit */
    int verified;               /* 1 all matched, 0 a mismatch, -1 not checked */
    int timed_out;
};

static int window_at(const struct wb_transfer_opts *t, int64_t bytes)
{
    int64_t w = t->window_bytes / (bytes > 0 ? bytes : 1);
    if (w < 1)
        w = 1;
    return w < t->window ? (int)w : t->window;
}

static int is_on(const struct wb_transfer_opts *t, int test) { return (t->tests >> test) & 1u; }

static int runnable(const struct run *r, int test)
{
    return is_on(r->t, test) && wb_transfer_tests[test].min_ranks <= r->nranks;
}

/* Columns of t for a test: pairs, orders or ranks. */
static int64_t test_cols(const struct run *r, int test)
{
    const struct wb_transfer_opts *t = r->t;
    int64_t n = r->nranks;
    switch (wb_transfer_tests[test].kind) {
    case WB_TRANSFER_KIND_P2P:
        return t->pairs_mode == WB_TRANSFER_PAIRS_ALL ? n * (n - 1)
               : t->pairs_mode == WB_TRANSFER_PAIRS_LIST ? t->npairs : 1;
    case WB_TRANSFER_KIND_RING:
        return 1 + t->random_orders;
    default:
        return n;
    }
}

/* Bytes one rank (rank 0 with its sample store) needs for a test at its largest point. */
static double test_need(const struct run *r, int test, int with_store)
{
    const struct wb_transfer_opts *t = r->t;
    double buf = 0;
    for (int s = 0; s < t->nsizes; s++) {
        size_t sb, rb;
        int64_t b = t->sizes_bytes[s];
        wb_transfer_buffers(test, b, r->nranks, window_at(t, b), &sb, &rb);
        double need = (double)sb + (double)rb;
        if (t->validate && (test == WB_TRANSFER_REDUCE || test == WB_TRANSFER_ALLREDUCE))
            need += (double)b;
        if (need > buf)
            buf = need;
    }
    if (with_store) {
        double reps = t->iters ? t->iters : t->iters_max;
        buf += 8.0 * reps * ((double)t->nsizes * (double)test_cols(r, test) + 2.0 * r->nranks);
    }
    return buf;
}

/* Refuses sizes that do not fit in memory, before anything is allocated. Collective. */
static int check_memory(struct run *r)
{
    int rc = 0, on_node = 0;
    for (int q = 0; q < r->nranks; q++)
        on_node += r->node[q] == r->node[r->rank];
    int64_t avail = wb_sysinfo_mem_available();
    int with_store = r->node[0] == r->node[r->rank];
    for (int k = 0; k < WB_TRANSFER_NTESTS && rc == 0 && avail > 0; k++) {
        if (!runnable(r, k))
            continue;
        double need = on_node * test_need(r, k, 0) + (with_store ? test_need(r, k, 1) - test_need(r, k, 0) : 0);
        if (need > MEM_SHARE * (double)avail)
            rc = wb_error_set(WB_EUSAGE,
                              "--sizes: %s needs about %.0f MiB on this host (%d rank%s) at the largest size, "
                              "more than %.0f%% of the %.0f MiB available; give smaller --sizes%s",
                              wb_transfer_tests[k].name, need / 1048576.0, on_node, on_node == 1 ? "" : "s",
                              100 * MEM_SHARE, (double)avail / 1048576.0,
                              k == WB_TRANSFER_BW || k == WB_TRANSFER_BIBW ? " or --window-bytes" : "");
    }
    return wb_comm_agree(rc);
}

/* Checks that need the rank count; identical on every rank, before any collective. */
static int check_ranks(const struct run *r)
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
    return 0;
}

static uint64_t splitmix(uint64_t *state)
{
    uint64_t x = (*state += UINT64_C(0x9E3779B97F4A7C15));
    x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
    return x ^ (x >> 31);
}

/* Natural order first, then random permutations from --seed; the same on every rank. */
static void make_orders(int *orders, int norders, int n, uint64_t seed)
{
    uint64_t state = seed ^ UINT64_C(0x7472616e73666572);
    for (int o = 0; o < norders; o++) {
        int *row = orders + (size_t)o * n;
        for (int i = 0; i < n; i++)
            row[i] = i;
        for (int i = n - 1; o > 0 && i > 0; i--) {
            int j = (int)(splitmix(&state) % (uint64_t)(i + 1));
            int tmp = row[i];
            row[i] = row[j];
            row[j] = tmp;
        }
    }
}

static void free_test(struct test_run *tr)
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

static int setup_test(struct run *r, struct test_run *tr, int test)
{
    const struct wb_transfer_opts *t = r->t;
    int n = r->nranks;
    tr->test = test;
    tr->def = &wb_transfer_tests[test];
    tr->verified = t->validate && test != WB_TRANSFER_BARRIER ? 1 : -1;
    tr->nsizes = test == WB_TRANSFER_BARRIER ? 1 : t->nsizes;
    tr->bytes = calloc((size_t)tr->nsizes, sizeof *tr->bytes);
    tr->window = calloc((size_t)tr->nsizes, sizeof *tr->window);
    tr->iters = calloc((size_t)tr->nsizes, sizeof *tr->iters);
    tr->batch = calloc((size_t)tr->nsizes, sizeof *tr->batch);
    tr->samples = calloc((size_t)tr->nsizes, sizeof *tr->samples);
    if (!tr->bytes || !tr->window || !tr->iters || !tr->batch || !tr->samples)
        return wb_error_set(WB_ENOMEM, "transfer %s: out of memory", tr->def->name);
    for (int s = 0; s < tr->nsizes; s++) {
        tr->bytes[s] = test == WB_TRANSFER_BARRIER ? 0 : t->sizes_bytes[s];
        tr->window[s] = test == WB_TRANSFER_BW || test == WB_TRANSFER_BIBW ? window_at(t, tr->bytes[s]) : 1;
        tr->batch[s] = test == WB_TRANSFER_PINGPONG ? 0 : 1;
    }
    tr->nunits = 1;
    tr->ncols = (int)test_cols(r, test);
    if (tr->def->kind == WB_TRANSFER_KIND_P2P) {
        tr->npairs = tr->ncols;
        tr->pairs = calloc((size_t)tr->npairs, sizeof *tr->pairs);
        if (!tr->pairs)
            return wb_error_set(WB_ENOMEM, "transfer %s: out of memory for pairs", tr->def->name);
        if (t->pairs_mode == WB_TRANSFER_PAIRS_ALL) {
            int p = 0;
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

/* Sets this rank's part in unit u (its pair, or its neighbours in a ring order). */
static void enter_unit(const struct test_run *tr, struct wb_transfer_ctx *c, int u)
{
    c->role = -1;
    c->peer = -1;
    if (tr->def->kind == WB_TRANSFER_KIND_P2P) {
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

static int root_of(const struct run *r, int rep) { return r->t->root >= 0 ? r->t->root : rep % r->nranks; }

/* Rank 0 files the gathered samples g[nranks][iters] of unit u into column(s) of samples[s]. */
static void file_samples(const struct run *r, struct test_run *tr, int u, int s, const double *g)
{
    int iters = tr->iters[s], C = tr->ncols;
    double *out = tr->samples[s];
    if (tr->def->kind == WB_TRANSFER_KIND_P2P) {
        int lo = tr->nunits > 1 ? u : 0, hi = tr->nunits > 1 ? u + 1 : tr->npairs;
        for (int p = lo; p < hi; p++)
            for (int i = 0; i < iters; i++)
                out[(size_t)i * C + p] = g[(size_t)tr->pairs[p][0] * iters + i];
    } else if (tr->def->kind == WB_TRANSFER_KIND_RING) {
        /* A ring step is over when the slowest rank is done. */
        for (int i = 0; i < iters; i++) {
            double m = -INFINITY;
            for (int q = 0; q < r->nranks; q++)
                m = fmax(m, g[(size_t)q * iters + i]);
            out[(size_t)i * C + u] = m;
        }
    } else {
        for (int q = 0; q < r->nranks; q++)
            for (int i = 0; i < iters; i++)
                out[(size_t)i * C + q] = g[(size_t)q * iters + i];
    }
}

/* pingpong: enough back-to-back round trips per repetition to span BATCH_TICKS timer ticks, from
 * the fastest pair's lone round trips; rank 0 decides. Collective. */
static int decide_batch(const struct run *r, struct test_run *tr, struct wb_transfer_ctx *c, int s)
{
    double fastest = INFINITY, t_op;
    c->batch = 1;
    for (int k = 0; k < BATCH_PROBES; k++) {
        c->rep = -1;
        int rc = tr->def->run(c, &t_op);
        c->seq++;
        if (rc)
            return rc;
        if (!isnan(t_op))
            fastest = fmin(fastest, t_op);
    }
    double all = INFINITY;
    int rc = wb_comm_check(MPI_Allreduce(&fastest, &all, 1, MPI_DOUBLE, MPI_MIN, c->comm), "MPI_Allreduce");
    int32_t batch = 1;
    if (rc == 0 && r->rank == 0 && all > 0 && isfinite(all))
        batch = (int32_t)fmin(ceil(BATCH_TICKS * wb_timer_tick_s() / (2 * all)), wb_transfer_batch_cap(c->msg_bytes));
    if (rc == 0)
        rc = wb_comm_bcast(&batch, sizeof batch, 0);
    c->batch = tr->batch[s] = batch < 1 ? 1 : batch;
    return rc;
}

/* One point: warm-up (which also sizes iters auto), the recorded repetitions, the agreed check. */
static int run_point(struct run *r, struct test_run *tr, struct wb_transfer_ctx *c, int u, int s)
{
    const struct wb_transfer_opts *t = r->t;
    c->msg_bytes = tr->bytes[s];
    c->window = tr->window[s];
    c->batch = tr->batch[s] ? tr->batch[s] : 1;
    c->bad = 0;
    double dummy;
    for (int w = 0; w < r->o->common.warmup; w++) {
        c->rep = -1;
        c->root = root_of(r, w);
        int rc = tr->def->run(c, &dummy);
        c->seq++;
        if (rc)
            return rc;
    }
    if (tr->batch[s] == 0) {
        int rc = decide_batch(r, tr, c, s);
        if (rc)
            return rc;
    }
    /* iters auto: more unrecorded repetitions, each timed as the slowest rank saw it, until a
     * tenth of the budget is spent; every rank sees the same maxima, so all stop together. */
    double period = 0;
    if (t->iters == 0 && tr->iters[s] == 0) {
        double per[CAL_MAX], spent = 0;
        int k = 0;
        while (k < CAL_MAX && spent < 0.1 * t->time_per_size_s) {
            c->rep = -1;
            c->root = root_of(r, k);
            double t0 = wb_timer_now_s();
            int rc = tr->def->run(c, &dummy);
            c->seq++;
            double mine = wb_timer_now_s() - t0;
            if (rc || (rc = wb_comm_check(MPI_Allreduce(&mine, &per[k], 1, MPI_DOUBLE, MPI_MAX, c->comm),
                                          "MPI_Allreduce")))
                return rc;
            spent += per[k++];
        }
        period = wb_timer_median(per, (size_t)k);
    }

    /* Rank 0 decides the count and whether time is up, so every rank runs the same loop. */
    struct {
        int32_t iters, stop;
    } d = {0, 0};
    if (r->rank == 0) {
        if (t->iters)
            d.iters = t->iters;
        else if (tr->iters[s])
            d.iters = tr->iters[s];
        else {
            double est = period > 0 ? ceil(t->time_per_size_s / period) : t->iters_max;
            d.iters = (int32_t)fmin(fmax(est, t->iters_min), t->iters_max);
        }
        double timeout = r->o->common.timeout_s;
        d.stop = timeout > 0 && wb_timer_now_s() - r->t_start_s > timeout;
    }
    int rc = wb_comm_bcast(&d, sizeof d, 0);
    if (rc)
        return rc;
    if (d.stop) {
        tr->timed_out = 1;
        return wb_error_set(WB_ETIMEOUT, "transfer: --timeout %g s reached in %s at %lld bytes; what was measured "
                                         "before is in the result file",
                            r->o->common.timeout_s, tr->def->name, (long long)tr->bytes[s]);
    }
    int iters = d.iters;
    if (tr->iters[s] == 0) {
        tr->iters[s] = iters;
        if (r->rank == 0 && (tr->samples[s] = malloc((size_t)iters * (size_t)tr->ncols * sizeof(double))))
            for (size_t i = 0; i < (size_t)iters * (size_t)tr->ncols; i++)
                tr->samples[s][i] = NAN;
    }
    double *local = malloc((size_t)iters * sizeof *local);
    double *g = r->rank == 0 ? malloc((size_t)iters * (size_t)r->nranks * sizeof *g) : NULL;
    if (!local || (r->rank == 0 && (!g || !tr->samples[s])))
        rc = wb_error_set(WB_ENOMEM, "transfer %s: out of memory for %d samples", tr->def->name, iters);
    rc = wb_comm_agree(rc);
    for (int i = 0; i < iters && rc == 0; i++) {
        c->rep = i;
        c->root = root_of(r, i);
        rc = tr->def->run(c, &local[i]);
        c->seq++;
    }
    if (rc == 0)
        rc = wb_comm_gather_f64_n(local, (size_t)iters, g);
    if (rc == 0 && r->rank == 0)
        file_samples(r, tr, u, s, g);
    free(local);
    free(g);
    if (rc)
        return rc;
    if (!t->validate)
        return 0;
    rc = wb_comm_agree(c->bad ? wb_error_set(WB_EVERIFY, "%s", c->bad_msg) : 0);
    if (rc == WB_EVERIFY) {
        tr->verified = 0;
        if (!r->failed)
            snprintf(r->first_failure, sizeof r->first_failure, "%s", wb_error_message());
        r->failed = 1;
        wb_report_printf("# FAILED: %s\n", wb_error_message());
        return 0;
    }
    return rc;
}

/* Median over the recorded repetitions of column col at size s (rank 0). */
static double col_median(const struct test_run *tr, int s, int col, double *tmp)
{
    int iters = tr->iters[s];
    for (int i = 0; i < iters; i++)
        tmp[i] = tr->samples[s][(size_t)i * tr->ncols + col];
    return wb_timer_median(tmp, (size_t)iters);
}

static void print_row(int64_t bytes, int reps, double tmin, double tmed, double tmax, double mbps)
{
    char bw[32];
    if (isfinite(mbps) && mbps > 0)
        snprintf(bw, sizeof bw, "%12.2f", mbps);
    else
        snprintf(bw, sizeof bw, "%12s", "-");
    wb_report_printf("%12lld %8d %11.2f %11.2f %11.2f %s\n", (long long)bytes, reps, tmin * 1e6, tmed * 1e6,
                     tmax * 1e6, bw);
}

static void print_header(void)
{
    wb_report_printf("# %10s %8s %11s %11s %11s %12s\n", "bytes", "reps", "t_min[us]", "t_med[us]", "t_max[us]",
                     "MB/s");
}

static void pair_list(const struct test_run *tr, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (int p = 0; p < tr->npairs && len + 16 < cap; p++)
        len += (size_t)snprintf(out + len, cap - len, "%s%d:%d", p ? "," : "", tr->pairs[p][0], tr->pairs[p][1]);
}

/* Rank 0: the table of one test, from samples and t_med ([S][C] or [S]). */
static void print_table(const struct run *r, const struct test_run *tr, int S, const double *t_med, double *tmp)
{
    const struct wb_transfer_opts *t = r->t;
    const struct wb_transfer_testdef *def = tr->def;
    int C = tr->ncols;
    char extra[160] = "";
    if (tr->test == WB_TRANSFER_BW || tr->test == WB_TRANSFER_BIBW)
        snprintf(extra, sizeof extra, "; window %d (at most %lld bytes in flight)", t->window,
                 (long long)t->window_bytes);
    if (def->kind == WB_TRANSFER_KIND_P2P) {
        char list[256];
        pair_list(tr, list, sizeof list);
        if (tr->nunits > 1)
            wb_report_printf("# %s: %s%s; every ordered pair of %d ranks in turn (%d pairs); t_min, t_med, t_max "
                             "are the fastest, median and slowest pair's median; MB/s = 1e6 bytes/s from t_med\n",
                             def->name, def->what, extra, r->nranks, tr->npairs);
        else if (tr->npairs > 1)
            wb_report_printf("# %s: %s%s; pairs %s at once; t_min, t_max over all samples, t_med the median of "
                             "pair medians; MB/s = 1e6 bytes/s summed over the pairs\n",
                             def->name, def->what, extra, list);
        else
            wb_report_printf("# %s: %s%s; pair %s; MB/s = 1e6 bytes/s%s\n", def->name, def->what, extra, list,
                             tr->test == WB_TRANSFER_BIBW ? " (both directions)" : "");
        print_header();
        for (int s = 0; s < S; s++) {
            struct wb_stats st;
            double mbps = 0, lo = INFINITY, hi = -INFINITY;
            const double *m = t_med + (size_t)s * C;
            if (tr->nunits > 1) {
                wb_timer_stats(m, (size_t)C, &st);
                lo = st.min;
                hi = st.max;
                mbps = def->bytes_per_op * (double)tr->bytes[s] / st.median / 1e6;
            } else {
                wb_timer_stats(tr->samples[s], (size_t)tr->iters[s] * C, &st);
                lo = st.min;
                hi = st.max;
                for (int p = 0; p < C; p++)
                    mbps += def->bytes_per_op * (double)tr->bytes[s] / m[p] / 1e6;
                wb_timer_stats(m, (size_t)C, &st);
            }
            print_row(tr->bytes[s], tr->iters[s], lo, st.median, hi, mbps);
        }
    } else if (def->kind == WB_TRANSFER_KIND_RING) {
        wb_report_printf("# ring: %s, natural order of %d ranks; MB/s = 1e6 bytes/s moved by all ranks per step\n",
                         def->what, r->nranks);
        print_header();
        for (int s = 0; s < S; s++) {
            struct wb_stats st;
            for (int i = 0; i < tr->iters[s]; i++)
                tmp[i] = tr->samples[s][(size_t)i * C];
            wb_timer_stats(tmp, (size_t)tr->iters[s], &st);
            print_row(tr->bytes[s], tr->iters[s], st.min, st.median, st.max,
                      r->nranks * (double)tr->bytes[s] / st.median / 1e6);
        }
        if (C > 1) {
            wb_report_printf("# ring: %d random orders (--seed %llu); t_min, t_med, t_max are the fastest, median "
                             "and slowest order's median; MB/s from t_med\n",
                             C - 1, (unsigned long long)r->o->common.seed);
            print_header();
            for (int s = 0; s < S; s++) {
                struct wb_stats st;
                wb_timer_stats(t_med + (size_t)s * C + 1, (size_t)C - 1, &st);
                print_row(tr->bytes[s], tr->iters[s], st.min, st.median, st.max,
                          r->nranks * (double)tr->bytes[s] / st.median / 1e6);
            }
        }
    } else {
        char root[48] = "";
        if (def->rooted && t->root >= 0)
            snprintf(root, sizeof root, "; root %d", t->root);
        else if (def->rooted)
            snprintf(root, sizeof root, "; root rotates (repetition mod ranks)");
        wb_report_printf("# %s: %s%s; %d rank%s; t_min, t_med, t_max are the fastest, median and slowest rank's "
                         "median; MB/s = 1e6 bytes/s from t_med\n",
                         def->name, def->what, root, r->nranks, r->nranks == 1 ? "" : "s");
        print_header();
        for (int s = 0; s < S; s++) {
            struct wb_stats st;
            for (int q = 0; q < C; q++)
                tmp[q] = col_median(tr, s, q, tmp + C);
            wb_timer_stats(tmp, (size_t)C, &st);
            print_row(tr->bytes[s], tr->iters[s], st.min, st.median, st.max,
                      (double)tr->bytes[s] / st.median / 1e6);
        }
    }
    if (tr->verified == 1)
        wb_report_printf("# %s: validated, every received buffer matched what was sent\n", def->name);
}

static void matrix_median(const double *m, int n, int row_or_node, const int *node, int by_node, double *out_lat)
{
    /* Collects the off-diagonal values that involve row_or_node (a rank, or a node against the others). */
    double *v = malloc((size_t)n * (size_t)n * sizeof *v);
    size_t k = 0;
    for (int a = 0; v && a < n; a++)
        for (int b = 0; b < n; b++) {
            if (a == b)
                continue;
            int in = by_node ? (node[a] == row_or_node) != (node[b] == row_or_node)
                             : a == row_or_node || b == row_or_node;
            if (in)
                v[k++] = m[(size_t)a * n + b];
        }
    *out_lat = v ? wb_timer_median(v, k) : NAN;
    free(v);
}

/* Rank 0, --pairs all: the slowest pair and every rank's (and node's) median against the rest. */
static void print_pairs_all(const struct run *r, const struct test_run *tr, const double *lat, const double *bw,
                            int64_t lat_bytes, int64_t bw_bytes)
{
    int n = r->nranks;
    size_t nn = (size_t)n * n;
    int worst_lat = -1, worst_bw = -1;
    for (size_t i = 0; i < nn; i++) {
        if (isnan(lat[i]))
            continue;
        if (worst_lat < 0 || lat[i] > lat[worst_lat])
            worst_lat = (int)i;
        if (worst_bw < 0 || bw[i] < bw[worst_bw])
            worst_bw = (int)i;
    }
    if (worst_lat < 0)
        return;
    double lat_all = wb_timer_median(lat, nn), bw_all = wb_timer_median(bw, nn);
    wb_report_printf("# %s, every pair: time per operation at %lld bytes, bandwidth at %lld bytes\n", tr->def->name,
                     (long long)lat_bytes, (long long)bw_bytes);
    wb_report_printf("# slowest pair: %d->%d %.2f us (median of all pairs %.2f us); lowest bandwidth: %d->%d "
                     "%.2f MB/s (median %.2f MB/s)\n",
                     worst_lat / n, worst_lat % n, lat[worst_lat] * 1e6, lat_all * 1e6, worst_bw / n, worst_bw % n,
                     bw[worst_bw] / 1e6, bw_all / 1e6);
    wb_report_printf("# %4s %5s %-20s %12s   %13s    (median over its pairs with every other rank; ! = 2x off "
                     "the median)\n",
                     "rank", "node", "host", "t_med[us]", "MB/s");
    for (int q = 0; q < n; q++) {
        double l, b;
        matrix_median(lat, n, q, r->node, 0, &l);
        matrix_median(bw, n, q, r->node, 0, &b);
        wb_report_printf("  %4d %5d %-20.20s %12.2f %s %13.2f %s\n", q, r->node[q],
                         r->hosts ? r->hosts + (size_t)q * HOST_CAP : "?", l * 1e6, l > 2 * lat_all ? "!" : " ",
                         b / 1e6, b < 0.5 * bw_all ? "!" : " ");
    }
    if (r->nnodes > 1 && r->nnodes < n) {
        wb_report_printf("# %4s %-20s %12s   %13s    (median over pairs between this node and the others)\n",
                         "node", "host", "t_med[us]", "MB/s");
        for (int k = 0; k < r->nnodes; k++) {
            int first = 0;
            while (r->node[first] != k)
                first++;
            double l, b;
            matrix_median(lat, n, k, r->node, 1, &l);
            matrix_median(bw, n, k, r->node, 1, &b);
            wb_report_printf("  %4d %-20.20s %12.2f %s %13.2f %s\n", k,
                             r->hosts ? r->hosts + (size_t)first * HOST_CAP : "?", l * 1e6,
                             l > 2 * lat_all ? "!" : " ", b / 1e6, b < 0.5 * bw_all ? "!" : " ");
        }
    }
}

/* What rank 0 derives from a finished test for the file and the table. */
struct summary {
    int S, R, C;
    int s_lat, s_bw;            /* smallest and largest size: the pairs_all matrices */
    size_t med_n;
    double *t, *t_med, *bw, *tmp, *lat_m, *bw_m;
    int64_t *reps, *window, *batch;
    int32_t *ids;               /* pairs [P][2] or orders [O][nranks]; a test has one or the other */
};

static void summary_free(struct summary *sm)
{
    free(sm->t);
    free(sm->t_med);
    free(sm->bw);
    free(sm->tmp);
    free(sm->lat_m);
    free(sm->bw_m);
    free(sm->reps);
    free(sm->window);
    free(sm->batch);
    free(sm->ids);
}

/* Rank 0: raw samples into t [S, R, C], medians, bandwidths, matrices. 0 or WB_ENOMEM. */
static int summarize(const struct run *r, const struct test_run *tr, struct summary *sm)
{
    int S = sm->S, R = sm->R, C = sm->C, n = r->nranks;
    int coll = tr->def->kind == WB_TRANSFER_KIND_COLL;
    sm->t = malloc((size_t)S * R * C * sizeof *sm->t);
    sm->t_med = malloc(sm->med_n * sizeof *sm->t_med);
    sm->bw = malloc(sm->med_n * sizeof *sm->bw);
    sm->tmp = malloc(((size_t)R + 2 * (size_t)C + 1) * sizeof *sm->tmp);
    sm->lat_m = malloc((size_t)n * n * sizeof *sm->lat_m);
    sm->bw_m = malloc((size_t)n * n * sizeof *sm->bw_m);
    sm->reps = malloc((size_t)S * sizeof *sm->reps);
    sm->window = malloc((size_t)S * sizeof *sm->window);
    sm->batch = malloc((size_t)S * sizeof *sm->batch);
    sm->ids = malloc(((size_t)tr->npairs * 2 + (size_t)tr->norders * n + 1) * sizeof *sm->ids);
    if (!sm->t || !sm->t_med || !sm->bw || !sm->tmp || !sm->lat_m || !sm->bw_m || !sm->reps || !sm->window ||
        !sm->batch || !sm->ids)
        return wb_error_set(WB_ENOMEM, "transfer %s: out of memory for results", tr->def->name);
    for (int s = 0; s < S; s++) {
        sm->reps[s] = tr->iters[s];
        sm->window[s] = tr->window[s];
        sm->batch[s] = tr->batch[s];
        for (int i = 0; i < R; i++)
            for (int k = 0; k < C; k++)
                sm->t[((size_t)s * R + i) * C + k] = i < tr->iters[s] ? tr->samples[s][(size_t)i * C + k] : NAN;
        if (coll) {
            for (int q = 0; q < C; q++)
                sm->tmp[q] = col_median(tr, s, q, sm->tmp + C);
            sm->t_med[s] = wb_timer_median(sm->tmp, (size_t)C);
            sm->bw[s] = tr->bytes[s] > 0 ? (double)tr->bytes[s] / sm->t_med[s] : 0;
            continue;
        }
        double per_op = tr->def->kind == WB_TRANSFER_KIND_RING ? n : tr->def->bytes_per_op;
        for (int k = 0; k < C; k++) {
            size_t at = (size_t)s * C + k;
            sm->t_med[at] = col_median(tr, s, k, sm->tmp);
            sm->bw[at] = per_op * (double)tr->bytes[s] / sm->t_med[at];
        }
    }
    for (int p = 0; p < tr->npairs; p++) {
        sm->ids[2 * p] = tr->pairs[p][0];
        sm->ids[2 * p + 1] = tr->pairs[p][1];
    }
    for (int i = 0; i < tr->norders * n; i++)
        sm->ids[i] = tr->orders[i];
    for (size_t i = 0; i < (size_t)n * n; i++)
        sm->lat_m[i] = sm->bw_m[i] = NAN;
    for (int p = 0; tr->nunits > 1 && p < tr->npairs; p++) {
        size_t at = (size_t)tr->pairs[p][0] * n + tr->pairs[p][1];
        sm->lat_m[at] = sm->t_med[(size_t)sm->s_lat * C + p];
        sm->bw_m[at] = sm->bw[(size_t)sm->s_bw * C + p];
    }
    return 0;
}

/* Rank 0: one warning per run when a timed interval (a batch of round trips, a window, a call)
 * spans fewer than 100 timer ticks. */
static void warn_short(struct run *r, const struct test_run *tr, const struct summary *sm)
{
    for (size_t i = 0; i < sm->med_n && !r->short_warned; i++) {
        int s = tr->def->kind == WB_TRANSFER_KIND_COLL ? (int)i : (int)(i / (size_t)sm->C);
        double raw = sm->t_med[i] * (tr->test == WB_TRANSFER_PINGPONG ? 2.0 * tr->batch[s] : tr->window[s]);
        if (isfinite(raw) && wb_timer_too_short(raw)) {
            wb_report_warn("%s: some timed intervals are under 100 ticks of the %.3g s timer; they are coarse",
                           tr->def->name, wb_timer_tick_s());
            r->short_warned = 1;
        }
    }
}

/* Writes /transfer/<test>/ (and /transfer/pairs_all/). Collective: the calls act on rank 0 and
 * their errors are agreed at the flush, so every rank makes the same calls. */
static int write_test(struct run *r, const struct test_run *tr, const struct summary *sm)
{
    const struct wb_transfer_opts *t = r->t;
    struct wb_results *res = r->res;
    static const char *const kinds[] = {"p2p", "ring", "collective"};
    static const char *const modes[] = {"first", "all", "list"};
    int n = r->nranks, coll = tr->def->kind == WB_TRANSFER_KIND_COLL;
    char g[64], d[96], iters[32], root[32];
    snprintf(g, sizeof g, "/transfer/%s", tr->def->name);
    if (t->iters)
        snprintf(iters, sizeof iters, "%d", t->iters);
    else
        snprintf(iters, sizeof iters, "auto");
    if (t->root >= 0)
        snprintf(root, sizeof root, "%d", t->root);
    else
        snprintf(root, sizeof root, "rotate");
    uint64_t dims[3] = {(uint64_t)sm->S, (uint64_t)sm->R, (uint64_t)sm->C};
    uint64_t mdims[2] = {(uint64_t)sm->S, (uint64_t)sm->C};
    uint64_t pdims[2] = {(uint64_t)tr->npairs, 2}, odims[2] = {(uint64_t)tr->norders, (uint64_t)n};
    wb_results_group(res, g);
    wb_results_attr_str(res, g, "kind", kinds[tr->def->kind]);
    wb_results_attr_str(res, g, "pairs_mode", modes[t->pairs_mode]);
    wb_results_attr_i64(res, g, "window", t->window);
    wb_results_attr_i64(res, g, "window_bytes", t->window_bytes);
    wb_results_attr_str(res, g, "iters", iters);
    wb_results_attr_i64(res, g, "iters_min", t->iters_min);
    wb_results_attr_i64(res, g, "iters_max", t->iters_max);
    wb_results_attr_f64(res, g, "time_per_size_s", t->time_per_size_s);
    wb_results_attr_i64(res, g, "warmup", r->o->common.warmup);
    wb_results_attr_str(res, g, "root", root);
    wb_results_attr_i64(res, g, "random_orders", tr->def->kind == WB_TRANSFER_KIND_RING ? t->random_orders : 0);
    wb_results_attr_i64(res, g, "validated", t->validate);
    wb_results_attr_i64(res, g, "verified", tr->verified);
    wb_results_attr_i64(res, g, "timed_out", tr->timed_out);
    wb_results_attr_str(res, g, "operation", tr->def->what);
#define DSET(name) (snprintf(d, sizeof d, "%s/%s", g, name), d)
    wb_results_write_i64(res, DSET("bytes"), 1, dims, tr->bytes, "bytes");
    wb_results_write_i64(res, DSET("reps"), 1, dims, sm->reps, "count");
    wb_results_write_f64(res, DSET("t"), 3, dims, sm->t, "s");
    wb_results_write_f64(res, DSET("t_med"), coll ? 1 : 2, mdims, sm->t_med, "s");
    wb_results_write_f64(res, DSET("bandwidth_Bps"), coll ? 1 : 2, mdims, sm->bw, "B/s");
    if (tr->def->kind == WB_TRANSFER_KIND_P2P) {
        wb_results_write_i32(res, DSET("pairs"), 2, pdims, sm->ids, "1");
        wb_results_write_i64(res, DSET("window"), 1, dims, sm->window, "count");
        wb_results_write_i64(res, DSET("batch"), 1, dims, sm->batch, "count");
    }
    if (tr->def->kind == WB_TRANSFER_KIND_RING)
        wb_results_write_i32(res, DSET("orders"), 2, odims, sm->ids, "1");
#undef DSET
    if (tr->def->kind == WB_TRANSFER_KIND_P2P && tr->nunits > 1 && !r->pairs_all_written) {
        uint64_t ndims[2] = {(uint64_t)n, (uint64_t)n};
        wb_results_group(res, "/transfer/pairs_all");
        wb_results_write_f64(res, "/transfer/pairs_all/latency_s", 2, ndims, sm->lat_m, "s");
        wb_results_write_f64(res, "/transfer/pairs_all/bandwidth_Bps", 2, ndims, sm->bw_m, "B/s");
        wb_results_attr_i64(res, "/transfer/pairs_all", "latency_bytes", tr->bytes[sm->s_lat]);
        wb_results_attr_i64(res, "/transfer/pairs_all", "bandwidth_bytes", tr->bytes[sm->s_bw]);
        wb_results_attr_str(res, "/transfer/pairs_all", "test", tr->def->name);
        r->pairs_all_written = 1;
    }
    return wb_results_flush(res);
}

/* Prints the table and writes the file for the sizes that finished. Collective. */
static int finish_test(struct run *r, struct test_run *tr)
{
    struct summary sm = {.S = tr->sizes_done, .C = tr->ncols};
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
    int rc = wb_comm_agree(r->rank == 0 ? summarize(r, tr, &sm) : 0);
    if (rc == 0) {
        if (r->rank == 0) {
            print_table(r, tr, sm.S, sm.t_med, sm.tmp);
            if (tr->def->kind == WB_TRANSFER_KIND_P2P && tr->nunits > 1)
                print_pairs_all(r, tr, sm.lat_m, sm.bw_m, tr->bytes[sm.s_lat], tr->bytes[sm.s_bw]);
            warn_short(r, tr, &sm);
        }
        rc = write_test(r, tr, &sm);
    }
    summary_free(&sm);
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

static int run_test(struct run *r, int test)
{
    struct test_run tr = {0};
    struct wb_transfer_ctx c = {0};
    int rc = setup_test(r, &tr, test);
    size_t sbytes = 0, rbytes = 0, scratch = 0;
    int maxw = 1;
    for (int s = 0; rc == 0 && s < tr.nsizes; s++) {
        size_t sb, rb;
        wb_transfer_buffers(test, tr.bytes[s], r->nranks, tr.window[s], &sb, &rb);
        sbytes = sb > sbytes ? sb : sbytes;
        rbytes = rb > rbytes ? rb : rbytes;
        scratch = (size_t)tr.bytes[s] > scratch ? (size_t)tr.bytes[s] : scratch;
        maxw = tr.window[s] > maxw ? tr.window[s] : maxw;
    }
    if (!(r->t->validate && (test == WB_TRANSFER_REDUCE || test == WB_TRANSFER_ALLREDUCE)))
        scratch = 0;
    if (rc == 0) {
        c.sbuf = alloc_buffer(sbytes);
        c.rbuf = alloc_buffer(rbytes);
        c.scratch = alloc_buffer(scratch);
        c.reqs = calloc(2 * (size_t)maxw, sizeof *c.reqs);
        if (!c.sbuf || !c.rbuf || !c.scratch || !c.reqs)
            rc = wb_error_set(WB_ENOMEM, "transfer %s: cannot allocate %.0f MiB of message buffers",
                              tr.def->name, (double)(sbytes + rbytes + scratch) / 1048576.0);
    }
    rc = wb_comm_agree(rc);
    c.comm = wb_comm_world();
    c.rank = r->rank;
    c.nranks = r->nranks;
    c.test = test;
    c.validate = r->t->validate;
    double t0 = wb_timer_now_s();
    int total = tr.nunits * tr.nsizes;
    for (int u = 0; rc == 0 && u < tr.nunits; u++) {
        enter_unit(&tr, &c, u);
        for (int s = 0; rc == 0 && s < tr.nsizes; s++) {
            char what[64];
            snprintf(what, sizeof what, "transfer %s", tr.def->name);
            wb_report_progress(what, (double)(u * tr.nsizes + s) / total, wb_timer_now_s() - t0);
            rc = run_point(r, &tr, &c, u, s);
            if (rc == 0 && u == tr.nunits - 1)
                tr.sizes_done = s + 1;
            if (rc == WB_ETIMEOUT && tr.nunits == 1)
                tr.sizes_done = s;
        }
    }
    wb_report_progress_end();
    free(c.sbuf);
    free(c.rbuf);
    free(c.scratch);
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
    free_test(&tr);
    return rc;
}

/* Rank 0 gets every rank's host name, for the --pairs all summary. Collective. */
static int gather_hosts(struct run *r)
{
    char me[HOST_CAP] = {0};
    if (gethostname(me, sizeof me - 1) != 0)
        snprintf(me, sizeof me, "?");
    me[strcspn(me, ".")] = '\0';
    int rc = 0;
    if (r->rank == 0 && !(r->hosts = calloc((size_t)r->nranks, HOST_CAP)))
        rc = wb_error_set(WB_ENOMEM, "out of memory for host names");
    if ((rc = wb_comm_agree(rc)))
        return rc;
    return wb_comm_check(MPI_Gather(me, HOST_CAP, MPI_CHAR, r->hosts, HOST_CAP, MPI_CHAR, 0, wb_comm_world()),
                         "MPI_Gather of host names");
}

int wb_bench_transfer_run(const struct wb_options *o, struct wb_results *res)
{
    struct run r = {.o = o, .t = &o->transfer, .res = res, .rank = wb_comm_rank(), .nranks = wb_comm_size()};
    r.t_start_s = wb_timer_now_s();
    int rc = check_ranks(&r);
    if (rc)
        return rc;
    char skipped[160] = "";
    int nrun = 0;
    for (int k = 0; k < WB_TRANSFER_NTESTS; k++) {
        if (is_on(r.t, k) && !runnable(&r, k))
            snprintf(skipped + strlen(skipped), sizeof skipped - strlen(skipped), "%s%s", *skipped ? ", " : "",
                     wb_transfer_tests[k].name);
        nrun += runnable(&r, k);
    }
    if (*skipped && r.rank == 0)
        wb_report_warn("transfer: %s need%s at least 2 ranks; skipped with %d rank", skipped,
                       strchr(skipped, ',') ? "" : "s", r.nranks);
    if (nrun == 0)
        return 0;
    r.node = calloc((size_t)r.nranks, sizeof *r.node);
    rc = wb_comm_agree(r.node ? 0 : wb_error_set(WB_ENOMEM, "out of memory for the node table"));
    if (rc == 0) {
        r.nnodes = wb_comm_nodes(r.node);
        rc = r.nnodes < 0 ? r.nnodes : 0;
    }
    if (rc == 0)
        rc = check_memory(&r);
    if (rc == 0 && r.t->pairs_mode == WB_TRANSFER_PAIRS_ALL)
        rc = gather_hosts(&r);
    if (rc == 0) {
        wb_timer_tick_s();
        char iters[64];
        if (r.t->iters)
            snprintf(iters, sizeof iters, "%d repetitions per size", r.t->iters);
        else
            snprintf(iters, sizeof iters, "auto repetitions (%g s per size, %d to %d)", r.t->time_per_size_s,
                     r.t->iters_min, r.t->iters_max);
        wb_report_printf("# wulfbench transfer: %d rank%s on %d node%s; %s; %d warm-up; times in microseconds, "
                         "MB/s = 1e6 bytes/s%s\n",
                         r.nranks, r.nranks == 1 ? "" : "s", r.nnodes, r.nnodes == 1 ? "" : "s", iters,
                         o->common.warmup,
                         r.t->validate ? "; every received buffer is validated" : "");
    }
    for (int k = 0; rc == 0 && k < WB_TRANSFER_NTESTS; k++)
        if (runnable(&r, k)) {
            rc = run_test(&r, k);
            wb_report_printf("\n");
        }
    free(r.node);
    free(r.hosts);
    if (rc == 0 && r.failed) {
        /* main prints no message for a failed check, and --quiet hides the table's FAILED lines. */
        wb_report_error("%s", r.first_failure);
        rc = wb_error_set(WB_EVERIFY, "%s", r.first_failure);
    }
    return rc;
}
