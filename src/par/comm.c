#define _POSIX_C_SOURCE 200809L
#include "par/comm.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "core/exitnote.h"
#include "core/sysinfo.h"
#include "core/timer.h"

static MPI_Comm world = MPI_COMM_NULL;
static int my_rank, nranks = 1;
/* Facts that hold for the whole run, found once at init: every rank's hostname, the node map made
 * from them, and the MPI library's version line. */
static char *host_names;     /* [nranks][MPI_MAX_PROCESSOR_NAME] */
static int *node_of, node_count;
static int *node_size, *node_first, node_size_max; /* [node_count]: ranks on each node, its lowest rank */
static char library[MPI_MAX_LIBRARY_VERSION_STRING];
static wb_comm_sync_hook sync_hook;

void wb_comm_set_sync_hook(wb_comm_sync_hook hook) { sync_hook = hook; }

static void synced(void)
{
    if (sync_hook)
        sync_hook();
}

static int threads_provided = MPI_THREAD_SINGLE;
static const char *threads_bad; /* a WB_MPI_THREADS value that is neither single nor funneled */

/* The thread level asked of MPI. SINGLE by default, as OSU, IMB, NetPIPE and HPCC get from MPI_Init:
 * Open MPI 4.1 switches on its internal locks at any level above SINGLE, which adds about 0.08 us
 * to every shared-memory message (8 B pingpong 0.29 us against 0.21 us on this project's 2-core
 * VM), so a benchmark asking for FUNNELED reads slower than the tools it is compared with. The
 * watchdog and health threads never call MPI nor touch its memory; MPI sees one thread.
 * WB_MPI_THREADS=funneled asks for FUNNELED, the level the standard names for such a process, for
 * an MPI that needs it. */
static int threads_wanted(void)
{
    const char *v = getenv("WB_MPI_THREADS");
    if (!v || !*v || !strcmp(v, "single"))
        return MPI_THREAD_SINGLE;
    if (!strcmp(v, "funneled"))
        return MPI_THREAD_FUNNELED;
    threads_bad = v;
    return MPI_THREAD_SINGLE;
}

/* Ranks by host name, then by rank. */
static int by_host(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b, c = strcmp(wb_comm_hostname(x), wb_comm_hostname(y));
    return c ? c : (x > y) - (x < y);
}

/* Ranks on one hostname share a node, numbered by first appearance. Sorted, not compared pairwise,
 * so a rank per node costs N log N, not N^2, on every rank. Collective; one Allgather. */
static int map_nodes(void)
{
    char name[MPI_MAX_PROCESSOR_NAME] = {0};
    if (gethostname(name, sizeof name - 1) != 0)
        snprintf(name, sizeof name, "unknown");
    host_names = calloc((size_t)nranks, MPI_MAX_PROCESSOR_NAME);
    node_of = calloc((size_t)nranks, sizeof *node_of);
    int *order = malloc((size_t)nranks * sizeof *order);
    int rc = wb_comm_agree(host_names && node_of && order ? 0 : wb_error_set(WB_ENOMEM, "out of memory for host names"));
    if (rc == 0)
        rc = wb_comm_check(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, host_names, MPI_MAX_PROCESSOR_NAME,
                                         MPI_CHAR, world),
                           "MPI_Allgather of host names");
    if (rc == 0) {
        for (int r = 0; r < nranks; r++)
            order[r] = r;
        qsort(order, (size_t)nranks, sizeof *order, by_host);
        /* First each rank's first rank on its host, then, in rank order, that rank's node number. */
        for (int i = 0; i < nranks; i++)
            node_of[order[i]] = i > 0 && !strcmp(wb_comm_hostname(order[i - 1]), wb_comm_hostname(order[i]))
                                    ? node_of[order[i - 1]] : order[i];
        for (int r = 0; r < nranks; r++)
            node_of[r] = node_of[r] == r ? node_count++ : node_of[node_of[r]];
        node_size = calloc((size_t)node_count, sizeof *node_size);
        node_first = malloc((size_t)node_count * sizeof *node_first);
    }
    rc = wb_comm_agree(rc ? rc : node_size && node_first ? 0 : wb_error_set(WB_ENOMEM, "out of memory for the node map"));
    for (int r = nranks - 1; rc == 0 && r >= 0; r--) {
        node_first[node_of[r]] = r;
        node_size_max = ++node_size[node_of[r]] > node_size_max ? node_size[node_of[r]] : node_size_max;
    }
    free(order);
    return rc;
}

int wb_comm_init(int *argc, char ***argv)
{
    if (MPI_Init_thread(argc, argv, threads_wanted(), &threads_provided) != MPI_SUCCESS)
        return wb_error_set(WB_EMPI, "MPI_Init failed; check that mpirun works with a plain program");
    /* Errors are returned so each can be reported with what failed before stopping. */
    int rc = wb_comm_check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    if (rc == 0)
        rc = wb_comm_check(MPI_Comm_dup(MPI_COMM_WORLD, &world), "MPI_Comm_dup");
    if (rc == 0)
        rc = wb_comm_check(MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    if (rc == 0)
        rc = wb_comm_check(MPI_Comm_rank(world, &my_rank), "MPI_Comm_rank");
    if (rc == 0)
        rc = wb_comm_check(MPI_Comm_size(world, &nranks), "MPI_Comm_size");
    if (rc == 0) {
        int len = 0;
        rc = wb_comm_check(MPI_Get_library_version(library, &len), "MPI_Get_library_version");
        library[strcspn(library, "\n")] = '\0';
    }
    return rc ? rc : map_nodes();
}

int wb_comm_threads_check(void)
{
    return threads_bad ? wb_error_set(WB_EUSAGE, "WB_MPI_THREADS=%s: use single (the default) or funneled", threads_bad)
                       : 0;
}

const char *wb_comm_threads_name(void)
{
    switch (threads_provided) {
    case MPI_THREAD_SINGLE:
        return "single";
    case MPI_THREAD_FUNNELED:
        return "funneled";
    case MPI_THREAD_SERIALIZED:
        return "serialized";
    default:
        return "multiple";
    }
}

int wb_comm_finalize(void)
{
    free(host_names);
    free(node_of);
    free(node_size);
    free(node_first);
    host_names = NULL;
    node_of = NULL;
    node_size = node_first = NULL;
    int rc = world != MPI_COMM_NULL ? wb_comm_check(MPI_Comm_free(&world), "MPI_Comm_free") : 0;
    int frc = wb_comm_check(MPI_Finalize(), "MPI_Finalize");
    return rc ? rc : frc;
}

/* Seconds MPI_Abort may take before this process leaves by itself. */
#define ABORT_GRACE_S 5

static volatile sig_atomic_t abort_status;

static void abort_late(int sig)
{
    (void)sig;
    _exit(abort_status);
}

_Noreturn void wb_comm_abort(int exit_status)
{
    if (my_rank == 0)
        wb_exitnote_write(exit_status, "aborted");
    /* The launcher forwards a rank's output asynchronously and MPI_Abort tears its forwarders down:
     * rank 0's last lines (check's verdicts, the watchdog's naming of a node) get a moment to reach
     * the terminal first. */
    fflush(NULL);
    if (my_rank == 0) {
        struct timespec pause = {0, 200 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    /* MPI_Abort waits for the launcher, which may be waiting for a node it cannot reach: leave anyway
     * after a grace period. Nothing is left to report a failed MPI_Abort to either. */
    abort_status = exit_status;
    signal(SIGALRM, abort_late);
    alarm(ABORT_GRACE_S);
    MPI_Abort(MPI_COMM_WORLD, exit_status);
    _exit(exit_status);
}

int wb_comm_rank(void) { return my_rank; }

int wb_comm_size(void) { return nranks; }

MPI_Comm wb_comm_world(void) { return world; }

int wb_comm_check(int mpi_rc, const char *what)
{
    if (mpi_rc == MPI_SUCCESS)
        return 0;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(mpi_rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", mpi_rc);
    return wb_error_set(WB_EMPI, "%s failed: %s", what, text);
}

int wb_comm_agree(int rc)
{
    synced();
    int mine = rc ? my_rank : nranks, first = nranks;
    if (MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, world) != MPI_SUCCESS)
        return wb_error_set(WB_EMPI, "could not agree on the outcome between ranks");
    if (first == nranks)
        return 0;
    struct {
        int code;
        char msg[1000];
    } e = {0};
    if (my_rank == first) {
        e.code = rc;
        snprintf(e.msg, sizeof e.msg, "%s", wb_error_message());
    }
    if (MPI_Bcast(&e, sizeof e, MPI_BYTE, first, world) != MPI_SUCCESS)
        return wb_error_set(WB_EMPI, "could not share an error between ranks");
    if (my_rank != first) {
        if (first != 0 && strncmp(e.msg, "rank ", 5) != 0)
            wb_error_set(e.code, "rank %d: %s", first, e.msg);
        else
            wb_error_set(e.code, "%s", e.msg);
    } else if (first != 0) {
        char copy[1000];
        snprintf(copy, sizeof copy, "%s", e.msg);
        wb_error_set(e.code, "rank %d: %s", first, copy);
    }
    return e.code;
}

static int reduce(const void *in, void *out, MPI_Datatype type, MPI_Op op)
{
    return wb_comm_check(MPI_Allreduce(in, out, 1, type, op, world), "MPI_Allreduce");
}

int wb_comm_max_f64(double v, double *out) { return *out = v, reduce(&v, out, MPI_DOUBLE, MPI_MAX); }
int wb_comm_min_f64(double v, double *out) { return *out = v, reduce(&v, out, MPI_DOUBLE, MPI_MIN); }
int wb_comm_sum_f64(double v, double *out) { return *out = v, reduce(&v, out, MPI_DOUBLE, MPI_SUM); }
int wb_comm_sum_i64(int64_t v, int64_t *out) { return *out = v, reduce(&v, out, MPI_INT64_T, MPI_SUM); }
int wb_comm_max_i64(int64_t v, int64_t *out) { return *out = v, reduce(&v, out, MPI_INT64_T, MPI_MAX); }

int wb_comm_max_f64_n(double *v, size_t n)
{
    return wb_comm_check(MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_DOUBLE, MPI_MAX, world), "MPI_Allreduce");
}

int wb_comm_bcast(void *buf, size_t nbytes, int root)
{
    /* MPI counts are int: send large buffers in pieces. */
    char *p = buf;
    while (nbytes > 0) {
        int n = nbytes > (1u << 30) ? (1 << 30) : (int)nbytes;
        int rc = wb_comm_check(MPI_Bcast(p, n, MPI_BYTE, root, world), "MPI_Bcast");
        if (rc)
            return rc;
        p += n;
        nbytes -= (size_t)n;
    }
    return 0;
}

int wb_comm_bcast_str(char *s, size_t cap)
{
    int len = my_rank == 0 ? (int)strnlen(s, cap - 1) : 0;
    int rc = wb_comm_check(MPI_Bcast(&len, 1, MPI_INT, 0, world), "MPI_Bcast");
    if (rc)
        return rc;
    rc = wb_comm_bcast(s, (size_t)len, 0);
    s[len] = '\0';
    return rc;
}

int wb_comm_gather_f64(double v, double *out)
{
    return wb_comm_check(MPI_Gather(&v, 1, MPI_DOUBLE, out, 1, MPI_DOUBLE, 0, world), "MPI_Gather");
}

int wb_comm_gather_f64_n(const double *v, size_t n, double *out)
{
    return wb_comm_check(MPI_Gather(v, (int)n, MPI_DOUBLE, out, (int)n, MPI_DOUBLE, 0, world), "MPI_Gather");
}

int wb_comm_gather_i64(int64_t v, int64_t *out) { return wb_comm_gather_i64_n(&v, 1, out); }

int wb_comm_gather_i64_n(const int64_t *v, size_t n, int64_t *out)
{
    return wb_comm_check(MPI_Gather(v, (int)n, MPI_INT64_T, out, (int)n, MPI_INT64_T, 0, world), "MPI_Gather");
}

const int *wb_comm_node_map(int *nnodes)
{
    if (nnodes)
        *nnodes = node_count;
    return node_of;
}

int wb_comm_node_ranks(int node) { return node_size && node >= 0 && node < node_count ? node_size[node] : 0; }

int wb_comm_node_first(int node) { return node_first && node >= 0 && node < node_count ? node_first[node] : -1; }

int wb_comm_node_ranks_max(void) { return node_size_max; }

const char *wb_comm_hostname(int rank)
{
    return host_names && rank >= 0 && rank < nranks ? host_names + (size_t)rank * MPI_MAX_PROCESSOR_NAME : "unknown";
}

const char *wb_comm_library_version(void) { return library; }

int wb_comm_split_node(MPI_Comm *node, int *root_local)
{
    int rc = wb_comm_check(MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, my_rank, MPI_INFO_NULL, node),
                           "MPI_Comm_split_type");
    if (rc)
        return rc;
    /* Ranks are keyed by world rank, so world rank 0, where present, is local rank 0. */
    int lowest = my_rank;
    rc = wb_comm_check(MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, *node), "MPI_Allreduce");
    *root_local = rc == 0 && lowest == 0 ? 0 : -1;
    return rc;
}

int wb_comm_barrier(void)
{
    synced();
    return wb_comm_check(MPI_Barrier(world), "MPI_Barrier");
}

int wb_comm_shm_maps(const struct wb_comm_shm_group *g, int q) { return g->mapped && g->mapped[q]; }

int wb_comm_shm_group_init(struct wb_comm_shm_group *g)
{
    memset(g, 0, sizeof *g);
    g->node = MPI_COMM_NULL;
    g->root_local = -1;
    g->mapped = calloc((size_t)nranks, sizeof *g->mapped);
    int rc = g->mapped ? wb_comm_split_node(&g->node, &g->root_local) : wb_error_set(WB_ENOMEM, "out of memory");
    int me = rc == 0 && g->root_local >= 0;
    if (rc == 0)
        rc = wb_comm_check(MPI_Allgather(&me, 1, MPI_INT, g->mapped, 1, MPI_INT, world), "MPI_Allgather");
    for (int q = 1; rc == 0 && q < nranks; q++)
        g->any |= g->mapped[q];
    return wb_comm_agree(rc);
}

int wb_comm_shm_group_free(struct wb_comm_shm_group *g)
{
    int rc = g->node != MPI_COMM_NULL ? wb_comm_check(MPI_Comm_free(&g->node), "MPI_Comm_free (node)") : 0;
    free(g->mapped);
    g->mapped = NULL;
    return rc;
}

int wb_comm_shm_alloc(struct wb_comm_shm *b, const struct wb_comm_shm_group *g, int64_t bytes)
{
    char *mine = NULL;
    b->ptr = NULL;
    b->win = MPI_WIN_NULL;
    int rc = wb_comm_check(MPI_Win_allocate_shared(my_rank == 0 ? (MPI_Aint)bytes : 0, 1, MPI_INFO_NULL, g->node,
                                                   &mine, &b->win),
                           "MPI_Win_allocate_shared");
    if (rc == 0 && my_rank == 0)
        b->ptr = mine;
    if (rc == 0 && my_rank != 0 && g->mapped[my_rank]) {
        MPI_Aint size;
        int unit;
        rc = wb_comm_check(MPI_Win_shared_query(b->win, g->root_local, &size, &unit, &b->ptr), "MPI_Win_shared_query");
    }
    /* One passive epoch for the buffer's life; MPI_Win_sync orders the plain loads and stores. */
    if (rc == 0)
        rc = wb_comm_check(MPI_Win_lock_all(MPI_MODE_NOCHECK, b->win), "MPI_Win_lock_all");
    return wb_comm_agree(rc);
}

int wb_comm_shm_sync(const struct wb_comm_shm *b)
{
    return b->win == MPI_WIN_NULL ? 0 : wb_comm_check(MPI_Win_sync(b->win), "MPI_Win_sync");
}

int wb_comm_shm_free(struct wb_comm_shm *b)
{
    int rc = 0;
    if (b->win != MPI_WIN_NULL) {
        rc = wb_comm_check(MPI_Win_unlock_all(b->win), "MPI_Win_unlock_all");
        int frc = wb_comm_check(MPI_Win_free(&b->win), "MPI_Win_free");
        rc = rc ? rc : frc;
    }
    b->ptr = NULL;
    b->win = MPI_WIN_NULL;
    return rc;
}

int wb_comm_gather_hosts(struct wb_host **all, int *nnodes)
{
    struct wb_host me;
    wb_sysinfo_read(&me);
    return wb_comm_gather_these_hosts(&me, all, nnodes);
}

int wb_comm_gather_these_hosts(const struct wb_host *mine, struct wb_host **all, int *nnodes)
{
    struct wb_host me = *mine;
    me.rank = my_rank;
    *all = NULL;
    *nnodes = 0;
    me.node = node_of[my_rank];
    int rc = 0;
    if (my_rank == 0 && !(*all = calloc((size_t)nranks, sizeof **all)))
        rc = wb_error_set(WB_ENOMEM, "out of memory for the host table");
    rc = wb_comm_agree(rc);
    if (rc == 0)
        rc = wb_comm_check(MPI_Gather(&me, sizeof me, MPI_BYTE, *all, sizeof me, MPI_BYTE, 0, world),
                           "MPI_Gather of host facts");
    if (rc) {
        free(*all);
        *all = NULL;
        return rc;
    }
    *nnodes = node_count;
    return 0;
}

int wb_comm_wait_until(MPI_Request *r, MPI_Status *st, double deadline_abs_s, double poll_s, const char *what)
{
    struct wb_timer_backoff idle = {0, poll_s};
    MPI_Status ignored;
    for (;;) {
        int flag = 0;
        int rc = wb_comm_check(MPI_Test(r, &flag, st ? st : &ignored), what);
        if (rc || flag)
            return rc;
        if (wb_timer_now_s() > deadline_abs_s) {
            rc = wb_comm_check(MPI_Cancel(r), "MPI_Cancel");
            rc = rc ? rc : wb_comm_check(MPI_Request_free(r), "MPI_Request_free");
            if (rc)
                return rc;
            return wb_error_set(WB_ETIMEOUT, "%s: no answer in time; a rank stopped responding", what);
        }
        wb_timer_backoff_wait(&idle, deadline_abs_s);
    }
}

/* One probe of peer: the round trip and the offset it suggests. */
static int clock_probe(const struct wb_comm_clock *k, int peer, double timeout_s, double *rtt_s, double *offset_s)
{
    double ping = 0, pong = 0;
    MPI_Request r[2];
    double deadline = wb_timer_now_s() + timeout_s;
    int rc = wb_comm_check(MPI_Irecv(&pong, 1, MPI_DOUBLE, peer, k->tag_pong, k->comm, &r[1]),
                           "MPI_Irecv (clock probe)");
    if (rc)
        return rc;
    double ta = wb_timer_now_s();
    rc = wb_comm_check(MPI_Isend(&ping, 1, MPI_DOUBLE, peer, k->tag_ping, k->comm, &r[0]), "MPI_Isend (clock probe)");
    if (rc == 0)
        rc = wb_comm_wait_until(&r[0], MPI_STATUS_IGNORE, deadline, 0, "clock probe to a peer");
    if (rc == 0)
        rc = wb_comm_wait_until(&r[1], MPI_STATUS_IGNORE, deadline, 0, "clock probe answer from a peer");
    double tb = wb_timer_now_s();
    *rtt_s = tb - ta;
    *offset_s = pong - 0.5 * (ta + tb);
    return rc;
}

int wb_comm_clock_offsets(const struct wb_comm_clock *k, int first, int n, double timeout_s, double *offset_s)
{
    double t0 = wb_timer_now_s();
    int rc = 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        double best_rtt = INFINITY;
        offset_s[i] = 0;
        for (int p = 0; rc == 0 && p < k->nprobe; p++) {
            double rtt, off;
            rc = clock_probe(k, first + i, timeout_s, &rtt, &off);
            if (rc == 0 && rtt < best_rtt) {
                best_rtt = rtt;
                offset_s[i] = off;
            }
        }
    }
    wb_timer_part_add(WB_TIMER_ALIGN, wb_timer_now_s() - t0);
    return rc;
}

int wb_comm_clock_answer(const struct wb_comm_clock *k, int root, double timeout_s, double poll_s)
{
    double deadline = wb_timer_now_s() + timeout_s;
    int rc = 0;
    for (int p = 0; p < k->nprobe && rc == 0; p++) {
        double ping, pong;
        MPI_Request r;
        rc = wb_comm_check(MPI_Irecv(&ping, 1, MPI_DOUBLE, root, k->tag_ping, k->comm, &r), "MPI_Irecv (clock probe)");
        rc = rc ? rc : wb_comm_wait_until(&r, MPI_STATUS_IGNORE, deadline, poll_s, "clock probe from the root");
        pong = wb_timer_now_s();
        rc = rc ? rc : wb_comm_check(MPI_Isend(&pong, 1, MPI_DOUBLE, root, k->tag_pong, k->comm, &r),
                                     "MPI_Isend (clock probe)");
        rc = rc ? rc : wb_comm_wait_until(&r, MPI_STATUS_IGNORE, deadline, poll_s, "clock probe answer");
    }
    return rc;
}
