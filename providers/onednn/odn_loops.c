/* C loops for the unary and reduction steps oneDNN 2.6 offers only
 * its reference kernel for (a reduction over
 * a middle axis, an eltwise on a padded blocked layout or a tiny tensor):
 * plain float32 in and out, the same formulas as oneDNN's JIT kernels'
 * definitions, outer rows shared among the run's OpenMP threads. */
#include <math.h>
#include <string.h>

#include "odn.h"
#include "odn_vexp.h"

/* --- eltwise ---------------------------------------------------------------- */
typedef struct eltwise_loop {
    odn_eltwise el;
    int64_t count;
} eltwise_loop;

static float eltwise_at(const odn_eltwise *e, float x) {
    float a = e->alpha, b = e->beta;
    switch (e->alg) {
    case dnnl_eltwise_relu: return x > 0 ? x : a * x;
    case dnnl_eltwise_elu: return x > 0 ? x : a * expm1f(x);
    case dnnl_eltwise_logistic: return 1.0f / (1.0f + expf(-x));
    case dnnl_eltwise_tanh: return tanhf(x);
    case dnnl_eltwise_log: return logf(x);
    case dnnl_eltwise_exp: return expf(x);
    case dnnl_eltwise_sqrt: return sqrtf(x);
    case dnnl_eltwise_abs: return fabsf(x);
    case dnnl_eltwise_square: return x * x;
    case dnnl_eltwise_linear: return a * x + b;
    case dnnl_eltwise_clip_v2: return x < a ? a : x > b ? b : x;
    case dnnl_eltwise_pow: return b == -1.0f ? a / x : a * powf(x, b); /* Reciprocal: a division, as the JIT */
    case dnnl_eltwise_swish: return x / (1.0f + expf(-a * x));
    case dnnl_eltwise_hardswish: {
        float g = x / 6.0f + 0.5f;
        return x * (g < 0 ? 0 : g > 1 ? 1 : g);
    }
    case dnnl_eltwise_gelu_erf: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    case dnnl_eltwise_gelu_tanh: return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
    default: return NAN;
    }
}

bool odn_eltwise_loop_known(dnnl_alg_kind_t alg) {
    odn_eltwise e = {alg, 0, 0};
    return !isnan(eltwise_at(&e, 1.0f)) || alg == dnnl_eltwise_log;
}

#if defined(__GNUC__) && defined(__x86_64__)
/* Exp over [from, to), 8 at a time (odn_vexp.h: NaN kept); odn_exp8
 * reduces inputs above 88 to 88, so those few (e^88 is near float's top)
 * take expf. */
ODN_AVX2_TARGET static void exp_avx2(const float *x, float *y, int64_t from, int64_t to) {
    int64_t i = from;
    const __m256 top = _mm256_set1_ps(88.0f);
    for (; i + 8 <= to; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        _mm256_storeu_ps(y + i, odn_exp8(v));
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, top, _CMP_GT_OQ)))
            for (int j = 0; j < 8; j++)
                if (x[i + j] > 88.0f) y[i + j] = expf(x[i + j]);
    }
    for (; i < to; i++) y[i] = expf(x[i]);
}
#endif

static tsr_status *run_eltwise(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const eltwise_loop *l = ctx;
    void *px = NULL, *py = NULL;
    dnnl_memory_get_data_handle(src, &px);
    dnnl_memory_get_data_handle(dst, &py);
    const float *x = px;
    float *y = py;
#if defined(__GNUC__) && defined(__x86_64__)
    if (l->el.alg == dnnl_eltwise_exp && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        int64_t chunk = 16384, chunks = (l->count + chunk - 1) / chunk;
#pragma omp parallel for if (l->count > 65536) schedule(static)
        for (int64_t c = 0; c < chunks; c++)
            exp_avx2(x, y, c * chunk, (c + 1) * chunk < l->count ? (c + 1) * chunk : l->count);
        return NULL;
    }
#endif
#pragma omp parallel for if (l->count > 65536) schedule(static)
    for (int64_t i = 0; i < l->count; i++) y[i] = eltwise_at(&l->el, x[i]);
    return NULL;
}

tsr_status *odn_eltwise_loop(odn_plan *p, const tsr_node *n, const odn_eltwise *el, int64_t count, dnnl_memory_t src,
                             dnnl_memory_t dst) {
    eltwise_loop *l = odn_plan_alloc(p, sizeof *l);
    if (!l) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    l->el = *el;
    l->count = count;
    return odn_plan_add_loop(p, run_eltwise, l, src, dst, n);
}

/* --- reductions ------------------------------------------------------------- */
typedef struct reduce_loop {
    dnnl_alg_kind_t alg;
    float p;
    int32_t rank;
    int64_t dims[ODN_MAX_RANK];
    bool reduce[ODN_MAX_RANK];
    double *acc; /* one accumulator per output element, the plan's */
} reduce_loop;

/* acc[i] op= rows[k][i] over `r` rows of `inner` values, the operation
 * chosen once outside the loops (a PointNet's max over 1024 points of an
 * 8-channel block runs rows of 8). */
#define ROWS(expr)                                                                                                     \
    for (int64_t k = 0; k < r; k++) {                                                                                  \
        const float *row = rows + k * inner;                                                                           \
        for (int64_t i = 0; i < inner; i++) acc[i] = (expr);                                                           \
    }
static void accumulate_rows(dnnl_alg_kind_t alg, float p, const float *rows, int64_t r, double *acc, int64_t inner) {
    switch (alg) {
    case dnnl_reduction_mul: ROWS(acc[i] * row[i]) break;
    case dnnl_reduction_max: /* NaN propagates, as in ONNX */
        ROWS(row[i] != row[i] || row[i] > acc[i] ? row[i] : acc[i]) break;
    case dnnl_reduction_min: ROWS(row[i] != row[i] || row[i] < acc[i] ? row[i] : acc[i]) break;
    case dnnl_reduction_norm_lp_sum:
    case dnnl_reduction_norm_lp_power_p_sum:
        if (p == 1) ROWS(acc[i] + fabs((double)row[i]))
        else ROWS(acc[i] + (double)row[i] * row[i])
        break;
    default: ROWS(acc[i] + row[i]) break;
    }
}
#undef ROWS

/* The reduced dims as one run of adjacent dims: the input as [outer, R,
 * inner] rows, each output row accumulated from R input rows (a middle
 * axis, mean pooling over tokens: vectorised over `inner`, where the
 * odometer below takes ~2 ns per element). False when they are not. */
static bool reduce_rows(const reduce_loop *l, const float *x, double *acc, int64_t *outer, int64_t *r, int64_t *inner) {
    int32_t first = -1, last = -1;
    for (int32_t d = 0; d < l->rank; d++) {
        if (!l->reduce[d]) continue;
        if (first >= 0 && last != d - 1) return false;
        if (first < 0) first = d;
        last = d;
    }
    if (first < 0) return false;
    *outer = *r = *inner = 1;
    for (int32_t d = 0; d < l->rank; d++) *(d < first ? outer : d <= last ? r : inner) *= l->dims[d];
#pragma omp parallel for if (*outer * *r * *inner > 65536) schedule(static)
    for (int64_t o = 0; o < *outer; o++)
        accumulate_rows(l->alg, l->p, x + o * *r * *inner, *r, acc + o * *inner, *inner);
    return true;
}

static tsr_status *run_reduce(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const reduce_loop *l = ctx;
    void *px = NULL, *py = NULL;
    dnnl_memory_get_data_handle(src, &px);
    dnnl_memory_get_data_handle(dst, &py);
    const float *x = px;
    float *y = py;
    /* output index of every input element: strides of the kept dims */
    int64_t ostride[ODN_MAX_RANK], out_count = 1, in_count = 1, reduced = 1;
    for (int32_t d = l->rank - 1; d >= 0; d--) {
        ostride[d] = l->reduce[d] ? 0 : out_count;
        if (!l->reduce[d]) out_count *= l->dims[d];
        else reduced *= l->dims[d];
        in_count *= l->dims[d];
    }
    double *acc = l->acc;
    double init = l->alg == dnnl_reduction_mul ? 1.0
        : l->alg == dnnl_reduction_max         ? -INFINITY
        : l->alg == dnnl_reduction_min         ? INFINITY
                                               : 0.0;
    for (int64_t i = 0; i < out_count; i++) acc[i] = init;
    int64_t outer, r, inner, idx[ODN_MAX_RANK] = {0}, o = 0;
    if (reduce_rows(l, x, acc, &outer, &r, &inner)) in_count = 0; /* done by rows */
    for (int64_t i = 0; i < in_count; i++) {
        double v = x[i];
        switch (l->alg) {
        case dnnl_reduction_mul: acc[o] *= v; break;
        case dnnl_reduction_max: acc[o] = v != v || v > acc[o] ? v : acc[o]; break; /* NaN propagates, as in ONNX */
        case dnnl_reduction_min: acc[o] = v != v || v < acc[o] ? v : acc[o]; break;
        case dnnl_reduction_norm_lp_sum:
        case dnnl_reduction_norm_lp_power_p_sum: acc[o] += l->p == 1 ? fabs(v) : v * v; break;
        default: acc[o] += v; break;
        }
        for (int32_t d = l->rank - 1; d >= 0; d--) { /* next index, odometer style */
            o += ostride[d];
            if (++idx[d] < l->dims[d]) break;
            o -= ostride[d] * l->dims[d];
            idx[d] = 0;
        }
    }
    for (int64_t i = 0; i < out_count; i++) {
        double a = acc[i];
        if (l->alg == dnnl_reduction_mean) a /= (double)reduced;
        else if (l->alg == dnnl_reduction_norm_lp_sum && l->p == 2) a = sqrt(a);
        y[i] = (float)a;
    }
    return NULL;
}

tsr_status *odn_reduce_loop(odn_plan *p, const tsr_node *n, dnnl_alg_kind_t alg, float power, int32_t rank,
                            const int64_t *dims, const bool *reduce, dnnl_memory_t src, dnnl_memory_t dst) {
    reduce_loop *l = odn_plan_alloc(p, sizeof *l);
    if (!l) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    l->alg = alg;
    l->p = power;
    l->rank = rank;
    memcpy(l->dims, dims, sizeof(int64_t) * (size_t)rank);
    memcpy(l->reduce, reduce, sizeof(bool) * (size_t)rank);
    size_t outs = 1;
    for (int32_t d = 0; d < rank; d++) outs *= reduce[d] ? 1 : (size_t)dims[d];
    if (!(l->acc = odn_plan_alloc(p, outs * sizeof *l->acc)))
        return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    return odn_plan_add_loop(p, run_reduce, l, src, dst, n);
}
