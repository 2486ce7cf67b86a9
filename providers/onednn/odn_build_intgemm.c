/* MatMulInteger on a CPU without VNNI, where oneDNN's int8 kernels would
 * saturate their 16-bit pair sums (odn_int8_exact): the integers, less
 * their zero points, go through the packed float GEMM (odn_sgemm.c). Both
 * operands are exact in float32 (|a - za| <= 255, |b - zb| <= 255) and so
 * is every partial sum below 2^24; past that the sum rounds as float32
 * arithmetic does (a relative 2^-24 per add), far below the quantization
 * error the scales carry. quantize_dynamic's Cast to float that reads the
 * product is absorbed (the GEMM writes floats); any other reader gets the
 * int32 product rounded back from the floats. Without this such a model
 * ran its MatMulIntegers on the reference provider: a 6-layer distilbert,
 * 3.2 s a run against ONNX Runtime's 0.04. */
#include <stdlib.h>
#include <string.h>

#include "odn_quant.h"
#include "odn_sgemm.h"

int odn_intgemm_check(const tsr_node *n, char *why, size_t size) {
    if (strcmp(odn_host->node_op_type(n), "MatMulInteger") != 0)
        return odn_decline(why, size, TSR_DECLINE_TYPE, "%s: the CPU lacks VNNI (oneDNN's int8 sums would saturate)",
                           odn_host->node_op_type(n));
    if (!odn_sgemm_supported())
        return odn_decline(why, size, TSR_DECLINE_TYPE, "MatMulInteger: the CPU lacks VNNI and AVX2");
    const tsr_value_info *a = odn_input(n, 0), *b = odn_input(n, 1), *za = odn_input(n, 2), *zb = odn_input(n, 3);
    const tsr_tensor *bt = b ? odn_host->value_constant(b) : NULL;
    if (!a || !bt || bt->rank != 2)
        return odn_decline(why, size, TSR_DECLINE_OTHER, "without VNNI only constant 2-D weights are mapped");
    int32_t ta = odn_host->value_elem_type(a);
    if ((ta != TSR_UINT8 && ta != TSR_INT8) || (bt->elem_type != TSR_UINT8 && bt->elem_type != TSR_INT8))
        return odn_decline(why, size, TSR_DECLINE_TYPE, "operands of types %d, %d (uint8/int8 mapped)", (int)ta,
                           (int)bt->elem_type);
    int32_t ra = odn_host->value_rank(a);
    if (ra < 2 || ra > ODN_MAX_RANK || odn_host->value_dim(a, ra - 1) != bt->dims[0])
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "A's rank or depth unknown, or not B's rows");
    if (za && odn_host->value_rank(za) > 0 && odn_host->value_dim(za, 0) != 1)
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "A's zero point per row (not mapped without VNNI)");
    const tsr_tensor *zbt = zb ? odn_host->value_constant(zb) : NULL;
    if (zb &&
        (!zbt || zbt->elem_type != bt->elem_type || zbt->rank > 1 ||
         (zbt->rank == 1 && zbt->dims[0] != 1 && zbt->dims[0] != bt->dims[1])))
        return odn_decline(why, size, TSR_DECLINE_OTHER, "B's zero point not a constant per tensor or column");
    return 0;
}

/* (B - zb) as floats, packed once into the piece's constant cache (keyed
 * by B's data and this node, whose zero point it includes). */
static tsr_status *packed_b(odn_plan *p, const tsr_node *n, const odn_value *vb, const float **out) {
    int64_t k = vb->dims[0], cols = vb->dims[1];
    size_t floats = odn_sgemm_packed_floats(k, cols);
    int64_t fd[1] = {(int64_t)floats};
    dnnl_memory_desc_t md;
    if (!floats || odn_plain_md(&md, 1, fd) != dnnl_success)
        return odn_node_error(n, TSR_ERR_NO_MEMORY, "packed weights of %lld x %lld", (long long)k, (long long)cols);
    float *buf = odn_const_cache_find(p->consts, vb->constant->data, n, &vb->md, &md);
    if (buf) {
        *out = buf;
        return NULL;
    }
    const tsr_tensor *zbt = NULL;
    if (odn_host->node_input_count(n) > 3 && odn_host->node_input(n, 3))
        zbt = odn_host->value_constant(odn_host->node_input(n, 3));
    float *wide = malloc(sizeof(float) * (size_t)(k * cols));
    buf = wide ? odn_const_cache_add(p->consts, vb->constant->data, n, &vb->md, &md, floats * sizeof(float)) : NULL;
    if (!buf) {
        free(wide);
        return odn_node_error(n, TSR_ERR_NO_MEMORY, "packed weights of %zu bytes", floats * sizeof(float));
    }
    bool u8 = vb->constant->elem_type == TSR_UINT8;
    for (int64_t j = 0; j < cols; j++) {
        int64_t zi = zbt && zbt->rank == 1 && zbt->dims[0] > 1 ? j : 0;
        float z = !zbt ? 0.0f : u8 ? ((const uint8_t *)zbt->data)[zi] : ((const int8_t *)zbt->data)[zi];
        for (int64_t r = 0; r < k; r++) {
            size_t at = (size_t)(r * cols + j);
            wide[at] = (u8 ? ((const uint8_t *)vb->constant->data)[at] : ((const int8_t *)vb->constant->data)[at]) - z;
        }
    }
    odn_sgemm_pack(wide, k, cols, cols, 1, buf);
    free(wide);
    odn_const_cache_ready(p->consts, buf);
    *out = buf;
    return NULL;
}

tsr_status *odn_build_intgemm(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *va = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *vb = odn_plan_value(p, odn_host->node_input(n, 1));
    odn_value *vy = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!va || !vb || !vy || !va->produced || !va->mem || !vb->constant || vb->rank != 2)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: integer matmul operands not ready");
    int64_t k = vb->dims[0], cols = vb->dims[1], rows = k ? odn_numel(va->rank, va->dims) / k : 0;
    int64_t a2[2] = {rows, k}, y2[2] = {rows, cols}, yd[ODN_MAX_RANK];
    memcpy(yd, va->dims, sizeof(int64_t) * (size_t)va->rank);
    yd[va->rank - 1] = cols;
    dnnl_memory_t a_mem, af, yf;
    dnnl_memory_desc_t a_md, af_md, y_md;
    const float *packed = NULL;
    tsr_status *s = odn_plan_plain_view(p, va, 2, a2, NULL, n, &a_mem, &a_md);
    if (!s && (odn_plain_md(&af_md, 2, a2) != dnnl_success || odn_plain_md(&y_md, 2, y2) != dnnl_success))
        s = odn_node_error(n, TSR_ERR_PROVIDER, "layout");
    if (!s) s = odn_plan_arena_mem(p, &af_md, n, &af);
    if (!s) s = odn_int_widen_step(p, n, a_mem, va->elem_type, (size_t)(rows * k), af);
    if (!s) s = packed_b(p, n, vb, &packed);
    if (s) return s;
    /* quantize_dynamic's Cast(to float) reads the product: write it */
    const tsr_node *cast;
    odn_value *vc = odn_int_float_reader(p, vy, &cast);
    if (vc) {
        s = odn_plan_define(p, vc, va->rank, yd, NULL, cast);
        if (!s) s = odn_plan_plain_view(p, vc, 2, y2, NULL, n, &yf, NULL);
        if (!s) s = odn_sgemm_add_step(p, n, rows, cols, k, k, af, packed, NULL, yf);
        if (!s) p->done[odn_plan_node_index(p, cast)] = true;
        return s;
    }
    dnnl_memory_t y_mem;
    s = odn_plan_arena_mem(p, &y_md, n, &yf);
    if (!s) s = odn_sgemm_add_step(p, n, rows, cols, k, k, af, packed, NULL, yf);
    if (!s) s = odn_plan_define(p, vy, va->rank, yd, NULL, n);
    if (!s) s = odn_plan_plain_view(p, vy, 2, y2, NULL, n, &y_mem, NULL);
    if (!s) s = odn_int_narrow_step(p, n, (size_t)(rows * cols), yf, y_mem);
    return s;
}
