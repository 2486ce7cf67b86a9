/* Which QuantizeLinear and DequantizeLinear nodes the oneDNN provider takes.
 *
 * On their own they run as exact C loops (odn_build_qdq.c): DequantizeLinear
 * of uint8/int8/int32 to float32, QuantizeLinear of float32 to uint8/int8,
 * scale float32 and zero point per tensor or per axis (1-D), constant or fed
 * at run time. Between them, the float Conv/MatMul/Gemm/Add of a QDQ model
 * become int8 oneDNN primitives where the pattern allows (odn_fuse_qdq.c);
 * the claim is per node, so everything claimed here also works unfused.
 * The int8 Conv/MatMul/Gemm primitives need a CPU where their sums are
 * exact (VNNI); without it those layers run in float between the Q/DQ
 * loops, their dequantized weights computed once (odn_build_qdq.c), so a
 * QDQ model is still claimed whole. */
#include <string.h>

#include "odn_quant.h"

/* 0 when scale/zero point input k is one value, or a 1-D tensor of as many
 * values as x's dim `axis` (when known). */
static int param_shape(const tsr_node *n, size_t k, const char *name, int32_t rank, int64_t axis, char *why,
                       size_t size) {
    const tsr_value_info *v = odn_input(n, k);
    int32_t r = odn_host->value_rank(v);
    if (r < 0) return odn_decline(why, size, TSR_DECLINE_SHAPE, "%s rank unknown", name);
    int64_t count = 1;
    for (int32_t d = 0; d < r; d++) {
        int64_t dim = odn_host->value_dim(v, d);
        if (dim < 0) return odn_decline(why, size, TSR_DECLINE_SHAPE, "%s shape unknown", name);
        count *= dim;
    }
    if (r == 0 || (r == 1 && count == 1)) return 0;
    if (r != 1)
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "%s of rank %d (blocked quantization not mapped)", name,
                           (int)r);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "axis out of range");
    int64_t want = odn_host->value_dim(odn_input(n, 0), (int32_t)axis);
    if (want >= 0 && want != count)
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "%s of %lld values for an axis of %lld", name,
                           (long long)count, (long long)want);
    return 0;
}

int odn_qdq_check(const tsr_node *n, char *why, size_t size) {
    const char *op = odn_host->node_op_type(n);
    bool dq = strcmp(op, "DequantizeLinear") == 0;
    const tsr_value_info *x = odn_input(n, 0), *s = odn_input(n, 1), *z = odn_input(n, 2);
    if (!x || !s) return odn_decline(why, size, TSR_DECLINE_OTHER, "input or scale missing");
    if (odn_host->node_output_count(n) != 1 || !odn_host->node_output(n, 0))
        return odn_decline(why, size, TSR_DECLINE_OTHER, "output missing");
    if (odn_attr_int(n, "block_size", 0) != 0)
        return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "block_size (blocked quantization)");
    int32_t tx = odn_host->value_elem_type(x), ts = odn_host->value_elem_type(s);
    int32_t ty = odn_host->value_elem_type(odn_host->node_output(n, 0));
    if (ts != TSR_FLOAT) return odn_decline(why, size, TSR_DECLINE_TYPE, "scale of type %d (float32 mapped)", (int)ts);
    if (dq) {
        if (tx != TSR_UINT8 && tx != TSR_INT8 && tx != TSR_INT32)
            return odn_decline(why, size, TSR_DECLINE_TYPE, "input of type %d (uint8/int8/int32 mapped)", (int)tx);
        if (ty != TSR_FLOAT) return odn_decline(why, size, TSR_DECLINE_TYPE, "output of type %d", (int)ty);
    } else {
        if (tx != TSR_FLOAT)
            return odn_decline(why, size, TSR_DECLINE_TYPE, "input of type %d (float32 mapped)", (int)tx);
        if (ty != TSR_UINT8 && ty != TSR_INT8)
            return odn_decline(why, size, TSR_DECLINE_TYPE, "output of type %d (uint8/int8 mapped)", (int)ty);
    }
    if (z && odn_host->value_elem_type(z) != (dq ? tx : ty))
        return odn_decline(why, size, TSR_DECLINE_TYPE, "zero point of type %d", (int)odn_host->value_elem_type(z));
    int32_t rank = odn_host->value_rank(x);
    if (rank < 0 || rank > ODN_MAX_RANK)
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "input rank unknown or above %d", ODN_MAX_RANK);
    for (int32_t d = 0; d < rank; d++)
        if (odn_host->value_dim(x, d) == 0) return odn_decline(why, size, TSR_DECLINE_SHAPE, "empty tensor");
    int64_t axis = odn_attr_int(n, "axis", 1);
    int e = param_shape(n, 1, "scale", rank, axis, why, size);
    if (!e && z) e = param_shape(n, 2, "zero point", rank, axis, why, size);
    return e;
}
