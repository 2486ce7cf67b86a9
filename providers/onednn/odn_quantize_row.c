/* QuantizeLinear's inner loop on AVX2 for the standalone loop of
 * odn_build_qdq.c (a QDQ model's input, 150K values in a MobileNet): gcc
 * kept that loop scalar (a division, compares and branches per value, 2.4%
 * of a QDQ MobileNetV1 at 1 thread). Bit for bit the scalar loop's result:
 * x / scale divided in float32 as ONNX does, rounded half to even, plus the
 * zero point, saturated; NaN gives the zero point. */
#include <immintrin.h>
#include <string.h>

#include "odn_quant.h"

bool odn_quantize_row_supported(void) { return __builtin_cpu_supports("avx2"); }

/* 8 values: rint(x / s) + z clamped to [lo, hi], as int32. */
__attribute__((target("avx2"))) static inline __m256i quant8(const float *x, __m256 s, __m256 z, __m256 lo,
                                                             __m256 hi) {
    __m256 v = _mm256_div_ps(_mm256_loadu_ps(x), s);
    v = _mm256_andnot_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q), v); /* NaN: 0 */
    v = _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    /* past +-2^22 the clamp decides alone, as the scalar loop's */
    v = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(v, z), lo), hi);
    return _mm256_cvtps_epi32(v);
}

/* Whole groups of 8 of the n values into y (uint8 or int8); returns how
 * many were done (the caller finishes the rest). */
__attribute__((target("avx2"))) size_t odn_quantize_row(const float *x, size_t n, float scale, float zp, bool u8,
                                                         void *y) {
    const __m256 s = _mm256_set1_ps(scale), z = _mm256_set1_ps(zp), lo = _mm256_set1_ps(u8 ? 0.0f : -128.0f),
                 hi = _mm256_set1_ps(u8 ? 255.0f : 127.0f);
    uint8_t *out = y;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i q = quant8(x + i, s, z, lo, hi);
        __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
        _mm_storel_epi64((__m128i *)(out + i), u8 ? _mm_packus_epi16(w, w) : _mm_packs_epi16(w, w));
    }
    return i;
}
