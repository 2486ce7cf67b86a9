/* Conv as one oneDNN convolution: a following BatchNormalization with
 * constant statistics is folded into the (constant) weights and bias, and
 * what follows that is fused as post-ops. Weights are reordered into the
 * layout the kernel wants once, when the plan is built.
 *
 * A 1-D convolution ([N,C,T]) runs as a 2-D one over [N,C,1,T] with kernel
 * [1,K]: oneDNN 2.6 has few 1-D kernels (a depthwise k=31 over 256 channels
 * got only its im2col "gemm:jit", 1.5 ms, against 0.1 ms for the same
 * convolution as 2-D). Only the convolution sees 4-D descriptors: the
 * values keep their rank 3 and a layout with the unit dim dropped (nChw16c
 * with h=1 is nCw16c byte for byte, NHWC is NWC, NCHW is NCW), and the
 * primitive reads and writes 4-D views over the same buffers. */
#include <math.h>
#include <string.h>

#include "odn.h"

typedef struct conv_geom {
    dnnl_dims_t strides, dilation, pad_l, pad_r;
} conv_geom;

/* `in` (rank 3) with a unit dim inserted at 2, or (rank 4, dim 2 of 1)
 * without it: the same bytes as the other rank. */
static dnnl_status_t md_unit_h(const dnnl_memory_desc_t *in, dnnl_memory_desc_t *out) {
    dnnl_dims_t d;
    if (in->ndims == 3) {
        d[0] = in->dims[0];
        d[1] = in->dims[1];
        d[2] = 1;
        d[3] = in->dims[2];
        return dnnl_memory_desc_reshape(out, in, 4, d);
    }
    if (in->ndims != 4 || in->dims[2] != 1) return dnnl_invalid_arguments;
    d[0] = in->dims[0];
    d[1] = in->dims[1];
    d[2] = in->dims[3];
    return dnnl_memory_desc_reshape(out, in, 3, d);
}

/* A memory over `base`'s bytes seen at the other rank (md_unit_h). */
static tsr_status *unit_h_view(odn_plan *p, dnnl_memory_t base, const tsr_node *n, dnnl_memory_t *out) {
    const dnnl_memory_desc_t *md = NULL;
    dnnl_memory_desc_t other;
    dnnl_status_t st = dnnl_memory_get_memory_desc(base, &md);
    if (st == dnnl_success) st = md_unit_h(md, &other);
    if (st != dnnl_success) return odn_dnnl_error(n, "1-D convolution as 2-D view", st);
    return odn_plan_view(p, base, &other, n, out);
}

/* `mem` at the other rank: the 4-D memory a 1-D convolution wrote when
 * `mem` is its 3-D view, else a new view. Value buffers that are no view's
 * base stay ones a later convolution may accumulate into (a sum post-op:
 * odn_fuse.c refuses a buffer other memories view). */
static tsr_status *unit_h_mem(odn_plan *p, dnnl_memory_t mem, const tsr_node *n, dnnl_memory_t *out) {
    const dnnl_memory_desc_t *md = NULL, *base_md = NULL;
    dnnl_memory_desc_t want;
    if (dnnl_memory_get_memory_desc(mem, &md) == dnnl_success && md_unit_h(md, &want) == dnnl_success)
        for (size_t i = p->view_count; i-- > 0;) {
            if (p->view_mems[i] != mem) continue;
            if (dnnl_memory_get_memory_desc(p->view_bases[i], &base_md) == dnnl_success &&
                dnnl_memory_desc_equal(base_md, &want)) {
                *out = p->view_bases[i];
                return NULL;
            }
            break;
        }
    return unit_h_view(p, mem, n, out);
}

/* The post-ops fused for the 3-D value, for the 4-D convolution: each
 * binary operand's descriptor and memory seen with the unit dim. */
static tsr_status *post_ops_unit_h(odn_plan *p, const tsr_node *n, dnnl_post_ops_t *po, dnnl_exec_arg_t *args,
                                   int nargs) {
    dnnl_post_ops_t out;
    if (dnnl_post_ops_create(&out) != dnnl_success) return odn_node_error(n, TSR_ERR_NO_MEMORY, "post-ops");
    tsr_status *s = NULL;
    dnnl_status_t st = dnnl_success;
    for (int k = 0; !s && st == dnnl_success && k < dnnl_post_ops_len(*po); k++) {
        dnnl_primitive_kind_t kind = dnnl_post_ops_get_kind(*po, k);
        float scale, alpha, beta;
        dnnl_alg_kind_t alg;
        if (kind == dnnl_eltwise) {
            st = dnnl_post_ops_get_params_eltwise(*po, k, &scale, &alg, &alpha, &beta);
            if (st == dnnl_success) st = dnnl_post_ops_append_eltwise(out, scale, alg, alpha, beta);
        } else if (kind == dnnl_sum) {
            dnnl_data_type_t dt;
            st = dnnl_post_ops_get_params_sum_v2(*po, k, &scale, &dt);
            if (st == dnnl_success) st = dnnl_post_ops_append_sum_v2(out, scale, dt);
        } else if (kind == dnnl_binary) {
            const dnnl_memory_desc_t *md = NULL;
            dnnl_memory_desc_t md4;
            st = dnnl_post_ops_get_params_binary(*po, k, &alg, &md);
            if (st == dnnl_success) st = md_unit_h(md, &md4);
            if (st == dnnl_success) st = dnnl_post_ops_append_binary(out, alg, &md4);
            for (int a = 3; st == dnnl_success && !s && a < nargs; a++)
                if (args[a].arg == (DNNL_ARG_ATTR_MULTIPLE_POST_OP(k) | DNNL_ARG_SRC_1))
                    s = unit_h_mem(p, args[a].memory, n, &args[a].memory);
        } else {
            s = odn_node_error(n, TSR_ERR_PROVIDER, "internal: post-op kind %d on a 1-D convolution", (int)kind);
        }
    }
    if (!s && st != dnnl_success) s = odn_dnnl_error(n, "1-D convolution post-ops", st);
    if (s) {
        dnnl_post_ops_destroy(out);
        return s;
    }
    dnnl_post_ops_destroy(*po);
    *po = out;
    return NULL;
}

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
static bool fold_batchnorm(odn_plan *p, const tsr_node *bn, const odn_value *w, const odn_value *b, float **w_out,
                           float **b_out) {
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
        if (w && w->rank == 4 && (w->dims[0] % odn_block() != 0 || (cin > 8 && cin % odn_block() != 0))) return false;
        if (wino || !w || w->rank != 4 || w->dims[2] != 3 || w->dims[3] != 3 || group != 1 || w->dims[0] < 64 ||
            w->dims[1] < 64)
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
static bool keeps_blocked(const odn_value *x, const dnnl_memory_desc_t *x_md, int32_t r, const dnnl_dims_t xd) {
    dnnl_memory_desc_t md;
    if (r != 4 || !x_md) return false;
    dnnl_status_t st = x->input_index >= 0 && xd[1] <= 8
        ? odn_plain_md(&md, r, xd)
        : dnnl_memory_desc_init_by_tag(&md, r, xd, dnnl_f32, odn_blocked_tag(4));
    return st == dnnl_success && dnnl_memory_desc_equal(&md, x_md);
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
static dnnl_primitive_desc_t blocked_pd(odn_plan *p, bool wino, const dnnl_memory_desc_t *x_md, int32_t r,
                                        const dnnl_dims_t xd, const dnnl_dims_t yd, const dnnl_memory_desc_t *w_any,
                                        const dnnl_memory_desc_t *b_md, const dnnl_memory_desc_t *fixed_dst,
                                        const conv_geom *g, dnnl_primitive_attr_t attr) {
    dnnl_memory_desc_t src, dst, plain;
    if (r != 4 || !x_md || odn_plain_md(&plain, r, xd) != dnnl_success) return NULL;
    if (xd[1] % odn_block() == 0) {
        if (dnnl_memory_desc_init_by_tag(&src, r, xd, dnnl_f32, odn_blocked_tag(4)) != dnnl_success) return NULL;
    } else if (xd[1] <= 8 && dnnl_memory_desc_equal(x_md, &plain)) {
        src = plain;
    } else {
        return NULL;
    }
    if (fixed_dst) dst = *fixed_dst;
    else if (yd[1] % odn_block() != 0 ||
             dnnl_memory_desc_init_by_tag(&dst, r, yd, dnnl_f32, odn_blocked_tag(4)) != dnnl_success)
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

/* A convolution left to oneDNN's im2col kernel only for its padding
 * (odn_conv_pad.c): the same one with pads 0 over an explicitly padded
 * source, when that gets a direct kernel and a source layout the padding
 * loop writes: with *pd's destination layout, or (dst_free) any, which
 * sets *dst_changed. Replaces *pd and returns true with the padded source
 * layout in *padded (*tag) and the pads {top, left, bottom, right}; rank 4
 * only. */
static bool padded_alternative(odn_plan *p, dnnl_primitive_desc_t *pd, const dnnl_dims_t xd,
                               const dnnl_memory_desc_t *w_any, const dnnl_memory_desc_t *b_md, const conv_geom *g,
                               dnnl_primitive_attr_t attr, bool dst_free, dnnl_memory_desc_t *padded,
                               dnnl_format_tag_t *tag, int64_t pads[4], bool *dst_changed) {
    if (g->pad_l[0] < 0 || g->pad_l[1] < 0 || g->pad_r[0] < 0 || g->pad_r[1] < 0 ||
        !(g->pad_l[0] || g->pad_l[1] || g->pad_r[0] || g->pad_r[1]))
        return false;
    conv_geom g0 = *g;
    g0.pad_l[0] = g0.pad_l[1] = g0.pad_r[0] = g0.pad_r[1] = 0;
    dnnl_dims_t xdp = {xd[0], xd[1], xd[2] + g->pad_l[0] + g->pad_r[0], xd[3] + g->pad_l[1] + g->pad_r[1]};
    dnnl_memory_desc_t src_any, dst_any;
    const dnnl_memory_desc_t *dsts[2] = {dnnl_primitive_desc_query_md(*pd, dnnl_query_dst_md, 0), &dst_any};
    if (dnnl_memory_desc_init_by_tag(&src_any, 4, xdp, dnnl_f32, dnnl_format_tag_any) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&dst_any, 4, dsts[0]->dims, dnnl_f32, dnnl_format_tag_any) != dnnl_success)
        return false;
    dnnl_primitive_desc_t alt = NULL;
    for (int d = 0; d < (dst_free ? 2 : 1) && !alt; d++) {
        if (conv_pd(p, false, &src_any, w_any, b_md, dsts[d], &g0, attr, &alt) != dnnl_success) {
            alt = NULL;
            continue;
        }
        const char *impl = odn_impl_name(alt);
        *padded = *dnnl_primitive_desc_query_md(alt, dnnl_query_src_md, 0);
        if (strstr(impl, "gemm") || strncmp(impl, "ref", 3) == 0 || !odn_conv_pad_tag(padded, tag)) {
            dnnl_primitive_desc_destroy(alt);
            alt = NULL;
        }
    }
    if (!alt) return false;
    *dst_changed = !dnnl_memory_desc_equal(dnnl_primitive_desc_query_md(alt, dnnl_query_dst_md, 0), dsts[0]);
    pads[0] = g->pad_l[0], pads[1] = g->pad_l[1], pads[2] = g->pad_r[0], pads[3] = g->pad_r[1];
    dnnl_primitive_desc_destroy(*pd);
    *pd = alt;
    return true;
}

/* True when post-op k is a binary one whose operand spans the whole
 * destination `yd` (a residual), not a broadcast one. */
static bool full_binary(const_dnnl_post_ops_t po, int k, int32_t r, const dnnl_dims_t yd) {
    dnnl_alg_kind_t alg;
    const dnnl_memory_desc_t *md = NULL;
    if (dnnl_post_ops_get_kind(po, k) != dnnl_binary ||
        dnnl_post_ops_get_params_binary(po, k, &alg, &md) != dnnl_success || md->ndims != r)
        return false;
    for (int32_t i = 0; i < r; i++)
        if (md->dims[i] != yd[i]) return false;
    return true;
}

/* oneDNN 2.6's direct kernels take a full-tensor binary post-op only in the
 * destination's layout, so a residual in another one (a plain piece input,
 * a Split's or a C loop's plain output) leaves the convolution to its
 * im2col "gemm:jit" kernel (a TCN block's k=3 64-channel convolution with
 * the input added: 0.75 ms where brgconv takes 0.03). This tries
 * channels-last, then channel-blocked, as the destination's and those
 * operands' layout; on a direct kernel it returns that pd (NULL else) and
 * *layout (at rank r) for the caller to reorder the operands into. */
static dnnl_primitive_desc_t residual_pd(odn_plan *p, bool wino, const_dnnl_post_ops_t po,
                                         const_dnnl_primitive_attr_t attr, int32_t r, const dnnl_dims_t yd,
                                         const dnnl_memory_desc_t *src_any, const dnnl_memory_desc_t *w_any,
                                         const dnnl_memory_desc_t *b_md, const conv_geom *g,
                                         dnnl_memory_desc_t *layout) {
    static const dnnl_format_tag_t last_tags[] = {dnnl_acdb, dnnl_acdeb};
    if (r != 4 && r != 5) return NULL;
    const dnnl_format_tag_t tags[2] = {last_tags[r - 4], odn_blocked_tag(r)};
    for (int t = 0; t < 2; t++) {
        if (t == 1 && yd[1] % odn_block() != 0) break;
        dnnl_memory_desc_t dst;
        dnnl_post_ops_t po2 = NULL;
        dnnl_primitive_attr_t attr2 = NULL;
        dnnl_primitive_desc_t pd = NULL;
        dnnl_status_t st = dnnl_memory_desc_init_by_tag(&dst, r, yd, dnnl_f32, tags[t]);
        if (st == dnnl_success) st = dnnl_post_ops_create(&po2);
        for (int k = 0; st == dnnl_success && k < dnnl_post_ops_len(po); k++) {
            float scale, alpha, beta;
            dnnl_alg_kind_t alg;
            dnnl_data_type_t dt;
            const dnnl_memory_desc_t *md = NULL;
            switch (dnnl_post_ops_get_kind(po, k)) {
            case dnnl_eltwise:
                st = dnnl_post_ops_get_params_eltwise(po, k, &scale, &alg, &alpha, &beta);
                if (st == dnnl_success) st = dnnl_post_ops_append_eltwise(po2, scale, alg, alpha, beta);
                break;
            case dnnl_sum:
                st = dnnl_post_ops_get_params_sum_v2(po, k, &scale, &dt);
                if (st == dnnl_success) st = dnnl_post_ops_append_sum_v2(po2, scale, dt);
                break;
            case dnnl_binary:
                st = dnnl_post_ops_get_params_binary(po, k, &alg, &md);
                if (st == dnnl_success)
                    st = dnnl_post_ops_append_binary(po2, alg, full_binary(po, k, r, yd) ? &dst : md);
                break;
            default: st = dnnl_unimplemented; break;
            }
        }
        if (st == dnnl_success) st = dnnl_primitive_attr_clone(&attr2, attr);
        if (st == dnnl_success) st = dnnl_primitive_attr_set_post_ops(attr2, po2);
        if (st == dnnl_success) st = conv_pd(p, wino, src_any, w_any, b_md, &dst, g, attr2, &pd);
        if (po2) dnnl_post_ops_destroy(po2);
        if (attr2) dnnl_primitive_attr_destroy(attr2);
        if (st != dnnl_success) continue;
        const char *impl = odn_impl_name(pd);
        if (!odn_impl_is_ref(impl) && !strstr(impl, "gemm")) {
            *layout = dst;
            return pd;
        }
        dnnl_primitive_desc_destroy(pd);
    }
    return NULL;
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
    /* a 1-D convolution is computed as 2-D, [N,C,T] seen as [N,C,1,T]:
     * cr is the rank the convolution's descriptors have */
    bool as2d = r == 3;
    int32_t cr = as2d ? 4 : r;
    if (as2d) {
        g.strides[1] = g.strides[0];
        g.dilation[1] = g.dilation[0];
        g.pad_l[1] = g.pad_l[0];
        g.pad_r[1] = g.pad_r[0];
        g.strides[0] = 1;
        g.dilation[0] = g.pad_l[0] = g.pad_r[0] = 0;
    }

    if (as2d && group > 1 && !scale) {
        dnnl_dims_t xd4 = {x->dims[0], x->dims[1], 1, x->dims[2]}, yd4 = {out[0], out[1], 1, out[2]};
        dnnl_dims_t wd5 = {group, m / group, w->dims[1], 1, w->dims[2]};
        if (odn_dwconv1d_wanted(p, x, w, b, group, xd4, wd5, yd4, g.strides, g.dilation, g.pad_l, g.pad_r))
            return odn_build_dwconv1d(p, n, x, w, b, y, out, g.strides[1], g.dilation[1] + 1, g.pad_l[1]);
    }
    if (!as2d && !scale && odn_conv_small_oc_wanted(x, w, b, group, out))
        return odn_build_conv_small_oc(p, n, x, w, b, y, out, g.strides, g.dilation, g.pad_l);
    /* BatchNormalization right after, with everything constant: fold it. */
    float *folded_w = NULL, *folded_b = NULL;
    odn_value *conv_out = y;
    const tsr_node *next = odn_plan_sole_consumer(p, y);
    if (next && strcmp(odn_host->node_op_type(next), "BatchNormalization") == 0 &&
        odn_plan_value(p, odn_host->node_input(next, 0)) == y && fold_batchnorm(p, next, w, b, &folded_w, &folded_b)) {
        p->done[odn_plan_node_index(p, next)] = true;
        conv_out = odn_plan_value(p, odn_host->node_output(next, 0));
    }

    /* groups too narrow for the direct kernels: merged (odn_conv_groups.c) */
    static const char merged_tag = 0;
    int64_t cin_g = w->dims[1];
    const float *w_now = folded_w ? folded_w : const_floats(w, odn_numel(w->rank, w->dims));
    bool merged = !scale && odn_conv_merge_groups(p, group, m, w->dims[1], odn_numel(r - 2, w->dims + 2), w_now,
                                                  &group, &folded_w);
    if (merged) cin_g = x->dims[1] / group;

    dnnl_post_ops_t po;
    dnnl_primitive_attr_t attr;
    tsr_status *ps = odn_post_ops_new(n, &po, &attr);
    if (ps) return ps;
    dnnl_exec_arg_t args[ODN_MAX_ARGS];
    int nargs = 3;
    odn_value *last = conv_out;
    p->prefer_sum = true;
    /* fused at the values' rank (broadcasts align there), then seen 4-D */
    s = odn_fuse_post_ops(p, conv_out, r, out, po, args, &nargs, &last);
    odn_value *sum_into = p->sum_into;
    /* 3x3 stride 1 where oneDNN has no Winograd kernel: ours */
    const float *b_now = folded_b ? folded_b : const_floats(b, m);
    if (!s && !as2d && !scale && !merged && (!b || b_now) &&
        odn_conv_wino_f43_wanted(p, x, w, group, g.strides, g.dilation, g.pad_l, out)) {
        bool handled = false;
        s = odn_build_conv_wino_f43(p, n, x, w, w_now, folded_b ? (const void *)next : NULL, b_now, last, sum_into, out,
                                    g.dilation, g.pad_l, po, nargs, &handled);
        if (handled) {
            dnnl_post_ops_destroy(po);
            dnnl_primitive_attr_destroy(attr);
            return s;
        }
    }
    if (!s && as2d) s = post_ops_unit_h(p, n, &po, args, nargs);
    if (!s && dnnl_primitive_attr_set_post_ops(attr, po) != dnnl_success)
        s = odn_node_error(n, TSR_ERR_PROVIDER, "post-ops");

    /* descriptors: let oneDNN pick layouts, except a piece output's */
    dnnl_dims_t xd, wd, yd, bd;
    for (int32_t i = 0, j = 0; i < cr; i++) {
        bool unit = as2d && i == 2;
        xd[i] = unit ? 1 : x->dims[j];
        yd[i] = unit ? 1 : out[j];
        if (!unit) j++;
    }
    /* the weights, [M, C/group, (1,) K...], maybe grouped */
    int64_t kd[ODN_MAX_RANK];
    for (int32_t i = 0, j = 0; i < cr; i++) kd[i] = as2d && i == 2 ? 1 : w->dims[j++];
    kd[1] = cin_g;
    int wr = group > 1 ? cr + 1 : cr;
    if (group > 1) {
        wd[0] = group;
        wd[1] = m / group;
        for (int32_t i = 1; i < cr; i++) wd[i + 1] = kd[i];
    } else {
        for (int32_t i = 0; i < cr; i++) wd[i] = kd[i];
    }
    bd[0] = m;
    /* the input's layout at the convolution's rank (NULL: none such) */
    dnnl_memory_desc_t x_md4;
    const dnnl_memory_desc_t *x_md = &x->md;
    if (as2d) x_md = md_unit_h(&x->md, &x_md4) == dnnl_success ? &x_md4 : NULL;
    dnnl_memory_desc_t src_any, w_any, dst_md, b_md, w_plain;
    dnnl_status_t st = dnnl_success;
    if (!s) {
        st = dnnl_memory_desc_init_by_tag(&src_any, cr, xd, dnnl_f32, dnnl_format_tag_any);
        if (st == dnnl_success) st = dnnl_memory_desc_init_by_tag(&w_any, wr, wd, dnnl_f32, dnnl_format_tag_any);
        if (st == dnnl_success) st = dnnl_memory_desc_init_by_tag(&b_md, 1, bd, dnnl_f32, dnnl_a);
        if (st == dnnl_success) st = odn_plain_md(&w_plain, wr, wd);
        if (st == dnnl_success)
            st = last->output_index >= 0 ? odn_plain_md(&dst_md, cr, yd)
                : !sum_into              ? dnnl_memory_desc_init_by_tag(&dst_md, cr, yd, dnnl_f32, dnnl_format_tag_any)
                : as2d                   ? md_unit_h(&sum_into->md, &dst_md)
                                         : (dst_md = sum_into->md, dnnl_success);
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
        bool wino = winograd_shape(cr, xd, wd, wr, group, &g) && p->winograd;
        /* a piece output stays plain: no blocked attempt; a sum post-op's
         * dst is the residual's layout */
        bool blocked = last->output_index < 0 && (piece_prefers_blocked(p) || keeps_blocked(x, x_md, cr, xd));
        if (blocked)
            pd = blocked_pd(p, wino, x_md, cr, xd, yd, &w_any, has_bias ? &b_md : NULL, sum_into ? &dst_md : NULL, &g,
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
                    alt = blocked_pd(p, true, x_md, cr, xd, yd, &w_any, has_bias ? &b_md : NULL, NULL, &g, bare);
                if (!alt &&
                    conv_pd(p, true, &src_any, &w_any, has_bias ? &b_md : NULL, &dst_md, &g, bare, &alt) !=
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
        /* a residual in another layout than the kernel's: reorder it */
        bool residual = false;
        for (int k = 0; !s && !sum_into && k < dnnl_post_ops_len(po); k++)
            residual = residual || full_binary(po, k, cr, yd);
        if (residual && strstr(odn_impl_name(pd), "gemm")) {
            dnnl_memory_desc_t lay;
            dnnl_primitive_desc_t alt =
                residual_pd(p, wino, po, attr, cr, yd, &src_any, &w_any, has_bias ? &b_md : NULL, &g, &lay);
            for (int k = 0; alt && !s && k < dnnl_post_ops_len(po); k++) {
                if (!full_binary(po, k, cr, yd)) continue;
                for (int a = 3; !s && a < nargs; a++) {
                    if (args[a].arg != (DNNL_ARG_ATTR_MULTIPLE_POST_OP(k) | DNNL_ARG_SRC_1)) continue;
                    const dnnl_memory_desc_t *from = NULL;
                    dnnl_memory_t moved = NULL;
                    dnnl_memory_get_memory_desc(args[a].memory, &from);
                    if (dnnl_memory_desc_equal(from, &lay)) continue;
                    s = odn_plan_arena_mem(p, &lay, n, &moved);
                    if (!s) s = odn_plan_add_reorder(p, args[a].memory, from, moved, &lay, n);
                    if (!s) args[a].memory = moved;
                }
            }
            if (alt) {
                dnnl_primitive_desc_destroy(pd);
                pd = alt;
                via_temp = last->output_index >= 0;
            }
        }
        /* A plain (NCHW) destination, as a piece output has, leaves oneDNN
         * 2.6 only its im2col "gemm:jit" kernel for many shapes, 10-100x
         * slower than its direct ones: compute in the layout oneDNN picks
         * and reorder into the output instead. */
        if (!s && last->output_index >= 0 && !sum_into && !via_temp && strstr(odn_impl_name(pd), "gemm")) {
            dnnl_memory_desc_t any_dst;
            dnnl_primitive_desc_t alt = NULL;
            if (dnnl_memory_desc_init_by_tag(&any_dst, cr, yd, dnnl_f32, dnnl_format_tag_any) == dnnl_success &&
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
    dnnl_memory_desc_t padded_src;
    dnnl_format_tag_t pad_tag = dnnl_format_tag_undef;
    int64_t pads4[4];
    bool dst_changed = false;
    bool pad_src = !s && cr == 4 && strstr(odn_impl_name(pd), "gemm") &&
        padded_alternative(p, &pd, xd, &w_any, has_bias ? &b_md : NULL, &g, attr, !sum_into, &padded_src, &pad_tag,
                           pads4, &dst_changed);
    /* a piece output's result then goes through the kernel's layout */
    if (pad_src && dst_changed && last->output_index >= 0) via_temp = true;
    /* the source and destination layouts at the values' rank */
    dnnl_memory_desc_t src_v, dst_v;
    if (!s) {
        const dnnl_memory_desc_t *sq = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
        const dnnl_memory_desc_t *dq = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
        st = dnnl_success;
        if (as2d) {
            st = md_unit_h(sq, &src_v);
            if (st == dnnl_success) st = md_unit_h(dq, &dst_v);
        } else {
            src_v = *sq;
            dst_v = *dq;
        }
        if (st != dnnl_success) s = odn_dnnl_error(n, "1-D convolution layouts", st);
    }
    dnnl_memory_t src_mem = NULL, w_mem = NULL, b_mem = NULL;
    if (!s && pad_src) {
        /* x in the kernel's layout at its own size, then padded into a copy */
        dnnl_memory_desc_t lay, lay_v;
        dnnl_memory_t unpadded = NULL;
        st = dnnl_memory_desc_init_by_tag(&lay, 4, xd, dnnl_f32, pad_tag);
        if (st == dnnl_success) st = as2d ? md_unit_h(&lay, &lay_v) : (lay_v = lay, dnnl_success);
        if (st != dnnl_success) s = odn_dnnl_error(n, "padded source layout", st);
        if (!s) s = odn_plan_mem_as(p, x, &lay_v, n, &unpadded);
        if (!s && as2d) s = unit_h_mem(p, unpadded, n, &unpadded);
        if (!s) s = odn_conv_pad_src(p, n, unpadded, &padded_src, pad_tag, pads4, &src_mem);
    } else if (!s) {
        s = odn_plan_mem_as(p, x, &src_v, n, &src_mem);
        if (!s && as2d) s = unit_h_mem(p, src_mem, n, &src_mem);
    }
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
        if (!s && wv.constant && !dnnl_memory_desc_equal(want, &wv.md)) {
            /* keyed by the constant weights, and by the BatchNormalization
             * folded into them (the folded copy is new each plan) */
            const void *key2 = folded_b ? (const void *)next : merged ? (const void *)&merged_tag : NULL;
            /* a per-channel scale is folded into the reordered weights
             * now, so those must exist now */
            s = scale ? odn_arena_const_as_keyed(p, w->constant->data, key2, wv.mem, &wv.md, want, n, &w_mem)
                      : odn_arena_const_deferred(p, w->constant->data, key2, wv.mem, &wv.md, want, n, &w_mem);
            /* a folded or merged copy is made from the host bytes each
             * plan, but a later plan for the same shapes finds its result
             * under the same keys and uses the cache's */
            if (!s) w->cached_reads++;
        } else if (!s) s = odn_plan_mem_as(p, &wv, want, n, &w_mem);
        if (!s && scale) s = odn_fold_scale_weights(p, n, scale, w_mem, want, m, x->dims[1], &w_mem);
    }
    if (!s && has_bias) {
        if (folded_b) s = odn_plan_new_mem(p, &b_md, folded_b, n, &b_mem);
        else b_mem = b->mem;
    }
    dnnl_memory_t dst4 = NULL; /* a 1-D convolution's own 4-D destination */
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
        if (!s) s = odn_plan_define(p, &temp, r, out, &dst_v, n);
    } else if (!s && as2d && last->output_index < 0) {
        /* the convolution writes a 4-D memory; the value is its 3-D view */
        if (odn_numel(r, out) < 0) s = odn_node_error(n, TSR_ERR_INVALID_MODEL, "output size overflows");
        if (!s) s = odn_plan_arena_mem(p, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), n, &dst4);
        if (!s) s = odn_plan_view(p, dst4, &dst_v, n, &last->mem);
        if (!s) {
            last->rank = r;
            memcpy(last->dims, out, sizeof(int64_t) * (size_t)r);
            last->md = dst_v;
            last->produced = true;
        }
    } else if (!s) {
        s = odn_plan_define(p, last, r, out, &dst_v, n);
        /* a piece output starts as a copy of the residual the sum adds to */
        if (!s && sum_into) s = odn_plan_add_reorder(p, sum_into->mem, &sum_into->md, last->mem, &last->md, n);
    }
    dnnl_memory_t dst_mem = dst4;
    if (!s && !dst_mem) {
        dst_mem = via_temp ? temp.mem : last->mem;
        if (as2d) s = unit_h_mem(p, dst_mem, n, &dst_mem);
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
        args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_DST, dst_mem};
        s = odn_plan_add_primitive(p, pd, n, args, nargs);
        for (int i = 0; !s && i < tail_count; i++)
            s = odn_eltwise_step(p, n, &tail[i], &last->md, last->mem, last->mem);
        if (!s && via_temp) s = odn_plan_add_reorder(p, temp.mem, &temp.md, last->mem, &last->md, n);
    }
    if (pd) dnnl_primitive_desc_destroy(pd);
    dnnl_post_ops_destroy(po);
    dnnl_primitive_attr_destroy(attr);
    return s;
}
