#include "fftw/fft_mpi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "fftw/fft.h"
#include "core/timer.h"

double wb_fftmpi_flops(int kind, int64_t total)
{
    double f = total > 1 ? 5.0 * (double)total * log2((double)total) : 0.0;
    return kind == WB_FFTMPI_R2C ? f / 2 : f;
}

int64_t wb_fftmpi_buffer_bytes(const struct wb_fftmpi_layout *l)
{
    return l->alloc_elems * 2 * (int64_t)wb_fft_sample_bytes(l->precision);
}

#ifdef WB_NO_FFTW_MPI

/* Debian builds libfftw3-mpi against Open MPI only; linking it into an MPICH program would mix two MPIs. */
static int missing(void)
{
    return wb_error_set(WB_EUSAGE, "this build has no FFTW-MPI (Debian's libfftw3-mpi is built for Open MPI); "
                                   "for MPICH run bash jobs/build-fftw-mpi.sh (make deps MPI=mpich does) and "
                                   "make MPI=mpich again, or run dfft from the Open MPI build");
}

int wb_fftmpi_available(void) { return 0; }
int wb_fftmpi_init(void) { return missing(); }
int wb_fftmpi_layout(struct wb_fftmpi_layout *l, int dims, const int64_t *n, int kind, int precision,
                     int transposed_out, MPI_Comm comm)
{
    memset(l, 0, sizeof *l);
    return missing();
}
int wb_fftmpi_create(struct wb_fftmpi **p, const struct wb_fftmpi_layout *l, int effort, MPI_Comm comm)
{
    *p = NULL;
    return missing();
}
void wb_fftmpi_destroy(struct wb_fftmpi **p) { *p = NULL; }
void *wb_fftmpi_in(struct wb_fftmpi *p) { return NULL; }
void *wb_fftmpi_out(struct wb_fftmpi *p) { return NULL; }
void wb_fftmpi_forward(struct wb_fftmpi *p, double *t_local_s, double *t_transpose_s) {}
void wb_fftmpi_backward(struct wb_fftmpi *p, double *t_local_s, double *t_transpose_s) {}
void wb_fftmpi_wisdom_gather(MPI_Comm comm) {}
void wb_fftmpi_exchange_arm(int on) {}
void wb_fftmpi_exchange_take(double *seconds, int64_t *bytes)
{
    *seconds = NAN;
    *bytes = 0;
}

#else

#include <fftw3-mpi.h>
#include <limits.h>
#include <malloc.h>

/* Plans are kept untyped; dbl picks fftw_ or fftwf_. Buffers and iodims pass as void *, which C
 * converts to either precision's pointer types. */
struct wb_fftmpi {
    struct wb_fftmpi_layout l;
    int dbl;
    void *buf, *out;            /* 1-D plans are out of place (out); 2-D and 3-D work in buf */
    void *a_fwd, *a_bwd;        /* local transforms of the inner dimensions of each input row */
    void *b_fwd, *b_bwd;        /* local 1-D transforms along dimension 0, after the transpose */
    void *t_rows, *t_cols;      /* FFTW-MPI transposes c0 x c1 -> c1 x c0 and back */
    void *fwd_1d, *bwd_1d;
};

#define MAKE(p, fn, ...) ((p)->dbl ? (void *)fftw_##fn(__VA_ARGS__) : (void *)fftwf_##fn(__VA_ARGS__))

static void run_plan(const struct wb_fftmpi *p, void *plan)
{
    if (!plan)
        return;
    if (p->dbl)
        fftw_execute(plan);
    else
        fftwf_execute(plan);
}

static void drop_plan(const struct wb_fftmpi *p, void **plan)
{
    if (*plan && p->dbl)
        fftw_destroy_plan(*plan);
    else if (*plan)
        fftwf_destroy_plan(*plan);
    *plan = NULL;
}

int wb_fftmpi_available(void) { return 1; }

int wb_fftmpi_init(void)
{
    static int done;
    if (!done) {
#ifdef M_MMAP_MAX
        /* FFTW-MPI's transposes allocate their scratch (up to a whole slab) on every execution and
         * free it after. glibc serves a block over its mmap threshold (at most 32 MB) with a fresh
         * mapping and unmaps it on free, so each transpose page-faulted its scratch in anew: 450 of
         * 530 ms of a 256^3 c2c transform at np 2 here (133 ms with the heap kept), and heFFTe,
         * which allocates its workspace once, ran 2.7x faster. Large blocks come from the heap, and
         * freed memory stays there to be reused. Process-wide, set before the first plan. */
        (void)mallopt(M_MMAP_MAX, 0);
        (void)mallopt(M_TRIM_THRESHOLD, INT_MAX);
#endif
        fftw_mpi_init();
        fftwf_mpi_init();
        done = 1;
    }
    return 0;
}

static int layout_1d(struct wb_fftmpi_layout *l, int nranks, MPI_Comm comm)
{
    ptrdiff_t ni, is, no, os, bni, bis, bno, bos;
    ptrdiff_t alloc = l->precision == WB_FFT_DOUBLE
                          ? fftw_mpi_local_size_1d((ptrdiff_t)l->n[0], comm, FFTW_FORWARD, 0, &ni, &is, &no, &os)
                          : fftwf_mpi_local_size_1d((ptrdiff_t)l->n[0], comm, FFTW_FORWARD, 0, &ni, &is, &no, &os);
    if (l->precision == WB_FFT_DOUBLE)
        fftw_mpi_local_size_1d((ptrdiff_t)l->n[0], comm, FFTW_BACKWARD, 0, &bni, &bis, &bno, &bos);
    else
        fftwf_mpi_local_size_1d((ptrdiff_t)l->n[0], comm, FFTW_BACKWARD, 0, &bni, &bis, &bno, &bos);
    /* The backward plan reads what the forward one wrote, so its input block must be the forward output. */
    if (bni != no || bis != os || bno != ni || bos != is)
        return wb_error_set(WB_EFFTW, "FFTW-MPI splits a 1-D transform of %lld points differently forward and "
                                      "backward on %d ranks", (long long)l->n[0], nranks);
    l->c0 = l->n[0];
    l->c1 = l->c2 = l->row_elems = 1;
    l->in_start = is;
    l->in_count = ni;
    l->out_start = os;
    l->out_count = no;
    l->alloc_elems = alloc;
    l->local_n = ni;
    /* A model, not a count: the six-step algorithm transposes the local data three times. */
    size_t csize = 2 * wb_fft_sample_bytes(l->precision);
    l->bytes_transposed = nranks > 1 ? 3 * (int64_t)ni * (int64_t)csize * (nranks - 1) / nranks : 0;
    return 0;
}

int wb_fftmpi_layout(struct wb_fftmpi_layout *l, int dims, const int64_t *n, int kind, int precision,
                     int transposed_out, MPI_Comm comm)
{
    memset(l, 0, sizeof *l);
    int nranks = 1;
    MPI_Comm_size(comm, &nranks);
    l->dims = dims;
    l->kind = kind;
    l->precision = precision;
    l->transposed_out = transposed_out;
    l->n[0] = l->n[1] = l->n[2] = 1;
    for (int d = 0; d < dims; d++)
        l->n[d] = n[d];
    l->total = l->n[0] * l->n[1] * l->n[2];
    /* FFTW-MPI counts elements in ptrdiff_t, 32 bits in a 32-bit process: below this every size
     * and offset below converts exactly. */
    if ((uint64_t)l->total > (uint64_t)PTRDIFF_MAX / 4)
        return wb_error_set(WB_EUSAGE, "%lld points are more than FFTW-MPI can count in a %d-bit process (at most "
                                       "%lld); use a smaller --n, or a 64-bit OS",
                            (long long)l->total, (int)(8 * sizeof(ptrdiff_t)), (long long)(PTRDIFF_MAX / 4));
    if (dims == 1)
        return layout_1d(l, nranks, comm);
    int64_t last = kind == WB_FFTMPI_R2C ? n[dims - 1] / 2 + 1 : n[dims - 1];
    l->c0 = n[0];
    l->c1 = dims == 3 ? n[1] : last;
    l->c2 = dims == 3 ? last : 1;
    l->row_elems = l->c1 * l->c2;
    ptrdiff_t nn[2] = {(ptrdiff_t)l->c0, (ptrdiff_t)l->c1}, ln0, s0, ln1, s1;
    ptrdiff_t reals = precision == WB_FFT_DOUBLE
                          ? fftw_mpi_local_size_many_transposed(2, nn, (ptrdiff_t)(2 * l->c2), FFTW_MPI_DEFAULT_BLOCK,
                                                                FFTW_MPI_DEFAULT_BLOCK, comm, &ln0, &s0, &ln1, &s1)
                          : fftwf_mpi_local_size_many_transposed(2, nn, (ptrdiff_t)(2 * l->c2), FFTW_MPI_DEFAULT_BLOCK,
                                                                 FFTW_MPI_DEFAULT_BLOCK, comm, &ln0, &s0, &ln1, &s1);
    l->in_start = s0;
    l->in_count = ln0;
    l->out_start = transposed_out ? s1 : s0;
    l->out_count = transposed_out ? ln1 : ln0;
    l->mid_start = s1;
    l->mid_count = ln1;
    int64_t need = ln0 * l->row_elems > ln1 * l->c0 * l->c2 ? ln0 * l->row_elems : ln1 * l->c0 * l->c2;
    l->alloc_elems = (reals + 1) / 2 > need ? (reals + 1) / 2 : need;
    l->local_n = ln0 * l->n[1] * l->n[2];
    int64_t csize = 2 * (int64_t)wb_fft_sample_bytes(precision);
    l->bytes_transposed = ln0 * (l->c1 - ln1) * l->c2 * csize;
    if (!transposed_out)
        l->bytes_transposed += ln1 * (l->c0 - ln0) * l->c2 * csize;
    return 0;
}

static unsigned effort_flags(int effort)
{
    return effort == WB_FFT_ESTIMATE ? FFTW_ESTIMATE : effort == WB_FFT_PATIENT ? FFTW_PATIENT : FFTW_MEASURE;
}

/* The local plans of 2-D and 3-D: inner dimensions per input row (a), dimension 0 after the transpose (b). */
static void plan_local(struct wb_fftmpi *p, unsigned flags)
{
    const struct wb_fftmpi_layout *l = &p->l;
    int rank = l->dims - 1, rows = (int)l->in_count, re = (int)l->row_elems;
    int nn[2] = {(int)l->n[1], (int)l->n[2]};
    int cplx[2] = {(int)l->n[1], (int)l->c2}, real[2] = {(int)l->n[1], 2 * (int)l->c2};
    if (rank == 1) {
        cplx[0] = (int)l->c1;
        real[0] = 2 * (int)l->c1;
    }
    if (rows > 0 && l->kind == WB_FFTMPI_C2C) {
        p->a_fwd = MAKE(p, plan_many_dft, rank, nn, rows, p->buf, NULL, 1, re, p->buf, NULL, 1, re, FFTW_FORWARD, flags);
        p->a_bwd = MAKE(p, plan_many_dft, rank, nn, rows, p->buf, NULL, 1, re, p->buf, NULL, 1, re, FFTW_BACKWARD, flags);
    } else if (rows > 0) {
        p->a_fwd = MAKE(p, plan_many_dft_r2c, rank, nn, rows, p->buf, real, 1, 2 * re, p->buf, cplx, 1, re, flags);
        p->a_bwd = MAKE(p, plan_many_dft_c2r, rank, nn, rows, p->buf, cplx, 1, re, p->buf, real, 1, 2 * re, flags);
    }
    fftw_iodim along = {(int)l->c0, (int)l->c2, (int)l->c2};
    fftw_iodim loops[2] = {{(int)l->mid_count, (int)(l->c0 * l->c2), (int)(l->c0 * l->c2)}, {(int)l->c2, 1, 1}};
    if (l->mid_count > 0) {
        p->b_fwd = MAKE(p, plan_guru_dft, 1, (void *)&along, 2, (void *)loops, p->buf, p->buf, FFTW_FORWARD, flags);
        p->b_bwd = MAKE(p, plan_guru_dft, 1, (void *)&along, 2, (void *)loops, p->buf, p->buf, FFTW_BACKWARD, flags);
    }
}

static int plans_made(const struct wb_fftmpi *p)
{
    const struct wb_fftmpi_layout *l = &p->l;
    if (l->dims == 1)
        return p->fwd_1d && p->bwd_1d;
    return p->t_rows && p->t_cols && (l->in_count == 0 || (p->a_fwd && p->a_bwd)) &&
           (l->mid_count == 0 || (p->b_fwd && p->b_bwd));
}

int wb_fftmpi_create(struct wb_fftmpi **out, const struct wb_fftmpi_layout *l, int effort, MPI_Comm comm)
{
    *out = NULL;
    if (l->dims > 1 && (l->c0 * l->c2 > INT32_MAX || 2 * l->row_elems > INT32_MAX))
        return wb_error_set(WB_EUSAGE, "a row of %lld x %lld x %lld points is beyond FFTW's int sizes; use a "
                                       "smaller shape", (long long)l->n[0], (long long)l->n[1], (long long)l->n[2]);
    struct wb_fftmpi *p = calloc(1, sizeof *p);
    if (!p)
        return wb_error_set(WB_ENOMEM, "out of memory for FFTW-MPI plans");
    p->l = *l;
    p->dbl = l->precision == WB_FFT_DOUBLE;
    size_t bytes = (size_t)wb_fftmpi_buffer_bytes(l);
    p->buf = wb_fft_alloc(bytes);
    p->out = l->dims == 1 ? wb_fft_alloc(bytes) : p->buf;
    if (!p->buf || !p->out) {
        wb_fftmpi_destroy(&p);
        return wb_error_set(WB_ENOMEM, "out of memory for %.1f MB of FFT buffers", 2.0 * (double)bytes / 1e6);
    }
    unsigned flags = effort_flags(effort);
    /* wb_fftmpi_layout refused any shape whose sizes do not fit in ptrdiff_t. */
    ptrdiff_t n0 = (ptrdiff_t)l->n[0], c0 = (ptrdiff_t)l->c0, c1 = (ptrdiff_t)l->c1;
    double t0 = wb_timer_now_s();
    if (l->dims == 1) {
        p->fwd_1d = MAKE(p, mpi_plan_dft_1d, n0, p->buf, p->out, comm, FFTW_FORWARD, flags);
        p->bwd_1d = MAKE(p, mpi_plan_dft_1d, n0, p->out, p->buf, comm, FFTW_BACKWARD, flags);
    } else {
        ptrdiff_t cells = (ptrdiff_t)(2 * l->c2);
        p->t_rows = MAKE(p, mpi_plan_many_transpose, c0, c1, cells, FFTW_MPI_DEFAULT_BLOCK,
                         FFTW_MPI_DEFAULT_BLOCK, p->buf, p->buf, comm, flags);
        p->t_cols = MAKE(p, mpi_plan_many_transpose, c1, c0, cells, FFTW_MPI_DEFAULT_BLOCK,
                         FFTW_MPI_DEFAULT_BLOCK, p->buf, p->buf, comm, flags);
        plan_local(p, flags);
    }
    wb_timer_part_add(WB_TIMER_PLAN, wb_timer_now_s() - t0);
    if (!plans_made(p)) {
        wb_fftmpi_destroy(&p);
        return wb_error_set(WB_EFFTW, "FFTW-MPI could not plan a %s transform of %lld x %lld x %lld points",
                            l->kind == WB_FFTMPI_R2C ? "r2c" : "c2c", (long long)l->n[0], (long long)l->n[1],
                            (long long)l->n[2]);
    }
    *out = p;
    return 0;
}

void wb_fftmpi_destroy(struct wb_fftmpi **pp)
{
    struct wb_fftmpi *p = *pp;
    if (!p)
        return;
    void **plans[] = {&p->a_fwd, &p->a_bwd, &p->b_fwd, &p->b_bwd, &p->t_rows, &p->t_cols, &p->fwd_1d, &p->bwd_1d};
    for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++)
        drop_plan(p, plans[i]);
    if (p->out && p->out != p->buf)
        wb_fft_free(p->out);
    wb_fft_free(p->buf);
    free(p);
    *pp = NULL;
}

void *wb_fftmpi_in(struct wb_fftmpi *p) { return p->buf; }

void *wb_fftmpi_out(struct wb_fftmpi *p) { return p->out; }

/* Four steps of a 2-D or 3-D transform, local FFTs and transposes alternating (the first a transpose
 * when transpose_first), each timed into its phase; a NULL plan (a skipped step, or no rows here) runs nothing. */
static void run_steps(const struct wb_fftmpi *p, void *const steps[4], int transpose_first, double *t_local_s,
                      double *t_transpose_s)
{
    double t[2] = {0, 0};
    for (int i = 0; i < 4; i++) {
        int transpose = (i + transpose_first) % 2;
        wb_fftmpi_exchange_arm(transpose);
        double t0 = wb_timer_now_s();
        run_plan(p, steps[i]);
        t[transpose] += wb_timer_now_s() - t0;
    }
    wb_fftmpi_exchange_arm(0);
    *t_local_s = t[0];
    *t_transpose_s = t[1];
}

void wb_fftmpi_forward(struct wb_fftmpi *p, double *t_local_s, double *t_transpose_s)
{
    if (p->l.dims == 1) {
        /* FFTW-MPI's 1-D plan transposes inside; its MPI calls are those exchanges. */
        wb_fftmpi_exchange_arm(1);
        run_plan(p, p->fwd_1d);
        wb_fftmpi_exchange_arm(0);
        *t_local_s = *t_transpose_s = NAN;
        return;
    }
    void *const steps[4] = {p->a_fwd, p->t_rows, p->b_fwd, p->l.transposed_out ? NULL : p->t_cols};
    run_steps(p, steps, 0, t_local_s, t_transpose_s);
}

void wb_fftmpi_backward(struct wb_fftmpi *p, double *t_local_s, double *t_transpose_s)
{
    double tl = NAN, tt = NAN;
    /* The forward's steps in reverse: a transposed output skips the first transpose back. */
    void *const steps[4] = {p->l.transposed_out ? NULL : p->t_rows, p->b_bwd, p->t_cols, p->a_bwd};
    if (p->l.dims == 1) {
        wb_fftmpi_exchange_arm(1);
        run_plan(p, p->bwd_1d);
        wb_fftmpi_exchange_arm(0);
    } else
        run_steps(p, steps, 1, &tl, &tt);
    if (t_local_s)
        *t_local_s = tl;
    if (t_transpose_s)
        *t_transpose_s = tt;
}

void wb_fftmpi_wisdom_gather(MPI_Comm comm)
{
    fftw_mpi_gather_wisdom(comm);
    fftwf_mpi_gather_wisdom(comm);
}

#endif
