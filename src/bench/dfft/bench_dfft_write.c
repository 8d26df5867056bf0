/* A dfft point's HDF5 group: what struct wb_dfft_measured holds and the figures bench_dfft_figures.c
 * computed, computing none. */
#include <stdio.h>

#include "bench/dfft/bench_dfft_int.h"
#include "bench/dfft/options_dfft.h"
#include "bench/options.h"
#include "io/results.h"

/* "group/name" in buf (96 bytes). */
static const char *at(char *buf, const char *g, const char *name)
{
    snprintf(buf, 96, "%s/%s", g, name);
    return buf;
}

/* The exchange inside one direction's transposes: each rank's time and bytes, and the rate. Collective. */
static int write_exchange(const struct wb_dfft_ctx *c, const char *g, const char *suffix,
                          const struct wb_dfft_times *t, const struct wb_dfft_dirfig *f)
{
    char name[32], p[96];
    int64_t sent = t->bytes_exchanged;
    snprintf(name, sizeof name, "exchange_Bps%s", suffix);
    int rc = wb_results_attr_f64(c->res, g, name, f->exchange_Bps);
    snprintf(name, sizeof name, "t_exchange%s", suffix);
    rc = rc ? rc : wb_results_write_per_rank_f64(c->res, at(p, g, name), t->t_exchange, (size_t)c->o->common.reps, "s");
    snprintf(name, sizeof name, "bytes_exchanged%s", suffix);
    return rc ? rc : wb_results_write_per_rank_i64(c->res, at(p, g, name), &sent, 1, "bytes");
}

/* The backward direction's figures and times beside the forward's (suffix _backward), and the mean
 * of both directions. Collective. */
static int write_backward(const struct wb_dfft_ctx *c, const char *g, const struct wb_dfft_measured *m,
                          const struct wb_dfft_figures *fg)
{
    if (m->ndir < 2)
        return 0;
    const struct wb_dfft_times *b = &m->dir[1];
    const struct wb_dfft_dirfig *bf = &fg->dir[1];
    struct wb_results *res = c->res;
    size_t reps = (size_t)c->o->common.reps;
    char p[96];
    int rc = wb_results_attr_f64(res, g, "gflops_backward", bf->gflops);
    rc = rc ? rc : wb_results_attr_f64(res, g, "gflops_mean", fg->gflops_mean);
    rc = rc ? rc : wb_results_attr_f64(res, g, "t_total_median_backward", bf->med_total);
    rc = rc ? rc : wb_results_attr_f64(res, g, "transpose_share_backward", bf->transpose_share);
    rc = rc ? rc : wb_results_attr_f64(res, g, "transpose_Bps_min_backward", bf->transpose_Bps_min);
    rc = rc ? rc : wb_results_write_per_rank_f64(res, at(p, g, "t_total_backward"), b->t_total, reps, "s");
    rc = rc ? rc : wb_results_write_per_rank_f64(res, at(p, g, "t_local_fft_backward"), b->t_local, reps, "s");
    rc = rc ? rc : wb_results_write_per_rank_f64(res, at(p, g, "t_transpose_backward"), b->t_transpose, reps, "s");
    rc = rc ? rc : write_exchange(c, g, "_backward", b, bf);
    int64_t sent = bf->bytes_transposed;
    double bps = bf->transpose_Bps;
    rc = rc ? rc : wb_results_write_per_rank_i64(res, at(p, g, "bytes_transposed_backward"), &sent, 1, "bytes");
    rc = rc ? rc : wb_results_write_per_rank_f64(res, at(p, g, "transpose_Bps_backward"), &bps, 1, "bytes/s");
    return rc;
}

/* The verify group: the checks and their tolerance. Collective. */
static int write_verify(const struct wb_dfft_ctx *c, const char *g, const struct wb_dfft_measured *m)
{
    char v[80];
    snprintf(v, sizeof v, "%s/verify", g);
    struct wb_results *res = c->res;
    int rc = wb_results_group(res, v);
    rc = rc ? rc : wb_results_attr_i64(res, v, "passed", m->passed);
    rc = rc ? rc : wb_results_attr_f64(res, v, "roundtrip_max_rel", m->roundtrip_rel);
    rc = rc ? rc : wb_results_attr_f64(res, v, "spectrum_max_rel", m->spectrum_rel);
    rc = rc ? rc : wb_results_attr_f64(res, v, "tolerance", m->tol);
    return rc ? rc : wb_results_attr_str(res, v, "check", c->dump_dir ? "roundtrip (pseudo-random input, dumped)"
                                                                     : "roundtrip and spectrum of 3 tones");
}

int wb_dfft_write_point(const struct wb_dfft_ctx *c, int point, const struct wb_fftmpi_layout *l,
                        const struct wb_dfft_measured *m, const struct wb_dfft_figures *fg)
{
    char g[64], p[96];
    snprintf(g, sizeof g, "/dfft/p%03d", point);
    struct wb_results *res = c->res;
    size_t reps = (size_t)c->o->common.reps;
    int64_t sent = fg->dir[0].bytes_transposed, held = l->local_n;
    const struct wb_dfft_times *t = &m->dir[0];
    const struct wb_dfft_dirfig *f = &fg->dir[0];
    double bps = f->transpose_Bps;
    int rc = wb_results_group(res, g);
    rc = rc ? rc : wb_results_attr_i64(res, g, "dims", l->dims);
    rc = rc ? rc : wb_results_attr_str(res, g, "shape", fg->shape);
    rc = rc ? rc : wb_results_attr_i64(res, g, "n", l->total);
    rc = rc ? rc : wb_results_attr_str(res, g, "kind", wb_dfft_kind_names[l->kind]);
    rc = rc ? rc : wb_results_attr_str(res, g, "precision", wb_dfft_precision_names[l->precision]);
    rc = rc ? rc : wb_results_attr_i64(res, g, "transposed_out", l->transposed_out);
    rc = rc ? rc : wb_results_attr_i64(res, g, "reps", c->o->common.reps);
    rc = rc ? rc : wb_results_attr_i64(res, g, "warmup", c->o->common.warmup);
    rc = rc ? rc : wb_results_attr_str(res, g, "plan", wb_dfft_plan_names[c->plan]);
    rc = rc ? rc : wb_results_attr_str(res, g, "plan_why", c->plan_why);
    rc = rc ? rc : wb_results_attr_str(res, g, "direction", wb_dfft_direction_names[c->d->direction]);
    rc = rc ? rc : wb_results_attr_f64(res, g, "gflops", f->gflops);
    rc = rc ? rc : wb_results_attr_f64(res, g, "flops", fg->flops);
    rc = rc ? rc : wb_results_attr_f64(res, g, "t_total_median", f->med_total);
    rc = rc ? rc : wb_results_attr_f64(res, g, "transpose_share", f->transpose_share);
    rc = rc ? rc : wb_results_attr_f64(res, g, "transpose_Bps_min", f->transpose_Bps_min);
    rc = rc ? rc : wb_results_attr_f64(res, g, "transpose_Bps_ceiling", fg->ceiling_Bps);
    rc = rc ? rc : wb_results_attr_str(res, g, "method", l->dims == 1 ? "fftw_mpi_plan_dft_1d"
                                                      : "local FFTW plans + fftw_mpi_plan_many_transpose");
    rc = rc ? rc : wb_results_attr_str(res, g, "bytes_transposed_how",
                                       l->dims == 1 ? "model: three transposes of the local data"
                                                    : "counted from the slab layout: bytes sent to other ranks");
    rc = rc ? rc : wb_results_write_per_rank_f64(res, at(p, g, "t_total"), t->t_total, reps, "s");
    rc = rc ? rc : wb_results_write_per_rank_f64(res, at(p, g, "t_local_fft"), t->t_local, reps, "s");
    rc = rc ? rc : wb_results_write_per_rank_f64(res, at(p, g, "t_transpose"), t->t_transpose, reps, "s");
    rc = rc ? rc : write_exchange(c, g, "", t, f);
    rc = rc ? rc : write_backward(c, g, m, fg);
    rc = rc ? rc : wb_results_write_per_rank_i64(res, at(p, g, "bytes_transposed"), &sent, 1, "bytes");
    rc = rc ? rc : wb_results_write_per_rank_i64(res, at(p, g, "local_n"), &held, 1, "points");
    rc = rc ? rc : wb_results_write_per_rank_f64(res, at(p, g, "transpose_Bps"), &bps, 1, "bytes/s");
    rc = rc ? rc : write_verify(c, g, m);
    rc = rc ? rc : wb_results_write_energy(res, g, &m->energy);
    rc = rc ? rc : m->net ? wb_results_write_net(res, g, m->net, (size_t)c->nranks) : 0;
    return rc ? rc : wb_results_flush(res);
}
