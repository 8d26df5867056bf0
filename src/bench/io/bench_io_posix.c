/* io's posix backend: open(2), pwrite/pread in full, fdatasync, close. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "bench/io/bench_io_int.h"

static int px_open(struct wb_io_file *f, const char *path, int write, int64_t total_bytes, int direct)
{
    (void)total_bytes;
    int flags = (write ? O_WRONLY | O_CREAT : O_RDONLY) | O_NOFOLLOW | (direct ? O_DIRECT : 0);
    f->direct = direct;
    f->fd = open(path, flags, 0644);
    return f->fd < 0 ? errno : 0;
}

static int px_xfer(struct wb_io_file *f, int write, void *buf, int64_t bytes, int64_t offset)
{
    char *p = buf;
    while (bytes > 0) {
        ssize_t n = write ? pwrite(f->fd, p, (size_t)bytes, (off_t)offset) : pread(f->fd, p, (size_t)bytes, (off_t)offset);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno;
        /* A read past the end: the file is shorter than it should be. */
        if (n == 0)
            return EIO;
        p += n;
        bytes -= n;
        offset += n;
    }
    return 0;
}

static int px_sync(struct wb_io_file *f) { return fdatasync(f->fd) == 0 ? 0 : errno; }

static int px_close(struct wb_io_file *f)
{
    int e = f->fd >= 0 && close(f->fd) != 0 ? errno : 0;
    f->fd = -1;
    return e;
}

const struct wb_io_backend wb_io_posix = {"posix", "fdatasync", px_open, px_xfer, px_sync, px_close};
