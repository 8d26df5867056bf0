#define _DEFAULT_SOURCE
#include "par/hostfacts.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <math.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/ceiling.h"
#include "core/sysfs.h"
#include "par/comm.h"

/* Wireless extensions' "get name", answered only by Wi-Fi interfaces (linux/wireless.h clashes with
 * net/if.h; struct ifreq is larger than the struct iwreq it takes). */
#ifndef SIOCGIWNAME
#define SIOCGIWNAME 0x8B01
#endif

/* Seconds a node's memory copy may take at start-up. */
#define COPY_BUDGET_S 0.05

#ifndef WB_GIT_REV
#define WB_GIT_REV "unknown"
#endif

int wb_hostfacts_local_addrs(uint32_t *addrs, int cap)
{
    struct ifaddrs *all = NULL;
    int n = 0;
    if (getifaddrs(&all) != 0)
        return 0;
    for (struct ifaddrs *a = all; a && n < cap; a = a->ifa_next)
        if (a->ifa_addr && a->ifa_addr->sa_family == AF_INET && (a->ifa_flags & IFF_UP) &&
            !(a->ifa_flags & IFF_LOOPBACK))
            addrs[n++] = ((const struct sockaddr_in *)(const void *)a->ifa_addr)->sin_addr.s_addr;
    freeifaddrs(all);
    return n;
}

int wb_hostfacts_candidates(void)
{
    struct ifaddrs *all = NULL;
    char seen[16][IF_NAMESIZE];
    int n = 0;
    if (getifaddrs(&all) != 0)
        return 0;
    for (struct ifaddrs *a = all; a && n < 16; a = a->ifa_next) {
        if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET || !(a->ifa_flags & IFF_UP) ||
            (a->ifa_flags & IFF_LOOPBACK))
            continue;
        int dup = 0;
        for (int i = 0; i < n && !dup; i++)
            dup = !strcmp(seen[i], a->ifa_name);
        if (!dup)
            snprintf(seen[n++], IF_NAMESIZE, "%s", a->ifa_name);
    }
    freeifaddrs(all);
    return n;
}

static int popcount32(uint32_t v)
{
    int n = 0;
    for (; v; v &= v - 1)
        n++;
    return n;
}

/* 1 if /sys and /proc are read from a fake tree (the fault build's WB_SYSFS_ROOT) that has rel: a
 * test's fake interface or routes. */
static int fake_has(const char *rel) { return *wb_sysfs_root() && wb_sysfs_exists(rel); }

/* The interface of the most specific up route in /proc/net/route that covers one of root[n]. The
 * kernel prints each address as the hex of its network-order word, so masks compare as read. */
static void route_iface(const uint32_t *root, int n, char *iface, size_t cap)
{
    uint32_t mine[WB_HOSTFACTS_MAX_ADDRS];
    int nmine = wb_hostfacts_local_addrs(mine, WB_HOSTFACTS_MAX_ADDRS);
    iface[0] = '\0';
    for (int i = 0; i < n; i++)
        for (int j = 0; j < nmine; j++)
            if (root[i] == mine[j]) {
                /* Rank 0 is on this host: its traffic stays here (shared memory or loopback). */
                snprintf(iface, cap, "lo");
                return;
            }
    if (n == 0) {
        snprintf(iface, cap, "lo");
        return;
    }
    /* A fake tree's own routes where it has them, as for the interface's other facts below. */
    char route[4200];
    snprintf(route, sizeof route, "/proc/net/route");
    if (fake_has(route))
        wb_sysfs_path(route, sizeof route, "/proc/net/route");
    wb_hostfacts_route(route, root, n, iface, cap);
}

void wb_hostfacts_route(const char *route_file, const uint32_t *root, int n, char *iface, size_t cap)
{
    iface[0] = '\0';
    /* route_file is a whole path, already under the root (wb_sysfs_path) or a test's own file. */
    FILE *f = fopen(route_file, "r");
    if (!f)
        return;
    char line[512], name[64];
    int best_len = -1;
    unsigned long best_metric = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long dest, gw, flags, refcnt, use, metric, mask;
        if (sscanf(line, "%63s %lx %lx %lx %lu %lu %lu %lx", name, &dest, &gw, &flags, &refcnt, &use, &metric,
                   &mask) != 8 || !(flags & 1ul) || strlen(name) >= cap)
            continue;
        int len = popcount32((uint32_t)mask);
        for (int i = 0; i < n; i++)
            if ((root[i] & (uint32_t)mask) == (uint32_t)dest &&
                (len > best_len || (len == best_len && metric < best_metric))) {
                best_len = len;
                best_metric = metric;
                snprintf(iface, cap, "%s", name);
            }
    }
    fclose(f);
}

/* The interface as the kernel sees it in this process's network namespace. /sys shows the
 * namespace that mounted it, which in a container or an emulated node is often another one, so the
 * facts come from ioctls on a socket. */
struct link {
    int loopback, wifi, mtu, mbps;
    char driver[32];
};

static void link_ioctls(const char *iface, struct link *l)
{
    memset(l, 0, sizeof *l);
    l->mtu = l->mbps = -1;
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0)
        return;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%.*s", (int)sizeof ifr.ifr_name - 1, iface);
    if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0)
        l->loopback = (ifr.ifr_flags & IFF_LOOPBACK) != 0;
    if (ioctl(fd, SIOCGIFMTU, &ifr) == 0)
        l->mtu = ifr.ifr_mtu;
    struct ifreq iw = ifr;
    l->wifi = ioctl(fd, SIOCGIWNAME, &iw) == 0;
    struct ethtool_drvinfo drv = {.cmd = ETHTOOL_GDRVINFO};
    ifr.ifr_data = (char *)&drv;
    if (ioctl(fd, SIOCETHTOOL, &ifr) == 0)
        snprintf(l->driver, sizeof l->driver, "%s", drv.driver);
    /* ETHTOOL_GSET is deprecated but answered by every driver that knows its speed. */
    struct ethtool_cmd cmd = {.cmd = ETHTOOL_GSET};
    ifr.ifr_data = (char *)&cmd;
    if (ioctl(fd, SIOCETHTOOL, &ifr) == 0) {
        uint32_t speed = ethtool_cmd_speed(&cmd);
        l->mbps = speed == 0 || speed == (uint32_t)SPEED_UNKNOWN ? -1 : (int)speed;
    }
    close(fd);
}

/* ethernet, wifi, bridge, virtual or loopback: from a fake sysfs tree in the fault build, else from
 * the flags, the wireless extensions and the driver's name. */
static const char *iface_kind(const char *iface, const struct link *l)
{
    char rel[64], wifi_rel[80], phy_rel[80], br_rel[80], dev_rel[80];
    if (!*iface)
        return "unknown";
    snprintf(rel, sizeof rel, "/sys/class/net/%.24s", iface);
    snprintf(wifi_rel, sizeof wifi_rel, "%s/wireless", rel);
    snprintf(phy_rel, sizeof phy_rel, "%s/phy80211", rel);
    snprintf(br_rel, sizeof br_rel, "%s/bridge", rel);
    snprintf(dev_rel, sizeof dev_rel, "%s/device", rel);
    if (fake_has(rel)) {
        if (!strcmp(iface, "lo"))
            return "loopback";
        if (wb_sysfs_exists(wifi_rel) || wb_sysfs_exists(phy_rel))
            return "wifi";
        if (wb_sysfs_exists(br_rel))
            return "bridge";
        return wb_sysfs_exists(dev_rel) ? "ethernet" : "virtual";
    }
    if (l->loopback || !strcmp(iface, "lo"))
        return "loopback";
    if (l->wifi)
        return "wifi";
    if (!strcmp(l->driver, "bridge"))
        return "bridge";
    static const char *const virtual_drivers[] = {"veth", "tun", "vxlan", "dummy", "wireguard", "macvlan",
                                                   "ipvlan", "vrf", "openvswitch", "ifb", NULL};
    for (int i = 0; virtual_drivers[i]; i++)
        if (!strcmp(l->driver, virtual_drivers[i]))
            return "virtual";
    return *l->driver ? "ethernet" : "unknown";
}

void wb_hostfacts_read(struct wb_host *h, const uint32_t *root, int n, const char *fftw, const char *hdf5)
{
    wb_sysfs_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", h->governor, sizeof h->governor);
    h->freq_min_mhz = wb_sysfs_double("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_min_freq") / 1000.0;
    h->freq_max_mhz = wb_sysfs_double("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq") / 1000.0;
    if (wb_sysfs_line("/sys/firmware/devicetree/base/model", h->model, sizeof h->model) != 0)
        wb_sysfs_line("/sys/class/dmi/id/product_name", h->model, sizeof h->model);
    route_iface(root, n, h->iface, sizeof h->iface);
    struct link l;
    link_ioctls(h->iface, &l);
    snprintf(h->iface_kind, sizeof h->iface_kind, "%s", iface_kind(h->iface, &l));
    h->link_mbps = l.mbps;
    h->mtu = l.mtu;
    char rel[160];
    snprintf(rel, sizeof rel, "/sys/class/net/%s/speed", h->iface);
    if (*h->iface && fake_has(rel)) {
        double mbps = wb_sysfs_double(rel);
        h->link_mbps = isnan(mbps) || mbps <= 0 ? -1 : (int32_t)mbps;
    }
    snprintf(rel, sizeof rel, "/sys/class/net/%s/mtu", h->iface);
    if (*h->iface && fake_has(rel)) {
        double mtu = wb_sysfs_double(rel);
        h->mtu = isnan(mtu) ? -1 : (int32_t)mtu;
    }
    snprintf(h->git_rev, sizeof h->git_rev, "%s", WB_GIT_REV);
#ifdef WB_TEST_FAULTS
    /* Test-only: WB_FAULT_GIT_REV=R:REV makes rank R (as the launcher numbers it) a stand-in for a node
     * with another build. */
    const char *fault = getenv("WB_FAULT_GIT_REV"), *me = getenv("OMPI_COMM_WORLD_RANK");
    me = me ? me : getenv("PMI_RANK");
    if (fault && me && strchr(fault, ':') && atoi(fault) == atoi(me))
        snprintf(h->git_rev, sizeof h->git_rev, "%s", strchr(fault, ':') + 1);
#endif
    snprintf(h->mpi_library, sizeof h->mpi_library, "%s", wb_comm_library_version());
    snprintf(h->fftw_version, sizeof h->fftw_version, "%s", fftw ? fftw : "");
    snprintf(h->hdf5_version, sizeof h->hdf5_version, "%s", hdf5 ? hdf5 : "");
}

int wb_hostfacts_root_addrs(uint32_t *addrs, int *n)
{
    struct {
        int32_t n;
        uint32_t addr[WB_HOSTFACTS_MAX_ADDRS];
    } root = {0, {0}};
    if (wb_comm_rank() == 0)
        root.n = wb_hostfacts_local_addrs(root.addr, WB_HOSTFACTS_MAX_ADDRS);
    int rc = wb_comm_bcast(&root, sizeof root, 0);
    *n = rc ? 0 : root.n;
    memcpy(addrs, root.addr, sizeof root.addr);
    return rc;
}

double wb_hostfacts_copy_Bps(void)
{
    static int measured;
    static double copy_Bps = NAN;
    if (measured)
        return copy_Bps;
    measured = 1;
    /* One copy per node, by its first rank: the memory bandwidth ceiling, in about COPY_BUDGET_S. */
    const int *node = wb_comm_node_map(NULL);
    int me = wb_comm_rank(), first = 1;
    for (int q = 0; q < me && first; q++)
        first = node[q] != node[me];
    copy_Bps = first ? wb_ceiling_copy_Bps(COPY_BUDGET_S) : NAN;
    return copy_Bps;
}

int wb_hostfacts_fill(struct wb_host *h, const char *fftw, const char *hdf5)
{
    uint32_t root[WB_HOSTFACTS_MAX_ADDRS];
    int n = 0;
    int rc = wb_hostfacts_root_addrs(root, &n);
    wb_hostfacts_read(h, root, n, fftw, hdf5);
    h->copy_Bps = wb_hostfacts_copy_Bps();
    return rc;
}
