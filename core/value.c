/* Values the application owns: tensors made, parsed or returned by a run,
 * and sequences, optionals and maps of them. */
#include "value.h"

#include <stdlib.h>
#include <string.h>

#include "status.h"

const char *tsr_version(void) { return "0.1.0"; }

tsr_status *value_alloc(int32_t kind, tsr_value **out) {
    tsr_value *v = calloc(1, sizeof *v);
    if (!v) return TSR_NO_MEMORY();
    v->kind = kind;
    *out = v;
    return NULL;
}

tsr_status *value_wrap_tensor(ir_tensor *t, tsr_value **out) {
    tsr_status *st = value_alloc(TSR_VALUE_TENSOR, out);
    if (st) {
        ir_tensor_free(t);
        return st;
    }
    (*out)->tensor = t;
    (*out)->elem_type = t->elem_type;
    return NULL;
}

tsr_status *value_borrow_tensor(const tsr_tensor *t, tsr_value **out) {
    TSR_TRY(value_alloc(TSR_VALUE_TENSOR, out));
    (*out)->borrowed = t;
    (*out)->elem_type = t->elem_type;
    return NULL;
}

tsr_status *value_new_sequence(int32_t elem_type, tsr_value **out) {
    TSR_TRY(value_alloc(TSR_VALUE_SEQUENCE, out));
    (*out)->elem_type = elem_type;
    return NULL;
}

tsr_status *value_push(tsr_value *v, tsr_value *item) {
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 4;
        tsr_value **items = realloc(v->items, sizeof *items * cap);
        if (!items) {
            value_free(item);
            return TSR_NO_MEMORY();
        }
        v->items = items;
        v->cap = cap;
    }
    v->items[v->n++] = item;
    return NULL;
}

tsr_status *value_new_optional(tsr_value *contents, int32_t elem_type, tsr_value **out) {
    tsr_status *st = value_alloc(TSR_VALUE_OPTIONAL, out);
    if (st) {
        value_free(contents);
        return st;
    }
    (*out)->elem_type = contents ? tsr_value_elem_type(contents) : elem_type;
    if (contents && (st = value_push(*out, contents))) {
        value_free(*out);
        *out = NULL;
    }
    return st;
}

tsr_status *value_append(tsr_value *seq, tsr_value *item) {
    if (!seq || !item || seq->kind != TSR_VALUE_SEQUENCE) {
        value_free(item);
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "appending needs a sequence and an item");
    }
    if (!seq->elem_type) seq->elem_type = tsr_value_elem_type(item);
    return value_push(seq, item);
}

const tsr_tensor *value_tensor_view(const tsr_value *v) {
    if (!v || v->kind != TSR_VALUE_TENSOR) return NULL;
    return v->borrowed ? v->borrowed : &v->tensor->view;
}

tsr_status *value_clone(const tsr_value *v, tsr_value **out) {
    if (!v || !out) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "value and out are required");
    if (v->kind == TSR_VALUE_TENSOR) {
        ir_tensor *t;
        TSR_TRY(ir_tensor_clone(value_tensor_view(v), &t));
        return value_wrap_tensor(t, out);
    }
    tsr_value *c = NULL;
    TSR_TRY(value_alloc(v->kind, &c));
    c->elem_type = v->elem_type;
    for (size_t i = 0; i < v->n; i++) {
        tsr_value *item;
        tsr_status *st = value_clone(v->items[i], &item);
        if (!st) st = value_push(c, item);
        if (st) {
            value_free(c);
            return st;
        }
    }
    *out = c;
    return NULL;
}

void value_free(tsr_value *v) {
    if (!v) return;
    if (v->tensor) ir_tensor_free(v->tensor);
    for (size_t i = 0; i < v->n; i++) value_free(v->items[i]);
    free(v->items);
    free(v);
}

/* ------------------------------------------------------------------------ */
/* The application API                                                       */

tsr_status *tsr_value_from_tensor(const tsr_tensor *tensor, tsr_value **out) {
    if (!tensor || !out) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "tensor and out are required");
    ir_tensor *t;
    TSR_TRY(ir_tensor_clone(tensor, &t));
    return value_wrap_tensor(t, out);
}

tsr_status *tsr_value_create_tensor(int32_t elem_type, int32_t rank, const int64_t *dims, tsr_value **out) {
    if (!out || (rank > 0 && !dims)) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "dims and out are required");
    ir_tensor *t;
    TSR_TRY(ir_tensor_new(elem_type, rank, dims, &t));
    return value_wrap_tensor(t, out);
}

tsr_status *tsr_value_from_onnx_tensor(const void *bytes, size_t size, tsr_value **out, char **name) {
    if (!bytes || !out) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "bytes and out are required");
    ir_tensor *t;
    TSR_TRY(ir_tensor_from_proto_bytes(bytes, size, &t));
    if (name) {
        *name = t->name;
        t->name = NULL;
    }
    return value_wrap_tensor(t, out);
}

tsr_status *tsr_value_from_onnx(const void *bytes, size_t size, int32_t kind, tsr_value **out, char **name) {
    if (!bytes || !out) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "bytes and out are required");
    if (kind == TSR_VALUE_TENSOR || kind == TSR_VALUE_NONE) return tsr_value_from_onnx_tensor(bytes, size, out, name);
    return value_from_proto_bytes(bytes, size, kind, out, name);
}

tsr_status *tsr_value_to_onnx_tensor(const tsr_value *value, const char *name, void **bytes, size_t *size) {
    if (!value || !bytes || !size) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "value, bytes and size are required");
    const tsr_tensor *t = value_tensor_view(value);
    if (!t) return tsr_error(TSR_ERR_NOT_SUPPORTED, "value '%s' is not a tensor", name ? name : "");
    return ir_tensor_to_proto_bytes(t, name, bytes, size);
}

tsr_status *tsr_value_tensor(const tsr_value *value, tsr_tensor *out) {
    if (!value || !out) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "value and out are required");
    const tsr_tensor *t = value_tensor_view(value);
    if (!t) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "the value is not a tensor");
    *out = *t;
    return NULL;
}

tsr_status *tsr_value_set_string(tsr_value *value, size_t index, const char *data, size_t size) {
    if (!value || (size && !data)) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "value and data are required");
    if (!value->tensor) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "the value is not an owned tensor");
    return ir_tensor_set_string(value->tensor, index, data, size);
}

void tsr_value_free(tsr_value *value) { value_free(value); }

int32_t tsr_value_get_kind(const tsr_value *value) { return value ? value->kind : TSR_VALUE_NONE; }

size_t tsr_value_count(const tsr_value *value) { return value && value->kind != TSR_VALUE_TENSOR ? value->n : 0; }

const tsr_value *tsr_value_item(const tsr_value *value, size_t index) {
    if (!value || value->kind == TSR_VALUE_TENSOR || index >= value->n) return NULL;
    return value->items[index];
}

int32_t tsr_value_elem_type(const tsr_value *value) {
    if (!value) return 0;
    if (value->kind == TSR_VALUE_TENSOR) return value_tensor_view(value)->elem_type;
    return value->elem_type;
}

tsr_status *tsr_value_create_sequence(int32_t elem_type, tsr_value **out) {
    if (!out) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "out is required");
    return value_new_sequence(elem_type, out);
}

tsr_status *tsr_value_sequence_append(tsr_value *sequence, tsr_value *item) { return value_append(sequence, item); }

tsr_status *tsr_value_create_optional(tsr_value *contents, int32_t elem_type, tsr_value **out) {
    if (!out) {
        value_free(contents);
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "out is required");
    }
    return value_new_optional(contents, elem_type, out);
}

tsr_status *tsr_value_clone(const tsr_value *value, tsr_value **out) { return value_clone(value, out); }
