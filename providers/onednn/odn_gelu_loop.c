/* tanh-GELU, y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), over a
 * dense float32 buffer (in place or into another) as a C loop on AVX2. oneDNN 2.6's
 * `eltwise_gelu_tanh` (jit:avx2) takes 3.8-5.5 ns per element, against
 * 1.0-1.1 for its erf form: a tenth of a GPT-2-style decoder's run (6 x
 * 128x3072 after the feed-forward GEMM, 10.4 of 170 ms).
 *
 * 0.5 (1 + tanh(u)) is the logistic function of 2u, so y = x / (1 +
 * e^(-2u)): no cancellation near u = 0 (tanh's 1 - 2 / (e^(2u) + 1) form
 * loses the relative precision there), and at large |u| e^(-2u) goes to 0
 * or +inf and y to x or -0 cleanly. Within a few ulp of the exact value
 * (odn_vexp.h's exp). */
#include <stdio.h>
#include <string.h>

#include "odn.h"
#include "odn_vexp.h"

bool odn_gelu_loop_supported(void) {
#if defined(__GNUC__) && defined(__x86_64__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return false;
#endif
}

#if defined(__GNUC__) && defined(__x86_64__)
static ODN_AVX2_TARGET void gelu_tanh_avx2(const float *src, float *y, int64_t count) {
    const __m256 c = _mm256_set1_ps(-2.0f * 0.79788456080286536f), k = _mm256_set1_ps(0.044715f),
                 one = _mm256_set1_ps(1.0f);
    int64_t i = 0;
    for (; i + 8 <= count; i += 8) {
        __m256 x = _mm256_loadu_ps(src + i);
        __m256 inner = _mm256_fmadd_ps(_mm256_mul_ps(k, x), _mm256_mul_ps(x, x), x);
        __m256 e = odn_exp8(_mm256_mul_ps(c, inner));
        _mm256_storeu_ps(y + i, _mm256_div_ps(x, _mm256_add_ps(one, e)));
    }
    if (i < count) {
        float tail[8] = {0};
        memcpy(tail, src + i, sizeof(float) * (size_t)(count - i));
        gelu_tanh_avx2(tail, tail, 8);
        memcpy(y + i, tail, sizeof(float) * (size_t)(count - i));
    }
}
#endif

typedef struct gelu_loop {
    int64_t count;
} gelu_loop;

static tsr_status *run_gelu(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const gelu_loop *l = ctx;
    const float *x = odn_mem_f32(src);
    float *y = odn_mem_f32(dst);
    if (!x || !y) return odn_host->status_new(TSR_ERR_PROVIDER, "onednn: GELU loop without a buffer");
#if defined(__GNUC__) && defined(__x86_64__)
    /* blocks of 4096 elements shared among the run's threads */
    int64_t blocks = (l->count + 4095) / 4096;
#pragma omp parallel for if (blocks > 1 && l->count > 65536) schedule(static)
    for (int64_t b = 0; b < blocks; b++) {
        int64_t at = b * 4096, len = l->count - at < 4096 ? l->count - at : 4096;
        gelu_tanh_avx2(x + at, y + at, len);
    }
#else
    (void)l;
#endif
    return NULL;
}

tsr_status *odn_gelu_loop_add(odn_plan *p, const tsr_node *n, dnnl_memory_t src, dnnl_memory_t dst, int64_t count) {
    gelu_loop *l = odn_plan_alloc(p, sizeof *l);
    if (!l) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    l->count = count;
    tsr_status *s = odn_plan_add_loop(p, run_gelu, l, src, dst, n);
    if (!s) snprintf(p->steps[p->step_count - 1].impl, sizeof p->steps[0].impl, "loop gelu_tanh:avx2");
    return s;
}
