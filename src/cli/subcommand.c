#include "cli/subcommand.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/check/bench_check.h"
#include "bench/check/options_check.h"
#include "bench/dfft/bench_dfft.h"
#include "bench/dfft/options_dfft.h"
#include "bench/fft/bench_fft.h"
#include "bench/fft/options_fft.h"
#include "bench/io/bench_io.h"
#include "bench/io/options_io.h"
#include "bench/load/bench_load.h"
#include "bench/load/options_load.h"
#include "bench/transfer/bench_transfer.h"
#include "bench/transfer/options_transfer.h"
#include "cli/info.h"
#include "par/comm.h"
#include "core/error.h"
#include "bench/options.h"
#include "core/report.h"

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

/* `suite`: the widest stall window of the runs it makes. */
static double suite_stall_window_s(const struct wb_options *o, double stall_s)
{
    double window = stall_s;
    for (int i = 0; i < wb_nsubcommands; i++)
        if (wb_subcommands[i].compact && wb_subcommands[i].stall_window_s)
            window = fmax(window, wb_subcommands[i].stall_window_s(o, stall_s));
    return window;
}

const struct wb_subcommand wb_subcommands[] = {
    {.name = "fft", .summary = wb_fft_summary, .defs = wb_fft_optdefs, .own_size = sizeof(struct wb_fft_opts),
     .study_bytes = wb_fft_opts_study_bytes, .baseline = wb_fft_opts_baseline, .defaults = wb_fft_opts_defaults,
     .set = wb_fft_opts_set, .validate = wb_fft_opts_validate, .compact = wb_fft_opts_compact,
     .free = wb_fft_opts_free, .run = wb_bench_fft_run, .results_file = 1, .measures_energy = 1, .suite_min_ranks = 1},
    {.name = "transfer", .summary = wb_transfer_summary, .defs = wb_transfer_optdefs,
     .own_size = sizeof(struct wb_transfer_opts),
     .defaults = wb_transfer_opts_defaults, .set = wb_transfer_opts_set, .validate = wb_transfer_opts_validate,
     .compact = wb_transfer_opts_compact, .free = wb_transfer_opts_free, .run = wb_bench_transfer_run,
     .results_file = 1, .no_file = wb_transfer_opts_no_file, .stdout_taken = wb_transfer_opts_stdout_taken,
     .suite_min_ranks = 2, .suite_needs = "at least 2 ranks"},
    {.name = "load", .summary = wb_load_summary, .defs = wb_load_optdefs, .own_size = sizeof(struct wb_load_opts),
     .defaults = wb_load_opts_defaults,
     .set = wb_load_opts_set, .validate = wb_load_opts_validate, .compact = wb_load_opts_compact,
     .free = wb_load_opts_free, .run = wb_bench_load_run, .results_file = 1, .measures_energy = 1,
     .stall_window_s = wb_load_opts_stall_window_s, .suite_min_ranks = 2,
     .suite_needs = "a head and at least one worker (2 ranks)"},
    {.name = "dfft", .summary = wb_dfft_summary, .defs = wb_dfft_optdefs, .own_size = sizeof(struct wb_dfft_opts),
     .defaults = wb_dfft_opts_defaults,
     .set = wb_dfft_opts_set, .validate = wb_dfft_opts_validate, .compact = wb_dfft_opts_compact,
     .free = wb_dfft_opts_free, .run = wb_bench_dfft_run, .results_file = 1, .measures_energy = 1, .suite_min_ranks = 1},
    {.name = "io", .summary = wb_io_summary, .defs = wb_io_optdefs, .own_size = sizeof(struct wb_io_opts),
     .defaults = wb_io_opts_defaults, .set = wb_io_opts_set, .validate = wb_io_opts_validate,
     .compact = wb_io_opts_compact, .storage_bytes = wb_io_opts_storage_bytes, .no_file = wb_io_opts_no_file, .run = wb_bench_io_run, .results_file = 1, .suite_min_ranks = 1},
    {.name = "suite", .summary = "a compact run of fft, transfer, load, dfft and io (what `make run` starts)",
     .validate = suite_validate, .run = suite_run, .results_file = 1, .measures_energy = 1, .stall_window_s = suite_stall_window_s,
     .runs_compact = 1},
    {.name = "info", .summary = "what wulfbench detects: ranks, nodes, hosts, versions, timer", .run = wb_info_run},
    {.name = "check", .summary = wb_check_summary, .defs = wb_check_optdefs,
     .own_size = sizeof(struct wb_check_opts), .defaults = wb_check_opts_defaults,
     .set = wb_check_opts_set, .validate = wb_check_opts_validate, .run = wb_bench_check_run},
};
const int wb_nsubcommands = (int)(sizeof wb_subcommands / sizeof wb_subcommands[0]);
_Static_assert(sizeof wb_subcommands / sizeof wb_subcommands[0] <= WB_MAX_SUBCOMMANDS,
               "struct wb_options has a slot per subcommand: raise WB_MAX_SUBCOMMANDS");

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
