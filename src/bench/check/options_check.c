#define _POSIX_C_SOURCE 200809L
#include "bench/check/options_check.h"

#include <stdint.h>
#include <string.h>

#include "bench/options.h"
#include "core/error.h"
#include "core/optparse.h"

enum { K_STRICT = 1, K_MEMORY, K_WISDOM, K_RESULTS, K_IO_DIR, K_IO_SIZE };

const struct wb_optdef wb_check_optdefs[] = {
    {"strict", 0, 0, K_STRICT, NULL, "a warning fails the check too (exit 1)", NULL},
    {"memory", 1, 0, K_MEMORY, "SIZE", "memory the run needs on each node, e.g. 2G", "what the default fft run needs"},
    {"wisdom", 1, 0, K_WISDOM, "FILE", "the FFTW wisdom file the run will read", "none"},
    {"results", 1, 0, K_RESULTS, "DIR", "the folder the run will write; it may not exist yet",
     "the folder of -o, else results/"},
    {"io-dir", 1, 0, K_IO_DIR, "PATH", "a folder `io --dir` will measure (give it twice for two): writable on every "
     "node, shared or not as it should be, with room for the io run", "none"},
    {"io-size", 1, 0, K_IO_SIZE, "SIZE", "the io run's --size per rank, for the room it needs", "io's default run"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};
const char wb_check_summary[] =
    "whether every node is ready: versions, governor, throttling, memory, clock, link, io folders (--timeout 30 by default)";

struct wb_check_opts *wb_check_opts_of(const struct wb_options *o) { return wb_options_own(o, "check"); }

void wb_check_opts_defaults(struct wb_options *o) { memset(wb_check_opts_of(o), 0, sizeof(struct wb_check_opts)); }

int wb_check_opts_set(struct wb_options *o, int id, const char *arg)
{
    struct wb_check_opts *k = wb_check_opts_of(o);
    switch (id) {
    case K_STRICT:
        wb_check_opts_of(o)->strict = 1;
        return 0;
    case K_MEMORY:
        return wb_optparse_size("--memory", arg, 1, INT64_MAX / 4, &wb_check_opts_of(o)->need_bytes);
    case K_WISDOM:
        if (!*arg)
            return wb_error_set(WB_EUSAGE, "--wisdom: the file name is empty");
        wb_check_opts_of(o)->wisdom = arg;
        return 0;
    case K_RESULTS:
        if (!*arg)
            return wb_error_set(WB_EUSAGE, "--results: the folder name is empty");
        wb_check_opts_of(o)->results_dir = arg;
        return 0;
    case K_IO_DIR:
        if (!*arg)
            return wb_error_set(WB_EUSAGE, "--io-dir: the folder name is empty");
        if (k->nio_dirs == WB_CHECK_MAX_IO_DIRS)
            return wb_error_set(WB_EUSAGE, "--io-dir: given more than %d times, as io's --dir; check a local and "
                                "a shared folder at most", WB_CHECK_MAX_IO_DIRS);
        k->io_dirs[k->nio_dirs++] = arg;
        return 0;
    case K_IO_SIZE:
        return wb_optparse_size("--io-size", arg, 1, INT64_MAX / 4, &k->io_size_bytes);
    }
    return 0;
}

int wb_check_opts_validate(struct wb_options *o)
{
    /* The check's own deadline; the watchdog, started with the same value, fires a few seconds later
     * only if check could not end itself. */
    if (!(o->common.timeout_s > 0))
        o->common.timeout_s = WB_CHECK_DEFAULT_TIMEOUT_S;
    const struct wb_check_opts *k = wb_check_opts_of(o);
    if (k->io_size_bytes && !k->nio_dirs)
        return wb_error_set(WB_EUSAGE, "--io-size: give --io-dir too, the folder io will measure");
    if (k->nio_dirs == 2 && !strcmp(k->io_dirs[0], k->io_dirs[1]))
        return wb_error_set(WB_EUSAGE, "--io-dir: '%s' is given twice; give two different folders", k->io_dirs[0]);
    return 0;
}
