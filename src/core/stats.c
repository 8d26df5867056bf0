#include "core/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

void wb_stats_fill(const double *x, size_t n, struct wb_stats *st)
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

double wb_stats_median(const double *x, size_t n)
{
    struct wb_stats st;
    wb_stats_fill(x, n, &st);
    return st.median;
}

double wb_stats_quantile(const double *x, size_t n, double q)
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

double wb_stats_median_ci(const double *x, size_t n, double *lo, double *hi)
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
