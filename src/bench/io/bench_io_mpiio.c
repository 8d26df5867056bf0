/* io's MPI-IO backends: one shared file, each rank at its own offsets, with independent
 * (MPI_File_write_at) or collective (MPI_File_write_at_all) calls; MPI_File_sync makes it durable. */
#include <errno.h>
#include <limits.h>
#include <mpi.h>

#include "bench/io/bench_io_int.h"
#include "par/comm.h"

/* An errno for an MPI-IO error class, so a full disk reads as one. */
static int mpi_errno(int mpi_rc)
{
    int cls = 0;
    if (mpi_rc == MPI_SUCCESS)
        return 0;
    MPI_Error_class(mpi_rc, &cls);
    return cls == MPI_ERR_NO_SPACE ? ENOSPC : cls == MPI_ERR_QUOTA ? EDQUOT : cls == MPI_ERR_NO_SUCH_FILE ? ENOENT
         : cls == MPI_ERR_ACCESS ? EACCES : cls == MPI_ERR_READ_ONLY ? EROFS : EIO;
}

static int mp_open(struct wb_io_file *f, const char *path, int write, int64_t total_bytes, int direct)
{
    (void)total_bytes;
    (void)direct;
    f->direct = 0;
    int mode = write ? MPI_MODE_WRONLY | MPI_MODE_CREATE : MPI_MODE_RDONLY;
    /* A file's error handler is MPI_ERRORS_RETURN unless set otherwise: each call's code is checked. */
    return mpi_errno(MPI_File_open(wb_comm_world(), path, mode, MPI_INFO_NULL, &f->mf));
}

static int xfer(struct wb_io_file *f, int write, void *buf, int64_t bytes, int64_t offset, int coll)
{
    MPI_Status st;
    int rc;
    /* Counts are int; --block is at most 1 GiB. */
    if (bytes > INT_MAX)
        return EFBIG;
    if (write)
        rc = coll ? MPI_File_write_at_all(f->mf, offset, buf, (int)bytes, MPI_BYTE, &st)
                  : MPI_File_write_at(f->mf, offset, buf, (int)bytes, MPI_BYTE, &st);
    else
        rc = coll ? MPI_File_read_at_all(f->mf, offset, buf, (int)bytes, MPI_BYTE, &st)
                  : MPI_File_read_at(f->mf, offset, buf, (int)bytes, MPI_BYTE, &st);
    int got = 0;
    if (rc == MPI_SUCCESS && MPI_Get_count(&st, MPI_BYTE, &got) == MPI_SUCCESS && got != (int)bytes)
        return write ? ENOSPC : EIO;
    return mpi_errno(rc);
}

static int indep_xfer(struct wb_io_file *f, int write, void *buf, int64_t bytes, int64_t offset)
{
    return xfer(f, write, buf, bytes, offset, 0);
}

static int coll_xfer(struct wb_io_file *f, int write, void *buf, int64_t bytes, int64_t offset)
{
    return xfer(f, write, buf, bytes, offset, 1);
}

static int mp_sync(struct wb_io_file *f) { return mpi_errno(MPI_File_sync(f->mf)); }

static int mp_close(struct wb_io_file *f) { return f->mf != MPI_FILE_NULL ? mpi_errno(MPI_File_close(&f->mf)) : 0; }

const struct wb_io_backend wb_io_mpiio_indep = {"mpiio-indep", "fsync", mp_open, indep_xfer, mp_sync, mp_close};
const struct wb_io_backend wb_io_mpiio_coll = {"mpiio-coll", "fsync", mp_open, coll_xfer, mp_sync, mp_close};
