/* wulfbench: prolog (MPI, options, agreement), run (the subcommand's table entry, around its result
 * file), epilog (messages, finalize). The one exit path is at the end of main. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench/options.h"
#include "bench/power.h"
#include "cli/cmdline.h"
#include "cli/subcommand.h"
#include "core/error.h"
#include "core/report.h"
#include "core/timer.h"
#include "fftw/fft.h"
#include "fftw/kernels.h"
#include "io/results.h"
#include "par/comm.h"
#include "par/watchdog.h"

#ifndef WB_VERSION
#define WB_VERSION "unknown"
#endif

/* Rank 0 names the file the run kept, and says what it holds. */
static void name_kept_file(int rc, FILE *out)
{
    const char *kept = wb_results_kept();
    if (wb_comm_rank() != 0 || !*kept)
        return;
    fprintf(out, "# results: %s%s\n", kept, rc == WB_EVERIFY ? " (INVALID: verification failed)"
                                          : rc == 0 || rc == WB_ETIMEOUT ? "" : " (incomplete: the run failed)");
    fflush(out);
}

/* MPI, the options, and agreement on them: checks such as free memory read this host, so a rank
 * that refuses must stop every rank, before any of them starts the first collective of the run. */
static int prolog(int *argc, char ***argv, struct wb_options *o, int *mpi_up)
{
    memset(o, 0, sizeof *o);
    /* The watchdog counts sync points from the first one on (its messages name them). */
    wb_comm_set_sync_hook(wb_watchdog_sync);
    int rc = wb_comm_init(argc, argv);
    *mpi_up = rc == 0;
    if (rc)
        return rc;
    /* Every rank parses the same argv, so a usage error is the same everywhere; the agreement is for
     * the checks that are not. */
    rc = wb_cmdline_parse(*argc, *argv, o);
    if (rc == 0)
        rc = wb_comm_threads_check();
    /* The loops around FFTW for this CPU; a forced variant it lacks (fault build) stops the run here. */
    if (rc == 0)
        rc = wb_kern_init();
    wb_report_init(wb_comm_rank(), o->common.quiet, (int)o->common.progress);
    rc = wb_comm_agree(rc);
    if (rc)
        return rc;
    double stall_s = o->common.stall_timeout_s;
    if (o->sub->stall_window_s)
        stall_s = o->sub->stall_window_s(o, stall_s);
    return wb_comm_agree(wb_watchdog_start(o->common.timeout_s, stall_s, wb_results_abandon));
}

/* Rank 0: before any figure, each machine that holds more ranks than the cores they may use; on
 * stderr when the subcommand's stdout is CSV or JSON. */
static void print_oversubscribed(const struct wb_results *res, int to_stderr)
{
    int n = 0;
    const struct wb_ceiling_machine *m = wb_results_machines(res, &n, NULL);
    for (int i = 0; i < n; i++) {
        if (!wb_ceiling_oversubscribed(&m[i]))
            continue;
        char quota[64] = "";
        if (!isnan(m[i].cpu_quota))
            snprintf(quota, sizeof quota, ", a cgroup quota of %.2f CPUs", m[i].cpu_quota);
        char line[512];
        snprintf(line, sizeof line,
                 "OVERSUBSCRIBED: %s (%d node%s) runs %d ranks on %d usable core%s (%d online%s): ranks take turns, "
                 "so per-rank phase times include the wait for a core, and no rate can pass what %d core%s do",
                 m[i].name, m[i].nodes, m[i].nodes == 1 ? "" : "s", m[i].ranks, m[i].cores_usable,
                 m[i].cores_usable == 1 ? "" : "s", m[i].cores, quota, m[i].cores_usable,
                 m[i].cores_usable == 1 ? "" : "s");
        if (to_stderr)
            wb_report_warn("%s", line);
        else
            wb_report_printf("# %s\n", line);
    }
}

/* The subcommand, inside its result file when it has one; t_main_utc is when main began, for the
 * file's own-time attributes. Collective. */
static int run(struct wb_options *o, double t_main_utc)
{
    if (!o->sub->results_file || (o->sub->no_file && o->sub->no_file(o)))
        return wb_comm_agree(o->sub->run(o, NULL));
    wb_timer_tick_s();
    struct wb_run_info info = {o->cmd_name, o->common.label, o->command_line, o->common.seed,
                               o->sub->baseline && o->sub->baseline(o),
                               wb_fft_version(), wb_kern_variant_index(), wb_kern_variant_names};
    struct wb_results *res = NULL;
    /* Power sources are found before the file opens, so a missing forced source leaves no file. */
    int rc = o->sub->measures_energy ? wb_power_open(o->common.power, o->common.power_idle_s) : 0;
    rc = rc ? rc : wb_results_open(&res, o->common.out_path, o->common.force, &info);
    if (rc) {
        wb_power_close();
        return rc;
    }
    print_oversubscribed(res, o->sub->stdout_taken && o->sub->stdout_taken(o));
    rc = wb_power_start(res);
    /* What the start-up cost stays in it: the parts count from here. */
    wb_timer_parts_reset();
    double t_run_start_utc = wb_timer_utc_s();
    rc = rc ? rc : o->sub->run(o, res);
    wb_results_timeline(res, t_main_utc, t_run_start_utc, wb_timer_utc_s());
    wb_power_close();
    if (rc == WB_EMPI) {
        /* A failed MPI call may leave ranks out of step; stopping all of them is the only safe way out. */
        wb_report_warn("%s", wb_error_message());
        wb_comm_abort(1);
    }
    /* Rank 0 alone: a stopped rank can join no collective, so the file is closed as the watchdog closes it. */
    if (rc == WB_ESTOPPED)
        wb_watchdog_end(wb_error_message());
    /* The close keeps the run's own error, or gives its own when the run went well. */
    rc = wb_results_close(&res, rc);
    name_kept_file(rc, o->sub->stdout_taken && o->sub->stdout_taken(o) ? stderr : stdout);
    return rc;
}

/* What ends the run on every rank: help, version, or the error message, then the exit status. */
static int epilog(struct wb_options *o, int rc, int mpi_up)
{
    if (!mpi_up) {
        fprintf(stderr, "wulfbench: error: %s\n", wb_error_message());
        return 1;
    }
    if (rc == WB_EHELP && wb_comm_rank() == 0)
        wb_cmdline_print_help(o->sub);
    else if (rc == WB_EVERSION && wb_comm_rank() == 0)
        printf("wulfbench %s\n", WB_VERSION);
    else if (rc && rc != WB_EVERIFY && rc != WB_EHELP && rc != WB_EVERSION)
        wb_report_error("%s", wb_error_message());
    wb_cmdline_free(o);
    wb_watchdog_stop();
    int frc = wb_comm_finalize();
    if (frc && (rc == 0 || rc == WB_EHELP || rc == WB_EVERSION)) {
        fprintf(stderr, "wulfbench: error: %s\n", wb_error_message());
        rc = frc;
    }
    return wb_error_exit_status(rc);
}

int main(int argc, char **argv)
{
    double t_main_utc = wb_timer_utc_s();
    struct wb_options o;
    int mpi_up = 0;
    /* The build makes the man page and the completion script with these; they need no MPI. */
    if (argc == 2 && wb_cmdline_print_generated(argv[1]) == 0)
        return 0;
    int rc = prolog(&argc, &argv, &o, &mpi_up);
    if (rc == 0)
        rc = run(&o, t_main_utc);
    return epilog(&o, rc, mpi_up);
}
