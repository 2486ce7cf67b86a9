/* Dynamic quantization as ONNX Runtime's quantize_dynamic writes it:
 *
 *     x -> DynamicQuantizeLinear -> MatMulInteger(x_q, W_q) -> Cast(float)
 *       -> Mul(x_scale * W_scale) -> Add(bias)
 *
 * With DynamicQuantizeLinear and Cast claimed here, the whole chain stays
 * in one piece around the int8 matmul (odn_build_quant.c); on the
 * reference provider each of them split the piece and cost more than the
 * matmul itself. DynamicQuantizeLinear is a C loop (oneDNN has no such
 * primitive): the range pass and the quantize pass, each shared among the
 * run's OpenMP threads. Cast from an integer type to float32 (or a widening
 * to int32) is exact and runs as a oneDNN reorder between data types; a
 * Cast between float32 and float16 rounds to float16 in a C loop. */
#include <omp.h>
#include <string.h>

#include "odn_quant.h"

static bool is_int_source(int32_t t) { return t == TSR_INT32 || t == TSR_INT8 || t == TSR_UINT8; }

static int check_symbolic_rank(const tsr_value_info *v, char *why, size_t size) {
    int32_t r = odn_host->value_rank(v);
    if (r < 0) return odn_decline(why, size, TSR_DECLINE_SHAPE, "input rank unknown");
    if (r > ODN_MAX_RANK) return odn_decline(why, size, TSR_DECLINE_SHAPE, "rank above %d", ODN_MAX_RANK);
    for (int32_t d = 0; d < r; d++)
        if (odn_host->value_dim(v, d) == 0) return odn_decline(why, size, TSR_DECLINE_SHAPE, "empty tensor");
    return 0;
}

int odn_dynquant_check(const tsr_node *n, char *why, size_t size) {
    const char *op = odn_host->node_op_type(n);
    size_t nin = odn_host->node_input_count(n), nout = odn_host->node_output_count(n);
    const tsr_value_info *x = nin ? odn_host->node_input(n, 0) : NULL;
    if (!x) return odn_decline(why, size, TSR_DECLINE_OTHER, "input missing");
    int32_t tx = odn_host->value_elem_type(x);
    if (strcmp(op, "DynamicQuantizeLinear") == 0) {
        if (tx != TSR_FLOAT) return odn_decline(why, size, TSR_DECLINE_TYPE, "x of type %d (float32 mapped)", (int)tx);
        if (nout != 3) return odn_decline(why, size, TSR_DECLINE_OTHER, "%zu outputs (all three mapped)", nout);
        static const int32_t want[3] = {TSR_UINT8, TSR_FLOAT, TSR_UINT8};
        for (size_t k = 0; k < 3; k++) {
            const tsr_value_info *y = odn_host->node_output(n, k);
            if (!y) return odn_decline(why, size, TSR_DECLINE_OTHER, "output %zu omitted (all three mapped)", k);
            if (odn_host->value_elem_type(y) != want[k])
                return odn_decline(why, size, TSR_DECLINE_TYPE, "output %zu of type %d", k,
                                   (int)odn_host->value_elem_type(y));
        }
        return check_symbolic_rank(x, why, size);
    }
    /* Cast: the exact conversions (oneDNN's reorder rounds and saturates
     * float -> int, where ONNX truncates), float32 <-> float16 (mixed
     * precision exports put one around every op kept in float32), and
     * float32 to float32 (torch's `.to(torch.float32)` in LLaMA-style
     * RMSNorms, exported even on float32 models: a view) */
    int64_t to = odn_attr_int(n, "to", 0);
    bool exact = is_int_source(tx) && (to == TSR_FLOAT || (to == TSR_INT32 && tx != TSR_INT32));
    bool halves = (tx == TSR_FLOAT && to == TSR_FLOAT16) || (tx == TSR_FLOAT16 && to == TSR_FLOAT);
    if (!exact && !halves && !(tx == TSR_FLOAT && to == TSR_FLOAT))
        return odn_decline(why, size, TSR_DECLINE_TYPE,
                           "Cast from type %d to %lld (integer to float32, float32 <-> float16, float32 to "
                           "float32 mapped)",
                           (int)tx, (long long)to);
    const tsr_value_info *y = nout ? odn_host->node_output(n, 0) : NULL;
    if (!y || odn_host->value_elem_type(y) != to)
        return odn_decline(why, size, TSR_DECLINE_TYPE, "output type differs from 'to'");
    return check_symbolic_rank(x, why, size);
}

/* --- DynamicQuantizeLinear ----------------------------------------------------- */

typedef struct dql_loop {
    int64_t count;
    dnnl_memory_t scale, zero_point;
} dql_loop;

/* The two passes' inner loops, compiled for AVX-512 and AVX2 as well as
 * the baseline ISA and picked at load time: at SSE2 they took a sixth of a
 * quantized DistilBERT's run. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define DQL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define DQL_CLONES
#endif

/* min and max of x[0..n) and of the values in lo and hi; NaNs compare false and are
 * skipped, as the reference provider does */
DQL_CLONES static void range_of(const float *x, int64_t n, float *lo, float *hi) {
    float l = *lo, h = *hi;
#pragma omp simd reduction(min : l) reduction(max : h)
    for (int64_t i = 0; i < n; i++) {
        l = x[i] < l ? x[i] : l;
        h = x[i] > h ? x[i] : h;
    }
    *lo = l;
    *hi = h;
}

/* y = saturate(round_half_even(x / scale) + zp). Beyond +-512 the result
 * saturates anyway, so the quotient is clamped there first and rounded by
 * the 1.5 * 2^23 trick (exact in the default rounding mode for |q| <=
 * 2^22; nearbyintf is a libm call at the baseline ISA); NaN quantizes as 0. */
static void quantize_scalar(const float *x, int64_t n, float scale, float zp, uint8_t *y) {
    const float magic = 12582912.0f;
    for (int64_t i = 0; i < n; i++) {
        float q = x[i] / scale;
        q = q != q ? 0.0f : q < -512.0f ? -512.0f : q > 512.0f ? 512.0f : q;
        q = ((q + magic) - magic) + zp;
        y[i] = (uint8_t)(q < 0.0f ? 0.0f : q > 255.0f ? 255.0f : q);
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* The same, 16 at a time (GCC leaves the scalar loop's compares
 * unvectorized: they may trap). */
__attribute__((target("avx512f"))) static void quantize_avx512(const float *x, int64_t n, float scale, float zp,
                                                               uint8_t *y) {
    const __m512 vs = _mm512_set1_ps(scale), vz = _mm512_set1_ps(zp), lo = _mm512_set1_ps(-512.0f),
                 hi = _mm512_set1_ps(512.0f), zero = _mm512_setzero_ps(), top = _mm512_set1_ps(255.0f);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 q = _mm512_div_ps(_mm512_loadu_ps(x + i), vs);
        q = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(q, q, _CMP_ORD_Q), q); /* NaN -> 0 */
        q = _mm512_min_ps(_mm512_max_ps(q, lo), hi);
        q = _mm512_roundscale_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        q = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(q, vz), zero), top);
        _mm_storeu_si128((__m128i *)(void *)(y + i), _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(q)));
    }
    quantize_scalar(x + i, n - i, scale, zp, y + i);
}

/* The same, 8 at a time. */
__attribute__((target("avx2"))) static void quantize_avx2(const float *x, int64_t n, float scale, float zp,
                                                          uint8_t *y) {
    const __m256 vs = _mm256_set1_ps(scale), vz = _mm256_set1_ps(zp), lo = _mm256_set1_ps(-512.0f),
                 hi = _mm256_set1_ps(512.0f), zero = _mm256_setzero_ps(), top = _mm256_set1_ps(255.0f);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 q = _mm256_div_ps(_mm256_loadu_ps(x + i), vs);
        q = _mm256_and_ps(q, _mm256_cmp_ps(q, q, _CMP_ORD_Q)); /* NaN -> 0 */
        q = _mm256_min_ps(_mm256_max_ps(q, lo), hi);
        q = _mm256_round_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        q = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(q, vz), zero), top);
        /* 0..255 in each int32 lane: pack to 16 then 8 bits, lanes in order */
        __m256i v = _mm256_cvttps_epi32(q);
        __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
        _mm_storel_epi64((__m128i *)(void *)(y + i), _mm_packus_epi16(w, w));
    }
    quantize_scalar(x + i, n - i, scale, zp, y + i);
}
#endif

static void quantize(const float *x, int64_t n, float scale, float zp, uint8_t *y) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx512f")) {
        quantize_avx512(x, n, scale, zp, y);
        return;
    }
    if (__builtin_cpu_supports("avx2")) {
        quantize_avx2(x, n, scale, zp, y);
        return;
    }
#endif
    quantize_scalar(x, n, scale, zp, y);
}

/* [lo, hi) of the elements thread t of nt takes */
static void share(int64_t count, int t, int nt, int64_t *lo, int64_t *hi) {
    *lo = count * t / nt;
    *hi = count * (t + 1) / nt;
}

static tsr_status *run_dql(const void *vctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const dql_loop *l = vctx;
    const float *x = odn_q_handle(src);
    uint8_t *y = odn_q_handle(dst);
    float *scale_out = odn_q_handle(l->scale);
    uint8_t *zp_out = odn_q_handle(l->zero_point);
    if ((!x || !y) && l->count) return odn_host->status_new(TSR_ERR_PROVIDER, "onednn: DynamicQuantizeLinear memory");
    if (!scale_out || !zp_out) return odn_host->status_new(TSR_ERR_PROVIDER, "onednn: DynamicQuantizeLinear memory");
    int64_t count = l->count;
    float lo = 0.0f, hi = 0.0f; /* the range always holds 0 */
#pragma omp parallel if (count > 65536)
    {
        int64_t a, b;
        share(count, omp_get_thread_num(), omp_get_num_threads(), &a, &b);
        float tl = 0.0f, th = 0.0f;
        range_of(x + a, b - a, &tl, &th);
#pragma omp critical
        {
            lo = tl < lo ? tl : lo;
            hi = th > hi ? th : hi;
        }
    }
    float scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
    float zpf = 0.0f - lo / scale;
    if (!(zpf >= 0.0f)) zpf = 0.0f;
    if (zpf > 255.0f) zpf = 255.0f;
    float zp = (zpf + 12582912.0f) - 12582912.0f; /* half to even, as in quantize() */
#pragma omp parallel if (count > 65536)
    {
        int64_t a, b;
        share(count, omp_get_thread_num(), omp_get_num_threads(), &a, &b);
        quantize(x + a, b - a, scale, zp, y + a);
    }
    *scale_out = scale;
    *zp_out = (uint8_t)zp;
    return NULL;
}

tsr_status *odn_build_dynquant(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *vx = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *vy = odn_plan_value(p, odn_host->node_output(n, 0));
    odn_value *vs = odn_plan_value(p, odn_host->node_output(n, 1));
    odn_value *vz = odn_plan_value(p, odn_host->node_output(n, 2));
    if (!vx || !vy || !vs || !vz || !vx->produced)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: DynamicQuantizeLinear values not ready");
    dnnl_memory_t x_mem;
    tsr_status *s = odn_plan_plain_mem(p, vx, n, &x_mem);
    int64_t scalar_dims[1] = {1};
    if (!s) s = odn_plan_define(p, vy, vx->rank, vx->dims, NULL, n);
    if (!s) s = odn_plan_define(p, vs, 0, scalar_dims, NULL, n);
    if (!s) s = odn_plan_define(p, vz, 0, scalar_dims, NULL, n);
    if (s) return s;
    dql_loop *l = odn_plan_alloc(p, sizeof *l);
    if (!l) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    l->count = odn_numel(vx->rank, vx->dims);
    l->scale = vs->mem;
    l->zero_point = vz->mem;
    dnnl_exec_arg_t args[4] = {
        {DNNL_ARG_SRC, x_mem}, {DNNL_ARG_DST, vy->mem}, {DNNL_ARG_DST_1, vs->mem}, {DNNL_ARG_DST_2, vz->mem}};
    return odn_plan_add_loop_args(p, run_dql, l, args, 4, n);
}

/* --- Cast ---------------------------------------------------------------------- */

/* float32 <-> float16: both sides are float32 in the plan (odn_f16.c), so
 * the Cast rounds to the nearest float16 value, kept as float32: what the
 * model's float16 value holds, whichever way the Cast goes. */
typedef struct half_round {
    int64_t count;
} half_round;

static tsr_status *run_half_round(const void *vctx, dnnl_memory_t src, dnnl_memory_t dst) {
    int64_t count = ((const half_round *)vctx)->count;
    const float *x = odn_q_handle(src);
    float *y = odn_q_handle(dst);
    if (count && (!x || !y)) return odn_host->status_new(TSR_ERR_PROVIDER, "onednn: Cast memory");
#pragma omp parallel for if (count > 65536) schedule(static)
    for (int64_t i0 = 0; i0 < count; i0 += 1024) {
        uint16_t half[1024];
        int64_t k = count - i0 < 1024 ? count - i0 : 1024;
        odn_f32_to_f16(x + i0, half, k);
        odn_f16_to_f32(half, y + i0, k);
    }
    return NULL;
}

tsr_status *odn_build_cast(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    if (odn_host->value_elem_type(odn_host->node_input(n, 0)) == TSR_FLOAT && odn_attr_int(n, "to", 0) == TSR_FLOAT)
        return odn_build_reshape(p, index); /* as Identity: a view */
    odn_value *vx = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *vy = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!vx || !vy || !vx->produced) return odn_node_error(n, TSR_ERR_PROVIDER, "internal: Cast values not ready");
    dnnl_memory_t x_mem;
    dnnl_memory_desc_t x_md;
    tsr_status *s = odn_plan_plain_view(p, vx, vx->rank, vx->dims, NULL, n, &x_mem, &x_md);
    if (!s) s = odn_plan_define(p, vy, vx->rank, vx->dims, NULL, n);
    if (s) return s;
    int32_t tx = odn_host->value_elem_type(odn_host->node_input(n, 0));
    if (tx == TSR_FLOAT || tx == TSR_FLOAT16) {
        half_round *l = odn_plan_alloc(p, sizeof *l);
        if (!l) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
        l->count = odn_numel(vx->rank, vx->dims);
        return odn_plan_add_loop(p, run_half_round, l, x_mem, vy->mem, n);
    }
    return odn_plan_add_reorder(p, x_mem, &x_md, vy->mem, &vy->md, n);
}
