/* bench_fft_int: what the parts of `wulfbench fft` share: the work layout, requests, the run context,
 * the schedules, verification and writing. Not for other modules. */
#ifndef WB_BENCH_FFT_INT_H
#define WB_BENCH_FFT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "core/stats.h"
#include "io/results.h"
#include "par/comm.h"

struct wb_options;
struct wb_fft_opts;
struct wb_results;
struct wb_result_input;
struct wb_audio;
struct wb_fft_kernel;

enum { WB_FFTB_TAG_CHUNK = 101, WB_FFTB_TAG_DATA, WB_FFTB_TAG_RESULT };

/* One transform: where its samples start in the request buffer, how long it is, where its result goes. */
struct wb_fftb_unit {
    int32_t file;
    int64_t off;
    int64_t n;
    int64_t res_off;
    int64_t res_bytes;
};

/* The work of one point, the same on every rank (built from the file lengths). */
struct wb_fftb_layout {
    int nfiles;
    int64_t nunits;
    struct wb_fftb_unit *units;
    int64_t res_total;
};

/* One request: its files, back to back in one buffer of samples in the transform's precision.
 * Ranks compute straight from (a copy of) this buffer, so nothing is packed before sending. */
struct wb_fftb_request {
    int nfiles;
    int64_t *file_samples;        /* every rank */
    int64_t *file_off;            /* every rank: where each file starts in buf */
    int64_t total_samples;
    char *buf;                    /* root, and ranks that map it (--local shm) */
    struct wb_result_input *rows; /* root only */
    int64_t audio_bytes;
    double io_s;                  /* root: of the last read, the seconds spent getting the files' bytes */
};

/* A point of the sweep: which files, and how long. */
struct wb_fftb_point {
    const char *scenario;
    int nfiles;
    double seconds;               /* per file; 0 = as the inputs are */
};

/* Transforms of each length this rank has needed, kept across points and repetitions. */
#define WB_FFTB_NKERNELS 64
struct wb_fftb_kernels {
    int count;
    struct wb_fft_kernel *k[WB_FFTB_NKERNELS];
    int64_t n[WB_FFTB_NKERNELS];
};

/* One event of a rank's timeline: chunk's samples arriving, its transforms, its results leaving. */
enum { WB_FFTB_EV_RECV, WB_FFTB_EV_COMPUTE, WB_FFTB_EV_SEND };
struct wb_fftb_event {
    int32_t chunk;
    int32_t phase;                /* WB_FFTB_EV_* */
    double t_start_s, t_end_s;    /* from this repetition's start barrier, on this rank's clock */
};

/* What the schedules keep between a repetition and the next step: the chunk size, the clocks that give
 * t_gather, the timeline of the last repetition, and the root's results for the test dump. */
struct wb_fftb_pipe {
    int64_t chunk;                /* units per chunk this point uses (pipelined, dynamic) */
    double t0_s;                  /* this repetition's start, wb_timer_now_s */
    double t_ready_s;             /* end of this rank's last transform (or of its distribution), from t0_s */
    double *t_held_s;             /* root [nranks]: when it held rank q's last result, from t0_s */
    struct wb_fftb_event *ev;     /* this rank's events of the last repetition */
    int nev, ev_cap;
    const char *res;              /* root: the results of the last repetition */
    int64_t res_bytes;
};

struct wb_fftb_ctx {
    const struct wb_options *o;
    const struct wb_fft_opts *f;
    struct wb_results *res;
    int rank, nranks;
    int baseline;                 /* --baseline: one rank, no messaging inside the timed region */
    int paired;                   /* --paired-baseline: rank 0 also runs each request alone */
    int first_compute;            /* ranks first_compute..nranks-1 compute */
    int input;                    /* enum wb_fft_input: how samples are stored and sent */
    size_t sb;                    /* bytes per stored sample */
    char **files;                 /* root: the usable input files */
    int nfiles_in;
    struct wb_fftb_kernels kern;
    int64_t batch;                /* frames per kernel block the last STFT kernel planned here chose */
    double t_start_s;
    double align_s;               /* wb_timer_now_s + align_s: the realtime clock, from rank 0's start */
    double fft_on_s, fft_off_s;   /* this repetition's first transform's start, last one's end (now_s) */
    struct wb_comm_shm_group shm; /* --local shm: who maps the root's buffers */
    int use_shm;                  /* ranks on the root's node map its buffers */
    int *done_flags;              /* root: one per rank, for the end-of-gather handshake */
    double flops;                 /* transform work compute_units has done since it was last zeroed */
    const char *in_base;          /* this rank's samples in the last repetition, from offset in_base_off */
    int64_t in_base_off;
    struct wb_fftb_pipe pipe;     /* the schedules' per-repetition state: chunk, clocks, timeline */
};

/* Seconds of one repetition on this rank. */
struct wb_fftb_timing {
    double t_read_s, t_dist_s, t_comp_s, t_fft_s, t_gather_s, t_total_s;
    /* Rank 0: of t_read, the time spent getting the input files' bytes (open, read); the rest decodes. */
    double t_read_io_s;
    /* This rank's part of the repetition (rank 0: the window of t_total; the others: from the start
     * barrier to the end of their schedule): its wall time, and the CPU time its thread ran in it. */
    double t_wall_s, t_cpu_s;
    /* Rank 0: the repetition's time outside t_read and its window: the agreements, the start barrier
     * and the clocks' exchange. Milliseconds on a healthy cluster; seconds when a rank or a link
     * stalled between windows, which the window's times cannot show. */
    double t_sync_s;
    /* This rank's first transform's start and its last one's end on the aligned clock (realtime from
     * rank 0's start), NaN when it transformed nothing: the aggregate rate's span. */
    double t_fft_on_s, t_fft_off_s;
};

/* The outcome of checking a point's last repetition. */
struct wb_fftb_verdict {
    int passed;
    double max_error, parseval, roundtrip, crosscheck, dft, tone_err;
    int tones_expected, tones_found;
    uint64_t digest;              /* test builds: FNV-1a of every result byte, to compare runs */
    char check[256];
};

/* How a point's recorded repetitions ended. */
struct wb_fftb_repinfo {
    int autom;                       /* --reps auto */
    int stop;                        /* index into wb_fftb_stop_names */
    double ci_halfwidth_rel;         /* 95% CI half-width of the median t_total, over the median (root) */
    double alone_match;              /* --paired-baseline: largest relative difference of rank 0's own
                                      * results from the cluster's (root) */
};

/* Why a point stopped repeating: a fixed count, the CI target, --max-reps, --point-budget. */
enum { WB_FFTB_STOP_FIXED, WB_FFTB_STOP_TARGET_CI, WB_FFTB_STOP_MAX_REPS, WB_FFTB_STOP_BUDGET };
extern const char *const wb_fftb_stop_names[];

/* What this rank measured over one point's recorded repetitions. */
struct wb_fftb_measured {
    int reps;
    const struct wb_fftb_timing *tm; /* [reps] */
    const struct wb_fftb_timing *alone; /* [reps] on rank 0 with --paired-baseline, else NULL */
    struct wb_fftb_repinfo info;
    int64_t units;                   /* transforms this rank did in the last repetition */
    int64_t bytes_in, bytes_out;     /* samples it received, results it sent */
    double flops;
    double t_plan_s;                 /* this rank's FFTW planning for the point (0 when reused) */
    double input_resident_max;       /* rank 0, --input-cache drop: the largest share of an input file's
                                      * pages still cached after a drop; NaN with keep */
    /* Rank 0, from the driver: the request's mean file length, the memory model's figure for the
     * point, and the health/nodes rows (NULL elsewhere). */
    double seconds_per_file;
    int64_t root_bytes_estimate;
    const struct wb_result_health *health;
    size_t nhealth;
    /* From bench/netstat and bench/power, gathered on rank 0: the network counters [nranks] (NULL
     * when not kept) and the energy of the point's and the baseline's repetitions. */
    const struct wb_result_net *net;
    struct wb_result_energy energy, energy_alone;
};

/* bench_fft_layout.c: units, blocks and regions; all local and pure. */

/* STFT frames of frame samples, hop apart, that fit in samples. */
int64_t wb_fftb_frames_in(int64_t samples, int64_t frame, int64_t hop);
/* The units of files laid out back to back (file_samples[nfiles], file_off[nfiles]) under f's mode.
 * 0 or WB_ENOMEM. Free with wb_fftb_layout_free. */
int wb_fftb_layout_build(struct wb_fftb_layout *l, const struct wb_fft_opts *f, int nfiles,
                         const int64_t *file_samples, const int64_t *file_off);
void wb_fftb_layout_free(struct wb_fftb_layout *l);
/* First sample that units [u0, ...) read, and one past the last sample units [..., u1) read. */
int64_t wb_fftb_region_start(const struct wb_fftb_layout *l, int64_t u0);
int64_t wb_fftb_region_end(const struct wb_fftb_layout *l, int64_t u1);
/* Bytes of results that units [u0, u1) produce. */
int64_t wb_fftb_result_span(const struct wb_fftb_layout *l, int64_t u0, int64_t u1);
/* Units [*u0, *u1) of rank q under the static schedule: contiguous blocks as even as possible over
 * ranks first_compute..nranks-1; empty for the ranks before. */
void wb_fftb_block(int64_t nunits, int nranks, int first_compute, int q, int64_t *u0, int64_t *u1);
/* Rank q's samples under the static schedule: [*start, *end), of which [*start, *main_end) come by
 * MPI_Scatterv and the rest (frames overlapping the next rank's block, the halo) by a message of
 * its own. total_samples is the request's length. */
void wb_fftb_region(const struct wb_fftb_layout *l, int64_t total_samples, int nranks, int first_compute, int q,
                    int64_t *start, int64_t *main_end, int64_t *end);

/* bench_fft_input.c: requests, synthetic audio, reading and the input list. */

/* Root: list the inputs and decode each once, keeping the good ones (or failing on the first bad one). */
int wb_fftb_load_inputs(struct wb_fftb_ctx *c);
/* Root, --input-cache drop: the request's input files dropped from the page cache; the largest share of
 * a file's pages that stayed. Local. */
double wb_fftb_drop_inputs(struct wb_fftb_ctx *c, const struct wb_fftb_point *p);
/* Root: read and decode the files of one request into rq->buf (rq->io_s: the time the files' bytes
 * took to come in). The first read (probe) only learns the lengths and the table of inputs; later
 * reads must find the same lengths. Synthetic audio has nothing to read (io_s 0):
 * wb_fftb_make_synthetic puts it in rq->buf once per point. */
int wb_fftb_read_request(struct wb_fftb_ctx *c, const struct wb_fftb_point *p, struct wb_fftb_request *rq,
                         int probe);
/* Root: generate a point's synthetic files straight into rq->buf, in the wire format, one file at a
 * time (the same seed gives the same samples). Nothing to do for WAV input. */
int wb_fftb_make_synthetic(struct wb_fftb_ctx *c, const struct wb_fftb_point *p, struct wb_fftb_request *rq);
/* Collective: share the file lengths of a request from the root, so every rank builds the same layout. */
int wb_fftb_share_lengths(struct wb_fftb_ctx *c, struct wb_fftb_request *rq, int nfiles);
void wb_fftb_request_free(struct wb_fftb_request *rq);
/* Root: free the input list. */
void wb_fftb_inputs_free(struct wb_fftb_ctx *c);
/* Collective: a buffer of bytes on rank 0 (others pass the same value), mapped by the ranks of its
 * node with --local shm. 0 or an error, agreed on every rank. */
int wb_fftb_rootbuf_alloc(struct wb_fftb_ctx *c, struct wb_comm_shm *b, int64_t bytes);
/* Collective when mapped, else local. */
void wb_fftb_rootbuf_free(struct wb_comm_shm *b);

/* bench_fft_compute.c: the transforms this rank runs. */

/* The kernel for length n, made once and kept; STFT kernels take their batch from the CPU's caches
 * (test builds: WB_FFT_BATCH=N forces it). Local. */
int wb_fftb_kernel_for(struct wb_fftb_ctx *c, int64_t n, struct wb_fft_kernel **out);
/* Transform units [u0, u1); base holds the samples from absolute offset base_off on; results go to dst. */
int wb_fftb_compute_units(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, int64_t u0, int64_t u1,
                          const char *base, int64_t base_off, char *dst, double *t_fft_s);
void wb_fftb_kernels_free(struct wb_fftb_ctx *c);

/* bench_fft_sched.c: the schedule table, and the phased and dynamic schedules. */

/* One request under a schedule: samples from rq (in inb when mapped) to the ranks, results into resb.
 * Collective; fills t (this rank's seconds) and m's counts. Every schedule has this signature. */
typedef int (*wb_fftb_schedule_fn)(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l,
                                   const struct wb_fftb_request *rq, const struct wb_comm_shm *inb,
                                   const struct wb_comm_shm *resb, char **inbuf, int64_t *inbuf_cap,
                                   struct wb_fftb_timing *t, struct wb_fftb_measured *m);
/* The schedule --schedule names (phased for --baseline), from the name->function table; NULL if the
 * table lacks it. Local. */
wb_fftb_schedule_fn wb_fftb_schedule(const struct wb_fftb_ctx *c);
/* MPI_Scatterv, compute, MPI_Gatherv, one after the other (and --baseline, without messages). */
int wb_fftb_run_phased(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const struct wb_fftb_request *rq,
                       const struct wb_comm_shm *inb, const struct wb_comm_shm *resb, char **inbuf,
                       int64_t *inbuf_cap, struct wb_fftb_timing *t, struct wb_fftb_measured *m);
/* Chunks on demand, two in flight per worker; inb is not used. */
int wb_fftb_run_dynamic(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const struct wb_fftb_request *rq,
                        const struct wb_comm_shm *inb, const struct wb_comm_shm *resb, char **inbuf,
                        int64_t *inbuf_cap, struct wb_fftb_timing *t, struct wb_fftb_measured *m);

/* bench_fft_pipe.c: the pipelined schedule. */

/* Collective: blocks as in phased, each sent in chunks by MPI_Isend; ranks transform chunk k while
 * later chunks arrive and send its results at once; the root takes results in while it computes. */
int wb_fftb_run_pipelined(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const struct wb_fftb_request *rq,
                          const struct wb_comm_shm *inb, const struct wb_comm_shm *resb, char **inbuf,
                          int64_t *inbuf_cap, struct wb_fftb_timing *t, struct wb_fftb_measured *m);

/* bench_fft_clock.c: every schedule's repetition clock: chunk size, timeline events, t_gather. */

/* Units per chunk of pipelined (after its ramp of 1, 2, 4, ... units) and dynamic for layout l: --chunk,
 * or about 2 ms of the link, each message of samples or results at most 64 KiB (--link-rate,
 * else 100 Mbit/s) with at least 4 chunks per rank. WB_EUSAGE when --chunk exceeds a rank's block. Local,
 * the same on every rank. */
int wb_fftb_chunk_choose(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, int64_t *chunk);
/* Local: start a repetition's clock and timeline. */
int wb_fftb_clock_start(struct wb_fftb_ctx *c);
/* Local: note an event from absolute times a to b (wb_timer_now_s); the first events only, when many. */
void wb_fftb_clock_event(struct wb_fftb_ctx *c, int64_t chunk, int phase, double a, double b);
/* Collective, after t_total is taken: t_gather of every rank, from its last transform until the root
 * held its last result (the root tells each rank when). */
int wb_fftb_clock_finish(struct wb_fftb_ctx *c, struct wb_fftb_timing *t);
/* Local: free the clock's timeline and result times. */
void wb_fftb_clock_free(struct wb_fftb_ctx *c);

/* bench_fft_compute.c (with the kernel cache): rank 0 plans every length of l first and shares its
 * wisdom, so every rank runs the same plan for a length (FFTW_MEASURE may choose differently per
 * rank). Collective. */
int wb_fftb_share_plans(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l);
/* bench_fft_input.c (with the root buffers): this rank's input buffer, grown to at least nbytes and
 * kept across repetitions. Local. */
int wb_fftb_ensure_buf(char **buf, int64_t *cap, int64_t nbytes);

/* bench_fft_verify.c: checks the last repetition of a point: Parseval and round trip on every
 * computing rank (static) or the root (dynamic), the cross-check and the known tones on the root.
 * Collective; v->passed is the same on every rank. */
int wb_fftb_verify_point(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const struct wb_fftb_request *rq,
                         const char *results, struct wb_fftb_verdict *v);

/* Root: the largest relative difference between two result buffers of layout l, unit by unit. */
double wb_fftb_results_diff(const struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const char *a, const char *b);

/* bench_fft_figures.c: every figure of one point, computed once; the writer stores them and the
 * printer prints them. Arrays are [reps]; "every rank" where every rank holds them, else the root's
 * are the ones that count (t_total is the root's). */
struct wb_fftb_figures {
    int id;
    const char *scenario;
    int nfiles;
    double seconds;               /* mean length of the request's files (root) */
    int64_t audio_bytes;          /* root */
    int reps;
    int64_t sent_bytes;           /* every rank: samples sent to the ranks, summed */
    int64_t batch;                /* every rank: the largest STFT batch any rank chose */
    int64_t *slowest_rank;        /* every rank: the rank with the largest t_distribute + t_compute +
                                   * t_gather in each repetition, the lowest on a tie */
    double *slow_s;               /* every rank, [3][reps]: that rank's distribute, compute, gather */
    double *over_s;               /* t_total minus that rank's three phases: negative only when they overlap */
    double *overlap;              /* that rank's three phases over t_total */
    double med_slow_s[3], med_over_s, med_overlap; /* their medians over repetitions */
    double med_total_s, med_read_s;
    double med_fft_s;             /* every rank: median of the longest rank's t_fft */
    double total_flops;           /* every rank: the sum of every rank's flops */
    double kbps;                  /* audio_bytes / 1000 / med_total_s */
    double *span_s;               /* every rank [reps]: the first transform's start to the last one's end
                                   * over every rank, on the aligned clocks */
    double med_span_s;
    double gflops;                /* total_flops / med_span_s / 1e9 */
    double core_gflops;           /* the best rank's own rate: one core's worth of this kernel */
    int cores_used;               /* root: per machine, the computing ranks up to its usable cores */
    double gflops_ceiling;        /* root: cores_used * core_gflops */
    double kbps_ceiling;          /* root: audio at gflops_ceiling, cut to the link's bound */
    int above;                    /* root: even the slowest repetition's GFLOPS passes gflops_ceiling */
    int kbps_above;               /* root: the same for kB/s against kbps_ceiling */
    double rank_kbps;             /* this rank's share of the audio over its median busy time */
    double *rates;                /* root [nranks]: every rank's rank_kbps */
    double *cpu_share;            /* this rank's CPU time over its wall time */
    double *alone_cpu_share;      /* the same for rank 0's paired runs alone (NaN without them) */
    int64_t link_out_bytes, link_in_bytes; /* root: bytes of one request across the head node's link */
    double link_rate_Bps, link_bound_s, link_use;
    int32_t link_mtu;             /* root: MTU of the head node's link (wb_results_link_mtu), -1 unknown */
    double link_framing;          /* root: Ethernet bytes on the wire per TCP payload byte at that MTU */
    double link_wire_bound_s, link_wire_use; /* root: link_bound_s x link_framing, and it over t_total */
    int paired;                   /* root, --paired-baseline: the next two are set */
    double alone_med_s;           /* rank 0 alone, median t_total */
    struct wb_stats speedup;      /* the pairs' speedups */
    int passed;
    char *plan_text;              /* root: FFTW's plan of each transform length, "n=N: PLAN" lines */
};
/* Bytes on an Ethernet wire per byte of TCP payload in full frames of an mtu-byte MTU (headers,
 * preamble, FCS and gap: (mtu + 38) / (mtu - 52), 1.062 at 1500); NaN when mtu is unknown. Pure. */
double wb_fftb_framing(int32_t mtu);
/* Collective: fg from what this rank measured (m) and the verdict; free with wb_fftb_figures_free
 * (also after an error). 0 or an error, agreed on every rank. */
int wb_fftb_figures_compute(struct wb_fftb_figures *fg, const struct wb_fftb_ctx *c, int id,
                            const struct wb_fftb_point *p, const struct wb_fftb_layout *l,
                            const struct wb_fftb_request *rq, const struct wb_fftb_measured *m,
                            const struct wb_fftb_verdict *v);
void wb_fftb_figures_free(struct wb_fftb_figures *fg);

/* bench_fft_write.c: the point's whole group in the result file: what m and v hold as measured, and
 * fg's figures; flushed. Collective. */
int wb_fftb_write_point(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, const struct wb_fftb_request *rq,
                        const struct wb_fftb_measured *m, const struct wb_fftb_verdict *v,
                        const struct wb_fftb_figures *fg);

/* bench_fft_print.c: the table on stdout; rank 0 prints fg's figures. */

/* The point's row, the paired-baseline line, the per-rank rates, and the link line under it. */
void wb_fftb_print_row(const struct wb_fftb_ctx *c, const struct wb_fftb_figures *fg);
/* The table header. */
void wb_fftb_print_header(const struct wb_fftb_ctx *c);

#endif
