/* bfloat16 MatMul and Gemm as oneDNN bf16 matmuls: bf16 operands, f32
 * accumulation, one rounding to bf16 at the end (alpha as the output scale,
 * Gemm's C as a binary add post-op, both applied in f32 before it). Claimed
 * only where the CPU has native bf16 (avx512_core_bf16 or later); oneDNN
 * would otherwise emulate it slowly. */
#include <stdio.h>
#include <string.h>

#include "odn_quant.h"

bool odn_bf16_native(void) {
    /* ISA values are cumulative bit masks */
    unsigned isa = (unsigned)dnnl_get_effective_cpu_isa(), want = (unsigned)dnnl_cpu_isa_avx512_core_bf16;
    return (isa & want) == want;
}

int odn_bf16_check(const tsr_node *n, char *why, size_t size) {
    bool gemm = strcmp(odn_host->node_op_type(n), "Gemm") == 0;
    size_t count = odn_host->node_input_count(n);
    for (size_t k = 0; k < count; k++) {
        const tsr_value_info *v = odn_input(n, k);
        if (!v) continue;
        if (odn_host->value_elem_type(v) != TSR_BFLOAT16)
            return odn_decline(why, size, TSR_DECLINE_TYPE, "input %zu is not bfloat16 like input 0", k);
        int32_t r = odn_host->value_rank(v);
        if (r < 0 || r > ODN_MAX_RANK)
            return odn_decline(why, size, TSR_DECLINE_SHAPE, "input %zu of unknown or high rank", k);
        for (int32_t d = 0; d < r; d++)
            if (odn_host->value_dim(v, d) == 0) return odn_decline(why, size, TSR_DECLINE_SHAPE, "empty tensor");
    }
    const tsr_value_info *y = odn_host->node_output_count(n) ? odn_host->node_output(n, 0) : NULL;
    if (!y || odn_host->value_elem_type(y) != TSR_BFLOAT16)
        return odn_decline(why, size, TSR_DECLINE_TYPE, "output is not bfloat16");
    if (!odn_bf16_native()) return odn_decline(why, size, TSR_DECLINE_TYPE, "bfloat16: the CPU lacks avx512_bf16");
    int32_t ra = odn_input(n, 0) ? odn_host->value_rank(odn_input(n, 0)) : -1;
    int32_t rb = odn_input(n, 1) ? odn_host->value_rank(odn_input(n, 1)) : -1;
    if (gemm) {
        if (ra != 2 || rb != 2) return odn_decline(why, size, TSR_DECLINE_SHAPE, "Gemm inputs must be 2-D");
        if (odn_input(n, 2) && odn_attr_float(n, "beta", 1.0f) != 1.0f)
            return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "bfloat16 Gemm with beta != 1 not mapped");
        return 0;
    }
    if (ra < 2 || rb < 2)
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "bfloat16 MatMul of a 1-D operand not mapped");
    int32_t r = ra > rb ? ra : rb;
    for (int32_t i = 2; i < r; i++) {
        int64_t x = i < ra ? odn_host->value_dim(odn_input(n, 0), ra - 1 - i) : 1;
        int64_t z = i < rb ? odn_host->value_dim(odn_input(n, 1), rb - 1 - i) : 1;
        if (x > 1 && z > 1 && x != z) return odn_decline(why, size, TSR_DECLINE_SHAPE, "batch dims do not broadcast");
    }
    return 0;
}

/* Operand `v` as a rank-r view (leading 1s), or with `trans` its 2-D
 * transpose as strides. Sets dims to the shape seen. */
static tsr_status *operand(odn_plan *p, odn_value *v, int32_t r, bool trans, const tsr_node *n, dnnl_memory_t *m,
                           dnnl_memory_desc_t *md, int64_t *dims) {
    if (trans) {
        int64_t strides[2] = {1, v->dims[1]};
        dims[0] = v->dims[1];
        dims[1] = v->dims[0];
        return odn_plan_plain_view(p, v, 2, dims, strides, n, m, md);
    }
    int32_t lead = r - v->rank;
    for (int32_t i = 0; i < r; i++) dims[i] = i < lead ? 1 : v->dims[i - lead];
    return odn_plan_plain_view(p, v, r, dims, NULL, n, m, md);
}

tsr_status *odn_build_bf16(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    bool gemm = strcmp(odn_host->node_op_type(n), "Gemm") == 0;
    odn_value *va = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *vb = odn_plan_value(p, odn_host->node_input(n, 1));
    odn_value *vc = gemm ? odn_plan_value(p, odn_input(n, 2)) : NULL;
    odn_value *vy = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!va || !vb || !vy || !va->produced || !vb->produced || !va->mem || !vb->mem || (vc && !vc->mem))
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: bfloat16 operands not ready");
    int32_t r = gemm ? 2 : (va->rank > vb->rank ? va->rank : vb->rank);
    int64_t da[ODN_MAX_RANK], db[ODN_MAX_RANK], dy[ODN_MAX_RANK];
    dnnl_memory_desc_t a_md, b_md, y_md, c_md;
    dnnl_memory_t a_mem, b_mem, c_mem = NULL;
    tsr_status *s = operand(p, va, r, gemm && odn_attr_int(n, "transA", 0), n, &a_mem, &a_md, da);
    if (!s) s = operand(p, vb, r, gemm && odn_attr_int(n, "transB", 0), n, &b_mem, &b_md, db);
    if (s) return s;
    if (da[r - 1] != db[r - 2]) return odn_node_error(n, TSR_ERR_INVALID_MODEL, "inner dimensions differ");
    for (int32_t i = 0; i < r - 2; i++) dy[i] = da[i] > db[i] ? da[i] : db[i];
    dy[r - 2] = da[r - 2];
    dy[r - 1] = db[r - 1];

    dnnl_primitive_attr_t attr;
    dnnl_status_t st = dnnl_primitive_attr_create(&attr);
    if (st != dnnl_success) return odn_dnnl_error(n, "attribute creation", st);
    float alpha = gemm ? odn_attr_float(n, "alpha", 1.0f) : 1.0f;
    if (alpha != 1.0f) st = dnnl_primitive_attr_set_output_scales(attr, 1, 0, &alpha);
    dnnl_post_ops_t po = NULL;
    if (vc && st == dnnl_success) {
        /* C broadcast to [M, N]: a 2-D view with 1s where it broadcasts */
        int64_t cd[2] = {1, 1};
        if (vc->rank == 1) cd[1] = vc->dims[0];
        if (vc->rank == 2) {
            cd[0] = vc->dims[0];
            cd[1] = vc->dims[1];
        }
        if ((cd[0] != 1 && cd[0] != dy[0]) || (cd[1] != 1 && cd[1] != dy[1])) st = dnnl_invalid_arguments;
        if (st == dnnl_success) {
            s = odn_plan_plain_view(p, vc, 2, cd, NULL, n, &c_mem, &c_md);
            if (s) {
                dnnl_primitive_attr_destroy(attr);
                return s;
            }
            st = dnnl_post_ops_create(&po);
        }
        if (st == dnnl_success) st = dnnl_post_ops_append_binary(po, dnnl_binary_add, &c_md);
        if (st == dnnl_success) st = dnnl_primitive_attr_set_post_ops(attr, po);
    }
    if (st == dnnl_success) st = odn_plain_md_typed(&y_md, r, dy, dnnl_bf16);
    dnnl_matmul_desc_t d;
    if (st == dnnl_success) st = dnnl_matmul_desc_init(&d, &a_md, &b_md, NULL, &y_md);
    dnnl_primitive_desc_t pd = NULL;
    if (st == dnnl_success) st = dnnl_primitive_desc_create(&pd, &d, attr, p->engine, NULL);
    if (po) dnnl_post_ops_destroy(po);
    dnnl_primitive_attr_destroy(attr);
    if (st != dnnl_success) return odn_dnnl_error(n, "bfloat16 matmul setup", st);
    s = odn_plan_define(p, vy, r, dy, NULL, n);
    if (!s && vy->md.data_type != dnnl_bf16) s = odn_node_error(n, TSR_ERR_PROVIDER, "internal: output type");
    dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, a_mem},
                              {DNNL_ARG_WEIGHTS, b_mem},
                              {DNNL_ARG_DST, s ? NULL : vy->mem},
                              {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, c_mem}};
    if (!s) s = odn_plan_add_primitive(p, pd, n, args, c_mem ? 4 : 3);
    dnnl_primitive_desc_destroy(pd);
    return s;
}
