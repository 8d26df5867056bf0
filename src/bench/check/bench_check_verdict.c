#define _DEFAULT_SOURCE
#include "bench/check/bench_check_int.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "bench/options.h"
#include "bench/check/options_check.h"

/* Pi firmware flags: bits 0-3 now, 16-19 the same since boot. */
static const char *const throttle_names[] = {"under-voltage", "frequency capped", "throttled", "soft temperature limit"};
#define HOT_C 80.0          /* the Pi firmware's soft limit; it throttles at 85 */
#define CLOCK_WARN_S 1e-3   /* timelines and the power meter's alignment need clocks within 1 ms */
#define SLOW_LINK 0.5       /* a link under half the median is named */
#define SWAP_WARN_BYTES (16LL << 20)

const char *wb_check_node_name(const struct wb_check_view *v, int q, char *buf, int cap)
{
    if (v->answered[q])
        snprintf(buf, (size_t)cap, "rank %d (node %d, %s)", q, v->node[q], v->fact[q].h.hostname);
    else
        snprintf(buf, (size_t)cap, "rank %d", q);
    return buf;
}

void wb_check_verdict(struct wb_check_view *v, const char *level, const char *fact, const char *fix,
                      const char *fmt, ...)
{
    char what[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    v->nfail += !strcmp(level, "fail");
    v->nwarn += !strcmp(level, "warn");
    printf("%-5s %-10s %s\n", level, fact, what);
    if (fix && strcmp(level, "ok"))
        printf("%-5s %-10s fix: %s\n", "", "", fix);
}

/* The lowest rank of each node speaks for it: rep[node] = that rank. */
static void node_reps(const struct wb_check_view *v, int *rep, int *nranks_on)
{
    for (int d = 0; d < v->nnodes; d++) {
        rep[d] = -1;
        nranks_on[d] = 0;
    }
    for (int q = 0; q < v->nranks; q++)
        if (v->answered[q]) {
            if (rep[v->node[q]] < 0)
                rep[v->node[q]] = q;
            nranks_on[v->node[q]]++;
        }
}

/* Bytes the run needs on rank q: --memory per node shared by its ranks, or the default fft run's
 * peak on rank 0 (it holds the request and every result) and a share of it elsewhere. */
static double need_bytes(const struct wb_check_view *v, int q, int ranks_on_node, double peak)
{
    if (v->k->need_bytes > 0)
        return (double)v->k->need_bytes / ranks_on_node;
    return q == 0 ? peak : 30e6 + 2.0 * (peak - 30e6) / v->nranks;
}

static void print_rows(const struct wb_check_view *v, const int *rep, const int *on)
{
    printf("#node %-16s %5s %-20s %-12s %11s %6s %-9s %8s %8s %8s %9s %-8s %-9s %7s %6s\n", "host", "ranks", "model",
           "governor", "MHz_cur/max", "temp_C", "throttle", "free_GiB", "need_GiB", "swap_MiB", "clock_ms", "iface",
           "kind", "Mbit/s", "mtu");
    double peak = v->o->study_bytes;
    for (int d = 0; d < v->nnodes; d++) {
        int q = rep[d];
        if (q < 0)
            continue;
        const struct wb_check_fact *f = &v->fact[q];
        double need = 0;
        for (int p = 0; p < v->nranks; p++)
            if (v->answered[p] && v->node[p] == d)
                need += need_bytes(v, p, on[d], peak);
        char thr[24], mhz[48];
        if (f->throttle_flags < 0)
            snprintf(thr, sizeof thr, "unknown");
        else
            snprintf(thr, sizeof thr, "0x%llx", (unsigned long long)f->throttle_flags);
        if (isnan(f->h.freq_max_mhz))
            snprintf(mhz, sizeof mhz, "%.0f/-", f->h.cpu_mhz);
        else
            snprintf(mhz, sizeof mhz, "%.0f/%.0f", f->h.cpu_mhz, f->h.freq_max_mhz);
        printf("%-5d %-16.16s %5d %-20.20s %-12s %11s %6.1f %-9s %8.2f %8.2f %8.0f %9.3f %-8s %-9s %7d %6d\n", d,
               f->h.hostname, on[d], *f->h.model ? f->h.model : "-", *f->h.governor ? f->h.governor : "-", mhz,
               f->h.temp_c_start, thr, (double)f->mem_avail_bytes / (1 << 30), need / (1 << 30),
               (double)f->swap_used_bytes / (1 << 20), v->clock_s[q] * 1e3, *f->h.iface ? f->h.iface : "-",
               f->h.iface_kind, f->h.link_mbps, f->h.mtu);
    }
}

/* One version field, compared over every rank that answered; level is the verdict if they differ. */
static void check_version(struct wb_check_view *v, const char *what, size_t off, const char *level, const char *fix)
{
    char groups[1500] = "";
    size_t len = 0;
    int ngroups = 0;
    int *done = calloc((size_t)v->nranks, sizeof *done);
    for (int q = 0; done && q < v->nranks; q++) {
        if (!v->answered[q] || done[q])
            continue;
        const char *val = (const char *)&v->fact[q] + off;
        ngroups++;
        len += (size_t)snprintf(groups + len, len < sizeof groups ? sizeof groups - len : 0, "%s'%s' on rank%s %d",
                                len ? "; " : "", *val ? val : "unknown", "", q);
        for (int p = q + 1; p < v->nranks; p++)
            if (v->answered[p] && !done[p] && !strcmp(val, (const char *)&v->fact[p] + off)) {
                done[p] = 1;
                len += (size_t)snprintf(groups + len, len < sizeof groups ? sizeof groups - len : 0, ",%d", p);
            }
    }
    free(done);
    if (ngroups <= 1)
        wb_check_verdict(v, "ok", what, NULL, "'%s' on every rank", v->answered[0] ? (const char *)&v->fact[0] + off : "");
    else
        wb_check_verdict(v, level, what, fix, "differs: %s", groups);
}

static void check_versions(struct wb_check_view *v)
{
    const char *rebuild = "build the same wulfbench commit on every node (make; make install) or copy one binary "
                          "to the same path everywhere";
    const char *libs = "install the same Debian packages on every node (apt-get install --only-upgrade ...), "
                       "then rebuild wulfbench";
    check_version(v, "version", offsetof(struct wb_check_fact, version), "fail", rebuild);
    check_version(v, "git_rev", offsetof(struct wb_check_fact, h.git_rev), "fail", rebuild);
    check_version(v, "mpi", offsetof(struct wb_check_fact, h.mpi_library), "fail", libs);
    check_version(v, "fftw", offsetof(struct wb_check_fact, h.fftw_version), "warn", libs);
    check_version(v, "hdf5", offsetof(struct wb_check_fact, h.hdf5_version), "warn", libs);
}

/* A list of "node d (host)" for the nodes whose representative matches pick. */
#define NODE_LIST(v, rep, buf, cond)                                                                          \
    do {                                                                                                       \
        size_t len_ = 0;                                                                                       \
        (buf)[0] = '\0';                                                                                       \
        for (int d = 0; d < (v)->nnodes; d++) {                                                                \
            int q = (rep)[d];                                                                                  \
            const struct wb_check_fact *f = q >= 0 ? &(v)->fact[q] : NULL;                                     \
            if (f && (cond) && len_ < sizeof(buf))                                                             \
                len_ += (size_t)snprintf((buf) + len_, sizeof(buf) - len_, "%snode %d (%s)", len_ ? ", " : "", \
                                         d, f->h.hostname);                                                    \
        }                                                                                                      \
    } while (0)

static void check_cpu(struct wb_check_view *v, const int *rep)
{
    char slow[1500], hot[1500], thr[1500];
    NODE_LIST(v, rep, slow,
              !strcmp(f->h.governor, "ondemand") || !strcmp(f->h.governor, "powersave") ||
                  !strcmp(f->h.governor, "schedutil") || !strcmp(f->h.governor, "conservative"));
    if (*slow) {
        char which[1600] = "";
        size_t len = 0;
        for (int d = 0; d < v->nnodes; d++) {
            const struct wb_check_fact *f = rep[d] >= 0 ? &v->fact[rep[d]] : NULL;
            if (f && *f->h.governor && strcmp(f->h.governor, "performance") && strcmp(f->h.governor, "userspace"))
                len += (size_t)snprintf(which + len, len < sizeof which ? sizeof which - len : 0, "%snode %d (%s): %s",
                                        len ? ", " : "", d, f->h.hostname, f->h.governor);
        }
        wb_check_verdict(v, "warn", "governor",
                         "for the run, on every node: echo performance | sudo tee "
                         "/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor (or: sudo cpupower frequency-set -g "
                         "performance)",
                         "%s: the clock changes with load, so the figures do", which);
    } else {
        NODE_LIST(v, rep, slow, *f->h.governor);
        wb_check_verdict(v, "ok", "governor", NULL, "%s", *slow ? "performance (or userspace) wherever cpufreq shows one"
                                                               : "no cpufreq on any node (a fixed clock or a VM)");
    }
    NODE_LIST(v, rep, thr, f->throttle_flags > 0);
    if (*thr) {
        char which[1600] = "";
        size_t len = 0;
        for (int d = 0; d < v->nnodes; d++) {
            const struct wb_check_fact *f = rep[d] >= 0 ? &v->fact[rep[d]] : NULL;
            if (!f || f->throttle_flags <= 0)
                continue;
            len += (size_t)snprintf(which + len, len < sizeof which ? sizeof which - len : 0, "%snode %d (%s) 0x%llx:",
                                    len ? "; " : "", d, f->h.hostname, (unsigned long long)f->throttle_flags);
            for (int when = 0; when < 2; when++)
                for (int b = 0; b < 4; b++)
                    if (f->throttle_flags & (1LL << (b + 16 * when)))
                        len += (size_t)snprintf(which + len, len < sizeof which ? sizeof which - len : 0, "%s%s%s",
                                                which[len - 1] == ':' ? " " : ", ", throttle_names[b],
                                                when ? " since boot" : " now");
        }
        wb_check_verdict(v, "warn", "throttle",
                         "under-voltage: use the official supply (Pi 3: 5.1 V 2.5 A, Pi 4: 3 A, Pi 5: 5 A) and a short "
                         "cable; heat: a heatsink or fan; then reboot to clear the since-boot flags",
                         "%s", which);
    } else {
        wb_check_verdict(v, "ok", "throttle", NULL, "no throttle or under-voltage flags (where the firmware shows them)");
    }
    NODE_LIST(v, rep, hot, f->h.temp_c_start >= HOT_C);
    if (*hot)
        wb_check_verdict(v, "warn", "temp", "cool the board (heatsink, fan, airflow) before measuring",
                         "%s at or above %.0f C, where a Pi starts to throttle", hot, HOT_C);
    else
        wb_check_verdict(v, "ok", "temp", NULL, "below %.0f C (where a sensor is readable)", HOT_C);
}

static void check_memory(struct wb_check_view *v, const int *rep, const int *on)
{
    double peak = v->o->study_bytes;
    char low[1500] = "", swap[1500];
    size_t len = 0;
    for (int d = 0; d < v->nnodes; d++) {
        int q = rep[d];
        if (q < 0)
            continue;
        double need = 0;
        for (int p = 0; p < v->nranks; p++)
            if (v->answered[p] && v->node[p] == d)
                need += need_bytes(v, p, on[d], peak);
        if (v->fact[q].mem_avail_bytes >= 0 && (double)v->fact[q].mem_avail_bytes < need)
            len += (size_t)snprintf(low + len, len < sizeof low ? sizeof low - len : 0,
                                    "%snode %d (%s) has %.0f MiB free, needs %.0f MiB", len ? "; " : "", d,
                                    v->fact[q].h.hostname, (double)v->fact[q].mem_avail_bytes / (1 << 20),
                                    need / (1 << 20));
    }
    if (*low)
        wb_check_verdict(v, "fail", "memory",
                         "stop other programs on the node, run fewer ranks there, or measure shorter files "
                         "(--seconds, --files)",
                         "%s", low);
    else
        wb_check_verdict(v, "ok", "memory", NULL, "every node has the %s free", v->k->need_bytes ? "--memory given"
                                                                                                 : "default run's need");
    NODE_LIST(v, rep, swap, f->swap_used_bytes > SWAP_WARN_BYTES);
    if (*swap)
        wb_check_verdict(v, "warn", "swap", "free memory (stop other programs) or reboot; swapping spoils timings",
                         "swap in use on %s", swap);
    else
        wb_check_verdict(v, "ok", "swap", NULL, "no swap in use");
}

static void check_clock(struct wb_check_view *v)
{
    char off[1500] = "";
    size_t len = 0;
    double worst = 0;
    for (int q = 1; q < v->nranks; q++) {
        if (isnan(v->clock_s[q]))
            continue;
        worst = fmax(worst, fabs(v->clock_s[q]));
        if (fabs(v->clock_s[q]) > CLOCK_WARN_S)
            len += (size_t)snprintf(off + len, len < sizeof off ? sizeof off - len : 0, "%srank %d (%s) %+.3f ms",
                                    len ? ", " : "", q, v->fact[q].h.hostname, v->clock_s[q] * 1e3);
    }
    if (*off)
        wb_check_verdict(v, "warn", "clock",
                         "synchronise the clocks: sudo timedatectl set-ntp true (or chrony with the head as server), "
                         "then wait for the offset to settle",
                         "offset to rank 0 above 1 ms: %s", off);
    else
        wb_check_verdict(v, "ok", "clock", NULL, "every rank within 1 ms of rank 0 (largest %.3f ms)", worst * 1e3);
}

static void check_network(struct wb_check_view *v, const int *rep)
{
    if (v->nnodes < 2) {
        wb_check_verdict(v, "ok", "network", NULL, "one node: the ranks talk through shared memory");
        return;
    }
    const char *pin = "name the Ethernet interface for MPI: export OMPI_MCA_btl_tcp_if_include=eth0 "
                      "(mpirun -x OMPI_MCA_btl_tcp_if_include), or --mca btl_tcp_if_include eth0";
    char wifi[1500], many[1500], speed[1500], mtu[1500];
    NODE_LIST(v, rep, wifi, !strcmp(f->h.iface_kind, "wifi"));
    if (*wifi)
        wb_check_verdict(v, "warn", "wifi", pin, "%s reach rank 0 over Wi-Fi", wifi);
    int top_mbps = -1, mtus[64], counts[64], nm = 0, common = 0;
    for (int d = 0; d < v->nnodes; d++) {
        const struct wb_check_fact *f = rep[d] >= 0 ? &v->fact[rep[d]] : NULL;
        if (!f || strcmp(f->h.iface, "lo") == 0)
            continue;
        top_mbps = f->h.link_mbps > top_mbps ? f->h.link_mbps : top_mbps;
        int i = 0;
        while (i < nm && mtus[i] != f->h.mtu)
            i++;
        if (i == nm && nm < 64) {
            mtus[nm] = f->h.mtu;
            counts[nm++] = 0;
        }
        if (i < nm)
            counts[i]++;
    }
    for (int i = 1; i < nm; i++)
        if (counts[i] > counts[common])
            common = i;
    NODE_LIST(v, rep, speed, f->h.link_mbps > 0 && f->h.link_mbps < top_mbps && strcmp(f->h.iface, "lo"));
    if (*speed)
        wb_check_verdict(v, "warn", "speed", "check the cable, the switch port and the link (ethtool IFACE); a Pi 3B+ "
                                             "tops out near 300 Mbit/s behind USB 2",
                         "%s link below the others' %d Mbit/s", speed, top_mbps);
    NODE_LIST(v, rep, mtu, nm > 1 && f->h.mtu != mtus[common] && strcmp(f->h.iface, "lo"));
    if (*mtu)
        wb_check_verdict(v, "warn", "mtu", "set one MTU on every node and the switch: sudo ip link set dev IFACE mtu N",
                         "%s differ from the common MTU %d", mtu, nm ? mtus[common] : -1);
    NODE_LIST(v, rep, many, f->candidates > 1 && !*f->if_include);
    if (*many)
        wb_check_verdict(v, "warn", "ifaces", pin,
                         "%s have several interfaces with addresses and no btl_tcp_if_include: Open MPI may pick "
                         "wlan0 or docker0",
                         many);
    if (!*wifi && !*speed && !*mtu && !*many)
        wb_check_verdict(v, "ok", "network", NULL, "every node reaches rank 0 on one kind of link with one MTU");
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The receive time of round r at rank b, from rank (b - r): the exchange's link (b - r) -> b. */
static double link_s(const struct wb_check_view *v, int b, int r)
{
    return v->t_recv_s[(size_t)b * (size_t)v->nranks + (size_t)r];
}

/* The median rate (MB/s) of the finished links, only those between nodes when cross, into *median
 * and their count into *nr; NaN if none. 0, or -1 out of memory. */
static int links_median(const struct wb_check_view *v, int cross, double *median, int *nr)
{
    int n = v->nranks;
    double *rates = calloc((size_t)n * (size_t)n, sizeof *rates);
    if (!rates)
        return -1;
    *nr = 0;
    for (int b = 0; b < n; b++)
        for (int r = 1; r < n; r++) {
            int a = (b - r + n) % n;
            double t = link_s(v, b, r);
            if (!isnan(t) && (!cross || v->node[a] != v->node[b]))
                rates[(*nr)++] = WB_CHECK_MSG_BYTES / t / 1e6;
        }
    qsort(rates, (size_t)*nr, sizeof *rates, cmp_double);
    int k = *nr;
    *median = k ? (k % 2 ? rates[k / 2] : 0.5 * (rates[k / 2 - 1] + rates[k / 2])) : NAN;
    free(rates);
    return 0;
}

/* The exchange's verdict once every link finished: links between nodes under SLOW_LINK times the
 * median warn, naming a node that is in all of them. */
static void judge_links(struct wb_check_view *v, int cross, double median, int nr)
{
    int n = v->nranks;
    char slow[1500] = "";
    size_t slen = 0;
    int nslow = 0, *in_slow = calloc((size_t)v->nnodes, sizeof *in_slow);
    for (int b = 0; cross && b < n; b++)
        for (int r = 1; r < n; r++) {
            int a = (b - r + n) % n;
            double rate = WB_CHECK_MSG_BYTES / link_s(v, b, r) / 1e6;
            if (v->node[a] == v->node[b] || !(rate < SLOW_LINK * median))
                continue;
            nslow++;
            if (in_slow) {
                in_slow[v->node[a]]++;
                in_slow[v->node[b]]++;
            }
            if (slen < sizeof slow)
                slen += (size_t)snprintf(slow + slen, sizeof slow - slen, "%s%d (%s) -> %d (%s) %.1f MB/s",
                                         slen ? ", " : "", a, v->fact[a].h.hostname, b, v->fact[b].h.hostname, rate);
        }
    if (nslow) {
        char common[200] = "";
        for (int d = 0; in_slow && d < v->nnodes; d++)
            if (in_slow[d] == nslow)
                for (int q = 0; q < n; q++)
                    if (v->node[q] == d) {
                        snprintf(common, sizeof common, "; node %d (%s) is in every slow link", d,
                                 v->fact[q].h.hostname);
                        break;
                    }
        wb_check_verdict(v, "warn", "exchange",
                         "check the slow node's cable, switch port and link speed (ethtool IFACE), and what else "
                         "runs on it",
                         "%d link%s under half the median %.1f MB/s: %s%s", nslow, nslow == 1 ? "" : "s", median, slow,
                         common);
    } else {
        wb_check_verdict(v, "ok", "exchange", NULL, "%d links of 1 MiB in %d shifted rounds, median %.1f MB/s%s", nr,
                         n - 1, median, cross ? "" : " (one node: shared memory, not judged)");
    }
    free(in_slow);
}

/* The links of the shifted rounds: rank b received from rank (b - r) in round r. */
static void check_exchange(struct wb_check_view *v)
{
    int n = v->nranks;
    if (v->got)
        return; /* the answer verdict names the rank that stopped; links with it are unknown */
    if (n < 2 || !v->exchanged) {
        wb_check_verdict(v, "ok", "exchange", NULL, "one rank: nothing to exchange");
        return;
    }
    int cross = 0, stuck = 0;
    char late[1500] = "";
    size_t llen = 0;
    for (int b = 0; b < n; b++)
        for (int r = 1; r < n; r++) {
            int a = (b - r + n) % n;
            if (isnan(link_s(v, b, r))) {
                stuck++;
                if (llen < sizeof late)
                    llen += (size_t)snprintf(late + llen, sizeof late - llen, "%s%d->%d", llen ? ", " : "", a, b);
                continue;
            }
            cross |= v->node[a] != v->node[b];
        }
    if (stuck) {
        wb_check_verdict(v, "fail", "exchange", "see the links named: cable, switch port, firewall between those nodes",
                         "%d link%s did not finish within the time: %s", stuck, stuck == 1 ? "" : "s", late);
        return;
    }
    double median = NAN;
    int nr = 0;
    if (links_median(v, cross, &median, &nr) != 0) {
        wb_check_verdict(v, "warn", "exchange", NULL, "out of memory to judge the exchange");
        return;
    }
    judge_links(v, cross, median, nr);
}

static void check_files(struct wb_check_view *v)
{
    const char *out = v->o->common.out_path;
    char dir[4096], made[4200] = "";
    if (v->k->results_dir) {
        snprintf(dir, sizeof dir, "%s", v->k->results_dir);
    } else if (out) {
        snprintf(dir, sizeof dir, "%s", out);
        char *slash = strrchr(dir, '/');
        if (slash)
            *(slash == dir ? slash + 1 : slash) = '\0';
        else
            snprintf(dir, sizeof dir, ".");
    } else {
        snprintf(dir, sizeof dir, "results");
    }
    /* A folder the run creates itself (results/, or the scripts' --results) is judged by its parent. */
    if ((v->k->results_dir || !out) && access(dir, F_OK) != 0) {
        snprintf(made, sizeof made, "%s (created by the run) in ", dir);
        char *slash = strrchr(dir, '/');
        if (slash)
            *(slash == dir ? slash + 1 : slash) = '\0';
        else
            snprintf(dir, sizeof dir, ".");
    }
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/.wulfbench-check-XXXXXX", dir);
    int fd = mkstemp(probe);
    int err = errno;
    if (fd >= 0) {
        close(fd);
        unlink(probe);
    }
    struct statvfs sv;
    double free_gib = statvfs(dir, &sv) == 0 ? (double)sv.f_bavail * (double)sv.f_frsize / (1 << 30) : NAN;
    if (fd < 0)
        wb_check_verdict(v, "fail", "results", "create the folder (mkdir -p) or give -o a path you may write",
                         "%s%s is not writable on rank 0: %s", made, dir, strerror(err));
    else
        wb_check_verdict(v, "ok", "results", NULL, "%s%s is writable on rank 0, %.1f GiB free", made, dir, free_gib);
    if (out && access(out, F_OK) == 0 && !v->o->common.force)
        wb_check_verdict(v, "warn", "results", "choose another -o or add --force", "%s exists: the run refuses it", out);
    const char *w = v->k->wisdom;
    if (!w)
        return;
    FILE *f = fopen(w, "r");
    if (f) {
        fclose(f);
        wb_check_verdict(v, "ok", "wisdom", NULL, "%s is readable on rank 0", w);
    } else if (errno == ENOENT) {
        wb_check_verdict(v, "ok", "wisdom", NULL, "%s does not exist yet: the run plans afresh and saves it", w);
    } else {
        wb_check_verdict(v, "fail", "wisdom", "fix its permissions or delete it to plan afresh", "%s: %s", w,
                         strerror(errno));
    }
}

void wb_check_print(struct wb_check_view *v)
{
    int *rep = calloc((size_t)v->nnodes + 1, sizeof *rep), *on = calloc((size_t)v->nnodes + 1, sizeof *on);
    if (!rep || !on) {
        free(rep);
        free(on);
        printf("# check: out of memory for the node table\n");
        return;
    }
    node_reps(v, rep, on);
    int answered = 0;
    for (int q = 0; q < v->nranks; q++)
        answered += v->answered[q];
    printf("# wulfbench check: %d rank%s on %d node%s answered (of %d), timeout %.0f s\n", answered,
           answered == 1 ? "" : "s", v->nnodes, v->nnodes == 1 ? "" : "s", v->nranks, v->timeout_s);
    print_rows(v, rep, on);
    printf("#verdict fact    what\n");
    check_versions(v);
    check_cpu(v, rep);
    check_memory(v, rep, on);
    check_clock(v);
    check_network(v, rep);
    if (v->exchanged || v->nranks < 2)
        check_exchange(v);
    check_files(v);
    wb_check_storage_judge(v);
    if (v->got) {
        char one[128];
        size_t len = (size_t)snprintf(v->missing, sizeof v->missing, "no answer %s within %.0f s from ", v->step,
                                      v->timeout_s);
        for (int q = 1, k = 0; q < v->nranks && len < sizeof v->missing; q++)
            if (!v->got[q])
                len += (size_t)snprintf(v->missing + len, sizeof v->missing - len, "%s%s", k++ ? ", " : "",
                                        wb_check_node_name(v, q, one, sizeof one));
        wb_check_verdict(v, "fail", "answer",
                         "see whether the node is up and not overloaded (ssh to it, top), and that no firewall "
                         "blocks the ports MPI opens between nodes",
                         "%s (stopped, hung or cut off)", v->missing);
    }
    printf("# check: %d failed, %d warning%s%s\n", v->nfail, v->nwarn, v->nwarn == 1 ? "" : "s",
           v->k->strict && v->nwarn ? " (--strict: warnings fail)" : "");
    fflush(stdout);
    free(rep);
    free(on);
}
