/*
 * com.microsoft QOperator kernels (ref_quant_ms.h): ONNX Runtime's CPU
 * kernels (onnxruntime/contrib_ops/cpu/quantization/ and the MLAS routines
 * they call, as dispatched on x86-64 with AVX2 and FMA), step for step in
 * float. Scales and zero points are per tensor (one element) except QGemm's
 * b_scale / b_zero_point, which may have one value per column. Every
 * "round" below is round-half-to-even (nearbyint in the default mode, as
 * cvtps2dq does), every "saturate" clamps to the 8-bit type's range.
 *
 *   QLinearAdd   MLAS qladd_avx2.cpp: rA = sa/sc, rB = sb/sc (float);
 *                fixed = zc - (rA*za + rB*zb); y = round(fma(a, rA,
 *                fma(b, rB, fixed))) saturated. When ORT's broadcast
 *                loop sees one side as a scalar along the innermost run
 *                it folds that side into `fixed` first (see qadd_value).
 *   QLinearMul   MLAS qlmul.cpp (SSE2): r = (sa*sb)/sc; y =
 *                round(float((a-za)*(b-zb)) * r + zc) saturated.
 *   QLinearSigmoid, QLinearLeakyRelu
 *                a 256-entry table: x dequantized as xs*(x-zx) in float,
 *                f applied in float (sigmoid: MLAS's rational logistic
 *                with FMA, MlasComputeLogisticF32KernelFma3; leaky relu: v
 *                >= 0 ? v : alpha*v), quantized as MlasQuantizeLinear does:
 *                round(v / ys) + zy saturated.
 *   QLinearConcat
 *                inputs whose scale and zero point equal the output's are
 *                copied; others go through the same table with identity.
 *   QLinearGlobalAveragePool (and QLinearAveragePool whose kernel covers
 *                the whole unpadded image, which ORT sends the same way)
 *                MLAS: acc = sum(x) - zx*n in int32; s = xs / (ys * n);
 *                y = round(float(acc) * s) + zy saturated.
 *   QLinearAveragePool
 *                each x dequantized to float, window summed in float in
 *                row-major window order, divided by the count (float),
 *                y = round(v / ys + zy) saturated.
 *   QLinearSoftmax
 *                ORT's float exp table (exp((i-255+shift)*xs) in double,
 *                stored as float), sum in float, y = round(t*floor(1/ys) /
 *                sum) + zy, saturated.
 *   QGemm        exact integer sums plus the int32 bias C; s = alpha*sa*sb
 *                (/ys) in float; quantized: round(float(acc)*s) + zy
 *                saturated, float output: float(acc)*s.
 *   MatMulIntegerToFloat
 *                float(acc) * (sa*sb) + bias, exact integer sums.
 *   DynamicQuantizeMatMul
 *                A quantized to uint8 as ORT's dynamic quantization does
 *                (min/max with 0, scale (max-min)/255, zero point
 *                round(-min/scale)), then MatMulIntegerToFloat.
 *
 * Known differences from ONNX Runtime (all outside ordinary models): ORT's
 * x86 QLinearAdd/QLinearMul return the type's minimum when a value exceeds
 * int32 (a scale ratio above ~8e6); these saturate to the right end. ORT's
 * AVX2 u8 x s8 GEMM (QGemm, MatMulIntegerToFloat) saturates pairs of
 * products to int16; these sums are exact. QLinearSoftmax's table shift
 * comes from a log ORT may take in float: ties can differ by one step.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_quant.h"
#include "ref_quant_ms.h"

/* --- parameters --------------------------------------------------------- */

static bool is_q8(int32_t t) { return t == TSR_UINT8 || t == TSR_INT8; }

static int32_t q8_min(int32_t t) { return t == TSR_INT8 ? -128 : 0; }
static int32_t q8_max(int32_t t) { return t == TSR_INT8 ? 127 : 255; }

static int32_t q8_get(int32_t t, const void *data, size_t i) {
    return t == TSR_INT8 ? (int32_t)((const int8_t *)data)[i] : (int32_t)((const uint8_t *)data)[i];
}

static void q8_set(int32_t t, void *data, size_t i, int32_t v) {
    if (v < q8_min(t)) v = q8_min(t);
    if (v > q8_max(t)) v = q8_max(t);
    if (t == TSR_INT8) ((int8_t *)data)[i] = (int8_t)v;
    else ((uint8_t *)data)[i] = (uint8_t)v;
}

/* round(v) + zp saturated into t; v is already the float value ORT
 * rounds. NaN counts as 0, values beyond int32 saturate. */
static void q8_store(int32_t t, void *data, size_t i, float v, int32_t zp) {
    double r = v != v ? 0.0 : nearbyint((double)v) + zp;
    if (r < q8_min(t)) r = q8_min(t);
    if (r > q8_max(t)) r = q8_max(t);
    q8_set(t, data, i, (int32_t)r);
}

/* MlasQuantizeLinear of one value: round(v / scale) + zp, saturated. */
static void q8_quantize(int32_t t, void *data, size_t i, float v, float scale, int32_t zp) {
    q8_store(t, data, i, v / scale, zp);
}

/* A quantized data input: present, in host memory, 8-bit. */
static tsr_status *get_q8(ref_ctx *c, size_t i, const char *what, const tsr_tensor **out) {
    const tsr_tensor *t = ref_in(c, i);
    tsr_status *st = rq_check_tensor(c, t, what);
    if (st) return st;
    if (!is_q8(t->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s has element type %s, not uint8 or int8", what,
                       rq_type_name(t->elem_type));
    *out = t;
    return NULL;
}

/* A per-tensor float scale. */
static tsr_status *get_scale(ref_ctx *c, size_t i, const char *what, float *out) {
    const tsr_tensor *t = ref_in(c, i);
    tsr_status *st = rq_check_tensor(c, t, what);
    if (st) return st;
    if (t->elem_type != TSR_FLOAT)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s has element type %s, not float", what,
                       rq_type_name(t->elem_type));
    if (ref_numel(t) != 1)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s has %llu elements; only per-tensor scales are supported", what,
                       (unsigned long long)ref_numel(t));
    *out = ((const float *)t->data)[0];
    return NULL;
}

/* A per-tensor zero point of type `type` (0 when the input is absent). */
static tsr_status *get_zp(ref_ctx *c, size_t i, const char *what, int32_t type, int32_t *out) {
    const tsr_tensor *t = ref_in(c, i);
    *out = 0;
    if (!t) return NULL;
    tsr_status *st = rq_check_tensor(c, t, what);
    if (st) return st;
    if (t->elem_type != type)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s has element type %s, the data %s", what,
                       rq_type_name(t->elem_type), rq_type_name(type));
    if (ref_numel(t) != 1)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s has %llu elements; only per-tensor zero points are supported",
                       what, (unsigned long long)ref_numel(t));
    *out = q8_get(type, t->data, 0);
    return NULL;
}

/* X, x_scale, x_zero_point, y_scale, y_zero_point: inputs 0-4 of every
 * unary QLinear op (Sigmoid, LeakyRelu, Softmax, the pools). */
typedef struct unary_q {
    const tsr_tensor *x;
    float xs, ys;
    int32_t zx, zy;
} unary_q;

static tsr_status *get_unary_q(ref_ctx *c, unary_q *u) {
    tsr_status *st = get_q8(c, 0, "X", &u->x);
    if (!st) st = get_scale(c, 1, "X_scale", &u->xs);
    if (!st) st = get_zp(c, 2, "X_zero_point", u->x->elem_type, &u->zx);
    if (!st) st = get_scale(c, 3, "Y_scale", &u->ys);
    if (!st) st = get_zp(c, 4, "Y_zero_point", u->x->elem_type, &u->zy);
    return st;
}

/* The 256-entry table ORT's QlinearBuildLookupTable makes: entry b (the
 * byte of x) is f(xs * (x - zx)) quantized with ys, zy. fn NULL is the
 * identity. */
typedef float (*ms_fn)(float v, float arg);

static void build_table(int32_t t, float xs, int32_t zx, float ys, int32_t zy, ms_fn fn, float arg, uint8_t *table) {
    for (int i = 0; i < 256; i++) {
        int32_t x = t == TSR_INT8 ? (int32_t)(int8_t)(uint8_t)i : i;
        float v = xs * (float)(x - zx);
        if (fn) v = fn(v, arg);
        q8_quantize(t, table, (size_t)i, v, ys, zy);
    }
}

/* --- QLinearAdd, QLinearMul --------------------------------------------- */

typedef struct bin_plan {
    int32_t rank;
    int64_t dims[REF_MAX_RANK], sa[REF_MAX_RANK], sb[REF_MAX_RANK];
    uint64_t n;
    int scalar_side; /* 0: both vary along the innermost run; 1: A is constant there; 2: B is */
} bin_plan;

static tsr_status *bin_plan_init(ref_ctx *c, const tsr_tensor *a, const tsr_tensor *b, bin_plan *p) {
    if (!ref_broadcast_shape(a->rank, a->dims, b->rank, b->dims, &p->rank, p->dims))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "A and B do not broadcast");
    ref_broadcast_strides(a->rank, a->dims, p->rank, p->dims, p->sa);
    ref_broadcast_strides(b->rank, b->dims, p->rank, p->dims, p->sb);
    p->n = 1;
    for (int32_t d = 0; d < p->rank; d++) p->n *= (uint64_t)p->dims[d];
    /* ORT's BroadcastLooper hands its kernel runs along the innermost
     * axes; a side that is one element for the run is passed as a scalar
     * (A first). */
    int32_t last = p->rank - 1;
    while (last >= 0 && p->dims[last] == 1) last--;
    if (ref_numel(a) == 1 || last < 0 || p->sa[last] == 0) p->scalar_side = 1;
    else if (ref_numel(b) == 1 || p->sb[last] == 0) p->scalar_side = 2;
    else p->scalar_side = 0;
    return NULL;
}

/* Calls fn(i, ia, ib) for every output element i with the elements of A
 * and B it reads. */
#define BIN_LOOP(p, BODY)                                                                                              \
    do {                                                                                                               \
        int64_t idx_[REF_MAX_RANK] = {0};                                                                              \
        uint64_t ia = 0, ib = 0;                                                                                       \
        for (uint64_t i = 0; i < (p)->n; i++) {                                                                        \
            BODY;                                                                                                      \
            for (int32_t d = (p)->rank - 1; d >= 0; d--) {                                                             \
                ia += (uint64_t)(p)->sa[d];                                                                            \
                ib += (uint64_t)(p)->sb[d];                                                                            \
                if (++idx_[d] < (p)->dims[d]) break;                                                                   \
                ia -= (uint64_t)((p)->sa[d] * (p)->dims[d]);                                                           \
                ib -= (uint64_t)((p)->sb[d] * (p)->dims[d]);                                                           \
                idx_[d] = 0;                                                                                           \
            }                                                                                                          \
        }                                                                                                              \
    } while (0)

typedef struct bin_params {
    const tsr_tensor *a, *b;
    float sa, sb, sc;
    int32_t za, zb, zc, type;
} bin_params;

static tsr_status *bin_params_read(ref_ctx *c, bin_params *q) {
    tsr_status *st = get_q8(c, 0, "A", &q->a);
    if (!st) st = get_q8(c, 3, "B", &q->b);
    if (st) return st;
    q->type = q->a->elem_type;
    if (q->b->elem_type != q->type)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "A is %s but B is %s", rq_type_name(q->type),
                       rq_type_name(q->b->elem_type));
    st = get_scale(c, 1, "A_scale", &q->sa);
    if (!st) st = get_zp(c, 2, "A_zero_point", q->type, &q->za);
    if (!st) st = get_scale(c, 4, "B_scale", &q->sb);
    if (!st) st = get_zp(c, 5, "B_zero_point", q->type, &q->zb);
    if (!st) st = get_scale(c, 6, "C_scale", &q->sc);
    if (!st) st = get_zp(c, 7, "C_zero_point", q->type, &q->zc);
    return st;
}

/* MlasQLinearAddKernelAvx2Helper for one element: P is the kernel's
 * InputA (always a run), Q its InputB (a run, or a scalar folded into
 * the constant part). */
static float qadd_value(int32_t p, float rp, int32_t zp, int32_t q, float rq, int32_t zq, int32_t zc, bool q_scalar) {
    float fixed = (float)zc - (rp * (float)zp + rq * (float)zq);
    if (q_scalar) return fmaf((float)p, rp, fixed + (float)q * rq);
    return fmaf((float)p, rp, fmaf((float)q, rq, fixed));
}

static tsr_status *ms_qlinear_add(ref_ctx *c) {
    bin_params q;
    bin_plan p;
    tsr_status *st = bin_params_read(c, &q);
    if (!st) st = bin_plan_init(c, q.a, q.b, &p);
    tsr_tensor *y;
    if (!st) st = ref_out(c, 0, q.type, p.rank, p.dims, &y);
    if (st) return st;
    const float ra = q.sa / q.sc, rb = q.sb / q.sc;
    const void *ad = q.a->data, *bd = q.b->data;
    int32_t t = q.type;
    if (p.scalar_side == 1) {
        /* ORT passes B's run as the kernel's A and the scalar A as its B. */
        BIN_LOOP(&p,
                 q8_store(t, y->data, i,
                          qadd_value(q8_get(t, bd, ib), rb, q.zb, q8_get(t, ad, ia), ra, q.za, q.zc, true), 0));
    } else {
        bool qs = p.scalar_side == 2;
        BIN_LOOP(
            &p,
            q8_store(t, y->data, i, qadd_value(q8_get(t, ad, ia), ra, q.za, q8_get(t, bd, ib), rb, q.zb, q.zc, qs), 0));
    }
    return NULL;
}

static tsr_status *ms_qlinear_mul(ref_ctx *c) {
    bin_params q;
    bin_plan p;
    tsr_status *st = bin_params_read(c, &q);
    if (!st) st = bin_plan_init(c, q.a, q.b, &p);
    tsr_tensor *y;
    if (!st) st = ref_out(c, 0, q.type, p.rank, p.dims, &y);
    if (st) return st;
    const float r = q.sa * q.sb / q.sc, zc = (float)q.zc;
    const void *ad = q.a->data, *bd = q.b->data;
    int32_t t = q.type;
    BIN_LOOP(&p, {
        int32_t prod = (q8_get(t, ad, ia) - q.za) * (q8_get(t, bd, ib) - q.zb);
        float v = (float)prod * r;
        q8_store(t, y->data, i, v + zc, 0);
    });
    return NULL;
}

/* --- table operators: QLinearSigmoid, QLinearLeakyRelu ------------------- */

/* MlasComputeLogisticF32KernelFma3 (LogisticKernelFma3.S, constants from
 * logistic.cpp) on one value. */
static float mlas_logistic(float x, float unused) {
    (void)unused;
    if (x < -18.0f) x = -18.0f;
    if (x > 18.0f) x = 18.0f;
    float x2 = x * x;
    float p = fmaf(x2, 4.37031012579801e-11f, 1.15627324459942e-07f);
    p = fmaf(x2, p, 6.08574864600143e-05f);
    p = fmaf(x2, p, 8.51377133304701e-03f);
    p = fmaf(x2, p, 2.48287947061529e-01f);
    float q = fmaf(x2, 6.10247389755681e-13f, 5.76102136993427e-09f);
    q = fmaf(x2, q, 6.29106785017040e-06f);
    q = fmaf(x2, q, 1.70198817374094e-03f);
    q = fmaf(x2, q, 1.16817656904453e-01f);
    q = fmaf(x2, q, 9.93151921023180e-01f);
    p = x * p;
    float v = p / q + 0.5f;
    return v < 0.0f ? 0.0f : v;
}

static float leaky_relu(float v, float alpha) { return v >= 0.0f ? v : alpha * v; }

static tsr_status *table_op(ref_ctx *c, ms_fn fn, float arg) {
    unary_q u = {0};
    tsr_status *st = get_unary_q(c, &u);
    const tsr_tensor *x = u.x;
    tsr_tensor *y;
    if (!st) st = ref_out(c, 0, x->elem_type, x->rank, x->dims, &y);
    if (st) return st;
    uint8_t table[256];
    build_table(x->elem_type, u.xs, u.zx, u.ys, u.zy, fn, arg, table);
    uint64_t n = ref_numel(x);
    const uint8_t *xb = x->data;
    uint8_t *yb = y->data;
    for (uint64_t i = 0; i < n; i++) yb[i] = table[xb[i]];
    return NULL;
}

static tsr_status *ms_qlinear_sigmoid(ref_ctx *c) { return table_op(c, mlas_logistic, 0.0f); }
static tsr_status *ms_qlinear_leaky_relu(ref_ctx *c) {
    return table_op(c, leaky_relu, ref_attr_float(c, "alpha", 0.01f));
}

/* --- QLinearConcat ------------------------------------------------------ */

static tsr_status *ms_qlinear_concat(ref_ctx *c) {
    if (c->n_in < 5 || (c->n_in - 2) % 3 != 0)
        return ref_err(c, TSR_ERR_INVALID_MODEL,
                       "inputs must be Y_scale, Y_zero_point and (X, scale, zero point) "
                       "triples");
    size_t count = (c->n_in - 2) / 3;
    float ys;
    tsr_status *st = get_scale(c, 0, "Y_scale", &ys);
    const tsr_tensor *yzt = ref_in(c, 1);
    if (!st) st = rq_check_tensor(c, yzt, "Y_zero_point");
    if (st) return st;
    int32_t t = yzt->elem_type, zy;
    if (!is_q8(t)) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "Y_zero_point is %s", rq_type_name(t));
    st = get_zp(c, 1, "Y_zero_point", t, &zy);
    if (st) return st;
    const tsr_tensor *x0 = NULL;
    st = get_q8(c, 2, "input 0", &x0);
    if (st) return st;
    int64_t axis;
    if (!ref_attr_has(c, "axis") || !ref_axis(ref_attr_int(c, "axis", 0), x0->rank, &axis))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis is missing or out of range for rank %d", (int)x0->rank);
    int64_t dims[REF_MAX_RANK];
    memcpy(dims, x0->dims, sizeof(int64_t) * (size_t)x0->rank);
    dims[axis] = 0;
    for (size_t k = 0; k < count; k++) {
        const tsr_tensor *x = NULL;
        char what[32];
        snprintf(what, sizeof what, "input %zu", k);
        st = get_q8(c, 2 + 3 * k, what, &x);
        if (st) return st;
        if (x->elem_type != t || x->rank != x0->rank)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input %zu has another type or rank than the output", k);
        for (int32_t d = 0; d < x->rank; d++)
            if (d != axis && x->dims[d] != x0->dims[d])
                return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input %zu differs in dimension %d", k, (int)d);
        dims[axis] += x->dims[axis];
    }
    tsr_tensor *y;
    st = ref_out(c, 0, t, x0->rank, dims, &y);
    if (st) return st;
    uint64_t outer = 1, inner = 1;
    for (int32_t d = 0; d < axis; d++) outer *= (uint64_t)dims[d];
    for (int32_t d = (int32_t)axis + 1; d < x0->rank; d++) inner *= (uint64_t)dims[d];
    uint64_t out_pitch = (uint64_t)dims[axis] * inner, offset = 0;
    uint8_t *yb = y->data;
    for (size_t k = 0; k < count; k++) {
        const tsr_tensor *x = ref_in(c, 2 + 3 * k);
        float xs;
        int32_t zx;
        st = get_scale(c, 3 + 3 * k, "an input scale", &xs);
        if (!st) st = get_zp(c, 4 + 3 * k, "an input zero point", t, &zx);
        if (st) return st;
        bool copy = xs == ys && zx == zy;
        uint8_t table[256];
        if (!copy) build_table(t, xs, zx, ys, zy, NULL, 0.0f, table);
        uint64_t pitch = (uint64_t)x->dims[axis] * inner;
        const uint8_t *xb = x->data;
        for (uint64_t o = 0; o < outer; o++) {
            uint8_t *dst = yb + o * out_pitch + offset;
            const uint8_t *src = xb + o * pitch;
            if (copy) memcpy(dst, src, (size_t)pitch);
            else
                for (uint64_t j = 0; j < pitch; j++) dst[j] = table[src[j]];
        }
        offset += pitch;
    }
    return NULL;
}

/* --- pooling ------------------------------------------------------------ */

/* MlasQLinearGlobalAveragePoolNchw/Nhwc: `channels` outputs, each the
 * average of `image` values `stride` apart, block after block. */
static void global_pool(int32_t t, const void *x, void *y, uint64_t blocks, uint64_t channels, uint64_t image,
                        bool channels_last, float xs, int32_t zx, float ys, int32_t zy) {
    float scale = xs / (ys * (float)(int32_t)image);
    for (uint64_t b = 0; b < blocks; b++) {
        for (uint64_t ch = 0; ch < channels; ch++) {
            int64_t acc = -(int64_t)zx * (int64_t)image;
            for (uint64_t k = 0; k < image; k++) {
                uint64_t at = channels_last ? (b * image + k) * channels + ch : (b * channels + ch) * image + k;
                acc += q8_get(t, x, (size_t)at);
            }
            q8_store(t, y, (size_t)(b * channels + ch), (float)(int32_t)acc * scale, zy);
        }
    }
}

typedef struct pool_io {
    const tsr_tensor *x;
    float xs, ys;
    int32_t zx, zy;
    bool channels_last;
    int64_t n, ch, nsp;
    int64_t in[REF_MAX_RANK]; /* spatial extents */
} pool_io;

static tsr_status *pool_io_read(ref_ctx *c, pool_io *p) {
    unary_q u = {0};
    tsr_status *st = get_unary_q(c, &u);
    if (st) return st;
    p->x = u.x, p->xs = u.xs, p->ys = u.ys, p->zx = u.zx, p->zy = u.zy;
    const tsr_tensor *x = p->x;
    if (x->rank < 3) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X has rank %d; at least 3 needed", (int)x->rank);
    p->channels_last = ref_attr_int(c, "channels_last", 0) != 0;
    p->n = x->dims[0];
    p->ch = p->channels_last ? x->dims[x->rank - 1] : x->dims[1];
    p->nsp = x->rank - 2;
    for (int64_t d = 0; d < p->nsp; d++) p->in[d] = x->dims[p->channels_last ? 1 + d : 2 + d];
    return NULL;
}

/* Output dims for spatial extents `sp` in the layout of p. */
static void pool_out_dims(const pool_io *p, const int64_t *sp, int64_t *dims) {
    dims[0] = p->n;
    for (int64_t d = 0; d < p->nsp; d++) dims[(p->channels_last ? 1 : 2) + d] = sp[d];
    dims[p->channels_last ? p->nsp + 1 : 1] = p->ch;
}

static tsr_status *ms_qlinear_global_average_pool(ref_ctx *c) {
    pool_io p;
    tsr_status *st = pool_io_read(c, &p);
    if (st) return st;
    int64_t ones[REF_MAX_RANK] = {0}, dims[REF_MAX_RANK];
    uint64_t image = 1;
    for (int64_t d = 0; d < p.nsp; d++) {
        ones[d] = 1;
        image *= (uint64_t)p.in[d];
    }
    pool_out_dims(&p, ones, dims);
    tsr_tensor *y;
    st = ref_out(c, 0, p.x->elem_type, p.x->rank, dims, &y);
    if (st) return st;
    if (image == 0 || image >= 0x1000000)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "image of %llu elements", (unsigned long long)image);
    global_pool(p.x->elem_type, p.x->data, y->data, (uint64_t)p.n, (uint64_t)p.ch, image, p.channels_last, p.xs, p.zx,
                p.ys, p.zy);
    return NULL;
}

static tsr_status *pool_ints(ref_ctx *c, const char *name, int64_t n, int64_t lo, int64_t dflt, int64_t *out) {
    const int64_t *v;
    size_t cnt = ref_attr_ints(c, name, &v);
    for (int64_t i = 0; i < n; i++) out[i] = dflt;
    if (!v) return NULL;
    if ((int64_t)cnt != n)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "attribute %s has %zu values, expected %lld", name, cnt,
                       (long long)n);
    for (int64_t i = 0; i < n; i++) {
        if (v[i] < lo || v[i] > ((int64_t)1 << 31))
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "attribute %s value %lld is out of range", name,
                           (long long)v[i]);
        out[i] = v[i];
    }
    return NULL;
}

static tsr_status *ms_qlinear_average_pool(ref_ctx *c) {
    pool_io p;
    tsr_status *st = pool_io_read(c, &p);
    if (st) return st;
    int64_t nsp = p.nsp, k[REF_MAX_RANK], s[REF_MAX_RANK], pads[2 * REF_MAX_RANK], out[REF_MAX_RANK];
    if (!ref_attr_has(c, "kernel_shape")) return ref_err(c, TSR_ERR_INVALID_MODEL, "kernel_shape is required");
    st = pool_ints(c, "kernel_shape", nsp, 1, 1, k);
    if (!st) st = pool_ints(c, "strides", nsp, 1, 1, s);
    if (!st) st = pool_ints(c, "pads", 2 * nsp, 0, 0, pads);
    if (st) return st;
    const char *auto_pad = ref_attr_str(c, "auto_pad", "NOTSET");
    for (int64_t d = 0; d < nsp; d++) {
        int64_t in = p.in[d];
        if (strcmp(auto_pad, "VALID") == 0) {
            pads[d] = pads[nsp + d] = 0;
        } else if (strcmp(auto_pad, "SAME_UPPER") == 0 || strcmp(auto_pad, "SAME_LOWER") == 0) {
            int64_t o = (in + s[d] - 1) / s[d];
            int64_t need = (o - 1) * s[d] + k[d] - in;
            if (need < 0) need = 0;
            pads[d] = strcmp(auto_pad, "SAME_LOWER") == 0 ? (need + 1) / 2 : need / 2;
            pads[nsp + d] = need - pads[d];
        } else if (strcmp(auto_pad, "NOTSET") != 0) {
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "unknown auto_pad '%s'", auto_pad);
        }
        int64_t span = in + pads[d] + pads[nsp + d] - k[d];
        if (span < 0) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "kernel larger than the padded input");
        out[d] = span / s[d] + 1;
    }
    int64_t dims[REF_MAX_RANK];
    pool_out_dims(&p, out, dims);
    tsr_tensor *y;
    st = ref_out(c, 0, p.x->elem_type, p.x->rank, dims, &y);
    if (st) return st;
    int32_t t = p.x->elem_type;
    bool global = true;
    uint64_t image = 1, kernel = 1, outsz = 1;
    for (int64_t d = 0; d < nsp; d++) {
        global = global && k[d] == p.in[d] && pads[d] == 0 && pads[nsp + d] == 0;
        image *= (uint64_t)p.in[d];
        kernel *= (uint64_t)k[d];
        outsz *= (uint64_t)out[d];
    }
    if (global) {
        /* ORT sends a kernel that covers the unpadded image to its global
         * average pool, integer sums and all. */
        global_pool(t, p.x->data, y->data, (uint64_t)p.n, (uint64_t)p.ch, image, p.channels_last, p.xs, p.zx, p.ys,
                    p.zy);
        return NULL;
    }
    bool include_pad = ref_attr_int(c, "count_include_pad", 0) != 0;
    float deq[256];
    for (int i = 0; i < 256; i++) {
        int32_t x = t == TSR_INT8 ? (int32_t)(int8_t)(uint8_t)i : i;
        deq[i] = p.xs * (float)(x - p.zx);
    }
    const uint8_t *xb = p.x->data;
    uint64_t chn = (uint64_t)p.ch;
    int64_t istr[REF_MAX_RANK];
    istr[nsp - 1] = 1;
    for (int64_t d = nsp - 2; d >= 0; d--) istr[d] = istr[d + 1] * p.in[d + 1];
    for (uint64_t b = 0; b < (uint64_t)p.n; b++) {
        for (uint64_t ch = 0; ch < chn; ch++) {
            int64_t o[REF_MAX_RANK] = {0};
            for (uint64_t oi = 0; oi < outsz; oi++) {
                if (ref_work(c, (int64_t)kernel)) return ref_stopped(c);
                int64_t lo[REF_MAX_RANK], hi[REF_MAX_RANK], w[REF_MAX_RANK];
                int64_t count = 1;
                bool empty = false;
                for (int64_t d = 0; d < nsp; d++) {
                    lo[d] = o[d] * s[d] - pads[d];
                    hi[d] = lo[d] + k[d] < p.in[d] ? lo[d] + k[d] : p.in[d];
                    if (lo[d] < 0) lo[d] = 0;
                    if (hi[d] <= lo[d]) empty = true;
                    count *= hi[d] - lo[d];
                    w[d] = lo[d];
                }
                float sum = 0.0f;
                while (!empty) {
                    int64_t at = 0;
                    for (int64_t d = 0; d < nsp; d++) at += w[d] * istr[d];
                    uint64_t e = p.channels_last ? ((b * image) + (uint64_t)at) * chn + ch
                                                 : (b * chn + ch) * image + (uint64_t)at;
                    sum += deq[xb[e]];
                    int64_t d = nsp - 1;
                    for (; d >= 0; d--) {
                        if (++w[d] < hi[d]) break;
                        w[d] = lo[d];
                    }
                    if (d < 0) break;
                }
                if (empty) count = 0;
                sum /= (float)(include_pad ? (int64_t)kernel : count);
                uint64_t oat = 0;
                for (int64_t d = 0; d < nsp; d++) oat = oat * (uint64_t)out[d] + (uint64_t)o[d];
                uint64_t ye = p.channels_last ? (b * outsz + oat) * chn + ch : (b * chn + ch) * outsz + oat;
                q8_store(t, y->data, (size_t)ye, sum / p.ys + (float)p.zy, 0);
                for (int64_t d = nsp - 1; d >= 0; d--) {
                    if (++o[d] < out[d]) break;
                    o[d] = 0;
                }
            }
        }
    }
    return NULL;
}

/* --- QLinearSoftmax ----------------------------------------------------- */

static tsr_status *ms_qlinear_softmax(ref_ctx *c) {
    unary_q u = {0};
    tsr_status *st = get_unary_q(c, &u);
    const tsr_tensor *x = u.x;
    float xs = u.xs, ys = u.ys;
    int32_t zy = u.zy; /* x_zero_point cancels: the table is of differences */
    tsr_tensor *y;
    if (!st) st = ref_out(c, 0, x->elem_type, x->rank, x->dims, &y);
    if (st) return st;
    int64_t opset = ref_attr_int(c, "opset", 1);
    int64_t axis;
    if (x->rank == 0 || !ref_axis(ref_attr_int(c, "axis", opset < 13 ? 1 : -1), x->rank, &axis))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis out of range for rank %d", (int)x->rank);
    uint64_t outer = 1, dlen = 1, inner = 1;
    for (int32_t d = 0; d < x->rank; d++) {
        uint64_t e = (uint64_t)x->dims[d];
        if (d < axis) outer *= e;
        else if (d == axis || opset < 13) dlen *= e;
        else inner *= e;
    }
    if (outer * dlen * inner == 0) return NULL;
    int32_t t = x->elem_type;
    bool is_signed = t == TSR_INT8;
    /* QlinearBuildLookupTableUint32 with EXP_OUT_DTYPE float. */
    float table[256];
    double shift = log((double)(FLT_MAX / (float)dlen));
    shift = (shift - 5.0 > 0.0 ? shift - 5.0 : 0.0) / (double)xs;
    for (int32_t i = 0; i < 256; i++) {
        double e = exp(((double)i - 255 + shift) * (double)xs);
        table[(uint8_t)(is_signed ? i - 128 : i)] = (float)e;
    }
    const float yscale = floorf(1.0f / ys);
    for (uint64_t o = 0; o < outer; o++) {
        for (uint64_t in = 0; in < inner; in++) {
            uint64_t base = o * dlen * inner + in;
            int32_t xmax = q8_min(t);
            for (uint64_t j = 0; j < dlen; j++) {
                int32_t v = q8_get(t, x->data, (size_t)(base + j * inner));
                if (v > xmax) xmax = v;
            }
            /* Index of x in the table: x + 255 - max as a byte (signed: the
             * table is stored shifted by 128). */
            int32_t adj = is_signed ? 127 - xmax : 255 - xmax;
            float sum = 0.0f;
            for (uint64_t j = 0; j < dlen; j++)
                sum += table[(uint8_t)(q8_get(t, x->data, (size_t)(base + j * inner)) + adj)];
            for (uint64_t j = 0; j < dlen; j++) {
                size_t at = (size_t)(base + j * inner);
                float v = table[(uint8_t)(q8_get(t, x->data, at) + adj)];
                if (sum == 0.0f) q8_set(t, y->data, at, zy);
                else q8_store(t, y->data, at, v * yscale / sum, zy);
            }
        }
    }
    return NULL;
}

/* --- QGemm, MatMulIntegerToFloat, DynamicQuantizeMatMul ----------------- */

/* acc[m][n] = sum over k of (a - za)(b - zb[n]), exact. a is M x K (or
 * K x M when ta), b K x N (or N x K when tb). */
static tsr_status *int_gemm(ref_ctx *c, int32_t at, const void *a, bool ta, int32_t za, int32_t bt, const void *b,
                            bool tb, const int32_t *zb, int64_t m, int64_t n, int64_t k, int64_t *acc) {
    for (int64_t i = 0; i < m; i++) {
        if (ref_work(c, n * k)) return ref_stopped(c);
        for (int64_t j = 0; j < n; j++) {
            int64_t s = 0;
            for (int64_t l = 0; l < k; l++) {
                int32_t av = q8_get(at, a, (size_t)(ta ? l * m + i : i * k + l)) - za;
                int32_t bv = q8_get(bt, b, (size_t)(tb ? j * k + l : l * n + j)) - zb[j];
                s += (int64_t)av * bv;
            }
            acc[i * n + j] = s;
        }
    }
    return NULL;
}

/* A scale or zero point of B: one value, or one per column (N). */
static tsr_status *per_column(ref_ctx *c, size_t i, const char *what, int64_t n, bool is_scale, int32_t type, float *fs,
                              int32_t *zs) {
    const tsr_tensor *t = ref_in(c, i);
    if (!t) {
        if (is_scale) return ref_err(c, TSR_ERR_INVALID_MODEL, "%s is required", what);
        for (int64_t j = 0; j < n; j++) zs[j] = 0;
        return NULL;
    }
    tsr_status *st = rq_check_tensor(c, t, what);
    if (st) return st;
    uint64_t cnt = ref_numel(t);
    if (t->rank > 1 || (cnt != 1 && cnt != (uint64_t)n))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s must have 1 or %lld elements", what, (long long)n);
    if (t->elem_type != (is_scale ? TSR_FLOAT : type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s has element type %s", what, rq_type_name(t->elem_type));
    for (int64_t j = 0; j < n; j++) {
        size_t e = cnt == 1 ? 0 : (size_t)j;
        if (is_scale) fs[j] = ((const float *)t->data)[e];
        else zs[j] = q8_get(type, t->data, e);
    }
    return NULL;
}

static tsr_status *ms_qgemm(ref_ctx *c) {
    const tsr_tensor *a = NULL, *b = NULL;
    tsr_status *st = get_q8(c, 0, "A", &a);
    if (!st) st = get_q8(c, 3, "B", &b);
    if (st) return st;
    if (a->rank != 2 || b->rank != 2) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "A and B must be matrices");
    bool ta = ref_attr_int(c, "transA", 0) != 0, tb = ref_attr_int(c, "transB", 0) != 0;
    int64_t m = ta ? a->dims[1] : a->dims[0], k = ta ? a->dims[0] : a->dims[1];
    int64_t n = tb ? b->dims[0] : b->dims[1];
    if ((tb ? b->dims[1] : b->dims[0]) != k)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "A has %lld columns, B %lld rows", (long long)k,
                       (long long)(tb ? b->dims[1] : b->dims[0]));
    float sa, alpha = ref_attr_float(c, "alpha", 1.0f), ys = 1.0f;
    int32_t za, zy = 0;
    st = get_scale(c, 1, "a_scale", &sa);
    if (!st) st = get_zp(c, 2, "a_zero_point", a->elem_type, &za);
    if (st) return st;
    const tsr_tensor *bias = ref_in(c, 6), *yst = ref_in(c, 7), *yzt = ref_in(c, 8);
    if (yst) st = get_scale(c, 7, "y_scale", &ys);
    int32_t out_type = TSR_FLOAT;
    if (!st && yzt) {
        st = rq_check_tensor(c, yzt, "y_zero_point");
        if (!st && !is_q8(yzt->elem_type))
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "y_zero_point is %s", rq_type_name(yzt->elem_type));
        if (!st) out_type = yzt->elem_type;
        if (!st) st = get_zp(c, 8, "y_zero_point", out_type, &zy);
    }
    if (!st && bias) {
        st = rq_check_tensor(c, bias, "C");
        if (!st && bias->elem_type != TSR_INT32) st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "C must be int32");
    }
    if (st) return st;
    /* C broadcast: one value, (N) or (1, N), (M, 1), (M, N). */
    uint64_t bn = bias ? ref_numel(bias) : 0;
    int bias_kind = 0; /* 1 scalar, 2 per column, 3 per row, 4 full */
    if (bias) {
        if (bn == 1) bias_kind = 1;
        else if ((bias->rank == 1 || (bias->rank == 2 && bias->dims[0] == 1)) && bn == (uint64_t)n) bias_kind = 2;
        else if (bias->rank == 2 && bias->dims[1] == 1 && bias->dims[0] == m) bias_kind = 3;
        else if (bias->rank == 2 && bias->dims[0] == m && bias->dims[1] == n) bias_kind = 4;
        else
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "C does not broadcast to %lld x %lld", (long long)m,
                           (long long)n);
    }
    float *sb = malloc(sizeof(float) * (size_t)(n ? n : 1));
    int32_t *zb = malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    int64_t *acc = malloc(sizeof(int64_t) * (size_t)(m * n > 0 ? m * n : 1));
    tsr_tensor *y = NULL;
    if (!sb || !zb || !acc) st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    if (!st) st = per_column(c, 4, "b_scale", n, true, 0, sb, NULL);
    if (!st) st = per_column(c, 5, "b_zero_point", n, false, b->elem_type, NULL, zb);
    if (!st) st = int_gemm(c, a->elem_type, a->data, ta, za, b->elem_type, b->data, tb, zb, m, n, k, acc);
    int64_t dims[2] = {m, n};
    if (!st) st = ref_out(c, 0, out_type, 2, dims, &y);
    if (!st) {
        const int32_t *cb = bias ? bias->data : NULL;
        for (int64_t j = 0; j < n; j++) {
            sb[j] = alpha * sa * sb[j];
            if (yst) sb[j] /= ys;
        }
        for (int64_t i = 0; i < m; i++) {
            for (int64_t j = 0; j < n; j++) {
                int64_t v = acc[i * n + j];
                if (bias_kind == 1) v += cb[0];
                else if (bias_kind == 2) v += cb[j];
                else if (bias_kind == 3) v += cb[i];
                else if (bias_kind == 4) v += cb[i * n + j];
                float f = (float)(int32_t)v * sb[j];
                if (out_type == TSR_FLOAT) ((float *)y->data)[i * n + j] = f;
                else q8_store(out_type, y->data, (size_t)(i * n + j), f, zy);
            }
        }
    }
    free(sb);
    free(zb);
    free(acc);
    return st;
}

/* MatMulIntegerToFloat's and DynamicQuantizeMatMul's common part:
 * numpy matmul of A (rank >= 2, batch dims broadcast against a 2-D B
 * only) with B [K, N]; y = float(acc) * (sa * sb[n]) + bias[n]. */
static tsr_status *matmul_to_float(ref_ctx *c, int32_t at, const void *a, const tsr_tensor *ashape, float sa,
                                   int32_t za, const tsr_tensor *b, const float *sb, const int32_t *zb,
                                   const tsr_tensor *bias) {
    if (ashape->rank < 1 || b->rank != 2)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "A must have rank >= 1 and B rank 2");
    int64_t k = ashape->dims[ashape->rank - 1], n = b->dims[1];
    if (b->dims[0] != k)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "A has %lld columns, B %lld rows", (long long)k,
                       (long long)b->dims[0]);
    if (bias && (bias->elem_type != TSR_FLOAT || ref_numel(bias) != (uint64_t)n))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "bias must be float with N = %lld elements", (long long)n);
    int64_t m = 1, dims[REF_MAX_RANK];
    for (int32_t d = 0; d + 1 < ashape->rank; d++) {
        m *= ashape->dims[d];
        dims[d] = ashape->dims[d];
    }
    dims[ashape->rank - 1] = n;
    tsr_tensor *y;
    tsr_status *st = ref_out(c, 0, TSR_FLOAT, ashape->rank, dims, &y);
    int64_t *acc = st ? NULL : malloc(sizeof(int64_t) * (size_t)(m * n > 0 ? m * n : 1));
    if (!st && !acc) st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    if (!st) st = int_gemm(c, at, a, false, za, b->elem_type, b->data, false, zb, m, n, k, acc);
    if (!st) {
        const float *bd = bias ? bias->data : NULL;
        for (int64_t i = 0; i < m; i++) {
            for (int64_t j = 0; j < n; j++) {
                float s = sa * sb[j];
                float v = (float)(int32_t)acc[i * n + j] * s;
                if (bd) v += bd[j];
                ((float *)y->data)[i * n + j] = v;
            }
        }
    }
    free(acc);
    return st;
}

/* B's scale (input si) and zero point (input zi): one value or one per
 * column; then matmul_to_float. */
static tsr_status *b_params_and_matmul(ref_ctx *c, int32_t at, const void *a, const tsr_tensor *ashape, float sa,
                                       int32_t za, size_t bi, size_t si, size_t zi, size_t biasi) {
    const tsr_tensor *b = NULL;
    tsr_status *st = get_q8(c, bi, "B", &b);
    if (st) return st;
    if (b->rank != 2) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "B must be a matrix");
    int64_t n = b->dims[1];
    float *sb = malloc(sizeof(float) * (size_t)(n ? n : 1));
    int32_t *zb = malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    if (!sb || !zb) st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    if (!st) st = per_column(c, si, "b_scale", n, true, 0, sb, NULL);
    if (!st) st = per_column(c, zi, "b_zero_point", n, false, b->elem_type, NULL, zb);
    const tsr_tensor *bias = ref_in(c, biasi);
    if (!st && bias) st = rq_check_tensor(c, bias, "bias");
    if (!st) st = matmul_to_float(c, at, a, ashape, sa, za, b, sb, zb, bias);
    free(sb);
    free(zb);
    return st;
}

static tsr_status *ms_matmul_integer_to_float(ref_ctx *c) {
    const tsr_tensor *a = NULL;
    float sa;
    int32_t za;
    tsr_status *st = get_q8(c, 0, "A", &a);
    if (!st) st = get_scale(c, 2, "a_scale", &sa);
    if (!st) st = get_zp(c, 4, "a_zero_point", a->elem_type, &za);
    if (st) return st;
    return b_params_and_matmul(c, a->elem_type, a->data, a, sa, za, 1, 3, 5, 6);
}

static tsr_status *ms_dynamic_quantize_matmul(ref_ctx *c) {
    const tsr_tensor *a = ref_in(c, 0);
    tsr_status *st = rq_check_tensor(c, a, "A");
    if (st) return st;
    if (a->elem_type != TSR_FLOAT) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "A must be float");
    uint64_t n = ref_numel(a);
    const float *af = a->data;
    /* GetQuantizationParameter: min and max widened to include 0. */
    float lo = 0.0f, hi = 0.0f;
    for (uint64_t i = 0; i < n; i++) {
        if (af[i] < lo) lo = af[i];
        if (af[i] > hi) hi = af[i];
    }
    float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
    float zpf = -lo / scale;
    zpf = zpf < 0.0f ? 0.0f : zpf > 255.0f ? 255.0f : zpf;
    int32_t za = (int32_t)nearbyintf(zpf);
    uint8_t *aq = malloc((size_t)(n ? n : 1));
    if (!aq) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    for (uint64_t i = 0; i < n; i++) q8_quantize(TSR_UINT8, aq, (size_t)i, af[i], scale, za);
    st = b_params_and_matmul(c, TSR_UINT8, aq, a, scale, za, 1, 2, 3, 4);
    free(aq);
    return st;
}

/* --- claim-time checks -------------------------------------------------- */

/* The element count of node input i when its shape is known, else -1. */
static int64_t known_numel(const tsr_host_api *h, const tsr_node *node, size_t i) {
    const tsr_value_info *v = tsr_util_node_input(h, node, i);
    if (!v) return -1;
    const tsr_tensor *k = h->value_constant(v);
    if (k) return (int64_t)ref_numel(k);
    int32_t r = h->value_rank(v);
    if (r < 0) return -1;
    int64_t n = 1;
    for (int32_t d = 0; d < r; d++) {
        int64_t e = h->value_dim(v, d);
        if (e < 0) return -1;
        n *= e;
    }
    return n;
}

static bool input_present(const tsr_host_api *h, const tsr_node *node, size_t i) {
    return tsr_util_node_input(h, node, i) != NULL;
}

static int32_t input_type(const tsr_host_api *h, const tsr_node *node, size_t i) {
    const tsr_value_info *v = tsr_util_node_input(h, node, i);
    return v ? h->value_elem_type(v) : 0;
}

/* Declines unless input i (when present and known) is uint8 or int8. */
static int want_q8(const tsr_host_api *h, const tsr_node *node, size_t i, const char *what, char *why, size_t n) {
    int32_t t = input_type(h, node, i);
    if (t && !is_q8(t)) {
        snprintf(why, n, "%s %s is %s; only uint8 and int8 are supported", h->node_op_type(node), what,
                 rq_type_name(t));
        return TSR_DECLINE_TYPE;
    }
    return 0;
}

/* Declines when input i, if present, is known not to be one float. */
static int want_scalar(const tsr_host_api *h, const tsr_node *node, size_t i, const char *what, bool is_scale,
                       char *why, size_t n) {
    if (!input_present(h, node, i)) return 0;
    int32_t t = input_type(h, node, i);
    if (is_scale && t && t != TSR_FLOAT) {
        snprintf(why, n, "%s %s is %s; only float scales are supported", h->node_op_type(node), what, rq_type_name(t));
        return TSR_DECLINE_TYPE;
    }
    if (!is_scale && t && !is_q8(t)) {
        snprintf(why, n, "%s %s is %s; only uint8 and int8 are supported", h->node_op_type(node), what,
                 rq_type_name(t));
        return TSR_DECLINE_TYPE;
    }
    int64_t k = known_numel(h, node, i);
    if (k >= 0 && k != 1) {
        snprintf(why, n, "%s %s has %lld elements; only per-tensor (scalar) quantization is supported",
                 h->node_op_type(node), what, (long long)k);
        return TSR_DECLINE_SHAPE;
    }
    return 0;
}

static int check_binary(const tsr_host_api *h, const tsr_node *node, char *why, size_t n) {
    int r = want_q8(h, node, 0, "A", why, n);
    if (!r) r = want_q8(h, node, 3, "B", why, n);
    if (!r) r = want_scalar(h, node, 1, "A_scale", true, why, n);
    if (!r) r = want_scalar(h, node, 2, "A_zero_point", false, why, n);
    if (!r) r = want_scalar(h, node, 4, "B_scale", true, why, n);
    if (!r) r = want_scalar(h, node, 5, "B_zero_point", false, why, n);
    if (!r) r = want_scalar(h, node, 6, "C_scale", true, why, n);
    if (!r) r = want_scalar(h, node, 7, "C_zero_point", false, why, n);
    return r;
}

/* X, x_scale, x_zero_point, y_scale, y_zero_point. */
static int check_unary(const tsr_host_api *h, const tsr_node *node, char *why, size_t n) {
    int r = want_q8(h, node, 0, "X", why, n);
    if (!r) r = want_scalar(h, node, 1, "x_scale", true, why, n);
    if (!r) r = want_scalar(h, node, 2, "x_zero_point", false, why, n);
    if (!r) r = want_scalar(h, node, 3, "y_scale", true, why, n);
    if (!r) r = want_scalar(h, node, 4, "y_zero_point", false, why, n);
    return r;
}

static int check_average_pool(const tsr_host_api *h, const tsr_node *node, char *why, size_t n) {
    int r = check_unary(h, node, why, n);
    if (r) return r;
    if (tsr_util_attr_int(h, node, "ceil_mode", 0) != 0) {
        snprintf(why, n, "QLinearAveragePool with ceil_mode=1 is not supported");
        return TSR_DECLINE_ATTRIBUTE;
    }
    const tsr_attr *dil = h->node_attr_find(node, "dilations");
    if (dil) {
        snprintf(why, n, "QLinearAveragePool with dilations is not supported");
        return TSR_DECLINE_ATTRIBUTE;
    }
    size_t nk = 0;
    tsr_util_attr_ints(h, node, "kernel_shape", &nk);
    if (nk < 1 || nk > 3) {
        snprintf(why, n, "QLinearAveragePool needs a kernel_shape of 1 to 3 axes (has %zu)", nk);
        return TSR_DECLINE_ATTRIBUTE;
    }
    return 0;
}

static int check_concat(const tsr_host_api *h, const tsr_node *node, char *why, size_t n) {
    size_t count = h->node_input_count(node);
    if (count < 5 || (count - 2) % 3 != 0) {
        snprintf(why, n,
                 "QLinearConcat needs Y_scale, Y_zero_point and (X, scale, zero point) triples, has %zu "
                 "inputs",
                 count);
        return TSR_DECLINE_SHAPE;
    }
    if (!h->node_attr_find(node, "axis")) {
        snprintf(why, n, "QLinearConcat without axis");
        return TSR_DECLINE_ATTRIBUTE;
    }
    int r = want_scalar(h, node, 0, "Y_scale", true, why, n);
    if (!r) r = want_scalar(h, node, 1, "Y_zero_point", false, why, n);
    for (size_t i = 2; !r && i < count; i += 3) {
        r = want_q8(h, node, i, "input", why, n);
        if (!r) r = want_scalar(h, node, i + 1, "input scale", true, why, n);
        if (!r) r = want_scalar(h, node, i + 2, "input zero point", false, why, n);
    }
    return r;
}

static int check_softmax(const tsr_host_api *h, const tsr_node *node, char *why, size_t n) {
    int r = check_unary(h, node, why, n);
    if (r) return r;
    if (!h->node_attr_find(node, "opset")) {
        snprintf(why, n, "QLinearSoftmax without its opset attribute");
        return TSR_DECLINE_ATTRIBUTE;
    }
    return 0;
}

/* Declines when B's scale or zero point (inputs si, zi) are known to be
 * neither one value nor one per column. */
static int check_b_params(const tsr_host_api *h, const tsr_node *node, size_t bi, size_t si, size_t zi, bool tb,
                          char *why, size_t n) {
    const tsr_value_info *b = tsr_util_node_input(h, node, bi);
    int64_t cols = -1;
    if (b && h->value_rank(b) == 2) cols = h->value_dim(b, tb ? 0 : 1);
    size_t idx[2] = {si, zi};
    for (int k = 0; k < 2; k++) {
        int64_t cnt = known_numel(h, node, idx[k]);
        if (cnt >= 0 && cnt != 1 && cols >= 0 && cnt != cols) {
            snprintf(why, n, "%s B %s has %lld elements; 1 or one per column (%lld) are supported",
                     h->node_op_type(node), k ? "zero point" : "scale", (long long)cnt, (long long)cols);
            return TSR_DECLINE_SHAPE;
        }
    }
    int32_t st = input_type(h, node, si);
    if (st && st != TSR_FLOAT) {
        snprintf(why, n, "%s b_scale is %s; only float is supported", h->node_op_type(node), rq_type_name(st));
        return TSR_DECLINE_TYPE;
    }
    return 0;
}

static int check_qgemm(const tsr_host_api *h, const tsr_node *node, char *why, size_t n) {
    int r = want_q8(h, node, 0, "A", why, n);
    if (!r) r = want_q8(h, node, 3, "B", why, n);
    if (!r) r = want_scalar(h, node, 1, "a_scale", true, why, n);
    if (!r) r = want_scalar(h, node, 2, "a_zero_point", false, why, n);
    if (!r) r = check_b_params(h, node, 3, 4, 5, tsr_util_attr_int(h, node, "transB", 0) != 0, why, n);
    if (!r) r = want_scalar(h, node, 7, "y_scale", true, why, n);
    if (!r) r = want_scalar(h, node, 8, "y_zero_point", false, why, n);
    if (!r && input_present(h, node, 6) && input_type(h, node, 6) && input_type(h, node, 6) != TSR_INT32) {
        snprintf(why, n, "QGemm C is %s; int32 expected", rq_type_name(input_type(h, node, 6)));
        r = TSR_DECLINE_TYPE;
    }
    return r;
}

static int check_matmul_to_float(const tsr_host_api *h, const tsr_node *node, char *why, size_t n) {
    int r = want_q8(h, node, 0, "A", why, n);
    if (!r) r = want_q8(h, node, 1, "B", why, n);
    if (!r) r = want_scalar(h, node, 2, "a_scale", true, why, n);
    if (!r) r = want_scalar(h, node, 4, "a_zero_point", false, why, n);
    if (!r) r = check_b_params(h, node, 1, 3, 5, false, why, n);
    const tsr_value_info *b = tsr_util_node_input(h, node, 1);
    if (!r && b && h->value_rank(b) >= 0 && h->value_rank(b) != 2) {
        snprintf(why, n, "MatMulIntegerToFloat with B of rank %d; only a 2-D B is supported", (int)h->value_rank(b));
        r = TSR_DECLINE_SHAPE;
    }
    int32_t bt = input_type(h, node, 6);
    if (!r && bt && bt != TSR_FLOAT) {
        snprintf(why, n, "MatMulIntegerToFloat bias is %s; only float is supported", rq_type_name(bt));
        r = TSR_DECLINE_TYPE;
    }
    return r;
}

static int check_dynamic_matmul(const tsr_host_api *h, const tsr_node *node, char *why, size_t n) {
    int32_t at = input_type(h, node, 0);
    if (at && at != TSR_FLOAT) {
        snprintf(why, n, "DynamicQuantizeMatMul A is %s; only float is supported", rq_type_name(at));
        return TSR_DECLINE_TYPE;
    }
    int r = want_q8(h, node, 1, "B", why, n);
    if (!r) r = check_b_params(h, node, 1, 2, 3, false, why, n);
    const tsr_value_info *b = tsr_util_node_input(h, node, 1);
    if (!r && b && h->value_rank(b) >= 0 && h->value_rank(b) != 2) {
        snprintf(why, n, "DynamicQuantizeMatMul with B of rank %d; only a 2-D B is supported", (int)h->value_rank(b));
        r = TSR_DECLINE_SHAPE;
    }
    return r;
}

const ref_op ref_ops_quant_ms[] = {
    {"com.microsoft", "QLinearAdd", 1, ms_qlinear_add, check_binary},
    {"com.microsoft", "QLinearMul", 1, ms_qlinear_mul, check_binary},
    {"com.microsoft", "QLinearSigmoid", 1, ms_qlinear_sigmoid, check_unary},
    {"com.microsoft", "QLinearLeakyRelu", 1, ms_qlinear_leaky_relu, check_unary},
    {"com.microsoft", "QLinearGlobalAveragePool", 1, ms_qlinear_global_average_pool, check_unary},
    {"com.microsoft", "QLinearAveragePool", 1, ms_qlinear_average_pool, check_average_pool},
    {"com.microsoft", "QLinearConcat", 1, ms_qlinear_concat, check_concat},
    {"com.microsoft", "QLinearSoftmax", 1, ms_qlinear_softmax, check_softmax},
    {"com.microsoft", "QGemm", 1, ms_qgemm, check_qgemm},
    {"com.microsoft", "MatMulIntegerToFloat", 1, ms_matmul_integer_to_float, check_matmul_to_float},
    {"com.microsoft", "DynamicQuantizeMatMul", 1, ms_dynamic_quantize_matmul, check_dynamic_matmul},
    {NULL, NULL, 0, NULL, NULL},
};
