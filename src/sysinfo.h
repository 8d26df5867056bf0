/* sysinfo: facts about this host: CPU model, cores, memory, frequency, temperature, throttling. */
#ifndef WB_SYSINFO_H
#define WB_SYSINFO_H

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
};

/* Read this host's facts into h (rank and node are left for the caller). Local, never fails. */
void wb_sysinfo_read(struct wb_host *h);

/* Current temperature in degrees Celsius, NaN if no sensor is readable. Local. */
double wb_sysinfo_temp_c(void);

/* Raspberry Pi throttling state (1/0), or -1 where it cannot be read. Local. */
int wb_sysinfo_throttled(void);

/* Bytes of memory available for new allocations (MemAvailable), or -1 if unknown. Local. */
int64_t wb_sysinfo_mem_available(void);

#endif
