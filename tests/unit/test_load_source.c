/* The request source of `wulfbench load`: closed-loop clients and open-loop Poisson arrivals. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/load/bench_load_int.h"
#include "bench/load/options_load.h"
#include "bench/options.h"
#include "wbtest.h"

static struct wb_load_opts opts(int loop, double think_ms)
{
    struct wb_options o;
    struct wb_load_opts t;
    memset(&o, 0, sizeof o);
    memset(&t, 0, sizeof t);
    o.own[0] = (struct wb_options_own){"load", &t};
    wb_load_opts_defaults(&o);
    t.loop = loop;
    t.think_ms = think_ms;
    return t;
}

/* Requests due up to now_s; answers each at once when answer is set. */
static int drain(struct wb_load_source *src, double now_s, int answer, int *ids, int cap)
{
    int n = 0, client;
    double t;
    while (wb_load_source_due(src, now_s, &client, &t)) {
        if (n < cap)
            ids[n] = client;
        n++;
        if (answer)
            wb_load_source_answered(src, client, now_s, 0);
    }
    return n;
}

static void test_closed_split_and_think(void)
{
    struct wb_load_opts t = opts(WB_LOAD_CLOSED, 0);
    struct wb_load_step s = {.index = 0, .clients = 5, .duration_s = 10};
    struct wb_load_source a, b;
    int rc = wb_load_source_init(&a, &t, &s, 0, 2, 1) | wb_load_source_init(&b, &t, &s, 1, 2, 1);
    WBTEST_CHECK(rc == 0 && a.nclients == 3 && b.nclients == 2, "5 clients over 2 streams: 3 and 2");
    WBTEST_CHECK(a.ids[0] == 0 && a.ids[1] == 2 && a.ids[2] == 4 && b.ids[0] == 1 && b.ids[1] == 3,
                 "streams take every other client");
    int ids[8];
    WBTEST_CHECK(drain(&a, 0, 0, ids, 8) == 3, "without think time every client sends at once");
    WBTEST_CHECK(drain(&a, 5, 0, ids, 8) == 0, "a client waits for its answer");
    wb_load_source_answered(&a, 2, 1.0, 0);
    int client;
    double when;
    WBTEST_CHECK(wb_load_source_due(&a, 1.0, &client, &when) && client == 2 && when == 1.0,
                 "an answered client sends again");
    wb_load_source_answered(&a, 4, 2.0, 1);
    WBTEST_CHECK(!wb_load_source_due(&a, 2.0, &client, &when) && wb_load_source_next_s(&a) == 2.0 + WB_LOAD_RETRY_S,
                 "after a rejection it waits the retry pause");
    WBTEST_CHECK(!wb_load_source_exhausted(&a, 9.9) && !wb_load_source_exhausted(&a, 10.0),
                 "an arrival due before the duration's end (the retry) keeps the source open past it");
    WBTEST_CHECK(wb_load_source_due(&a, 10.0, &client, &when) && client == 4 && when == 2.0 + WB_LOAD_RETRY_S,
                 "and is still sent, at its own time");
    WBTEST_CHECK(wb_load_source_exhausted(&a, 10.0), "a duration-bound source ends at the duration");
    wb_load_source_answered(&a, 2, 9.99, 0);
    WBTEST_CHECK(!wb_load_source_exhausted(&a, 10.5) && wb_load_source_due(&a, 10.5, &client, &when) && client == 2,
                 "an answer just before the end is sent again after it, and counted before the end");
    WBTEST_CHECK(wb_load_source_exhausted(&a, 10.5), "then the source is done");
    wb_load_source_free(&a);
    wb_load_source_free(&b);
    WBTEST_CHECK(a.ids == NULL && a.next_s == NULL && a.left == NULL, "free clears the arrays");

    t = opts(WB_LOAD_CLOSED, 100);
    rc = wb_load_source_init(&a, &t, &s, 0, 1, 7);
    int staggered = rc == 0;
    for (int i = 0; staggered && i < a.nclients; i++)
        staggered = a.next_s[i] >= 0 && a.next_s[i] < 0.1;
    WBTEST_CHECK(staggered && drain(&a, 0.1, 0, ids, 8) == 5, "first requests spread over one think time");
    wb_load_source_answered(&a, ids[0], 1.0, 0);
    WBTEST_CHECK(wb_load_source_next_s(&a) == 1.1, "the next request comes one think time after the answer");
    wb_load_source_free(&a);
}

static void test_closed_request_count(void)
{
    struct wb_load_opts t = opts(WB_LOAD_CLOSED, 0);
    struct wb_load_step s = {.index = 3, .clients = 5, .requests = 7};
    struct wb_load_source a;
    int rc = wb_load_source_init(&a, &t, &s, 0, 1, 1);
    int ids[64], n = 0;
    for (double now = 0; rc == 0 && now < 20 && !wb_load_source_exhausted(&a, now); now += 1)
        n += drain(&a, now, 1, ids + n, 64 - n);
    int per[5] = {0};
    for (int i = 0; i < n && i < 64; i++)
        per[ids[i]]++;
    WBTEST_CHECK(rc == 0 && n == 7 && isinf(a.end_s), "--requests 7: exactly 7 requests, no end time");
    WBTEST_CHECK(per[0] == 2 && per[1] == 2 && per[2] == 1 && per[3] == 1 && per[4] == 1,
                 "the first clients take the remainder (2,2,1,1,1)");
    wb_load_source_free(&a);
}

static void test_open_poisson(void)
{
    struct wb_load_opts t = opts(WB_LOAD_OPEN, 0);
    struct wb_load_step s = {.index = 0, .rate_rps = 200, .clients = 1, .duration_s = 10};
    struct wb_load_source a, b;
    int rc = wb_load_source_init(&a, &t, &s, 0, 1, 42) | wb_load_source_init(&b, &t, &s, 0, 1, 42);
    int n = 0, same = 1, rising = 1, client;
    double last = -1, ta, tb;
    while (rc == 0 && wb_load_source_due(&a, 1e9, &client, &ta)) {
        same &= wb_load_source_due(&b, 1e9, &client, &tb) && ta == tb;
        rising &= ta >= last && ta < 10;
        last = ta;
        n++;
    }
    /* 2000 expected; a Poisson count has standard deviation sqrt(2000) = 45. */
    WBTEST_CHECK(n > 2000 - 5 * 45 && n < 2000 + 5 * 45, "200 req/s for 10 s gives about 2000 arrivals (%d)", n);
    WBTEST_CHECK(rising, "arrival times rise and stay inside the step");
    WBTEST_CHECK(same, "the same seed gives the same arrivals");
    WBTEST_CHECK(wb_load_source_exhausted(&a, 0), "after the last arrival the source is exhausted");

    struct wb_load_step r = {.index = 0, .rate_rps = 90, .clients = 3, .requests = 10};
    int total = 0, counts[3];
    for (int k = 0; k < 3; k++) {
        struct wb_load_source c;
        rc = wb_load_source_init(&c, &t, &r, k, 3, 42);
        counts[k] = 0;
        while (rc == 0 && wb_load_source_due(&c, 1e9, &client, &ta))
            counts[k] += client == k;
        WBTEST_CHECK(c.rate_rps == 30, "stream %d has a third of the rate", k);
        total += counts[k];
    }
    WBTEST_CHECK(total == 10 && counts[0] == 4 && counts[1] == 3 && counts[2] == 3,
                 "--requests 10 over 3 streams: 4, 3, 3");
    struct wb_load_source c;
    wb_load_source_init(&c, &t, &r, 1, 3, 43);
    double first_other;
    wb_load_source_due(&c, 1e9, &client, &first_other);
    struct wb_load_source d;
    wb_load_source_init(&d, &t, &r, 1, 3, 42);
    double first_same;
    wb_load_source_due(&d, 1e9, &client, &first_same);
    WBTEST_CHECK(first_other != first_same, "another seed gives other arrivals");
}

int main(void)
{
    test_closed_split_and_think();
    test_closed_request_count();
    test_open_poisson();
    return wbtest_done();
}
