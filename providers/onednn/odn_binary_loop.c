/* Broadcasting binary ops as a C loop over plain float32 memories, for
 * the shapes oneDNN 2.6 has no JIT binary kernel for (it covers scalar,
 * per-channel and same-shape operands; a [N,T,1] divisor of a [N,T,C]
 * tensor, say, falls to its reference kernel, which runs at a few hundred
 * MB/s). The innermost output dim is a contiguous loop the compiler
 * vectorises; rows are shared among the run's OpenMP threads. */
#include <string.h>

#include "odn.h"

typedef struct binary_loop {
    dnnl_alg_kind_t alg;
    int32_t rank;
    int64_t dims[ODN_MAX_RANK];
    int64_t sa[ODN_MAX_RANK], sb[ODN_MAX_RANK]; /* element strides, 0 where broadcast */
    dnnl_memory_t b;
} binary_loop;

static void row(dnnl_alg_kind_t alg, const float *a, int64_t sa, const float *b, int64_t sb, float *y, int64_t n) {
    switch (alg) {
    case dnnl_binary_add:
        for (int64_t i = 0; i < n; i++) y[i] = a[i * sa] + b[i * sb];
        break;
    case dnnl_binary_sub:
        for (int64_t i = 0; i < n; i++) y[i] = a[i * sa] - b[i * sb];
        break;
    case dnnl_binary_mul:
        for (int64_t i = 0; i < n; i++) y[i] = a[i * sa] * b[i * sb];
        break;
    case dnnl_binary_div:
        for (int64_t i = 0; i < n; i++) y[i] = a[i * sa] / b[i * sb];
        break;
    case dnnl_binary_max: /* ONNX Max/Min propagate NaN, as fmaxf does not */
        for (int64_t i = 0; i < n; i++) {
            float x = a[i * sa], z = b[i * sb];
            y[i] = x != x || x > z ? x : z;
        }
        break;
    default:
        for (int64_t i = 0; i < n; i++) {
            float x = a[i * sa], z = b[i * sb];
            y[i] = x != x || x < z ? x : z;
        }
        break;
    }
}

static tsr_status *run_binary_loop(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const binary_loop *l = ctx;
    void *pa = NULL, *pb = NULL, *py = NULL;
    dnnl_memory_get_data_handle(src, &pa);
    dnnl_memory_get_data_handle(l->b, &pb);
    dnnl_memory_get_data_handle(dst, &py);
    int32_t r = l->rank;
    int64_t inner = r ? l->dims[r - 1] : 1, rows = 1;
    for (int32_t d = 0; d + 1 < r; d++) rows *= l->dims[d];
    const float *a = pa, *b = pb;
    float *y = py;
#pragma omp parallel for if (rows * inner > 32768) schedule(static)
    for (int64_t i = 0; i < rows; i++) {
        int64_t oa = 0, ob = 0, rem = i;
        for (int32_t d = r - 2; d >= 0; d--) {
            int64_t c = rem % l->dims[d];
            rem /= l->dims[d];
            oa += c * l->sa[d];
            ob += c * l->sb[d];
        }
        row(l->alg, a + oa, r ? l->sa[r - 1] : 0, b + ob, r ? l->sb[r - 1] : 0, y + i * inner, inner);
    }
    return NULL;
}

/* Strides of a plain tensor of dims `in` (padded to `rank`) read at the
 * output's index: 0 along broadcast dims. */
static void broadcast_strides(int32_t rank, const int64_t *in, const int64_t *out, int64_t *strides) {
    int64_t s = 1;
    for (int32_t d = rank - 1; d >= 0; d--) {
        strides[d] = in[d] == out[d] ? s : 0;
        s *= in[d];
    }
}

tsr_status *odn_binary_loop_step(odn_plan *p, const tsr_node *n, dnnl_alg_kind_t alg, dnnl_memory_t ma,
                                  dnnl_memory_t mb, dnnl_memory_t my, int32_t rank, const int64_t *dims,
                                  const int64_t *da, const int64_t *db) {
    binary_loop *l = odn_plan_alloc(p, sizeof *l);
    if (!l) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    l->alg = alg;
    l->rank = rank;
    memcpy(l->dims, dims, sizeof(int64_t) * (size_t)rank);
    broadcast_strides(rank, da, dims, l->sa);
    broadcast_strides(rank, db, dims, l->sb);
    l->b = mb;
    return odn_plan_add_loop_with(p, run_binary_loop, l, ma, my, mb, n);
}

tsr_status *odn_build_binary_loop(odn_plan *p, const tsr_node *n, odn_value *a, odn_value *b, odn_value *y,
                                  int32_t rank, const int64_t *dims, const int64_t *da, const int64_t *db) {
    dnnl_memory_t ma, mb;
    tsr_status *s = odn_plan_plain_mem(p, a, n, &ma);
    if (!s) s = odn_plan_plain_mem(p, b, n, &mb);
    if (!s) s = odn_plan_define(p, y, rank, dims, NULL, n);
    if (s) return s;
    return odn_binary_loop_step(p, n, odn_binary_alg(odn_host->node_op_type(n)), ma, mb, y->mem, rank, dims, da, db);
}
