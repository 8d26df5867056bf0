/* wulfbench dfft: the driver: the points' layouts and memory checked first, then per point the plan,
 * the timed repetitions, the checks, and the figures handed to the writer and the printer. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/dfft/bench_dfft.h"
#include "bench/dfft/bench_dfft_int.h"
#include "bench/netstat.h"
#include "bench/options.h"
#include "bench/dfft/options_dfft.h"
#include "bench/power.h"
#include "core/ceiling.h"
#include "core/error.h"
#include "core/report.h"
#include "core/sysinfo.h"
#include "core/timer.h"
#include "fftw/fft.h"
#include "fftw/fft_mpi.h"
#include "fftw/fft_wisdom.h"
#include "io/results.h"
#include "par/comm.h"

/* The rank-count rules FFTW-MPI's slabs need; the same answer on every rank, so no agreement is needed. */
static int check_ranks(const struct wb_dfft_ctx *c, const struct wb_fftmpi_layout *l)
{
    int64_t p = c->nranks;
    char shape[96];
    wb_dfft_shape_str(l, shape, sizeof shape);
    if (l->dims == 1 && l->n[0] % (p * p) != 0) {
        int64_t lo = l->n[0] / (p * p) * (p * p), hi = lo + p * p;
        return wb_error_set(WB_EUSAGE, "--n %lld does not divide as FFTW-MPI's 1-D transform needs on %d ranks: N "
                                       "must be a multiple of ranks squared (%lld); use e.g. --n %lld or %lld",
                            (long long)l->n[0], c->nranks, (long long)(p * p), (long long)(lo ? lo : hi),
                            (long long)(lo ? hi : 2 * hi));
    }
    if (l->dims > 1 && p > l->n[0])
        return wb_error_set(WB_EUSAGE, "shape %s: more ranks (%d) than the first dimension (%lld), which FFTW-MPI "
                                       "splits into slabs; use at most %lld ranks or a first dimension of %d or more",
                            shape, c->nranks, (long long)l->n[0], (long long)l->n[0], c->nranks);
    if (l->dims > 1 && p > l->c1)
        return wb_error_set(WB_EUSAGE, "shape %s: the transpose splits the %s dimension (%lld %s) over the ranks, "
                                       "fewer than the %d ranks; use at most %lld ranks or a larger %s dimension",
                            shape, l->dims == 3 ? "second" : "last", (long long)l->c1,
                            l->dims == 2 && l->kind == WB_FFTMPI_R2C ? "complex columns, n/2+1" : "points",
                            c->nranks, (long long)l->c1, l->dims == 3 ? "second" : "last");
    return 0;
}

/* Bytes this point needs on this rank: FFTW-MPI's buffers (two in 1-D) and the saved input. */
static int64_t point_bytes(const struct wb_fftmpi_layout *l)
{
    return wb_fftmpi_buffer_bytes(l) * (l->dims == 1 ? 2 : 1) + wb_dfft_input_bytes(l);
}

/* Every point's layout and memory, checked on all ranks before anything is allocated. Collective. */
static int check_points(const struct wb_dfft_ctx *c, MPI_Comm node)
{
    /* The node's ranks share its memory; each rank has an address space of its own. */
    const char *why = NULL, *as_why = NULL;
    int64_t avail = wb_sysinfo_memory_limit(c->d->max_bytes, 0, &why), as = wb_sysinfo_address_space(&as_why);
    int rc = 0;
    for (int i = 0; rc == 0 && i < c->npts; i++) {
        int64_t n[3];
        struct wb_fftmpi_layout l;
        wb_dfft_opts_point(c->d, i, n);
        rc = wb_fftmpi_layout(&l, c->d->dims, n, c->d->kind, c->d->precision, c->d->transposed_out, c->comm);
        rc = rc ? rc : check_ranks(c, &l);
        if (rc)
            break;
        int64_t mine = point_bytes(&l), on_node = mine;
        rc = wb_comm_check(MPI_Allreduce(&mine, &on_node, 1, MPI_INT64_T, MPI_SUM, node), "MPI_Allreduce");
        char shape[96];
        wb_dfft_shape_str(&l, shape, sizeof shape);
        if (rc == 0 && as > 0 && mine > as)
            rc = wb_error_set(WB_EUSAGE, "shape %s (%s, %s) needs %.2f GB in rank %d but only %.2f GB %s; "
                                         "use a smaller --n, --precision single, or more ranks",
                              shape, wb_dfft_kind_names[l.kind], wb_dfft_precision_names[l.precision], (double)mine / 1e9, c->rank, (double)as / 1e9,
                              as_why);
        else if (rc == 0 && avail > 0 && on_node > avail)
            rc = wb_error_set(WB_EUSAGE, "shape %s (%s, %s) needs %.2f GB on the node of rank %d but only %.2f GB %s; "
                                         "use a smaller --n, --precision single, or more nodes",
                              shape, wb_dfft_kind_names[l.kind], wb_dfft_precision_names[l.precision], (double)on_node / 1e9, c->rank,
                              (double)avail / 1e9, why);
        rc = wb_comm_agree(rc);
    }
    return rc;
}

/* FFTW-MPI gathers every rank's wisdom to rank 0, which saves it. Collective. */
static void save_wisdom(const struct wb_dfft_ctx *c)
{
    wb_fftmpi_wisdom_gather(c->comm);
    if (c->rank == 0 && wb_fft_wisdom_save_file(c->d->wisdom))
        wb_report_warn("%s", wb_error_message());
}

/* Warm-up and recorded repetitions of the forward transform and, with --direction backward or both,
 * the backward of its output; each barrier to barrier. Collective. */
static int time_reps(const struct wb_dfft_ctx *c, struct wb_fftmpi *p, const void *saved, int64_t in_bytes,
                     struct wb_dfft_measured *r)
{
    int warm = c->o->common.warmup, reps = c->o->common.reps, rc = 0;
    double start = wb_timer_now_s(), xs;
    int64_t xb;
    wb_fftmpi_exchange_take(&xs, &xb); /* what planning and an earlier point's check exchanged */
    for (int i = 0; rc == 0 && i < warm + reps; i++) {
        memcpy(wb_fftmpi_in(p), saved, (size_t)in_bytes);
        wb_power_rep_begin(WB_POWER_MAIN);
        for (int d = 0; rc == 0 && d < r->ndir; d++) {
            double tl, tt;
            rc = wb_comm_barrier();
            double t0 = wb_timer_now_s();
            if (d == 0)
                wb_fftmpi_forward(p, &tl, &tt);
            else
                wb_fftmpi_backward(p, &tl, &tt);
            rc = rc ? rc : wb_comm_barrier();
            double t = wb_timer_now_s() - t0;
            wb_fftmpi_exchange_take(&xs, &xb);
            if (i >= warm) {
                r->dir[d].t_total[i - warm] = t;
                r->dir[d].t_local[i - warm] = tl;
                r->dir[d].t_transpose[i - warm] = tt;
                r->dir[d].t_exchange[i - warm] = xs;
                r->dir[d].bytes_exchanged = xb;
            }
        }
        /* One repetition's energy covers every direction it timed. */
        wb_power_rep_end(WB_POWER_MAIN);
        if (i >= warm)
            wb_power_rep_keep(WB_POWER_MAIN);
        wb_report_progress("dfft", (double)(i + 1) / (warm + reps), wb_timer_now_s() - start);
    }
    return rc;
}

/* The spectrum of the known input and the round trip. Collective. */
static int verify(const struct wb_dfft_ctx *c, int point, struct wb_fftmpi *p, const struct wb_fftmpi_layout *l,
                  const void *saved, struct wb_dfft_measured *r)
{
    int rc = 0;
    /* The last repetition's output is checked; a timed backward has already overwritten it. */
    if (r->ndir > 1) {
        double tl, tt;
        memcpy(wb_fftmpi_in(p), saved, (size_t)wb_dfft_input_bytes(l));
        wb_fftmpi_forward(p, &tl, &tt);
    }
    r->tol = wb_fft_tolerance(l->precision, l->total);
    if (c->corrupt && c->rank == c->nranks - 1)
        wb_dfft_corrupt(l, wb_fftmpi_out(p));
    if (c->dump_dir)
        rc = wb_comm_agree(wb_dfft_dump(c->dump_dir, point, c->rank, l, saved, wb_fftmpi_out(p)));
    r->spectrum_rel = NAN;
    if (rc == 0 && !c->dump_dir)
        rc = wb_comm_max_f64(wb_dfft_spectrum_error(l, wb_fftmpi_out(p)), &r->spectrum_rel);
    wb_fftmpi_backward(p, NULL, NULL);
    double x_max = NAN;
    if (rc == 0)
        rc = wb_comm_max_f64(wb_dfft_input_max(l, saved), &x_max);
    if (rc == 0)
        rc = wb_comm_max_f64(wb_dfft_roundtrip_error(l, wb_fftmpi_in(p), saved, x_max), &r->roundtrip_rel);
    r->passed = r->roundtrip_rel <= r->tol && (c->dump_dir || r->spectrum_rel <= r->tol);
    return rc;
}

/* Plan, time, verify and record one point. Collective. */
static int run_point(const struct wb_dfft_ctx *c, int point)
{
    int64_t n[3];
    struct wb_fftmpi_layout l;
    struct wb_netstat net;
    wb_netstat_begin(&net);
    wb_dfft_opts_point(c->d, point, n);
    int rc = wb_fftmpi_layout(&l, c->d->dims, n, c->d->kind, c->d->precision, c->d->transposed_out, c->comm);
    struct wb_fftmpi *p = NULL;
    rc = rc ? rc : wb_comm_agree(wb_fftmpi_create(&p, &l, c->plan, c->comm));
    int reps = c->o->common.reps;
    int64_t in_bytes = wb_dfft_input_bytes(&l);
    void *saved = rc ? NULL : wb_fft_alloc((size_t)in_bytes);
    struct wb_dfft_measured r = {.ndir = c->d->direction == WB_DFFT_FORWARD ? 1 : 2};
    struct wb_dfft_figures fg;
    int have = saved != NULL;
    for (int d = 0; d < r.ndir; d++) {
        r.dir[d].t_total = calloc((size_t)reps, sizeof(double));
        r.dir[d].t_local = calloc((size_t)reps, sizeof(double));
        r.dir[d].t_transpose = calloc((size_t)reps, sizeof(double));
        r.dir[d].t_exchange = calloc((size_t)reps, sizeof(double));
        have = have && r.dir[d].t_total && r.dir[d].t_local && r.dir[d].t_transpose && r.dir[d].t_exchange;
    }
    if (rc == 0 && !have)
        rc = wb_error_set(WB_ENOMEM, "out of memory");
    rc = rc ? rc : wb_dfft_fill(&l, saved, c->dump_dir != NULL);
    rc = rc ? rc : wb_comm_agree(rc);
    rc = rc ? rc : time_reps(c, p, saved, in_bytes, &r);
    rc = rc ? rc : wb_dfft_figures_compute(c, &l, &r, &fg);
    rc = rc ? rc : verify(c, point, p, &l, saved, &r);
    wb_report_progress_end();
    rc = rc ? rc : wb_netstat_end(&net, c->res != NULL, &r.net);
    rc = rc ? rc : wb_power_point_take(&r.energy, NULL);
    rc = rc ? rc : wb_dfft_write_point(c, point, &l, &r, &fg);
    free(r.net);
    wb_result_energy_free(&r.energy);
    if (rc == 0)
        wb_dfft_print_point(c, point, &l, &r, &fg);
    if (rc == 0 && !r.passed)
        rc = wb_error_set(WB_EVERIFY, "dfft point p%03d failed verification: round trip %.3g, spectrum %.3g, "
                                      "tolerance %.3g", point, r.roundtrip_rel, r.spectrum_rel, r.tol);
    wb_fftmpi_destroy(&p);
    wb_fft_free(saved);
    for (int d = 0; d < r.ndir; d++) {
        free(r.dir[d].t_total);
        free(r.dir[d].t_local);
        free(r.dir[d].t_transpose);
        free(r.dir[d].t_exchange);
    }
    return rc;
}

/* The planner the run uses: --plan as given, or, left to its default (measure), estimate where a machine
 * holds more ranks than usable cores. Measure times candidate transposes, each an all-to-all whose p^2
 * messages then take turns for the cores: 46 s of planning at 64 ranks on 2 cores, 10 s with estimate.
 * Rank 0 decides from the run's machines. Collective. */
static int choose_plan(struct wb_dfft_ctx *c)
{
    int32_t plan = c->d->plan;
    int nm = 0;
    const struct wb_ceiling_machine *m =
        c->rank == 0 && c->res && !c->d->plan_given && plan != WB_FFT_ESTIMATE ? wb_results_machines(c->res, &nm, NULL)
                                                                               : NULL;
    for (int i = 0; m && i < nm; i++)
        if (wb_ceiling_oversubscribed(&m[i])) {
            snprintf(c->plan_why, sizeof c->plan_why,
                     "estimate, not the default %s: %s runs %d ranks on %d usable core%s, where measuring would time "
                     "every candidate transpose's messages taking turns for them; --plan %s measures anyway",
                     wb_dfft_plan_names[plan], m[i].name, m[i].ranks, m[i].cores_usable,
                     m[i].cores_usable == 1 ? "" : "s", wb_dfft_plan_names[plan]);
            plan = WB_FFT_ESTIMATE;
            break;
        }
    int rc = wb_comm_bcast(&plan, sizeof plan, 0);
    c->plan = plan;
    return rc;
}

/* Test builds only: WB_FAULT=dfft-corrupt spoils one output bin of the last rank before the check;
 * WB_FAULT=dfft-dump uses a pseudo-random input and writes it and the output to $WB_DFFT_DUMP. */
static void read_faults(struct wb_dfft_ctx *c)
{
#ifdef WB_TEST_FAULTS
    const char *f = getenv("WB_FAULT");
    c->corrupt = f && !strcmp(f, "dfft-corrupt");
    if (f && !strcmp(f, "dfft-dump"))
        c->dump_dir = getenv("WB_DFFT_DUMP") ? getenv("WB_DFFT_DUMP") : ".";
#else
    (void)c;
#endif
}

int wb_bench_dfft_run(const struct wb_options *o, struct wb_results *res)
{
    struct wb_dfft_ctx c = {.o = o, .d = wb_dfft_opts_of(o), .res = res, .rank = wb_comm_rank(),
                            .nranks = wb_comm_size(), .comm = wb_comm_world()};
    int64_t n[3];
    c.npts = wb_dfft_opts_point(c.d, 0, n);
    read_faults(&c);
    MPI_Comm node = MPI_COMM_NULL;
    int root_local;
    if (!wb_fftmpi_available() && o->compact) {
        wb_report_printf("# dfft: skipped, this build has no FFTW-MPI\n");
        return 0;
    }
    int rc = wb_fftmpi_init();
    rc = rc ? rc : wb_comm_split_node(&node, &root_local);
    rc = rc ? rc : check_points(&c, node);
    if (node != MPI_COMM_NULL)
        MPI_Comm_free(&node);
    if (rc == 0 && c.d->wisdom)
        rc = wb_fft_wisdom_share(c.d->wisdom);
    rc = rc ? rc : choose_plan(&c);
    if (rc == 0)
        wb_dfft_print_header(&c);
    int failed = 0;
    for (int i = 0; rc == 0 && i < c.npts; i++) {
        rc = run_point(&c, i);
        if (rc == WB_EVERIFY) {
            wb_report_error("%s", wb_error_message());
            failed = 1;
            rc = 0;
        }
    }
    if (rc == 0 && c.d->wisdom)
        save_wisdom(&c);
    if (rc == 0 && failed)
        rc = wb_error_set(WB_EVERIFY, "verification failed; the file is marked invalid (see the verify groups)");
    return rc;
}
