/* sysinfo: facts about this host: CPU model, cores, memory, frequency, temperature, throttling. It
 * reads /sys and /proc through sysfs (in the fault build a fake tree under WB_SYSFS_ROOT, e.g. a
 * throttled Pi). */
#ifndef WB_SYSINFO_H
#define WB_SYSINFO_H

#include <stddef.h>
#include <stdint.h>

struct wb_host {
    int32_t rank;
    int32_t node;           /* index of the distinct host */
    char hostname[64];
    char cpu_model[128];
    int32_t cores;          /* online logical CPUs */
    int64_t mem_bytes;      /* physical memory */
    double cpu_mhz;         /* current frequency of CPU 0, NaN if unknown */
    double temp_c_start;    /* SoC/package temperature at start, NaN if unknown */
    double temp_c_end;
    int32_t throttled;      /* 1 throttled now or since boot (Pi firmware), 0 not, -1 unknown */
    /* Filled by wb_hostfacts_read (hostfacts.h); "" or -1 where unknown. */
    char governor[24];      /* cpufreq scaling governor of CPU 0 */
    double freq_min_mhz, freq_max_mhz; /* CPU 0's hardware frequency range, NaN if unknown */
    char iface[24];         /* the interface carrying traffic to rank 0's address ("lo" on its host) */
    char iface_kind[12];    /* ethernet, wifi, bridge, virtual, loopback, unknown */
    int32_t link_mbps;      /* the interface's link speed in Mbit/s, -1 unknown */
    int32_t mtu;            /* bytes, -1 unknown */
    char git_rev[24];       /* this binary's build */
    char mpi_library[96];   /* first line of MPI_Get_library_version */
    char fftw_version[32];
    char hdf5_version[16];
    char model[96];         /* board or instance type (device tree model, else DMI product name) */
    char arch[16];          /* the machine the kernel runs this process as (uname -m: x86_64, aarch64, armv7l) */
    /* The ceilings (core/ceiling.h): nodes with one boot_id share one machine's cores. */
    char boot_id[40];       /* the kernel's boot_id, "" unknown */
    double cpu_quota;       /* CPUs the cgroup quota allows, NaN unlimited */
    int32_t cores_usable;   /* online cores, cut to the cgroup quota rounded up; -1 unknown */
    uint64_t cpu_mask;      /* the CPUs 0..63 this process may run on (its affinity), 0 unknown */
    double copy_Bps;        /* the node's memcpy bandwidth (bytes read + written per s), NaN not measured */
};

/* 1 if an executable called name is in a folder of $PATH, else 0. Local. */
int wb_sysinfo_on_path(const char *name);

/* The architecture this binary was compiled for: "x86_64", "aarch64", "armv7hf" (32-bit ARM with
 * the hard-float ABI, Raspberry Pi OS's armhf), ... Local. */
const char *wb_sysinfo_build_arch(void);

/* Read this host's facts into h (rank and node are left for the caller). Local, never fails. */
void wb_sysinfo_read(struct wb_host *h);

/* Current temperature of the hottest thermal zone (/sys/class/thermal) in degrees Celsius, NaN if no
 * sensor is readable. Local. */
double wb_sysinfo_temp_c(void);

/* Raspberry Pi firmware throttle flags (bits 0-3 now: under-voltage, frequency capped, throttled, soft
 * temperature limit; bits 16-19 the same since boot), from the firmware's sysfs node, else from
 * `vcgencmd get_throttled`. 0, or -1 where neither can be read. Local. */
int wb_sysinfo_throttle_flags(unsigned long *flags);

/* Raspberry Pi throttling state (1 now or since boot, 0 never), or -1 where it cannot be read. Local. */
int wb_sysinfo_throttled(void);

/* The lowest current frequency over the CPUs, in MHz (cpufreq), NaN if unknown. Local. */
double wb_sysinfo_cpu_mhz_min(void);

/* Bytes of CPU 0's data (or unified) cache at level 1 or 2, from
 * /sys/devices/system/cpu/cpu0/cache/index* (Linux's cacheinfo, on x86-64 and on aarch64 boards that
 * describe their caches), or -1 if unknown. Local. */
int64_t wb_sysinfo_cache_bytes(int level);

/* Bytes of memory available for new allocations (MemAvailable), or -1 if unknown. Local. */
int64_t wb_sysinfo_mem_available(void);

/* This process's peak resident memory so far (VmHWM of /proc/self/status) in bytes, or -1 if unknown. Local. */
int64_t wb_sysinfo_peak_rss_bytes(void);

/* Bytes this one process can map, or -1 when only memory limits it: a 32-bit process (armhf, Pi 2
 * and older) about 3 GB, the user address space of a 32-bit kernel (a 64-bit kernel gives nearly
 * 4 GB, which the limit leaves as margin for the program, libraries and stacks), or less under
 * ulimit -v (RLIMIT_AS). *why (may be NULL) says which, as a phrase: "can be addressed by a 32-bit
 * process" or "are allowed by ulimit -v". Local. */
int64_t wb_sysinfo_address_space(const char **why);

/* What a point may use: max_bytes when given (--max-memory), else MemAvailable, and with one_process
 * never more than wb_sysinfo_address_space (a node's several ranks each have their own). -1 if
 * unknown. *why says which limit holds, as the end of "only N GB ...": "are allowed by --max-memory",
 * "are available", or the address space's phrase. Local. */
int64_t wb_sysinfo_memory_limit(int64_t max_bytes, int one_process, const char **why);

#endif
