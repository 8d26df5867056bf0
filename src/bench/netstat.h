/* netstat: this node's TCP retransmission and interface drop/error counters over one point, read by
 * each node's lowest rank and written as per-rank datasets of the point's group. In the fault build,
 * env WB_SYSFS_ROOT puts a fake /proc/net and /sys/class/net under a root. */
#ifndef WB_NETSTAT_H
#define WB_NETSTAT_H

#include <stdint.h>

struct wb_results;

#define WB_NETSTAT_MAX_IF 16

/* Counters of one interface (packets, since boot). */
struct wb_netstat_if {
    char name[32];
    int64_t rx_dropped, tx_dropped, rx_errors, tx_errors;
};

/* A reading of this node's counters; -1 where a counter could not be read. */
struct wb_netstat {
    int64_t retrans_segs, out_segs; /* TCP RetransSegs, OutSegs of /proc/net/snmp */
    int nif;
    struct wb_netstat_if ifs[WB_NETSTAT_MAX_IF]; /* every interface but lo */
};

/* Read the counters now, at a point's start (every interface: which one leads to rank 0 is decided
 * at the end). Local, never fails. */
void wb_netstat_begin(struct wb_netstat *ns);

/* Read them again and, when res is not NULL, write the deltas since begin to GROUP/net/ (e.g. group
 * "/fft/p003"): tcp_retrans_segs, tcp_out_segs, rx_dropped, tx_dropped, rx_errors, tx_errors and
 * if_summed, each [nranks] int64, -1 on ranks that do not lead their node and for counters that could
 * not be read. Collective (the first call also agrees on each node's leader and interface); res must be
 * NULL on every rank or on none. 0 or an error, agreed. */
int wb_netstat_end(const struct wb_netstat *ns, struct wb_results *res, const char *group);

#endif
