/* Helpers the image-family kernels share: element conversion, checked
 * shape arithmetic, attribute lists and zero-padded N-linear sampling. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_image.h"

tsr_status *ref_image_f64(ref_ctx *c, const tsr_tensor *t, const char *what, double **out) {
    *out = NULL;
    if (!ref_is_float(t->elem_type) && !ref_is_int(t->elem_type) && t->elem_type != TSR_BOOL)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s has non-numeric element type %d", what, (int)t->elem_type);
    return ref_tensor_f64(c, t, out);
}

void ref_image_store_f64(tsr_tensor *t, const double *src, size_t n) {
    if (t->elem_type == TSR_FLOAT) {
        float *f = t->data;
        for (size_t i = 0; i < n; i++) f[i] = (float)src[i];
    } else {
        for (size_t i = 0; i < n; i++) ref_store(t->elem_type, t->data, i, src[i]);
    }
}

bool ref_image_numel(const int64_t *dims, size_t n, int64_t limit, int64_t *out) {
    int64_t p = 1;
    for (size_t i = 0; i < n; i++) {
        if (dims[i] < 0) return false;
        if (dims[i] == 0) {
            p = 0;
            continue;
        }
        if (p > limit / dims[i]) return false;
        p *= dims[i];
    }
    /* A zero anywhere makes the product zero, but the other factors were
     * still each checked against the limit above. */
    *out = p;
    return p <= limit;
}

tsr_status *ref_image_ints_attr(ref_ctx *c, const char *name, size_t n, int64_t dflt, int64_t min, int64_t *out) {
    const int64_t *v;
    size_t cnt = ref_attr_ints(c, name, &v);
    if (!v) {
        for (size_t i = 0; i < n; i++) out[i] = dflt;
        return NULL;
    }
    if (cnt != n)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "attribute '%s' has %zu values, expected %zu", name, cnt, n);
    for (size_t i = 0; i < n; i++) {
        if (v[i] < min)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "attribute '%s'[%zu] = %lld is below %lld", name, i,
                           (long long)v[i], (long long)min);
        out[i] = v[i];
    }
    return NULL;
}

double ref_image_sample_linear_zero(const double *data, size_t nd, const int64_t *dims, const double *pos) {
    int64_t base[REF_MAX_RANK];
    double frac[REF_MAX_RANK];
    for (size_t d = 0; d < nd; d++) {
        /* Far-away points (or NaN) touch no pixel: answer zero before the
         * floor below could overflow an int64. */
        if (!(pos[d] > -1.0 && pos[d] < (double)dims[d])) return 0.0;
        double f = floor(pos[d]);
        base[d] = (int64_t)f;
        frac[d] = pos[d] - f;
    }
    /* Sum over the 2^nd corners; bit d of `corner` picks base or base + 1. */
    double acc = 0.0;
    for (uint64_t corner = 0; corner < ((uint64_t)1 << nd); corner++) {
        double w = 1.0;
        int64_t off = 0;
        bool inside = true;
        for (size_t d = 0; d < nd; d++) {
            int hi = (int)((corner >> d) & 1);
            int64_t i = base[d] + hi;
            if (i < 0 || i >= dims[d]) {
                inside = false;
                break;
            }
            w *= hi ? frac[d] : 1.0 - frac[d];
            off = off * dims[d] + i;
        }
        if (inside && w != 0.0) acc += w * data[off];
    }
    return acc;
}
