/* subcommand: the one table of wulfbench's subcommands (name, options, defaults, checks, run, help),
 * the way IMB maps benchmark names to functions. main.c and cmdline.c consult only this table.
 * Adding a subcommand is one entry in subcommand.c plus its own folder: main knows no subcommand by
 * name, and struct wb_options holds the subcommand's options as a block of own_size bytes. */
#ifndef WB_SUBCOMMAND_H
#define WB_SUBCOMMAND_H

#include <stddef.h>
#include <stdint.h>

#include "bench/bench.h"
#include "core/optdef.h"

struct wb_options;
struct wb_results;

struct wb_subcommand {
    const char *name;
    const char *summary;                   /* one line for the help overview */
    const struct wb_optdef *defs;          /* its own options, NULL-name terminated; NULL if none */
    size_t own_size;                       /* its own options struct (wb_options_own(o, name)); 0 if none */
    /* Each of these may be NULL (nothing to do). All are local and never exit. */
    void (*defaults)(struct wb_options *o);
    int (*set)(struct wb_options *o, int id, const char *arg);       /* 0 or WB_EUSAGE */
    int (*validate)(struct wb_options *o);                           /* the combination, after parsing */
    void (*compact)(struct wb_options *o);                           /* the short run `suite` makes */
    void (*free)(struct wb_options *o);
    /* Collective. 0, WB_EVERIFY (the run completed, a check failed) or another error. res is NULL
     * when the entry writes no result file. */
    wb_bench_fn run;
    int results_file;                      /* 1: main opens the result file around run ... */
    int (*no_file)(const struct wb_options *o);   /* ... unless this says these options measure nothing */
    /* The stall window main gives the watchdog for --stall-timeout stall_s; NULL: stall_s itself. */
    double (*stall_window_s)(const struct wb_options *o, double stall_s);
    int (*stdout_taken)(const struct wb_options *o); /* 1: stdout is the run's document; main's lines go to stderr */
    /* Rank 0's bytes for the largest point of its default study (what `check` guards); NULL: none. */
    double (*study_bytes)(const struct wb_options *o);
    /* Bytes a node with ranks_here ranks (ppn_max at most on any node) needs free in the folder it
     * measures storage in, with size_bytes per rank (0: its own); what `check --io-dir` guards. NULL: none. */
    double (*storage_bytes)(const struct wb_options *o, int64_t size_bytes, int ranks_here, int ppn_max);
    int (*baseline)(const struct wb_options *o);    /* 1: a single-machine baseline run, for the record */
    int measures_energy;                   /* 1: --power applies; main opens the power sources around run */
    /* 1: runs the compact form of every entry that has one, one after another (suite); its help lists
     * them, and each part sees o->compact set. */
    int runs_compact;
    int suite_min_ranks;                   /* `suite` skips it on fewer ranks ... */
    const char *suite_needs;               /* ... saying that it needs this */
};

/* The table, in the order `suite` runs and help lists them. */
extern const struct wb_subcommand wb_subcommands[];
extern const int wb_nsubcommands;

/* The entry called name, or NULL. */
const struct wb_subcommand *wb_subcommand_find(const char *name);

/* "fft, transfer, ..." for messages. */
const char *wb_subcommand_names(void);

#endif
