/* bench_io internals: the run, its folders and points, and the backends (one per way of doing I/O, as
 * IOR's aiori: posix, MPI-IO independent and collective, HDF5) behind one timing loop. */
#ifndef WB_BENCH_IO_INT_H
#define WB_BENCH_IO_INT_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "bench/io/bench_io.h"
#include "bench/io/options_io.h"
#include "io/results.h"

#define WB_IO_PATH_CAP 4096
/* Test files are named wb-io-*, inside a run folder .wulfbench-io-<runid> that holds a marker file:
 * the next run removes what a killed one left by these, and nothing else. */
#define WB_IO_RUN_PREFIX ".wulfbench-io-"
#define WB_IO_FILE_PREFIX "wb-io-"
#define WB_IO_MARKER "marker"
#define WB_IO_MAGIC "wulfbench io run "
/* The random pool the data is cut from (pages), and the page size of the stamps. */
#define WB_IO_POOL_PAGES 1024
#define WB_IO_PAGE 4096

/* One --dir as this rank sees it. */
struct wb_io_dir {
    const char *given;
    char run[WB_IO_PATH_CAP];      /* the run folder this rank writes into */
    int leader;                    /* 1: this rank made or found the run folder for its node */
    int marker_fd;                 /* held with a shared flock while the run lives; -1 none */
    int shared;                    /* agreed: 1 the same folder on every node, 0 not, -1 one node */
    int memory;                    /* tmpfs or ramfs */
    char fs_type[32];
    int64_t free_bytes;
    size_t dio_mem_align, dio_off_align; /* statx STATX_DIOALIGN, 0 unknown */
    struct wb_result_io_device dev; /* this node's row */
};

struct wb_io_run {
    const struct wb_options *o;
    const struct wb_io_opts *k;
    struct wb_results *res;
    int rank, nranks, nnodes, ppn_max, node_leader;
    const int *node;               /* [nranks] */
    char runid[32];
    struct wb_io_dir dir[WB_IO_MAX_DIRS];
    int ndirs;
    double t0_s;                   /* rank 0's clock at the start; times are stored from it */
    double offset_s;               /* this rank's clock minus rank 0's */
    unsigned char *pool;           /* WB_IO_POOL_PAGES random pages from --seed */
    int points;                    /* groups written, i000 ... */
    int cold_reads;                /* rank 0: the ok cold sequential reads among them */
    int verify_failed;
    char first_failure[512];
    int root_user;
};

/* A file as a backend holds it. */
struct wb_io_file {
    int fd;
    MPI_File mf;
    struct wb_h5data *h5;
    int direct;
};

/* One way of doing I/O (IOR's aiori): each call returns 0 or an errno value. open and close are
 * collective for the MPI-IO backends and local otherwise. */
struct wb_io_backend {
    const char *api;               /* posix, mpiio-indep, mpiio-coll, hdf5 */
    const char *sync;              /* what its sync call is, for the sync attribute */
    int (*open)(struct wb_io_file *f, const char *path, int write, int64_t total_bytes, int direct);
    int (*xfer)(struct wb_io_file *f, int write, void *buf, int64_t bytes, int64_t offset);
    int (*sync_fn)(struct wb_io_file *f);
    int (*close)(struct wb_io_file *f);
};
extern const struct wb_io_backend wb_io_posix, wb_io_mpiio_indep, wb_io_mpiio_coll, wb_io_hdf5;

/* One (test, api, folder): what ran and what each rank measured. */
struct wb_io_point {
    int test, d;
    const struct wb_io_backend *be;
    const char *access;            /* file-per-process or shared-file */
    int64_t file_bytes, xfer_bytes;
    int reps, done;                /* planned, completed */
    char sync[32];
    int sync_block;                /* write with --sync block: an fdatasync after every call */
    int direct;
    char direct_note[160];
    int cold;
    char cold_method[16];
    char status[600];
    char note[256];
    int iops_test, meta_test;
    int64_t nops;                  /* random: ops per repetition; meta: files */
    double *t_start, *t_end, *lat_s, *meta_s; /* this rank: [reps], [reps], [reps*3], [reps*3] */
    int64_t *bytes, *ops;
};

/* bench_io_dir.c: check every --dir (the bad-input lines), clean a killed run's files, make the run
 * folders, find which are shared, and read each node's device facts. Collective, agreed. */
int wb_io_dirs_prepare(struct wb_io_run *r);
/* Remove the run folders (their files are gone by then). Collective. */
void wb_io_dirs_finish(struct wb_io_run *r);
/* A test file's path in folder d: run folder / wb-io-<name>-r<rank>.dat (rank < 0: no rank part). */
void wb_io_file_path(const struct wb_io_run *r, int d, const char *name, int rank, char *out, size_t cap);

/* bench_io_data.c: the incompressible data, a function of (seed, file key, offset). */
int wb_io_pool_make(struct wb_io_run *r);
/* Fill buf with len bytes of file key at offset (page aligned). Local. */
void wb_io_fill(const struct wb_io_run *r, unsigned char *buf, int64_t len, uint64_t key, int64_t offset);
/* The first byte offset where buf differs from what wb_io_fill gives, or -1. Local. */
int64_t wb_io_check(const struct wb_io_run *r, const unsigned char *buf, int64_t len, uint64_t key, int64_t offset);
/* A buffer of n bytes aligned for O_DIRECT. */
void *wb_io_alloc(size_t n);

/* bench_io_tests.c: run one point (setup, sizing, warm-up, repetitions, removal). Collective. 0, or an
 * error that stops the run; a point's own I/O failure is in p->status, not in the return. */
int wb_io_point_run(struct wb_io_run *r, struct wb_io_point *p);
/* Free a point's arrays. Local. */
void wb_io_point_free(struct wb_io_point *p);
/* Bytes per rank the sequential tests use in folder d (--size, else a timed probe and the floor). */
/* A file of size bytes cut to room, but never below one 4 KiB block. Local. */
int64_t wb_io_fit_room(int64_t size, int64_t room);
int wb_io_size_for(struct wb_io_run *r, int d, int64_t *file_bytes);

/* bench_io_write.c: the group of a point, its stdout row, and /io's attributes and devices. Collective. */
int wb_io_write_point(struct wb_io_run *r, struct wb_io_point *p);
int wb_io_write_run(struct wb_io_run *r);
void wb_io_print_header(const struct wb_io_run *r);

#endif
