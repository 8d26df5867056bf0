#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "comm.h"
#include "error.h"
#include "fft.h"
#include "options.h"
#include "report.h"
#include "results.h"
#include "sysinfo.h"
#include "timer.h"

#ifndef WB_VERSION
#define WB_VERSION "unknown"
#endif

static const struct {
    enum wb_subcommand cmd;
    wb_bench_fn run;
} benches[] = {
    {WB_CMD_FFT, wb_bench_fft_run},
    {WB_CMD_TRANSFER, wb_bench_transfer_run},
    {WB_CMD_LOAD, wb_bench_load_run},
    {WB_CMD_DFFT, wb_bench_dfft_run},
};

/* `wulfbench info`: what this run can see. Collective. */
static int run_info(void)
{
    int rank = wb_comm_rank(), n = wb_comm_size();
    int *node = calloc((size_t)n, sizeof *node);
    if (!node)
        return wb_error_set(WB_ENOMEM, "out of memory");
    int nnodes = wb_comm_nodes(node);
    struct wb_host me, *all = rank == 0 ? calloc((size_t)n, sizeof *all) : NULL;
    wb_sysinfo_read(&me);
    int rc = nnodes < 0 ? nnodes
                        : wb_comm_check(MPI_Gather(&me, sizeof me, MPI_BYTE, all, sizeof me, MPI_BYTE, 0,
                                                   wb_comm_world()),
                                        "MPI_Gather");
    double tick = wb_timer_tick_s();
    if (rc == 0 && rank == 0 && all) {
        char mpi[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(mpi, &len);
        mpi[strcspn(mpi, "\n")] = '\0';
        printf("wulfbench %s\n", WB_VERSION);
        printf("ranks          %d on %d node%s\n", n, nnodes, nnodes == 1 ? "" : "s");
        printf("MPI            %s\n", mpi);
        printf("FFTW           %s\n", wb_fft_version());
        printf("timer          MPI_Wtime, MPI_Wtick %.3g s, observed resolution %.3g s\n", MPI_Wtick(), tick);
        printf("%-5s %-5s %-24s %-40s %5s %9s %8s %7s %s\n", "#rank", "node", "hostname", "cpu", "cores", "mem_GiB",
               "MHz", "temp_C", "throttled");
        for (int q = 0; q < n; q++)
            printf("%-5d %-5d %-24s %-40.40s %5d %9.1f %8.0f %7.1f %s\n", q, node[q], all[q].hostname,
                   all[q].cpu_model, all[q].cores, (double)all[q].mem_bytes / (1 << 30), all[q].cpu_mhz,
                   all[q].temp_c_start, all[q].throttled < 0 ? "unknown" : all[q].throttled ? "yes" : "no");
        fflush(stdout);
    }
    free(all);
    free(node);
    return rc;
}

static int run_bench(enum wb_subcommand cmd, const struct wb_options *o, struct wb_results *res)
{
    for (size_t i = 0; i < sizeof benches / sizeof benches[0]; i++)
        if (benches[i].cmd == cmd)
            return benches[i].run(o, res);
    return wb_error_set(WB_EUSAGE, "no benchmark for this subcommand");
}

/* `wulfbench suite`: compact fft, transfer, load and dfft runs into one file. Collective. */
static int run_suite(struct wb_options *o, struct wb_results *res)
{
    wb_fft_opts_compact(&o->fft);
    wb_transfer_opts_compact(&o->transfer);
    wb_load_opts_compact(&o->load);
    wb_dfft_opts_compact(&o->dfft);
    int rc = wb_fft_opts_validate(&o->fft), failed = 0;
    enum wb_subcommand order[] = {WB_CMD_FFT, WB_CMD_TRANSFER, WB_CMD_LOAD, WB_CMD_DFFT};
    for (size_t i = 0; rc == 0 && i < sizeof order / sizeof order[0]; i++) {
        if (order[i] == WB_CMD_TRANSFER && wb_comm_size() < 2) {
            wb_report_printf("# transfer: skipped, it needs at least 2 ranks\n");
            continue;
        }
        if (order[i] == WB_CMD_LOAD && wb_comm_size() < 2) {
            wb_report_printf("# load: skipped, it needs a head and at least one worker (2 ranks)\n");
            continue;
        }
        wb_report_printf("\n");
        rc = run_bench(order[i], o, res);
        if (rc == WB_EVERIFY) {
            failed = 1;
            rc = 0;
        }
    }
    return rc ? rc : failed ? WB_EVERIFY : 0;
}

int main(int argc, char **argv)
{
    int rc = wb_comm_init(&argc, &argv);
    if (rc) {
        fprintf(stderr, "wulfbench: error: %s\n", wb_error_message());
        return 1;
    }
    int rank = wb_comm_rank();
    struct wb_options o;
    /* Every rank parses the same argv, so a bad option stops every rank the same way, without MPI_Abort. */
    rc = wb_options_parse(argc, argv, &o);
    wb_report_init(rank, o.common.quiet, (int)o.common.progress);
    if (rc == WB_EHELP || rc == WB_EVERSION) {
        if (rank == 0 && rc == WB_EHELP)
            wb_options_print_help(o.cmd);
        if (rank == 0 && rc == WB_EVERSION)
            printf("wulfbench %s\n", WB_VERSION);
        wb_options_free(&o);
        wb_comm_finalize();
        return 0;
    }
    if (rc) {
        wb_report_error("%s", wb_error_message());
        wb_options_free(&o);
        wb_comm_finalize();
        return wb_error_exit_status(rc);
    }
    if (o.cmd == WB_CMD_INFO) {
        rc = wb_comm_agree(run_info());
        if (rc)
            wb_report_error("%s", wb_error_message());
        wb_options_free(&o);
        wb_comm_finalize();
        return wb_error_exit_status(rc);
    }
    wb_timer_tick_s();
    struct wb_run_info info = {o.cmd_name, o.common.label, o.command_line, o.common.seed,
                               o.cmd == WB_CMD_FFT && o.fft.baseline, wb_fft_version()};
    struct wb_results *res = NULL;
    rc = wb_results_open(&res, o.common.out_path, o.common.force, &info);
    if (rc == 0) {
        rc = o.cmd == WB_CMD_SUITE ? run_suite(&o, res) : run_bench(o.cmd, &o, res);
        if (rc == WB_EMPI) {
            /* A failed MPI call may leave ranks out of step; stopping all of them is the only safe way out. */
            wb_report_warn("%s", wb_error_message());
            wb_comm_abort(1);
        }
        char path[4200];
        snprintf(path, sizeof path, "%s", wb_results_path(res));
        const char *status = rc == 0 ? "complete" : rc == WB_EVERIFY ? "invalid" : rc == WB_ETIMEOUT ? "timeout" : "failed";
        int saved = rc;
        int crc = wb_results_close(&res, status, rc == 0 ? 1 : rc == WB_EVERIFY ? 0 : -1);
        if (saved && saved != WB_EVERIFY)
            wb_report_error("%s", wb_error_message());
        if (crc && !saved) {
            wb_report_error("%s", wb_error_message());
            rc = crc;
        }
        int kept = rc == 0 || rc == WB_EVERIFY || rc == WB_ETIMEOUT;
        if (rank == 0 && !crc && !kept)
            snprintf(path + strlen(path), sizeof path - strlen(path), ".partial");
        if (rank == 0 && !crc && access(path, F_OK) == 0) {
            printf("# results: %s%s\n", path, rc == WB_EVERIFY ? " (INVALID: verification failed)"
                                              : kept ? "" : " (incomplete: the run failed)");
            fflush(stdout);
        }
    } else {
        wb_report_error("%s", wb_error_message());
    }
    wb_options_free(&o);
    wb_comm_finalize();
    return wb_error_exit_status(rc);
}
