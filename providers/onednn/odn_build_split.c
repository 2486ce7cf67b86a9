/* Split as one reorder per output from a sub-memory of the input (an
 * offset window into its buffer), each output in the input's layout where
 * that layout holds for the output's shape: YOLO's C2f blocks split a
 * convolution's channels and feed both halves to convolutions again. */
#include <string.h>

#include "odn.h"

/* The sizes along `axis` of the node's outputs, as the attribute (before
 * opset 13), the constant second input, or equal parts; false when they
 * are not constants or do not add up. */
static bool split_sizes(const tsr_node *n, int64_t total, size_t outs, int64_t *sizes) {
    const int64_t *given = NULL;
    size_t count = 0;
    if (odn_host->node_input_count(n) > 1 && odn_host->node_input(n, 1)) {
        const tsr_tensor *t = odn_host->value_constant(odn_host->node_input(n, 1));
        if (!t || t->elem_type != TSR_INT64 || t->rank != 1) return false;
        given = t->data;
        count = (size_t)t->dims[0];
    } else {
        given = odn_attr_ints(n, "split", &count);
    }
    int64_t sum = 0;
    if (given) {
        if (count != outs) return false;
        for (size_t i = 0; i < outs; i++) {
            if (given[i] < 0 || given[i] > total) return false; /* and the sum cannot overflow */
            sizes[i] = given[i];
            sum += given[i];
        }
        return sum == total;
    }
    /* equal parts, the last one smaller when it does not divide (opset 18) */
    int64_t part = (total + (int64_t)outs - 1) / (int64_t)outs;
    for (size_t i = 0; i < outs; i++) {
        sizes[i] = total - sum < part ? total - sum : part;
        sum += sizes[i];
    }
    return sum == total;
}

int odn_split_check(const tsr_node *n, int32_t rank, int64_t axis_dim, char *why, size_t size) {
    size_t outs = odn_host->node_output_count(n);
    int64_t sizes[ODN_MAX_ARGS];
    if (outs < 1 || outs > ODN_MAX_ARGS) return odn_decline(why, size, TSR_DECLINE_OTHER, "%zu outputs", outs);
    if (rank < 1 || rank > ODN_MAX_RANK)
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "input rank unknown or above %d", ODN_MAX_RANK);
    int64_t axis = odn_attr_int(n, "axis", 0);
    if (axis < -rank || axis >= rank) return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "axis out of range");
    if (axis_dim >= 0 && !split_sizes(n, axis_dim, outs, sizes))
        return odn_decline(why, size, TSR_DECLINE_OTHER, "split sizes not constant or not adding up to the axis");
    for (size_t i = 0; i < outs; i++)
        if (!odn_host->node_output(n, i)) return odn_decline(why, size, TSR_DECLINE_OTHER, "an output is omitted");
    return 0;
}

tsr_status *odn_build_split(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *x = odn_plan_value(p, odn_host->node_input(n, 0));
    size_t outs = odn_host->node_output_count(n);
    if (!x || !x->produced || !x->mem || outs < 1 || outs > ODN_MAX_ARGS)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: split inputs");
    int32_t r = x->rank;
    int64_t axis = odn_attr_int(n, "axis", 0);
    if (axis < -r || axis >= r) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "axis out of range");
    if (axis < 0) axis += r;
    int64_t sizes[ODN_MAX_ARGS];
    if (!split_sizes(n, x->dims[axis], outs, sizes))
        return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "split sizes do not add up to %lld",
                              (long long)x->dims[axis]);
    dnnl_format_tag_t tag = odn_layout_tag(x);
    /* a window of a blocked layout is addressable only at whole blocks */
    bool keep = tag != dnnl_format_tag_undef;
    for (size_t i = 0; keep && i < outs; i++)
        if (odn_layout_is_blocked(tag) && axis == 1 && sizes[i] % odn_block() != 0) keep = false;
    if (odn_layout_is_blocked(tag) && axis != 1) keep = false;
    dnnl_memory_t src = x->mem;
    dnnl_memory_desc_t src_md = x->md;
    tsr_status *s = NULL;
    if (!keep) {
        s = odn_plan_plain_mem(p, x, n, &src);
        if (s) return s;
        const dnnl_memory_desc_t *pm;
        dnnl_memory_get_memory_desc(src, &pm);
        src_md = *pm;
    }
    dnnl_dims_t offsets = {0}, wd;
    for (int32_t d = 0; d < r; d++) wd[d] = x->dims[d];
    for (size_t i = 0; !s && i < outs; i++) {
        odn_value *y = odn_plan_value(p, odn_host->node_output(n, i));
        if (!y) return odn_node_error(n, TSR_ERR_PROVIDER, "internal: split output %zu", i);
        wd[axis] = sizes[i];
        int64_t dims[ODN_MAX_RANK];
        for (int32_t d = 0; d < r; d++) dims[d] = wd[d];
        dnnl_memory_desc_t sub, out_md;
        dnnl_memory_t view;
        dnnl_status_t st = dnnl_memory_desc_init_submemory(&sub, &src_md, wd, offsets);
        if (st == dnnl_success && keep) st = dnnl_memory_desc_init_by_tag(&out_md, r, wd, src_md.data_type, tag);
        if (st != dnnl_success) return odn_dnnl_error(n, "split layout", st);
        s = odn_plan_define(p, y, r, dims, keep ? &out_md : NULL, n);
        if (!s) s = odn_plan_view(p, src, &sub, n, &view);
        if (!s) s = odn_plan_add_reorder(p, view, &sub, y->mem, &y->md, n);
        offsets[axis] += sizes[i];
    }
    return s;
}
