#define _POSIX_C_SOURCE 200809L
#include "results.h"

#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "comm.h"
#include "error.h"

#ifndef WB_VERSION
#define WB_VERSION "unknown"
#endif
#ifndef WB_GIT_REV
#define WB_GIT_REV "unknown"
#endif
#ifndef WB_CFLAGS
#define WB_CFLAGS "unknown"
#endif

#define PATH_CAP 4096

struct wb_results {
    hid_t file;             /* rank 0 only */
    int rank, nranks;
    int err;                /* first write error on rank 0, agreed at flush/close */
    int flushed;            /* points made durable so far */
    char path[PATH_CAP];
    char partial[PATH_CAP + 16];
    struct wb_host *hosts;  /* rank 0: every rank's facts */
};

static int h5fail(struct wb_results *r, const char *what, const char *name)
{
    if (!r->err)
        r->err = wb_error_set(WB_EIO, "%s: could not write %s '%s' (disk full or file removed?)", r->partial, what,
                              name);
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

static int create_file(struct wb_results *r, const char *path, int force)
{
    int rc = 0;
    if (path)
        snprintf(r->path, sizeof r->path, "%s", path);
    else
        rc = default_path(r->path, sizeof r->path);
    if (rc)
        return rc;
    snprintf(r->partial, sizeof r->partial, "%s.partial", r->path);
    struct stat st;
    if (!force && stat(r->path, &st) == 0)
        return wb_error_set(WB_EEXIST, "%s exists; choose another -o or add --force to overwrite it", r->path);
    if (!force && stat(r->partial, &st) == 0)
        return wb_error_set(WB_EEXIST, "%s exists (an interrupted run?); read it with the analysis, move it away, "
                                       "or add --force to overwrite it", r->partial);
    r->file = H5Fcreate(r->partial, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (r->file < 0) {
        const char *why = access(".", W_OK) != 0 ? "the folder is not writable" : "check the folder exists";
        return wb_error_set(WB_EIO, "cannot create %s: %s", r->partial, why);
    }
    return 0;
}

static hid_t open_obj(struct wb_results *r, const char *obj) { return H5Oopen(r->file, obj, H5P_DEFAULT); }

static int write_attr(struct wb_results *r, const char *obj, const char *name, hid_t type, const void *value)
{
    if (r->rank != 0 || r->err)
        return r->err;
    hid_t o = open_obj(r, obj);
    if (o < 0)
        return h5fail(r, "object", obj);
    if (H5Aexists(o, name) > 0)
        H5Adelete(o, name);
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(o, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    int ok = a >= 0 && H5Awrite(a, type, value) >= 0;
    if (a >= 0)
        H5Aclose(a);
    H5Sclose(space);
    H5Oclose(o);
    return ok ? 0 : h5fail(r, "attribute", name);
}

int wb_results_attr_str(struct wb_results *r, const char *obj, const char *name, const char *value)
{
    if (r->rank != 0)
        return 0;
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    const char *v = value ? value : "";
    int rc = write_attr(r, obj, name, t, &v);
    H5Tclose(t);
    return rc;
}

int wb_results_attr_i64(struct wb_results *r, const char *obj, const char *name, int64_t value)
{
    return write_attr(r, obj, name, H5T_NATIVE_INT64, &value);
}

int wb_results_attr_f64(struct wb_results *r, const char *obj, const char *name, double value)
{
    return write_attr(r, obj, name, H5T_NATIVE_DOUBLE, &value);
}

int wb_results_group(struct wb_results *r, const char *group)
{
    if (r->rank != 0 || r->err)
        return r->err;
    if (H5Lexists(r->file, group, H5P_DEFAULT) > 0)
        return 0;
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t g = H5Gcreate2(r->file, group, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    H5Pclose(lcpl);
    if (g < 0)
        return h5fail(r, "group", group);
    H5Gclose(g);
    return 0;
}

static int write_dset(struct wb_results *r, const char *dset, hid_t type, int rank, const uint64_t *dims,
                      const void *data, const char *units)
{
    if (r->rank != 0 || r->err)
        return r->err;
    hsize_t hd[3] = {0};
    for (int i = 0; i < rank && i < 3; i++)
        hd[i] = dims[i];
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t space = H5Screate_simple(rank, hd, NULL);
    hid_t d = H5Dcreate2(r->file, dset, type, space, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    size_t total = 1;
    for (int i = 0; i < rank; i++)
        total *= hd[i];
    int ok = d >= 0 && (total == 0 || H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
    if (d >= 0)
        H5Dclose(d);
    H5Sclose(space);
    H5Pclose(lcpl);
    if (!ok)
        return h5fail(r, "dataset", dset);
    return units ? wb_results_attr_str(r, dset, "units", units) : 0;
}

int wb_results_write_f64(struct wb_results *r, const char *dset, int rank, const uint64_t *dims,
                         const double *data, const char *units)
{
    return write_dset(r, dset, H5T_NATIVE_DOUBLE, rank, dims, data, units);
}

int wb_results_write_i64(struct wb_results *r, const char *dset, int rank, const uint64_t *dims,
                         const int64_t *data, const char *units)
{
    return write_dset(r, dset, H5T_NATIVE_INT64, rank, dims, data, units);
}

int wb_results_write_i32(struct wb_results *r, const char *dset, int rank, const uint64_t *dims,
                         const int32_t *data, const char *units)
{
    return write_dset(r, dset, H5T_NATIVE_INT32, rank, dims, data, units);
}

/* Gathers n values of elem bytes from each rank and writes [n, nranks] (or [nranks]). */
static int write_per_rank(struct wb_results *r, const char *dset, const void *local, size_t n, size_t elem,
                          MPI_Datatype mtype, hid_t htype, const char *units)
{
    char *all = NULL, *cols = NULL;
    int rc = 0;
    if (r->rank == 0) {
        all = malloc(n * elem * (size_t)r->nranks + 1);
        cols = malloc(n * elem * (size_t)r->nranks + 1);
        if (!all || !cols)
            rc = wb_error_set(WB_ENOMEM, "out of memory gathering %s", dset);
    }
    int mrc = wb_comm_check(MPI_Gather(local, (int)n, mtype, all, (int)n, mtype, 0, wb_comm_world()),
                            "MPI_Gather of results");
    if (mrc)
        rc = mrc;
    if (r->rank == 0 && rc == 0) {
        for (int q = 0; q < r->nranks; q++)
            for (size_t i = 0; i < n; i++)
                memcpy(cols + (i * (size_t)r->nranks + (size_t)q) * elem, all + ((size_t)q * n + i) * elem, elem);
        uint64_t dims[2] = {n, (uint64_t)r->nranks};
        rc = n == 1 ? write_dset(r, dset, htype, 1, dims + 1, cols, units)
                    : write_dset(r, dset, htype, 2, dims, cols, units);
    }
    free(all);
    free(cols);
    if (rc && !r->err)
        r->err = rc;
    return r->rank == 0 ? rc : mrc;
}

int wb_results_write_per_rank_f64(struct wb_results *r, const char *dset, const double *local, size_t n,
                                  const char *units)
{
    return write_per_rank(r, dset, local, n, sizeof(double), MPI_DOUBLE, H5T_NATIVE_DOUBLE, units);
}

int wb_results_write_per_rank_i64(struct wb_results *r, const char *dset, const int64_t *local, size_t n,
                                  const char *units)
{
    return write_per_rank(r, dset, local, n, sizeof(int64_t), MPI_INT64_T, H5T_NATIVE_INT64, units);
}

int wb_results_write_enum(struct wb_results *r, const char *dset, size_t n, const uint8_t *data,
                          const char *const *names, int nnames)
{
    if (r->rank != 0 || r->err)
        return r->err;
    hid_t t = H5Tenum_create(H5T_NATIVE_UINT8);
    for (int i = 0; i < nnames; i++) {
        uint8_t v = (uint8_t)i;
        H5Tenum_insert(t, names[i], &v);
    }
    uint64_t dims[1] = {n};
    int rc = write_dset(r, dset, t, 1, dims, data, "1");
    H5Tclose(t);
    return rc;
}

static hid_t fixed_string(size_t len)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, len);
    H5Tset_strpad(t, H5T_STR_NULLTERM);
    return t;
}

int wb_results_write_inputs(struct wb_results *r, const char *dset, const struct wb_result_input *rows, size_t n)
{
    if (r->rank != 0 || r->err)
        return r->err;
    hid_t name_t = fixed_string(sizeof rows->name);
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof *rows);
    H5Tinsert(t, "name", HOFFSET(struct wb_result_input, name), name_t);
    H5Tinsert(t, "sample_rate", HOFFSET(struct wb_result_input, sample_rate), H5T_NATIVE_INT32);
    H5Tinsert(t, "channels", HOFFSET(struct wb_result_input, channels), H5T_NATIVE_INT32);
    H5Tinsert(t, "bits", HOFFSET(struct wb_result_input, bits), H5T_NATIVE_INT32);
    H5Tinsert(t, "samples", HOFFSET(struct wb_result_input, samples), H5T_NATIVE_INT64);
    H5Tinsert(t, "bytes", HOFFSET(struct wb_result_input, bytes), H5T_NATIVE_INT64);
    H5Tinsert(t, "peak_hz", HOFFSET(struct wb_result_input, peak_hz), H5T_NATIVE_DOUBLE);
    uint64_t dims[1] = {n};
    int rc = write_dset(r, dset, t, 1, dims, rows, NULL);
    H5Tclose(t);
    H5Tclose(name_t);
    return rc;
}

int wb_results_write_health(struct wb_results *r, const char *dset, const struct wb_result_health *rows, size_t n)
{
    if (r->rank != 0 || r->err)
        return r->err;
    hid_t name_t = fixed_string(sizeof rows->hostname);
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof *rows);
    H5Tinsert(t, "node", HOFFSET(struct wb_result_health, node), H5T_NATIVE_INT32);
    H5Tinsert(t, "hostname", HOFFSET(struct wb_result_health, hostname), name_t);
    H5Tinsert(t, "temp_c_max", HOFFSET(struct wb_result_health, temp_c_max), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "throttled", HOFFSET(struct wb_result_health, throttled), H5T_NATIVE_INT32);
    H5Tinsert(t, "cpu_mhz_min", HOFFSET(struct wb_result_health, cpu_mhz_min), H5T_NATIVE_DOUBLE);
    uint64_t dims[1] = {n};
    int rc = write_dset(r, dset, t, 1, dims, rows,
                        "temp_c_max degC, throttled 1 yes 0 no -1 unknown, cpu_mhz_min MHz");
    H5Tclose(t);
    H5Tclose(name_t);
    return rc;
}

static hid_t host_type(void)
{
    hid_t name_t = fixed_string(sizeof ((struct wb_host *)0)->hostname);
    hid_t cpu_t = fixed_string(sizeof ((struct wb_host *)0)->cpu_model);
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(struct wb_host));
    H5Tinsert(t, "rank", HOFFSET(struct wb_host, rank), H5T_NATIVE_INT32);
    H5Tinsert(t, "node", HOFFSET(struct wb_host, node), H5T_NATIVE_INT32);
    H5Tinsert(t, "hostname", HOFFSET(struct wb_host, hostname), name_t);
    H5Tinsert(t, "cpu_model", HOFFSET(struct wb_host, cpu_model), cpu_t);
    H5Tinsert(t, "cores", HOFFSET(struct wb_host, cores), H5T_NATIVE_INT32);
    H5Tinsert(t, "mem_bytes", HOFFSET(struct wb_host, mem_bytes), H5T_NATIVE_INT64);
    H5Tinsert(t, "cpu_mhz", HOFFSET(struct wb_host, cpu_mhz), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "temp_c_start", HOFFSET(struct wb_host, temp_c_start), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "temp_c_end", HOFFSET(struct wb_host, temp_c_end), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "throttled", HOFFSET(struct wb_host, throttled), H5T_NATIVE_INT32);
    H5Tclose(name_t);
    H5Tclose(cpu_t);
    return t;
}

static int write_hosts(struct wb_results *r)
{
    if (r->rank != 0 || r->err)
        return r->err;
    hid_t t = host_type();
    int rc;
    if (H5Lexists(r->file, "/hosts", H5P_DEFAULT) > 0) {
        hid_t d = H5Dopen2(r->file, "/hosts", H5P_DEFAULT);
        rc = d >= 0 && H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, r->hosts) >= 0 ? 0 : h5fail(r, "dataset", "/hosts");
        if (d >= 0)
            H5Dclose(d);
    } else {
        uint64_t dims[1] = {(uint64_t)r->nranks};
        rc = write_dset(r, "/hosts", t, 1, dims, r->hosts, NULL);
    }
    H5Tclose(t);
    return rc;
}

/* Every rank's host facts, gathered on rank 0. Collective. */
static int gather_hosts(struct wb_results *r)
{
    struct wb_host me;
    wb_sysinfo_read(&me);
    me.rank = r->rank;
    int *node = calloc((size_t)r->nranks, sizeof *node);
    if (!node)
        return wb_error_set(WB_ENOMEM, "out of memory for the host table");
    int nnodes = wb_comm_nodes(node);
    me.node = nnodes > 0 ? node[r->rank] : 0;
    free(node);
    if (r->rank == 0) {
        r->hosts = calloc((size_t)r->nranks, sizeof *r->hosts);
        if (!r->hosts)
            return wb_error_set(WB_ENOMEM, "out of memory for the host table");
    }
    int rc = wb_comm_check(MPI_Gather(&me, sizeof me, MPI_BYTE, r->hosts, sizeof me, MPI_BYTE, 0, wb_comm_world()),
                           "MPI_Gather of host facts");
    return rc ? rc : nnodes;
}

static void utc_now(char *out, size_t cap)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int write_root_attrs(struct wb_results *r, const struct wb_run_info *info, int nnodes)
{
    char when[32], mpi[MPI_MAX_LIBRARY_VERSION_STRING] = "", hdf5[32], compiler[128];
    int len = 0;
    MPI_Get_library_version(mpi, &len);
    mpi[strcspn(mpi, "\n")] = '\0';
    unsigned maj, min, rel;
    H5get_libversion(&maj, &min, &rel);
    snprintf(hdf5, sizeof hdf5, "%u.%u.%u", maj, min, rel);
#ifdef __VERSION__
    snprintf(compiler, sizeof compiler, "%s %s", "cc", __VERSION__);
#else
    snprintf(compiler, sizeof compiler, "unknown");
#endif
    utc_now(when, sizeof when);
    const struct {
        const char *name, *value;
    } strs[] = {
        {"schema", "wulfbench/1"}, {"version", WB_VERSION}, {"git_rev", WB_GIT_REV}, {"created_utc", when},
        {"command_line", info->command_line}, {"label", info->label}, {"subcommand", info->subcommand},
        {"mpi_library", mpi}, {"fftw_version", info->fftw_version}, {"hdf5_version", hdf5},
        {"compiler", compiler}, {"cflags", WB_CFLAGS}, {"status", "running"},
    };
    int rc = 0;
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        rc = rc ? rc : wb_results_attr_str(r, "/", strs[i].name, strs[i].value);
    rc = rc ? rc : wb_results_attr_i64(r, "/", "nranks", r->nranks);
    rc = rc ? rc : wb_results_attr_i64(r, "/", "nnodes", nnodes);
    rc = rc ? rc : wb_results_attr_f64(r, "/", "wtick_s", MPI_Wtick());
    rc = rc ? rc : wb_results_attr_i64(r, "/", "baseline", info->baseline);
    rc = rc ? rc : wb_results_attr_i64(r, "/", "seed", (int64_t)info->seed);
    rc = rc ? rc : wb_results_attr_i64(r, "/", "verified", -1);
    return rc;
}

int wb_results_open(struct wb_results **out, const char *path, int force, const struct wb_run_info *info)
{
    struct wb_results *r = calloc(1, sizeof *r);
    *out = NULL;
    if (!r)
        return wb_comm_agree(wb_error_set(WB_ENOMEM, "out of memory"));
    r->file = H5I_INVALID_HID;
    r->rank = wb_comm_rank();
    r->nranks = wb_comm_size();
    int rc = 0;
    if (r->rank == 0) {
        /* HDF5's own error stack would print pages for one missing folder; we report one line. */
        H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
        rc = create_file(r, path, force);
    }
    rc = wb_comm_agree(rc);
    int nnodes = rc ? rc : gather_hosts(r);
    if (nnodes < 0)
        rc = nnodes;
    if (rc == 0)
        rc = write_root_attrs(r, info, nnodes);
    if (rc == 0)
        rc = write_hosts(r);
    rc = wb_comm_agree(rc);
    if (rc == 0)
        rc = wb_comm_bcast_str(r->path, sizeof r->path);
    if (rc) {
        if (r->file >= 0) {
            H5Fclose(r->file);
            unlink(r->partial);
        }
        free(r->hosts);
        free(r);
        return rc;
    }
    *out = r;
    return 0;
}

const char *wb_results_path(const struct wb_results *r) { return r ? r->path : ""; }

#define WB_STR_(x) #x
#define WB_STR(x) WB_STR_(x)
const char *wb_results_hdf5_version(void) { return WB_STR(H5_VERS_MAJOR) "." WB_STR(H5_VERS_MINOR) "." WB_STR(H5_VERS_RELEASE); }

int wb_results_flush(struct wb_results *r)
{
    if (r->rank == 0 && !r->err && H5Fflush(r->file, H5F_SCOPE_GLOBAL) < 0)
        r->err = wb_error_set(WB_EIO, "%s: flush failed (disk full?)", r->partial);
    r->flushed++;
    return wb_comm_agree(r->err);
}

int wb_results_close(struct wb_results **rp, const char *status, int verified)
{
    struct wb_results *r = *rp;
    if (!r)
        return 0;
    double temp = wb_sysinfo_temp_c();
    double *temps = r->rank == 0 ? malloc((size_t)r->nranks * sizeof *temps) : NULL;
    int rc = wb_comm_gather_f64(temp, temps);
    if (r->rank == 0) {
        for (int q = 0; temps && q < r->nranks; q++)
            r->hosts[q].temp_c_end = temps[q];
        int werr = r->err;
        r->err = 0;
        /* The outcome is written even after an earlier write error, so the file says it failed. */
        wb_results_attr_str(r, "/", "status", status);
        wb_results_attr_i64(r, "/", "verified", verified);
        write_hosts(r);
        if (!r->err && werr)
            r->err = werr;
        if (H5Fclose(r->file) < 0 && !r->err)
            r->err = wb_error_set(WB_EIO, "%s: close failed (disk full?)", r->partial);
        int keep = !strcmp(status, "complete") || !strcmp(status, "invalid") || !strcmp(status, "timeout");
        if (!r->err && keep && rename(r->partial, r->path) != 0)
            r->err = wb_error_set(WB_EIO, "cannot rename %s to %s: %s", r->partial, r->path, strerror(errno));
        /* A run that failed before measuring anything leaves no file to trip over. */
        if (!keep && r->flushed == 0)
            unlink(r->partial);
        rc = rc ? rc : r->err;
    }
    free(temps);
    rc = wb_comm_agree(rc);
    free(r->hosts);
    free(r);
    *rp = NULL;
    return rc;
}
