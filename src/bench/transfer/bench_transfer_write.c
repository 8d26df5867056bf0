/* A transfer test's group in the result file, and the run's /transfer attributes: what was measured and
 * the figures bench_transfer_stats.c computed, computing none. */
#include <stdio.h>
#include <stdlib.h>

#include "bench/transfer/bench_transfer_int.h"
#include "bench/transfer/options_transfer.h"
#include "bench/options.h"
#include "core/error.h"
#include "core/timer.h"
#include "io/results.h"

/* Every write below acts on rank 0; a failure is sticky in results and agreed on every rank at the
 * flush, so all ranks make the same calls and the flush's answer is the one that counts. */
#define W(call)          \
    do {                 \
        if (rc == 0)     \
            rc = (call); \
    } while (0)

static int write_attrs(struct wb_transfer_run *r, const struct wb_transfer_test_run *tr, const char *g)
{
    static const char *const kinds[] = {"p2p", "ring", "collective"};
    const struct wb_transfer_opts *t = r->t;
    struct wb_results *res = r->res;
    char iters[32], root[32];
    int rc = 0;
    snprintf(iters, sizeof iters, t->iters ? "%d" : "auto", t->iters);
    snprintf(root, sizeof root, t->root >= 0 ? "%d" : "rotate", t->root);
    W(wb_results_group(res, g));
    W(wb_results_attr_str(res, g, "kind", kinds[tr->def->kind]));
    W(wb_results_attr_str(res, g, "pairs_mode", wb_transfer_pairs_names[t->pairs_mode]));
    W(wb_results_attr_i64(res, g, "window", t->window));
    W(wb_results_attr_i64(res, g, "window_bytes", t->window_bytes));
    W(wb_results_attr_str(res, g, "iters", iters));
    W(wb_results_attr_i64(res, g, "iters_min", t->iters_min));
    W(wb_results_attr_i64(res, g, "iters_max", t->iters_max));
    W(wb_results_attr_f64(res, g, "time_per_size_s", t->time_per_size_s));
    W(wb_results_attr_i64(res, g, "warmup", r->o->common.warmup));
    W(wb_results_attr_str(res, g, "root", root));
    W(wb_results_attr_i64(res, g, "random_orders", tr->def->kind == WB_TRANSFER_KIND_RING ? t->random_orders : 0));
    W(wb_results_attr_i64(res, g, "validated", t->validate));
    W(wb_results_attr_i64(res, g, "verified", tr->verified));
    W(wb_results_attr_i64(res, g, "timed_out", tr->timed_out));
    W(wb_results_attr_str(res, g, "operation", tr->def->what));
    if (tr->test == WB_TRANSFER_PINGPONG)
        W(wb_results_attr_str(res, g, "pingpong_method", wb_transfer_pp_method_names[t->pp_method]));
    /* The rule of bench_transfer_kernels.c's write_window, so a reader knows which bw it holds. */
    if (tr->test == WB_TRANSFER_BW || tr->test == WB_TRANSFER_BIBW)
        W(wb_results_attr_str(res, g, "send_buffers", "fresh"));
    if (tr->test == WB_TRANSFER_REDUCE || tr->test == WB_TRANSFER_ALLREDUCE) {
        W(wb_results_attr_str(res, g, "dtype", wb_transfer_dtype_names[t->dtype]));
        W(wb_results_attr_str(res, g, "op", wb_transfer_op_names[t->op]));
    }
    return rc;
}

/* The statistics datasets, all shaped like t_med. */
static int write_stats(struct wb_results *res, const char *g, const struct wb_transfer_summary *sm, int coll)
{
    const struct {
        const char *name;
        const double *v;
        const char *units;
    } f[] = {{"t_med", sm->t_med, "s"}, {"t_avg", sm->t_avg, "s"}, {"t_min", sm->t_min, "s"},
             {"t_max", sm->t_max, "s"}, {"t_p95", sm->t_p95, "s"}, {"cv", sm->cv, "1"},
             {"bandwidth_Bps", sm->bw, "B/s"}};
    uint64_t dims[2] = {(uint64_t)sm->S, (uint64_t)sm->C};
    char d[128];
    int rc = 0;
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        snprintf(d, sizeof d, "%s/%s", g, f[i].name);
        W(wb_results_write_f64(res, d, coll ? 1 : 2, dims, f[i].v, f[i].units));
    }
    int32_t *u = malloc(sm->med_n * sizeof *u);
    if (!u)
        return wb_error_set(WB_ENOMEM, "transfer: out of memory for the unstable flags");
    /* Only rank 0 summarized; the values of other ranks are not written. */
    for (size_t i = 0; i < sm->med_n; i++)
        u[i] = sm->unstable ? sm->unstable[i] : 0;
    snprintf(d, sizeof d, "%s/unstable", g);
    W(wb_results_write_i32(res, d, coll ? 1 : 2, dims, u, "1"));
    free(u);
    return rc;
}

/* /transfer/pairs_all or /transfer/pairs_shift: the N x N maps of the first p2p test. */
static int write_map(struct wb_transfer_run *r, const struct wb_transfer_test_run *tr,
                     const struct wb_transfer_summary *sm)
{
    struct wb_results *res = r->res;
    const char *g = tr->shifted ? "/transfer/pairs_shift" : "/transfer/pairs_all";
    uint64_t nd[2] = {(uint64_t)r->nranks, (uint64_t)r->nranks}, kd[1] = {(uint64_t)r->nnodes};
    char d[96];
    int rc = 0;
    W(wb_results_group(res, g));
    snprintf(d, sizeof d, "%s/latency_s", g);
    W(wb_results_write_f64(res, d, 2, nd, sm->lat_m, "s"));
    snprintf(d, sizeof d, "%s/bandwidth_Bps", g);
    W(wb_results_write_f64(res, d, 2, nd, sm->bw_m, "B/s"));
    W(wb_results_attr_i64(res, g, "latency_bytes", tr->bytes[sm->s_lat]));
    W(wb_results_attr_i64(res, g, "bandwidth_bytes", tr->bytes[sm->s_bw]));
    W(wb_results_attr_str(res, g, "test", wb_transfer_test_name(tr->test)));
    if (tr->shifted) {
        /* The raw samples too, so that the maps can be recomputed (pairs by round: r -> r+k). */
        uint64_t dims[3] = {(uint64_t)sm->S, (uint64_t)sm->R, (uint64_t)sm->C}, pdims[2] = {(uint64_t)tr->npairs, 2};
        snprintf(d, sizeof d, "%s/t", g);
        W(wb_results_write_f64(res, d, 3, dims, sm->t, "s"));
        snprintf(d, sizeof d, "%s/bytes", g);
        W(wb_results_write_i64(res, d, 1, dims, tr->bytes, "bytes"));
        snprintf(d, sizeof d, "%s/pairs", g);
        W(wb_results_write_i32(res, d, 2, pdims, sm->ids, "1"));
        W(wb_results_attr_i64(res, g, "rounds", tr->nunits));
        snprintf(d, sizeof d, "%s/node_ratio", g);
        W(wb_results_write_f64(res, d, 1, kd, sm->node_ratio, "1"));
    }
    return rc;
}

int wb_transfer_write_test(struct wb_transfer_run *r, const struct wb_transfer_test_run *tr,
                           const struct wb_transfer_summary *sm)
{
    struct wb_results *res = r->res;
    if (!res)
        return 0;
    int coll = tr->def->kind == WB_TRANSFER_KIND_COLL, n = r->nranks, rc = 0;
    char g[64], d[96];
    uint64_t dims[3] = {(uint64_t)sm->S, (uint64_t)sm->R, (uint64_t)sm->C};
    uint64_t pdims[2] = {(uint64_t)tr->npairs, 2}, odims[2] = {(uint64_t)tr->norders, (uint64_t)n};
    snprintf(g, sizeof g, "/transfer/%s", wb_transfer_test_name(tr->test));
    int map = tr->def->kind == WB_TRANSFER_KIND_P2P && (tr->nunits > 1 || tr->shifted);
    if (!tr->shifted) {
        W(write_attrs(r, tr, g));
#define DSET(name) (snprintf(d, sizeof d, "%s/%s", g, name), d)
        W(wb_results_write_i64(res, DSET("bytes"), 1, dims, tr->bytes, "bytes"));
        W(wb_results_write_i64(res, DSET("reps"), 1, dims, sm->reps, "count"));
        W(wb_results_write_f64(res, DSET("t"), 3, dims, sm->t, "s"));
        W(write_stats(res, g, sm, coll));
        if (tr->def->kind == WB_TRANSFER_KIND_P2P) {
            W(wb_results_write_i32(res, DSET("pairs"), 2, pdims, sm->ids, "1"));
            W(wb_results_write_i64(res, DSET("window"), 1, dims, sm->window, "count"));
            W(wb_results_write_i64(res, DSET("batch"), 1, dims, sm->batch, "count"));
        }
        if (tr->def->kind == WB_TRANSFER_KIND_RING)
            W(wb_results_write_i32(res, DSET("orders"), 2, odims, sm->ids, "1"));
#undef DSET
    }
    if (map && (tr->shifted || !r->pairs_all_written)) {
        W(write_map(r, tr, sm));
        r->pairs_all_written |= !tr->shifted;
    }
    if (sm->net) {
        snprintf(g, sizeof g, "/transfer/%s", tr->shifted ? "pairs_shift" : wb_transfer_test_name(tr->test));
        W(wb_results_write_net(res, g, sm->net, (size_t)n));
    }
    (void)rc;
    return wb_results_flush(res);
}

int wb_transfer_write_run(struct wb_transfer_run *r)
{
    struct wb_results *res = r->res;
    if (!res)
        return 0;
    const struct wb_transfer_plan *p = &r->plan;
    char cuts[sizeof p->cuts + 96];
    snprintf(cuts, sizeof cuts, "%s%s%s", p->cuts, *p->cuts && r->runtime_cut ? "; " : "",
             r->runtime_cut ? "repetitions cut while running (slower than the probe said)" : "");
    int rc = 0;
    W(wb_results_group(res, "/transfer"));
    W(wb_results_attr_f64(res, "/transfer", "time_budget_s", p->budget_s));
    W(wb_results_attr_f64(res, "/transfer", "estimated_s", p->est_s));
    W(wb_results_attr_f64(res, "/transfer", "elapsed_s", wb_timer_now_s() - r->t_start_s));
    W(wb_results_attr_str(res, "/transfer", "cuts", cuts));
    (void)rc;
    return wb_results_flush(res);
}
