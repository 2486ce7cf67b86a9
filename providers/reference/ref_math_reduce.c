/*
 * Reference kernels: the Reduce* family, ArgMax/ArgMin, and
 * Softmax/LogSoftmax/Hardmax.
 *
 * Reductions accumulate floats in double and integers exactly in int64
 * (uint64 for uint64), so ReduceSum over int64 is exact. Which axes: an
 * attribute before opset 13 (ReduceSum) or 18 (the others), the optional
 * second input after; no axes means all axes unless noop_with_empty_axes,
 * when the reduction runs over no axes at all (each output element reduces
 * one input element, so ReduceSumSquare still squares).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"
#include "ref_math.h"

enum rop { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_LOGSUM, R_LSE, R_SUMSQ };

static int64_t axes_input_opset(int op) { return op == R_SUM ? 13 : 18; }

/* Fills reduced[] and the output shape. */
static tsr_status *reduce_axes(ref_ctx *c, int op, const tsr_tensor *x, bool *reduced, int32_t *orank, int64_t *odims) {
    int64_t *axes = NULL;
    size_t naxes = 0;
    const int64_t *attr_axes = NULL;
    tsr_status *st = NULL;
    if (ref_opset(c) >= axes_input_opset(op)) {
        const tsr_tensor *ta = ref_in(c, 1);
        if (ta && ref_numel(ta) > 0) {
            st = ref_tensor_i64(c, ta, &axes, &naxes);
            if (st) return st;
        }
    } else {
        naxes = ref_attr_ints(c, "axes", &attr_axes);
    }
    bool noop = ref_attr_int(c, "noop_with_empty_axes", 0) != 0;
    for (int32_t d = 0; d < x->rank; d++) reduced[d] = naxes == 0 && !noop;
    for (size_t i = 0; i < naxes; i++) {
        int64_t a = axes ? axes[i] : attr_axes[i], n;
        if (!ref_axis(a, x->rank, &n) || x->rank == 0) {
            free(axes);
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is out of range for rank %d", (long long)a,
                           (int)x->rank);
        }
        reduced[n] = true;
    }
    free(axes);
    bool keep = ref_attr_int(c, "keepdims", 1) != 0;
    int32_t r = 0;
    for (int32_t d = 0; d < x->rank; d++) {
        if (!reduced[d]) odims[r++] = x->dims[d];
        else if (keep) odims[r++] = 1;
    }
    *orank = r;
    return NULL;
}

static double rinit_d(int op) {
    switch (op) {
    case R_PROD: return 1.0;
    case R_MAX: return -INFINITY;
    case R_MIN: return INFINITY;
    case R_LSE: return -INFINITY; /* the running maximum, first pass */
    default: return 0.0;
    }
}

static tsr_status *reduce(ref_ctx *c, int op) {
    const tsr_tensor *x = ref_in(c, 0);
    if (!x) return ref_err(c, TSR_ERR_INVALID_MODEL, "input 0 is required");
    int32_t t = x->elem_type;
    int cls = m_class(t);
    if (cls == MC_NONE) return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d is not supported", (int)t);
    bool reduced[REF_MAX_RANK];
    int32_t orank = 0;
    int64_t odims[REF_MAX_RANK];
    tsr_status *st = reduce_axes(c, op, x, reduced, &orank, odims);
    if (st) return st;
    tsr_tensor *o;
    st = ref_out(c, 0, t, orank, odims, &o);
    if (st) return st;
    uint64_t nout = ref_numel(o), nin = ref_numel(x);
    if (nout == 0) return NULL;

    /* Each input position's output offset: the output's row-major strides
     * with 0 along reduced axes (keepdims or not, the order is the same). */
    int64_t full[REF_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++) full[d] = reduced[d] ? 1 : x->dims[d];
    int64_t ost[REF_MAX_RANK];
    ref_strides(x->rank, full, ost);
    for (int32_t d = 0; d < x->rank; d++)
        if (reduced[d]) ost[d] = 0;
    uint64_t count = nout ? nin / nout : 0;

    /* float32 over trailing axes (LayerNorm's ReduceMean over the last
     * axis): contiguous rows, no offset bookkeeping. */
    int32_t k = x->rank;
    while (k > 0 && reduced[k - 1]) k--;
    bool trailing = true;
    for (int32_t d = 0; d < k; d++)
        if (reduced[d]) trailing = false;
    if (t == TSR_FLOAT && trailing && count > 0 && op != R_LSE && op != R_PROD) {
        const float *px = x->data;
        float *po = o->data;
        for (uint64_t r = 0; r < nout; r++) {
            const float *row = px + r * count;
            double acc = 0;
            if (op == R_MAX || op == R_MIN) {
                float m = row[0];
                for (uint64_t i = 1; i < count; i++) {
                    float v = row[i];
                    if (v != v || m != m) m = NAN;
                    else if (op == R_MAX ? v > m : v < m) m = v;
                }
                po[r] = m;
                continue;
            }
            switch (op) {
            case R_L1:
                for (uint64_t i = 0; i < count; i++) acc += fabs((double)row[i]);
                break;
            case R_L2:
            case R_SUMSQ:
                for (uint64_t i = 0; i < count; i++) acc += (double)row[i] * row[i];
                break;
            default:
                for (uint64_t i = 0; i < count; i++) acc += row[i];
                break;
            }
            switch (op) {
            case R_MEAN: acc /= (double)count; break;
            case R_L2: acc = sqrt(acc); break;
            case R_LOGSUM: acc = log(acc); break;
            default: break;
            }
            po[r] = (float)acc;
        }
        return NULL;
    }

    /* Exact integer path for the ones whose result is an integer. */
    bool int_path = (cls == MC_I64 || cls == MC_U64) &&
        (op == R_SUM || op == R_MAX || op == R_MIN || op == R_PROD || op == R_L1 || op == R_SUMSQ);
    bool uns = cls == MC_U64;
    void *acc = malloc(nout * 8);
    if (!acc) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    double *ad = acc;
    int64_t *ai = acc;
    uint64_t *au = acc;
    for (uint64_t i = 0; i < nout; i++) {
        if (!int_path) ad[i] = rinit_d(op);
        else if (op == R_PROD) ai[i] = 1;
        else if (op == R_MAX) {
            if (uns) au[i] = 0;
            else ai[i] = t == TSR_BOOL ? 0 : INT64_MIN;
        } else if (op == R_MIN) {
            if (uns) au[i] = UINT64_MAX;
            else ai[i] = t == TSR_BOOL ? 1 : INT64_MAX;
        } else ai[i] = 0;
    }
    /* Walk the input in order; `off` follows the output offset. */
    int64_t idx[REF_MAX_RANK] = {0};
    int64_t off = 0;
#define WALK(BODY)                                                                                                     \
    do {                                                                                                               \
        off = 0;                                                                                                       \
        memset(idx, 0, sizeof(int64_t) * (size_t)x->rank);                                                             \
        for (uint64_t i = 0; i < nin; i++) {                                                                           \
            BODY;                                                                                                      \
            for (int32_t d = x->rank - 1; d >= 0; d--) {                                                               \
                off += ost[d];                                                                                         \
                if (++idx[d] < x->dims[d]) break;                                                                      \
                off -= ost[d] * x->dims[d];                                                                            \
                idx[d] = 0;                                                                                            \
            }                                                                                                          \
        }                                                                                                              \
    } while (0)

    if (int_path) {
        if (uns) {
            WALK({
                uint64_t v = m_ldu(t, x->data, i);
                uint64_t *a = &au[off];
                switch (op) {
                case R_SUM:
                case R_L1: *a += v; break;
                case R_SUMSQ: *a += v * v; break;
                case R_PROD: *a *= v; break;
                case R_MAX:
                    if (v > *a) *a = v;
                    break;
                case R_MIN:
                    if (v < *a) *a = v;
                    break;
                }
            });
            for (uint64_t i = 0; i < nout; i++) m_stu(t, o->data, i, au[i]);
        } else {
            WALK({
                int64_t v = m_ldi(t, x->data, i);
                uint64_t *a = (uint64_t *)&ai[off];
                switch (op) {
                case R_SUM: *a += (uint64_t)v; break;
                case R_L1: *a += v < 0 ? 0 - (uint64_t)v : (uint64_t)v; break;
                case R_SUMSQ: *a += (uint64_t)v * (uint64_t)v; break;
                case R_PROD: *a *= (uint64_t)v; break;
                case R_MAX:
                    if (v > ai[off]) ai[off] = v;
                    break;
                case R_MIN:
                    if (v < ai[off]) ai[off] = v;
                    break;
                }
            });
            for (uint64_t i = 0; i < nout; i++) m_sti(t, o->data, i, ai[i]);
        }
        free(acc);
        return NULL;
    }

    if (op == R_LSE) {
        /* Two passes: the maximum, then the sum of exp(x - max), so large
         * inputs do not overflow. */
        WALK({
            double v = m_ldd(t, x->data, i);
            if (v > ad[off] || v != v) ad[off] = v;
        });
        double *sum = calloc(nout, sizeof(double));
        if (!sum) {
            free(acc);
            return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
        }
        WALK({
            double m = ad[off];
            if (isfinite(m)) sum[off] += exp(m_ldd(t, x->data, i) - m);
        });
        for (uint64_t i = 0; i < nout; i++) {
            double m = ad[i];
            m_std(t, o->data, i, isfinite(m) ? m + log(sum[i]) : m);
        }
        free(sum);
        free(acc);
        return NULL;
    }

    WALK({
        double v = m_ldd(t, x->data, i);
        double *a = &ad[off];
        switch (op) {
        case R_SUM:
        case R_MEAN:
        case R_LOGSUM: *a += v; break;
        case R_L1: *a += fabs(v); break;
        case R_L2:
        case R_SUMSQ: *a += v * v; break;
        case R_PROD: *a *= v; break;
        case R_MAX:
            if (v > *a || v != v) *a = v;
            break;
        case R_MIN:
            if (v < *a || v != v) *a = v;
            break;
        }
    });
#undef WALK
    for (uint64_t i = 0; i < nout; i++) {
        double v = ad[i];
        switch (op) {
        case R_MEAN: v = v / (double)count; break;
        case R_L2: v = sqrt(v); break;
        case R_LOGSUM: v = log(v); break;
        default: break;
        }
        m_std(t, o->data, i, v);
    }
    free(acc);
    return NULL;
}

tsr_status *ref_math_reduce_sum(ref_ctx *c) { return reduce(c, R_SUM); }
tsr_status *ref_math_reduce_mean(ref_ctx *c) { return reduce(c, R_MEAN); }
tsr_status *ref_math_reduce_max(ref_ctx *c) { return reduce(c, R_MAX); }
tsr_status *ref_math_reduce_min(ref_ctx *c) { return reduce(c, R_MIN); }
tsr_status *ref_math_reduce_prod(ref_ctx *c) { return reduce(c, R_PROD); }
tsr_status *ref_math_reduce_l1(ref_ctx *c) { return reduce(c, R_L1); }
tsr_status *ref_math_reduce_l2(ref_ctx *c) { return reduce(c, R_L2); }
tsr_status *ref_math_reduce_log_sum(ref_ctx *c) { return reduce(c, R_LOGSUM); }
tsr_status *ref_math_reduce_log_sum_exp(ref_ctx *c) { return reduce(c, R_LSE); }
tsr_status *ref_math_reduce_sum_square(ref_ctx *c) { return reduce(c, R_SUMSQ); }

/* ======================================================================== */
/* ArgMax / ArgMin                                                           */

typedef float arg_v4f __attribute__((vector_size(16)));
typedef int32_t arg_v4i __attribute__((vector_size(16)));

/* Whether u replaces the best v: the comparisons of arg_reduce's loops. */
static inline bool arg_take(float u, float v, bool is_max, bool last) {
    return is_max ? (u > v || (last && !(u < v))) : (u < v || (last && !(u > v)));
}

/* Arg{Max,Min} of one contiguous float32 row, n > 0, in two passes with
 * the same result as arg_take applied element by element: the extreme of
 * the row and whether it holds a NaN (16 at a time), then the first (or
 * with select_last_index the last) position holding the extreme. The rule
 * reduces to that: without select_last_index a NaN never replaces the best
 * and nothing replaces a NaN, so a NaN first gives 0 and any other NaN is
 * skipped; with it, every NaN is taken and so is the element after it, so
 * the answer is the last NaN's position, or the search over what follows
 * it. Detection heads ([1, 25200, 80] over the classes) took
 * 3.5 ns per element with the branch on each comparison. */
static int64_t arg_row_f32(const float *r, int64_t n, bool is_max, bool last) {
    if (r[0] != r[0] && !last) return 0;
    arg_v4f acc[4], nan = {0, 0, 0, 0};
    float sgn = is_max ? 1.0f : -1.0f;
    int64_t k = 0;
    /* the extreme of sgn * x, NaNs left out (u > a is false for them) */
    for (int q = 0; q < 4; q++) acc[q] = (arg_v4f){-INFINITY, -INFINITY, -INFINITY, -INFINITY};
    for (; k + 16 <= n; k += 16) {
        arg_v4f u[4];
        memcpy(u, r + k, sizeof u);
        for (int q = 0; q < 4; q++) {
            u[q] *= sgn;
            arg_v4i m = u[q] > acc[q];
            acc[q] = (arg_v4f)(((arg_v4i)u[q] & m) | ((arg_v4i)acc[q] & ~m));
            nan = (arg_v4f)((arg_v4i)nan | (u[q] != u[q]));
        }
    }
    float best = -INFINITY;
    bool has_nan = false;
    for (int q = 0; q < 4; q++)
        for (int l = 0; l < 4; l++) {
            if (acc[q][l] > best) best = acc[q][l];
            if (((arg_v4i)nan)[l]) has_nan = true;
        }
    for (; k < n; k++) {
        float u = sgn * r[k];
        if (u > best) best = u;
        if (u != u) has_nan = true;
    }
    if (has_nan && last) {
        /* the element after the last NaN is taken, and from there on the
         * row holds no NaN */
        int64_t p = n - 1;
        while (r[p] == r[p]) p--;
        return p == n - 1 ? p : p + 1 + arg_row_f32(r + p + 1, n - p - 1, is_max, last);
    }
    /* a row of NaNs and -inf (or +inf for min) only: best stays the first
     * non-NaN element's value, which the search below finds */
    if (last) {
        for (int64_t j = n - 1; j >= 0; j--)
            if (sgn * r[j] == best) return j;
    } else {
        for (int64_t j = 0; j < n; j++)
            if (sgn * r[j] == best) return j;
    }
    return 0; /* every element NaN (select_last_index 0 returned above) */
}

/* Arg{Max,Min} over a middle axis of float32, n > 1 and n < 2^31: the
 * inner positions side by side, 4 per vector, in column blocks of 512 (the
 * best values and int32 indices of a block stay in L1 while the n rows
 * stream past). The same rule as arg_take, branch-free: take = (u > v) |
 * (last & !(u < v)), min with the comparisons turned round. A class map
 * [1, 21, 513, 513] over C took 20 ms with the per-element branch. */
static inline __attribute__((always_inline)) void arg_cols_f32(const float *x, int64_t n, uint64_t inner, int64_t *po,
                                                               bool is_max, bool last) {
    enum { W = 512 };
    arg_v4f bv[W / 4];
    arg_v4i bi[W / 4];
    const arg_v4i lastm = {-last, -last, -last, -last};
    for (uint64_t b0 = 0; b0 < inner; b0 += W) {
        uint64_t w = inner - b0 < W ? inner - b0 : W, nv = w / 4;
        for (uint64_t j = 0; j < nv; j++) {
            memcpy(&bv[j], x + b0 + 4 * j, sizeof bv[j]);
            bi[j] = (arg_v4i){0, 0, 0, 0};
        }
        for (int64_t k = 1; k < n; k++) {
            const float *row = x + (uint64_t)k * inner + b0;
            const arg_v4i kv = {(int32_t)k, (int32_t)k, (int32_t)k, (int32_t)k};
            for (uint64_t j = 0; j < nv; j++) {
                arg_v4f u;
                memcpy(&u, row + 4 * j, sizeof u);
                arg_v4i better = is_max ? u > bv[j] : u < bv[j], worse = is_max ? u < bv[j] : u > bv[j];
                arg_v4i take = better | (lastm & ~worse);
                bv[j] = (arg_v4f)(((arg_v4i)u & take) | ((arg_v4i)bv[j] & ~take));
                bi[j] = (kv & take) | (bi[j] & ~take);
            }
        }
        for (uint64_t j = 0; j < nv; j++)
            for (int q = 0; q < 4; q++) po[b0 + 4 * j + (uint64_t)q] = bi[j][q];
        /* the block's last w % 4 positions, one by one */
        for (uint64_t b = b0 + 4 * nv; b < b0 + w; b++) {
            float v = x[b];
            int64_t best = 0;
            for (int64_t k = 1; k < n; k++)
                if (arg_take(x[(uint64_t)k * inner + b], v, is_max, last)) {
                    v = x[(uint64_t)k * inner + b];
                    best = k;
                }
            po[b] = best;
        }
    }
}

static void arg_cols_max(const float *x, int64_t n, uint64_t inner, int64_t *po, bool last) {
    arg_cols_f32(x, n, inner, po, true, last);
}

static void arg_cols_min(const float *x, int64_t n, uint64_t inner, int64_t *po, bool last) {
    arg_cols_f32(x, n, inner, po, false, last);
}

static tsr_status *arg_reduce(ref_ctx *c, bool is_max) {
    const tsr_tensor *x = ref_in(c, 0);
    if (!x) return ref_err(c, TSR_ERR_INVALID_MODEL, "input 0 is required");
    int32_t t = x->elem_type;
    int cls = m_class(t);
    if (cls == MC_NONE) return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d is not supported", (int)t);
    int64_t axis;
    if (!ref_axis(ref_attr_int(c, "axis", 0), x->rank, &axis) || x->rank == 0)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis is out of range for rank %d", (int)x->rank);
    bool keep = ref_attr_int(c, "keepdims", 1) != 0;
    bool last = ref_attr_int(c, "select_last_index", 0) != 0;
    int64_t odims[REF_MAX_RANK];
    int32_t orank = 0;
    for (int32_t d = 0; d < x->rank; d++) {
        if (d != axis) odims[orank++] = x->dims[d];
        else if (keep) odims[orank++] = 1;
    }
    tsr_tensor *o;
    tsr_status *st = ref_out(c, 0, TSR_INT64, orank, odims, &o);
    if (st) return st;
    uint64_t outer = m_prod((int32_t)axis, x->dims);
    int64_t n = x->dims[axis];
    uint64_t inner = m_prod(x->rank - (int32_t)axis - 1, x->dims + axis + 1);
    if (n == 0 && outer * inner > 0)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "cannot take Arg%s over an empty axis", is_max ? "Max" : "Min");
    int64_t *po = o->data;
    if (t == TSR_FLOAT && n > 0 && outer > 0 && inner == 1) {
        for (uint64_t a = 0; a < outer; a++)
            po[a] = arg_row_f32((const float *)x->data + a * (uint64_t)n, n, is_max, last);
        return NULL;
    }
    if (t == TSR_FLOAT && n > 1 && n <= INT32_MAX && outer * inner > 0) {
        for (uint64_t a = 0; a < outer; a++)
            (is_max ? arg_cols_max : arg_cols_min)((const float *)x->data + a * (uint64_t)n * inner, n, inner,
                                                   po + a * inner, last);
        return NULL;
    }
    if (t == TSR_FLOAT && n > 0 && outer * inner > 0) {
        /* float32 row by row, the inner positions side by side (a class map
         * [N, C, H, W] over C reads contiguous rows instead of striding by
         * H*W): the same comparisons as below, (u > v) - (u < v), so NaNs
         * and select_last_index behave identically */
        const float *xv = x->data;
        float *bestv = malloc(sizeof(float) * (size_t)inner);
        if (!bestv) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
        for (uint64_t a = 0; a < outer; a++) {
            int64_t *pi = po + a * inner;
            const float *row = xv + a * (uint64_t)n * inner;
            memcpy(bestv, row, sizeof(float) * (size_t)inner);
            memset(pi, 0, sizeof(int64_t) * (size_t)inner);
            for (int64_t k = 1; k < n; k++) {
                row += inner;
                for (uint64_t b = 0; b < inner; b++) {
                    float u = row[b], v = bestv[b];
                    bool take = is_max ? (u > v || (last && !(u < v))) : (u < v || (last && !(u > v)));
                    if (take) {
                        bestv[b] = u;
                        pi[b] = k;
                    }
                }
            }
        }
        free(bestv);
        return NULL;
    }
    for (uint64_t a = 0; a < outer; a++) {
        for (uint64_t b = 0; b < inner; b++) {
            size_t base = (size_t)(a * (uint64_t)n * inner + b);
            int64_t best = 0;
            /* Compare in the class so int64 and uint64 stay exact. A later
             * equal element wins only with select_last_index. */
            for (int64_t k = 1; k < n; k++) {
                size_t i = base + (size_t)k * inner, j = base + (size_t)best * inner;
                int cmp;
                if (cls == MC_I64) {
                    int64_t u = m_ldi(t, x->data, i), v = m_ldi(t, x->data, j);
                    cmp = (u > v) - (u < v);
                } else if (cls == MC_U64) {
                    uint64_t u = m_ldu(t, x->data, i), v = m_ldu(t, x->data, j);
                    cmp = (u > v) - (u < v);
                } else {
                    double u = m_ldd(t, x->data, i), v = m_ldd(t, x->data, j);
                    cmp = (u > v) - (u < v);
                }
                if (!is_max) cmp = -cmp;
                if (cmp > 0 || (cmp == 0 && last)) best = k;
            }
            po[a * inner + b] = best;
        }
    }
    return NULL;
}

tsr_status *ref_math_argmax(ref_ctx *c) { return arg_reduce(c, true); }
tsr_status *ref_math_argmin(ref_ctx *c) { return arg_reduce(c, false); }

/* ======================================================================== */
/* Softmax, LogSoftmax, Hardmax                                              */

enum { S_SOFTMAX, S_LOGSOFTMAX, S_HARDMAX };

static tsr_status *softmax_family(ref_ctx *c, int kind) {
    const tsr_tensor *x = ref_in(c, 0);
    if (!x) return ref_err(c, TSR_ERR_INVALID_MODEL, "input 0 is required");
    int32_t t = x->elem_type;
    int cls = m_class(t);
    if (cls != MC_F32 && cls != MC_F64)
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d is not supported", (int)t);
    bool old = ref_opset(c) < 13;
    int64_t axis;
    int32_t rank = x->rank;
    if (!ref_axis(ref_attr_int(c, "axis", old ? 1 : -1), rank, &axis))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis is out of range for rank %d", (int)rank);
    tsr_tensor *o;
    tsr_status *st = ref_out(c, 0, t, x->rank, x->dims, &o);
    if (st) return st;
    /* Before opset 13 the input is read as 2-D [prod(dims[:axis]),
     * prod(dims[axis:])] and normalised along the second axis. */
    uint64_t outer, n, inner;
    if (rank == 0) {
        outer = n = inner = 1;
    } else if (old) {
        outer = m_prod((int32_t)axis, x->dims);
        n = m_prod(rank - (int32_t)axis, x->dims + axis);
        inner = 1;
    } else {
        outer = m_prod((int32_t)axis, x->dims);
        n = (uint64_t)x->dims[axis];
        inner = m_prod(rank - (int32_t)axis - 1, x->dims + axis + 1);
    }
    if (outer * n * inner == 0) return NULL;
    double *buf = malloc(sizeof(double) * n);
    if (!buf) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    for (uint64_t a = 0; a < outer; a++) {
        for (uint64_t b = 0; b < inner; b++) {
            size_t base = (size_t)(a * n * inner + b);
            double mx = -INFINITY;
            uint64_t arg = 0;
            if (t == TSR_FLOAT) {
                const float *p = (const float *)x->data + base;
                for (uint64_t k = 0; k < n; k++) buf[k] = p[k * inner];
            } else {
                for (uint64_t k = 0; k < n; k++) buf[k] = m_ldd(t, x->data, base + k * inner);
            }
            for (uint64_t k = 0; k < n; k++)
                if (buf[k] > mx) {
                    mx = buf[k];
                    arg = k;
                }
            if (kind == S_HARDMAX) {
                for (uint64_t k = 0; k < n; k++) buf[k] = k == arg ? 1.0 : 0.0;
            } else {
                double sum = 0;
                if (kind == S_SOFTMAX) {
                    for (uint64_t k = 0; k < n; k++) {
                        buf[k] = exp(buf[k] - mx);
                        sum += buf[k];
                    }
                    for (uint64_t k = 0; k < n; k++) buf[k] /= sum;
                } else {
                    for (uint64_t k = 0; k < n; k++) {
                        buf[k] -= mx;
                        sum += exp(buf[k]);
                    }
                    double ls = log(sum);
                    for (uint64_t k = 0; k < n; k++) buf[k] -= ls;
                }
            }
            if (t == TSR_FLOAT) {
                float *p = (float *)o->data + base;
                for (uint64_t k = 0; k < n; k++) p[k * inner] = (float)buf[k];
            } else {
                for (uint64_t k = 0; k < n; k++) m_std(t, o->data, base + k * inner, buf[k]);
            }
        }
    }
    free(buf);
    return NULL;
}

tsr_status *ref_math_softmax(ref_ctx *c) { return softmax_family(c, S_SOFTMAX); }
tsr_status *ref_math_log_softmax(ref_ctx *c) { return softmax_family(c, S_LOGSOFTMAX); }
tsr_status *ref_math_hardmax(ref_ctx *c) { return softmax_family(c, S_HARDMAX); }
