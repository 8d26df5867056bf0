/* bench: the signature every benchmark shares, so main can dispatch by table. */
#ifndef WB_BENCH_H
#define WB_BENCH_H

struct wb_options;
struct wb_results;

/* Run one benchmark with parsed options, writing into res. Collective.
 * Returns 0, WB_EVERIFY when a check failed (the run completed), or another error. */
typedef int (*wb_bench_fn)(const struct wb_options *o, struct wb_results *res);

/* `wulfbench fft` (study rows 1-9). */
int wb_bench_fft_run(const struct wb_options *o, struct wb_results *res);

/* `wulfbench transfer`: point-to-point and collective transfer tests. */
int wb_bench_transfer_run(const struct wb_options *o, struct wb_results *res);

/* `wulfbench load`: concurrent clients and saturation (study rows 10-11). */
int wb_bench_load_run(const struct wb_options *o, struct wb_results *res);

/* `wulfbench info`: what this run can see (res is NULL: info writes no file). */
int wb_info_run(const struct wb_options *o, struct wb_results *res);

/* `wulfbench dfft`: one transform spread over the ranks with FFTW-MPI. */
int wb_bench_dfft_run(const struct wb_options *o, struct wb_results *res);

#endif
