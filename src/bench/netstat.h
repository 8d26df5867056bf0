/* netstat: this node's TCP retransmission and interface drop/error counters over one point, read by
 * each node's lowest rank and handed, gathered on rank 0, to the point's writer (io: GROUP/net/). In the fault build,
 * env WB_SYSFS_ROOT puts a fake /proc/net and /sys/class/net under a root. */
#ifndef WB_NETSTAT_H
#define WB_NETSTAT_H

#include <stdint.h>

struct wb_result_net;

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

/* Read them again and, with keep, give rank 0 the deltas since begin of every rank in *rows
 * [nranks] (the point's writer stores them as GROUP/net/ with wb_results_write_net; free() them):
 * -1 on ranks that do not lead their node and for counters that could not be read. *rows is NULL on
 * the other ranks, without keep and on an error. Collective (the first call also agrees on each
 * node's leader and interface); keep must be the same on every rank. 0 or an error, agreed. */
int wb_netstat_end(const struct wb_netstat *ns, int keep, struct wb_result_net **rows);

#endif
