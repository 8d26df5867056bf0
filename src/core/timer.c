#define _POSIX_C_SOURCE 200809L
#include "core/timer.h"

#include <math.h>
#include <mpi.h>
#include <time.h>

/* Whether MPI is running: MPICH refuses MPI_Wtick before MPI_Init and after MPI_Finalize, and
 * the unit tests and test tools never start it. Once seen running it is taken as running. */
static int mpi_running(void)
{
    static int up;
    if (!up) {
        int init = 0, fin = 0;
        MPI_Initialized(&init);
        MPI_Finalized(&fin);
        up = init && !fin;
    }
    return up;
}

/* CLOCK_MONOTONIC, under every MPI: Open MPI's MPI_Wtime reads it too, but MPICH's reads
 * CLOCK_REALTIME, which a step of the wall clock inside a timing moves (NTP setting the clock of a
 * board without a real-time clock, a VM's time agent). */
double wb_timer_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double wtick(void)
{
    struct timespec res = {0, 1};
    if (mpi_running())
        return MPI_Wtick();
    clock_getres(CLOCK_MONOTONIC, &res);
    return (double)res.tv_sec + 1e-9 * (double)res.tv_nsec;
}

double wb_timer_thread_cpu_s(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return NAN;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double wb_timer_utc_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double parts_s[WB_TIMER_NPARTS];

void wb_timer_part_add(enum wb_timer_part part, double s) { parts_s[part] += s; }

double wb_timer_part_s(enum wb_timer_part part) { return parts_s[part]; }

void wb_timer_parts_reset(void)
{
    for (int i = 0; i < WB_TIMER_NPARTS; i++)
        parts_s[i] = 0;
}

double wb_timer_real_minus_now_s(void)
{
    /* The realtime read bracketed by two clock reads; the tightest of a few brackets wins. */
    double best = INFINITY, diff = 0;
    for (int i = 0; i < 5; i++) {
        struct timespec ts;
        double w0 = wb_timer_now_s();
        clock_gettime(CLOCK_REALTIME, &ts);
        double w1 = wb_timer_now_s();
        if (w1 - w0 < best) {
            best = w1 - w0;
            diff = ((double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec) - 0.5 * (w0 + w1);
        }
    }
    return diff;
}

double wb_timer_tick_s(void)
{
    static double tick;
    if (tick > 0)
        return tick;
    /* MPI_Wtick can claim more than the clock delivers; take the smallest observed step too. */
    double smallest = INFINITY;
    for (int i = 0; i < 20; i++) {
        double t0 = wb_timer_now_s(), t1;
        while ((t1 = wb_timer_now_s()) == t0)
            ;
        if (t1 - t0 < smallest)
            smallest = t1 - t0;
    }
    double hz = wb_timer_counter_hz();
    tick = fmax(fmax(wtick(), smallest), hz > 0 ? 1.0 / hz : 0.0);
    return tick;
}

const char *wb_timer_counter_name(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return "tsc";
#elif defined(__aarch64__)
    return "cntvct_el0";
#else
    return "clock_gettime";
#endif
}

double wb_timer_counter_hz(void)
{
#if defined(__aarch64__)
    uint64_t hz;
    __asm__ volatile("mrs %0, cntfrq_el0" : "=r"(hz));
    return hz > 0 ? (double)hz : NAN;
#else
    return NAN;
#endif
}

void wb_timer_sleep_s(double s)
{
    if (!(s > 0))
        return;
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0) {
    }
}

void wb_timer_backoff_reset(struct wb_timer_backoff *i) { i->cur_s = 0; }

void wb_timer_backoff_wait(struct wb_timer_backoff *i, double until_abs_s)
{
    if (i->max_s <= 0)
        return;
    i->cur_s = i->cur_s > 0 ? fmin(2 * i->cur_s, i->max_s) : fmin(10e-6, i->max_s);
    double s = i->cur_s;
    if (isfinite(until_abs_s))
        s = fmin(s, until_abs_s - wb_timer_now_s());
    wb_timer_sleep_s(s);
}

int wb_timer_too_short(double t_s) { return t_s < 100.0 * wb_timer_tick_s(); }
