/* bench_fft: `wulfbench fft` (study rows 1-9): one request of audio files spread over the ranks, timed per phase and rank. Its options are
 * options_fft.h's; the subcommand table (cli/subcommand.c) runs it. */
#ifndef WB_BENCH_FFT_H
#define WB_BENCH_FFT_H

struct wb_options;
struct wb_results;

/* Run with parsed options, writing into res. Collective. 0, WB_EVERIFY when a check failed (the run
 * completed), or another error. */
int wb_bench_fft_run(const struct wb_options *o, struct wb_results *res);

#endif
