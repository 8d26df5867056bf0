/* `wulfbench fft`: the driver. The work layout, inputs, transforms, schedules, verification and
 * writing live in bench_fft_*.c behind bench_fft_int.h. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/fft/bench_fft.h"
#include "bench/fft/bench_fft_int.h"
#include "bench/health.h"
#include "bench/netstat.h"
#include "bench/options.h"
#include "bench/fft/options_fft.h"
#include "bench/power.h"
#include "core/error.h"
#include "core/report.h"
#include "core/rng.h"
#include "core/stats.h"
#include "core/timer.h"
#include "fftw/fft.h"
#include "fftw/fft_wisdom.h"
#include "io/results.h"
#include "par/comm.h"

const char *const wb_fftb_stop_names[] = {"fixed", "target_ci", "max_reps", "time_budget", NULL};

/* Everything one point holds while it runs. */
struct point_run {
    struct wb_fftb_request rq;
    struct wb_fftb_layout l;
    struct wb_comm_shm inb, resb;   /* the root's samples and results */
    char *inbuf;                    /* this rank's copy of its samples, when it does not map the root's */
    int64_t inbuf_cap;
    struct wb_fftb_timing *tm;      /* [cap] */
    struct wb_fftb_timing *alone;   /* [cap] on rank 0 with --paired-baseline: rank 0's runs alone */
    char *alone_res;                /* rank 0's own results of the request, with --paired-baseline */
    int cap;                        /* recorded repetitions there is room for */
    double t_rec0_s;                /* when the first recorded repetition began (root) */
    struct wb_fftb_measured m;
    int timed_out;
};

/* Collective: the untimed first read, the layout, the buffers and the plans of a point. */
static int prepare_point(struct wb_fftb_ctx *c, const struct wb_fftb_point *p, struct point_run *pr)
{
    pr->inb = pr->resb = (struct wb_comm_shm){NULL, MPI_WIN_NULL};
    int rc = pr->tm ? 0 : wb_error_set(WB_ENOMEM, "out of memory");
    /* An untimed first read tells every rank the file lengths, so all build the same layout. */
    if (rc == 0 && c->rank == 0)
        rc = wb_fftb_read_request(c, p, &pr->rq, 1);
    rc = wb_comm_agree(rc);
    if (rc == 0)
        rc = wb_fftb_share_lengths(c, &pr->rq, p->nfiles);
    if (rc == 0)
        rc = wb_fftb_layout_build(&pr->l, c->f, pr->rq.nfiles, pr->rq.file_samples, pr->rq.file_off);
    rc = wb_comm_agree(rc);
    if (rc == 0)
        rc = wb_fftb_rootbuf_alloc(c, &pr->inb, pr->rq.total_samples * (int64_t)c->sb);
    if (rc == 0)
        rc = wb_fftb_rootbuf_alloc(c, &pr->resb, pr->l.res_total);
    pr->rq.buf = pr->inb.ptr;
    if (rc == 0 && c->rank == 0)
        rc = wb_fftb_make_synthetic(c, p, &pr->rq);
    if (rc == 0 && c->paired && c->rank == 0 && !(pr->alone_res = wb_fft_alloc((size_t)pr->l.res_total)))
        rc = wb_error_set(WB_ENOMEM, "out of memory for rank 0's own results (--paired-baseline)");
    /* Plans are made before timing, once per length, and reused by every repetition. */
    double t_plan0 = wb_timer_now_s();
    if (rc == 0)
        rc = wb_fftb_share_plans(c, &pr->l);
    if (rc == 0) {
        int64_t u0 = 0, u1 = pr->l.nunits;
        if (c->f->schedule != WB_SCHED_DYNAMIC && !(c->paired && c->rank == 0))
            wb_fftb_block(pr->l.nunits, c->nranks, c->first_compute, c->rank, &u0, &u1);
        for (int64_t u = u0; rc == 0 && u < u1; u++) {
            struct wb_fft_kernel *k;
            if (u == u0 || pr->l.units[u].n != pr->l.units[u - 1].n)
                rc = wb_fftb_kernel_for(c, pr->l.units[u].n, &k);
        }
    }
    pr->m.t_plan_s = wb_timer_now_s() - t_plan0;
    return wb_comm_agree(rc);
}

/* Root, --input-cache drop: the inputs out of the page cache before a timed read, outside its window. */
static void drop_inputs(struct wb_fftb_ctx *c, const struct wb_fftb_point *p, struct point_run *pr)
{
    if (c->f->input_cache != WB_INPUT_CACHE_DROP)
        return;
    double stayed = wb_fftb_drop_inputs(c, p);
    pr->m.input_resident_max = isnan(pr->m.input_resident_max) ? stayed : fmax(pr->m.input_resident_max, stayed);
}

/* Collective: one repetition: the root reads, every rank starts together, the schedule runs. */
static int run_rep(struct wb_fftb_ctx *c, const struct wb_fftb_point *p, struct point_run *pr,
                   struct wb_fftb_timing *t)
{
    memset(t, 0, sizeof *t);
    int rc = 0;
    if (c->rank == 0) {
        drop_inputs(c, p, pr);
        double t0 = wb_timer_now_s();
        rc = wb_fftb_read_request(c, p, &pr->rq, 0);
        if (rc == 0)
            rc = wb_comm_shm_sync(&pr->inb);
        t->t_read_s = wb_timer_now_s() - t0;
        t->t_read_io_s = pr->rq.io_s;
    }
    rc = wb_comm_agree(rc);
    if (rc == 0)
        rc = wb_comm_barrier();
    if (rc)
        return rc;
    /* The energy window opens before the request's clock starts and closes after it stops, so it
     * holds the whole request even where the process waits for a core in between. */
    wb_power_rep_begin(WB_POWER_MAIN);
    double t0 = wb_timer_now_s(), cpu0 = wb_timer_thread_cpu_s();
    c->flops = 0;
    c->fft_on_s = c->fft_off_s = NAN;
    rc = wb_fftb_schedule(c)(c, &pr->l, &pr->rq, &pr->inb, &pr->resb, &pr->inbuf, &pr->inbuf_cap, t, &pr->m);
    t->t_fft_on_s = c->fft_on_s + c->align_s;
    t->t_fft_off_s = c->fft_off_s + c->align_s;
    t->t_cpu_s = wb_timer_thread_cpu_s() - cpu0;
    t->t_wall_s = wb_timer_now_s() - t0;
    t->t_total_s = c->rank == 0 ? t->t_wall_s : NAN;
    /* Every node's window ends with the root's request: the others wait for it in the agreement. */
    if (c->rank == 0)
        wb_power_rep_end(WB_POWER_MAIN);
    pr->m.flops = c->flops;
    rc = wb_comm_agree(rc);
    if (c->rank != 0)
        wb_power_rep_end(WB_POWER_MAIN);
    if (rc == 0)
        rc = wb_fftb_clock_finish(c, t);
    return wb_comm_agree(rc);
}

/* Collective: with --paired-baseline, rank 0 runs the same request alone, as a one-process baseline
 * would: it reads the request again and transforms every unit from its own samples, with no message.
 * The other ranks wait at the agreement. */
static int run_alone(struct wb_fftb_ctx *c, const struct wb_fftb_point *p, struct point_run *pr,
                     struct wb_fftb_timing *t)
{
    memset(t, 0, sizeof *t);
    t->t_wall_s = t->t_cpu_s = NAN;
    int rc = 0;
    wb_power_rep_begin(WB_POWER_BASELINE);
    if (c->rank == 0) {
        drop_inputs(c, p, pr);
        double cluster_flops = c->flops, t0 = wb_timer_now_s();
        rc = wb_fftb_read_request(c, p, &pr->rq, 0);
        double t1 = wb_timer_now_s(), cpu1 = wb_timer_thread_cpu_s();
        if (rc == 0)
            rc = wb_fftb_compute_units(c, &pr->l, 0, pr->l.nunits, pr->rq.buf, 0, pr->alone_res, &t->t_fft_s);
        t->t_cpu_s = wb_timer_thread_cpu_s() - cpu1;
        t->t_read_s = t1 - t0;
        t->t_read_io_s = pr->rq.io_s;
        t->t_comp_s = t->t_total_s = t->t_wall_s = wb_timer_now_s() - t1;
        c->flops = cluster_flops;
    }
    rc = wb_comm_agree(rc);
    wb_power_rep_end(WB_POWER_BASELINE);
    return rc;
}

#ifdef WB_TEST_FAULTS
/* Test-only: WB_FAULT=timer-stable or timer-noisy replaces the root's t_total with a synthetic clock,
 * so the tests of --reps auto know what the samples look like. */
static void fake_timer(struct wb_fftb_timing *t)
{
    static uint64_t state = 12345;
    const char *fault = getenv("WB_FAULT");
    double u = (double)(wb_rng_next(&state) >> 11) * 0x1p-53;
    if (fault && !strcmp(fault, "timer-stable"))
        t->t_total_s = 0.010 * (1.0 + 1e-4 * u);
    else if (fault && !strcmp(fault, "timer-noisy"))
        t->t_total_s = 0.010 + 0.040 * u;
}
#endif

/* Root: the 95% CI half-width of the median t_total of the first done repetitions, over the median,
 * into pr->m.info; returns the CI's coverage (below 0.95 when done is too small for one). */
static double median_ci(struct point_run *pr, int done)
{
    double *tt = malloc((size_t)(done ? done : 1) * sizeof *tt), lo = NAN, hi = NAN, cover = 0;
    for (int r = 0; tt && r < done; r++)
        tt[r] = pr->tm[r].t_total_s;
    if (tt)
        cover = wb_stats_median_ci(tt, (size_t)done, &lo, &hi);
    double med = tt ? wb_stats_median(tt, (size_t)done) : NAN;
    free(tt);
    pr->m.info.ci_halfwidth_rel = med > 0 ? (hi - lo) / 2.0 / med : NAN;
    return cover;
}

/* Root: whether a point has enough recorded repetitions, and why it stops. done recorded so far. */
static int enough_reps(const struct wb_fftb_ctx *c, struct point_run *pr, int done, int *stop)
{
    const struct wb_fft_opts *f = c->f;
    if (!c->o->common.reps_auto) {
        *stop = WB_FFTB_STOP_FIXED;
        return done >= c->o->common.reps;
    }
    if (done < f->min_reps)
        return 0;
    double cover = median_ci(pr, done);
    if (cover >= 0.95 && pr->m.info.ci_halfwidth_rel <= f->target_ci)
        *stop = WB_FFTB_STOP_TARGET_CI;
    else if (done >= f->max_reps)
        *stop = WB_FFTB_STOP_MAX_REPS;
    else if (wb_timer_now_s() - pr->t_rec0_s >= f->point_budget_s)
        *stop = WB_FFTB_STOP_BUDGET;
    else
        return 0;
    return 1;
}

/* Collective: rank 0 decides whether repetition i (done of them recorded) runs, and every rank learns it. */
static int next_rep(struct wb_fftb_ctx *c, struct point_run *pr, int i, int done, int *go)
{
    int warm = c->o->common.warmup, d[3] = {1, 0, pr->m.info.stop};
    if (c->rank == 0) {
        if (i == warm)
            pr->t_rec0_s = wb_timer_now_s();
        if (c->o->common.timeout_s > 0 && wb_timer_now_s() - c->t_start_s > c->o->common.timeout_s)
            d[0] = 0, d[1] = 1;
        else if (i >= warm && enough_reps(c, pr, done, &d[2]))
            d[0] = 0;
    }
    int rc = wb_comm_bcast(d, sizeof d, 0);
    *go = d[0];
    pr->timed_out = d[1];
    pr->m.info.stop = d[2];
    return rc;
}

static void point_free(struct point_run *pr)
{
    free(pr->tm);
    free(pr->alone);
    wb_fft_free(pr->alone_res);
    wb_fftb_rootbuf_free(&pr->inb);
    wb_fftb_rootbuf_free(&pr->resb);
    pr->rq.buf = NULL;
    wb_fft_free(pr->inbuf);
    wb_fftb_layout_free(&pr->l);
    wb_fftb_request_free(&pr->rq);
}

/* Root, after the last repetition: rank 0's own results must match the cluster's. */
static void check_alone(struct wb_fftb_ctx *c, struct point_run *pr, struct wb_fftb_verdict *v)
{
    if (!c->paired || c->rank != 0)
        return;
    double tol = wb_fft_tolerance(c->f->precision, pr->l.nunits ? pr->l.units[0].n : 2);
    pr->m.info.alone_match = wb_fftb_results_diff(c, &pr->l, pr->resb.ptr, pr->alone_res);
    if (!(pr->m.info.alone_match <= tol)) {
        v->passed = 0;
        v->max_error = fmax(v->max_error, pr->m.info.alone_match);
    }
}

/* The warm-up and recorded repetitions, each followed by rank 0's run alone with --paired-baseline;
 * *done counts the recorded ones. Collective. */
static int run_reps(struct wb_fftb_ctx *c, const struct wb_fftb_point *p, struct point_run *pr, int *done,
                    double *progress_done, double progress_total)
{
    int warm = c->o->common.warmup, go = 1, rc = 0;
    double t_mark = wb_timer_now_s(); /* the end of the last repetition (and its run alone) */
    for (int i = 0; rc == 0 && (rc = next_rep(c, pr, i, *done, &go)) == 0 && go; i++) {
        struct wb_fftb_timing t, alone;
        rc = run_rep(c, p, pr, &t);
        t.t_sync_s = c->rank == 0 ? fmax(0.0, wb_timer_now_s() - t_mark - t.t_read_s - t.t_wall_s) : NAN;
#ifdef WB_TEST_FAULTS
        if (c->rank == 0)
            fake_timer(&t);
#endif
        if (rc == 0 && c->paired)
            rc = run_alone(c, p, pr, &alone);
        if (rc == 0 && i >= warm) {
            if (pr->alone)
                pr->alone[*done] = alone;
            pr->tm[(*done)++] = t;
            wb_power_rep_keep(WB_POWER_MAIN);
            wb_power_rep_keep(WB_POWER_BASELINE);
        }
        *progress_done += 1;
        wb_report_progress("fft", fmin(1.0, *progress_done / progress_total), wb_timer_now_s() - c->t_start_s);
        t_mark = wb_timer_now_s();
    }
    return rc;
}

/* The done recorded repetitions and the point's energy handed to its writer, and a warning when a
 * timed phase is too short for the timer. Collective. */
static int write_point(struct wb_fftb_ctx *c, int id, const struct wb_fftb_point *p, struct point_run *pr,
                       struct wb_fftb_verdict *v, int done)
{
    pr->m.reps = done;
    pr->m.tm = pr->tm;
    pr->m.alone = pr->alone;
    int rc = wb_power_point_take(&pr->m.energy, c->paired ? &pr->m.energy_alone : NULL);
    struct wb_fftb_figures fg = {0};
    rc = rc ? rc : wb_fftb_figures_compute(&fg, c, id, p, &pr->l, &pr->rq, &pr->m, v);
    rc = rc ? rc : wb_comm_agree(wb_fftb_write_point(c, &pr->l, &pr->rq, &pr->m, v, &fg));
    /* Printed once on disk, so a kill or a full disk never loses a point that was shown. */
    if (rc == 0)
        wb_fftb_print_row(c, &fg);
    wb_fftb_figures_free(&fg);
    wb_result_energy_free(&pr->m.energy);
    wb_result_energy_free(&pr->m.energy_alone);
    double shortest = INFINITY;
    for (int r = 0; r < done; r++)
        shortest = fmin(shortest, fmin(pr->tm[r].t_fft_s, pr->tm[r].t_total_s));
    if (rc == 0 && c->rank == 0 && shortest > 0 && wb_timer_too_short(shortest))
        wb_report_warn("point %d: a timed phase lasts under 100 timer ticks (%.3g s); its times are coarse", id,
                       shortest);
    return rc;
}

/* Measures one point: warm-up and recorded repetitions (with --paired-baseline each followed by rank
 * 0's run alone), verification, writing. Collective. */
static int run_point(struct wb_fftb_ctx *c, int id, const struct wb_fftb_point *p, double *progress_done,
                     double progress_total)
{
    struct point_run pr = {0};
    int done = 0, paired = c->paired;
    pr.cap = c->o->common.reps_auto ? c->f->max_reps : c->o->common.reps;
    pr.m.info.autom = c->o->common.reps_auto;
    pr.m.info.ci_halfwidth_rel = pr.m.info.alone_match = pr.m.input_resident_max = NAN;
    pr.tm = calloc((size_t)pr.cap, sizeof *pr.tm);
    pr.alone = paired && c->rank == 0 ? calloc((size_t)pr.cap, sizeof *pr.alone) : NULL;
    struct wb_health *health = NULL;
    wb_health_begin(&health);
    struct wb_netstat net;
    wb_netstat_begin(&net);
    int rc = prepare_point(c, p, &pr);
    if (rc == 0 && paired && c->rank == 0 && !pr.alone)
        rc = wb_error_set(WB_ENOMEM, "out of memory");
    rc = wb_comm_agree(rc);
    rc = rc ? rc : run_reps(c, p, &pr, &done, progress_done, progress_total);
    if (rc == 0 && done > 0 && !c->o->common.reps_auto && c->rank == 0)
        median_ci(&pr, done);
    struct wb_fftb_verdict v = {0};
    if (rc == 0 && done > 0)
        rc = wb_fftb_verify_point(c, &pr.l, &pr.rq, pr.resb.ptr, &v);
    /* The point's figures the writer takes from here; rc is agreed by the health gather. */
    struct wb_result_health *hrows = NULL;
    int hrc = wb_health_end(&health, rc == 0 && done > 0 && c->res ? &hrows : NULL, &pr.m.nhealth);
    rc = rc ? rc : hrc;
    pr.m.health = hrows;
    for (int j = 0; c->rank == 0 && j < pr.rq.nfiles; j++)
        pr.m.seconds_per_file += (double)pr.rq.rows[j].samples / pr.rq.rows[j].sample_rate / pr.rq.nfiles;
    pr.m.root_bytes_estimate = wb_fft_opts_point_bytes(c->f, p->nfiles, pr.m.seconds_per_file);
    char group[32];
    snprintf(group, sizeof group, "/fft/p%03d", id);
    struct wb_result_net *netrows = NULL;
    hrc = wb_netstat_end(&net, rc == 0 && done > 0 && c->res, &netrows);
    rc = rc ? rc : hrc;
    pr.m.net = netrows;
    if (rc == 0 && done > 0) {
        check_alone(c, &pr, &v);
        rc = wb_comm_bcast(&v.passed, sizeof v.passed, 0);
    }
    if (rc == 0 && done > 0)
        rc = write_point(c, id, p, &pr, &v, done);
    int timed_out = pr.timed_out;
    free(hrows);
    free(netrows);
    point_free(&pr);
    if (rc == 0 && timed_out)
        rc = wb_error_set(WB_ETIMEOUT, "--timeout of %g s reached; the points measured so far are in the file",
                          c->o->common.timeout_s);
    if (rc == 0 && done > 0 && !v.passed)
        rc = wb_error_set(WB_EVERIFY, "point %d (%s, %d files) failed verification: max error %.3g, %d of %d tones",
                          id, p->scenario, p->nfiles, v.max_error, v.tones_found, v.tones_expected);
    return rc;
}

static int build_points(const struct wb_fftb_ctx *c, struct wb_fftb_point **out, int *n)
{
    const struct wb_fft_opts *f = c->f;
    int cap = f->nseconds + f->nfiles + 1, k = 0;
    struct wb_fftb_point *p = calloc((size_t)cap, sizeof *p);
    if (!p)
        return wb_error_set(WB_ENOMEM, "out of memory");
    if (f->sweep == WB_SWEEP_SIZES || f->sweep == WB_SWEEP_BOTH)
        for (int i = 0; i < f->nseconds; i++)
            p[k++] = (struct wb_fftb_point){"sizes", 1, f->seconds[i]};
    if (f->sweep == WB_SWEEP_FILES || f->sweep == WB_SWEEP_BOTH)
        for (int i = 0; i < f->nfiles; i++)
            p[k++] = (struct wb_fftb_point){"files", (int)f->files[i], f->file_seconds};
    if (f->sweep == WB_SWEEP_NONE)
        p[k++] = (struct wb_fftb_point){"inputs", c->nfiles_in, 0};
    *out = p;
    *n = k;
    return 0;
}

/* Collective: the context of a run: shared memory, inputs, how samples travel, wisdom. */
static int setup(struct wb_fftb_ctx *c, const struct wb_options *o)
{
    int rc = 0;
    if (c->baseline && c->nranks > 1)
        return wb_error_set(WB_EUSAGE, "--baseline runs in one process; start it with mpirun -np 1 (or without "
                                       "mpirun), not on %d ranks", c->nranks);
    if (!wb_fftb_schedule(c))
        return wb_error_set(WB_EUSAGE, "--schedule %s is not in the schedule table", wb_schedule_names[c->f->schedule]);
    /* -1 (suite): a paired baseline wherever there is a cluster to pair with. */
    c->paired = wb_fft_opts_of(o)->paired_baseline < 0 ? c->nranks > 1 : wb_fft_opts_of(o)->paired_baseline;
    if (c->paired && c->nranks < 2)
        return wb_error_set(WB_EUSAGE, "--paired-baseline compares the cluster with rank 0 alone, but this run has "
                                       "1 rank; start 2 or more, or use --baseline for a one-process run");
    if (!c->baseline && c->nranks > 1 && wb_fft_opts_of(o)->local_shm && wb_fft_opts_of(o)->schedule != WB_SCHED_DYNAMIC) {
        c->done_flags = calloc((size_t)c->nranks, sizeof *c->done_flags);
        rc = wb_comm_agree(c->done_flags ? 0 : wb_error_set(WB_ENOMEM, "out of memory"));
        if (rc == 0)
            rc = wb_comm_shm_group_init(&c->shm);
        c->use_shm = rc == 0 && c->shm.any;
    }
    if (rc == 0 && wb_fft_opts_of(o)->ninputs > 0 && c->rank == 0)
        rc = wb_fftb_load_inputs(c);
    rc = wb_comm_agree(rc);
    if (rc == 0)
        rc = wb_comm_bcast(&c->nfiles_in, sizeof c->nfiles_in, 0);
    if (rc == 0)
        rc = wb_comm_bcast(&c->input, sizeof c->input, 0);
    c->sb = wb_fft_input_bytes(c->input, wb_fft_opts_of(o)->precision);
    if (rc == 0 && wb_fft_opts_of(o)->wisdom)
        rc = wb_fft_wisdom_share(c->f->wisdom);
    return rc;
}

static void teardown(struct wb_fftb_ctx *c)
{
    wb_fftb_kernels_free(c);
    wb_fftb_clock_free(c);
    wb_fftb_inputs_free(c);
    wb_comm_shm_group_free(&c->shm);
    free(c->done_flags);
    c->done_flags = NULL;
}

/* Collective: every rank's offset from its own clock to the realtime clock, less rank 0's realtime at
 * start, so transforms compare across ranks in small numbers. Realtime is one clock per machine, and
 * `check` holds the machines' clocks within a millisecond of each other. */
static int align_clock(struct wb_fftb_ctx *c)
{
    double rmn = wb_timer_real_minus_now_s(), epoch = c->t_start_s + rmn;
    int rc = wb_comm_bcast(&epoch, sizeof epoch, 0);
    c->align_s = rmn - epoch;
    return rc;
}

int wb_bench_fft_run(const struct wb_options *o, struct wb_results *res)
{
    struct wb_fftb_ctx c = {.o = o, .f = wb_fft_opts_of(o), .res = res, .rank = wb_comm_rank(), .nranks = wb_comm_size()};
    c.baseline = wb_fft_opts_of(o)->baseline;
    c.input = wb_fft_opts_of(o)->wire_native ? WB_FFT_IN_NATIVE : WB_FFT_IN_S16;
    c.first_compute = wb_fft_opts_of(o)->root_computes || c.nranks == 1 ? 0 : 1;
    c.t_start_s = wb_timer_now_s();
    c.shm.node = MPI_COMM_NULL;
    int rc = align_clock(&c);
    rc = rc ? rc : setup(&c, o);
    struct wb_fftb_point *pts = NULL;
    int npts = 0;
    if (rc == 0)
        rc = build_points(&c, &pts, &npts);
    if (rc == 0)
        wb_fftb_print_header(&c);
    int failed = 0;
    int reps_guess = o->common.reps_auto ? wb_fft_opts_of(o)->min_reps : o->common.reps;
    double progress = 0, total = (double)npts * (o->common.warmup + reps_guess);
    for (int i = 0; rc == 0 && i < npts; i++) {
        rc = run_point(&c, i, &pts[i], &progress, total);
        if (rc == WB_EVERIFY) {
            wb_report_error("%s", wb_error_message());
            failed = 1;
            rc = 0;
        }
    }
    wb_report_progress_end();
    if (rc == 0 && wb_fft_opts_of(o)->wisdom && c.rank == 0 && wb_fft_wisdom_save_file(wb_fft_opts_of(o)->wisdom))
        wb_report_warn("%s", wb_error_message());
    teardown(&c);
    free(pts);
    if (rc == 0 && failed)
        rc = wb_error_set(WB_EVERIFY, "verification failed; the file is marked invalid (see the verify groups)");
    return rc;
}
