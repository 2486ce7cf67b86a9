/*
 * Clip and Where: elementwise choices between inputs, by bounds or by a
 * condition, with broadcasting.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "ref_math.h"

/* A scalar bound: `t` holds one element (numel 0 means absent, which some
 * exporters emit for "no bound"). */
static bool bound_present(const tsr_tensor *t) { return t && ref_numel(t) > 0; }

tsr_status *ref_math_clip(ref_ctx *c) {
    tsr_status *st = ref_math_need_inputs(c, 1);
    if (st) return st;
    const tsr_tensor *x = ref_in(c, 0);
    int32_t t = x->elem_type;
    int cls = m_class(t);
    if (cls == MC_NONE || t == TSR_BOOL)
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d is not supported", (int)t);
    const tsr_tensor *tmin = NULL, *tmax = NULL;
    bool old = ref_opset(c) < 11;
    if (!old) {
        tmin = ref_in(c, 1);
        tmax = ref_in(c, 2);
        if (tmin && ref_numel(tmin) > 1) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "min must be a scalar");
        if (tmax && ref_numel(tmax) > 1) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "max must be a scalar");
    }
    tsr_tensor *o;
    st = ref_out(c, 0, t, x->rank, x->dims, &o);
    if (st) return st;
    uint64_t n = ref_numel(x);
    if (cls == MC_F32 || cls == MC_F64) {
        double lo = -INFINITY, hi = INFINITY;
        if (old) {
            lo = ref_attr_float(c, "min", -FLT_MAX);
            hi = ref_attr_float(c, "max", FLT_MAX);
        } else {
            if (bound_present(tmin)) lo = m_ldd(tmin->elem_type, tmin->data, 0);
            if (bound_present(tmax)) hi = m_ldd(tmax->elem_type, tmax->data, 0);
        }
        if (t == TSR_FLOAT) {
            const float *a = x->data;
            float *b = o->data;
            float flo = (float)lo, fhi = (float)hi;
            for (uint64_t i = 0; i < n; i++) {
                float v = a[i] < flo ? flo : a[i];
                b[i] = v > fhi ? fhi : v;
            }
            return NULL;
        }
        for (uint64_t i = 0; i < n; i++) {
            double v = m_ldd(t, x->data, i);
            v = v < lo ? lo : v;
            m_std(t, o->data, i, v > hi ? hi : v);
        }
        return NULL;
    }
    if (cls == MC_U64) {
        uint64_t lo = 0, hi = UINT64_MAX;
        if (bound_present(tmin)) lo = m_ldu(tmin->elem_type, tmin->data, 0);
        if (bound_present(tmax)) hi = m_ldu(tmax->elem_type, tmax->data, 0);
        for (uint64_t i = 0; i < n; i++) {
            uint64_t v = m_ldu(t, x->data, i);
            v = v < lo ? lo : v;
            m_stu(t, o->data, i, v > hi ? hi : v);
        }
        return NULL;
    }
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    if (bound_present(tmin)) lo = m_ldi(tmin->elem_type, tmin->data, 0);
    if (bound_present(tmax)) hi = m_ldi(tmax->elem_type, tmax->data, 0);
    for (uint64_t i = 0; i < n; i++) {
        int64_t v = m_ldi(t, x->data, i);
        v = v < lo ? lo : v;
        m_sti(t, o->data, i, v > hi ? hi : v);
    }
    return NULL;
}

/* Where's inner loop for elements of one size, copied as integers of that
 * size; the strides (0 or 1 in the common cases) are inlined as constants
 * by where_any so those loops vectorise. */
#define WHERE_LOOPS(T)                                                                                                 \
    M_INLINE void where_loop_##T(const uint8_t *c, int64_t sc, const T *x, int64_t sx, const T *y, int64_t sy, T *o,   \
                                 int64_t n) {                                                                          \
        for (int64_t i = 0; i < n; i++) o[i] = c[i * sc] ? x[i * sx] : y[i * sy];                                      \
    }                                                                                                                  \
    static void where_any_##T(const uint8_t *c, int64_t sc, const void *px, int64_t sx, const void *py, int64_t sy,    \
                              void *po, int64_t n) {                                                                   \
        const T *x = px, *y = py;                                                                                      \
        T *o = po;                                                                                                     \
        if (sc == 1 && sx == 1 && sy == 1) where_loop_##T(c, 1, x, 1, y, 1, o, n);                                     \
        else if (sc == 1 && sx == 0 && sy == 1) where_loop_##T(c, 1, x, 0, y, 1, o, n);                                \
        else if (sc == 1 && sx == 1 && sy == 0) where_loop_##T(c, 1, x, 1, y, 0, o, n);                                \
        else if (sc == 1 && sx == 0 && sy == 0) where_loop_##T(c, 1, x, 0, y, 0, o, n);                                \
        else if (sc == 0 && sx == 1 && sy == 1) where_loop_##T(c, 0, x, 1, y, 1, o, n);                                \
        else where_loop_##T(c, sc, x, sx, y, sy, o, n);                                                                \
    }
WHERE_LOOPS(uint8_t)
WHERE_LOOPS(uint16_t)
WHERE_LOOPS(uint32_t)
WHERE_LOOPS(uint64_t)

typedef void (*where_fn)(const uint8_t *c, int64_t sc, const void *x, int64_t sx, const void *y, int64_t sy, void *o,
                         int64_t n);

static where_fn where_for(size_t es) {
    switch (es) {
    case 1: return where_any_uint8_t;
    case 2: return where_any_uint16_t;
    case 4: return where_any_uint32_t;
    case 8: return where_any_uint64_t;
    default: return NULL;
    }
}

tsr_status *ref_math_where(ref_ctx *c) {
    tsr_status *st = ref_math_need_inputs(c, 3);
    if (st) return st;
    const tsr_tensor *cond = ref_in(c, 0), *x = ref_in(c, 1), *y = ref_in(c, 2);
    if (x->elem_type != y->elem_type) return ref_err(c, TSR_ERR_INVALID_MODEL, "X and Y have different element types");
    if (cond->elem_type != TSR_BOOL) /* read a byte per element below */
        return ref_err(c, TSR_ERR_INVALID_MODEL, "condition has element type %d, not bool", (int)cond->elem_type);
    int32_t r1, rank;
    int64_t d1[REF_MAX_RANK], dims[REF_MAX_RANK];
    if (!ref_broadcast_shape(cond->rank, cond->dims, x->rank, x->dims, &r1, d1)) return ref_math_shape_err(c, cond, x);
    if (!ref_broadcast_shape(r1, d1, y->rank, y->dims, &rank, dims)) return ref_math_shape_err(c, x, y);
    tsr_tensor *o;
    st = ref_out(c, 0, x->elem_type, rank, dims, &o);
    if (st) return st;
    uint64_t n = ref_numel(o);
    const tsr_tensor *ins[3] = {cond, x, y};
    m_iter it;
    m_iter_init(&it, rank, dims, 3, ins);
    const uint8_t *pc = cond->data;
    if (x->elem_type == TSR_STRING) {
        /* Strings are owned by the output tensor; the host copies them in. */
        const tsr_string *sx = x->data, *sy = y->data;
        for (uint64_t i = 0; i < n; i++, m_iter_next(&it)) {
            const tsr_string *s = pc[it.off[0]] ? &sx[it.off[1]] : &sy[it.off[2]];
            st = c->host->tensor_set_string(o, i, s->data, s->size);
            if (st) return st;
        }
        return NULL;
    }
    size_t es = ref_elem_size(x->elem_type);
    if (es == 0) return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d is not supported", (int)x->elem_type);
    char *po = o->data;
    const char *px = x->data, *py = y->data;
    if (n == 0) return NULL;
    where_fn wf = where_for(es);
    if (wf) {
        uint64_t nc = ref_numel(cond), nx = ref_numel(x), ny = ref_numel(y);
        if ((nc == n || nc == 1) && (nx == n || nx == 1) && (ny == n || ny == 1)) {
            /* each input full or one element (a mask's fill value): one run */
            wf(pc, nc == n, px, nx == n, py, ny == n, po, (int64_t)n);
            return NULL;
        }
        /* by rows, the last axis an inner loop (an attention mask picks
         * among 200,000 scores a layer) */
        int64_t inner = dims[rank - 1];
        int64_t sc = it.st[0][rank - 1], sx = it.st[1][rank - 1], sy = it.st[2][rank - 1];
        it.rank = rank - 1;
        for (uint64_t r = 0; r < n / (uint64_t)inner; r++) {
            wf(pc + it.off[0], sc, px + (size_t)it.off[1] * es, sx, py + (size_t)it.off[2] * es, sy,
               po + r * (uint64_t)inner * es, inner);
            m_iter_next(&it);
        }
        return NULL;
    }
    for (uint64_t i = 0; i < n; i++, m_iter_next(&it)) {
        const char *src = pc[it.off[0]] ? px + (size_t)it.off[1] * es : py + (size_t)it.off[2] * es;
        memcpy(po + i * es, src, es);
    }
    return NULL;
}
