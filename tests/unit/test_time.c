/* Time past 2038 in this build: time_t and the UTC stamp the result file stores (io/results.c formats
 * created_utc with gmtime_r and strftime). A 32-bit build (armhf) has a 64-bit time_t only with
 * -D_TIME_BITS=64, which the Makefile gives every build. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "wbtest.h"

int main(void)
{
    WBTEST_CHECK(sizeof(time_t) >= 8, "time_t has %d bits", (int)(8 * sizeof(time_t)));
    static const struct {
        int64_t t;
        const char *want;
    } cases[] = {{INT64_C(2147483647), "2038-01-19T03:14:07Z"},
                 {INT64_C(2147483648), "2038-01-19T03:14:08Z"},
                 {INT64_C(2214129600), "2040-02-29T12:00:00Z"},
                 {INT64_C(4102444800), "2100-01-01T00:00:00Z"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        time_t t = (time_t)cases[i].t;
        struct tm tm;
        char got[32] = "";
        if (gmtime_r(&t, &tm))
            strftime(got, sizeof got, "%Y-%m-%dT%H:%M:%SZ", &tm);
        WBTEST_CHECK(!strcmp(got, cases[i].want), "%lld s is %s (got '%s')", (long long)cases[i].t, cases[i].want,
                     got);
    }
    return wbtest_done();
}
