/* Scalars, rounding and operand access for the int8 builders. */
#include <math.h>
#include <string.h>

#include "odn_quant.h"

bool odn_int8_exact(void) {
    /* ISA values are cumulative bit masks. Without VNNI, oneDNN multiplies
     * u8 x s8 with vpmaddubsw, whose int16 pair sums saturate (255 * -128 * 2
     * does not fit), so its int32 sums would not be exact. */
    unsigned isa = (unsigned)dnnl_get_effective_cpu_isa();
    unsigned avx512_vnni = (unsigned)dnnl_cpu_isa_avx512_core_vnni, avx2_vnni = (unsigned)dnnl_cpu_isa_avx2_vnni;
    return (isa & avx512_vnni) == avx512_vnni || (isa & avx2_vnni) == avx2_vnni;
}

/* Without VNNI, vpmaddubsw sums two u8 x s8 products into 16 bits:
 * a0*w0 + a1*w1 with a <= 255 fits (<= 32767) for any activations when
 * |w0| + |w1| <= 128, which every weight within [-64, 64] guarantees, in
 * whatever pairs oneDNN forms (s8 activations are shifted to u8 by +128,
 * so the same bound holds). ONNX Runtime's quantizer writes such weights
 * with reduce_range, the setting its documentation gives for AVX2 CPUs. */
static bool weights_7bit(const tsr_value_info *w) {
    const tsr_tensor *t = w ? odn_host->value_constant(w) : NULL;
    if (!t || t->elem_type != TSR_INT8 || !t->data) return false;
    const int8_t *v = t->data;
    for (size_t i = 0; i < t->nbytes; i++)
        if (v[i] < -64 || v[i] > 64) return false;
    return true;
}

bool odn_int8_exact_plan(const odn_plan *p) {
    if (odn_int8_exact()) return true;
    bool any = false;
    for (size_t i = 0; i < p->node_count; i++) {
        const tsr_node *n = p->nodes[i];
        const char *op = odn_host->node_op_type(n);
        const tsr_value_info *w = NULL;
        if (strcmp(op, "MatMulInteger") == 0 || strcmp(op, "ConvInteger") == 0) {
            w = odn_input(n, 1);
            if (!weights_7bit(w)) return false;
            any = true;
        } else if (strcmp(op, "DequantizeLinear") == 0 && (w = odn_input(n, 0)) && odn_host->value_constant(w)) {
            int32_t t = odn_host->value_elem_type(w);
            if (t == TSR_UINT8 || (t == TSR_INT8 && !weights_7bit(w))) return false;
            any = any || t == TSR_INT8;
        }
    }
    return any;
}

static float half_to_float(uint16_t h) {
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 0x400), e - 25);
    return (h & 0x8000) ? -v : v;
}

/* `v` rounded to the nearest float16 value (ties to even), as a double. */
static double round_to_half(double v) {
    if (v != v || v == 0 || isinf(v)) return v;
    int e;
    double a = fabs(v);
    frexp(a, &e); /* a = f * 2^e, f in [0.5, 1): 11 significant bits */
    int q = e - 11;
    if (q < -24) q = -24; /* subnormals: a fixed step of 2^-24 */
    double r = ldexp(nearbyint(ldexp(a, -q)), q);
    if (r > 65504.0) r = INFINITY;
    return copysign(r, v);
}

void *odn_q_handle(dnnl_memory_t m) {
    void *h = NULL;
    if (m) dnnl_memory_get_data_handle(m, &h);
    return h;
}

double odn_q_value(dnnl_memory_t m, int32_t type, size_t i) {
    const void *h = odn_q_handle(m);
    if (!h) return 0.0;
    switch (type) {
    case TSR_UINT8: return ((const uint8_t *)h)[i];
    case TSR_INT8: return ((const int8_t *)h)[i];
    case TSR_INT32: return ((const int32_t *)h)[i];
    case TSR_FLOAT16: return half_to_float(((const uint16_t *)h)[i]);
    default: return ((const float *)h)[i];
    }
}

double odn_q_round_prec(int32_t type, double v) { return type == TSR_FLOAT16 ? round_to_half(v) : (double)(float)v; }

void odn_q_store(int32_t y_type, void *y, size_t i, double q, double zp) {
    double lo = y_type == TSR_UINT8 ? 0 : -128, hi = y_type == TSR_UINT8 ? 255 : 127;
    double r = q != q ? 0.0 : nearbyint(q) + zp;
    r = r < lo ? lo : r > hi ? hi : r;
    if (y_type == TSR_UINT8) ((uint8_t *)y)[i] = (uint8_t)r;
    else ((int8_t *)y)[i] = (int8_t)r;
}

void odn_q_shift_u8(const uint8_t *src, int8_t *dst, size_t count) {
    for (size_t i = 0; i < count; i++) dst[i] = (int8_t)(src[i] ^ 0x80);
}

tsr_status *odn_q_input(odn_plan *p, const tsr_node *n, size_t k, dnnl_memory_t *m, int32_t *type) {
    *m = NULL;
    *type = 0;
    if (k >= odn_host->node_input_count(n) || !odn_host->node_input(n, k)) return NULL;
    odn_value *v = odn_plan_value(p, odn_host->node_input(n, k));
    if (!v || !v->produced || !v->mem) return odn_node_error(n, TSR_ERR_PROVIDER, "internal: input %zu not ready", k);
    *type = v->elem_type;
    return odn_plan_plain_mem(p, v, n, m);
}

tsr_status *odn_q_s32_scalar(odn_plan *p, const tsr_node *n, dnnl_memory_t *m) {
    dnnl_memory_desc_t md;
    int64_t one = 1;
    dnnl_status_t st = odn_plain_md_typed(&md, 1, &one, dnnl_s32);
    if (st != dnnl_success) return odn_dnnl_error(n, "zero point layout", st);
    return odn_plan_new_mem(p, &md, DNNL_MEMORY_ALLOCATE, n, m);
}
