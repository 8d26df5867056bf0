/* timer: the wall clock (MPI_Wtime), its resolution, and statistics over raw samples. */
#ifndef WB_TIMER_H
#define WB_TIMER_H

#include <stddef.h>

/* Wall-clock time in seconds from an arbitrary origin (MPI_Wtime). Local. */
double wb_timer_now_s(void);

/* Resolution of wb_timer_now_s in seconds: the larger of MPI_Wtick and the
 * smallest step actually observed. Measured once, then cached. Local. */
double wb_timer_tick_s(void);

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

/* Statistics of a sample; NaN entries are ignored. */
struct wb_stats {
    size_t n;
    double min, median, mean, p95, max, stddev;
};

/* Fill st from x[n] (any order; x is not modified). n may be 0 (all NaN). */
void wb_timer_stats(const double *x, size_t n, struct wb_stats *st);

/* Median of x[n], NaN ignored; NaN if empty. */
double wb_timer_median(const double *x, size_t n);

/* Quantile q (0..1) of x[n] by linear interpolation between order statistics, NaN ignored; NaN if empty. */
double wb_timer_quantile(const double *x, size_t n, double q);

/* The distribution-free 95% confidence interval of the median of x[n] (NaN ignored): the order
 * statistics [*lo, *hi] whose coverage is at least 95%; returns the coverage reached (below 0.95
 * when fewer than 6 values allow none), and NaN bounds when x holds nothing. Local. */
double wb_timer_median_ci(const double *x, size_t n, double *lo, double *hi);

/* 1 if a measured duration of t_s spans fewer than 100 timer ticks. */
int wb_timer_too_short(double t_s);

#endif
