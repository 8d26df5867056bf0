#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/transfer/bench_transfer_int.h"
#include "core/report.h"
#include "io/results.h"
#include "core/stats.h"
#include "core/timer.h"

/* Links and nodes below this share of the median are named. */
#define WEAK_SHARE 0.8
/* Weak links named one per line at most; a switch that fails takes n^2 of them, and the file has all. */
#define WEAK_LINES 16

/* One printed row: statistics in seconds, MB/s = 1e6 bytes/s. */
struct row {
    char pair[24];              /* "0:1", "all pairs", "natural", "random", "ranks" */
    int64_t bytes;
    int reps, batch;
    double avg, min, max, med, p95, stddev, mbps, cv;
    int unstable;
};

void wb_transfer_say(const struct wb_transfer_run *r, const char *fmt, ...)
{
    if (!wb_report_enabled())
        return;
    wb_report_progress_end();
    FILE *out = r->t->format == WB_TRANSFER_FMT_TABLE ? stdout : stderr;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(out, fmt, ap);
    va_end(ap);
    fflush(out);
}

static void json_num(const char *key, double v, const char *sep)
{
    if (isfinite(v))
        printf("\"%s\": %.6g%s", key, v, sep);
    else
        printf("\"%s\": null%s", key, sep);
}

/* A JSON string of s (test names, pairs and cuts hold no control characters). */
static void json_str(const char *key, const char *s, const char *sep)
{
    printf("\"%s\": \"", key);
    for (; *s; s++)
        printf(*s == '"' || *s == '\\' ? "\\%c" : "%c", *s);
    printf("\"%s", sep);
}

void wb_transfer_print_begin(struct wb_transfer_run *r)
{
    if (!wb_report_enabled())
        return;
    const struct wb_transfer_plan *p = &r->plan;
    if (r->t->format == WB_TRANSFER_FMT_CSV)
        printf("test,pair,bytes,reps,t_avg_us,t_min_us,t_max_us,t_med_us,t_p95_us,stddev_us,MBps,cv,unstable,batch\n");
    if (r->t->format == WB_TRANSFER_FMT_JSON) {
        printf("{\"ranks\": %d, \"nodes\": %d, ", r->nranks, r->nnodes);
        json_num("time_budget_s", p->budget_s, ", ");
        json_num("estimated_s", p->est_s, ", ");
        json_str("cuts", p->cuts, ", ");
        printf("\"tests\": [");
    }
    fflush(stdout);
}

void wb_transfer_print_end(struct wb_transfer_run *r)
{
    if (!wb_report_enabled() || r->t->format != WB_TRANSFER_FMT_JSON)
        return;
    printf("], ");
    json_num("elapsed_s", wb_timer_now_s() - r->t_start_s, "}\n");
    fflush(stdout);
}

static void print_header(const struct wb_transfer_run *r, int with_pair)
{
    if (with_pair)
        printf("# %9s %12s", "pair", "bytes");
    else
        printf("# %10s", "bytes");
    printf(" %8s %11s %11s %11s %11s %11s %12s %7s", "reps", "t_avg[us]", "t_min[us]", "t_max[us]", "t_med[us]",
           "t_p95[us]", "MB/s", "cv[%]");
    if (r->t->full)
        printf(" %11s %6s", "stddev[us]", "batch");
    printf("\n");
}

/* Row `index` of a test (JSON separates rows by commas). */
static void print_row(const struct wb_transfer_run *r, const char *test, const struct row *w, int with_pair,
                      int index)
{
    if (!wb_report_enabled())
        return;
    enum wb_transfer_format f = r->t->format;
    if (f == WB_TRANSFER_FMT_JSON && index > 0)
        printf(", ");
    if (f == WB_TRANSFER_FMT_CSV) {
        printf("%s,%s,%lld,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%d,%d\n", test, w->pair, (long long)w->bytes,
               w->reps, w->avg * 1e6, w->min * 1e6, w->max * 1e6, w->med * 1e6, w->p95 * 1e6, w->stddev * 1e6,
               w->mbps, w->cv, w->unstable, w->batch);
    } else if (f == WB_TRANSFER_FMT_JSON) {
        printf("{");
        json_str("pair", w->pair, ", ");
        printf("\"bytes\": %lld, \"reps\": %d, ", (long long)w->bytes, w->reps);
        json_num("t_avg_us", w->avg * 1e6, ", ");
        json_num("t_min_us", w->min * 1e6, ", ");
        json_num("t_max_us", w->max * 1e6, ", ");
        json_num("t_med_us", w->med * 1e6, ", ");
        json_num("t_p95_us", w->p95 * 1e6, ", ");
        json_num("stddev_us", w->stddev * 1e6, ", ");
        json_num("MBps", w->mbps, ", ");
        json_num("cv", w->cv, ", ");
        printf("\"unstable\": %d, \"batch\": %d}", w->unstable, w->batch);
    } else {
        char bw[32];
        if (isfinite(w->mbps) && w->mbps > 0)
            snprintf(bw, sizeof bw, "%12.2f", w->mbps);
        else
            snprintf(bw, sizeof bw, "%12s", "-");
        if (with_pair)
            printf("  %9s %12lld", w->pair, (long long)w->bytes);
        else
            printf("%12lld", (long long)w->bytes);
        printf(" %8d %11.2f %11.2f %11.2f %11.2f %11.2f %s %7.2f", w->reps, w->avg * 1e6, w->min * 1e6,
               w->max * 1e6, w->med * 1e6, w->p95 * 1e6, bw, 100 * w->cv);
        if (r->t->full)
            printf(" %11.2f %6d", w->stddev * 1e6, w->batch);
        printf("%s\n", w->unstable ? " unstable" : "");
    }
}

/* A row from the statistics of slot `at` of the summary. */
static struct row row_at(const struct wb_transfer_test_run *tr, const struct wb_transfer_summary *sm, int s,
                         size_t at, double mbps, const char *pair)
{
    struct row w = {.bytes = tr->bytes[s], .reps = tr->iters[s], .avg = sm->t_avg[at], .min = sm->t_min[at],
                    .max = sm->t_max[at], .med = sm->t_med[at], .p95 = sm->t_p95[at], .mbps = mbps,
                    .cv = sm->cv[at], .unstable = sm->unstable[at],
                    .batch = tr->test == WB_TRANSFER_PINGPONG ? tr->batch[s] : tr->window[s]};
    w.stddev = w.cv * w.avg;
    snprintf(w.pair, sizeof w.pair, "%s", pair);
    return w;
}

/* A row pooled over the repetitions of columns lo..hi-1 at size s; cv is the largest column's. */
static struct row row_pooled(const struct wb_transfer_test_run *tr, const struct wb_transfer_summary *sm, int s,
                             int lo, int hi, double per_op, int summed, const char *pair)
{
    int C = tr->ncols, iters = tr->iters[s];
    double *v = malloc((size_t)iters * (size_t)(hi - lo) * sizeof *v), mbps = 0, cv = 0;
    size_t k = 0;
    int unstable = 0;
    for (int i = 0; v && i < iters; i++)
        for (int c = lo; c < hi; c++)
            v[k++] = tr->samples[s][(size_t)i * C + c];
    struct wb_stats st;
    wb_stats_fill(v, k, &st);
    free(v);
    for (int c = lo; c < hi; c++) {
        size_t at = (size_t)s * C + c;
        cv = fmax(cv, sm->cv[at]);
        unstable |= sm->unstable[at];
        mbps += per_op * (double)tr->bytes[s] / sm->t_med[at] / 1e6;
    }
    if (!summed)
        mbps = per_op * (double)tr->bytes[s] / st.median / 1e6;
    struct row w = {.bytes = tr->bytes[s], .reps = iters, .avg = st.mean, .min = st.min, .max = st.max,
                    .med = st.median, .p95 = st.p95, .stddev = st.stddev, .mbps = mbps, .cv = cv,
                    .unstable = unstable, .batch = tr->test == WB_TRANSFER_PINGPONG ? tr->batch[s] : tr->window[s]};
    snprintf(w.pair, sizeof w.pair, "%s", pair);
    return w;
}

static void pair_list(const struct wb_transfer_test_run *tr, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (int p = 0; p < tr->npairs && len + 16 < cap; p++)
        len += (size_t)snprintf(out + len, cap - len, "%s%d:%d", p ? "," : "", tr->pairs[p][0], tr->pairs[p][1]);
}

static const char STATS_P2P[] = "t_avg, t_min, t_max, t_med, t_p95 = mean, fastest, slowest, median, 95th "
                                "percentile over repetitions; cv = stddev/mean (over 5%: unstable)";

/* The title line of a p2p test. */
static void p2p_title(const struct wb_transfer_run *r, const struct wb_transfer_test_run *tr, const char *name)
{
    char extra[160] = "", list[256];
    const struct wb_transfer_opts *t = r->t;
    if (tr->test == WB_TRANSFER_BW || tr->test == WB_TRANSFER_BIBW)
        snprintf(extra, sizeof extra, t->window_bytes ? "; window %d (at most %lld bytes in flight)" : "; window %d",
                 t->window, (long long)t->window_bytes);
    if (tr->test == WB_TRANSFER_PINGPONG)
        snprintf(extra, sizeof extra, "; %s method", wb_transfer_pp_method_names[t->pp_method]);
    pair_list(tr, list, sizeof list);
    if (tr->nunits > 1)
        wb_transfer_say(r, "# %s: %s%s; every ordered pair of %d ranks in turn (%d pairs); %s, of every pair's "
                           "repetitions together; cv the largest pair's; MB/s = 1e6 bytes/s from t_med\n",
                        name, tr->def->what, extra, r->nranks, tr->npairs, STATS_P2P);
    else if (tr->npairs > 1)
        wb_transfer_say(r, "# %s: %s%s; pairs %s at once; %s, of every pair's repetitions together; cv the "
                           "largest pair's; MB/s = 1e6 bytes/s summed over the pairs\n",
                        name, tr->def->what, extra, list, STATS_P2P);
    else
        wb_transfer_say(r, "# %s: %s%s; pair %s; %s; MB/s = 1e6 bytes/s from t_med%s\n", name, tr->def->what, extra,
                        list, STATS_P2P, tr->test == WB_TRANSFER_BIBW ? " (both directions)" : "");
}

/* Bytes per second pair p of the test cannot pass: one machine's memcpy when both ends share it (the
 * bytes go through its memory), else the slower end's line rate, per_op times for both ways. */
static double pair_ceiling(const struct wb_ceiling_machine *m, const int *machine_of, int a, int b, double per_op)
{
    const struct wb_ceiling_machine *ma = &m[machine_of[a]], *mb = &m[machine_of[b]];
    if (ma == mb)
        return ma->copy_Bps;
    int mbps = ma->link_mbps < mb->link_mbps ? ma->link_mbps : mb->link_mbps;
    return mbps > 0 ? per_op * mbps * 1e6 / 8 : NAN;
}

/* The ceiling line under a point-to-point table: how many sizes and pairs passed their ceiling even
 * at their slowest repetition, and the one furthest above it. */
static void print_ceiling(const struct wb_transfer_run *r, const struct wb_transfer_test_run *tr,
                          const struct wb_transfer_summary *sm, const char *name)
{
    int nm = 0, above = 0, checked = 0;
    const int *machine_of = NULL;
    const struct wb_ceiling_machine *m = wb_results_machines(r->res, &nm, &machine_of);
    if (!m || !machine_of || r->t->format != WB_TRANSFER_FMT_TABLE)
        return;
    double per_op = tr->def->bytes_per_op, worst = 0, worst_mbps = 0, worst_ceil = NAN;
    int64_t worst_bytes = 0;
    for (int p = 0; p < sm->C; p++) {
        double ceil = pair_ceiling(m, machine_of, tr->pairs[p][0], tr->pairs[p][1], per_op);
        for (int s = 0; s < sm->S && isfinite(ceil); s++) {
            size_t at = (size_t)s * (size_t)sm->C + (size_t)p;
            double low = per_op * (double)tr->bytes[s] / sm->t_max[at];
            checked++;
            if (!(low > ceil))
                continue;
            above++;
            if (low / ceil > worst) {
                worst = low / ceil;
                worst_mbps = per_op * (double)tr->bytes[s] / sm->t_med[at] / 1e6;
                worst_ceil = ceil;
                worst_bytes = tr->bytes[s];
            }
        }
    }
    if (!checked)
        wb_transfer_say(r, "#   ceiling: unknown (the link reports no speed)\n");
    else if (!above)
        wb_transfer_say(r, "#   ceiling: every size and pair within its ceiling (one machine: its memcpy; "
                           "between machines: the line rate)\n");
    else
        wb_transfer_say(r, "#   ABOVE THE CEILING: %s, %d of %d sizes and pairs even at their slowest repetition; "
                           "the most, %.2f MB/s at %lld B against %.2f MB/s (likely cause: %s)\n", name, above, checked,
                        worst_mbps, (long long)worst_bytes, worst_ceil / 1e6,
                        machine_of[tr->pairs[0][0]] == machine_of[tr->pairs[0][1]]
                            ? "caches: the message fits in a cache, faster than memory"
                            : "the clocks, or a link faster than it reports");
}

static int print_p2p(struct wb_transfer_run *r, const struct wb_transfer_test_run *tr,
                     const struct wb_transfer_summary *sm, const char *name)
{
    int S = sm->S, C = sm->C, rows = 0, table = r->t->format == WB_TRANSFER_FMT_TABLE;
    double per_op = tr->def->bytes_per_op;
    p2p_title(r, tr, name);
    if (table && wb_report_enabled())
        print_header(r, 0);
    for (int s = 0; s < S; s++) {
        struct row w = C == 1 ? row_at(tr, sm, s, (size_t)s, per_op * (double)tr->bytes[s] / sm->t_med[s] / 1e6,
                                       "0:1")
                              : row_pooled(tr, sm, s, 0, C, per_op, tr->nunits == 1, "all pairs");
        if (C == 1)
            snprintf(w.pair, sizeof w.pair, "%d:%d", tr->pairs[0][0], tr->pairs[0][1]);
        print_row(r, name, &w, 0, rows++);
    }
    if (r->rank == 0)
        print_ceiling(r, tr, sm, name);
    if (C == 1 || !r->t->full)
        return rows;
    if (table)
        wb_transfer_say(r, "# %s per pair (--full): sender:receiver\n", name);
    if (table && wb_report_enabled())
        print_header(r, 1);
    for (int p = 0; p < C; p++)
        for (int s = 0; s < S; s++) {
            char pair[24];
            size_t at = (size_t)s * C + p;
            snprintf(pair, sizeof pair, "%d:%d", tr->pairs[p][0], tr->pairs[p][1]);
            struct row w = row_at(tr, sm, s, at, sm->bw[at] / 1e6, pair);
            print_row(r, name, &w, 1, rows++);
        }
    return rows;
}

static int print_ring(struct wb_transfer_run *r, const struct wb_transfer_test_run *tr,
                      const struct wb_transfer_summary *sm)
{
    int S = sm->S, C = sm->C, rows = 0, table = r->t->format == WB_TRANSFER_FMT_TABLE;
    wb_transfer_say(r, "# ring: %s, natural order of %d ranks; %s; MB/s = 1e6 bytes/s moved by all ranks per "
                       "step, from t_med\n",
                    tr->def->what, r->nranks, STATS_P2P);
    if (table && wb_report_enabled())
        print_header(r, 0);
    for (int s = 0; s < S; s++) {
        struct row w = row_at(tr, sm, s, (size_t)s * C, sm->bw[(size_t)s * C] / 1e6, "natural");
        print_row(r, "ring", &w, 0, rows++);
    }
    if (C < 2)
        return rows;
    wb_transfer_say(r, "# ring: %d random orders (--seed %llu); statistics over every order's repetitions "
                       "together; cv the largest order's; MB/s from t_med\n",
                    C - 1, (unsigned long long)r->o->common.seed);
    if (table && wb_report_enabled())
        print_header(r, 0);
    for (int s = 0; s < S; s++) {
        struct row w = row_pooled(tr, sm, s, 1, C, r->nranks, 0, "random");
        print_row(r, "ring", &w, 0, rows++);
    }
    return rows;
}

static int print_coll(struct wb_transfer_run *r, const struct wb_transfer_test_run *tr,
                      const struct wb_transfer_summary *sm, const char *name)
{
    const struct wb_transfer_opts *t = r->t;
    char what[160], root[48] = "";
    int rows = 0;
    if (tr->test == WB_TRANSFER_REDUCE || tr->test == WB_TRANSFER_ALLREDUCE)
        snprintf(what, sizeof what, "%s, %s of %s", tr->def->what, wb_transfer_op_names[t->op],
                 wb_transfer_dtype_names[t->dtype]);
    else
        snprintf(what, sizeof what, "%s", tr->def->what);
    if (tr->def->rooted)
        snprintf(root, sizeof root, t->root >= 0 ? "; root %d" : "; root rotates (repetition mod ranks)", t->root);
    wb_transfer_say(r, "# %s: %s%s; %d rank%s; each rank's mean over repetitions, then t_avg = mean over ranks "
                       "(OSU), t_min = fastest rank, t_max = slowest rank (IMB t_max), t_med = median rank, t_p95; "
                       "cv = stddev/mean of the slowest rank's repetitions; MB/s = 1e6 bytes/s from t_med\n",
                    name, what, root, r->nranks, r->nranks == 1 ? "" : "s");
    if (t->format == WB_TRANSFER_FMT_TABLE && wb_report_enabled())
        print_header(r, 0);
    for (int s = 0; s < sm->S; s++) {
        struct row w = row_at(tr, sm, s, (size_t)s, tr->bytes[s] > 0 ? sm->bw[s] / 1e6 : NAN, "ranks");
        print_row(r, name, &w, 0, rows++);
    }
    return rows;
}

void wb_transfer_print_test(struct wb_transfer_run *r, const struct wb_transfer_test_run *tr,
                            const struct wb_transfer_summary *sm)
{
    const char *name = wb_transfer_test_name(tr->test);
    int json = r->t->format == WB_TRANSFER_FMT_JSON && wb_report_enabled();
    static const char *const kinds[] = {"p2p", "ring", "collective"};
    if (json) {
        printf("%s{", r->json_tests++ ? ", " : "");
        json_str("test", name, ", ");
        json_str("kind", kinds[tr->def->kind], ", ");
        json_str("pairs_mode", wb_transfer_pairs_names[r->t->pairs_mode], ", ");
        printf("\"rows\": [");
    }
    if (tr->def->kind == WB_TRANSFER_KIND_P2P)
        print_p2p(r, tr, sm, name);
    else if (tr->def->kind == WB_TRANSFER_KIND_RING)
        print_ring(r, tr, sm);
    else
        print_coll(r, tr, sm, name);
    if (json)
        printf("]}");
    if (tr->verified == 1)
        wb_transfer_say(r, "# %s: validated, every received buffer matched what was sent\n", name);
    fflush(stdout);
}

static const char *host_of(const struct wb_transfer_run *r, int rank)
{
    return r->hosts ? r->hosts + (size_t)rank * WB_TRANSFER_HOST_CAP : "?";
}

static int first_rank(const struct wb_transfer_run *r, int node)
{
    int q = 0;
    while (q < r->nranks - 1 && r->node[q] != node)
        q++;
    return q;
}

void wb_transfer_print_pairs_all(const struct wb_transfer_run *r, const struct wb_transfer_test_run *tr,
                                 const struct wb_transfer_summary *sm)
{
    int n = r->nranks, worst_lat = -1, worst_bw = -1;
    const double *lat = sm->lat_m, *bw = sm->bw_m;
    size_t nn = (size_t)n * n;
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
    double lat_all = wb_stats_median(lat, nn), bw_all = wb_stats_median(bw, nn);
    wb_transfer_say(r, "# %s, every pair: t_med at %lld bytes, bandwidth at %lld bytes\n",
                    wb_transfer_test_name(tr->test), (long long)tr->bytes[sm->s_lat], (long long)tr->bytes[sm->s_bw]);
    wb_transfer_say(r, "# slowest pair: %d->%d %.2f us (median of all pairs %.2f us); lowest bandwidth: %d->%d "
                       "%.2f MB/s (median %.2f MB/s)\n",
                    worst_lat / n, worst_lat % n, lat[worst_lat] * 1e6, lat_all * 1e6, worst_bw / n, worst_bw % n,
                    bw[worst_bw] / 1e6, bw_all / 1e6);
    wb_transfer_say(r, "# %4s %5s %-20s %12s   %13s    (median over its pairs with every other rank; ! = 2x off "
                       "the median)\n",
                    "rank", "node", "host", "t_med[us]", "MB/s");
    for (int q = 0; q < n; q++) {
        double l = wb_transfer_map_median(lat, n, q, r->node, 0), b = wb_transfer_map_median(bw, n, q, r->node, 0);
        wb_transfer_say(r, "  %4d %5d %-20.20s %12.2f %s %13.2f %s\n", q, r->node[q], host_of(r, q), l * 1e6,
                        l > 2 * lat_all ? "!" : " ", b / 1e6, b < 0.5 * bw_all ? "!" : " ");
    }
    if (r->nnodes < 2 || r->nnodes >= n)
        return;
    wb_transfer_say(r, "# %4s %-20s %12s   %13s    (median over pairs between this node and the others)\n", "node",
                    "host", "t_med[us]", "MB/s");
    for (int k = 0; k < r->nnodes; k++) {
        double l = wb_transfer_map_median(lat, n, k, r->node, 1), b = wb_transfer_map_median(bw, n, k, r->node, 1);
        wb_transfer_say(r, "  %4d %-20.20s %12.2f %s %13.2f %s\n", k, host_of(r, first_rank(r, k)), l * 1e6,
                        l > 2 * lat_all ? "!" : " ", b / 1e6, b < 0.5 * bw_all ? "!" : " ");
    }
}

/* Names the links whose concurrent bandwidth is below WEAK_SHARE of the median; returns how many. */
static int weak_links(const struct wb_transfer_run *r, const double *bw, double med)
{
    int n = r->nranks, named = 0;
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            double v = bw[(size_t)a * n + b];
            if (a == b || !(v < WEAK_SHARE * med))
                continue;
            if (named++ < WEAK_LINES)
                wb_transfer_say(r, "#   link %d->%d (%s -> %s): %.2f MB/s, %.0f%% of the median\n", a, b,
                                host_of(r, a), host_of(r, b), v / 1e6, 100 * v / med);
        }
    if (named > WEAK_LINES)
        wb_transfer_say(r, "#   and %d more (every link is in the file's pairs_shift map)\n", named - WEAK_LINES);
    return named;
}

void wb_transfer_print_shift(const struct wb_transfer_run *r, const struct wb_transfer_test_run *tr,
                             const struct wb_transfer_summary *sm, const double *node_ratio)
{
    int n = r->nranks, K = r->nnodes;
    double med = wb_transfer_map_median(sm->bw_m, n, -1, r->node, 0), lat = wb_transfer_map_median(sm->lat_m, n, -1,
                                                                                                    r->node, 0);
    double seq = r->seq_bw ? wb_transfer_map_median(r->seq_bw, n, -1, r->node, 0) : NAN;
    wb_transfer_say(r, "# shift (%s): every pair at once in %d rounds (round k: rank r sends to r+k and receives "
                       "from r-k); median t_med %.2f us at %lld bytes, median bandwidth %.2f MB/s at %lld bytes "
                       "(sequential %.2f MB/s)\n",
                    wb_transfer_test_name(tr->test), tr->nunits, lat * 1e6, (long long)tr->bytes[sm->s_lat],
                    med / 1e6, (long long)tr->bytes[sm->s_bw], seq / 1e6);
    wb_transfer_say(r, "# %4s %-20s %18s   (median concurrent over median sequential bandwidth of its links)\n",
                    "node", "host", "concurrent/seq");
    double *ratios = malloc((size_t)K * sizeof *ratios);
    for (int k = 0; k < K; k++) {
        wb_transfer_say(r, "  %4d %-20.20s %18.2f\n", k, host_of(r, first_rank(r, k)), node_ratio[k]);
        if (ratios)
            ratios[k] = node_ratio[k];
    }
    double rmed = ratios ? wb_stats_median(ratios, (size_t)K) : NAN;
    free(ratios);
    for (int k = 0; k < K; k++)
        if (node_ratio[k] < WEAK_SHARE * rmed)
            wb_transfer_say(r, "# weak node: %d (%s), ratio %.2f against the median %.2f\n", k,
                            host_of(r, first_rank(r, k)), node_ratio[k], rmed);
    wb_transfer_say(r, "# links below %.0f%% of the median concurrent bandwidth (%.2f MB/s):\n", 100 * WEAK_SHARE,
                    med / 1e6);
    if (weak_links(r, sm->bw_m, med) == 0)
        wb_transfer_say(r, "#   none\n");
}

void wb_transfer_print_list(void)
{
    static const char *const kinds[] = {"p2p", "ring", "collective"};
    printf("# %-10s %-11s %5s  %-20s %s\n", "test", "kind", "ranks", "also", "one operation");
    for (int k = 0; k < WB_TRANSFER_NTESTS; k++) {
        const struct wb_transfer_testdef *d = &wb_transfer_tests[k];
        printf("  %-10s %-11s %5d  %-20s %s\n", wb_transfer_test_name(k), kinds[d->kind], d->min_ranks,
               *wb_transfer_test_aliases(k) ? wb_transfer_test_aliases(k) : "-", d->what);
    }
    printf("# groups: all, p2p (pingpong, bw, bibw, ring), collectives; names in any case\n");
    fflush(stdout);
}
