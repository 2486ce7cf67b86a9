/* A depthwise 1-D convolution (group = input channels = output channels)
 * as a C loop, where oneDNN 2.6 has only its im2col gemm:jit kernel: its
 * AVX2 depthwise kernel takes short windows only, and the k=31 depthwise
 * convolution of a conformer block (256 channels, 200 frames) took 3.8 ms
 * there against ~0.1 ms here. Each channel's row is a sum over the window
 * of shifted rows times one weight, vectorized along time. Nothing after it
 * is fused: the following nodes build as they would after any piece
 * value. */
#include <string.h>

#include "odn.h"

typedef struct dw_loop {
    int64_t n, c, in, out, k, stride, dil, pad;
    const float *w, *b; /* [C, K]; [C] or NULL */
} dw_loop;

static tsr_status *dw_run(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const dw_loop *l = ctx;
    void *px = NULL, *py = NULL;
    dnnl_memory_get_data_handle(src, &px);
    dnnl_memory_get_data_handle(dst, &py);
    if (!px || !py) return odn_host->status_new(TSR_ERR_PROVIDER, "onednn: depthwise convolution without buffers");
    const float *x = px;
    float *y = py;
    int64_t rows = l->n * l->c;
#pragma omp parallel for if (rows * l->out * l->k > 65536) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        int64_t c = r % l->c;
        const float *xr = x + r * l->in, *wr = l->w + c * l->k;
        float *yr = y + r * l->out, bias = l->b ? l->b[c] : 0.0f;
        for (int64_t t = 0; t < l->out; t++) yr[t] = bias;
        for (int64_t k = 0; k < l->k; k++) {
            /* outputs t whose tap k lands inside the row:
             * 0 <= t * stride + k * dil - pad < in */
            int64_t off = k * l->dil - l->pad, lo = 0, hi = l->out;
            if (off < 0) lo = (-off + l->stride - 1) / l->stride;
            if (l->in - off <= 0) continue;
            int64_t last = (l->in - 1 - off) / l->stride + 1;
            if (last < hi) hi = last;
            float wk = wr[k];
            if (l->stride == 1) {
                const float *xs = xr + off;
#pragma omp simd
                for (int64_t t = lo; t < hi; t++) yr[t] += wk * xs[t];
            } else {
                for (int64_t t = lo; t < hi; t++) yr[t] += wk * xr[t * l->stride + off];
            }
        }
    }
    return NULL;
}

bool odn_dwconv1d_wanted(odn_plan *p, const odn_value *x, const odn_value *w, const odn_value *b, int64_t group,
                         const dnnl_dims_t xd, const dnnl_dims_t wd, const dnnl_dims_t yd, const dnnl_dims_t strides,
                         const dnnl_dims_t dilation, const dnnl_dims_t pad_l, const dnnl_dims_t pad_r) {
    if (x->rank != 3 || w->rank != 3 || group < 2 || group != x->dims[1] || w->dims[0] != group || w->dims[1] != 1 ||
        !w->constant || w->constant->elem_type != TSR_FLOAT ||
        (b && (!b->constant || b->constant->elem_type != TSR_FLOAT)))
        return false;
    /* only where oneDNN's own choice is its im2col kernel */
    dnnl_memory_desc_t s, wm, d;
    dnnl_convolution_desc_t cd;
    dnnl_primitive_desc_t pd = NULL;
    bool gemm = false;
    if (dnnl_memory_desc_init_by_tag(&s, 4, xd, dnnl_f32, dnnl_format_tag_any) == dnnl_success &&
        dnnl_memory_desc_init_by_tag(&wm, 5, wd, dnnl_f32, dnnl_format_tag_any) == dnnl_success &&
        dnnl_memory_desc_init_by_tag(&d, 4, yd, dnnl_f32, dnnl_format_tag_any) == dnnl_success &&
        dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &s, &wm, NULL,
                                                   &d, strides, dilation, pad_l, pad_r) == dnnl_success &&
        dnnl_primitive_desc_create(&pd, &cd, NULL, p->engine, NULL) == dnnl_success)
        gemm = strstr(odn_impl_name(pd), "gemm") != NULL || odn_impl_is_ref(odn_impl_name(pd));
    if (pd) dnnl_primitive_desc_destroy(pd);
    return gemm;
}

tsr_status *odn_build_dwconv1d(odn_plan *p, const tsr_node *n, odn_value *x, const odn_value *w, const odn_value *b,
                               odn_value *y, const int64_t *out, int64_t stride, int64_t dil, int64_t pad) {
    dw_loop *l = odn_plan_alloc(p, sizeof *l);
    if (!l) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    *l = (dw_loop){.n = x->dims[0],
                   .c = x->dims[1],
                   .in = x->dims[2],
                   .out = out[2],
                   .k = w->dims[2],
                   .stride = stride,
                   .dil = dil,
                   .pad = pad,
                   .w = w->constant->data,
                   .b = b ? b->constant->data : NULL};
    dnnl_memory_t xm;
    tsr_status *s = odn_plan_plain_mem(p, x, n, &xm);
    if (!s) s = odn_plan_define(p, y, 3, out, NULL, n);
    if (!s) s = odn_plan_add_loop(p, dw_run, l, xm, y->mem, n);
    return s;
}
