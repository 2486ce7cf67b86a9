/* Rough static estimates the partitioner places nodes by: the arithmetic a
 * node does and the bytes a value holds, from inferred shapes. */
#ifndef TESSERA_PARTITIONER_COST_H
#define TESSERA_PARTITIONER_COST_H

#include <stdbool.h>

#include "ir.h"

/* Floating-point operations (a multiply-add counts 2) one run of `n` does,
 * or a negative number when its shapes are not known. */
double cost_node_flops(const ir_node *n);

/* Bytes of a tensor value, or a negative number when its shape or type is
 * not known statically. */
double cost_value_bytes(const ir_value *v);

/* Whether n is shape arithmetic or a small elementwise step: worth moving
 * next to its neighbours to save copies. */
bool cost_node_is_cheap(const ir_node *n);

#endif
