/* options: command-line parsing, defaults and validation for every subcommand; no MPI, never exits. */
#ifndef WB_OPTIONS_H
#define WB_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "options_dfft.h"
#include "options_fft.h"
#include "options_load.h"
#include "options_transfer.h"

enum wb_progress { WB_PROGRESS_AUTO, WB_PROGRESS_ALWAYS, WB_PROGRESS_NEVER };

/* Options every subcommand takes. */
struct wb_common_opts {
    const char *out_path;     /* -o; NULL = default name under results/ */
    const char *label;        /* --label; "" if none */
    int reps;                 /* --reps: recorded repetitions */
    int reps_given;
    int warmup;               /* --warmup / -x: unrecorded repetitions */
    uint64_t seed;            /* --seed */
    double timeout_s;         /* --timeout: whole-run limit, 0 = none */
    enum wb_progress progress;
    int quiet;                /* --quiet: no tables, only errors and the final line */
    int force;                /* --force: overwrite an existing result file */
};

enum wb_subcommand { WB_CMD_NONE, WB_CMD_FFT, WB_CMD_TRANSFER, WB_CMD_LOAD, WB_CMD_SUITE, WB_CMD_INFO, WB_CMD_DFFT };

struct wb_options {
    enum wb_subcommand cmd;
    const char *cmd_name;
    struct wb_common_opts common;
    struct wb_fft_opts fft;
    struct wb_transfer_opts transfer;
    struct wb_load_opts load;
    struct wb_dfft_opts dfft;
    char command_line[4096];
};

/* Parse argv into o (defaults first). Returns 0, WB_EHELP, WB_EVERSION or WB_EUSAGE
 * with a one-line message (what is wrong, what is allowed) in wb_error_message(). */
int wb_options_parse(int argc, char **argv, struct wb_options *o);

/* Print the help text for o->cmd (WB_CMD_NONE: the overview) to stdout. */
void wb_options_print_help(enum wb_subcommand cmd);

/* Free what parsing allocated (lists). */
void wb_options_free(struct wb_options *o);

/* Parsing helpers shared by the subcommands' option files. All return 0 or
 * WB_EUSAGE with a message that names the option (opt, e.g. "--sizes"). */

/* A size with optional suffix k, K, M, G (powers of 1024) or kB, MB (powers of 1000). */
int wb_options_size(const char *opt, const char *s, int64_t min, int64_t max, int64_t *out);
/* An integer in [min, max]. */
int wb_options_int(const char *opt, const char *s, int64_t min, int64_t max, int64_t *out);
/* A finite number in [min, max]. */
int wb_options_double(const char *opt, const char *s, double min, double max, double *out);
/* One of the words in choices (NULL-terminated); *out is its index. */
int wb_options_choice(const char *opt, const char *s, const char *const *choices, int *out);
/* A list "a,b,c" of sizes, where an item "a:b" expands to the powers of two from a to b
 * (a, 2a, 4a, ... up to b); each value in [min, max]; at most maxn values. Caller frees *vals. */
int wb_options_size_list(const char *opt, const char *s, int64_t min, int64_t max, int maxn,
                         int64_t **vals, int *n);
/* A list "a,b,c" of numbers in [min, max]. Caller frees *vals. */
int wb_options_double_list(const char *opt, const char *s, double min, double max, int maxn,
                           double **vals, int *n);

#endif
