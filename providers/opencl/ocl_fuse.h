/* Turning a piece's nodes into steps: single ops, chains of elementwise ops
 * as one generated kernel, and Conv/Gemm/MatMul with their bias and
 * activation folded in. */
#ifndef OCL_FUSE_H
#define OCL_FUSE_H

#include "ocl_op.h"

typedef struct ocl_step {
    const ocl_op *op;
    void *op_state;
    const tsr_node *node; /* the first node, for messages */
    size_t n_in;
    const char **in_names; /* NULL for an omitted input */
    size_t n_out;
    const char **out_names; /* NULL for an omitted output */
} ocl_step;

tsr_status *ocl_fuse_steps(ocl_state *st, const tsr_graph *graph, ocl_step **steps, size_t *n);
void ocl_step_free(ocl_step *s);

/* --- elementwise expressions (ocl_elementwise.c) ------------------------ */
bool ocl_ew_is_elementwise(const tsr_node *n);
/* True when the node is a one-input elementwise op whose other inputs are
 * constants, so it can be an epilogue of a GEMM or conv kernel. */
bool ocl_ew_is_epilogue(const tsr_node *n);
/* Writes an OpenCL C expression computing node `n` applied to `var`
 * (epilogue form: only input 0 varies). False when it cannot. */
bool ocl_ew_epilogue_expr(const tsr_node *n, const char *var, char *buf, size_t size);
/* A step computing a chain of elementwise nodes in one kernel. */
tsr_status *ocl_ew_group_step(ocl_state *st, const tsr_node *const *nodes, size_t count, ocl_step *step);

/* --- Conv/Gemm/MatMul with folded BatchNormalization or a MatMul's bias
 * Add, and epilogues ------------------------------------------------------ */
tsr_status *ocl_anchor_step(ocl_state *st, const tsr_node *anchor, const tsr_node *bn, const tsr_node *bias_add,
                            const tsr_node *const *epilogue, size_t n_epilogue, ocl_step *step);

#endif
