/* check: `wulfbench check`, whether every node is ready for a run: versions, CPU governor and
 * throttling, memory, clock offset, the network path to rank 0, a short exchange between all pairs,
 * and rank 0's result folder. Rank 0 prints one row per node and one verdict per fact. */
#ifndef WB_CHECK_H
#define WB_CHECK_H

#include <stdint.h>

#include "optdef.h"

struct wb_options;
struct wb_results;

struct wb_check_opts {
    int strict;                 /* --strict: a warning fails too */
    int64_t need_bytes;         /* --memory: bytes the run needs on each node, 0 = the default run's */
    const char *wisdom;         /* --wisdom FILE to be read by the run */
    const char *results_dir;    /* --results DIR the run will write into (may not exist yet) */
};

extern const struct wb_optdef wb_check_optdefs[];
extern const char wb_check_summary[];

/* The option hooks of the subcommand table; local, never exit. */
void wb_check_defaults(struct wb_options *o);
int wb_check_set(struct wb_options *o, int id, const char *arg);
int wb_check_validate(struct wb_options *o);

/* `wulfbench check` (res is NULL: check writes no file). Point-to-point with deadlines, so a rank that
 * never answers is named after --timeout instead of hanging the job: rank 0 then prints what it
 * knows and stops every rank with exit status 1. Otherwise 0, or WB_EINPUT when a fact failed (or,
 * with --strict, warned). */
int wb_check_run(const struct wb_options *o, struct wb_results *res);

#endif
