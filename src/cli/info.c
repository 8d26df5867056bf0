/* `wulfbench info`: ranks, nodes, hosts, versions and the timer, printed by rank 0. */
#include <stdio.h>
#include <stdlib.h>

#include "bench/bench.h"
#include "par/comm.h"
#include "fftw/fft.h"
#include "fftw/fft_mpi.h"
#include "io/results.h"
#include "core/sysinfo.h"
#include "core/timer.h"

#ifndef WB_VERSION
#define WB_VERSION "unknown"
#endif

int wb_info_run(const struct wb_options *o, struct wb_results *res)
{
    int n = wb_comm_size(), nnodes = 0;
    struct wb_host *all = NULL;
    int rc = wb_comm_gather_hosts(&all, &nnodes);
    double tick = wb_timer_tick_s();
    if (rc == 0 && wb_comm_rank() == 0) {
        printf("wulfbench %s\n", WB_VERSION);
        printf("ranks          %d on %d node%s\n", n, nnodes, nnodes == 1 ? "" : "s");
        printf("MPI            %s\n", wb_comm_library_version());
        printf("MPI threads    %s (WB_MPI_THREADS=single|funneled)\n", wb_comm_threads_name());
        printf("FFTW           %s\n", wb_fft_version());
        printf("FFTW-MPI       %s\n", wb_fftmpi_available() ? "yes (dfft)" : "no: this build has no dfft");
        printf("HDF5           %s\n", wb_results_hdf5_version());
        printf("timer          MPI_Wtime, MPI_Wtick %.3g s, observed resolution %.3g s\n", MPI_Wtick(), tick);
        printf("%-5s %-5s %-24s %-40s %5s %9s %8s %7s %s\n", "#rank", "node", "hostname", "cpu", "cores", "mem_GiB",
               "MHz", "temp_C", "throttled");
        for (int q = 0; q < n; q++)
            printf("%-5d %-5d %-24s %-40.40s %5d %9.1f %8.0f %7.1f %s\n", q, all[q].node, all[q].hostname,
                   all[q].cpu_model, all[q].cores, (double)all[q].mem_bytes / (1 << 30), all[q].cpu_mhz,
                   all[q].temp_c_start, all[q].throttled < 0 ? "unknown" : all[q].throttled ? "yes" : "no");
        fflush(stdout);
    }
    free(all);
    return rc;
}
