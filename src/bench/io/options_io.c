#define _POSIX_C_SOURCE 200809L
#include "bench/io/options_io.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bench/options.h"
#include "core/error.h"
#include "core/optparse.h"

enum io_id { K_TESTS = 1, K_DIR, K_TIME, K_SIZE, K_BLOCK, K_SYNC, K_ALLOW_MEMORY, K_LIST };

/* A file per rank and a call's buffer must fit a 32-bit size_t and an MPI count on armhf. */
#define MAX_SIZE_BYTES (sizeof(size_t) < 8 ? (int64_t)INT32_MAX : INT64_C(1) << 40)
#define MAX_BLOCK_BYTES (INT64_C(1) << 30)

const struct wb_optdef wb_io_optdefs[] = {
    {"tests", 1, 0, K_TESTS,
     "LIST", "tests, any case: write, read, randwrite, randread, meta, shared-write, shared-read, hdf5, or all", "all"},
    {"dir", 1, 0, K_DIR, "PATH", "the folder to measure; give it twice for a local and a shared one",
     "the results folder"},
    {"time", 1, 0, K_TIME, "SECONDS", "what each test aims to take per folder; sizes follow from it, with a floor "
     "of 64 MiB per node that a device's own cache cannot hold", "2"},
    {"size", 1, 0, K_SIZE, "SIZE", "file bytes per rank of every test, instead of the size --time gives", "auto"},
    {"block", 1, 0, K_BLOCK, "SIZE", "bytes per call of the sequential tests", "1M"},
    {"sync", 1, 0, K_SYNC, "end|block|direct", "how the write test makes its data durable: end, one fdatasync "
     "before close (IOR -e); block, an fdatasync after every call; direct, O_DIRECT calls (fio direct=1, as "
     "Raspberry Pi's SD card test) and an fdatasync, buffered where the folder refuses it, saying so", "end"},
    {"allow-memory", 0, 0, K_ALLOW_MEMORY, NULL, "measure a tmpfs or ramfs folder too (that measures RAM)", NULL},
    {"list", 0, 0, K_LIST, NULL, "print the tests and stop", NULL},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

const char wb_io_summary[] =
    "storage: durable sequential and 4 KiB random I/O, metadata, MPI-IO and HDF5 on each --dir (MB = 1e6 bytes)";

static const char *const test_names[WB_IO_NTESTS] = {"write", "read", "randwrite", "randread",
                                                     "meta", "shared-write", "shared-read", "hdf5"};

const char *wb_io_test_name(int test) { return test >= 0 && test < WB_IO_NTESTS ? test_names[test] : NULL; }

struct wb_io_opts *wb_io_opts_of(const struct wb_options *o) { return wb_options_own(o, "io"); }

void wb_io_opts_defaults(struct wb_options *o)
{
    struct wb_io_opts *k = wb_io_opts_of(o);
    memset(k, 0, sizeof *k);
    k->tests = (1u << WB_IO_NTESTS) - 1;
    k->time_s = 2.0;
    k->xfer_bytes = WB_IO_XFER_BYTES;
    k->floor_node_bytes = WB_IO_FLOOR_NODE_BYTES;
}

void wb_io_opts_compact(struct wb_options *o)
{
    struct wb_io_opts *k = wb_io_opts_of(o);
    k->tests = (1u << WB_IO_WRITE) | (1u << WB_IO_READ) | (1u << WB_IO_RANDWRITE) | (1u << WB_IO_RANDREAD) |
               (1u << WB_IO_META) | (1u << WB_IO_HDF5);
    k->time_s = 0.5;
    k->floor_node_bytes = WB_IO_FLOOR_NODE_BYTES / 8;
}

double wb_io_opts_storage_bytes(const struct wb_options *o, int64_t size_bytes, int ranks_here, int ppn_max)
{
    const struct wb_io_opts *k = wb_io_opts_of(o);
    int64_t size = size_bytes ? size_bytes : k->size_bytes;
    double per_rank = size ? (double)size : (double)k->floor_node_bytes / (ppn_max > 0 ? ppn_max : 1);
    return ranks_here * per_rank * 2 + per_rank / 5;
}

int wb_io_opts_no_file(const struct wb_options *o) { return wb_io_opts_of(o)->list; }

static int parse_tests(const char *arg, unsigned *out)
{
    char *copy = strdup(arg), *save = NULL;
    if (!copy)
        return wb_error_set(WB_ENOMEM, "--tests: out of memory");
    unsigned mask = 0;
    int rc = 0;
    for (char *item = strtok_r(copy, ",", &save); item && rc == 0; item = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int t = 0; t < WB_IO_NTESTS; t++)
            if (!strcasecmp(item, test_names[t]))
                found = t;
        if (!strcasecmp(item, "all"))
            mask |= (1u << WB_IO_NTESTS) - 1;
        else if (found >= 0)
            mask |= 1u << found;
        else
            rc = wb_error_set(WB_EUSAGE, "--tests: unknown test '%s'; choose from write, read, randwrite, randread, "
                                         "meta, shared-write, shared-read, hdf5, all", item);
    }
    free(copy);
    if (rc == 0 && mask == 0)
        rc = wb_error_set(WB_EUSAGE, "--tests: the list is empty; e.g. --tests write,read");
    if (rc == 0)
        *out = mask;
    return rc;
}

/* A size in [1, max]: its own line for 0, a negative number, and the armhf limit. */
static int parse_size(const char *opt, const char *arg, int64_t max, int64_t *out)
{
    if (arg[0] == '-')
        return wb_error_set(WB_EUSAGE, "%s: '%s' is negative; give a size such as 64M", opt, arg);
    int64_t v = 0;
    if (wb_optparse_size(opt, arg, 0, INT64_MAX / 2, &v))
        return WB_EUSAGE;
    if (v == 0)
        return wb_error_set(WB_EUSAGE, "%s: a size of 0 measures nothing; give a size such as 64M", opt);
    if (v > max)
        return wb_error_set(WB_EUSAGE, "%s: %s is above the most this build takes, %lld bytes%s; give a smaller size",
                            opt, arg, (long long)max, sizeof(size_t) < 8 ? " (a 32-bit build)" : "");
    *out = v;
    return 0;
}

int wb_io_opts_set(struct wb_options *o, int id, const char *arg)
{
    struct wb_io_opts *k = wb_io_opts_of(o);
    switch (id) {
    case K_TESTS:
        return parse_tests(arg, &k->tests);
    case K_DIR:
        if (!*arg)
            return wb_error_set(WB_EUSAGE, "--dir: the folder name is empty");
        if (k->ndirs == WB_IO_MAX_DIRS)
            return wb_error_set(WB_EUSAGE, "--dir: given more than %d times; give a local and a shared folder at most",
                                WB_IO_MAX_DIRS);
        k->dirs[k->ndirs++] = arg;
        return 0;
    case K_TIME:
        return wb_optparse_double("--time", arg, 0.01, 86400, &k->time_s);
    case K_SIZE:
        return parse_size("--size", arg, MAX_SIZE_BYTES, &k->size_bytes);
    case K_BLOCK:
        return parse_size("--block", arg, MAX_BLOCK_BYTES, &k->xfer_bytes);
    case K_SYNC: {
        static const char *const modes[] = {"end", "block", "direct"};
        for (int m = 0; m < 3; m++)
            if (!strcasecmp(arg, modes[m])) {
                k->sync_mode = m;
                return 0;
            }
        return wb_error_set(WB_EUSAGE, "--sync: unknown mode '%s'; choose end, block or direct", arg);
    }
    case K_ALLOW_MEMORY:
        k->allow_memory = 1;
        return 0;
    case K_LIST:
        k->list = 1;
        return 0;
    }
    return wb_error_set(WB_EUSAGE, "io: unknown option id %d", id);
}

int wb_io_opts_validate(struct wb_options *o)
{
    struct wb_io_opts *k = wb_io_opts_of(o);
    if (k->ndirs == 2 && !strcmp(k->dirs[0], k->dirs[1]))
        return wb_error_set(WB_EUSAGE, "--dir: '%s' is given twice; give two different folders", k->dirs[0]);
    if (k->size_bytes && k->size_bytes < k->xfer_bytes)
        k->xfer_bytes = k->size_bytes;
    if (k->size_bytes && k->size_bytes < WB_IO_RAND_BYTES)
        return wb_error_set(WB_EUSAGE, "--size: %lld bytes is less than one 4 KiB random operation; give 4k or more",
                            (long long)k->size_bytes);
    return 0;
}
