/* ConvTranspose as oneDNN deconvolution. ONNX stores the weights as
 * [C_in, C_out/group, k...]; oneDNN wants [(group,) C_out/group, C_in/group,
 * k...], which is the same buffer under other strides, reordered once (for
 * constant weights) into the layout the kernel prefers. output_padding
 * enlarges the output at the end, i.e. lowers the end padding. */
#include <string.h>

#include "odn.h"

/* The begin and end padding of spatial axis i (of sp) of ConvTranspose n
 * for an input length `in` (-1: unknown, when only what does not depend on
 * it is asked): the pads attribute, or with output_shape (the spatial sizes
 * or, as some exporters write it, the whole shape) or auto_pad SAME_* the
 * ONNX rule: total = full - out, half of it (toward minus infinity) at the
 * start for SAME_UPPER, at the end otherwise (tf2onnx's Conv2DTranspose
 * and Keras' padding='same'). *out_len is the output length. False when
 * the padding is negative at the start (oneDNN's deconvolution has no
 * such) or the attributes do not fit. */
bool odn_deconv_pads(const tsr_node *n, int32_t sp, int32_t i, int64_t in, int64_t st, int64_t dl, int64_t k,
                     int64_t op, int64_t *b0, int64_t *e0, int64_t *out_len) {
    size_t c_p = 0, on = 0;
    const int64_t *pads = odn_attr_ints(n, "pads", &c_p), *osh = odn_attr_ints(n, "output_shape", &on);
    if (osh && on == (size_t)sp + 2) osh += 2, on -= 2;
    if (osh && on != (size_t)sp) return false;
    bool upper = odn_attr_string_is(n, "auto_pad", "SAME_UPPER", false);
    bool same = upper || odn_attr_string_is(n, "auto_pad", "SAME_LOWER", false);
    bool valid = odn_attr_string_is(n, "auto_pad", "VALID", false);
    if (!same && !valid && !odn_attr_string_is(n, "auto_pad", "NOTSET", true)) return false;
    int64_t ext = (k - 1) * dl + 1;
    if (osh || same) {
        if (osh && osh[i] < 1) return false;
        if (osh && in < 0) return true; /* decided when the input length is known */
        int64_t full = in >= 0 ? st * (in - 1) + op + ext : 0;
        int64_t total = osh ? full - osh[i] : op + ext - st; /* SAME: out = in * st */
        int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
        *b0 = upper ? half : total - half;
        *e0 = total - *b0;
        *out_len = osh ? osh[i] : in * st;
        return *b0 >= 0;
    }
    *b0 = valid || c_p != (size_t)(2 * sp) ? 0 : pads[i];
    *e0 = valid || c_p != (size_t)(2 * sp) ? 0 : pads[sp + i];
    *out_len = in >= 0 ? st * (in - 1) + op + ext - *b0 - *e0 : -1;
    return *b0 >= 0 && *e0 >= 0;
}

tsr_status *odn_build_deconv(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    bool tiled;
    tsr_status *ts = odn_build_deconv_tiles(p, index, &tiled);
    if (ts || tiled) return ts;
    ts = odn_build_deconv_gemm(p, index, &tiled); /* odn_build_deconv_gemm.c */
    if (ts || tiled) return ts;
    odn_value *x = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *w = odn_plan_value(p, odn_host->node_input(n, 1));
    odn_value *b = odn_host->node_input_count(n) > 2 ? odn_plan_value(p, odn_host->node_input(n, 2)) : NULL;
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!x || !w || !y || !x->produced || !w->mem || (b && !b->mem))
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: conv transpose inputs");
    int32_t r = x->rank, sp = r - 2;
    int64_t group = odn_attr_int(n, "group", 1);
    if (r < 3 || r > 5 || w->rank != r || group < 1 || x->dims[1] != w->dims[0] || w->dims[0] % group)
        return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "input, weight and group do not agree");
    int64_t cin = w->dims[0], mg = w->dims[1], m = mg * group, kvol = 1;
    if (b && (b->rank != 1 || b->dims[0] != m)) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "bias size");
    for (int32_t i = 2; i < r; i++) kvol *= w->dims[i];
    size_t c_s = 0, c_d = 0, c_o = 0;
    const int64_t *s = odn_attr_ints(n, "strides", &c_s), *d = odn_attr_ints(n, "dilations", &c_d);
    const int64_t *opad = odn_attr_ints(n, "output_padding", &c_o);
    dnnl_dims_t str, dil, pl, pr, xd, yd, wd, wstr, bd;
    int64_t out[ODN_MAX_RANK] = {x->dims[0], m};
    for (int32_t i = 0; i < sp; i++) {
        int64_t st = c_s == (size_t)sp ? s[i] : 1, dl = c_d == (size_t)sp ? d[i] : 1;
        int64_t op = c_o == (size_t)sp ? opad[i] : 0, k = w->dims[2 + i], b0 = 0, e0 = 0, len = 0;
        if (st < 1 || dl < 1 || op < 0 || st > (INT64_C(1) << 31) || dl > (INT64_C(1) << 31) ||
            x->dims[2 + i] > (INT64_C(1) << 31) ||
            !odn_deconv_pads(n, sp, i, x->dims[2 + i], st, dl, k, op, &b0, &e0, &len))
            return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "strides, dilations, pads or output_shape not mapped");
        out[2 + i] = len;
        if (out[2 + i] < 1) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "empty output");
        str[i] = st;
        dil[i] = dl - 1;
        pl[i] = b0;
        pr[i] = e0 - op;
    }
    for (int32_t i = 0; i < r; i++) {
        xd[i] = x->dims[i];
        yd[i] = out[i];
    }
    /* weights: logical [g,] oc, ic, k... over the ONNX [C_in, M/g, k...] buffer */
    int wr = group > 1 ? r + 1 : r, o = 0;
    if (group > 1) {
        wd[o] = group;
        wstr[o++] = (cin / group) * mg * kvol;
    }
    wd[o] = mg;
    wstr[o++] = kvol;
    wd[o] = cin / group;
    wstr[o++] = mg * kvol;
    int64_t ks = kvol;
    for (int32_t i = 0; i < sp; i++) {
        ks /= w->dims[2 + i];
        wd[o] = w->dims[2 + i];
        wstr[o++] = ks;
    }
    bd[0] = m;
    /* following eltwise and binary nodes as post-ops; the result is then
     * the last absorbed node's output */
    dnnl_post_ops_t po;
    dnnl_primitive_attr_t attr;
    tsr_status *ps = odn_post_ops_new(n, &po, &attr);
    if (ps) return ps;
    dnnl_exec_arg_t args[ODN_MAX_ARGS];
    int nargs = 4; /* SRC, WEIGHTS, BIAS, DST come first */
    odn_value *last = y;
    tsr_status *e = odn_fuse_post_ops(p, y, r, out, po, args, &nargs, &last);
    if (!e && dnnl_primitive_attr_set_post_ops(attr, po) != dnnl_success)
        e = odn_node_error(n, TSR_ERR_PROVIDER, "post-ops");
    dnnl_post_ops_destroy(po);
    if (e) {
        dnnl_primitive_attr_destroy(attr);
        return e;
    }
    /* oneDNN 2.6's deconvolution runs 2-3x faster on channels-last than on
     * the nChw16c it picks for "any" (whose 16-channel blocks also waste
     * most of the work on the 1-channel map a detector head ends with) */
    dnnl_format_tag_t act_tag = r == 4 ? dnnl_acdb : r == 5 ? dnnl_acdeb : dnnl_acb;
    dnnl_memory_desc_t src_any, w_any, w_view_md, dst_md, b_md;
    dnnl_status_t st = dnnl_memory_desc_init_by_tag(&src_any, r, xd, dnnl_f32, act_tag);
    if (st == dnnl_success) st = dnnl_memory_desc_init_by_tag(&w_any, wr, wd, dnnl_f32, dnnl_format_tag_any);
    if (st == dnnl_success) st = dnnl_memory_desc_init_by_strides(&w_view_md, wr, wd, dnnl_f32, wstr);
    if (st == dnnl_success) st = dnnl_memory_desc_init_by_tag(&b_md, 1, bd, dnnl_f32, dnnl_a);
    /* a piece output is plain: computed channels-last into a temporary and
     * reordered there (a plain destination leaves oneDNN only im2col) */
    if (st == dnnl_success) st = dnnl_memory_desc_init_by_tag(&dst_md, r, yd, dnnl_f32, act_tag);
    dnnl_deconvolution_desc_t dd;
    dnnl_primitive_desc_t pd = NULL;
    if (st == dnnl_success)
        st =
            dnnl_dilated_deconvolution_forward_desc_init(&dd, dnnl_forward_inference, dnnl_deconvolution_direct,
                                                         &src_any, &w_any, b ? &b_md : NULL, &dst_md, str, dil, pl, pr);
    if (st == dnnl_success && odn_pd_create(p, &dd, attr, &pd) != dnnl_success) {
        /* no fast kernel for channels-last here: let oneDNN choose */
        st = dnnl_memory_desc_init_by_tag(&src_any, r, xd, dnnl_f32, dnnl_format_tag_any);
        if (st == dnnl_success) st = dnnl_memory_desc_init_by_tag(&dst_md, r, yd, dnnl_f32, dnnl_format_tag_any);
        if (st == dnnl_success)
            st = dnnl_dilated_deconvolution_forward_desc_init(&dd, dnnl_forward_inference, dnnl_deconvolution_direct,
                                                              &src_any, &w_any, b ? &b_md : NULL, &dst_md, str, dil, pl,
                                                              pr);
        if (st == dnnl_success) st = dnnl_primitive_desc_create(&pd, &dd, attr, p->engine, NULL);
    }
    dnnl_primitive_attr_destroy(attr);
    if (st != dnnl_success) return odn_dnnl_error(n, "deconvolution setup", st);
    dnnl_memory_t src_mem, w_mem;
    odn_value wv = *w;
    e = odn_plan_mem_as(p, x, dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0), n, &src_mem);
    if (!e) e = odn_plan_view(p, w->mem, &w_view_md, n, &wv.mem);
    wv.md = w_view_md;
    if (!e) e = odn_plan_mem_as(p, &wv, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), n, &w_mem);
    const dnnl_memory_desc_t *chosen = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    bool via_temp = last->output_index >= 0;
    odn_value temp = {.info = last->info, .input_index = -1, .output_index = -1};
    if (!e) e = odn_plan_define(p, last, r, out, via_temp ? NULL : chosen, n);
    if (!e && via_temp) e = odn_plan_define(p, &temp, r, out, chosen, n);
    if (!e) {
        args[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, src_mem};
        args[1] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, w_mem};
        args[2] = (dnnl_exec_arg_t){DNNL_ARG_DST, via_temp ? temp.mem : last->mem};
        args[3] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, b ? b->mem : NULL};
        if (!b) args[3] = args[--nargs]; /* no bias: the last post-op argument takes its slot */
        e = odn_plan_add_primitive(p, pd, n, args, nargs);
        if (!e && via_temp) e = odn_plan_add_reorder(p, temp.mem, &temp.md, last->mem, &last->md, n);
    }
    dnnl_primitive_desc_destroy(pd);
    return e;
}
