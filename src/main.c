/* wulfbench: prolog (MPI, options, agreement), run (the subcommand's table entry, around its result
 * file), epilog (messages, finalize). The one exit path is at the end of main. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "comm.h"
#include "error.h"
#include "fft.h"
#include "options.h"
#include "report.h"
#include "results.h"
#include "subcommand.h"
#include "timer.h"

#ifndef WB_VERSION
#define WB_VERSION "unknown"
#endif

/* Until results.c takes the run's rc itself (wb_results_close(&res, rc)): the status and the verified
 * flag follow from rc, and rank 0 names the file that was kept. Collective. */
static int results_close(struct wb_results **res, int rc)
{
    char path[4200];
    snprintf(path, sizeof path, "%s", wb_results_path(*res));
    const char *status = rc == 0 ? "complete" : rc == WB_EVERIFY ? "invalid" : rc == WB_ETIMEOUT ? "timeout" : "failed";
    int crc = wb_results_close(res, status, rc == 0 ? 1 : rc == WB_EVERIFY ? 0 : -1);
    int kept = rc == 0 || rc == WB_EVERIFY || rc == WB_ETIMEOUT;
    if (wb_comm_rank() == 0 && !crc && !kept)
        snprintf(path + strlen(path), sizeof path - strlen(path), ".partial");
    if (wb_comm_rank() == 0 && !crc && access(path, F_OK) == 0) {
        printf("# results: %s%s\n", path, rc == WB_EVERIFY ? " (INVALID: verification failed)"
                                          : kept ? "" : " (incomplete: the run failed)");
        fflush(stdout);
    }
    return crc;
}

/* MPI, the options, and agreement on them: checks such as free memory read this host, so a rank
 * that refuses must stop every rank, before any of them starts the first collective of the run. */
static int prolog(int *argc, char ***argv, struct wb_options *o, int *mpi_up)
{
    memset(o, 0, sizeof *o);
    int rc = wb_comm_init(argc, argv);
    *mpi_up = rc == 0;
    if (rc)
        return rc;
    /* Every rank parses the same argv, so a usage error is the same everywhere; the agreement is for
     * the checks that are not. */
    rc = wb_options_parse(*argc, *argv, o);
    wb_report_init(wb_comm_rank(), o->common.quiet, (int)o->common.progress);
    return wb_comm_agree(rc);
}

/* The subcommand, inside its result file when it has one. Collective. */
static int run(struct wb_options *o)
{
    if (!o->sub->results_file)
        return wb_comm_agree(o->sub->run(o, NULL));
    wb_timer_tick_s();
    struct wb_run_info info = {o->cmd_name, o->common.label, o->command_line, o->common.seed, o->fft.baseline,
                               wb_fft_version()};
    struct wb_results *res = NULL;
    int rc = wb_results_open(&res, o->common.out_path, o->common.force, &info);
    if (rc)
        return rc;
    rc = o->sub->run(o, res);
    if (rc == WB_EMPI) {
        /* A failed MPI call may leave ranks out of step; stopping all of them is the only safe way out. */
        wb_report_warn("%s", wb_error_message());
        wb_comm_abort(1);
    }
    /* The run's own error is the one to report; a close error only when the run went well. */
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", wb_error_message());
    int crc = results_close(&res, rc);
    if (rc)
        wb_error_set(rc, "%s", msg);
    return rc ? rc : crc;
}

/* What ends the run on every rank: help, version, or the error message, then the exit status. */
static int epilog(struct wb_options *o, int rc, int mpi_up)
{
    if (!mpi_up) {
        fprintf(stderr, "wulfbench: error: %s\n", wb_error_message());
        return 1;
    }
    if (rc == WB_EHELP && wb_comm_rank() == 0)
        wb_options_print_help(o->sub);
    else if (rc == WB_EVERSION && wb_comm_rank() == 0)
        printf("wulfbench %s\n", WB_VERSION);
    else if (rc && rc != WB_EVERIFY && rc != WB_EHELP && rc != WB_EVERSION)
        wb_report_error("%s", wb_error_message());
    wb_options_free(o);
    wb_comm_finalize();
    return wb_error_exit_status(rc);
}

int main(int argc, char **argv)
{
    struct wb_options o;
    int mpi_up = 0;
    int rc = prolog(&argc, &argv, &o, &mpi_up);
    if (rc == 0)
        rc = run(&o);
    return epilog(&o, rc, mpi_up);
}
