/* io's one timing loop (IOR's shape): a barrier, then each rank times its own open, I/O, sync and close
 * through whichever backend the point uses; the tests differ only in what a repetition does. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/io/bench_io_int.h"
#include "bench/options.h"
#include "core/error.h"
#include "core/pagecache.h"
#include "core/report.h"
#include "core/rng.h"
#include "core/stats.h"
#include "core/timer.h"
#include "par/comm.h"

/* Most operations of a random repetition and files of a meta one. */
#define MAX_OPS 200000
#define MAX_FILES 20000

struct rep_ctx {
    struct wb_io_run *r;
    struct wb_io_point *p;
    unsigned char *buf;            /* one call's bytes, aligned for O_DIRECT */
    char path[WB_IO_PATH_CAP];     /* the file this rank writes */
    char rpath[WB_IO_PATH_CAP];    /* the file it reads: its own, or another node's */
    uint64_t key, rkey;            /* the data of the files written and read: a function of key and offset */
    int64_t base, rbase;           /* this rank's first byte in the file it writes and in the one it reads */
    int write, shared, coll, fault_corrupt, fault_hang;
    double *lat;                   /* random: [nops] per-op latencies */
    int err;                       /* errno of the first failure, 0 none */
    int64_t err_off, bad_off;      /* where it failed; the first byte read wrong, -1 none */
};

static int is_read(int test) { return test == WB_IO_READ || test == WB_IO_SHARED_READ || test == WB_IO_RANDREAD; }

static void fail(struct rep_ctx *c, int e, int64_t off)
{
    if (!c->err) {
        c->err = e;
        c->err_off = off;
    }
}

/* One sequential pass of file_bytes in xfer calls: open, I/O, sync when writing, close. t[0], t[1]: this
 * rank's open and close on its own clock. */
static void seq_pass(struct rep_ctx *c, int write, double t[2])
{
    const struct wb_io_point *p = c->p;
    struct wb_io_file f = {.fd = -1, .mf = MPI_FILE_NULL};
    const char *path = write ? c->path : c->rpath;
    int64_t base = write ? c->base : c->rbase;
    uint64_t key = write ? c->key : c->rkey;
    t[0] = wb_timer_now_s();
    int direct = write && p->test == WB_IO_WRITE && p->direct;
    int e = p->be->open(&f, path, write, c->shared ? p->file_bytes * c->r->nranks : p->file_bytes, direct);
    fail(c, e, 0);
    for (int64_t at = 0; !e && at < p->file_bytes; at += p->xfer_bytes) {
        int64_t n = p->file_bytes - at < p->xfer_bytes ? p->file_bytes - at : p->xfer_bytes;
        if (write)
            wb_io_fill(c->r, c->buf, n, key, base + at);
        int xe = p->be->xfer(&f, write, c->buf, n, base + at);
        if (!xe && write && p->sync_block)
            xe = p->be->sync_fn(&f);
        fail(c, xe, base + at);
        if (!write && !xe && c->fault_corrupt) {
            c->buf[n / 2] ^= 1;
            c->fault_corrupt = 0;
        }
        int64_t bad = !write && !xe && c->bad_off < 0 ? wb_io_check(c->r, c->buf, n, key, base + at) : -1;
        if (bad >= 0)
            c->bad_off = bad;
        /* A collective call must be made by every rank, so only the independent ones stop at an error. */
        if (xe && !c->coll)
            break;
    }
    if (!e && write)
        fail(c, p->be->sync_fn(&f), base + p->file_bytes);
    if (!e)
        fail(c, p->be->close(&f), base + p->file_bytes);
    t[1] = wb_timer_now_s();
}

/* nops 4 KiB calls at random page offsets of the file, each timed; O_DIRECT when p->direct, else a
 * fdatasync after each write. */
static void rand_pass(struct rep_ctx *c, int write, uint64_t seed, double t[2])
{
    const struct wb_io_point *p = c->p;
    struct wb_io_file f = {.fd = -1};
    uint64_t state = seed, pages = (uint64_t)(p->file_bytes / WB_IO_RAND_BYTES);
    t[0] = wb_timer_now_s();
    int e = wb_io_posix.open(&f, c->path, write, p->file_bytes, p->direct);
    fail(c, e, 0);
    for (int64_t i = 0; !e && i < p->nops; i++) {
        int64_t off = (int64_t)(wb_rng_next(&state) % pages) * WB_IO_RAND_BYTES;
        if (write)
            wb_io_fill(c->r, c->buf, WB_IO_RAND_BYTES, c->key, off);
        double t0 = wb_timer_now_s();
        e = wb_io_posix.xfer(&f, write, c->buf, WB_IO_RAND_BYTES, off);
        if (!e && write && !p->direct)
            e = wb_io_posix.sync_fn(&f);
        c->lat[i] = wb_timer_now_s() - t0;
        fail(c, e, off);
        if (!write && !e && c->fault_corrupt) {
            c->buf[7] ^= 1;
            c->fault_corrupt = 0;
        }
        int64_t bad = !write && !e && c->bad_off < 0 ? wb_io_check(c->r, c->buf, WB_IO_RAND_BYTES, c->key, off) : -1;
        if (bad >= 0)
            c->bad_off = bad;
    }
    if (!e && write)
        fail(c, wb_io_posix.sync_fn(&f), 0);
    if (!e)
        fail(c, wb_io_posix.close(&f), 0);
    t[1] = wb_timer_now_s();
}

/* The folder's descriptor synced: its entries are durable. */
static int sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    int e = fd < 0 || fsync(fd) != 0 ? errno : 0;
    if (fd >= 0)
        close(fd);
    return e;
}

/* nops empty files created, the folder synced, each stat'ed, each removed, the folder synced; the
 * three phases' rates into rate[3]. */
static void meta_pass(struct rep_ctx *c, double t[2], double rate[3])
{
    const struct wb_io_point *p = c->p;
    char name[WB_IO_PATH_CAP + 64];
    double ph[4];
    int64_t made = 0;
    ph[0] = t[0] = wb_timer_now_s();
    for (; made < p->nops && !c->err; made++) {
        snprintf(name, sizeof name, "%s/" WB_IO_FILE_PREFIX "meta-r%d-%lld", c->r->dir[p->d].run, c->r->rank,
                 (long long)made);
        int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
        if (fd < 0 || close(fd) != 0) {
            fail(c, errno, made);
            break;
        }
    }
    fail(c, sync_dir(c->r->dir[p->d].run), 0);
    ph[1] = wb_timer_now_s();
    struct stat st;
    for (int64_t i = 0; i < made; i++) {
        snprintf(name, sizeof name, "%s/" WB_IO_FILE_PREFIX "meta-r%d-%lld", c->r->dir[p->d].run, c->r->rank,
                 (long long)i);
        if (stat(name, &st) != 0)
            fail(c, errno, i);
    }
    ph[2] = wb_timer_now_s();
    for (int64_t i = 0; i < made; i++) {
        snprintf(name, sizeof name, "%s/" WB_IO_FILE_PREFIX "meta-r%d-%lld", c->r->dir[p->d].run, c->r->rank,
                 (long long)i);
        if (unlink(name) != 0)
            fail(c, errno, i);
    }
    fail(c, sync_dir(c->r->dir[p->d].run), 0);
    ph[3] = t[1] = wb_timer_now_s();
    for (int k = 0; k < 3; k++)
        rate[k] = (double)made / (ph[k + 1] - ph[k]);
}

/* The files a point leaves: this rank's, and the shared one by rank 0. Local. */
static void remove_files(struct rep_ctx *c)
{
    if (!c->shared || c->r->rank == 0)
        unlink(c->path);
}

/* Agree on a repetition's failure: 0, or the point's status set and WB_EIO / WB_EVERIFY. Collective. */
static int agree_rep(struct rep_ctx *c, const char *what)
{
    int rc = 0;
    if (c->err)
        rc = wb_error_set(WB_EIO, "%s%s at %s %lld of rank %d (%s, on %s)", strerror(c->err),
                          c->err == ENOSPC || c->err == EDQUOT ? " (the disk or its inodes full)" : "",
                          c->p->meta_test ? "file" : "offset", (long long)c->err_off, c->r->rank, what,
                          wb_comm_hostname(c->r->rank));
    else if (c->bad_off >= 0)
        rc = wb_error_set(WB_EVERIFY, "rank %d read other bytes than were written in %s at offset %lld",
                          c->r->rank, c->rpath[0] ? c->rpath : c->path, (long long)c->bad_off);
    rc = wb_comm_agree(rc);
    if (rc)
        snprintf(c->p->status, sizeof c->p->status, "failed: %s", wb_error_message());
    return rc;
}

/* One repetition of any test into slot rep (rep < 0: unrecorded). Collective. */
static int one_rep(struct rep_ctx *c, int rep)
{
    struct wb_io_point *p = c->p;
    static const double q[3] = {0.5, 0.95, 0.99};
    double t[2], rate[3] = {NAN, NAN, NAN};
    int write = !is_read(p->test);
    if (write && p->test != WB_IO_META && p->test != WB_IO_RANDWRITE) {
        /* Each write makes its file anew, as IOR removes it between iterations. */
        remove_files(c);
    }
    if (!write) {
        double resident = 1, all = 0;
        const char *m = wb_pagecache_drop(c->rpath, c->r->root_user, &resident);
        int rc = wb_comm_max_f64(resident, &all);
        if (rc)
            return rc;
        if (strcmp(p->cold_method, "other-node"))
            snprintf(p->cold_method, sizeof p->cold_method, "%s", m);
        /* Another node's file is dropped and checked too: emulated nodes share one kernel's cache. */
        p->cold = p->cold && all <= 0.01;
    }
    int rc = wb_comm_barrier();
    if (rc)
        return rc;
    uint64_t seed = wb_rng_mix(c->r->o->common.seed ^ (uint64_t)(rep + 7) * 131 ^ (uint64_t)c->r->rank << 20);
    /* The fault build's stand-in for a read from a server that went away: the main thread never returns. */
    while (!write && c->fault_hang)
        pause();
    if (p->iops_test)
        rand_pass(c, write, seed, t);
    else if (p->meta_test)
        meta_pass(c, t, rate);
    else
        seq_pass(c, write, t);
    if ((rc = agree_rep(c, p->test == WB_IO_META ? c->r->dir[p->d].run : write ? c->path : c->rpath)))
        return rc;
    if (rep < 0)
        return 0;
    p->t_start[rep] = t[0] - c->r->offset_s - c->r->t0_s;
    p->t_end[rep] = t[1] - c->r->offset_s - c->r->t0_s;
    p->bytes[rep] = p->meta_test ? 0 : p->iops_test ? p->nops * WB_IO_RAND_BYTES : p->file_bytes;
    p->ops[rep] = p->meta_test ? 3 * p->nops : p->iops_test ? p->nops : (p->file_bytes + p->xfer_bytes - 1) / p->xfer_bytes;
    for (int k = 0; k < 3; k++) {
        p->meta_s[3 * rep + k] = rate[k];
        p->lat_s[3 * rep + k] = p->iops_test ? wb_stats_quantile(c->lat, (size_t)p->nops, q[k]) : NAN;
    }
    return 0;
}

/* O_DIRECT for the point's file (c->path, which exists) when statx gives alignments that page-aligned
 * buffers and calls of size_a and size_b bytes satisfy (4 KiB where statx does not say) and the open takes
 * it; else buffered, said in direct_note with what is done instead. Agreed: direct only when every rank
 * may. Collective. */
static int decide_direct(struct rep_ctx *c, int64_t size_a, int64_t size_b, const char *instead)
{
    struct wb_io_point *p = c->p;
    const char *fs = c->r->dir[p->d].fs_type;
    char note[160] = "";
    int ok = 1;
    unsigned align = WB_IO_RAND_BYTES;
#ifdef STATX_DIOALIGN
    struct statx sx;
    if (statx(AT_FDCWD, c->path, 0, STATX_DIOALIGN, &sx) == 0 && (sx.stx_mask & STATX_DIOALIGN)) {
        if (sx.stx_dio_mem_align == 0)
            ok = 0, snprintf(note, sizeof note, "statx: %s offers no O_DIRECT here: %s", fs, instead);
        else if (WB_IO_PAGE % sx.stx_dio_mem_align)
            ok = 0, snprintf(note, sizeof note, "O_DIRECT on %s needs %u-byte buffers: %s", fs,
                             (unsigned)sx.stx_dio_mem_align, instead);
        align = sx.stx_dio_offset_align ? sx.stx_dio_offset_align : align;
    }
#endif
    if (ok && (size_a % align || size_b % align))
        ok = 0, snprintf(note, sizeof note, "O_DIRECT on %s needs calls of a multiple of %u bytes: %s", fs, align,
                         instead);
    int fd = ok ? open(c->path, O_RDWR | O_DIRECT | O_NOFOLLOW) : -1, e = fd < 0 ? errno : 0;
#ifdef WB_TEST_FAULTS
    /* Test-only: WB_FAULT_IO_NODIRECT=1 makes every O_DIRECT open fail as a filesystem that refuses it. */
    if (ok && getenv("WB_FAULT_IO_NODIRECT"))
        e = EINVAL;
#endif
    if (fd >= 0)
        close(fd);
    if (ok && e)
        ok = 0, snprintf(note, sizeof note, "O_DIRECT refused by %s (%s): %s", fs, strerror(e), instead);
    double all = 0;
    int rc = wb_comm_min_f64(ok, &all);
    p->direct = all > 0;
    if (!p->direct && !note[0])
        snprintf(note, sizeof note, "O_DIRECT refused on another node: %s", instead);
    snprintf(p->direct_note, sizeof p->direct_note, "%s", p->direct ? "" : note);
    return rc;
}

/* Random tests: O_DIRECT where the folder takes it, else buffered with a sync per write. Collective. */
static int decide_random(struct rep_ctx *c)
{
    struct wb_io_point *p = c->p;
    int rc = decide_direct(c, WB_IO_RAND_BYTES, WB_IO_RAND_BYTES, "buffered, sync per write");
    snprintf(p->sync, sizeof p->sync, "%s", p->test == WB_IO_RANDREAD ? "none" : p->direct ? "o_direct+fdatasync"
                                                                                         : "fdatasync-per-write");
    return rc;
}

/* The write test's --sync: block, an fdatasync after every call; direct, O_DIRECT calls where the folder
 * takes them (tried on an empty file), else buffered with one fdatasync at the end. Collective. */
static int decide_write_sync(struct rep_ctx *c, int mode)
{
    struct wb_io_point *p = c->p;
    if (p->test != WB_IO_WRITE || mode == WB_IO_SYNC_END)
        return 0;
    if (mode == WB_IO_SYNC_BLOCK) {
        p->sync_block = 1;
        snprintf(p->sync, sizeof p->sync, "fdatasync-per-block");
        return 0;
    }
    int fd = open(c->path, O_WRONLY | O_CREAT | O_NOFOLLOW, 0644), rc;
    if (fd >= 0)
        close(fd);
    rc = decide_direct(c, p->xfer_bytes, p->file_bytes, "buffered, one fdatasync at the end");
    unlink(c->path);
    snprintf(p->sync, sizeof p->sync, "%s", p->direct ? "o_direct+fdatasync" : "fdatasync");
    return rc;
}

/* The paths, keys and offsets of a point, and IOR -C's other-node read when the folder is shared. */
static void plan_files(struct rep_ctx *c)
{
    struct wb_io_run *r = c->r;
    struct wb_io_point *p = c->p;
    static const char *const file_of[WB_IO_NTESTS] = {"seq", "seq", "rand", "rand", "meta", "shared", "shared",
                                                      "h5"};
    int n = r->nranks, shift = 0, partner = r->rank;
    c->shared = p->test == WB_IO_SHARED_WRITE || p->test == WB_IO_SHARED_READ;
    c->coll = p->be == &wb_io_mpiio_coll;
    for (int q = 0; q < n; q++)
        shift += r->node[q] == r->node[0];
    int other = is_read(p->test) && p->test != WB_IO_RANDREAD && r->nnodes > 1 && r->dir[p->d].shared == 1;
    for (int q = 0; other && q < n; q++)
        other = r->node[(q + shift) % n] != r->node[q];
    if (other) {
        partner = (r->rank + shift) % n;
        snprintf(p->cold_method, sizeof p->cold_method, "other-node");
    }
    wb_io_file_path(r, p->d, file_of[p->test], c->shared ? -1 : r->rank, c->path, sizeof c->path);
    wb_io_file_path(r, p->d, file_of[p->test], c->shared ? -1 : partner, c->rpath, sizeof c->rpath);
    /* Every file of a run has its own key; a shared file's pages are keyed by their place in it. */
    uint64_t salt = r->o->common.seed ^ (uint64_t)p->test << 32;
    c->key = wb_rng_mix(salt ^ (c->shared ? UINT64_C(0xFFFF) : (uint64_t)r->rank));
    c->rkey = wb_rng_mix(salt ^ (c->shared ? UINT64_C(0xFFFF) : (uint64_t)partner));
    c->base = c->shared ? (int64_t)r->rank * p->file_bytes : 0;
    c->rbase = c->shared ? (int64_t)partner * p->file_bytes : 0;
}

/* A read test's file written once, durable, before anything is timed (the random ones write theirs
 * whole too). Collective. */
static int setup_files(struct rep_ctx *c)
{
    struct wb_io_point *p = c->p;
    double t[2];
    if (p->meta_test || p->test == WB_IO_WRITE || p->test == WB_IO_SHARED_WRITE || p->test == WB_IO_HDF5)
        return 0;
    int64_t keep_xfer = p->xfer_bytes;
    if (p->iops_test)
        p->xfer_bytes = p->file_bytes < WB_IO_XFER_BYTES ? p->file_bytes : WB_IO_XFER_BYTES;
    seq_pass(c, 1, t);
    p->xfer_bytes = keep_xfer;
    int rc = agree_rep(c, c->path);
    if (rc == 0 && p->iops_test)
        rc = decide_random(c);
    return rc;
}

/* Random and meta tests: operations per repetition from a probe of one repetition's share of --time,
 * the fewest any rank managed. Collective. */
static int size_ops(struct rep_ctx *c, double per_rep_s)
{
    struct wb_io_point *p = c->p;
    double t[2], rate[3], mine;
    int64_t cap = p->meta_test ? MAX_FILES : MAX_OPS;
    p->nops = p->meta_test ? 32 : 64;
    int rc = wb_comm_barrier();
    if (rc)
        return rc;
    if (p->meta_test)
        meta_pass(c, t, rate);
    else
        rand_pass(c, p->test == WB_IO_RANDWRITE, wb_rng_mix(c->r->o->common.seed), t);
    if ((rc = agree_rep(c, p->meta_test ? c->r->dir[p->d].run : c->path)))
        return rc;
    mine = (double)p->nops * per_rep_s / fmax(t[1] - t[0], 1e-6);
    double all = 0;
    rc = wb_comm_min_f64(mine, &all);
    p->nops = (int64_t)fmin(fmax(all, p->meta_test ? 16 : 64), (double)cap);
    if (!p->meta_test) {
        double *lat = realloc(c->lat, (size_t)p->nops * sizeof *lat);
        if (!lat)
            return wb_comm_agree(wb_error_set(WB_ENOMEM, "io: out of memory for %lld latencies", (long long)p->nops));
        c->lat = lat;
    }
    return rc;
}

static int alloc_point(struct wb_io_point *p, struct rep_ctx *c)
{
    size_t R = (size_t)(p->reps > 0 ? p->reps : 1);
    p->t_start = calloc(R, sizeof(double));
    p->t_end = calloc(R, sizeof(double));
    p->lat_s = calloc(3 * R, sizeof(double));
    p->meta_s = calloc(3 * R, sizeof(double));
    p->bytes = calloc(R, sizeof(int64_t));
    p->ops = calloc(R, sizeof(int64_t));
    /* The random tests write their file whole first, in calls of up to 1 MiB. */
    int64_t buf = p->xfer_bytes > WB_IO_XFER_BYTES ? p->xfer_bytes : WB_IO_XFER_BYTES;
    c->buf = wb_io_alloc((size_t)buf);
    c->lat = calloc(64, sizeof(double));
    int rc = 0;
    if (!p->t_start || !p->t_end || !p->lat_s || !p->meta_s || !p->bytes || !p->ops || !c->buf || !c->lat)
        rc = wb_error_set(WB_ENOMEM, "io: out of memory for a point of %lld-byte calls", (long long)p->xfer_bytes);
    return wb_comm_agree(rc);
}

void wb_io_point_free(struct wb_io_point *p)
{
    free(p->t_start);
    free(p->t_end);
    free(p->lat_s);
    free(p->meta_s);
    free(p->bytes);
    free(p->ops);
}

int wb_io_point_run(struct wb_io_run *r, struct wb_io_point *p)
{
    struct rep_ctx c = {.r = r, .p = p, .bad_off = -1};
    const struct wb_io_opts *k = r->k;
    int nrep = r->o->common.warmup + p->reps;
    double per_rep_s = k->time_s / (nrep > 0 ? nrep : 1);
    snprintf(p->status, sizeof p->status, "ok");
    p->iops_test = p->test == WB_IO_RANDWRITE || p->test == WB_IO_RANDREAD;
    p->meta_test = p->test == WB_IO_META;
    p->cold = is_read(p->test) ? 1 : -1;
    snprintf(p->sync, sizeof p->sync, "%s", is_read(p->test) ? "none" : p->meta_test ? "fsync" : p->be->sync);
#ifdef WB_TEST_FAULTS
    /* Test-only: WB_FAULT_IO_CORRUPT=R flips one byte of the first block rank R reads. */
    const char *fc = getenv("WB_FAULT_IO_CORRUPT");
    c.fault_corrupt = fc && atoi(fc) == r->rank;
    /* Test-only: WB_FAULT_IO_HANG=R stops rank R's main thread in the timed window of each read test. */
    const char *fh = getenv("WB_FAULT_IO_HANG");
    c.fault_hang = fh && atoi(fh) == r->rank;
#endif
    int rc = alloc_point(p, &c);
    if (rc == 0)
        plan_files(&c);
    int failed = 0;
    rc = rc ? rc : setup_files(&c);
    rc = rc ? rc : decide_write_sync(&c, k->sync_mode);
    if (rc == WB_EIO || rc == WB_EVERIFY)
        failed = rc;
    if (rc == 0 && (p->iops_test || p->meta_test))
        rc = size_ops(&c, per_rep_s);
    if (rc == WB_EIO || rc == WB_EVERIFY)
        failed = rc;
    for (int i = 0; rc == 0 && i < nrep; i++) {
        int rep = i - r->o->common.warmup;
        rc = one_rep(&c, rep);
        if (rc == WB_EIO || rc == WB_EVERIFY)
            failed = rc;
        else if (rc == 0 && rep >= 0)
            p->done = rep + 1;
        wb_report_progress(wb_io_test_name(p->test), (double)(i + 1) / nrep, wb_timer_now_s() - r->t0_s);
    }
    wb_report_progress_end();
    remove_files(&c);
    int brc = wb_comm_barrier();
    rc = rc ? rc : brc;
    if (failed == WB_EVERIFY && !r->verify_failed) {
        r->verify_failed = 1;
        snprintf(r->first_failure, sizeof r->first_failure, "%s", p->status + strlen("failed: "));
    }
    free(c.buf);
    free(c.lat);
    return rc == failed ? 0 : rc;
}

int64_t wb_io_fit_room(int64_t size, int64_t room)
{
    return size > room ? (room > WB_IO_RAND_BYTES ? room : WB_IO_RAND_BYTES) : size;
}

int wb_io_size_for(struct wb_io_run *r, int d, int64_t *file_bytes)
{
    const struct wb_io_opts *k = r->k;
    if (k->size_bytes) {
        *file_bytes = k->size_bytes;
        return 0;
    }
    /* A probe: sequential writes for one repetition's share of --time, synced, on every rank at once. */
    struct wb_io_point p = {.test = WB_IO_WRITE, .d = d, .be = &wb_io_posix, .xfer_bytes = k->xfer_bytes, .reps = 1};
    struct rep_ctx c = {.r = r, .p = &p, .bad_off = -1};
    int nrep = r->o->common.warmup + r->o->common.reps;
    double per_rep_s = k->time_s / (nrep > 0 ? nrep : 1);
    /* On a shared folder every rank's file lands on the one filesystem. */
    int writers = r->dir[d].shared == 1 ? r->nranks : r->ppn_max;
    int64_t floor_b = k->floor_node_bytes / r->ppn_max, room = r->dir[d].free_bytes / (4 * writers);
    p.file_bytes = k->xfer_bytes;
    int rc = alloc_point(&p, &c);
    wb_io_file_path(r, d, "probe", r->rank, c.path, sizeof c.path);
    double t0 = wb_timer_now_s();
    int64_t done = 0;
    struct wb_io_file f = {.fd = -1};
    rc = rc ? rc : wb_comm_barrier();
    int e = rc ? 0 : wb_io_posix.open(&f, c.path, 1, 0, 0);
    while (rc == 0 && !e && wb_timer_now_s() - t0 < per_rep_s && done + k->xfer_bytes <= room) {
        wb_io_fill(r, c.buf, k->xfer_bytes, 1, done);
        e = wb_io_posix.xfer(&f, 1, c.buf, k->xfer_bytes, done);
        done += k->xfer_bytes;
    }
    e = e ? e : wb_io_posix.sync_fn(&f);
    wb_io_posix.close(&f);
    fail(&c, e, done);
    rc = rc ? rc : agree_rep(&c, c.path);
    double mine = (double)done / fmax(wb_timer_now_s() - t0, 1e-6) * per_rep_s, all = 0;
    unlink(c.path);
    rc = rc ? rc : wb_comm_min_f64(mine, &all);
    int64_t size = (int64_t)all / k->xfer_bytes * k->xfer_bytes;
    size = size < floor_b ? floor_b : size;
    *file_bytes = wb_io_fit_room(size, room);
    wb_io_point_free(&p);
    free(c.buf);
    free(c.lat);
    return rc;
}
