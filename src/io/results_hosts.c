/* results: the /hosts columns that hostfacts fills (governor, link, versions, model), and /ceilings:
 * the machines those hosts make up. */
#include "io/results_int.h"

#include <stddef.h>
#include <stdlib.h>

#include "core/sysinfo.h"

/* A NUL-terminated string member of struct wb_host, by name and offset. */
static void insert_string(hid_t t, const char *name, size_t off, size_t len)
{
    hid_t s = H5Tcopy(H5T_C_S1);
    H5Tset_size(s, len);
    H5Tset_strpad(s, H5T_STR_NULLTERM);
    H5Tinsert(t, name, off, s);
    H5Tclose(s);
}

#define STR_MEMBER(t, m) insert_string(t, #m, offsetof(struct wb_host, m), sizeof ((struct wb_host *)0)->m)

void wb_results_host_facts_type(hid_t t)
{
    STR_MEMBER(t, governor);
    H5Tinsert(t, "freq_min_mhz", HOFFSET(struct wb_host, freq_min_mhz), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "freq_max_mhz", HOFFSET(struct wb_host, freq_max_mhz), H5T_NATIVE_DOUBLE);
    STR_MEMBER(t, iface);
    STR_MEMBER(t, iface_kind);
    H5Tinsert(t, "link_mbps", HOFFSET(struct wb_host, link_mbps), H5T_NATIVE_INT32);
    H5Tinsert(t, "mtu", HOFFSET(struct wb_host, mtu), H5T_NATIVE_INT32);
    STR_MEMBER(t, git_rev);
    STR_MEMBER(t, mpi_library);
    STR_MEMBER(t, fftw_version);
    STR_MEMBER(t, hdf5_version);
    STR_MEMBER(t, model);
    STR_MEMBER(t, arch);
    STR_MEMBER(t, boot_id);
    H5Tinsert(t, "cpu_quota", HOFFSET(struct wb_host, cpu_quota), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "cores_usable", HOFFSET(struct wb_host, cores_usable), H5T_NATIVE_INT32);
    H5Tinsert(t, "cpu_mask", HOFFSET(struct wb_host, cpu_mask), H5T_NATIVE_UINT64);
    H5Tinsert(t, "copy_Bps", HOFFSET(struct wb_host, copy_Bps), H5T_NATIVE_DOUBLE);
}

static hid_t machine_type(void)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(struct wb_ceiling_machine));
    insert_string(t, "name", offsetof(struct wb_ceiling_machine, name), sizeof ((struct wb_ceiling_machine *)0)->name);
    insert_string(t, "boot_id", offsetof(struct wb_ceiling_machine, boot_id),
                  sizeof ((struct wb_ceiling_machine *)0)->boot_id);
    H5Tinsert(t, "nodes", HOFFSET(struct wb_ceiling_machine, nodes), H5T_NATIVE_INT32);
    H5Tinsert(t, "ranks", HOFFSET(struct wb_ceiling_machine, ranks), H5T_NATIVE_INT32);
    H5Tinsert(t, "cores", HOFFSET(struct wb_ceiling_machine, cores), H5T_NATIVE_INT32);
    H5Tinsert(t, "cores_usable", HOFFSET(struct wb_ceiling_machine, cores_usable), H5T_NATIVE_INT32);
    H5Tinsert(t, "cpu_quota", HOFFSET(struct wb_ceiling_machine, cpu_quota), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "copy_Bps", HOFFSET(struct wb_ceiling_machine, copy_Bps), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "link_mbps", HOFFSET(struct wb_ceiling_machine, link_mbps), H5T_NATIVE_INT32);
    return t;
}

int wb_results_write_ceilings(struct wb_results *r)
{
    if (r->rank != 0 || r->err)
        return r->err;
    free(r->machines);
    free(r->machine_of);
    r->machines = calloc((size_t)r->nranks, sizeof *r->machines);
    r->machine_of = calloc((size_t)r->nranks, sizeof *r->machine_of);
    if (!r->machines || !r->machine_of)
        return wb_results_h5fail(r, "group", "/ceilings (out of memory)");
    r->nmachines = wb_ceiling_machines(r->hosts, r->nranks, r->machines, r->nranks, r->machine_of);
    int64_t over = 0;
    for (int i = 0; i < r->nmachines; i++)
        over += wb_ceiling_oversubscribed(&r->machines[i]);
    hid_t g = H5Lexists(r->file, "/ceilings", H5P_DEFAULT) > 0 ? H5Gopen2(r->file, "/ceilings", H5P_DEFAULT)
                                                             : H5Gcreate2(r->file, "/ceilings", H5P_DEFAULT,
                                                                          H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0)
        return wb_results_h5fail(r, "group", "/ceilings");
    hid_t t = machine_type();
    hsize_t dims[1] = {(hsize_t)r->nmachines};
    hid_t sp = H5Screate_simple(1, dims, NULL);
    hid_t d = H5Dcreate2(g, "machines", t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int ok = d >= 0 && H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, r->machines) >= 0;
    if (d >= 0)
        H5Dclose(d);
    H5Sclose(sp);
    H5Tclose(t);
    H5Gclose(g);
    if (!ok)
        return wb_results_h5fail(r, "dataset", "/ceilings/machines");
    int64_t none = 0;
    int rc = wb_results_attr_held(r, "/ceilings", "oversubscribed_machines", H5T_NATIVE_INT64, &over);
    /* A storage ceiling comes from a `wulfbench io` result where there is one; none is measured here. */
    rc = rc ? rc : wb_results_attr_held(r, "/ceilings", "storage_measured", H5T_NATIVE_INT64, &none);
    return rc ? rc : wb_results_attr_str_held(r, "/ceilings/machines", "units",
                                              "nodes, ranks, cores, cores_usable: count; cpu_quota: CPUs; "
                                              "copy_Bps: B/s; link_mbps: Mbit/s");
}

const struct wb_ceiling_machine *wb_results_machines(const struct wb_results *r, int *n, const int **machine_of)
{
    *n = r && r->machines ? r->nmachines : 0;
    if (machine_of)
        *machine_of = r ? r->machine_of : NULL;
    return r ? r->machines : NULL;
}

int32_t wb_results_link_mtu(const struct wb_results *r)
{
    int32_t mtu = -1;
    for (int q = 1; r && r->hosts && q < r->nranks; q++)
        if (r->hosts[q].node != r->hosts[0].node && r->hosts[q].mtu > 0 && (mtu < 0 || r->hosts[q].mtu < mtu))
            mtu = r->hosts[q].mtu;
    return mtu;
}
