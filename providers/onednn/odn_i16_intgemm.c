/* MatMulInteger's product on the exact int16 GEMM (odn_igemm.c) on AVX2
 * CPUs without VNNI, in place of the float packed GEMM of
 * odn_build_intgemm.c: the 8-bit A is widened inside the kernel (no float
 * copy of it), its zero point read at run time (DynamicQuantizeLinear's);
 * the int32 sums are exact. The product is written as int32, or as float
 * for quantize_dynamic's Cast (exact below 2^24, float32 rounding past it,
 * as that Cast rounds). Weights whose K pairs mostly keep vpmaddubsw's
 * sums exact (odn_igemm8.h: nearly all quantizers' int8 weights, and
 * reduce_range's all) run on the u8 x s8 kernel instead, 1.3-1.4x the
 * speed, as exact. */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "odn_igemm.h"
#include "odn_igemm8.h"
#include "odn_quant.h"
#include "odn_sgemm.h"

typedef struct i16_intgemm {
    const tsr_node *node;
    int64_t m, n, k;
    bool a_unsigned, as_float;
    dnnl_memory_t za; /* NULL: 0 */
    int32_t za_type;
    const int16_t *packed;
    const void *packed8; /* non-NULL: odn_igemm8_run on it instead */
    void *scratch;       /* the plan's packed-GEMM scratch, per thread */
    int threads;
} i16_intgemm;

static tsr_status *run(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const i16_intgemm *g = ctx;
    const void *a = odn_q_handle(src);
    int32_t *c = odn_q_handle(dst);
    if (!a || !c) return odn_node_error(g->node, TSR_ERR_PROVIDER, "internal: int16 gemm without buffers");
    int32_t za = (int32_t)odn_q_value(g->za, g->za_type, 0);
    if (g->packed8) {
        odn_igemm8_run(g->m, g->n, g->k, a, g->a_unsigned, g->k, za, g->packed8, c, g->n, g->scratch, g->threads);
    } else {
        odn_igemm_run(g->m, g->n, g->k, a, g->a_unsigned, g->k, za, g->packed, c, g->n, g->scratch, g->threads);
    }
    if (g->as_float) { /* in place: float and int32 have one size */
        ptrdiff_t count = (ptrdiff_t)(g->m * g->n);
#pragma omp parallel for simd if (count > 65536) schedule(static)
        for (ptrdiff_t i = 0; i < count; i++) {
            float f = (float)c[i];
            memcpy(c + i, &f, sizeof f);
        }
    }
    return NULL;
}

bool odn_i16_intgemm_usable(int64_t k) { return odn_igemm_supported() && k > 0 && k <= ODN_IGEMM_MAX_K; }

/* Without VNNI, 7-bit int8 weights let the plan use oneDNN's int8
 * primitives (odn_int8_exact_plan); a MatMulInteger on such weights runs
 * faster here (the u8 x s8 kernel with no residual, the Cast absorbed, the
 * packed form shape-free: the first plan releases the weight's bytes):
 * 128x768 by 768x768 0.81 against oneDNN's 0.88-1.1 ms on Zen3. Full-range
 * weights stay on oneDNN there (int8_saturation asked for its kernels). A
 * later plan of the piece finds the packed form instead of reading the
 * released bytes. */
bool odn_i16_intgemm_instead(odn_plan *p, const tsr_node *n) {
    if (odn_int8_exact() || strcmp(odn_host->node_op_type(n), "MatMulInteger") != 0) return false;
    char why[256];
    odn_value *vb = odn_plan_value(p, odn_input(n, 1));
    const tsr_tensor *bt = vb ? vb->constant : NULL;
    if (odn_intgemm_check(n, why, sizeof why) != 0 || !bt || bt->elem_type != TSR_INT8 || !bt->data || vb->rank != 2 ||
        !odn_i16_intgemm_usable(vb->dims[0]))
        return false;
    int64_t bytes8 = (int64_t)odn_igemm8_packed_bytes(vb->dims[0], vb->dims[1]);
    dnnl_memory_desc_t md8;
    if (!bytes8 || odn_plain_md_typed(&md8, 1, &bytes8, dnnl_s8) != dnnl_success) return false;
    const void *packed8 = odn_const_cache_find(p->consts, bt->data, n, &vb->md, &md8);
    if (packed8) return odn_igemm8_packed_ok(packed8, vb->dims[0], vb->dims[1]);
    const int8_t *v = bt->data;
    for (size_t i = 0; i < bt->nbytes; i++)
        if (v[i] < -64 || v[i] > 64) return false;
    return true;
}

/* B's zero points as int32: 1, or one per column (in plan memory). */
static tsr_status *zero_points(odn_plan *p, const tsr_node *n, bool u8, const tsr_tensor *zbt, int32_t **zbs,
                               int64_t *zcount) {
    static int32_t zero[1] = {0};
    *zbs = zero;
    *zcount = 1;
    if (!zbt) return NULL;
    *zcount = zbt->rank == 1 ? zbt->dims[0] : 1;
    *zbs = odn_plan_alloc(p, sizeof(int32_t) * (size_t)*zcount);
    if (!*zbs) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    for (int64_t j = 0; j < *zcount; j++)
        (*zbs)[j] = u8 ? ((const uint8_t *)zbt->data)[j] : ((const int8_t *)zbt->data)[j];
    return NULL;
}

/* (B - zb) packed once into the piece's constant cache, keyed by B's data
 * and this node (whose zero point it includes): for the u8 x s8 kernel
 * where it takes them (*out8), else (*out8 NULL) for the int16 one. The
 * 8-bit packing's md is s8, the int16 one's u8, the float one's f32: the
 * same key, told apart. */
static tsr_status *packed_b(odn_plan *p, const tsr_node *n, const odn_value *vb, const tsr_tensor *zbt,
                            const int16_t **out, const void **out8) {
    int64_t k = vb->dims[0], cols = vb->dims[1];
    bool u8 = vb->constant->elem_type == TSR_UINT8;
    int32_t *zbs = NULL;
    int64_t zcount = 1;
    *out = NULL;
    *out8 = NULL;
    int64_t bytes8 = (int64_t)odn_igemm8_packed_bytes(k, cols);
    dnnl_memory_desc_t md8;
    if (bytes8 && odn_plain_md_typed(&md8, 1, &bytes8, dnnl_s8) == dnnl_success) {
        void *buf8 = odn_const_cache_find(p->consts, vb->constant->data, n, &vb->md, &md8);
        if (!buf8) {
            buf8 = odn_const_cache_add(p->consts, vb->constant->data, n, &vb->md, &md8, (size_t)bytes8);
            if (!buf8) return odn_node_error(n, TSR_ERR_NO_MEMORY, "packed weights of %lld bytes", (long long)bytes8);
            tsr_status *s = zero_points(p, n, u8, zbt, &zbs, &zcount);
            if (s) return s;
            odn_igemm8_pack(vb->constant->data, u8, k, cols, cols, 1, zbs, zcount, buf8);
            odn_const_cache_ready(p->consts, buf8);
        }
        if (odn_igemm8_packed_ok(buf8, k, cols)) {
            *out8 = buf8;
            return NULL;
        }
    }
    size_t count = odn_igemm_packed_count(k, cols);
    int64_t bytes = (int64_t)(count * sizeof(int16_t));
    dnnl_memory_desc_t md;
    if (!count || odn_plain_md_typed(&md, 1, &bytes, dnnl_u8) != dnnl_success)
        return odn_node_error(n, TSR_ERR_NO_MEMORY, "packed weights of %lld x %lld", (long long)k, (long long)cols);
    int16_t *buf = odn_const_cache_find(p->consts, vb->constant->data, n, &vb->md, &md);
    if (!buf) {
        buf = odn_const_cache_add(p->consts, vb->constant->data, n, &vb->md, &md, (size_t)bytes);
        if (!buf) return odn_node_error(n, TSR_ERR_NO_MEMORY, "packed weights of %lld bytes", (long long)bytes);
        tsr_status *s = zbs ? NULL : zero_points(p, n, u8, zbt, &zbs, &zcount);
        if (s) return s;
        odn_igemm_pack(vb->constant->data, u8, k, cols, cols, 1, zbs, zcount, buf);
        odn_const_cache_ready(p->consts, buf);
    }
    *out = buf;
    return NULL;
}

tsr_status *odn_i16_intgemm_add(odn_plan *p, const tsr_node *n, const odn_value *va, const odn_value *vb,
                                const tsr_tensor *zbt, int64_t rows, dnnl_memory_t a, bool as_float, dnnl_memory_t c) {
    i16_intgemm *g = odn_plan_alloc(p, sizeof *g);
    if (!g) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    *g = (i16_intgemm){.node = n,
                       .m = rows,
                       .n = vb->dims[1],
                       .k = vb->dims[0],
                       .a_unsigned = va->elem_type == TSR_UINT8,
                       .as_float = as_float};
    if (odn_igemm_scratch_bytes() > odn_sgemm_scratch_floats(1) * sizeof(float) ||
        odn_igemm8_scratch_bytes() > odn_sgemm_scratch_floats(1) * sizeof(float))
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: int16 gemm scratch");
    if (!p->sgemm_scratch) {
        p->sgemm_threads = omp_get_max_threads();
        p->sgemm_scratch = odn_plan_alloc(p, odn_sgemm_scratch_floats(p->sgemm_threads) * sizeof(float));
        if (!p->sgemm_scratch) return odn_node_error(n, TSR_ERR_NO_MEMORY, "packed gemm scratch");
    }
    g->scratch = p->sgemm_scratch;
    g->threads = p->sgemm_threads;
    tsr_status *s = odn_q_input(p, n, 2, &g->za, &g->za_type);
    if (!s) s = packed_b(p, n, vb, zbt, &g->packed, &g->packed8);
    if (!s) s = odn_plan_add_loop_reading(p, run, g, a, c, &g->za, 1, n);
    /* which kernel runs, for --explain and the tests */
    if (!s && g->packed8)
        snprintf(p->steps[p->step_count - 1].impl, sizeof p->steps[0].impl, "loop MatMulInteger:u8s8");
    return s;
}
