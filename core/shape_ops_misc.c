/* Shape and type rules for ops whose outputs are fixed by their attributes
 * or input ranks rather than by arithmetic on shapes: window functions,
 * DynamicQuantizeLinear, NonMaxSuppression, Unique, Multinomial, the
 * losses, RegexFullMatch and StringConcat. What depends on data (how many
 * boxes survive, how many values are unique) stays an unknown dim; the rank
 * and element type are what the next op needs (issue 16). */
#include "shape_infer_internal.h"

/* Hann/Hamming/BlackmanWindow: a 1-D window of `size` (a scalar input)
 * elements of output_datatype (default float). */
static tsr_status *rule_window(si_ctx *c, const ir_node *n) {
    si_shape out;
    int64_t size[1];
    size_t count = 0;
    out.rank = 1;
    out.dims[0] = si_in_ints(c, n, 0, size, 1, &count, NULL) && count == 1 && size[0] >= 0 ? si_known(size[0])
                                                                                         : si_unknown();
    return si_set_out_ex(c, n, 0, (int32_t)si_attr_int(n, "output_datatype", TSR_FLOAT), &out, SI_ELEM_CERTAIN);
}

/* y like x in uint8, scale a float scalar, zero point a uint8 scalar. */
static tsr_status *rule_dynamic_quantize(si_ctx *c, const ir_node *n) {
    si_shape x, scalar;
    si_in_shape(c, n, 0, &x);
    scalar.rank = 0;
    TSR_TRY(si_set_out_ex(c, n, 0, TSR_UINT8, x.rank >= 0 ? &x : NULL, SI_ELEM_CERTAIN));
    TSR_TRY(si_set_out_ex(c, n, 1, TSR_FLOAT, &scalar, SI_ELEM_CERTAIN));
    return si_set_out_ex(c, n, 2, TSR_UINT8, &scalar, SI_ELEM_CERTAIN);
}

/* [selected, 3] int64: batch index, class index, box index. */
static tsr_status *rule_nms(si_ctx *c, const ir_node *n) {
    si_shape out;
    out.rank = 2;
    out.dims[0] = si_unknown();
    out.dims[1] = si_known(3);
    return si_set_out_ex(c, n, 0, TSR_INT64, &out, SI_ELEM_CERTAIN);
}

/* Unique: Y 1-D (no axis) or the input with the axis' length unknown;
 * indices, inverse_indices and counts 1-D int64. */
static tsr_status *rule_unique(si_ctx *c, const ir_node *n) {
    si_shape x, y, v;
    si_in_shape(c, n, 0, &x);
    const ir_attr *axis_attr = si_attr(n, "axis");
    v.rank = 1;
    v.dims[0] = si_unknown();
    if (!axis_attr) {
        y = v;
    } else if (x.rank >= 0) {
        int32_t a;
        if (!si_axis(axis_attr->i, x.rank, &a))
            return si_err(n, "axis %lld out of range for rank %d", (long long)axis_attr->i, (int)x.rank);
        y = x;
        y.dims[a] = si_unknown();
    } else {
        y.rank = -1;
    }
    TSR_TRY(si_set_out(c, n, 0, si_in_elem(c, n, 0), y.rank >= 0 ? &y : NULL));
    for (size_t i = 1; i < 4; i++) TSR_TRY(si_set_out_ex(c, n, i, TSR_INT64, &v, SI_ELEM_CERTAIN));
    return NULL;
}

/* Multinomial: [batch, sample_size] of dtype (default int32). */
static tsr_status *rule_multinomial(si_ctx *c, const ir_node *n) {
    si_shape x, out;
    si_in_shape(c, n, 0, &x);
    if (x.rank >= 0 && x.rank != 2) return si_err(n, "input has rank %d, not 2", (int)x.rank);
    out.rank = 2;
    out.dims[0] = x.rank == 2 ? x.dims[0] : si_unknown();
    out.dims[1] = si_known(si_attr_int(n, "sample_size", 1));
    return si_set_out_ex(c, n, 0, (int32_t)si_attr_int(n, "dtype", TSR_INT32), &out, SI_ELEM_CERTAIN);
}

/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: with reduction
 * "none" the target's shape [N, d1, ...], else a scalar; the second output
 * of SoftmaxCrossEntropyLoss (log_prob) is shaped like the scores. */
static tsr_status *rule_loss(si_ctx *c, const ir_node *n) {
    si_shape out;
    const char *reduction = si_attr_str(n, "reduction", "mean");
    int32_t elem = si_in_elem(c, n, 0);
    if (reduction[0] == 'n') si_in_shape(c, n, 1, &out);
    else out.rank = 0;
    TSR_TRY(si_set_out(c, n, 0, elem, out.rank >= 0 ? &out : NULL));
    if (n->n_outputs < 2) return NULL;
    si_shape scores;
    si_in_shape(c, n, 0, &scores);
    return si_set_out(c, n, 1, elem, scores.rank >= 0 ? &scores : NULL);
}

/* RegexFullMatch: a bool per string. */
static tsr_status *rule_regex_match(si_ctx *c, const ir_node *n) {
    si_shape x;
    si_in_shape(c, n, 0, &x);
    return si_set_out_ex(c, n, 0, TSR_BOOL, x.rank >= 0 ? &x : NULL, SI_ELEM_CERTAIN);
}

/* StringConcat: the two inputs broadcast, strings. */
static tsr_status *rule_string_concat(si_ctx *c, const ir_node *n) {
    si_shape a, b, out;
    si_in_shape(c, n, 0, &a);
    si_in_shape(c, n, 1, &b);
    if (a.rank < 0 || b.rank < 0) return si_set_out_ex(c, n, 0, TSR_STRING, NULL, SI_ELEM_CERTAIN);
    TSR_TRY(si_broadcast(c, n, &a, &b, &out));
    return si_set_out_ex(c, n, 0, TSR_STRING, &out, SI_ELEM_CERTAIN);
}

const si_op si_ops_misc[] = {
    {"HannWindow", 17, rule_window},
    {"HammingWindow", 17, rule_window},
    {"BlackmanWindow", 17, rule_window},
    {"DynamicQuantizeLinear", 11, rule_dynamic_quantize},
    {"NonMaxSuppression", 10, rule_nms},
    {"Unique", 11, rule_unique},
    {"Multinomial", 7, rule_multinomial},
    {"NegativeLogLikelihoodLoss", 12, rule_loss},
    {"SoftmaxCrossEntropyLoss", 12, rule_loss},
    {"RegexFullMatch", 20, rule_regex_match},
    {"StringConcat", 20, rule_string_concat},
};
const size_t si_ops_misc_count = sizeof si_ops_misc / sizeof si_ops_misc[0];
