/* Helpers the attention-family kernels share: checked sizes, double
 * working copies and rounding stores. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_attn.h"

bool ref_attn_mul(size_t a, size_t b, size_t *out) {
    if (a != 0 && b > SIZE_MAX / a) return false;
    *out = a * b;
    return true;
}

tsr_status *ref_attn_zeros(ref_ctx *c, size_t n, const char *what, double **out) {
    *out = NULL;
    if (n > SIZE_MAX / sizeof(double)) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s is too large", what);
    double *p = calloc(n ? n : 1, sizeof *p);
    if (!p) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory for %s", what);
    *out = p;
    return NULL;
}

tsr_status *ref_attn_f64(ref_ctx *c, const tsr_tensor *t, const char *what, double **out) {
    (void)what;
    return ref_tensor_f64(c, t, out);
}

tsr_status *ref_attn_want(ref_ctx *c, const tsr_tensor *t, const char *what, int32_t rank) {
    if (!t) return ref_err(c, TSR_ERR_INVALID_MODEL, "input %s is missing", what);
    if (!ref_is_float(t->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s has element type %d, not a float type", what,
                       (int)t->elem_type);
    if (rank >= 0 && t->rank != rank)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s must have rank %d, not %d", what, (int)rank, (int)t->rank);
    return NULL;
}

void ref_attn_softmax(double *x, size_t n, bool masked_rows_zero) {
    double m = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (isnan(x[i])) {
            m = NAN;
            break;
        }
        if (x[i] > m) m = x[i];
    }
    if (masked_rows_zero && m == -INFINITY) m = 0; /* every exp below is then 0, and the sum is replaced by 1 */
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        x[i] = exp(x[i] - m);
        s += x[i];
    }
    if (masked_rows_zero && s == 0) s = 1;
    for (size_t i = 0; i < n; i++) x[i] /= s;
}

double ref_attn_round(int32_t t, double v) {
    switch (t) {
    case TSR_FLOAT: return (float)v;
    case TSR_FLOAT16: return ref_half_to_float(ref_float_to_half((float)v));
    case TSR_BFLOAT16: return ref_bf16_to_float(ref_float_to_bf16((float)v));
    default: return v;
    }
}
