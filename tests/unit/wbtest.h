/* wbtest: a tiny test harness; each check prints "ok - ..." or "not ok - ...",
 * and wbtest_done() prints "N passed, N failed" and returns the exit status. */
#ifndef WB_WBTEST_H
#define WB_WBTEST_H

#include <stdio.h>

static int wbtest_passed, wbtest_failed;

#define WBTEST_CHECK(cond, ...)                                                \
    do {                                                                       \
        if (cond) {                                                            \
            wbtest_passed++;                                                   \
            printf("ok - ");                                                   \
        } else {                                                               \
            wbtest_failed++;                                                   \
            printf("not ok - %s:%d: ", __FILE__, __LINE__);                    \
        }                                                                      \
        printf(__VA_ARGS__);                                                   \
        printf("\n");                                                          \
    } while (0)

static inline int wbtest_done(void)
{
    printf("%d passed, %d failed\n", wbtest_passed, wbtest_failed);
    return wbtest_failed ? 1 : 0;
}

#endif
