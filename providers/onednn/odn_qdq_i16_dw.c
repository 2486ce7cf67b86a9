/* Depthwise QDQ convolutions (group = input channels = output channels)
 * on the integer path of CPUs without VNNI (odn_qdq_i16.c): a MobileNet's
 * depthwise layers ran in float between a DequantizeLinear loop, reorders
 * and a QuantizeLinear loop while the pointwise layers around them were
 * integer, so every block converted its activations four times.
 *
 * Here the uint8/int8 activations stay NHWC: per output pixel, 8 channels
 * at a time, the sum over the window of (x - zx) * w in float. That is
 * exact: |x - zx| <= 255 and |w| <= 128 make each product an integer below
 * 2^15, and a window of at most 512 taps keeps every partial sum below
 * 2^24. Taps in the padding add nothing (x there is zx). The sums are
 * requantized as the other layers' (sat(rint(acc * sx * sw[c] / sy +
 * b[c] / sy) + zy), Relu and Clip as clamps). Rows of output pixels are
 * spread over the threads. */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "odn_quant.h"

enum { DW_MAX_TAPS = 512 };

typedef struct dw_step {
    const tsr_node *node;
    int64_t n, c, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
    bool x_unsigned, y_unsigned;
    float zx, zy, lo, hi;
    const float *wt;   /* [kh * kw][c]: the weights, tap-major */
    const float *mult; /* per channel: sx * sw[c] / sy */
    const float *add;  /* per channel: b[c] / sy */
} dw_step;

/* 8 activations from p as floats less zx. */
__attribute__((target("avx2,fma"))) static inline __m256 load8(const dw_step *s, const uint8_t *p, __m256 zx) {
    __m128i b = _mm_loadl_epi64((const __m128i *)p);
    __m256i i = s->x_unsigned ? _mm256_cvtepu8_epi32(b) : _mm256_cvtepi8_epi32(b);
    return _mm256_sub_ps(_mm256_cvtepi32_ps(i), zx);
}

__attribute__((target("avx2,fma"))) static void dw_row(const dw_step *s, const uint8_t *x, int64_t b, int64_t oy,
                                                      uint8_t *y) {
    const __m256 zx = _mm256_set1_ps(s->zx), zy = _mm256_set1_ps(s->zy), lo = _mm256_set1_ps(s->lo),
                 hi = _mm256_set1_ps(s->hi);
    int64_t ky0 = 0, ky1 = s->kh, iy0 = oy * s->sh - s->ph;
    while (ky0 < ky1 && iy0 + ky0 * s->dh < 0) ky0++;
    while (ky1 > ky0 && iy0 + (ky1 - 1) * s->dh >= s->h) ky1--;
    for (int64_t ox = 0; ox < s->ow; ox++) {
        int64_t ix0 = ox * s->sw - s->pw, kx0 = 0, kx1 = s->kw;
        while (kx0 < kx1 && ix0 + kx0 * s->dw < 0) kx0++;
        while (kx1 > kx0 && ix0 + (kx1 - 1) * s->dw >= s->w) kx1--;
        uint8_t *out = y + ((b * s->oh + oy) * s->ow + ox) * s->c;
        int64_t c = 0;
        for (; c < s->c; c += 8) {
            int64_t lanes = s->c - c < 8 ? s->c - c : 8;
            __m256 acc = _mm256_setzero_ps();
            for (int64_t ky = ky0; ky < ky1; ky++) {
                const uint8_t *row = x + ((b * s->h + iy0 + ky * s->dh) * s->w) * s->c + c;
                for (int64_t kx = kx0; kx < kx1; kx++) {
                    const uint8_t *px = row + (ix0 + kx * s->dw) * s->c;
                    const float *wv = s->wt + (ky * s->kw + kx) * s->c + c;
                    if (lanes == 8) {
                        acc = _mm256_fmadd_ps(load8(s, px, zx), _mm256_loadu_ps(wv), acc);
                    } else { /* the last channels: through a zeroed copy */
                        uint8_t tb[8] = {0};
                        float tw[8] = {0};
                        memcpy(tb, px, (size_t)lanes);
                        memcpy(tw, wv, sizeof(float) * (size_t)lanes);
                        acc = _mm256_fmadd_ps(load8(s, tb, zx), _mm256_loadu_ps(tw), acc);
                    }
                }
            }
            float m[8] = {0}, a[8] = {0};
            memcpy(m, s->mult + c, sizeof(float) * (size_t)lanes);
            memcpy(a, s->add + c, sizeof(float) * (size_t)lanes);
            __m256 v = _mm256_fmadd_ps(acc, _mm256_loadu_ps(m), _mm256_loadu_ps(a));
            v = _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            v = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(v, zy), lo), hi);
            __m256i q = _mm256_cvtps_epi32(v);
            __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
            __m128i b8 = s->y_unsigned ? _mm_packus_epi16(w16, w16) : _mm_packs_epi16(w16, w16);
            uint8_t o8[16];
            _mm_storeu_si128((__m128i *)o8, b8);
            memcpy(out + c, o8, (size_t)lanes);
        }
    }
}

static tsr_status *dw_run(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const dw_step *s = ctx;
    const uint8_t *x = odn_q_handle(src);
    uint8_t *y = odn_q_handle(dst);
    if (!x || !y) return odn_node_error(s->node, TSR_ERR_PROVIDER, "internal: depthwise layer without buffers");
    int64_t rows = s->n * s->oh;
#pragma omp parallel for schedule(dynamic, 2) if (rows * s->ow * s->c * s->kh * s->kw > 200000)
    for (int64_t r = 0; r < rows; r++) dw_row(s, x, r / s->oh, r % s->oh, y);
    return NULL;
}

bool odn_i16_dw_fits(int32_t rank, int64_t group, int64_t in_channels, int64_t out_channels, int64_t taps) {
    return rank == 4 && group > 1 && group == in_channels && group == out_channels && taps <= DW_MAX_TAPS;
}

tsr_status *odn_i16_dwconv(odn_plan *p, const odn_i16_layer *l, bool *handled) {
    const tsr_node *n = l->node;
    odn_value *vx = l->x, *vy = l->y;
    const tsr_tensor *wt = l->w;
    *handled = false;
    if (l->out != ODN_I16_Q8 || vx->rank != 4 || wt->rank != 4 || l->zw || !wt->data ||
        !odn_i16_dw_fits(4, odn_attr_int(n, "group", 1), vx->dims[1], wt->dims[0], wt->dims[2] * wt->dims[3]) ||
        wt->dims[1] != 1 || (wt->elem_type != TSR_INT8 && wt->elem_type != TSR_UINT8))
        return NULL;
    dw_step *s = odn_plan_alloc(p, sizeof *s);
    if (!s) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    memset(s, 0, sizeof *s);
    size_t cnt;
    const int64_t *st = odn_attr_ints(n, "strides", &cnt), *di = odn_attr_ints(n, "dilations", &cnt);
    const int64_t *pads = odn_attr_ints(n, "pads", &cnt);
    bool valid = odn_attr_string_is(n, "auto_pad", "VALID", false);
    s->node = n;
    s->n = vx->dims[0], s->c = vx->dims[1], s->h = vx->dims[2], s->w = vx->dims[3];
    s->kh = wt->dims[2], s->kw = wt->dims[3];
    s->sh = st ? st[0] : 1, s->sw = st ? st[1] : 1;
    s->dh = di ? di[0] : 1, s->dw = di ? di[1] : 1;
    s->ph = pads && !valid ? pads[0] : 0, s->pw = pads && !valid ? pads[1] : 0;
    int64_t pb = pads && !valid ? pads[2] : 0, pr = pads && !valid ? pads[3] : 0;
    if (s->sh < 1 || s->sw < 1 || s->dh < 1 || s->dw < 1) return NULL;
    int64_t ext_h = (s->kh - 1) * s->dh + 1, ext_w = (s->kw - 1) * s->dw + 1;
    if (s->h + s->ph + pb < ext_h || s->w + s->pw + pr < ext_w)
        return odn_node_error(n, TSR_ERR_INVALID_MODEL, "kernel larger than the padded input");
    s->oh = (s->h + s->ph + pb - ext_h) / s->sh + 1;
    s->ow = (s->w + s->pw + pr - ext_w) / s->sw + 1;
    s->x_unsigned = vx->elem_type == TSR_UINT8;
    s->y_unsigned = l->y_type == TSR_UINT8;
    s->zx = (float)l->zx;
    s->zy = (float)l->zy;
    /* the same clamps as the other integer layers (odn_qdq_i16.c) */
    s->lo = l->relu ? (float)l->zy : s->y_unsigned ? 0.0f : -128.0f;
    s->hi = s->y_unsigned ? 255.0f : 127.0f;
    if (l->clip) {
        double qlo = isfinite(l->clip_lo) ? nearbyint((double)l->clip_lo / l->sy) + l->zy : -1e9;
        double qhi = isfinite(l->clip_hi) ? nearbyint((double)l->clip_hi / l->sy) + l->zy : 1e9;
        if (qlo > s->lo) s->lo = qlo > s->hi ? s->hi : (float)qlo;
        if (qhi < s->hi) s->hi = qhi < s->lo ? s->lo : (float)qhi;
    }
    int64_t taps = s->kh * s->kw;
    float *w = odn_plan_alloc(p, sizeof(float) * (size_t)(taps * s->c));
    float *mult = odn_plan_alloc(p, sizeof(float) * (size_t)s->c), *add = odn_plan_alloc(p, sizeof(float) * (size_t)s->c);
    if (!w || !mult || !add) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    bool u8w = wt->elem_type == TSR_UINT8;
    for (int64_t c = 0; c < s->c; c++) {
        for (int64_t t = 0; t < taps; t++) {
            int64_t i = c * taps + t;
            w[t * s->c + c] = u8w ? (float)((const uint8_t *)wt->data)[i] : (float)((const int8_t *)wt->data)[i];
        }
        double sw = l->w_scale[l->w_scale_count == 1 ? 0 : c];
        mult[c] = (float)((double)l->sx * sw / l->sy);
        add[c] = l->bias ? (float)((double)l->bias[c] / l->sy) : 0.0f;
    }
    s->wt = w, s->mult = mult, s->add = add;
    int64_t dy[4] = {vx->dims[0], s->c, s->oh, s->ow};
    dnnl_memory_desc_t xmd, ymd;
    dnnl_dims_t xd = {vx->dims[0], vx->dims[1], vx->dims[2], vx->dims[3]}, yd = {dy[0], dy[1], dy[2], dy[3]};
    if (dnnl_memory_desc_init_by_tag(&xmd, 4, xd, odn_dnnl_type(vx->elem_type), dnnl_nhwc) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&ymd, 4, yd, odn_dnnl_type(l->y_type), dnnl_nhwc) != dnnl_success)
        return NULL;
    dnnl_memory_t xm = NULL, ym = NULL;
    tsr_status *e = odn_plan_mem_as(p, vx, &xmd, n, &xm);
    /* a piece output is plain NCHW: written NHWC beside it, then reordered */
    bool copy = vy->output_index >= 0;
    if (!e) e = odn_plan_define(p, vy, 4, dy, copy ? NULL : &ymd, l->y_node);
    if (!e) ym = vy->mem;
    if (!e && copy) e = odn_plan_arena_mem(p, &ymd, n, &ym);
    if (!e) e = odn_plan_add_loop(p, dw_run, s, xm, ym, n);
    if (!e && copy) e = odn_plan_add_reorder(p, ym, &ymd, vy->mem, &vy->md, n);
    if (!e) *handled = true;
    return e;
}
