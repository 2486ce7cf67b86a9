/* Rough static estimates the partitioner places nodes by: the arithmetic a
 * node does and the bytes a value holds, from inferred shapes. In core/, not
 * partitioner/, because the host API offers them to providers too
 * (host->node_flops), and core must not call up into the partitioner. */
#ifndef TESSERA_CORE_COST_H
#define TESSERA_CORE_COST_H

#include <stdbool.h>

#include "ir.h"

/* Floating-point operations (a multiply-add counts 2) one run of `n` does,
 * with each symbolic dimension counted as a fixed guess (cost.c), or a
 * negative number when a rank is not known. This is the host's node_flops
 * that providers turn into their claims' cost estimates. */
double cost_node_flops(const ir_node *n);

/* Bytes of a tensor value, or a negative number when its type or rank is
 * not known, or (unless `estimate`: then they count as the guess) a
 * dimension is symbolic. */
double cost_value_bytes(const ir_value *v, bool estimate);

/* Whether n is shape arithmetic or a small elementwise step: worth moving
 * next to its neighbours to save copies. Judged on known sizes only. */
bool cost_node_is_cheap(const ir_node *n);

#endif
