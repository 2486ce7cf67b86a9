/* A 2-D convolution with at most four output channels as a C loop: the
 * output layers of image-to-image models (a style-transfer or
 * super-resolution net's RGB output, a depth or saliency head's one
 * channel, a 4-class segmentation head). oneDNN 2.6's AVX2 kernels block
 * output channels by 8, so such a layer runs at a fraction of the FMA rate
 * (a 32-to-3 9x9 convolution at 256x256: 100 ms, 10 GFLOP/s; a 64-to-1
 * 3x3 one: 2.5 GFLOP/s). Here the input stays in oneDNN's 8-channel
 * blocked layout (nChw8c, what the producing convolution writes) and the
 * 8 channels of a block are the vector lanes: each output pixel and
 * channel accumulates a vector of partial sums over the window, summed
 * across lanes once at the end. Several neighbouring output pixels share
 * each weight load (fewer pixels the more output channels, so the
 * accumulators fit the 16 registers). Windows reaching into the padding
 * go pixel by pixel with the taps clipped. Nothing after it is fused: the
 * following nodes build as after any value.
 *
 * The same loop runs a ConvTranspose whose kernel equals its stride and
 * whose kernel taps times output channels are at most 4 (a DB text
 * detector's or segmentation head's last 2x upsampling to one channel):
 * that is a 1x1 convolution to kh*kw*M channels whose outputs land as
 * kh x kw tiles; as a batched matmul with 2 columns it ran at 2.5 GFLOP/s
 * (odn_build_deconv_tiles.c). The input is read in nChw8c or, as a
 * channels-last producer left it, NHWC: both hold 8 channels of a pixel
 * together, only the strides differ. */
#include <string.h>

#include "odn.h"
#include "odn_sgemm.h"

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define SOC_X86 1
#define SOC_AVX2 __attribute__((target("avx2,fma")))
#else
#define SOC_X86 0
#endif

enum { SOC_MAX_OC = 4 };

typedef struct soc_loop {
    int64_t n, cb, h, w, oh, ow, kh, kw; /* cb: input channel blocks of 8 */
    int64_t sh, sw, dh, dw, pt, pl;      /* strides, dilations (taps apart), pads */
    int64_t oc;
    /* input strides in floats: a pixel, a channel block, a row, an image
     * (nChw8c: 8, h*w*8, w*8, cb*h*w*8; NHWC: cb*8, 8, w*cb*8, h*w*cb*8) */
    int64_t xs_pix, xs_cb, xs_row, xs_img;
    /* where output channel o of grid pixel (b, oy, ox) goes: b * ys_img +
     * oy * ys_row + ox * ys_pix + y_off[o] */
    int64_t ys_img, ys_row, ys_pix, y_off[SOC_MAX_OC];
    const float *wp; /* [oc][cb][kh][kw][8] */
    float bias[SOC_MAX_OC];
} soc_loop;

#if SOC_X86
SOC_AVX2 static inline float hsum8(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* P pixels from output column ox (every tap inside the row) for O output
 * channels, taps of rows kh0..kh1 of the window. */
#define SOC_BLOCK(O, P)                                                                                              \
    SOC_AVX2 static void block_##O(const soc_loop *l, const float *img, int64_t oy, int64_t ox, int64_t kh0,         \
                                   int64_t kh1, float *out) {                                                        \
        __m256 acc[P][O];                                                                                            \
        for (int p = 0; p < P; p++)                                                                                  \
            for (int o = 0; o < O; o++) acc[p][o] = _mm256_setzero_ps();                                             \
        const int64_t wo = l->cb * l->kh * l->kw * 8, step = l->sw * l->xs_pix;                                      \
        for (int64_t c = 0; c < l->cb; c++) {                                                                        \
            for (int64_t ky = kh0; ky < kh1; ky++) {                                                                 \
                const float *row = img + c * l->xs_cb + (oy * l->sh - l->pt + ky * l->dh) * l->xs_row;               \
                const float *wk = l->wp + ((c * l->kh + ky) * l->kw) * 8;                                            \
                for (int64_t kx = 0; kx < l->kw; kx++) {                                                             \
                    const float *px = row + (ox * l->sw - l->pl + kx * l->dw) * l->xs_pix;                           \
                    __m256 wv[O];                                                                                    \
                    for (int o = 0; o < O; o++) wv[o] = _mm256_loadu_ps(wk + o * wo + kx * 8);                       \
                    for (int p = 0; p < P; p++) {                                                                    \
                        __m256 xv = _mm256_loadu_ps(px + p * step);                                                  \
                        for (int o = 0; o < O; o++) acc[p][o] = _mm256_fmadd_ps(xv, wv[o], acc[p][o]);               \
                    }                                                                                                \
                }                                                                                                    \
            }                                                                                                        \
        }                                                                                                            \
        for (int o = 0; o < O; o++)                                                                                  \
            for (int p = 0; p < P; p++) out[l->y_off[o] + p * l->ys_pix] = hsum8(acc[p][o]) + l->bias[o];           \
    }
/* P * O accumulators, P inputs and O weights within 16 registers */
SOC_BLOCK(1, 12)
SOC_BLOCK(2, 5)
SOC_BLOCK(3, 4)
SOC_BLOCK(4, 3)
static const int block_pixels[SOC_MAX_OC + 1] = {0, 12, 5, 4, 3};

/* One pixel, taps clipped to the input (kh0..kh1 rows, kw0..kw1 columns). */
SOC_AVX2 static void pixel(const soc_loop *l, const float *img, int64_t oy, int64_t ox, int64_t kh0, int64_t kh1,
                           float *out) {
    int64_t ix0 = ox * l->sw - l->pl, kw0 = 0, kw1 = l->kw;
    while (kw0 < kw1 && ix0 + kw0 * l->dw < 0) kw0++;
    while (kw1 > kw0 && ix0 + (kw1 - 1) * l->dw >= l->w) kw1--;
    __m256 acc[SOC_MAX_OC];
    for (int64_t o = 0; o < l->oc; o++) acc[o] = _mm256_setzero_ps();
    const int64_t wo = l->cb * l->kh * l->kw * 8;
    for (int64_t c = 0; c < l->cb; c++)
        for (int64_t ky = kh0; ky < kh1; ky++) {
            const float *row = img + c * l->xs_cb + (oy * l->sh - l->pt + ky * l->dh) * l->xs_row;
            const float *wk = l->wp + ((c * l->kh + ky) * l->kw) * 8;
            for (int64_t kx = kw0; kx < kw1; kx++) {
                __m256 xv = _mm256_loadu_ps(row + (ix0 + kx * l->dw) * l->xs_pix);
                for (int64_t o = 0; o < l->oc; o++)
                    acc[o] = _mm256_fmadd_ps(xv, _mm256_loadu_ps(wk + o * wo + kx * 8), acc[o]);
            }
        }
    for (int64_t o = 0; o < l->oc; o++) out[l->y_off[o]] = hsum8(acc[o]) + l->bias[o];
}

SOC_AVX2 static void out_row(const soc_loop *l, const float *img, int64_t oy, float *out) {
    int64_t iy0 = oy * l->sh - l->pt, kh0 = 0, kh1 = l->kh;
    while (kh0 < kh1 && iy0 + kh0 * l->dh < 0) kh0++;
    while (kh1 > kh0 && iy0 + (kh1 - 1) * l->dh >= l->h) kh1--;
    /* columns whose window lies inside the row: ox * sw - pl >= 0 and
     * ox * sw - pl + (kw - 1) * dw <= w - 1 */
    int64_t lo = (l->pl + l->sw - 1) / l->sw, last = l->w - 1 - (l->kw - 1) * l->dw + l->pl;
    int64_t hi = last < 0 ? 0 : last / l->sw + 1;
    if (hi > l->ow) hi = l->ow;
    if (lo > hi) lo = hi;
    int64_t ox = 0, bp = block_pixels[l->oc];
    for (; ox < lo; ox++) pixel(l, img, oy, ox, kh0, kh1, out + ox * l->ys_pix);
    for (; ox + bp <= hi; ox += bp) {
        float *o = out + ox * l->ys_pix;
        switch (l->oc) {
        case 1: block_1(l, img, oy, ox, kh0, kh1, o); break;
        case 2: block_2(l, img, oy, ox, kh0, kh1, o); break;
        case 3: block_3(l, img, oy, ox, kh0, kh1, o); break;
        default: block_4(l, img, oy, ox, kh0, kh1, o); break;
        }
    }
    for (; ox < l->ow; ox++) pixel(l, img, oy, ox, kh0, kh1, out + ox * l->ys_pix);
}

static tsr_status *soc_run(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const soc_loop *l = ctx;
    void *px = NULL, *py = NULL;
    dnnl_memory_get_data_handle(src, &px);
    dnnl_memory_get_data_handle(dst, &py);
    if (!px || !py) return odn_host->status_new(TSR_ERR_PROVIDER, "onednn: convolution without buffers");
    const float *x = px;
    float *y = py;
    int64_t rows = l->n * l->oh;
#pragma omp parallel for schedule(dynamic, 4)
    for (int64_t r = 0; r < rows; r++) {
        int64_t b = r / l->oh, oy = r % l->oh;
        out_row(l, x + b * l->xs_img, oy, y + b * l->ys_img + oy * l->ys_row);
    }
    return NULL;
}

/* Memory of x (4-D, channels a multiple of 8) as the loop reads it: NHWC
 * when x already lies so, else nChw8c; the input strides set in l. */
static tsr_status *input_mem(odn_plan *p, const tsr_node *n, odn_value *x, soc_loop *l, dnnl_memory_t *xm) {
    int64_t c = x->dims[1], h = x->dims[2], w = x->dims[3];
    dnnl_dims_t xd = {x->dims[0], c, h, w};
    dnnl_memory_desc_t nhwc, blocked;
    if (dnnl_memory_desc_init_by_tag(&nhwc, 4, xd, dnnl_f32, dnnl_acdb) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&blocked, 4, xd, dnnl_f32, dnnl_nChw8c) != dnnl_success)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: convolution source layouts");
    l->cb = c / 8;
    l->h = h;
    l->w = w;
    l->xs_img = c * h * w;
    if (dnnl_memory_desc_equal(&x->md, &nhwc)) {
        l->xs_pix = c, l->xs_cb = 8, l->xs_row = w * c;
        return odn_plan_mem_as(p, x, &nhwc, n, xm);
    }
    l->xs_pix = 8, l->xs_cb = h * w * 8, l->xs_row = w * 8;
    return odn_plan_mem_as(p, x, &blocked, n, xm);
}

/* The 8-channel input rows of a float weight [M, C, kh, kw] (ONNX Conv) or
 * [C, M, kh, kw] (ConvTranspose, `transposed`), as the virtual
 * convolution's output channel o = ((i * kw + j) * M + m) when `tiles`
 * (its window then 1x1), else o = m with a kh x kw window. */
static float *pack_weights(odn_plan *p, const float *src, int64_t m_count, int64_t c_count, int64_t kh, int64_t kw,
                           bool tiles) {
    int64_t cb = c_count / 8, taps = tiles ? 1 : kh * kw;
    float *wp = odn_plan_alloc(p, (size_t)(m_count * c_count * kh * kw) * sizeof(float));
    if (!wp) return NULL;
    for (int64_t m = 0; m < m_count; m++)
        for (int64_t c = 0; c < c_count; c++)
            for (int64_t t = 0; t < kh * kw; t++) {
                float v = tiles ? src[(c * m_count + m) * kh * kw + t] : src[(m * c_count + c) * kh * kw + t];
                int64_t o = tiles ? t * m_count + m : m, tap = tiles ? 0 : t;
                wp[((o * cb + c / 8) * taps + tap) * 8 + c % 8] = v;
            }
    return wp;
}
/* The loop's step: x read as it lies (input_mem), y defined plain. */
static tsr_status *add_loop(odn_plan *p, const tsr_node *n, odn_value *x, odn_value *y, const int64_t *out,
                            soc_loop *l) {
    dnnl_memory_t xm;
    tsr_status *s = input_mem(p, n, x, l, &xm);
    if (!s) s = odn_plan_define(p, y, 4, out, NULL, n);
    if (!s) s = odn_plan_add_loop(p, soc_run, l, xm, y->mem, n);
    return s;
}
#endif

bool odn_conv_small_oc_wanted(const odn_value *x, const odn_value *w, const odn_value *b, int64_t group,
                              const int64_t *out) {
#if SOC_X86
    if (x->rank != 4 || w->rank != 4 || group != 1 || !odn_sgemm_supported()) return false;
    if (w->dims[0] < 1 || w->dims[0] > SOC_MAX_OC || x->dims[1] % 8 != 0 || x->dims[1] < 8) return false;
    /* a 1x1 one reads each input value once: bound by memory, where
     * oneDNN's kernel does as well without reordering a plain input */
    if (w->dims[2] * w->dims[3] < 2) return false;
    if (!w->constant || w->constant->elem_type != TSR_FLOAT || (b && (!b->constant || b->constant->elem_type != TSR_FLOAT)))
        return false;
    for (int d = 0; d < 4; d++)
        if (x->dims[d] < 1 || out[d] < 1) return false;
    return true;
#else
    (void)x, (void)w, (void)b, (void)group, (void)out;
    return false;
#endif
}

tsr_status *odn_build_conv_small_oc(odn_plan *p, const tsr_node *n, odn_value *x, const odn_value *w,
                                    const odn_value *b, odn_value *y, const int64_t *out, const int64_t *strides,
                                    const int64_t *dilation, const int64_t *pad_l) {
#if SOC_X86
    soc_loop *l = odn_plan_alloc(p, sizeof *l);
    int64_t oc = w->dims[0], kh = w->dims[2], kw = w->dims[3];
    float *wp = l ? pack_weights(p, w->constant->data, oc, w->dims[1], kh, kw, false) : NULL;
    if (!wp) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    *l = (soc_loop){.n = x->dims[0], .oh = out[2], .ow = out[3], .kh = kh, .kw = kw, .sh = strides[0],
                    .sw = strides[1], .dh = dilation[0] + 1, .dw = dilation[1] + 1, .pt = pad_l[0], .pl = pad_l[1],
                    .oc = oc, .ys_img = oc * out[2] * out[3], .ys_row = out[3], .ys_pix = 1, .wp = wp};
    for (int64_t o = 0; o < oc; o++) {
        l->y_off[o] = o * out[2] * out[3];
        l->bias[o] = b ? ((const float *)b->constant->data)[o] : 0.0f;
    }
    return add_loop(p, n, x, y, out, l);
#else
    (void)p, (void)x, (void)w, (void)b, (void)y, (void)out, (void)strides, (void)dilation, (void)pad_l;
    return odn_node_error(n, TSR_ERR_PROVIDER, "internal: small-channel convolution without AVX2");
#endif
}

tsr_status *odn_build_deconv_tiles_small(odn_plan *p, const tsr_node *n, odn_value *x, const odn_value *w,
                                         const odn_value *b, odn_value *y, int64_t kh, int64_t kw, bool *handled) {
    *handled = false;
#if SOC_X86
    int64_t c = x->dims[1], m = w->dims[1], h = x->dims[2], wd = x->dims[3];
    if (x->rank != 4 || c % 8 != 0 || c < 8 || kh * kw * m > SOC_MAX_OC || !odn_sgemm_supported() ||
        (b && b->constant->elem_type != TSR_FLOAT))
        return NULL;
    soc_loop *l = odn_plan_alloc(p, sizeof *l);
    float *wp = l ? pack_weights(p, w->constant->data, m, c, kh, kw, true) : NULL;
    if (!wp) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    int64_t out[4] = {x->dims[0], m, h * kh, wd * kw}, plane = out[2] * out[3];
    /* the grid is the input's: pixel (oy, ox) writes its tile at rows
     * oy * kh + i, columns ox * kw + j of each of the M planes */
    *l = (soc_loop){.n = x->dims[0], .oh = h, .ow = wd, .kh = 1, .kw = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
                    .oc = kh * kw * m, .ys_img = m * plane, .ys_row = kh * out[3], .ys_pix = kw, .wp = wp};
    for (int64_t i = 0; i < kh; i++)
        for (int64_t j = 0; j < kw; j++)
            for (int64_t k = 0; k < m; k++) {
                int64_t o = (i * kw + j) * m + k;
                l->y_off[o] = k * plane + i * out[3] + j;
                l->bias[o] = b ? ((const float *)b->constant->data)[k] : 0.0f;
            }
    *handled = true;
    return add_loop(p, n, x, y, out, l);
#else
    (void)p, (void)n, (void)x, (void)w, (void)b, (void)y, (void)kh, (void)kw;
    return NULL;
#endif
}
