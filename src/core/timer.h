/* timer: the wall clock (MPI_Wtime), its resolution, sleeps and polling pauses. */
#ifndef WB_TIMER_H
#define WB_TIMER_H

#include <stddef.h>

/* Wall-clock time in seconds from an arbitrary origin (MPI_Wtime). Local. */
double wb_timer_now_s(void);

/* CLOCK_REALTIME minus wb_timer_now_s, read back to back: adding it turns this process's
 * wb_timer_now_s times into Unix time, and its difference between two processes turns their
 * wb_timer_now_s offset into their wall-clock offset. Local. */
double wb_timer_real_minus_now_s(void);

/* Resolution of wb_timer_now_s in seconds: the larger of MPI_Wtick and the
 * smallest step actually observed. Measured once, then cached. Local. */
double wb_timer_tick_s(void);

/* CPU seconds the calling thread has run (CLOCK_THREAD_CPUTIME_ID), from an arbitrary origin. Under
 * a hypervisor that accounts steal apart (Linux's paravirtual time accounting, as on KVM and EC2),
 * time the host gave to another guest is not in it; nor is time another process had the core. Local. */
double wb_timer_thread_cpu_s(void);

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

#endif
