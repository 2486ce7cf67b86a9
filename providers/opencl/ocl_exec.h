/* What a step sees while it runs: its input tensors and an allocator for its
 * outputs (ocl_exec.c). The ops (ocl_ops_*.c, ocl_gemm.c, ocl_conv.c,
 * ocl_elementwise.c) call only the functions below; the piece driver
 * (ocl_piece.c) builds one ocl_exec per step and calls the op. Kept apart
 * from the driver so the calls go one way: driver -> ops -> these helpers,
 * and nothing here calls back into the driver. */
#ifndef OCL_EXEC_H
#define OCL_EXEC_H

#include "ocl.h"

/* A tensor as the steps see it: a device buffer with a shape. */
typedef struct ocl_tensor {
    cl_mem mem;
    int32_t elem_type;
    int32_t rank;
    int64_t dims[OCL_MAX_RANK];
    size_t count; /* elements */
    size_t nbytes;
} ocl_tensor;

bool ocl_dims_count(int32_t rank, const int64_t *dims, size_t *count);
size_t ocl_elem_size(int32_t elem_type); /* 0 for types we cannot move */
/* Sets t's type, shape, count and bytes (not its buffer); false for a type
 * we cannot move, a bad rank or a size that overflows. */
bool ocl_tensor_fill(ocl_tensor *t, int32_t elem_type, int32_t rank, const int64_t *dims);

/* One value slot of a piece run.
 *
 * Buffer lifetimes within a run: a value's slot is `owned` when it holds a
 * reference this run must drop (a private buffer it created, or a view's
 * retained reference to its base's buffer); piece inputs and host-allocated
 * outputs are the host's. */
typedef struct ocl_slot {
    const char *name;
    size_t out_index; /* among the piece's outputs; SIZE_MAX when it stays inside */
    ocl_tensor t;
    bool present;
    bool owned; /* holds a reference this run releases (see above) */
} ocl_slot;

/* The step being run, over the run's slots. Filled in by the piece driver;
 * ops use the functions below, not these fields. */
typedef struct ocl_exec {
    ocl_state *st;
    const struct ocl_step *step; /* ocl_fuse.h */
    tsr_run_context *ctx;
    ocl_slot *vals;
    const size_t *in_slot, *out_slot; /* this step's, from the piece's slot map */
    size_t scratch;                   /* the slot of omitted outputs; SIZE_MAX when none */
} ocl_exec;

size_t ocl_exec_input_count(const ocl_exec *x);
const ocl_tensor *ocl_exec_input(const ocl_exec *x, size_t index); /* NULL when omitted */
tsr_status *ocl_exec_output(ocl_exec *x, size_t index, int32_t elem_type, int32_t rank, const int64_t *dims,
                            ocl_tensor **out);
/* Output `index` as `base` with another shape (same element count): it
 * shares base's buffer, no kernel and no copy, when the output stays inside
 * the piece; a piece output, which the host allocates, gets a device-side
 * copy. */
tsr_status *ocl_exec_output_view(ocl_exec *x, size_t index, const ocl_tensor *base, int32_t rank, const int64_t *dims);
ocl_state *ocl_exec_state(const ocl_exec *x);
const char *ocl_exec_node_name(const ocl_exec *x);
/* Reads a small (shape-like) int64/int32 input back to the host. */
tsr_status *ocl_exec_read_ints(ocl_exec *x, size_t index, int64_t *vals, size_t max, size_t *n);

#endif
