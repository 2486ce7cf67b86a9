/* Concat as one oneDNN concat: in the layout all its inputs share (plain,
 * channels-last, or nChw16c when every part is whole blocks), else over
 * plain views of them. */
#include "odn.h"

#define ODN_CONCAT_MAX_INPUTS (ODN_MAX_ARGS - 1) /* plus DST */

tsr_status *odn_build_concat(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    size_t count = odn_host->node_input_count(n);
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    odn_value *first = count ? odn_plan_value(p, odn_host->node_input(n, 0)) : NULL;
    if (!y || !first || count > ODN_CONCAT_MAX_INPUTS || first->rank < 1)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: concat inputs");
    int32_t r = first->rank;
    int64_t axis = odn_attr_int(n, "axis", 0);
    if (axis < -r || axis >= r) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "axis out of range");
    if (axis < 0) axis += r;
    int64_t out[ODN_MAX_RANK];
    for (int32_t d = 0; d < r; d++) out[d] = first->dims[d];
    out[axis] = 0;
    dnnl_memory_desc_t mds[ODN_CONCAT_MAX_INPUTS];
    dnnl_exec_arg_t args[ODN_MAX_ARGS];
    dnnl_format_tag_t tag = y->output_index >= 0 ? dnnl_format_tag_undef : odn_layout_tag(first);
    for (size_t i = 0; i < count && tag != dnnl_format_tag_undef; i++) {
        odn_value *v = odn_plan_value(p, odn_host->node_input(n, i));
        if (!v || !v->mem || v->rank != r || odn_layout_tag(v) != tag ||
            (odn_layout_is_blocked(tag) && (axis != 1 || v->dims[1] % 16 != 0)))
            tag = dnnl_format_tag_undef;
    }
    for (size_t i = 0; i < count; i++) {
        odn_value *v = odn_plan_value(p, odn_host->node_input(n, i));
        if (!v || !v->mem || v->rank != r) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "input %zu rank differs", i);
        for (int32_t d = 0; d < r; d++)
            if (d != axis && v->dims[d] != first->dims[d])
                return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "input %zu dim %d differs", i, (int)d);
        if (out[axis] > INT64_MAX - v->dims[axis]) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "size overflows");
        out[axis] += v->dims[axis];
        args[i].arg = DNNL_ARG_MULTIPLE_SRC + (int)i;
        if (tag != dnnl_format_tag_undef) {
            mds[i] = v->md;
            args[i].memory = v->mem;
            continue;
        }
        tsr_status *s = odn_plan_plain_view(p, v, r, v->dims, NULL, n, &args[i].memory, &mds[i]);
        if (s) return s;
    }
    dnnl_memory_desc_t y_md;
    dnnl_dims_t od;
    for (int32_t d = 0; d < r; d++) od[d] = out[d];
    if (tag != dnnl_format_tag_undef && dnnl_memory_desc_init_by_tag(&y_md, r, od, first->md.data_type, tag) != dnnl_success)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: concat layout");
    tsr_status *s = odn_plan_define(p, y, r, out, tag != dnnl_format_tag_undef ? &y_md : NULL, n);
    if (s) return s;
    dnnl_primitive_desc_t pd;
    dnnl_status_t st = dnnl_concat_primitive_desc_create(&pd, &y->md, (int)count, (int)axis, mds, NULL, p->engine);
    if (st != dnnl_success) return odn_dnnl_error(n, "concat setup", st);
    args[count] = (dnnl_exec_arg_t){DNNL_ARG_DST, y->mem};
    s = odn_plan_add_primitive(p, pd, n, args, (int)count + 1);
    dnnl_primitive_desc_destroy(pd);
    return s;
}
