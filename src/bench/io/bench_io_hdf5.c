/* io's hdf5 backend: a file of one dataset per rank through io/results's HDF5 writer; its sync is an
 * explicit fsync of the file after H5Fflush, which on HDF5's default driver does not reach the disk. */
#include <errno.h>

#include "bench/io/bench_io_int.h"

static int h5_open(struct wb_io_file *f, const char *path, int write, int64_t total_bytes, int direct)
{
    (void)direct;
    f->direct = 0;
    return write ? wb_h5data_create(&f->h5, path, total_bytes) : EINVAL;
}

static int h5_xfer(struct wb_io_file *f, int write, void *buf, int64_t bytes, int64_t offset)
{
    return write ? wb_h5data_write(f->h5, buf, bytes, offset) : EINVAL;
}

static int h5_sync(struct wb_io_file *f) { return wb_h5data_fsync(f->h5); }

static int h5_close(struct wb_io_file *f) { return wb_h5data_close(&f->h5); }

const struct wb_io_backend wb_io_hdf5 = {"hdf5", "fsync", h5_open, h5_xfer, h5_sync, h5_close};
