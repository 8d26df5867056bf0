#define _GNU_SOURCE
#include "par/watchdog.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "core/exitnote.h"
#include "par/comm.h"

#define MAX_ADDRS 8
#define BEAT_S 0.5      /* heartbeat period */
#define SILENT_S 2.5    /* a rank not heard from for this long is named as silent */
#define ROOT_GRACE_S 3  /* rank 0 fires this long after --timeout: the run's own check goes first */
#define PEER_GRACE_S 7  /* other ranks fire later, only if rank 0 could not end the job */

struct beat {
    uint64_t nonce;
    int32_t rank;
    int32_t unused;
    int64_t syncs;
    char host[64];  /* so rank 0 can name the node of a rank that falls silent */
    char activity[WB_WATCHDOG_ACTIVITY_CAP]; /* and what it was doing */
};

struct where {
    uint64_t nonce;
    int32_t port, naddr;
    uint32_t addr[MAX_ADDRS]; /* network order */
};

static struct {
    pthread_t thread;
    int running, rank, nranks, sock, pipe_rd, pipe_wr;
    double t0_s, timeout_s, stall_s;
    wb_watchdog_close_fn close_file;
    struct where at;
    double *heard_s; /* rank 0: when each rank was last heard from, 0 never */
    int64_t *syncs;  /* rank 0: the last sync point each rank reported */
    char (*host)[64]; /* rank 0: each rank's host name from its heartbeats, "" never heard */
    char (*activity)[WB_WATCHDOG_ACTIVITY_CAP]; /* rank 0: each rank's activity from its heartbeats */
    char my_host[64];
} wd = {.sock = -1, .pipe_rd = -1, .pipe_wr = -1};

static atomic_llong n_syncs, last_sync_ns;
static atomic_int stopping, signalled;
/* The activity under a sequence lock: odd while the main thread writes it, so a reader retries. */
static char activity[WB_WATCHDOG_ACTIVITY_CAP];
static atomic_uint activity_seq;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void wb_watchdog_sync(void)
{
    atomic_fetch_add(&n_syncs, 1);
    atomic_store(&last_sync_ns, (long long)(now_s() * 1e9));
}

void wb_watchdog_set_activity(const char *what)
{
    atomic_fetch_add(&activity_seq, 1);
    atomic_thread_fence(memory_order_seq_cst);
    snprintf(activity, sizeof activity, "%s", what ? what : "");
    atomic_thread_fence(memory_order_seq_cst);
    atomic_fetch_add(&activity_seq, 1);
}

/* This rank's activity into out[WB_WATCHDOG_ACTIVITY_CAP]; "" when the writer kept changing it. */
static void read_activity(char *out)
{
    out[0] = 0;
    for (int tries = 0; tries < 100; tries++) {
        unsigned before = atomic_load(&activity_seq);
        if (before & 1)
            continue;
        atomic_thread_fence(memory_order_seq_cst);
        memcpy(out, activity, WB_WATCHDOG_ACTIVITY_CAP);
        atomic_thread_fence(memory_order_seq_cst);
        if (atomic_load(&activity_seq) == before) {
            out[WB_WATCHDOG_ACTIVITY_CAP - 1] = 0;
            return;
        }
    }
    out[0] = 0;
}

static void on_signal(int sig)
{
    /* A second Ctrl-C (or TERM) stops at once; _exit and write are async-signal-safe. */
    if (atomic_exchange(&signalled, sig))
        _exit(128 + sig);
    unsigned char b = (unsigned char)sig;
    if (wd.pipe_wr >= 0 && write(wd.pipe_wr, &b, 1) < 0)
        _exit(128 + sig);
}

/* One line on stderr without stdio, whose locks the blocked main thread may hold. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    if (write(STDERR_FILENO, line, (size_t)n) < 0)
        return;
}

static size_t list_ranks(char *out, size_t cap, const char *head, const int *pick)
{
    size_t len = 0;
    for (int q = 0; q < wd.nranks && len < cap; q++)
        if (pick[q])
            len += (size_t)snprintf(out + len, cap - len, "%s %d%s%s%s", len ? "," : head, q,
                                    wd.host[q][0] ? " (" : "", wd.host[q], wd.host[q][0] ? ")" : "");
    return len;
}

/* Rank 0: "rank 1 had not reached sync point 12; silent for 9 s (stopped or cut off): rank 1". */
static void describe_ranks(char *out, size_t cap)
{
    int64_t last = atomic_load(&n_syncs);
    int heard_any = 0, behind[wd.nranks], silent[wd.nranks], nbehind = 0, nsilent = 0;
    for (int q = 1; q < wd.nranks; q++) {
        last = wd.syncs[q] > last ? wd.syncs[q] : last;
        heard_any |= wd.heard_s[q] > 0;
    }
    double now = now_s(), quiet_s = 0;
    for (int q = 0; q < wd.nranks; q++) {
        behind[q] = (q == 0 ? atomic_load(&n_syncs) : wd.syncs[q]) < last;
        silent[q] = q > 0 && heard_any && now - wd.heard_s[q] > SILENT_S;
        if (silent[q] && now - wd.heard_s[q] > quiet_s)
            quiet_s = now - wd.heard_s[q];
        nbehind += behind[q];
        nsilent += silent[q];
    }
    size_t len = 0;
    if (nbehind) {
        len = list_ranks(out, cap, nbehind > 1 ? "ranks" : "rank", behind);
        len += (size_t)snprintf(out + len, cap - len, " had not reached sync point %lld", (long long)last);
        /* What the first rank behind was doing: at one sync point the ranks behind do the same. */
        char own[WB_WATCHDOG_ACTIVITY_CAP];
        int first = 0;
        while (!behind[first])
            first++;
        if (first == 0)
            read_activity(own);
        const char *doing = first == 0 ? own : wd.activity[first];
        if (*doing && len < cap)
            len += (size_t)snprintf(out + len, cap - len, " during %s", doing);
    } else {
        len = (size_t)snprintf(out, cap, "every rank had reached sync point %lld", (long long)last);
    }
    if (nsilent && len < cap) {
        len += (size_t)snprintf(out + len, cap - len, "; no heartbeat for %.0f s (stopped or cut off) from", quiet_s);
        list_ranks(out + len, cap - len, nsilent > 1 ? " ranks" : " rank", silent);
    } else if (!heard_any && len < cap) {
        snprintf(out + len, cap - len, "; no heartbeat arrived, so a stopped rank cannot be named");
    }
}

/* Close the file as status and end this process with exit_status; rank 0 only writes. */
static _Noreturn void finish(const char *status, int exit_status, const char *why)
{
    if (wd.rank != 0) {
        say("wulfbench: rank %d: error: %s; rank 0 did not end the run, so this rank stops", wd.rank, why);
        _exit(exit_status);
    }
    char path[4200] = "", ranks[1024] = "";
    int points = 0;
    if (wd.nranks > 1 && !strcmp(status, "timeout")) {
        describe_ranks(ranks, sizeof ranks);
    } else if (!strcmp(status, "timeout")) {
        char own[WB_WATCHDOG_ACTIVITY_CAP];
        read_activity(own);
        if (*own)
            snprintf(ranks, sizeof ranks, "rank 0 (%s) was in %s", wd.my_host, own);
    }
    double wait_s = !strcmp(status, "interrupted") ? 0.7 : 3.0;
    int rc = wd.close_file ? wd.close_file(status, wait_s, path, sizeof path, &points) : 2;
    /* No file open: the main thread may have just closed it and be on its way out; let it go. */
    int on_thread = wd.running && pthread_equal(pthread_self(), wd.thread);
    for (int i = 0; on_thread && rc == 2 && i < 50; i++) {
        if (atomic_load(&stopping))
            pthread_exit(NULL);
        usleep(100000);
    }
    char file[4400];
    if (rc == 0)
        snprintf(file, sizeof file, "%d point%s in %s (status %s)", points, points == 1 ? " is" : "s are", path,
                 status);
    else if (rc == 1)
        snprintf(file, sizeof file, "the result file could not be closed (HDF5 stayed busy); the points flushed "
                                    "before are readable in %s", path);
    else if (rc == -1)
        snprintf(file, sizeof file, "%s", wb_error_message());
    else
        snprintf(file, sizeof file, "no result file was open");
    say("wulfbench: error: %s%s%s; %s", why, *ranks ? "; " : "", ranks, file);
    wb_exitnote_write(exit_status, status);
    _exit(exit_status);
}

static void check_signal(void)
{
    unsigned char b;
    if (read(wd.pipe_rd, &b, 1) != 1)
        return;
    char why[64];
    snprintf(why, sizeof why, "interrupted by %s", b == SIGINT ? "SIGINT" : "SIGTERM");
    if (wd.rank != 0) {
        /* Rank 0 gets the same signal from mpirun and is closing the file; give it that time. */
        for (int i = 0; i < 20 && !atomic_load(&stopping); i++)
            usleep(100000);
        _exit(128 + b);
    }
    finish("interrupted", 128 + b, why);
}

static void send_beat(void)
{
    struct beat m = {wd.at.nonce, wd.rank, 0, atomic_load(&n_syncs), "", ""};
    memcpy(m.host, wd.my_host, sizeof m.host);
    read_activity(m.activity);
    for (int i = 0; i < wd.at.naddr; i++) {
        struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)wd.at.port)};
        to.sin_addr.s_addr = wd.at.addr[i];
        sendto(wd.sock, &m, sizeof m, MSG_DONTWAIT, (struct sockaddr *)&to, sizeof to);
    }
}

static void read_beats(void)
{
    struct beat m;
    while (recv(wd.sock, &m, sizeof m, MSG_DONTWAIT) == (ssize_t)sizeof m)
        if (m.nonce == wd.at.nonce && m.rank > 0 && m.rank < wd.nranks) {
            wd.heard_s[m.rank] = now_s();
            wd.syncs[m.rank] = m.syncs;
            m.host[sizeof m.host - 1] = 0;
            memcpy(wd.host[m.rank], m.host, sizeof m.host);
            m.activity[sizeof m.activity - 1] = 0;
            memcpy(wd.activity[m.rank], m.activity, sizeof m.activity);
        }
}

static void *run(void *arg)
{
    double next_beat = 0;
    char why[256];
    while (!atomic_load(&stopping)) {
        struct pollfd p[2] = {{wd.pipe_rd, POLLIN, 0}, {wd.sock, POLLIN, 0}};
        poll(p, wd.sock >= 0 && wd.rank == 0 ? 2 : 1, 200);
        if (atomic_load(&stopping))
            break;
        if (p[0].revents & POLLIN)
            check_signal();
        double now = now_s();
        if (wd.sock >= 0 && wd.rank == 0)
            read_beats();
        else if (wd.sock >= 0 && now >= next_beat) {
            send_beat();
            next_beat = now + BEAT_S;
        }
        double grace = wd.rank == 0 ? ROOT_GRACE_S : PEER_GRACE_S;
        if (wd.timeout_s > 0 && now - wd.t0_s > wd.timeout_s + grace) {
            snprintf(why, sizeof why, "--timeout of %g s passed and the run could not stop by itself", wd.timeout_s);
            finish("timeout", wb_error_exit_status(WB_ETIMEOUT), why);
        }
        double idle = now - 1e-9 * (double)atomic_load(&last_sync_ns);
        if (wd.stall_s > 0 && idle > wd.stall_s + (wd.rank == 0 ? 0 : PEER_GRACE_S)) {
            snprintf(why, sizeof why, "no progress for %.0f s (--stall-timeout %g s)", idle, wd.stall_s);
            finish("timeout", wb_error_exit_status(WB_ETIMEOUT), why);
        }
    }
    return arg;
}

/* Rank 0: a UDP socket for heartbeats and the addresses the others can reach it at. */
static int open_root_socket(int one_node)
{
    wd.sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in me = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(one_node ? INADDR_LOOPBACK : INADDR_ANY)};
    socklen_t len = sizeof me;
    if (wd.sock < 0 || bind(wd.sock, (struct sockaddr *)&me, sizeof me) != 0 ||
        getsockname(wd.sock, (struct sockaddr *)&me, &len) != 0)
        return -1;
    wd.at.port = ntohs(me.sin_port);
    if (one_node) {
        wd.at.addr[wd.at.naddr++] = htonl(INADDR_LOOPBACK);
        return 0;
    }
    struct ifaddrs *ifs = NULL, *i;
    if (getifaddrs(&ifs) != 0)
        return -1;
    for (i = ifs; i && wd.at.naddr < MAX_ADDRS; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET) {
            uint32_t a = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
            if (a != htonl(INADDR_LOOPBACK))
                wd.at.addr[wd.at.naddr++] = a;
        }
    freeifaddrs(ifs);
    return 0;
}

/* Heartbeats are only for naming the rank that stopped; without them the watchdog still works. */
static int setup_beats(void)
{
    int nnodes;
    wb_comm_node_map(&nnodes);
    if (wd.rank == 0) {
        wd.at.nonce = (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL) ^ (uint64_t)(now_s() * 1e9);
        wd.heard_s = calloc((size_t)wd.nranks, sizeof *wd.heard_s);
        wd.syncs = calloc((size_t)wd.nranks, sizeof *wd.syncs);
        wd.host = calloc((size_t)wd.nranks, sizeof *wd.host);
        wd.activity = calloc((size_t)wd.nranks, sizeof *wd.activity);
        if (!wd.heard_s || !wd.syncs || !wd.host || !wd.activity)
            return wb_error_set(WB_ENOMEM, "out of memory");
        if (wd.nranks > 1 && open_root_socket(nnodes == 1) != 0) {
            if (wd.sock >= 0)
                close(wd.sock);
            wd.sock = -1;
            wd.at.naddr = 0;
        }
    }
    int rc = wb_comm_bcast(&wd.at, sizeof wd.at, 0);
    if (rc == 0 && wd.rank != 0 && wd.at.naddr > 0)
        wd.sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    return rc;
}

int wb_watchdog_start(double timeout_s, double stall_s, wb_watchdog_close_fn close_file)
{
    wd.close_file = close_file;
    wd.rank = wb_comm_rank();
    wd.nranks = wb_comm_size();
    wd.timeout_s = timeout_s;
    wd.stall_s = stall_s;
    wd.t0_s = now_s();
    if (gethostname(wd.my_host, sizeof wd.my_host - 1) != 0)
        wd.my_host[0] = 0;
    wb_watchdog_sync();
    int fds[2];
    int rc = pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0 ? 0 : wb_error_set(WB_EIO, "pipe: %s", strerror(errno));
    if (rc == 0) {
        wd.pipe_rd = fds[0];
        wd.pipe_wr = fds[1];
    }
    rc = wb_comm_agree(rc ? rc : setup_beats());
    if (rc)
        return rc;
    struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* The thread takes no signals, so the handler runs in a thread that may be inside MPI and only writes. */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    rc = pthread_create(&wd.thread, NULL, run, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0)
        rc = wb_error_set(WB_EIO, "cannot start the watchdog thread: %s", strerror(rc));
    wd.running = rc == 0;
    return wb_comm_agree(rc);
}

_Noreturn void wb_watchdog_end(const char *why)
{
    char line[1024];
    snprintf(line, sizeof line, "%s", why);
    finish("failed", wb_error_exit_status(WB_ESTOPPED), line);
}

void wb_watchdog_stop(void)
{
    if (!wd.running)
        return;
    atomic_store(&stopping, 1);
    pthread_join(wd.thread, NULL);
    wd.running = 0;
    if (wd.sock >= 0)
        close(wd.sock);
    wd.sock = -1;
    free(wd.heard_s);
    free(wd.syncs);
    free(wd.host);
    free(wd.activity);
    wd.host = NULL;
    wd.activity = NULL;
    wd.heard_s = NULL;
    wd.syncs = NULL;
}
