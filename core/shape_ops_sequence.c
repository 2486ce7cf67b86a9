/*
 * Type rules for sequences and optionals: SequenceEmpty, SequenceConstruct,
 * SequenceInsert, SequenceErase, SequenceAt, SequenceLength,
 * SplitToSequence, ConcatFromSequence, SequenceMap, Optional,
 * OptionalHasElement and OptionalGetElement, after the inference functions
 * of ONNX's operator schemas (onnx/defs/sequence, onnx/defs/optional).
 *
 * A sequence's tensors may differ in shape, so the shape a sequence type
 * carries is what all of them share (a dim unknown where they differ). A
 * value whose element type stays unknown here would reach the providers as
 * an untyped input; the value_types ctest checks that none does.
 */
#include <stdlib.h>

#include "shape_infer_internal.h"
#include "tessera/tessera.h"

/* SequenceEmpty: a sequence of `dtype` tensors (default float). */
static tsr_status *rule_sequence_empty(si_ctx *c, const ir_node *n) {
    return si_set_out_seq(c, n, 0, (int32_t)si_attr_int(n, "dtype", TSR_FLOAT), NULL);
}

/* SequenceConstruct: the inputs share one element type; the tensors' shape
 * is what all inputs' shapes agree on. */
static tsr_status *rule_sequence_construct(si_ctx *c, const ir_node *n) {
    int32_t elem = 0;
    si_shape s;
    si_shape_unknown(&s);
    for (size_t i = 0; i < n->n_inputs; i++) {
        si_shape x;
        si_in_shape(c, n, i, &x);
        if (!elem) elem = si_in_elem(c, n, i);
        if (i == 0) s = x;
        else si_shape_join(&s, &x, &s);
    }
    return si_set_out_seq(c, n, 0, elem, &s);
}

/* SequenceInsert: the input sequence's type, its tensors' shape joined with
 * the inserted tensor's; either gives the element type. */
static tsr_status *rule_sequence_insert(si_ctx *c, const ir_node *n) {
    const ir_type *inner = si_in_inner(c, n, 0);
    int32_t elem = si_type_elem(inner);
    if (!elem) elem = si_in_elem(c, n, 1);
    si_shape a, b;
    si_type_shape(inner, &a);
    si_in_shape(c, n, 1, &b);
    si_shape_join(&a, &b, &a);
    return si_set_out_seq(c, n, 0, elem, &a);
}

/* SequenceErase: the input sequence's type. */
static tsr_status *rule_sequence_erase(si_ctx *c, const ir_node *n) {
    return si_set_out_type(c, n, 0, si_in_type(c, n, 0));
}

/* SequenceAt: the sequence's tensor type. */
static tsr_status *rule_sequence_at(si_ctx *c, const ir_node *n) {
    return si_set_out_type(c, n, 0, si_in_inner(c, n, 0));
}

/* SequenceLength: an int64 scalar. */
static tsr_status *rule_sequence_length(si_ctx *c, const ir_node *n) {
    si_shape scalar;
    scalar.rank = 0;
    return si_set_out_ex(c, n, 0, TSR_INT64, &scalar, SI_ELEM_CERTAIN);
}

/* The length every piece of SplitToSequence has along the axis, or -1 when
 * they may differ or it can't be known: a constant scalar split that
 * divides the (known) axis, or a constant list of equal sizes. */
static int64_t split_piece(si_ctx *c, const ir_node *n, si_dim axis_dim) {
    enum { CAP = 4096 };
    int64_t *split = malloc(CAP * sizeof *split);
    size_t count = 0;
    int32_t rank = -1;
    int64_t piece = -1;
    if (split && si_is_known(axis_dim) && si_in_ints(c, n, 1, split, CAP, &count, &rank) && count) {
        if (rank == 0) {
            if (split[0] > 0 && axis_dim.value % split[0] == 0) piece = split[0];
        } else {
            /* equal pieces that add up to the axis (else the kernel refuses it) */
            int64_t sum = 0;
            piece = split[0];
            for (size_t k = 0; k < count && piece >= 0; k++)
                if (split[k] != piece || __builtin_add_overflow(sum, split[k], &sum)) piece = -1;
            if (sum != axis_dim.value) piece = -1;
        }
    }
    free(split);
    return piece;
}

/* SplitToSequence: tensors of the input's type; with `split` given the axis
 * stays (its length known when all pieces are equal), without it the input
 * is split into ones and keepdims=0 drops the axis. */
static tsr_status *rule_split_to_sequence(si_ctx *c, const ir_node *n) {
    int32_t elem = si_in_elem(c, n, 0);
    si_shape x;
    si_in_shape(c, n, 0, &x);
    int32_t axis;
    if (x.rank < 1 || !si_axis(si_attr_int(n, "axis", 0), x.rank, &axis)) return si_set_out_seq(c, n, 0, elem, NULL);
    if (si_has_in(n, 1)) {
        int64_t piece = split_piece(c, n, x.dims[axis]);
        x.dims[axis] = piece >= 0 ? si_known(piece) : si_unknown();
    } else if (si_attr_int(n, "keepdims", 1)) {
        x.dims[axis] = si_known(1);
    } else {
        for (int32_t d = axis; d + 1 < x.rank; d++) x.dims[d] = x.dims[d + 1];
        x.rank--;
    }
    return si_set_out_seq(c, n, 0, elem, &x);
}

/* ConcatFromSequence: a tensor of the sequence's type; new_axis=1 stacks
 * (one more dim). The concatenated axis has an unknown length (the
 * sequence's length is not known here). An axis out of range leaves the
 * shape unknown for the kernel to refuse. */
static tsr_status *rule_concat_from_sequence(si_ctx *c, const ir_node *n) {
    const ir_type *inner = si_in_inner(c, n, 0);
    int32_t elem = si_type_elem(inner);
    si_shape x, out;
    si_type_shape(inner, &x);
    int64_t new_axis = si_attr_int(n, "new_axis", 0);
    const ir_attr *axis_attr = si_attr(n, "axis");
    int32_t axis;
    if (x.rank < 0 || !axis_attr || (new_axis != 0 && new_axis != 1) || x.rank + new_axis > IR_MAX_RANK ||
        !si_axis(axis_attr->i, x.rank + (int32_t)new_axis, &axis) || (new_axis == 0 && x.rank == 0))
        return si_set_out(c, n, 0, elem, NULL);
    out.rank = x.rank + (int32_t)new_axis;
    for (int32_t d = 0; d < out.rank; d++)
        out.dims[d] = d == axis ? si_unknown() : x.dims[new_axis && d > axis ? d - 1 : d];
    return si_set_out(c, n, 0, elem, &out);
}

/* SequenceMap: the body runs on one tensor of each sequence input (the
 * others as they are); each output is a sequence of the body's output. */
static tsr_status *rule_sequence_map(si_ctx *c, const ir_node *n) {
    const ir_attr *a = si_attr(n, "body");
    ir_graph *body = a && a->type == TSR_ATTR_GRAPH ? a->g : NULL;
    if (!body) return NULL;
    /* an input of unknown type feeds nothing (not even "a tensor") */
    static const ir_type unknown = {.kind = IR_TYPE_UNKNOWN, .rank = -1};
    si_feed *f = calloc(n->n_inputs ? n->n_inputs : 1, sizeof *f);
    if (!f) return TSR_NO_MEMORY();
    for (size_t i = 0; i < n->n_inputs; i++) {
        const ir_type *t = si_in_type(c, n, i);
        if (t && t->kind == IR_TYPE_SEQUENCE) t = t->elem;
        f[i].type = t ? t : &unknown;
        si_shape_unknown(&f[i].shape);
    }
    tsr_status *st = si_infer_subgraph(c, n, body, n->n_inputs, f);
    free(f);
    for (size_t i = 0; i < n->n_outputs && i < body->n_outputs && !st; i++)
        st = si_set_out_wrap(c, n, i, IR_TYPE_SEQUENCE, si_value_type(body->outputs[i]));
    return st;
}

/* Optional: an optional of its input's type. Without an input the type
 * comes from the `type` attribute, a TypeProto the IR does not keep
 * (core/loader.c drops TYPE_PROTO attributes), so the output keeps what
 * the model declares. */
static tsr_status *rule_optional(si_ctx *c, const ir_node *n) {
    if (!si_has_in(n, 0)) return NULL;
    return si_set_out_wrap(c, n, 0, IR_TYPE_OPTIONAL, si_in_type(c, n, 0));
}

/* OptionalHasElement: a bool scalar. */
static tsr_status *rule_optional_has_element(si_ctx *c, const ir_node *n) {
    si_shape scalar;
    scalar.rank = 0;
    return si_set_out_ex(c, n, 0, TSR_BOOL, &scalar, SI_ELEM_CERTAIN);
}

/* OptionalGetElement: the optional's content; a tensor or a sequence (which
 * opset 18 accepts as well) passes as it is. */
static tsr_status *rule_optional_get_element(si_ctx *c, const ir_node *n) {
    const ir_type *t = si_in_type(c, n, 0);
    if (t && t->kind == IR_TYPE_OPTIONAL) return si_set_out_type(c, n, 0, t->elem);
    return si_set_out_type(c, n, 0, t);
}

const si_op si_ops_sequence[] = {
    {"SequenceEmpty", 11, rule_sequence_empty},
    {"SequenceConstruct", 11, rule_sequence_construct},
    {"SequenceInsert", 11, rule_sequence_insert},
    {"SequenceErase", 11, rule_sequence_erase},
    {"SequenceAt", 11, rule_sequence_at},
    {"SequenceLength", 11, rule_sequence_length},
    {"SplitToSequence", 11, rule_split_to_sequence},
    {"ConcatFromSequence", 11, rule_concat_from_sequence},
    {"SequenceMap", 17, rule_sequence_map},
    {"Optional", 15, rule_optional},
    {"OptionalHasElement", 15, rule_optional_has_element},
    {"OptionalGetElement", 15, rule_optional_get_element},
};
const size_t si_ops_sequence_count = sizeof si_ops_sequence / sizeof si_ops_sequence[0];
