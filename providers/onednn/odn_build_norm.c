/* BatchNormalization (inference), LayerNormalization, Softmax and
 * LogSoftmax. */
#include <string.h>

#include "odn.h"

/* A 1-D plain view of a statistics/scale input of `c` elements. */
static tsr_status *vector_mem(odn_plan *p, const tsr_node *n, size_t k, int64_t c, dnnl_memory_t *mem) {
    odn_value *v = odn_plan_value(p, odn_host->node_input(n, k));
    if (!v || !v->mem) return odn_node_error(n, TSR_ERR_PROVIDER, "internal: input %zu", k);
    if (odn_numel(v->rank, v->dims) != c)
        return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "input %zu has %lld elements, wants %lld", k,
                              (long long)odn_numel(v->rank, v->dims), (long long)c);
    return odn_plan_plain_view(p, v, 1, &c, NULL, n, mem, NULL);
}

tsr_status *odn_build_batchnorm(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *x = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!x || !y || !x->produced || x->rank < 2)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: batchnorm inputs");
    bool handled;
    tsr_status *ls = odn_bn_loop_try(p, index, &handled);
    if (ls || handled) return ls;
    int64_t c = x->dims[1];
    dnnl_exec_arg_t args[ODN_MAX_ARGS];
    dnnl_memory_t scale, shift, mean, var;
    tsr_status *s = vector_mem(p, n, 1, c, &scale);
    if (!s) s = vector_mem(p, n, 2, c, &shift);
    if (!s) s = vector_mem(p, n, 3, c, &mean);
    if (!s) s = vector_mem(p, n, 4, c, &var);
    if (s) return s;
    dnnl_memory_t src = x->mem;
    const dnnl_memory_desc_t *md = &x->md;
    if (y->output_index >= 0) {
        s = odn_plan_plain_mem(p, x, n, &src);
        if (s) return s;
        dnnl_memory_get_memory_desc(src, &md);
    }
    dnnl_batch_normalization_desc_t d;
    /* oneDNN 2.6 has only bnorm_ref for 3-D: [N,C,T] as [N,C,1,T] (views) */
    dnnl_memory_desc_t md4, dst3;
    dnnl_dims_t d4 = {x->dims[0], x->dims[1], 1, x->rank == 3 ? x->dims[2] : 0};
    dnnl_dims_t d3 = {x->dims[0], x->dims[1], d4[3]};
    if (x->rank == 3 && dnnl_memory_desc_reshape(&md4, md, 4, d4) == dnnl_success) {
        dnnl_memory_t src4, dst4;
        dnnl_primitive_desc_t pd = NULL;
        s = odn_plan_view(p, src, &md4, n, &src4);
        dnnl_status_t st4 = dnnl_batch_normalization_forward_desc_init(
            &d, dnnl_forward_inference, &md4, odn_attr_float(n, "epsilon", 1e-5f),
            dnnl_use_global_stats | dnnl_use_scale | dnnl_use_shift);
        if (!s && st4 == dnnl_success) st4 = dnnl_primitive_desc_create(&pd, &d, NULL, p->engine, NULL);
        if (!s && st4 == dnnl_success)
            st4 = dnnl_memory_desc_reshape(&dst3, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), 3, d3);
        if (!s && st4 != dnnl_success) s = odn_dnnl_error(n, "batch normalization setup", st4);
        if (!s) s = odn_plan_define(p, y, 3, x->dims, &dst3, n);
        if (!s) s = odn_plan_view(p, y->mem, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), n, &dst4);
        if (!s) {
            dnnl_exec_arg_t a4[6] = {{DNNL_ARG_SRC, src4},  {DNNL_ARG_SCALE, scale},  {DNNL_ARG_SHIFT, shift},
                                     {DNNL_ARG_MEAN, mean}, {DNNL_ARG_VARIANCE, var}, {DNNL_ARG_DST, dst4}};
            s = odn_plan_add_primitive(p, pd, n, a4, 6);
        }
        if (pd) dnnl_primitive_desc_destroy(pd);
        return s;
    }
    dnnl_status_t st =
        dnnl_batch_normalization_forward_desc_init(&d, dnnl_forward_inference, md, odn_attr_float(n, "epsilon", 1e-5f),
                                                   dnnl_use_global_stats | dnnl_use_scale | dnnl_use_shift);
    if (st != dnnl_success) return odn_dnnl_error(n, "batch normalization setup", st);
    args[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, src};
    args[1] = (dnnl_exec_arg_t){DNNL_ARG_SCALE, scale};
    args[2] = (dnnl_exec_arg_t){DNNL_ARG_SHIFT, shift};
    args[3] = (dnnl_exec_arg_t){DNNL_ARG_MEAN, mean};
    args[4] = (dnnl_exec_arg_t){DNNL_ARG_VARIANCE, var};
    return odn_build_finish(p, n, &d, NULL, y, x->rank, x->dims, args, 5);
}

/* Splits dims at `axis` into [outer, inner] (the ONNX 2-D coercion). */
static void split_2d(const odn_value *x, int64_t axis, int64_t *two) {
    two[0] = odn_numel((int32_t)axis, x->dims);
    two[1] = odn_numel(x->rank - (int32_t)axis, x->dims + axis);
}

tsr_status *odn_build_softmax(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *x = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!x || !y || !x->produced) return odn_node_error(n, TSR_ERR_PROVIDER, "internal: softmax inputs");
    bool coerce = odn_host->node_opset(n) < 13;
    int64_t axis = odn_attr_int(n, "axis", coerce ? 1 : -1);
    int32_t r = x->rank > 0 ? x->rank : 1;
    if (axis < -r || axis >= r) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "axis out of range");
    if (axis < 0) axis += r;
    int64_t two[2];
    int32_t vr = x->rank;
    const int64_t *vd = x->dims;
    int dnnl_axis = (int)axis;
    if (coerce || x->rank == 0) {
        if (x->rank == 0) two[0] = two[1] = 1;
        else split_2d(x, axis, two);
        vr = 2;
        vd = two;
        dnnl_axis = 1;
    }
    dnnl_memory_t src, dst;
    dnnl_memory_desc_t md;
    tsr_status *s = odn_plan_plain_view(p, x, vr, vd, NULL, n, &src, &md);
    if (!s) s = odn_plan_define(p, y, x->rank, x->dims, NULL, n);
    if (!s) s = odn_plan_plain_view(p, y, vr, vd, NULL, n, &dst, NULL);
    if (s) return s;
    dnnl_softmax_v2_desc_t d;
    bool log = strcmp(odn_host->node_op_type(n), "LogSoftmax") == 0;
    dnnl_status_t st = dnnl_softmax_v2_forward_desc_init(
        &d, dnnl_forward_inference, log ? dnnl_softmax_log : dnnl_softmax_accurate, &md, &md, dnnl_axis);
    if (st != dnnl_success) return odn_dnnl_error(n, "softmax setup", st);
    dnnl_primitive_desc_t pd;
    if (odn_pd_create(p, &d, NULL, &pd) != dnnl_success) {
        /* a middle axis: oneDNN 2.6 has only its reference kernel */
        int64_t outer = odn_numel(dnnl_axis, vd), inner = odn_numel(vr - dnnl_axis - 1, vd + dnnl_axis + 1);
        return odn_softmax_loop(p, n, outer, vd[dnnl_axis], inner, log, src, dst);
    }
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
    s = odn_plan_add_primitive(p, pd, n, args, 2);
    dnnl_primitive_desc_destroy(pd);
    return s;
}

tsr_status *odn_build_layernorm(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *x = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!x || !y || !x->produced || x->rank < 1)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: layernorm inputs");
    int64_t axis = odn_attr_int(n, "axis", -1);
    if (axis < -x->rank || axis >= x->rank) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "axis out of range");
    if (axis < 0) axis += x->rank;
    int64_t two[2];
    split_2d(x, axis, two);
    dnnl_memory_t src, dst, scale, shift = NULL;
    dnnl_memory_desc_t md;
    tsr_status *s = odn_plan_plain_view(p, x, 2, two, NULL, n, &src, &md);
    if (!s) s = vector_mem(p, n, 1, two[1], &scale);
    bool has_b = odn_host->node_input_count(n) > 2 && odn_host->node_input(n, 2);
    if (!s && has_b) s = vector_mem(p, n, 2, two[1], &shift);
    if (!s) s = odn_plan_define(p, y, x->rank, x->dims, NULL, n);
    if (!s) s = odn_plan_plain_view(p, y, 2, two, NULL, n, &dst, NULL);
    if (s) return s;
    dnnl_layer_normalization_desc_t d;
    unsigned flags = dnnl_use_scale | (has_b ? dnnl_use_shift : 0);
    dnnl_status_t st = dnnl_layer_normalization_forward_desc_init(&d, dnnl_forward_inference, &md, NULL,
                                                                  odn_attr_float(n, "epsilon", 1e-5f), flags);
    if (st != dnnl_success) return odn_dnnl_error(n, "layer normalization setup", st);
    dnnl_primitive_desc_t pd;
    st = dnnl_primitive_desc_create(&pd, &d, NULL, p->engine, NULL);
    if (st != dnnl_success) return odn_dnnl_error(n, "layer normalization setup", st);
    dnnl_exec_arg_t args[4] = {
        {DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCALE, scale}, {DNNL_ARG_SHIFT, shift}};
    s = odn_plan_add_primitive(p, pd, n, args, has_b ? 4 : 3);
    dnnl_primitive_desc_destroy(pd);
    return s;
}
