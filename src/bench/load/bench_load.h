/* bench_load: `wulfbench load`: concurrent clients and saturation (study rows 10-11). Its options are
 * options_load.h's; the subcommand table (cli/subcommand.c) runs it. */
#ifndef WB_BENCH_LOAD_H
#define WB_BENCH_LOAD_H

struct wb_options;
struct wb_results;

/* Run with parsed options, writing into res. Collective. 0, WB_EVERIFY when a check failed (the run
 * completed), or another error. */
int wb_bench_load_run(const struct wb_options *o, struct wb_results *res);

#endif
