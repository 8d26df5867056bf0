#define _POSIX_C_SOURCE 200809L
#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

enum common_id {
    C_OUT = 1000, C_LABEL, C_REPS, C_WARMUP, C_SEED, C_TIMEOUT, C_PROGRESS, C_QUIET, C_FORCE, C_HELP, C_VERSION
};

static const struct wb_optdef common_defs[] = {
    {"output", 1, 'o', C_OUT, "FILE.h5", "result file (default results/wulfbench-<host>-<UTC>.h5)"},
    {"label", 1, 0, C_LABEL, "TEXT", "a label stored in the file and shown in reports"},
    {"reps", 1, 0, C_REPS, "N", "recorded repetitions per point (default 5; transfer: as -i N; load: unused)"},
    {"warmup", 1, 'x', C_WARMUP, "N", "unrecorded warm-up repetitions per point (default 1)"},
    {"seed", 1, 0, C_SEED, "N", "seed of synthetic audio and random orders (default 1)"},
    {"timeout", 1, 0, C_TIMEOUT, "SECONDS", "stop after this long and keep what was measured (default none)"},
    {"progress", 1, 0, C_PROGRESS, "auto|always|never", "progress line with ETA on stderr (auto: on a terminal)"},
    {"quiet", 0, 'q', C_QUIET, NULL, "print no tables, only errors and the result file name"},
    {"force", 0, 0, C_FORCE, NULL, "overwrite an existing result file"},
    {"help", 0, 'h', C_HELP, NULL, "show this help"},
    {"version", 0, 'V', C_VERSION, NULL, "show the version"},
    {NULL, 0, 0, 0, NULL, NULL},
};

struct subcommand {
    const char *name;
    enum wb_subcommand cmd;
    const struct wb_optdef *defs;
    const char *summary;
};

static const struct subcommand subcommands[] = {
    {"fft", WB_CMD_FFT, wb_fft_optdefs, wb_fft_summary},
    {"transfer", WB_CMD_TRANSFER, wb_transfer_optdefs, wb_transfer_summary},
    {"load", WB_CMD_LOAD, wb_load_optdefs, wb_load_summary},
    {"dfft", WB_CMD_DFFT, wb_dfft_optdefs, wb_dfft_summary},
    {"suite", WB_CMD_SUITE, NULL, "a compact run of fft, transfer, load and dfft (what `make run` starts)"},
    {"info", WB_CMD_INFO, NULL, "what wulfbench detects: ranks, nodes, hosts, versions, timer"},
};
#define NSUB ((int)(sizeof subcommands / sizeof subcommands[0]))

static const struct subcommand *find_sub(enum wb_subcommand cmd)
{
    for (int i = 0; i < NSUB; i++)
        if (subcommands[i].cmd == cmd)
            return &subcommands[i];
    return NULL;
}

int wb_options_int(const char *opt, const char *s, int64_t min, int64_t max, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno == ERANGE)
        return wb_error_set(WB_EUSAGE, "%s: '%s' is not a whole number; give one from %lld to %lld", opt, s,
                            (long long)min, (long long)max);
    if (v < min || v > max)
        return wb_error_set(WB_EUSAGE, "%s: %lld is out of range; allowed: %lld to %lld", opt, v, (long long)min,
                            (long long)max);
    *out = v;
    return 0;
}

int wb_options_double(const char *opt, const char *s, double min, double max, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno == ERANGE || !isfinite(v))
        return wb_error_set(WB_EUSAGE, "%s: '%s' is not a number; give one from %g to %g", opt, s, min, max);
    if (v < min || v > max)
        return wb_error_set(WB_EUSAGE, "%s: %g is out of range; allowed: %g to %g", opt, v, min, max);
    *out = v;
    return 0;
}

int wb_options_size(const char *opt, const char *s, int64_t min, int64_t max, int64_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno == ERANGE || !isfinite(v) || v < 0)
        return wb_error_set(WB_EUSAGE, "%s: '%s' is not a size; use bytes or a suffix, e.g. 512, 4k, 1M", opt, s);
    double mult = 1;
    if (!strcmp(end, "") || !strcmp(end, "B"))
        mult = 1;
    else if (!strcmp(end, "k") || !strcmp(end, "K") || !strcmp(end, "KiB"))
        mult = 1024.0;
    else if (!strcmp(end, "M") || !strcmp(end, "MiB"))
        mult = 1024.0 * 1024;
    else if (!strcmp(end, "G") || !strcmp(end, "GiB"))
        mult = 1024.0 * 1024 * 1024;
    else if (!strcmp(end, "kB"))
        mult = 1e3;
    else if (!strcmp(end, "MB"))
        mult = 1e6;
    else if (!strcmp(end, "GB"))
        mult = 1e9;
    else
        return wb_error_set(WB_EUSAGE, "%s: unknown suffix '%s' in '%s'; use k, M, G (1024) or kB, MB, GB (1000)",
                            opt, end, s);
    double bytes = v * mult;
    if (bytes != floor(bytes))
        return wb_error_set(WB_EUSAGE, "%s: '%s' is not a whole number of bytes", opt, s);
    if (bytes < (double)min || bytes > (double)max)
        return wb_error_set(WB_EUSAGE, "%s: %s is out of range; allowed: %lld to %lld bytes", opt, s,
                            (long long)min, (long long)max);
    *out = (int64_t)bytes;
    return 0;
}

int wb_options_choice(const char *opt, const char *s, const char *const *choices, int *out)
{
    char allowed[256] = "";
    for (int i = 0; choices[i]; i++) {
        if (!strcmp(s, choices[i])) {
            *out = i;
            return 0;
        }
        size_t len = strlen(allowed);
        snprintf(allowed + len, sizeof allowed - len, "%s%s", i ? ", " : "", choices[i]);
    }
    return wb_error_set(WB_EUSAGE, "%s: '%s' is not allowed; choose one of: %s", opt, s, allowed);
}

/* Splits s at commas into a fresh copy; returns the copy (caller frees) or NULL. */
static char *next_item(char **cursor)
{
    char *item = *cursor;
    if (!item)
        return NULL;
    char *comma = strchr(item, ',');
    if (comma) {
        *comma = '\0';
        *cursor = comma + 1;
    } else {
        *cursor = NULL;
    }
    return item;
}

static int push_i64(int64_t **vals, int *n, int maxn, int64_t v, const char *opt)
{
    if (*n >= maxn)
        return wb_error_set(WB_EUSAGE, "%s: more than %d values; give a shorter list", opt, maxn);
    int64_t *grown = realloc(*vals, (size_t)(*n + 1) * sizeof **vals);
    if (!grown)
        return wb_error_set(WB_ENOMEM, "%s: out of memory", opt);
    *vals = grown;
    (*vals)[(*n)++] = v;
    return 0;
}

int wb_options_size_list(const char *opt, const char *s, int64_t min, int64_t max, int maxn, int64_t **vals,
                         int *n)
{
    char *copy = strdup(s), *cursor = copy, *item;
    int rc = copy ? 0 : WB_ENOMEM;
    *vals = NULL;
    *n = 0;
    while (rc == 0 && (item = next_item(&cursor))) {
        char *colon = strchr(item, ':');
        int64_t lo, hi;
        if (!*item) {
            rc = wb_error_set(WB_EUSAGE, "%s: empty item in '%s'; use a list like 1,2,4 or a range like 1:64", opt, s);
        } else if (colon) {
            *colon = '\0';
            rc = wb_options_size(opt, item, min, max, &lo);
            if (rc == 0)
                rc = wb_options_size(opt, colon + 1, min, max, &hi);
            if (rc == 0 && (lo < 1 || hi < lo))
                rc = wb_error_set(WB_EUSAGE, "%s: range '%s:%s' must go from a positive value up to a larger one",
                                  opt, item, colon + 1);
            for (int64_t v = lo; rc == 0 && v <= hi; v *= 2)
                rc = push_i64(vals, n, maxn, v, opt);
        } else {
            rc = wb_options_size(opt, item, min, max, &lo);
            if (rc == 0)
                rc = push_i64(vals, n, maxn, lo, opt);
        }
    }
    if (rc == 0 && *n == 0)
        rc = wb_error_set(WB_EUSAGE, "%s: the list is empty; use a list like 1,2,4 or a range like 1:64", opt);
    free(copy);
    if (rc) {
        free(*vals);
        *vals = NULL;
        *n = 0;
    }
    return rc;
}

int wb_options_double_list(const char *opt, const char *s, double min, double max, int maxn, double **vals,
                           int *n)
{
    char *copy = strdup(s), *cursor = copy, *item;
    int rc = copy ? 0 : WB_ENOMEM;
    *vals = NULL;
    *n = 0;
    while (rc == 0 && (item = next_item(&cursor))) {
        double v = 0;
        rc = wb_options_double(opt, item, min, max, &v);
        if (rc == 0 && *n >= maxn)
            rc = wb_error_set(WB_EUSAGE, "%s: more than %d values; give a shorter list", opt, maxn);
        if (rc == 0) {
            double *grown = realloc(*vals, (size_t)(*n + 1) * sizeof **vals);
            if (!grown)
                rc = wb_error_set(WB_ENOMEM, "%s: out of memory", opt);
            else
                (*vals = grown)[(*n)++] = v;
        }
    }
    if (rc == 0 && *n == 0)
        rc = wb_error_set(WB_EUSAGE, "%s: the list is empty; use a list like 1,2,5", opt);
    free(copy);
    if (rc) {
        free(*vals);
        *vals = NULL;
        *n = 0;
    }
    return rc;
}

static int set_common(struct wb_common_opts *c, int id, const char *arg)
{
    static const char *const progress[] = {"auto", "always", "never", NULL};
    int64_t v;
    double d;
    int k, rc = 0;
    switch (id) {
    case C_OUT:
        if (!*arg)
            return wb_error_set(WB_EUSAGE, "--output: the file name is empty");
        c->out_path = arg;
        break;
    case C_LABEL:
        c->label = arg;
        break;
    case C_REPS:
        if ((rc = wb_options_int("--reps", arg, 1, 1000000, &v)) == 0) {
            c->reps = (int)v;
            c->reps_given = 1;
        }
        break;
    case C_WARMUP:
        if ((rc = wb_options_int("--warmup", arg, 0, 1000000, &v)) == 0)
            c->warmup = (int)v;
        break;
    case C_SEED:
        if ((rc = wb_options_int("--seed", arg, 0, INT64_MAX, &v)) == 0)
            c->seed = (uint64_t)v;
        break;
    case C_TIMEOUT:
        if ((rc = wb_options_double("--timeout", arg, 0.001, 1e7, &d)) == 0)
            c->timeout_s = d;
        break;
    case C_PROGRESS:
        if ((rc = wb_options_choice("--progress", arg, progress, &k)) == 0)
            c->progress = (enum wb_progress)k;
        break;
    case C_QUIET:
        c->quiet = 1;
        break;
    case C_FORCE:
        c->force = 1;
        break;
    case C_HELP:
        return WB_EHELP;
    case C_VERSION:
        return WB_EVERSION;
    }
    return rc;
}

static void record_command_line(struct wb_options *o, int argc, char **argv)
{
    size_t len = 0;
    o->command_line[0] = '\0';
    for (int i = 0; i < argc && len < sizeof o->command_line - 1; i++) {
        int quote = strpbrk(argv[i], " \t'\"") != NULL || !*argv[i];
        len += (size_t)snprintf(o->command_line + len, sizeof o->command_line - len, quote ? "%s'%s'" : "%s%s",
                                i ? " " : "", argv[i]);
    }
}

static int defs_count(const struct wb_optdef *d)
{
    int n = 0;
    while (d && d[n].name)
        n++;
    return n;
}

/* Finds the option a getopt_long return value means, in the combined table. */
static const struct wb_optdef *lookup(const struct wb_optdef **all, int n, int val)
{
    if (val >= 0x10000 && val - 0x10000 < n)
        return all[val - 0x10000];
    for (int i = 0; i < n; i++)
        if (all[i]->short_name && all[i]->short_name == val)
            return all[i];
    return NULL;
}

static int parse_sub(int argc, char **argv, struct wb_options *o, const struct subcommand *sub)
{
    int ncommon = defs_count(common_defs), nsub = defs_count(sub->defs), n = ncommon + nsub;
    const struct wb_optdef **all = calloc((size_t)n, sizeof *all);
    struct option *longopts = calloc((size_t)n + 1, sizeof *longopts);
    char shortopts[128] = ":";
    int rc = 0;
    if (!all || !longopts) {
        free(all);
        free(longopts);
        return wb_error_set(WB_ENOMEM, "out of memory while parsing options");
    }
    for (int i = 0; i < n; i++) {
        all[i] = i < ncommon ? &common_defs[i] : &sub->defs[i - ncommon];
        longopts[i] = (struct option){all[i]->name, all[i]->has_arg ? required_argument : no_argument, NULL,
                                      0x10000 + i};
        if (all[i]->short_name) {
            size_t len = strlen(shortopts);
            snprintf(shortopts + len, sizeof shortopts - len, "%c%s", all[i]->short_name,
                     all[i]->has_arg ? ":" : "");
        }
    }
    opterr = 0;
    /* optind 0 makes glibc forget any earlier parse; the subcommand word plays argv[0]. */
    optind = 0;
    int c, sargc = argc - 1;
    char **sargv = argv + 1;
    while (rc == 0 && (c = getopt_long(sargc, sargv, shortopts, longopts, NULL)) != -1) {
        const char *bad = sargv[optind - 1];
        if (c == '?') {
            if (optopt && optopt < 0x10000)
                rc = wb_error_set(WB_EUSAGE, "unknown option '-%c' for 'wulfbench %s'; see 'wulfbench %s --help'",
                                  optopt, sub->name, sub->name);
            else
                rc = wb_error_set(WB_EUSAGE, "unknown option '%s' for 'wulfbench %s'; see 'wulfbench %s --help'",
                                  bad, sub->name, sub->name);
            break;
        }
        if (c == ':') {
            rc = wb_error_set(WB_EUSAGE, "option '%s' needs a value; see 'wulfbench %s --help'", bad, sub->name);
            break;
        }
        const struct wb_optdef *d = lookup(all, n, c);
        if (!d) {
            rc = wb_error_set(WB_EUSAGE, "unknown option '%s'; see 'wulfbench %s --help'", bad, sub->name);
        } else if (d->id >= 1000) {
            rc = set_common(&o->common, d->id, optarg);
        } else if (sub->cmd == WB_CMD_FFT) {
            rc = wb_fft_opts_set(&o->fft, d->id, optarg);
        } else if (sub->cmd == WB_CMD_TRANSFER) {
            rc = wb_transfer_opts_set(&o->transfer, d->id, optarg);
        } else if (sub->cmd == WB_CMD_LOAD) {
            rc = wb_load_opts_set(&o->load, d->id, optarg);
        } else if (sub->cmd == WB_CMD_DFFT) {
            rc = wb_dfft_opts_set(&o->dfft, d->id, optarg);
        }
    }
    if (rc == 0 && optind < sargc)
        rc = wb_error_set(WB_EUSAGE, "unexpected argument '%s'; options start with -- (see 'wulfbench %s --help')",
                          sargv[optind], sub->name);
    free(all);
    free(longopts);
    return rc;
}

int wb_options_parse(int argc, char **argv, struct wb_options *o)
{
    memset(o, 0, sizeof *o);
    o->common = (struct wb_common_opts){.label = "", .reps = 5, .warmup = 1, .seed = 1};
    wb_fft_opts_defaults(&o->fft);
    wb_transfer_opts_defaults(&o->transfer);
    wb_load_opts_defaults(&o->load);
    wb_dfft_opts_defaults(&o->dfft);
    record_command_line(o, argc, argv);
    if (argc < 2)
        return wb_error_set(WB_EUSAGE, "no subcommand given; use one of fft, transfer, load, dfft, suite, info "
                                       "(see 'wulfbench --help')");
    const char *first = argv[1];
    if (!strcmp(first, "--help") || !strcmp(first, "-h") || !strcmp(first, "help"))
        return WB_EHELP;
    if (!strcmp(first, "--version") || !strcmp(first, "-V"))
        return WB_EVERSION;
    const struct subcommand *sub = NULL;
    for (int i = 0; i < NSUB; i++)
        if (!strcmp(first, subcommands[i].name))
            sub = &subcommands[i];
    if (!sub)
        return wb_error_set(WB_EUSAGE, "unknown subcommand '%s'; use one of fft, transfer, load, dfft, suite, info", first);
    o->cmd = sub->cmd;
    o->cmd_name = sub->name;
    int rc = parse_sub(argc, argv, o, sub);
    if (rc)
        return rc;
    if (o->cmd == WB_CMD_FFT)
        rc = wb_fft_opts_validate(&o->fft);
    else if (o->cmd == WB_CMD_TRANSFER) {
        /* --reps means repetitions everywhere; for transfer it fixes the count as -i does. */
        if (o->common.reps_given && o->transfer.iters == 0)
            o->transfer.iters = o->common.reps;
        rc = wb_transfer_opts_validate(&o->transfer);
    }
    else if (o->cmd == WB_CMD_LOAD)
        rc = wb_load_opts_validate(&o->load);
    else if (o->cmd == WB_CMD_DFFT)
        rc = wb_dfft_opts_validate(&o->dfft);
    return rc;
}

static void print_defs(const struct wb_optdef *d)
{
    for (; d && d->name; d++) {
        char left[64];
        if (d->short_name)
            snprintf(left, sizeof left, "-%c, --%s%s%s", d->short_name, d->name, d->arg_name ? " " : "",
                     d->arg_name ? d->arg_name : "");
        else
            snprintf(left, sizeof left, "    --%s%s%s", d->name, d->arg_name ? " " : "",
                     d->arg_name ? d->arg_name : "");
        printf("  %-30s %s\n", left, d->help);
    }
}

void wb_options_print_help(enum wb_subcommand cmd)
{
    const struct subcommand *sub = find_sub(cmd);
    if (!sub) {
        printf("usage: wulfbench SUBCOMMAND [options]   (under mpirun or srun)\n\n"
               "What spreading FFT work and data over a cluster costs, and what it buys, per rank.\n\n");
        for (int i = 0; i < NSUB; i++)
            printf("  %-9s %s\n", subcommands[i].name, subcommands[i].summary);
        printf("\nwulfbench SUBCOMMAND --help lists its options. Exit status: 0 ok, 1 error, 2 usage,\n"
               "3 a verification failed, 4 timed out.\n");
        return;
    }
    printf("usage: wulfbench %s [options]\n\n%s\n\n", sub->name, sub->summary);
    if (sub->defs && sub->defs[0].name) {
        printf("%s options:\n", sub->name);
        print_defs(sub->defs);
        printf("\n");
    }
    if (cmd != WB_CMD_INFO) {
        printf("common options:\n");
        print_defs(common_defs);
        printf("\nSizes take suffixes k, M, G (1024) or kB, MB, GB (1000); lists are 1,2,4 and a:b is the\n"
               "powers of two from a to b.\n");
    }
}

void wb_options_free(struct wb_options *o)
{
    wb_fft_opts_free(&o->fft);
    wb_transfer_opts_free(&o->transfer);
    wb_load_opts_free(&o->load);
    wb_dfft_opts_free(&o->dfft);
}
