/* QLinearConv and QLinearMatMul on a CPU without VNNI (odn_int8_exact
 * false), beside ConvInteger/MatMulInteger's float paths
 * (odn_build_convint.c, odn_build_intgemm.c): the float convolution or
 * GEMM of (x - zx) by the constant (w - zw) gives the integer accumulator,
 * and a C loop adds the int32 bias and requantizes as ONNX and the
 * reference provider do: y = saturate(round_half_even(acc * mul) + zy),
 * mul = (sx * sw[c] rounded to the scales' type) / sy rounded again.
 *
 * The accumulator is exact when every partial sum is an integer below
 * 2^24 in magnitude, in whatever order oneDNN or the packed GEMM adds
 * (direct convolution and GEMM: every intermediate is the sum of a subset
 * of the products). With x - zx in [lo, hi], lo <= 0 <= hi, hi - lo = 255
 * (zx is a value of x's 8-bit type), a subset sum is at most hi * P +
 * |lo| * N <= 255 * max(P, N) in magnitude, P and N the sums of the
 * channel's positive and negative (w - zw): exact when 255 * max(P, N) is
 * below 2^24, whatever zx (a bound of 255 * (P + N) split a ResNet's
 * 256-channel 3x3 convolutions in two passes for nothing). When a
 * channel's bound is too large, the weights are split
 * into (w - zw) = 16 * hi + lo, lo in [0, 15], as twice the output
 * channels (hi then lo in each group; each bounded alike), and the loop
 * adds 16 * hi + lo exactly in double. Weights whose split is still too
 * large are declined (odn_qlin_passes). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "odn_qop.h"
#include "odn_quant.h"

#if ODN_QOP_X86
#include <immintrin.h>
/* The loop below, 8 outputs at a time in double as the scalar one: v =
 * 16 * hi + lo (split) or acc, q = (v + bias) * mul, round half to even,
 * + zy, NaN as 0, saturated. Returns how many it wrote (a multiple of 8). */
ODN_QOP_AVX2 static int64_t requant_avx2(const float *a, const float *b, int64_t n, double bias, double mul, double zy,
                                         bool s8, void *y) {
    const __m256d vb = _mm256_set1_pd(bias), vm = _mm256_set1_pd(mul), vz = _mm256_set1_pd(zy),
                  lo = _mm256_set1_pd(s8 ? -128.0 : 0.0), hi = _mm256_set1_pd(s8 ? 127.0 : 255.0),
                  sixteen = _mm256_set1_pd(16.0);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 fa = _mm256_loadu_ps(a + i);
        __m256d d[2] = {_mm256_cvtps_pd(_mm256_castps256_ps128(fa)), _mm256_cvtps_pd(_mm256_extractf128_ps(fa, 1))};
        if (b) {
            __m256 fb = _mm256_loadu_ps(b + i);
            d[0] = _mm256_add_pd(_mm256_mul_pd(sixteen, d[0]), _mm256_cvtps_pd(_mm256_castps256_ps128(fb)));
            d[1] = _mm256_add_pd(_mm256_mul_pd(sixteen, d[1]), _mm256_cvtps_pd(_mm256_extractf128_ps(fb, 1)));
        }
        __m128i q[2];
        for (int h = 0; h < 2; h++) {
            __m256d v = _mm256_mul_pd(_mm256_add_pd(d[h], vb), vm);
            __m256d ord = _mm256_cmp_pd(v, v, _CMP_ORD_Q);
            v = _mm256_add_pd(_mm256_round_pd(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), vz);
            v = _mm256_and_pd(v, ord);
            q[h] = _mm256_cvttpd_epi32(_mm256_min_pd(_mm256_max_pd(v, lo), hi));
        }
        __m128i w = _mm_packs_epi32(q[0], q[1]);
        _mm_storel_epi64((__m128i *)((uint8_t *)y + i), s8 ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w));
    }
    return i;
}
#endif

#define QLIN_LIMIT 16777216.0 /* 2^24 */

/* Centered weight (w - zw) of element i in output channel c. */
static int32_t centered(const tsr_tensor *w, const tsr_tensor *zw, size_t i, int64_t c) {
    bool u8 = w->elem_type == TSR_UINT8;
    int64_t zi = zw && zw->rank == 1 && zw->dims[0] > 1 ? c : 0;
    int32_t z = !zw ? 0 : u8 ? ((const uint8_t *)zw->data)[zi] : ((const int8_t *)zw->data)[zi];
    return (u8 ? ((const uint8_t *)w->data)[i] : ((const int8_t *)w->data)[i]) - z;
}

int32_t odn_qlin_split_lo(int32_t v) { return v & 15; }

int odn_qlin_passes(const tsr_tensor *w, const tsr_tensor *zw, bool conv) {
    if (!w || !w->data || w->rank < 2) return 0;
    int64_t channels = conv ? w->dims[0] : w->dims[w->rank - 1];
    int64_t count = odn_numel(w->rank, w->dims), depth = channels ? count / channels : 0;
    bool split = false;
    for (int64_t c = 0; c < channels; c++) {
        double pos = 0, neg = 0, hpos = 0, hneg = 0, lo = 0; /* lo >= 0 */
        for (int64_t k = 0; k < depth; k++) {
            size_t i = (size_t)(conv ? c * depth + k : k * channels + c);
            int32_t v = centered(w, zw, i, c), l = odn_qlin_split_lo(v), h = (v - l) / 16;
            if (v > 0) pos += v;
            else neg -= v;
            if (h > 0) hpos += h;
            else hneg -= h;
            lo += l;
        }
        if (255.0 * fmax(pos, neg) >= QLIN_LIMIT) {
            if (255.0 * fmax(hpos, hneg) >= QLIN_LIMIT || 255.0 * lo >= QLIN_LIMIT) return 0;
            split = true;
        }
    }
    return split ? 2 : 1;
}

/* The requantizing loop: acc holds (outer, channels * passes, inner) floats,
 * the channels of each group as hi then lo when split. */
typedef struct qlin_requant {
    int64_t outer, channels, inner, per_group;
    int passes;
    int32_t y_type, scale_type, sw_type, sw_count;
    dnnl_memory_t sx, sw, sy, zy, bias;
    const tsr_node *node;
} qlin_requant;

static tsr_status *requant_run(const void *vctx, dnnl_memory_t acc_mem, dnnl_memory_t y_mem) {
    const qlin_requant *c = vctx;
    const float *acc = odn_q_handle(acc_mem);
    void *y = odn_q_handle(y_mem);
    if (!acc || !y) return odn_node_error(c->node, TSR_ERR_PROVIDER, "internal: requantize memory");
    double zy = odn_q_value(c->zy, c->y_type, 0);
    double sx = odn_q_value(c->sx, c->scale_type, 0), sy = odn_q_value(c->sy, c->scale_type, 0);
    int64_t wide = c->channels * c->passes, pg = c->per_group;
    ptrdiff_t jobs = (ptrdiff_t)(c->outer * c->channels);
    bool avx2 = odn_qop_avx2();
    (void)avx2;
#pragma omp parallel for if (jobs * c->inner > 65536) schedule(static)
    for (ptrdiff_t job = 0; job < jobs; job++) {
        int64_t o = job / c->channels, m = job % c->channels;
        double sw = odn_q_value(c->sw, c->sw_type, c->sw_count == 1 ? 0 : (size_t)m);
        double mul = odn_q_round_prec(c->scale_type, odn_q_round_prec(c->scale_type, sx * sw) / sy);
        double bias = odn_q_value(c->bias, TSR_INT32, (size_t)m);
        int64_t hi = c->passes == 2 ? (m / pg) * 2 * pg + m % pg : m;
        const float *a = acc + (size_t)((o * wide + hi) * c->inner);
        const float *b = a + (size_t)(pg * c->inner);
        size_t base = (size_t)((o * c->channels + m) * c->inner);
        int64_t i = 0;
#if ODN_QOP_X86
        if (avx2)
            i = requant_avx2(a, c->passes == 2 ? b : NULL, c->inner, bias, mul, zy, c->y_type == TSR_INT8,
                             (uint8_t *)y + base);
#endif
        for (; i < c->inner; i++) {
            double v = c->passes == 2 ? 16.0 * (double)a[i] + (double)b[i] : (double)a[i];
            odn_q_store(c->y_type, y, base + (size_t)i, (v + bias) * mul, zy);
        }
    }
    return NULL;
}

tsr_status *odn_qlin_requant_step(odn_plan *p, const tsr_node *n, bool conv, int64_t outer, int64_t channels,
                                  int64_t inner, int64_t per_group, int passes, dnnl_memory_t acc, odn_value *vy) {
    qlin_requant *c = odn_plan_alloc(p, sizeof *c);
    if (!c) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    *c = (qlin_requant){.outer = outer,
                        .channels = channels,
                        .inner = inner,
                        .per_group = per_group,
                        .passes = passes,
                        .y_type = vy->elem_type,
                        .node = n};
    int32_t t;
    tsr_status *s = odn_q_input(p, n, 1, &c->sx, &c->scale_type);
    if (!s) s = odn_q_input(p, n, 4, &c->sw, &c->sw_type);
    if (!s) s = odn_q_input(p, n, 6, &c->sy, &t);
    if (!s) s = odn_q_input(p, n, 7, &c->zy, &t);
    if (!s && conv) s = odn_q_input(p, n, 8, &c->bias, &t);
    if (s) return s;
    odn_value *vs = odn_plan_value(p, odn_host->node_input(n, 4));
    c->sw_count = vs ? (int32_t)odn_numel(vs->rank, vs->dims) : 1;
    if (vy->md.data_type != odn_dnnl_type(c->y_type))
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: output type");
    const dnnl_memory_t reads[] = {c->sx, c->sw, c->sy, c->zy, c->bias};
    return odn_plan_add_loop_reading(p, requant_run, c, acc, vy->mem, reads, sizeof reads / sizeof *reads, n);
}

bool odn_qlin_int8_ok(const odn_plan *p, const tsr_node *n) {
    (void)n;
    /* without VNNI the claim took QLinearConv/QLinearMatMul for the float
     * path whatever the plan (int8_saturation, 7-bit weights elsewhere) */
    return p->int8_primitives && odn_int8_exact();
}
