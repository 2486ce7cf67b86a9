/*
 * MaxUnpool (opsets 9, 11, 22): scatters each value of X to the flat
 * position its index in I names, into a zero tensor of the unpooled shape
 * (N, C, (in - 1) * stride - pad_begin - pad_end + kernel, ...). Indices
 * are flat over the whole unpooled tensor, as MaxPool's Indices output is.
 *
 * With the optional output_shape input, the unpooled tensor is laid into
 * the top-left corner of a zero tensor of that shape: the indices still
 * address the unpooled shape. This is how the ONNX reference
 * implementation (and so the conformance test) reads the operator.
 */
#include <stdlib.h>
#include <string.h>

#include "ref_image.h"

#define MU_MAX_PARAM ((int64_t)1 << 31)

tsr_status *ref_image_max_unpool(ref_ctx *c) {
    const tsr_tensor *X = ref_in(c, 0), *I = ref_in(c, 1), *OS = ref_in(c, 2);
    if (!X || !I) return ref_err(c, TSR_ERR_INVALID_MODEL, "MaxUnpool needs inputs X and I");
    if (X->rank < 3) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X must have rank >= 3");
    if (I->rank != X->rank || memcmp(I->dims, X->dims, (size_t)X->rank * sizeof *X->dims) != 0)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "I must have the shape of X");
    if (!ref_is_int(I->elem_type)) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "I must be an integer tensor");
    size_t nd = (size_t)X->rank - 2;
    size_t es = ref_elem_size(X->elem_type);
    if (es == 0 || X->elem_type == TSR_STRING)
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d is not implemented", (int)X->elem_type);
    const int64_t *ks;
    if (ref_attr_ints(c, "kernel_shape", &ks) != nd)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "kernel_shape must be given with %zu values", nd);
    int64_t str[REF_MAX_RANK], pads[2 * REF_MAX_RANK];
    tsr_status *st;
    if ((st = ref_image_ints_attr(c, "strides", nd, 1, 1, str)) ||
        (st = ref_image_ints_attr(c, "pads", 2 * nd, 0, 0, pads)))
        return st;
    int64_t inf[REF_MAX_RANK], odims[REF_MAX_RANK];
    inf[0] = X->dims[0];
    inf[1] = X->dims[1];
    for (size_t d = 0; d < nd; d++) {
        int64_t in = X->dims[2 + d];
        if (ks[d] < 1 || ks[d] > MU_MAX_PARAM || str[d] > MU_MAX_PARAM || pads[d] > MU_MAX_PARAM ||
            pads[nd + d] > MU_MAX_PARAM || in > MU_MAX_PARAM)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %zu: kernel, stride, pads or size out of range", d);
        inf[2 + d] = in > 0 ? (in - 1) * str[d] - pads[d] - pads[nd + d] + ks[d] : 0;
        if (inf[2 + d] < 0)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %zu: the pads leave a negative unpooled size", d);
    }
    memcpy(odims, inf, (size_t)X->rank * sizeof *odims);
    if (OS) {
        int64_t *os = NULL;
        size_t n = 0;
        if ((st = ref_tensor_i64(c, OS, &os, &n))) return st;
        bool ok = n == (size_t)X->rank && os[0] == inf[0] && os[1] == inf[1];
        for (size_t d = 2; ok && d < n; d++) ok = os[d] >= inf[d];
        if (ok) memcpy(odims, os, n * sizeof *os);
        free(os);
        if (!ok)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                           "output_shape must have %d values, keep N and C, and be at least the "
                           "unpooled size along every spatial axis",
                           (int)X->rank);
    }
    int64_t total, ntotal;
    if (!ref_image_numel(odims, (size_t)X->rank, REF_IMAGE_MAX_ELEMS, &total) ||
        !ref_image_numel(inf, (size_t)X->rank, REF_IMAGE_MAX_ELEMS, &ntotal))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "output of more than %lld elements",
                       (long long)REF_IMAGE_MAX_ELEMS);
    tsr_tensor *Y;
    if ((st = ref_out(c, 0, X->elem_type, X->rank, odims, &Y))) return st;
    if (total) memset(Y->data, 0, (size_t)total * es);
    /* Row-major strides of both shapes, to move an unpooled position into
     * the (possibly larger) output. */
    int64_t istr[REF_MAX_RANK], ostr[REF_MAX_RANK];
    ref_strides(X->rank, inf, istr);
    ref_strides(X->rank, odims, ostr);
    uint64_t nx = ref_numel(X);
    for (uint64_t i = 0; i < nx; i++) {
        int64_t idx = ref_load_i64(I->elem_type, I->data, (size_t)i);
        if (idx < 0 || idx >= ntotal)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                           "I[%llu] = %lld is outside the unpooled tensor of %lld elements", (unsigned long long)i,
                           (long long)idx, (long long)ntotal);
        int64_t dst = 0, rest = idx;
        for (int32_t d = 0; d < X->rank; d++) {
            dst += (rest / istr[d]) * ostr[d];
            rest %= istr[d];
        }
        memcpy((char *)Y->data + (size_t)dst * es, (const char *)X->data + (size_t)i * es, es);
    }
    return NULL;
}
