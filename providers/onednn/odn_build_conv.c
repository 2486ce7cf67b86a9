/* Conv as one oneDNN convolution: a following BatchNormalization with
 * constant statistics is folded into the (constant) weights and bias, and
 * what follows that is fused as post-ops. Weights are reordered into the
 * layout the kernel wants once, when the plan is built. */
#include <math.h>
#include <string.h>

#include "odn.h"

typedef struct conv_geom {
    dnnl_dims_t strides, dilation, pad_l, pad_r;
} conv_geom;

static tsr_status *geometry(const tsr_node *n, const odn_value *x, const odn_value *w, conv_geom *g, int64_t *out) {
    int32_t sp = x->rank - 2;
    size_t c_s = 0, c_d = 0, c_p = 0;
    const int64_t *s = odn_attr_ints(n, "strides", &c_s);
    const int64_t *d = odn_attr_ints(n, "dilations", &c_d);
    const int64_t *pads = odn_attr_ints(n, "pads", &c_p);
    bool same_upper = odn_attr_string_is(n, "auto_pad", "SAME_UPPER", false);
    bool same_lower = odn_attr_string_is(n, "auto_pad", "SAME_LOWER", false);
    bool valid = odn_attr_string_is(n, "auto_pad", "VALID", false);
    out[0] = x->dims[0];
    out[1] = w->dims[0];
    for (int32_t i = 0; i < sp; i++) {
        int64_t in = x->dims[2 + i], ker = w->dims[2 + i];
        int64_t str = s && (size_t)i < c_s ? s[i] : 1, dil = d && (size_t)i < c_d ? d[i] : 1;
        int64_t pl = c_p == (size_t)(2 * sp) ? pads[i] : 0, pr = c_p == (size_t)(2 * sp) ? pads[sp + i] : 0;
        if (str < 1 || dil < 1 || ker < 1 || dil > (INT64_C(1) << 31) || ker > (INT64_C(1) << 31))
            return odn_node_error(n, TSR_ERR_INVALID_MODEL, "bad window");
        int64_t span = (ker - 1) * dil + 1, o;
        if (same_upper || same_lower) {
            o = (in + str - 1) / str;
            int64_t total = (o - 1) * str + span - in;
            if (total < 0) total = 0;
            pl = same_upper ? total / 2 : total - total / 2;
            pr = total - pl;
        } else {
            if (valid) pl = pr = 0;
            int64_t room = in + pl + pr - span;
            if (room < 0) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "kernel larger than the padded input");
            o = room / str + 1;
        }
        out[2 + i] = o;
        g->strides[i] = str;
        g->dilation[i] = dil - 1; /* oneDNN counts the gaps */
        g->pad_l[i] = pl;
        g->pad_r[i] = pr;
    }
    return NULL;
}

static const float *const_floats(const odn_value *v, int64_t count) {
    if (!v || !v->constant || v->constant->elem_type != TSR_FLOAT) return NULL;
    if (odn_numel(v->rank, v->dims) != count) return NULL;
    return v->constant->data;
}

/* Folds BatchNormalization `bn` into copies of the weights and bias:
 * w' = w*a, b' = (b - mean)*a + shift with a = scale/sqrt(var + eps).
 * Returns false (folding nothing) when any operand is not constant. */
static bool fold_batchnorm(odn_plan *p, const tsr_node *bn, const odn_value *w, const odn_value *b,
                           float **w_out, float **b_out) {
    int64_t m = w->dims[0];
    int64_t per = odn_numel(w->rank, w->dims) / (m ? m : 1);
    const float *wd = const_floats(w, odn_numel(w->rank, w->dims));
    const float *bd = b ? const_floats(b, m) : NULL;
    const float *st[4];
    for (size_t k = 0; k < 4; k++) st[k] = const_floats(odn_plan_value(p, odn_host->node_input(bn, k + 1)), m);
    if (!wd || (b && !bd) || !st[0] || !st[1] || !st[2] || !st[3]) return false;
    float *nw = odn_plan_alloc(p, (size_t)(m * per) * sizeof(float));
    float *nb = odn_plan_alloc(p, (size_t)m * sizeof(float));
    if (!nw || !nb) return false;
    double eps = odn_attr_float(bn, "epsilon", 1e-5f);
    for (int64_t o = 0; o < m; o++) {
        double a = st[0][o] / sqrt((double)st[3][o] + eps);
        for (int64_t i = 0; i < per; i++) nw[o * per + i] = (float)(wd[o * per + i] * a);
        nb[o] = (float)(((bd ? bd[o] : 0.0) - st[2][o]) * a + st[1][o]);
    }
    *w_out = nw;
    *b_out = nb;
    return true;
}

/* True for a convolution oneDNN may run as Winograd: 3x3, stride 1,
 * undilated, ungrouped, 2-D, at least 64 channels in and out and a map of
 * at least 4x4. Outside that oneDNN 2.6's Winograd kernel is slower than
 * its direct one, though it offers itself: 32 channels at 160x160, 9.8 ms
 * direct and 11.2 ms Winograd for four layers; 16 channels, 40% of the
 * direct kernel's speed; a 1x40 map (a text recognizer's row), 6x slower,
 * its 2x2 output tiles half empty and the padded taps computed. */
static bool winograd_shape(int32_t r, const dnnl_dims_t xd, const dnnl_dims_t wd, int wr, int64_t group,
                           const conv_geom *g) {
    return r == 4 && wd[wr - 1] == 3 && wd[wr - 2] == 3 && group == 1 && g->strides[0] == 1 && g->strides[1] == 1 &&
           g->dilation[0] == 0 && g->dilation[1] == 0 && wd[0] >= 64 && wd[1] >= 64 && xd[2] >= 4 && xd[3] >= 4;
}

/* oneDNN 2.6's Winograd kernels read and write only nChw16c, while its
 * other fast convolutions pick NHWC when given "any": a piece mixing them
 * pays a reorder before and after every Winograd convolution, which costs
 * about 4% of ResNet-50 at 2 threads (reorders scale poorly). When Winograd
 * is on and the piece has a Winograd-shaped convolution, every 2-D
 * convolution asks for nChw16c first; oneDNN's 1x1 and strided kernels are
 * as fast in that layout (measured per ResNet-50 shape). */
static bool piece_prefers_blocked(odn_plan *p) {
    if (!p->winograd) return false;
    bool wino = false;
    for (size_t i = 0; i < p->node_count; i++) {
        const tsr_node *n = p->nodes[i];
        if (strcmp(odn_host->node_op_type(n), "Conv") != 0 || odn_host->node_input_count(n) < 2) continue;
        const odn_value *w = odn_plan_value(p, odn_host->node_input(n, 1));
        /* a channel count that is not whole 16-blocks cannot stay nChw16c:
         * such a piece would flip between layouts at every such layer (a
         * first layer of <= 8 input channels reads NCHW directly) */
        int64_t group = odn_attr_int(n, "group", 1), cin = w && w->rank == 4 ? w->dims[1] * group : 0;
        if (w && w->rank == 4 && (w->dims[0] % 16 != 0 || (cin > 8 && cin % 16 != 0))) return false;
        if (wino || !w || w->rank != 4 || w->dims[2] != 3 || w->dims[3] != 3 || group != 1 ||
            w->dims[0] < 64 || w->dims[1] < 64)
            continue;
        size_t cs = 0, cd = 0;
        const int64_t *st = odn_attr_ints(n, "strides", &cs), *dl = odn_attr_ints(n, "dilations", &cd);
        bool unit = true;
        for (size_t k = 0; k < cs; k++) unit = unit && st[k] == 1;
        for (size_t k = 0; k < cd; k++) unit = unit && dl[k] == 1;
        wino = wino || unit;
    }
    return wino;
}

/* Outside such pieces nChw16c is still worth keeping where it costs no
 * reorder: a first layer reading the plain piece input (oneDNN's NCHW-input
 * kernel writes nChw16c, and saves the input reorder) and convolutions whose
 * input already is nChw16c. The first convolution whose channels do not fit
 * falls back to "any" (NHWC) and the one reorder happens there. On
 * MobileNetV2 that moves the 112x112 layers to the (here faster) nChw16c
 * kernels. */
static bool keeps_blocked(const odn_value *x, int32_t r, const dnnl_dims_t xd) {
    dnnl_memory_desc_t md;
    if (r != 4) return false;
    dnnl_status_t st = x->input_index >= 0 && xd[1] <= 8
                           ? odn_plain_md(&md, r, x->dims)
                           : dnnl_memory_desc_init_by_tag(&md, r, xd, dnnl_f32, dnnl_aBcd16b);
    return st == dnnl_success && dnnl_memory_desc_equal(&md, &x->md);
}

/* Creates the convolution primitive descriptor: Winograd first when asked,
 * else (or when oneDNN has none) direct. */
static dnnl_status_t conv_pd(odn_plan *p, bool wino, const dnnl_memory_desc_t *src, const dnnl_memory_desc_t *w,
                             const dnnl_memory_desc_t *b, const dnnl_memory_desc_t *dst, const conv_geom *g,
                             dnnl_primitive_attr_t attr, dnnl_primitive_desc_t *pd) {
    dnnl_convolution_desc_t d;
    dnnl_status_t st = dnnl_unimplemented;
    if (wino) {
        st = dnnl_dilated_convolution_forward_desc_init(&d, dnnl_forward_inference, dnnl_convolution_winograd, src, w,
                                                        b, dst, g->strides, g->dilation, g->pad_l, g->pad_r);
        if (st == dnnl_success) st = dnnl_primitive_desc_create(pd, &d, attr, p->engine, NULL);
    }
    if (st != dnnl_success) {
        st = dnnl_dilated_convolution_forward_desc_init(&d, dnnl_forward_inference, dnnl_convolution_direct, src, w, b,
                                                        dst, g->strides, g->dilation, g->pad_l, g->pad_r);
        if (st == dnnl_success) st = dnnl_primitive_desc_create(pd, &d, attr, p->engine, NULL);
    }
    return st;
}

/* The blocked-layout attempt: src as nChw16c (or as it is, when plain with
 * few channels: oneDNN's first-layer kernel reads NCHW directly, which also
 * saves the input reorder), dst as nChw16c unless fixed by the caller.
 * Returns NULL unless oneDNN offers a direct JIT kernel for those layouts
 * (not "ref:any" nor the im2col "gemm:jit", both far slower than the
 * default path's kernels). */
static dnnl_primitive_desc_t blocked_pd(odn_plan *p, bool wino, const odn_value *x, int32_t r, const dnnl_dims_t xd,
                                        const dnnl_dims_t yd, const dnnl_memory_desc_t *w_any,
                                        const dnnl_memory_desc_t *b_md, const dnnl_memory_desc_t *fixed_dst,
                                        const conv_geom *g, dnnl_primitive_attr_t attr) {
    dnnl_memory_desc_t src, dst, plain;
    if (r != 4 || odn_plain_md(&plain, r, x->dims) != dnnl_success) return NULL;
    if (xd[1] % 16 == 0) {
        if (dnnl_memory_desc_init_by_tag(&src, r, xd, dnnl_f32, dnnl_aBcd16b) != dnnl_success) return NULL;
    } else if (xd[1] <= 8 && dnnl_memory_desc_equal(&x->md, &plain)) {
        src = plain;
    } else {
        return NULL;
    }
    if (fixed_dst) dst = *fixed_dst;
    else if (yd[1] % 16 != 0 || dnnl_memory_desc_init_by_tag(&dst, r, yd, dnnl_f32, dnnl_aBcd16b) != dnnl_success)
        return NULL;
    dnnl_primitive_desc_t pd = NULL;
    if (conv_pd(p, wino, &src, w_any, b_md, &dst, g, attr, &pd) != dnnl_success) return NULL;
    const char *impl = NULL;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success || !impl ||
        strncmp(impl, "ref", 3) == 0 || strstr(impl, "gemm:jit") || strstr(impl, "gemm:ref")) {
        dnnl_primitive_desc_destroy(pd);
        return NULL;
    }
    return pd;
}

tsr_status *odn_build_conv(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *x = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *scale = NULL; /* a per-channel Mul folded into the weights */
    if (x && x->defer_src) {
        scale = x->defer_scale;
        x = x->defer_src;
    }
    odn_value *w = odn_plan_value(p, odn_host->node_input(n, 1));
    odn_value *b = odn_host->node_input_count(n) > 2 ? odn_plan_value(p, odn_host->node_input(n, 2)) : NULL;
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!x || !w || !y || !x->produced || !w->mem || (b && !b->mem))
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: conv inputs");
    int32_t r = x->rank;
    if (r < 3 || r > 5 || w->rank != r) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "input and weight ranks");
    int64_t group = odn_attr_int(n, "group", 1);
    int64_t m = w->dims[0];
    if (group < 1 || m % group != 0 || x->dims[1] != w->dims[1] * group)
        return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "channels %lld, weight %lldx%lld, group %lld do not agree",
                              (long long)x->dims[1], (long long)w->dims[0], (long long)w->dims[1], (long long)group);
    if (b && (b->rank != 1 || b->dims[0] != m)) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "bias size");
    conv_geom g;
    int64_t out[ODN_MAX_RANK];
    tsr_status *s = geometry(n, x, w, &g, out);
    if (s) return s;

    /* BatchNormalization right after, with everything constant: fold it. */
    float *folded_w = NULL, *folded_b = NULL;
    odn_value *conv_out = y;
    const tsr_node *next = odn_plan_sole_consumer(p, y);
    if (next && strcmp(odn_host->node_op_type(next), "BatchNormalization") == 0 &&
        odn_plan_value(p, odn_host->node_input(next, 0)) == y && fold_batchnorm(p, next, w, b, &folded_w, &folded_b)) {
        p->done[odn_plan_node_index(p, next)] = true;
        conv_out = odn_plan_value(p, odn_host->node_output(next, 0));
    }

    dnnl_post_ops_t po;
    dnnl_primitive_attr_t attr;
    tsr_status *ps = odn_post_ops_new(n, &po, &attr);
    if (ps) return ps;
    dnnl_exec_arg_t args[ODN_MAX_ARGS];
    int nargs = 3;
    odn_value *last = conv_out;
    p->prefer_sum = true;
    s = odn_fuse_post_ops(p, conv_out, r, out, po, args, &nargs, &last);
    odn_value *sum_into = p->sum_into;
    if (!s && dnnl_primitive_attr_set_post_ops(attr, po) != dnnl_success)
        s = odn_node_error(n, TSR_ERR_PROVIDER, "post-ops");

    /* descriptors: let oneDNN pick layouts, except a piece output's */
    dnnl_dims_t xd, wd, yd, bd;
    for (int32_t i = 0; i < r; i++) {
        xd[i] = x->dims[i];
        yd[i] = out[i];
    }
    int wr = group > 1 ? r + 1 : r;
    if (group > 1) {
        wd[0] = group;
        wd[1] = m / group;
        for (int32_t i = 1; i < r; i++) wd[i + 1] = w->dims[i];
    } else {
        for (int32_t i = 0; i < r; i++) wd[i] = w->dims[i];
    }
    bd[0] = m;
    dnnl_memory_desc_t src_any, w_any, dst_md, b_md, w_plain;
    dnnl_status_t st = dnnl_success;
    if (!s) {
        st = dnnl_memory_desc_init_by_tag(&src_any, r, xd, dnnl_f32, dnnl_format_tag_any);
        if (st == dnnl_success) st = dnnl_memory_desc_init_by_tag(&w_any, wr, wd, dnnl_f32, dnnl_format_tag_any);
        if (st == dnnl_success) st = dnnl_memory_desc_init_by_tag(&b_md, 1, bd, dnnl_f32, dnnl_a);
        if (st == dnnl_success) st = odn_plain_md(&w_plain, wr, wd);
        if (st == dnnl_success)
            st = last->output_index >= 0        ? odn_plain_md(&dst_md, r, out)
                 : sum_into                    ? (dst_md = sum_into->md, dnnl_success)
                                               : dnnl_memory_desc_init_by_tag(&dst_md, r, yd, dnnl_f32, dnnl_format_tag_any);
        if (st != dnnl_success) s = odn_dnnl_error(n, "conv layouts", st);
    }
    bool has_bias = b || folded_b;
    dnnl_primitive_desc_t pd = NULL;
    bool via_temp = false;
    odn_value temp;
    odn_eltwise tail[ODN_WINO_TAIL_MAX];
    int tail_count = 0;
    if (!s) {
        /* 3x3, stride 1, undilated, ungrouped: Winograd when oneDNN has it
         * for this CPU (about 15% off ResNet-50 here, within the reference's
         * tolerance), else (or if it refuses) direct. */
        bool wino = winograd_shape(r, xd, wd, wr, group, &g) && p->winograd;
        /* a piece output stays plain: no blocked attempt; a sum post-op's
         * dst is the residual's layout */
        bool blocked = last->output_index < 0 && (piece_prefers_blocked(p) || keeps_blocked(x, r, xd));
        if (blocked)
            pd = blocked_pd(p, wino, x, r, xd, yd, &w_any, has_bias ? &b_md : NULL, sum_into ? &dst_md : NULL, &g,
                            attr);
        if (!pd) st = conv_pd(p, wino, &src_any, &w_any, has_bias ? &b_md : NULL, &dst_md, &g, attr, &pd);
        if (st != dnnl_success) s = odn_dnnl_error(n, "convolution setup", st);
        /* Winograd refused only for its post-ops: Winograd bare, then the
         * activation in place */
        if (!s && wino && !sum_into && nargs == 3 && !strstr(odn_impl_name(pd), "wino") &&
            odn_conv_wino_tail(po, tail, &tail_count)) {
            dnnl_primitive_attr_t bare = NULL;
            dnnl_primitive_desc_t alt = NULL;
            if (dnnl_primitive_attr_create(&bare) == dnnl_success) {
                if (blocked)
                    alt = blocked_pd(p, true, x, r, xd, yd, &w_any, has_bias ? &b_md : NULL, NULL, &g, bare);
                if (!alt && conv_pd(p, true, &src_any, &w_any, has_bias ? &b_md : NULL, &dst_md, &g, bare, &alt) !=
                                dnnl_success)
                    alt = NULL;
                dnnl_primitive_attr_destroy(bare);
            }
            if (alt && strstr(odn_impl_name(alt), "wino") &&
                odn_conv_wino_tail_fast(p, tail, tail_count, dnnl_primitive_desc_query_md(alt, dnnl_query_dst_md, 0))) {
                dnnl_primitive_desc_destroy(pd);
                pd = alt;
            } else {
                if (alt) dnnl_primitive_desc_destroy(alt);
                tail_count = 0;
            }
        }
        /* A plain (NCHW) destination, as a piece output has, leaves oneDNN
         * 2.6 only its im2col "gemm:jit" kernel for many shapes, 10-100x
         * slower than its direct ones: compute in the layout oneDNN picks
         * and reorder into the output instead. */
        if (!s && last->output_index >= 0 && !sum_into && strstr(odn_impl_name(pd), "gemm")) {
            dnnl_memory_desc_t any_dst;
            dnnl_primitive_desc_t alt = NULL;
            if (dnnl_memory_desc_init_by_tag(&any_dst, r, yd, dnnl_f32, dnnl_format_tag_any) == dnnl_success &&
                conv_pd(p, wino, &src_any, &w_any, has_bias ? &b_md : NULL, &any_dst, &g, attr, &alt) == dnnl_success &&
                !strstr(odn_impl_name(alt), "gemm")) {
                dnnl_primitive_desc_destroy(pd);
                pd = alt;
                via_temp = true;
            } else if (alt) {
                dnnl_primitive_desc_destroy(alt);
            }
        }
    }
    dnnl_memory_t src_mem = NULL, w_mem = NULL, b_mem = NULL;
    if (!s) s = odn_plan_mem_as(p, x, dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0), n, &src_mem);
    if (!s) {
        /* the weights as a plain (maybe grouped) view, then in oneDNN's layout */
        odn_value wv = *w;
        if (folded_w) {
            s = odn_plan_new_mem(p, &w_plain, folded_w, n, &wv.mem);
            wv.md = w_plain;
        } else {
            s = odn_plan_view(p, w->mem, &w_plain, n, &wv.mem);
            wv.md = w_plain;
        }
        const dnnl_memory_desc_t *want = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
        if (!s && wv.constant && !dnnl_memory_desc_equal(want, &wv.md))
            /* keyed by the constant weights, and by the BatchNormalization
             * folded into them (the folded copy is new each plan) */
            s = odn_arena_const_as_keyed(p, w->constant->data, folded_w ? (const void *)next : NULL, wv.mem, &wv.md,
                                         want, n, &w_mem);
        else if (!s)
            s = odn_plan_mem_as(p, &wv, want, n, &w_mem);
        if (!s && scale) s = odn_fold_scale_weights(p, n, scale, w_mem, want, m, x->dims[1], &w_mem);
    }
    if (!s && has_bias) {
        if (folded_b) s = odn_plan_new_mem(p, &b_md, folded_b, n, &b_mem);
        else b_mem = b->mem;
    }
    if (!s && sum_into && last->output_index < 0) {
        /* the result accumulates into the residual's buffer */
        last->rank = r;
        memcpy(last->dims, out, sizeof(int64_t) * (size_t)r);
        last->md = sum_into->md;
        last->mem = sum_into->mem;
        last->produced = true;
    } else if (!s && via_temp) {
        /* the result in oneDNN's layout, then reordered into the output */
        s = odn_plan_define(p, last, r, out, NULL, n);
        temp = (odn_value){.info = last->info, .input_index = -1, .output_index = -1};
        if (!s) s = odn_plan_define(p, &temp, r, out, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), n);
    } else if (!s) {
        s = odn_plan_define(p, last, r, out, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), n);
        /* a piece output starts as a copy of the residual the sum adds to */
        if (!s && sum_into) s = odn_plan_add_reorder(p, sum_into->mem, &sum_into->md, last->mem, &last->md, n);
    }
    if (!s) {
        args[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, src_mem};
        args[1] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, w_mem};
        if (has_bias) {
            args[2] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, b_mem};
        } else {
            /* no bias: move the last post-op argument into its slot */
            args[2] = args[nargs - 1];
            nargs--;
        }
        args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_DST, via_temp ? temp.mem : last->mem};
        s = odn_plan_add_primitive(p, pd, n, args, nargs);
        for (int i = 0; !s && i < tail_count; i++) s = odn_eltwise_step(p, n, &tail[i], &last->md, last->mem, last->mem);
        if (!s && via_temp) s = odn_plan_add_reorder(p, temp.mem, &temp.md, last->mem, &last->md, n);
    }
    if (pd) dnnl_primitive_desc_destroy(pd);
    dnnl_post_ops_destroy(po);
    dnnl_primitive_attr_destroy(attr);
    return s;
}
