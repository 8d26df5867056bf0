/* options_io: the options of `wulfbench io`, and the one table of its test names. */
#ifndef WB_OPTIONS_IO_H
#define WB_OPTIONS_IO_H

#include <stdint.h>

#include "core/optdef.h"

struct wb_options;

/* The tests, in the order they run; bit (1u << test) in wb_io_opts.tests. */
enum wb_io_test {
    WB_IO_WRITE,
    WB_IO_READ,
    WB_IO_RANDWRITE,
    WB_IO_RANDREAD,
    WB_IO_META,
    WB_IO_SHARED_WRITE,
    WB_IO_SHARED_READ,
    WB_IO_HDF5,
    WB_IO_NTESTS
};

/* Most --dir folders in one run (a local one and a shared one). */
#define WB_IO_MAX_DIRS 2
/* Default bytes per call of the sequential tests, and the random tests' operation. */
#define WB_IO_XFER_BYTES (INT64_C(1) << 20)
#define WB_IO_RAND_BYTES INT64_C(4096)
/* --sync: how the sequential write test's data reaches the disk. */
enum wb_io_sync { WB_IO_SYNC_END, WB_IO_SYNC_BLOCK, WB_IO_SYNC_DIRECT };

/* Bytes per node a device's own cache cannot hold: the smallest default file set of a test. */
#define WB_IO_FLOOR_NODE_BYTES (INT64_C(64) << 20)

struct wb_io_opts {
    unsigned tests;                       /* --tests: bit mask of enum wb_io_test */
    const char *dirs[WB_IO_MAX_DIRS];     /* --dir, given once or twice; none: the results folder */
    int ndirs;
    double time_s;                        /* --time: what each test aims to take per folder */
    int64_t size_bytes;                   /* --size: file bytes per rank; 0 = from --time and the floor */
    int64_t xfer_bytes;                   /* --block: bytes per call of the sequential tests */
    int64_t floor_node_bytes;             /* the smallest file set per node (suite's is smaller) */
    int sync_mode;                        /* --sync: enum wb_io_sync */
    int allow_memory;                     /* --allow-memory: tmpfs and ramfs are measured too */
    int list;                             /* --list: print the tests and stop */
};

extern const struct wb_optdef wb_io_optdefs[];
extern const char wb_io_summary[];

/* The name of a test ("write", ...), or NULL out of range. */
const char *wb_io_test_name(int test);

/* The option hooks of the subcommand table; local, never exit. */
void wb_io_opts_defaults(struct wb_options *o);
int wb_io_opts_set(struct wb_options *o, int id, const char *arg);
int wb_io_opts_validate(struct wb_options *o);
/* The short run `suite` makes: every test but the shared ones, 0.5 s each on the results folder, with a floor
 * of 8 MiB per node (a device's cache may hold that: the row's note says so). */
void wb_io_opts_compact(struct wb_options *o);
/* 1 when the run writes no result file (--list). */
int wb_io_opts_no_file(const struct wb_options *o);

/* Bytes a node with ranks_here of the job's ranks (ppn_max at most on any node) needs free in a folder
 * for io's run, with size_bytes per rank (0: --size, else the floor): the read test's file and a test's
 * own per rank, with a tenth to spare. The subcommand table's storage_bytes hook, and io's own check. */
double wb_io_opts_storage_bytes(const struct wb_options *o, int64_t size_bytes, int ranks_here, int ppn_max);

/* io's own block of o. */
struct wb_io_opts *wb_io_opts_of(const struct wb_options *o);

#endif
