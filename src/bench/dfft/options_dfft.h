/* options_dfft: the options of `wulfbench dfft`. */
#ifndef WB_OPTIONS_DFFT_H
#define WB_OPTIONS_DFFT_H

#include <stdint.h>

#include "core/optdef.h"

/* The subcommand table calls these hooks with the whole options (bench/options.h); each works on
 * this subcommand's own block, wb_dfft_opts_of(o). */
struct wb_options;

/* --direction: the forward transform always runs and is timed (it makes the backward's input);
 * backward and both time the backward too, and both also reports their mean, as heFFTe does. */
enum wb_dfft_direction { WB_DFFT_FORWARD = 0, WB_DFFT_BACKWARD = 1, WB_DFFT_BOTH = 2 };
extern const char *const wb_dfft_direction_names[];

struct wb_dfft_opts {
    int dims;                   /* --dims 1|2|3; 0 until given (then from --shape, else 1) */
    int64_t *sizes;             /* --n: points per dimension, one point per value */
    int nsizes;
    int64_t shape[3];           /* --shape NXxNYxNZ: one point of this shape (shape[0] = 0: none) */
    int kind;                   /* enum wb_fftmpi_kind; -1 until given (c2c in 1-D, r2c in 2-D and 3-D) */
    int precision;              /* enum wb_fft_precision (default double, as HPCC) */
    int transposed_out;         /* --transposed-out: skip the last transpose (2-D, 3-D) */
    int direction;              /* enum wb_dfft_direction: which transforms are timed */
    int plan;                   /* enum wb_fft_effort */
    int plan_given;             /* --plan was on the command line (else an oversubscribed run estimates) */
    const char *wisdom;         /* --wisdom FILE, shared with fft */
    int64_t max_bytes;          /* --max-memory: per node; 0 = MemAvailable */
};

/* The option table (terminated by a NULL name) and the help summary line. */
extern const struct wb_optdef wb_dfft_optdefs[];
extern const char wb_dfft_summary[];

/* Defaults before parsing. */
void wb_dfft_opts_defaults(struct wb_options *o);
/* Apply option id with argument arg (NULL for flags). 0 or WB_EUSAGE. */
int wb_dfft_opts_set(struct wb_options *o, int id, const char *arg);
/* Check the combination after parsing and fill in what was left to defaults. 0 or WB_EUSAGE. */
int wb_dfft_opts_validate(struct wb_options *o);
/* A compact run for `wulfbench suite`: 3-D r2c of 32^3 and 64^3 (any rank count up to 32 splits it). */
void wb_dfft_opts_compact(struct wb_options *o);
/* The shape of point i (0 <= i < count) into n[3]; returns the count of points. */
int wb_dfft_opts_point(const struct wb_dfft_opts *t, int i, int64_t *n);
/* Free lists. */
void wb_dfft_opts_free(struct wb_options *o);

/* This subcommand's own block of o (the struct above). */
struct wb_dfft_opts *wb_dfft_opts_of(const struct wb_options *o);

#endif
