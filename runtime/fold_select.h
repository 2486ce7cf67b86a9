/* Constant folding at session creation, the choosing half: which nodes of
 * a graph compute the same tensors on every run (runtime/fold_select.c);
 * runtime/session_fold.c runs them. */
#ifndef TESSERA_RUNTIME_FOLD_SELECT_H
#define TESSERA_RUNTIME_FOLD_SELECT_H

#include <stdbool.h>
#include <stdint.h>

#include "ir.h"
#include "status.h"

typedef struct fold_plan {
    ir_node **shapes; /* Shape/Size read off their input's type */
    size_t n_shapes;
    ir_node **evals; /* to run once, in graph order */
    size_t n_evals;
    bool *constant; /* by value index: known at creation */
} fold_plan;

/* Chooses g's nodes to fold: every input a constant (for a body, outer
 * values that are constants count), or Shape/Size of a tensor whose dims
 * are known; outputs plain tensors of known shape, each node's at most
 * `limit` bytes, none a body's output; not random or training-only ops,
 * DequantizeLinear, nodes with bodies, nor nodes `pinned` says yes to.
 * *p is to be freed with fold_plan_free, also on error. */
tsr_status *fold_choose(ir_graph *g, uint64_t limit, bool (*pinned)(const ir_node *, void *), void *ctx, fold_plan *p);
void fold_plan_free(fold_plan *p);
/* What Shape (start/end as opset 15 has them) or Size node n gives, read
 * off its input's type (fold_choose put n in shapes). */
tsr_status *fold_shape_value(const ir_node *n, ir_tensor **out);

#endif
