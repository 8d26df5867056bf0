/* bench_dfft: `wulfbench dfft`: one transform spread over the ranks with FFTW-MPI. Its options are
 * options_dfft.h's; the subcommand table (cli/subcommand.c) runs it. */
#ifndef WB_BENCH_DFFT_H
#define WB_BENCH_DFFT_H

struct wb_options;
struct wb_results;

/* Run with parsed options, writing into res. Collective. 0, WB_EVERIFY when a check failed (the run
 * completed), or another error. */
int wb_bench_dfft_run(const struct wb_options *o, struct wb_results *res);

#endif
