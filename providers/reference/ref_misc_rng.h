/*
 * Private to ref_misc_*.c: the random number generator of the random
 * operators — MT19937 with numpy's legacy RandomState sampling on top, so
 * that a node with a seed draws exactly what the ONNX reference
 * implementation (np.random.RandomState(seed)) draws.
 */
#ifndef TESSERA_REF_MISC_RNG_H
#define TESSERA_REF_MISC_RNG_H

#include <stdbool.h>
#include <stdint.h>

#define MISC_RNG_WORDS 624

typedef struct misc_rng {
    uint32_t mt[MISC_RNG_WORDS];
    int pos;        /* next word of mt to temper; MISC_RNG_WORDS: regenerate first */
    bool has_gauss; /* the polar method makes normals in pairs: one is kept */
    double gauss;
} misc_rng;

/* RandomState(seed) for a seed in [0, 2^32). */
void misc_rng_seed(misc_rng *r, uint32_t seed);
uint32_t misc_rng_next32(misc_rng *r);
/* Uniform in [0, 1) with 53 random bits (RandomState.random_sample). */
double misc_rng_double(misc_rng *r);
/* Standard normal (RandomState.standard_normal). */
double misc_rng_gauss(misc_rng *r);
/* 0 or 1 with P(1) = p, p in [0, 1] (RandomState.binomial(1, p)). */
int misc_rng_bernoulli(misc_rng *r, double p);

#endif
