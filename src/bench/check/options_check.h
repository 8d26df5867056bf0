/* options_check: the options of `wulfbench check` and their hooks in the subcommand table. */
#ifndef WB_OPTIONS_CHECK_H
#define WB_OPTIONS_CHECK_H

#include <stdint.h>

#include "core/optdef.h"

struct wb_options;

/* As io's --dir: a local and a shared folder at most. */
#define WB_CHECK_MAX_IO_DIRS 2

struct wb_check_opts {
    int strict;                 /* --strict: a warning fails too */
    int64_t need_bytes;         /* --memory: bytes the run needs on each node, 0 = the default run's */
    const char *wisdom;         /* --wisdom FILE to be read by the run */
    const char *results_dir;    /* --results DIR the run will write into (may not exist yet) */
    const char *io_dirs[WB_CHECK_MAX_IO_DIRS]; /* --io-dir: folders io will measure, given once or twice */
    int nio_dirs;
    int64_t io_size_bytes;      /* --io-size: io's --size per rank; 0 = io's default run */
};

extern const struct wb_optdef wb_check_optdefs[];
extern const char wb_check_summary[];

/* check's own deadline when --timeout is not given (validate sets it, so the watchdog has the same). */
#define WB_CHECK_DEFAULT_TIMEOUT_S 30.0

/* The option hooks of the subcommand table; local, never exit. */
void wb_check_opts_defaults(struct wb_options *o);
int wb_check_opts_set(struct wb_options *o, int id, const char *arg);
int wb_check_opts_validate(struct wb_options *o);

/* check's own block of o (bench/options.h). */
struct wb_check_opts *wb_check_opts_of(const struct wb_options *o);

#endif
