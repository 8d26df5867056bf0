/* options: the command line: the common options, and each subcommand's through its table entry; no MPI,
 * never exits. Value parsers are in optparse. */
#ifndef WB_OPTIONS_H
#define WB_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "bench/dfft/options_dfft.h"
#include "bench/fft/options_fft.h"
#include "bench/load/options_load.h"
#include "bench/transfer/options_transfer.h"

enum wb_progress { WB_PROGRESS_AUTO, WB_PROGRESS_ALWAYS, WB_PROGRESS_NEVER };

/* Options every subcommand takes. */
struct wb_common_opts {
    const char *out_path;     /* -o; NULL = default name under results/ */
    const char *label;        /* --label; "" if none */
    int reps;                 /* --reps: recorded repetitions */
    int reps_given;
    int reps_auto;            /* --reps auto: fft repeats a point until its median is stable */
    int warmup;               /* --warmup / -x: unrecorded repetitions */
    uint64_t seed;            /* --seed */
    double timeout_s;         /* --timeout: whole-run limit, 0 = none */
    double stall_timeout_s;   /* --stall-timeout: longest time without a sync point, 0 = none */
    enum wb_progress progress;
    int quiet;                /* --quiet: no tables, only errors and the final line */
    int force;                /* --force: overwrite an existing result file */
};

struct wb_subcommand;

struct wb_options {
    const struct wb_subcommand *sub; /* the entry of the subcommand given (NULL before parsing it) */
    const char *cmd_name;
    struct wb_common_opts common;
    struct wb_fft_opts fft;
    struct wb_transfer_opts transfer;
    struct wb_load_opts load;
    struct wb_dfft_opts dfft;
    char command_line[4096];
};

/* Parse argv into o (defaults first). Returns 0, WB_EHELP, WB_EVERSION or WB_EUSAGE
 * with a one-line message (what is wrong, what is allowed) in wb_error_message(). Local:
 * checks that read this host (free memory) can differ between ranks, so the caller agrees. */
int wb_options_parse(int argc, char **argv, struct wb_options *o);

/* Print the help text for sub (NULL: the overview) to stdout. */
void wb_options_print_help(const struct wb_subcommand *sub);

/* The options every subcommand takes, NULL-name terminated. Local. */
const struct wb_optdef *wb_options_common_defs(void);

/* what "--man": the man page in roff; "--bash-completion": the completion script; both made from
 * the option tables, on stdout. 0, or -1 for any other word (nothing printed). Local, no MPI. */
int wb_options_print_generated(const char *what);

/* Free what parsing allocated (lists). */
void wb_options_free(struct wb_options *o);

#endif
