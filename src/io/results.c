#define _GNU_SOURCE
#include "io/results_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "core/sysinfo.h"
#include "core/timer.h"
#include "par/comm.h"
#include "par/hostfacts.h"

#ifndef WB_VERSION
#define WB_VERSION "unknown"
#endif
#ifndef WB_GIT_REV
#define WB_GIT_REV "unknown"
#endif
#ifndef WB_CFLAGS
#define WB_CFLAGS "unknown"
#endif

static struct wb_results *live; /* rank 0: the open file, under wb_results_lock */

static hid_t open_obj(struct wb_results *r, const char *obj) { return H5Oopen(r->file, obj, H5P_DEFAULT); }

int wb_results_attr_held(struct wb_results *r, const char *obj, const char *name, hid_t type, const void *value)
{
    if (r->rank != 0 || r->err)
        return r->err;
    hid_t o = open_obj(r, obj);
    if (o < 0)
        return wb_results_h5fail(r, "object", obj);
    if (H5Aexists(o, name) > 0)
        H5Adelete(o, name);
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(o, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    int ok = a >= 0 && H5Awrite(a, type, value) >= 0;
    if (a >= 0)
        H5Aclose(a);
    H5Sclose(space);
    H5Oclose(o);
    return ok ? 0 : wb_results_h5fail(r, "attribute", name);
}

int wb_results_attr_str_held(struct wb_results *r, const char *obj, const char *name, const char *value)
{
    if (r->rank != 0 || r->err)
        return r->err;
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    const char *v = value ? value : "";
    int rc = wb_results_attr_held(r, obj, name, t, &v);
    H5Tclose(t);
    return rc;
}

int wb_results_attr_str(struct wb_results *r, const char *obj, const char *name, const char *value)
{
    if (r->rank != 0)
        return 0;
    wb_results_lock();
    int rc = wb_results_attr_str_held(r, obj, name, value);
    wb_results_unlock();
    return rc;
}

int wb_results_attr_i64(struct wb_results *r, const char *obj, const char *name, int64_t value)
{
    wb_results_lock();
    int rc = wb_results_attr_held(r, obj, name, H5T_NATIVE_INT64, &value);
    wb_results_unlock();
    return rc;
}

int wb_results_attr_f64(struct wb_results *r, const char *obj, const char *name, double value)
{
    wb_results_lock();
    int rc = wb_results_attr_held(r, obj, name, H5T_NATIVE_DOUBLE, &value);
    wb_results_unlock();
    return rc;
}

static int group(struct wb_results *r, const char *group)
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
        return wb_results_h5fail(r, "group", group);
    H5Gclose(g);
    return 0;
}

int wb_results_group(struct wb_results *r, const char *g)
{
    wb_results_lock();
    int rc = group(r, g);
    wb_results_unlock();
    return rc;
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
    hsize_t total = 1;
    for (int i = 0; i < rank; i++)
        total *= hd[i];
    int ok = d >= 0 && (total == 0 || H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
    if (d >= 0)
        H5Dclose(d);
    H5Sclose(space);
    H5Pclose(lcpl);
    if (!ok)
        return wb_results_h5fail(r, "dataset", dset);
    return units ? wb_results_attr_str_held(r, dset, "units", units) : 0;
}

int wb_results_write_locked(struct wb_results *r, const char *dset, hid_t type, int rank, const uint64_t *dims,
                        const void *data, const char *units)
{
    wb_results_lock();
    int rc = write_dset(r, dset, type, rank, dims, data, units);
    wb_results_unlock();
    return rc;
}

int wb_results_write_f64(struct wb_results *r, const char *dset, int rank, const uint64_t *dims,
                         const double *data, const char *units)
{
    return wb_results_write_locked(r, dset, H5T_NATIVE_DOUBLE, rank, dims, data, units);
}

int wb_results_write_i64(struct wb_results *r, const char *dset, int rank, const uint64_t *dims,
                         const int64_t *data, const char *units)
{
    return wb_results_write_locked(r, dset, H5T_NATIVE_INT64, rank, dims, data, units);
}

int wb_results_write_i32(struct wb_results *r, const char *dset, int rank, const uint64_t *dims,
                         const int32_t *data, const char *units)
{
    return wb_results_write_locked(r, dset, H5T_NATIVE_INT32, rank, dims, data, units);
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
        rc = n == 1 ? wb_results_write_locked(r, dset, htype, 1, dims + 1, cols, units)
                    : wb_results_write_locked(r, dset, htype, 2, dims, cols, units);
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
    wb_results_lock();
    hid_t t = H5Tenum_create(H5T_NATIVE_UINT8);
    for (int i = 0; i < nnames; i++) {
        uint8_t v = (uint8_t)i;
        H5Tenum_insert(t, names[i], &v);
    }
    uint64_t dims[1] = {n};
    int rc = write_dset(r, dset, t, 1, dims, data, "1");
    H5Tclose(t);
    wb_results_unlock();
    return rc;
}

hid_t wb_results_fixed_string(size_t len)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, len);
    H5Tset_strpad(t, H5T_STR_NULLTERM);
    return t;
}

int wb_results_write_strings(struct wb_results *r, const char *dset, size_t n, size_t len, const char *data,
                             const char *units)
{
    if (r->rank != 0 || r->err)
        return r->err;
    hid_t t = wb_results_fixed_string(len);
    uint64_t dims[1] = {n};
    int rc = wb_results_write_locked(r, dset, t, 1, dims, data, units);
    H5Tclose(t);
    return rc;
}

int wb_results_write_inputs(struct wb_results *r, const char *dset, const struct wb_result_input *rows, size_t n)
{
    if (r->rank != 0 || r->err)
        return r->err;
    wb_results_lock();
    hid_t name_t = wb_results_fixed_string(sizeof rows->name);
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
    wb_results_unlock();
    return rc;
}

int wb_results_write_timeline(struct wb_results *r, const char *dset, const struct wb_result_event *rows, size_t n)
{
    if (r->rank != 0 || r->err)
        return r->err;
    wb_results_lock();
    static const char *const phases[] = {"recv", "compute", "send"};
    hid_t ph = H5Tenum_create(H5T_NATIVE_UINT8);
    for (uint8_t i = 0; i < 3; i++)
        H5Tenum_insert(ph, phases[i], &i);
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof *rows);
    H5Tinsert(t, "rank", HOFFSET(struct wb_result_event, rank), H5T_NATIVE_INT32);
    H5Tinsert(t, "chunk", HOFFSET(struct wb_result_event, chunk), H5T_NATIVE_INT32);
    H5Tinsert(t, "phase", HOFFSET(struct wb_result_event, phase), ph);
    H5Tinsert(t, "t_start", HOFFSET(struct wb_result_event, t_start), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "t_end", HOFFSET(struct wb_result_event, t_end), H5T_NATIVE_DOUBLE);
    uint64_t dims[1] = {n};
    int rc = write_dset(r, dset, t, 1, dims, rows, "s");
    H5Tclose(t);
    H5Tclose(ph);
    wb_results_unlock();
    return rc;
}

int wb_results_write_health(struct wb_results *r, const char *dset, const struct wb_result_health *rows, size_t n)
{
    if (r->rank != 0 || r->err)
        return r->err;
    wb_results_lock();
    hid_t name_t = wb_results_fixed_string(sizeof rows->hostname);
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
    wb_results_unlock();
    return rc;
}

int wb_results_write_net(struct wb_results *r, const char *group, const struct wb_result_net *rows, size_t n)
{
    static const char *const names[WB_RESULT_NET_FIELDS] = {"tcp_retrans_segs", "tcp_out_segs", "rx_dropped",
                                                            "tx_dropped", "rx_errors", "tx_errors", "if_summed"};
    static const char *const units[WB_RESULT_NET_FIELDS] = {"segments", "segments", "packets", "packets",
                                                            "packets", "packets", "1"};
    if (r->rank != 0 || r->err)
        return r->err;
    int64_t *col = malloc((n ? n : 1) * sizeof *col);
    if (!col)
        return wb_error_set(WB_ENOMEM, "out of memory for %s/net", group);
    int rc = 0;
    for (int k = 0; rc == 0 && k < WB_RESULT_NET_FIELDS; k++) {
        for (size_t q = 0; q < n; q++)
            col[q] = rows[q].v[k];
        char d[300];
        snprintf(d, sizeof d, "%s/net/%s", group, names[k]);
        uint64_t dims[1] = {n};
        rc = wb_results_write_locked(r, d, H5T_NATIVE_INT64, 1, dims, col, units[k]);
    }
    free(col);
    return rc;
}

int wb_results_write_energy(struct wb_results *r, const char *group, const struct wb_result_energy *e)
{
    if (r->rank != 0 || r->err || !e || !e->present)
        return r->err;
    char d[300];
    uint64_t dims[2] = {e->reps, e->nranks};
    snprintf(d, sizeof d, "%s/energy_j", group);
    int rc = wb_results_write_locked(r, d, H5T_NATIVE_DOUBLE, 2, dims, e->energy_j, "J");
    snprintf(d, sizeof d, "%s/power_short", group);
    rc = rc ? rc : wb_results_write_locked(r, d, H5T_NATIVE_UINT8, 2, dims, e->power_short, "1");
    snprintf(d, sizeof d, "%s/t_start_utc", group);
    rc = rc ? rc : wb_results_write_locked(r, d, H5T_NATIVE_DOUBLE, 1, dims, e->t_start_utc, "s since 1970-01-01 UTC");
    snprintf(d, sizeof d, "%s/t_end_utc", group);
    rc = rc ? rc : wb_results_write_locked(r, d, H5T_NATIVE_DOUBLE, 1, dims, e->t_end_utc, "s since 1970-01-01 UTC");
    snprintf(d, sizeof d, "%s/sampler_cpu_share", group);
    rc = rc ? rc : wb_results_write_locked(r, d, H5T_NATIVE_DOUBLE, 1, &dims[1], e->sampler_cpu_share, "1");
    return rc;
}

void wb_result_energy_free(struct wb_result_energy *e)
{
    free(e->energy_j);
    free(e->power_short);
    free(e->t_start_utc);
    free(e->t_end_utc);
    free(e->sampler_cpu_share);
    memset(e, 0, sizeof *e);
}

static hid_t host_type(void)
{
    hid_t name_t = wb_results_fixed_string(sizeof ((struct wb_host *)0)->hostname);
    hid_t cpu_t = wb_results_fixed_string(sizeof ((struct wb_host *)0)->cpu_model);
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
    wb_results_host_facts_type(t);
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
        rc = d >= 0 && H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, r->hosts) >= 0 ? 0 : wb_results_h5fail(r, "dataset", "/hosts");
        if (d >= 0)
            H5Dclose(d);
    } else {
        uint64_t dims[1] = {(uint64_t)r->nranks};
        rc = write_dset(r, "/hosts", t, 1, dims, r->hosts, NULL);
    }
    H5Tclose(t);
    return rc;
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
    char when[32], hdf5[32], compiler[128];
    /* The header's version, which HDF5 checks equals the library's at the first call; no call here
     * keeps HDF5 under the lock. */
    snprintf(hdf5, sizeof hdf5, "%d.%d.%d", H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE);
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
        {"mpi_library", wb_comm_library_version()}, {"mpi_threads", wb_comm_threads_name()}, {"fftw_version", info->fftw_version}, {"hdf5_version", hdf5},
        {"compiler", compiler}, {"cflags", WB_CFLAGS}, {"status", "running"},
        {"build_arch", wb_sysinfo_build_arch()}, {"timer_counter", wb_timer_counter_name()},
    };
    int rc = 0;
    double wtick = MPI_Wtick(), tick = wb_timer_tick_s(), counter_hz = wb_timer_counter_hz();
    int64_t seed = (int64_t)info->seed, nr = r->nranks, nn = nnodes, base = info->baseline, unknown = -1,
            zero = 0;
    const struct {
        const char *name;
        hid_t type;
        const void *value;
    } nums[] = {
        {"nranks", H5T_NATIVE_INT64, &nr}, {"nnodes", H5T_NATIVE_INT64, &nn},
        {"wtick_s", H5T_NATIVE_DOUBLE, &wtick}, {"timer_tick_s", H5T_NATIVE_DOUBLE, &tick},
        {"counter_hz", H5T_NATIVE_DOUBLE, &counter_hz}, {"baseline", H5T_NATIVE_INT64, &base},
        {"seed", H5T_NATIVE_INT64, &seed}, {"verified", H5T_NATIVE_INT64, &unknown},
        {"points_completed", H5T_NATIVE_INT64, &zero},
    };
    wb_results_lock();
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        rc = rc ? rc : wb_results_attr_str_held(r, "/", strs[i].name, strs[i].value);
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
        rc = rc ? rc : wb_results_attr_held(r, "/", nums[i].name, nums[i].type, nums[i].value);
    wb_results_unlock();
    return rc;
}

/* Each rank's kernel variant as an enum dataset, and the root attribute kernel_variant: the one
 * name every rank uses, or "mixed" (a cluster of CPU generations). Collective. */
static int write_kernel_variants(struct wb_results *r, const struct wb_run_info *info)
{
    if (!info->kernel_variant_names)
        return 0;
    int nnames = 0;
    while (info->kernel_variant_names[nnames])
        nnames++;
    int64_t *all = r->rank == 0 ? calloc((size_t)r->nranks, sizeof *all) : NULL;
    uint8_t *codes = r->rank == 0 ? calloc((size_t)r->nranks, 1) : NULL;
    int rc = r->rank == 0 && (!all || !codes) ? wb_error_set(WB_ENOMEM, "out of memory for kernel variants") : 0;
    rc = wb_comm_agree(rc);
    rc = rc ? rc : wb_comm_gather_i64(info->kernel_variant, all);
    const char *common = NULL;
    for (int q = 0; rc == 0 && r->rank == 0 && q < r->nranks; q++) {
        codes[q] = (uint8_t)all[q];
        const char *name = all[q] >= 0 && all[q] < nnames ? info->kernel_variant_names[all[q]] : "unknown";
        common = !q || (common && !strcmp(common, name)) ? name : NULL;
    }
    rc = rc ? rc : wb_results_attr_str(r, "/", "kernel_variant", common ? common : "mixed");
    rc = rc ? rc : wb_results_write_enum(r, "/kernel_variant", (size_t)r->nranks, codes, info->kernel_variant_names,
                                         nnames);
    free(all);
    free(codes);
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
    /* Before the file exists: the copy is no part of any window the run shows. */
    wb_hostfacts_copy_Bps();
    int rc = 0;
    if (r->rank == 0) {
        wb_results_lock();
        /* HDF5's own error stack would print pages for one missing folder; we report one line. */
        H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
        rc = wb_results_create(r, path, force);
        wb_results_unlock();
    }
    rc = wb_comm_agree(rc);
    int nnodes = 0;
    if (rc == 0) {
        /* The readiness facts (docs/check.md) beside what sysinfo reads; hostfacts_fill is collective. */
        struct wb_host me;
        wb_sysinfo_read(&me);
        rc = wb_hostfacts_fill(&me, info->fftw_version, wb_results_hdf5_version());
        rc = rc ? rc : wb_comm_gather_these_hosts(&me, &r->hosts, &nnodes);
    }
    if (rc == 0)
        rc = write_root_attrs(r, info, nnodes);
    if (rc == 0)
        rc = write_kernel_variants(r, info);
    if (rc == 0 && r->rank == 0) {
        wb_results_lock();
        rc = write_hosts(r);
        rc = rc ? rc : wb_results_write_ceilings(r);
        /* Flushed before the first point, so a kill at any moment leaves a file that opens. */
        rc = rc ? rc : wb_results_reserve(r);
        if (rc == 0 && H5Fflush(r->file, H5F_SCOPE_GLOBAL) < 0)
            rc = wb_results_h5fail(r, "file", "/");
        if (rc == 0)
            live = r;
        wb_results_unlock();
    }
    rc = wb_comm_agree(rc);
    if (rc == 0)
        rc = wb_comm_bcast_str(r->path, sizeof r->path);
    if (rc) {
        if (r->rank == 0 && r->file >= 0) {
            wb_results_lock();
            live = NULL;
            wb_results_freeze(r);
            H5Fclose(r->file);
            unlink(r->partial);
            wb_results_unlock();
        }
        free(r->hosts);
        free(r->machines);
        free(r->machine_of);
        free(r);
        return rc;
    }
    *out = r;
    return 0;
}

const char *wb_results_path(const struct wb_results *r) { return r ? r->path : ""; }

int wb_results_points(const struct wb_results *r) { return r ? r->flushed : 0; }

#define WB_STR_(x) #x
#define WB_STR(x) WB_STR_(x)
const char *wb_results_hdf5_version(void) { return WB_STR(H5_VERS_MAJOR) "." WB_STR(H5_VERS_MINOR) "." WB_STR(H5_VERS_RELEASE); }

int wb_results_flush_alone(struct wb_results *r)
{
    if (r->rank != 0)
        return 0;
    wb_results_lock();
    int64_t points = r->flushed + 1;
    if (!r->err)
        wb_results_attr_held(r, "/", "points_completed", H5T_NATIVE_INT64, &points);
    if (!r->err)
        wb_results_reserve(r);
    if (!r->err && H5Fflush(r->file, H5F_SCOPE_GLOBAL) < 0)
        wb_results_h5fail(r, "file", "/");
    if (r->err)
        wb_results_freeze(r);
    else
        r->flushed++;
    wb_results_unlock();
    return r->err;
}

int wb_results_flush(struct wb_results *r)
{
    wb_results_flush_alone(r);
    return wb_comm_agree(r->err);
}

static char kept[PATH_CAP + 16];

/* Rank 0, under h5_lock: record the outcome, close, then keep, rename or remove the file. */
static int finish(struct wb_results *r, const char *status, int verified)
{
    if (!r->err) {
        int64_t v = verified, points = r->flushed;
        wb_results_attr_str_held(r, "/", "status", status);
        wb_results_attr_held(r, "/", "verified", H5T_NATIVE_INT64, &v);
        wb_results_attr_held(r, "/", "points_completed", H5T_NATIVE_INT64, &points);
        wb_results_write_own(r);
        write_hosts(r);
        wb_results_reserve(r);
    }
    if (r->err)
        wb_results_freeze(r);
    if (H5Fclose(r->file) < 0 && !r->err)
        r->err = wb_error_set(WB_EIO, "%s: close failed: %s", r->partial, wb_results_why(wb_results_h5_errno()));
    r->file = H5I_INVALID_HID;
    live = NULL;
    kept[0] = '\0';
    int keep = !strcmp(status, "complete") || !strcmp(status, "invalid") || !strcmp(status, "timeout") ||
               !strcmp(status, "interrupted");
    if (!r->err && keep && rename(r->partial, r->path) != 0)
        r->err = wb_error_set(WB_EIO, "cannot rename %s to %s: %s", r->partial, r->path, strerror(errno));
    if (!r->err && keep)
        snprintf(kept, sizeof kept, "%s", r->path);
    else if (r->flushed > 0)
        snprintf(kept, sizeof kept, "%s", r->partial);
    else
        unlink(r->partial); /* a run that failed before measuring anything leaves no file to trip over */
    if (r->err) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", wb_error_message());
        if (r->flushed > 0)
            wb_error_set(r->err, "%s; the %d point%s before it are readable in %s (status left at 'running')", msg,
                         r->flushed, r->flushed == 1 ? "" : "s", r->partial);
        else
            wb_error_set(r->err, "%s; no point was complete, so %s was removed", msg, r->partial);
    }
    return r->err;
}

const char *wb_results_kept(void) { return kept; }

int wb_results_close(struct wb_results **rp, int rc)
{
    struct wb_results *r = *rp;
    if (!r)
        return rc;
    const char *status = rc == 0 ? "complete" : rc == WB_EVERIFY ? "invalid" : rc == WB_ETIMEOUT ? "timeout" : "failed";
    int verified = rc == 0 ? 1 : rc == WB_EVERIFY ? 0 : -1;
    char run_msg[1024];
    snprintf(run_msg, sizeof run_msg, "%s", wb_error_message());
    double temp = wb_sysinfo_temp_c();
    double *temps = r->rank == 0 ? malloc(2 * (size_t)r->nranks * sizeof *temps) : NULL;
    int crc = wb_comm_gather_f64(temp, temps);
    /* Every rank's peak memory, so a file shows what the run itself cost at its scale. */
    crc = crc ? crc : wb_comm_gather_f64((double)wb_sysinfo_peak_rss_bytes(), temps ? temps + r->nranks : NULL);
    if (r->rank == 0) {
        wb_results_lock();
        for (int q = 0; temps && q < r->nranks; q++) {
            r->hosts[q].temp_c_end = temps[q];
            if (temps[r->nranks + q] > r->rss_max_bytes)
                r->rss_max_bytes = temps[r->nranks + (r->rss_max_rank = q)];
        }
        r->rss_rank0_bytes = temps ? temps[r->nranks] : 0;
        r->t_close_utc = wb_timer_utc_s();
        for (int k = 0; k < WB_TIMER_NPARTS; k++)
            r->own_s[k] = wb_timer_part_s((enum wb_timer_part)k);
        int werr = r->err;
        int frc = finish(r, status, verified);
        wb_results_unlock();
        /* The run's own error stays the message unless the file's trouble is what failed it. */
        if (rc && !werr && frc == 0)
            wb_error_set(rc, "%s", run_msg);
        crc = crc ? crc : frc;
    }
    free(temps);
    crc = wb_comm_agree(crc);
    if (rc && crc == 0)
        wb_error_set(rc, "%s", run_msg);
    free(r->hosts);
    free(r->machines);
    free(r->machine_of);
    free(r);
    *rp = NULL;
    return rc ? rc : crc;
}

int wb_results_abandon(const char *status, double wait_s, char *path, size_t cap, int *points)
{
    if (!wb_results_lock_within(wait_s))
        return 1;
    struct wb_results *r = live;
    if (!r) {
        wb_results_unlock();
        return 2;
    }
    int rc = finish(r, status, -1);
    snprintf(path, cap, "%s", kept[0] ? kept : r->partial);
    *points = r->flushed;
    /* The lock stays taken: the main thread must not reach HDF5 again before the process ends. */
    return rc ? -1 : 0;
}
