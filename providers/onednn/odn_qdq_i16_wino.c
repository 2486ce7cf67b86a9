/* QDQ 3x3 stride-1 convolutions on the exact integer Winograd F(2x2, 3x3)
 * kernel (odn_iwino_f23.h) instead of the im2col int16 GEMM of
 * odn_qdq_i16.c: the same exact int32 sums with 2.25x fewer multiplies,
 * which on AVX2 CPUs without VNNI is what it takes to run a QDQ ResNet
 * faster than ONNX Runtime's saturating u8 x s8 kernel while staying exact.
 * odn_qdq_i16.c requantizes the sums as it does its GEMM's. The kernel's
 * weights (16 int16 positions per filter) live in the piece's constant
 * cache, keyed by the node as the int16 GEMM's are; its scratch is the
 * plan's Winograd scratch, shared with the float kernel's steps. */
#include <omp.h>

#include "odn.h"
#include "odn_iwino_f23.h"
#include "odn_quant.h"

struct odn_i16_wino {
    odn_iwino_shape shape;
    const void *packed;
    const struct odn_wino_scratch *scratch;
    int threads;
};

/* The transformed weights, from the constant cache or made now; the md
 * (s32 words) tells them from the GEMMs' byte forms of the same weights. */
static tsr_status *packed_weights(odn_plan *p, const odn_i16_layer *l, int64_t c, int64_t m, const void **out) {
    const tsr_tensor *wt = l->w;
    size_t bytes = odn_iwino_f23_weights_bytes(c, m);
    int64_t words = (int64_t)((bytes + 3) / 4);
    bool wu = wt->elem_type == TSR_UINT8;
    dnnl_memory_desc_t md, src_md;
    if (!bytes || odn_plain_md_typed(&md, 1, &words, dnnl_s32) != dnnl_success ||
        odn_plain_md_typed(&src_md, wt->rank, wt->dims, wu ? dnnl_u8 : dnnl_s8) != dnnl_success)
        return odn_node_error(l->node, TSR_ERR_NO_MEMORY, "Winograd weights of %lld x %lld", (long long)m,
                              (long long)c);
    void *buf = odn_const_cache_find(p->consts, wt->data, l->node, &src_md, &md);
    if (!buf) {
        buf = odn_const_cache_add(p->consts, wt->data, l->node, &src_md, &md, (size_t)words * 4);
        if (!buf) return odn_node_error(l->node, TSR_ERR_NO_MEMORY, "Winograd weights of %zu bytes", bytes);
        odn_iwino_f23_pack_weights(wt->data, wu, l->zw, l->zw ? l->zw_count : 1, c, m, buf);
        odn_const_cache_ready(p->consts, buf);
    }
    *out = buf;
    return NULL;
}

tsr_status *odn_i16_wino_new(odn_plan *p, const odn_i16_layer *l, const odn_iwino_shape *shape,
                             const struct odn_i16_wino **out) {
    *out = NULL;
    if (!p->winograd) return NULL; /* winograd=0: the GEMM, for comparison (the sums are the same) */
    odn_iwino_shape s = *shape;
    /* a handful of channels is bound by the transforms, not the multiplies */
    if (s.c < 8 || s.m < 8 || !odn_iwino_f23_supported(&s)) return NULL;
    struct odn_i16_wino *w = odn_plan_alloc(p, sizeof *w);
    if (!w) return odn_node_error(l->node, TSR_ERR_NO_MEMORY, "out of memory");
    *w = (struct odn_i16_wino){.shape = s, .threads = omp_get_max_threads()};
    tsr_status *e = packed_weights(p, l, s.c, s.m, &w->packed);
    if (!e) e = odn_wino_scratch_grow(p, l->node, odn_iwino_f23_scratch_bytes(&s, w->threads), &w->scratch);
    if (!e) *out = w;
    return e;
}

void odn_i16_wino_run(const struct odn_i16_wino *w, const void *x, bool x_unsigned, int32_t zx, int32_t *sums,
                      int threads) {
    if (threads > w->threads) threads = w->threads;
    odn_iwino_f23_run(&w->shape, x, x_unsigned, zx, w->packed, sums, odn_wino_scratch_buf(w->scratch),
                      threads < 1 ? 1 : threads);
}
