/*
 * SequenceEmpty, SequenceConstruct, SequenceAt, SequenceInsert, SequenceErase
 * and SequenceLength: making, reading and editing sequence values.
 */

#include "ref_sequence.h"

tsr_status *ref_sequence_sequence_empty(ref_ctx *c) {
    tsr_value *s;
    TSR_TRY(c->host->val_new_sequence((int32_t)ref_attr_int(c, "dtype", TSR_FLOAT), &s));
    return ref_sequence_set_out(c, 0, s);
}

/* Clone of `seq` with item `skip` left out (skip < 0: none). */
static tsr_status *clone_without(ref_ctx *c, const tsr_value *seq, int64_t skip, tsr_value **out) {
    TSR_TRY(c->host->val_new_sequence(c->host->val_elem_type(seq), out));
    size_t n = c->host->val_count(seq);
    for (size_t k = 0; k < n; k++) {
        if ((int64_t)k == skip) continue;
        tsr_value *item;
        tsr_status *st = c->host->val_clone(c->host->val_item(seq, k), &item);
        if (!st) st = c->host->val_append(*out, item);
        if (st) {
            c->host->val_free(*out);
            return st;
        }
    }
    return NULL;
}

tsr_status *ref_sequence_sequence_construct(ref_ctx *c) {
    const tsr_tensor *first = ref_in(c, 0);
    tsr_value *s;
    TSR_TRY(c->host->val_new_sequence(first ? first->elem_type : 0, &s));
    for (size_t i = 0; i < c->n_in; i++) {
        const tsr_tensor *t = ref_in(c, i);
        tsr_value *item;
        tsr_status *st = !t ? ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input %zu must be a tensor", i)
            : t->elem_type != first->elem_type
            ? ref_err(c, TSR_ERR_INVALID_ARGUMENT, "all inputs must have one element type")
            : ref_sequence_tensor_value(c, t, &item);
        if (!st) st = c->host->val_append(s, item);
        if (st) {
            c->host->val_free(s);
            return st;
        }
    }
    return ref_sequence_set_out(c, 0, s);
}

tsr_status *ref_sequence_sequence_at(ref_ctx *c) {
    const tsr_value *seq = NULL;
    int64_t at;
    TSR_TRY(ref_sequence_need_kind(c, 0, TSR_VALUE_SEQUENCE, &seq));
    TSR_TRY(ref_sequence_position(c, 1, (int64_t)c->host->val_count(seq), false, 0, &at));
    if (!ref_in(c, 1)) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "position is required");
    const tsr_value *item = c->host->val_item(seq, (size_t)at);
    const tsr_tensor *t = c->host->val_tensor(item);
    if (t) return ref_sequence_out_copy(c, 0, t);
    tsr_value *copy;
    TSR_TRY(c->host->val_clone(item, &copy));
    return ref_sequence_set_out(c, 0, copy);
}

tsr_status *ref_sequence_sequence_insert(ref_ctx *c) {
    const tsr_value *seq = NULL;
    TSR_TRY(ref_sequence_need_kind(c, 0, TSR_VALUE_SEQUENCE, &seq));
    const tsr_tensor *t = ref_in(c, 1);
    if (!t) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "the tensor to insert is required");
    int64_t len = (int64_t)c->host->val_count(seq), at;
    TSR_TRY(ref_sequence_position(c, 2, len, true, len, &at));
    tsr_value *out, *item;
    TSR_TRY(c->host->val_new_sequence(c->host->val_elem_type(seq) ? c->host->val_elem_type(seq) : t->elem_type, &out));
    tsr_status *st = NULL;
    for (int64_t k = 0; k <= len && !st; k++) {
        if (k == at) {
            st = ref_sequence_tensor_value(c, t, &item);
            if (!st) st = c->host->val_append(out, item);
        }
        if (k < len && !st) {
            st = c->host->val_clone(c->host->val_item(seq, (size_t)k), &item);
            if (!st) st = c->host->val_append(out, item);
        }
    }
    if (st) {
        c->host->val_free(out);
        return st;
    }
    return ref_sequence_set_out(c, 0, out);
}

tsr_status *ref_sequence_sequence_erase(ref_ctx *c) {
    const tsr_value *seq = NULL;
    TSR_TRY(ref_sequence_need_kind(c, 0, TSR_VALUE_SEQUENCE, &seq));
    int64_t len = (int64_t)c->host->val_count(seq), at;
    if (len == 0) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "cannot erase from an empty sequence");
    TSR_TRY(ref_sequence_position(c, 1, len, false, len - 1, &at));
    tsr_value *out;
    TSR_TRY(clone_without(c, seq, at, &out));
    return ref_sequence_set_out(c, 0, out);
}

tsr_status *ref_sequence_sequence_length(ref_ctx *c) {
    const tsr_value *seq = NULL;
    TSR_TRY(ref_sequence_need_kind(c, 0, TSR_VALUE_SEQUENCE, &seq));
    tsr_tensor *y;
    TSR_TRY(ref_out(c, 0, TSR_INT64, 0, NULL, &y));
    *(int64_t *)y->data = (int64_t)c->host->val_count(seq);
    return NULL;
}
