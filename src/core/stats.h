/* stats: statistics over raw samples (NaN entries ignored): summary, median, quantiles, the median's
 * confidence interval. Local and pure. */
#ifndef WB_STATS_H
#define WB_STATS_H

#include <stddef.h>

/* Statistics of a sample; NaN entries are ignored. */
struct wb_stats {
    size_t n;
    double min, median, mean, p95, max, stddev;
};

/* Fill st from x[n] (any order; x is not modified). n may be 0 (all NaN). */
void wb_stats_fill(const double *x, size_t n, struct wb_stats *st);

/* Median of x[n], NaN ignored; NaN if empty. */
double wb_stats_median(const double *x, size_t n);

/* Quantile q (0..1) of x[n] by linear interpolation between order statistics, NaN ignored; NaN if empty. */
double wb_stats_quantile(const double *x, size_t n, double q);

/* The distribution-free 95% confidence interval of the median of x[n] (NaN ignored): the order
 * statistics [*lo, *hi] whose coverage is at least 95%; returns the coverage reached (below 0.95
 * when fewer than 6 values allow none), and NaN bounds when x holds nothing. Local. */
double wb_stats_median_ci(const double *x, size_t n, double *lo, double *hi);

#endif
