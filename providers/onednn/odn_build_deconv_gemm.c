/* 2-D ConvTranspose as one matmul and a gather: oneDNN 2.6's deconvolution
 * kernel ran torch's ConvTranspose2d(k=3, s=2, p=1, output_padding=1) on 64
 * channels, 64x64 -> 128x128, at a few GFLOP/s (74 ms against ONNX
 * Runtime's 21). Here every input pixel's contribution to its k_h x k_w
 * window is one row of a matmul,
 *     cols[(n, h, w), (i, j, m)] = sum_c x[n, h, w, c] * W[c, m, i, j],
 * and each output pixel then sums the rows that reach it, plus the bias:
 *     y[n, oh, ow, m] = b[m] + sum over taps (i, j) with
 *         oh + pad_h - i * dil_h = h * s_h, ow + pad_w - j * dil_w = w * s_w
 *     of cols[(n, h, w), (i, j, m)]
 * (a gather, so output rows are shared among threads without races). Any
 * padding the pads, output_padding, output_shape or auto_pad give
 * (odn_deconv_pads) and any dilation; no groups. A 1-D one is the same
 * with height 1. The output is channels-last inside a piece. */
#include <string.h>

#include "odn_quant.h"

typedef struct deconv_gather {
    int64_t N, H, W, M, kh, kw, OH, OW;
    int64_t sh, sw, dh, dw, ph, pw; /* strides, dilations, begin pads */
    const float *bias;              /* M values, or NULL */
} deconv_gather;

static tsr_status *run_gather(const void *vctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const deconv_gather *g = vctx;
    const float *cols = odn_q_handle(src);
    float *y = odn_q_handle(dst);
    if (!cols || !y) return odn_host->status_new(TSR_ERR_PROVIDER, "onednn: ConvTranspose memory");
    int64_t M = g->M, KM = g->kh * g->kw * M, rows = g->N * g->OH;
#pragma omp parallel for if (rows * g->OW * M > 65536) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        int64_t n = r / g->OH, oh = r % g->OH;
        for (int64_t ow = 0; ow < g->OW; ow++) {
            float *acc = y + (r * g->OW + ow) * M;
            if (g->bias) memcpy(acc, g->bias, sizeof(float) * (size_t)M);
            else memset(acc, 0, sizeof(float) * (size_t)M);
            for (int64_t i = 0; i < g->kh; i++) {
                int64_t t = oh + g->ph - i * g->dh;
                if (t < 0 || t % g->sh) continue;
                int64_t ih = t / g->sh;
                if (ih >= g->H) continue;
                for (int64_t j = 0; j < g->kw; j++) {
                    int64_t u = ow + g->pw - j * g->dw;
                    if (u < 0 || u % g->sw) continue;
                    int64_t iw = u / g->sw;
                    if (iw >= g->W) continue;
                    const float *c = cols + ((n * g->H + ih) * g->W + iw) * KM + (i * g->kw + j) * M;
#pragma omp simd
                    for (int64_t m = 0; m < M; m++) acc[m] += c[m];
                }
            }
        }
    }
    return NULL;
}

tsr_status *odn_build_deconv_gemm(odn_plan *p, size_t index, bool *handled) {
    *handled = false;
    const tsr_node *n = p->nodes[index];
    odn_value *x = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *w = odn_plan_value(p, odn_host->node_input(n, 1));
    odn_value *b = odn_host->node_input_count(n) > 2 ? odn_plan_value(p, odn_host->node_input(n, 2)) : NULL;
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!x || !y || !w || !x->produced || !x->mem || (x->rank != 4 && x->rank != 3) || w->rank != x->rank ||
        !w->constant || w->constant->elem_type != TSR_FLOAT || odn_attr_int(n, "group", 1) != 1 ||
        x->dims[1] != w->dims[0] ||
        (b && (!b->constant || b->constant->elem_type != TSR_FLOAT || b->rank != 1 || b->dims[0] != w->dims[1])))
        return NULL;
    deconv_gather *g = odn_plan_alloc(p, sizeof *g);
    if (!g) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    memset(g, 0, sizeof *g);
    /* a 1-D one (ConvTranspose1d: vocoders, audio decoders) as 2-D with
     * height 1: the same bytes */
    int32_t sp = x->rank - 2, h0 = 2 - sp;
    int64_t N = x->dims[0], C = x->dims[1], M = w->dims[1];
    int64_t in[2] = {1, x->dims[x->rank - 1]}, ker[2] = {1, w->dims[w->rank - 1]};
    if (sp == 2) in[0] = x->dims[2], ker[0] = w->dims[2];
    size_t cs = 0, cd = 0, co = 0;
    const int64_t *sa = odn_attr_ints(n, "strides", &cs), *da = odn_attr_ints(n, "dilations", &cd);
    const int64_t *oa = odn_attr_ints(n, "output_padding", &co);
    int64_t st[2] = {1, 1}, dl[2] = {1, 1}, pb[2] = {0, 0}, out[2] = {1, 1};
    for (int32_t i = h0; i < 2; i++) {
        int32_t a = i - h0; /* the ONNX spatial axis */
        int64_t e0, op = co == (size_t)sp ? oa[a] : 0;
        st[i] = cs == (size_t)sp ? sa[a] : 1;
        dl[i] = cd == (size_t)sp ? da[a] : 1;
        if (st[i] < 1 || dl[i] < 1 || op < 0 || st[i] > (INT64_C(1) << 31) || dl[i] > (INT64_C(1) << 31) ||
            in[i] > (INT64_C(1) << 31) ||
            !odn_deconv_pads(n, sp, a, in[i], st[i], dl[i], ker[i], op, &pb[i], &e0, &out[i]) || out[i] < 1)
            return NULL; /* the general deconvolution says what is wrong */
    }
    int64_t kh = ker[0], kw = ker[1];
    *g = (deconv_gather){N,     in[0],  in[1],  M,     kh,
                         kw,    out[0], out[1], st[0], st[1],
                         dl[0], dl[1],  pb[0],  pb[1], b ? b->constant->data : NULL};
    int64_t rows = N * g->H * g->W, KM = kh * kw * M;
    if (odn_numel(2, (int64_t[]){rows, KM}) < 0) return NULL;
    /* weights [C, kh*kw*M]: wm[c][(i*kw + j)*M + m] = W[c][m][i][j] */
    float *wm = odn_plan_alloc(p, sizeof(float) * (size_t)(C * KM));
    if (!wm) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    const float *wsrc = w->constant->data;
    for (int64_t c = 0; c < C; c++)
        for (int64_t m = 0; m < M; m++)
            for (int64_t i = 0; i < kh; i++)
                for (int64_t j = 0; j < kw; j++)
                    wm[c * KM + (i * kw + j) * M + m] = wsrc[((c * M + m) * kh + i) * kw + j];
    /* ONNX-rank dims and the channels-last layout (nhwc, or nwc for 1-D) */
    dnnl_dims_t xd = {N, C, g->H, g->W}, yd = {N, M, out[0], out[1]}, sd = {rows, C}, wd = {C, KM}, cd2 = {rows, KM};
    if (sp == 1) xd[2] = g->W, yd[2] = out[1];
    dnnl_format_tag_t last = sp == 2 ? dnnl_acdb : dnnl_acb;
    dnnl_memory_desc_t x_nhwc, y_nhwc, src_md, w_md, cols_md;
    dnnl_matmul_desc_t md;
    dnnl_primitive_desc_t pd = NULL;
    if (dnnl_memory_desc_init_by_tag(&x_nhwc, x->rank, xd, dnnl_f32, last) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&y_nhwc, x->rank, yd, dnnl_f32, last) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&src_md, 2, sd, dnnl_f32, dnnl_ab) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&w_md, 2, wd, dnnl_f32, dnnl_ab) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&cols_md, 2, cd2, dnnl_f32, dnnl_ab) != dnnl_success ||
        dnnl_matmul_desc_init(&md, &src_md, &w_md, NULL, &cols_md) != dnnl_success ||
        odn_pd_create(p, &md, NULL, &pd) != dnnl_success)
        return NULL; /* no fast matmul for it: the general deconvolution */
    *handled = true;
    /* a piece output is plain: computed channels-last into a temporary */
    bool via_temp = y->output_index >= 0;
    odn_value temp = {.info = y->info, .input_index = -1, .output_index = -1};
    dnnl_memory_t src, x_view, w_mem, cols;
    tsr_status *s = odn_plan_mem_as(p, x, &x_nhwc, n, &src);
    if (!s) s = odn_plan_view(p, src, &src_md, n, &x_view);
    if (!s) s = odn_plan_new_mem(p, &w_md, wm, n, &w_mem);
    if (!s) s = odn_plan_arena_mem(p, &cols_md, n, &cols);
    if (!s) s = odn_plan_define(p, y, x->rank, yd, via_temp ? NULL : &y_nhwc, n);
    if (!s && via_temp) s = odn_plan_define(p, &temp, x->rank, yd, &y_nhwc, n);
    if (!s) {
        dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, x_view}, {DNNL_ARG_WEIGHTS, w_mem}, {DNNL_ARG_DST, cols}};
        s = odn_plan_add_primitive(p, pd, n, args, 3);
    }
    dnnl_primitive_desc_destroy(pd);
    if (!s) s = odn_plan_add_loop(p, run_gather, g, cols, via_temp ? temp.mem : y->mem, n);
    if (!s && via_temp) s = odn_plan_add_reorder(p, temp.mem, &temp.md, y->mem, &y->md, n);
    return s;
}
