/* bench_dfft_int: what the dfft benchmark's files share: the run's context, what a point measured and
 * the figures computed once from it (bench_dfft_figures.c) for the writer (bench_dfft_write.c) and the
 * printer (bench_dfft_print.c); the known input and its checks (bench_dfft_data.c). */
#ifndef WB_BENCH_DFFT_INT_H
#define WB_BENCH_DFFT_INT_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "fftw/fft_mpi.h"
#include "io/results.h"

struct wb_options;
struct wb_dfft_opts;

struct wb_dfft_ctx {
    const struct wb_options *o;
    const struct wb_dfft_opts *d;
    struct wb_results *res;
    int rank, nranks, npts;
    MPI_Comm comm;
    int plan;                   /* enum wb_fft_effort this run plans with (choose_plan) */
    char plan_why[320];         /* rank 0: why it is not --plan's, "" when it is */
    const char *dump_dir;       /* test builds: WB_FAULT=dfft-dump writes input and output here */
    int corrupt;                /* test builds: WB_FAULT=dfft-corrupt spoils one bin */
};

/* One direction's times on this rank. */
struct wb_dfft_times {
    double *t_total, *t_local, *t_transpose;   /* [reps] on this rank */
    double *t_exchange;                         /* [reps] on this rank: inside the transposes' MPI calls */
    int64_t bytes_exchanged;                    /* this rank's bytes sent in those calls, as MPI counted them */
};

/* What one point measured: dir[0] the forward transform, dir[1] the backward (--direction backward,
 * both); the checks; on rank 0 the network counters [nranks] and the energy. */
struct wb_dfft_measured {
    struct wb_dfft_times dir[2];
    int ndir;
    double spectrum_rel, roundtrip_rel, tol;
    int passed;
    struct wb_result_net *net;
    struct wb_result_energy energy;
};

/* One direction's figures, agreed over ranks (the mean row: of both directions). */
struct wb_dfft_dirfig {
    double med_total, med_local, med_transpose; /* medians over reps of the slowest rank */
    double gflops, transpose_Bps_min;
    double transpose_share;                     /* med_transpose / med_total */
    double transpose_Bps;                       /* this rank's bytes_transposed over its median t_transpose */
    double exchange_Bps;                        /* the exchange's own rate */
    int64_t bytes_transposed;                   /* this rank's bytes sent to other ranks in this direction */
};

/* Every figure of a point, computed once; the writer stores them and the printer prints them. */
struct wb_dfft_figures {
    struct wb_dfft_dirfig dir[2], mean;
    double flops;
    double gflops_mean;     /* flops over the mean of the two directions' median times, as heFFTe's speed3d */
    double ceiling_Bps;     /* root: what a rank's transpose cannot pass (core/ceiling.h); NaN unknown */
    double rate_top_Bps;    /* the larger of the directions' transpose_Bps_min, set against the ceiling */
    char shape[96];         /* "n0xn1xn2" */
};

/* Every figure of the point m measured with layout l. Collective. 0, WB_ENOMEM or WB_EMPI. */
int wb_dfft_figures_compute(const struct wb_dfft_ctx *c, const struct wb_fftmpi_layout *l,
                            const struct wb_dfft_measured *m, struct wb_dfft_figures *fg);
/* "n0xn1xn2" of a layout into out. Local. */
void wb_dfft_shape_str(const struct wb_fftmpi_layout *l, char *out, size_t cap);

/* /dfft/pNNN as docs/schema.md lists it, then flushed. Collective. */
int wb_dfft_write_point(const struct wb_dfft_ctx *c, int point, const struct wb_fftmpi_layout *l,
                        const struct wb_dfft_measured *m, const struct wb_dfft_figures *fg);

/* Rank 0 prints: the run's header; a point's rows and the ceiling line under them. */
void wb_dfft_print_header(const struct wb_dfft_ctx *c);
void wb_dfft_print_point(const struct wb_dfft_ctx *c, int point, const struct wb_fftmpi_layout *l,
                         const struct wb_dfft_measured *m, const struct wb_dfft_figures *fg);

/* The names of enum values, for the file and stdout. */
extern const char *const wb_dfft_kind_names[], *const wb_dfft_precision_names[], *const wb_dfft_plan_names[];

/* Bytes of this rank's input (the part of a buffer the input occupies, padding included). */
int64_t wb_dfft_input_bytes(const struct wb_fftmpi_layout *l);

/* Fill buf (the layout's input) with the known input: a sum of a few complex exponentials (their
 * real part for r2c) at bins the check knows; random 1: a reproducible pseudo-random input instead,
 * the same for any rank count, which has no known spectrum. Local. 0 or WB_ENOMEM. */
int wb_dfft_fill(const struct wb_fftmpi_layout *l, void *buf, int random);

/* Largest |X - expected| over this rank's output bins, relative to N (the tones' amplitude is 1 at most).
 * Local: reduce it over ranks. */
double wb_dfft_spectrum_error(const struct wb_fftmpi_layout *l, const void *out);

/* Largest |y / N - x| over this rank's input points, relative to max |x| (x_max, over all ranks). Local. */
double wb_dfft_roundtrip_error(const struct wb_fftmpi_layout *l, const void *y, const void *x, double x_max);

/* Largest |x| over this rank's input points. Local. */
double wb_dfft_input_max(const struct wb_fftmpi_layout *l, const void *x);

/* Test builds: add a wrong value to one output bin, so the spectrum check must fail. Local. */
void wb_dfft_corrupt(const struct wb_fftmpi_layout *l, void *out);

/* Test builds: write this rank's input points and output bins to DIR/pNNN.{in,out,meta}.RANK for a
 * reference transform outside. Local. 0 or WB_EIO. */
int wb_dfft_dump(const char *dir, int point, int rank, const struct wb_fftmpi_layout *l, const void *in,
                 const void *out);

#endif
