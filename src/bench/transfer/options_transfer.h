/* options_transfer: the options of `wulfbench transfer`, and the one table of its test names. */
#ifndef WB_OPTIONS_TRANSFER_H
#define WB_OPTIONS_TRANSFER_H

#include <stdint.h>

#include "core/optdef.h"

/* The subcommand table calls these hooks with the whole options (bench/options.h); each works on
 * this subcommand's own block, wb_transfer_opts_of(o). */
struct wb_options;

/* The tests, in the order they run; bit (1u << test) in wb_transfer_opts.tests. */
enum wb_transfer_test {
    WB_TRANSFER_PINGPONG,
    WB_TRANSFER_BW,
    WB_TRANSFER_BIBW,
    WB_TRANSFER_RING,
    WB_TRANSFER_BARRIER,
    WB_TRANSFER_BCAST,
    WB_TRANSFER_SCATTER,
    WB_TRANSFER_GATHER,
    WB_TRANSFER_ALLGATHER,
    WB_TRANSFER_ALLTOALL,
    WB_TRANSFER_REDUCE,
    WB_TRANSFER_ALLREDUCE,
    WB_TRANSFER_NTESTS
};

/* The name of a test ("pingpong", ...), or NULL out of range. */
const char *wb_transfer_test_name(int test);
/* The other names a test answers to (IMB's and OSU's, e.g. "Uniband"), ", "-separated; "" if none. */
const char *wb_transfer_test_aliases(int test);

/* first: 0:1; all: every ordered pair in turn; list: given pairs at once; shift: all, then every
 * pair at once in N-1 shifted rounds (mpiGraph's pattern). */
enum wb_transfer_pairs { WB_TRANSFER_PAIRS_FIRST, WB_TRANSFER_PAIRS_ALL, WB_TRANSFER_PAIRS_LIST,
                         WB_TRANSFER_PAIRS_SHIFT };
extern const char *const wb_transfer_pairs_names[];

enum wb_transfer_format { WB_TRANSFER_FMT_TABLE, WB_TRANSFER_FMT_CSV, WB_TRANSFER_FMT_JSON };
extern const char *const wb_transfer_format_names[];

/* osu: back-to-back round trips between separate send and receive buffers (OSU, IMB);
 * netpipe: each side sends on the data it has just received (NetPIPE). */
enum wb_transfer_pp_method { WB_TRANSFER_PP_OSU, WB_TRANSFER_PP_NETPIPE };
extern const char *const wb_transfer_pp_method_names[];

/* Element type and operation of reduce and allreduce. */
enum wb_transfer_dtype { WB_TRANSFER_DT_BYTE, WB_TRANSFER_DT_INT, WB_TRANSFER_DT_FLOAT, WB_TRANSFER_DT_DOUBLE };
extern const char *const wb_transfer_dtype_names[];
enum wb_transfer_op { WB_TRANSFER_OP_SUM, WB_TRANSFER_OP_BXOR, WB_TRANSFER_OP_MAX };
extern const char *const wb_transfer_op_names[];

/* Largest message size accepted by --sizes, bytes (MPI counts are int). */
#define WB_TRANSFER_MAX_BYTES (INT64_C(1) << 30)
/* Most sizes in one --sizes list. */
#define WB_TRANSFER_MAX_SIZES 64

struct wb_transfer_opts {
    unsigned tests;             /* --tests: bit mask of enum wb_transfer_test */
    int tests_given;
    int64_t sizes_bytes[WB_TRANSFER_MAX_SIZES]; /* -m/--sizes: message sizes in bytes */
    int nsizes;
    int sizes_given;
    int iters;                  /* -i/--iters: recorded repetitions per size; 0 = auto */
    double time_per_size_s;     /* --time-per-size: the time auto aims to spend per size */
    int iters_min, iters_max;   /* --iters-min/--iters-max: bounds of auto */
    double time_budget_s;       /* --time-budget: the whole run, 0 = none */
    int window;                 /* --window: messages per window of bw and bibw */
    int64_t window_bytes;       /* --window-bytes: at most this many bytes in flight per window; 0 = no cap */
    int64_t mem_limit_bytes;    /* -M/--mem-limit: buffers per rank, 0 = 80% of the host's available memory */
    int random_orders;          /* --random-orders: ring orders beside the natural one */
    enum wb_transfer_pairs pairs_mode;
    int (*pairs)[2];            /* --pairs LIST: sender, receiver */
    int npairs;
    int root;                   /* --root: a rank, or -1 = rotate */
    int validate;               /* --validate: check every received buffer */
    enum wb_transfer_pp_method pp_method; /* --pingpong-method */
    enum wb_transfer_dtype dtype;         /* --dtype */
    enum wb_transfer_op op;               /* --op */
    enum wb_transfer_format format;       /* --format of stdout */
    int full;                   /* -f/--full: per-pair rows and the spread columns */
    int dry_run;                /* --dry-run: probe, print the plan, measure nothing */
    int list;                   /* --list: print the tests and stop */
};

/* The option table (terminated by a NULL name) and the help summary line. */
extern const struct wb_optdef wb_transfer_optdefs[];
extern const char wb_transfer_summary[];

/* Defaults before parsing. */
void wb_transfer_opts_defaults(struct wb_options *o);
/* Apply option id with argument arg (NULL for flags). 0 or WB_EUSAGE. */
int wb_transfer_opts_set(struct wb_options *o, int id, const char *arg);
/* Check the combination after parsing and apply the defaults that depend on it
 * (--pairs all/shift: pingpong and bw at 8 B, 64 KiB, 1 MiB). 0 or WB_EUSAGE. */
int wb_transfer_opts_validate(struct wb_options *o);
/* Free lists. */
void wb_transfer_opts_free(struct wb_options *o);
/* 1 when the run writes no result file (--list, --dry-run). */
int wb_transfer_opts_no_file(const struct wb_options *o);
/* 1 when stdout carries the document (--format csv|json), so other lines go to stderr. */
int wb_transfer_opts_stdout_taken(const struct wb_options *o);

/* The compact set `wulfbench suite` runs: pingpong, bw, allreduce at 1 B..1 MiB, iters auto
 * with 0.05 s per size; other fields keep their values (call after defaults). */
void wb_transfer_opts_compact(struct wb_options *o);

/* This subcommand's own block of o (the struct above). */
struct wb_transfer_opts *wb_transfer_opts_of(const struct wb_options *o);

#endif
