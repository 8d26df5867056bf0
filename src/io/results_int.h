/* results internals, shared by results.c (groups, datasets, attributes, open and close) and
 * results_file.c (creating the file safely, a full disk, the lock the watchdog thread shares, the
 * attributes of what the run itself cost) and
 * results_hosts.c (the /hosts columns of hostfacts), and results_io.c (io's /io/devices and its HDF5 test
 * file). These are the only files that include hdf5.h. */
#ifndef WB_RESULTS_INT_H
#define WB_RESULTS_INT_H

#include <hdf5.h>
#include <sys/types.h>

#include "core/timer.h"
#include "io/results.h"

#define PATH_CAP 4096

struct wb_results {
    hid_t file;             /* rank 0 only */
    int rank, nranks;
    int err;                /* first write error on rank 0, agreed at flush/close */
    int frozen;             /* rank 0: after a write error HDF5 writes to a scratch sink, not the file */
    int flushed;            /* points made durable so far */
    off_t reserved;         /* rank 0: bytes of the file known to be allocated on disk */
    char path[PATH_CAP];
    char partial[PATH_CAP + 16];
    struct wb_host *hosts;  /* rank 0: every rank's facts */
    double rss_rank0_bytes, rss_max_bytes; /* rank 0, at close: peak resident memory (VmHWM), 0 unknown */
    int rss_max_rank;
    /* Rank 0: the run's timeline (UTC s; t_close_utc 0 until the close reads it) and its own parts then. */
    double t_main_utc, t_run_start_utc, t_run_end_utc, t_close_utc;
    double own_s[WB_TIMER_NPARTS]; /* plan, clock alignment, writing: wb_timer_part_s at t_close_utc */
    struct wb_ceiling_machine *machines; /* rank 0: the machines of hosts, grouped by boot_id */
    int nmachines;
    int *machine_of;        /* rank 0 [nranks]: each rank's machine */
};

/* The lock around every HDF5 call (HDF5 is not thread-safe); never held across an MPI call. */
void wb_results_lock(void);
void wb_results_unlock(void);

/* Take the lock within wait_s seconds: 1 taken, 0 not. */
int wb_results_lock_within(double wait_s);

/* The system error (errno) behind the HDF5 call that just failed, from HDF5's error stack. */
int wb_results_h5_errno(void);

/* strerror(e), with "(the disk is full)" for ENOSPC and EDQUOT; a static buffer. */
const char *wb_results_why(int e);

/* Set the sticky error "PARTIAL: could not write WHAT 'NAME': why" (the first one only); returns it. */
int wb_results_h5fail(struct wb_results *r, const char *what, const char *name);

/* Rank 0: decide the path, refuse links, folders and existing files, create PATH.partial with
 * O_EXCL and flush it. 0 or WB_E* with a message. */
int wb_results_create(struct wb_results *r, const char *path, int force);

/* After a write error: send HDF5's writes to a scratch sink, so the file stays as last flushed. */
void wb_results_freeze(struct wb_results *r);

/* Allocate the file's blocks up to its end of allocation, so a full disk fails before a flush. */
int wb_results_reserve(struct wb_results *r);

/* write_dset under the lock: a dataset of type from rank 0's data, with a units attribute (NULL: none). */
int wb_results_write_locked(struct wb_results *r, const char *dset, hid_t type, int rank, const uint64_t *dims,
                            const void *data, const char *units);

/* A fixed-length, NUL-terminated string type of len bytes; close it with H5Tclose. */
hid_t wb_results_fixed_string(size_t len);
/* Rank 0, the lock held: write (or replace) attribute name of object obj, of HDF5 type with value, or
 * a UTF-8 string; 0 or the sticky error. */
int wb_results_attr_held(struct wb_results *r, const char *obj, const char *name, hid_t type, const void *value);
int wb_results_attr_str_held(struct wb_results *r, const char *obj, const char *name, const char *value);

/* Rank 0, the lock held: the root attributes of what the run itself cost (peak memory; with a timeline,
 * its times and own parts), for the close. */
void wb_results_write_own(struct wb_results *r);

/* Add the hostfacts members of struct wb_host to the /hosts compound type t. */
void wb_results_host_facts_type(hid_t t);

/* Rank 0, under the lock: group r->hosts into r->machines and write them as /ceilings/machines,
 * with /ceilings' attributes (how many machines hold more ranks than usable cores). 0 or an error. */
int wb_results_write_ceilings(struct wb_results *r);

#endif
