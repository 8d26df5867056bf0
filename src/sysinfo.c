#define _POSIX_C_SOURCE 200809L
#include "sysinfo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The value after "key" and a colon on the first matching line of a /proc-style file. */
static int read_field(const char *path, const char *key, char *out, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[512];
    int found = -1;
    size_t klen = strlen(key);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) != 0)
            continue;
        char *colon = strchr(line + klen, ':');
        if (!colon)
            continue;
        char *v = colon + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        v[strcspn(v, "\n")] = '\0';
        snprintf(out, cap, "%s", v);
        found = 0;
        break;
    }
    fclose(f);
    return found;
}

static double read_number_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NAN;
    double v = NAN;
    if (fscanf(f, "%lf", &v) != 1)
        v = NAN;
    fclose(f);
    return v;
}

double wb_sysinfo_temp_c(void)
{
    /* thermal_zone0 is the SoC on a Raspberry Pi and usually the package elsewhere. */
    for (int z = 0; z < 8; z++) {
        char path[96];
        snprintf(path, sizeof path, "/sys/class/thermal/thermal_zone%d/temp", z);
        double milli = read_number_file(path);
        if (!isnan(milli) && milli > -50000 && milli < 150000)
            return milli / 1000.0;
    }
    return NAN;
}

int wb_sysinfo_throttled(void)
{
    /* Raspberry Pi OS exposes the firmware's throttled flags here (kernel 5.x+). */
    FILE *f = fopen("/sys/devices/platform/soc/soc:firmware/get_throttled", "r");
    if (!f)
        return -1;
    unsigned long flags = 0;
    int ok = fscanf(f, "%lx", &flags) == 1;
    fclose(f);
    return ok ? (flags != 0) : -1;
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
    char v[128];
    if (read_field("/proc/meminfo", "MemAvailable", v, sizeof v) != 0)
        return -1;
    return (int64_t)strtoll(v, NULL, 10) * 1024;
}

void wb_sysinfo_read(struct wb_host *h)
{
    memset(h, 0, sizeof *h);
    if (gethostname(h->hostname, sizeof h->hostname - 1) != 0)
        snprintf(h->hostname, sizeof h->hostname, "unknown");
    /* x86 says "model name"; Raspberry Pi kernels say "Model" (the board) or nothing. */
    if (read_field("/proc/cpuinfo", "model name", h->cpu_model, sizeof h->cpu_model) != 0 &&
        read_field("/proc/cpuinfo", "Model", h->cpu_model, sizeof h->cpu_model) != 0 &&
        read_field("/proc/cpuinfo", "Hardware", h->cpu_model, sizeof h->cpu_model) != 0)
        snprintf(h->cpu_model, sizeof h->cpu_model, "unknown");
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    h->cores = cores > 0 ? (int32_t)cores : -1;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    h->mem_bytes = pages > 0 && page > 0 ? (int64_t)pages * page : -1;
    double khz = read_number_file("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq");
    if (!isnan(khz)) {
        h->cpu_mhz = khz / 1000.0;
    } else {
        char v[64];
        h->cpu_mhz = read_field("/proc/cpuinfo", "cpu MHz", v, sizeof v) == 0 ? atof(v) : NAN;
    }
    h->temp_c_start = wb_sysinfo_temp_c();
    h->temp_c_end = NAN;
    h->throttled = wb_sysinfo_throttled();
}
