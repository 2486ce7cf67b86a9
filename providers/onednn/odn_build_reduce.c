/* Reduce* as oneDNN reduction over a plain input. The axes come from the
 * attribute (older opsets) or a constant second input (newer ones). */
#include <string.h>

#include "odn.h"

typedef struct reduce_kind {
    const char *op;
    dnnl_alg_kind_t alg;
    float p;
    dnnl_alg_kind_t unit_alg; /* what it is when no dim shrinks */
} reduce_kind;

static const reduce_kind kinds[] = {
    {"ReduceSum", dnnl_reduction_sum, 0, dnnl_eltwise_linear},
    {"ReduceMean", dnnl_reduction_mean, 0, dnnl_eltwise_linear},
    /* ReduceMax/ReduceMin are not here: oneDNN's max and min drop NaN
     * where ONNX propagates it (a fully masked attention row shows it);
     * odn_build_minmax.c runs them as a loop */
    {"ReduceProd", dnnl_reduction_mul, 0, dnnl_eltwise_linear},
    {"ReduceL1", dnnl_reduction_norm_lp_sum, 1, dnnl_eltwise_abs},
    {"ReduceL2", dnnl_reduction_norm_lp_sum, 2, dnnl_eltwise_abs},
    {"ReduceSumSquare", dnnl_reduction_norm_lp_power_p_sum, 2, dnnl_eltwise_square},
};

static const reduce_kind *kind_of(const char *op) {
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(kinds[i].op, op) == 0) return &kinds[i];
    return NULL;
}

/* The axes to reduce, as flags per dim; false when they are not constant or
 * out of range. `all` is set when no axes are given. */
bool odn_reduce_axes(const tsr_node *n, int32_t rank, bool *reduce) {
    const int64_t *axes = NULL;
    size_t count = 0;
    if (odn_host->node_input_count(n) > 1 && odn_host->node_input(n, 1)) {
        const tsr_tensor *t = odn_host->value_constant(odn_host->node_input(n, 1));
        if (!t || t->elem_type != TSR_INT64 || t->rank != 1 || t->nbytes < (size_t)t->dims[0] * sizeof(int64_t))
            return false;
        axes = t->data;
        count = (size_t)t->dims[0];
    } else {
        axes = odn_attr_ints(n, "axes", &count);
    }
    for (int32_t d = 0; d < rank; d++) reduce[d] = count == 0;
    for (size_t i = 0; i < count; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
        if (a < 0 || a >= rank) return false;
        reduce[a] = true;
    }
    return true;
}

tsr_status *odn_reduce_setup(odn_plan *p, const tsr_node *n, odn_reduce_io *io) {
    odn_value *x = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!x || !y || !x->mem || x->rank < 1) return odn_node_error(n, TSR_ERR_PROVIDER, "internal: reduce inputs");
    bool reduce[ODN_MAX_RANK];
    if (!odn_reduce_axes(n, x->rank, reduce))
        return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "axes not constant or out of range");
    int64_t out[ODN_MAX_RANK];
    int32_t out_rank = 0;
    bool keepdims = odn_attr_int(n, "keepdims", 1) != 0;
    io->x = x;
    io->shrinks = false;
    for (int32_t d = 0; d < x->rank; d++) {
        io->kept[d] = reduce[d] ? 1 : x->dims[d];
        io->shrinks = io->shrinks || io->kept[d] != x->dims[d];
        if (!reduce[d] || keepdims) out[out_rank++] = io->kept[d];
    }
    tsr_status *s = odn_plan_plain_view(p, x, x->rank, x->dims, NULL, n, &io->src, &io->src_md);
    if (!s) s = odn_plan_define(p, y, out_rank, out, NULL, n);
    if (!s) s = odn_plan_plain_view(p, y, x->rank, io->kept, NULL, n, &io->dst, &io->dst_md);
    return s;
}

/* ReduceMean over every spatial dim, as exporters write a
 * squeeze-excitation's or a classifier head's global pooling: a global
 * average pooling, which reads the (blocked) layout the producing
 * convolution wrote, where a reduction needs the plain one (oneDNN 2.6's
 * reduction over the inner 7x7 of 1280 channels takes 0.35 ms, the pooling
 * 0.01 ms). Without keepdims, or for a piece output, the pooling writes the
 * plain [N,C,1..] bytes of the [N,C] result. *done false when it does not
 * apply or oneDNN has no fast pooling kernel for it. */
static tsr_status *spatial_mean_as_pool(odn_plan *p, const tsr_node *n, bool *done) {
    *done = false;
    odn_value *x = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!x || !y || !x->produced || !x->mem || x->rank < 3 || x->rank > 5 ||
        (x->elem_type && x->elem_type != TSR_FLOAT))
        return NULL;
    bool keepdims = odn_attr_int(n, "keepdims", 1) != 0;
    bool reduce[ODN_MAX_RANK];
    if (!odn_reduce_axes(n, x->rank, reduce) || reduce[0] || reduce[1]) return NULL;
    dnnl_dims_t kernel, strides, zero, yd;
    int32_t sp = x->rank - 2;
    for (int32_t d = 0; d < x->rank; d++) {
        if (d >= 2 && !reduce[d]) return NULL;
        yd[d] = d < 2 ? x->dims[d] : 1;
    }
    for (int32_t i = 0; i < sp; i++) {
        kernel[i] = x->dims[2 + i];
        strides[i] = 1;
        zero[i] = 0;
    }
    bool plain_dst = !keepdims || y->output_index >= 0;
    /* A plain destination: plain, or the input's own layout, whose bytes
     * for [N,C,1..] are the plain ones (whole 16-blocks when blocked) and
     * for which oneDNN has a fast kernel where a layout change has none. */
    dnnl_format_tag_t tags[2] = {dnnl_format_tag_any, dnnl_format_tag_undef};
    if (plain_dst) {
        tags[0] = x->rank == 3 ? dnnl_abc : x->rank == 4 ? dnnl_abcd : dnnl_abcde;
        tags[1] = odn_layout_tag(x);
        if (odn_layout_is_blocked(tags[1]) && x->dims[1] % odn_block() != 0) tags[1] = dnnl_format_tag_undef;
    }
    dnnl_memory_desc_t dst_md;
    dnnl_pooling_v2_desc_t d;
    dnnl_primitive_desc_t pd = NULL;
    for (int k = 0; k < 2 && !pd; k++) {
        if (tags[k] == dnnl_format_tag_undef ||
            dnnl_memory_desc_init_by_tag(&dst_md, x->rank, yd, dnnl_f32, tags[k]) != dnnl_success ||
            dnnl_pooling_v2_forward_desc_init(&d, dnnl_forward_inference, dnnl_pooling_avg_exclude_padding, &x->md,
                                              &dst_md, strides, kernel, zero, zero, zero) != dnnl_success ||
            odn_pd_create(p, &d, NULL, &pd) != dnnl_success)
            pd = NULL;
    }
    if (!pd) return NULL;
    *done = true;
    int64_t out[ODN_MAX_RANK];
    for (int32_t i = 0; i < x->rank; i++) out[i] = yd[i];
    dnnl_exec_arg_t args[ODN_MAX_ARGS] = {{DNNL_ARG_SRC, x->mem}};
    tsr_status *s;
    if (!plain_dst) {
        s = odn_build_finish_pd(p, n, pd, y, x->rank, out, args, 1);
    } else {
        s = odn_plan_define(p, y, keepdims ? x->rank : 2, out, NULL, n);
        dnnl_memory_t view = NULL;
        if (!s) s = odn_plan_view(p, y->mem, &dst_md, n, &view);
        if (!s) {
            args[1] = (dnnl_exec_arg_t){DNNL_ARG_DST, view};
            s = odn_plan_add_primitive(p, pd, n, args, 2);
        }
    }
    dnnl_primitive_desc_destroy(pd);
    return s;
}

tsr_status *odn_build_reduce(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    const reduce_kind *k = kind_of(odn_host->node_op_type(n));
    if (!k) return odn_node_error(n, TSR_ERR_PROVIDER, "internal: reduce kind");
    if (k->alg == dnnl_reduction_mean) {
        bool pooled;
        tsr_status *ps = spatial_mean_as_pool(p, n, &pooled);
        if (ps || pooled) return ps;
    }
    odn_reduce_io io;
    tsr_status *s = odn_reduce_setup(p, n, &io);
    if (s) return s;
    dnnl_memory_t src = io.src, dst = io.dst;
    const dnnl_memory_desc_t src_md = io.src_md, dst_md = io.dst_md;
    bool shrinks = io.shrinks;
    dnnl_primitive_desc_t pd;
    dnnl_status_t st;
    if (shrinks) {
        dnnl_reduction_desc_t d;
        st = dnnl_reduction_desc_init(&d, k->alg, &src_md, &dst_md, k->p, 0.0f);
        if (st == dnnl_success && odn_pd_create(p, &d, NULL, &pd) != dnnl_success) {
            /* oneDNN 2.6 has only its reference kernel for this axis set */
            bool reduce[ODN_MAX_RANK];
            odn_reduce_axes(n, io.x->rank, reduce);
            return odn_reduce_loop(p, n, k->alg, k->p, io.x->rank, io.x->dims, reduce, src, dst);
        }
    } else {
        /* oneDNN refuses a reduction that reduces nothing: the result is the
         * input (or |x|, x^2) */
        dnnl_eltwise_desc_t d;
        st = dnnl_eltwise_forward_desc_init(&d, dnnl_forward_inference, k->unit_alg, &src_md, 1.0f, 0.0f);
        if (st == dnnl_success) st = dnnl_primitive_desc_create(&pd, &d, NULL, p->engine, NULL);
    }
    if (st != dnnl_success) return odn_dnnl_error(n, "reduction setup", st);
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
    s = odn_plan_add_primitive(p, pd, n, args, 2);
    dnnl_primitive_desc_destroy(pd);
    return s;
}
