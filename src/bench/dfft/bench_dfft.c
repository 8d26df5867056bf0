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
#include "core/stats.h"
#include "core/sysinfo.h"
#include "core/timer.h"
#include "fftw/fft.h"
#include "fftw/fft_mpi.h"
#include "fftw/fft_wisdom.h"
#include "io/results.h"
#include "par/comm.h"

struct dctx {
    const struct wb_options *o;
    const struct wb_dfft_opts *d;
    struct wb_results *res;
    int rank, nranks, npts;
    MPI_Comm comm;
    int plan;                   /* enum wb_fft_effort this run plans with (choose_plan) */
    char plan_why[320];         /* rank 0: why it is not --plan's, "" when it is */
    const char *dump_dir;       /* test builds: WB_FAULT=dfft-dump writes input and output here */
    int corrupt;                /* test builds: WB_FAULT=dfft-corrupt spoils one bin */
};

/* One direction's times on this rank, and its figures agreed over ranks. */
struct dtimes {
    double *t_total, *t_local, *t_transpose;   /* [reps] on this rank */
    double *t_exchange;                         /* [reps] on this rank: inside the transposes' MPI calls */
    int64_t bytes_exchanged;                    /* this rank's bytes sent in those calls, as MPI counted them */
    double exchange_Bps;                        /* the exchange's own rate (summarise) */
    double med_total, med_local, med_transpose; /* medians over reps of the slowest rank */
    double gflops, transpose_Bps_min;
    double transpose_share;                     /* med_transpose / med_total */
    double transpose_Bps;                       /* this rank's bytes_transposed over its median t_transpose */
    int64_t bytes_transposed;                   /* this rank's bytes sent to other ranks in this direction */
};

/* What one point measured: dir[0] the forward transform, dir[1] the backward (--direction backward, both). */
struct dresult {
    struct dtimes dir[2];
    int ndir;
    double gflops_mean; /* flops over the mean of the two directions' median times, as heFFTe's speed3d */
    double spectrum_rel, roundtrip_rel, tol;
    int passed;
    /* Rank 0, from bench/netstat and bench/power: the network counters [nranks] and the energy. */
    struct wb_result_net *net;
    struct wb_result_energy energy;
};

static const char *const kinds[] = {"c2c", "r2c"}, *const precs[] = {"single", "double"},
                         *const plans[] = {"estimate", "measure", "patient"};

static void shape_str(const struct wb_fftmpi_layout *l, char *out, size_t cap)
{
    int len = snprintf(out, cap, "%lld", (long long)l->n[0]);
    for (int d = 1; d < l->dims && len > 0 && (size_t)len < cap; d++)
        len += snprintf(out + len, cap - (size_t)len, "x%lld", (long long)l->n[d]);
}

/* The rank-count rules FFTW-MPI's slabs need; the same answer on every rank, so no agreement is needed. */
static int check_ranks(const struct dctx *c, const struct wb_fftmpi_layout *l)
{
    int64_t p = c->nranks;
    char shape[96];
    shape_str(l, shape, sizeof shape);
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
static int check_points(const struct dctx *c, MPI_Comm node)
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
        shape_str(&l, shape, sizeof shape);
        if (rc == 0 && as > 0 && mine > as)
            rc = wb_error_set(WB_EUSAGE, "shape %s (%s, %s) needs %.2f GB in rank %d but only %.2f GB %s; "
                                         "use a smaller --n, --precision single, or more ranks",
                              shape, kinds[l.kind], precs[l.precision], (double)mine / 1e9, c->rank, (double)as / 1e9,
                              as_why);
        else if (rc == 0 && avail > 0 && on_node > avail)
            rc = wb_error_set(WB_EUSAGE, "shape %s (%s, %s) needs %.2f GB on the node of rank %d but only %.2f GB %s; "
                                         "use a smaller --n, --precision single, or more nodes",
                              shape, kinds[l.kind], precs[l.precision], (double)on_node / 1e9, c->rank,
                              (double)avail / 1e9, why);
        rc = wb_comm_agree(rc);
    }
    return rc;
}

/* FFTW-MPI gathers every rank's wisdom to rank 0, which saves it. Collective. */
static void save_wisdom(const struct dctx *c)
{
    wb_fftmpi_wisdom_gather(c->comm);
    if (c->rank == 0 && wb_fft_wisdom_save_file(c->d->wisdom))
        wb_report_warn("%s", wb_error_message());
}

/* Warm-up and recorded repetitions of the forward transform and, with --direction backward or both,
 * the backward of its output; each barrier to barrier. Collective. */
static int time_reps(const struct dctx *c, struct wb_fftmpi *p, const void *saved, int64_t in_bytes,
                     struct dresult *r)
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

/* Bytes this rank sends in the backward transform: the forward's, but with a transposed output the
 * backward skips the first transpose back, not the last, and the one left moves the other slab. */
static int64_t backward_bytes(const struct wb_fftmpi_layout *l)
{
    if (l->dims == 1 || !l->transposed_out)
        return l->bytes_transposed;
    return l->mid_count * (l->c0 - l->in_count) * l->c2 * 2 * (int64_t)wb_fft_sample_bytes(l->precision);
}

/* The exchange's own rate: the most bytes a rank sent in the transposes' MPI calls over the median,
 * across reps, of the shortest time a rank spent in them. A rank that reaches an exchange first
 * waits there for the others, so the last to arrive, which spends least, times the transfer alone.
 * Collective. */
static int exchange_rate(int reps, struct dtimes *r)
{
    double *least = malloc((size_t)reps * sizeof *least), most = 0;
    if (!least)
        return wb_error_set(WB_ENOMEM, "out of memory");
    for (int i = 0; i < reps; i++)
        least[i] = -r->t_exchange[i];
    int rc = wb_comm_max_f64_n(least, (size_t)reps);
    for (int i = 0; i < reps; i++)
        least[i] = -least[i];
    rc = rc ? rc : wb_comm_max_f64((double)r->bytes_exchanged, &most);
    double t = rc == 0 ? wb_stats_median(least, (size_t)reps) : NAN;
    r->exchange_Bps = t > 0 && most > 0 ? most / t : NAN;
    free(least);
    return rc;
}

/* One direction's figures, computed once for the writer and the printer: medians over reps of the
 * slowest rank, GFLOPS, the transpose's share and rates. Collective. */
static int summarise(const struct dctx *c, const struct wb_fftmpi_layout *l, struct dtimes *r)
{
    int reps = c->o->common.reps;
    double *slow = malloc((size_t)reps * 3 * sizeof *slow);
    if (!slow)
        return wb_error_set(WB_ENOMEM, "out of memory");
    memcpy(slow, r->t_total, (size_t)reps * sizeof *slow);
    memcpy(slow + reps, r->t_local, (size_t)reps * sizeof *slow);
    memcpy(slow + 2 * reps, r->t_transpose, (size_t)reps * sizeof *slow);
    int rc = wb_comm_max_f64_n(slow, (size_t)reps * 3);
    r->med_total = wb_stats_median(slow, (size_t)reps);
    r->med_local = l->dims > 1 ? wb_stats_median(slow + reps, (size_t)reps) : NAN;
    r->med_transpose = l->dims > 1 ? wb_stats_median(slow + 2 * reps, (size_t)reps) : NAN;
    r->gflops = wb_fftmpi_flops(l->kind, l->total) / r->med_total / 1e9;
    r->transpose_share = r->med_transpose / r->med_total;
    double mine = wb_stats_median(r->t_transpose, (size_t)reps);
    r->transpose_Bps = l->dims > 1 ? (double)r->bytes_transposed / mine : NAN;
    double bps = l->dims > 1 && mine > 0 && r->bytes_transposed > 0 ? (double)r->bytes_transposed / mine : NAN;
    double neg_min = NAN;
    if (rc == 0)
        rc = wb_comm_max_f64(isnan(bps) ? -INFINITY : -bps, &neg_min);
    r->transpose_Bps_min = rc == 0 ? -neg_min : NAN;
    if (!isfinite(r->transpose_Bps_min))
        r->transpose_Bps_min = NAN;
    free(slow);
    return rc ? rc : exchange_rate(reps, r);
}

/* The spectrum of the known input and the round trip. Collective. */
static int verify(const struct dctx *c, int point, struct wb_fftmpi *p, const struct wb_fftmpi_layout *l,
                  const void *saved, struct dresult *r)
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

/* "group/name" in buf (96 bytes). */
static const char *at(char *buf, const char *g, const char *name)
{
    snprintf(buf, 96, "%s/%s", g, name);
    return buf;
}

/* The exchange inside one direction's transposes: each rank's time and bytes, and the rate. Collective. */
static int write_exchange(const struct dctx *c, const char *g, const char *suffix, const struct dtimes *t)
{
    char name[32], p[96];
    int64_t sent = t->bytes_exchanged;
    snprintf(name, sizeof name, "exchange_Bps%s", suffix);
    int rc = wb_results_attr_f64(c->res, g, name, t->exchange_Bps);
    snprintf(name, sizeof name, "t_exchange%s", suffix);
    rc = rc ? rc : wb_results_write_per_rank_f64(c->res, at(p, g, name), t->t_exchange, (size_t)c->o->common.reps, "s");
    snprintf(name, sizeof name, "bytes_exchanged%s", suffix);
    return rc ? rc : wb_results_write_per_rank_i64(c->res, at(p, g, name), &sent, 1, "bytes");
}

/* The backward direction's figures and times beside the forward's (suffix _backward), and the mean
 * of both directions. Collective. */
static int write_backward(const struct dctx *c, const char *g, const struct wb_fftmpi_layout *l,
                          const struct dresult *r)
{
    if (r->ndir < 2)
        return 0;
    const struct dtimes *b = &r->dir[1];
    struct wb_results *res = c->res;
    size_t reps = (size_t)c->o->common.reps;
    char p[96];
    int rc = wb_results_attr_f64(res, g, "gflops_backward", b->gflops);
    rc = rc ? rc : wb_results_attr_f64(res, g, "gflops_mean", r->gflops_mean);
    rc = rc ? rc : wb_results_attr_f64(res, g, "t_total_median_backward", b->med_total);
    rc = rc ? rc : wb_results_attr_f64(res, g, "transpose_share_backward", b->transpose_share);
    rc = rc ? rc : wb_results_attr_f64(res, g, "transpose_Bps_min_backward", b->transpose_Bps_min);
    rc = rc ? rc : wb_results_write_per_rank_f64(res, at(p, g, "t_total_backward"), b->t_total, reps, "s");
    rc = rc ? rc : wb_results_write_per_rank_f64(res, at(p, g, "t_local_fft_backward"), b->t_local, reps, "s");
    rc = rc ? rc : wb_results_write_per_rank_f64(res, at(p, g, "t_transpose_backward"), b->t_transpose, reps, "s");
    rc = rc ? rc : write_exchange(c, g, "_backward", b);
    int64_t sent = b->bytes_transposed;
    double bps = b->transpose_Bps;
    rc = rc ? rc : wb_results_write_per_rank_i64(res, at(p, g, "bytes_transposed_backward"), &sent, 1, "bytes");
    rc = rc ? rc : wb_results_write_per_rank_f64(res, at(p, g, "transpose_Bps_backward"), &bps, 1, "bytes/s");
    return rc;
}

/* Root: what a rank's transpose cannot pass on the run's machines (core/ceiling.h); NaN unknown. */
static double exchange_ceiling(const struct wb_results *res)
{
    int nm = 0;
    const struct wb_ceiling_machine *m = wb_results_machines(res, &nm, NULL);
    return m && nm > 0 ? wb_ceiling_exchange_Bps(m, nm) : NAN;
}

/* /dfft/pNNN as SCHEMA lists it, then flushed. Collective. */
static int write_point(const struct dctx *c, int point, const struct wb_fftmpi_layout *l, const struct dresult *r)
{
    char g[64], v[80], shape[96], p[96];
    snprintf(g, sizeof g, "/dfft/p%03d", point);
    snprintf(v, sizeof v, "%s/verify", g);
    shape_str(l, shape, sizeof shape);
    struct wb_results *res = c->res;
    size_t reps = (size_t)c->o->common.reps;
    int64_t sent = l->bytes_transposed, held = l->local_n;
    const struct dtimes *f = &r->dir[0];
    double bps = f->transpose_Bps;
    int rc = wb_results_group(res, g);
    rc = rc ? rc : wb_results_attr_i64(res, g, "dims", l->dims);
    rc = rc ? rc : wb_results_attr_str(res, g, "shape", shape);
    rc = rc ? rc : wb_results_attr_i64(res, g, "n", l->total);
    rc = rc ? rc : wb_results_attr_str(res, g, "kind", kinds[l->kind]);
    rc = rc ? rc : wb_results_attr_str(res, g, "precision", precs[l->precision]);
    rc = rc ? rc : wb_results_attr_i64(res, g, "transposed_out", l->transposed_out);
    rc = rc ? rc : wb_results_attr_i64(res, g, "reps", c->o->common.reps);
    rc = rc ? rc : wb_results_attr_i64(res, g, "warmup", c->o->common.warmup);
    rc = rc ? rc : wb_results_attr_str(res, g, "plan", plans[c->plan]);
    rc = rc ? rc : wb_results_attr_str(res, g, "plan_why", c->plan_why);
    rc = rc ? rc : wb_results_attr_str(res, g, "direction", wb_dfft_direction_names[c->d->direction]);
    rc = rc ? rc : wb_results_attr_f64(res, g, "gflops", f->gflops);
    rc = rc ? rc : wb_results_attr_f64(res, g, "flops", wb_fftmpi_flops(l->kind, l->total));
    rc = rc ? rc : wb_results_attr_f64(res, g, "t_total_median", f->med_total);
    rc = rc ? rc : wb_results_attr_f64(res, g, "transpose_share", f->transpose_share);
    rc = rc ? rc : wb_results_attr_f64(res, g, "transpose_Bps_min", f->transpose_Bps_min);
    rc = rc ? rc : wb_results_attr_f64(res, g, "transpose_Bps_ceiling", exchange_ceiling(res));
    rc = rc ? rc : wb_results_attr_str(res, g, "method", l->dims == 1 ? "fftw_mpi_plan_dft_1d"
                                                      : "local FFTW plans + fftw_mpi_plan_many_transpose");
    rc = rc ? rc : wb_results_attr_str(res, g, "bytes_transposed_how",
                                       l->dims == 1 ? "model: three transposes of the local data"
                                                    : "counted from the slab layout: bytes sent to other ranks");
    rc = rc ? rc : wb_results_write_per_rank_f64(res, at(p, g, "t_total"), f->t_total, reps, "s");
    rc = rc ? rc : wb_results_write_per_rank_f64(res, at(p, g, "t_local_fft"), f->t_local, reps, "s");
    rc = rc ? rc : wb_results_write_per_rank_f64(res, at(p, g, "t_transpose"), f->t_transpose, reps, "s");
    rc = rc ? rc : write_exchange(c, g, "", f);
    rc = rc ? rc : write_backward(c, g, l, r);
    rc = rc ? rc : wb_results_write_per_rank_i64(res, at(p, g, "bytes_transposed"), &sent, 1, "bytes");
    rc = rc ? rc : wb_results_write_per_rank_i64(res, at(p, g, "local_n"), &held, 1, "points");
    rc = rc ? rc : wb_results_write_per_rank_f64(res, at(p, g, "transpose_Bps"), &bps, 1, "bytes/s");
    rc = rc ? rc : wb_results_group(res, v);
    rc = rc ? rc : wb_results_attr_i64(res, v, "passed", r->passed);
    rc = rc ? rc : wb_results_attr_f64(res, v, "roundtrip_max_rel", r->roundtrip_rel);
    rc = rc ? rc : wb_results_attr_f64(res, v, "spectrum_max_rel", r->spectrum_rel);
    rc = rc ? rc : wb_results_attr_f64(res, v, "tolerance", r->tol);
    rc = rc ? rc : wb_results_attr_str(res, v, "check", c->dump_dir ? "roundtrip (pseudo-random input, dumped)"
                                                                   : "roundtrip and spectrum of 3 tones");
    rc = rc ? rc : wb_results_write_energy(res, g, &r->energy);
    rc = rc ? rc : r->net ? wb_results_write_net(res, g, r->net, (size_t)c->nranks) : 0;
    return rc ? rc : wb_results_flush(res);
}

/* Root: the ceiling line under a point's rows: the slowest rank's transpose MB/s against what the
 * machines allow; GFLOPS has none, since no one-core rate of this kernel is recorded. */
static void print_ceiling(const struct wb_results *res, const struct dresult *r)
{
    double ceil = exchange_ceiling(res), v = NAN;
    for (int i = 0; i < 2; i++) {
        double x = r->dir[i].transpose_Bps_min;
        if (isfinite(x) && x > 0)
            v = isnan(v) ? x : fmax(v, x);
    }
    if (!isfinite(ceil) || !isfinite(v))
        wb_report_printf("#      ceiling: MB/s/rank unknown (the link reports no speed); GFLOPS: none recorded\n");
    else
        wb_report_printf("#      ceiling: MB/s/rank %.1f, %s %.1f (memcpy on one machine, else twice the slowest line "
                         "rate)%s; GFLOPS: none recorded (no one-core rate of this kernel)\n",
                         v / 1e6, v > ceil ? "ABOVE THE CEILING of" : "within", ceil / 1e6,
                         v > ceil ? ", likely cause: caches, a rank's blocks fit in one" : "");
}

/* One row per direction timed (fwd, bwd), and with --direction both the mean (times and GFLOPS
 * of the mean of the two, as heFFTe's speed3d reports). */
static void print_row(int point, int direction, const struct wb_fftmpi_layout *l, const struct dresult *r,
                      int nranks)
{
    char shape[96];
    shape_str(l, shape, sizeof shape);
    struct dtimes mean = {0};
    const struct dtimes *f = &r->dir[0], *b = &r->dir[1];
    if (r->ndir > 1) {
        mean.med_total = 0.5 * (f->med_total + b->med_total);
        mean.med_local = 0.5 * (f->med_local + b->med_local);
        mean.med_transpose = 0.5 * (f->med_transpose + b->med_transpose);
        mean.gflops = r->gflops_mean;
        mean.transpose_share = mean.med_transpose / mean.med_total;
        mean.transpose_Bps_min = fmin(f->transpose_Bps_min, b->transpose_Bps_min);
    }
    const struct dtimes *rows[3] = {f, b, &mean};
    static const char *const names[3] = {"fwd", "bwd", "mean"};
    for (int i = 0; i < 3; i++) {
        if ((i == 1 && direction == WB_DFFT_FORWARD) || (i == 0 && direction == WB_DFFT_BACKWARD) ||
            (i == 2 && direction != WB_DFFT_BOTH))
            continue;
        const struct dtimes *t = rows[i];
        wb_report_printf("%-6d %-14s %-4s %-6s %-4s %5d %10.3f %10.3f %10.3f %7.1f %8.3f %10.1f %s\n", point, shape,
                         kinds[l->kind], precs[l->precision], names[i], nranks, t->med_total * 1e3,
                         t->med_local * 1e3, t->med_transpose * 1e3, 100 * t->transpose_share,
                         t->gflops, t->transpose_Bps_min / 1e6, r->passed ? "ok" : "FAILED");
    }
}

/* Plan, time, verify and record one point. Collective. */
static int run_point(const struct dctx *c, int point)
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
    struct dresult r = {.ndir = c->d->direction == WB_DFFT_FORWARD ? 1 : 2};
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
    r.dir[0].bytes_transposed = l.bytes_transposed;
    r.dir[1].bytes_transposed = backward_bytes(&l);
    for (int d = 0; rc == 0 && d < r.ndir; d++)
        rc = summarise(c, &l, &r.dir[d]);
    if (r.ndir > 1)
        r.gflops_mean = wb_fftmpi_flops(l.kind, l.total) / (0.5 * (r.dir[0].med_total + r.dir[1].med_total)) / 1e9;
    rc = rc ? rc : verify(c, point, p, &l, saved, &r);
    wb_report_progress_end();
    rc = rc ? rc : wb_netstat_end(&net, c->res != NULL, &r.net);
    rc = rc ? rc : wb_power_point_take(&r.energy, NULL);
    rc = rc ? rc : write_point(c, point, &l, &r);
    free(r.net);
    wb_result_energy_free(&r.energy);
    if (rc == 0)
        print_row(point, c->d->direction, &l, &r, c->nranks);
    if (rc == 0 && c->rank == 0)
        print_ceiling(c->res, &r);
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
static int choose_plan(struct dctx *c)
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
                     plans[plan], m[i].name, m[i].ranks, m[i].cores_usable, m[i].cores_usable == 1 ? "" : "s",
                     plans[plan]);
            plan = WB_FFT_ESTIMATE;
            break;
        }
    int rc = wb_comm_bcast(&plan, sizeof plan, 0);
    c->plan = plan;
    return rc;
}

/* Test builds only: WB_FAULT=dfft-corrupt spoils one output bin of the last rank before the check;
 * WB_FAULT=dfft-dump uses a pseudo-random input and writes it and the output to $WB_DFFT_DUMP. */
static void read_faults(struct dctx *c)
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
    struct dctx c = {.o = o, .d = wb_dfft_opts_of(o), .res = res, .rank = wb_comm_rank(), .nranks = wb_comm_size(),
                     .comm = wb_comm_world()};
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
    if (rc == 0) {
        wb_report_printf("# wulfbench dfft: %d-D %s, %s precision, %d rank%s, FFTW-MPI slabs%s, plan %s, direction %s\n",
                         c.d->dims, kinds[c.d->kind], precs[c.d->precision], c.nranks, c.nranks > 1 ? "s" : "",
                         c.d->transposed_out ? ", transposed output" : "", plans[c.plan],
                         wb_dfft_direction_names[c.d->direction]);
        if (c.plan_why[0])
            wb_report_printf("# plan: %s\n", c.plan_why);
        wb_report_printf("# times: median over %d reps of the slowest rank, in ms; GFLOPS: 5 N log2 N (r2c: half) / "
                         "t_total; MB/s: the slowest rank's transpose bytes / t_transp\n", o->common.reps);
        wb_report_printf("%-6s %-14s %-4s %-6s %-4s %5s %10s %10s %10s %7s %8s %10s %s\n", "#point", "shape", "kind",
                         "prec", "dir", "ranks", "t_total", "t_local", "t_transp", "transp%", "GFLOPS", "MB/s/rank",
                         "verify");
    }
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
