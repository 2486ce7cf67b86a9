/* How many inputs and outputs each ONNX operator allows (per domain and
 * since-version), from a table generated from onnx's operator schemas
 * (tools/gen/gen_op_arity.py -> op_arity_table.c). */
#ifndef TESSERA_OP_ARITY_H
#define TESSERA_OP_ARITY_H

#include <stddef.h>
#include <stdint.h>

#include "ir.h"
#include "tessera/tessera.h"

typedef struct op_arity {
    const char *domain; /* "" for ai.onnx */
    const char *op;
    int32_t since;
    int32_t min_in, max_in; /* max -1: unbounded (variadic) */
    int32_t min_out, max_out;
} op_arity;

typedef struct op_arity_domain {
    const char *domain;
    int32_t newest; /* the newest since-version the table knows for it */
} op_arity_domain;

extern const op_arity op_arity_table[];
extern const size_t op_arity_count;
extern const op_arity_domain op_arity_domains[];
extern const size_t op_arity_domain_count;

/* The entry for `op` of `domain` at `opset`, or NULL when the table does not
 * know it there (an unknown op, or an opset newer than the table's). */
const op_arity *op_arity_find(const char *domain, const char *op, int64_t opset);

/* NULL when node `n`'s input and output counts are within its op's at its
 * opset (or the table does not know the op there); else an error naming the
 * op, the counts and the opset. */
tsr_status *op_arity_check(const ir_node *n);

#endif
