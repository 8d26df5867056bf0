/* rng: splitmix64, the one pseudo-random generator: tiny, fast, and identical on every platform. */
#ifndef WB_RNG_H
#define WB_RNG_H

#include <stdint.h>

/* splitmix64's output function: a bijective 64-bit mix, usable as a hash. Local. */
static inline uint64_t wb_rng_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Advance *state and return the next 64 random bits. Local. */
static inline uint64_t wb_rng_next(uint64_t *state)
{
    return wb_rng_mix(*state += UINT64_C(0x9E3779B97F4A7C15));
}

/* A uniform double in [0, 1) from the next 53 random bits. Local. */
static inline double wb_rng_unit(uint64_t *state)
{
    return (double)(wb_rng_next(state) >> 11) * 0x1.0p-53;
}

#endif
