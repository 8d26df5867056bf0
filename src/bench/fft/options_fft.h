/* options_fft: the options of `wulfbench fft`. */
#ifndef WB_OPTIONS_FFT_H
#define WB_OPTIONS_FFT_H

#include <stdint.h>

#include "core/optdef.h"

/* The subcommand table calls these hooks with the whole options (bench/options.h); each works on
 * this subcommand's own block, wb_fft_opts_of(o). */
struct wb_options;

enum wb_sweep { WB_SWEEP_BOTH, WB_SWEEP_SIZES, WB_SWEEP_FILES, WB_SWEEP_NONE };
enum wb_fft_mode { WB_MODE_STFT, WB_MODE_WHOLE };
/* pipelined: blocks in chunks, phases overlapped; phased: MPI_Scatterv, compute, MPI_Gatherv in turn. */
enum wb_schedule { WB_SCHED_PIPELINED, WB_SCHED_PHASED, WB_SCHED_DYNAMIC };
enum wb_bad_input { WB_BAD_FAIL, WB_BAD_SKIP };
/* --input-cache: keep what the page cache holds of the inputs, or drop it before each timed read. */
enum wb_input_cache { WB_INPUT_CACHE_KEEP, WB_INPUT_CACHE_DROP };
/* Names of the values above, as options and result files spell them; NULL-terminated. */
extern const char *const wb_sweep_names[];
extern const char *const wb_fft_mode_names[];
extern const char *const wb_schedule_names[];
extern const char *const wb_bad_input_names[];
extern const char *const wb_input_cache_names[];

struct wb_fft_opts {
    const char **inputs;        /* --input, repeatable: files or folders */
    int ninputs;
    int on_bad_input;           /* enum wb_bad_input */
    int input_cache;            /* enum wb_input_cache */
    int sweep;                  /* enum wb_sweep; default both, or none with --input */
    int sweep_given;
    double *seconds;            /* --seconds: durations of the sizes sweep */
    int nseconds;
    int64_t *files;             /* --files: file counts of the files sweep */
    int nfiles;
    double file_seconds;        /* --file-seconds: length of each file in the files sweep */
    int32_t sample_rate_hz;     /* --sample-rate: of synthetic audio */
    int mode;                   /* enum wb_fft_mode */
    int64_t frame;              /* --frame: samples per STFT frame */
    int64_t hop;                /* --hop: samples between frames; 0 = frame/2 */
    int window;                 /* enum wb_fft_window */
    int schedule;               /* enum wb_schedule */
    int64_t chunk;              /* --chunk: frames (whole mode: files) per chunk; 0 = chosen from the link */
    double link_rate_Bps;       /* --link-rate: the head node's line rate; NaN = unknown */
    int root_computes;          /* --root-computes yes|no */
    int local_shm;              /* --local shm|mpi: ranks on the head node map its buffers, or get messages */
    int wire_native;            /* --wire native: samples travel in the transform's precision even from 16-bit PCM */
    int result;                 /* enum wb_fft_result */
    int baseline;               /* --baseline: one process, no messaging */
    int paired_baseline;        /* --paired-baseline: rank 0 alone runs each request too, alternating; -1 where ranks > 1 */
    double target_ci;           /* --target-ci: --reps auto stops at this relative 95% CI half-width */
    int min_reps, max_reps;     /* --min-reps, --max-reps: bounds of --reps auto */
    double point_budget_s;      /* --point-budget: --reps auto stops a point after this long */
    int precision;              /* enum wb_fft_precision */
    int plan;                   /* enum wb_fft_effort */
    const char *wisdom;         /* --wisdom FILE */
    int64_t max_bytes;          /* --max-memory: refuse a point needing more on the root; 0 = from MemAvailable */
};

/* The option table (terminated by a NULL name) and the help summary line. */
extern const struct wb_optdef wb_fft_optdefs[];
extern const char wb_fft_summary[];

/* Defaults before parsing. */
void wb_fft_opts_defaults(struct wb_options *o);
/* Apply option id with argument arg (NULL for flags). 0 or WB_EUSAGE. */
int wb_fft_opts_set(struct wb_options *o, int id, const char *arg);
/* Check the combination after parsing. 0 or WB_EUSAGE. */
int wb_fft_opts_validate(struct wb_options *o);
/* A compact run for `wulfbench suite`. */
void wb_fft_opts_compact(struct wb_options *o);
/* Peak resident bytes of rank 0 for a point of nfiles files of seconds each: the request buffer,
 * the results, one file being decoded, and the program. */
int64_t wb_fft_opts_point_bytes(const struct wb_fft_opts *t, int nfiles, double seconds);
/* wb_fft_opts_point_bytes of the largest point of the sweeps (0 for --sweep none), for the memory guard. */
int64_t wb_fft_opts_peak_bytes(const struct wb_fft_opts *t);
/* Free lists. */
void wb_fft_opts_free(struct wb_options *o);

/* Rank 0's bytes for the largest point of the default study (60 s files, 64 files of
 * --file-seconds), for `check` through the table. */
double wb_fft_opts_study_bytes(const struct wb_options *o);
/* --baseline, for the run's record. */
int wb_fft_opts_baseline(const struct wb_options *o);
/* This subcommand's own block of o (the struct above). */
struct wb_fft_opts *wb_fft_opts_of(const struct wb_options *o);

#endif
