/* wbtest: a tiny test harness; each check prints "ok - ..." or "not ok - ...", a check that cannot
 * run here "skip - ...", and wbtest_done() prints "N passed, N failed" (", N skipped" after it when
 * any was) and returns the exit status. */
#ifndef WB_WBTEST_H
#define WB_WBTEST_H

#include <stdio.h>

static int wbtest_passed, wbtest_failed, wbtest_skipped;

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

/* A check this machine or build cannot make: counted and printed as skipped, never as passed. */
#define WBTEST_SKIP(...)                                                       \
    do {                                                                       \
        wbtest_skipped++;                                                      \
        printf("skip - ");                                                     \
        printf(__VA_ARGS__);                                                   \
        printf("\n");                                                          \
    } while (0)

static inline int wbtest_done(void)
{
    if (wbtest_skipped)
        printf("%d passed, %d failed, %d skipped\n", wbtest_passed, wbtest_failed, wbtest_skipped);
    else
        printf("%d passed, %d failed\n", wbtest_passed, wbtest_failed);
    return wbtest_failed ? 1 : 0;
}

#endif
