/* e^x on 8 float lanes (AVX2+FMA) and 16 (AVX-512) for the provider's C
 * loops (softmax, tanh-GELU): Cephes' expf range reduction and polynomial,
 * within 2 ulp, as oneDNN's and ONNX Runtime's kernels compute it. NaN
 * stays NaN; below -87.3 (where e^x leaves float's normal range) exactly
 * 0. Callers compile with the ISA enabled on the calling function. */
#ifndef TESSERA_ODN_VEXP_H
#define TESSERA_ODN_VEXP_H

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>

#define ODN_AVX2_TARGET __attribute__((target("avx2,fma")))
#define ODN_AVX512_TARGET __attribute__((target("avx512f")))

/* The range reduction x = n ln2 + r (ln2 in two parts) and the
 * polynomial's coefficients, highest first. */
#define ODN_EXP_LOG2E 1.44269504088896341f
#define ODN_EXP_LN2_HI 0.693359375f
#define ODN_EXP_LN2_LO -2.12194440e-4f
#define ODN_EXP_P0 1.9875691500e-4f
#define ODN_EXP_P1 1.3981999507e-3f
#define ODN_EXP_P2 8.3334519073e-3f
#define ODN_EXP_P3 4.1665795894e-2f
#define ODN_EXP_P4 1.6666665459e-1f
#define ODN_EXP_P5 5.0000001201e-1f

/* 8 lanes of x in [-87, 88], no edge handling (NaN passes through): for
 * callers that clamp themselves (the recurrent gates, odn_rnn_cell.c). */
static inline __attribute__((always_inline)) ODN_AVX2_TARGET __m256 odn_exp8_in_range(__m256 t) {
    __m256 n =
        _mm256_round_ps(_mm256_mul_ps(t, _mm256_set1_ps(ODN_EXP_LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(ODN_EXP_LN2_HI), t);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(ODN_EXP_LN2_LO), r);
    __m256 q = _mm256_set1_ps(ODN_EXP_P0);
    q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(ODN_EXP_P1));
    q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(ODN_EXP_P2));
    q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(ODN_EXP_P3));
    q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(ODN_EXP_P4));
    q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(ODN_EXP_P5));
    q = _mm256_fmadd_ps(_mm256_mul_ps(q, r), r, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(q, _mm256_castsi256_ps(bits));
}

/* 8 lanes; above 88.7 +inf. */
static inline __attribute__((always_inline)) ODN_AVX2_TARGET __m256 odn_exp8(__m256 x) {
    __m256 t = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.0f)), _mm256_set1_ps(88.0f));
    __m256 e = odn_exp8_in_range(t);
    e = _mm256_and_ps(e, _mm256_cmp_ps(x, _mm256_set1_ps(-87.3f), _CMP_GE_OQ));
    e = _mm256_blendv_ps(e, _mm256_set1_ps(__builtin_inff()), _mm256_cmp_ps(x, _mm256_set1_ps(88.72f), _CMP_GT_OQ));
    return _mm256_blendv_ps(e, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

/* 16 lanes, for inputs at most 0 (softmax's shifted ones). */
static inline __attribute__((always_inline)) ODN_AVX512_TARGET __m512 odn_exp16(__m512 x) {
    __m512 t = _mm512_max_ps(x, _mm512_set1_ps(-87.0f));
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(t, _mm512_set1_ps(ODN_EXP_LOG2E)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(ODN_EXP_LN2_HI), t);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(ODN_EXP_LN2_LO), r);
    __m512 q = _mm512_set1_ps(ODN_EXP_P0);
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(ODN_EXP_P1));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(ODN_EXP_P2));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(ODN_EXP_P3));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(ODN_EXP_P4));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(ODN_EXP_P5));
    q = _mm512_fmadd_ps(_mm512_mul_ps(q, r), r, _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    __m512i bits = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
    __m512 e = _mm512_mul_ps(q, _mm512_castsi512_ps(bits));
    e = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.3f), _CMP_GE_OQ), e);
    return _mm512_mask_mov_ps(e, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}
#endif

#endif
