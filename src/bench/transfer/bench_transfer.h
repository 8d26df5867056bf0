/* bench_transfer: `wulfbench transfer`: point-to-point and collective transfer tests. Its options are
 * options_transfer.h's; the subcommand table (cli/subcommand.c) runs it. */
#ifndef WB_BENCH_TRANSFER_H
#define WB_BENCH_TRANSFER_H

struct wb_options;
struct wb_results;

/* Run with parsed options, writing into res. Collective. 0, WB_EVERIFY when a check failed (the run
 * completed), or another error. */
int wb_bench_transfer_run(const struct wb_options *o, struct wb_results *res);

#endif
