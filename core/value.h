/* Values of every kind (tensor, sequence, optional, map): what applications
 * hold, what sequence kernels build, and what the executor keeps for a
 * non-tensor edge. Everything lives in host memory. */
#ifndef TESSERA_CORE_VALUE_H
#define TESSERA_CORE_VALUE_H

#include "ir.h"
#include "tessera/tessera.h"

struct tsr_value {
    int32_t kind;               /* tsr_value_kind */
    ir_tensor *tensor;          /* TENSOR: owned; NULL when `borrowed` */
    const tsr_tensor *borrowed; /* TENSOR seen without a copy (run inputs) */
    int32_t elem_type;          /* SEQUENCE / OPTIONAL: element tensor type, 0 unknown */
    size_t n, cap;
    struct tsr_value **items; /* SEQUENCE: items; OPTIONAL: 0 or 1; MAP: keys, values */
};

/* An empty value of `kind`. */
tsr_status *value_alloc(int32_t kind, tsr_value **out);
/* Appends to a container of any kind (map: keys, then values), taking
 * ownership of `item` (also on failure). */
tsr_status *value_push(tsr_value *v, tsr_value *item);
/* Takes ownership of `t` (also on failure). */
tsr_status *value_wrap_tensor(ir_tensor *t, tsr_value **out);
/* A TENSOR value that points at `t` without owning it. */
tsr_status *value_borrow_tensor(const tsr_tensor *t, tsr_value **out);
tsr_status *value_new_sequence(int32_t elem_type, tsr_value **out);
/* Takes ownership of `contents` (may be NULL: an empty optional). */
tsr_status *value_new_optional(tsr_value *contents, int32_t elem_type, tsr_value **out);
/* Takes ownership of `item` (also on failure). */
tsr_status *value_append(tsr_value *seq, tsr_value *item);
tsr_status *value_clone(const tsr_value *v, tsr_value **out);
/* The tensor of a TENSOR value, else NULL. */
const tsr_tensor *value_tensor_view(const tsr_value *v);
void value_free(tsr_value *v);

/* Parses a TensorProto / SequenceProto / OptionalProto / MapProto (by
 * `kind`) into a value (core/value_proto.c). */
tsr_status *value_from_proto_bytes(const void *bytes, size_t size, int32_t kind, tsr_value **out, char **name);

#endif
