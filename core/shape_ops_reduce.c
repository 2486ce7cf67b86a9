/*
 * Shape rules for reductions: Reduce* (axes as attribute or, in newer
 * opsets, as input; keepdims; noop_with_empty_axes) and ArgMax/ArgMin.
 */
#include <string.h>

#include "shape_infer_internal.h"
#include "tessera/tessera.h"

/* The opset from which op's axes are an input rather than an attribute. */
static int64_t axes_input_since(const char *op) { return !strcmp(op, "ReduceSum") ? 13 : 18; }

static tsr_status *rule_reduce(si_ctx *c, const ir_node *n) {
    si_shape x, out;
    si_in_shape(c, n, 0, &x);
    int32_t elem = si_in_elem(c, n, 0);
    bool keep = si_attr_int(n, "keepdims", 1) != 0;
    bool noop = si_attr_int(n, "noop_with_empty_axes", 0) != 0;
    int64_t axes[IR_MAX_RANK];
    size_t na = 0;
    bool given = false, known = true;
    if (si_opset(n) >= axes_input_since(n->op_type)) {
        given = si_has_in(n, 1);
        if (given) known = si_in_ints(c, n, 1, axes, IR_MAX_RANK, &na, NULL);
    } else {
        const int64_t *a = si_attr_ints(n, "axes", &na);
        given = a != NULL;
        if (a && na <= IR_MAX_RANK) memcpy(axes, a, na * sizeof *a);
        else if (a) known = false;
    }
    if (x.rank < 0) return si_set_out(c, n, 0, elem, NULL);
    if (!known) {
        /* Which axes go is data; with keepdims the rank still stands. */
        if (!keep) return si_set_out(c, n, 0, elem, NULL);
        si_shape_rank(&out, x.rank);
        return si_set_out(c, n, 0, elem, &out);
    }
    if (na == 0) {
        if (noop) return si_set_out(c, n, 0, elem, &x);
        /* No axes: reduce them all. */
        na = (size_t)x.rank;
        for (size_t i = 0; i < na; i++) axes[i] = (int64_t)i;
    }
    (void)given;
    bool red[IR_MAX_RANK] = {false};
    for (size_t i = 0; i < na; i++) {
        int32_t a;
        if (!si_axis(axes[i], x.rank, &a))
            return si_err(n, "axis %lld out of range for rank %d", (long long)axes[i], (int)x.rank);
        red[a] = true;
    }
    out.rank = 0;
    for (int32_t i = 0; i < x.rank; i++) {
        if (!red[i]) out.dims[out.rank++] = x.dims[i];
        else if (keep) out.dims[out.rank++] = si_known(1);
    }
    return si_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_arg(si_ctx *c, const ir_node *n) {
    si_shape x, out;
    si_in_shape(c, n, 0, &x);
    if (x.rank < 0) return si_set_out_ex(c, n, 0, TSR_INT64, NULL, SI_ELEM_CERTAIN);
    int64_t a = si_attr_int(n, "axis", 0);
    int32_t axis;
    if (!si_axis(a, x.rank, &axis))
        return si_err(n, "axis %lld out of range for rank %d", (long long)a, (int)x.rank);
    bool keep = si_attr_int(n, "keepdims", 1) != 0;
    out.rank = 0;
    for (int32_t i = 0; i < x.rank; i++) {
        if (i != axis) out.dims[out.rank++] = x.dims[i];
        else if (keep) out.dims[out.rank++] = si_known(1);
    }
    return si_set_out_ex(c, n, 0, TSR_INT64, &out, SI_ELEM_CERTAIN);
}

const si_op si_ops_reduce[] = {
    {"ReduceSum", 1, rule_reduce},       {"ReduceMean", 1, rule_reduce},
    {"ReduceMax", 1, rule_reduce},       {"ReduceMin", 1, rule_reduce},
    {"ReduceProd", 1, rule_reduce},      {"ReduceL1", 1, rule_reduce},
    {"ReduceL2", 1, rule_reduce},        {"ReduceLogSum", 1, rule_reduce},
    {"ReduceLogSumExp", 1, rule_reduce}, {"ReduceSumSquare", 1, rule_reduce},
    {"ArgMax", 1, rule_arg},             {"ArgMin", 1, rule_arg},
};
const size_t si_ops_reduce_count = sizeof si_ops_reduce / sizeof si_ops_reduce[0];
