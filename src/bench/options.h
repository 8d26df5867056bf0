/* options: struct wb_options, what a run was asked for: the common options and each subcommand's own
 * struct (from its folder). Parsing it is cli/cmdline.h's. */
#ifndef WB_OPTIONS_H
#define WB_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "bench/check/options_check.h"
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
    int power;                /* --power: a wb_power_mode (0 auto ... 4 none) */
    int power_given;
    double power_idle_s;      /* --power-idle: idle window before the first point, 0 = none */
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
    struct wb_check_opts check;
    char command_line[4096];
};

#endif
