/* Test data and inputs that are not plain tensors: SequenceProto,
 * OptionalProto and MapProto, turned into tsr_value trees. */
#include <stdlib.h>
#include <string.h>

#include "loader_internal.h"
#include "status.h"
#include "value.h"

/* Nesting deeper than this is hostile, not data. */
#define VALUE_MAX_DEPTH 32

/* SequenceProto / OptionalProto elem_type numbers. */
enum { PB_TENSOR = 1, PB_SPARSE = 2, PB_SEQUENCE = 3, PB_MAP = 4, PB_OPTIONAL = 5 };

static tsr_status *from_sequence(const Onnx__SequenceProto *sp, int depth, tsr_value **out);
static tsr_status *from_optional(const Onnx__OptionalProto *op, int depth, tsr_value **out);
static tsr_status *from_map(const Onnx__MapProto *mp, int depth, tsr_value **out);

static tsr_status *from_tensor(Onnx__TensorProto *tp, tsr_value **out) {
    ir_tensor *t;
    TSR_TRY(loader_tensor_decode(tp, NULL, &t));
    return value_wrap_tensor(t, out);
}

static tsr_status *from_sequence(const Onnx__SequenceProto *sp, int depth, tsr_value **out) {
    if (depth > VALUE_MAX_DEPTH) return tsr_error(TSR_ERR_INVALID_MODEL, "values nested too deeply");
    tsr_value *seq;
    TSR_TRY(value_new_sequence(0, &seq));
    tsr_status *st = NULL;
    for (size_t i = 0; i < sp->n_tensor_values && !st; i++) {
        tsr_value *item = NULL;
        st = from_tensor(sp->tensor_values[i], &item);
        if (!st) st = value_append(seq, item);
        if (st) st = tsr_error_wrap(st, "item %zu", i);
    }
    for (size_t i = 0; i < sp->n_sequence_values && !st; i++) {
        tsr_value *item = NULL;
        st = from_sequence(sp->sequence_values[i], depth + 1, &item);
        if (!st) st = value_append(seq, item);
    }
    for (size_t i = 0; i < sp->n_map_values && !st; i++) {
        tsr_value *item = NULL;
        st = from_map(sp->map_values[i], depth + 1, &item);
        if (!st) st = value_append(seq, item);
    }
    for (size_t i = 0; i < sp->n_optional_values && !st; i++) {
        tsr_value *item = NULL;
        st = from_optional(sp->optional_values[i], depth + 1, &item);
        if (!st) st = value_append(seq, item);
    }
    if (!st && sp->n_sparse_tensor_values)
        st = tsr_error(TSR_ERR_NOT_SUPPORTED, "sequences of sparse tensors are not supported");
    if (st) {
        value_free(seq);
        return st;
    }
    *out = seq;
    return NULL;
}

static tsr_status *from_optional(const Onnx__OptionalProto *op, int depth, tsr_value **out) {
    if (depth > VALUE_MAX_DEPTH) return tsr_error(TSR_ERR_INVALID_MODEL, "values nested too deeply");
    tsr_value *inner = NULL;
    tsr_status *st = NULL;
    if (op->tensor_value) st = from_tensor(op->tensor_value, &inner);
    else if (op->sequence_value) st = from_sequence(op->sequence_value, depth + 1, &inner);
    else if (op->map_value) st = from_map(op->map_value, depth + 1, &inner);
    else if (op->optional_value) st = from_optional(op->optional_value, depth + 1, &inner);
    else if (op->sparse_tensor_value)
        st = tsr_error(TSR_ERR_NOT_SUPPORTED, "optional sparse tensors are not supported");
    if (st) return st;
    return value_new_optional(inner, 0, out);
}

static tsr_status *from_map(const Onnx__MapProto *mp, int depth, tsr_value **out) {
    if (depth > VALUE_MAX_DEPTH) return tsr_error(TSR_ERR_INVALID_MODEL, "values nested too deeply");
    bool strings = mp->key_type == TSR_STRING;
    size_t n = strings ? mp->n_string_keys : mp->n_keys;
    int64_t dims[1] = {(int64_t)n};
    ir_tensor *keys;
    TSR_TRY(ir_tensor_new(strings ? TSR_STRING : TSR_INT64, 1, dims, &keys));
    tsr_status *st = NULL;
    for (size_t i = 0; i < n && !st; i++) {
        if (strings) st = ir_tensor_set_string(keys, i, (const char *)mp->string_keys[i].data, mp->string_keys[i].len);
        else ((int64_t *)keys->data)[i] = mp->keys[i];
    }
    tsr_value *map = NULL, *kv = NULL, *vals = NULL;
    if (!st) st = value_wrap_tensor(keys, &kv);
    else ir_tensor_free(keys);
    if (!st) st = mp->values ? from_sequence(mp->values, depth + 1, &vals) : value_new_sequence(0, &vals);
    if (!st && vals->n != n) st = tsr_error(TSR_ERR_INVALID_MODEL, "map has %zu keys but %zu values", n, vals->n);
    if (!st) st = value_alloc(TSR_VALUE_MAP, &map);
    if (!st) {
        st = value_push(map, kv);
        kv = NULL;
    }
    if (!st) {
        st = value_push(map, vals);
        vals = NULL;
    }
    value_free(kv);
    value_free(vals);
    if (st) {
        value_free(map);
        return st;
    }
    *out = map;
    return NULL;
}

tsr_status *value_from_proto_bytes(const void *bytes, size_t size, int32_t kind, tsr_value **out, char **name) {
    tsr_status *st = NULL;
    const char *nm = NULL;
    if (kind == TSR_VALUE_SEQUENCE) {
        Onnx__SequenceProto *sp = onnx__sequence_proto__unpack(NULL, size, bytes);
        if (!sp) return tsr_error(TSR_ERR_INVALID_MODEL, "not a valid SequenceProto");
        st = from_sequence(sp, 0, out);
        if (!st && sp->has_elem_type && sp->elem_type == PB_TENSOR && (*out)->n == 0) (*out)->elem_type = 0;
        nm = sp->name;
        if (!st && name) *name = nm ? strdup(nm) : NULL;
        onnx__sequence_proto__free_unpacked(sp, NULL);
    } else if (kind == TSR_VALUE_OPTIONAL) {
        Onnx__OptionalProto *op = onnx__optional_proto__unpack(NULL, size, bytes);
        if (!op) return tsr_error(TSR_ERR_INVALID_MODEL, "not a valid OptionalProto");
        st = from_optional(op, 0, out);
        if (!st && name) *name = op->name ? strdup(op->name) : NULL;
        onnx__optional_proto__free_unpacked(op, NULL);
    } else if (kind == TSR_VALUE_MAP) {
        Onnx__MapProto *mp = onnx__map_proto__unpack(NULL, size, bytes);
        if (!mp) return tsr_error(TSR_ERR_INVALID_MODEL, "not a valid MapProto");
        st = from_map(mp, 0, out);
        if (!st && name) *name = mp->name ? strdup(mp->name) : NULL;
        onnx__map_proto__free_unpacked(mp, NULL);
    } else {
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "unknown value kind %d", (int)kind);
    }
    return st;
}
