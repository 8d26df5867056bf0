/* Statistics (core/stats): min, median, mean, p95, max and stddev over samples with NaN gaps, quantiles, the median CI. */
#include <math.h>
#include <string.h>

#include "core/stats.h"
#include "wbtest.h"

static int near(double a, double b) { return fabs(a - b) <= 1e-12 * fmax(1.0, fabs(b)); }

int main(void)
{
    double x[] = {3, 1, NAN, 2, 4};
    double copy[5];
    memcpy(copy, x, sizeof x);
    struct wb_stats st;
    wb_stats_fill(x, 5, &st);
    WBTEST_CHECK(st.n == 4, "NaN is not counted (n %zu)", st.n);
    WBTEST_CHECK(st.min == 1 && st.max == 4, "min and max");
    WBTEST_CHECK(near(st.mean, 2.5) && near(st.median, 2.5), "mean and median of 1..4 are 2.5");
    WBTEST_CHECK(near(st.p95, 3.85), "p95 interpolates between order statistics (%.17g)", st.p95);
    WBTEST_CHECK(near(st.stddev, sqrt(5.0 / 3.0)), "stddev is the sample one, over n - 1 (%.17g)", st.stddev);
    WBTEST_CHECK(!memcmp(copy, x, sizeof x), "the input is not reordered");

    double odd[] = {9, 7, 8};
    WBTEST_CHECK(wb_stats_median(odd, 3) == 8, "median of an odd count is the middle value");
    WBTEST_CHECK(wb_stats_quantile(odd, 3, 0) == 7 && wb_stats_quantile(odd, 3, 1) == 9,
                 "quantile 0 and 1 are the extremes");
    WBTEST_CHECK(near(wb_stats_quantile(odd, 3, 0.25), 7.5), "quantile 0.25 of 7,8,9 is 7.5");

    double one = 0.125;
    wb_stats_fill(&one, 1, &st);
    WBTEST_CHECK(st.n == 1 && st.min == one && st.median == one && st.p95 == one && st.max == one && st.stddev == 0,
                 "one sample: every statistic is that sample, stddev 0");

    double none[] = {NAN, NAN};
    wb_stats_fill(none, 2, &st);
    WBTEST_CHECK(st.n == 0 && isnan(st.min) && isnan(st.median) && isnan(st.mean) && isnan(st.p95) &&
                     isnan(st.max) && isnan(st.stddev),
                 "all NaN: n 0 and every statistic NaN");
    wb_stats_fill(NULL, 0, &st);
    WBTEST_CHECK(st.n == 0 && isnan(st.median), "no samples at all");
    WBTEST_CHECK(isnan(wb_stats_median(none, 2)) && isnan(wb_stats_quantile(none, 2, 0.5)), "median of nothing is NaN");

    double big[1000];
    for (int i = 0; i < 1000; i++)
        big[i] = (double)((i * 7919) % 1000);
    wb_stats_fill(big, 1000, &st);
    WBTEST_CHECK(st.min == 0 && st.max == 999 && near(st.median, 499.5) && near(st.p95, 949.05),
                 "a shuffled 0..999: median 499.5, p95 949.05 (%.17g)", st.p95);
    return wbtest_done();
}
