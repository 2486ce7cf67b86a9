/*
 * QuantizeLinear, DequantizeLinear (opsets 10 to 25) and
 * DynamicQuantizeLinear.
 *
 * QuantizeLinear: y = saturate(round(x / scale) + zero_point), the division
 * in the precision of `precision` (opset 23) or of the scale's type, rounded
 * to nearest even. DequantizeLinear: y = (x - zero_point) * scale, rounded
 * once to the output type. Attributes are read only from the opset that
 * introduced them, so an older model's stray attribute changes nothing.
 */
#include <math.h>

#include "ref_quant.h"

/* Inputs present and readable; `names` has one entry per input. */
static tsr_status *check_inputs(ref_ctx *c, const char *const *names, size_t n, bool last_optional) {
    for (size_t i = 0; i < n; i++) {
        const tsr_tensor *t = ref_in(c, i);
        if (!t && last_optional && i == n - 1) continue;
        tsr_status *st = rq_check_tensor(c, t, names[i]);
        if (st) return st;
    }
    return NULL;
}

tsr_status *ref_quant_quantize_linear(ref_ctx *c) {
    static const char *const names[] = {"x", "y_scale", "y_zero_point"};
    tsr_status *st = check_inputs(c, names, 3, true);
    if (st) return st;
    const tsr_tensor *x = ref_in(c, 0), *scale = ref_in(c, 1), *zp = ref_in(c, 2);
    int64_t opset = ref_opset(c);
    if (!ref_is_float(x->elem_type) && x->elem_type != TSR_INT32)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "x has element type %s; expected a float type or int32",
                       rq_type_name(x->elem_type));
    if (!rq_is_scale_type(scale->elem_type) && scale->elem_type != TSR_INT32)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "y_scale has element type %s", rq_type_name(scale->elem_type));

    int32_t out_type = zp ? zp->elem_type : TSR_UINT8;
    int64_t dtype = opset >= 21 ? ref_attr_int(c, "output_dtype", 0) : 0;
    if (dtype != 0) {
        if (zp && dtype != zp->elem_type)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "output_dtype %lld differs from y_zero_point's type %s",
                           (long long)dtype, rq_type_name(zp->elem_type));
        out_type = (int32_t)dtype;
    }
    if (!rq_is_quant_type(out_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "cannot quantize to element type %s (%d)", rq_type_name(out_type),
                       (int)out_type);

    int64_t precision = opset >= 23 ? ref_attr_int(c, "precision", 0) : 0;
    if (precision != 0 && !rq_is_float_out_type((int32_t)precision))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "precision %lld is not float, float16, bfloat16 or double",
                       (long long)precision);
    int32_t prec = precision ? (int32_t)precision : scale->elem_type;
    bool saturate = opset >= 19 ? ref_attr_int(c, "saturate", 1) != 0 : true;
    int64_t axis = opset >= 13 ? ref_attr_int(c, "axis", 1) : 1;
    int64_t block = opset >= 21 ? ref_attr_int(c, "block_size", 0) : 0;

    rq_layout l;
    st = rq_layout_init(c, x, scale, zp, axis, block, opset >= 13, &l);
    if (st) return st;
    tsr_tensor *y;
    st = ref_out(c, 0, out_type, x->rank, x->dims, &y);
    if (st) return st;
    rq_clear_packed(y);
    uint64_t n = ref_numel(x);
    for (uint64_t i = 0; i < n; i++) {
        size_t j = rq_layout_index(&l, i);
        double s = rq_round_to(prec, rq_load(scale->elem_type, scale->data, j));
        double v = rq_round_to(prec, rq_load(x->elem_type, x->data, (size_t)i));
        double q = rq_round_to(prec, v / s);
        double z = zp ? rq_load(zp->elem_type, zp->data, j) : 0.0;
        rq_quant_store(out_type, y->data, (size_t)i, q, z, saturate);
    }
    return NULL;
}

tsr_status *ref_quant_dequantize_linear(ref_ctx *c) {
    static const char *const names[] = {"x", "x_scale", "x_zero_point"};
    tsr_status *st = check_inputs(c, names, 3, true);
    if (st) return st;
    const tsr_tensor *x = ref_in(c, 0), *scale = ref_in(c, 1), *zp = ref_in(c, 2);
    int64_t opset = ref_opset(c);
    if (!rq_is_quant_type(x->elem_type) && x->elem_type != TSR_INT32)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "cannot dequantize element type %s (%d)",
                       rq_type_name(x->elem_type), (int)x->elem_type);
    if (zp && zp->elem_type != x->elem_type)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "x_zero_point is %s but x is %s", rq_type_name(zp->elem_type),
                       rq_type_name(x->elem_type));
    if (!rq_is_scale_type(scale->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "x_scale has element type %s", rq_type_name(scale->elem_type));
    int64_t dtype = opset >= 23 ? ref_attr_int(c, "output_dtype", 0) : 0;
    int32_t out_type = dtype ? (int32_t)dtype : scale->elem_type;
    if (!rq_is_float_out_type(out_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                       dtype ? "output_dtype %s is not float, float16, bfloat16 or double"
                             : "x_scale of type %s needs output_dtype to name the output type",
                       rq_type_name(out_type));
    int64_t axis = opset >= 13 ? ref_attr_int(c, "axis", 1) : 1;
    int64_t block = opset >= 21 ? ref_attr_int(c, "block_size", 0) : 0;

    rq_layout l;
    st = rq_layout_init(c, x, scale, zp, axis, block, opset >= 13, &l);
    if (st) return st;
    tsr_tensor *y;
    st = ref_out(c, 0, out_type, x->rank, x->dims, &y);
    if (st) return st;
    uint64_t n = ref_numel(x);
    for (uint64_t i = 0; i < n; i++) {
        size_t j = rq_layout_index(&l, i);
        double v = rq_load(x->elem_type, x->data, (size_t)i);
        if (zp) v -= rq_load(zp->elem_type, zp->data, j);
        rq_store_float(out_type, y->data, (size_t)i, v * rq_load(scale->elem_type, scale->data, j));
    }
    return NULL;
}

/* All in float, as the operator's definition computes it, so that the
 * scale and zero point match bit for bit. */
tsr_status *ref_quant_dynamic_quantize_linear(ref_ctx *c) {
    const tsr_tensor *x = ref_in(c, 0);
    tsr_status *st = rq_check_tensor(c, x, "x");
    if (st) return st;
    if (x->elem_type != TSR_FLOAT)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "x has element type %s; expected float",
                       rq_type_name(x->elem_type));
    const float *xv = x->data;
    uint64_t n = ref_numel(x);
    /* The range always includes 0; NaNs compare false and are skipped. */
    float lo = 0.0f, hi = 0.0f;
    for (uint64_t i = 0; i < n; i++) {
        if (xv[i] < lo) lo = xv[i];
        if (xv[i] > hi) hi = xv[i];
    }
    float scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
    float zpf = 0.0f - lo / scale;
    if (!(zpf >= 0.0f)) zpf = 0.0f;
    if (zpf > 255.0f) zpf = 255.0f;
    float zp = nearbyintf(zpf);

    tsr_tensor *y, *ys, *yz;
    if ((st = ref_out(c, 0, TSR_UINT8, x->rank, x->dims, &y))) return st;
    if ((st = ref_out(c, 1, TSR_FLOAT, 0, NULL, &ys))) return st;
    if ((st = ref_out(c, 2, TSR_UINT8, 0, NULL, &yz))) return st;
    for (uint64_t i = 0; i < n; i++) rq_quant_store(TSR_UINT8, y->data, (size_t)i, (double)(xv[i] / scale), zp, true);
    *(float *)ys->data = scale;
    *(uint8_t *)yz->data = (uint8_t)zp;
    return NULL;
}
