/* sysfs: a fake tree under WB_SYSFS_ROOT reaches every reader of /sys and /proc, those that once
 * opened their files directly too (MemAvailable, the swap of `check`, the route of /hosts' iface).
 * Linked with the fault build's sysfs, sysinfo and hostfacts, which honour WB_SYSFS_ROOT (Makefile). */
#define _DEFAULT_SOURCE
#include <arpa/inet.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/sysfs.h"
#include "core/sysinfo.h"
#include "par/hostfacts.h"
#include "wbtest.h"

static char root[] = "/tmp/wb-sysfs-XXXXXX";

/* root/rel with its folders made, holding text. */
static void put(const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *s = strchr(path + strlen(root) + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = '\0';
        mkdir(path, 0755);
        *s = '/';
    }
    FILE *fp = fopen(path, "w");
    fputs(text, fp);
    fclose(fp);
}

int main(void)
{
    if (!mkdtemp(root))
        return 1;
    setenv("WB_SYSFS_ROOT", root, 1);
    if (!*wb_sysfs_root()) {
        /* The sanitizer build links the release objects, which read only the real root. */
        WBTEST_SKIP("the fake tree: not linked with the fault build");
        return wbtest_done();
    }
    put("proc/meminfo", "MemTotal:        1000000 kB\nMemAvailable:       2048 kB\nSwapCached:           0 kB\n"
                        "SwapTotal:       1048576 kB\nSwapFree:         524288 kB\n");
    char route[512];
    snprintf(route, sizeof route,
             "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
             "fake0\t%08X\t00000000\t0001\t0\t0\t0\t%08X\t0\t0\t0\n",
             (unsigned)inet_addr("10.99.0.0"), (unsigned)inet_addr("255.255.0.0"));
    put("proc/net/route", route);
    put("sys/class/net/fake0/speed", "100\n");
    put("sys/class/net/fake0/mtu", "1400\n");
    put("sys/class/net/fake0/device/vendor", "0x1af4\n");
    put("sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "1400000\n");
    put("sys/firmware/devicetree/base/model", "Raspberry Pi 3 Model B Plus Rev 1.3");

    WBTEST_CHECK(wb_sysinfo_mem_available() == INT64_C(2048) * 1024, "MemAvailable from the fake /proc/meminfo: %lld",
                 (long long)wb_sysinfo_mem_available());
    WBTEST_CHECK(wb_sysfs_meminfo_bytes("SwapFree") == INT64_C(524288) * 1024, "SwapFree in bytes");
    WBTEST_CHECK(wb_sysfs_meminfo_bytes("Swap") == -1 && wb_sysfs_meminfo_bytes("MemFree") == -1,
                 "a key is matched whole, and a missing one is -1");
    WBTEST_CHECK(wb_sysfs_double("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq") == 1400000,
                 "a number from the fake /sys");
    WBTEST_CHECK(isnan(wb_sysfs_double("/sys/no/such/file")) && wb_sysfs_i64("/sys/no/such/file") == -1,
                 "a missing file is NaN or -1");

    struct wb_host h;
    memset(&h, 0, sizeof h);
    uint32_t rank0 = inet_addr("10.99.0.1");
    wb_hostfacts_read(&h, &rank0, 1, "", "");
    WBTEST_CHECK(!strcmp(h.iface, "fake0"), "/hosts' iface from the fake /proc/net/route: '%s'", h.iface);
    WBTEST_CHECK(!strcmp(h.iface_kind, "ethernet") && h.link_mbps == 100 && h.mtu == 1400,
                 "its kind, speed and MTU from the fake /sys/class/net: %s %d %d", h.iface_kind, h.link_mbps, h.mtu);
    WBTEST_CHECK(!strcmp(h.model, "Raspberry Pi 3 Model B Plus Rev 1.3") && h.freq_max_mhz == 1400,
                 "the model and frequency range from the fake /sys");

    unsetenv("WB_SYSFS_ROOT");
    WBTEST_CHECK(!*wb_sysfs_root(), "without WB_SYSFS_ROOT the real root");
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);
    return wbtest_done();
}
