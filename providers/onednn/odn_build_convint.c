/* ConvInteger on a CPU without VNNI (odn_int8_exact: there oneDNN's int8
 * kernels would saturate their 16-bit pair sums): a float32 convolution of
 * (x - zx) by (w - zw), both exact in float32, whose sums are exact while
 * they stay below 2^24 and round as float32 arithmetic past that (relative
 * 2^-24 per add, far below the quantization error the scales carry).
 * quantize_dynamic's Cast to float that reads the result is absorbed;
 * another reader gets int32 rounded back from the floats. Without this a
 * dynamically quantized CNN ran its ConvIntegers on the reference
 * provider: 2.2 s a run against ONNX Runtime's ~0.03. On AVX2, 2-D
 * ungrouped ones (ConvInteger and QLinearConv) run on the exact int16 GEMM
 * instead (build_i16 below, odn_qdq_i16.c); this path keeps the rest. */
#include <stdlib.h>
#include <string.h>

#include "odn_igemm.h"
#include "odn_quant.h"

/* (w - zw[m]) as floats in the piece's constant cache, plain, with oneDNN's
 * grouped dims (same bytes as ONNX's). */
static tsr_status *float_weights(odn_plan *p, const tsr_node *n, const odn_value *vw, const dnnl_memory_desc_t *md,
                                 size_t izw, int64_t groups, int passes, dnnl_memory_t *out) {
    float *buf = odn_const_cache_find(p->consts, vw->constant->data, n, &vw->md, md);
    if (!buf) {
        size_t count = (size_t)odn_numel(vw->rank, vw->dims);
        buf =
            odn_const_cache_add(p->consts, vw->constant->data, n, &vw->md, md, count * (size_t)passes * sizeof(float));
        if (!buf) return odn_node_error(n, TSR_ERR_NO_MEMORY, "float weights of %zu values", count);
        const tsr_tensor *zt = NULL;
        if (odn_host->node_input_count(n) > izw && odn_host->node_input(n, izw))
            zt = odn_host->value_constant(odn_host->node_input(n, izw));
        bool u8 = vw->constant->elem_type == TSR_UINT8;
        int64_t channels = vw->dims[0], per = channels ? (int64_t)count / channels : 0, pg = channels / groups;
        for (int64_t m = 0; m < channels; m++) {
            int64_t zi = zt && zt->rank == 1 && zt->dims[0] > 1 ? m : 0;
            int32_t z = !zt ? 0 : u8 ? ((const uint8_t *)zt->data)[zi] : ((const int8_t *)zt->data)[zi];
            /* split (odn_qlinear_float.c): each group's channels hi, then lo */
            int64_t hi = passes == 2 ? (m / pg) * 2 * pg + m % pg : m;
            for (int64_t i = 0; i < per; i++) {
                size_t at = (size_t)(m * per + i);
                int32_t v =
                    (u8 ? ((const uint8_t *)vw->constant->data)[at] : ((const int8_t *)vw->constant->data)[at]) - z;
                if (passes == 2) {
                    int32_t lo = odn_qlin_split_lo(v);
                    buf[hi * per + i] = (float)((v - lo) / 16);
                    buf[(hi + pg) * per + i] = (float)lo;
                } else {
                    buf[hi * per + i] = (float)v;
                }
            }
        }
        odn_const_cache_ready(p->consts, buf);
    }
    return odn_plan_new_mem(p, md, buf, n, out);
}

static dnnl_status_t any_md(dnnl_memory_desc_t *out, const dnnl_memory_desc_t *md) {
    return dnnl_memory_desc_init_by_tag(out, md->ndims, md->dims, dnnl_f32, dnnl_format_tag_any);
}

/* ConvInteger / QLinearConv on the exact int16 GEMM (odn_qdq_i16.c): 2-D,
 * one group; *handled false when it declines (the float convolution
 * below). QLinearConv requantizes as odn_qlinear_float.c does. */
static tsr_status *build_i16(odn_plan *p, const tsr_node *n, bool qlinear, odn_value *vx, odn_value *vw, odn_value *vy,
                             bool *handled) {
    *handled = false;
    const tsr_tensor *wt = vw->constant;
    if (!odn_igemm_supported() || vx->rank != 4 || wt->rank != 4 || odn_attr_int(n, "group", 1) != 1 ||
        !odn_i16_conv_fits(4, 1, odn_numel(3, wt->dims + 1)))
        return NULL;
    odn_i16_layer l = {.node = n,
                       .y_node = n,
                       .x = vx,
                       .y = vy,
                       .y_type = vy->elem_type,
                       .out = qlinear ? ODN_I16_QLIN : ODN_I16_S32,
                       .conv = true,
                       .w = wt};
    size_t izw = qlinear ? 5 : 3;
    const tsr_value_info *zw = odn_host->node_input_count(n) > izw ? odn_host->node_input(n, izw) : NULL;
    const tsr_tensor *zt = zw ? odn_host->value_constant(zw) : NULL;
    tsr_status *s = odn_i16_weight_zp(p, n, zt, &l);
    if (!s) s = odn_q_input(p, n, 2, &l.zx_mem, &l.zx_type);
    if (s) return s;
    /* quantize_dynamic's Cast(to float) reads the result: write it */
    const tsr_node *cast;
    odn_value *vc = qlinear ? NULL : odn_int_float_reader(p, vy, &cast);
    if (vc) {
        l.y = vc;
        l.y_node = cast;
        l.out = ODN_I16_F32;
    }
    s = odn_i16_conv(p, &l, handled);
    if (!s && *handled && vc) p->done[odn_plan_node_index(p, cast)] = true;
    return s;
}

tsr_status *odn_build_convint(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    /* QLinearConv: weights and their zero point at 3 and 5, requantized */
    bool qlinear = strcmp(odn_host->node_op_type(n), "QLinearConv") == 0;
    size_t iw = qlinear ? 3 : 1, izw = qlinear ? 5 : 3;
    odn_value *vx = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *vw = odn_plan_value(p, odn_host->node_input(n, iw));
    odn_value *vy = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!vx || !vw || !vy || !vx->produced || !vx->mem || !vw->constant)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: convolution operands not ready");
    bool handled;
    tsr_status *e16 = build_i16(p, n, qlinear, vx, vw, vy, &handled);
    if (e16 || handled) return e16;
    int32_t r = vx->rank, sp = r - 2;
    dnnl_dims_t s, d, l, rr;
    int64_t dy[ODN_MAX_RANK];
    size_t c;
    const int64_t *a = odn_attr_ints(n, "strides", &c), *dl = odn_attr_ints(n, "dilations", &c);
    const int64_t *pads = odn_attr_ints(n, "pads", &c);
    bool valid = odn_attr_string_is(n, "auto_pad", "VALID", false);
    dy[0] = vx->dims[0];
    dy[1] = vw->dims[0];
    for (int32_t i = 0; i < sp; i++) {
        s[i] = a ? a[i] : 1;
        d[i] = (dl ? dl[i] : 1) - 1; /* oneDNN counts the gaps */
        l[i] = pads && !valid ? pads[i] : 0;
        rr[i] = pads && !valid ? pads[i + sp] : 0;
        int64_t ext = (vw->dims[2 + i] - 1) * (d[i] + 1) + 1, span = vx->dims[2 + i] + l[i] + rr[i];
        if (span < ext) return odn_node_error(n, TSR_ERR_INVALID_MODEL, "kernel larger than the padded input");
        dy[2 + i] = (span - ext) / s[i] + 1;
    }
    int64_t channels = vw->dims[0], groups = odn_attr_int(n, "group", 1);
    if (groups < 1 || channels % groups != 0 || vx->dims[1] != groups * vw->dims[1])
        return odn_node_error(n, TSR_ERR_INVALID_MODEL, "group %lld does not fit the channels", (long long)groups);
    int passes = 1;
    if (qlinear) {
        const tsr_value_info *zw = odn_input(n, izw);
        passes = odn_qlin_passes(vw->constant, zw ? odn_host->value_constant(zw) : NULL, true);
        if (!passes) return odn_node_error(n, TSR_ERR_PROVIDER, "internal: float sums of QLinearConv not exact");
    }
    int64_t dyq[ODN_MAX_RANK], wflat[ODN_MAX_RANK];
    memcpy(dyq, dy, sizeof dyq);
    memcpy(wflat, vw->dims, sizeof(int64_t) * (size_t)r);
    dy[1] = wflat[0] = channels * passes; /* the convolution's channels */
    int32_t wr = groups > 1 ? r + 1 : r;
    int64_t wdims[ODN_MAX_RANK + 1];
    wdims[0] = groups;
    memcpy(wdims + 1, wflat, sizeof(int64_t) * (size_t)r);
    wdims[1] = channels * passes / groups;
    dnnl_memory_desc_t x_md, w_md, y_md, x_any, w_any, y_any;
    dnnl_status_t st = odn_plain_md(&x_md, r, vx->dims);
    if (st == dnnl_success) st = odn_plain_md(&w_md, wr, groups > 1 ? wdims : wflat);
    if (st == dnnl_success) st = odn_plain_md(&y_md, r, dy);
    if (st == dnnl_success) st = any_md(&x_any, &x_md);
    if (st == dnnl_success) st = any_md(&w_any, &w_md);
    if (st == dnnl_success) st = any_md(&y_any, &y_md);
    dnnl_convolution_desc_t cd;
    if (st == dnnl_success)
        st = dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &x_any,
                                                        &w_any, NULL, &y_any, s, d, l, rr);
    dnnl_primitive_desc_t pd = NULL;
    if (st == dnnl_success) st = odn_pd_create(p, &cd, NULL, &pd);
    if (st != dnnl_success) return odn_dnnl_error(n, "float convolution for ConvInteger", st);
    /* copies: the descriptors are read after pd is gone */
    dnnl_memory_desc_t xq = *dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    dnnl_memory_desc_t wq = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    dnnl_memory_desc_t yq = *dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    dnnl_memory_t x_mem, xf, xm, wf, wm = NULL, ym;
    tsr_status *e = odn_plan_plain_mem(p, vx, n, &x_mem);
    if (!e) e = odn_plan_arena_mem(p, &x_md, n, &xf);
    if (!e) e = odn_int_widen_step(p, n, x_mem, vx->elem_type, (size_t)odn_numel(r, vx->dims), xf);
    xm = xf;
    if (!e && !dnnl_memory_desc_equal(&xq, &x_md)) {
        e = odn_plan_arena_mem(p, &xq, n, &xm);
        if (!e) e = odn_plan_add_reorder(p, xf, &x_md, xm, &xq, n);
    }
    if (!e) e = float_weights(p, n, vw, &w_md, izw, groups, passes, &wf);
    if (!e) {
        void *h = NULL;
        dnnl_memory_get_data_handle(wf, &h);
        e = dnnl_memory_desc_equal(&wq, &w_md) ? (wm = wf, NULL)
                                               : odn_arena_const_as_keyed(p, h, NULL, wf, &w_md, &wq, n, &wm);
    }
    /* quantize_dynamic's Cast(to float) reads the result: write it */
    const tsr_node *cast;
    odn_value *vc = qlinear ? NULL : odn_int_float_reader(p, vy, &cast);
    if (!e && vc) {
        e = odn_plan_define(p, vc, r, dy, vc->output_index >= 0 ? NULL : &yq, cast);
        ym = vc->mem;
        /* a piece output is plain whatever yq says */
        if (!e && !dnnl_memory_desc_equal(&vc->md, &yq)) e = odn_plan_arena_mem(p, &yq, n, &ym);
    } else if (!e) {
        e = odn_plan_arena_mem(p, &yq, n, &ym);
    }
    dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, ym}};
    if (!e) e = odn_plan_add_primitive(p, pd, n, args, 3);
    dnnl_primitive_desc_destroy(pd);
    if (e) return e;
    if (vc) {
        if (ym != vc->mem) e = odn_plan_add_reorder(p, ym, &yq, vc->mem, &vc->md, n);
        if (!e) p->done[odn_plan_node_index(p, cast)] = true;
        return e;
    }
    dnnl_memory_t yf = ym, y_mem;
    if (!dnnl_memory_desc_equal(&yq, &y_md)) {
        e = odn_plan_arena_mem(p, &y_md, n, &yf);
        if (!e) e = odn_plan_add_reorder(p, ym, &yq, yf, &y_md, n);
    }
    if (!e && qlinear) {
        e = odn_plan_define(p, vy, r, dyq, NULL, n);
        return e ? e
                 : odn_qlin_requant_step(p, n, true, dy[0], channels, odn_numel(sp, dy + 2), channels / groups, passes,
                                         yf, vy);
    }
    if (!e) e = odn_plan_define(p, vy, r, dy, NULL, n);
    if (!e) {
        y_mem = vy->mem;
        e = odn_int_narrow_step(p, n, (size_t)odn_numel(r, dy), yf, y_mem);
    }
    return e;
}
