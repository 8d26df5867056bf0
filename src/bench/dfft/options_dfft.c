#define _POSIX_C_SOURCE 200809L
#include "bench/dfft/options_dfft.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/options.h"
#include "core/error.h"
#include "fftw/fft.h"
#include "fftw/fft_mpi.h"
#include "core/optparse.h"
#include "par/comm.h"

enum { D_DIMS = 1, D_N, D_SHAPE, D_KIND, D_PRECISION, D_TRANSPOSED, D_PLAN, D_WISDOM, D_MAXMEM, D_DIRECTION };

/* 2^30 points per dimension keeps every FFTW int size in range; memory runs out long before. */
#define MAX_SIDE ((int64_t)1 << 30)

const struct wb_optdef wb_dfft_optdefs[] = {
    {"dims", 1, 0, D_DIMS, "1|2|3", "dimensions of the transform (with --shape: as many as it has)", "1"},
    {"n", 1, 0, D_N, "LIST", "points per dimension, one point each", "1-D 1M, 2-D 1024, 3-D 128"},
    {"shape", 1, 0, D_SHAPE, "NXxNYxNZ", "one transform of this shape, e.g. 256x128x64 (instead of --n)", NULL},
    {"kind", 1, 0, D_KIND, "c2c|r2c", "complex or real input", "c2c in 1-D, as HPCC; r2c in 2-D, 3-D"},
    {"precision", 1, 0, D_PRECISION, "single|double", "FFTW precision", "double, as HPCC"},
    {"transposed-out", 0, 0, D_TRANSPOSED, NULL, "leave the output transposed (FFTW_MPI_TRANSPOSED_OUT order)", NULL},
    {"direction", 1, 0, D_DIRECTION, "forward|backward|both",
     "transforms timed: the forward, also the backward, or both with their mean as heFFTe reports it", "forward"},
    {"plan", 1, 0, D_PLAN, "estimate|measure|patient", "FFTW planning effort",
     "measure; estimate where a machine holds more ranks than usable cores"},
    {"wisdom", 1, 0, D_WISDOM, "FILE", "FFTW wisdom shared with fft: rank 0 reads it, FFTW-MPI shares it", "none"},
    {"max-memory", 1, 0, D_MAXMEM, "SIZE", "refuse points needing more per node", "MemAvailable"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

const char wb_dfft_summary[] =
    "one large FFT spread over the ranks with FFTW-MPI: local FFTs and the all-to-all transpose";

const char *const wb_dfft_direction_names[] = {"forward", "backward", "both", NULL};

void wb_dfft_opts_defaults(struct wb_options *o)
{
    struct wb_dfft_opts *t = wb_dfft_opts_of(o);
    memset(t, 0, sizeof *t);
    t->kind = -1;
    t->precision = WB_FFT_DOUBLE;
    t->plan = WB_FFT_MEASURE;
}

/* Catches 0 and negative items of a list or range before the size parser's generic message. */
static int not_positive(const char *opt, const char *s)
{
    for (const char *p = s;; p++) {
        size_t len = strcspn(p, ",:");
        if (*p == '-' || (len > 0 && strspn(p, "0") >= len))
            return wb_error_set(WB_EUSAGE, "%s: '%s': N must be a positive number of points, e.g. %s 1048576",
                                opt, s, opt);
        p += len;
        if (!*p)
            return 0;
    }
}

static int parse_shape(struct wb_dfft_opts *t, const char *arg)
{
    char *copy = strdup(arg), *cursor = copy;
    int k = 0, rc = copy ? 0 : wb_error_set(WB_ENOMEM, "--shape: out of memory");
    memset(t->shape, 0, sizeof t->shape);
    while (rc == 0 && cursor) {
        char *x = strchr(cursor, 'x');
        if (x)
            *x = '\0';
        if (k == 3)
            rc = wb_error_set(WB_EUSAGE, "--shape: '%s' has more than 3 dimensions; use NX, NXxNY or NXxNYxNZ", arg);
        else if ((rc = not_positive("--shape", cursor)) == 0)
            rc = wb_optparse_size("--shape", cursor, 2, MAX_SIDE, &t->shape[k++]);
        cursor = x ? x + 1 : NULL;
    }
    free(copy);
    if (rc == 0 && t->dims && t->dims != k)
        rc = wb_error_set(WB_EUSAGE, "--shape %s has %d dimension%s but --dims is %d; drop --dims or match it",
                          arg, k, k == 1 ? "" : "s", t->dims);
    if (rc == 0)
        t->dims = k;
    return rc;
}

int wb_dfft_opts_set(struct wb_options *o, int id, const char *arg)
{
    struct wb_dfft_opts *t = wb_dfft_opts_of(o);
    static const char *const kinds[] = {"c2c", "r2c", NULL};
    static const char *const precisions[] = {"single", "double", NULL};
    static const char *const plans[] = {"estimate", "measure", "patient", NULL};
    int64_t v;
    int rc = 0;
    switch (id) {
    case D_DIMS:
        if ((rc = wb_optparse_int("--dims", arg, 1, 3, &v)) == 0 && t->shape[0] && t->dims != v)
            rc = wb_error_set(WB_EUSAGE, "--dims %s disagrees with --shape (%d dimensions); drop one of them", arg,
                              t->dims);
        if (rc == 0)
            t->dims = (int)v;
        return rc;
    case D_N:
        free(t->sizes);
        t->sizes = NULL;
        if ((rc = not_positive("--n", arg)) == 0)
            rc = wb_optparse_size_list("--n", arg, 2, MAX_SIDE, 64, &t->sizes, &t->nsizes);
        return rc;
    case D_SHAPE: return parse_shape(t, arg);
    case D_KIND: return wb_optparse_choice("--kind", arg, kinds, &t->kind);
    case D_PRECISION: return wb_optparse_choice("--precision", arg, precisions, &t->precision);
    case D_TRANSPOSED: t->transposed_out = 1; return 0;
    case D_PLAN: t->plan_given = 1; return wb_optparse_choice("--plan", arg, plans, &t->plan);
    case D_DIRECTION: return wb_optparse_choice("--direction", arg, wb_dfft_direction_names, &t->direction);
    case D_WISDOM:
        if (!*arg)
            return wb_error_set(WB_EUSAGE, "--wisdom: the file name is empty");
        t->wisdom = arg;
        return 0;
    case D_MAXMEM:
        if ((rc = wb_optparse_size("--max-memory", arg, 1 << 20, INT64_MAX / 2, &v)) == 0)
            t->max_bytes = v;
        return rc;
    }
    return rc;
}

int wb_dfft_opts_validate(struct wb_options *o)
{
    struct wb_dfft_opts *t = wb_dfft_opts_of(o);
    if (t->shape[0] && t->sizes)
        return wb_error_set(WB_EUSAGE, "give --n or --shape, not both");
    if (!t->dims)
        t->dims = 1;
    if (t->kind < 0)
        t->kind = t->dims == 1 ? WB_FFTMPI_C2C : WB_FFTMPI_R2C;
    if (t->dims == 1 && t->kind == WB_FFTMPI_R2C)
        return wb_error_set(WB_EUSAGE, "FFTW-MPI has no distributed 1-D r2c transform; use --kind c2c in 1-D, or "
                                       "--dims 2 or 3 for r2c");
    if (t->dims == 1 && t->transposed_out)
        return wb_error_set(WB_EUSAGE, "--transposed-out applies to --dims 2 and 3 (a 1-D transform has no "
                                       "dimensions to leave transposed)");
    if (!t->shape[0] && !t->sizes) {
        static const char *const defaults[] = {"1048576", "1024", "128"};
        return wb_optparse_size_list("--n", defaults[t->dims - 1], 2, MAX_SIDE, 64, &t->sizes, &t->nsizes);
    }
    return 0;
}

int wb_dfft_opts_point(const struct wb_dfft_opts *t, int i, int64_t *n)
{
    n[0] = n[1] = n[2] = 1;
    if (t->shape[0]) {
        memcpy(n, t->shape, sizeof t->shape);
        for (int d = t->dims; d < 3; d++)
            n[d] = 1;
        return 1;
    }
    for (int d = 0; d < t->dims && i < t->nsizes; d++)
        n[d] = t->sizes[i];
    return t->nsizes;
}

void wb_dfft_opts_compact(struct wb_options *o)
{
    struct wb_dfft_opts *t = wb_dfft_opts_of(o);
    free(t->sizes);
    t->sizes = NULL;
    memset(t->shape, 0, sizeof t->shape);
    t->dims = 3;
    t->kind = WB_FFTMPI_R2C;
    t->transposed_out = 0;
    /* FFTW-MPI gives each rank a slab of the first side, so the sides start at the ranks' power of two:
     * 32 and 64 up to 32 ranks, 64 and 128 at 64, and a suite runs at any rank count. */
    long long side = 32;
    while (side < wb_comm_size())
        side *= 2;
    char sides[48];
    snprintf(sides, sizeof sides, "%lld,%lld", side, 2 * side);
    wb_optparse_size_list("--n", sides, 2, MAX_SIDE, 64, &t->sizes, &t->nsizes);
}

void wb_dfft_opts_free(struct wb_options *o)
{
    struct wb_dfft_opts *t = wb_dfft_opts_of(o);
    free(t->sizes);
    t->sizes = NULL;
    t->nsizes = 0;
}

struct wb_dfft_opts *wb_dfft_opts_of(const struct wb_options *o) { return wb_options_own(o, "dfft"); }
