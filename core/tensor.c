/* Host tensors: sizes with overflow checks, allocation, strings. */
#include <stdlib.h>
#include <string.h>

#include "host_block_cache.h"
#include "ir.h"
#include "status.h"
#include "tessera/tessera.h"

size_t tsr_elem_type_bits(int32_t t) {
    switch (t) {
    case TSR_BOOL:
    case TSR_UINT8:
    case TSR_INT8:
    case TSR_FLOAT8E4M3FN:
    case TSR_FLOAT8E4M3FNUZ:
    case TSR_FLOAT8E5M2:
    case TSR_FLOAT8E5M2FNUZ:
    case TSR_FLOAT8E8M0: return 8;
    case TSR_UINT16:
    case TSR_INT16:
    case TSR_FLOAT16:
    case TSR_BFLOAT16: return 16;
    case TSR_FLOAT:
    case TSR_INT32:
    case TSR_UINT32: return 32;
    case TSR_DOUBLE:
    case TSR_INT64:
    case TSR_UINT64:
    case TSR_COMPLEX64: return 64;
    case TSR_COMPLEX128: return 128;
    case TSR_UINT4:
    case TSR_INT4:
    case TSR_FLOAT4E2M1: return 4;
    case TSR_UINT2:
    case TSR_INT2: return 2;
    default: return 0;
    }
}

const char *tsr_elem_type_name(int32_t t) {
    static const char *const names[] = {
        "undefined", "float",      "uint8",      "int8",         "uint16",         "int16",      "int32",
        "int64",     "string",     "bool",       "float16",      "double",         "uint32",     "uint64",
        "complex64", "complex128", "bfloat16",   "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz",
        "uint4",     "int4",       "float4e2m1", "float8e8m0",   "uint2",          "int2"};
    if (t < 0 || (size_t)t >= sizeof names / sizeof names[0]) return "undefined";
    return names[t];
}

bool ir_elem_bytes(int32_t elem_type, uint64_t count, size_t *out) {
    uint64_t bits = elem_type == TSR_STRING ? 8 * sizeof(tsr_string) : tsr_elem_type_bits(elem_type);
    if (bits == 0) return false;
    if (count > UINT64_MAX / bits) return false;
    uint64_t bytes = (count * bits + 7) / 8;
    if (bytes > SIZE_MAX) return false;
    *out = (size_t)bytes;
    return true;
}

bool ir_dims_count(int32_t rank, const int64_t *dims, uint64_t *out) {
    uint64_t n = 1;
    bool empty = false;
    if (rank < 0) return false;
    for (int32_t i = 0; i < rank; i++) {
        if (dims[i] < 0) return false;
        if (dims[i] == 0) {
            empty = true;
            continue;
        }
        if (n > UINT64_MAX / (uint64_t)dims[i]) return false;
        n *= (uint64_t)dims[i];
    }
    /* No data bounds an empty tensor's other dims, and kernels work out
     * strides and offsets from them: [0, 2^40, 2^40] overflowed those. */
    if (empty && n > (uint64_t)IR_MAX_ELEMENTS) return false;
    *out = empty ? 0 : n;
    return true;
}

void ir_tensor_sync_view(ir_tensor *t) {
    memset(&t->view, 0, sizeof t->view);
    t->view.struct_size = sizeof t->view;
    t->view.elem_type = t->elem_type;
    t->view.rank = t->rank;
    t->view.dims = t->dims;
    t->view.data = t->data;
    t->view.nbytes = t->nbytes;
    t->view.memory_kind = TSR_MEMORY_HOST;
}

tsr_status *ir_tensor_new(int32_t elem_type, int32_t rank, const int64_t *dims, ir_tensor **out) {
    uint64_t count;
    size_t nbytes;
    if (rank < 0 || rank > IR_MAX_RANK) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "rank %d out of range", (int)rank);
    if (!ir_dims_count(rank, dims, &count)) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "negative or overflowing shape");
    if (!ir_elem_bytes(elem_type, count, &nbytes))
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "element type %d with %llu elements has no size", (int)elem_type,
                         (unsigned long long)count);
    ir_tensor *t = calloc(1, sizeof *t);
    if (!t) return TSR_NO_MEMORY();
    t->elem_type = elem_type;
    t->rank = rank;
    if (rank > 0) {
        t->dims = malloc(sizeof(int64_t) * (size_t)rank);
        if (!t->dims) {
            free(t);
            return TSR_NO_MEMORY();
        }
        memcpy(t->dims, dims, sizeof(int64_t) * (size_t)rank);
    }
    /* an empty tensor still gets a (1-byte) buffer: kernels may form
     * data + 0, which is undefined on a null pointer */
    {
        t->data = nbytes > 0 ? host_block_alloc(nbytes) : calloc(1, 1);
        if (!t->data) {
            free(t->dims);
            free(t);
            return tsr_error(TSR_ERR_NO_MEMORY, "out of memory allocating %zu bytes", nbytes);
        }
    }
    t->nbytes = nbytes;
    ir_tensor_sync_view(t);
    *out = t;
    return NULL;
}

tsr_status *ir_tensor_clone(const tsr_tensor *src, ir_tensor **out) {
    ir_tensor *t;
    if (src->memory_kind != TSR_MEMORY_HOST) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "tensor is not in host memory");
    TSR_TRY(ir_tensor_new(src->elem_type, src->rank, src->dims, &t));
    if (src->nbytes != t->nbytes) {
        size_t need = t->nbytes;
        ir_tensor_free(t);
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "tensor holds %zu bytes, its shape needs %zu", src->nbytes, need);
    }
    if (src->elem_type == TSR_STRING) {
        const tsr_string *s = src->data;
        for (size_t i = 0; i < t->nbytes / sizeof(tsr_string); i++) {
            tsr_status *st = ir_tensor_set_string(t, i, s[i].data, s[i].size);
            if (st) {
                ir_tensor_free(t);
                return st;
            }
        }
    } else if (t->nbytes) {
        memcpy(t->data, src->data, t->nbytes);
    }
    *out = t;
    return NULL;
}

tsr_status *ir_tensor_set_string(ir_tensor *t, size_t index, const char *data, size_t size) {
    if (t->elem_type != TSR_STRING) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "string index %zu out of range", index);
    return ir_strings_set(t->data, t->nbytes, index, data, size);
}

tsr_status *ir_strings_set(void *strings, size_t nbytes, size_t index, const char *data, size_t size) {
    if (index >= nbytes / sizeof(tsr_string))
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "string index %zu out of range", index);
    char *copy = malloc(size + 1);
    if (!copy) return TSR_NO_MEMORY();
    if (size) memcpy(copy, data, size);
    copy[size] = 0;
    tsr_string *s = (tsr_string *)strings + index;
    free((void *)s->data);
    s->data = copy;
    s->size = size;
    return NULL;
}

void ir_tensor_free(ir_tensor *t) {
    if (!t) return;
    if (t->elem_type == TSR_STRING && t->data) {
        tsr_string *s = t->data;
        for (size_t i = 0; i < t->nbytes / sizeof(tsr_string); i++) free((void *)s[i].data);
    }
    host_block_free(t->data, t->nbytes);
    free(t->dims);
    free(t->name);
    free(t);
}
