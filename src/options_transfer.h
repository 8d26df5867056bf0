/* options_transfer: the options of `wulfbench transfer`. */
#ifndef WB_OPTIONS_TRANSFER_H
#define WB_OPTIONS_TRANSFER_H

#include <stdint.h>

#include "optdef.h"

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

enum wb_transfer_pairs { WB_TRANSFER_PAIRS_FIRST, WB_TRANSFER_PAIRS_ALL, WB_TRANSFER_PAIRS_LIST };

/* Largest message size accepted by --sizes, bytes (MPI counts are int). */
#define WB_TRANSFER_MAX_BYTES (INT64_C(1) << 30)
/* Most sizes in one --sizes list. */
#define WB_TRANSFER_MAX_SIZES 64

struct wb_transfer_opts {
    unsigned tests;             /* --tests: bit mask of enum wb_transfer_test */
    int64_t sizes_bytes[WB_TRANSFER_MAX_SIZES]; /* -m/--sizes: message sizes in bytes */
    int nsizes;
    int iters;                  /* -i/--iters: recorded repetitions per size; 0 = auto */
    double time_per_size_s;     /* --time-per-size: the time auto aims to spend per size */
    int iters_min, iters_max;   /* --iters-min/--iters-max: bounds of auto */
    int window;                 /* --window: messages per window of bw and bibw */
    int64_t window_bytes;       /* --window-bytes: at most this many bytes in flight per window */
    int random_orders;          /* --random-orders: ring orders beside the natural one */
    enum wb_transfer_pairs pairs_mode;
    int (*pairs)[2];            /* --pairs LIST: sender, receiver */
    int npairs;
    int root;                   /* --root: a rank, or -1 = rotate */
    int validate;               /* --validate: check every received buffer */
};

/* The option table (terminated by a NULL name) and the help summary line. */
extern const struct wb_optdef wb_transfer_optdefs[];
extern const char wb_transfer_summary[];

/* Defaults before parsing. */
void wb_transfer_opts_defaults(struct wb_transfer_opts *t);
/* Apply option id with argument arg (NULL for flags). 0 or WB_EUSAGE. */
int wb_transfer_opts_set(struct wb_transfer_opts *t, int id, const char *arg);
/* Check the combination after parsing, given the common reps/warmup. 0 or WB_EUSAGE. */
int wb_transfer_opts_validate(struct wb_transfer_opts *t);
/* Free lists. */
void wb_transfer_opts_free(struct wb_transfer_opts *t);

/* The compact set `wulfbench suite` runs: pingpong, bw, allreduce at 1 B..1 MiB, iters auto
 * with 0.05 s per size; other fields keep their values (call after defaults). */
void wb_transfer_opts_compact(struct wb_transfer_opts *t);

#endif
