/* io's folders: the checks before anything is written (each a one-line usage error), a killed run's
 * leftovers, the run folder with its marker, whether a folder is shared, and what it is stored on. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "bench/io/bench_io_int.h"
#include "bench/options.h"
#include "core/error.h"
#include "core/report.h"
#include "core/safeio.h"
#include "core/sysfs.h"
#include "par/comm.h"

void wb_io_file_path(const struct wb_io_run *r, int d, const char *name, int rank, char *out, size_t cap)
{
    if (rank >= 0)
        snprintf(out, cap, "%s/" WB_IO_FILE_PREFIX "%s-r%d.dat", r->dir[d].run, name, rank);
    else
        snprintf(out, cap, "%s/" WB_IO_FILE_PREFIX "%s.dat", r->dir[d].run, name);
}

/* The bad-input checks of one folder on this rank: 0 or WB_EUSAGE with one line. */
static int check_dir(struct wb_io_run *r, struct wb_io_dir *d)
{
    const char *host = wb_comm_hostname(r->rank);
    struct stat st;
    struct statvfs vfs;
    struct statfs fs;
    if (stat(d->given, &st) != 0)
        return wb_error_set(WB_EUSAGE, "--dir %s: %s on %s; create the folder or give another", d->given,
                            errno == ENOENT ? "no such folder" : strerror(errno), host);
    if (!S_ISDIR(st.st_mode))
        return wb_error_set(WB_EUSAGE, "--dir %s: not a folder on %s; give a folder", d->given, host);
    if (statvfs(d->given, &vfs) != 0 || statfs(d->given, &fs) != 0)
        return wb_error_set(WB_EUSAGE, "--dir %s: cannot read its filesystem on %s: %s", d->given, host,
                            strerror(errno));
    if ((vfs.f_flag & ST_RDONLY) || access(d->given, W_OK | X_OK) != 0)
        return wb_error_set(WB_EUSAGE, "--dir %s: read-only on %s (%s); give a folder this user can write",
                            d->given, host, (vfs.f_flag & ST_RDONLY) ? "a read-only mount" : "no write permission");
    d->memory = fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC;
    if (d->memory && !r->k->allow_memory)
        return wb_error_set(WB_EUSAGE, "--dir %s: on %s in memory on %s, which measures RAM, not storage; give a "
                            "folder on a disk, or add --allow-memory", d->given,
                            fs.f_type == TMPFS_MAGIC ? "tmpfs" : "ramfs", host);
    d->free_bytes = (int64_t)vfs.f_bavail * (int64_t)vfs.f_frsize;
    double need = wb_io_opts_storage_bytes(r->o, 0, wb_comm_node_ranks(r->node[r->rank]), r->ppn_max);
    if ((double)d->free_bytes < need)
        return wb_error_set(WB_EUSAGE, "--dir %s: %.0f MB free on %s, the run needs about %.0f MB; free some space "
                            "or give a smaller --size", d->given, (double)d->free_bytes / 1e6, host,
                            need / 1e6);
    return 0;
}

/* A folder shared between the nodes holds every rank's files on one filesystem: all nodes' needs together
 * against its free space, the least any rank reads. Collective, agreed. */
static int check_shared_room(const struct wb_io_run *r, const struct wb_io_dir *d)
{
    if (d->shared != 1)
        return 0;
    double need = 0, free_b = (double)d->free_bytes;
    int rc = wb_comm_min_f64(free_b, &free_b);
    /* Without --size the run sizes each file to the room it shares (wb_io_size_for): need what that gives. */
    int64_t room = (int64_t)free_b / (4 * r->nranks), floor_b = r->k->floor_node_bytes / r->ppn_max;
    int64_t fit = r->k->size_bytes ? 0 : wb_io_fit_room(floor_b, room);
    for (int n = 0; n < r->nnodes; n++)
        need += wb_io_opts_storage_bytes(r->o, fit, wb_comm_node_ranks(n), r->ppn_max);
    if (rc == 0 && free_b < need)
        rc = wb_error_set(WB_EUSAGE, "--dir %s: one folder shared by %d nodes, %.0f MB free, the %d ranks together "
                          "need about %.0f MB; free some space or give a smaller --size", d->given, r->nnodes,
                          free_b / 1e6, r->nranks, need / 1e6);
    return wb_comm_agree(rc);
}

/* 1 when name in folder dir is a run folder a killed wulfbench io left: a real folder whose marker
 * starts with the magic line and whose lock no live run holds. */
static int is_orphan(const char *path)
{
    char marker[WB_IO_PATH_CAP + 16], text[64] = "";
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return 0;
    snprintf(marker, sizeof marker, "%s/" WB_IO_MARKER, path);
    int fd = open(marker, O_RDONLY | O_NOFOLLOW);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, text, sizeof text - 1);
    int ours = n > 0 && !strncmp(text, WB_IO_MAGIC, strlen(WB_IO_MAGIC));
    int free_lock = ours && flock(fd, LOCK_EX | LOCK_NB) == 0;
    close(fd);
    return free_lock;
}

/* Remove the wb-io-* files of an orphaned run folder, then its marker and the folder; anything else
 * in it stays, and so does the folder. */
static void remove_orphan(const char *path)
{
    DIR *dp = opendir(path);
    int removed = 0, others = 0;
    struct dirent *e;
    while (dp && (e = readdir(dp))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, WB_IO_MARKER))
            continue;
        struct stat st;
        int mine = (!strncmp(e->d_name, WB_IO_FILE_PREFIX, strlen(WB_IO_FILE_PREFIX)) || !strcmp(e->d_name, "token")) &&
                   fstatat(dirfd(dp), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode);
        if (mine && unlinkat(dirfd(dp), e->d_name, 0) == 0)
            removed++;
        else if (!mine)
            others++;
    }
    if (dp)
        closedir(dp);
    char marker[WB_IO_PATH_CAP + 16];
    snprintf(marker, sizeof marker, "%s/" WB_IO_MARKER, path);
    if (!others)
        unlink(marker);
    if (others || rmdir(path) != 0)
        wb_report_warn("io: left %s: it holds %d file%s wulfbench io did not make", path, others, others == 1 ? "" : "s");
    else
        wb_report_warn("io: removed %s and its %d test file%s, left by a run that was killed", path, removed,
                       removed == 1 ? "" : "s");
}

static void clean_orphans(const struct wb_io_run *r, const struct wb_io_dir *d)
{
    DIR *dp = opendir(d->given);
    struct dirent *e;
    char path[WB_IO_PATH_CAP];
    while (dp && (e = readdir(dp))) {
        if (strncmp(e->d_name, WB_IO_RUN_PREFIX, strlen(WB_IO_RUN_PREFIX)) ||
            !strcmp(e->d_name + strlen(WB_IO_RUN_PREFIX), r->runid))
            continue;
        snprintf(path, sizeof path, "%s/%s", d->given, e->d_name);
        if (is_orphan(path))
            remove_orphan(path);
    }
    if (dp)
        closedir(dp);
}

/* Make this node's run folder and its marker, and hold the marker's lock. 0 or WB_EIO. */
static int make_run_dir(const struct wb_io_run *r, struct wb_io_dir *d)
{
    char marker[WB_IO_PATH_CAP + 16], text[160];
    if (mkdir(d->run, 0755) != 0)
        return wb_error_set(WB_EIO, "io: cannot make %s on %s: %s", d->run, wb_comm_hostname(r->rank), strerror(errno));
    snprintf(marker, sizeof marker, "%s/" WB_IO_MARKER, d->run);
    d->marker_fd = open(marker, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
    int len = snprintf(text, sizeof text, WB_IO_MAGIC "%s host %s pid %ld\n", r->runid, wb_comm_hostname(r->rank),
                       (long)getpid());
    if (d->marker_fd < 0 || write(d->marker_fd, text, (size_t)len) != len || flock(d->marker_fd, LOCK_SH) != 0)
        return wb_error_set(WB_EIO, "io: cannot write %s on %s: %s", marker, wb_comm_hostname(r->rank), strerror(errno));
    d->leader = 1;
    return 0;
}

/* A leader off rank 0's node: 1 when rank 0's token is in the same run folder (the folder is shared). */
static int find_token(const struct wb_io_run *r, struct wb_io_dir *d)
{
    char path[WB_IO_PATH_CAP + 16];
    snprintf(path, sizeof path, "%s/token", d->run);
    int ok = wb_safeio_token_holds(path, r->runid);
    if (ok) {
        snprintf(path, sizeof path, "%s/" WB_IO_MARKER, d->run);
        d->marker_fd = open(path, O_RDONLY | O_NOFOLLOW);
        if (d->marker_fd >= 0)
            flock(d->marker_fd, LOCK_SH);
    }
    return ok;
}

static int write_token(struct wb_io_dir *d, const char *runid)
{
    char path[WB_IO_PATH_CAP + 16];
    snprintf(path, sizeof path, "%s/token", d->run);
    return wb_safeio_token_write(path, runid);
}

/* The run folder of d on every rank, and d->shared agreed. Collective. */
static int setup_run_dir(struct wb_io_run *r, struct wb_io_dir *d)
{
    snprintf(d->run, sizeof d->run, "%s/" WB_IO_RUN_PREFIX "%s", d->given, r->runid);
    d->marker_fd = -1;
    int rc = 0, found = 1;
    if (r->rank == 0) {
        clean_orphans(r, d);
        rc = make_run_dir(r, d);
        rc = rc ? rc : write_token(d, r->runid);
    }
    if ((rc = wb_comm_agree(rc)))
        return rc;
    if (r->node_leader && r->node[r->rank] != r->node[0]) {
        found = find_token(r, d);
        if (!found) {
            clean_orphans(r, d);
            rc = make_run_dir(r, d);
        }
    }
    if ((rc = wb_comm_agree(rc)))
        return rc;
    double all = 1;
    rc = wb_comm_min_f64(found, &all);
    d->shared = r->nnodes == 1 ? -1 : all > 0;
    return rc;
}

/* The mount under which path lies, from /proc/self/mountinfo: the longest mount point that holds it. */
static void read_mount(const char *path, struct wb_result_io_device *dev, char *majmin, size_t cap)
{
    FILE *f = wb_sysfs_open("/proc/self/mountinfo");
    char line[4096];
    size_t best = 0;
    while (f && fgets(line, sizeof line, f)) {
        char mm[32], mnt[1024], opts[256], fstype[32], src[128];
        const char *dash = strstr(line, " - ");
        if (!dash || sscanf(line, "%*s %*s %31s %*s %1023s %255s", mm, mnt, opts) != 3 ||
            sscanf(dash + 3, "%31s %127s", fstype, src) != 2)
            continue;
        /* Blanks in a mount point are written \040. */
        for (char *p = strstr(mnt, "\\040"); p; p = strstr(p, "\\040")) {
            *p = ' ';
            memmove(p + 1, p + 4, strlen(p + 4) + 1);
        }
        size_t n = strlen(mnt);
        int under = !strcmp(mnt, "/") || (!strncmp(path, mnt, n) && (path[n] == '/' || path[n] == '\0'));
        if (under && n >= best) {
            best = n;
            snprintf(dev->fs_type, sizeof dev->fs_type, "%s", fstype);
            snprintf(dev->mount_options, sizeof dev->mount_options, "%s", opts);
            snprintf(dev->device, sizeof dev->device, "%s", src);
            snprintf(majmin, cap, "%s", mm);
        }
    }
    if (f)
        fclose(f);
}

/* Model, kind and rotational from /sys/dev/block/MAJ:MIN (its disk when it is a partition). */
static void read_block(const char *majmin, struct wb_result_io_device *dev)
{
    char base[96], rel[160], real[1024] = "";
    snprintf(base, sizeof base, "/sys/dev/block/%s", majmin);
    snprintf(rel, sizeof rel, "%s/partition", base);
    if (wb_sysfs_exists(rel))
        snprintf(base + strlen(base), sizeof base - strlen(base), "/..");
    wb_sysfs_resolve(base, real, sizeof real);
    const char *name = strrchr(real, '/') ? strrchr(real, '/') + 1 : "";
#define SYS(leaf, out) (snprintf(rel, sizeof rel, "%s/%s", base, leaf), wb_sysfs_line(rel, out, sizeof out))
    snprintf(rel, sizeof rel, "%s/queue/rotational", base);
    int64_t rot = wb_sysfs_i64(rel);
    dev->rotational = rot == 0 || rot == 1 ? (int32_t)rot : -1;
    if (SYS("device/model", dev->model) != 0 && !strncmp(name, "mmcblk", 6))
        SYS("device/name", dev->model);
    if (!strncmp(name, "loop", 4) && SYS("loop/backing_file", dev->model) == 0)
        memmove(dev->model + 6, dev->model, sizeof dev->model - 7), memcpy(dev->model, "loop: ", 6);
    if (!strncmp(name, "mmcblk", 6)) {
        SYS("device/name", dev->sd_name);
        SYS("device/type", dev->sd_type);
        SYS("device/date", dev->sd_date);
    }
#undef SYS
    const char *kind = strstr(real, "/usb") ? "usb" : !strncmp(name, "mmcblk", 6) ? "sd"
                     : !strncmp(name, "nvme", 4) ? "nvme" : !strncmp(name, "loop", 4) || !*name ? "unknown"
                     : dev->rotational == 1 ? "hdd" : dev->rotational == 0 ? "ssd" : "unknown";
    snprintf(dev->kind, sizeof dev->kind, "%s", kind);
}

/* This node's row for folder d. Local. */
static void read_device(const struct wb_io_run *r, struct wb_io_dir *d)
{
    struct wb_result_io_device *dev = &d->dev;
    char majmin[32] = "", *real = realpath(d->given, NULL);
    memset(dev, 0, sizeof *dev);
    dev->node = r->node[r->rank];
    snprintf(dev->dir, sizeof dev->dir, "%s", d->given);
    read_mount(real ? real : d->given, dev, majmin, sizeof majmin);
    free(real);
    snprintf(dev->kind, sizeof dev->kind, "unknown");
    dev->rotational = -1;
    const char *t = dev->fs_type;
    if (!strcmp(t, "tmpfs") || !strcmp(t, "ramfs"))
        snprintf(dev->kind, sizeof dev->kind, "memory");
    else if (!strncmp(t, "nfs", 3) || !strcmp(t, "cifs") || !strcmp(t, "smb3") || !strncmp(t, "fuse.sshfs", 10))
        snprintf(dev->kind, sizeof dev->kind, "network");
    else if (majmin[0] && strncmp(majmin, "0:", 2))
        read_block(majmin, dev);
    if (!strncmp(t, "nfs", 3)) {
        snprintf(dev->nfs_server, sizeof dev->nfs_server, "%.*s", (int)strcspn(dev->device, ":"), dev->device);
        /* The export's sync or async is the server's; a client cannot read it. */
        snprintf(dev->export_sync, sizeof dev->export_sync, "unknown");
    }
    snprintf(d->fs_type, sizeof d->fs_type, "%s", t);
    dev->free_bytes = d->free_bytes;
    dev->mem_bytes = wb_sysfs_meminfo_bytes("MemTotal");
}

int wb_io_dirs_prepare(struct wb_io_run *r)
{
    int rc = 0;
    for (int i = 0; i < r->ndirs && rc == 0; i++)
        rc = check_dir(r, &r->dir[i]);
    if ((rc = wb_comm_agree(rc)))
        return rc;
    for (int i = 0; i < r->ndirs && rc == 0; i++) {
        rc = setup_run_dir(r, &r->dir[i]);
        read_device(r, &r->dir[i]);
        r->dir[i].dev.shared = r->dir[i].shared;
    }
    for (int i = 0; i < r->ndirs && rc == 0; i++)
        rc = check_shared_room(r, &r->dir[i]);
    /* Nothing is left behind by a run refused here: the run folders made so far go. */
    if (rc)
        wb_io_dirs_finish(r);
    return rc;
}

void wb_io_dirs_finish(struct wb_io_run *r)
{
    /* Every rank lets go of its marker before the leader removes it: a FUSE share (sshfs) keeps a file
     * that is still open somewhere as a hidden one, and the folder then cannot be removed. */
    for (int i = 0; i < r->ndirs; i++) {
        if (r->dir[i].marker_fd >= 0)
            close(r->dir[i].marker_fd);
        r->dir[i].marker_fd = -1;
    }
    wb_comm_barrier();
    for (int i = 0; i < r->ndirs; i++) {
        struct wb_io_dir *d = &r->dir[i];
        char path[WB_IO_PATH_CAP + 16];
        if (!d->leader)
            continue;
        snprintf(path, sizeof path, "%s/token", d->run);
        unlink(path);
        snprintf(path, sizeof path, "%s/" WB_IO_MARKER, d->run);
        unlink(path);
        if (rmdir(d->run) != 0)
            wb_report_warn("io: could not remove %s: %s", d->run, strerror(errno));
    }
}
