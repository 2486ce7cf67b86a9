/* erf on 8 float lanes for the provider's Erf step (an Erf that is not
 * part of a Gelu it fuses): glibc's erff, one call per element, took 23%
 * of a float16 ConvNeXt's run before its Gelu fused; over 1M values in
 * [-4, 4] it takes 50 ns per element here, this loop 1.0 (Zen3, 1 thread).
 *
 * Two minimax fits (Lawson-weighted least squares in double, relative
 * error), both evaluated for every lane and blended:
 *   |x| < 0.921875:  erf(x) = x + x P(x^2), P of degree 6 (fit error
 *                    4e-10; 2/sqrt(pi) - 1 as P's constant term, since
 *                    1.128... itself rounds to 3e-8 in float);
 *   above:           erf(x) = 1 - e^(-x^2) R(t), t = 1 / (1 + |x|/2), R of
 *                    degree 8 (fit error 2e-10), |x| clamped to 4, beyond
 *                    which erf rounds to 1 in float.
 * e^(-x^2) is odn_vexp.h's exp of the rounded square, corrected by the
 * square's rounding error (an FMA gives it exactly): without it x^2's
 * rounding alone is 16 ulp of e^(-x^2) at |x| = 4. The result is within
 * 1.4 ulp of double erf over every float of [-6, 6] (check/erf.c `all`);
 * glibc's erff is within 1. */
#include "odn_erf.h"

#include <math.h>

#include "odn_vexp.h"

#if defined(__GNUC__) && defined(__x86_64__)
static inline __attribute__((always_inline)) ODN_AVX2_TARGET __m256 small_erf8(__m256 x) {
    __m256 z = _mm256_mul_ps(x, x);
    __m256 p = _mm256_set1_ps(8.370173600e-05f);
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-8.142724982e-04f));
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(5.201034714e-03f));
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-2.685939893e-02f));
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(1.128369570e-01f));
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-3.761263490e-01f));
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(1.283791666e-01f));
    return _mm256_fmadd_ps(x, p, x);
}

/* erf(a) for a = |x| >= 0.921875 (clamped to 4 here) */
static inline __attribute__((always_inline)) ODN_AVX2_TARGET __m256 large_erf8(__m256 a) {
    a = _mm256_min_ps(a, _mm256_set1_ps(4.0f));
    __m256 t = _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_fmadd_ps(a, _mm256_set1_ps(0.5f), _mm256_set1_ps(1.0f)));
    __m256 r = _mm256_set1_ps(1.096327789e-02f);
    r = _mm256_fmadd_ps(r, t, _mm256_set1_ps(7.587001473e-02f));
    r = _mm256_fmadd_ps(r, t, _mm256_set1_ps(-3.964757323e-01f));
    r = _mm256_fmadd_ps(r, t, _mm256_set1_ps(4.905841053e-01f));
    r = _mm256_fmadd_ps(r, t, _mm256_set1_ps(-5.984570831e-02f));
    r = _mm256_fmadd_ps(r, t, _mm256_set1_ps(3.310965598e-01f));
    r = _mm256_fmadd_ps(r, t, _mm256_set1_ps(2.636362314e-01f));
    r = _mm256_fmadd_ps(r, t, _mm256_set1_ps(2.843840718e-01f));
    r = _mm256_fmadd_ps(r, t, _mm256_set1_ps(-1.235146628e-04f));
    __m256 hi = _mm256_mul_ps(a, a), lo = _mm256_fmsub_ps(a, a, hi); /* a^2 = hi + lo exactly */
    __m256 e = odn_exp8_in_range(_mm256_sub_ps(_mm256_setzero_ps(), hi));
    e = _mm256_fnmadd_ps(e, lo, e); /* e^(-hi - lo) = e^(-hi) (1 - lo) */
    return _mm256_fnmadd_ps(e, r, _mm256_set1_ps(1.0f));
}

static inline __attribute__((always_inline)) ODN_AVX2_TARGET __m256 erf8(__m256 v) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 a = _mm256_andnot_ps(sign, v);
    __m256 big = _mm256_or_ps(large_erf8(a), _mm256_and_ps(v, sign));
    __m256 r = _mm256_blendv_ps(small_erf8(v), big, _mm256_cmp_ps(a, _mm256_set1_ps(0.921875f), _CMP_GE_OQ));
    return _mm256_blendv_ps(r, v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q)); /* NaN stays NaN */
}

static ODN_AVX2_TARGET void erf_avx2(const float *x, float *y, int64_t count) {
    int64_t i = 0;
    for (; i + 8 <= count; i += 8) _mm256_storeu_ps(y + i, erf8(_mm256_loadu_ps(x + i)));
    if (i == count) return;
    /* the tail through a full vector, zeros past its end */
    float tmp[8] = {0};
    for (int64_t j = i; j < count; j++) tmp[j - i] = x[j];
    _mm256_storeu_ps(tmp, erf8(_mm256_loadu_ps(tmp)));
    for (int64_t j = i; j < count; j++) y[j] = tmp[j - i];
}
#endif

void odn_erf(const float *x, float *y, int64_t count) {
#if defined(__GNUC__) && defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        erf_avx2(x, y, count);
        return;
    }
#endif
    for (int64_t i = 0; i < count; i++) y[i] = erff(x[i]);
}
