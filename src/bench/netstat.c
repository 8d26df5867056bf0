#define _GNU_SOURCE
#include "bench/netstat.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <ifaddrs.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "par/comm.h"
#include "core/error.h"
#include "core/sysfs.h"
#include "io/results.h"
#include "par/hostfacts.h"

/* Decided once, at the first wb_netstat_end, on every rank. */
static struct {
    int known;
    int leader;          /* 1 if this rank is its node's lowest rank */
    char iface[32];      /* the interface that routes to rank 0, "" = the sum over all but lo */
} me;

/* /proc/net/snmp has a "Tcp:" line of names and a "Tcp:" line of values; find ours by name. */
static void read_tcp(int64_t *retrans, int64_t *out)
{
    char names[2048] = "", line[2048];
    *retrans = *out = -1;
    FILE *f = wb_sysfs_open("/proc/net/snmp");
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "Tcp:", 4) != 0)
            continue;
        if (!*names) {
            snprintf(names, sizeof names, "%s", line);
            continue;
        }
        char *sn = NULL, *sv = NULL;
        char *n = strtok_r(names, " \t\n", &sn), *v = strtok_r(line, " \t\n", &sv);
        while ((n = strtok_r(NULL, " \t\n", &sn)) && (v = strtok_r(NULL, " \t\n", &sv))) {
            if (!strcmp(n, "RetransSegs"))
                *retrans = strtoll(v, NULL, 10);
            else if (!strcmp(n, "OutSegs"))
                *out = strtoll(v, NULL, 10);
        }
        break;
    }
    fclose(f);
}

/* The four counters of interface name from /sys/class/net/NAME/statistics. */
static void read_if_sysfs(struct wb_netstat_if *i, const char *name)
{
    static const char *const what[4] = {"rx_dropped", "tx_dropped", "rx_errors", "tx_errors"};
    int64_t *to[4] = {&i->rx_dropped, &i->tx_dropped, &i->rx_errors, &i->tx_errors};
    char rel[160];
    snprintf(i->name, sizeof i->name, "%s", name);
    for (int k = 0; k < 4; k++) {
        snprintf(rel, sizeof rel, "/sys/class/net/%s/statistics/%s", name, what[k]);
        *to[k] = wb_sysfs_i64(rel);
    }
}

/* The fake tree of the fault build: every folder of /sys/class/net but lo. */
static int faked(struct wb_netstat *ns)
{
    if (!*wb_sysfs_root())
        return 0;
    DIR *d = wb_sysfs_opendir("/sys/class/net");
    struct dirent *e;
    while (d && (e = readdir(d)) && ns->nif < WB_NETSTAT_MAX_IF)
        if (e->d_name[0] != '.' && strcmp(e->d_name, "lo") && strlen(e->d_name) < sizeof ns->ifs[0].name)
            read_if_sysfs(&ns->ifs[ns->nif++], e->d_name);
    if (d)
        closedir(d);
    return 1;
}

void wb_netstat_begin(struct wb_netstat *ns)
{
    memset(ns, 0, sizeof *ns);
    read_tcp(&ns->retrans_segs, &ns->out_segs);
    if (faked(ns))
        return;
    /* The interfaces of this network namespace. /sys shows those of the namespace that mounted it
     * (an emulated node entered with nsenter sees the host's), so its counters count only where
     * its ifindex agrees; elsewhere the kernel's own link statistics do. */
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) != 0)
        return;
    for (struct ifaddrs *a = ifs; a && ns->nif < WB_NETSTAT_MAX_IF; a = a->ifa_next) {
        if (!a->ifa_addr || a->ifa_addr->sa_family != AF_PACKET || (a->ifa_flags & IFF_LOOPBACK) ||
            strlen(a->ifa_name) >= sizeof ns->ifs[0].name)
            continue;
        struct wb_netstat_if *i = &ns->ifs[ns->nif++];
        char rel[160];
        snprintf(rel, sizeof rel, "/sys/class/net/%s/ifindex", a->ifa_name);
        if (wb_sysfs_i64(rel) == (int64_t)if_nametoindex(a->ifa_name)) {
            read_if_sysfs(i, a->ifa_name);
            continue;
        }
        const struct rtnl_link_stats *st = a->ifa_data;
        snprintf(i->name, sizeof i->name, "%s", a->ifa_name);
        i->rx_dropped = st ? (int64_t)st->rx_dropped : -1;
        i->tx_dropped = st ? (int64_t)st->tx_dropped : -1;
        i->rx_errors = st ? (int64_t)st->rx_errors : -1;
        i->tx_errors = st ? (int64_t)st->tx_errors : -1;
    }
    freeifaddrs(ifs);
}

/* Every rank: am I my node's lowest rank, and (leaders) which interface leads to rank 0. Collective. */
static int decide(void)
{
    int rank = wb_comm_rank(), nnodes = 0;
    const int *node = wb_comm_node_map(&nnodes); /* cached at init */
    uint32_t addr[WB_HOSTFACTS_MAX_ADDRS];
    int naddr = 0;
    int rc = wb_hostfacts_root_addrs(addr, &naddr);
    if (rc == 0) {
        /* No address of rank 0 at all: {0}, which only a default route matches. */
        if (naddr == 0)
            addr[naddr++] = 0;
        me.leader = 1;
        for (int q = 0; q < rank; q++)
            me.leader &= node[q] != node[rank];
        /* Through the fake tree in the fault build. Unlike /hosts' iface, rank 0's own node counts
         * the interface its traffic to the other nodes leaves by, not "lo". */
        char route[4200];
        wb_sysfs_path(route, sizeof route, "/proc/net/route");
        wb_hostfacts_route(route, addr, naddr, me.iface, sizeof me.iface);
        me.known = 1;
    }
    return rc;
}

/* Now minus then, -1 if either is unknown. */
static int64_t delta(int64_t then, int64_t now)
{
    return then < 0 || now < 0 ? -1 : now - then;
}

/* Deltas of the four interface counters over the chosen interface, or summed over all (summed = 1)
 * when that one is not in both readings. */
static void if_deltas(const struct wb_netstat *a, const struct wb_netstat *b, int64_t d[4], int *summed)
{
    int found = 0;
    for (int k = 0; k < 4; k++)
        d[k] = 0;
    for (int pass = 0; pass < 2 && !found; pass++)
        for (int i = 0; i < a->nif; i++)
            for (int j = 0; j < b->nif; j++) {
                const struct wb_netstat_if *x = &a->ifs[i], *y = &b->ifs[j];
                if (strcmp(x->name, y->name) || (pass == 0 && strcmp(x->name, me.iface)))
                    continue;
                int64_t v[4] = {delta(x->rx_dropped, y->rx_dropped), delta(x->tx_dropped, y->tx_dropped),
                                delta(x->rx_errors, y->rx_errors), delta(x->tx_errors, y->tx_errors)};
                for (int k = 0; k < 4; k++)
                    d[k] = d[k] < 0 || v[k] < 0 ? -1 : d[k] + v[k];
                found = 1;
            }
    *summed = !*me.iface || !found ? 1 : 0;
    for (int k = 0; !found && k < 4; k++)
        d[k] = -1;
}

int wb_netstat_end(const struct wb_netstat *ns, int keep, struct wb_result_net **rows)
{
    *rows = NULL;
    if (!keep)
        return 0;
    int rc = me.known ? 0 : wb_comm_agree(decide());
    struct wb_netstat now;
    wb_netstat_begin(&now);
    int64_t v[7] = {-1, -1, -1, -1, -1, -1, -1};
    if (rc == 0 && me.leader) {
        int summed = 0;
        v[0] = delta(ns->retrans_segs, now.retrans_segs);
        v[1] = delta(ns->out_segs, now.out_segs);
        if_deltas(ns, &now, v + 2, &summed);
        v[6] = summed;
        static int warned;
        if (summed && !warned++)
            fprintf(stderr, "wulfbench: rank %d: warning: no interface routes to rank 0 here%s; the drop and "
                            "error counters are the sum over every interface but lo (net/if_summed = 1)\n",
                    wb_comm_rank(), *me.iface ? " that has statistics" : "");
    }
    int n = wb_comm_size();
    int64_t *all = NULL;
    if (rc == 0 && wb_comm_rank() == 0 &&
        (!(*rows = calloc((size_t)n, sizeof **rows)) || !(all = malloc((size_t)n * 7 * sizeof *all))))
        rc = wb_error_set(WB_ENOMEM, "out of memory for the network counters of %d ranks", n);
    rc = wb_comm_agree(rc);
    rc = rc ? rc : wb_comm_agree(wb_comm_gather_i64_n(v, 7, all));
    for (int q = 0; rc == 0 && *rows && q < n; q++)
        for (int k = 0; k < 7; k++)
            (*rows)[q].v[k] = all[(size_t)q * 7 + (size_t)k];
    free(all);
    if (rc) {
        free(*rows);
        *rows = NULL;
    }
    return rc;
}
