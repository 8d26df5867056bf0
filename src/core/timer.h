/* timer: the clock (CLOCK_MONOTONIC), its resolution, sleeps and polling pauses. */
#ifndef WB_TIMER_H
#define WB_TIMER_H

#include <stddef.h>
#include <stdint.h>

/* Elapsed time in seconds from an arbitrary origin (CLOCK_MONOTONIC under every MPI: MPICH's
 * MPI_Wtime follows the wall clock, steps and all). Local. */
double wb_timer_now_s(void);

/* CLOCK_REALTIME minus wb_timer_now_s, read back to back: adding it turns this process's
 * wb_timer_now_s times into Unix time, and its difference between two processes turns their
 * wb_timer_now_s offset into their wall-clock offset. Local. */
double wb_timer_real_minus_now_s(void);

/* Resolution of the program's timing in seconds: the largest of MPI_Wtick, the smallest step of
 * wb_timer_now_s actually observed, and one period of the CPU counter where its rate is known
 * (52 ns on a Pi 3). Measured once, then cached; the result file stores it (timer_tick_s). Local. */
double wb_timer_tick_s(void);

/* CPU seconds the calling thread has run (CLOCK_THREAD_CPUTIME_ID), from an arbitrary origin. Under
 * a hypervisor that accounts steal apart (Linux's paravirtual time accounting, as on KVM and EC2),
 * time the host gave to another guest is not in it; nor is time another process had the core. Local. */
double wb_timer_thread_cpu_s(void);

/* CLOCK_REALTIME in s since 1970-01-01 UTC; callable before MPI starts. Local. */
double wb_timer_utc_s(void);

/* The run's own time by part on this process, for the file's own_*_s attributes (docs/schema.md): FFTW
 * planning, clock alignment, the result file's HDF5 calls. Each site adds what it spent; main zeroes
 * the parts as the subcommand starts, so start-up keeps its own share. Local, the main thread only. */
enum wb_timer_part { WB_TIMER_PLAN, WB_TIMER_ALIGN, WB_TIMER_WRITE, WB_TIMER_NPARTS };
void wb_timer_part_add(enum wb_timer_part part, double s);
double wb_timer_part_s(enum wb_timer_part part);
void wb_timer_parts_reset(void);

/* Sleep for s seconds (nanosleep, resumed after signals); nothing for s <= 0. Local. */
void wb_timer_sleep_s(double s);

/* An idle pause for polling loops: grows from 10 us to max_s while nothing happens; max_s 0 spins. */
struct wb_timer_backoff {
    double cur_s, max_s;
};
/* Start again from the shortest pause (after activity). Local. */
void wb_timer_backoff_reset(struct wb_timer_backoff *b);
/* Sleep the next pause, but not past until_abs_s (wb_timer_now_s time). Local. */
void wb_timer_backoff_wait(struct wb_timer_backoff *b, double until_abs_s);

/* 1 if a measured duration of t_s spans fewer than 100 timer ticks. */
int wb_timer_too_short(double t_s);

/* The CPU's own counter, which times the FFT phase inside a call (fftw/fft): the time-stamp counter
 * on x86, the generic timer's virtual count (cntvct_el0) on aarch64. armhf has none here: the
 * AArch32 counter is readable from user space only where the kernel allows it, so it reads
 * clock_gettime (in ns) there, as it does where WB_TIMER_COUNTER is 0. Local, cheap. */
#if defined(__x86_64__) || defined(__i386__)
#define WB_TIMER_COUNTER 1
static inline uint64_t wb_timer_counter(void) { return __builtin_ia32_rdtsc(); }
#elif defined(__aarch64__)
#define WB_TIMER_COUNTER 1
static inline uint64_t wb_timer_counter(void)
{
    uint64_t v;
    __asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
    return v;
}
#else
#define WB_TIMER_COUNTER 0
static inline uint64_t wb_timer_counter(void) { return (uint64_t)(wb_timer_now_s() * 1e9); }
#endif

/* The counter's name ("tsc", "cntvct_el0", "clock_gettime") and its rate in Hz where the CPU states
 * it (cntfrq_el0: 19.2 MHz on a Raspberry Pi 3, 54 MHz on a Pi 4 and 5), else NaN (x86's TSC rate
 * is not architectural). Local. */
const char *wb_timer_counter_name(void);
double wb_timer_counter_hz(void);

#endif
