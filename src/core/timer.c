#define _POSIX_C_SOURCE 200809L
#include "core/timer.h"

#include <math.h>
#include <mpi.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

double wb_timer_now_s(void) { return MPI_Wtime(); }

double wb_timer_tick_s(void)
{
    static double tick;
    if (tick > 0)
        return tick;
    /* MPI_Wtick can claim more than the clock delivers; take the smallest observed step too. */
    double smallest = INFINITY;
    for (int i = 0; i < 20; i++) {
        double t0 = MPI_Wtime(), t1;
        while ((t1 = MPI_Wtime()) == t0)
            ;
        if (t1 - t0 < smallest)
            smallest = t1 - t0;
    }
    tick = fmax(MPI_Wtick(), smallest);
    return tick;
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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Copies the non-NaN values, sorted; returns how many. */
static size_t sorted_copy(const double *x, size_t n, double **out)
{
    double *s = malloc((n ? n : 1) * sizeof *s);
    size_t m = 0;
    if (!s) {
        *out = NULL;
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        if (!isnan(x[i]))
            s[m++] = x[i];
    qsort(s, m, sizeof *s, cmp_double);
    *out = s;
    return m;
}

static double quantile_sorted(const double *s, size_t m, double q)
{
    if (m == 0)
        return NAN;
    double pos = q * (double)(m - 1);
    size_t lo = (size_t)pos;
    size_t hi = lo + 1 < m ? lo + 1 : lo;
    return s[lo] + (pos - (double)lo) * (s[hi] - s[lo]);
}

void wb_timer_stats(const double *x, size_t n, struct wb_stats *st)
{
    double *s;
    size_t m = sorted_copy(x, n, &s);
    memset(st, 0, sizeof *st);
    st->n = m;
    if (m == 0) {
        st->min = st->median = st->mean = st->p95 = st->max = st->stddev = NAN;
        free(s);
        return;
    }
    double sum = 0;
    for (size_t i = 0; i < m; i++)
        sum += s[i];
    st->mean = sum / (double)m;
    double var = 0;
    for (size_t i = 0; i < m; i++)
        var += (s[i] - st->mean) * (s[i] - st->mean);
    st->stddev = m > 1 ? sqrt(var / (double)(m - 1)) : 0;
    st->min = s[0];
    st->max = s[m - 1];
    st->median = quantile_sorted(s, m, 0.5);
    st->p95 = quantile_sorted(s, m, 0.95);
    free(s);
}

double wb_timer_median(const double *x, size_t n)
{
    struct wb_stats st;
    wb_timer_stats(x, n, &st);
    return st.median;
}

double wb_timer_quantile(const double *x, size_t n, double q)
{
    double *s;
    size_t m = sorted_copy(x, n, &s);
    double v = quantile_sorted(s, m, q);
    free(s);
    return v;
}

/* P(B <= k) for B ~ Binomial(n, 1/2). */
static double binom_cdf_half(long k, long n)
{
    if (k < 0)
        return 0.0;
    if (k >= n)
        return 1.0;
    double sum = 0;
    for (long i = 0; i <= k; i++)
        sum += exp(lgamma((double)n + 1) - lgamma((double)i + 1) - lgamma((double)(n - i) + 1) - (double)n * log(2.0));
    return fmin(1.0, sum);
}

double wb_timer_median_ci(const double *x, size_t n, double *lo, double *hi)
{
    double *s;
    size_t m = sorted_copy(x, n, &s);
    *lo = *hi = NAN;
    double coverage = 0;
    if (m > 0) {
        /* The count of values below the true median is Binomial(m, 1/2): widen [X_(j), X_(m+1-j)] from the
         * middle until it covers 95%, or take the whole range when m is too small for that. */
        long j = 1;
        while (j + 1 <= (long)m / 2 && binom_cdf_half(j, (long)m) <= 0.025)
            j++;
        coverage = m > 1 ? 1.0 - 2.0 * binom_cdf_half(j - 1, (long)m) : 0.0;
        *lo = s[j - 1];
        *hi = s[m - (size_t)j];
    }
    free(s);
    return coverage;
}

int wb_timer_too_short(double t_s) { return t_s < 100.0 * wb_timer_tick_s(); }
