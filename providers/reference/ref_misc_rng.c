/*
 * MT19937 (Matsumoto and Nishimura, 1998) and the sampling routines of
 * numpy's legacy RandomState, written from their published descriptions.
 * Matching RandomState draw for draw matters only for seeded nodes: it makes
 * them reproduce the ONNX reference implementation's numbers.
 */
#include <math.h>

#include "ref_misc_rng.h"

#define MT_SHIFT 397
#define MT_MATRIX_A 0x9908b0dfu
#define MT_UPPER 0x80000000u
#define MT_LOWER 0x7fffffffu

void misc_rng_seed(misc_rng *r, uint32_t seed) {
    r->mt[0] = seed;
    for (uint32_t i = 1; i < MISC_RNG_WORDS; i++) r->mt[i] = 1812433253u * (r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) + i;
    r->pos = MISC_RNG_WORDS;
    r->has_gauss = false;
    r->gauss = 0.0;
}

/* The twist: recomputes all 624 words of state at once. */
static void regenerate(misc_rng *r) {
    for (int i = 0; i < MISC_RNG_WORDS; i++) {
        uint32_t y = (r->mt[i] & MT_UPPER) | (r->mt[(i + 1) % MISC_RNG_WORDS] & MT_LOWER);
        r->mt[i] = r->mt[(i + MT_SHIFT) % MISC_RNG_WORDS] ^ (y >> 1) ^ ((y & 1u) ? MT_MATRIX_A : 0u);
    }
    r->pos = 0;
}

uint32_t misc_rng_next32(misc_rng *r) {
    if (r->pos >= MISC_RNG_WORDS) regenerate(r);
    uint32_t y = r->mt[r->pos++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

double misc_rng_double(misc_rng *r) {
    /* 27 + 26 bits from two words: the top of the 53-bit mantissa first. */
    uint32_t a = misc_rng_next32(r) >> 5, b = misc_rng_next32(r) >> 6;
    return ((double)a * 67108864.0 + (double)b) / 9007199254740992.0;
}

double misc_rng_gauss(misc_rng *r) {
    if (r->has_gauss) {
        r->has_gauss = false;
        return r->gauss;
    }
    /* Marsaglia's polar method: a point uniform in the unit disc gives two
     * independent normals; the second is kept for the next call. */
    double x1, x2, r2;
    do {
        x1 = 2.0 * misc_rng_double(r) - 1.0;
        x2 = 2.0 * misc_rng_double(r) - 1.0;
        r2 = x1 * x1 + x2 * x2;
    } while (r2 >= 1.0 || r2 == 0.0);
    double f = sqrt(-2.0 * log(r2) / r2);
    r->gauss = f * x1;
    r->has_gauss = true;
    return f * x2;
}

/* Binomial(n, p) for p <= 0.5 by inverting the distribution function, the
 * way RandomState does when n * p <= 30 (restarting past a bound, which
 * guards against rounding in the running probability). */
static int64_t binomial_inversion(misc_rng *r, int64_t n, double p) {
    double q = 1.0 - p;
    double qn = exp((double)n * log(q));
    double np = (double)n * p;
    double limit = np + 10.0 * sqrt(np * q + 1.0);
    int64_t bound = (double)n < limit ? n : (int64_t)limit;
    int64_t x = 0;
    double px = qn, u = misc_rng_double(r);
    while (u > px) {
        x++;
        if (x > bound) {
            x = 0;
            px = qn;
            u = misc_rng_double(r);
        } else {
            u -= px;
            px = ((double)(n - x + 1) * p * px) / ((double)x * q);
        }
    }
    return x;
}

int misc_rng_bernoulli(misc_rng *r, double p) {
    /* RandomState draws nothing for p == 0 and samples the rarer outcome. */
    if (p == 0.0) return 0;
    if (p <= 0.5) return (int)binomial_inversion(r, 1, p);
    return 1 - (int)binomial_inversion(r, 1, 1.0 - p);
}
