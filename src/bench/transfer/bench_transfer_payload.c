#define _POSIX_C_SOURCE 200809L
#include "bench/transfer/bench_transfer_kernels.h"
#include "core/rng.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64 of one value: the same bits as stepping a generator whose state was x. */
static uint64_t splitmix(uint64_t x) { return wb_rng_mix(x + UINT64_C(0x9E3779B97F4A7C15)); }

uint64_t wb_transfer_salt(const struct wb_transfer_ctx *c, int src, int dst)
{
    uint64_t h = splitmix((uint64_t)c->test);
    h = splitmix(h ^ (uint64_t)c->msg_bytes);
    h = splitmix(h ^ c->seq);
    return splitmix(h ^ ((uint64_t)(uint32_t)src << 32) ^ (uint32_t)dst);
}

static inline uint64_t lcg(uint64_t x) { return x * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407); }

/* The next 64 pattern bits of a generator. */
static inline uint64_t next_bits(uint64_t *x)
{
    *x = lcg(*x);
    return *x ^ (*x >> 29);
}

void wb_transfer_fill(unsigned char *p, size_t n, uint64_t s)
{
    uint64_t x = s;
    /* Byte order is explicit so that mixed-endian nodes agree. */
    for (size_t i = 0; i < n; i += 8) {
        uint64_t v = next_bits(&x);
        size_t k = n - i < 8 ? n - i : 8;
        for (size_t j = 0; j < k; j++)
            p[i + j] = (unsigned char)(v >> (8 * j));
    }
}

void wb_transfer_poison(unsigned char *p, size_t n, uint64_t s)
{
    wb_transfer_fill(p, n, s);
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)~p[i];
}

#ifdef WB_TEST_FAULTS
/* Test builds only: WB_FAULT=corrupt-transfer flips one byte of the first buffer this rank checks. */
static void inject_fault(unsigned char *p, size_t n)
{
    static int done;
    const char *f = getenv("WB_FAULT");
    if (!done && n > 0 && f && !strcmp(f, "corrupt-transfer")) {
        p[n / 2] ^= 0x5a;
        done = 1;
    }
}
#endif

static void note_bad(struct wb_transfer_ctx *c, int src, int dst, size_t at, unsigned got, unsigned want)
{
    if (c->bad++)
        return;
    const char *name = wb_transfer_test_name(c->test);
    char where[96];
    if (c->shift)
        snprintf(where, sizeof where, "shifted round %d, data from rank %d to rank %d", c->shift, src, dst);
    else if (wb_transfer_tests[c->test].kind == WB_TRANSFER_KIND_P2P)
        snprintf(where, sizeof where, "pair %d:%d, data from rank %d to rank %d", c->role == 0 ? c->rank : c->peer,
                 c->role == 0 ? c->peer : c->rank, src, dst);
    else if (wb_transfer_tests[c->test].kind == WB_TRANSFER_KIND_RING)
        snprintf(where, sizeof where, "order %d, data from rank %d to rank %d", c->order, src, dst);
    else if (src < 0)
        snprintf(where, sizeof where, "reduced data at rank %d (root %d)", dst, c->root);
    else
        snprintf(where, sizeof where, "data from rank %d to rank %d (root %d)", src, dst, c->root);
    char rep[32];
    if (c->rep < 0)
        snprintf(rep, sizeof rep, "a warm-up repetition");
    else
        snprintf(rep, sizeof rep, "repetition %d", c->rep);
    snprintf(c->bad_msg, sizeof c->bad_msg,
             "transfer %s: %s, %lld bytes: received data differs from what was sent "
             "(%s, byte %zu is 0x%02x, expected 0x%02x)",
             name, where, (long long)c->msg_bytes, rep, at, got, want);
}

void wb_transfer_check(struct wb_transfer_ctx *c, unsigned char *p, size_t n, uint64_t s, int src, int dst)
{
#ifdef WB_TEST_FAULTS
    inject_fault(p, n);
#endif
    uint64_t x = s;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t v = next_bits(&x);
        size_t k = n - i < 8 ? n - i : 8;
        for (size_t j = 0; j < k; j++) {
            unsigned want = (unsigned char)(v >> (8 * j));
            if (p[i + j] != want) {
                note_bad(c, src, dst, i + j, p[i + j], want);
                return;
            }
        }
    }
}

int wb_transfer_elem_bytes(int dtype)
{
    switch (dtype) {
    case WB_TRANSFER_DT_BYTE: return 1;
    case WB_TRANSFER_DT_DOUBLE: return 8;
    default: return 4;
    }
}

/* One rank's element: whole numbers small enough that the reduction over every rank is exact in
 * the type. A byte SUM stays below 256 in total, so Open MPI 4.1's saturating AVX byte sum
 * (ompi#8045) and a wrapping sum give the same result. */
static uint64_t elem_value(uint64_t *x, int dtype, int op, int nranks)
{
    uint64_t v = next_bits(x) >> 8;
    if (op == WB_TRANSFER_OP_BXOR)
        return dtype == WB_TRANSFER_DT_BYTE ? v & 0xff : v & 0x7fffffff;
    if (op == WB_TRANSFER_OP_MAX)
        return dtype == WB_TRANSFER_DT_BYTE ? v & 0xff : v % (UINT64_C(1) << 24);
    uint64_t top = dtype == WB_TRANSFER_DT_BYTE ? 255 / (uint64_t)nranks : 1000;
    return v % (top + 1);
}

static uint64_t combine(uint64_t acc, uint64_t v, int op)
{
    return op == WB_TRANSFER_OP_SUM ? acc + v : op == WB_TRANSFER_OP_BXOR ? acc ^ v : acc > v ? acc : v;
}

/* Stores v as element i of p in dtype. */
static void store(unsigned char *p, int i, uint64_t v, int dtype)
{
    if (dtype == WB_TRANSFER_DT_BYTE) {
        p[i] = (unsigned char)v;
    } else if (dtype == WB_TRANSFER_DT_INT) {
        int e = (int)(uint32_t)v;
        memcpy(p + (size_t)i * sizeof e, &e, sizeof e);
    } else if (dtype == WB_TRANSFER_DT_FLOAT) {
        float e = (float)v;
        memcpy(p + (size_t)i * sizeof e, &e, sizeof e);
    } else {
        double e = (double)v;
        memcpy(p + (size_t)i * sizeof e, &e, sizeof e);
    }
}

void wb_transfer_fill_reduce(const struct wb_transfer_ctx *c, unsigned char *p, int count)
{
    uint64_t x = wb_transfer_salt(c, c->rank, WB_TRANSFER_DST_ALL);
    for (int i = 0; i < count; i++)
        store(p, i, elem_value(&x, c->dtype, c->op, c->nranks), c->dtype);
}

void wb_transfer_check_reduce(struct wb_transfer_ctx *c, const unsigned char *p, int count)
{
    int e = wb_transfer_elem_bytes(c->dtype);
    uint64_t *x = malloc((size_t)c->nranks * sizeof *x);
    unsigned char want[8];
    if (!x) {
        note_bad(c, -1, c->rank, 0, 0, 0);
        snprintf(c->bad_msg, sizeof c->bad_msg, "transfer %s: out of memory for the check",
                 wb_transfer_test_name(c->test));
        return;
    }
#ifdef WB_TEST_FAULTS
    inject_fault((unsigned char *)p, (size_t)count * (size_t)e);
#endif
    for (int q = 0; q < c->nranks; q++)
        x[q] = wb_transfer_salt(c, q, WB_TRANSFER_DST_ALL);
    for (int i = 0; i < count; i++) {
        uint64_t acc = elem_value(&x[0], c->dtype, c->op, c->nranks);
        for (int q = 1; q < c->nranks; q++)
            acc = combine(acc, elem_value(&x[q], c->dtype, c->op, c->nranks), c->op);
        store(want, 0, acc, c->dtype);
        const unsigned char *got = p + (size_t)i * (size_t)e;
        for (int j = 0; j < e; j++)
            if (got[j] != want[j]) {
                note_bad(c, -1, c->rank, (size_t)i * (size_t)e + (size_t)j, got[j], want[j]);
                free(x);
                return;
            }
    }
    free(x);
}
