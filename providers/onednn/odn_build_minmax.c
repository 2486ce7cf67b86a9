/* ReduceMax and ReduceMin as a C loop that keeps NaN, as ONNX does (oneDNN's
 * max and min reductions drop it). The reduced axes, when they are one run
 * of adjacent dims, make the input [outer, R, inner] and the output
 * [outer, inner]: each output row starts as the first input row and takes
 * each later one element by element, which the compiler vectorises over
 * `inner`. A convolution's channel-blocked output is read as it is, viewed
 * as [N, C/blk, spatial..., blk] when only spatial dims are reduced (a
 * PointNet's max over its points, a global max pooling), where the plain
 * path would reorder it first. Other axis sets take the generic reduction
 * loop (odn_loops.c), which keeps NaN too. */
#include <immintrin.h>
#include <string.h>

#include "odn.h"

typedef struct minmax_loop {
    int64_t outer, r, inner;
    bool is_max;
} minmax_loop;

/* Max (or min) of a contiguous row, NaN if any element is: the reduction
 * over the last axis (YOLO's scores.max(-1), an LM head's max over the
 * vocabulary), where the row loop below would walk a one-element row per
 * input element. */
static float row_extreme_c(const float *x, int64_t n, bool is_max) {
    float m = x[0];
    bool nan = false;
    for (int64_t i = 0; i < n; i++) {
        float v = x[i];
        m = is_max ? (v > m ? v : m) : (v < m ? v : m);
        nan |= v != v;
    }
    return nan ? __builtin_nanf("") : m;
}

/* The same 16 lanes at a time; vmaxps/vminps ignore a NaN operand, so
 * NaNs are flagged apart (the compiler keeps the scalar form scalar). */
__attribute__((target("avx2"))) static float row_extreme_avx2(const float *x, int64_t n, bool is_max) {
    __m256 a0 = _mm256_set1_ps(x[0]), a1 = a0, nan = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
        a0 = is_max ? _mm256_max_ps(v0, a0) : _mm256_min_ps(v0, a0);
        a1 = is_max ? _mm256_max_ps(v1, a1) : _mm256_min_ps(v1, a1);
        nan = _mm256_or_ps(nan, _mm256_or_ps(_mm256_cmp_ps(v0, v0, _CMP_UNORD_Q), _mm256_cmp_ps(v1, v1, _CMP_UNORD_Q)));
    }
    if (_mm256_movemask_ps(nan)) return __builtin_nanf("");
    float lanes[16];
    _mm256_storeu_ps(lanes, a0);
    _mm256_storeu_ps(lanes + 8, a1);
    float m = row_extreme_c(lanes, 16, is_max);
    if (i < n) {
        float t = row_extreme_c(x + i, n - i, is_max);
        if (t != t) return t;
        m = is_max ? (t > m ? t : m) : (t < m ? t : m);
    }
    return m;
}

static float row_extreme(const float *x, int64_t n, bool is_max, bool avx2) {
    return avx2 ? row_extreme_avx2(x, n, is_max) : row_extreme_c(x, n, is_max);
}

static tsr_status *run_minmax(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const minmax_loop *l = ctx;
    void *hx = NULL, *hy = NULL;
    dnnl_memory_get_data_handle(src, &hx);
    dnnl_memory_get_data_handle(dst, &hy);
    const float *x = hx;
    float *y = hy;
    int64_t inner = l->inner;
    if (inner == 1) {
        bool avx2 = __builtin_cpu_supports("avx2");
#pragma omp parallel for if (l->outer * l->r > 65536) schedule(static)
        for (int64_t o = 0; o < l->outer; o++) y[o] = row_extreme(x + o * l->r, l->r, l->is_max, avx2);
        return NULL;
    }
#pragma omp parallel for if (l->outer * l->r * inner > 65536) schedule(static)
    for (int64_t o = 0; o < l->outer; o++) {
        const float *xo = x + o * l->r * inner;
        float *yo = y + o * inner;
        memcpy(yo, xo, sizeof(float) * (size_t)inner);
        for (int64_t k = 1; k < l->r; k++) {
            const float *row = xo + k * inner;
            if (l->is_max)
                for (int64_t i = 0; i < inner; i++) yo[i] = row[i] > yo[i] || row[i] != row[i] ? row[i] : yo[i];
            else
                for (int64_t i = 0; i < inner; i++) yo[i] = row[i] < yo[i] || row[i] != row[i] ? row[i] : yo[i];
        }
    }
    return NULL;
}

/* The reduced dims as one run [*first, *last] of adjacent dims; false when
 * they are not (or none is reduced). */
static bool reduced_run(const bool *reduce, int32_t rank, int32_t *first, int32_t *last) {
    *first = -1;
    for (int32_t d = 0; d < rank; d++) {
        if (!reduce[d]) continue;
        if (*first < 0) *first = d;
        else if (*last != d - 1) return false;
        *last = d;
    }
    return *first >= 0;
}

static int64_t dims_product(const int64_t *dims, int32_t from, int32_t to) {
    int64_t p = 1;
    for (int32_t d = from; d < to; d++) p *= dims[d];
    return p;
}

tsr_status *odn_build_reduce_minmax(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *x = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!x || !y || !x->produced || !x->mem || x->rank < 1)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: reduce inputs");
    bool reduce[ODN_MAX_RANK];
    if (!odn_reduce_axes(n, x->rank, reduce))
        return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "axes not constant or out of range");
    bool is_max = strcmp(odn_host->node_op_type(n), "ReduceMax") == 0;
    int32_t r = x->rank, first = 0, last = 0;
    bool keepdims = odn_attr_int(n, "keepdims", 1) != 0;
    int64_t out[ODN_MAX_RANK];
    int32_t out_rank = 0;
    for (int32_t d = 0; d < r; d++)
        if (!reduce[d] || keepdims) out[out_rank++] = reduce[d] ? 1 : x->dims[d];
    bool run = reduced_run(reduce, r, &first, &last) && odn_numel(r, x->dims) > 0;
    minmax_loop *l = odn_plan_alloc(p, sizeof *l);
    if (!l) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    l->is_max = is_max;
    int64_t blk = odn_block();
    dnnl_format_tag_t tag = odn_layout_tag(x);
    if (run && first >= 2 && odn_layout_is_blocked(tag) && x->dims[1] % blk == 0) {
        /* every spatial dim reduced: the blocked bytes of [N, C, 1...] are
         * the plain ones, for a piece output too */
        bool all_spatial = first == 2 && last == r - 1;
        dnnl_memory_desc_t md;
        dnnl_dims_t od;
        for (int32_t d = 0; d < out_rank; d++) od[d] = out[d];
        bool blocked_out = !all_spatial && y->output_index < 0 && out_rank >= 3 &&
            dnnl_memory_desc_init_by_tag(&md, out_rank, od, dnnl_f32, odn_blocked_tag(out_rank)) == dnnl_success;
        if (all_spatial || blocked_out) {
            l->outer = x->dims[0] * (x->dims[1] / blk) * dims_product(x->dims, 2, first);
            l->r = dims_product(x->dims, first, last + 1);
            l->inner = dims_product(x->dims, last + 1, r) * blk;
            tsr_status *s = odn_plan_define(p, y, out_rank, out, blocked_out ? &md : NULL, n);
            return s ? s : odn_plan_add_loop(p, run_minmax, l, x->mem, y->mem, n);
        }
    }
    odn_reduce_io io;
    tsr_status *s = odn_reduce_setup(p, n, &io);
    if (s) return s;
    if (!run) {
        dnnl_alg_kind_t alg = is_max ? dnnl_reduction_max : dnnl_reduction_min;
        return odn_reduce_loop(p, n, alg, 0.0f, r, x->dims, reduce, io.src, io.dst);
    }
    l->outer = dims_product(x->dims, 0, first);
    l->r = dims_product(x->dims, first, last + 1);
    l->inner = dims_product(x->dims, last + 1, r);
    return odn_plan_add_loop(p, run_minmax, l, io.src, io.dst, n);
}
