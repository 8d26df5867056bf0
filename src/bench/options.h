/* options: struct wb_options, what a run was asked for: the common options and a block per subcommand
 * that only the subcommand's folder knows the type of (it finds its block by name). Parsing it is
 * cli/cmdline.h's; adding a subcommand changes nothing here. */
#ifndef WB_OPTIONS_H
#define WB_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

#define WB_MAX_SUBCOMMANDS 16

/* One subcommand's own options: a block of the size its table entry gives, allocated and zeroed
 * when parsing starts (every subcommand's, since `suite` runs several). */
struct wb_options_own {
    const char *name; /* the subcommand's name; NULL for an unused slot */
    void *block;
};

struct wb_options {
    const struct wb_subcommand *sub; /* the entry of the subcommand given (NULL before parsing it) */
    const char *cmd_name;
    /* 1: each subcommand runs in its compact form, as a part of one run of several (suite: the table's
     * runs_compact); a part then skips, with a line, what this build or job cannot run. */
    int compact;
    struct wb_common_opts common;
    struct wb_options_own own[WB_MAX_SUBCOMMANDS];
    /* Rank 0's memory for the largest point of the default study (B), from the subcommands that say
     * (the table's study_bytes); `check` compares it with each node's free memory. */
    double study_bytes;
    /* The storage run's need per node (the table's storage_bytes, of the subcommand that has one; NULL
     * none); `check --io-dir` compares it with each node's free space in the folder. */
    double (*storage_bytes)(const struct wb_options *o, int64_t size_bytes, int ranks_here, int ppn_max);
    char command_line[4096];
};

/* The block of the subcommand called name (cast to its own struct by its folder). Never NULL once
 * parsing has begun: a name without a block is a programming error, and aborts. */
static inline void *wb_options_own(const struct wb_options *o, const char *name)
{
    for (int i = 0; i < WB_MAX_SUBCOMMANDS && o->own[i].name; i++)
        if (!strcmp(o->own[i].name, name))
            return o->own[i].block;
    abort();
}

#endif
