/*
 * RMSNormalization (opset 23): Y = X / sqrt(mean(X^2) + epsilon) * Scale,
 * the mean taken over the axes from `axis` to the last. Scale broadcasts
 * (numpy rules) against X and may not enlarge it.
 */
#include <math.h>
#include <stdlib.h>

#include "ref_attn.h"

tsr_status *ref_attn_rms_norm(ref_ctx *c) {
    const tsr_tensor *X = ref_in(c, 0), *S = ref_in(c, 1);
    tsr_status *st;
    if ((st = ref_attn_want(c, X, "X", -1)) || (st = ref_attn_want(c, S, "scale", -1))) return st;
    int64_t axis;
    if (X->rank < 1 || !ref_axis(ref_attr_int(c, "axis", -1), X->rank, &axis))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld out of range for rank %d",
                       (long long)ref_attr_int(c, "axis", -1), (int)X->rank);
    int32_t r;
    int64_t bd[REF_MAX_RANK];
    bool ok = S->rank <= X->rank && ref_broadcast_shape(X->rank, X->dims, S->rank, S->dims, &r, bd);
    for (int32_t d = 0; ok && d < X->rank; d++) ok = bd[d] == X->dims[d];
    if (!ok) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "scale does not broadcast to the shape of X");
    double eps = ref_attr_float(c, "epsilon", 1e-5f);

    size_t outer = 1, inner = 1;
    for (int32_t d = 0; d < X->rank; d++) *(d < axis ? &outer : &inner) *= (size_t)X->dims[d];
    tsr_tensor *Y;
    if ((st = ref_out(c, 0, X->elem_type, X->rank, X->dims, &Y))) return st;
    double *x = NULL, *s = NULL, *row = NULL;
    if ((st = ref_attn_f64(c, X, "X", &x)) || (st = ref_attn_f64(c, S, "scale", &s)) ||
        (st = ref_attn_zeros(c, inner, "a row", &row)))
        goto done;
    int64_t sstr[REF_MAX_RANK], idx[REF_MAX_RANK] = {0};
    ref_broadcast_strides(S->rank, S->dims, X->rank, X->dims, sstr);
    for (size_t i = 0; i < outer; i++) {
        const double *xi = x + i * inner;
        double sq = 0;
        for (size_t j = 0; j < inner; j++) sq += xi[j] * xi[j];
        double inv = 1.0 / sqrt((inner ? sq / (double)inner : 0.0) + eps);
        /* idx walks X's coordinates in step with (i, j) to find Scale's element. */
        for (size_t j = 0; j < inner; j++) {
            int64_t so = 0;
            for (int32_t d = 0; d < X->rank; d++) so += idx[d] * sstr[d];
            row[j] = xi[j] * inv * s[so];
            for (int32_t d = X->rank - 1; d >= 0; d--) {
                if (++idx[d] < X->dims[d]) break;
                idx[d] = 0;
            }
        }
        ref_put_f64(Y, i * inner, inner, row);
    }
done:
    free(x);
    free(s);
    free(row);
    return st;
}
