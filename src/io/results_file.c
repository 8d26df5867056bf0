#define _GNU_SOURCE
#include "io/results_int.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "core/safeio.h"
#include "core/timer.h"

/* HDF5 is not thread-safe and the watchdog thread may end the file (wb_results_abandon): every
 * HDF5 call runs under this lock, which is never held across an MPI call. */
static pthread_mutex_t h5_lock = PTHREAD_MUTEX_INITIALIZER;
/* The main thread takes it through wb_results_lock, the watchdog's thread through wb_results_lock_within
 * (NaN here): the time the main thread holds it is the run's writing. */
static double locked_at_s = NAN;

void wb_results_lock(void)
{
    pthread_mutex_lock(&h5_lock);
    locked_at_s = wb_timer_now_s();
}

void wb_results_unlock(void)
{
    if (!isnan(locked_at_s))
        wb_timer_part_add(WB_TIMER_WRITE, wb_timer_now_s() - locked_at_s);
    pthread_mutex_unlock(&h5_lock);
}

int wb_results_lock_within(double wait_s)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    long ns = until.tv_nsec + (long)((wait_s - (double)(time_t)wait_s) * 1e9);
    until.tv_sec += (time_t)wait_s + ns / 1000000000L;
    until.tv_nsec = ns % 1000000000L;
    if (pthread_mutex_timedlock(&h5_lock, &until) != 0)
        return 0;
    locked_at_s = NAN;
    return 1;
}

static herr_t find_errno(unsigned n, const H5E_error2_t *e, void *data)
{
    const char *p = e->desc ? strstr(e->desc, "errno = ") : NULL;
    if (p && !*(int *)data)
        *(int *)data = atoi(p + 8);
    return 0;
}

/* The system error behind the HDF5 call that just failed (its drivers write "errno = N" on the stack). */
int wb_results_h5_errno(void)
{
    int e = 0, saved = errno;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, find_errno, &e);
    return e ? e : saved;
}

const char *wb_results_why(int e)
{
    static char buf[128];
    if (e == ENOSPC || e == EDQUOT)
        snprintf(buf, sizeof buf, "%s (the disk is full)", strerror(e));
    else
        snprintf(buf, sizeof buf, "%s", e ? strerror(e) : "HDF5 error");
    return buf;
}

int wb_results_h5fail(struct wb_results *r, const char *what, const char *name)
{
    int e = wb_results_h5_errno();
    if (!r->err)
        r->err = wb_error_set(WB_EIO, "%s: could not write %s '%s': %s", r->partial, what, name, wb_results_why(e));
    return r->err;
}

/* Creates results/ for the default name; a user's -o folder must exist already. */
static int default_path(char *out, size_t cap)
{
    char host[64] = "host";
    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "host");
    host[strcspn(host, ".")] = '\0';
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    if (mkdir("results", 0777) != 0 && errno != EEXIST)
        return wb_error_set(WB_EIO, "cannot create folder 'results': %s; give -o PATH", strerror(errno));
    snprintf(out, cap, "results/wulfbench-%s-%s.h5", host, stamp);
    return 0;
}

/* Why a file could not be created in its folder: the target's folder, not the current one. */
static const char *create_hint(const char *file, int e)
{
    static char buf[PATH_CAP + 64];
    char dir[PATH_CAP];
    struct stat st;
    wb_safeio_dirname(file, dir, sizeof dir);
    if (stat(dir, &st) != 0)
        snprintf(buf, sizeof buf, "the folder %s does not exist", dir);
    else if (!S_ISDIR(st.st_mode))
        snprintf(buf, sizeof buf, "%s is not a folder", dir);
    else if (access(dir, W_OK) != 0)
        snprintf(buf, sizeof buf, "the folder %s is not writable", dir);
    else
        snprintf(buf, sizeof buf, "%s", wb_results_why(e));
    return buf;
}

/* Property lists that keep a killed file readable: no file-space reuse, so raw data never lands on
 * metadata that the last flushed state still points to, and no metadata evicted between flushes. */
static hid_t create_plist(void)
{
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    if (fcpl >= 0 && H5Pset_file_space_strategy(fcpl, H5F_FSPACE_STRATEGY_NONE, 0, 1) < 0) {
        H5Pclose(fcpl);
        fcpl = H5P_DEFAULT;
    }
    return fcpl;
}

static hid_t access_plist(void)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5AC_cache_config_t mdc = {.version = H5AC__CURR_CACHE_CONFIG_VERSION};
    if (fapl >= 0 && H5Pget_mdc_config(fapl, &mdc) >= 0) {
        mdc.evictions_enabled = 0;
        mdc.incr_mode = H5C_incr__off;
        mdc.flash_incr_mode = H5C_flash_incr__off;
        mdc.decr_mode = H5C_decr__off;
        mdc.set_initial_size = 1;
        mdc.initial_size = 16 << 20;
        mdc.max_size = 32 << 20;
        H5Pset_mdc_config(fapl, &mdc);
    }
    return fapl;
}

int wb_results_create(struct wb_results *r, const char *path, int force)
{
    int rc = 0;
    if (path)
        snprintf(r->path, sizeof r->path, "%s", path);
    else
        rc = default_path(r->path, sizeof r->path);
    if (rc)
        return rc;
    snprintf(r->partial, sizeof r->partial, "%s.partial", r->path);
    /* Links are refused with or without --force: either name could point at a file we must not touch. */
    rc = wb_safeio_check_target("-o", r->path);
    rc = rc ? rc : wb_safeio_check_target("-o", r->partial);
    if (rc)
        return rc;
    struct stat st;
    if (!force && lstat(r->path, &st) == 0)
        return wb_error_set(WB_EEXIST, "%s exists; choose another -o or add --force to overwrite it", r->path);
    if (lstat(r->partial, &st) == 0) {
        if (!force)
            return wb_error_set(WB_EEXIST, "%s exists (an interrupted run?); read it with the analysis, move it "
                                           "away, or add --force to overwrite it", r->partial);
        if (unlink(r->partial) != 0)
            return wb_error_set(WB_EIO, "cannot remove %s: %s", r->partial, strerror(errno));
    }
    /* H5F_ACC_EXCL is O_CREAT|O_EXCL: a link planted after the checks above is not followed. */
    hid_t fcpl = create_plist(), fapl = access_plist();
    errno = 0;
    r->file = H5Fcreate(r->partial, H5F_ACC_EXCL, fcpl, fapl);
    int e = wb_results_h5_errno();
    if (fcpl != H5P_DEFAULT)
        H5Pclose(fcpl);
    H5Pclose(fapl);
    if (r->file < 0) {
        /* O_EXCL proved nothing was there before: whatever HDF5 left (a 0-byte file on a full disk) is ours. */
        if (lstat(r->partial, &st) == 0 && S_ISREG(st.st_mode))
            unlink(r->partial);
        return wb_error_set(WB_EIO, "cannot create %s: %s", r->partial, create_hint(r->partial, e));
    }
    /* HDF5 writes the superblock only when it flushes: until then a killed run leaves a file that
     * does not open, so flush at once (a window of microseconds remains, inside the create). */
    if (H5Fflush(r->file, H5F_SCOPE_GLOBAL) < 0)
        return wb_results_h5fail(r, "file", "/");
    return 0;
}

/* The file's descriptor (sec2 driver), or -1. */
static int file_fd(struct wb_results *r)
{
    int *fd = NULL;
    return H5Fget_vfd_handle(r->file, H5P_DEFAULT, (void **)&fd) >= 0 && fd ? *fd : -1;
}

/* After a write error, point HDF5's descriptor at a scratch file, so closing cannot overwrite the
 * metadata of the last flush with pieces of a half-written point; the file stays as last flushed. */
void wb_results_freeze(struct wb_results *r)
{
    if (r->frozen || r->file < 0)
        return;
    int fd = file_fd(r), sink = memfd_create("wulfbench-discard", 0);
    if (sink < 0)
        sink = open("/dev/null", O_RDWR);
    if (fd >= 0 && sink >= 0 && dup2(sink, fd) >= 0)
        r->frozen = 1;
    if (sink >= 0)
        close(sink);
}

/* Make sure the blocks the next flush writes exist, so a full disk fails here, before anything is
 * written, and not halfway through the metadata. */
int wb_results_reserve(struct wb_results *r)
{
    haddr_t eoa = 0;
    int fd = file_fd(r);
    if (fd < 0 || H5Fget_eoa(r->file, &eoa) < 0)
        return 0;
    if ((off_t)eoa <= r->reserved)
        return 0;
    /* fallocate, not posix_fallocate: where the file system cannot reserve, glibc would write every block. */
    if (fallocate(fd, 0, r->reserved, (off_t)eoa - r->reserved) == 0) {
        r->reserved = (off_t)eoa;
        return 0;
    }
    int e = errno;
    if (e == EOPNOTSUPP || e == EINVAL || e == ENOSYS)
        return 0;
    return r->err ? r->err : (r->err = wb_error_set(WB_EIO, "%s: cannot write: %s", r->partial, wb_results_why(e)));
}


void wb_results_timeline(struct wb_results *r, double t_main_utc, double t_run_start_utc, double t_run_end_utc)
{
    if (!r || r->rank != 0)
        return;
    r->t_main_utc = t_main_utc;
    r->t_run_start_utc = t_run_start_utc;
    r->t_run_end_utc = t_run_end_utc;
}

void wb_results_write_own(struct wb_results *r)
{
    if (r->rss_max_bytes > 0) {
        int64_t q = r->rss_max_rank;
        wb_results_attr_held(r, "/", "peak_rss_rank0_bytes", H5T_NATIVE_DOUBLE, &r->rss_rank0_bytes);
        wb_results_attr_held(r, "/", "peak_rss_max_bytes", H5T_NATIVE_DOUBLE, &r->rss_max_bytes);
        wb_results_attr_held(r, "/", "peak_rss_max_rank", H5T_NATIVE_INT64, &q);
    }
    /* Only a close that main's timeline reached: the watchdog's close has neither. */
    if (!(r->t_main_utc > 0 && r->t_close_utc > 0))
        return;
    const struct {
        const char *name;
        const double *v;
    } a[] = {{"t_main_utc", &r->t_main_utc}, {"t_run_start_utc", &r->t_run_start_utc},
             {"t_run_end_utc", &r->t_run_end_utc}, {"t_close_utc", &r->t_close_utc},
             {"own_plan_s", &r->own_s[WB_TIMER_PLAN]}, {"own_clock_align_s", &r->own_s[WB_TIMER_ALIGN]},
             {"own_write_s", &r->own_s[WB_TIMER_WRITE]}};
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
        wb_results_attr_held(r, "/", a[i].name, H5T_NATIVE_DOUBLE, a[i].v);
}
