/* Unary (eltwise) and binary ops, each one primitive with whatever follows
 * it fused as post-ops. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "odn.h"
#include "odn_tanh_loop.h"

static bool is(const char *a, const char *b) { return strcmp(a, b) == 0; }

int odn_eltwise_of(const tsr_node *n, odn_eltwise out[2]) {
    const char *op = odn_host->node_op_type(n);
    out[0] = (odn_eltwise){dnnl_alg_kind_undef, 0.0f, 0.0f};
    if (odn_host->node_domain(n)[0] && strcmp(odn_host->node_domain(n), "ai.onnx") != 0) return 0;
    if (is(op, "Relu")) out[0].alg = dnnl_eltwise_relu;
    else if (is(op, "LeakyRelu")) out[0] = (odn_eltwise){dnnl_eltwise_relu, odn_attr_float(n, "alpha", 0.01f), 0};
    else if (is(op, "Elu")) out[0] = (odn_eltwise){dnnl_eltwise_elu, odn_attr_float(n, "alpha", 1.0f), 0};
    else if (is(op, "Sigmoid")) out[0].alg = dnnl_eltwise_logistic;
    else if (is(op, "Tanh")) out[0].alg = dnnl_eltwise_tanh;
    else if (is(op, "Softplus")) out[0].alg = dnnl_eltwise_soft_relu;
    else if (is(op, "Mish")) out[0].alg = dnnl_eltwise_mish;
    /* Exp runs as a C loop, never oneDNN's (which turns NaN into +inf) */
    else if (is(op, "Exp")) out[0].alg = dnnl_eltwise_exp;
    else if (is(op, "Log")) out[0].alg = dnnl_eltwise_log;
    else if (is(op, "Sqrt")) out[0].alg = dnnl_eltwise_sqrt;
    else if (is(op, "Abs")) out[0].alg = dnnl_eltwise_abs;
    else if (is(op, "Neg")) out[0] = (odn_eltwise){dnnl_eltwise_linear, -1.0f, 0.0f};
    /* oneDNN's pow computes alpha / x for beta -1: a division, exact */
    else if (is(op, "Reciprocal")) out[0] = (odn_eltwise){dnnl_eltwise_pow, 1.0f, -1.0f};
    else if (is(op, "HardSwish")) out[0].alg = dnnl_eltwise_hardswish;
    else if (is(op, "PRelu")) {
        /* a constant one-value slope: relu's alpha (x > 0 ? x : alpha * x,
         * which keeps NaN as ONNX's x < 0 ? slope * x : x does) */
        const tsr_value_info *sv = odn_host->node_input_count(n) == 2 ? odn_host->node_input(n, 1) : NULL;
        float alpha;
        if (!sv || !odn_tensor_scalar(odn_host->value_constant(sv), &alpha)) return 0;
        out[0] = (odn_eltwise){dnnl_eltwise_relu, alpha, 0.0f};
    } else if (is(op, "Pow")) {
        /* x^e for a constant scalar exponent (float16 in float16 models) */
        const tsr_value_info *e = odn_host->node_input_count(n) == 2 ? odn_host->node_input(n, 1) : NULL;
        float ex;
        if (!e || !odn_tensor_scalar(odn_host->value_constant(e), &ex)) return 0;
        /* a [1,1,1] exponent on a 2-D x makes a 3-D output: not an eltwise */
        if (odn_host->value_rank(e) > odn_host->value_rank(odn_host->node_input(n, 0))) return 0;
        /* oneDNN's pow goes through exp and log: 10-20x slower than these */
        out[0] = ex == 2.0f ? (odn_eltwise){dnnl_eltwise_square, 0.0f, 0.0f}
            : ex == 1.0f    ? (odn_eltwise){dnnl_eltwise_linear, 1.0f, 0.0f}
            : ex == 0.5f    ? (odn_eltwise){dnnl_eltwise_sqrt, 0.0f, 0.0f}
                            : (odn_eltwise){dnnl_eltwise_pow, 1.0f, ex};
    } else if (is(op, "Gelu"))
        out[0].alg =
            odn_attr_string_is(n, "approximate", "tanh", false) ? dnnl_eltwise_gelu_tanh : dnnl_eltwise_gelu_erf;
    else if (is(op, "HardSigmoid")) {
        /* max(0, min(1, alpha*x + beta)) */
        out[0] = (odn_eltwise){dnnl_eltwise_linear, odn_attr_float(n, "alpha", 0.2f), odn_attr_float(n, "beta", 0.5f)};
        out[1] = (odn_eltwise){dnnl_eltwise_clip_v2, 0.0f, 1.0f};
        return 2;
    } else if (is(op, "Clip")) {
        float lo = -FLT_MAX, hi = FLT_MAX;
        if (odn_host->node_opset(n) < 11) {
            lo = odn_attr_float(n, "min", lo);
            hi = odn_attr_float(n, "max", hi);
        } else {
            for (size_t k = 1; k <= 2 && k < odn_host->node_input_count(n); k++) {
                const tsr_value_info *v = odn_host->node_input(n, k);
                if (!v) continue;
                if (!odn_tensor_scalar(odn_host->value_constant(v), k == 1 ? &lo : &hi)) return 0;
            }
        }
        out[0] = (odn_eltwise){dnnl_eltwise_clip_v2, lo, hi};
    } else return 0;
    return 1;
}

dnnl_alg_kind_t odn_binary_alg(const char *op) {
    if (is(op, "Add")) return dnnl_binary_add;
    if (is(op, "Sub")) return dnnl_binary_sub;
    if (is(op, "Mul")) return dnnl_binary_mul;
    if (is(op, "Div")) return dnnl_binary_div;
    if (is(op, "Max")) return dnnl_binary_max;
    if (is(op, "Min")) return dnnl_binary_min;
    return (dnnl_alg_kind_t)0;
}

/* Finishes a primitive whose attr carries post-ops: creates the pd, defines
 * the output value from the chosen dst layout and adds the step. */
tsr_status *odn_build_finish(odn_plan *p, const tsr_node *n, const void *desc, dnnl_primitive_attr_t attr,
                             odn_value *last, int32_t rank, const int64_t *dims, dnnl_exec_arg_t *args, int nargs) {
    dnnl_primitive_desc_t pd;
    dnnl_status_t st = dnnl_primitive_desc_create(&pd, desc, attr, p->engine, NULL);
    if (st != dnnl_success) return odn_dnnl_error(n, "primitive setup", st);
    tsr_status *s = odn_build_finish_pd(p, n, pd, last, rank, dims, args, nargs);
    dnnl_primitive_desc_destroy(pd);
    return s;
}

tsr_status *odn_build_finish_pd(odn_plan *p, const tsr_node *n, const_dnnl_primitive_desc_t pd, odn_value *last,
                                int32_t rank, const int64_t *dims, dnnl_exec_arg_t *args, int nargs) {
    const dnnl_memory_desc_t *dst_md = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    tsr_status *s = odn_plan_define(p, last, rank, dims, dst_md, n);
    if (!s) {
        args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_DST, last->mem};
        s = odn_plan_add_primitive(p, pd, n, args, nargs);
    }
    return s;
}

tsr_status *odn_eltwise_step(odn_plan *p, const tsr_node *n, const odn_eltwise *el, const dnnl_memory_desc_t *md,
                             dnnl_memory_t src, dnnl_memory_t dst) {
    dnnl_eltwise_desc_t d;
    dnnl_status_t st = dnnl_eltwise_forward_desc_init(&d, dnnl_forward_inference, el->alg, md, el->alpha, el->beta);
    dnnl_primitive_desc_t pd = NULL;
    if (st == dnnl_success) st = dnnl_primitive_desc_create(&pd, &d, NULL, p->engine, NULL);
    if (st != dnnl_success) return odn_dnnl_error(n, "eltwise setup", st);
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
    tsr_status *s = odn_plan_add_primitive(p, pd, n, args, 2);
    dnnl_primitive_desc_destroy(pd);
    return s;
}

/* Whether oneDNN has a JIT kernel for each of the eltwise steps on `md`. */
static bool eltwise_is_fast(odn_plan *p, const odn_eltwise *el, int count, const dnnl_memory_desc_t *md) {
    for (int i = 0; i < count; i++) {
        dnnl_eltwise_desc_t d;
        dnnl_primitive_desc_t pd = NULL;
        if (dnnl_eltwise_forward_desc_init(&d, dnnl_forward_inference, el[i].alg, md, el[i].alpha, el[i].beta) !=
                dnnl_success ||
            odn_pd_create(p, &d, NULL, &pd) != dnnl_success)
            return false;
        dnnl_primitive_desc_destroy(pd);
    }
    return true;
}

/* A unary op on its own. No post-ops here: oneDNN 2.6's reference eltwise
 * (picked for tiny tensors) drops them, so a second op (HardSigmoid's clip)
 * runs as a second, in-place primitive. */
tsr_status *odn_build_eltwise(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *x = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    odn_eltwise el[2];
    int count = odn_eltwise_of(n, el);
    if (!x || !y || !x->produced || !x->mem || count == 0)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: eltwise inputs");
    dnnl_memory_t src = x->mem;
    const dnnl_memory_desc_t *md = &x->md;
    tsr_status *s = NULL;
    /* one descriptor serves src and dst, so a piece output forces plain */
    if (y->output_index >= 0) {
        s = odn_plan_plain_mem(p, x, n, &src);
        if (s) return s;
        dnnl_memory_get_memory_desc(src, &md);
    }
    /* oneDNN 2.6's tanh is 5x its logistic on AVX2 (odn_tanh_loop.c) */
    if (count == 1 && el[0].alg == dnnl_eltwise_tanh && odn_md_flat_f32(md) && odn_tanh_loop_supported()) {
        s = odn_plan_define(p, y, x->rank, x->dims, md, n);
        return s ? s : odn_tanh_loop_add(p, n, src, y->mem, odn_numel(md->ndims, md->dims));
    }
    if (el[0].alg == dnnl_eltwise_log || el[0].alg == dnnl_eltwise_exp || !eltwise_is_fast(p, el, count, md)) {
        /* oneDNN has only its reference kernel here (a padded blocked
         * layout, a tiny tensor): a C loop over plain memories. Log too:
         * oneDNN 2.6's log is 2e-6 off (log 2 = 0.693145752), and models
         * floor or cast it: T5's relative-position buckets,
         * floor(log(|i-j|/8)/log(16)*8), came out one lower at |i-j| = 16,
         * 32 and 64; logf is within an ulp. Exp: oneDNN's maps NaN to
         * +inf; the loop's keeps it (odn_vexp.h). */
        for (int i = 0; i < count; i++)
            if (!odn_eltwise_loop_known(el[i].alg))
                return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "no fast kernel for this unary op here");
        s = odn_plan_plain_mem(p, x, n, &src);
        if (!s) s = odn_plan_define(p, y, x->rank, x->dims, NULL, n);
        for (int i = 0; !s && i < count; i++)
            s = odn_eltwise_loop(p, n, &el[i], odn_numel(x->rank, x->dims), i == 0 ? src : y->mem, y->mem);
        return s;
    }
    s = odn_plan_define(p, y, x->rank, x->dims, md, n);
    for (int i = 0; !s && i < count; i++) s = odn_eltwise_step(p, n, &el[i], md, i == 0 ? src : y->mem, y->mem);
    return s;
}

/* The binary primitive for these layouts, dst laid out as src0; NULL when
 * oneDNN has only its reference kernel for them. */
static dnnl_primitive_desc_t binary_pd(odn_plan *p, const char *op, const dnnl_memory_desc_t *md0,
                                       const dnnl_memory_desc_t *md1, dnnl_primitive_attr_t attr) {
    dnnl_binary_desc_t d;
    dnnl_primitive_desc_t pd = NULL;
    if (dnnl_binary_desc_init(&d, odn_binary_alg(op), md0, md1, md0) != dnnl_success ||
        odn_pd_create(p, &d, attr, &pd) != dnnl_success)
        return NULL;
    return pd;
}

/* Whether oneDNN has a JIT kernel for the operands in plain layout (the
 * fallback formulation below); asked before post-ops are fused, so a node
 * it lacks one for runs as a C loop on its own. */
static bool plain_binary_is_fast(odn_plan *p, const char *op, int32_t rank, const int64_t *da, const int64_t *db) {
    dnnl_memory_desc_t md0, md1;
    if (odn_plain_md(&md0, rank, da) != dnnl_success || odn_plain_md(&md1, rank, db) != dnnl_success) return false;
    dnnl_primitive_desc_t pd = binary_pd(p, op, &md0, &md1, NULL);
    if (!pd) return false;
    dnnl_primitive_desc_destroy(pd);
    return true;
}

/* True for a per-channel operand over a channels-last 4-D tensor of fewer
 * channels than a vector holds (an image's 3, normalised in front of the
 * network, often straight from an NHWC input through a Transpose): oneDNN
 * 2.6's JIT binary takes ~5 ns an element there (0.78 ms for one 224x224
 * image), a reorder to plain and the C loop a tenth of that. */
static bool few_channels_last(const odn_value *a, int32_t rank, const int64_t *dims, const int64_t *db) {
    const dnnl_memory_desc_t *md = &a->md;
    if (rank != 4 || a->rank != 4 || dims[1] >= 16 || db[1] != dims[1] || db[0] != 1 || db[2] != 1 || db[3] != 1 ||
        md->ndims != 4 || md->format_kind != dnnl_blocked || md->format_desc.blocking.inner_nblks != 0)
        return false;
    return md->format_desc.blocking.strides[1] == 1 && dims[2] * dims[3] > 1;
}

tsr_status *odn_build_binary(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    const char *op = odn_host->node_op_type(n);
    odn_value *a = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *b = odn_plan_value(p, odn_host->node_input(n, 1));
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!a || !b || !y || !a->produced || !b->produced || !a->mem || !b->mem)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: binary inputs");
    int32_t rank = a->rank > b->rank ? a->rank : b->rank;
    int64_t dims[ODN_MAX_RANK], da[ODN_MAX_RANK], db[ODN_MAX_RANK];
    bool a_full = true, b_full = true;
    for (int32_t i = 0; i < rank; i++) {
        da[i] = i < rank - a->rank ? 1 : a->dims[i - (rank - a->rank)];
        db[i] = i < rank - b->rank ? 1 : b->dims[i - (rank - b->rank)];
        if (da[i] != db[i] && da[i] != 1 && db[i] != 1)
            return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "shapes do not broadcast");
        dims[i] = da[i] == 1 ? db[i] : da[i]; /* not the larger: 1 against 0 broadcasts to 0 */
        a_full = a_full && da[i] == dims[i];
        b_full = b_full && db[i] == dims[i];
    }
    bool commutes = !is(op, "Sub") && !is(op, "Div");
    if (!a_full && commutes && b_full) {
        odn_value *t = a;
        a = b;
        b = t;
        int64_t td[ODN_MAX_RANK];
        memcpy(td, da, sizeof td);
        memcpy(da, db, sizeof td);
        memcpy(db, td, sizeof td);
        a_full = true;
    }
    bool a_float = a->elem_type == 0 || a->elem_type == TSR_FLOAT,
         b_float = b->elem_type == 0 || b->elem_type == TSR_FLOAT;
    if (a_full && a_float && b_float && is(op, "Mul") && rank == 4 && odn_fold_scale_fits(p, a, y, dims, db)) {
        y->rank = 4;
        memcpy(y->dims, dims, sizeof(int64_t) * 4);
        y->md = a->md;
        y->defer_src = a;
        y->defer_scale = b;
        y->produced = true;
        return NULL;
    }
    if (a_full && a_float && b_float && odn_channel_loop_fits(a, op, rank, dims, db))
        return odn_build_channel_loop(p, n, a, b, y, dims, db);
    /* oneDNN's max/min (vmaxps) return the second operand when either is
     * NaN; ONNX Runtime and the reference provider give NaN */
    if (a_float && b_float && (is(op, "Max") || is(op, "Min")))
        return odn_build_binary_loop(p, n, a, b, y, rank, dims, da, db);
    if (!a_full || !plain_binary_is_fast(p, op, rank, da, db) || few_channels_last(a, rank, dims, db)) {
        bool is_float =
            (a->elem_type == 0 || a->elem_type == TSR_FLOAT) && (b->elem_type == 0 || b->elem_type == TSR_FLOAT);
        if (!is_float) return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "no fast binary kernel for these shapes");
        return odn_build_binary_loop(p, n, a, b, y, rank, dims, da, db);
    }
    dnnl_post_ops_t po;
    dnnl_primitive_attr_t attr;
    tsr_status *ps = odn_post_ops_new(n, &po, &attr);
    if (ps) return ps;
    dnnl_exec_arg_t args[ODN_MAX_ARGS];
    int nargs = 2;
    odn_value *last = y;
    /* [N>1, C, 1, ...]: oneDNN 2.6's binary applies a broadcast binary
     * post-op wrongly there (each channel gets channel 0's operand; a
     * quantize_dynamic CNN's bias after its scale Mul at a 1x1 map) */
    int64_t spatial = 1;
    for (int32_t i = 2; i < rank; i++) spatial *= dims[i];
    p->fuse_no_broadcast_binary = rank >= 2 && dims[0] > 1 && spatial == 1;
    tsr_status *s = odn_fuse_post_ops(p, y, rank, dims, po, args, &nargs, &last);
    p->fuse_no_broadcast_binary = false;
    dnnl_memory_t m0 = NULL, m1 = NULL;
    dnnl_memory_desc_t md0, md1;
    dnnl_primitive_desc_t pd = NULL;
    if (!s && dnnl_primitive_attr_set_post_ops(attr, po) != dnnl_success)
        s = odn_node_error(n, TSR_ERR_PROVIDER, "post-ops");
    if (!s && last->output_index < 0 && a->rank == rank && b->rank == rank) {
        /* the full operand in whatever (maybe blocked) layout it has, the
         * other in the same layout or, when it broadcasts (a squeeze-
         * excitation scale [N,C,1,1]), plain: no reorder of the big tensor
         * when oneDNN has a fast kernel for it */
        m0 = a->mem;
        md0 = a->md;
        bool same_layout = dnnl_memory_desc_equal(&a->md, &b->md);
        if (same_layout) {
            m1 = b->mem;
            md1 = b->md;
        } else {
            s = odn_plan_plain_view(p, b, rank, db, NULL, n, &m1, &md1);
        }
        if (!s) pd = binary_pd(p, op, &md0, &md1, attr);
    }
    if (!s && !pd) {
        s = odn_plan_plain_view(p, a, rank, da, NULL, n, &m0, &md0);
        if (!s) s = odn_plan_plain_view(p, b, rank, db, NULL, n, &m1, &md1);
        if (!s && !(pd = binary_pd(p, op, &md0, &md1, attr)))
            s = odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "oneDNN has no fast binary kernel for these shapes");
    }
    if (!s) {
        args[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC_0, m0};
        args[1] = (dnnl_exec_arg_t){DNNL_ARG_SRC_1, m1};
        /* the output keeps the ONNX shape (its rank may exceed both inputs') */
        s = odn_build_finish_pd(p, n, pd, last, rank, dims, args, nargs);
    }
    if (pd) dnnl_primitive_desc_destroy(pd);
    dnnl_post_ops_destroy(po);
    dnnl_primitive_attr_destroy(attr);
    return s;
}
