#define _POSIX_C_SOURCE 200809L
#include "options_transfer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "optparse.h"

enum transfer_id {
    T_TESTS = 1, T_SIZES, T_ITERS, T_TIME_PER_SIZE, T_ITERS_MIN, T_ITERS_MAX, T_WINDOW, T_WINDOW_BYTES,
    T_RANDOM_ORDERS, T_PAIRS, T_ROOT, T_VALIDATE
};

/* Most pairs in one --pairs LIST; each rank is in at most one pair. */
#define MAX_PAIRS 4096

const struct wb_optdef wb_transfer_optdefs[] = {
    {"tests", 1, 0, T_TESTS, "LIST",
     "tests (default all): pingpong, bw, bibw, ring (these need 2 ranks; skipped with 1), barrier, bcast, "
     "scatter, gather, allgather, alltoall, reduce, allreduce; or all, p2p, collectives", NULL},
    {"sizes", 1, 'm', T_SIZES, "LIST", "message sizes in bytes (default 1:4M; 1 B to 1 GiB)", NULL},
    {"iters", 1, 'i', T_ITERS, "N|auto", "recorded repetitions per size (default auto: fill --time-per-size)", NULL},
    {"time-per-size", 1, 0, T_TIME_PER_SIZE, "SECONDS", "time iters auto aims at per size and pair (default 0.2)", NULL},
    {"iters-min", 1, 0, T_ITERS_MIN, "N", "fewest repetitions iters auto picks (default 5)", NULL},
    {"iters-max", 1, 0, T_ITERS_MAX, "N", "most repetitions iters auto picks (default 1000)", NULL},
    {"window", 1, 0, T_WINDOW, "N", "non-blocking sends per window of bw and bibw (default 64)", NULL},
    {"window-bytes", 1, 0, T_WINDOW_BYTES, "SIZE",
     "at most this many bytes in flight per window, each message in its own receive buffer; fewer "
     "messages for big sizes (default 4M)", NULL},
    {"random-orders", 1, 0, T_RANDOM_ORDERS, "N", "ring: random rank orders beside the natural one (default 2)", NULL},
    {"pairs", 1, 0, T_PAIRS, "first|all|LIST",
     "point-to-point pairs: first (0:1), all (every ordered pair in turn), or LIST like 0:1,2:3 (at once)", NULL},
    {"root", 1, 0, T_ROOT, "rotate|N", "root of bcast, scatter, gather, reduce (default 0)", NULL},
    {"validate", 0, 0, T_VALIDATE, NULL, "check every received buffer (outside the timed part); exit 3 on a mismatch", NULL},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

const char wb_transfer_summary[] =
    "point-to-point and collective transfer tests (latency, bandwidth; MB/s = 1e6 bytes/s)";

static const char *const test_names[WB_TRANSFER_NTESTS] = {
    "pingpong", "bw", "bibw", "ring", "barrier", "bcast", "scatter", "gather", "allgather", "alltoall",
    "reduce", "allreduce",
};

#define ALL_TESTS ((1u << WB_TRANSFER_NTESTS) - 1)
#define P2P_TESTS ((1u << WB_TRANSFER_PINGPONG) | (1u << WB_TRANSFER_BW) | (1u << WB_TRANSFER_BIBW) | \
                   (1u << WB_TRANSFER_RING))

const char *wb_transfer_test_name(int test)
{
    return test >= 0 && test < WB_TRANSFER_NTESTS ? test_names[test] : NULL;
}

static void set_sizes(struct wb_transfer_opts *t, int64_t lo, int64_t hi)
{
    t->nsizes = 0;
    for (int64_t v = lo; v <= hi && t->nsizes < WB_TRANSFER_MAX_SIZES; v *= 2)
        t->sizes_bytes[t->nsizes++] = v;
}

void wb_transfer_opts_defaults(struct wb_transfer_opts *t)
{
    memset(t, 0, sizeof *t);
    t->tests = ALL_TESTS;
    set_sizes(t, 1, INT64_C(4) << 20);
    t->iters = 0;
    t->time_per_size_s = 0.2;
    t->iters_min = 5;
    t->iters_max = 1000;
    t->window = 64;
    t->window_bytes = INT64_C(4) << 20;
    t->random_orders = 2;
    t->pairs_mode = WB_TRANSFER_PAIRS_FIRST;
    t->root = 0;
}

void wb_transfer_opts_compact(struct wb_transfer_opts *t)
{
    t->tests = (1u << WB_TRANSFER_PINGPONG) | (1u << WB_TRANSFER_BW) | (1u << WB_TRANSFER_ALLREDUCE);
    set_sizes(t, 1, INT64_C(1) << 20);
    t->iters = 0;
    t->time_per_size_s = 0.05;
}

static int parse_tests(const char *arg, unsigned *out)
{
    char *copy = strdup(arg);
    if (!copy)
        return wb_error_set(WB_ENOMEM, "--tests: out of memory");
    unsigned mask = 0;
    int rc = 0;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item && rc == 0; item = strtok_r(NULL, ",", &save)) {
        if (!strcmp(item, "all")) {
            mask |= ALL_TESTS;
            continue;
        }
        if (!strcmp(item, "p2p")) {
            mask |= P2P_TESTS;
            continue;
        }
        if (!strcmp(item, "collectives")) {
            mask |= ALL_TESTS & ~P2P_TESTS;
            continue;
        }
        int k = 0;
        while (k < WB_TRANSFER_NTESTS && strcmp(item, test_names[k]))
            k++;
        if (k == WB_TRANSFER_NTESTS)
            rc = wb_error_set(WB_EUSAGE,
                              "--tests: unknown test '%s'; choose from pingpong, bw, bibw, ring, barrier, bcast, "
                              "scatter, gather, allgather, alltoall, reduce, allreduce, all, p2p, collectives",
                              item);
        else
            mask |= 1u << k;
    }
    free(copy);
    if (rc == 0 && mask == 0)
        rc = wb_error_set(WB_EUSAGE, "--tests: the list is empty; e.g. --tests pingpong,allreduce");
    if (rc == 0)
        *out = mask;
    return rc;
}

/* A rank number in a --pairs item; 0 or WB_EUSAGE. */
static int parse_rank(const char *s, const char *item, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < 0 || v > 1000000)
        return wb_error_set(WB_EUSAGE, "--pairs: '%s' is not a pair of ranks; use first, all, or a list like 0:1,2:3",
                            item);
    *out = (int)v;
    return 0;
}

static int parse_pairs(struct wb_transfer_opts *t, const char *arg)
{
    free(t->pairs);
    t->pairs = NULL;
    t->npairs = 0;
    if (!strcmp(arg, "first")) {
        t->pairs_mode = WB_TRANSFER_PAIRS_FIRST;
        return 0;
    }
    if (!strcmp(arg, "all")) {
        t->pairs_mode = WB_TRANSFER_PAIRS_ALL;
        return 0;
    }
    char *copy = strdup(arg);
    int (*pairs)[2] = calloc(MAX_PAIRS, sizeof *pairs);
    int n = 0, rc = 0;
    if (!copy || !pairs)
        rc = wb_error_set(WB_ENOMEM, "--pairs: out of memory");
    char *save = NULL;
    for (char *item = copy ? strtok_r(copy, ",", &save) : NULL; item && rc == 0;
         item = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(item, ':');
        if (!colon) {
            rc = wb_error_set(WB_EUSAGE, "--pairs: '%s' is not a pair of ranks; use first, all, or a list like 0:1,2:3",
                              item);
            break;
        }
        *colon = '\0';
        int a = 0, b = 0;
        if ((rc = parse_rank(item, item, &a)) || (rc = parse_rank(colon + 1, item, &b)))
            break;
        if (n == MAX_PAIRS) {
            rc = wb_error_set(WB_EUSAGE, "--pairs: more than %d pairs", MAX_PAIRS);
            break;
        }
        /* A rank in two pairs would have to serve both at once and the timings would mean nothing. */
        for (int p = 0; p < n && rc == 0; p++)
            for (int k = 0; k < 2; k++)
                if (pairs[p][k] == a || pairs[p][k] == b)
                    rc = wb_error_set(WB_EUSAGE, "--pairs: rank %d is used twice; each rank may be in one pair only",
                                      pairs[p][k]);
        if (rc == 0 && a == b)
            rc = wb_error_set(WB_EUSAGE, "--pairs: rank %d is used twice (%d:%d); a pair needs two ranks", a, a, b);
        if (rc == 0) {
            pairs[n][0] = a;
            pairs[n][1] = b;
            n++;
        }
    }
    if (rc == 0 && n == 0)
        rc = wb_error_set(WB_EUSAGE, "--pairs: no pairs given; use first, all, or a list like 0:1,2:3");
    free(copy);
    if (rc) {
        free(pairs);
        return rc;
    }
    t->pairs = pairs;
    t->npairs = n;
    t->pairs_mode = WB_TRANSFER_PAIRS_LIST;
    return 0;
}

int wb_transfer_opts_set(struct wb_transfer_opts *t, int id, const char *arg)
{
    int64_t v = 0, *vals = NULL;
    double d;
    int n = 0, rc = 0;
    switch (id) {
    case T_TESTS:
        return parse_tests(arg, &t->tests);
    case T_SIZES:
        rc = wb_optparse_size_list("--sizes", arg, 1, WB_TRANSFER_MAX_BYTES, WB_TRANSFER_MAX_SIZES, &vals, &n);
        if (rc == 0) {
            memcpy(t->sizes_bytes, vals, (size_t)n * sizeof *vals);
            t->nsizes = n;
        }
        free(vals);
        return rc;
    case T_ITERS:
        if (!strcmp(arg, "auto")) {
            t->iters = 0;
            return 0;
        }
        if (wb_optparse_int("--iters", arg, 1, 100000000, &v) != 0)
            return wb_error_set(WB_EUSAGE, "--iters: '%s' is not allowed; give a count from 1 to 100000000 or auto",
                                arg);
        t->iters = (int)v;
        return 0;
    case T_TIME_PER_SIZE:
        if ((rc = wb_optparse_double("--time-per-size", arg, 1e-4, 3600, &d)) == 0)
            t->time_per_size_s = d;
        return rc;
    case T_ITERS_MIN:
        if ((rc = wb_optparse_int("--iters-min", arg, 1, 100000000, &v)) == 0)
            t->iters_min = (int)v;
        return rc;
    case T_ITERS_MAX:
        if ((rc = wb_optparse_int("--iters-max", arg, 1, 100000000, &v)) == 0)
            t->iters_max = (int)v;
        return rc;
    case T_WINDOW:
        if ((rc = wb_optparse_int("--window", arg, 1, 4096, &v)) == 0)
            t->window = (int)v;
        return rc;
    case T_WINDOW_BYTES:
        if ((rc = wb_optparse_size("--window-bytes", arg, 1, INT64_C(1) << 40, &v)) == 0)
            t->window_bytes = v;
        return rc;
    case T_RANDOM_ORDERS:
        if ((rc = wb_optparse_int("--random-orders", arg, 0, 1000, &v)) == 0)
            t->random_orders = (int)v;
        return rc;
    case T_PAIRS:
        return parse_pairs(t, arg);
    case T_ROOT:
        if (!strcmp(arg, "rotate")) {
            t->root = -1;
            return 0;
        }
        if (wb_optparse_int("--root", arg, 0, 1000000, &v) != 0)
            return wb_error_set(WB_EUSAGE, "--root: '%s' is not allowed; give rotate or a rank number", arg);
        t->root = (int)v;
        return 0;
    case T_VALIDATE:
        t->validate = 1;
        return 0;
    }
    return wb_error_set(WB_EUSAGE, "transfer: unknown option id %d", id);
}

int wb_transfer_opts_validate(struct wb_transfer_opts *t)
{
    if (t->iters_min > t->iters_max)
        return wb_error_set(WB_EUSAGE, "--iters-min %d is above --iters-max %d", t->iters_min, t->iters_max);
    if (t->nsizes < 1)
        return wb_error_set(WB_EUSAGE, "--sizes: no sizes given");
    return 0;
}

void wb_transfer_opts_free(struct wb_transfer_opts *t)
{
    free(t->pairs);
    t->pairs = NULL;
    t->npairs = 0;
}
