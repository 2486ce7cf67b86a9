/* A standalone Tanh as a C loop (odn_tanh.c's 8-lane tanh) instead of
 * oneDNN 2.6's `eltwise_tanh`, which on AVX2 runs at 3.3 ns per element
 * against 0.6 for its logistic (Zen3): a gated-activation WaveNet spent
 * 38 of 136 ms in its 22 Tanh. */
#include <stdio.h>

#include "odn_tanh_loop.h"

#include "odn_tanh.h"

bool odn_tanh_loop_supported(void) {
#if defined(__GNUC__) && defined(__x86_64__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return false;
#endif
}

typedef struct tanh_loop {
    int64_t count;
} tanh_loop;

static tsr_status *run_tanh(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const tanh_loop *l = ctx;
    if (l->count == 0) return NULL;
    const float *x = odn_mem_f32(src);
    float *y = odn_mem_f32(dst);
    if (!x || !y) return odn_host->status_new(TSR_ERR_PROVIDER, "onednn: Tanh loop without a buffer");
    /* blocks of 4096 elements shared among the run's threads */
    int64_t blocks = (l->count + 4095) / 4096;
#pragma omp parallel for if (blocks > 1 && l->count > 65536) schedule(static)
    for (int64_t b = 0; b < blocks; b++) {
        int64_t at = b * 4096, len = l->count - at < 4096 ? l->count - at : 4096;
        odn_tanh(x + at, y + at, len);
    }
    return NULL;
}

tsr_status *odn_tanh_loop_add(odn_plan *p, const tsr_node *n, dnnl_memory_t src, dnnl_memory_t dst, int64_t count) {
    tanh_loop *l = odn_plan_alloc(p, sizeof *l);
    if (!l) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    l->count = count;
    tsr_status *s = odn_plan_add_loop(p, run_tanh, l, src, dst, n);
    if (!s) snprintf(p->steps[p->step_count - 1].impl, sizeof p->steps[0].impl, "loop tanh:avx2");
    return s;
}
