/*
 * Det: the determinant of each trailing [M, M] matrix.
 */
#include <math.h>
#include <stdlib.h>

#include "ref_math.h"

/* Det: determinant of each trailing [M, M] matrix, by Gaussian elimination
 * with partial pivoting in double. */
tsr_status *ref_math_det(ref_ctx *c) {
    tsr_status *st = ref_math_need_inputs(c, 1);
    if (st) return st;
    const tsr_tensor *x = ref_in(c, 0);
    int32_t t = x->elem_type;
    int cls = m_class(t);
    if (cls != MC_F32 && cls != MC_F64)
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d is not supported", (int)t);
    if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input must be [..., M, M]");
    int64_t m = x->dims[x->rank - 1];
    tsr_tensor *o;
    st = ref_out(c, 0, t, x->rank - 2, x->dims, &o);
    if (st) return st;
    uint64_t batch = m_prod(x->rank - 2, x->dims);
    double *a = malloc(sizeof(double) * (size_t)(m > 0 ? m * m : 1));
    if (!a) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    for (uint64_t bi = 0; bi < batch; bi++) {
        size_t base = (size_t)(bi * (uint64_t)(m * m));
        for (int64_t i = 0; i < m * m; i++) a[i] = m_ldd(t, x->data, base + (size_t)i);
        double det = 1.0;
        for (int64_t k = 0; k < m && det != 0; k++) {
            int64_t p = k;
            for (int64_t i = k + 1; i < m; i++)
                if (fabs(a[i * m + k]) > fabs(a[p * m + k])) p = i;
            if (a[p * m + k] == 0) {
                det = 0;
                break;
            }
            if (p != k) {
                for (int64_t j = 0; j < m; j++) {
                    double tmp = a[k * m + j];
                    a[k * m + j] = a[p * m + j];
                    a[p * m + j] = tmp;
                }
                det = -det;
            }
            det *= a[k * m + k];
            for (int64_t i = k + 1; i < m; i++) {
                double f = a[i * m + k] / a[k * m + k];
                for (int64_t j = k; j < m; j++) a[i * m + j] -= f * a[k * m + j];
            }
        }
        m_std(t, o->data, (size_t)bi, det);
    }
    free(a);
    return NULL;
}
