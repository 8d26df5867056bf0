/* results: io's /io/devices table, and the HDF5 file its hdf5 test writes (the one place besides the
 * result file that HDF5 writes). */
#define _POSIX_C_SOURCE 200809L
#include "io/results_int.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#define STR(t, m)                                                                           \
    do {                                                                                    \
        hid_t s_ = wb_results_fixed_string(sizeof((struct wb_result_io_device *)0)->m);     \
        H5Tinsert(t, #m, offsetof(struct wb_result_io_device, m), s_);                      \
        H5Tclose(s_);                                                                       \
    } while (0)
#define NUM(t, m, ht) H5Tinsert(t, #m, offsetof(struct wb_result_io_device, m), ht)

int wb_results_write_io_devices(struct wb_results *r, const char *dset, const struct wb_result_io_device *rows,
                                size_t n)
{
    if (r->rank != 0 || r->err)
        return r->err;
    wb_results_lock();
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof *rows);
    NUM(t, node, H5T_NATIVE_INT32);
    STR(t, dir);
    STR(t, fs_type);
    STR(t, mount_options);
    STR(t, device);
    STR(t, model);
    STR(t, kind);
    NUM(t, rotational, H5T_NATIVE_INT32);
    STR(t, sd_name);
    STR(t, sd_type);
    STR(t, sd_date);
    STR(t, nfs_server);
    STR(t, export_sync);
    NUM(t, free_bytes, H5T_NATIVE_INT64);
    NUM(t, mem_bytes, H5T_NATIVE_INT64);
    NUM(t, shared, H5T_NATIVE_INT32);
    wb_results_unlock();
    uint64_t dims[1] = {n};
    int rc = wb_results_write_locked(r, dset, t, 1, dims, rows,
                                     "free_bytes bytes, mem_bytes bytes, rotational 1/0/-1, shared 1/0/-1");
    wb_results_lock();
    H5Tclose(t);
    wb_results_unlock();
    return rc;
}

struct wb_h5data {
    hid_t file, dset, space;
};

/* The errno behind the HDF5 call that failed, EIO when the stack holds none. */
static int h5_errno(void)
{
    int e = wb_results_h5_errno();
    return e ? e : EIO;
}

int wb_h5data_create(struct wb_h5data **out, const char *path, int64_t bytes)
{
    struct wb_h5data *h = calloc(1, sizeof *h);
    if (!h)
        return ENOMEM;
    h->file = h->dset = h->space = -1;
    wb_results_lock();
    hsize_t dims[1] = {(hsize_t)bytes};
    h->file = H5Fcreate(path, H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
    h->space = h->file >= 0 ? H5Screate_simple(1, dims, NULL) : -1;
    h->dset = h->space >= 0 ? H5Dcreate2(h->file, "data", H5T_NATIVE_UINT8, h->space, H5P_DEFAULT, H5P_DEFAULT,
                                         H5P_DEFAULT)
                            : -1;
    int e = h->dset < 0 ? h5_errno() : 0;
    wb_results_unlock();
    *out = h;
    return e;
}

int wb_h5data_write(struct wb_h5data *h, const void *buf, int64_t bytes, int64_t offset)
{
    hsize_t start[1] = {(hsize_t)offset}, count[1] = {(hsize_t)bytes};
    wb_results_lock();
    hid_t mem = H5Screate_simple(1, count, NULL);
    int ok = mem >= 0 && H5Sselect_hyperslab(h->space, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
             H5Dwrite(h->dset, H5T_NATIVE_UINT8, mem, h->space, H5P_DEFAULT, buf) >= 0;
    int e = ok ? 0 : h5_errno();
    if (mem >= 0)
        H5Sclose(mem);
    wb_results_unlock();
    return e;
}

int wb_h5data_fsync(struct wb_h5data *h)
{
    void *handle = NULL;
    wb_results_lock();
    int e = H5Fflush(h->file, H5F_SCOPE_LOCAL) < 0 ? h5_errno() : 0;
    if (e == 0 && H5Fget_vfd_handle(h->file, H5P_DEFAULT, &handle) < 0)
        e = h5_errno();
    wb_results_unlock();
    if (e == 0 && fsync(*(int *)handle) != 0)
        e = errno;
    return e;
}

int wb_h5data_close(struct wb_h5data **hp)
{
    struct wb_h5data *h = *hp;
    int e = 0;
    if (!h)
        return 0;
    wb_results_lock();
    if (h->dset >= 0 && H5Dclose(h->dset) < 0)
        e = h5_errno();
    if (h->space >= 0)
        H5Sclose(h->space);
    if (h->file >= 0 && H5Fclose(h->file) < 0 && !e)
        e = h5_errno();
    wb_results_unlock();
    free(h);
    *hp = NULL;
    return e;
}
