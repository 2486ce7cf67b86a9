/*
 * Einsum on the reference provider, shared by its two files:
 * ref_math_einsum.c parses the equation and keeps the per-element loop,
 * ref_math_einsum_pairs.c contracts the operands pairwise through a GEMM.
 */
#ifndef TESSERA_REF_MATH_EINSUM_H
#define TESSERA_REF_MATH_EINSUM_H

#include "ref.h"

#define EIN_LETTERS 52
#define EIN_MAX_LABELS (EIN_LETTERS + REF_MAX_RANK)
#define EIN_MAX_INPUTS 16

/* A parsed equation: one label per input dimension (a letter's index, or
 * EIN_LETTERS + j for ellipsis dimension j, right-aligned), each label's
 * size (-1 when unused; a size-1 ellipsis dimension broadcasts), and the
 * output's labels. */
typedef struct ein_eq {
    size_t nin;
    const tsr_tensor *in[EIN_MAX_INPUTS];
    int labels[EIN_MAX_INPUTS][REF_MAX_RANK];
    int64_t size[EIN_MAX_LABELS];
    int on;
    int olab[REF_MAX_RANK];
} ein_eq;

/* Computes the Einsum into o (allocated, of type t) by pairwise tensor
 * contractions. Sets *done to false, computing nothing, for an equation it
 * leaves to the per-element loop (an output label repeated). */
tsr_status *ref_math_einsum_pairs(ref_ctx *c, const ein_eq *q, int32_t t, tsr_tensor *o, bool *done);

#endif
