/* results: the only module that includes hdf5.h; the result file, written as the run goes. */
#ifndef WB_RESULTS_H
#define WB_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "core/ceiling.h"
#include "core/sysinfo.h"

/* Every wb_results_* call is collective: all ranks call it in the same order
 * with the same names. Rank 0 writes the file (the nodes of a Pi cluster rarely
 * share a file system); values passed on other ranks are ignored unless the
 * call says "per rank".
 *
 * Error contract (the sticky error): the first write failure on rank 0 is kept,
 * with its message naming the file, the object and the system error (e.g. "No
 * space left on device (the disk is full)"). Every later write call is then a
 * no-op that returns that same error, so callers may ignore the return of
 * writes between two flushes. After the failure HDF5 writes into a scratch sink,
 * never into the file, so the file stays as it was at its last flush. The error
 * is agreed on all ranks only by wb_results_flush and wb_results_close: every
 * rank gets the same code and message there, and may stop cleanly. Between
 * flushes other ranks see 0 from write calls.
 *
 * A killed run leaves PATH.partial readable as of its last flush: the file is
 * flushed with its root attributes and /hosts before the first point, metadata
 * is written only at flushes, and freed file space is never reused. */
struct wb_results;

struct wb_run_info {
    const char *subcommand;   /* fft, transfer, load, suite */
    const char *label;
    const char *command_line;
    uint64_t seed;
    int baseline;             /* 1 for a one-process reference run */
    const char *fftw_version; /* from the fft module, which owns fftw3.h */
    int kernel_variant;       /* this rank's index in kernel_variant_names (the kernels module's) */
    const char *const *kernel_variant_names; /* NULL-terminated; NULL: not recorded */
};

/* Create PATH.partial with O_EXCL (PATH is decided on rank 0; NULL = results/wulfbench-<host>-<UTC>.h5),
 * refuse an existing PATH or PATH.partial unless force, and refuse a symlink or a folder at either
 * name even with force; write the root attributes (status "running", points_completed 0), /hosts
 * and /kernel_variant (each rank's, gathered), and flush. Every rank gets the same 0 or error. */
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
/* n fixed-length strings of len bytes each (NUL padded), back to back in data, from rank 0. */
int wb_results_write_strings(struct wb_results *r, const char *dset, size_t n, size_t len, const char *data,
                             const char *units);

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

/* One rank's network counters over a point (bench/netstat): deltas of TCP RetransSegs and OutSegs,
 * the interface's rx/tx drops and errors, and if_summed; -1 on ranks that do not lead their node and
 * for counters that could not be read. */
enum { WB_RESULT_NET_FIELDS = 7 };
struct wb_result_net {
    int64_t v[WB_RESULT_NET_FIELDS];
};
/* GROUP/net/tcp_retrans_segs, tcp_out_segs, rx_dropped, tx_dropped, rx_errors, tx_errors, if_summed,
 * each [n] int64 from rows[n] (one per rank). Rank 0 only; a no-op elsewhere. */
int wb_results_write_net(struct wb_results *r, const char *group, const struct wb_result_net *rows, size_t n);

/* One series of a point's energy (bench/power), gathered on rank 0: energy_j and power_short
 * [reps][nranks] (NaN and 0 where unmeasured), and the repetitions' UTC start and end [reps]. */
struct wb_result_energy {
    int present;             /* 0: power was not measured, nothing is written */
    size_t reps, nranks;
    double *energy_j;
    uint8_t *power_short;
    double *t_start_utc, *t_end_utc;
    double *sampler_cpu_share; /* [nranks] */
};
/* GROUP/energy_j [reps, nranks] (J), power_short [reps, nranks], t_start_utc and t_end_utc [reps]
 * (s since 1970 UTC), sampler_cpu_share [nranks] (1: of one core). Rank 0 only; a no-op elsewhere and
 * when e is NULL or not present. */
int wb_results_write_energy(struct wb_results *r, const char *group, const struct wb_result_energy *e);
void wb_result_energy_free(struct wb_result_energy *e);

/* One row of /io/devices: a node's view of one --dir (bench/io fills it; docs/schema.md says each field). */
struct wb_result_io_device {
    int32_t node;
    char dir[256];
    char fs_type[32];
    char mount_options[256];
    char device[128];
    char model[64];
    char kind[16];
    int32_t rotational;      /* 1, 0, -1 unknown */
    char sd_name[32], sd_type[16], sd_date[16];
    char nfs_server[64];
    char export_sync[16];
    int64_t free_bytes;
    int64_t mem_bytes;
    int32_t shared;          /* 1, 0, -1 one node */
};
/* The /io/devices table of n rows (rank 0's). */
int wb_results_write_io_devices(struct wb_results *r, const char *dset, const struct wb_result_io_device *rows,
                                size_t n);

/* io's hdf5 test: a file of one uint8 dataset written through HDF5's default (sec2) driver. Each call is
 * local (every rank writes its own file) and returns 0 or an errno value (EIO when HDF5 gives none). */
struct wb_h5data;
int wb_h5data_create(struct wb_h5data **out, const char *path, int64_t bytes);
int wb_h5data_write(struct wb_h5data *h, const void *buf, int64_t bytes, int64_t offset);
/* H5Fflush writes HDF5's buffers to the kernel but, on sec2, does not fsync: this flushes, then
 * fsyncs the driver's own descriptor. */
int wb_h5data_fsync(struct wb_h5data *h);
/* Close and free; *h becomes NULL. */
int wb_h5data_close(struct wb_h5data **h);

/* The HDF5 library this was built with, from its header, e.g. "1.10.8". Local. */
const char *wb_results_hdf5_version(void);

/* One event of an fft point's timeline (rank 0's rows): phase 0 recv, 1 compute, 2 send; times in s. */
struct wb_result_event {
    int32_t rank;
    int32_t chunk;
    uint8_t phase;
    double t_start;
    double t_end;
};
int wb_results_write_timeline(struct wb_results *r, const char *dset, const struct wb_result_event *rows, size_t n);

/* One point (fft point, transfer test, load step) is fully written: set points_completed, flush
 * the file to disk, and agree on the sticky error on all ranks. */
int wb_results_flush(struct wb_results *r);

/* wb_results_flush on rank 0 alone, with no MPI, for a run in which another rank can join no
 * collective again (a stopped load worker); the run then ends through wb_watchdog_end. Returns
 * the sticky error or 0; 0 elsewhere. */
int wb_results_flush_alone(struct wb_results *r);

/* Points flushed so far (rank 0; 0 elsewhere). Local. */
int wb_results_points(const struct wb_results *r);

/* Rank 0: the run's timeline for the close's own-time attributes (docs/schema.md): main's entry, the
 * subcommand's start and its end, each wb_timer_utc_s. Local; a no-op elsewhere. */
void wb_results_timeline(struct wb_results *r, double t_main_utc, double t_run_start_utc, double t_run_end_utc);

/* End the file with the run's rc (0 or a negative WB_E* code, agreed on all ranks). The status is
 * "complete" (rc 0, verified 1), "invalid" (WB_EVERIFY, verified 0), "timeout" (WB_ETIMEOUT) or
 * "failed"; /hosts temperatures are refreshed, the file closed, and PATH.partial renamed to PATH
 * for complete, invalid and timeout. A failed run keeps PATH.partial if a point was flushed, and
 * removes it otherwise. Returns rc if it is non-zero (its message kept, unless the sticky error
 * caused it: then the message says what is readable where), else the close's own error, agreed.
 * Frees *r and sets it to NULL. Collective. */
int wb_results_close(struct wb_results **r, int rc);

/* The file the last close kept (PATH, or PATH.partial for a failed run), "" if none. Rank 0. */
const char *wb_results_kept(void);

/* For the watchdog thread, never the main thread: wait up to wait_s for the main thread to leave
 * HDF5, then write status (e.g. "timeout", "interrupted") and points_completed, close and keep the
 * file, and never give HDF5 back (the process must end next). The kept file goes to path[cap] and
 * the flushed points to *points. 0 done, 1 HDF5 stayed busy, 2 no file open, -1 a write failed
 * (message set). Rank 0; calls no MPI. */
int wb_results_abandon(const char *status, double wait_s, char *path, size_t cap, int *points);

/* Rank 0: the run's machines (hosts grouped by boot_id, as /ceilings/machines holds them) into *n and
 * each rank's machine into *machine_of (both NULL/0 elsewhere). Local. */
const struct wb_ceiling_machine *wb_results_machines(const struct wb_results *r, int *n, const int **machine_of);
/* Rank 0: the head node's link MTU: the smallest of the interfaces through which ranks on other nodes reach
 * rank 0 (their /hosts rows; rank 0's own row names lo, the route to itself). -1 when no rank is on another
 * node or none knows its MTU, and elsewhere. Local. */
int32_t wb_results_link_mtu(const struct wb_results *r);

#endif
