/* QDQ Conv / MatMul / Gemm with full-range int8 weights on AVX2 CPUs
 * without VNNI, exact, on the int16 GEMM of odn_igemm.c: where oneDNN's
 * int8 kernels would saturate (odn_fuse_qdq.c sends them here when the plan
 * has no int8_primitives). Activations stay uint8/int8 (convolutions read
 * and write NHWC, so a 1x1 stride-1 convolution is a GEMM on x as it lies;
 * other kernels gather rows of x, padded with its zero point, into a
 * buffer, im2col); the weights, less their zero point, are packed once
 * per session into the piece's constant cache; the int32 sums of a
 * block of rows are requantized while in cache by ONNX's formula: y = sat(
 * rint(acc * sx*sw[c]/sy + b[c]/sy) + zy), Relu as a clip at zy.
 *
 * Against the float graph ONNX defines, the sums are exact and the scale is
 * one multiply, so results differ only where y/sy lies within float
 * rounding of a rounding boundary (one quantization step), as those of
 * oneDNN's int8 primitives on a VNNI CPU do (odn_fuse_qdq.c). Weights
 * the u8 x s8 kernel takes (odn_igemm8.h: nearly all a quantizer writes)
 * run on it instead, as exact and 1.3-1.4x as fast; 3x3 stride-1
 * convolutions on integer Winograd (odn_qdq_i16_wino.c), as exact with
 * 2.25x fewer multiplies. */
#include <immintrin.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "odn_igemm.h"
#include "odn_igemm8.h"
#include "odn_quant.h"
#include "odn_sgemm.h"

/* FMA too, for the requantization (every AVX2 CPU has it) */
bool odn_i16_usable(const odn_plan *p) { return !p->int8_primitives && odn_igemm_supported() && odn_sgemm_supported(); }

typedef struct i16_step {
    const tsr_node *node;
    int64_t m, n, k;
    /* the convolution's geometry when rows of A are gathered (im2col) */
    bool gather;
    int64_t c, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
    int64_t lda; /* A's row stride when read in place */
    bool x_unsigned, y_unsigned;
    int out; /* ODN_I16_*: requantized, or the sums (int32 / float) straight into y */
    /* ODN_I16_QLIN: the node's scales, zero point and bias, and per run
     * mul[c], bias[c] (then zy) from them */
    dnnl_memory_t sx_m, sw_m, sy_m, zy_m, bias_m;
    int32_t scale_type, sw_type, zy_type;
    int64_t sw_count;
    double *dmul, *dbias;
    int32_t zx;           /* x's zero point, or read from zx_mem at run time */
    dnnl_memory_t zx_mem; /* NULL: zx */
    int32_t zx_type;
    float zy, lo, hi;
    const int16_t *packed;
    const void *packed8;     /* non-NULL: the u8 x s8 kernel (odn_igemm8.h) on it instead */
    const float *mult, *add; /* per output channel */
    int64_t rows;            /* per chunk: a multiple of 6 */
    void *scratch;           /* the plan's sgemm scratch: igemm's A blocks, per thread */
    size_t scratch_per;
    int threads;   /* the threads scratch and bufs are sized for */
    uint8_t *gbuf; /* per thread: rows x k gathered bytes */
    int32_t *acc;  /* per thread: rows x n sums */
    /* a 3x3 stride-1 convolution on the integer Winograd kernel: its
     * sums of all rows at once (into wsums, or y for ODN_I16_S32/F32),
     * then requantized chunk by chunk; NULL: the GEMM */
    const struct odn_i16_wino *wino;
    int32_t *wsums;
} i16_step;

/* Row r of the convolution's A (output pixel (b, oy, ox); K ordered as
 * ky, kx, channel) into dst: NHWC x's bytes, its zero point outside. */
static void gather_row(const i16_step *s, const uint8_t *x, int64_t r, int32_t zx, uint8_t *dst) {
    int64_t per_img = s->oh * s->ow, b = r / per_img, oy = r % per_img / s->ow, ox = r % s->ow;
    uint8_t pad = (uint8_t)zx;
    int64_t run = s->kw * s->c, ix0 = ox * s->sw - s->pw;
    for (int64_t ky = 0; ky < s->kh; ky++, dst += run) {
        int64_t iy = oy * s->sh - s->ph + ky * s->dh;
        if (iy < 0 || iy >= s->h) {
            memset(dst, pad, (size_t)run);
            continue;
        }
        const uint8_t *row = x + (b * s->h + iy) * s->w * s->c;
        if (s->dw == 1 && ix0 >= 0 && ix0 + s->kw <= s->w) { /* the kernel's row of pixels lies in x */
            memcpy(dst, row + ix0 * s->c, (size_t)run);
            continue;
        }
        for (int64_t kx = 0; kx < s->kw; kx++) {
            int64_t ix = ix0 + kx * s->dw;
            if (ix < 0 || ix >= s->w) memset(dst + kx * s->c, pad, (size_t)s->c);
            else memcpy(dst + kx * s->c, row + ix * s->c, (size_t)s->c);
        }
    }
}

/* y[r, j] for the chunk's rows and columns [j0, j1), from its sums. */
__attribute__((target("avx2,fma"))) static void requant(const i16_step *s, const int32_t *acc, int64_t rows, int64_t j0,
                                                        int64_t j1, void *yrow0) {
    __m256 zy = _mm256_set1_ps(s->zy), lo = _mm256_set1_ps(s->lo), hi = _mm256_set1_ps(s->hi);
    for (int64_t i = 0; i < rows; i++) {
        const int32_t *a = acc + i * s->n;
        uint8_t *y = (uint8_t *)yrow0 + i * s->n;
        int64_t j = j0;
        for (; j + 8 <= j1; j += 8) {
            __m256 v = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)(a + j))),
                                       _mm256_loadu_ps(s->mult + j), _mm256_loadu_ps(s->add + j));
            v = _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            v = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(v, zy), lo), hi);
            __m256i q = _mm256_cvtps_epi32(v); /* within [-128, 255] */
            __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
            __m128i b8 = s->y_unsigned ? _mm_packus_epi16(w16, w16) : _mm_packs_epi16(w16, w16);
            _mm_storel_epi64((__m128i *)(y + j), b8);
        }
        for (; j < j1; j++) {
            float v = nearbyintf(fmaf((float)a[j], s->mult[j], s->add[j])) + s->zy;
            v = v < s->lo ? s->lo : v > s->hi ? s->hi : v;
            y[j] = s->y_unsigned ? (uint8_t)(int32_t)v : (uint8_t)(int8_t)(int32_t)v;
        }
    }
}

/* The same for ODN_I16_QLIN, as odn_qlinear_float.c's loop: in double,
 * (acc + bias[c]) * mul[c], rounded half to even, + zy, saturated. */
__attribute__((target("avx2,fma"))) static void requant_qlin(const i16_step *s, const int32_t *acc, int64_t rows,
                                                             int64_t j0, int64_t j1, uint8_t *yrow0) {
    double zy = s->dbias[s->n];
    __m256d vz = _mm256_set1_pd(zy), lo = _mm256_set1_pd(s->lo), hi = _mm256_set1_pd(s->hi);
    for (int64_t i = 0; i < rows; i++) {
        const int32_t *a = acc + i * s->n;
        uint8_t *y = yrow0 + i * s->n;
        int64_t j = j0;
        for (; j + 8 <= j1; j += 8) {
            __m128i q[2];
            for (int h = 0; h < 2; h++) {
                __m256d v = _mm256_cvtepi32_pd(_mm_loadu_si128((const __m128i *)(a + j + 4 * h)));
                v = _mm256_mul_pd(_mm256_add_pd(v, _mm256_loadu_pd(s->dbias + j + 4 * h)),
                                  _mm256_loadu_pd(s->dmul + j + 4 * h));
                v = _mm256_add_pd(_mm256_round_pd(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), vz);
                q[h] = _mm256_cvttpd_epi32(_mm256_min_pd(_mm256_max_pd(v, lo), hi));
            }
            __m128i w = _mm_packs_epi32(q[0], q[1]);
            _mm_storel_epi64((__m128i *)(y + j), s->y_unsigned ? _mm_packus_epi16(w, w) : _mm_packs_epi16(w, w));
        }
        for (; j < j1; j++)
            odn_q_store(s->y_unsigned ? TSR_UINT8 : TSR_INT8, y, (size_t)j, ((double)a[j] + s->dbias[j]) * s->dmul[j],
                        zy);
    }
}

/* The sums as float, in place (float and int32 have one size). */
__attribute__((target("avx2"))) static void to_float(int32_t *acc, int64_t rows, int64_t n, int64_t j0, int64_t j1) {
    for (int64_t i = 0; i < rows; i++) {
        int32_t *a = acc + i * n;
        int64_t j = j0;
        for (; j + 8 <= j1; j += 8)
            _mm256_storeu_ps((float *)(void *)(a + j),
                             _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)(a + j))));
        for (; j < j1; j++) {
            float f = (float)a[j];
            memcpy(a + j, &f, sizeof f);
        }
    }
}

/* The sums of rows by columns [j0, j1) into y's rows from yrow0 (bytes
 * for ODN_I16_Q8/QLIN); ODN_I16_S32's are y already. */
static void finish(const i16_step *s, int32_t *acc, int64_t rows, int64_t j0, int64_t j1, uint8_t *yrow0) {
    if (s->out == ODN_I16_QLIN) {
        requant_qlin(s, acc, rows, j0, j1, yrow0);
    } else if (s->out == ODN_I16_Q8) {
        requant(s, acc, rows, j0, j1, yrow0);
    } else if (s->out == ODN_I16_F32) {
        to_float(acc, rows, s->n, j0, j1);
    }
}

/* Rows [r0, r0 + rows) by columns [j0, j1) on thread slot t. */
static void chunk(const i16_step *s, const uint8_t *x, uint8_t *y, int32_t zx, int64_t r0, int64_t rows, int64_t j0,
                  int64_t j1, int t) {
    const uint8_t *a = x + r0 * s->lda;
    int64_t lda = s->lda;
    if (s->gather) {
        uint8_t *g = s->gbuf + (size_t)t * (size_t)(s->rows * s->k);
        for (int64_t i = 0; i < rows; i++) gather_row(s, x, r0 + i, zx, g + i * s->k);
        a = g;
        lda = s->k;
    }
    bool q8 = s->out == ODN_I16_Q8 || s->out == ODN_I16_QLIN;
    int32_t *acc = q8 ? s->acc + (size_t)t * (size_t)(s->rows * s->n) : (int32_t *)(void *)y + r0 * s->n;
    void *scratch = (char *)s->scratch + (size_t)t * s->scratch_per;
    if (s->packed8) {
        odn_igemm8_block(rows, s->n, s->k, a, s->x_unsigned, lda, zx, s->packed8, j0, j1, acc, s->n, scratch);
    } else {
        odn_igemm_block(rows, s->n, s->k, a, s->x_unsigned, lda, zx, s->packed, j0, j1, acc, s->n, scratch);
    }
    finish(s, acc, rows, j0, j1, y + r0 * s->n);
}

/* The Winograd kernel's sums of every row, then each chunk of rows
 * requantized (or made float) as chunk() does its GEMM's. */
static void wino_rows(const i16_step *s, const uint8_t *x, uint8_t *y, int32_t zx, int threads) {
    bool q8 = s->out == ODN_I16_Q8 || s->out == ODN_I16_QLIN;
    int32_t *sums = q8 ? s->wsums : (int32_t *)(void *)y;
    odn_i16_wino_run(s->wino, x, s->x_unsigned, zx, sums, threads);
    if (s->out == ODN_I16_S32) return;
    int64_t chunks = (s->m + s->rows - 1) / s->rows;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t rc = 0; rc < chunks; rc++) {
        int64_t r0 = rc * s->rows, rows = s->m - r0 < s->rows ? s->m - r0 : s->rows;
        finish(s, sums + r0 * s->n, rows, 0, s->n, y + r0 * s->n);
    }
}

static tsr_status *run_i16(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const i16_step *s = ctx;
    const uint8_t *x = odn_q_handle(src);
    uint8_t *y = odn_q_handle(dst);
    if (!x || !y) return odn_node_error(s->node, TSR_ERR_PROVIDER, "internal: int16 gemm without buffers");
    int32_t zx = s->zx_mem ? (int32_t)odn_q_value(s->zx_mem, s->zx_type, 0) : s->zx;
    if (s->out == ODN_I16_QLIN) { /* the scales of this run, rounded as the reference rounds them */
        double sx = odn_q_value(s->sx_m, s->scale_type, 0), sy = odn_q_value(s->sy_m, s->scale_type, 0);
        for (int64_t j = 0; j < s->n; j++) {
            double sw = odn_q_value(s->sw_m, s->sw_type, s->sw_count == 1 ? 0 : (size_t)j);
            s->dmul[j] = odn_q_round_prec(s->scale_type, odn_q_round_prec(s->scale_type, sx * sw) / sy);
            s->dbias[j] = odn_q_value(s->bias_m, TSR_INT32, (size_t)j); /* 0 without a bias */
        }
        s->dbias[s->n] = odn_q_value(s->zy_m, s->zy_type, 0);
    }
    int64_t row_chunks = (s->m + s->rows - 1) / s->rows, panels = (s->n + 15) / 16;
    int threads = omp_get_max_threads();
    if (threads > s->threads) threads = s->threads;
    if (threads < 1 || 2.0 * (double)s->m * (double)s->n * (double)s->k < 2e6) threads = 1;
    if (s->wino) {
        wino_rows(s, x, y, zx, threads);
        return NULL;
    }
    /* few row chunks: the columns are shared out too (each column group
     * gathers its rows again, a K-th of its work) */
    int64_t groups = 1;
    if (threads > 1 && row_chunks < 4 * threads) {
        groups = (4 * threads + row_chunks - 1) / row_chunks;
        if (groups > panels) groups = panels;
    }
    int64_t per_group = (panels + groups - 1) / groups;
    groups = (panels + per_group - 1) / per_group;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1)
    for (int64_t item = 0; item < row_chunks * groups; item++) {
        int64_t rc = item / groups, g = item % groups;
        int64_t r0 = rc * s->rows, rows = s->m - r0 < s->rows ? s->m - r0 : s->rows;
        int64_t j0 = g * per_group * 16, j1 = (g + 1) * per_group * 16 < s->n ? (g + 1) * per_group * 16 : s->n;
        chunk(s, x, y, zx, r0, rows, j0, j1, omp_get_thread_num());
    }
    return NULL;
}

/* The weights as a K x N B to pack: w itself (strides), or for a
 * convolution (OIHW w) reordered into *tmp ([j][ky][kx][c], N x K; the
 * caller frees it). */
static bool weights_b(const odn_i16_layer *l, int64_t k, int64_t n, const uint8_t **b, int64_t *stride_k,
                      int64_t *stride_n, uint8_t **tmp) {
    const tsr_tensor *wt = l->w;
    const uint8_t *w = wt->data; /* bytes, read as the element type says */
    *tmp = NULL;
    *b = w;
    *stride_k = l->trans_b ? 1 : n;
    *stride_n = l->trans_b ? k : 1;
    if (!l->conv) return true;
    uint8_t *t = malloc((size_t)(k * n));
    if (!t) return false;
    int64_t c = wt->dims[1], kh = wt->dims[2], kw = wt->dims[3];
    for (int64_t j = 0; j < n; j++)
        for (int64_t ci = 0; ci < c; ci++)
            for (int64_t y = 0; y < kh; y++)
                for (int64_t x = 0; x < kw; x++) t[j * k + (y * kw + x) * c + ci] = w[((j * c + ci) * kh + y) * kw + x];
    *tmp = t, *b = t, *stride_k = 1, *stride_n = k;
    return true;
}

/* The weights packed for the u8 x s8 kernel (odn_igemm8.h) where it takes
 * them (*out NULL otherwise), once per session as packed_weights does;
 * the md (s8) tells this form from the int16 (u8) and float ones. */
static tsr_status *packed_weights8(odn_plan *p, const odn_i16_layer *l, int64_t k, int64_t n, const void **out) {
    *out = NULL;
    int64_t bytes = (int64_t)odn_igemm8_packed_bytes(k, n);
    const tsr_tensor *wt = l->w;
    bool wu = wt->elem_type == TSR_UINT8;
    dnnl_memory_desc_t md, src_md;
    if (!bytes || odn_plain_md_typed(&md, 1, &bytes, dnnl_s8) != dnnl_success ||
        odn_plain_md_typed(&src_md, wt->rank, wt->dims, wu ? dnnl_u8 : dnnl_s8) != dnnl_success)
        return NULL;
    void *buf = odn_const_cache_find(p->consts, wt->data, l->node, &src_md, &md);
    if (!buf) {
        const uint8_t *b;
        int64_t sk, sn;
        uint8_t *t;
        if (!weights_b(l, k, n, &b, &sk, &sn, &t) ||
            !(buf = odn_const_cache_add(p->consts, wt->data, l->node, &src_md, &md, (size_t)bytes))) {
            free(t);
            return odn_node_error(l->node, TSR_ERR_NO_MEMORY, "packed weights of %lld bytes", (long long)bytes);
        }
        odn_igemm8_pack(b, wu, k, n, sk, sn, l->zw, l->zw_count, buf);
        free(t);
        odn_const_cache_ready(p->consts, buf);
    }
    if (odn_igemm8_packed_ok(buf, k, n)) *out = buf;
    return NULL;
}

/* The packed weights: B[k, j] = w[j * stride_n + k * stride_k], or for a
 * convolution (OIHW w) K ordered as ky, kx, channel (weights_b). */
static tsr_status *packed_weights(odn_plan *p, const odn_i16_layer *l, int64_t k, int64_t n, const int16_t **out) {
    const tsr_tensor *wt = l->w;
    size_t count = odn_igemm_packed_count(k, n);
    int64_t bytes = (int64_t)(count * sizeof(int16_t));
    dnnl_memory_desc_t md, src_md;
    bool wu = wt->elem_type == TSR_UINT8;
    if (!count || odn_plain_md_typed(&md, 1, &bytes, dnnl_u8) != dnnl_success ||
        odn_plain_md_typed(&src_md, wt->rank, wt->dims, wu ? dnnl_u8 : dnnl_s8) != dnnl_success)
        return odn_node_error(l->node, TSR_ERR_NO_MEMORY, "packed weights of %lld x %lld", (long long)k, (long long)n);
    /* keyed by the node too: its zero point and reading of w are in it; the
     * md (bytes) tells it from the float forms other paths keep */
    int16_t *buf = odn_const_cache_find(p->consts, wt->data, l->node, &src_md, &md);
    if (!buf) {
        const uint8_t *b;
        int64_t sk, sn;
        uint8_t *t; /* a convolution's weights reordered first (freed once packed) */
        if (!weights_b(l, k, n, &b, &sk, &sn, &t) ||
            !(buf = odn_const_cache_add(p->consts, wt->data, l->node, &src_md, &md, (size_t)bytes))) {
            free(t);
            return odn_node_error(l->node, TSR_ERR_NO_MEMORY, "packed weights of %lld bytes", (long long)bytes);
        }
        odn_igemm_pack(b, wu, k, n, sk, sn, l->zw, l->zw_count, buf);
        free(t);
        odn_const_cache_ready(p->consts, buf);
    }
    *out = buf;
    return NULL;
}

/* The step's scales, buffers and threads, shared by both builders. */
void odn_i16_clamps(const odn_i16_layer *l, bool y_unsigned, float *lo, float *hi) {
    *lo = l->relu ? (float)l->zy : y_unsigned ? 0.0f : -128.0f;
    *hi = y_unsigned ? 255.0f : 127.0f;
    if (!l->clip) return;
    /* quantizing is monotonic, so Q(clip(v, lo, hi)) is Q(v) clamped to
     * [Q(lo), Q(hi)], Q(b) = round_half_even(b / sy) + zy */
    double qlo = isfinite(l->clip_lo) ? nearbyint((double)l->clip_lo / l->sy) + l->zy : -1e9;
    double qhi = isfinite(l->clip_hi) ? nearbyint((double)l->clip_hi / l->sy) + l->zy : 1e9;
    if (qlo > *lo) *lo = qlo > *hi ? *hi : (float)qlo;
    if (qhi < *hi) *hi = qhi < *lo ? *lo : (float)qhi;
}

tsr_status *odn_i16_weight_zp(odn_plan *p, const tsr_node *n, const tsr_tensor *zt, odn_i16_layer *l) {
    if (!zt) return NULL;
    l->zw_count = odn_numel(zt->rank, zt->dims);
    int32_t *z = odn_plan_alloc(p, sizeof(int32_t) * (size_t)(l->zw_count > 0 ? l->zw_count : 1));
    if (!z) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    for (int64_t i = 0; i < l->zw_count; i++)
        z[i] = zt->elem_type == TSR_UINT8 ? ((const uint8_t *)zt->data)[i] : ((const int8_t *)zt->data)[i];
    l->zw = z;
    return NULL;
}

static tsr_status *step_common(odn_plan *p, const odn_i16_layer *l, i16_step *s) {
    s->node = l->node;
    s->x_unsigned = l->x->elem_type == TSR_UINT8;
    s->y_unsigned = l->y_type == TSR_UINT8;
    s->zx = l->zx;
    s->zx_mem = l->zx_mem;
    s->zx_type = l->zx_type;
    s->out = l->out;
    s->zy = (float)l->zy;
    odn_i16_clamps(l, s->y_unsigned, &s->lo, &s->hi);
    float *mult = odn_plan_alloc(p, sizeof(float) * (size_t)s->n),
          *add = odn_plan_alloc(p, sizeof(float) * (size_t)s->n);
    if (!mult || !add) return odn_node_error(l->node, TSR_ERR_NO_MEMORY, "out of memory");
    if (l->out == ODN_I16_QLIN) {
        int32_t t;
        tsr_status *e = odn_q_input(p, l->node, 1, &s->sx_m, &s->scale_type);
        if (!e) e = odn_q_input(p, l->node, 4, &s->sw_m, &s->sw_type);
        if (!e) e = odn_q_input(p, l->node, 6, &s->sy_m, &t);
        if (!e) e = odn_q_input(p, l->node, 7, &s->zy_m, &s->zy_type);
        if (!e && l->conv) e = odn_q_input(p, l->node, 8, &s->bias_m, &t);
        if (e) return e;
        odn_value *vs = odn_plan_value(p, odn_host->node_input(l->node, 4));
        s->sw_count = vs ? odn_numel(vs->rank, vs->dims) : 1;
        if (s->sw_count != 1 && s->sw_count != s->n)
            return odn_node_error(l->node, TSR_ERR_INVALID_MODEL, "w_scale count");
        s->dmul = odn_plan_alloc(p, sizeof(double) * (size_t)(s->n + 1));
        s->dbias = odn_plan_alloc(p, sizeof(double) * (size_t)(s->n + 1));
        if (!s->dmul || !s->dbias) return odn_node_error(l->node, TSR_ERR_NO_MEMORY, "out of memory");
    }
    for (int64_t j = 0; j < s->n && l->out == ODN_I16_Q8; j++) {
        double sw = l->w_scale[l->w_scale_count == 1 ? 0 : j];
        mult[j] = (float)((double)l->sx * sw / l->sy);
        add[j] = l->bias ? (float)((double)l->bias[j] / l->sy) : 0.0f;
    }
    s->mult = mult;
    s->add = add;
    /* the igemm A blocks live in the plan's packed-GEMM scratch (same size
     * per thread); steps of a plan run one at a time */
    s->scratch_per = odn_sgemm_scratch_floats(1) * sizeof(float);
    if (odn_igemm_scratch_bytes() > s->scratch_per || odn_igemm8_scratch_bytes() > s->scratch_per)
        return odn_node_error(l->node, TSR_ERR_PROVIDER, "internal: int16 gemm scratch");
    if (!p->sgemm_scratch) {
        p->sgemm_threads = omp_get_max_threads();
        p->sgemm_scratch = odn_plan_alloc(p, odn_sgemm_scratch_floats(p->sgemm_threads) * sizeof(float));
        if (!p->sgemm_scratch) return odn_node_error(l->node, TSR_ERR_NO_MEMORY, "packed gemm scratch");
    }
    s->scratch = p->sgemm_scratch;
    s->threads = p->sgemm_threads;
    /* chunks of rows whose gathered A and sums stay in L2 (~192 KiB) */
    bool q8 = s->out == ODN_I16_Q8 || s->out == ODN_I16_QLIN;
    int64_t row_bytes = (s->gather ? s->k : 0) + (q8 ? 4 * s->n : 0) + 1;
    s->rows = 196608 / row_bytes / 6 * 6;
    s->rows = s->rows < 6 ? 6 : s->rows > 240 ? 240 : s->rows;
    /* the Winograd kernel has its own weights and buffers (odn_qdq_i16_wino.c) */
    if (s->wino) return NULL;
    s->acc = q8 ? odn_plan_alloc(p, sizeof(int32_t) * (size_t)(s->rows * s->n * s->threads)) : NULL;
    s->gbuf = s->gather ? odn_plan_alloc(p, (size_t)(s->rows * s->k * s->threads)) : NULL;
    if ((q8 && !s->acc) || (s->gather && !s->gbuf))
        return odn_node_error(l->node, TSR_ERR_NO_MEMORY, "int16 gemm buffers");
    tsr_status *e = packed_weights8(p, l, s->k, s->n, &s->packed8);
    return e || s->packed8 ? e : packed_weights(p, l, s->k, s->n, &s->packed);
}

bool odn_i16_conv_fits(int32_t rank, int64_t group, int64_t depth) {
    return rank == 4 && group == 1 && depth <= ODN_IGEMM_MAX_K;
}

tsr_status *odn_i16_conv(odn_plan *p, const odn_i16_layer *l, bool *handled) {
    const tsr_node *n = l->node;
    odn_value *vx = l->x, *vy = l->y;
    const tsr_tensor *wt = l->w;
    *handled = false;
    if (odn_attr_int(n, "group", 1) != 1) return odn_i16_dwconv(p, l, handled); /* odn_qdq_i16_dw.c */
    if (vx->rank != 4 || wt->rank != 4) return NULL;
    i16_step *s = odn_plan_alloc(p, sizeof *s);
    if (!s) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    memset(s, 0, sizeof *s);
    size_t cnt;
    const int64_t *st = odn_attr_ints(n, "strides", &cnt), *di = odn_attr_ints(n, "dilations", &cnt);
    const int64_t *pads = odn_attr_ints(n, "pads", &cnt);
    bool valid = odn_attr_string_is(n, "auto_pad", "VALID", false);
    s->c = vx->dims[1], s->h = vx->dims[2], s->w = vx->dims[3];
    s->kh = wt->dims[2], s->kw = wt->dims[3];
    s->sh = st ? st[0] : 1, s->sw = st ? st[1] : 1;
    s->dh = di ? di[0] : 1, s->dw = di ? di[1] : 1;
    s->ph = pads && !valid ? pads[0] : 0, s->pw = pads && !valid ? pads[1] : 0;
    int64_t pb = pads && !valid ? pads[2] : 0, pr = pads && !valid ? pads[3] : 0;
    if (wt->dims[1] != s->c || s->sh < 1 || s->sw < 1 || s->dh < 1 || s->dw < 1) return NULL;
    int64_t ext_h = (s->kh - 1) * s->dh + 1, ext_w = (s->kw - 1) * s->dw + 1;
    if (s->h + s->ph + pb < ext_h || s->w + s->pw + pr < ext_w)
        return odn_node_error(n, TSR_ERR_INVALID_MODEL, "kernel larger than the padded input");
    s->oh = (s->h + s->ph + pb - ext_h) / s->sh + 1;
    s->ow = (s->w + s->pw + pr - ext_w) / s->sw + 1;
    s->m = vx->dims[0] * s->oh * s->ow;
    s->n = wt->dims[0];
    s->k = s->c * s->kh * s->kw;
    if (!odn_igemm_packed_count(s->k, s->n)) return NULL;
    s->gather = !(s->kh == 1 && s->kw == 1 && s->sh == 1 && s->sw == 1 && s->ph == 0 && s->pw == 0);
    s->lda = s->c;
    int64_t dy[4] = {vx->dims[0], s->n, s->oh, s->ow};
    dnnl_memory_desc_t xmd, ymd;
    dnnl_dims_t xd = {vx->dims[0], vx->dims[1], vx->dims[2], vx->dims[3]}, yd = {dy[0], dy[1], dy[2], dy[3]};
    dnnl_data_type_t yt = l->out == ODN_I16_S32 ? dnnl_s32
        : l->out == ODN_I16_F32                 ? dnnl_f32
                                                : odn_dnnl_type(l->y_type);
    if (dnnl_memory_desc_init_by_tag(&xmd, 4, xd, odn_dnnl_type(vx->elem_type), dnnl_nhwc) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&ymd, 4, yd, yt, dnnl_nhwc) != dnnl_success)
        return NULL;
    tsr_status *e = NULL;
    if (s->kh == 3 && s->kw == 3 && s->sh == 1 && s->sw == 1 && s->dh == 1 && s->dw == 1) {
        odn_iwino_shape ws = {.n = vx->dims[0],
                              .c = s->c,
                              .h = s->h,
                              .w = s->w,
                              .m = s->n,
                              .oh = s->oh,
                              .ow = s->ow,
                              .pt = s->ph,
                              .pl = s->pw};
        e = odn_i16_wino_new(p, l, &ws, &s->wino);
    }
    if (!e) e = step_common(p, l, s);
    if (!e && s->wino && (s->out == ODN_I16_Q8 || s->out == ODN_I16_QLIN) &&
        ((uint64_t)s->m > SIZE_MAX / sizeof(int32_t) / (uint64_t)s->n ||
         !(s->wsums = odn_plan_alloc(p, sizeof(int32_t) * (size_t)s->m * (size_t)s->n))))
        e = odn_node_error(n, TSR_ERR_NO_MEMORY, "Winograd sums of %lld x %lld", (long long)s->m, (long long)s->n);
    dnnl_memory_t xm = NULL;
    if (!e) e = odn_plan_mem_as(p, vx, &xmd, n, &xm);
    /* a piece output is plain NCHW: the loop writes NHWC beside it, a
     * reorder copies */
    bool copy = vy->output_index >= 0;
    dnnl_memory_t ym = NULL;
    if (!e) e = odn_plan_define(p, vy, 4, dy, copy ? NULL : &ymd, l->y_node);
    if (!e) ym = vy->mem;
    if (!e && copy) e = odn_plan_arena_mem(p, &ymd, n, &ym);
    const dnnl_memory_t reads[] = {s->zx_mem, s->sx_m, s->sw_m, s->sy_m, s->zy_m, s->bias_m};
    if (!e) e = odn_plan_add_loop_reading(p, run_i16, s, xm, ym, reads, 6, n);
    if (!e && copy) e = odn_plan_add_reorder(p, ym, &ymd, vy->mem, &vy->md, n);
    if (!e) *handled = true;
    return e;
}

tsr_status *odn_i16_matmul(odn_plan *p, const odn_i16_layer *l, bool *handled) {
    const tsr_node *n = l->node;
    odn_value *vx = l->x, *vy = l->y;
    const tsr_tensor *wt = l->w;
    *handled = false;
    i16_step *s = odn_plan_alloc(p, sizeof *s);
    if (!s) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    memset(s, 0, sizeof *s);
    s->k = vx->dims[vx->rank - 1];
    s->n = l->trans_b ? wt->dims[0] : wt->dims[1];
    s->m = odn_numel(vx->rank - 1, vx->dims);
    s->lda = s->k;
    if (s->m <= 0 || !odn_igemm_packed_count(s->k, s->n)) return NULL;
    int64_t a2[2] = {s->m, s->k}, dy[ODN_MAX_RANK];
    memcpy(dy, vx->dims, sizeof(int64_t) * (size_t)vx->rank);
    dy[vx->rank - 1] = s->n;
    tsr_status *e = step_common(p, l, s);
    dnnl_memory_t am = NULL;
    if (!e) e = odn_plan_plain_view(p, vx, 2, a2, NULL, n, &am, NULL);
    if (!e) e = odn_plan_define(p, vy, vx->rank, dy, NULL, l->y_node);
    const dnnl_memory_t reads[] = {s->zx_mem, s->sx_m, s->sw_m, s->sy_m, s->zy_m, s->bias_m};
    if (!e) e = odn_plan_add_loop_reading(p, run_i16, s, am, vy->mem, reads, 6, n);
    if (!e) *handled = true;
    return e;
}
