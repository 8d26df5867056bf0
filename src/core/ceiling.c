#define _GNU_SOURCE
#include "core/ceiling.h"

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/sysfs.h"

/* The copy's buffers: 16 MiB each, past the last-level cache of a Pi and of most desktops, so the
 * copy measures memory, not cache. */
#define COPY_BYTES ((size_t)16 << 20)

void wb_ceiling_boot_id(char *out, size_t cap)
{
    if (wb_sysfs_line("/proc/sys/kernel/random/boot_id", out, cap) != 0)
        out[0] = '\0';
}

/* quota/period of cgroup v2's cpu.max ("max 100000" or "200000 100000") at dir, NaN if unlimited. */
static double quota_v2(const char *dir)
{
    char rel[600], line[64];
    snprintf(rel, sizeof rel, "/sys/fs/cgroup%s/cpu.max", dir);
    double quota, period;
    if (wb_sysfs_line(rel, line, sizeof line) != 0 || sscanf(line, "%lf %lf", &quota, &period) != 2)
        return NAN;
    return period > 0 && quota > 0 ? quota / period : NAN;
}

/* The same from cgroup v1's cpu.cfs_quota_us (-1: unlimited) and cpu.cfs_period_us under mount. */
static double quota_v1(const char *mount, const char *dir)
{
    char rel[700];
    snprintf(rel, sizeof rel, "/sys/fs/cgroup/%s%s/cpu.cfs_quota_us", mount, dir);
    double quota = wb_sysfs_double(rel);
    snprintf(rel, sizeof rel, "/sys/fs/cgroup/%s%s/cpu.cfs_period_us", mount, dir);
    double period = wb_sysfs_double(rel);
    return quota > 0 && period > 0 ? quota / period : NAN;
}

/* The lowest quota on the way from the cgroup dir up to the root: a parent's limit holds its children. */
static double quota_up(const char *mount, const char *path)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s", strcmp(path, "/") ? path : "");
    double best = NAN;
    for (;;) {
        double q = mount ? quota_v1(mount, dir) : quota_v2(dir);
        if (!isnan(q) && (isnan(best) || q < best))
            best = q;
        char *slash = strrchr(dir, '/');
        if (!slash)
            return best;
        *slash = '\0';
    }
}

double wb_ceiling_cpu_quota(void)
{
    FILE *f = wb_sysfs_open("/proc/self/cgroup");
    if (!f)
        return NAN;
    char line[700];
    double best = NAN;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = '\0';
        const char *ctrl = c1 + 1, *path = c2 + 1;
        double q = NAN;
        if (!*ctrl)
            q = quota_up(NULL, path);
        else if (strstr(ctrl, "cpu") && !strstr(ctrl, "cpuset") && strcmp(ctrl, "cpuacct"))
            q = fmin(quota_up(ctrl, path), quota_up("cpu", path));
        if (!isnan(q) && (isnan(best) || q < best))
            best = q;
    }
    fclose(f);
    return best;
}

int32_t wb_ceiling_cores_usable(int32_t online, double quota)
{
    int32_t n = online;
    if (!isnan(quota) && quota > 0) {
        int32_t q = (int32_t)ceil(quota - 1e-9);
        n = n <= 0 || q < n ? q : n;
    }
    return n > 0 ? n : -1;
}

uint64_t wb_ceiling_cpu_mask(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 0;
    uint64_t mask = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) {
            if (c > 63)
                return 0;
            mask |= UINT64_C(1) << c;
        }
    return mask;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double wb_ceiling_copy_Bps(double budget_s)
{
    char *a = malloc(COPY_BYTES), *b = malloc(COPY_BYTES);
    double best = NAN;
    if (a && b) {
        /* Touched first, so page faults stay out of the timed copies. */
        memset(a, 1, COPY_BYTES);
        memset(b, 2, COPY_BYTES);
        double end = now_s() + budget_s;
        for (int i = 0; i < 64 && (i < 3 || now_s() < end); i++) {
            char *src = i % 2 ? b : a, *dst = i % 2 ? a : b;
            double t0 = now_s();
            memcpy(dst, src, COPY_BYTES);
            double t = now_s() - t0;
            /* The best run is the one no other process interrupted. */
            if (t > 0 && (isnan(best) || 2.0 * (double)COPY_BYTES / t > best))
                best = 2.0 * (double)COPY_BYTES / t;
        }
        /* Read back, so the compiler cannot drop the copies. */
        if (a[COPY_BYTES / 2] + b[COPY_BYTES / 3] == 0)
            best = NAN;
    }
    free(a);
    free(b);
    return best;
}

/* The machine of host h among out[n], or -1. */
static int find_machine(const struct wb_ceiling_machine *out, int n, const struct wb_host *h)
{
    for (int i = 0; i < n; i++)
        if (*h->boot_id ? !strcmp(out[i].boot_id, h->boot_id) : !strcmp(out[i].name, h->hostname))
            return i;
    return -1;
}

/* 1 if a rank of hosts[0..r) on the same node as hosts[r] came first. */
static int node_seen(const struct wb_host *hosts, int r)
{
    for (int q = 0; q < r; q++)
        if (hosts[q].node == hosts[r].node)
            return 1;
    return 0;
}

int wb_ceiling_machines(const struct wb_host *hosts, int n, struct wb_ceiling_machine *out, int cap,
                        int *machine_of)
{
    int nm = 0;
    for (int r = 0; r < n; r++) {
        const struct wb_host *h = &hosts[r];
        int i = find_machine(out, nm, h);
        if (i < 0 && nm < cap) {
            i = nm++;
            struct wb_ceiling_machine *m = &out[i];
            memset(m, 0, sizeof *m);
            snprintf(m->name, sizeof m->name, "%s", h->hostname);
            snprintf(m->boot_id, sizeof m->boot_id, "%s", h->boot_id);
            m->cores = h->cores;
            m->cores_usable = h->cores_usable;
            m->cpu_quota = 0;
            m->copy_Bps = NAN;
            m->link_mbps = h->link_mbps;
        }
        if (machine_of)
            machine_of[r] = i;
        if (i < 0)
            continue;
        struct wb_ceiling_machine *m = &out[i];
        m->ranks++;
        int first = !node_seen(hosts, r);
        m->nodes += first;
        /* Nodes of one machine each in a cgroup of its own (an emulated cluster's --cpu-share): their
         * quotas add up; one node without a quota leaves the machine without one. */
        if (first)
            m->cpu_quota += h->cpu_quota;
        /* Nodes of one machine in cgroups of their own: the most any of them may use, and never more
         * than the machine's cores. */
        if (h->cores_usable > m->cores_usable)
            m->cores_usable = m->cores > 0 && h->cores_usable > m->cores ? m->cores : h->cores_usable;
        if (!isnan(h->copy_Bps) && (isnan(m->copy_Bps) || h->copy_Bps > m->copy_Bps))
            m->copy_Bps = h->copy_Bps;
        if (h->link_mbps > 0 && (m->link_mbps <= 0 || h->link_mbps < m->link_mbps))
            m->link_mbps = h->link_mbps;
    }
    for (int i = 0; i < nm; i++) {
        struct wb_ceiling_machine *m = &out[i];
        if (!isnan(m->cpu_quota) && m->cpu_quota > 0) {
            int32_t q = (int32_t)ceil(m->cpu_quota - 1e-9);
            m->cores_usable = m->cores > 0 && q > m->cores ? m->cores : q;
        }
        /* The CPUs its ranks may run on together: the union of their affinity masks. */
        uint64_t all = 0;
        int known = 1;
        for (int r = 0; r < n; r++)
            if (machine_of ? machine_of[r] == i : find_machine(out, nm, &hosts[r]) == i) {
                known = known && hosts[r].cpu_mask;
                all |= hosts[r].cpu_mask;
            }
        int32_t cpus = known ? (int32_t)__builtin_popcountll(all) : -1;
        if (cpus > 0 && (m->cores_usable <= 0 || cpus < m->cores_usable))
            m->cores_usable = cpus;
    }
    return nm;
}

int wb_ceiling_oversubscribed(const struct wb_ceiling_machine *m)
{
    return m->cores_usable > 0 && m->ranks > m->cores_usable;
}

double wb_ceiling_exchange_Bps(const struct wb_ceiling_machine *m, int n)
{
    if (n == 1)
        return m[0].copy_Bps;
    int mbps = -1;
    for (int i = 0; i < n; i++)
        if (m[i].link_mbps > 0 && (mbps < 0 || m[i].link_mbps < mbps))
            mbps = m[i].link_mbps;
    return n > 1 && mbps > 0 ? 2.0 * mbps * 1e6 / 8 : NAN;
}
