/* Recognising RMSNorm written out in primitive ops, as torch exports HF T5's
 * T5LayerNorm and LLaMA/Mistral/Gemma-style RMSNorm:
 *     v = ReduceMean(x ^ 2 or x * x, last axis, keepdims)
 *     r = Sqrt(v + eps)
 *     y = x / r   or   y = x * Reciprocal(r)
 *     [Cast to float32 (a no-op here)]  [y = y * gamma, either order]
 * so it runs as one C loop over rows instead of five to seven oneDNN steps
 * (a reduction, eltwises, and binaries broadcasting [N,T,1] against [N,T,C],
 * for which oneDNN has no JIT kernel). Each step rounds as the graph does:
 * the sum of squares in float (eight-lane partial sums, as vectorised
 * reductions add), divided by the row length, plus eps, sqrtf, then a
 * division (or a multiplication by 1/r where the graph has Reciprocal) and
 * the gamma product. Intermediates something else reads end the pattern
 * (nothing fused) except y before gamma, where gamma is then left out. */
#include <math.h>
#include <string.h>

#include "odn.h"
#include "odn_quant.h"
#include "odn_vexp.h"

typedef struct rmsnorm_loop {
    int64_t rows, cols;
    float eps;
    bool reciprocal;     /* x * (1 / r) rather than x / r */
    dnnl_memory_t gamma; /* cols floats, or NULL */
} rmsnorm_loop;

/* --- the loop ------------------------------------------------------------- */
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define RMS_X86 1

ODN_AVX2_TARGET static float sum_squares_avx2(const float *x, int64_t n) {
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 u = _mm256_loadu_ps(x + i), w = _mm256_loadu_ps(x + i + 8);
        a0 = _mm256_add_ps(a0, _mm256_mul_ps(u, u));
        a1 = _mm256_add_ps(a1, _mm256_mul_ps(w, w));
    }
    if (i + 8 <= n) {
        __m256 u = _mm256_loadu_ps(x + i);
        a0 = _mm256_add_ps(a0, _mm256_mul_ps(u, u));
        i += 8;
    }
    a0 = _mm256_add_ps(a0, a1);
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(a0), _mm256_extractf128_ps(a0, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_movehdup_ps(h));
    float s = _mm_cvtss_f32(h);
    for (; i < n; i++) s += x[i] * x[i];
    return s;
}

ODN_AVX2_TARGET static void scale_row_avx2(const float *x, float *y, int64_t n, float r, bool reciprocal,
                                           const float *g) {
    float inv = 1.0f / r;
    __m256 vr = _mm256_set1_ps(r), vi = _mm256_set1_ps(inv);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        v = reciprocal ? _mm256_mul_ps(v, vi) : _mm256_div_ps(v, vr);
        if (g) v = _mm256_mul_ps(v, _mm256_loadu_ps(g + i));
        _mm256_storeu_ps(y + i, v);
    }
    for (; i < n; i++) {
        float v = reciprocal ? x[i] * inv : x[i] / r;
        y[i] = g ? v * g[i] : v;
    }
}
#else
#define RMS_X86 0
#endif

static float sum_squares(const float *x, int64_t n) {
    float s = 0.0f;
    for (int64_t i = 0; i < n; i++) s += x[i] * x[i];
    return s;
}

static void scale_row(const float *x, float *y, int64_t n, float r, bool reciprocal, const float *g) {
    float inv = 1.0f / r;
    for (int64_t i = 0; i < n; i++) {
        float v = reciprocal ? x[i] * inv : x[i] / r;
        y[i] = g ? v * g[i] : v;
    }
}

static tsr_status *run_rmsnorm(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const rmsnorm_loop *l = ctx;
    const float *x = odn_q_handle(src), *g = l->gamma ? odn_q_handle(l->gamma) : NULL;
    float *y = odn_q_handle(dst);
    if (!x || !y || (l->gamma && !g)) return odn_host->status_new(TSR_ERR_PROVIDER, "onednn: RMSNorm memory");
#if RMS_X86
    bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
#pragma omp parallel for if (l->rows > 1 && l->rows * l->cols > 32768) schedule(static)
    for (int64_t row = 0; row < l->rows; row++) {
        const float *xr = x + row * l->cols;
        float *yr = y + row * l->cols;
#if RMS_X86
        if (avx2) {
            float r = sqrtf(sum_squares_avx2(xr, l->cols) / (float)l->cols + l->eps);
            scale_row_avx2(xr, yr, l->cols, r, l->reciprocal, g);
            continue;
        }
#endif
        float r = sqrtf(sum_squares(xr, l->cols) / (float)l->cols + l->eps);
        scale_row(xr, yr, l->cols, r, l->reciprocal, g);
    }
    return NULL;
}

/* --- the pattern ---------------------------------------------------------- */
static bool is_op(const tsr_node *n, const char *op) { return n && strcmp(odn_host->node_op_type(n), op) == 0; }

static const tsr_value_info *in(const tsr_node *n, size_t k) {
    return k < odn_host->node_input_count(n) ? odn_host->node_input(n, k) : NULL;
}

static const tsr_value_info *out(const tsr_node *n) { return odn_host->node_output(n, 0); }

/* The one-value constant (float32 or float16) at input k of n. */
static odn_scalar scalar_at(odn_plan *p, const tsr_node *n, size_t k) { return odn_value_scalar(p, in(n, k)); }

/* The only reader of n's output (n's output not a piece output), or NULL. */
static const tsr_node *next(odn_plan *p, const tsr_node *n) {
    odn_value *v = odn_plan_value(p, out(n));
    return v ? odn_plan_sole_consumer(p, v) : NULL;
}

/* Binary `n` reads `a` and `b`, in either order. */
static bool reads_pair(const tsr_node *n, const tsr_value_info *a, const tsr_value_info *b) {
    if (odn_host->node_input_count(n) != 2) return false;
    return (in(n, 0) == a && in(n, 1) == b) || (in(n, 0) == b && in(n, 1) == a);
}

/* ReduceMean `n` over exactly the last axis of a rank-`rank` input,
 * keeping dims. */
static bool last_axis_mean(const tsr_node *n, int32_t rank) {
    bool reduce[ODN_MAX_RANK];
    if (!is_op(n, "ReduceMean") || rank < 1 || rank > ODN_MAX_RANK || !odn_attr_int(n, "keepdims", 1) ||
        odn_attr_int(n, "noop_with_empty_axes", 0) || !odn_reduce_axes(n, rank, reduce))
        return false;
    for (int32_t d = 0; d < rank; d++)
        if (reduce[d] != (d == rank - 1)) return false;
    return true;
}

/* float32, or float16 held as float32 (odn_f16.c): the loop computes a
 * float16 norm in float32, as every float16 step of the plan does */
static bool float32(const odn_value *v) { return !v->elem_type || v->elem_type == TSR_FLOAT; }

/* The constant gamma (`cols` floats over leading 1s, of rank at most
 * `rank`) that Mul `n` multiplies `cur` by, or NULL. */
static odn_value *gamma_of(odn_plan *p, const tsr_node *n, const tsr_value_info *cur, int32_t rank, int64_t cols) {
    if (!is_op(n, "Mul") || odn_host->node_input_count(n) != 2) return NULL;
    size_t k = in(n, 0) == cur ? 1 : 0;
    if (in(n, 1 - k) != cur || in(n, k) == cur) return NULL;
    odn_value *v = odn_plan_value(p, in(n, k));
    if (!v || !v->constant || !v->mem || v->constant->elem_type != TSR_FLOAT || v->rank > rank || v->rank < 1 ||
        v->dims[v->rank - 1] != cols || odn_numel(v->rank, v->dims) != cols)
        return NULL;
    return v;
}

/* The nodes of one RMSNorm starting at the squaring node. */
typedef struct rms_match {
    const tsr_node *nodes[8]; /* every node but the squaring one, NULL-padded */
    size_t count;
    float eps;
    bool reciprocal;
    odn_value *x, *y, *gamma;
} rms_match;

/* From r = Sqrt(...) on: x / r or x * Reciprocal(r); the node writing y. */
static const tsr_node *normalized(odn_plan *p, const tsr_node *root, rms_match *m) {
    const tsr_node *n = next(p, root);
    if (is_op(n, "Div") && odn_host->node_input_count(n) == 2 && in(n, 0) == m->x->info && in(n, 1) == out(root))
        return m->nodes[m->count++] = n;
    if (!is_op(n, "Reciprocal")) return NULL;
    const tsr_node *mul = next(p, n);
    if (!is_op(mul, "Mul") || !reads_pair(mul, m->x->info, out(n))) return NULL;
    m->reciprocal = true;
    m->nodes[m->count++] = n;
    return m->nodes[m->count++] = mul;
}

/* A float32-to-float32 Cast and a gamma Mul after `last`, where nothing
 * else reads what they take. Returns the last node taken. */
static const tsr_node *take_gamma(odn_plan *p, const tsr_node *last, rms_match *m) {
    int64_t cols = m->x->dims[m->x->rank - 1];
    const tsr_node *n = next(p, last), *cast = NULL;
    odn_value *v = odn_plan_value(p, out(last));
    /* float16 to float32 rounds (odn_build_cast): a step of its own */
    if (is_op(n, "Cast") && odn_attr_int(n, "to", 0) == TSR_FLOAT && v && !v->f16) {
        cast = n;
        n = next(p, cast);
    }
    odn_value *g = gamma_of(p, n, out(cast ? cast : last), m->x->rank, cols);
    if (!g) return cast ? (m->nodes[m->count++] = cast) : last;
    if (cast) m->nodes[m->count++] = cast;
    m->gamma = g;
    return m->nodes[m->count++] = n;
}

static bool match(odn_plan *p, const tsr_node *sq, rms_match *m) {
    *m = (rms_match){.count = 0};
    m->x = odn_plan_value(p, in(sq, 0));
    if (!m->x || !m->x->produced || !m->x->mem || !float32(m->x) || m->x->rank < 1 ||
        m->x->dims[m->x->rank - 1] < 1)
        return false;
    bool squares =
        (is_op(sq, "Pow") && odn_host->node_input_count(sq) == 2 && odn_scalar_near(scalar_at(p, sq, 1), 2.0, 0)) ||
        (is_op(sq, "Mul") && odn_host->node_input_count(sq) == 2 && in(sq, 1) == in(sq, 0));
    const tsr_node *mean = squares ? next(p, sq) : NULL;
    if (!mean || in(mean, 0) != out(sq) || !last_axis_mean(mean, m->x->rank)) return false;
    const tsr_node *add = next(p, mean);
    if (!is_op(add, "Add") || odn_host->node_input_count(add) != 2) return false;
    m->eps = (in(add, 0) == out(mean) ? scalar_at(p, add, 1) : scalar_at(p, add, 0)).value;
    const tsr_node *root = next(p, add);
    if (!(m->eps >= 0 && m->eps < INFINITY) || !is_op(root, "Sqrt")) return false;
    m->nodes[m->count++] = mean;
    m->nodes[m->count++] = add;
    m->nodes[m->count++] = root;
    const tsr_node *last = normalized(p, root, m);
    if (!last) return false;
    last = take_gamma(p, last, m);
    m->y = odn_plan_value(p, out(last));
    return m->y && float32(m->y);
}

tsr_status *odn_fuse_rmsnorm(odn_plan *p, size_t index, bool *handled) {
    *handled = false;
    const tsr_node *sq = p->nodes[index];
    rms_match m;
    if (!match(p, sq, &m)) return NULL;
    *handled = true;
    for (size_t i = 0; i < m.count; i++) p->done[odn_plan_node_index(p, m.nodes[i])] = true;
    rmsnorm_loop *l = odn_plan_alloc(p, sizeof *l);
    if (!l) return odn_node_error(sq, TSR_ERR_NO_MEMORY, "out of memory");
    int64_t cols = m.x->dims[m.x->rank - 1];
    *l = (rmsnorm_loop){odn_numel(m.x->rank - 1, m.x->dims), cols, m.eps, m.reciprocal, NULL};
    dnnl_memory_t src;
    tsr_status *s = odn_plan_plain_mem(p, m.x, sq, &src);
    if (!s && m.gamma) s = odn_plan_plain_view(p, m.gamma, 1, &cols, NULL, sq, &l->gamma, NULL);
    if (!s) s = odn_plan_define(p, m.y, m.x->rank, m.x->dims, NULL, sq);
    if (s) return s;
    const dnnl_memory_t reads[] = {l->gamma};
    return odn_plan_add_loop_reading(p, run_rmsnorm, l, src, m.y->mem, reads, 1, sq);
}
