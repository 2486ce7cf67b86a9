/* QuantizeLinear followed only by DequantizeLinear, on a CPU where the
 * layer between QDQ pairs runs in float (no VNNI, odn_fuse_qdq.c): the
 * pair is one float loop, y = (saturate(rint(x / s1) + z1) - z2) * s2,
 * with no integer tensor in between. The values are the two ONNX ops'
 * exactly. With one scale and zero point per tensor the loop is
 * elementwise, so it runs over x's buffer in whatever layout x has (a
 * blocked convolution output without padding): the float layers around it
 * keep oneDNN's fast layouts instead of going through plain NCHW for every
 * Q/DQ loop (a plain max pooling alone took 16 of ResNet-18's 63 ms). */
#include <math.h>
#include <string.h>

#include "odn_quant.h"

typedef struct fake_quant {
    float s1, z1, lo, hi, s2, z2;
    size_t count;
} fake_quant;

/* As odn_build_qdq.c's quantize: rint by the 1.5 * 2^23 trick, which
 * vectorizes; NaN gives the zero point. */
static tsr_status *fake_quant_run(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const fake_quant *f = ctx;
    const float *x = odn_q_handle(src);
    float *y = odn_q_handle(dst);
    if (!x || !y) return odn_host->status_new(TSR_ERR_PROVIDER, "onednn: fake quantization without buffers");
    const float magic = 12582912.0f, s1 = f->s1, z1 = f->z1, lo = f->lo, hi = f->hi, s2 = f->s2, z2 = f->z2;
    ptrdiff_t count = (ptrdiff_t)f->count;
#pragma omp parallel for simd if (count > 65536) schedule(static)
    for (ptrdiff_t i = 0; i < count; i++) {
        float v = x[i] / s1;
        v = v != v ? 0.0f : v < -4194304.0f ? -4194304.0f : v > 4194304.0f ? 4194304.0f : v;
        float q = (v + magic) - magic + z1;
        q = q < lo ? lo : q > hi ? hi : q;
        y[i] = (q - z2) * s2;
    }
    return NULL;
}

/* A per-tensor constant scale (k = 1) or zero point (k = 2) of `n`, as a
 * float; false when it is not one constant value. A missing zero point
 * is 0. */
static bool scalar_param(odn_plan *p, const tsr_node *n, size_t k, float *out) {
    if (k >= odn_host->node_input_count(n) || !odn_host->node_input(n, k)) {
        *out = 0.0f;
        return k == 2;
    }
    const odn_value *v = odn_plan_value(p, odn_host->node_input(n, k));
    if (!v || !v->constant || odn_numel(v->rank, v->dims) != 1 || !v->constant->data) return false;
    const void *d = v->constant->data;
    switch (v->constant->elem_type) {
    case TSR_FLOAT: *out = *(const float *)d; return true;
    case TSR_UINT8: *out = *(const uint8_t *)d; return true;
    case TSR_INT8: *out = *(const int8_t *)d; return true;
    default: return false;
    }
}

/* Whether every reader of DequantizeLinear `dq`'s output becomes an int16
 * layer or int8 primitive reading the integers (odn_qdq_i16.c,
 * odn_fuse_qdq.c): then the QuantizeLinear must write them. */
static bool integer_readers(odn_plan *p, const tsr_node *dq) {
    odn_value *v = odn_plan_value(p, odn_host->node_output(dq, 0));
    if (!v || v->output_index >= 0) return false;
    bool any = false;
    for (size_t i = 0; i < p->node_count; i++) {
        const tsr_node *c = p->nodes[i];
        for (size_t k = 0; k < odn_host->node_input_count(c); k++) {
            if (odn_host->node_input(c, k) != v->info) continue;
            if (p->done[i] || !odn_qdq_fusable(p, c)) return false;
            any = true;
        }
    }
    return any;
}

tsr_status *odn_fake_quant_try(odn_plan *p, size_t index, bool *handled) {
    const tsr_node *q = p->nodes[index];
    *handled = false;
    if (p->int8_primitives) return NULL; /* there the pair feeds int8 primitives */
    odn_value *x = odn_plan_value(p, odn_host->node_input(q, 0));
    odn_value *mid = odn_plan_value(p, odn_host->node_output(q, 0));
    const tsr_node *dq = mid ? odn_plan_sole_consumer(p, mid) : NULL;
    if (!x || !x->produced || !x->mem || !dq || strcmp(odn_host->node_op_type(dq), "DequantizeLinear") != 0 ||
        odn_host->node_input(dq, 0) != mid->info)
        return NULL;
    if (odn_i16_usable(p) && integer_readers(p, dq)) return NULL;
    odn_value *y = odn_plan_value(p, odn_host->node_output(dq, 0));
    fake_quant f;
    int32_t qt = mid->elem_type;
    if (!y || (qt != TSR_UINT8 && qt != TSR_INT8) || !scalar_param(p, q, 1, &f.s1) || !scalar_param(p, q, 2, &f.z1) ||
        !scalar_param(p, dq, 1, &f.s2) || !scalar_param(p, dq, 2, &f.z2))
        return NULL;
    /* a piece output is plain, so x must be too */
    bool keep = odn_md_flat_f32(&x->md) && (y->output_index < 0 || x->md.format_desc.blocking.inner_nblks == 0);
    dnnl_memory_t src = x->mem;
    tsr_status *s = keep ? NULL : odn_plan_plain_mem(p, x, q, &src);
    if (s) return s;
    f.lo = qt == TSR_UINT8 ? 0.0f : -128.0f;
    f.hi = qt == TSR_UINT8 ? 255.0f : 127.0f;
    f.count = (size_t)odn_numel(x->rank, x->dims);
    fake_quant *c = odn_plan_alloc(p, sizeof *c);
    if (!c) return odn_node_error(q, TSR_ERR_NO_MEMORY, "out of memory");
    *c = f;
    s = odn_plan_define(p, y, x->rank, x->dims, keep ? &x->md : NULL, dq);
    if (!s) s = odn_plan_add_loop(p, fake_quant_run, c, src, y->mem, q);
    if (s) return s;
    p->done[odn_plan_node_index(p, dq)] = true;
    *handled = true;
    return NULL;
}
