#define _POSIX_C_SOURCE 200809L
#include "bench/options.h"
#include "cli/cmdline.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/power.h"
#include "cli/subcommand.h"
#include "core/error.h"
#include "core/optparse.h"

enum common_id {
    C_OUT = 1000, C_LABEL, C_REPS, C_WARMUP, C_SEED, C_TIMEOUT, C_STALL, C_PROGRESS, C_QUIET, C_FORCE, C_HELP, C_VERSION,
    C_POWER, C_POWER_IDLE
};

static const struct wb_optdef common_defs[] = {
    {"output", 1, 'o', C_OUT, "FILE.h5", "result file; FILE.h5.partial until the run ends", "results/wulfbench-<host>-<UTC>.h5"},
    {"label", 1, 0, C_LABEL, "TEXT", "a label stored in the file and shown in reports", "empty"},
    {"reps", 1, 0, C_REPS, "N|auto",
     "recorded repetitions per point, 1 to 1000000; fft auto: until the median is stable (transfer: as -i N; "
     "load: unused)", "5"},
    {"warmup", 1, 'x', C_WARMUP, "N", "unrecorded warm-up repetitions per point, 0 to 1000000", "1"},
    {"seed", 1, 0, C_SEED, "N", "seed of synthetic audio and random orders, 0 or more", "1"},
    {"timeout", 1, 0, C_TIMEOUT, "SECONDS", "a hard deadline: stop after this long and keep what was measured; 0.001 to 1e7",
     "none"},
    {"stall-timeout", 1, 0, C_STALL, "SECONDS", "end the run cleanly when no rank makes progress this long; 0 = never",
     "300"},
    {"progress", 1, 0, C_PROGRESS, "auto|always|never", "progress line with ETA on stderr (auto: on a terminal)", "auto"},
    {"quiet", 0, 'q', C_QUIET, NULL, "print no tables, only errors and the result file name", NULL},
    {"force", 0, 0, C_FORCE, NULL, "overwrite an existing result file", NULL},
    {"power", 1, 0, C_POWER, "auto|rapl|hwmon|pi5|none",
     "energy per node (fft, dfft, load, suite): auto is the first of rapl, hwmon, pi5 each node has", "auto"},
    {"power-idle", 1, 0, C_POWER_IDLE, "SECONDS", "idle power measured this long before the first point, 0 to 600; "
     "0 skips it", "3"},
    {"help", 0, 'h', C_HELP, NULL, "show this help", NULL},
    {"version", 0, 'V', C_VERSION, NULL, "show the version", NULL},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

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
        if (!strcmp(arg, "auto")) {
            c->reps_auto = c->reps_given = 1;
            break;
        }
        if ((rc = wb_optparse_int("--reps", arg, 1, 1000000, &v)) == 0) {
            c->reps = (int)v;
            c->reps_given = 1;
        }
        break;
    case C_WARMUP:
        if ((rc = wb_optparse_int("--warmup", arg, 0, 1000000, &v)) == 0)
            c->warmup = (int)v;
        break;
    case C_SEED:
        if ((rc = wb_optparse_int("--seed", arg, 0, INT64_MAX, &v)) == 0)
            c->seed = (uint64_t)v;
        break;
    case C_TIMEOUT:
        if ((rc = wb_optparse_double("--timeout", arg, 0.001, 1e7, &d)) == 0)
            c->timeout_s = d;
        break;
    case C_STALL:
        if ((rc = wb_optparse_double("--stall-timeout", arg, 0, 1e7, &d)) == 0)
            c->stall_timeout_s = d;
        break;
    case C_PROGRESS:
        if ((rc = wb_optparse_choice("--progress", arg, progress, &k)) == 0)
            c->progress = (enum wb_progress)k;
        break;
    case C_QUIET:
        c->quiet = 1;
        break;
    case C_FORCE:
        c->force = 1;
        break;
    case C_POWER:
        if ((rc = wb_optparse_choice("--power", arg, wb_power_mode_names, &k)) == 0)
            c->power = k, c->power_given = 1;
        break;
    case C_POWER_IDLE:
        if ((rc = wb_optparse_double("--power-idle", arg, 0, 600, &d)) == 0)
            c->power_idle_s = d;
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

static int parse_sub(int argc, char **argv, struct wb_options *o, const struct wb_subcommand *sub)
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
        } else if (sub->set) {
            rc = sub->set(o, d->id, optarg);
        }
    }
    if (rc == 0 && optind < sargc)
        rc = wb_error_set(WB_EUSAGE, "unexpected argument '%s'; options start with -- (see 'wulfbench %s --help')",
                          sargv[optind], sub->name);
    free(all);
    free(longopts);
    return rc;
}

int wb_cmdline_parse(int argc, char **argv, struct wb_options *o)
{
    memset(o, 0, sizeof *o);
    o->common = (struct wb_common_opts){.label = "", .reps = 5, .warmup = 1, .seed = 1, .stall_timeout_s = 300,
                                 .power_idle_s = 3};
    /* Every subcommand's own block and defaults, since `suite` runs several of them. */
    for (int i = 0; i < wb_nsubcommands; i++) {
        o->own[i].name = wb_subcommands[i].name;
        if (wb_subcommands[i].own_size && !(o->own[i].block = calloc(1, wb_subcommands[i].own_size)))
            return wb_error_set(WB_ENOMEM, "out of memory for the options of %s", wb_subcommands[i].name);
    }
    for (int i = 0; i < wb_nsubcommands; i++)
        if (wb_subcommands[i].defaults)
            wb_subcommands[i].defaults(o);
    record_command_line(o, argc, argv);
    if (argc < 2)
        return wb_error_set(WB_EUSAGE, "no subcommand given; use one of %s (see 'wulfbench --help')",
                            wb_subcommand_names());
    const char *first = argv[1];
    if (!strcmp(first, "--help") || !strcmp(first, "-h") || !strcmp(first, "help"))
        return WB_EHELP;
    if (!strcmp(first, "--version") || !strcmp(first, "-V"))
        return WB_EVERSION;
    const struct wb_subcommand *sub = wb_subcommand_find(first);
    if (!sub)
        return wb_error_set(WB_EUSAGE, "unknown subcommand '%s'; use one of %s", first, wb_subcommand_names());
    o->sub = sub;
    o->cmd_name = sub->name;
    o->compact = sub->runs_compact;
    int rc = parse_sub(argc, argv, o, sub);
    if (rc == 0 && o->common.power_given && !sub->measures_energy)
        rc = wb_error_set(WB_EUSAGE, "--power: %s records no energy; use it with fft, dfft, load or suite", sub->name);
    if (rc == 0 && sub->validate)
        rc = sub->validate(o);
    for (int i = 0; rc == 0 && i < wb_nsubcommands; i++)
        if (wb_subcommands[i].study_bytes)
            o->study_bytes = fmax(o->study_bytes, wb_subcommands[i].study_bytes(o));
    for (int i = 0; i < wb_nsubcommands && !o->storage_bytes; i++)
        o->storage_bytes = wb_subcommands[i].storage_bytes;
    return rc;
}

const struct wb_optdef *wb_cmdline_common_defs(void) { return common_defs; }

void wb_cmdline_free(struct wb_options *o)
{
    for (int i = 0; i < wb_nsubcommands; i++)
        if (wb_subcommands[i].free && o->own[i].name && (o->own[i].block || !wb_subcommands[i].own_size))
            wb_subcommands[i].free(o);
    for (int i = 0; i < WB_MAX_SUBCOMMANDS; i++) {
        free(o->own[i].block);
        o->own[i].block = NULL;
    }
}
