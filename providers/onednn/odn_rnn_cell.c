/* Gate math of LSTM, GRU and RNN cells on 8 float lanes (AVX2+FMA), one
 * batch row at a time, for odn_rnn_seqlens.c's step loop: there the
 * products are our packed GEMMs, so oneDNN's gate kernels are out of reach.
 * Sigmoid and tanh are built on odn_exp8's Cephes expf (2 ulp) and a
 * refined reciprocal, so they match the float64 formulas to a few ulp; a
 * row's last partial block is read and written through lane masks. */
#include "odn_rnn_cell.h"

#include "odn_vexp.h"

#define T ODN_AVX2_TARGET static inline __attribute__((always_inline))

/* Masked loads and stores for a row's last partial block only: on Zen a
 * masked store costs several plain ones (the cell took a fifth of an LSTM
 * step with every access masked). */
T __m256 ld(const float *p, __m256i m) {
    return _mm256_movemask_ps(_mm256_castsi256_ps(m)) == 0xff ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, m);
}
T void st(float *p, __m256i m, __m256 v) {
    if (_mm256_movemask_ps(_mm256_castsi256_ps(m)) == 0xff) _mm256_storeu_ps(p, v);
    else _mm256_maskstore_ps(p, m, v);
}
T __m256i lanes(int64_t left) {
    int n = left < 8 ? (int)left : 8;
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* 1 / d for d in [1, 1 + e^87] (the callers clamp): the reciprocal
 * estimate and one Newton step, within 2 ulp at a fifth of a division's
 * cost; NaN stays NaN */
T __m256 recip(__m256 d) {
    __m256 r = _mm256_rcp_ps(d);
    return _mm256_fmadd_ps(r, _mm256_fnmadd_ps(d, r, _mm256_set1_ps(1.0f)), r);
}

/* e^x here is odn_exp8_in_range, without odn_exp8's edge handling (a
 * fifth of the gate math): the callers clamp. */

/* 1 / (1 + e^-x); past |x| = 87 it is 0 or 1 to float precision.
 * max/min return their second operand for NaN: NaN stays NaN. */
T __m256 sigmoid8(__m256 x) {
    __m256 one = _mm256_set1_ps(1.0f);
    __m256 nx = _mm256_min_ps(_mm256_set1_ps(87.0f),
                              _mm256_max_ps(_mm256_set1_ps(-87.0f), _mm256_sub_ps(_mm256_setzero_ps(), x)));
    return recip(_mm256_add_ps(one, odn_exp8_in_range(nx)));
}

/* (1 - e) / (1 + e) with e = exp(-2|x|), sign restored; below 1/16 the
 * odd Taylor polynomial, where 1 - e would cancel to a few bits. */
T __m256 tanh8(__m256 x) {
    __m256 sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f);
    __m256 ax = _mm256_andnot_ps(sign, x);
    __m256 e = odn_exp8_in_range(_mm256_max_ps(_mm256_set1_ps(-87.0f), _mm256_mul_ps(ax, _mm256_set1_ps(-2.0f))));
    __m256 big = _mm256_mul_ps(_mm256_sub_ps(one, e), recip(_mm256_add_ps(one, e)));
    __m256 x2 = _mm256_mul_ps(ax, ax);
    __m256 q = _mm256_fmadd_ps(x2, _mm256_set1_ps(-17.0f / 315.0f), _mm256_set1_ps(2.0f / 15.0f));
    q = _mm256_fmadd_ps(x2, q, _mm256_set1_ps(-1.0f / 3.0f));
    __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(x2, q), ax, ax);
    __m256 t = _mm256_blendv_ps(big, small, _mm256_cmp_ps(ax, _mm256_set1_ps(0.0625f), _CMP_LT_OQ));
    return _mm256_or_ps(t, _mm256_and_ps(x, sign));
}

/* a + b where both are rows of gates, at gate k's block j */
#define SUM(k) _mm256_add_ps(ld(px + (k)*H + j, m), ld(g + (k)*H + j, m))

ODN_AVX2_TARGET void odn_cell_lstm(int64_t H, const float *px, const float *g, const float *peep, float *h, float *c,
                                   float *y) {
    for (int64_t j = 0; j < H; j += 8) {
        __m256i m = lanes(H - j);
        __m256 xi = SUM(0), xo = SUM(1), xf = SUM(2), xc = SUM(3), cp = ld(c + j, m);
        if (peep) {
            xi = _mm256_fmadd_ps(ld(peep + j, m), cp, xi);
            xf = _mm256_fmadd_ps(ld(peep + 2 * H + j, m), cp, xf);
        }
        __m256 cn = _mm256_fmadd_ps(sigmoid8(xf), cp, _mm256_mul_ps(sigmoid8(xi), tanh8(xc)));
        if (peep) xo = _mm256_fmadd_ps(ld(peep + H + j, m), cn, xo);
        __m256 hn = _mm256_mul_ps(sigmoid8(xo), tanh8(cn));
        st(c + j, m, cn);
        st(h + j, m, hn);
        if (y) st(y + j, m, hn);
    }
}

/* h = (1 - z) hh + z h, as hh + z (h - hh) */
T __m256 blend_state(__m256 z, __m256 hh, __m256 hp) { return _mm256_fmadd_ps(z, _mm256_sub_ps(hp, hh), hh); }

ODN_AVX2_TARGET void odn_cell_gru_lbr(int64_t H, const float *px, const float *g, float *h, float *y) {
    for (int64_t j = 0; j < H; j += 8) {
        __m256i m = lanes(H - j);
        __m256 z = sigmoid8(SUM(0)), r = sigmoid8(SUM(1));
        __m256 hh = tanh8(_mm256_fmadd_ps(r, ld(g + 2 * H + j, m), ld(px + 2 * H + j, m)));
        __m256 hn = blend_state(z, hh, ld(h + j, m));
        st(h + j, m, hn);
        if (y) st(y + j, m, hn);
    }
}

ODN_AVX2_TARGET void odn_cell_gru_zr(int64_t H, const float *px, float *g, const float *h, float *rh) {
    for (int64_t j = 0; j < H; j += 8) {
        __m256i m = lanes(H - j);
        __m256 z = sigmoid8(SUM(0)), r = sigmoid8(SUM(1));
        st(g + j, m, z);
        st(rh + j, m, _mm256_mul_ps(r, ld(h + j, m)));
    }
}

ODN_AVX2_TARGET void odn_cell_gru_h(int64_t H, const float *px, const float *g, const float *gh, float *h, float *y) {
    for (int64_t j = 0; j < H; j += 8) {
        __m256i m = lanes(H - j);
        __m256 hh = tanh8(_mm256_add_ps(ld(px + 2 * H + j, m), ld(gh + j, m)));
        __m256 hn = blend_state(ld(g + j, m), hh, ld(h + j, m));
        st(h + j, m, hn);
        if (y) st(y + j, m, hn);
    }
}

ODN_AVX2_TARGET void odn_cell_rnn(int64_t H, const float *px, const float *g, int act, float *h, float *y) {
    for (int64_t j = 0; j < H; j += 8) {
        __m256i m = lanes(H - j);
        __m256 x = SUM(0);
        /* max returns its second operand for NaN: NaN stays NaN */
        __m256 hn = act == ODN_CELL_RELU ? _mm256_max_ps(_mm256_setzero_ps(), x)
            : act == ODN_CELL_SIGMOID    ? sigmoid8(x)
                                         : tanh8(x);
        st(h + j, m, hn);
        if (y) st(y + j, m, hn);
    }
}
