/* io's figures: a point's group in /io (rank 0 gathers each rank's times), its row on stdout, and the
 * run's /io attributes and /io/devices. One rule per figure, here: the aggregate is every rank's bytes
 * over the span from the first open to the last close on the aligned clock. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/io/bench_io_int.h"
#include "bench/options.h"
#include "core/error.h"
#include "core/report.h"
#include "core/stats.h"
#include "par/comm.h"

#define W(call)          \
    do {                 \
        if (rc == 0)     \
            rc = (call); \
    } while (0)

/* Rank 0's view of a point: every rank's values, [reps][nranks] (lat: [reps][nranks][3]). */
struct gathered {
    size_t R, N;
    double *t_start, *t_end, *mbps, *iops, *lat, *create, *stat, *del, *agg_mbps, *agg_iops;
    int64_t *bytes, *ops;
};

static void gathered_free(struct gathered *g)
{
    free(g->t_start), free(g->t_end), free(g->mbps), free(g->iops), free(g->lat), free(g->create);
    free(g->stat), free(g->del), free(g->agg_mbps), free(g->agg_iops), free(g->bytes), free(g->ops);
}

/* [nranks][n] rank-major, as the gathers give it, into [n][nranks] (times k values each). */
static void transpose(const double *in, double *out, size_t n, size_t N, size_t k)
{
    for (size_t q = 0; q < N; q++)
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < k; j++)
                out[(i * N + q) * k + j] = in[(q * n + i) * k + j];
}

/* Gather the point's arrays on rank 0 and derive the per-rank and aggregate figures. Collective. */
static int gather(const struct wb_io_run *r, const struct wb_io_point *p, struct gathered *g)
{
    size_t R = (size_t)p->done, N = (size_t)r->nranks, M = R * N > 0 ? R * N : 1;
    double *tmp = calloc(3 * M, sizeof *tmp), *tmp2 = calloc(3 * M, sizeof *tmp2), *loc = calloc(3 * (R ? R : 1), sizeof *loc);
    int64_t *itmp = calloc(M, sizeof *itmp);
    g->R = R, g->N = N;
#define A(f, n) (g->f = calloc((n), sizeof *g->f))
    int ok = tmp && tmp2 && loc && itmp && A(t_start, M) && A(t_end, M) && A(mbps, M) && A(iops, M) &&
             A(lat, 3 * M) && A(create, M) && A(stat, M) && A(del, M) && A(agg_mbps, R + 1) && A(agg_iops, R + 1) &&
             A(bytes, M) && A(ops, M);
#undef A
    int rc = wb_comm_agree(ok ? 0 : wb_error_set(WB_ENOMEM, "io: out of memory for a point's figures"));
    double *const dst[2] = {g->t_start, g->t_end};
    const double *const src[2] = {p->t_start, p->t_end};
    for (int k = 0; rc == 0 && k < 2; k++) {
        rc = wb_comm_gather_f64_n(src[k], R, tmp);
        if (rc == 0 && r->rank == 0)
            transpose(tmp, dst[k], R, N, 1);
    }
    rc = rc ? rc : wb_comm_gather_f64_n(p->lat_s, 3 * R, tmp);
    if (rc == 0 && r->rank == 0)
        transpose(tmp, g->lat, R, N, 3);
    rc = rc ? rc : wb_comm_gather_f64_n(p->meta_s, 3 * R, tmp2);
    if (rc == 0 && r->rank == 0) {
        transpose(tmp2, tmp, R, N, 3);
        for (size_t i = 0; i < R * N; i++)
            g->create[i] = tmp[3 * i], g->stat[i] = tmp[3 * i + 1], g->del[i] = tmp[3 * i + 2];
    }
    int64_t *const idst[2] = {g->bytes, g->ops};
    const int64_t *const isrc[2] = {p->bytes, p->ops};
    for (int k = 0; rc == 0 && k < 2; k++) {
        rc = wb_comm_gather_i64_n(isrc[k], R, itmp);
        for (size_t q = 0; rc == 0 && r->rank == 0 && q < N; q++)
            for (size_t i = 0; i < R; i++)
                idst[k][i * N + q] = itmp[q * R + i];
    }
    free(tmp), free(tmp2), free(loc), free(itmp);
    return rc;
}

/* The per-rank rates and, per repetition, the aggregate. Rank 0. */
static void derive(const struct wb_io_point *p, struct gathered *g)
{
    int iops = p->iops_test || p->meta_test;
    for (size_t i = 0; i < g->R; i++) {
        double first = INFINITY, last = -INFINITY, bytes = 0, ops = 0;
        for (size_t q = 0; q < g->N; q++) {
            size_t at = i * g->N + q;
            double span = g->t_end[at] - g->t_start[at];
            g->mbps[at] = (double)g->bytes[at] / 1e6 / span;
            g->iops[at] = iops ? (double)g->ops[at] / span : NAN;
            first = fmin(first, g->t_start[at]);
            last = fmax(last, g->t_end[at]);
            bytes += (double)g->bytes[at];
            ops += (double)g->ops[at];
        }
        g->agg_mbps[i] = bytes / 1e6 / (last - first);
        g->agg_iops[i] = iops ? ops / (last - first) : NAN;
    }
}

/* median, min, max and cv (a fraction) of x[n]; NaN when empty. */
static void summary(const double *x, size_t n, double s[4])
{
    struct wb_stats st;
    wb_stats_fill(x, n, &st);
    s[0] = st.n ? st.median : NAN, s[1] = st.n ? st.min : NAN, s[2] = st.n ? st.max : NAN;
    s[3] = st.n > 1 && st.mean != 0 ? st.stddev / st.mean : st.n ? 0 : NAN;
}

static int write_attrs(const struct wb_io_run *r, const struct wb_io_point *p, const char *g, const double am[4],
                       const double ai[4])
{
    static const char *const sfx[4] = {"median", "min", "max", "cv"};
    struct wb_results *res = r->res;
    char name[64];
    int rc = 0;
    W(wb_results_group(res, g));
    W(wb_results_attr_str(res, g, "test", wb_io_test_name(p->test)));
    W(wb_results_attr_str(res, g, "dir", r->dir[p->d].given));
    W(wb_results_attr_i64(res, g, "dir_index", p->d));
    W(wb_results_attr_i64(res, g, "shared", r->dir[p->d].shared));
    W(wb_results_attr_str(res, g, "api", p->be->api));
    W(wb_results_attr_str(res, g, "access", p->access));
    W(wb_results_attr_i64(res, g, "file_bytes", p->file_bytes));
    W(wb_results_attr_i64(res, g, "xfer_bytes", p->xfer_bytes));
    W(wb_results_attr_i64(res, g, "reps", p->done));
    W(wb_results_attr_i64(res, g, "warmup", r->o->common.warmup));
    W(wb_results_attr_str(res, g, "sync", p->sync));
    W(wb_results_attr_i64(res, g, "direct", p->direct));
    W(wb_results_attr_str(res, g, "direct_note", p->direct ? "" : p->direct_note[0] ? p->direct_note
                                                 : "buffered: sequential calls go through the page cache"));
    W(wb_results_attr_i64(res, g, "cold", p->cold > 0 && p->done == 0 ? 0 : p->cold));
    W(wb_results_attr_str(res, g, "cold_method", p->cold > 0 ? p->cold_method : ""));
    W(wb_results_attr_str(res, g, "status", p->status));
    W(wb_results_attr_str(res, g, "note", p->note));
    for (int k = 0; k < 4; k++) {
        snprintf(name, sizeof name, "agg_mbps_%s", sfx[k]);
        W(wb_results_attr_f64(res, g, name, am[k]));
        snprintf(name, sizeof name, "agg_iops_%s", sfx[k]);
        W(wb_results_attr_f64(res, g, name, ai[k]));
    }
    return rc;
}

static int write_dsets(const struct wb_io_run *r, const struct gathered *g, const char *grp)
{
    uint64_t dims[3] = {g->R, g->N, 3};
    struct {
        const char *name, *units;
        const double *v;
    } f[] = {{"t_start", "s", g->t_start}, {"t_end", "s", g->t_end}, {"mbps", "MB/s", g->mbps},
             {"iops", "1/s", g->iops}, {"create_per_s", "1/s", g->create}, {"stat_per_s", "1/s", g->stat},
             {"delete_per_s", "1/s", g->del}};
    char d[96];
    int rc = 0;
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        snprintf(d, sizeof d, "%s/%s", grp, f[i].name);
        W(wb_results_write_f64(r->res, d, 2, dims, f[i].v, f[i].units));
    }
    snprintf(d, sizeof d, "%s/bytes", grp);
    W(wb_results_write_i64(r->res, d, 2, dims, g->bytes, "bytes"));
    snprintf(d, sizeof d, "%s/ops", grp);
    W(wb_results_write_i64(r->res, d, 2, dims, g->ops, "count"));
    snprintf(d, sizeof d, "%s/lat_s", grp);
    W(wb_results_write_f64(r->res, d, 3, dims, g->lat, "s"));
    snprintf(d, sizeof d, "%s/agg_mbps", grp);
    W(wb_results_write_f64(r->res, d, 1, dims, g->agg_mbps, "MB/s"));
    snprintf(d, sizeof d, "%s/agg_iops", grp);
    W(wb_results_write_f64(r->res, d, 1, dims, g->agg_iops, "1/s"));
    return rc;
}

/* The dir column fits the longest folder, so the columns after it stay under their names. */
static int dir_width(const struct wb_io_run *r)
{
    int w = 16;
    for (int d = 0; d < r->ndirs; d++)
        w = (int)strlen(r->dir[d].given) > w ? (int)strlen(r->dir[d].given) : w;
    return w;
}

void wb_io_print_header(const struct wb_io_run *r)
{
    wb_report_printf("# io: %d rank%s on %d node%s, --time %g s per test, seed %llu; MB = 1e6 bytes, aggregate = all "
                     "bytes / (last close - first open)\n", r->nranks, r->nranks == 1 ? "" : "s", r->nnodes,
                     r->nnodes == 1 ? "" : "s", r->k->time_s, (unsigned long long)r->o->common.seed);
    for (int d = 0; d < r->ndirs; d++) {
        const struct wb_result_io_device *v = &r->dir[d].dev;
        wb_report_printf("# dir %s: %s on %s (%s%s%s), %.0f MB free, RAM %.0f MB, shared %s\n", v->dir, v->fs_type,
                         v->device, v->kind, *v->model ? ", " : "", v->model, (double)v->free_bytes / 1e6,
                         (double)v->mem_bytes / 1e6, v->shared == 1 ? "yes" : v->shared == 0 ? "no" : "n/a (one node)");
    }
    wb_report_printf("# %-12s %-11s %-*s %9s %4s %10s %10s %8s %5s %-19s %s\n", "test", "api", dir_width(r), "dir", "file_MB", "reps",
                     "MB/s", "IOPS", "p99_ms", "cold", "sync", "status");
}

static void figure(char *out, size_t cap, double x, int decimals)
{
    if (isfinite(x))
        snprintf(out, cap, "%.*f", decimals, x);
    else
        snprintf(out, cap, "-");
}

static void print_row(const struct wb_io_run *r, const struct wb_io_point *p, const struct gathered *g,
                      const double am[4], const double ai[4])
{
    double p99 = NAN;
    if (p->iops_test && g->R) {
        double *x = malloc(g->R * g->N * sizeof *x);
        for (size_t i = 0; x && i < g->R * g->N; i++)
            x[i] = g->lat[3 * i + 2];
        p99 = x ? wb_stats_median(x, g->R * g->N) * 1e3 : NAN;
        free(x);
    }
    const char *cold = p->cold < 0 ? "-" : p->cold && p->done ? "cold" : "warm";
    /* A column that does not apply to the test (or has no repetition) shows "-", not nan. */
    char mbps[32], iops[32], lat[32];
    figure(mbps, sizeof mbps, p->meta_test ? NAN : am[0], 1);
    figure(iops, sizeof iops, p->iops_test || p->meta_test ? ai[0] : NAN, 0);
    figure(lat, sizeof lat, p99, 3);
    wb_report_printf("  %-12s %-11s %-*s %9.1f %4d %10s %10s %8s %5s %-19s %s\n", wb_io_test_name(p->test),
                     p->be->api, dir_width(r), r->dir[p->d].given, (double)p->file_bytes / 1e6, p->done, mbps, iops, lat, cold,
                     p->sync, strncmp(p->status, "ok", 2) ? "FAILED" : "ok");
    if (strncmp(p->status, "ok", 2))
        wb_report_printf("# FAILED: %s\n", p->status + strlen("failed: "));
    if (!p->direct && p->direct_note[0])
        wb_report_printf("# %s: %s\n", wb_io_test_name(p->test), p->direct_note);
}

int wb_io_write_point(struct wb_io_run *r, struct wb_io_point *p)
{
    struct gathered g = {0};
    double am[4], ai[4];
    char grp[32];
    int rc = gather(r, p, &g);
    if (rc == 0 && r->rank == 0) {
        derive(p, &g);
        summary(g.agg_mbps, g.R, am);
        summary(g.agg_iops, g.R, ai);
        print_row(r, p, &g, am, ai);
        snprintf(grp, sizeof grp, "/io/i%03d", r->points);
        W(write_attrs(r, p, grp, am, ai));
        W(write_dsets(r, &g, grp));
        W(wb_results_attr_i64(r->res, "/io", "points", r->points + 1));
        /* A cold sequential read that succeeded is a storage ceiling for the report (docs/reading.md). */
        if (p->test == WB_IO_READ && p->cold > 0 && p->done > 0 && !strcmp(p->status, "ok"))
            W(wb_results_attr_i64(r->res, "/ceilings", "storage_measured", ++r->cold_reads));
        (void)rc;
    }
    r->points++;
    gathered_free(&g);
    return rc ? rc : wb_results_flush(r->res);
}

int wb_io_write_run(struct wb_io_run *r)
{
    size_t N = (size_t)r->nranks, D = (size_t)r->ndirs, row = sizeof(struct wb_result_io_device);
    struct wb_result_io_device *all = r->rank == 0 ? calloc(N * D, row) : NULL, *rows = calloc(D, row);
    struct wb_result_io_device *mine = calloc(D, row);
    int rc = wb_comm_agree((r->rank == 0 && !all) || !rows || !mine ? wb_error_set(WB_ENOMEM, "io: out of memory") : 0);
    for (size_t d = 0; d < D; d++)
        mine[d] = r->dir[d].dev;
    rc = rc ? rc : wb_comm_agree(wb_comm_check(MPI_Gather(mine, (int)(D * row), MPI_BYTE, all, (int)(D * row),
                                                          MPI_BYTE, 0, wb_comm_world()), "MPI_Gather (io devices)"));
    char dirs[2 * WB_IO_PATH_CAP] = "";
    size_t n = 0;
    for (size_t q = 0; rc == 0 && r->rank == 0 && q < N; q++) {
        int leader = q == 0 || r->node[q - 1] != r->node[q];
        for (size_t p = 0; leader && p < q; p++)
            leader = r->node[p] != r->node[q];
        if (!leader)
            continue;
        struct wb_result_io_device *grown = realloc(rows, (n + D) * row);
        if (!grown)
            break;
        rows = grown;
        memcpy(rows + n, all + q * D, D * row);
        n += D;
    }
    for (int d = 0; d < r->ndirs; d++)
        snprintf(dirs + strlen(dirs), sizeof dirs - strlen(dirs), "%s%s", d ? "\n" : "", r->dir[d].given);
    W(wb_results_group(r->res, "/io"));
    W(wb_results_attr_str(r->res, "/io", "dirs", dirs));
    W(wb_results_attr_f64(r->res, "/io", "budget_s", r->k->time_s));
    W(wb_results_attr_i64(r->res, "/io", "seed", (int64_t)r->o->common.seed));
    W(wb_results_attr_i64(r->res, "/io", "points", 0));
    W(wb_results_write_io_devices(r->res, "/io/devices", rows, n));
    free(all), free(rows), free(mine);
    /* Flushed with the first point: a flush here would count the device table in points_completed. */
    return rc;
}
