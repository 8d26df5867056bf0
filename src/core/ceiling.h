/* ceiling: what one machine can do at most, so no figure is reported above it: the kernel's boot_id
 * (nodes that share it share one machine's cores), the CPUs its cgroup quota allows, the cores this
 * process may use, a short STREAM-like copy's bandwidth, and the machines of a run (hosts grouped by
 * boot_id) with the ranks each holds. Reads /proc and /sys through sysfs. */
#ifndef WB_CEILING_H
#define WB_CEILING_H

#include <stddef.h>
#include <stdint.h>

#include "core/sysinfo.h"

/* The kernel's boot_id (/proc/sys/kernel/random/boot_id) into out[cap]; "" if unreadable. Local. */
void wb_ceiling_boot_id(char *out, size_t cap);

/* CPUs the cgroup of this process may use (cpu.max, else cpu.cfs_quota_us / cpu.cfs_period_us):
 * quota over period, or NaN when unlimited or unknown. Local. */
double wb_ceiling_cpu_quota(void);

/* Cores a machine's processes may run on at once: online cores, cut to the quota rounded up; -1 when
 * none is known. A rank's own affinity is left out: MPI binds each rank to a core, and the ranks of a
 * machine together may use the union of their masks (wb_ceiling_cpu_mask). Local. */
int32_t wb_ceiling_cores_usable(int32_t online, double quota);

/* The CPUs 0..63 this process may run on, as bits; 0 when unknown or when a CPU above 63 is in it. */
uint64_t wb_ceiling_cpu_mask(void);

/* Bytes per second of the best of short memcpy runs over two buffers larger than most caches (bytes
 * read + written, as STREAM's Copy counts), within about budget_s; NaN when out of memory. Local. */
double wb_ceiling_copy_Bps(double budget_s);

/* One machine of a run: the hosts that report one boot_id (or one hostname, where none is known). */
struct wb_ceiling_machine {
    char name[64];          /* its first host's name */
    char boot_id[40];
    int32_t nodes;          /* distinct nodes (hostnames) on it */
    int32_t ranks;          /* ranks on it */
    int32_t cores;          /* online cores */
    int32_t cores_usable;   /* cores its ranks may use: the most any may (affinity, quota), or, where
                             * every node has a quota of its own, their sum rounded up; -1 unknown */
    double cpu_quota;       /* CPUs its nodes' quotas allow together, NaN when one is unlimited */
    double copy_Bps;        /* the best copy bandwidth any of its nodes measured */
    int32_t link_mbps;      /* the slowest link speed of its nodes toward rank 0, -1 unknown */
};

/* The machines of hosts[n] (rank order) into out[cap] (cap >= n is enough), in order of their first
 * rank; *machine_of[n] gets each rank's machine. Returns how many. Local and pure. */
int wb_ceiling_machines(const struct wb_host *hosts, int n, struct wb_ceiling_machine *out, int cap,
                        int *machine_of);

/* Bytes per second a rank's exchange with every other rank (a transpose: both ways at once) cannot
 * pass on machines m[n]: one machine's memcpy, or twice the slowest line rate; NaN unknown. Pure. */
double wb_ceiling_exchange_Bps(const struct wb_ceiling_machine *m, int n);

/* A machine holds more ranks than it has usable cores. */
int wb_ceiling_oversubscribed(const struct wb_ceiling_machine *m);

#endif
