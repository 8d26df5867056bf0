#define _DEFAULT_SOURCE
#include "bench/check/bench_check_int.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "par/comm.h"
#include "core/error.h"
#include "core/sysfs.h"
#include "fftw/fft.h"
#include "par/hostfacts.h"
#include "bench/options.h"
#include "bench/check/options_check.h"
#include "io/results.h"
#include "core/timer.h"

#ifndef WB_VERSION
#define WB_VERSION "unknown"
#endif

/* Tags on the world communicator; nothing else runs beside check. The exchange's round r uses
 * TAG_XCHG + r. */
enum { TAG_ADDR = 7101, TAG_FACT, TAG_GO, TAG_PING, TAG_PONG, TAG_REPORT, TAG_FINAL, TAG_XCHG = 7200 };
/* Wait for r until deadline: 1 done, 0 not in time (r left active), or WB_EMPI. spin: no sleeping,
 * for the timed exchange. */
static int wait_one(MPI_Request *r, double deadline_s, int spin, const char *what)
{
    struct wb_timer_backoff idle = {0, spin ? 0 : 2e-3};
    for (;;) {
        int flag = 0;
        int rc = wb_comm_check(MPI_Test(r, &flag, MPI_STATUS_IGNORE), what);
        if (rc)
            return rc;
        if (flag)
            return 1;
        if (wb_timer_now_s() > deadline_s)
            return 0;
        wb_timer_backoff_wait(&idle, deadline_s);
    }
}

/* A peer whose partner went silent: say so and stop every rank. */
static _Noreturn void peer_gives_up(const char *what, double timeout_s)
{
    fprintf(stderr, "wulfbench: rank %d: error: check: %s within %.0f s; rank 0 or a link to it stopped answering\n",
            wb_comm_rank(), what, timeout_s);
    fflush(stderr);
    wb_comm_abort(1);
}

/* What rank 0 sends each peer first: its addresses, and the token it left in each --io-dir. */
struct root_msg {
    int32_t n;
    uint32_t addr[WB_HOSTFACTS_MAX_ADDRS];
    char token[24];
};

static void read_fact(struct wb_check_fact *f, const struct root_msg *root, const struct wb_check_opts *k)
{
    memset(f, 0, sizeof *f);
    wb_check_storage_read(k, root->token, f);
    wb_sysinfo_read(&f->h);
    f->h.rank = wb_comm_rank();
    wb_hostfacts_read(&f->h, root->addr, root->n, wb_fft_version(), wb_results_hdf5_version());
    snprintf(f->version, sizeof f->version, "%s", WB_VERSION);
    f->mem_avail_bytes = wb_sysinfo_mem_available();
    int64_t total = wb_sysfs_meminfo_bytes("SwapTotal"), free_bytes = wb_sysfs_meminfo_bytes("SwapFree");
    f->swap_used_bytes = total >= 0 && free_bytes >= 0 ? total - free_bytes : -1;
    unsigned long flags = 0;
    f->throttle_flags = wb_sysinfo_throttle_flags(&flags) == 0 ? (int64_t)flags : -1;
    f->real_minus_wtime_s = wb_timer_real_minus_now_s();
    f->candidates = wb_hostfacts_candidates();
    const char *inc = getenv("OMPI_MCA_btl_tcp_if_include");
    snprintf(f->if_include, sizeof f->if_include, "%s", inc ? inc : "");
}

/* One round of shifted pairs per shift 1..n-1, 1 MiB each way, every pair of a round at once; a barrier
 * (nonblocking, with the deadline) starts each round, so a slow round does not skew the next.
 * t_recv[r] is this rank's receive time of round r (NaN if it did not finish). 1 all done, 0 ran out
 * of time, or WB_EMPI. */
static int exchange(double deadline_s, double *t_recv, char *sbuf, char *rbuf)
{
    int n = wb_comm_size(), me = wb_comm_rank();
    MPI_Comm w = wb_comm_world();
    for (int r = 0; r < n; r++)
        t_recv[r] = NAN;
    for (int r = 1; r < n; r++) {
        MPI_Request b, q[2];
        int rc = wb_comm_check(MPI_Ibarrier(w, &b), "MPI_Ibarrier (check exchange)");
        rc = rc ? rc : wait_one(&b, deadline_s, 1, "MPI_Ibarrier (check exchange)");
        if (rc <= 0)
            return rc;
        double t0 = wb_timer_now_s();
        rc = wb_comm_check(MPI_Irecv(rbuf, WB_CHECK_MSG_BYTES, MPI_BYTE, (me - r + n) % n, TAG_XCHG + r, w, &q[0]),
                           "MPI_Irecv (check exchange)");
        rc = rc ? rc
                : wb_comm_check(MPI_Isend(sbuf, WB_CHECK_MSG_BYTES, MPI_BYTE, (me + r) % n, TAG_XCHG + r, w, &q[1]),
                                "MPI_Isend (check exchange)");
        rc = rc ? rc : wait_one(&q[0], deadline_s, 1, "MPI_Irecv (check exchange)");
        if (rc == 1)
            t_recv[r] = wb_timer_now_s() - t0;
        rc = rc <= 0 ? rc : wait_one(&q[1], deadline_s, 1, "MPI_Isend (check exchange)");
        if (rc <= 0)
            return rc;
    }
    return 1;
}

#ifdef WB_TEST_FAULTS
/* Test-only: WB_FAULT_CHECK_STOP_RANK=R stops rank R (SIGSTOP) as the exchange begins, R:facts before
 * it sends its facts. */
static void fault_stop(const char *phase)
{
    const char *v = getenv("WB_FAULT_CHECK_STOP_RANK");
    const char *colon = v ? strchr(v, ':') : NULL;
    if (v && atoi(v) == wb_comm_rank() && !strcmp(colon ? colon + 1 : "exchange", phase))
        raise(SIGSTOP);
}
#else
static void fault_stop(const char *phase) { (void)phase; }
#endif

/* A peer's side: answer each of rank 0's steps within the deadline, or stop the job. */
static int run_peer(const struct wb_check_opts *opts, double timeout_s, char *sbuf, char *rbuf)
{
    MPI_Comm w = wb_comm_world();
    double t_start = wb_timer_now_s();
    struct root_msg root;
    MPI_Request r;
    int rc = wb_comm_check(MPI_Irecv(&root, sizeof root, MPI_BYTE, 0, TAG_ADDR, w, &r), "MPI_Irecv (check)");
    rc = rc ? rc : wait_one(&r, t_start + timeout_s, 0, "MPI_Irecv (check addresses)");
    if (rc == 0)
        peer_gives_up("rank 0 sent no addresses", timeout_s);
    if (rc < 0)
        return rc;
    struct wb_check_fact f;
    fault_stop("facts");
    read_fact(&f, &root, opts);
    rc = wb_comm_check(MPI_Isend(&f, sizeof f, MPI_BYTE, 0, TAG_FACT, w, &r), "MPI_Isend (check facts)");
    rc = rc ? rc : wait_one(&r, t_start + timeout_s, 0, "MPI_Isend (check facts)");
    if (rc == 0)
        peer_gives_up("rank 0 took no facts", timeout_s);
    if (rc < 0)
        return rc;
    struct wb_comm_clock k = {w, TAG_PING, TAG_PONG, 10};
    rc = wb_comm_clock_answer(&k, 0, timeout_s, 1e-3);
    if (rc == WB_ETIMEOUT)
        peer_gives_up("rank 0 made no clock probes", timeout_s);
    double budget_s = 0;
    rc = rc ? rc : wb_comm_check(MPI_Irecv(&budget_s, 1, MPI_DOUBLE, 0, TAG_GO, w, &r), "MPI_Irecv (check)");
    rc = rc ? rc : wait_one(&r, t_start + timeout_s, 0, "MPI_Irecv (check start)");
    if (rc == 0)
        peer_gives_up("rank 0 did not start the exchange", timeout_s);
    if (rc < 0)
        return rc;
    double t_go = wb_timer_now_s();
    fault_stop("exchange");
    int n = wb_comm_size();
    double *rep = calloc((size_t)n, sizeof *rep);
    if (!rep)
        return wb_error_set(WB_ENOMEM, "out of memory for the check exchange");
    rc = exchange(t_go + 0.5 * budget_s, rep, sbuf, rbuf);
    rc = rc < 0 ? rc : wb_comm_check(MPI_Isend(rep, n, MPI_DOUBLE, 0, TAG_REPORT, w, &r), "MPI_Isend (check)");
    rc = rc ? rc : wait_one(&r, t_go + budget_s + timeout_s, 0, "MPI_Isend (check report)");
    free(rep);
    if (rc == 0)
        peer_gives_up("rank 0 took no exchange report", timeout_s);
    if (rc < 0)
        return rc;
    int32_t verdict = 0;
    rc = wb_comm_check(MPI_Irecv(&verdict, 1, MPI_INT32_T, 0, TAG_FINAL, w, &r), "MPI_Irecv (check)");
    rc = rc ? rc : wait_one(&r, wb_timer_now_s() + timeout_s, 0, "MPI_Irecv (check verdict)");
    if (rc == 0)
        peer_gives_up("rank 0 sent no verdict", timeout_s);
    return rc < 0 ? rc : 0;
}

/* Rank 0: receive one message per peer into buf + q * size until deadline; got[q] says which came. */
static int gather_until(void *buf, int size, MPI_Datatype type, size_t elem, int tag, int *got, double deadline_s,
                        const int *skip)
{
    int n = wb_comm_size(), rc = 0;
    MPI_Request *r = calloc((size_t)n, sizeof *r);
    if (!r)
        return wb_error_set(WB_ENOMEM, "out of memory for the check");
    for (int q = 1; q < n && rc == 0; q++) {
        r[q] = MPI_REQUEST_NULL;
        if (!skip || !skip[q])
            rc = wb_comm_check(MPI_Irecv((char *)buf + (size_t)q * (size_t)size * elem, size, type, q, tag,
                                         wb_comm_world(), &r[q]),
                               "MPI_Irecv (check)");
    }
    struct wb_timer_backoff idle = {0, 2e-3};
    int pending = 1;
    while (rc == 0 && pending) {
        pending = 0;
        for (int q = 1; q < n && rc == 0; q++) {
            int flag = 0;
            if (r[q] == MPI_REQUEST_NULL)
                continue;
            rc = wb_comm_check(MPI_Test(&r[q], &flag, MPI_STATUS_IGNORE), "MPI_Test (check)");
            got[q] = flag;
            pending |= !flag;
        }
        if (pending && wb_timer_now_s() > deadline_s)
            break;
        if (pending)
            wb_timer_backoff_wait(&idle, deadline_s);
    }
    /* Requests still open stay so until the job ends: the caller stops it. */
    free(r);
    return rc;
}

/* Rank 0: print what it knows, naming who did not answer, and stop every rank. */
static _Noreturn void root_gives_up(struct wb_check_view *v, const int *got, const char *step)
{
    v->got = got;
    v->step = step;
    wb_check_print(v);
    fprintf(stderr, "wulfbench: error: check: %s\n", v->missing);
    fflush(stderr);
    wb_comm_abort(1);
}

/* Rank 0: each rank that answered gets its node, numbered by hostname in rank order. */
static void number_nodes(struct wb_check_view *v)
{
    for (int q = 0; q < v->nranks; q++) {
        /* A rank that did not answer has no host to count. */
        v->node[q] = v->answered[q] ? q : -1;
        if (!v->answered[q])
            continue;
        for (int p = 0; p < q; p++)
            if (v->answered[p] && !strcmp(v->fact[p].h.hostname, v->fact[q].h.hostname)) {
                v->node[q] = v->node[p];
                break;
            }
        if (v->node[q] == q)
            v->node[q] = v->nnodes++;
        v->fact[q].h.node = v->node[q];
    }
}

/* Rank 0: each peer's wall clock against its own, by probes until deadline; a peer that does not
 * answer them stops the job. 0 or an error. */
static int probe_clocks(struct wb_check_view *v, double deadline)
{
    int n = v->nranks, rc = 0;
    struct wb_comm_clock k = {wb_comm_world(), TAG_PING, TAG_PONG, 10};
    v->clock_s[0] = 0;
    for (int q = 1; q < n && rc == 0; q++) {
        double off = NAN;
        rc = wb_comm_clock_offsets(&k, q, 1, fmax(deadline - wb_timer_now_s(), 0.1), &off);
        if (rc == WB_ETIMEOUT) {
            int *got = calloc((size_t)n, sizeof *got);
            for (int p = 0; got && p < n; p++)
                got[p] = p != q;
            root_gives_up(v, got ? got : v->answered, "to clock probes");
        }
        /* The Wtime offset the load timelines use, turned into wall-clock time with each side's
         * realtime - Wtime difference: a node whose clock is off shows here. */
        v->clock_s[q] = off + v->fact[q].real_minus_wtime_s - v->fact[0].real_minus_wtime_s;
    }
    return rc;
}

/* Rank 0: its part of the exchange within half the budget, then every peer's receive times within
 * 0.7 of it; a peer that does not report stops the job. 0 or an error. */
static int root_exchange(struct wb_check_view *v, double budget, char *sbuf, char *rbuf)
{
    int n = v->nranks;
    double t_go = wb_timer_now_s();
    int rc = exchange(t_go + 0.5 * budget, v->t_recv_s, sbuf, rbuf);
    v->reported[0] = 1;
    rc = rc < 0 ? rc
                : gather_until(v->t_recv_s, n, MPI_DOUBLE, sizeof(double), TAG_REPORT, v->reported,
                               t_go + 0.7 * budget, NULL);
    if (rc)
        return rc;
    v->exchanged = 1;
    for (int q = 1; q < n; q++)
        if (!v->reported[q]) {
            root_gives_up(v, v->reported, "during the exchange");
        }
    return 0;
}

static int run_root(const struct wb_options *o, struct wb_check_view *v, char *sbuf, char *rbuf)
{
    int n = v->nranks, rc = 0;
    MPI_Comm w = wb_comm_world();
    double t_start = wb_timer_now_s(), deadline = t_start + 0.85 * v->timeout_s;
    struct root_msg root = {0, {0}, ""};
    root.n = wb_hostfacts_local_addrs(root.addr, WB_HOSTFACTS_MAX_ADDRS);
    wb_check_storage_token(root.token, sizeof root.token);
    wb_check_storage_tokens(v->k, root.token, 1);
    MPI_Request *sends = calloc((size_t)n, sizeof *sends);
    if (!sends)
        return wb_error_set(WB_ENOMEM, "out of memory for the check");
    /* Small messages: they go out eagerly, and are freed at once so a stopped peer cannot hold rank 0. */
    for (int q = 1; q < n && rc == 0; q++) {
        rc = wb_comm_check(MPI_Isend(&root, sizeof root, MPI_BYTE, q, TAG_ADDR, w, &sends[q]), "MPI_Isend (check)");
        rc = rc ? rc : wb_comm_check(MPI_Request_free(&sends[q]), "MPI_Request_free (check)");
    }
    read_fact(&v->fact[0], &root, v->k);
    v->answered[0] = 1;
    rc = rc ? rc : gather_until(v->fact, sizeof v->fact[0], MPI_BYTE, 1, TAG_FACT, v->answered, deadline, NULL);
    /* Every rank that answers has looked for the token by now; a late one is named as silent. */
    wb_check_storage_tokens(v->k, root.token, 0);
    if (rc)
        goto out;
    number_nodes(v);
    for (int q = 1; q < n; q++)
        if (!v->answered[q]) {
            root_gives_up(v, v->answered, "with its facts");
        }
    rc = probe_clocks(v, deadline);
    double budget = fmax(deadline - wb_timer_now_s(), 0.5);
    for (int q = 1; q < n && rc == 0; q++) {
        rc = wb_comm_check(MPI_Isend(&budget, 1, MPI_DOUBLE, q, TAG_GO, w, &sends[q]), "MPI_Isend (check)");
        rc = rc ? rc : wb_comm_check(MPI_Request_free(&sends[q]), "MPI_Request_free (check)");
    }
    rc = rc || n == 1 ? rc : root_exchange(v, budget, sbuf, rbuf);
    if (rc)
        goto out;
    wb_check_print(v);
    int32_t verdict = v->nfail > 0;
    for (int q = 1; q < n && rc == 0; q++) {
        rc = wb_comm_check(MPI_Isend(&verdict, 1, MPI_INT32_T, q, TAG_FINAL, w, &sends[q]), "MPI_Isend (check)");
        rc = rc ? rc : wait_one(&sends[q], wb_timer_now_s() + v->timeout_s, 0, "MPI_Isend (check verdict)");
        if (rc == 1)
            rc = 0;
    }
out:
    free(sends);
    return rc;
}

int wb_bench_check_run(const struct wb_options *o, struct wb_results *res)
{
    int n = wb_comm_size(), rc = 0;
    double timeout_s = o->common.timeout_s > 0 ? o->common.timeout_s : WB_CHECK_DEFAULT_TIMEOUT_S;
    char *sbuf = malloc(WB_CHECK_MSG_BYTES), *rbuf = malloc(WB_CHECK_MSG_BYTES);
    if (!sbuf || !rbuf) {
        free(sbuf);
        free(rbuf);
        return wb_error_set(WB_ENOMEM, "out of memory for the check exchange");
    }
    memset(sbuf, 0x5a, WB_CHECK_MSG_BYTES);
    if (wb_comm_rank() != 0) {
        rc = run_peer(wb_check_opts_of(o), timeout_s, sbuf, rbuf);
    } else {
        struct wb_check_view v = {.o = o, .k = wb_check_opts_of(o), .nranks = n, .timeout_s = timeout_s};
        v.fact = calloc((size_t)n, sizeof *v.fact);
        v.answered = calloc((size_t)n, sizeof *v.answered);
        v.node = calloc((size_t)n, sizeof *v.node);
        v.clock_s = calloc((size_t)n, sizeof *v.clock_s);
        v.t_recv_s = calloc((size_t)n * (size_t)n, sizeof *v.t_recv_s);
        v.reported = calloc((size_t)n, sizeof *v.reported);
        if (!v.fact || !v.answered || !v.node || !v.clock_s || !v.t_recv_s || !v.reported)
            rc = wb_error_set(WB_ENOMEM, "out of memory for the check");
        for (int q = 0; rc == 0 && q < n; q++)
            v.clock_s[q] = NAN;
        rc = rc ? rc : run_root(o, &v, sbuf, rbuf);
        if (rc == 0 && (v.nfail || (wb_check_opts_of(o)->strict && v.nwarn)))
            rc = wb_error_set(WB_EINPUT, "check: %d failed, %d warning%s%s: the cluster is not ready (see above)",
                              v.nfail, v.nwarn, v.nwarn == 1 ? "" : "s", wb_check_opts_of(o)->strict ? " (--strict)" : "");
        free(v.fact);
        free(v.answered);
        free(v.node);
        free(v.clock_s);
        free(v.t_recv_s);
        free(v.reported);
    }
    free(sbuf);
    free(rbuf);
    return rc;
}
