#define _POSIX_C_SOURCE 200809L
/* The figures of a transfer test, computed once on rank 0 into struct wb_transfer_summary: statistics
 * over repetitions (or over ranks), link maps, the shift's node ratio. The writer and the printer use them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/transfer/bench_transfer_int.h"
#include "core/error.h"
#include "core/stats.h"
#include "core/timer.h"

void wb_transfer_summary_free(struct wb_transfer_summary *sm)
{
    double **f[] = {&sm->t, &sm->t_med, &sm->t_avg, &sm->t_min, &sm->t_max, &sm->t_p95, &sm->cv, &sm->bw,
                    &sm->lat_m, &sm->bw_m, &sm->node_ratio};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        free(*f[i]);
        *f[i] = NULL;
    }
    free(sm->unstable);
    free(sm->net);
    sm->net = NULL;
    free(sm->reps);
    free(sm->window);
    free(sm->batch);
    free(sm->ids);
    sm->unstable = NULL;
    sm->reps = sm->window = sm->batch = NULL;
    sm->ids = NULL;
}

static int summary_alloc(const struct wb_transfer_run *r, const struct wb_transfer_test_run *tr,
                         struct wb_transfer_summary *sm)
{
    size_t n = (size_t)r->nranks, m = sm->med_n;
    double **f[] = {&sm->t_med, &sm->t_avg, &sm->t_min, &sm->t_max, &sm->t_p95, &sm->cv, &sm->bw};
    int ok = 1;
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        ok &= (*f[i] = malloc(m * sizeof(double))) != NULL;
    sm->t = malloc((size_t)sm->S * sm->R * sm->C * sizeof *sm->t);
    sm->unstable = malloc(m);
    sm->lat_m = malloc(n * n * sizeof *sm->lat_m);
    sm->bw_m = malloc(n * n * sizeof *sm->bw_m);
    sm->node_ratio = calloc((size_t)r->nnodes + 1, sizeof *sm->node_ratio);
    sm->reps = malloc((size_t)sm->S * sizeof *sm->reps);
    sm->window = malloc((size_t)sm->S * sizeof *sm->window);
    sm->batch = malloc((size_t)sm->S * sizeof *sm->batch);
    sm->ids = malloc(((size_t)tr->npairs * 2 + (size_t)tr->norders * n + 1) * sizeof *sm->ids);
    if (!ok || !sm->t || !sm->unstable || !sm->lat_m || !sm->bw_m || !sm->node_ratio || !sm->reps || !sm->window ||
        !sm->batch || !sm->ids)
        return wb_error_set(WB_ENOMEM, "transfer %s: out of memory for results", wb_transfer_test_name(tr->test));
    return 0;
}

/* Statistics over the repetitions of column col at size s into slot at; tmp holds R values. */
static void over_reps(const struct wb_transfer_test_run *tr, int s, int col, struct wb_stats *st, double *tmp)
{
    for (int i = 0; i < tr->iters[s]; i++)
        tmp[i] = tr->samples[s][(size_t)i * tr->ncols + col];
    wb_stats_fill(tmp, (size_t)tr->iters[s], st);
}

static void put(struct wb_transfer_summary *sm, size_t at, double avg, double mn, double mx, double med, double p95,
                double cv)
{
    sm->t_avg[at] = avg;
    sm->t_min[at] = mn;
    sm->t_max[at] = mx;
    sm->t_med[at] = med;
    sm->t_p95[at] = p95;
    sm->cv[at] = cv;
    sm->unstable[at] = cv > WB_TRANSFER_UNSTABLE_CV;
}

/* Collectives: each rank's mean over repetitions, reduced over ranks (OSU's avg, IMB's t_max);
 * cv is over the repetitions of the slowest rank. */
static void coll_stats(const struct wb_transfer_test_run *tr, int s, struct wb_transfer_summary *sm, double *tmp)
{
    int C = tr->ncols, slow = 0;
    double *mean = tmp + sm->R, sum = 0;
    struct wb_stats st, all;
    for (int q = 0; q < C; q++) {
        over_reps(tr, s, q, &st, tmp);
        mean[q] = st.mean;
        sum += st.mean;
        if (st.mean > mean[slow])
            slow = q;
    }
    wb_stats_fill(mean, (size_t)C, &all);
    over_reps(tr, s, slow, &st, tmp);
    put(sm, (size_t)s, sum / C, all.min, all.max, all.median, all.p95, st.mean > 0 ? st.stddev / st.mean : NAN);
    sm->bw[s] = tr->bytes[s] > 0 ? (double)tr->bytes[s] / sm->t_med[s] : 0;
}

/* The link maps at the smallest (latency) and largest (bandwidth) size, and the shift's node ratio. */
static void maps(const struct wb_transfer_run *r, const struct wb_transfer_test_run *tr, struct wb_transfer_summary *sm)
{
    int n = r->nranks, C = sm->C;
    for (size_t i = 0; i < (size_t)n * n; i++)
        sm->lat_m[i] = sm->bw_m[i] = NAN;
    for (int p = 0; tr->def->kind == WB_TRANSFER_KIND_P2P && (tr->nunits > 1 || tr->shifted) && p < tr->npairs; p++) {
        size_t at = (size_t)tr->pairs[p][0] * n + tr->pairs[p][1];
        sm->lat_m[at] = sm->t_med[(size_t)sm->s_lat * C + p];
        sm->bw_m[at] = sm->bw[(size_t)sm->s_bw * C + p];
    }
    for (int k = 0; tr->shifted && k < r->nnodes; k++) {
        double con = wb_transfer_map_median(sm->bw_m, n, k, r->node, 1);
        double seq = r->seq_bw ? wb_transfer_map_median(r->seq_bw, n, k, r->node, 1) : NAN;
        if (r->nnodes == 1 && r->seq_bw) {
            con = wb_transfer_map_median(sm->bw_m, n, -1, r->node, 0);
            seq = wb_transfer_map_median(r->seq_bw, n, -1, r->node, 0);
        }
        sm->node_ratio[k] = con / seq;
    }
}

int wb_transfer_summarize(const struct wb_transfer_run *r, const struct wb_transfer_test_run *tr,
                          struct wb_transfer_summary *sm)
{
    int S = sm->S, R = sm->R, C = sm->C, n = r->nranks;
    int rc = summary_alloc(r, tr, sm);
    double *tmp = malloc(((size_t)R + (size_t)C + 1) * sizeof *tmp);
    if (rc || !tmp) {
        free(tmp);
        return rc ? rc : wb_error_set(WB_ENOMEM, "transfer: out of memory for statistics");
    }
    for (int s = 0; s < S; s++) {
        sm->reps[s] = tr->iters[s];
        sm->window[s] = tr->window[s];
        sm->batch[s] = tr->batch[s];
        for (int i = 0; i < R; i++)
            for (int k = 0; k < C; k++)
                sm->t[((size_t)s * R + i) * C + k] = i < tr->iters[s] ? tr->samples[s][(size_t)i * C + k] : NAN;
        if (tr->def->kind == WB_TRANSFER_KIND_COLL) {
            coll_stats(tr, s, sm, tmp);
            continue;
        }
        double per_op = tr->shifted ? 1 : tr->def->kind == WB_TRANSFER_KIND_RING ? n : tr->def->bytes_per_op;
        for (int k = 0; k < C; k++) {
            struct wb_stats st;
            size_t at = (size_t)s * C + k;
            over_reps(tr, s, k, &st, tmp);
            put(sm, at, st.mean, st.min, st.max, st.median, st.p95, st.mean > 0 ? st.stddev / st.mean : NAN);
            sm->bw[at] = per_op * (double)tr->bytes[s] / sm->t_med[at];
        }
    }
    free(tmp);
    for (int p = 0; p < tr->npairs; p++) {
        sm->ids[2 * p] = tr->pairs[p][0];
        sm->ids[2 * p + 1] = tr->pairs[p][1];
    }
    for (int i = 0; i < tr->norders * n; i++)
        sm->ids[i] = tr->orders[i];
    maps(r, tr, sm);
    return 0;
}

double wb_transfer_map_median(const double *m, int n, int who, const int *node, int by_node)
{
    double *v = malloc((size_t)n * (size_t)n * sizeof *v);
    size_t k = 0;
    /* One rank's or node's median reads only its rows and columns, so a median for every rank costs
     * n^2 in all, not n^3. */
    for (int a = 0; v && a < n; a++) {
        int mine = who < 0 || (by_node ? node[a] == who : a == who);
        for (int b = 0; mine && b < n; b++) {
            if (a == b)
                continue;
            if (who < 0) {
                v[k++] = m[(size_t)a * n + b];
            } else if (!(by_node ? node[b] == who : b == who)) {
                v[k++] = m[(size_t)a * n + b];
                v[k++] = m[(size_t)b * n + a];
            }
        }
    }
    double med = v ? wb_stats_median(v, k) : NAN;
    free(v);
    return med;
}
