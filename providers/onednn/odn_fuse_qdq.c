/* QDQ patterns as single int8 oneDNN primitives.
 *
 *   DQ(x u8/s8) -> Conv|MatMul|Gemm(DQ(W s8), [bias]) [-> Relu] -> Q(y)
 *       an int8 convolution / matmul: src x with its zero point (a oneDNN
 *       runtime source zero point, so padding is x's zero point, i.e. 0.0,
 *       as in the float Conv), s8 weights (zero point 0), s32 sums, output
 *       scale sx*sw[m]/sy per output channel, bias passed as b/(sx*sw[m])
 *       (oneDNN 2.6 adds the bias before the output scale), Relu as an
 *       eltwise post-op, y's zero point as oneDNN's destination zero point,
 *       rounding half to even and saturation by the kernel;
 *   DQ(a) + DQ(b) [-> Relu] -> Q(y)
 *       a binary add on the integers with scales sa/sy, sb/sy and post-ops
 *       + (zy*sy - sa*za - sb*zb)/sy, [clip below at zy for the Relu];
 *   DQ(x) -> Relu -> Q(y): the same add against a broadcast zero, with the
 *       clip;
 *   DQ(x) -> MaxPool -> Q(y) with y's scale, zero point and type x's
 *       (as ONNX Runtime's quantizer writes it): oneDNN max pooling on the
 *       integers, exact.
 * Without VNNI and 7-bit weights (no int8 primitives in the plan) on an
 * AVX2 CPU, Conv (2-D, one group), MatMul and Gemm run instead on the exact
 * int16 GEMM of odn_qdq_i16.c (NHWC activations, requantized as below in
 * float); Add, Relu and MaxPool stay the oneDNN primitives above, whose
 * integer arithmetic is exact there too.
 * W: a constant int8 tensor behind DequantizeLinear with zero point 0 and
 * a float32 scale per tensor or per output channel (Conv axis 0; MatMul B
 * axis 1; Gemm axis 1, or 0 with transB). bias: a constant float32 vector,
 * or a constant int32 one behind DequantizeLinear (zero point 0). Scales
 * and zero points must be constants (initializers), one per tensor for
 * activations. Anything else stays a float op between standalone Q/DQ
 * loops.
 *
 * Against the float graph ONNX defines (dequantize, float op, quantize),
 * the int8 result differs only where the float graph's y/sy lies within
 * its float rounding error of a rounding boundary (the int8 sums are exact,
 * the float ones are not; the scale is one multiply instead of a
 * division; oneDNN adds y's zero point before rounding, which on an exact
 * tie with an odd zero point rounds the other way): there the outputs are
 * one quantization step apart, as ONNX Runtime's own fused int8 kernels
 * are from its float graph.
 */
#include <math.h>
#include <string.h>

#include "odn_igemm.h"
#include "odn_quant.h"

typedef struct qdq_act {     /* DequantizeLinear of an activation */
    const tsr_value_info *q; /* its integer input */
    int32_t type;            /* TSR_UINT8 / TSR_INT8 */
    float scale;
    int32_t zp;
} qdq_act;

typedef struct qdq_weight { /* DequantizeLinear of constant int8 weights */
    const tsr_tensor *q;
    const float *scale;
    int64_t scale_count; /* 1 or one per output channel */
} qdq_weight;

typedef struct qdq_bias {
    const float *f;     /* a float32 vector, or */
    const int32_t *q;   /* int32 values times */
    const float *scale; /* these scales (1 or per channel) */
    int64_t scale_count;
} qdq_bias;

typedef struct qdq_out { /* [Relu | Clip ->] QuantizeLinear after the op */
    const tsr_node *relu, *clip, *qnode;
    float clip_lo, clip_hi; /* Clip's bounds */
    const tsr_value_info *y;
    int32_t type;
    float scale;
    int32_t zp;
} qdq_out;

enum { Q_CONV = 1, Q_MATMUL, Q_GEMM, Q_ADD, Q_MAXPOOL, Q_RELU };

typedef struct qdq_match {
    int kind;
    qdq_act a, b;
    qdq_weight w;
    qdq_bias bias;
    bool has_bias, trans_b;
    qdq_out out;
} qdq_match;

static int64_t numel_of(const tsr_tensor *t) {
    int64_t c = 1;
    for (int32_t d = 0; d < t->rank; d++) c *= t->dims[d];
    return c;
}

/* Constant float32 values of `v` (count through *count). */
static const float *const_f32(const tsr_value_info *v, int64_t *count) {
    const tsr_tensor *t = v ? odn_host->value_constant(v) : NULL;
    if (!t || t->elem_type != TSR_FLOAT || !t->data) return NULL;
    *count = numel_of(t);
    return *count > 0 && t->nbytes >= (size_t)*count * sizeof(float) ? t->data : NULL;
}

/* A constant zero point: absent (0), or one value of `type` (*single), or
 * (all_zero) any number of zeros. */
static bool const_zp(const tsr_value_info *v, int32_t type, bool all_zero, int32_t *single) {
    *single = 0;
    if (!v) return true;
    const tsr_tensor *t = odn_host->value_constant(v);
    if (!t || t->elem_type != type || !t->data) return false;
    int64_t c = numel_of(t);
    if (c != 1 && !all_zero) return false;
    for (int64_t i = 0; i < c; i++) {
        int32_t z = type == TSR_UINT8 ? ((const uint8_t *)t->data)[i]
            : type == TSR_INT8        ? ((const int8_t *)t->data)[i]
                                      : ((const int32_t *)t->data)[i];
        if (all_zero && z != 0) return false;
        *single = z;
    }
    return true;
}

/* The DequantizeLinear node of the piece writing `v`, or NULL. */
static const tsr_node *dq_producer(const odn_plan *p, const tsr_value_info *v) {
    int i = odn_qdq_producer(p, v);
    if (i < 0) return NULL;
    const tsr_node *n = p->nodes[i];
    return strcmp(odn_host->node_op_type(n), "DequantizeLinear") == 0 ? n : NULL;
}

static bool act_of(const odn_plan *p, const tsr_value_info *v, qdq_act *a) {
    const tsr_node *n = v ? dq_producer(p, v) : NULL;
    if (!n) return false;
    a->q = odn_input(n, 0);
    a->type = odn_host->value_elem_type(a->q);
    int64_t c;
    const float *s = const_f32(odn_input(n, 1), &c);
    if ((a->type != TSR_UINT8 && a->type != TSR_INT8) || !s || c != 1 || !(s[0] > 0) || !isfinite(s[0])) return false;
    a->scale = s[0];
    return const_zp(odn_input(n, 2), a->type, false, &a->zp);
}

/* Weights of `rank` dims whose output channels lie on `axis` (count
 * `channels`). */
static bool weight_of(const odn_plan *p, const tsr_value_info *v, int32_t rank, int64_t axis, qdq_weight *w) {
    const tsr_node *n = v ? dq_producer(p, v) : NULL;
    if (!n) return false;
    w->q = odn_host->value_constant(odn_input(n, 0));
    if (!w->q || w->q->elem_type != TSR_INT8 || w->q->rank != rank || !w->q->data) return false;
    int64_t channels = w->q->dims[axis];
    int32_t z;
    w->scale = const_f32(odn_input(n, 1), &w->scale_count);
    if (!w->scale || !const_zp(odn_input(n, 2), TSR_INT8, true, &z)) return false;
    if (w->scale_count != 1) {
        int64_t a = odn_attr_int(n, "axis", 1);
        if (a < 0) a += rank;
        if (a != axis || w->scale_count != channels) return false;
    }
    for (int64_t i = 0; i < w->scale_count; i++)
        if (!(w->scale[i] > 0) || !isfinite(w->scale[i])) return false;
    return true;
}

static bool bias_of(const odn_plan *p, const tsr_value_info *v, int64_t channels, qdq_bias *b) {
    memset(b, 0, sizeof *b);
    int64_t c;
    if ((b->f = const_f32(v, &c))) return c == channels;
    const tsr_node *n = dq_producer(p, v);
    if (!n) return false;
    const tsr_tensor *t = odn_host->value_constant(odn_input(n, 0));
    int32_t z;
    if (!t || t->elem_type != TSR_INT32 || numel_of(t) != channels || !t->data) return false;
    b->q = t->data;
    b->scale = const_f32(odn_input(n, 1), &b->scale_count);
    return b->scale && (b->scale_count == 1 || b->scale_count == channels) &&
        const_zp(odn_input(n, 2), TSR_INT32, true, &z);
}

/* Clip n's bounds when they are constants (attributes before opset 11,
 * float32 scalar inputs after; absent: unbounded). */
static bool clip_bounds(const tsr_node *n, float *lo, float *hi) {
    *lo = -INFINITY;
    *hi = INFINITY;
    if (odn_host->node_opset(n) < 11) {
        *lo = odn_attr_float(n, "min", *lo);
        *hi = odn_attr_float(n, "max", *hi);
        return !(*lo > *hi);
    }
    for (size_t k = 1; k <= 2; k++) {
        const tsr_value_info *b = odn_input(n, k);
        if (!b) continue;
        int64_t cnt;
        const float *v = const_f32(b, &cnt);
        if (!v || cnt != 1 || v[0] != v[0]) return false;
        *(k == 1 ? lo : hi) = v[0];
    }
    return !(*lo > *hi);
}

/* y read by exactly [Relu | Clip ->] QuantizeLinear with constant
 * per-tensor scale and zero point. */
static bool out_of(const odn_plan *p, const tsr_value_info *y, qdq_out *o) {
    odn_value *v = odn_plan_value((odn_plan *)p, y);
    const tsr_node *c = v ? odn_plan_sole_consumer(p, v) : NULL;
    o->relu = o->clip = NULL;
    if (c && strcmp(odn_host->node_op_type(c), "Relu") == 0) {
        o->relu = c;
    } else if (c && strcmp(odn_host->node_op_type(c), "Clip") == 0) {
        if (!clip_bounds(c, &o->clip_lo, &o->clip_hi)) return false;
        o->clip = c;
    }
    if (o->relu || o->clip) {
        v = odn_plan_value((odn_plan *)p, odn_host->node_output(c, 0));
        c = v ? odn_plan_sole_consumer(p, v) : NULL;
    }
    if (!c || strcmp(odn_host->node_op_type(c), "QuantizeLinear") != 0 || odn_host->node_output_count(c) != 1)
        return false;
    o->qnode = c;
    o->y = odn_host->node_output(c, 0);
    o->type = odn_host->value_elem_type(o->y);
    int64_t cnt;
    const float *s = const_f32(odn_input(c, 1), &cnt);
    if ((o->type != TSR_UINT8 && o->type != TSR_INT8) || !s || cnt != 1 || !(s[0] > 0) || !isfinite(s[0])) return false;
    o->scale = s[0];
    return const_zp(odn_input(c, 2), o->type, false, &o->zp);
}

/* Rank and dims of value `v` (-1 where known only at run time, e.g. a
 * symbolic batch: the plan is then built at the first run and the
 * builders check the real sizes); false when the rank is unknown. */
static bool dims_of(const tsr_value_info *v, int32_t *rank, int64_t *dims) {
    *rank = odn_host->value_rank(v);
    if (*rank < 1 || *rank > ODN_MAX_RANK) return false;
    for (int32_t d = 0; d < *rank; d++)
        if ((dims[d] = odn_host->value_dim(v, d)) == 0) return false;
    return true;
}

static bool match(odn_plan *p, const tsr_node *n, qdq_match *m) {
    const char *op = odn_host->node_op_type(n);
    memset(m, 0, sizeof *m);
    /* oneDNN's int8 sums are exact only with VNNI or 7-bit weights
     * (odn_int8_exact_plan): otherwise Conv/MatMul/Gemm run on the exact
     * int16 GEMM (odn_qdq_i16.c, AVX2), the rest as below; without AVX2
     * every layer runs in float, each Q/DQ pair one loop
     * (odn_build_fakequant.c) */
    bool i16 = !p->int8_primitives;
    if (i16 && !odn_i16_usable(p)) return false;
    if (odn_host->node_output_count(n) != 1) return false;
    int32_t ra, rb;
    int64_t da[ODN_MAX_RANK], db[ODN_MAX_RANK];
    if (strcmp(op, "Add") == 0) {
        m->kind = Q_ADD;
        if (odn_host->node_input_count(n) != 2 || !act_of(p, odn_input(n, 0), &m->a) ||
            !act_of(p, odn_input(n, 1), &m->b))
            return false;
        if (!dims_of(m->a.q, &ra, da) || !dims_of(m->b.q, &rb, db) || ra != rb) return false;
        for (int32_t d = 0; d < ra; d++)
            if (da[d] > 0 && db[d] > 0 && da[d] != db[d]) return false; /* no broadcasting (fuse_add checks) */
        return out_of(p, odn_host->node_output(n, 0), &m->out) && !m->out.clip;
    }
    if (strcmp(op, "Relu") == 0) {
        /* a lone Relu between QDQ pairs (ORT's quantizer writes one after
         * the residual Add's QDQ): fuse_add against a zero */
        m->kind = Q_RELU;
        return act_of(p, odn_input(n, 0), &m->a) && dims_of(m->a.q, &ra, da) &&
            out_of(p, odn_host->node_output(n, 0), &m->out) && !m->out.relu && !m->out.clip;
    }
    if (strcmp(op, "MaxPool") == 0) {
        /* the maximum commutes with dequantization, and quantizing with the
         * same scale and zero point gives the integers back exactly */
        m->kind = Q_MAXPOOL;
        if (!act_of(p, odn_input(n, 0), &m->a) || !dims_of(m->a.q, &ra, da) || ra < 3 || ra > 5) return false;
        if (!out_of(p, odn_host->node_output(n, 0), &m->out) || m->out.relu || m->out.clip) return false;
        return m->out.type == m->a.type && m->out.scale == m->a.scale && m->out.zp == m->a.zp;
    }
    bool conv = strcmp(op, "Conv") == 0, mm = strcmp(op, "MatMul") == 0, gemm = strcmp(op, "Gemm") == 0;
    if (!conv && !mm && !gemm) return false;
    m->kind = conv ? Q_CONV : mm ? Q_MATMUL : Q_GEMM;
    if (!act_of(p, odn_input(n, 0), &m->a) || !dims_of(m->a.q, &ra, da)) return false;
    int64_t channels, depth;
    if (conv) {
        if (ra < 3 || ra > 5 || !weight_of(p, odn_input(n, 1), ra, 0, &m->w)) return false;
        if (!odn_attr_string_is(n, "auto_pad", "NOTSET", true) && !odn_attr_string_is(n, "auto_pad", "VALID", false))
            return false;
        int64_t group = odn_attr_int(n, "group", 1);
        channels = m->w.q->dims[0];
        if (group < 1 || channels % group || da[1] < 0 || da[1] != group * m->w.q->dims[1]) return false;
        depth = numel_of(m->w.q) / channels;
        size_t c;
        const int64_t *k = odn_attr_ints(n, "kernel_shape", &c);
        for (size_t i = 0; k && i < c; i++)
            if (k[i] != m->w.q->dims[2 + i]) return false;
        if (i16 && !odn_i16_conv_fits(ra, group, depth) && !odn_i16_dw_fits(ra, group, da[1], channels, depth))
            return false;
    } else {
        if (gemm) {
            if (odn_attr_int(n, "transA", 0) || odn_attr_float(n, "alpha", 1.0f) != 1.0f ||
                odn_attr_float(n, "beta", 1.0f) != 1.0f || ra != 2)
                return false;
            m->trans_b = odn_attr_int(n, "transB", 0) != 0;
        } else if (ra < 2) {
            return false;
        }
        if (!weight_of(p, odn_input(n, 1), 2, m->trans_b ? 0 : 1, &m->w)) return false;
        channels = m->w.q->dims[m->trans_b ? 0 : 1];
        depth = m->w.q->dims[m->trans_b ? 1 : 0];
        if (depth != da[ra - 1] || (i16 && depth > ODN_IGEMM_MAX_K)) return false;
    }
    /* |x - zx| * |w| <= 255 * 128: past this depth int32 sums could overflow */
    if (depth > INT32_MAX / (255 * 128)) return false;
    size_t ib = 2;
    if (odn_input(n, ib)) {
        if (!bias_of(p, odn_input(n, ib), channels, &m->bias)) return false;
        if (gemm) { /* C must be [N] or [1, N] */
            int32_t rc;
            int64_t dc[ODN_MAX_RANK];
            if (!dims_of(odn_input(n, ib), &rc, dc) || (rc == 2 && dc[0] != 1) || rc > 2) return false;
        }
        m->has_bias = true;
    }
    /* a Clip (ReLU6) is a clamp of the requantized integers, on the int16
     * layers only (oneDNN's int8 primitives take Relu) */
    return out_of(p, odn_host->node_output(n, 0), &m->out) && (i16 || !m->out.clip);
}

bool odn_qdq_fusable(odn_plan *p, const tsr_node *n) {
    qdq_match m;
    return match(p, n, &m);
}

/* --- building ------------------------------------------------------------ */

static double w_scale(const qdq_match *m, int64_t c) { return m->w.scale[m->w.scale_count == 1 ? 0 : c]; }

/* attr with per-channel output scales, runtime src/dst zero points and the
 * Relu post-op; bias (when any) as b / (sx * sw[c]) into *bias_out. */
static tsr_status *linear_attr(odn_plan *p, const tsr_node *n, const qdq_match *m, int64_t channels, int oc_mask,
                               dnnl_primitive_attr_t *attr, float **bias_out) {
    float *scales = odn_plan_alloc(p, sizeof(float) * (size_t)channels);
    float *bias = m->has_bias ? odn_plan_alloc(p, sizeof(float) * (size_t)channels) : NULL;
    if (!scales || (m->has_bias && !bias)) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    for (int64_t c = 0; c < channels; c++) {
        double sxw = (double)m->a.scale * w_scale(m, c);
        scales[c] = (float)(sxw / m->out.scale);
        if (bias) {
            /* the float graph's bias value: float32 b, or int32 b times its scale in float32 */
            float b = m->bias.f ? m->bias.f[c] : (float)m->bias.q[c] * m->bias.scale[m->bias.scale_count == 1 ? 0 : c];
            bias[c] = (float)((double)b / sxw);
        }
    }
    *bias_out = bias;
    dnnl_status_t st = dnnl_primitive_attr_create(attr);
    if (st != dnnl_success) return odn_dnnl_error(n, "attribute creation", st);
    const int32_t rt = DNNL_RUNTIME_S32_VAL;
    st = dnnl_primitive_attr_set_output_scales(*attr, channels, oc_mask, scales);
    if (st == dnnl_success) st = dnnl_primitive_attr_set_zero_points(*attr, DNNL_ARG_SRC, 1, 0, &rt);
    if (st == dnnl_success) st = dnnl_primitive_attr_set_zero_points(*attr, DNNL_ARG_DST, 1, 0, &rt);
    if (st == dnnl_success && m->out.relu) {
        dnnl_post_ops_t po;
        st = dnnl_post_ops_create(&po);
        if (st == dnnl_success) {
            st = dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f);
            if (st == dnnl_success) st = dnnl_primitive_attr_set_post_ops(*attr, po);
            dnnl_post_ops_destroy(po);
        }
    }
    if (st != dnnl_success) {
        dnnl_primitive_attr_destroy(*attr);
        return odn_dnnl_error(n, "int8 attributes", st);
    }
    return NULL;
}

/* Runtime zero point memories holding zx and zy. */
static tsr_status *zero_points(odn_plan *p, const tsr_node *n, int32_t zx, int32_t zy, dnnl_memory_t *mx,
                               dnnl_memory_t *my) {
    tsr_status *s = odn_q_s32_scalar(p, n, mx);
    if (!s) s = odn_q_s32_scalar(p, n, my);
    if (s) return s;
    *(int32_t *)odn_q_handle(*mx) = zx;
    *(int32_t *)odn_q_handle(*my) = zy;
    return NULL;
}

/* Marks the absorbed Relu/QuantizeLinear done. */
static void absorb(odn_plan *p, const qdq_out *o) {
    const tsr_node *act = o->relu ? o->relu : o->clip;
    int i = act ? odn_plan_node_index(p, act) : -1;
    if (i >= 0) p->done[i] = true;
    i = odn_plan_node_index(p, o->qnode);
    if (i >= 0) p->done[i] = true;
}

/* Defines y from the layout `yq` the primitive writes: when y is a piece
 * output (always plain) and yq is not, the primitive writes a memory of
 * its own and a reorder copies it to y. *dst is what the primitive writes. */
static tsr_status *define_out(odn_plan *p, const tsr_node *n, odn_value *y, int32_t rank, const int64_t *dims,
                              const dnnl_memory_desc_t *yq, dnnl_memory_t *dst, bool *copy) {
    *copy = false;
    if (y->output_index < 0) {
        tsr_status *s = odn_plan_define(p, y, rank, dims, yq, n);
        *dst = y->mem;
        return s;
    }
    tsr_status *s = odn_plan_define(p, y, rank, dims, NULL, n);
    if (s) return s;
    if (dnnl_memory_desc_equal(yq, &y->md)) {
        *dst = y->mem;
        return NULL;
    }
    *copy = true;
    return odn_plan_new_mem(p, yq, DNNL_MEMORY_ALLOCATE, n, dst);
}

static tsr_status *add_prim(odn_plan *p, const tsr_node *n, dnnl_primitive_desc_t pd, dnnl_exec_arg_t *args, int nargs,
                            odn_value *y, dnnl_memory_t dst, bool copy) {
    const dnnl_memory_desc_t *yq = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    dnnl_memory_desc_t ycopy = *yq;
    tsr_status *s = odn_plan_add_primitive(p, pd, n, args, nargs);
    dnnl_primitive_desc_destroy(pd);
    if (!s && copy) s = odn_plan_add_reorder(p, dst, &ycopy, y->mem, &y->md, n);
    return s;
}

static dnnl_status_t any_md(dnnl_memory_desc_t *md, int32_t rank, const int64_t *dims, dnnl_data_type_t dt) {
    dnnl_dims_t d;
    for (int32_t i = 0; i < rank; i++) d[i] = dims[i];
    return dnnl_memory_desc_init_by_tag(md, rank, d, dt, dnnl_format_tag_any);
}

/* Conv/MatMul/Gemm on the int16 GEMM (odn_qdq_i16.c). */
static tsr_status *fuse_i16(odn_plan *p, const tsr_node *n, const qdq_match *m, bool *handled) {
    odn_value *vx = odn_plan_value(p, m->a.q), *vy = odn_plan_value(p, m->out.y);
    if (!vx || !vy || !vx->produced || !vx->mem)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: int8 input not ready");
    int64_t channels = m->w.q->dims[m->kind == Q_CONV || m->trans_b ? 0 : 1];
    float *bias = m->has_bias ? odn_plan_alloc(p, sizeof(float) * (size_t)channels) : NULL;
    if (m->has_bias && !bias) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    for (int64_t c = 0; bias && c < channels; c++) /* the float graph's bias, as linear_attr's */
        bias[c] = m->bias.f ? m->bias.f[c] : (float)m->bias.q[c] * m->bias.scale[m->bias.scale_count == 1 ? 0 : c];
    odn_i16_layer l = {.node = n,
                       .y_node = n,
                       .out = ODN_I16_Q8,
                       .x = vx,
                       .y = vy,
                       .sx = m->a.scale,
                       .sy = m->out.scale,
                       .zx = m->a.zp,
                       .zy = m->out.zp,
                       .y_type = m->out.type,
                       .relu = m->out.relu != NULL,
                       .clip = m->out.clip != NULL,
                       .clip_lo = m->out.clip_lo,
                       .clip_hi = m->out.clip_hi,
                       .conv = m->kind == Q_CONV,
                       .trans_b = m->trans_b,
                       .w = m->w.q,
                       .w_scale = m->w.scale,
                       .w_scale_count = m->w.scale_count,
                       .bias = bias};
    tsr_status *s = l.conv ? odn_i16_conv(p, &l, handled) : odn_i16_matmul(p, &l, handled);
    if (!s && *handled) absorb(p, &m->out);
    return s;
}

static tsr_status *fuse_conv(odn_plan *p, const tsr_node *n, const qdq_match *m, bool *handled) {
    if (!p->int8_primitives) return fuse_i16(p, n, m, handled);
    odn_value *vx = odn_plan_value(p, m->a.q), *vy = odn_plan_value(p, m->out.y);
    if (!vx || !vy || !vx->produced || !vx->mem)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: int8 input not ready");
    const tsr_tensor *wt = m->w.q;
    int32_t r = vx->rank, sp = r - 2;
    int64_t dy[ODN_MAX_RANK];
    dnnl_dims_t s, d, l, rr;
    size_t c;
    const int64_t *a = odn_attr_ints(n, "strides", &c), *di = odn_attr_ints(n, "dilations", &c);
    const int64_t *pads = odn_attr_ints(n, "pads", &c);
    bool valid = odn_attr_string_is(n, "auto_pad", "VALID", false);
    int64_t channels = wt->dims[0], groups = odn_attr_int(n, "group", 1);
    dy[0] = vx->dims[0];
    dy[1] = channels;
    for (int32_t i = 0; i < sp; i++) {
        s[i] = a ? a[i] : 1;
        int64_t dil = di ? di[i] : 1;
        d[i] = dil - 1;
        l[i] = pads && !valid ? pads[i] : 0;
        rr[i] = pads && !valid ? pads[i + sp] : 0;
        int64_t ext = (wt->dims[2 + i] - 1) * dil + 1, span = vx->dims[2 + i] + l[i] + rr[i];
        if (span < ext) return odn_node_error(n, TSR_ERR_INVALID_MODEL, "kernel larger than the padded input");
        dy[2 + i] = (span - ext) / s[i] + 1;
    }
    /* grouped: ONNX's M x C/g x k... is oneDNN's g x M/g x C/g x k... */
    int32_t wr = groups > 1 ? r + 1 : r;
    int64_t wd[ODN_MAX_RANK + 1];
    wd[0] = groups;
    memcpy(wd + 1, wt->dims, sizeof(int64_t) * (size_t)r);
    wd[1] = channels / groups;
    const int64_t *wdims = groups > 1 ? wd : wt->dims;
    dnnl_primitive_attr_t attr;
    float *bias;
    tsr_status *e = linear_attr(p, n, m, channels, 1 << 1, &attr, &bias);
    if (e) return e;
    dnnl_memory_desc_t x_any, w_any, b_md, y_any, w_plain;
    dnnl_data_type_t ydt = odn_dnnl_type(m->out.type);
    dnnl_status_t st = any_md(&x_any, r, vx->dims, odn_dnnl_type(vx->elem_type));
    if (st == dnnl_success) st = any_md(&w_any, wr, wdims, dnnl_s8);
    if (st == dnnl_success) st = odn_plain_md_typed(&b_md, 1, &channels, dnnl_f32);
    if (st == dnnl_success) st = any_md(&y_any, r, dy, ydt);
    if (st == dnnl_success) st = odn_plain_md_typed(&w_plain, wr, wdims, dnnl_s8);
    dnnl_convolution_desc_t cd;
    if (st == dnnl_success)
        st = dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &x_any,
                                                        &w_any, bias ? &b_md : NULL, &y_any, s, d, l, rr);
    dnnl_primitive_desc_t pd = NULL;
    if (st == dnnl_success) st = odn_pd_create(p, &cd, attr, &pd);
    dnnl_primitive_attr_destroy(attr);
    if (st != dnnl_success) return NULL; /* none, or only oneDNN's reference one: the float path */
    const dnnl_memory_desc_t *xq = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    const dnnl_memory_desc_t *wq = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *yq = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    dnnl_memory_t xm = NULL, wsrc = NULL, wm = NULL, bm = NULL, zx, zy, dst = NULL;
    bool copy = false;
    e = odn_plan_mem_as(p, vx, xq, n, &xm);
    /* reordered once into the piece's constant cache (shared by its plans);
     * the reorder also computes the compensation the kernels keep beside
     * blocked int8 weights (for the source zero point) */
    if (!e) e = odn_plan_new_mem(p, &w_plain, wt->data, n, &wsrc);
    if (!e) e = odn_arena_const_as_keyed(p, wt->data, NULL, wsrc, &w_plain, wq, n, &wm);
    if (!e && bias) e = odn_plan_new_mem(p, &b_md, bias, n, &bm);
    if (!e) e = zero_points(p, n, m->a.zp, m->out.zp, &zx, &zy);
    if (!e) e = define_out(p, n, vy, r, dy, yq, &dst, &copy);
    if (e) {
        dnnl_primitive_desc_destroy(pd);
        return e;
    }
    dnnl_exec_arg_t args[6] = {{DNNL_ARG_SRC, xm},
                               {DNNL_ARG_WEIGHTS, wm},
                               {DNNL_ARG_DST, dst},
                               {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zx},
                               {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, zy},
                               {DNNL_ARG_BIAS, bm}};
    absorb(p, &m->out);
    *handled = true;
    return add_prim(p, n, pd, args, bias ? 6 : 5, vy, dst, copy);
}

static tsr_status *fuse_matmul(odn_plan *p, const tsr_node *n, const qdq_match *m, bool *handled) {
    if (!p->int8_primitives) return fuse_i16(p, n, m, handled);
    odn_value *vx = odn_plan_value(p, m->a.q), *vy = odn_plan_value(p, m->out.y);
    if (!vx || !vy || !vx->produced || !vx->mem)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: int8 input not ready");
    const tsr_tensor *wt = m->w.q;
    int64_t k = vx->dims[vx->rank - 1], cols = m->trans_b ? wt->dims[0] : wt->dims[1];
    int64_t rows = odn_numel(vx->rank - 1, vx->dims);
    int64_t a2[2] = {rows, k}, b2[2] = {k, cols}, y2[2] = {rows, cols}, bias2[2] = {1, cols};
    int64_t dy[ODN_MAX_RANK];
    memcpy(dy, vx->dims, sizeof(int64_t) * (size_t)vx->rank);
    dy[vx->rank - 1] = cols;
    dnnl_primitive_attr_t attr;
    float *bias;
    tsr_status *e = linear_attr(p, n, m, cols, 1 << 1, &attr, &bias);
    if (e) return e;
    dnnl_memory_desc_t a_md, w_any, w_plain, b_md, y_md;
    dnnl_data_type_t ydt = odn_dnnl_type(m->out.type);
    dnnl_dims_t wd = {k, cols}, ws = {m->trans_b ? 1 : cols, m->trans_b ? k : 1};
    dnnl_status_t st = odn_plain_md_typed(&a_md, 2, a2, odn_dnnl_type(vx->elem_type));
    if (st == dnnl_success) st = any_md(&w_any, 2, b2, dnnl_s8);
    if (st == dnnl_success) st = dnnl_memory_desc_init_by_strides(&w_plain, 2, wd, dnnl_s8, ws);
    if (st == dnnl_success) st = odn_plain_md_typed(&b_md, 2, bias2, dnnl_f32);
    if (st == dnnl_success) st = odn_plain_md_typed(&y_md, 2, y2, ydt);
    dnnl_matmul_desc_t md;
    if (st == dnnl_success) st = dnnl_matmul_desc_init(&md, &a_md, &w_any, bias ? &b_md : NULL, &y_md);
    dnnl_primitive_desc_t pd = NULL;
    if (st == dnnl_success) st = odn_pd_create(p, &md, attr, &pd);
    dnnl_primitive_attr_destroy(attr);
    if (st != dnnl_success) return NULL; /* none, or only oneDNN's reference one: the float path */
    const dnnl_memory_desc_t *wq = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    dnnl_memory_t am = NULL, wsrc = NULL, wm = NULL, bm = NULL, zx, zy, ym = NULL;
    e = odn_plan_plain_view(p, vx, 2, a2, NULL, n, &am, NULL);
    if (!e) e = odn_plan_new_mem(p, &w_plain, wt->data, n, &wsrc);
    if (!e) e = odn_arena_const_as_keyed(p, wt->data, NULL, wsrc, &w_plain, wq, n, &wm);
    if (!e && bias) e = odn_plan_new_mem(p, &b_md, bias, n, &bm);
    if (!e) e = zero_points(p, n, m->a.zp, m->out.zp, &zx, &zy);
    if (!e) e = odn_plan_define(p, vy, vx->rank, dy, NULL, n);
    if (!e) e = odn_plan_view(p, vy->mem, &y_md, n, &ym);
    if (e) {
        dnnl_primitive_desc_destroy(pd);
        return e;
    }
    dnnl_exec_arg_t args[6] = {{DNNL_ARG_SRC, am},
                               {DNNL_ARG_WEIGHTS, wm},
                               {DNNL_ARG_DST, ym},
                               {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zx},
                               {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, zy},
                               {DNNL_ARG_BIAS, bm}};
    absorb(p, &m->out);
    *handled = true;
    return add_prim(p, n, pd, args, bias ? 6 : 5, vy, ym, false);
}

/* Add, or (Q_RELU) Relu as an add of a broadcast zero with the clip. */
static tsr_status *fuse_add(odn_plan *p, const tsr_node *n, const qdq_match *m, bool *handled) {
    bool relu_only = m->kind == Q_RELU;
    odn_value *va = odn_plan_value(p, m->a.q), *vb = relu_only ? NULL : odn_plan_value(p, m->b.q);
    odn_value *vy = odn_plan_value(p, m->out.y);
    if (!va || !vy || !va->produced || !va->mem || (!relu_only && (!vb || !vb->produced || !vb->mem)))
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: int8 inputs not ready");
    if (!relu_only && (va->rank != vb->rank || memcmp(va->dims, vb->dims, sizeof(int64_t) * (size_t)va->rank) != 0))
        return NULL; /* broadcasting: not handled, the float path */
    dnnl_memory_t am = va->mem, bm = NULL;
    dnnl_memory_desc_t md0 = va->md, md1, mdy;
    tsr_status *e = NULL;
    if (vy->output_index >= 0) { /* a plain output: plain operands */
        e = odn_plan_plain_mem(p, va, n, &am);
        if (e) return e;
        const dnnl_memory_desc_t *q;
        dnnl_memory_get_memory_desc(am, &q);
        md0 = *q;
    }
    md1 = md0;
    if (relu_only) {
        int64_t ones[ODN_MAX_RANK];
        for (int32_t d = 0; d < va->rank; d++) ones[d] = 1;
        dnnl_status_t st1 = odn_plain_md_typed(&md1, va->rank, ones, odn_dnnl_type(va->elem_type));
        if (st1 != dnnl_success) return odn_dnnl_error(n, "int8 relu layout", st1);
    } else {
        md1.data_type = odn_dnnl_type(vb->elem_type);
    }
    mdy = md0;
    mdy.data_type = odn_dnnl_type(m->out.type);
    dnnl_primitive_attr_t attr;
    dnnl_status_t st = dnnl_primitive_attr_create(&attr);
    if (st != dnnl_success) return odn_dnnl_error(n, "attribute creation", st);
    /* (sa*(a-za) + sb*(b-zb)) / sy + zy = (sa/sy)*a + (sb/sy)*b + shift, one
     * linear post-op; with Relu, relu(v) + zy = max(v + zy, zy), a clip
     * after it. (oneDNN 2.6's jit binary applies the first eltwise post-op's
     * alpha/beta to a second one of the same kind, so no two linears.) */
    double sy = m->out.scale;
    float sa = (float)(m->a.scale / sy), sb = relu_only ? 0.0f : (float)(m->b.scale / sy);
    double bz = relu_only ? 0.0 : (double)m->b.scale * m->b.zp;
    float shift = (float)(((double)m->out.zp * sy - (double)m->a.scale * m->a.zp - bz) / sy);
    dnnl_post_ops_t po = NULL;
    st = dnnl_primitive_attr_set_scales(attr, DNNL_ARG_SRC_0, 1, 0, &sa);
    if (st == dnnl_success) st = dnnl_primitive_attr_set_scales(attr, DNNL_ARG_SRC_1, 1, 0, &sb);
    if (st == dnnl_success) st = dnnl_post_ops_create(&po);
    if (st == dnnl_success) st = dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_linear, 1.0f, shift);
    if (st == dnnl_success && (m->out.relu || relu_only))
        st = dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_clip, (float)m->out.zp, 1e30f);
    if (st == dnnl_success) st = dnnl_primitive_attr_set_post_ops(attr, po);
    if (po) dnnl_post_ops_destroy(po);
    dnnl_binary_desc_t bd;
    if (st == dnnl_success) st = dnnl_binary_desc_init(&bd, dnnl_binary_add, &md0, &md1, &mdy);
    dnnl_primitive_desc_t pd = NULL;
    if (st == dnnl_success) st = odn_pd_create(p, &bd, attr, &pd);
    dnnl_primitive_attr_destroy(attr);
    if (st != dnnl_success) return NULL; /* none, or only oneDNN's reference one: the float path */
    if (relu_only) {
        void *zero = odn_plan_alloc(p, 64);
        if (!zero) e = odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
        else memset(zero, 0, 64);
        if (!e) e = odn_plan_new_mem(p, &md1, zero, n, &bm);
    } else {
        e = odn_plan_mem_as(p, vb, &md1, n, &bm);
    }
    if (!e) e = odn_plan_define(p, vy, va->rank, va->dims, &mdy, n);
    if (e) {
        dnnl_primitive_desc_destroy(pd);
        return e;
    }
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC_0, am}, {DNNL_ARG_SRC_1, bm}, {DNNL_ARG_DST, vy->mem}};
    absorb(p, &m->out);
    *handled = true;
    return add_prim(p, n, pd, args, 3, vy, vy->mem, false);
}

tsr_status *odn_qdq_fuse(odn_plan *p, size_t index, bool *handled) {
    const tsr_node *n = p->nodes[index];
    qdq_match m;
    *handled = false;
    if (!match(p, n, &m)) return NULL;
    switch (m.kind) {
    case Q_CONV: return fuse_conv(p, n, &m, handled);
    case Q_ADD:
    case Q_RELU: return fuse_add(p, n, &m, handled);
    case Q_MAXPOOL: {
        /* oneDNN's int8 pooling kernels take NHWC/blocked layouts: plain
         * NCHW (a piece input or output) stays on the float path */
        odn_value *x = odn_plan_value(p, m.a.q), *y = odn_plan_value(p, m.out.y);
        dnnl_memory_desc_t plain;
        if (!x || !y || !x->produced || y->output_index >= 0 ||
            odn_plain_md_typed(&plain, x->rank, x->dims, odn_dnnl_type(x->elem_type)) != dnnl_success ||
            dnnl_memory_desc_equal(&plain, &x->md))
            return NULL;
        absorb(p, &m.out);
        *handled = true;
        return odn_build_pool_values(p, n, x, y);
    }
    default: return fuse_matmul(p, n, &m, handled);
    }
}
