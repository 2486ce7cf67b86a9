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
 * 3.2 s a run against ONNX Runtime's 0.04. On AVX2 both now run on the
 * exact int16 GEMM instead (odn_i16_intgemm.c, odn_qdq_i16.c; about 1.5x
 * the float GEMM's speed); this float path stays for K past its bound. */
#include <stdlib.h>
#include <string.h>

#include "odn_quant.h"
#include "odn_sgemm.h"

/* One value of a float32/float16 scale (type `ts`), or for `per` > 0 a
 * 1-D tensor of `per` of them. */
static bool scale_ok(const tsr_value_info *v, int32_t ts, int64_t per) {
    if (!v || odn_host->value_elem_type(v) != ts) return false;
    int32_t r = odn_host->value_rank(v);
    if (r < 0 || r > 1) return false;
    int64_t d = r ? odn_host->value_dim(v, 0) : 1;
    return d == 1 || (per > 0 && d == per);
}

int odn_intgemm_check(const tsr_node *n, char *why, size_t size) {
    bool qlinear = strcmp(odn_host->node_op_type(n), "QLinearMatMul") == 0;
    if (!qlinear && strcmp(odn_host->node_op_type(n), "MatMulInteger") != 0)
        return odn_decline(why, size, TSR_DECLINE_TYPE, "%s: the CPU lacks VNNI (oneDNN's int8 sums would saturate)",
                           odn_host->node_op_type(n));
    if (!odn_sgemm_supported())
        return odn_decline(why, size, TSR_DECLINE_TYPE, "%s: the CPU lacks VNNI and AVX2", odn_host->node_op_type(n));
    size_t ib = qlinear ? 3 : 1, izb = qlinear ? 5 : 3;
    const tsr_value_info *a = odn_input(n, 0), *b = odn_input(n, ib), *za = odn_input(n, 2), *zb = odn_input(n, izb);
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
    if (!qlinear) return 0;
    if (!za || odn_host->value_elem_type(za) != ta)
        return odn_decline(why, size, TSR_DECLINE_TYPE, "a_zero_point missing or not of A's type");
    const tsr_value_info *sa = odn_input(n, 1),
                         *y = odn_host->node_output_count(n) ? odn_host->node_output(n, 0) : NULL;
    const tsr_value_info *zy = odn_input(n, 7);
    int32_t ts = sa ? odn_host->value_elem_type(sa) : 0, ty = y ? odn_host->value_elem_type(y) : 0;
    if ((ts != TSR_FLOAT && ts != TSR_FLOAT16) || !scale_ok(sa, ts, 0) || !scale_ok(odn_input(n, 4), ts, bt->dims[1]) ||
        !scale_ok(odn_input(n, 6), ts, 0))
        return odn_decline(why, size, TSR_DECLINE_TYPE,
                           "scales not float32/float16 per tensor (b_scale per tensor or column) without VNNI");
    if ((ty != TSR_UINT8 && ty != TSR_INT8) || !zy || odn_host->value_elem_type(zy) != ty ||
        odn_host->value_rank(zy) > 1 || (odn_host->value_rank(zy) == 1 && odn_host->value_dim(zy, 0) != 1))
        return odn_decline(why, size, TSR_DECLINE_TYPE, "output or y_zero_point not uint8/int8 per tensor");
    if (!odn_qlin_passes(bt, zbt, false))
        return odn_decline(why, size, TSR_DECLINE_SHAPE,
                           "QLinearMatMul: float sums of B could be inexact without VNNI");
    return 0;
}

/* (B - zb) as floats, packed once into the piece's constant cache (keyed
 * by B's data and this node, whose zero point it includes). */
static tsr_status *packed_b(odn_plan *p, const tsr_node *n, const odn_value *vb, size_t izb, int passes,
                            const float **out) {
    int64_t k = vb->dims[0], n_cols = vb->dims[1], cols = n_cols * passes;
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
    if (odn_host->node_input_count(n) > izb && odn_host->node_input(n, izb))
        zbt = odn_host->value_constant(odn_host->node_input(n, izb));
    float *wide = malloc(sizeof(float) * (size_t)(k * cols));
    buf = wide ? odn_const_cache_add(p->consts, vb->constant->data, n, &vb->md, &md, floats * sizeof(float)) : NULL;
    if (!buf) {
        free(wide);
        return odn_node_error(n, TSR_ERR_NO_MEMORY, "packed weights of %zu bytes", floats * sizeof(float));
    }
    bool u8 = vb->constant->elem_type == TSR_UINT8;
    for (int64_t j = 0; j < n_cols; j++) {
        int64_t zi = zbt && zbt->rank == 1 && zbt->dims[0] > 1 ? j : 0;
        int32_t z = !zbt ? 0 : u8 ? ((const uint8_t *)zbt->data)[zi] : ((const int8_t *)zbt->data)[zi];
        for (int64_t r = 0; r < k; r++) {
            size_t at = (size_t)(r * n_cols + j);
            int32_t v = (u8 ? ((const uint8_t *)vb->constant->data)[at] : ((const int8_t *)vb->constant->data)[at]) - z;
            if (passes == 2) { /* split (odn_qlinear_float.c): hi columns, then lo */
                int32_t lo = odn_qlin_split_lo(v);
                wide[r * cols + j] = (float)((v - lo) / 16);
                wide[r * cols + n_cols + j] = (float)lo;
            } else {
                wide[r * cols + j] = (float)v;
            }
        }
    }
    odn_sgemm_pack(wide, k, cols, cols, 1, buf);
    free(wide);
    odn_const_cache_ready(p->consts, buf);
    *out = buf;
    return NULL;
}

/* MatMulInteger on the exact int16 GEMM (odn_i16_intgemm.c): A read as it
 * is, the product written as int32, or as float for the Cast reading it. */
static tsr_status *build_i16(odn_plan *p, const tsr_node *n, odn_value *va, odn_value *vb, odn_value *vy, int64_t rows,
                             int64_t k, int64_t cols, const int64_t *yd) {
    int64_t a2[2] = {rows, k}, y2[2] = {rows, cols};
    const tsr_value_info *zb = odn_host->node_input_count(n) > 3 ? odn_host->node_input(n, 3) : NULL;
    const tsr_tensor *zbt = zb ? odn_host->value_constant(zb) : NULL;
    dnnl_memory_t a_mem, y_mem;
    tsr_status *s = odn_plan_plain_view(p, va, 2, a2, NULL, n, &a_mem, NULL);
    if (s) return s;
    const tsr_node *cast;
    odn_value *vc = odn_int_float_reader(p, vy, &cast);
    odn_value *out = vc ? vc : vy;
    s = odn_plan_define(p, out, va->rank, yd, NULL, vc ? cast : n);
    if (!s) s = odn_plan_plain_view(p, out, 2, y2, NULL, n, &y_mem, NULL);
    if (!s) s = odn_i16_intgemm_add(p, n, va, vb, zbt, rows, a_mem, vc != NULL, y_mem);
    /* packed by (B, node) alone: every plan of the piece finds the same */
    if (!s) odn_const_read_cached(p, vb, true);
    if (!s && vc) p->done[odn_plan_node_index(p, cast)] = true;
    return s;
}

/* QLinearMatMul on the int16 GEMM, requantized as odn_qlinear_float.c
 * does (odn_qdq_i16.c). */
static tsr_status *build_qlin_i16(odn_plan *p, const tsr_node *n, odn_value *va, odn_value *vb, odn_value *vy,
                                  bool *handled) {
    odn_i16_layer l = {
        .node = n, .y_node = n, .x = va, .y = vy, .y_type = vy->elem_type, .out = ODN_I16_QLIN, .w = vb->constant};
    const tsr_value_info *zb = odn_host->node_input_count(n) > 5 ? odn_host->node_input(n, 5) : NULL;
    const tsr_tensor *zt = zb ? odn_host->value_constant(zb) : NULL;
    tsr_status *s = odn_i16_weight_zp(p, n, zt, &l);
    if (!s) s = odn_q_input(p, n, 2, &l.zx_mem, &l.zx_type);
    return s ? s : odn_i16_matmul(p, &l, handled);
}

tsr_status *odn_build_intgemm(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *va = odn_plan_value(p, odn_host->node_input(n, 0));
    /* QLinearMatMul: B and its zero point at 3 and 5, requantized */
    bool qlinear = strcmp(odn_host->node_op_type(n), "QLinearMatMul") == 0;
    size_t izb = qlinear ? 5 : 3;
    odn_value *vb = odn_plan_value(p, odn_host->node_input(n, qlinear ? 3 : 1));
    odn_value *vy = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!va || !vb || !vy || !va->produced || !va->mem || !vb->constant || vb->rank != 2)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: integer matmul operands not ready");
    int passes = 1;
    if (qlinear) {
        const tsr_value_info *zb = odn_input(n, izb);
        passes = odn_qlin_passes(vb->constant, zb ? odn_host->value_constant(zb) : NULL, false);
        if (!passes) return odn_node_error(n, TSR_ERR_PROVIDER, "internal: float sums of QLinearMatMul not exact");
    }
    int64_t k = vb->dims[0], cols = vb->dims[1], rows = k ? odn_numel(va->rank, va->dims) / k : 0;
    int64_t a2[2] = {rows, k}, y2[2] = {rows, cols}, yd[ODN_MAX_RANK], acc2[2] = {rows, cols * passes};
    memcpy(yd, va->dims, sizeof(int64_t) * (size_t)va->rank);
    yd[va->rank - 1] = cols;
    if (!qlinear && odn_i16_intgemm_usable(k)) return build_i16(p, n, va, vb, vy, rows, k, cols, yd);
    if (qlinear && odn_i16_intgemm_usable(k)) {
        bool handled;
        tsr_status *e16 = build_qlin_i16(p, n, va, vb, vy, &handled);
        if (e16 || handled) return e16;
    }
    dnnl_memory_t a_mem, af, yf;
    dnnl_memory_desc_t a_md, af_md, y_md;
    const float *packed = NULL;
    tsr_status *s = odn_plan_plain_view(p, va, 2, a2, NULL, n, &a_mem, &a_md);
    if (!s && (odn_plain_md(&af_md, 2, a2) != dnnl_success || odn_plain_md(&y_md, 2, y2) != dnnl_success))
        s = odn_node_error(n, TSR_ERR_PROVIDER, "layout");
    if (!s) s = odn_plan_arena_mem(p, &af_md, n, &af);
    if (!s) s = odn_int_widen_step(p, n, a_mem, va->elem_type, (size_t)(rows * k), af);
    if (!s) s = packed_b(p, n, vb, izb, passes, &packed);
    if (s) return s;
    if (qlinear) {
        dnnl_memory_desc_t acc_md;
        if (odn_plain_md(&acc_md, 2, acc2) != dnnl_success) return odn_node_error(n, TSR_ERR_PROVIDER, "layout");
        s = odn_plan_arena_mem(p, &acc_md, n, &yf);
        if (!s) s = odn_sgemm_add_step(p, n, rows, cols * passes, k, k, af, packed, NULL, yf);
        if (!s) s = odn_plan_define(p, vy, va->rank, yd, NULL, n);
        return s ? s : odn_qlin_requant_step(p, n, false, rows, cols, 1, cols, passes, yf, vy);
    }
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
