/* bench: the signature every benchmark's run shares, so main can dispatch by table. Each subcommand
 * declares its own run in its folder (bench/X/bench_X.h); this header knows none of them. */
#ifndef WB_BENCH_H
#define WB_BENCH_H

struct wb_options;
struct wb_results;

/* Run one benchmark with parsed options, writing into res. Collective.
 * Returns 0, WB_EVERIFY when a check failed (the run completed), or another error. */
typedef int (*wb_bench_fn)(const struct wb_options *o, struct wb_results *res);

#endif
