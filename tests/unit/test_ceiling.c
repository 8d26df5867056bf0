/* ceiling: hosts grouped into machines by boot_id (the emulated cluster's nodes share one), the
 * machine's usable cores, oversubscription, and the exchange ceiling of a transpose. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/ceiling.h"
#include "wbtest.h"

static void host(struct wb_host *h, int rank, int node, const char *name, const char *boot, int cores, int usable,
                 double copy, int mbps)
{
    memset(h, 0, sizeof *h);
    h->rank = rank;
    h->node = node;
    snprintf(h->hostname, sizeof h->hostname, "%s", name);
    snprintf(h->boot_id, sizeof h->boot_id, "%s", boot);
    h->cores = cores;
    h->cores_usable = usable;
    h->cpu_quota = NAN;
    h->copy_Bps = copy;
    h->link_mbps = mbps;
}

int main(void)
{
    /* Four emulated nodes (two ranks each) on one 2-core machine, and one real board beside them. */
    struct wb_host hs[9];
    const char *names[] = {"pi1", "pi2", "pi3", "pi4"};
    for (int r = 0; r < 8; r++)
        host(&hs[r], r, r / 2, names[r / 2], "aaaa", 2, 2, r % 2 ? NAN : 1e9 * (1 + r), 10000);
    host(&hs[8], 8, 4, "board", "bbbb", 4, 4, 3e9, 100);
    struct wb_ceiling_machine m[9];
    int of[9];
    int n = wb_ceiling_machines(hs, 9, m, 9, of);
    WBTEST_CHECK(n == 2, "one boot_id is one machine, whatever its host names: %d machines", n);
    WBTEST_CHECK(!strcmp(m[0].name, "pi1") && m[0].nodes == 4 && m[0].ranks == 8 && m[0].cores_usable == 2,
                 "the emulated machine: 4 nodes, 8 ranks, 2 usable cores (%d, %d, %d)", m[0].nodes, m[0].ranks,
                 m[0].cores_usable);
    WBTEST_CHECK(m[0].copy_Bps == 7e9, "its memcpy is the best any node measured (%g)", m[0].copy_Bps);
    WBTEST_CHECK(of[7] == 0 && of[8] == 1 && m[1].ranks == 1, "each rank's machine");
    WBTEST_CHECK(wb_ceiling_oversubscribed(&m[0]) && !wb_ceiling_oversubscribed(&m[1]),
                 "8 ranks on 2 cores are oversubscribed, 1 on 4 is not");
    WBTEST_CHECK(m[1].link_mbps == 100 && m[0].link_mbps == 10000, "each machine's slowest link");
    WBTEST_CHECK(wb_ceiling_exchange_Bps(m, 2) == 2 * 100e6 / 8,
                 "across machines a transpose is held to twice the slowest line rate (%g)",
                 wb_ceiling_exchange_Bps(m, 2));
    WBTEST_CHECK(wb_ceiling_exchange_Bps(m, 1) == 7e9, "on one machine, to its memcpy");

    /* Without a boot_id, hosts are told apart by name. */
    host(&hs[0], 0, 0, "a", "", 4, 4, NAN, -1);
    host(&hs[1], 1, 1, "b", "", 4, 4, NAN, -1);
    n = wb_ceiling_machines(hs, 2, m, 2, of);
    WBTEST_CHECK(n == 2 && isnan(m[0].copy_Bps) && isnan(wb_ceiling_exchange_Bps(m, 2)),
                 "no boot_id: one machine per host name; no memcpy and no link speed: no ceiling");

    /* Four nodes of one 4-core machine, each in a cgroup of half a CPU: together 2 cores. */
    for (int r = 0; r < 4; r++) {
        host(&hs[r], r, r, names[r], "cccc", 4, 1, NAN, -1);
        hs[r].cpu_quota = 0.5;
    }
    n = wb_ceiling_machines(hs, 4, m, 4, of);
    WBTEST_CHECK(n == 1 && m[0].cpu_quota == 2.0 && m[0].cores_usable == 2 && wb_ceiling_oversubscribed(&m[0]),
                 "nodes' quotas add up: 4 x 0.5 CPU is 2 usable cores for 4 ranks (%g, %d)", m[0].cpu_quota,
                 m[0].cores_usable);
    hs[3].cpu_quota = NAN;
    n = wb_ceiling_machines(hs, 4, m, 4, of);
    WBTEST_CHECK(isnan(m[0].cpu_quota) && m[0].cores_usable == 1,
                 "one node without a quota: no machine quota, the most any rank may use (%d)", m[0].cores_usable);

    /* MPI binds each rank to a core of its own: together they still have both cores. In a container
     * held to CPU 0 both ranks have that one. */
    host(&hs[0], 0, 0, "box", "dddd", 2, 2, NAN, -1);
    host(&hs[1], 1, 0, "box", "dddd", 2, 2, NAN, -1);
    hs[0].cpu_mask = 1, hs[1].cpu_mask = 2;
    n = wb_ceiling_machines(hs, 2, m, 2, of);
    WBTEST_CHECK(m[0].cores_usable == 2 && !wb_ceiling_oversubscribed(&m[0]),
                 "ranks bound to a core each: the union of their masks, 2 cores (%d)", m[0].cores_usable);
    hs[1].cpu_mask = 1;
    n = wb_ceiling_machines(hs, 2, m, 2, of);
    WBTEST_CHECK(m[0].cores_usable == 1 && wb_ceiling_oversubscribed(&m[0]),
                 "both held to CPU 0: 1 usable core, oversubscribed (%d)", m[0].cores_usable);

    /* A quota of 1.5 CPUs allows 2 cores at once, never more than are online. */
    int32_t usable = wb_ceiling_cores_usable(64, 1.5);
    WBTEST_CHECK(usable >= 1 && usable <= 2, "a 1.5-CPU quota: at most 2 usable cores (%d)", (int)usable);
    WBTEST_CHECK(wb_ceiling_cores_usable(1, NAN) == 1, "no quota, one core online: 1");
    double copy = wb_ceiling_copy_Bps(0.01);
    WBTEST_CHECK(isfinite(copy) && copy > 1e8, "the memcpy measures something (%g B/s)", copy);
    return wbtest_done();
}
