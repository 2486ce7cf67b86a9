/* Pieces: a claimed set of nodes compiled into steps (one op, or a fused
 * group of nodes, each step one or a few kernel launches) that pass device
 * buffers to each other. */
#ifndef OCL_PIECE_H
#define OCL_PIECE_H

#include "ocl.h"

/* A tensor as the steps see it: a device buffer with a shape. */
typedef struct ocl_tensor {
    cl_mem mem;
    int32_t elem_type;
    int32_t rank;
    int64_t dims[OCL_MAX_RANK];
    size_t count;   /* elements */
    size_t nbytes;
} ocl_tensor;

/* What a step sees while it runs: its inputs and an output allocator. */
typedef struct ocl_exec ocl_exec;
size_t ocl_exec_input_count(const ocl_exec *x);
const ocl_tensor *ocl_exec_input(const ocl_exec *x, size_t index); /* NULL when omitted */
tsr_status *ocl_exec_output(ocl_exec *x, size_t index, int32_t elem_type, int32_t rank,
                            const int64_t *dims, ocl_tensor **out);
/* Output `index` as `base` with another shape (same element count): it
 * shares base's buffer, no kernel and no copy, when the output stays inside
 * the piece; a piece output, which the host allocates, gets a device-side
 * copy. */
tsr_status *ocl_exec_output_view(ocl_exec *x, size_t index, const ocl_tensor *base, int32_t rank,
                                 const int64_t *dims);
ocl_state *ocl_exec_state(const ocl_exec *x);
const char *ocl_exec_node_name(const ocl_exec *x);
/* Reads a small (shape-like) int64/int32 input back to the host. */
tsr_status *ocl_exec_read_ints(ocl_exec *x, size_t index, int64_t *vals, size_t max, size_t *n);

/* One operator family. `check` decides the claim; `prepare` reads the
 * node's attributes and constants once; `run` launches kernels. */
typedef struct ocl_op {
    const char *op_type;
    /* Returns NULL when supported, else the decline text (static or in `buf`)
     * and sets *reason. */
    const char *(*check)(const tsr_node *n, int32_t *reason, char *buf, size_t size);
    tsr_status *(*prepare)(ocl_state *st, const tsr_node *n, void **op_state);
    tsr_status *(*run)(ocl_exec *x, void *op_state);
    void (*release)(void *op_state);
} ocl_op;

const ocl_op *ocl_op_find(const char *op_type);

/* Per-family tables (ocl_ops_*.c); each ends with an entry whose op_type is NULL. */
extern const ocl_op ocl_ops_elementwise[];
extern const ocl_op ocl_ops_linalg[];
extern const ocl_op ocl_ops_nn[];
extern const ocl_op ocl_ops_tensor[];
extern const ocl_op ocl_ops_reduce[];
extern const ocl_op ocl_ops_pad[];
extern const ocl_op ocl_ops_resize[];

tsr_status *ocl_claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink);
tsr_status *ocl_piece_compile(void *state, const tsr_graph *piece, void **piece_state);
tsr_status *ocl_piece_run(void *piece_state, tsr_run_context *ctx);
void ocl_piece_release(void *piece_state);

/* --- helpers shared by the op files (ocl_op_util.c) -------------------- */
int64_t ocl_attr_int(const tsr_node *n, const char *name, int64_t dflt);
float ocl_attr_float(const tsr_node *n, const char *name, float dflt);
/* Copies an INTS attribute; returns its length, or -1 when absent/too long. */
int ocl_attr_ints(const tsr_node *n, const char *name, int64_t *out, int max);
bool ocl_attr_string_is(const tsr_node *n, const char *name, const char *value, bool dflt);
int32_t ocl_input_type(const tsr_node *n, size_t i);   /* 0 when absent */
int32_t ocl_output_type(const tsr_node *n, size_t i);  /* 0 when absent */
bool ocl_input_present(const tsr_node *n, size_t i);
bool ocl_output_present(const tsr_node *n, size_t i);
/* The constant int64/int32 values of input i; -1 when not a constant. */
int ocl_input_const_ints(const tsr_node *n, size_t i, int64_t *out, int max);
/* Only float32 tensors on inputs/outputs listed as 1s in the masks. */
const char *ocl_check_float(const tsr_node *n, int32_t *reason);
bool ocl_dims_count(int32_t rank, const int64_t *dims, size_t *count);
size_t ocl_elem_size(int32_t elem_type); /* 0 for types we cannot move */

#endif
