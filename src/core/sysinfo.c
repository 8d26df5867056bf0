#define _POSIX_C_SOURCE 200809L
#include "core/sysinfo.h"
#include "core/ceiling.h"
#include "core/sysfs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

/* The highest (want_max) or lowest of the values in files fmt % 0, 1, ... up to the first missing one,
 * times scale, ignoring values outside [lo, hi]; NaN if none. */
static double fold_numbered(const char *fmt, int want_max, double scale, double lo, double hi)
{
    double best = NAN;
    for (int i = 0; i < 1024; i++) {
        char rel[128];
        snprintf(rel, sizeof rel, fmt, i);
        double v = wb_sysfs_double(rel) * scale;
        if (isnan(v))
            break;
        if (v >= lo && v <= hi && (isnan(best) || (want_max ? v > best : v < best)))
            best = v;
    }
    return best;
}

int64_t wb_sysinfo_cache_bytes(int level)
{
    for (int i = 0; i < 16; i++) {
        char rel[96], text[32];
        snprintf(rel, sizeof rel, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        double lv = wb_sysfs_double(rel);
        if (isnan(lv))
            break;
        snprintf(rel, sizeof rel, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        if ((int)lv != level || wb_sysfs_line(rel, text, sizeof text) || !strcmp(text, "Instruction"))
            continue;
        snprintf(rel, sizeof rel, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        char unit = 'B';
        long long v = 0;
        if (wb_sysfs_line(rel, text, sizeof text) || sscanf(text, "%lld%c", &v, &unit) < 1 || v <= 0)
            return -1;
        return unit == 'K' ? v << 10 : unit == 'M' ? v << 20 : unit == 'G' ? v << 30 : v;
    }
    return -1;
}

double wb_sysinfo_temp_c(void)
{
    /* The hottest zone: thermal_zone0 is the SoC on a Raspberry Pi; a PC has package, core and board zones. */
    return fold_numbered("/sys/class/thermal/thermal_zone%d/temp", 1, 1e-3, -50, 150);
}

int wb_sysinfo_on_path(const char *name)
{
    const char *path = getenv("PATH");
    char dir[4096], exe[4200];
    int found = 0;
    for (const char *p = path ? path : ""; *p && !found;) {
        size_t len = strcspn(p, ":");
        snprintf(dir, sizeof dir, "%.*s", (int)len, p);
        snprintf(exe, sizeof exe, "%s/%s", dir, name);
        found = len > 0 && access(exe, X_OK) == 0;
        p += len + (p[len] == ':');
    }
    return found;
}

/* The first line of `vcgencmd get_throttled` ("throttled=0x50005") where vcgencmd is on PATH. */
static int vcgencmd_flags(unsigned long *flags)
{
    if (!wb_sysinfo_on_path("vcgencmd"))
        return -1;
    FILE *f = popen("vcgencmd get_throttled 2>/dev/null", "r");
    if (!f)
        return -1;
    int ok = fscanf(f, " throttled=%lx", flags) == 1;
    pclose(f);
    return ok ? 0 : -1;
}

int wb_sysinfo_throttle_flags(unsigned long *flags)
{
    /* Raspberry Pi OS exposes the firmware's flags here (kernel 5.x+); older ones only through vcgencmd. */
    FILE *f = wb_sysfs_open("/sys/devices/platform/soc/soc:firmware/get_throttled");
    if (!f)
        return vcgencmd_flags(flags);
    int ok = fscanf(f, "%lx", flags) == 1;
    fclose(f);
    return ok ? 0 : -1;
}

int wb_sysinfo_throttled(void)
{
    unsigned long flags = 0;
    return wb_sysinfo_throttle_flags(&flags) == 0 ? flags != 0 : -1;
}

double wb_sysinfo_cpu_mhz_min(void)
{
    return fold_numbered("/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", 0, 1e-3, 1, 1e6);
}

int64_t wb_sysinfo_mem_available(void)
{
#ifdef WB_TEST_FAULTS
    /* Test-only: WB_FAULT_MEM_RANK=R leaves rank R (as the launcher numbers it) 1 MiB, so a check
     * that reads this host can be made to differ between ranks. */
    const char *fault = getenv("WB_FAULT_MEM_RANK"), *me = getenv("OMPI_COMM_WORLD_RANK");
    if (!me)
        me = getenv("PMI_RANK");
    if (fault && me && !strcmp(fault, me))
        return INT64_C(1) << 20;
#endif
    return wb_sysfs_meminfo_bytes("MemAvailable");
}

int64_t wb_sysinfo_peak_rss_bytes(void) { return wb_sysfs_kib_bytes("/proc/self/status", "VmHWM"); }

int64_t wb_sysinfo_address_space(const char **why)
{
    int64_t limit = -1;
    const char *what = NULL;
    if (SIZE_MAX <= UINT32_MAX) {
        limit = INT64_C(3) << 30;
        what = "can be addressed by a 32-bit process (use a 64-bit OS for more)";
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (limit < 0 || (int64_t)rl.rlim_cur < limit)) {
        limit = (int64_t)rl.rlim_cur;
        what = "are allowed by ulimit -v";
    }
    if (why)
        *why = what;
    return limit;
}

int64_t wb_sysinfo_memory_limit(int64_t max_bytes, int one_process, const char **why)
{
    const char *as_why = NULL;
    int64_t avail = max_bytes > 0 ? max_bytes : wb_sysinfo_mem_available();
    int64_t as = one_process ? wb_sysinfo_address_space(&as_why) : -1;
    const char *what = max_bytes > 0 ? "are allowed by --max-memory" : "are available";
    if (as > 0 && (avail < 0 || as < avail)) {
        avail = as;
        what = as_why;
    }
    if (why)
        *why = what;
    return avail;
}

#define WB_STR2(x) #x
#define WB_STR(x) WB_STR2(x)
const char *wb_sysinfo_build_arch(void)
{
#if defined(__x86_64__)
    return "x86_64";
#elif defined(__aarch64__)
    return "aarch64";
#elif defined(__arm__) && defined(__ARM_ARCH)
    return "armv" WB_STR(__ARM_ARCH)
#if defined(__ARM_PCS_VFP)
        "hf"
#endif
        ;
#elif defined(__i386__)
    return "i386";
#else
    return "unknown";
#endif
}

void wb_sysinfo_read(struct wb_host *h)
{
    memset(h, 0, sizeof *h);
    if (gethostname(h->hostname, sizeof h->hostname - 1) != 0)
        snprintf(h->hostname, sizeof h->hostname, "unknown");
    struct utsname u;
    snprintf(h->arch, sizeof h->arch, "%.15s", uname(&u) == 0 ? u.machine : "unknown");
    /* x86 says "model name"; Raspberry Pi kernels say "Model" (the board) or nothing. */
    const char *cpuinfo = "/proc/cpuinfo";
    if (wb_sysfs_field(cpuinfo, "model name", h->cpu_model, sizeof h->cpu_model) != 0 &&
        wb_sysfs_field(cpuinfo, "Model", h->cpu_model, sizeof h->cpu_model) != 0 &&
        wb_sysfs_field(cpuinfo, "Hardware", h->cpu_model, sizeof h->cpu_model) != 0)
        snprintf(h->cpu_model, sizeof h->cpu_model, "unknown");
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    h->cores = cores > 0 ? (int32_t)cores : -1;
    wb_ceiling_boot_id(h->boot_id, sizeof h->boot_id);
    h->cpu_quota = wb_ceiling_cpu_quota();
    h->cores_usable = wb_ceiling_cores_usable(h->cores, h->cpu_quota);
    h->cpu_mask = wb_ceiling_cpu_mask();
    h->copy_Bps = NAN;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    h->mem_bytes = pages > 0 && page > 0 ? (int64_t)pages * page : -1;
    double khz = wb_sysfs_double("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq");
    if (!isnan(khz)) {
        h->cpu_mhz = khz / 1000.0;
    } else {
        char v[64];
        h->cpu_mhz = wb_sysfs_field(cpuinfo, "cpu MHz", v, sizeof v) == 0 ? atof(v) : NAN;
    }
    h->temp_c_start = wb_sysinfo_temp_c();
    h->temp_c_end = NAN;
    h->throttled = wb_sysinfo_throttled();
}
