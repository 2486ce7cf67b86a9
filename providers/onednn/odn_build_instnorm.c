/* InstanceNormalization as a C loop over plain memory: oneDNN 2.6 has no
 * such primitive (its layer normalization scales per normalized element, not
 * per channel). Style-transfer networks and torch's GroupNorm export
 * (Reshape -> InstanceNormalization -> Reshape) have one after every
 * convolution; on the reference provider each split the oneDNN piece and
 * cost a fifth of the run.
 *
 * Per (sample, channel): the mean and variance of its spatial values summed
 * in double, two passes as the reference provider does, then
 * y = x * s + t with s = scale / sqrt(var + eps), t = bias - mean * s. The
 * (sample, channel) rows are shared among the run's OpenMP threads. */
#include <math.h>

#include "odn_quant.h"

typedef struct instnorm_loop {
    int64_t rows, channels, run; /* rows = N * C, run = spatial size */
    float eps;
    dnnl_memory_t scale, bias;
} instnorm_loop;

/* Compiled for AVX-512 and AVX2 as well as the baseline ISA, picked at
 * load time: at SSE2 the double sums take two lanes. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define IN_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define IN_CLONES
#endif

IN_CLONES static void normalize_row(const float *x, float *y, int64_t run, float eps, float scale, float bias) {
    double sum = 0.0;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < run; j++) sum += x[j];
    double mean = sum / (double)run, sq = 0.0;
#pragma omp simd reduction(+ : sq)
    for (int64_t j = 0; j < run; j++) sq += ((double)x[j] - mean) * ((double)x[j] - mean);
    double inv = 1.0 / sqrt(sq / (double)run + (double)eps);
    float s = (float)(inv * scale), t = (float)(bias - mean * inv * scale);
#pragma omp simd
    for (int64_t j = 0; j < run; j++) y[j] = x[j] * s + t;
}

static tsr_status *run_instnorm(const void *vctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const instnorm_loop *l = vctx;
    const float *x = odn_q_handle(src), *scale = odn_q_handle(l->scale), *bias = odn_q_handle(l->bias);
    float *y = odn_q_handle(dst);
    if (!x || !y || !scale || !bias)
        return odn_host->status_new(TSR_ERR_PROVIDER, "onednn: InstanceNormalization memory");
#pragma omp parallel for if (l->rows * l->run > 65536) schedule(static)
    for (int64_t r = 0; r < l->rows; r++) {
        int64_t c = r % l->channels;
        normalize_row(x + r * l->run, y + r * l->run, l->run, l->eps, scale[c], bias[c]);
    }
    return NULL;
}

tsr_status *odn_build_instnorm(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *x = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    odn_value *sv = odn_plan_value(p, odn_host->node_input(n, 1));
    odn_value *bv = odn_plan_value(p, odn_host->node_input(n, 2));
    if (!x || !y || !sv || !bv || !x->produced || !sv->mem || !bv->mem || x->rank < 3)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: InstanceNormalization inputs");
    int64_t ch = x->dims[1];
    if (odn_numel(sv->rank, sv->dims) != ch || odn_numel(bv->rank, bv->dims) != ch)
        return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "scale and B must have %lld values", (long long)ch);
    instnorm_loop *l = odn_plan_alloc(p, sizeof *l);
    if (!l) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    l->channels = ch;
    l->rows = x->dims[0] * ch;
    l->run = odn_numel(x->rank - 2, x->dims + 2);
    l->eps = odn_attr_float(n, "epsilon", 1e-5f);
    dnnl_memory_t src, dst;
    tsr_status *s = odn_plan_plain_mem(p, x, n, &src);
    if (!s) s = odn_plan_plain_view(p, sv, 1, &ch, NULL, n, &l->scale, NULL);
    if (!s) s = odn_plan_plain_view(p, bv, 1, &ch, NULL, n, &l->bias, NULL);
    if (!s) s = odn_plan_define(p, y, x->rank, x->dims, NULL, n);
    if (s) return s;
    dst = y->mem;
    const dnnl_memory_t reads[] = {l->scale, l->bias};
    return odn_plan_add_loop_reading(p, run_instnorm, l, src, dst, reads, 2, n);
}
