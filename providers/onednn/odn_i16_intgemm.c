/* MatMulInteger's product on the exact int16 GEMM (odn_igemm.c) on AVX2
 * CPUs without VNNI, in place of the float packed GEMM of
 * odn_build_intgemm.c: the 8-bit A is widened inside the kernel (no float
 * copy of it), its zero point read at run time (DynamicQuantizeLinear's);
 * the int32 sums are exact. The product is written as int32, or as float
 * for quantize_dynamic's Cast (exact below 2^24, float32 rounding past it,
 * as that Cast rounds). */
#include <omp.h>
#include <string.h>

#include "odn_igemm.h"
#include "odn_quant.h"
#include "odn_sgemm.h"

typedef struct i16_intgemm {
    const tsr_node *node;
    int64_t m, n, k;
    bool a_unsigned, as_float;
    dnnl_memory_t za; /* NULL: 0 */
    int32_t za_type;
    const int16_t *packed;
    void *scratch; /* the plan's packed-GEMM scratch, per thread */
    int threads;
} i16_intgemm;

static tsr_status *run(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const i16_intgemm *g = ctx;
    const void *a = odn_q_handle(src);
    int32_t *c = odn_q_handle(dst);
    if (!a || !c) return odn_node_error(g->node, TSR_ERR_PROVIDER, "internal: int16 gemm without buffers");
    int32_t za = (int32_t)odn_q_value(g->za, g->za_type, 0);
    odn_igemm_run(g->m, g->n, g->k, a, g->a_unsigned, g->k, za, g->packed, c, g->n, g->scratch, g->threads);
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

/* (B - zb) packed once into the piece's constant cache, keyed by B's data
 * and this node (whose zero point it includes). */
static tsr_status *packed_b(odn_plan *p, const tsr_node *n, const odn_value *vb, const tsr_tensor *zbt,
                            const int16_t **out) {
    int64_t k = vb->dims[0], cols = vb->dims[1];
    size_t count = odn_igemm_packed_count(k, cols);
    int64_t bytes = (int64_t)(count * sizeof(int16_t));
    dnnl_memory_desc_t md;
    if (!count || odn_plain_md_typed(&md, 1, &bytes, dnnl_u8) != dnnl_success)
        return odn_node_error(n, TSR_ERR_NO_MEMORY, "packed weights of %lld x %lld", (long long)k, (long long)cols);
    /* the float packing's key is the same; its md (f32) tells them apart */
    int16_t *buf = odn_const_cache_find(p->consts, vb->constant->data, n, &vb->md, &md);
    if (!buf) {
        buf = odn_const_cache_add(p->consts, vb->constant->data, n, &vb->md, &md, (size_t)bytes);
        if (!buf) return odn_node_error(n, TSR_ERR_NO_MEMORY, "packed weights of %lld bytes", (long long)bytes);
        bool u8 = vb->constant->elem_type == TSR_UINT8;
        int32_t zb[1] = {0}, *zbs = zb;
        int64_t zcount = 1;
        if (zbt && zbt->rank == 1 && zbt->dims[0] > 1) {
            zbs = odn_plan_alloc(p, sizeof(int32_t) * (size_t)zbt->dims[0]);
            if (!zbs) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
            zcount = zbt->dims[0];
        }
        for (int64_t j = 0; zbt && j < zcount; j++)
            zbs[j] = u8 ? ((const uint8_t *)zbt->data)[j] : ((const int8_t *)zbt->data)[j];
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
    if (odn_igemm_scratch_bytes() > odn_sgemm_scratch_floats(1) * sizeof(float))
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: int16 gemm scratch");
    if (!p->sgemm_scratch) {
        p->sgemm_threads = omp_get_max_threads();
        p->sgemm_scratch = odn_plan_alloc(p, odn_sgemm_scratch_floats(p->sgemm_threads) * sizeof(float));
        if (!p->sgemm_scratch) return odn_node_error(n, TSR_ERR_NO_MEMORY, "packed gemm scratch");
    }
    g->scratch = p->sgemm_scratch;
    g->threads = p->sgemm_threads;
    tsr_status *s = odn_q_input(p, n, 2, &g->za, &g->za_type);
    if (!s) s = packed_b(p, n, vb, zbt, &g->packed);
    return s ? s : odn_plan_add_loop_reading(p, run, g, a, c, &g->za, 1, n);
}
