/* What an op family provides (its ocl_op table) and the helpers the op
 * files share. Ops run through the exec interface (ocl_exec.h) and know
 * nothing of pieces: ocl_piece.c drives them. */
#ifndef OCL_OP_H
#define OCL_OP_H

#include "ocl.h"
#include "ocl_exec.h"

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

/* --- helpers shared by the op files (ocl_op_util.c) -------------------- */
int64_t ocl_attr_int(const tsr_node *n, const char *name, int64_t dflt);
float ocl_attr_float(const tsr_node *n, const char *name, float dflt);
/* Copies an INTS attribute; returns its length, or -1 when absent/too long. */
int ocl_attr_ints(const tsr_node *n, const char *name, int64_t *out, int max);
bool ocl_attr_string_is(const tsr_node *n, const char *name, const char *value, bool dflt);
int32_t ocl_input_type(const tsr_node *n, size_t i);  /* 0 when absent */
int32_t ocl_output_type(const tsr_node *n, size_t i); /* 0 when absent */
bool ocl_input_present(const tsr_node *n, size_t i);
bool ocl_output_present(const tsr_node *n, size_t i);
/* The constant int64/int32 values of input i; -1 when not a constant. */
int ocl_input_const_ints(const tsr_node *n, size_t i, int64_t *out, int max);
/* Only float32 tensors on inputs/outputs listed as 1s in the masks. */
const char *ocl_check_float(const tsr_node *n, int32_t *reason);

#endif
