/* Softmax and LogSoftmax over a middle axis of plain float32 data
 * ([outer, axis, inner], inner > 1), which oneDNN 2.6 has only its
 * reference kernel for. Computed a block of up to 64 inner positions at a
 * time, so every access runs along contiguous memory, 16 lanes at once on
 * AVX-512 and 8 on AVX2 with a polynomial exponential (Cephes' expf range
 * reduction and coefficients, within 2 ulp), as oneDNN's and ONNX
 * Runtime's kernels compute it; elsewhere a scalar loop in double (libm's
 * exp made a segmentation model's channel softmax a quarter of its run on
 * AVX2). */
#include <math.h>
#include <string.h>

#include "odn.h"
#include "odn_vexp.h"

#define BLOCK 64

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define SM_X86 1
#define SM_TARGET __attribute__((target("avx512f")))

static inline SM_TARGET __mmask16 lanes(int64_t i, int64_t w) {
    return w - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (w - i)) - 1);
}

/* `w` (<= BLOCK) adjacent inner positions: x and y point at [o][0][i0]. */
static SM_TARGET void block_avx512(const float *x, float *y, int64_t axis, int64_t inner, int64_t w, bool log) {
    __m512 m[BLOCK / 16], s[BLOCK / 16];
    int64_t nv = (w + 15) / 16;
    for (int64_t v = 0; v < nv; v++) {
        m[v] = _mm512_set1_ps(-INFINITY);
        s[v] = _mm512_setzero_ps();
    }
    for (int64_t j = 0; j < axis; j++)
        for (int64_t v = 0; v < nv; v++)
            m[v] = _mm512_max_ps(_mm512_mask_loadu_ps(m[v], lanes(16 * v, w), x + j * inner + 16 * v), m[v]);
    for (int64_t j = 0; j < axis; j++)
        for (int64_t v = 0; v < nv; v++) {
            __mmask16 k = lanes(16 * v, w);
            __m512 e = odn_exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + j * inner + 16 * v), m[v]));
            s[v] = _mm512_add_ps(s[v], _mm512_maskz_mov_ps(k, e));
            if (!log) _mm512_mask_storeu_ps(y + j * inner + 16 * v, k, e);
        }
    for (int64_t v = 0; v < nv; v++) {
        if (!log) {
            s[v] = _mm512_div_ps(_mm512_set1_ps(1.0f), s[v]);
            continue;
        }
        float t[16], mm[16];
        _mm512_storeu_ps(t, s[v]);
        _mm512_storeu_ps(mm, m[v]);
        for (int l = 0; l < 16; l++) t[l] = mm[l] + logf(t[l]);
        s[v] = _mm512_loadu_ps(t);
    }
    for (int64_t j = 0; j < axis; j++)
        for (int64_t v = 0; v < nv; v++) {
            __mmask16 k = lanes(16 * v, w);
            float *at = y + j * inner + 16 * v;
            __m512 r = log ? _mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + j * inner + 16 * v), s[v])
                           : _mm512_mul_ps(_mm512_maskz_loadu_ps(k, at), s[v]);
            _mm512_mask_storeu_ps(at, k, r);
        }
}

#define AVX2_TARGET ODN_AVX2_TARGET

/* Lane l of vector v is on when 8 v + l < w. */
static inline AVX2_TARGET __m256i lanes8(int64_t i, int64_t w) {
    int64_t left = w - i > 8 ? 8 : w - i;
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)left), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* block_avx512 on 8 lanes. */
static AVX2_TARGET void block_avx2(const float *x, float *y, int64_t axis, int64_t inner, int64_t w, bool log) {
    __m256 m[BLOCK / 8], s[BLOCK / 8];
    __m256i k[BLOCK / 8];
    int64_t nv = (w + 7) / 8;
    for (int64_t v = 0; v < nv; v++) {
        m[v] = _mm256_set1_ps(-INFINITY);
        s[v] = _mm256_setzero_ps();
        k[v] = lanes8(8 * v, w);
    }
    for (int64_t j = 0; j < axis; j++)
        for (int64_t v = 0; v < nv; v++) {
            __m256 xv = _mm256_maskload_ps(x + j * inner + 8 * v, k[v]);
            m[v] = _mm256_blendv_ps(m[v], _mm256_max_ps(xv, m[v]), _mm256_castsi256_ps(k[v]));
        }
    for (int64_t j = 0; j < axis; j++)
        for (int64_t v = 0; v < nv; v++) {
            __m256 e = odn_exp8(_mm256_sub_ps(_mm256_maskload_ps(x + j * inner + 8 * v, k[v]), m[v]));
            e = _mm256_and_ps(e, _mm256_castsi256_ps(k[v]));
            s[v] = _mm256_add_ps(s[v], e);
            if (!log) _mm256_maskstore_ps(y + j * inner + 8 * v, k[v], e);
        }
    for (int64_t v = 0; v < nv; v++) {
        if (!log) {
            s[v] = _mm256_div_ps(_mm256_set1_ps(1.0f), s[v]);
            continue;
        }
        float t[8], mm[8];
        _mm256_storeu_ps(t, s[v]);
        _mm256_storeu_ps(mm, m[v]);
        for (int l = 0; l < 8; l++) t[l] = mm[l] + logf(t[l]);
        s[v] = _mm256_loadu_ps(t);
    }
    for (int64_t j = 0; j < axis; j++)
        for (int64_t v = 0; v < nv; v++) {
            float *at = y + j * inner + 8 * v;
            __m256 r = log ? _mm256_sub_ps(_mm256_maskload_ps(x + j * inner + 8 * v, k[v]), s[v])
                           : _mm256_mul_ps(_mm256_maskload_ps(at, k[v]), s[v]);
            _mm256_maskstore_ps(at, k[v], r);
        }
}

#else
#define SM_X86 0
#endif

/* The same in scalar code, in double, for CPUs without AVX2. */
static void block_scalar(const float *x, float *y, int64_t axis, int64_t inner, int64_t w, bool as_log) {
    for (int64_t i = 0; i < w; i++) {
        float m = -INFINITY;
        for (int64_t j = 0; j < axis; j++) m = x[j * inner + i] > m ? x[j * inner + i] : m;
        double sum = 0;
        for (int64_t j = 0; j < axis; j++) sum += exp((double)(x[j * inner + i] - m));
        float ls = (float)log(sum);
        for (int64_t j = 0; j < axis; j++) {
            float t = x[j * inner + i] - m;
            y[j * inner + i] = as_log ? t - ls : (float)(exp((double)t) / sum);
        }
    }
}

typedef struct softmax_loop {
    int64_t outer, axis, inner;
    bool log;
} softmax_loop;

static tsr_status *run_softmax(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const softmax_loop *l = ctx;
    void *px = NULL, *py = NULL;
    dnnl_memory_get_data_handle(src, &px);
    dnnl_memory_get_data_handle(dst, &py);
    const float *x = px;
    float *y = py;
    int64_t blocks = (l->inner + BLOCK - 1) / BLOCK, tasks = l->outer * blocks;
#if SM_X86
    bool wide = __builtin_cpu_supports("avx512f");
    bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
#pragma omp parallel for if (tasks > 1 && l->outer * l->axis * l->inner > 32768) schedule(static)
    for (int64_t k = 0; k < tasks; k++) {
        int64_t o = k / blocks, i0 = k % blocks * BLOCK;
        int64_t w = l->inner - i0 < BLOCK ? l->inner - i0 : BLOCK;
        int64_t at = o * l->axis * l->inner + i0;
#if SM_X86
        if (wide) {
            block_avx512(x + at, y + at, l->axis, l->inner, w, l->log);
            continue;
        }
        if (avx2) {
            block_avx2(x + at, y + at, l->axis, l->inner, w, l->log);
            continue;
        }
#endif
        block_scalar(x + at, y + at, l->axis, l->inner, w, l->log);
    }
    return NULL;
}

tsr_status *odn_softmax_loop(odn_plan *p, const tsr_node *n, int64_t outer, int64_t axis, int64_t inner, bool log,
                             dnnl_memory_t src, dnnl_memory_t dst) {
    softmax_loop *l = odn_plan_alloc(p, sizeof *l);
    if (!l) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    *l = (softmax_loop){outer, axis, inner, log};
    return odn_plan_add_loop(p, run_softmax, l, src, dst, n);
}
