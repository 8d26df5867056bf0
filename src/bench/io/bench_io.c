#define _GNU_SOURCE
#include "bench/io/bench_io.h"

#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/io/bench_io_int.h"
#include "bench/options.h"
#include "core/error.h"
#include "core/report.h"
#include "core/rng.h"
#include "core/timer.h"
#include "par/comm.h"
#include "par/watchdog.h"

enum { TAG_PING = 7301, TAG_PONG };

static void print_list(void)
{
    static const char *const what[WB_IO_NTESTS] = {
        "sequential write of a file per rank, fdatasync inside the timed window",
        "sequential read of a file per rank, cold: another node's file, or its cache dropped",
        "4 KiB writes at random offsets, O_DIRECT (else a sync per write); p50, p95, p99 latency",
        "4 KiB reads at random offsets, O_DIRECT where the filesystem takes it",
        "empty files created, stat'ed and removed per second, the folder synced",
        "one shared file through MPI-IO, independent and collective, MPI_File_sync in the window",
        "the shared file read back through MPI-IO, independent and collective",
        "a file of one dataset per rank through HDF5, an explicit fsync in the window"};
    for (int t = 0; t < WB_IO_NTESTS; t++)
        wb_report_printf("%-13s %s\n", wb_io_test_name(t), what[t]);
}

/* Each rank's clock against rank 0's, the same for every rank of a node. Collective. */
static int align_clocks(struct wb_io_run *r)
{
    double *off = r->rank == 0 ? calloc((size_t)r->nranks, sizeof *off) : NULL;
    struct wb_comm_clock k = {wb_comm_world(), TAG_PING, TAG_PONG, 10};
    int rc = 0;
    if (r->rank == 0 && !off)
        rc = wb_error_set(WB_ENOMEM, "io: out of memory for clock offsets");
    rc = wb_comm_agree(rc);
    if (rc == 0 && r->nranks > 1)
        rc = r->rank == 0 ? wb_comm_clock_offsets(&k, 1, r->nranks - 1, 30.0, off + 1)
                          : wb_comm_clock_answer(&k, 0, 30.0, 1e-3);
    rc = wb_comm_agree(rc);
    /* One clock per node: rank 0's node reads rank 0's own, every other node its first rank's probe. */
    for (int q = 0; rc == 0 && r->rank == 0 && q < r->nranks; q++)
        off[q] = r->node[q] == r->node[0] ? 0 : off[wb_comm_node_first(r->node[q])];
    if (rc == 0 && r->rank == 0)
        r->offset_s = 0;
    if (rc == 0) {
        MPI_Comm w = wb_comm_world();
        rc = wb_comm_agree(wb_comm_check(MPI_Scatter(off, 1, MPI_DOUBLE, &r->offset_s, 1, MPI_DOUBLE, 0, w),
                                         "MPI_Scatter (io clock offsets)"));
    }
    free(off);
    double t0 = wb_timer_now_s();
    rc = rc ? rc : wb_comm_bcast(&t0, sizeof t0, 0);
    r->t0_s = t0;
    return rc;
}

/* The run's id (shared by its run folders), the nodes, the folders as given or the results folder. */
static int setup(struct wb_io_run *r)
{
    r->node = wb_comm_node_map(&r->nnodes);
    r->ppn_max = wb_comm_node_ranks_max();
    r->node_leader = wb_comm_node_first(r->node[r->rank]) == r->rank;
    r->root_user = geteuid() == 0;
    if (r->rank == 0) {
        uint64_t s = wb_rng_mix((uint64_t)time(NULL) ^ (uint64_t)getpid() << 32 ^ (uint64_t)(wb_timer_now_s() * 1e9));
        snprintf(r->runid, sizeof r->runid, "%016llx", (unsigned long long)s);
    }
    static char results_dir[WB_IO_PATH_CAP];
    if (r->rank == 0) {
        char copy[WB_IO_PATH_CAP];
        snprintf(copy, sizeof copy, "%s", wb_results_path(r->res));
        snprintf(results_dir, sizeof results_dir, "%s", dirname(copy));
    }
    int rc = wb_comm_bcast_str(r->runid, sizeof r->runid);
    rc = rc ? rc : wb_comm_bcast_str(results_dir, sizeof results_dir);
    r->ndirs = r->k->ndirs ? r->k->ndirs : 1;
    for (int d = 0; d < r->ndirs; d++)
        r->dir[d].given = r->k->ndirs ? r->k->dirs[d] : results_dir;
    return wb_comm_agree(rc);
}

/* The points of one test in folder d: the shared tests once per MPI-IO mode. */
static int run_test(struct wb_io_run *r, int test, int d, int64_t file_bytes)
{
    static const struct wb_io_backend *const shared_be[] = {&wb_io_mpiio_indep, &wb_io_mpiio_coll};
    int shared = test == WB_IO_SHARED_WRITE || test == WB_IO_SHARED_READ, rc = 0;
    if (shared && r->nnodes > 1 && r->dir[d].shared != 1) {
        wb_report_printf("# %s on %s: skipped, the folder is not shared between the nodes\n", wb_io_test_name(test),
                         r->dir[d].given);
        return 0;
    }
    for (int m = 0; rc == 0 && m < (shared ? 2 : 1); m++) {
        struct wb_io_point p = {.test = test, .d = d, .reps = r->o->common.reps, .file_bytes = file_bytes,
                                .xfer_bytes = r->k->xfer_bytes};
        p.be = shared ? shared_be[m] : test == WB_IO_HDF5 ? &wb_io_hdf5 : &wb_io_posix;
        p.access = shared ? "shared-file" : "file-per-process";
        if (test == WB_IO_RANDWRITE || test == WB_IO_RANDREAD)
            p.xfer_bytes = WB_IO_RAND_BYTES;
        if (test == WB_IO_META)
            p.xfer_bytes = p.file_bytes = 0;
        if (test == WB_IO_HDF5)
            snprintf(p.note, sizeof p.note, "H5Fflush does not fsync on HDF5's default driver: an explicit fsync of "
                                            "the file is inside the timed window");
        if (test == WB_IO_META)
            snprintf(p.note, sizeof p.note, "empty files; the folder is fsynced after the creates and the deletes");
        if (!r->k->size_bytes && r->k->floor_node_bytes < WB_IO_FLOOR_NODE_BYTES && test != WB_IO_META)
            snprintf(p.note + strlen(p.note), sizeof p.note - strlen(p.note), "%sa short run's floor of %lld MiB per "
                     "node: a device's own cache may hold it", *p.note ? "; " : "",
                     (long long)(r->k->floor_node_bytes >> 20));
        /* A folder whose server is gone blocks in here: the watchdog's line names the test and folder. */
        char doing[WB_WATCHDOG_ACTIVITY_CAP];
        snprintf(doing, sizeof doing, "io %s%s%s%s on %s", wb_io_test_name(test), shared ? " (" : "",
                 shared ? p.be->api : "", shared ? ")" : "", r->dir[d].given);
        wb_watchdog_set_activity(doing);
        rc = wb_io_point_run(r, &p);
        rc = rc ? rc : wb_io_write_point(r, &p);
        /* A failed point does not stop the run (docs/usage.md): its line goes to stderr too. */
        if (rc == 0 && r->rank == 0 && strncmp(p.status, "ok", 2))
            wb_report_warn("io: point i%03d (%s, %s, %s) %s", r->points - 1, wb_io_test_name(test), p.be->api,
                           r->dir[d].given, p.status);
        wb_io_point_free(&p);
    }
    return rc;
}

static int timed_out(const struct wb_io_run *r)
{
    double limit = r->o->common.timeout_s;
    int32_t stop = r->rank == 0 && limit > 0 && wb_timer_now_s() - r->t0_s > limit;
    /* A failed broadcast leaves stop as rank 0 decided it here; the next collective reports the error. */
    if (wb_comm_bcast(&stop, sizeof stop, 0))
        return 0;
    if (stop)
        wb_error_set(WB_ETIMEOUT, "io: --timeout %g s reached; the points measured before are in the result file",
                     limit);
    return stop;
}

static int run_all(struct wb_io_run *r)
{
    int rc = wb_io_write_run(r);
    wb_io_print_header(r);
    for (int d = 0; rc == 0 && d < r->ndirs; d++) {
        int64_t file_bytes = 0;
        char doing[WB_WATCHDOG_ACTIVITY_CAP];
        snprintf(doing, sizeof doing, "io size probe on %s", r->dir[d].given);
        wb_watchdog_set_activity(doing);
        rc = wb_io_size_for(r, d, &file_bytes);
        for (int t = 0; rc == 0 && t < WB_IO_NTESTS; t++) {
            if (!((r->k->tests >> t) & 1u))
                continue;
            if (timed_out(r))
                return WB_ETIMEOUT;
            rc = run_test(r, t, d, file_bytes);
        }
    }
    return rc;
}

int wb_bench_io_run(const struct wb_options *o, struct wb_results *res)
{
    struct wb_io_run r = {.o = o, .k = wb_io_opts_of(o), .res = res, .rank = wb_comm_rank(), .nranks = wb_comm_size()};
    if (r.k->list) {
        print_list();
        return 0;
    }
    for (int d = 0; d < WB_IO_MAX_DIRS; d++)
        r.dir[d].marker_fd = -1;
    int rc = setup(&r);
    rc = rc ? rc : wb_io_dirs_prepare(&r);
    /* A part of suite skips, with its line, a results folder it cannot measure (tmpfs, full, read-only). */
    if (rc == WB_EUSAGE && o->compact) {
        wb_report_printf("# io: skipped: %s\n", wb_error_message());
        wb_error_clear();
        return 0;
    }
    int made = rc == 0;
    rc = rc ? rc : wb_comm_agree(wb_io_pool_make(&r));
    rc = rc ? rc : align_clocks(&r);
    rc = rc ? rc : run_all(&r);
    wb_watchdog_set_activity("");
    if (made)
        wb_io_dirs_finish(&r);
    free(r.pool);
    if (rc == 0 && r.verify_failed) {
        wb_report_error("%s", r.first_failure);
        rc = wb_error_set(WB_EVERIFY, "%s", r.first_failure);
    }
    return rc;
}
