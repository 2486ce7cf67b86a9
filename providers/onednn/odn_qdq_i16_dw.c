/* Depthwise QDQ convolutions (group = input channels = output channels)
 * on the integer path of CPUs without VNNI (odn_qdq_i16.c): a MobileNet's
 * depthwise layers ran in float between a DequantizeLinear loop, reorders
 * and a QuantizeLinear loop while the pointwise layers around them were
 * integer, so every block converted its activations four times.
 *
 * Here the uint8/int8 activations stay NHWC. Each input row a thread needs
 * is widened once into a float row of x - zx (channels padded to 8 with
 * zeros, the padding columns 0, i.e. x = zx), kept in a small per-thread
 * ring while the output rows that read it are computed; then 8 output
 * pixels x 8 channels at a time, eight independent FMA chains, sum the
 * window from those rows. (One chain per 8 channels, widening each tap's
 * bytes again, left the loop waiting on FMA latency: 44% of a QDQ
 * MobileNetV1 for 3% of its multiply-adds.) That is exact: |x - zx| <= 255
 * and |w| <= 128 make each product an integer below 2^15, and a window of
 * at most 512 taps keeps every partial sum below 2^24, in any order. The
 * sums are requantized as the other layers' (sat(rint(acc * sx * sw[c] /
 * sy + b[c] / sy) + zy), Relu and Clip as clamps). Chunks of output rows
 * are spread over the threads. */
#include <immintrin.h>
#include <math.h>
#include <omp.h>
#include <string.h>

#include "odn_quant.h"

enum { DW_MAX_TAPS = 512, DW_PIX = 8 };
/* per thread, the widened rows' bytes: past this the layer stays float */
#define DW_RING_MAX_BYTES (8.0 * 1024 * 1024)

typedef struct dw_step {
    const tsr_node *node;
    int64_t n, c, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
    int64_t cp;    /* channels rounded up to 8 */
    int64_t wp;    /* the widened row's pixels: every column a window reads, from -pw */
    int64_t slots; /* rows in a thread's ring: (kh - 1) * dh + 1, so a window's rows never share a slot */
    bool x_unsigned, y_unsigned;
    float zx, zy, lo, hi;
    const float *wt;   /* [kh * kw][cp]: the weights, tap-major */
    const float *mult; /* [cp]: sx * sw[c] / sy */
    const float *add;  /* [cp]: b[c] / sy */
    int threads;       /* ring sets allocated */
    float *ring;       /* per thread: slots x wp x cp */
    int64_t *tags;     /* per thread: the image row (b * h + iy) each slot holds, -1: none */
} dw_step;

/* Image row b * h + iy of x as floats less zx into dst, channel-block
 * major ([cp / 8][wp][8]): a block's pixels lie together, so the window
 * sums of one block read a few KiB (L1) rather than every channel's. */
__attribute__((target("avx2"))) static void widen_row(const dw_step *s, const uint8_t *x, int64_t row, float *dst) {
    const __m256 zx = _mm256_set1_ps(s->zx);
    const uint8_t *src = x + row * s->w * s->c;
    const int64_t c_in = s->c, wp = s->wp, j0 = s->pw, j1 = s->pw + s->w < s->wp ? s->pw + s->w : s->wp;
    const bool u8 = s->x_unsigned;
    /* block by block, each plane written in order */
    for (int64_t c = 0; c < s->cp; c += 8) {
        float *d = dst + c / 8 * wp * 8;
        for (int64_t j = 0; j < j0 && j < wp; j++) _mm256_storeu_ps(d + j * 8, _mm256_setzero_ps());
        const uint8_t *p = src + (j0 - s->pw) * c_in + c;
        if (c + 8 <= c_in) {
            for (int64_t j = j0; j < j1; j++, p += c_in) {
                __m128i b = _mm_loadl_epi64((const __m128i *)p);
                __m256i i = u8 ? _mm256_cvtepu8_epi32(b) : _mm256_cvtepi8_epi32(b);
                _mm256_storeu_ps(d + j * 8, _mm256_sub_ps(_mm256_cvtepi32_ps(i), zx));
            }
        } else { /* the last block's lanes past c_in: zeros */
            for (int64_t j = j0; j < j1; j++, p += c_in) {
                float t[8] = {0};
                for (int64_t k = 0; k < c_in - c; k++)
                    t[k] = (float)(u8 ? (int32_t)p[k] : (int32_t)(int8_t)p[k]) - s->zx;
                memcpy(d + j * 8, t, sizeof t);
            }
        }
        for (int64_t j = j1 > j0 ? j1 : j0; j < wp; j++) _mm256_storeu_ps(d + j * 8, _mm256_setzero_ps());
    }
}

/* The rows output row (b, oy) reads, widened into the ring if not there:
 * rp[i] for ky = *ky0 + i, i < *nk (rows in the padding are left out). */
static void window_rows(const dw_step *s, const uint8_t *x, int t, int64_t b, int64_t oy, const float **rp,
                        int64_t *ky0, int64_t *nk) {
    int64_t k0 = 0, k1 = s->kh, iy0 = oy * s->sh - s->ph;
    while (k0 < k1 && iy0 + k0 * s->dh < 0) k0++;
    while (k1 > k0 && iy0 + (k1 - 1) * s->dh >= s->h) k1--;
    float *ring = s->ring + (size_t)t * (size_t)(s->slots * s->wp * s->cp);
    int64_t *tags = s->tags + (size_t)t * (size_t)s->slots;
    for (int64_t ky = k0; ky < k1; ky++) {
        int64_t iy = iy0 + ky * s->dh, slot = iy % s->slots, row = b * s->h + iy;
        float *dst = ring + slot * s->wp * s->cp;
        if (tags[slot] != row) {
            widen_row(s, x, row, dst);
            tags[slot] = row;
        }
        rp[ky - k0] = dst;
    }
    *ky0 = k0;
    *nk = k1 - k0;
}

/* Requantized 8 channels from c of one pixel into out (lanes of them). */
__attribute__((target("avx2,fma"))) static inline void store8(const dw_step *s, __m256 acc, __m256 m, __m256 a,
                                                              int64_t lanes, uint8_t *out) {
    __m256 v = _mm256_fmadd_ps(acc, m, a);
    v = _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    v = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(v, _mm256_set1_ps(s->zy)), _mm256_set1_ps(s->lo)),
                      _mm256_set1_ps(s->hi));
    __m256i q = _mm256_cvtps_epi32(v);
    __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    __m128i b8 = s->y_unsigned ? _mm_packus_epi16(w16, w16) : _mm_packs_epi16(w16, w16);
    if (lanes == 8) {
        _mm_storel_epi64((__m128i *)out, b8);
    } else {
        uint8_t o8[16];
        _mm_storeu_si128((__m128i *)o8, b8);
        memcpy(out, o8, (size_t)lanes);
    }
}

/* np (<= DW_PIX, a constant where inlined) pixels from ox, channels c..c+7:
 * np independent FMA chains, each tap's weights loaded once for all. */
__attribute__((target("avx2,fma"), always_inline)) static inline void dw_pixels(const dw_step *s, const float **rp,
                                                                                 int64_t ky0, int64_t nk, int64_t c,
                                                                                 int64_t ox, const int np,
                                                                                 uint8_t *out) {
    const int64_t step = s->sw * 8;
    __m256 acc[DW_PIX];
    for (int i = 0; i < np; i++) acc[i] = _mm256_setzero_ps();
    for (int64_t r = 0; r < nk; r++) {
        const float *wrow = s->wt + (ky0 + r) * s->kw * s->cp + c;
        const float *xrow = rp[r] + (c / 8 * s->wp + ox * s->sw) * 8;
        for (int64_t kx = 0; kx < s->kw; kx++) {
            __m256 wv = _mm256_loadu_ps(wrow + kx * s->cp);
            const float *xp = xrow + kx * s->dw * 8;
            for (int i = 0; i < np; i++) acc[i] = _mm256_fmadd_ps(_mm256_loadu_ps(xp + i * step), wv, acc[i]);
        }
    }
    __m256 m = _mm256_loadu_ps(s->mult + c), a = _mm256_loadu_ps(s->add + c);
    int64_t lanes = s->c - c < 8 ? s->c - c : 8;
    for (int i = 0; i < np; i++) store8(s, acc[i], m, a, lanes, out + i * s->c);
}

/* Output row (b, oy): channel block by channel block, so one block's
 * widened rows (a few KiB) stay in L1 while every pixel reads them. */
__attribute__((target("avx2,fma"))) static void dw_row(const dw_step *s, const uint8_t *x, int t, int64_t b,
                                                      int64_t oy, uint8_t *y) {
    const float *rp[DW_MAX_TAPS];
    int64_t ky0, nk;
    window_rows(s, x, t, b, oy, rp, &ky0, &nk);
    uint8_t *out = y + (b * s->oh + oy) * s->ow * s->c;
    for (int64_t c = 0; c < s->cp; c += 8) {
        int64_t ox = 0;
        for (; ox + DW_PIX <= s->ow; ox += DW_PIX) dw_pixels(s, rp, ky0, nk, c, ox, DW_PIX, out + ox * s->c + c);
        if (ox == s->ow) continue;
        /* the rest: the last 8 pixels again (the same values), or all of a
         * narrower row at once; a lone chain would wait on FMA latency */
        if (s->ow >= DW_PIX) {
            dw_pixels(s, rp, ky0, nk, c, s->ow - DW_PIX, DW_PIX, out + (s->ow - DW_PIX) * s->c + c);
            continue;
        }
        switch (s->ow) {
        case 7: dw_pixels(s, rp, ky0, nk, c, 0, 7, out + c); break;
        case 6: dw_pixels(s, rp, ky0, nk, c, 0, 6, out + c); break;
        case 5: dw_pixels(s, rp, ky0, nk, c, 0, 5, out + c); break;
        case 4: dw_pixels(s, rp, ky0, nk, c, 0, 4, out + c); break;
        case 3: dw_pixels(s, rp, ky0, nk, c, 0, 3, out + c); break;
        case 2: dw_pixels(s, rp, ky0, nk, c, 0, 2, out + c); break;
        default: dw_pixels(s, rp, ky0, nk, c, 0, 1, out + c); break;
        }
    }
}

static tsr_status *dw_run(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const dw_step *s = ctx;
    const uint8_t *x = odn_q_handle(src);
    uint8_t *y = odn_q_handle(dst);
    if (!x || !y) return odn_node_error(s->node, TSR_ERR_PROVIDER, "internal: depthwise layer without buffers");
    /* the rings hold the last run's rows: none of them is valid now */
    for (int64_t i = 0; i < s->threads * s->slots; i++) s->tags[i] = -1;
    int64_t rows = s->n * s->oh;
    int threads = omp_get_max_threads();
    if (threads > s->threads) threads = s->threads;
    if (threads < 1 || rows * s->ow * s->c * s->kh * s->kw <= 200000) threads = 1;
    /* contiguous chunks of rows, so a thread's ring keeps the rows the
     * next output row reads again; several per thread for balance */
    int64_t chunk = threads > 1 ? (rows + 4 * threads - 1) / (4 * threads) : rows;
    int64_t chunks = (rows + chunk - 1) / chunk;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1)
    for (int64_t k = 0; k < chunks; k++) {
        int t = omp_get_thread_num();
        for (int64_t r = k * chunk; r < rows && r < (k + 1) * chunk; r++) dw_row(s, x, t, r / s->oh, r % s->oh, y);
    }
    return NULL;
}

bool odn_i16_dw_fits(int32_t rank, int64_t group, int64_t in_channels, int64_t out_channels, int64_t taps) {
    return rank == 4 && group > 1 && group == in_channels && group == out_channels && taps <= DW_MAX_TAPS;
}

/* The geometry of n on x (NCHW dims) into s; false: not this path's. */
static bool dw_geometry(const tsr_node *n, const int64_t *xd, const tsr_tensor *wt, dw_step *s, tsr_status **err) {
    size_t cnt;
    const int64_t *st = odn_attr_ints(n, "strides", &cnt), *di = odn_attr_ints(n, "dilations", &cnt);
    const int64_t *pads = odn_attr_ints(n, "pads", &cnt);
    bool valid = odn_attr_string_is(n, "auto_pad", "VALID", false);
    s->node = n;
    s->n = xd[0], s->c = xd[1], s->h = xd[2], s->w = xd[3];
    s->kh = wt->dims[2], s->kw = wt->dims[3];
    s->sh = st ? st[0] : 1, s->sw = st ? st[1] : 1;
    s->dh = di ? di[0] : 1, s->dw = di ? di[1] : 1;
    s->ph = pads && !valid ? pads[0] : 0, s->pw = pads && !valid ? pads[1] : 0;
    int64_t pb = pads && !valid ? pads[2] : 0, pr = pads && !valid ? pads[3] : 0;
    if (s->sh < 1 || s->sw < 1 || s->dh < 1 || s->dw < 1 || s->kh < 1 || s->kw < 1 || s->ph < 0 || s->pw < 0 ||
        pb < 0 || pr < 0)
        return false;
    double ext_h = (double)(s->kh - 1) * (double)s->dh + 1, ext_w = (double)(s->kw - 1) * (double)s->dw + 1;
    if ((double)s->h + (double)s->ph + (double)pb < ext_h || (double)s->w + (double)s->pw + (double)pr < ext_w) {
        *err = odn_node_error(n, TSR_ERR_INVALID_MODEL, "kernel larger than the padded input");
        return false;
    }
    s->oh = (s->h + s->ph + pb - (int64_t)ext_h) / s->sh + 1;
    s->ow = (s->w + s->pw + pr - (int64_t)ext_w) / s->sw + 1;
    s->cp = (s->c + 7) / 8 * 8;
    s->wp = (s->ow - 1) * s->sw + (int64_t)ext_w;
    s->slots = (int64_t)ext_h;
    /* hostile pads or dilations make the rings huge: the float path then */
    return (double)s->slots * (double)s->wp * (double)s->cp * sizeof(float) <= DW_RING_MAX_BYTES;
}

/* Weights [taps][cp], scales and biases [cp] (zero past c), and the rings. */
static tsr_status *dw_tables(odn_plan *p, const odn_i16_layer *l, dw_step *s) {
    const tsr_tensor *wt = l->w;
    int64_t taps = s->kh * s->kw;
    size_t ring = (size_t)(s->slots * s->wp * s->cp);
    s->threads = omp_get_max_threads();
    if (s->threads < 1) s->threads = 1;
    float *w = odn_plan_alloc(p, sizeof(float) * (size_t)(taps * s->cp));
    float *mult = odn_plan_alloc(p, sizeof(float) * (size_t)s->cp), *add = odn_plan_alloc(p, sizeof(float) * (size_t)s->cp);
    s->ring = odn_plan_alloc(p, sizeof(float) * ring * (size_t)s->threads);
    s->tags = odn_plan_alloc(p, sizeof(int64_t) * (size_t)(s->slots * s->threads));
    if (!w || !mult || !add || !s->ring || !s->tags) return odn_node_error(l->node, TSR_ERR_NO_MEMORY, "out of memory");
    memset(w, 0, sizeof(float) * (size_t)(taps * s->cp));
    memset(mult, 0, sizeof(float) * (size_t)s->cp);
    memset(add, 0, sizeof(float) * (size_t)s->cp);
    bool u8w = wt->elem_type == TSR_UINT8;
    for (int64_t c = 0; c < s->c; c++) {
        for (int64_t t = 0; t < taps; t++) {
            int64_t i = c * taps + t;
            w[t * s->cp + c] = u8w ? (float)((const uint8_t *)wt->data)[i] : (float)((const int8_t *)wt->data)[i];
        }
        double sw = l->w_scale[l->w_scale_count == 1 ? 0 : c];
        mult[c] = (float)((double)l->sx * sw / l->sy);
        add[c] = l->bias ? (float)((double)l->bias[c] / l->sy) : 0.0f;
    }
    s->wt = w, s->mult = mult, s->add = add;
    return NULL;
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
    tsr_status *e = NULL;
    if (!dw_geometry(n, vx->dims, wt, s, &e)) return e;
    s->x_unsigned = vx->elem_type == TSR_UINT8;
    s->y_unsigned = l->y_type == TSR_UINT8;
    s->zx = (float)l->zx;
    s->zy = (float)l->zy;
    odn_i16_clamps(l, s->y_unsigned, &s->lo, &s->hi);
    e = dw_tables(p, l, s);
    if (e) return e;
    int64_t dy[4] = {vx->dims[0], s->c, s->oh, s->ow};
    dnnl_memory_desc_t xmd, ymd;
    dnnl_dims_t xd = {vx->dims[0], vx->dims[1], vx->dims[2], vx->dims[3]}, yd = {dy[0], dy[1], dy[2], dy[3]};
    if (dnnl_memory_desc_init_by_tag(&xmd, 4, xd, odn_dnnl_type(vx->elem_type), dnnl_nhwc) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&ymd, 4, yd, odn_dnnl_type(l->y_type), dnnl_nhwc) != dnnl_success)
        return NULL;
    dnnl_memory_t xm = NULL, ym = NULL;
    e = odn_plan_mem_as(p, vx, &xmd, n, &xm);
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
