/* LRN: y = x / (bias + alpha / size * square_sum)^beta, where ONNX sums x^2
 * over channels [c - floor((size-1)/2), c + ceil((size-1)/2)].
 *
 * Two ways in oneDNN:
 *  - its across-channels LRN, which divides alpha by local_size as ONNX does
 *    but centres the window on the channel: exact for an odd size only;
 *  - a windowed sum written out (build_pooled): x^2, then an average pool
 *    over the channel axis with the window's asymmetric padding counted
 *    (giving square_sum / size), then bias + alpha * v, v^-beta and a
 *    multiply by x. Exact for every size; used for even ones (and for odd
 *    ones where the LRN primitive has no implementation). */
#include "odn.h"

/* An LRN primitive over data laid out as `md`, or NULL when oneDNN has none
 * for that layout. */
static dnnl_primitive_desc_t lrn_pd(odn_plan *p, const tsr_node *n, const dnnl_memory_desc_t *md) {
    dnnl_lrn_desc_t d;
    dnnl_primitive_desc_t pd = NULL;
    int64_t size = odn_attr_int(n, "size", 1);
    dnnl_status_t st = dnnl_lrn_forward_desc_init(&d, dnnl_forward_inference, dnnl_lrn_across_channels, md, size,
                                                  odn_attr_float(n, "alpha", 1e-4f), odn_attr_float(n, "beta", 0.75f),
                                                  odn_attr_float(n, "bias", 1.0f));
    if (st == dnnl_success && dnnl_primitive_desc_create(&pd, &d, NULL, p->engine, NULL) != dnnl_success) pd = NULL;
    /* plain layouts get only lrn_ref: the windowed sum is then the fast way */
    if (pd && odn_impl_is_ref(odn_impl_name(pd))) {
        dnnl_primitive_desc_destroy(pd);
        pd = NULL;
    }
    return pd;
}

/* Plain row-major (N, C, spatial...) data seen as a 1-D pooling tensor whose
 * spatial axis is C: dims (N, S, C) with S the product of the spatial dims,
 * in nwc order. x[n][c][s] sits at n*C*S + c*S + s, which is exactly where
 * nwc puts element (n, s, c), so the view costs nothing and the pool
 * vectorises over the S "channels". */
static dnnl_status_t channel_window_md(dnnl_memory_desc_t *md, const odn_value *x) {
    int64_t s = 1;
    for (int32_t d = 2; d < x->rank; d++) s *= x->dims[d];
    dnnl_dims_t dims = {x->dims[0], s, x->dims[1]};
    return dnnl_memory_desc_init_by_tag(md, 3, dims, dnnl_f32, dnnl_nwc);
}

/* The primitive for `desc` with eltwise post-ops `el` and, when `mul_md`,
 * a final binary multiply by an operand laid out as mul_md; NULL when
 * oneDNN declines that combination. */
static dnnl_primitive_desc_t with_post_ops(odn_plan *p, const void *desc, const odn_eltwise *el, int nel,
                                           const dnnl_memory_desc_t *mul_md) {
    dnnl_primitive_attr_t attr = NULL;
    dnnl_post_ops_t po = NULL;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_status_t st = dnnl_primitive_attr_create(&attr);
    if (st == dnnl_success) st = dnnl_post_ops_create(&po);
    for (int i = 0; i < nel && st == dnnl_success; i++)
        st = dnnl_post_ops_append_eltwise(po, 1.0f, el[i].alg, el[i].alpha, el[i].beta);
    if (st == dnnl_success && mul_md) st = dnnl_post_ops_append_binary(po, dnnl_binary_mul, mul_md);
    if (st == dnnl_success) st = dnnl_primitive_attr_set_post_ops(attr, po);
    if (st == dnnl_success && dnnl_primitive_desc_create(&pd, desc, attr, p->engine, NULL) != dnnl_success) pd = NULL;
    if (po) dnnl_post_ops_destroy(po);
    if (attr) dnnl_primitive_attr_destroy(attr);
    return pd;
}

/* LRN of any size on plain data viewed by channel_window_md:
 *   sq = x^2
 *   y  = bias + alpha * avgpool(sq)     (avg counts the padding: sum / size)
 *   y  = log(y)
 *   y  = x * exp(-beta * y)             (binary by scalar -beta, post-ops)
 * v^-beta is not oneDNN 2.6's pow post-op: with a fractional exponent it
 * made the whole LRN ~20x slower (2.4 ms against 0.11 ms for square + pool
 * on 1x64x56x56, one thread). The log is a step of its own because as a
 * pooling post-op it gave wrong values with oneDNN 2.6.3 (avx512 pooling,
 * nwc), and eltwise post-ops on an eltwise primitive fall to a slow
 * reference kernel. */
static tsr_status *build_pooled(odn_plan *p, const tsr_node *n, odn_value *x, odn_value *y) {
    dnnl_memory_t src, xs, ys, sq;
    dnnl_memory_desc_t md;
    tsr_status *s = odn_plan_plain_mem(p, x, n, &src);
    if (!s) s = odn_plan_define(p, y, x->rank, x->dims, NULL, n);
    if (s) return s;
    dnnl_status_t st = channel_window_md(&md, x);
    if (st != dnnl_success) return odn_dnnl_error(n, "LRN channel view", st);
    s = odn_plan_view(p, src, &md, n, &xs);
    if (!s) s = odn_plan_view(p, y->mem, &md, n, &ys);
    /* the squares need a buffer of their own: the pool reads neighbours */
    if (!s) s = odn_plan_new_mem(p, &md, DNNL_MEMORY_ALLOCATE, n, &sq);
    if (!s) s = odn_eltwise_step(p, n, &(odn_eltwise){dnnl_eltwise_square, 1.0f, 0.0f}, &md, xs, sq);
    if (s) return s;

    int64_t size = odn_attr_int(n, "size", 1);
    dnnl_dims_t kernel = {size}, strides = {1}, dil = {0};
    dnnl_dims_t pad_l = {(size - 1) / 2}, pad_r = {size - 1 - (size - 1) / 2};
    dnnl_pooling_v2_desc_t pool;
    st = dnnl_pooling_v2_forward_desc_init(&pool, dnnl_forward_inference, dnnl_pooling_avg_include_padding, &md, &md,
                                           strides, kernel, dil, pad_l, pad_r);
    if (st != dnnl_success) return odn_dnnl_error(n, "LRN window setup", st);
    odn_eltwise scale = {dnnl_eltwise_linear, odn_attr_float(n, "alpha", 1e-4f), odn_attr_float(n, "bias", 1.0f)};
    dnnl_primitive_desc_t pd = with_post_ops(p, &pool, &scale, 1, NULL);
    if (!pd) return odn_node_error(n, TSR_ERR_PROVIDER, "oneDNN has no pooling for this LRN");
    dnnl_exec_arg_t pargs[2] = {{DNNL_ARG_SRC, sq}, {DNNL_ARG_DST, ys}};
    s = odn_plan_add_primitive(p, pd, n, pargs, 2);
    dnnl_primitive_desc_destroy(pd);
    if (s) return s;

    s = odn_eltwise_step(p, n, &(odn_eltwise){dnnl_eltwise_log, 1.0f, 0.0f}, &md, ys, ys);
    if (s) return s;

    /* y = exp(log(v) * -beta) * x: a binary multiply by the scalar -beta with
     * exp and the multiply by x as post-ops */
    float *neg_beta = odn_plan_alloc(p, sizeof(float));
    if (!neg_beta) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    *neg_beta = -odn_attr_float(n, "beta", 0.75f);
    dnnl_dims_t one = {1, 1, 1};
    dnnl_memory_desc_t scalar_md;
    dnnl_memory_t scalar;
    st = dnnl_memory_desc_init_by_tag(&scalar_md, 3, one, dnnl_f32, dnnl_abc);
    if (st != dnnl_success) return odn_dnnl_error(n, "LRN beta layout", st);
    s = odn_plan_new_mem(p, &scalar_md, neg_beta, n, &scalar);
    if (s) return s;
    dnnl_binary_desc_t bd;
    st = dnnl_binary_desc_init(&bd, dnnl_binary_mul, &md, &scalar_md, &md);
    if (st != dnnl_success) return odn_dnnl_error(n, "LRN power setup", st);
    odn_eltwise exp = {dnnl_eltwise_exp, 0.0f, 0.0f};
    pd = with_post_ops(p, &bd, &exp, 1, &md);
    if (!pd) return odn_node_error(n, TSR_ERR_PROVIDER, "oneDNN has no binary with post-ops for this LRN");
    dnnl_exec_arg_t bargs[4] = {{DNNL_ARG_SRC_0, ys},
                                {DNNL_ARG_SRC_1, scalar},
                                {DNNL_ARG_DST, ys},
                                {DNNL_ARG_ATTR_MULTIPLE_POST_OP(1) | DNNL_ARG_SRC_1, xs}};
    s = odn_plan_add_primitive(p, pd, n, bargs, 4);
    dnnl_primitive_desc_destroy(pd);
    return s;
}

tsr_status *odn_build_lrn(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *x = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!x || !y || !x->produced || !x->mem || x->rank < 3)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: LRN inputs");
    if (odn_attr_int(n, "size", 1) % 2 == 0) return build_pooled(p, n, x, y);
    dnnl_memory_t src = x->mem;
    const dnnl_memory_desc_t *md = &x->md;
    /* src and dst share one layout: the producer's (often blocked), unless
     * the result leaves the piece or oneDNN has no LRN for that layout */
    dnnl_primitive_desc_t pd = y->output_index < 0 ? lrn_pd(p, n, md) : NULL;
    if (!pd) {
        tsr_status *s = odn_plan_plain_mem(p, x, n, &src);
        if (s) return s;
        dnnl_memory_get_memory_desc(src, &md);
        pd = lrn_pd(p, n, md);
        if (!pd) return build_pooled(p, n, x, y);
    }
    tsr_status *s = odn_plan_define(p, y, x->rank, x->dims, md, n);
    if (!s) {
        dnnl_exec_arg_t args[2] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, y->mem}};
        s = odn_plan_add_primitive(p, pd, n, args, 2);
    }
    dnnl_primitive_desc_destroy(pd);
    return s;
}
