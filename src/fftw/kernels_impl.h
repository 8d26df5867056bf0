/* The body of one kernels variant: kernels.c includes it once per instruction set, with KSUF (the
 * name suffix) and KATTR (the function attribute that selects the instruction set) defined. The
 * loops are plain C for the compiler to vectorise; contraction to FMA stays off (ISO C mode), so
 * every variant rounds as the baseline does. */
#define KCAT2(a, b) a##_##b
#define KCAT(a, b) KCAT2(a, b)
#define K(name) KCAT(name, KSUF)

KATTR static void K(window_s16_f)(float *restrict dst, const int16_t *restrict s, const float *restrict w, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = (float)s[i] * w[i];
}

KATTR static void K(window_s16_d)(double *restrict dst, const int16_t *restrict s, const double *restrict w,
                                  int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = (double)s[i] * w[i];
}

KATTR static void K(window_f)(float *restrict dst, const float *restrict s, const float *restrict w, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = s[i] * w[i];
}

KATTR static void K(window_d)(double *restrict dst, const double *restrict s, const double *restrict w, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = s[i] * w[i];
}

KATTR static void K(mag_f)(float *restrict mag, const float *restrict c, int64_t nb)
{
    for (int64_t b = 0; b < nb; b++)
        mag[b] = sqrtf(c[2 * b] * c[2 * b] + c[2 * b + 1] * c[2 * b + 1]);
}

KATTR static void K(mag_d)(double *restrict mag, const double *restrict c, int64_t nb)
{
    for (int64_t b = 0; b < nb; b++)
        mag[b] = sqrt(c[2 * b] * c[2 * b] + c[2 * b + 1] * c[2 * b + 1]);
}

/* Argmax in KLANES independent lanes, each keeping its own first maximum (strict >), so the loop
 * vectorises; the lanes then give the largest value at its smallest bin, the scalar loop's answer. */
#define KPEAK(SUF, T, IDX)                                                                              \
    KATTR static int32_t K(peak_##SUF)(const T *restrict c, int64_t nb, T *m2_out)                      \
    {                                                                                                   \
        T best[KLANES];                                                                                 \
        IDX at[KLANES];                                                                                 \
        for (int j = 0; j < KLANES; j++) {                                                              \
            best[j] = -1;                                                                               \
            at[j] = 0;                                                                                  \
        }                                                                                               \
        int64_t b = 1;                                                                                  \
        for (; b + KLANES <= nb; b += KLANES)                                                           \
            for (int j = 0; j < KLANES; j++) {                                                          \
                T re = c[2 * (b + j)], im = c[2 * (b + j) + 1], m2 = re * re + im * im;                \
                IDX here = (IDX)(b + j);                                                                \
                at[j] = m2 > best[j] ? here : at[j];                                                    \
                best[j] = m2 > best[j] ? m2 : best[j];                                                  \
            }                                                                                           \
        T g = -1;                                                                                       \
        int64_t ga = 0;                                                                                 \
        for (int j = 0; j < KLANES; j++)                                                                \
            if (at[j] && (best[j] > g || (best[j] == g && at[j] < ga))) {                               \
                g = best[j];                                                                            \
                ga = at[j];                                                                             \
            }                                                                                           \
        for (; b < nb; b++) {                                                                           \
            T m2 = c[2 * b] * c[2 * b] + c[2 * b + 1] * c[2 * b + 1];                                   \
            if (m2 > g) {                                                                               \
                g = m2;                                                                                 \
                ga = b;                                                                                 \
            }                                                                                           \
        }                                                                                               \
        *m2_out = g;                                                                                    \
        return (int32_t)ga;                                                                             \
    }

KPEAK(f, float, int32_t)
KPEAK(d, double, int64_t)
#undef KPEAK

static const struct kern_ops K(ops) = {K(window_s16_f), K(window_s16_d), K(window_f), K(window_d),
                                       K(mag_f),        K(mag_d),        K(peak_f),   K(peak_d)};

#undef K
#undef KCAT
#undef KCAT2
