/* What the load-time rewrites of core/ share (core/rewrite_util.c): who
 * reads each value of a graph, and a Transpose's permutation. */
#ifndef TESSERA_CORE_REWRITE_UTIL_H
#define TESSERA_CORE_REWRITE_UTIL_H

#include <stddef.h>

#include "ir.h"

/* Readers of each value of a graph (by index): node inputs, graph outputs
 * and subgraph captures, counted in one pass; last[i] is a node reading
 * value i through an input (NULL when only outputs or captures do). */
typedef struct reader_table {
    size_t *count;
    ir_node **last;
} reader_table;

/* Counts g's readers into *t; false when out of memory (*t then holds
 * nothing to free). */
bool reader_table_make(const ir_graph *g, reader_table *t);
void reader_table_free(reader_table *t);

/* Whether n is the ai.onnx op `op`. */
bool rewrite_is_op(const ir_node *n, const char *op);

/* The Transpose's permutation into p (IR_MAX_RANK entries) and its rank;
 * -1 when it is malformed or, without a perm, its input's rank is unknown. */
int32_t transpose_perm(const ir_node *t, int64_t *p);

#endif
