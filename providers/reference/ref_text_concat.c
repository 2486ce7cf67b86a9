/*
 * StringConcat: Y = X + Z elementwise on two string tensors, with numpy
 * broadcasting.
 */
#include <stdlib.h>
#include <string.h>

#include "ref_text.h"

tsr_status *ref_text_string_concat(ref_ctx *c) {
    const tsr_tensor *A, *B;
    const tsr_string *as, *bs;
    tsr_status *st = ref_text_in_strings(c, 0, &A, &as);
    if (!st) st = ref_text_in_strings(c, 1, &B, &bs);
    if (st) return st;
    int32_t rank;
    int64_t dims[REF_MAX_RANK], sa[REF_MAX_RANK], sb[REF_MAX_RANK], idx[REF_MAX_RANK];
    if (!ref_broadcast_shape(A->rank, A->dims, B->rank, B->dims, &rank, dims))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X and Y shapes do not broadcast");
    ref_broadcast_strides(A->rank, A->dims, rank, dims, sa);
    ref_broadcast_strides(B->rank, B->dims, rank, dims, sb);
    tsr_tensor *Y;
    if ((st = ref_out(c, 0, TSR_STRING, rank, dims, &Y))) return st;

    uint64_t n = 1;
    for (int32_t d = 0; d < rank; d++) {
        n *= (uint64_t)dims[d];
        idx[d] = 0;
    }
    if (!n) return NULL;
    char *buf = NULL;
    size_t cap = 0;
    int64_t ia = 0, ib = 0;
    for (uint64_t i = 0; i < n; i++) {
        const tsr_string *x = &as[ia], *z = &bs[ib];
        if (x->size > SIZE_MAX - 1 - z->size) {
            free(buf);
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "concatenated string too long");
        }
        size_t len = x->size + z->size;
        if (len + 1 > cap) {
            char *nb = realloc(buf, len + 1);
            if (!nb) {
                free(buf);
                return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
            }
            buf = nb;
            cap = len + 1;
        }
        if (x->size) memcpy(buf, x->data, x->size);
        if (z->size) memcpy(buf + x->size, z->data, z->size);
        if ((st = c->host->tensor_set_string(Y, (size_t)i, buf, len))) break;
        /* Next output index, moving both source offsets with it. */
        for (int32_t d = rank - 1; d >= 0; d--) {
            ia += sa[d];
            ib += sb[d];
            if (++idx[d] < dims[d]) break;
            ia -= sa[d] * dims[d];
            ib -= sb[d] * dims[d];
            idx[d] = 0;
        }
    }
    free(buf);
    return st;
}
