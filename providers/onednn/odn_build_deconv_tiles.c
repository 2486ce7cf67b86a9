/* ConvTranspose whose kernel equals its stride (no padding, dilation or
 * groups), as detection and segmentation heads upsample: every input pixel
 * writes its own k_h x k_w tile of the output, so the whole op is one
 * batched matmul straight into the channels-last output:
 *     y[n, h*s_h + i, w*s_w + j, m] = sum_c x[n, h, w, c] * W[c, m, i, j]
 * Seen as dst [N*H, s_h, W, s_w*M] (exactly the NHWC output's bytes), src
 * [N*H, 1, W, C] (the NHWC input, broadcast over i) and weights
 * [1, s_h, C, s_w*M] (W rearranged once). oneDNN 2.6's deconvolution runs
 * these 3-5x slower (and on a 1-channel map pads 1 channel to 16). */
#include <string.h>

#include "odn.h"

static bool tiles_shape(const tsr_node *n, const odn_value *x, const odn_value *w, int64_t *kh, int64_t *kw) {
    if (x->rank != 4 || w->rank != 4 || !w->constant || w->constant->elem_type != TSR_FLOAT) return false;
    if (odn_attr_int(n, "group", 1) != 1 || odn_host->node_attr_find(n, "output_shape")) return false;
    if (!odn_attr_string_is(n, "auto_pad", "NOTSET", true)) return false;
    size_t c = 0;
    const int64_t *v = odn_attr_ints(n, "strides", &c);
    if (!v || c != 2 || v[0] != w->dims[2] || v[1] != w->dims[3]) return false;
    const char *zero_attrs[] = {"pads", "output_padding"};
    for (size_t a = 0; a < 2; a++) {
        v = odn_attr_ints(n, zero_attrs[a], &c);
        for (size_t i = 0; v && i < c; i++)
            if (v[i] != 0) return false;
    }
    v = odn_attr_ints(n, "dilations", &c);
    for (size_t i = 0; v && i < c; i++)
        if (v[i] != 1) return false;
    *kh = w->dims[2];
    *kw = w->dims[3];
    return x->dims[1] == w->dims[0];
}

tsr_status *odn_build_deconv_tiles(odn_plan *p, size_t index, bool *handled) {
    *handled = false;
    const tsr_node *n = p->nodes[index];
    odn_value *x = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *w = odn_plan_value(p, odn_host->node_input(n, 1));
    odn_value *b = odn_host->node_input_count(n) > 2 ? odn_plan_value(p, odn_host->node_input(n, 2)) : NULL;
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    int64_t kh, kw;
    if (!x || !w || !y || !x->produced || !x->mem || (b && (!b->constant || b->rank != 1)) ||
        !tiles_shape(n, x, w, &kh, &kw))
        return NULL;
    int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3], M = w->dims[1];
    if (b && b->dims[0] != M) return NULL;
    /* a matmul of kw*M <= 4 columns runs at a few GFLOP/s: the loop */
    tsr_status *ls = odn_build_deconv_tiles_small(p, n, x, w, b, y, kh, kw, handled);
    if (ls || *handled) return ls;
    int64_t out[4] = {N, M, H * kh, W * kw};
    /* weights [1, kh, C, kw*M]: wr[i][c][j*M + m] = W[c][m][i][j] */
    float *wr = odn_plan_alloc(p, sizeof(float) * (size_t)(kh * C * kw * M));
    float *bias = b ? odn_plan_alloc(p, sizeof(float) * (size_t)(kw * M)) : NULL;
    if (!wr || (b && !bias)) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    const float *wsrc = w->constant->data;
    for (int64_t c = 0; c < C; c++)
        for (int64_t m = 0; m < M; m++)
            for (int64_t i = 0; i < kh; i++)
                for (int64_t j = 0; j < kw; j++)
                    wr[(i * C + c) * kw * M + j * M + m] = wsrc[((c * M + m) * kh + i) * kw + j];
    for (int64_t j = 0; b && j < kw; j++) memcpy(bias + j * M, b->constant->data, sizeof(float) * (size_t)M);

    dnnl_dims_t xd = {N, C, H, W}, yd = {out[0], out[1], out[2], out[3]};
    dnnl_dims_t sd = {N * H, 1, W, C}, wd = {1, kh, C, kw * M}, dd = {N * H, kh, W, kw * M}, bd = {1, 1, 1, kw * M};
    dnnl_memory_desc_t x_nhwc, y_nhwc, src_md, w_md, dst_md, b_md;
    dnnl_matmul_desc_t md;
    dnnl_primitive_desc_t pd = NULL;
    if (dnnl_memory_desc_init_by_tag(&x_nhwc, 4, xd, dnnl_f32, dnnl_acdb) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&y_nhwc, 4, yd, dnnl_f32, dnnl_acdb) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&src_md, 4, sd, dnnl_f32, dnnl_abcd) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&w_md, 4, wd, dnnl_f32, dnnl_abcd) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&dst_md, 4, dd, dnnl_f32, dnnl_abcd) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&b_md, 4, bd, dnnl_f32, dnnl_abcd) != dnnl_success ||
        dnnl_matmul_desc_init(&md, &src_md, &w_md, b ? &b_md : NULL, &dst_md) != dnnl_success ||
        odn_pd_create(p, &md, NULL, &pd) != dnnl_success)
        return NULL; /* no fast matmul for it: the general deconvolution */
    dnnl_primitive_desc_destroy(pd);
    pd = NULL;

    dnnl_post_ops_t po;
    dnnl_primitive_attr_t attr;
    tsr_status *ps = odn_post_ops_new(n, &po, &attr);
    if (ps) return ps;
    dnnl_exec_arg_t args[ODN_MAX_ARGS];
    int nargs = 4;
    odn_value *last = y;
    p->fuse_no_binary = true; /* the matmul's frame is not the output's */
    tsr_status *s = odn_fuse_post_ops(p, y, 4, out, po, args, &nargs, &last);
    if (!s && dnnl_primitive_attr_set_post_ops(attr, po) != dnnl_success)
        s = odn_node_error(n, TSR_ERR_PROVIDER, "post-ops");
    dnnl_post_ops_destroy(po);

    if (!s && odn_pd_create(p, &md, attr, &pd) != dnnl_success)
        s = odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "no fast matmul for the tiled ConvTranspose with its post-ops");
    dnnl_primitive_attr_destroy(attr);
    if (s) return s;
    *handled = true;
    /* the output in NHWC; a piece output is plain, so via a temporary */
    bool via_temp = last->output_index >= 0;
    odn_value temp = {.info = last->info, .input_index = -1, .output_index = -1};
    dnnl_memory_t src, x_view, dst_view, w_mem, b_mem = NULL;
    s = odn_plan_mem_as(p, x, &x_nhwc, n, &src);
    if (!s) s = odn_plan_view(p, src, &src_md, n, &x_view);
    if (!s) s = odn_plan_define(p, last, 4, out, via_temp ? NULL : &y_nhwc, n);
    if (!s && via_temp) s = odn_plan_define(p, &temp, 4, out, &y_nhwc, n);
    if (!s) s = odn_plan_view(p, via_temp ? temp.mem : last->mem, &dst_md, n, &dst_view);
    if (!s) s = odn_plan_new_mem(p, &w_md, wr, n, &w_mem);
    if (!s && b) s = odn_plan_new_mem(p, &b_md, bias, n, &b_mem);
    if (!s) {
        args[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, x_view};
        args[1] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, w_mem};
        args[2] = (dnnl_exec_arg_t){DNNL_ARG_DST, dst_view};
        args[3] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, b_mem};
        if (!b) args[3] = args[--nargs];
        s = odn_plan_add_primitive(p, pd, n, args, nargs);
        if (!s && via_temp) s = odn_plan_add_reorder(p, temp.mem, &temp.md, last->mem, &last->md, n);
    }
    dnnl_primitive_desc_destroy(pd);
    return s;
}
