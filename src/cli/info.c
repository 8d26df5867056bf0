/* `wulfbench info`: ranks, nodes, hosts, versions, kernel variants and the timer, printed by rank 0. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/info.h"
#include "core/error.h"
#include "core/sysinfo.h"
#include "core/timer.h"
#include "fftw/fft.h"
#include "fftw/fft_mpi.h"
#include "fftw/kernels.h"
#include "io/results.h"
#include "par/comm.h"

#ifndef WB_VERSION
#define WB_VERSION "unknown"
#endif

/* The kernel variant of every rank (one name when they agree), and the variants this build holds. */
static void print_kernels(const int64_t *variant, int n)
{
    int same = 1;
    for (int q = 1; q < n; q++)
        same = same && variant[q] == variant[0];
    printf("kernels        ");
    if (same)
        printf("%s on every rank", wb_kern_variant_names[variant[0]]);
    for (int q = 0; !same && q < n; q++)
        printf("%srank %d %s", q ? ", " : "", q, wb_kern_variant_names[variant[q]]);
    printf(" (built:");
    for (int v = 0; wb_kern_variant_names[v]; v++)
        printf(" %s%s", wb_kern_variant_names[v], wb_kern_supported(wb_kern_variant_names[v]) ? "" : "(not here)");
    printf(")\n");
}

int wb_info_run(const struct wb_options *o, struct wb_results *res)
{
    int n = wb_comm_size(), nnodes = 0;
    struct wb_host *all = NULL;
    int rc = wb_comm_gather_hosts(&all, &nnodes);
    int64_t *variant = wb_comm_rank() == 0 ? calloc((size_t)n, sizeof *variant) : NULL;
    rc = rc ? rc : wb_comm_agree(wb_comm_rank() == 0 && !variant ? wb_error_set(WB_ENOMEM, "out of memory") : 0);
    rc = rc ? rc : wb_comm_gather_i64(wb_kern_variant_index(), variant);
    double tick = wb_timer_tick_s();
    if (rc == 0 && wb_comm_rank() == 0) {
        printf("wulfbench %s\n", WB_VERSION);
        printf("ranks          %d on %d node%s\n", n, nnodes, nnodes == 1 ? "" : "s");
        printf("MPI            %s\n", wb_comm_library_version());
        printf("MPI threads    %s (WB_MPI_THREADS=single|funneled)\n", wb_comm_threads_name());
        printf("FFTW           %s\n", wb_fft_version());
        printf("FFTW-MPI       %s\n", wb_fftmpi_available() ? "yes (dfft)" : "no: this build has no dfft");
        printf("HDF5           %s\n", wb_results_hdf5_version());
        print_kernels(variant, n);
        printf("timer          CLOCK_MONOTONIC, MPI_Wtick %.3g s, timing resolution %.3g s; CPU counter %s", MPI_Wtick(), tick,
               wb_timer_counter_name());
        if (wb_timer_counter_hz() > 0)
            printf(" at %.4g MHz", wb_timer_counter_hz() / 1e6);
        printf("\n");
        printf("architecture   built for %s, running as %s\n", wb_sysinfo_build_arch(), all[0].arch);
        printf("%-5s %-5s %-24s %-40s %5s %9s %8s %7s %s\n", "#rank", "node", "hostname", "cpu", "cores", "mem_GiB",
               "MHz", "temp_C", "throttled");
        for (int q = 0; q < n; q++)
            printf("%-5d %-5d %-24s %-40.40s %5d %9.1f %8.0f %7.1f %s\n", q, all[q].node, all[q].hostname,
                   all[q].cpu_model, all[q].cores, (double)all[q].mem_bytes / (1 << 30), all[q].cpu_mhz,
                   all[q].temp_c_start, all[q].throttled < 0 ? "unknown" : all[q].throttled ? "yes" : "no");
        fflush(stdout);
    }
    free(all);
    free(variant);
    return rc;
}
