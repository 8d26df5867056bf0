#include "cli/subcommand.h"

#include <stdio.h>
#include <string.h>

#include "bench/bench.h"
#include "par/comm.h"
#include "core/error.h"
#include "bench/options.h"
#include "core/report.h"

static void fft_defaults(struct wb_options *o) { wb_fft_opts_defaults(&o->fft); }
static int fft_set(struct wb_options *o, int id, const char *arg) { return wb_fft_opts_set(&o->fft, id, arg); }
static int fft_validate(struct wb_options *o) { return wb_fft_opts_validate(&o->fft); }
static void fft_compact(struct wb_options *o) { wb_fft_opts_compact(&o->fft); }
static void fft_free(struct wb_options *o) { wb_fft_opts_free(&o->fft); }

static void transfer_defaults(struct wb_options *o) { wb_transfer_opts_defaults(&o->transfer); }
static int transfer_set(struct wb_options *o, int id, const char *arg)
{
    return wb_transfer_opts_set(&o->transfer, id, arg);
}
static int transfer_validate(struct wb_options *o)
{
    /* --reps means repetitions everywhere; for transfer it fixes the count as -i does (not in suite,
     * whose transfer part sizes its repetitions by time). */
    if (o->common.reps_given && !o->common.reps_auto && o->transfer.iters == 0 && !strcmp(o->cmd_name, "transfer"))
        o->transfer.iters = o->common.reps;
    return wb_transfer_opts_validate(&o->transfer);
}
static void transfer_compact(struct wb_options *o) { wb_transfer_opts_compact(&o->transfer); }
static void transfer_free(struct wb_options *o) { wb_transfer_opts_free(&o->transfer); }

static void load_defaults(struct wb_options *o) { wb_load_opts_defaults(&o->load); }
static int load_set(struct wb_options *o, int id, const char *arg) { return wb_load_opts_set(&o->load, id, arg); }
static int load_validate(struct wb_options *o) { return wb_load_opts_validate(&o->load); }
static void load_compact(struct wb_options *o) { wb_load_opts_compact(&o->load); }
static void load_free(struct wb_options *o) { wb_load_opts_free(&o->load); }

static void dfft_defaults(struct wb_options *o) { wb_dfft_opts_defaults(&o->dfft); }
static int dfft_set(struct wb_options *o, int id, const char *arg) { return wb_dfft_opts_set(&o->dfft, id, arg); }
static int dfft_validate(struct wb_options *o) { return wb_dfft_opts_validate(&o->dfft); }
static void dfft_compact(struct wb_options *o) { wb_dfft_opts_compact(&o->dfft); }
static void dfft_free(struct wb_options *o) { wb_dfft_opts_free(&o->dfft); }

/* `suite`: every entry that has a compact form, compacted and checked as its own run would be. */
static int suite_validate(struct wb_options *o)
{
    int rc = 0;
    for (int i = 0; rc == 0 && i < wb_nsubcommands; i++) {
        const struct wb_subcommand *s = &wb_subcommands[i];
        if (!s->compact)
            continue;
        s->compact(o);
        if (s->validate)
            rc = s->validate(o);
    }
    return rc;
}

/* `suite`: the compact runs one after another into one file. Collective. */
static int suite_run(const struct wb_options *o, struct wb_results *res)
{
    int rc = 0, failed = 0;
    for (int i = 0; rc == 0 && i < wb_nsubcommands; i++) {
        const struct wb_subcommand *s = &wb_subcommands[i];
        if (!s->compact)
            continue;
        if (wb_comm_size() < s->suite_min_ranks) {
            wb_report_printf("# %s: skipped, it needs %s\n", s->name, s->suite_needs);
            continue;
        }
        wb_report_printf("\n");
        rc = s->run(o, res);
        if (rc == WB_EVERIFY) {
            failed = 1;
            rc = 0;
        }
    }
    return rc ? rc : failed ? WB_EVERIFY : 0;
}

const struct wb_subcommand wb_subcommands[] = {
    {"fft", wb_fft_summary, wb_fft_optdefs, fft_defaults, fft_set, fft_validate, fft_compact, fft_free,
     wb_bench_fft_run, 1, 1, NULL},
    {"transfer", wb_transfer_summary, wb_transfer_optdefs, transfer_defaults, transfer_set, transfer_validate,
     transfer_compact, transfer_free, wb_bench_transfer_run, 1, 2, "at least 2 ranks"},
    {"load", wb_load_summary, wb_load_optdefs, load_defaults, load_set, load_validate, load_compact, load_free,
     wb_bench_load_run, 1, 2, "a head and at least one worker (2 ranks)"},
    {"dfft", wb_dfft_summary, wb_dfft_optdefs, dfft_defaults, dfft_set, dfft_validate, dfft_compact, dfft_free,
     wb_bench_dfft_run, 1, 1, NULL},
    {"suite", "a compact run of fft, transfer, load and dfft (what `make run` starts)", NULL, NULL, NULL, suite_validate,
     NULL, NULL, suite_run, 1, 0, NULL},
    {"info", "what wulfbench detects: ranks, nodes, hosts, versions, timer", NULL, NULL, NULL, NULL, NULL, NULL,
     wb_info_run, 0, 0, NULL},
};
const int wb_nsubcommands = (int)(sizeof wb_subcommands / sizeof wb_subcommands[0]);

const struct wb_subcommand *wb_subcommand_find(const char *name)
{
    for (int i = 0; name && i < wb_nsubcommands; i++)
        if (!strcmp(name, wb_subcommands[i].name))
            return &wb_subcommands[i];
    return NULL;
}

const char *wb_subcommand_names(void)
{
    static char names[256];
    if (!names[0])
        for (int i = 0; i < wb_nsubcommands; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                     wb_subcommands[i].name);
    return names;
}
