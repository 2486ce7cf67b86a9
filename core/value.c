/* Values the application owns: tensors made, parsed or returned by a run. */
#include <stdlib.h>

#include "session.h"
#include "status.h"

const char *tsr_version(void) { return "0.1.0"; }

static tsr_status *wrap(ir_tensor *t, tsr_value **out) {
    tsr_value *v = malloc(sizeof *v);
    if (!v) {
        ir_tensor_free(t);
        return TSR_NO_MEMORY();
    }
    v->tensor = t;
    *out = v;
    return NULL;
}

tsr_status *tsr_value_from_tensor(const tsr_tensor *tensor, tsr_value **out) {
    if (!tensor || !out) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "tensor and out are required");
    ir_tensor *t;
    TSR_TRY(ir_tensor_clone(tensor, &t));
    return wrap(t, out);
}

tsr_status *tsr_value_create_tensor(int32_t elem_type, int32_t rank, const int64_t *dims,
                                    tsr_value **out) {
    if (!out || (rank > 0 && !dims)) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "dims and out are required");
    ir_tensor *t;
    TSR_TRY(ir_tensor_new(elem_type, rank, dims, &t));
    return wrap(t, out);
}

tsr_status *tsr_value_from_onnx_tensor(const void *bytes, size_t size, tsr_value **out,
                                       char **name) {
    if (!bytes || !out) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "bytes and out are required");
    ir_tensor *t;
    TSR_TRY(ir_tensor_from_proto_bytes(bytes, size, &t));
    if (name) {
        *name = t->name;
        t->name = NULL;
    }
    return wrap(t, out);
}

tsr_status *tsr_value_to_onnx_tensor(const tsr_value *value, const char *name, void **bytes,
                                     size_t *size) {
    if (!value || !bytes || !size) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "value, bytes and size are required");
    return ir_tensor_to_proto_bytes(&value->tensor->view, name, bytes, size);
}

tsr_status *tsr_value_tensor(const tsr_value *value, tsr_tensor *out) {
    if (!value || !out) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "value and out are required");
    *out = value->tensor->view;
    return NULL;
}

tsr_status *tsr_value_set_string(tsr_value *value, size_t index, const char *data, size_t size) {
    if (!value || (size && !data)) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "value and data are required");
    return ir_tensor_set_string(value->tensor, index, data, size);
}

void tsr_value_free(tsr_value *value) {
    if (!value) return;
    ir_tensor_free(value->tensor);
    free(value);
}
