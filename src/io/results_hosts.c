/* results: the /hosts columns that hostfacts fills (governor, link, versions, model). */
#include "io/results_int.h"

#include <stddef.h>

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
}
