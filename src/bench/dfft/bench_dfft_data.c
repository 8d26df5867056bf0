#define _POSIX_C_SOURCE 200809L
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/dfft/bench_dfft_int.h"
#include "core/error.h"
#include "fftw/fft.h"

#define NTONES 3
#define TWO_PI 6.28318530717958647692

/* The tones: amplitude and phase; the bins follow from the shape (see tone_bin). */
static const double tone_amp[NTONES] = {1.0, 0.5, 0.25};
static const double tone_phase[NTONES] = {0.0, 0.3, -1.1};

/* Bin of tone k along a dimension of n points: small, distinct, and different per dimension. */
static int64_t tone_bin(int k, int d, int64_t n) { return (3 + 5 * k + 2 * d) % n; }

static double complex tone_amplitude(int k) { return tone_amp[k] * cexp(I * tone_phase[k]); }

static double complex get_c(const void *b, int dbl, int64_t i)
{
    return dbl ? ((const double *)b)[2 * i] + I * ((const double *)b)[2 * i + 1]
               : ((const float *)b)[2 * i] + I * ((const float *)b)[2 * i + 1];
}

static void set_c(void *b, int dbl, int64_t i, double complex v)
{
    if (dbl) {
        ((double *)b)[2 * i] = creal(v);
        ((double *)b)[2 * i + 1] = cimag(v);
    } else {
        ((float *)b)[2 * i] = (float)creal(v);
        ((float *)b)[2 * i + 1] = (float)cimag(v);
    }
}

static double get_r(const void *b, int dbl, int64_t i) { return dbl ? ((const double *)b)[i] : ((const float *)b)[i]; }

static void set_r(void *b, int dbl, int64_t i, double v)
{
    if (dbl)
        ((double *)b)[i] = v;
    else
        ((float *)b)[i] = (float)v;
}

int64_t wb_dfft_input_bytes(const struct wb_fftmpi_layout *l)
{
    return l->in_count * l->row_elems * 2 * (int64_t)wb_fft_sample_bytes(l->precision);
}

/* Index of input point (local row r, j1, j2): complex elements for c2c, reals (padded rows) for r2c. */
static int64_t in_index(const struct wb_fftmpi_layout *l, int64_t r, int64_t j1, int64_t j2)
{
    if (l->kind == WB_FFTMPI_C2C)
        return (r * l->n[1] + j1) * l->n[2] + j2;
    if (l->dims == 3)
        return (r * l->n[1] + j1) * 2 * l->c2 + j2;
    return r * 2 * l->c1 + j1;
}

/* A reproducible value in [-1, 1) from a global point index (splitmix64). */
static double hash_unit(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return (double)(x >> 11) / 4503599627370496.0 - 1.0;
}

int wb_dfft_fill(const struct wb_fftmpi_layout *l, void *buf, int random)
{
    int dbl = l->precision == WB_FFT_DOUBLE;
    /* Per dimension and tone, e^(2 pi i f j / n) for every j: the input is their product, summed. */
    double complex *ph[3][NTONES] = {{NULL}};
    int rc = 0;
    for (int d = 0; d < 3 && rc == 0; d++)
        for (int k = 0; k < NTONES && rc == 0; k++) {
            ph[d][k] = malloc((size_t)l->n[d] * sizeof **ph[d]);
            if (!ph[d][k])
                rc = wb_error_set(WB_ENOMEM, "out of memory for the known input");
            for (int64_t j = 0; ph[d][k] && j < l->n[d]; j++)
                ph[d][k][j] = cexp(I * TWO_PI * (double)((tone_bin(k, d, l->n[d]) * j) % l->n[d]) / (double)l->n[d]);
        }
    memset(buf, 0, (size_t)wb_dfft_input_bytes(l));
    for (int64_t r = 0; rc == 0 && r < l->in_count; r++)
        for (int64_t j1 = 0; j1 < l->n[1]; j1++)
            for (int64_t j2 = 0; j2 < l->n[2]; j2++) {
                int64_t i0 = l->in_start + r, idx = in_index(l, r, j1, j2);
                double complex v = 0;
                if (random) {
                    uint64_t g = (uint64_t)((i0 * l->n[1] + j1) * l->n[2] + j2);
                    v = hash_unit(2 * g) + (l->kind == WB_FFTMPI_C2C ? I * hash_unit(2 * g + 1) : 0);
                } else {
                    for (int k = 0; k < NTONES; k++)
                        v += tone_amplitude(k) * ph[0][k][i0] * ph[1][k][j1] * ph[2][k][j2];
                }
                if (l->kind == WB_FFTMPI_C2C)
                    set_c(buf, dbl, idx, v);
                else
                    set_r(buf, dbl, idx, creal(v));
            }
    for (int d = 0; d < 3; d++)
        for (int k = 0; k < NTONES; k++)
            free(ph[d][k]);
    return rc;
}

/* The expected value of bin m (logical, one index per dimension of l->n) of the known input. */
static double complex expected(const struct wb_fftmpi_layout *l, const int64_t *m)
{
    double complex e = 0;
    for (int k = 0; k < NTONES; k++) {
        int pos = 1, neg = 1;
        for (int d = 0; d < 3; d++) {
            int64_t f = tone_bin(k, d, l->n[d]);
            pos &= m[d] == f;
            neg &= m[d] == (l->n[d] - f) % l->n[d];
        }
        /* A real input's tone is half at +f and half (conjugated) at -f. */
        if (l->kind == WB_FFTMPI_C2C)
            e += pos ? tone_amplitude(k) : 0;
        else
            e += (pos ? tone_amplitude(k) / 2 : 0) + (neg ? conj(tone_amplitude(k)) / 2 : 0);
    }
    return e * (double)l->total;
}

/* Walks this rank's output bins: calls fn with the buffer index and the logical bin. */
static void each_bin(const struct wb_fftmpi_layout *l, void (*fn)(void *, int64_t, const int64_t *), void *arg)
{
    int64_t across = l->transposed_out ? l->c0 : l->c1;
    for (int64_t r = 0; r < l->out_count; r++)
        for (int64_t a = 0; a < across; a++)
            for (int64_t e = 0; e < l->c2; e++) {
                int64_t g = l->out_start + r, m[3] = {0, 0, 0};
                int64_t m0 = l->transposed_out ? a : g, mc = l->transposed_out ? g : a;
                m[0] = m0;
                if (l->dims == 3) {
                    m[1] = mc;
                    m[2] = e;
                } else if (l->dims == 2) {
                    m[1] = mc;
                }
                fn(arg, (r * across + a) * l->c2 + e, m);
            }
}

struct spec_acc {
    const struct wb_fftmpi_layout *l;
    const void *out;
    double err;
};

static void spec_one(void *arg, int64_t idx, const int64_t *m)
{
    struct spec_acc *s = arg;
    double complex x = get_c(s->out, s->l->precision == WB_FFT_DOUBLE, idx);
    double e = cabs(x - expected(s->l, m));
    if (!(e <= s->err))
        s->err = isnan(e) ? INFINITY : e;
}

double wb_dfft_spectrum_error(const struct wb_fftmpi_layout *l, const void *out)
{
    struct spec_acc s = {l, out, 0};
    each_bin(l, spec_one, &s);
    return s.err / (double)l->total;
}

static double point_abs(const struct wb_fftmpi_layout *l, const void *b, int64_t idx)
{
    int dbl = l->precision == WB_FFT_DOUBLE;
    return l->kind == WB_FFTMPI_C2C ? cabs(get_c(b, dbl, idx)) : fabs(get_r(b, dbl, idx));
}

double wb_dfft_input_max(const struct wb_fftmpi_layout *l, const void *x)
{
    double mx = 0;
    for (int64_t r = 0; r < l->in_count; r++)
        for (int64_t j1 = 0; j1 < l->n[1]; j1++)
            for (int64_t j2 = 0; j2 < l->n[2]; j2++)
                mx = fmax(mx, point_abs(l, x, in_index(l, r, j1, j2)));
    return mx;
}

double wb_dfft_roundtrip_error(const struct wb_fftmpi_layout *l, const void *y, const void *x, double x_max)
{
    int dbl = l->precision == WB_FFT_DOUBLE;
    double err = 0, scale = 1.0 / (double)l->total;
    for (int64_t r = 0; r < l->in_count; r++)
        for (int64_t j1 = 0; j1 < l->n[1]; j1++)
            for (int64_t j2 = 0; j2 < l->n[2]; j2++) {
                int64_t i = in_index(l, r, j1, j2);
                double e = l->kind == WB_FFTMPI_C2C ? cabs(get_c(y, dbl, i) * scale - get_c(x, dbl, i))
                                                    : fabs(get_r(y, dbl, i) * scale - get_r(x, dbl, i));
                if (!(e <= err))
                    err = isnan(e) ? INFINITY : e;
            }
    return x_max > 0 ? err / x_max : err;
}

void wb_dfft_corrupt(const struct wb_fftmpi_layout *l, void *out)
{
    if (l->out_count < 1)
        return;
    int dbl = l->precision == WB_FFT_DOUBLE;
    set_c(out, dbl, 0, get_c(out, dbl, 0) + 0.01 * (double)l->total);
}

struct dump_acc {
    const struct wb_fftmpi_layout *l;
    const void *out;
    FILE *fp;
    int ok;
};

static void dump_bin(void *arg, int64_t idx, const int64_t *m)
{
    struct dump_acc *d = arg;
    double complex x = get_c(d->out, d->l->precision == WB_FFT_DOUBLE, idx);
    double v[2] = {creal(x), cimag(x)};
    d->ok &= fwrite(v, sizeof v, 1, d->fp) == 1;
}

int wb_dfft_dump(const char *dir, int point, int rank, const struct wb_fftmpi_layout *l, const void *in,
                 const void *out)
{
    char path[4200];
    int ok = 1;
    snprintf(path, sizeof path, "%s/p%03d.meta.%d", dir, point, rank);
    FILE *fp = fopen(path, "w");
    ok &= fp && fprintf(fp, "%d %lld %lld %lld %d %d %lld %lld %lld %lld\n", l->dims, (long long)l->n[0],
                        (long long)l->n[1], (long long)l->n[2], l->kind, l->transposed_out, (long long)l->in_start,
                        (long long)l->in_count, (long long)l->out_start, (long long)l->out_count) > 0;
    ok &= fp && fclose(fp) == 0;
    /* Input points in logical order, as complex doubles; output bins in buffer order, as complex doubles. */
    snprintf(path, sizeof path, "%s/p%03d.in.%d", dir, point, rank);
    fp = ok ? fopen(path, "w") : NULL;
    int dbl = l->precision == WB_FFT_DOUBLE;
    for (int64_t r = 0; fp && r < l->in_count; r++)
        for (int64_t j1 = 0; j1 < l->n[1]; j1++)
            for (int64_t j2 = 0; j2 < l->n[2]; j2++) {
                int64_t i = in_index(l, r, j1, j2);
                double complex x = l->kind == WB_FFTMPI_C2C ? get_c(in, dbl, i) : get_r(in, dbl, i);
                double v[2] = {creal(x), cimag(x)};
                ok &= fwrite(v, sizeof v, 1, fp) == 1;
            }
    ok &= fp && fclose(fp) == 0;
    snprintf(path, sizeof path, "%s/p%03d.out.%d", dir, point, rank);
    struct dump_acc d = {l, out, ok ? fopen(path, "w") : NULL, 1};
    if (d.fp)
        each_bin(l, dump_bin, &d);
    ok &= d.fp && d.ok && fclose(d.fp) == 0;
    return ok ? 0 : wb_error_set(WB_EIO, "could not write the dfft dump to %s", dir);
}
