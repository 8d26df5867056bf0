/* results: the only module that includes hdf5.h; the result file, written as the run goes. */
#ifndef WB_RESULTS_H
#define WB_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "sysinfo.h"

/* Every wb_results_* call is collective: all ranks call it in the same order
 * with the same names. Rank 0 writes the file (the nodes of a Pi cluster rarely
 * share a file system); values passed on other ranks are ignored unless the
 * call says "per rank". Write errors surface on rank 0 and are agreed on all
 * ranks at wb_results_flush and wb_results_close. */
struct wb_results;

struct wb_run_info {
    const char *subcommand;   /* fft, transfer, load, suite */
    const char *label;
    const char *command_line;
    uint64_t seed;
    int baseline;             /* 1 for a one-process reference run */
    const char *fftw_version; /* from the fft module, which owns fftw3.h */
};

/* Create PATH.partial (PATH is decided on rank 0; NULL = results/wulfbench-<host>-<UTC>.h5),
 * refuse an existing PATH unless force, write the root attributes and /hosts. */
int wb_results_open(struct wb_results **out, const char *path, int force, const struct wb_run_info *info);

/* The final path of the file (rank 0; "" elsewhere). */
const char *wb_results_path(const struct wb_results *r);

/* Create a group and any missing parents, e.g. "/fft/p000". */
int wb_results_group(struct wb_results *r, const char *group);

/* Attributes on an existing group or dataset (obj, e.g. "/fft/p000" or "/"). */
int wb_results_attr_str(struct wb_results *r, const char *obj, const char *name, const char *value);
int wb_results_attr_i64(struct wb_results *r, const char *obj, const char *name, int64_t value);
int wb_results_attr_f64(struct wb_results *r, const char *obj, const char *name, double value);

/* Datasets from rank 0's data: rank is 1..3, dims[rank], row-major; units e.g. "s", "bytes". */
int wb_results_write_f64(struct wb_results *r, const char *dset, int rank, const uint64_t *dims,
                         const double *data, const char *units);
int wb_results_write_i64(struct wb_results *r, const char *dset, int rank, const uint64_t *dims,
                         const int64_t *data, const char *units);
int wb_results_write_i32(struct wb_results *r, const char *dset, int rank, const uint64_t *dims,
                         const int32_t *data, const char *units);

/* Per rank: each rank gives n values; the dataset is [n, nranks] (n > 1) or [nranks] (n == 1),
 * column = rank. */
int wb_results_write_per_rank_f64(struct wb_results *r, const char *dset, const double *local, size_t n,
                                  const char *units);
int wb_results_write_per_rank_i64(struct wb_results *r, const char *dset, const int64_t *local, size_t n,
                                  const char *units);

/* An enum dataset of n uint8 values from rank 0 with the given names for 0..nnames-1. */
int wb_results_write_enum(struct wb_results *r, const char *dset, size_t n, const uint8_t *data,
                          const char *const *names, int nnames);

/* The per-file input table of an fft point (rank 0's rows). */
struct wb_result_input {
    char name[256];
    int32_t sample_rate;
    int32_t channels;
    int32_t bits;
    int64_t samples;
    int64_t bytes;
    double peak_hz;
};
int wb_results_write_inputs(struct wb_results *r, const char *dset, const struct wb_result_input *rows,
                            size_t n);

/* One row of GROUP/health/nodes: a node's readings over one point. */
struct wb_result_health {
    int32_t node;
    char hostname[64];
    double temp_c_max;   /* NaN unknown */
    int32_t throttled;   /* 1, 0, -1 unknown */
    double cpu_mhz_min;  /* NaN unknown */
};

/* A health table of n nodes (rows are read on rank 0 only). */
int wb_results_write_health(struct wb_results *r, const char *dset, const struct wb_result_health *rows, size_t n);

/* Flush the file to disk and agree on any write error on all ranks. */
int wb_results_flush(struct wb_results *r);

/* The HDF5 library this was built with, from its header, e.g. "1.10.8". Local. */
const char *wb_results_hdf5_version(void);

/* Record the outcome (status "complete", "failed" or "invalid"; verified 1, 0 or -1),
 * refresh /hosts temperatures, close, and rename PATH.partial to PATH when
 * status is "complete" or "invalid". Frees *r and sets it to NULL. */
int wb_results_close(struct wb_results **r, const char *status, int verified);

#endif
