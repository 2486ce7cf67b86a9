/* ReduceLogSum and ReduceLogSumExp from oneDNN reductions, eltwise and
 * binary primitives.
 *
 * ReduceLogSum is log(sum x): a sum reduction, then log in place.
 * ReduceLogSumExp is computed in the stable form m + log(sum exp(x - m)),
 * m the maximum over the reduced axes, so exp never overflows where the
 * result is finite. oneDNN's max drops NaN, but a NaN still reaches the
 * result through x - m, as ONNX wants. m is clipped to the finite floats so
 * that an infinite maximum does not turn x - m into inf - inf: with
 * m = FLT_MAX the +inf element stays +inf (result +inf), and with every
 * element -inf, m = -FLT_MAX gives log(0) + m = -inf, both as in
 * log(sum(exp(x))).
 * oneDNN's exp turns NaN into a large finite value (its range clamp drops
 * NaN), so a last C loop writes NaN wherever a reduced row held one. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "odn.h"

/* One primitive step from a descriptor with plain SRC/DST-style arguments. */
static tsr_status *step(odn_plan *p, const tsr_node *n, const void *desc, const dnnl_primitive_attr_t attr,
                        const dnnl_exec_arg_t *args, int nargs, const char *what) {
    dnnl_primitive_desc_t pd;
    dnnl_status_t st = dnnl_primitive_desc_create(&pd, desc, attr, p->engine, NULL);
    if (st != dnnl_success) return odn_dnnl_error(n, what, st);
    tsr_status *s = odn_plan_add_primitive(p, pd, n, args, nargs);
    dnnl_primitive_desc_destroy(pd);
    return s;
}

static tsr_status *reduction(odn_plan *p, const tsr_node *n, dnnl_alg_kind_t alg, const dnnl_memory_desc_t *src_md,
                             dnnl_memory_t src, const dnnl_memory_desc_t *dst_md, dnnl_memory_t dst) {
    dnnl_reduction_desc_t d;
    dnnl_status_t st = dnnl_reduction_desc_init(&d, alg, src_md, dst_md, 0.0f, 0.0f);
    if (st != dnnl_success) return odn_dnnl_error(n, "reduction setup", st);
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
    return step(p, n, &d, NULL, args, 2, "reduction setup");
}

/* In place: m = alg(m) (alpha, beta as oneDNN eltwise takes them). */
static tsr_status *eltwise(odn_plan *p, const tsr_node *n, dnnl_alg_kind_t alg, float alpha, float beta,
                           const dnnl_memory_desc_t *md, dnnl_memory_t m) {
    dnnl_eltwise_desc_t d;
    dnnl_status_t st = dnnl_eltwise_forward_desc_init(&d, dnnl_forward_inference, alg, md, alpha, beta);
    if (st != dnnl_success) return odn_dnnl_error(n, "eltwise setup", st);
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_SRC, m}, {DNNL_ARG_DST, m}};
    return step(p, n, &d, NULL, args, 2, "eltwise setup");
}

/* dst = a alg b (b broadcast to a's shape), then `post` on dst when not
 * undef. */
static tsr_status *binary(odn_plan *p, const tsr_node *n, dnnl_alg_kind_t alg, const dnnl_memory_desc_t *a_md,
                          dnnl_memory_t a, const dnnl_memory_desc_t *b_md, dnnl_memory_t b, dnnl_memory_t dst,
                          dnnl_alg_kind_t post) {
    dnnl_binary_desc_t d;
    dnnl_status_t st = dnnl_binary_desc_init(&d, alg, a_md, b_md, a_md);
    if (st != dnnl_success) return odn_dnnl_error(n, "binary setup", st);
    dnnl_primitive_attr_t attr = NULL;
    dnnl_post_ops_t po = NULL;
    if (post != dnnl_alg_kind_undef) {
        if (dnnl_primitive_attr_create(&attr) != dnnl_success)
            return odn_node_error(n, TSR_ERR_NO_MEMORY, "attributes");
        st = dnnl_post_ops_create(&po);
        if (st == dnnl_success) st = dnnl_post_ops_append_eltwise(po, 1.0f, post, 0.0f, 0.0f);
        if (st == dnnl_success) st = dnnl_primitive_attr_set_post_ops(attr, po);
        if (po) dnnl_post_ops_destroy(po);
        if (st != dnnl_success) {
            dnnl_primitive_attr_destroy(attr);
            return odn_dnnl_error(n, "post-op setup", st);
        }
    }
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC_0, a}, {DNNL_ARG_SRC_1, b}, {DNNL_ARG_DST, dst}};
    tsr_status *s = step(p, n, &d, attr, args, 3, "binary setup");
    if (attr) dnnl_primitive_attr_destroy(attr);
    return s;
}

/* Where each element of x lands in the kept-dims output. */
typedef struct nan_geom {
    int32_t rank;
    int64_t dims[ODN_MAX_RANK];
    int64_t out_strides[ODN_MAX_RANK]; /* 0 along reduced dims */
} nan_geom;

static tsr_status *propagate_nan(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const nan_geom *g = ctx;
    void *in = NULL, *out = NULL;
    dnnl_memory_get_data_handle(src, &in);
    dnnl_memory_get_data_handle(dst, &out);
    const float *x = in;
    float *y = out;
    int64_t idx[ODN_MAX_RANK] = {0}, total = odn_numel(g->rank, g->dims), off = 0;
    for (int64_t i = 0; i < total; i++) {
        if (isnan(x[i])) y[off] = NAN;
        /* next index, odometer style, keeping the output offset */
        for (int32_t d = g->rank - 1; d >= 0; d--) {
            off += g->out_strides[d];
            if (++idx[d] < g->dims[d]) break;
            off -= g->out_strides[d] * g->dims[d];
            idx[d] = 0;
        }
    }
    return NULL;
}

tsr_status *odn_build_logsum(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    bool lse = strcmp(odn_host->node_op_type(n), "ReduceLogSumExp") == 0;
    odn_reduce_io io;
    tsr_status *s = odn_reduce_setup(p, n, &io);
    if (s) return s;
    const odn_value *x = io.x;
    const int64_t *kept = io.kept;
    dnnl_memory_t src = io.src, dst = io.dst;
    dnnl_memory_desc_t src_md = io.src_md, dst_md = io.dst_md;
    bool shrinks = io.shrinks;
    /* the log as logf (oneDNN 2.6's is 2e-6 off: odn_build_eltwise.c) */
    const odn_eltwise log_el = {dnnl_eltwise_log, 1.0f, 0.0f};
    int64_t kept_count = odn_numel(x->rank, kept);
    if (!shrinks && !lse) return odn_eltwise_loop(p, n, &log_el, kept_count, src, dst);
    if (!shrinks) {
        /* oneDNN refuses a reduction that reduces nothing: the result is
         * log(x), or for LogSumExp log(exp(x)) = x exactly */
        dnnl_eltwise_desc_t d;
        dnnl_status_t st =
            dnnl_eltwise_forward_desc_init(&d, dnnl_forward_inference, dnnl_eltwise_linear, &src_md, 1.0f, 0.0f);
        if (st != dnnl_success) return odn_dnnl_error(n, "eltwise setup", st);
        dnnl_exec_arg_t args[2] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
        return step(p, n, &d, NULL, args, 2, "eltwise setup");
    }
    if (!lse) {
        s = reduction(p, n, dnnl_reduction_sum, &src_md, src, &dst_md, dst);
        return s ? s : odn_eltwise_loop(p, n, &log_el, kept_count, dst, dst);
    }
    /* m (the kept-dims shape) and exp(x - m) (x's shape) in plan-owned
     * buffers */
    dnnl_memory_t m, t;
    s = odn_plan_new_mem(p, &dst_md, DNNL_MEMORY_ALLOCATE, n, &m);
    if (!s) s = odn_plan_new_mem(p, &src_md, DNNL_MEMORY_ALLOCATE, n, &t);
    if (!s) s = reduction(p, n, dnnl_reduction_max, &src_md, src, &dst_md, m);
    if (!s) s = eltwise(p, n, dnnl_eltwise_clip_v2, -FLT_MAX, FLT_MAX, &dst_md, m);
    if (!s) s = binary(p, n, dnnl_binary_sub, &src_md, src, &dst_md, m, t, dnnl_eltwise_exp);
    if (!s) s = reduction(p, n, dnnl_reduction_sum, &src_md, t, &dst_md, dst);
    if (!s) s = odn_eltwise_loop(p, n, &log_el, kept_count, dst, dst);
    if (!s) s = binary(p, n, dnnl_binary_add, &dst_md, dst, &dst_md, m, dst, dnnl_alg_kind_undef);
    if (s) return s;
    nan_geom *g = odn_plan_alloc(p, sizeof *g);
    if (!g) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    g->rank = x->rank;
    int64_t stride = 1;
    for (int32_t d = x->rank - 1; d >= 0; d--) {
        g->dims[d] = x->dims[d];
        g->out_strides[d] = kept[d] == x->dims[d] ? stride : 0;
        stride *= kept[d];
    }
    return odn_plan_add_loop(p, propagate_nan, g, src, dst, n);
}
