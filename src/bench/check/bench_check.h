/* bench_check: `wulfbench check`, whether every node is ready for a run: versions, CPU governor and
 * throttling, memory, clock offset, the network path to rank 0, a short exchange between all pairs,
 * and rank 0's result folder. Rank 0 prints one row per node and one verdict per fact. */
#ifndef WB_BENCH_CHECK_H
#define WB_BENCH_CHECK_H

struct wb_options;
struct wb_results;

/* `wulfbench check` (res is NULL: check writes no file). Point-to-point with deadlines, so a rank that
 * never answers is named after --timeout instead of hanging the job: rank 0 then prints what it
 * knows and stops every rank with exit status 1. Otherwise 0, or WB_EINPUT when a fact failed (or,
 * with --strict, warned). */
int wb_bench_check_run(const struct wb_options *o, struct wb_results *res);

#endif
