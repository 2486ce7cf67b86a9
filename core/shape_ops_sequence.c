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
static tsr_status *rule_sequence_empty(shape_ctx *c, const ir_node *n) {
    return shape_set_out_seq(c, n, 0, (int32_t)shape_attr_int(n, "dtype", TSR_FLOAT), NULL);
}

/* SequenceConstruct: the inputs share one element type; the tensors' shape
 * is what all inputs' shapes agree on. */
static tsr_status *rule_sequence_construct(shape_ctx *c, const ir_node *n) {
    int32_t elem = 0;
    shape_dims s;
    shape_dims_unknown(&s);
    for (size_t i = 0; i < n->n_inputs; i++) {
        shape_dims x;
        shape_in_shape(c, n, i, &x);
        if (!elem) elem = shape_in_elem(c, n, i);
        if (i == 0) s = x;
        else shape_dims_join(&s, &x, &s);
    }
    return shape_set_out_seq(c, n, 0, elem, &s);
}

/* SequenceInsert: the input sequence's type, its tensors' shape joined with
 * the inserted tensor's; either gives the element type. */
static tsr_status *rule_sequence_insert(shape_ctx *c, const ir_node *n) {
    const ir_type *inner = shape_in_inner(c, n, 0);
    int32_t elem = shape_type_elem(inner);
    if (!elem) elem = shape_in_elem(c, n, 1);
    shape_dims a, b;
    shape_type_shape(inner, &a);
    shape_in_shape(c, n, 1, &b);
    shape_dims_join(&a, &b, &a);
    return shape_set_out_seq(c, n, 0, elem, &a);
}

/* SequenceErase: the input sequence's type. */
static tsr_status *rule_sequence_erase(shape_ctx *c, const ir_node *n) {
    return shape_set_out_type(c, n, 0, shape_in_type(c, n, 0));
}

/* SequenceAt: the sequence's tensor type. */
static tsr_status *rule_sequence_at(shape_ctx *c, const ir_node *n) {
    return shape_set_out_type(c, n, 0, shape_in_inner(c, n, 0));
}

/* SequenceLength: an int64 scalar. */
static tsr_status *rule_sequence_length(shape_ctx *c, const ir_node *n) {
    shape_dims scalar;
    scalar.rank = 0;
    return shape_set_out_ex(c, n, 0, TSR_INT64, &scalar, SHAPE_ELEM_CERTAIN);
}

/* The length every piece of SplitToSequence has along the axis, or -1 when
 * they may differ or it can't be known: a constant scalar split that
 * divides the (known) axis, or a constant list of equal sizes. */
static int64_t split_piece(shape_ctx *c, const ir_node *n, shape_dim axis_dim) {
    enum { CAP = 4096 };
    int64_t *split = malloc(CAP * sizeof *split);
    size_t count = 0;
    int32_t rank = -1;
    int64_t piece = -1;
    if (split && shape_is_known(axis_dim) && shape_in_ints(c, n, 1, split, CAP, &count, &rank) && count) {
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
static tsr_status *rule_split_to_sequence(shape_ctx *c, const ir_node *n) {
    int32_t elem = shape_in_elem(c, n, 0);
    shape_dims x;
    shape_in_shape(c, n, 0, &x);
    int32_t axis;
    if (x.rank < 1 || !shape_axis(shape_attr_int(n, "axis", 0), x.rank, &axis))
        return shape_set_out_seq(c, n, 0, elem, NULL);
    if (shape_has_in(n, 1)) {
        int64_t piece = split_piece(c, n, x.dims[axis]);
        x.dims[axis] = piece >= 0 ? shape_known(piece) : shape_unknown();
    } else if (shape_attr_int(n, "keepdims", 1)) {
        x.dims[axis] = shape_known(1);
    } else {
        for (int32_t d = axis; d + 1 < x.rank; d++) x.dims[d] = x.dims[d + 1];
        x.rank--;
    }
    return shape_set_out_seq(c, n, 0, elem, &x);
}

/* ConcatFromSequence: a tensor of the sequence's type; new_axis=1 stacks
 * (one more dim). The concatenated axis has an unknown length (the
 * sequence's length is not known here). An axis out of range leaves the
 * shape unknown for the kernel to refuse. */
static tsr_status *rule_concat_from_sequence(shape_ctx *c, const ir_node *n) {
    const ir_type *inner = shape_in_inner(c, n, 0);
    int32_t elem = shape_type_elem(inner);
    shape_dims x, out;
    shape_type_shape(inner, &x);
    int64_t new_axis = shape_attr_int(n, "new_axis", 0);
    const ir_attr *axis_attr = shape_attr(n, "axis");
    int32_t axis;
    if (x.rank < 0 || !axis_attr || (new_axis != 0 && new_axis != 1) || x.rank + new_axis > IR_MAX_RANK ||
        !shape_axis(axis_attr->i, x.rank + (int32_t)new_axis, &axis) || (new_axis == 0 && x.rank == 0))
        return shape_set_out(c, n, 0, elem, NULL);
    out.rank = x.rank + (int32_t)new_axis;
    for (int32_t d = 0; d < out.rank; d++)
        out.dims[d] = d == axis ? shape_unknown() : x.dims[new_axis && d > axis ? d - 1 : d];
    return shape_set_out(c, n, 0, elem, &out);
}

/* SequenceMap: the body runs on one tensor of each sequence input (the
 * others as they are); each output is a sequence of the body's output. */
static tsr_status *rule_sequence_map(shape_ctx *c, const ir_node *n) {
    const ir_attr *a = shape_attr(n, "body");
    ir_graph *body = a && a->type == TSR_ATTR_GRAPH ? a->g : NULL;
    if (!body) return NULL;
    /* an input of unknown type feeds nothing (not even "a tensor") */
    static const ir_type unknown = {.kind = IR_TYPE_UNKNOWN, .rank = -1};
    shape_feed *f = calloc(n->n_inputs ? n->n_inputs : 1, sizeof *f);
    if (!f) return TSR_NO_MEMORY();
    for (size_t i = 0; i < n->n_inputs; i++) {
        const ir_type *t = shape_in_type(c, n, i);
        if (t && t->kind == IR_TYPE_SEQUENCE) t = t->elem;
        f[i].type = t ? t : &unknown;
        shape_dims_unknown(&f[i].shape);
    }
    tsr_status *st = shape_infer_subgraph(c, n, body, n->n_inputs, f);
    free(f);
    for (size_t i = 0; i < n->n_outputs && i < body->n_outputs && !st; i++)
        st = shape_set_out_wrap(c, n, i, IR_TYPE_SEQUENCE, shape_value_type(body->outputs[i]));
    return st;
}

/* Optional: an optional of its input's type. Without an input the type
 * comes from the `type` attribute, a TypeProto the IR does not keep
 * (core/loader.c drops TYPE_PROTO attributes), so the output keeps what
 * the model declares. */
static tsr_status *rule_optional(shape_ctx *c, const ir_node *n) {
    if (!shape_has_in(n, 0)) return NULL;
    return shape_set_out_wrap(c, n, 0, IR_TYPE_OPTIONAL, shape_in_type(c, n, 0));
}

/* OptionalHasElement: a bool scalar. */
static tsr_status *rule_optional_has_element(shape_ctx *c, const ir_node *n) {
    shape_dims scalar;
    scalar.rank = 0;
    return shape_set_out_ex(c, n, 0, TSR_BOOL, &scalar, SHAPE_ELEM_CERTAIN);
}

/* OptionalGetElement: the optional's content; a tensor or a sequence (which
 * opset 18 accepts as well) passes as it is. */
static tsr_status *rule_optional_get_element(shape_ctx *c, const ir_node *n) {
    const ir_type *t = shape_in_type(c, n, 0);
    if (t && t->kind == IR_TYPE_OPTIONAL) return shape_set_out_type(c, n, 0, t->elem);
    return shape_set_out_type(c, n, 0, t);
}

const shape_op shape_ops_sequence[] = {
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
const size_t shape_ops_sequence_count = sizeof shape_ops_sequence / sizeof shape_ops_sequence[0];
