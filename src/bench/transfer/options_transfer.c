#define _POSIX_C_SOURCE 200809L
#include "bench/transfer/options_transfer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bench/options.h"
#include "core/error.h"
#include "core/optparse.h"

enum transfer_id {
    T_TESTS = 1, T_SIZES, T_ITERS, T_TIME_PER_SIZE, T_ITERS_MIN, T_ITERS_MAX, T_WINDOW, T_WINDOW_BYTES,
    T_RANDOM_ORDERS, T_PAIRS, T_ROOT, T_VALIDATE, T_BUDGET, T_DRY_RUN, T_LIST, T_FULL, T_MEM, T_FORMAT,
    T_PP_METHOD, T_DTYPE, T_OP
};

/* Most pairs in one --pairs LIST; each rank is in at most one pair. */
#define MAX_PAIRS 4096

const struct wb_optdef wb_transfer_optdefs[] = {
    {"tests", 1, 0, T_TESTS, "LIST",
     "tests, any case, IMB's names too, or all, p2p, collectives (see --list); with --pairs all or shift "
     "the default is pingpong,bw", "all"},
    {"sizes", 1, 'm', T_SIZES, "MAX|MIN:MAX|LIST",
     "message sizes in bytes, powers of two as OSU reads -m (with --pairs all or shift the default is "
     "8,64k,1M); a list like 8,64k,1M is taken as given; 1 B to 1 GiB", "1:4M"},
    {"iters", 1, 'i', T_ITERS, "N|auto", "recorded repetitions per size, 1 to 1000000; auto fills --time-per-size", "auto"},
    {"time-per-size", 1, 0, T_TIME_PER_SIZE, "SECONDS", "time iters auto aims at per size and pair", "0.2"},
    {"iters-min", 1, 0, T_ITERS_MIN, "N", "fewest repetitions iters auto picks", "5"},
    {"iters-max", 1, 0, T_ITERS_MAX, "N", "most repetitions iters auto picks", "1000"},
    {"time-budget", 1, 0, T_BUDGET, "SECONDS|none",
     "the whole run: repetitions, then the largest sizes, are cut to fit the estimate", "300"},
    {"dry-run", 0, 0, T_DRY_RUN, NULL, "probe the link, print the plan and its estimated duration, and stop", NULL},
    {"list", 0, 0, T_LIST, NULL, "print the tests and stop", NULL},
    {"full", 0, 'f', T_FULL, NULL, "full statistics: stddev and batch columns, and a row per pair", NULL},
    {"format", 1, 0, T_FORMAT, "table|csv|json", "stdout format (csv and json put comments on stderr)", "table"},
    {"mem-limit", 1, 'M', T_MEM, "SIZE", "message buffers per rank at most", "80% of free memory"},
    {"window", 1, 0, T_WINDOW, "N", "non-blocking sends per window of bw and bibw, at every size", "64"},
    {"window-bytes", 1, 0, T_WINDOW_BYTES, "SIZE|none",
     "at most this many bytes in flight per window: fewer messages for big sizes", "none"},
    {"pingpong-method", 1, 0, T_PP_METHOD, "osu|netpipe",
     "osu: back-to-back round trips, separate send and receive buffers; netpipe: send on the "
     "data just received", "osu"},
    {"dtype", 1, 0, T_DTYPE, "byte|int|float|double", "element type of reduce, allreduce", "float"},
    {"op", 1, 0, T_OP, "sum|bxor|max", "operation of reduce, allreduce", "sum"},
    {"random-orders", 1, 0, T_RANDOM_ORDERS, "N", "ring: random rank orders beside the natural one", "2"},
    {"pairs", 1, 0, T_PAIRS, "first|all|shift|LIST",
     "point-to-point pairs: first (0:1), all (every ordered pair in turn), shift (all, then every pair at "
     "once in N-1 rounds), or LIST like 0:1,2:3 (at once)", "first"},
    {"root", 1, 0, T_ROOT, "rotate|N", "root of bcast, scatter, gather, reduce", "0"},
    {"validate", 0, 0, T_VALIDATE, NULL, "check every received buffer (outside the timed part); exit 3 on a mismatch", NULL},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

const char wb_transfer_summary[] =
    "point-to-point and collective transfer tests (latency, bandwidth; MB/s = 1e6 bytes/s)";

static const struct {
    const char *name;
    const char *aliases;        /* IMB's and OSU's names for the same measurement */
} test_names[WB_TRANSFER_NTESTS] = {
    {"pingpong", "PingPong, latency"}, {"bw", "Uniband"}, {"bibw", "Biband"}, {"ring", "Sendrecv"},
    {"barrier", ""}, {"bcast", ""}, {"scatter", ""}, {"gather", ""}, {"allgather", ""}, {"alltoall", ""},
    {"reduce", ""}, {"allreduce", ""},
};

const char *const wb_transfer_pairs_names[] = {"first", "all", "list", "shift", NULL};
const char *const wb_transfer_format_names[] = {"table", "csv", "json", NULL};
const char *const wb_transfer_pp_method_names[] = {"osu", "netpipe", NULL};
const char *const wb_transfer_dtype_names[] = {"byte", "int", "float", "double", NULL};
const char *const wb_transfer_op_names[] = {"sum", "bxor", "max", NULL};

#define ALL_TESTS ((1u << WB_TRANSFER_NTESTS) - 1)
#define P2P_TESTS ((1u << WB_TRANSFER_PINGPONG) | (1u << WB_TRANSFER_BW) | (1u << WB_TRANSFER_BIBW) | \
                   (1u << WB_TRANSFER_RING))

const char *wb_transfer_test_name(int test)
{
    return test >= 0 && test < WB_TRANSFER_NTESTS ? test_names[test].name : NULL;
}

const char *wb_transfer_test_aliases(int test)
{
    return test >= 0 && test < WB_TRANSFER_NTESTS ? test_names[test].aliases : NULL;
}

/* The test a name or alias means, in any case; -1 if none. */
static int find_test(const char *item)
{
    for (int k = 0; k < WB_TRANSFER_NTESTS; k++) {
        if (!strcasecmp(item, test_names[k].name))
            return k;
        char copy[64];
        snprintf(copy, sizeof copy, "%s", test_names[k].aliases);
        char *save = NULL;
        for (char *a = strtok_r(copy, ", ", &save); a; a = strtok_r(NULL, ", ", &save))
            if (!strcasecmp(item, a))
                return k;
    }
    return -1;
}

static void set_sizes(struct wb_transfer_opts *t, int64_t lo, int64_t hi)
{
    t->nsizes = 0;
    for (int64_t v = lo; v <= hi && t->nsizes < WB_TRANSFER_MAX_SIZES; v *= 2)
        t->sizes_bytes[t->nsizes++] = v;
}

void wb_transfer_opts_defaults(struct wb_options *o)
{
    struct wb_transfer_opts *t = wb_transfer_opts_of(o);
    memset(t, 0, sizeof *t);
    t->tests = ALL_TESTS;
    set_sizes(t, 1, INT64_C(4) << 20);
    t->iters = 0;
    t->time_per_size_s = 0.2;
    t->iters_min = 5;
    t->iters_max = 1000;
    t->time_budget_s = 300;
    t->window = 64;
    t->window_bytes = 0;
    t->random_orders = 2;
    t->pairs_mode = WB_TRANSFER_PAIRS_FIRST;
    t->root = 0;
    t->pp_method = WB_TRANSFER_PP_OSU;
    t->dtype = WB_TRANSFER_DT_FLOAT;
    t->op = WB_TRANSFER_OP_SUM;
    t->format = WB_TRANSFER_FMT_TABLE;
}

void wb_transfer_opts_compact(struct wb_options *o)
{
    struct wb_transfer_opts *t = wb_transfer_opts_of(o);
    /* bibw too: the report sets the dfft transposes of the same file against it. */
    t->tests = (1u << WB_TRANSFER_PINGPONG) | (1u << WB_TRANSFER_BW) | (1u << WB_TRANSFER_BIBW) | (1u << WB_TRANSFER_ALLREDUCE);
    set_sizes(t, 1, INT64_C(1) << 20);
    t->iters = 0;
    t->time_per_size_s = 0.05;
}

int wb_transfer_opts_no_file(const struct wb_options *o) { return wb_transfer_opts_of(o)->list || wb_transfer_opts_of(o)->dry_run; }

int wb_transfer_opts_stdout_taken(const struct wb_options *o) { return wb_transfer_opts_of(o)->format != WB_TRANSFER_FMT_TABLE; }

/* The list of every test name, for messages. */
static void all_names(char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (int k = 0; k < WB_TRANSFER_NTESTS && len < cap; k++)
        len += (size_t)snprintf(out + len, cap - len, "%s, ", test_names[k].name);
    if (len < cap)
        snprintf(out + len, cap - len, "all, p2p, collectives");
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
        int k = find_test(item);
        if (!strcasecmp(item, "all"))
            mask |= ALL_TESTS;
        else if (!strcasecmp(item, "p2p"))
            mask |= P2P_TESTS;
        else if (!strcasecmp(item, "collectives"))
            mask |= ALL_TESTS & ~P2P_TESTS;
        else if (k >= 0)
            mask |= 1u << k;
        else {
            char names[256];
            all_names(names, sizeof names);
            rc = wb_error_set(WB_EUSAGE, "--tests: unknown test '%s'; choose from %s (see --list)", item, names);
        }
    }
    free(copy);
    if (rc == 0 && mask == 0)
        rc = wb_error_set(WB_EUSAGE, "--tests: the list is empty; e.g. --tests pingpong,allreduce");
    if (rc == 0)
        *out = mask;
    return rc;
}

/* -m as OSU reads it: MAX is 1:MAX and MIN:MAX the powers of two from MIN up to MAX; a list
 * (with a comma) is taken item by item, ranges included. */
static int parse_sizes(struct wb_transfer_opts *t, const char *arg)
{
    int64_t lo = 1, hi = 0, *vals = NULL;
    int n = 0, rc = 0;
    const char *colon = strchr(arg, ':');
    if (strchr(arg, ','))
        rc = wb_optparse_size_list("--sizes", arg, 1, WB_TRANSFER_MAX_BYTES, WB_TRANSFER_MAX_SIZES, &vals, &n);
    else if (colon) {
        char min[64];
        snprintf(min, sizeof min, "%.*s", (int)(colon - arg), arg);
        if ((rc = wb_optparse_size("--sizes", min, 1, WB_TRANSFER_MAX_BYTES, &lo)) == 0 &&
            (rc = wb_optparse_size("--sizes", colon + 1, 1, WB_TRANSFER_MAX_BYTES, &hi)) == 0 && lo > hi)
            rc = wb_error_set(WB_EUSAGE, "--sizes: MIN %lld is above MAX %lld in '%s'; give -m MIN:MAX with MIN <= MAX",
                              (long long)lo, (long long)hi, arg);
    } else
        rc = wb_optparse_size("--sizes", arg, 1, WB_TRANSFER_MAX_BYTES, &hi);
    if (rc == 0 && !vals) {
        set_sizes(t, lo, hi);
        t->sizes_given = 1;
        return 0;
    }
    if (rc == 0) {
        memcpy(t->sizes_bytes, vals, (size_t)n * sizeof *vals);
        t->nsizes = n;
        t->sizes_given = 1;
    }
    free(vals);
    return rc;
}

/* A rank number in a --pairs item; 0 or WB_EUSAGE. */
static int parse_rank(const char *s, const char *item, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < 0 || v > 1000000)
        return wb_error_set(WB_EUSAGE, "--pairs: '%s' is not a pair of ranks; use first, all, shift, or a list like 0:1,2:3",
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
    if (!strcmp(arg, "shift")) {
        t->pairs_mode = WB_TRANSFER_PAIRS_SHIFT;
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
            rc = wb_error_set(WB_EUSAGE, "--pairs: '%s' is not a pair of ranks; use first, all, shift, or a list like 0:1,2:3",
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
        rc = wb_error_set(WB_EUSAGE, "--pairs: no pairs given; use first, all, shift, or a list like 0:1,2:3");
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

static int parse_budget(struct wb_transfer_opts *t, const char *arg)
{
    double d;
    if (!strcmp(arg, "none")) {
        t->time_budget_s = 0;
        return 0;
    }
    if (wb_optparse_double("--time-budget", arg, -1e300, 1e9, &d) != 0 || d <= 0)
        return wb_error_set(WB_EUSAGE, "--time-budget: '%s' is not allowed; give a positive number of seconds "
                                       "(e.g. 300) or none", arg);
    t->time_budget_s = d;
    return 0;
}

/* The flags and choices; 1 if id is not one of them. */
static int set_flag(struct wb_transfer_opts *t, int id, const char *arg, int *rc)
{
    int v = 0;
    switch (id) {
    case T_VALIDATE: t->validate = 1; break;
    case T_DRY_RUN: t->dry_run = 1; break;
    case T_LIST: t->list = 1; break;
    case T_FULL: t->full = 1; break;
    case T_FORMAT:
        if ((*rc = wb_optparse_choice("--format", arg, wb_transfer_format_names, &v)) == 0)
            t->format = (enum wb_transfer_format)v;
        break;
    case T_PP_METHOD:
        if ((*rc = wb_optparse_choice("--pingpong-method", arg, wb_transfer_pp_method_names, &v)) == 0)
            t->pp_method = (enum wb_transfer_pp_method)v;
        break;
    case T_DTYPE:
        if ((*rc = wb_optparse_choice("--dtype", arg, wb_transfer_dtype_names, &v)) == 0)
            t->dtype = (enum wb_transfer_dtype)v;
        break;
    case T_OP:
        if ((*rc = wb_optparse_choice("--op", arg, wb_transfer_op_names, &v)) == 0)
            t->op = (enum wb_transfer_op)v;
        break;
    default:
        return 1;
    }
    return 0;
}

/* A flat switch over the options: one case each. */
int wb_transfer_opts_set(struct wb_options *o, int id, const char *arg)
{
    struct wb_transfer_opts *t = wb_transfer_opts_of(o);
    int64_t v = 0;
    double d;
    int rc = 0;
    if (set_flag(t, id, arg, &rc) == 0)
        return rc;
    switch (id) {
    case T_TESTS:
        t->tests_given = 1;
        return parse_tests(arg, &t->tests);
    case T_SIZES:
        return parse_sizes(t, arg);
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
    case T_BUDGET:
        return parse_budget(t, arg);
    case T_MEM:
        if ((rc = wb_optparse_size("--mem-limit", arg, 1, INT64_C(1) << 50, &v)) == 0)
            t->mem_limit_bytes = v;
        return rc;
    case T_WINDOW:
        if ((rc = wb_optparse_int("--window", arg, 1, 4096, &v)) == 0)
            t->window = (int)v;
        return rc;
    case T_WINDOW_BYTES:
        if (!strcmp(arg, "none")) {
            t->window_bytes = 0;
            return 0;
        }
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
    }
    return wb_error_set(WB_EUSAGE, "transfer: unknown option id %d", id);
}

int wb_transfer_opts_validate(struct wb_options *o)
{
    struct wb_transfer_opts *t = wb_transfer_opts_of(o);
    /* --reps means repetitions everywhere; for transfer it fixes the count as -i does (not as a part
     * of suite, whose transfer part sizes its repetitions by time). */
    if (o->common.reps_given && !o->common.reps_auto && t->iters == 0 && !o->compact)
        t->iters = o->common.reps;
    if (t->iters_min > t->iters_max)
        return wb_error_set(WB_EUSAGE, "--iters-min %d is above --iters-max %d", t->iters_min, t->iters_max);
    if (t->nsizes < 1)
        return wb_error_set(WB_EUSAGE, "--sizes: no sizes given");
    if (t->op == WB_TRANSFER_OP_BXOR && (t->dtype == WB_TRANSFER_DT_FLOAT || t->dtype == WB_TRANSFER_DT_DOUBLE))
        return wb_error_set(WB_EUSAGE, "--op bxor works on whole numbers only; add --dtype byte or --dtype int");
    /* Every ordered pair in turn grows as N^2: keep the default small, as a link map needs. */
    if (t->pairs_mode == WB_TRANSFER_PAIRS_ALL || t->pairs_mode == WB_TRANSFER_PAIRS_SHIFT) {
        if (!t->tests_given)
            t->tests = (1u << WB_TRANSFER_PINGPONG) | (1u << WB_TRANSFER_BW);
        if (!t->sizes_given) {
            static const int64_t map_sizes[] = {8, INT64_C(64) << 10, INT64_C(1) << 20};
            memcpy(t->sizes_bytes, map_sizes, sizeof map_sizes);
            t->nsizes = 3;
        }
    }
    return 0;
}

void wb_transfer_opts_free(struct wb_options *o)
{
    struct wb_transfer_opts *t = wb_transfer_opts_of(o);
    free(t->pairs);
    t->pairs = NULL;
    t->npairs = 0;
}

struct wb_transfer_opts *wb_transfer_opts_of(const struct wb_options *o) { return wb_options_own(o, "transfer"); }
