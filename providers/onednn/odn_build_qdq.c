/* QuantizeLinear and DequantizeLinear: on their own, and how a QDQ piece is
 * turned into int8 steps.
 *
 * odn_qdq_build runs first for every node of a plan (odn_build_node):
 *   - a DequantizeLinear whose every reader becomes an int8 primitive
 *     (odn_qdq_fuse, odn_fuse_qdq.c) is *deferred*: marked done with its
 *     float output never computed; the int8 primitive reads its integer
 *     input directly, so values between fused layers stay uint8/int8 in
 *     oneDNN memory;
 *   - Conv/MatMul/Gemm/Add are offered to odn_qdq_fuse, which builds the
 *     int8 primitive and absorbs the following Relu and QuantizeLinear;
 *   - any other node reading a deferred DequantizeLinear's output (or a
 *     fused candidate whose primitive oneDNN could not create) first gets
 *     that output computed by the standalone loop below.
 * Standalone, both ops are C loops that follow ONNX exactly: DequantizeLinear
 * (x - zp) * scale in float32; QuantizeLinear x / scale in float32, rounded
 * half to even, plus the zero point, saturated. Scales and zero points are
 * read through their memories each run (the ONNX cases feed them as
 * inputs), per tensor or per axis. */
#include <math.h>
#include <string.h>

#include "odn_quant.h"

typedef struct qdq_loop {
    bool dq;
    bool vector; /* QuantizeLinear's groups of 8 on AVX2 (odn_quantize_row.c) */
    int32_t x_type, y_type, zp_type;
    dnnl_memory_t scale, zp; /* plain; zp may be NULL (0) */
    size_t scale_count, zp_count;
    int64_t outer, axis_len, inner;
    const tsr_node *node;
} qdq_loop;

/* rint(v) + z saturated to [lo, hi], v = x / scale in float32 as ONNX
 * divides: rounding half to even by adding and subtracting 1.5 * 2^23
 * (exact for |v| < 2^22, so v is clamped first; the default rounding mode),
 * which the compiler vectorizes where nearbyintf would be a call. NaN
 * gives the zero point. */
static inline float quantize(float v, float z, float lo, float hi) {
    const float magic = 12582912.0f;
    v = v != v ? 0.0f : v < -4194304.0f ? -4194304.0f : v > 4194304.0f ? 4194304.0f : v;
    float r = (v + magic) - magic + z;
    return r < lo ? lo : r > hi ? hi : r;
}

static tsr_status *qdq_loop_run(const void *vctx, dnnl_memory_t x_mem, dnnl_memory_t y_mem) {
    const qdq_loop *c = vctx;
    const void *x = odn_q_handle(x_mem);
    void *y = odn_q_handle(y_mem);
    const float *s = odn_q_handle(c->scale);
    if (!x || !y || !s) return odn_node_error(c->node, TSR_ERR_PROVIDER, "internal: quantization memory");
    for (int64_t o = 0; o < c->outer; o++) {
        for (int64_t a = 0; a < c->axis_len; a++) {
            float scale = s[c->scale_count == 1 ? 0 : (size_t)a];
            double zp = odn_q_value(c->zp, c->zp_type, c->zp_count <= 1 ? 0 : (size_t)a);
            size_t base = (size_t)((o * c->axis_len + a) * c->inner);
            if (c->dq) {
                float *yf = (float *)y + base, z = (float)zp;
                if (c->x_type == TSR_UINT8) {
                    const uint8_t *xs = (const uint8_t *)x + base;
                    for (int64_t i = 0; i < c->inner; i++) yf[i] = ((float)xs[i] - z) * scale;
                } else if (c->x_type == TSR_INT8) {
                    const int8_t *xs = (const int8_t *)x + base;
                    for (int64_t i = 0; i < c->inner; i++) yf[i] = ((float)xs[i] - z) * scale;
                } else {
                    const int32_t *xs = (const int32_t *)x + base;
                    for (int64_t i = 0; i < c->inner; i++) yf[i] = ((float)xs[i] - z) * scale;
                }
            } else {
                const float *xs = (const float *)x + base;
                float z = (float)zp;
                /* gcc keeps the loops below scalar: groups of 8 on AVX2 */
                int64_t i = c->vector ? (int64_t)odn_quantize_row(xs, (size_t)c->inner, scale, z,
                                                                  c->y_type == TSR_UINT8, (uint8_t *)y + base)
                                      : 0;
                if (c->y_type == TSR_UINT8) {
                    uint8_t *yq = (uint8_t *)y + base;
                    for (; i < c->inner; i++) yq[i] = (uint8_t)quantize(xs[i] / scale, z, 0.0f, 255.0f);
                } else {
                    int8_t *yq = (int8_t *)y + base;
                    for (; i < c->inner; i++) yq[i] = (int8_t)quantize(xs[i] / scale, z, -128.0f, 127.0f);
                }
            }
        }
    }
    return NULL;
}

/* Whether DequantizeLinear `n` reads only initializers (weights, their
 * scales and zero points) and its output is not a piece output. */
static bool is_constant(odn_plan *p, const tsr_node *n) {
    for (size_t k = 0; k < odn_host->node_input_count(n); k++) {
        const odn_value *v = odn_plan_value(p, odn_host->node_input(n, k));
        if (odn_host->node_input(n, k) && (!v || !v->constant)) return false;
    }
    const odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    return y && y->output_index < 0;
}

/* A DequantizeLinear of constant weights computed once, into the piece's
 * constant cache (shared by its plans), its output then a constant like an
 * initializer: the float layer reading it reorders it once too. Without
 * this, a QDQ model run as float (a CPU without VNNI) would dequantize
 * every weight on every run. */
static tsr_status *fold_constant(odn_plan *p, const tsr_node *n, const qdq_loop *c, dnnl_memory_t x_mem,
                                 const odn_value *vx, odn_value *vy) {
    dnnl_memory_desc_t md;
    if (odn_plain_md(&md, vx->rank, vx->dims) != dnnl_success) return odn_node_error(n, TSR_ERR_PROVIDER, "layout");
    size_t nbytes = dnnl_memory_desc_get_size(&md);
    /* keyed by the node too: one weight tensor may be dequantized with
     * other scales elsewhere */
    void *buf = odn_const_cache_find(p->consts, vx->constant->data, n, &vx->md, &md);
    dnnl_memory_t mem;
    tsr_status *s = NULL;
    if (!buf) {
        buf = odn_const_cache_add(p->consts, vx->constant->data, n, &vx->md, &md, nbytes);
        if (!buf) return odn_node_error(n, TSR_ERR_NO_MEMORY, "dequantized weights of %zu bytes", nbytes);
        s = odn_plan_new_mem(p, &md, buf, n, &mem);
        if (!s) s = qdq_loop_run(c, x_mem, mem);
        if (s) return s;
        odn_const_cache_ready(p->consts, buf);
    } else {
        s = odn_plan_new_mem(p, &md, buf, n, &mem);
        if (s) return s;
    }
    tsr_tensor *t = odn_plan_alloc(p, sizeof *t);
    if (!t) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    vy->rank = vx->rank;
    memcpy(vy->dims, vx->dims, sizeof(int64_t) * (size_t)vx->rank);
    *t = (tsr_tensor){.struct_size = sizeof *t,
                      .elem_type = TSR_FLOAT,
                      .rank = vy->rank,
                      .dims = vy->dims,
                      .data = buf,
                      .nbytes = nbytes,
                      .memory_kind = TSR_MEMORY_HOST};
    vy->constant = t;
    vy->elem_type = TSR_FLOAT;
    vy->md = md;
    vy->mem = mem;
    vy->produced = true;
    return NULL;
}

/* The standalone loop for node `n` (QuantizeLinear or DequantizeLinear). */
static tsr_status *build_standalone(odn_plan *p, const tsr_node *n) {
    bool dq = strcmp(odn_host->node_op_type(n), "DequantizeLinear") == 0;
    odn_value *vx = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *vy = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!vx || !vy || !vx->produced || !vx->mem)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: quantization input not ready");
    qdq_loop *c = odn_plan_alloc(p, sizeof *c);
    if (!c) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    memset(c, 0, sizeof *c);
    c->dq = dq;
    c->node = n;
    c->x_type = vx->elem_type;
    c->y_type = vy->elem_type;
    c->vector = !dq && (c->y_type == TSR_UINT8 || c->y_type == TSR_INT8) && odn_quantize_row_supported();
    int32_t st;
    dnnl_memory_t x_mem;
    tsr_status *s = odn_q_input(p, n, 1, &c->scale, &st);
    if (!s) s = odn_q_input(p, n, 2, &c->zp, &c->zp_type);
    if (!s) s = odn_plan_plain_mem(p, vx, n, &x_mem);
    if (s) return s;
    odn_value *vs = odn_plan_value(p, odn_host->node_input(n, 1));
    c->scale_count = (size_t)odn_numel(vs->rank, vs->dims);
    if (c->zp) {
        odn_value *vz = odn_plan_value(p, odn_host->node_input(n, 2));
        c->zp_count = (size_t)odn_numel(vz->rank, vz->dims);
    }
    int64_t axis = odn_attr_int(n, "axis", 1);
    if (axis < 0) axis += vx->rank;
    bool per_axis = c->scale_count > 1 || c->zp_count > 1;
    if (per_axis &&
        (axis < 0 || axis >= vx->rank || (c->scale_count > 1 && (int64_t)c->scale_count != vx->dims[axis]) ||
         (c->zp_count > 1 && (int64_t)c->zp_count != vx->dims[axis])))
        return odn_node_error(n, TSR_ERR_INVALID_MODEL, "scale or zero point does not match the axis");
    if (per_axis) {
        c->outer = odn_numel((int32_t)axis, vx->dims);
        c->axis_len = vx->dims[axis];
        c->inner = odn_numel(vx->rank - (int32_t)axis - 1, vx->dims + axis + 1);
    } else {
        c->outer = 1;
        c->axis_len = 1;
        c->inner = odn_numel(vx->rank, vx->dims);
    }
    if (dq && is_constant(p, n)) return fold_constant(p, n, c, x_mem, vx, vy);
    s = odn_plan_define(p, vy, vx->rank, vx->dims, NULL, n);
    const dnnl_memory_t reads[] = {c->scale, c->zp};
    if (!s) s = odn_plan_add_loop_reading(p, qdq_loop_run, c, x_mem, vy->mem, reads, sizeof reads / sizeof *reads, n);
    return s;
}

/* Index of the node writing `vi`, or -1. */
int odn_qdq_producer(const odn_plan *p, const tsr_value_info *vi) {
    size_t at;
    /* every node output was indexed with its producer when the plan began */
    if (vi && odn_index_get(&p->value_index, vi, &at)) return p->values[at].producer;
    for (size_t i = 0; vi && i < p->node_count; i++)
        for (size_t k = 0; k < odn_host->node_output_count(p->nodes[i]); k++)
            if (odn_host->node_output(p->nodes[i], k) == vi) return (int)i;
    return -1;
}

/* Computes the float output of a deferred DequantizeLinear feeding node
 * `n`'s inputs, for a reader that needs it after all. */
tsr_status *odn_qdq_materialize_inputs(odn_plan *p, const tsr_node *n) {
    for (size_t k = 0; k < odn_host->node_input_count(n); k++) {
        odn_value *v = odn_plan_value(p, odn_host->node_input(n, k));
        if (!v || v->produced) continue;
        int i = odn_qdq_producer(p, v->info);
        if (i < 0 || !p->done[i] || strcmp(odn_host->node_op_type(p->nodes[i]), "DequantizeLinear") != 0) continue;
        tsr_status *s = build_standalone(p, p->nodes[i]);
        if (s) return s;
    }
    return NULL;
}

/* True when every reader of DequantizeLinear `n`'s output inside the piece
 * becomes an int8 primitive that reads n's integer input instead. */
static bool deferrable(odn_plan *p, const tsr_node *n) {
    odn_value *v = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!v || v->output_index >= 0) return false;
    for (size_t i = 0; i < p->node_count; i++) {
        const tsr_node *c = p->nodes[i];
        for (size_t k = 0; k < odn_host->node_input_count(c); k++) {
            if (odn_host->node_input(c, k) != v->info) continue;
            if (p->done[i] || !odn_qdq_fusable(p, c)) return false;
        }
    }
    return true;
}

tsr_status *odn_qdq_build(odn_plan *p, size_t index, bool *handled) {
    const tsr_node *n = p->nodes[index];
    const char *op = odn_host->node_op_type(n);
    *handled = false;
    if (strcmp(op, "DequantizeLinear") == 0) {
        *handled = true;
        return deferrable(p, n) ? NULL : build_standalone(p, n);
    }
    if (strcmp(op, "QuantizeLinear") == 0) {
        tsr_status *s = odn_fake_quant_try(p, index, handled);
        if (s || *handled) return s;
        *handled = true;
        return build_standalone(p, n);
    }
    if (odn_qdq_fusable(p, n)) {
        tsr_status *s = odn_qdq_fuse(p, index, handled);
        if (s || *handled) return s;
    }
    return odn_qdq_materialize_inputs(p, n);
}
