#define _POSIX_C_SOURCE 200809L
#include "fftw/kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

#ifdef __clang__
/* GCC in ISO C mode does not contract a*b+c into an FMA; clang would, and FMA rounds differently. */
#pragma STDC FP_CONTRACT OFF
#endif

/* Lanes of the peak search: 16 floats fill one AVX-512 register, and the loop stays short. */
enum { KLANES = 16 };

struct kern_ops {
    void (*window_s16_f)(float *restrict, const int16_t *restrict, const float *restrict, int64_t);
    void (*window_s16_d)(double *restrict, const int16_t *restrict, const double *restrict, int64_t);
    void (*window_f)(float *restrict, const float *restrict, const float *restrict, int64_t);
    void (*window_d)(double *restrict, const double *restrict, const double *restrict, int64_t);
    void (*mag_f)(float *restrict, const float *restrict, int64_t);
    void (*mag_d)(double *restrict, const double *restrict, int64_t);
    int32_t (*peak_f)(const float *restrict, int64_t, float *);
    int32_t (*peak_d)(const double *restrict, int64_t, double *);
};

/* The baseline: whatever the build's flags allow (SSE2 on x86-64, NEON on aarch64, all of the
 * build machine's with make NATIVE=1). */
#define KSUF base
#define KATTR
#include "fftw/kernels_impl.h"
#undef KSUF
#undef KATTR

/* GCC and clang on x86-64 compile a function for an instruction set given by its attribute, so the
 * variants need no flags of their own and the baseline stays portable. The variants are the psABI
 * levels rather than single features: AVX-512F alone widens the float loops, but the 16-bit
 * conversion needs AVX-512BW and VL to run as fast as -march=native builds it. */
#if defined(__x86_64__) && defined(__GNUC__)
#define WB_KERN_X86 1
#define KSUF avx2
#define KATTR __attribute__((target("arch=x86-64-v3")))
#include "fftw/kernels_impl.h"
#undef KSUF
#undef KATTR
#define KSUF avx512
#define KATTR __attribute__((target("arch=x86-64-v4")))
#include "fftw/kernels_impl.h"
#undef KSUF
#undef KATTR
#endif

/* SVE through a target attribute needs GCC 10 or later (or clang 13) and the kernel's HWCAP_SVE. */
#if defined(__aarch64__) && defined(__linux__) && defined(HWCAP_SVE) &&                                        \
    ((defined(__clang__) && __clang_major__ >= 13) || (!defined(__clang__) && __GNUC__ >= 10))
#define WB_KERN_SVE 1
#define KSUF sve
#define KATTR __attribute__((target("+sve")))
#include "fftw/kernels_impl.h"
#undef KSUF
#undef KATTR
#endif

#if defined(WB_KERN_X86)
const char *const wb_kern_variant_names[] = {"default", "avx2", "avx512", NULL};
static const struct kern_ops *const variants[] = {&ops_base, &ops_avx2, &ops_avx512};
#elif defined(__aarch64__) && defined(WB_KERN_SVE)
const char *const wb_kern_variant_names[] = {"neon", "sve", NULL};
static const struct kern_ops *const variants[] = {&ops_base, &ops_sve};
#elif defined(__aarch64__)
const char *const wb_kern_variant_names[] = {"neon", NULL};
static const struct kern_ops *const variants[] = {&ops_base};
#else
const char *const wb_kern_variant_names[] = {"default", NULL};
static const struct kern_ops *const variants[] = {&ops_base};
#endif
enum { NVARIANTS = sizeof variants / sizeof variants[0] };

static int current = -1;

static int supported(int v)
{
#ifdef WB_TEST_FAULTS
    /* Test-only: act as a CPU that lacks the named variant, so the refusal and the fallback can be seen
     * on a machine that has every instruction set. */
    const char *hide = getenv("WB_KERNEL_HIDE");
    if (v > 0 && hide && !strcmp(hide, wb_kern_variant_names[v]))
        return 0;
#endif
#if defined(WB_KERN_X86)
    __builtin_cpu_init();
    /* libgcc's answer also asks the OS (XGETBV) whether it saves the wide registers. */
#if !defined(__clang__) && __GNUC__ >= 12
    if (v == 1)
        return __builtin_cpu_supports("x86-64-v3");
    if (v == 2)
        return __builtin_cpu_supports("x86-64-v4");
#else
    if (v == 1)
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
    if (v == 2)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
               __builtin_cpu_supports("avx512cd");
#endif
#elif defined(WB_KERN_SVE)
    if (v == 1)
        return (getauxval(AT_HWCAP) & HWCAP_SVE) != 0;
#endif
    return v == 0;
}

static int find(const char *name)
{
    for (int v = 0; v < NVARIANTS; v++)
        if (!strcmp(wb_kern_variant_names[v], name))
            return v;
    return -1;
}

int wb_kern_supported(const char *name)
{
    int v = find(name);
    return v >= 0 && supported(v);
}

static void list_names(char *out, size_t cap)
{
    out[0] = '\0';
    for (int v = 0; v < NVARIANTS; v++) {
        size_t len = strlen(out);
        snprintf(out + len, cap - len, "%s%s", v ? "|" : "", wb_kern_variant_names[v]);
    }
}

int wb_kern_select(const char *name)
{
    int v = find(name);
    char all[128];
    if (v < 0) {
        list_names(all, sizeof all);
        return wb_error_set(WB_EUSAGE, "kernel variant '%s' is not in this build; use %s", name, all);
    }
    if (!supported(v))
        return wb_error_set(WB_EUSAGE, "kernel variant '%s' needs an instruction set this CPU lacks", name);
    current = v;
    return 0;
}

int wb_kern_init(void)
{
#ifdef WB_TEST_FAULTS
    /* Test-only: force a variant, so the tests can compare each one this CPU runs with the others. */
    const char *forced = getenv("WB_KERNEL_VARIANT");
    if (forced && *forced)
        return wb_kern_select(forced);
#endif
    current = 0;
    for (int v = NVARIANTS - 1; v > 0; v--)
        if (supported(v)) {
            current = v;
            break;
        }
    return 0;
}

/* main picks the variant at start-up; a caller that did not (a unit test) gets the best, or the baseline
 * when a forced name is refused. */
static const struct kern_ops *ops(void)
{
    if (current < 0 && wb_kern_init() != 0)
        current = 0;
    return variants[current];
}

int wb_kern_variant_index(void)
{
    ops();
    return current;
}

const char *wb_kern_variant(void) { return wb_kern_variant_names[wb_kern_variant_index()]; }

void wb_kern_window_s16_f(float *dst, const int16_t *s, const float *w, int64_t n) { ops()->window_s16_f(dst, s, w, n); }
void wb_kern_window_s16_d(double *dst, const int16_t *s, const double *w, int64_t n) { ops()->window_s16_d(dst, s, w, n); }
void wb_kern_window_f(float *dst, const float *s, const float *w, int64_t n) { ops()->window_f(dst, s, w, n); }
void wb_kern_window_d(double *dst, const double *s, const double *w, int64_t n) { ops()->window_d(dst, s, w, n); }
void wb_kern_mag_f(float *mag, const float *c, int64_t nb) { ops()->mag_f(mag, c, nb); }
void wb_kern_mag_d(double *mag, const double *c, int64_t nb) { ops()->mag_d(mag, c, nb); }
int32_t wb_kern_peak_f(const float *c, int64_t nb, float *m2) { return ops()->peak_f(c, nb, m2); }
int32_t wb_kern_peak_d(const double *c, int64_t nb, double *m2) { return ops()->peak_d(c, nb, m2); }
