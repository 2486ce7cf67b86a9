/* ConvInteger and QLinearConv as oneDNN int8 convolutions.
 *
 * oneDNN 2.6's int8 convolution takes a source zero point (a runtime value
 * here) but no weight zero point, and only s8 weights. With w8 = w - 128
 * for uint8 weights (w itself for int8) and zw8 = zw - 128 (zw), per
 * output channel m:
 *
 *     sum (x - zx)(w - zw) = conv(x - zx, w8)[m] - zw8[m] * S,
 *     S = conv(x - zx, ones)
 *
 * so a second, one-channel convolution with all-ones weights gives S, and a
 * C loop combines them. With groups (depthwise included) oneDNN takes the
 * ONNX weights as they lie, viewed as g x M/g x C/g x k..., and S is per
 * group (the window sums of that group's channels only): the ones
 * convolution then has g groups of one output channel each. The loop
 * adds the bias and, for QLinearConv, requantizes (round half to even,
 * then the zero point, then saturation, as ONNX).
 * oneDNN treats padding as the source zero point, i.e. zero after centering,
 * as ONNX does. The convolutions run in the layouts oneDNN picks (NHWC or
 * blocked); the C loop reads plain copies.
 */
#include <string.h>

#include "odn_quant.h"

typedef struct qconv_prep {
    dnnl_memory_t zx, zw; /* zero point inputs, or NULL (0) */
    int32_t zx_type, zw_type;
    size_t zw_count;    /* 1 or one per output channel */
    dnnl_memory_t zx32; /* the s32 zero point oneDNN reads */
    int32_t *zw8;       /* per output channel, shifted like the weights */
    int64_t channels;
    int32_t shift;  /* 128 when w is uint8 shifted to int8 */
    size_t w_count; /* weights to shift each run, or 0 */
    const tsr_node *node;
} qconv_prep;

static tsr_status *prep_loop(const void *vctx, dnnl_memory_t w, dnnl_memory_t w8) {
    const qconv_prep *c = vctx;
    int32_t *zx = odn_q_handle(c->zx32);
    if (!zx) return odn_node_error(c->node, TSR_ERR_PROVIDER, "internal: zero point memory");
    *zx = (int32_t)odn_q_value(c->zx, c->zx_type, 0);
    for (int64_t m = 0; m < c->channels; m++)
        c->zw8[m] = (int32_t)odn_q_value(c->zw, c->zw_type, c->zw_count == 1 ? 0 : (size_t)m) - c->shift;
    if (c->w_count) odn_q_shift_u8(odn_q_handle(w), odn_q_handle(w8), c->w_count);
    return NULL;
}

typedef struct qconv_post {
    dnnl_memory_t sums; /* S per batch, group and position, or NULL */
    const int32_t *zw8;
    int64_t per_group;  /* output channels per group */
    dnnl_memory_t bias; /* int32 per channel, or NULL */
    int64_t batch, channels, groups, positions;
    int32_t y_type; /* TSR_INT32 (ConvInteger) or 8-bit */
    dnnl_memory_t sx, sw, sy, zy;
    int32_t scale_type, sw_type;
    size_t sw_count;
    const tsr_node *node;
} qconv_post;

static tsr_status *post_loop(const void *vctx, dnnl_memory_t acc_mem, dnnl_memory_t y_mem) {
    const qconv_post *c = vctx;
    const int32_t *acc = odn_q_handle(acc_mem), *sums = odn_q_handle(c->sums);
    void *y = odn_q_handle(y_mem);
    if (!acc || !y) return odn_node_error(c->node, TSR_ERR_PROVIDER, "internal: convolution memory");
    double zy = odn_q_value(c->zy, c->y_type, 0);
    double sx = odn_q_value(c->sx, c->scale_type, 0), sy = odn_q_value(c->sy, c->scale_type, 0);
    for (int64_t b = 0; b < c->batch; b++) {
        for (int64_t m = 0; m < c->channels; m++) {
            size_t base = (size_t)((b * c->channels + m) * c->positions);
            int64_t zw = c->zw8 ? c->zw8[m] : 0;
            size_t sbase = (size_t)((b * c->groups + m / c->per_group) * c->positions);
            int64_t bias = (int64_t)odn_q_value(c->bias, TSR_INT32, (size_t)m);
            double mul = 0;
            if (c->y_type != TSR_INT32) {
                double sw = odn_q_value(c->sw, c->sw_type, c->sw_count == 1 ? 0 : (size_t)m);
                mul = odn_q_round_prec(c->scale_type, odn_q_round_prec(c->scale_type, sx * sw) / sy);
            }
            for (int64_t i = 0; i < c->positions; i++) {
                int64_t v = acc[base + (size_t)i] + bias;
                if (sums) v -= zw * sums[sbase + (size_t)i];
                /* ONNX's int32 sums wrap: keep the low 32 bits */
                if (c->y_type == TSR_INT32) ((int32_t *)y)[base + (size_t)i] = (int32_t)(uint32_t)(uint64_t)v;
                else odn_q_store(c->y_type, y, base + (size_t)i, (double)v * mul, zy);
            }
        }
    }
    return NULL;
}

/* A descriptor of `md`'s shape and type with the layout left to oneDNN. */
static dnnl_status_t any_md(dnnl_memory_desc_t *out, const dnnl_memory_desc_t *md) {
    return dnnl_memory_desc_init_by_tag(out, md->ndims, md->dims, md->data_type, dnnl_format_tag_any);
}

/* One int8 convolution of x (runtime source zero point zx32) by weights
 * `w` (plain s8, `w_md`; reordered once now when `w_const`, else every
 * run) into a new plain s32 memory of dims `dy`, in the layouts oneDNN's
 * fast kernels pick (they reject plain NCHW int8), with reorders around. */
static tsr_status *conv_step(odn_plan *p, const tsr_node *n, odn_value *vx, const dnnl_memory_desc_t *w_md,
                             dnnl_memory_t w, bool w_const, int32_t r, const int64_t *dy, const int64_t *strides,
                             const int64_t *dil, const int64_t *pl, const int64_t *pr, dnnl_memory_t zx32,
                             dnnl_memory_t *out) {
    dnnl_memory_desc_t y_md, x_any, w_any, y_any, x_plain;
    dnnl_dims_t s, d, l, rr;
    for (int32_t i = 0; i < r - 2; i++) {
        s[i] = strides[i];
        d[i] = dil[i] - 1; /* oneDNN counts the gaps */
        l[i] = pl[i];
        rr[i] = pr[i];
    }
    dnnl_primitive_attr_t attr;
    dnnl_status_t st = dnnl_primitive_attr_create(&attr);
    if (st != dnnl_success) return odn_dnnl_error(n, "attribute creation", st);
    const int32_t rt = DNNL_RUNTIME_S32_VAL;
    st = dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_SRC, 1, 0, &rt);
    if (st == dnnl_success) st = odn_plain_md_typed(&y_md, r, dy, dnnl_s32);
    if (st == dnnl_success) st = odn_plain_md_typed(&x_plain, r, vx->dims, odn_dnnl_type(vx->elem_type));
    if (st == dnnl_success) st = any_md(&x_any, &x_plain);
    if (st == dnnl_success) st = any_md(&w_any, w_md);
    if (st == dnnl_success) st = any_md(&y_any, &y_md);
    dnnl_convolution_desc_t cd;
    if (st == dnnl_success)
        st = dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &x_any,
                                                        &w_any, NULL, &y_any, s, d, l, rr);
    dnnl_primitive_desc_t pd = NULL;
    if (st == dnnl_success) st = dnnl_primitive_desc_create(&pd, &cd, attr, p->engine, NULL);
    dnnl_primitive_attr_destroy(attr);
    if (st != dnnl_success) return odn_dnnl_error(n, "int8 convolution setup", st);
    const dnnl_memory_desc_t *xq = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    const dnnl_memory_desc_t *wq = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    /* a copy: yq is still read after pd is destroyed (reading pd's own, freed
     * copy crashed inside oneDNN's reorder creation, depending on the heap) */
    dnnl_memory_desc_t yq_copy = *dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    const dnnl_memory_desc_t *yq = &yq_copy;
    dnnl_memory_t xm = NULL, wm = w, ym = NULL;
    tsr_status *e = odn_plan_mem_as(p, vx, xq, n, &xm);
    if (!e && !dnnl_memory_desc_equal(wq, w_md)) {
        /* the reorder also computes the compensation the kernels keep
         * beside blocked int8 weights */
        e = odn_plan_new_mem(p, wq, DNNL_MEMORY_ALLOCATE, n, &wm);
        if (!e) e = w_const ? odn_plan_reorder_now(p, w, w_md, wm, wq, n) : odn_plan_add_reorder(p, w, w_md, wm, wq, n);
    }
    if (!e) e = odn_plan_new_mem(p, yq, DNNL_MEMORY_ALLOCATE, n, &ym);
    dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, xm},
                              {DNNL_ARG_WEIGHTS, wm},
                              {DNNL_ARG_DST, ym},
                              {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zx32}};
    if (!e) e = odn_plan_add_primitive(p, pd, n, args, 4);
    dnnl_primitive_desc_destroy(pd);
    if (e) return e;
    *out = ym;
    if (dnnl_memory_desc_equal(yq, &y_md)) return NULL;
    e = odn_plan_new_mem(p, &y_md, DNNL_MEMORY_ALLOCATE, n, out);
    return e ? e : odn_plan_add_reorder(p, ym, yq, *out, &y_md, n);
}

tsr_status *odn_build_quant_conv(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    bool qlinear = strcmp(odn_host->node_op_type(n), "QLinearConv") == 0;
    size_t iw = qlinear ? 3 : 1, izw = qlinear ? 5 : 3;
    odn_value *vx = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *vw = odn_plan_value(p, odn_host->node_input(n, iw));
    odn_value *vy = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!vx || !vw || !vy || !vx->produced || !vw->produced || !vx->mem || !vw->mem)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: convolution operands not ready");
    int32_t r = vx->rank, sp = r - 2;
    int64_t strides[3], dil[3], pl[3], pr[3], dy[ODN_MAX_RANK];
    size_t c;
    const int64_t *a = odn_attr_ints(n, "strides", &c), *d = odn_attr_ints(n, "dilations", &c);
    const int64_t *pads = odn_attr_ints(n, "pads", &c);
    bool valid = odn_attr_string_is(n, "auto_pad", "VALID", false);
    dy[0] = vx->dims[0];
    dy[1] = vw->dims[0];
    for (int32_t i = 0; i < sp; i++) {
        strides[i] = a ? a[i] : 1;
        dil[i] = d ? d[i] : 1;
        pl[i] = pads && !valid ? pads[i] : 0;
        pr[i] = pads && !valid ? pads[i + sp] : 0;
        int64_t ext = (vw->dims[2 + i] - 1) * dil[i] + 1, span = vx->dims[2 + i] + pl[i] + pr[i];
        if (span < ext) return odn_node_error(n, TSR_ERR_INVALID_MODEL, "kernel larger than the padded input");
        dy[2 + i] = (span - ext) / strides[i] + 1;
    }
    dnnl_memory_t w_mem, w8 = NULL, acc, sums = NULL;
    tsr_status *s = odn_plan_plain_mem(p, vw, n, &w_mem);
    if (s) return s;
    /* grouped: ONNX's M x C/g x k... weights are oneDNN's g x M/g x C/g x
     * k... in the same bytes */
    int64_t channels = vw->dims[0], groups = odn_attr_int(n, "group", 1);
    if (groups < 1 || channels % groups != 0 || vx->dims[1] != groups * vw->dims[1])
        return odn_node_error(n, TSR_ERR_INVALID_MODEL, "group %lld does not fit the channels", (long long)groups);
    int32_t wr = groups > 1 ? r + 1 : r;
    int64_t wdims[ODN_MAX_RANK + 1];
    wdims[0] = groups;
    memcpy(wdims + 1, vw->dims, sizeof(int64_t) * (size_t)r);
    wdims[1] = channels / groups;
    const int64_t *wd = groups > 1 ? wdims : vw->dims;
    dnnl_memory_desc_t w_md;
    dnnl_status_t st = odn_plain_md_typed(&w_md, wr, wd, dnnl_s8);
    if (st != dnnl_success) return odn_dnnl_error(n, "int8 layouts", st);

    qconv_prep *prep = odn_plan_alloc(p, sizeof *prep);
    int32_t *zw8 = odn_plan_alloc(p, sizeof(int32_t) * (size_t)channels);
    if (!prep || !zw8) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    memset(prep, 0, sizeof *prep);
    prep->node = n;
    prep->zw8 = zw8;
    prep->channels = channels;
    s = odn_q_input(p, n, 2, &prep->zx, &prep->zx_type);
    if (!s) s = odn_q_input(p, n, izw, &prep->zw, &prep->zw_type);
    if (!s) s = odn_q_s32_scalar(p, n, &prep->zx32);
    if (s) return s;
    if (prep->zw) {
        odn_value *vz = odn_plan_value(p, odn_host->node_input(n, izw));
        prep->zw_count = (size_t)odn_numel(vz->rank, vz->dims);
    }
    if (vw->elem_type == TSR_UINT8) {
        size_t count = (size_t)odn_numel(r, vw->dims);
        s = odn_plan_new_mem(p, &w_md, DNNL_MEMORY_ALLOCATE, n, &w8);
        if (s) return s;
        prep->shift = 128;
        if (vw->constant) odn_q_shift_u8(odn_q_handle(w_mem), odn_q_handle(w8), count);
        else prep->w_count = count;
    }
    const dnnl_memory_t prep_reads[] = {prep->zx, prep->zw, prep->zx32};
    s = odn_plan_add_loop_reading(p, prep_loop, prep, w_mem, w8, prep_reads, sizeof prep_reads / sizeof *prep_reads, n);
    if (!s)
        s = conv_step(p, n, vx, &w_md, w8 ? w8 : w_mem, vw->constant != NULL, r, dy, strides, dil, pl, pr, prep->zx32,
                      &acc);
    if (s) return s;
    if (prep->shift || prep->zw) {
        /* S: the window sums of x - zx, by one output channel of ones
         * (per group) */
        int64_t ones_dims[ODN_MAX_RANK + 1], sdims[ODN_MAX_RANK];
        memcpy(ones_dims, wd, sizeof(int64_t) * (size_t)wr);
        memcpy(sdims, dy, sizeof(int64_t) * (size_t)r);
        ones_dims[wr - r] = 1;
        sdims[1] = groups;
        dnnl_memory_desc_t ones_md;
        size_t count = (size_t)odn_numel(wr, ones_dims);
        int8_t *ones = odn_plan_alloc(p, count);
        if (!ones) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
        memset(ones, 1, count);
        dnnl_memory_t ones_mem;
        st = odn_plain_md_typed(&ones_md, wr, ones_dims, dnnl_s8);
        if (st != dnnl_success) return odn_dnnl_error(n, "int8 layouts", st);
        s = odn_plan_new_mem(p, &ones_md, ones, n, &ones_mem);
        if (!s) s = conv_step(p, n, vx, &ones_md, ones_mem, true, r, sdims, strides, dil, pl, pr, prep->zx32, &sums);
        if (s) return s;
    }

    qconv_post *post = odn_plan_alloc(p, sizeof *post);
    if (!post) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    memset(post, 0, sizeof *post);
    post->node = n;
    post->sums = sums;
    post->zw8 = sums ? zw8 : NULL;
    post->batch = dy[0];
    post->channels = channels;
    post->groups = groups;
    post->per_group = channels / groups;
    post->positions = odn_numel(sp, dy + 2);
    post->y_type = qlinear ? vy->elem_type : TSR_INT32;
    if (qlinear) {
        int32_t t;
        s = odn_q_input(p, n, 1, &post->sx, &post->scale_type);
        if (!s) s = odn_q_input(p, n, 4, &post->sw, &post->sw_type);
        if (!s) s = odn_q_input(p, n, 6, &post->sy, &t);
        if (!s) s = odn_q_input(p, n, 7, &post->zy, &t);
        if (!s) s = odn_q_input(p, n, 8, &post->bias, &t);
        if (!s && post->sw) {
            odn_value *vs = odn_plan_value(p, odn_host->node_input(n, 4));
            post->sw_count = (size_t)odn_numel(vs->rank, vs->dims);
        }
        if (s) return s;
    }
    s = odn_plan_define(p, vy, r, dy, NULL, n);
    if (!s && vy->md.data_type != odn_dnnl_type(post->y_type))
        s = odn_node_error(n, TSR_ERR_PROVIDER, "internal: output type");
    const dnnl_memory_t post_reads[] = {post->sums, post->sx, post->sw, post->sy, post->zy, post->bias};
    if (!s)
        s = odn_plan_add_loop_reading(p, post_loop, post, acc, vy->mem, post_reads,
                                      sizeof post_reads / sizeof *post_reads, n);
    return s;
}
