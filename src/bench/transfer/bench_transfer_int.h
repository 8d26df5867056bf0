/* bench_transfer_int: what the files of the transfer benchmark share (driver, plan, stats, print). */
#ifndef WB_BENCH_TRANSFER_INT_H
#define WB_BENCH_TRANSFER_INT_H

#include <stddef.h>
#include <stdint.h>

#include "bench/netstat.h"
#include "bench/options.h"
#include "bench/transfer/options_transfer.h"
#include "bench/transfer/bench_transfer_kernels.h"
#include "io/results.h"

/* Bytes kept of each host name for the link-map summaries. */
#define WB_TRANSFER_HOST_CAP 64
/* Index of the shifted run of the map test in wb_transfer_plan.test. */
#define WB_TRANSFER_SHIFT WB_TRANSFER_NTESTS
/* Coefficient of variation over repetitions above which a point is flagged unstable. */
#define WB_TRANSFER_UNSTABLE_CV 0.05

/* What one test (or the shifted run) will do, decided on rank 0 before anything is measured. */
struct wb_transfer_plan_test {
    int on;
    int nsizes;
    int64_t bytes[WB_TRANSFER_MAX_SIZES];
    int reps[WB_TRANSFER_MAX_SIZES];        /* recorded repetitions planned (auto: as estimated) */
    int reps_cap[WB_TRANSFER_MAX_SIZES];    /* at most this many, after the budget's cut */
    double t_rep_s[WB_TRANSFER_MAX_SIZES];  /* estimated seconds of one repetition, summed over the units */
    double est_s[WB_TRANSFER_MAX_SIZES];    /* estimated seconds of the size over every unit, as cut */
    double fixed_s[WB_TRANSFER_MAX_SIZES];  /* of which warm-up, calibration and bookkeeping */
    int units;                              /* pairs in turn, ring orders, shifted rounds, or 1 */
};

/* The plan of a run: identical on every rank (rank 0 decides and broadcasts it). */
struct wb_transfer_plan {
    struct wb_transfer_plan_test test[WB_TRANSFER_NTESTS + 1];
    int map_test;               /* the p2p test whose pairs make the link maps, or -1 */
    double lat_s[2], bw_Bps[2]; /* probe: within rank 0's node [0] and to another node [1]; NaN if none */
    int probe_peer[2];
    double barrier_s;           /* probe: mean time of one MPI_Barrier over every rank */
    double probe_s;             /* the probe's own duration */
    double est_s;               /* estimated duration of the measurements */
    double budget_s;            /* 0: none */
    int reps_floor;             /* fewest repetitions a cut leaves */
    char cuts[768];             /* what the budget or memory cut, "" if nothing */
};

/* What the tests of one run share. */
struct wb_transfer_run {
    const struct wb_options *o;
    const struct wb_transfer_opts *t;
    struct wb_results *res;     /* NULL: write nothing (--dry-run) */
    int rank, nranks, nnodes;
    const int *node;            /* [nranks] node index of every rank (comm's map) */
    char *hosts;                /* rank 0: [nranks][WB_TRANSFER_HOST_CAP] */
    struct wb_transfer_plan plan;
    double t_start_s;           /* when the run started */
    double t_measure_s;         /* when the measurements started (after the probe) */
    double est_done_s;          /* estimated seconds of the points finished so far */
    int runtime_cut;            /* rank 0 cut repetitions while running */
    int tests_done, tests_total;
    int pairs_all_written;
    double *seq_bw;             /* rank 0: [nranks^2] the sequential bandwidth map, for the shift ratio */
    int short_warned;
    int json_tests;             /* --format json: test objects printed so far */
    int failed;                 /* a received buffer did not match somewhere */
    char first_failure[1024];
};

/* One test in progress. Sizes run inside units; units (pairs in turn, ring orders, shifted rounds) run in turn. */
struct wb_transfer_test_run {
    int test;
    int shifted;                /* the --pairs shift run of the map test */
    struct wb_netstat net;      /* this node's network counters when the test began */
    const struct wb_transfer_testdef *def;
    const struct wb_transfer_plan_test *plan;
    int nsizes;
    int64_t *bytes;             /* [S] */
    int *window;                /* [S] messages per window */
    int (*pairs)[2];            /* p2p: [P] */
    int npairs;
    int *orders;                /* ring: [O][nranks] */
    int norders;
    int nunits;
    int ncols;                  /* third dimension of t: P, O or nranks */
    int *iters;                 /* [S], decided at the first unit */
    int *batch;                 /* [S] pingpong round trips per repetition, decided at the first unit */
    double **samples;           /* rank 0: [S][iters[s] * ncols] */
    int sizes_done;             /* sizes complete for every unit */
    int verified;               /* 1 all matched, 0 a mismatch, -1 not checked */
    int timed_out;
};

/* Per point statistics, rank 0 (bench_transfer_stats.c): every array is [S * C] (p2p, ring, shift)
 * or [S] (collectives), except t [S, R, C]. */
struct wb_transfer_summary {
    int S, R, C;
    struct wb_result_net *net;  /* rank 0: the network counters over the test [nranks], from bench/netstat */
    int s_lat, s_bw;            /* smallest and largest size: the link maps */
    size_t med_n;
    double *t, *t_med, *t_avg, *t_min, *t_max, *t_p95, *cv, *bw;
    int8_t *unstable;
    double *lat_m, *bw_m;       /* [nranks^2] link maps (NaN without them) */
    double *node_ratio;         /* shifted run: [nnodes] concurrent over sequential bandwidth */
    int64_t *reps, *window, *batch;
    int32_t *ids;               /* pairs [P][2] or orders [O][nranks] */
};

/* bench_transfer_plan.c */
/* Probes the link, estimates every test, cuts to the budget; every rank gets the same plan.
 * WB_EUSAGE when even the smallest plan does not fit. Collective. */
int wb_transfer_plan_make(struct wb_transfer_run *r);
/* Rank 0: prints the plan (stdout for tables, stderr otherwise). Local. */
void wb_transfer_plan_print(const struct wb_transfer_run *r);
/* Columns of t for a test: pairs, orders or ranks. Local. */
int64_t wb_transfer_test_cols(const struct wb_transfer_run *r, int test);
/* Messages per window of bw and bibw at bytes. Local. */
int wb_transfer_window_at(const struct wb_transfer_opts *t, int64_t bytes);
/* Rank 0: progress on a terminal after a point; one line per finished test elsewhere. Local. */
void wb_transfer_progress(struct wb_transfer_run *r, const struct wb_transfer_test_run *tr, int test_done);
/* Rank 0: the recorded repetitions for a point after the budget's plan and the pace so far. Local. */
int wb_transfer_plan_reps(struct wb_transfer_run *r, const struct wb_transfer_test_run *tr, int s, int want);

/* bench_transfer_stats.c */
/* Rank 0: raw samples into the summary. 0 or WB_ENOMEM. Local. */
int wb_transfer_summarize(const struct wb_transfer_run *r, const struct wb_transfer_test_run *tr,
                          struct wb_transfer_summary *sm);
/* Frees the summary's arrays. */
void wb_transfer_summary_free(struct wb_transfer_summary *sm);

/* bench_transfer_write.c: the result file, from the summary and the samples. */
/* Writes /transfer/<test>/, the link maps and their attributes. Collective. */
int wb_transfer_write_test(struct wb_transfer_run *r, const struct wb_transfer_test_run *tr,
                           const struct wb_transfer_summary *sm);
/* Writes the /transfer attributes (budget, estimate, cuts, elapsed). Collective. */
int wb_transfer_write_run(struct wb_transfer_run *r);

/* bench_transfer_stats.c */
/* Median of the off-diagonal entries of m [n, n] that involve rank `who` (by_node: node `who`
 * against the others). Local. */
double wb_transfer_map_median(const double *m, int n, int who, const int *node, int by_node);

/* bench_transfer_print.c */
/* Rank 0: a comment line, on stdout for tables, on stderr for csv and json. Local. */
void wb_transfer_say(const struct wb_transfer_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Rank 0: the start and end of the csv or json document. Local. */
void wb_transfer_print_begin(struct wb_transfer_run *r);
void wb_transfer_print_end(struct wb_transfer_run *r);
/* Rank 0: one test's rows in the chosen format. Local. */
void wb_transfer_print_test(struct wb_transfer_run *r, const struct wb_transfer_test_run *tr,
                            const struct wb_transfer_summary *sm);
/* Rank 0: the link maps' summaries (--pairs all, shift). Local. */
void wb_transfer_print_pairs_all(const struct wb_transfer_run *r, const struct wb_transfer_test_run *tr,
                                 const struct wb_transfer_summary *sm);
void wb_transfer_print_shift(const struct wb_transfer_run *r, const struct wb_transfer_test_run *tr,
                             const struct wb_transfer_summary *sm, const double *node_ratio);
/* Rank 0: --list. Local. */
void wb_transfer_print_list(void);

#endif
