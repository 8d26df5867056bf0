#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/transfer/bench_transfer_int.h"
#include "par/comm.h"
#include "core/error.h"
#include "core/report.h"
#include "core/sysinfo.h"
#include "core/timer.h"

/* Part of the available memory the buffers may take: the OS and MPI need the rest. */
#define MEM_SHARE 0.8
/* Fewest recorded repetitions the budget leaves before it cuts sizes. */
#define REPS_FLOOR 3
/* The probe: round trips at 8 B and at 1 MiB between rank 0 and a peer. */
#define PROBE_SMALL 20
#define PROBE_LARGE 3
#define PROBE_LARGE_BYTES (1 << 20)
enum { TAG_PROBE = 7201 };

int wb_transfer_window_at(const struct wb_transfer_opts *t, int64_t bytes)
{
    if (t->window_bytes <= 0)
        return t->window;
    int64_t w = t->window_bytes / (bytes > 0 ? bytes : 1);
    return w < 1 ? 1 : w < t->window ? (int)w : t->window;
}

int64_t wb_transfer_test_cols(const struct wb_transfer_run *r, int test)
{
    const struct wb_transfer_opts *t = r->t;
    int64_t n = r->nranks;
    switch (wb_transfer_tests[test].kind) {
    case WB_TRANSFER_KIND_P2P:
        return t->pairs_mode == WB_TRANSFER_PAIRS_ALL || t->pairs_mode == WB_TRANSFER_PAIRS_SHIFT ? n * (n - 1)
               : t->pairs_mode == WB_TRANSFER_PAIRS_LIST ? t->npairs : 1;
    case WB_TRANSFER_KIND_RING:
        return 1 + t->random_orders;
    default:
        return n;
    }
}

/* Median one-way time of k round trips of `bytes` between rank 0 and peer (rank 0's view). Collective. */
static int probe_pair(int peer, int bytes, int k, unsigned char *buf, double *t_oneway_s)
{
    MPI_Comm comm = wb_comm_world();
    int me = wb_comm_rank(), rc = wb_comm_barrier();
    double t[PROBE_SMALL + 1];
    for (int j = 0; j <= k && rc == 0 && (me == 0 || me == peer); j++) {
        double t0 = wb_timer_now_s();
        int other = me == 0 ? peer : 0;
        if (me == 0) {
            rc = wb_comm_check(MPI_Send(buf, bytes, MPI_BYTE, other, TAG_PROBE, comm), "MPI_Send");
            if (rc == 0)
                rc = wb_comm_check(MPI_Recv(buf, bytes, MPI_BYTE, other, TAG_PROBE, comm, MPI_STATUS_IGNORE),
                                   "MPI_Recv");
        } else {
            rc = wb_comm_check(MPI_Recv(buf, bytes, MPI_BYTE, other, TAG_PROBE, comm, MPI_STATUS_IGNORE), "MPI_Recv");
            if (rc == 0)
                rc = wb_comm_check(MPI_Send(buf, bytes, MPI_BYTE, other, TAG_PROBE, comm), "MPI_Send");
        }
        /* The first round trip is a warm-up. */
        if (j > 0)
            t[j - 1] = (wb_timer_now_s() - t0) / 2;
    }
    /* The mean, since a duration is a sum: a busy host's stalls count. */
    double sum = 0;
    for (int j = 0; j < k; j++)
        sum += t[j];
    *t_oneway_s = me == 0 ? sum / k : NAN;
    return wb_comm_agree(rc);
}

/* Latency and bandwidth from rank 0 to a rank on its node [0] and on another node [1]. Collective. */
static int probe(struct wb_transfer_run *r)
{
    struct wb_transfer_plan *p = &r->plan;
    double t0 = wb_timer_now_s();
    unsigned char *buf = calloc(PROBE_LARGE_BYTES, 1);
    int rc = wb_comm_agree(buf ? 0 : wb_error_set(WB_ENOMEM, "transfer: out of memory for the probe"));
    for (int c = 0; c < 2; c++) {
        p->probe_peer[c] = -1;
        p->lat_s[c] = p->bw_Bps[c] = NAN;
        for (int q = 1; q < r->nranks && p->probe_peer[c] < 0; q++)
            if ((r->node[q] == r->node[0]) == (c == 0))
                p->probe_peer[c] = q;
        if (rc || p->probe_peer[c] < 0)
            continue;
        double small = NAN, large = NAN;
        rc = probe_pair(p->probe_peer[c], 8, PROBE_SMALL, buf, &small);
        if (rc == 0)
            rc = probe_pair(p->probe_peer[c], PROBE_LARGE_BYTES, PROBE_LARGE, buf, &large);
        p->lat_s[c] = small;
        p->bw_Bps[c] = PROBE_LARGE_BYTES / (large > 2 * small ? large - small : large);
    }
    if (rc == 0) {
        /* Barriers as they run now: on a busy host their stalls dominate short points. */
        double b0 = wb_timer_now_s();
        for (int k = 0; k < PROBE_SMALL && rc == 0; k++)
            rc = wb_comm_barrier();
        p->barrier_s = (wb_timer_now_s() - b0) / PROBE_SMALL;
        rc = wb_comm_agree(rc);
    }
    if (rc == 0 && r->nranks == 1) {
        /* One rank: collectives only, on this host's memory. */
        unsigned char *dst = calloc(PROBE_LARGE_BYTES, 1);
        double m0 = wb_timer_now_s();
        for (int k = 0; dst && k < 4; k++)
            memcpy(dst, buf, PROBE_LARGE_BYTES);
        p->lat_s[0] = 1e-6;
        p->bw_Bps[0] = dst ? 4.0 * PROBE_LARGE_BYTES / fmax(wb_timer_now_s() - m0, 1e-9) : 1e9;
        free(dst);
    }
    free(buf);
    p->probe_s = wb_timer_now_s() - t0;
    return rc;
}

/* The link a pair uses: 0 within a node, 1 between nodes; the slower one that exists for -1:-1. */
static int link_of(const struct wb_transfer_run *r, int a, int b)
{
    const struct wb_transfer_plan *p = &r->plan;
    if (a < 0)
        return isnan(p->lat_s[1]) ? 0 : 1;
    int c = r->node[a] == r->node[b] ? 0 : 1;
    return isnan(p->lat_s[c]) ? 1 - c : c;
}

/* Estimated seconds of one repetition of test at bytes over link c, barrier included. */
static double rep_model(const struct wb_transfer_run *r, int test, int64_t bytes, int c, int shifted)
{
    const struct wb_transfer_plan *p = &r->plan;
    double L = p->lat_s[c], B = p->bw_Bps[c], b = (double)bytes, n = r->nranks;
    double lg = n > 1 ? ceil(log2(n)) : 0, Lw = p->lat_s[link_of(r, -1, -1)], one = L + b / B;
    double barrier = fmax(2 * lg * Lw, p->barrier_s);
    int w = wb_transfer_window_at(r->t, bytes);
    switch (test) {
    case WB_TRANSFER_PINGPONG: {
        int k = wb_transfer_batch_for(one, wb_timer_tick_s());
        return barrier + 2 * L + 2 * k * one * (shifted ? 1.5 : 1);
    }
    case WB_TRANSFER_BW:
    case WB_TRANSFER_BIBW: return barrier + 3 * L + w * b / B;
    case WB_TRANSFER_RING: return barrier + 2 * L + b / B;
    case WB_TRANSFER_BARRIER: return 2 * barrier;
    case WB_TRANSFER_SCATTER:
    case WB_TRANSFER_GATHER:
    case WB_TRANSFER_ALLGATHER: return barrier + lg * L + (n - 1) * b / B;
    case WB_TRANSFER_ALLTOALL: return barrier + (n - 1) * one;
    case WB_TRANSFER_ALLREDUCE: return barrier + 2 * lg * one;
    default: return barrier + lg * one;
    }
}

/* Bytes of buffers one rank needs for test at bytes. */
static double need_bytes(const struct wb_transfer_run *r, int test, int64_t bytes, int shifted)
{
    size_t sb, rb;
    wb_transfer_buffers(test, bytes, r->nranks, wb_transfer_window_at(r->t, bytes), r->t->pp_method, shifted, &sb,
                        &rb);
    return (double)sb + (double)rb;
}

/* The sizes of a test: as given, one size 0 for barrier, whole elements for reductions, and (with
 * default sizes) none beyond the memory allowance. WB_EUSAGE for given sizes beyond it. */
static int plan_sizes(struct wb_transfer_run *r, int test, double allow, struct wb_transfer_plan_test *pt)
{
    const struct wb_transfer_opts *t = r->t;
    int elem = test == WB_TRANSFER_REDUCE || test == WB_TRANSFER_ALLREDUCE ? wb_transfer_elem_bytes(t->dtype) : 1;
    const char *name = wb_transfer_test_name(test);
    pt->nsizes = 0;
    for (int s = 0; s < (test == WB_TRANSFER_BARRIER ? 1 : t->nsizes); s++) {
        int64_t b = test == WB_TRANSFER_BARRIER ? 0 : t->sizes_bytes[s] / elem * elem;
        if (test != WB_TRANSFER_BARRIER && b == 0)
            continue;
        double need = need_bytes(r, test, b, 0);
        if (need > allow && t->sizes_given)
            return wb_error_set(WB_EUSAGE,
                                "--sizes: %s needs about %.0f MiB per rank at %lld bytes, more than the %.0f MiB "
                                "allowed (%s); give smaller --sizes%s",
                                name, need / 1048576.0, (long long)b, allow / 1048576.0,
                                t->mem_limit_bytes ? "-M" : "80% of the available memory over this host's ranks",
                                test == WB_TRANSFER_BW || test == WB_TRANSFER_BIBW ? " or --window-bytes" : "");
        if (need > allow) {
            size_t len = strlen(r->plan.cuts);
            snprintf(r->plan.cuts + len, sizeof r->plan.cuts - len, "%s%s: %lld bytes and up (memory)",
                     len ? "; " : "", name, (long long)b);
            break;
        }
        pt->bytes[pt->nsizes++] = b;
    }
    return 0;
}

/* Estimates every size of pt: seconds per repetition over all units, the fixed part, planned reps. */
static void plan_estimate(const struct wb_transfer_run *r, int test, int shifted, struct wb_transfer_plan_test *pt)
{
    const struct wb_transfer_opts *t = r->t;
    const struct wb_transfer_testdef *def = &wb_transfer_tests[test];
    int n = r->nranks, seq = def->kind == WB_TRANSFER_KIND_P2P && !shifted && pt->units > 1;
    double lg = n > 1 ? ceil(log2(n)) : 0, Lw = r->plan.lat_s[link_of(r, -1, -1)];
    double point_overhead = 8 * fmax(2 * lg * Lw, r->plan.barrier_s) + 2e-4;
    for (int s = 0; s < pt->nsizes; s++) {
        int64_t b = pt->bytes[s];
        int first_link = def->kind == WB_TRANSFER_KIND_P2P && !shifted && t->pairs_mode == WB_TRANSFER_PAIRS_FIRST
                             ? link_of(r, 0, 1) : link_of(r, -1, -1);
        double first = rep_model(r, test, b, first_link, shifted), sum = 0;
        for (int u = 0; u < pt->units; u++) {
            int a = seq ? u / (n - 1) : 0, k = seq ? u % (n - 1) : 0;
            int bb = k >= a ? k + 1 : k;
            sum += seq ? rep_model(r, test, b, link_of(r, a, bb), 0) : first;
        }
        pt->t_rep_s[s] = sum;
        int reps = t->iters;
        double cal = 0;
        if (!reps) {
            reps = (int)fmin(fmax(ceil(t->time_per_size_s / first), t->iters_min), t->iters_max);
            cal = fmin(10, fmax(1, ceil(0.1 * t->time_per_size_s / first)));
        }
        pt->reps[s] = pt->reps_cap[s] = reps;
        pt->fixed_s[s] = r->o->common.warmup * sum + cal * first + pt->units * point_overhead +
                         (test == WB_TRANSFER_PINGPONG ? 3 * first : 0) + need_bytes(r, test, b, shifted) / 2e9;
    }
    if (pt->nsizes)
        pt->fixed_s[0] += 0.02;
}

static int reps_at(const struct wb_transfer_plan *p, int reps, double f, int floor)
{
    int lo = reps < floor ? reps : floor, v = (int)(reps * f);
    return v > lo ? v : lo;
}

/* Estimated seconds of the plan with repetitions scaled by f, at least floor each. */
static double plan_cost(struct wb_transfer_plan *p, double f, int floor, int commit)
{
    double total = 0;
    for (int k = 0; k <= WB_TRANSFER_NTESTS; k++) {
        struct wb_transfer_plan_test *pt = &p->test[k];
        for (int s = 0; pt->on && s < pt->nsizes; s++) {
            int reps = reps_at(p, pt->reps[s], f, floor);
            double est = pt->fixed_s[s] + pt->t_rep_s[s] * reps;
            if (commit) {
                pt->reps_cap[s] = reps;
                pt->est_s[s] = est;
            }
            total += est;
        }
    }
    return total;
}

/* The largest scale of the repetitions, at least floor each, that fits; -1 if none does. */
static double fit_reps(struct wb_transfer_plan *p, double avail, int floor)
{
    if (plan_cost(p, 1, floor, 0) <= avail)
        return 1;
    if (plan_cost(p, 0, floor, 0) > avail)
        return -1;
    double lo = 0, hi = 1;
    for (int i = 0; i < 40; i++) {
        double mid = (lo + hi) / 2;
        if (plan_cost(p, mid, floor, 0) <= avail)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Drops the costliest largest size of any test that has more than one; 0 if none can go. */
static int drop_size(struct wb_transfer_plan *p, char *cuts, size_t cap)
{
    int best = -1;
    double cost = -1;
    for (int k = 0; k <= WB_TRANSFER_NTESTS; k++) {
        struct wb_transfer_plan_test *pt = &p->test[k];
        if (!pt->on || pt->nsizes < 2)
            continue;
        int s = pt->nsizes - 1;
        double c = pt->fixed_s[s] + pt->t_rep_s[s] * reps_at(p, pt->reps[s], 0, p->reps_floor);
        if (c > cost) {
            cost = c;
            best = k;
        }
    }
    if (best < 0)
        return 0;
    struct wb_transfer_plan_test *pt = &p->test[best];
    size_t len = strlen(cuts);
    snprintf(cuts + len, cap - len, "%s%s%s: %lld bytes", len ? "; " : "", best == WB_TRANSFER_SHIFT ? "shift " : "",
             wb_transfer_test_name(best == WB_TRANSFER_SHIFT ? p->map_test : best),
             (long long)pt->bytes[pt->nsizes - 1]);
    pt->nsizes--;
    return 1;
}

/* Cuts repetitions, then the largest sizes, then repetitions to 1, until the plan fits; records what.
 * WB_EUSAGE when one repetition of every test at its smallest size does not fit. Rank 0. */
static int fit_budget(struct wb_transfer_run *r)
{
    struct wb_transfer_plan *p = &r->plan;
    double avail = p->budget_s - p->probe_s;
    char sizes[512] = "";
    p->reps_floor = REPS_FLOOR;
    double f = p->budget_s > 0 ? fit_reps(p, avail, p->reps_floor) : 1;
    while (f < 0 && drop_size(p, sizes, sizeof sizes))
        f = fit_reps(p, avail, p->reps_floor);
    if (f < 0) {
        p->reps_floor = 1;
        f = fit_reps(p, avail, 1);
    }
    if (f < 0) {
        double least = plan_cost(p, 0, 1, 0) + p->probe_s;
        return wb_error_set(WB_EUSAGE,
                            "--time-budget %g s is too small: one repetition of each test at its smallest size "
                            "takes about %.2g s here; give --time-budget %.0f or more, or fewer --tests or pairs",
                            p->budget_s, least, ceil(least * 1.2));
    }
    p->est_s = plan_cost(p, f, p->reps_floor, 1) + p->probe_s;
    size_t len = strlen(p->cuts);
    if (f < 1)
        len += (size_t)snprintf(p->cuts + len, sizeof p->cuts - len, "%srepetitions cut to %.0f%% of the plan "
                                "(at least %d per size)", len ? "; " : "", 100 * f, p->reps_floor);
    if (*sizes && len < sizeof p->cuts)
        snprintf(p->cuts + len, sizeof p->cuts - len, "%ssizes dropped: %s", len ? "; " : "", sizes);
    return 0;
}

/* The per-rank memory allowance: 80% of the host's available memory over its ranks, at most -M. Collective. */
static int mem_allowance(const struct wb_transfer_run *r, double *allow)
{
    int on_node = 0;
    for (int q = 0; q < r->nranks; q++)
        on_node += r->node[q] == r->node[r->rank];
    int64_t avail = wb_sysinfo_mem_available();
    double mine = avail > 0 ? MEM_SHARE * (double)avail / on_node : INFINITY;
    if (r->t->mem_limit_bytes > 0 && (double)r->t->mem_limit_bytes < mine)
        mine = (double)r->t->mem_limit_bytes;
    return wb_comm_check(MPI_Allreduce(&mine, allow, 1, MPI_DOUBLE, MPI_MIN, wb_comm_world()), "MPI_Allreduce");
}

/* Rank 0: which tests run, their sizes, units and estimates. */
static int plan_tests(struct wb_transfer_run *r, double allow)
{
    struct wb_transfer_plan *p = &r->plan;
    const struct wb_transfer_opts *t = r->t;
    int n = r->nranks, rc = 0;
    p->map_test = -1;
    for (int k = 0; k < WB_TRANSFER_NTESTS && rc == 0; k++) {
        struct wb_transfer_plan_test *pt = &p->test[k];
        pt->on = ((t->tests >> k) & 1u) && wb_transfer_tests[k].min_ranks <= n;
        if (!pt->on)
            continue;
        rc = plan_sizes(r, k, allow, pt);
        pt->units = 1;
        if (wb_transfer_tests[k].kind == WB_TRANSFER_KIND_RING)
            pt->units = 1 + t->random_orders;
        if (wb_transfer_tests[k].kind == WB_TRANSFER_KIND_P2P &&
            (t->pairs_mode == WB_TRANSFER_PAIRS_ALL || t->pairs_mode == WB_TRANSFER_PAIRS_SHIFT)) {
            pt->units = n * (n - 1);
            if (p->map_test < 0)
                p->map_test = k;
        }
        pt->on = pt->nsizes > 0;
        plan_estimate(r, k, 0, pt);
    }
    struct wb_transfer_plan_test *sh = &p->test[WB_TRANSFER_SHIFT];
    if (rc == 0 && t->pairs_mode == WB_TRANSFER_PAIRS_SHIFT && p->map_test >= 0) {
        *sh = p->test[p->map_test];
        sh->units = n - 1;
        for (int s = 0; s < sh->nsizes && rc == 0; s++)
            if (need_bytes(r, p->map_test, sh->bytes[s], 1) > allow)
                sh->nsizes = s;
        plan_estimate(r, p->map_test, 1, sh);
    }
    return rc;
}

int wb_transfer_plan_make(struct wb_transfer_run *r)
{
    struct wb_transfer_plan *p = &r->plan;
    memset(p, 0, sizeof *p);
    p->budget_s = r->t->time_budget_s;
    double allow = INFINITY;
    int rc = mem_allowance(r, &allow);
    if (rc == 0)
        rc = probe(r);
    if (rc == 0 && r->rank == 0 && (rc = plan_tests(r, allow)) == 0)
        rc = fit_budget(r);
    rc = wb_comm_agree(rc);
    if (rc == 0)
        rc = wb_comm_bcast(p, sizeof *p, 0);
    for (int k = 0; k <= WB_TRANSFER_NTESTS; k++)
        r->tests_total += p->test[k].on;
    return rc;
}

int wb_transfer_plan_reps(struct wb_transfer_run *r, const struct wb_transfer_test_run *tr, int s, int want)
{
    const struct wb_transfer_plan *p = &r->plan;
    int n = want < tr->plan->reps_cap[s] ? want : tr->plan->reps_cap[s];
    double now = wb_timer_now_s(), done = r->est_done_s, total = p->est_s - p->probe_s;
    /* The probe can mislead (a link that slows under load): scale by the pace measured so far. */
    if (p->budget_s > 0 && done > 0.05 * total && done < total) {
        double pace = (now - r->t_measure_s) / done, left = p->budget_s - (now - r->t_start_s);
        double need = (total - done) * pace;
        if (need > left) {
            int m = (int)(n * fmax(left, 0) / need), floor = p->reps_floor < n ? p->reps_floor : n;
            m = m < floor ? floor : m;
            if (m < n) {
                n = m;
                r->runtime_cut = 1;
            }
        }
    }
    return n < 1 ? 1 : n;
}

/* "8, 65536, 1048576" or "1 to 4194304 (23 sizes)". */
static void sizes_text(const struct wb_transfer_plan_test *pt, char *out, size_t cap)
{
    if (pt->nsizes > 4) {
        snprintf(out, cap, "%lld to %lld bytes (%d sizes)", (long long)pt->bytes[0],
                 (long long)pt->bytes[pt->nsizes - 1], pt->nsizes);
        return;
    }
    size_t len = 0;
    out[0] = '\0';
    for (int s = 0; s < pt->nsizes && len < cap; s++)
        len += (size_t)snprintf(out + len, cap - len, "%s%lld", s ? ", " : "", (long long)pt->bytes[s]);
    if (len < cap)
        snprintf(out + len, cap - len, " bytes");
}

static void print_probe(const struct wb_transfer_run *r)
{
    const struct wb_transfer_plan *p = &r->plan;
    static const char *const where[] = {"same node", "another node"};
    for (int c = 0; c < 2; c++)
        if (p->probe_peer[c] >= 0)
            wb_transfer_say(r, "# probe: rank 0 -> %d (%s): %.2f us at 8 bytes, %.1f MB/s at 1 MiB\n",
                            p->probe_peer[c], where[c], p->lat_s[c] * 1e6, p->bw_Bps[c] / 1e6);
}

void wb_transfer_plan_print(const struct wb_transfer_run *r)
{
    const struct wb_transfer_plan *p = &r->plan;
    const struct wb_transfer_opts *t = r->t;
    char iters[96];
    if (t->iters)
        snprintf(iters, sizeof iters, "%d repetitions per size", t->iters);
    else
        snprintf(iters, sizeof iters, "auto repetitions (%g s per size, %d to %d)", t->time_per_size_s, t->iters_min,
                 t->iters_max);
    wb_transfer_say(r, "# wulfbench transfer: %d rank%s on %d node%s; %s; %d warm-up; times in microseconds, "
                       "MB/s = 1e6 bytes/s%s\n",
                    r->nranks, r->nranks == 1 ? "" : "s", r->nnodes, r->nnodes == 1 ? "" : "s", iters,
                    r->o->common.warmup, t->validate ? "; every received buffer is validated" : "");
    print_probe(r);
    for (int k = 0; k <= WB_TRANSFER_NTESTS; k++) {
        const struct wb_transfer_plan_test *pt = &p->test[k];
        if (!pt->on)
            continue;
        char sizes[160];
        double est = 0;
        int lo = 1 << 30, hi = 0;
        sizes_text(pt, sizes, sizeof sizes);
        for (int s = 0; s < pt->nsizes; s++) {
            est += pt->est_s[s];
            lo = pt->reps_cap[s] < lo ? pt->reps_cap[s] : lo;
            hi = pt->reps_cap[s] > hi ? pt->reps_cap[s] : hi;
        }
        char reps[48];
        if (lo == hi)
            snprintf(reps, sizeof reps, "%s%d", t->iters ? "" : "about ", lo);
        else
            snprintf(reps, sizeof reps, "%s%d to %d", t->iters ? "" : "about ", lo, hi);
        wb_transfer_say(r, "# plan: %s%s: %s; %d unit%s (%s); %s repetitions; about %.1f s\n",
                        k == WB_TRANSFER_SHIFT ? "shift " : "",
                        wb_transfer_test_name(k == WB_TRANSFER_SHIFT ? p->map_test : k), sizes, pt->units,
                        pt->units == 1 ? "" : "s",
                        k == WB_TRANSFER_SHIFT ? "concurrent rounds" : pt->units > 1 && k != WB_TRANSFER_RING
                                                                           ? "pairs in turn" : k == WB_TRANSFER_RING
                                                                           ? "orders" : "at once",
                        reps, est);
    }
    if (p->budget_s > 0)
        wb_transfer_say(r, "# estimate: %.3g s of the %.3g s budget (probe %.2g s)%s\n", p->est_s, p->budget_s,
                        p->probe_s, t->dry_run ? "; dry run, nothing measured" : "");
    else
        wb_transfer_say(r, "# estimate: %.3g s, no budget (probe %.2g s)%s\n", p->est_s, p->probe_s,
                        t->dry_run ? "; dry run, nothing measured" : "");
    if (*p->cuts)
        wb_transfer_say(r, "# cut to fit: %s\n", p->cuts);
    if (t->format == WB_TRANSFER_FMT_TABLE)
        wb_report_printf("\n");
}

void wb_transfer_progress(struct wb_transfer_run *r, const struct wb_transfer_test_run *tr, int test_done)
{
    if (r->rank != 0)
        return;
    double total = r->plan.est_s - r->plan.probe_s, elapsed = wb_timer_now_s() - r->t_measure_s;
    double frac = total > 0 ? fmin(r->est_done_s / total, 1) : 1;
    const char *name = wb_transfer_test_name(tr->test);
    char what[64];
    snprintf(what, sizeof what, "transfer %s%s", tr->shifted ? "shift " : "", name);
    if (!test_done) {
        wb_report_progress(what, frac, elapsed);
        return;
    }
    r->tests_done++;
    /* Without a terminal a log still shows progress: one line per finished test. */
    if (r->o->common.quiet || r->o->common.progress == WB_PROGRESS_NEVER || isatty(STDERR_FILENO))
        return;
    double left = frac > 0 ? elapsed * (1 - frac) / frac : NAN;
    fprintf(stderr, "# progress: %s done (%d of %d), %.0f s elapsed, about %.0f s left\n", what, r->tests_done,
            r->tests_total, elapsed, left);
    fflush(stderr);
}
