/*
 * Shape rules for reductions: Reduce* (axes as attribute or, in newer
 * opsets, as input; keepdims; noop_with_empty_axes) and ArgMax/ArgMin.
 */
#include <string.h>

#include "shape_infer_internal.h"
#include "tessera/tessera.h"

/* The opset from which op's axes are an input rather than an attribute. */
static int64_t axes_input_since(const char *op) { return !strcmp(op, "ReduceSum") ? 13 : 18; }

static tsr_status *rule_reduce(shape_ctx *c, const ir_node *n) {
    shape_dims x, out;
    shape_in_shape(c, n, 0, &x);
    int32_t elem = shape_in_elem(c, n, 0);
    bool keep = shape_attr_int(n, "keepdims", 1) != 0;
    bool noop = shape_attr_int(n, "noop_with_empty_axes", 0) != 0;
    int64_t axes[IR_MAX_RANK];
    size_t na = 0;
    bool given = false, known = true;
    if (shape_opset(n) >= axes_input_since(n->op_type)) {
        given = shape_has_in(n, 1);
        if (given) known = shape_in_ints(c, n, 1, axes, IR_MAX_RANK, &na, NULL);
    } else {
        const int64_t *a = shape_attr_ints(n, "axes", &na);
        given = a != NULL;
        if (a && na <= IR_MAX_RANK) memcpy(axes, a, na * sizeof *a);
        else if (a) known = false;
    }
    if (x.rank < 0) return shape_set_out(c, n, 0, elem, NULL);
    if (!known) {
        /* Which axes go is data; with keepdims the rank still stands. */
        if (!keep) return shape_set_out(c, n, 0, elem, NULL);
        shape_dims_rank(&out, x.rank);
        return shape_set_out(c, n, 0, elem, &out);
    }
    if (na == 0) {
        if (noop) return shape_set_out(c, n, 0, elem, &x);
        /* No axes: reduce them all. */
        na = (size_t)x.rank;
        for (size_t i = 0; i < na; i++) axes[i] = (int64_t)i;
    }
    (void)given;
    bool red[IR_MAX_RANK] = {false};
    for (size_t i = 0; i < na; i++) {
        int32_t a;
        if (!shape_axis(axes[i], x.rank, &a))
            return shape_err(n, "axis %lld out of range for rank %d", (long long)axes[i], (int)x.rank);
        red[a] = true;
    }
    out.rank = 0;
    for (int32_t i = 0; i < x.rank; i++) {
        if (!red[i]) out.dims[out.rank++] = x.dims[i];
        else if (keep) out.dims[out.rank++] = shape_known(1);
    }
    return shape_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_arg(shape_ctx *c, const ir_node *n) {
    shape_dims x, out;
    shape_in_shape(c, n, 0, &x);
    if (x.rank < 0) return shape_set_out_ex(c, n, 0, TSR_INT64, NULL, SHAPE_ELEM_CERTAIN);
    int64_t a = shape_attr_int(n, "axis", 0);
    int32_t axis;
    if (!shape_axis(a, x.rank, &axis))
        return shape_err(n, "axis %lld out of range for rank %d", (long long)a, (int)x.rank);
    bool keep = shape_attr_int(n, "keepdims", 1) != 0;
    out.rank = 0;
    for (int32_t i = 0; i < x.rank; i++) {
        if (i != axis) out.dims[out.rank++] = x.dims[i];
        else if (keep) out.dims[out.rank++] = shape_known(1);
    }
    return shape_set_out_ex(c, n, 0, TSR_INT64, &out, SHAPE_ELEM_CERTAIN);
}

const shape_op shape_ops_reduce[] = {
    {"ReduceSum", 1, rule_reduce},       {"ReduceMean", 1, rule_reduce},   {"ReduceMax", 1, rule_reduce},
    {"ReduceMin", 1, rule_reduce},       {"ReduceProd", 1, rule_reduce},   {"ReduceL1", 1, rule_reduce},
    {"ReduceL2", 1, rule_reduce},        {"ReduceLogSum", 1, rule_reduce}, {"ReduceLogSumExp", 1, rule_reduce},
    {"ReduceSumSquare", 1, rule_reduce}, {"ArgMax", 1, rule_arg},          {"ArgMin", 1, rule_arg},
};
const size_t shape_ops_reduce_count = sizeof shape_ops_reduce / sizeof shape_ops_reduce[0];
