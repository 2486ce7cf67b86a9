/* LRN as oneDNN's across-channels LRN. Both compute
 * y = x / (bias + alpha / size * sum of x^2 over the window)^beta, oneDNN
 * dividing alpha by local_size as ONNX does; the window is centred on the
 * channel, which matches ONNX only for an odd size (odn_claim.c declines
 * even ones). */
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
    return pd;
}

tsr_status *odn_build_lrn(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *x = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!x || !y || !x->produced || !x->mem || x->rank < 3) return odn_node_error(n, TSR_ERR_PROVIDER, "internal: LRN inputs");
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
        if (!pd) return odn_node_error(n, TSR_ERR_PROVIDER, "oneDNN has no LRN for this shape");
    }
    tsr_status *s = odn_plan_define(p, y, x->rank, x->dims, md, n);
    if (!s) {
        dnnl_exec_arg_t args[2] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, y->mem}};
        s = odn_plan_add_primitive(p, pd, n, args, 2);
    }
    dnnl_primitive_desc_destroy(pd);
    return s;
}
