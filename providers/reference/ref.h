/*
 * The reference provider's kernel interface. A kernel runs one ONNX node: it
 * reads inputs and attributes through these helpers (which go through the
 * host API only) and allocates its outputs with ref_out.
 *
 * Each family of ops has one table file, ref_ops_<family>.c, exporting one
 * table of ref_op terminated by an entry whose op_type is NULL;
 * ref_registry.c lists the tables. A family's kernels are named
 * ref_<family>_<op> (ref_nn_conv, ref_math_add, ref_tensor_gather,
 * ref_quant_qlinear_conv; attention's are ref_attn_). Kernels live in
 * ref_<family>_*.c, grouped by what they share, and are declared in the
 * family's one header (ref_nn.h, ref_math.h, ref_tensor.h, ref_sequence.h,
 * ref_quant.h, ...), so the table and the definition are checked against
 * one prototype. The table files hold their table and, for some families,
 * claim-time checks; only ref_ops_loss.c, ref_ops_misc.c, ref_ops_ml.c,
 * ref_ops_rnn.c and ref_ops_training.c still keep a few small kernels,
 * static there.
 */
#ifndef TESSERA_REF_H
#define TESSERA_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tessera/provider.h"
#include "tessera/provider_util.h"

#if defined(__GNUC__)
#define REF_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define REF_PRINTF(a, b)
#endif

#define REF_MAX_RANK 64

typedef struct ref_ctx {
    const tsr_host_api *host;
    const tsr_node *node;
    tsr_run_context *run;
    const int *in_map;  /* node input i -> piece input index, -1 when omitted */
    const int *out_map; /* node output i -> piece output index, -1 when omitted */
    size_t n_in, n_out; /* the node's input and output counts */
    int threads;
    int64_t work; /* units counted by ref_work since its last look at the stop flag */
} ref_ctx;

typedef tsr_status *(*ref_kernel_fn)(ref_ctx *ctx);
/* Optional claim-time check. Returns 0 when the node is supported, else a
 * tsr_decline_reason with a sentence in `why`. */
typedef int (*ref_check_fn)(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size);

typedef struct ref_op {
    const char *domain;  /* "" for ai.onnx, "ai.onnx.ml", ... */
    const char *op_type; /* NULL ends a table */
    int min_opset;       /* lowest opset version this kernel implements (1 = all) */
    ref_kernel_fn run;
    ref_check_fn check; /* may be NULL */
} ref_op;

/* Tables, one per ref_ops_*.c file. */
extern const ref_op ref_ops_math[];   /* elementwise, Cast, Where, Clip, reductions, Softmax */
extern const ref_op ref_ops_nn[];     /* Conv, MatMul, Gemm, pooling, normalizations, Resize */
extern const ref_op ref_ops_tensor[]; /* shape and data movement */
extern const ref_op ref_ops_attention[], ref_ops_loss[], ref_ops_quant[], ref_ops_rnn[], ref_ops_signal[],
    ref_ops_image[], ref_ops_text[], ref_ops_sequence[], ref_ops_ml[], ref_ops_training[], ref_ops_misc[];

const ref_op *ref_find_op(const char *domain, const char *op_type, int64_t opset);

/* --- inputs, outputs, errors -------------------------------------------- */
/* Node input i, or NULL when omitted (or i >= n_in). */
const tsr_tensor *ref_in(ref_ctx *c, size_t i);
/* Whether node output i is wanted (present in the model). */
bool ref_out_wanted(ref_ctx *c, size_t i);
/* Allocates node output i. When the output is not wanted, allocates a
 * scratch tensor that is discarded, so kernels need not check. */
tsr_status *ref_out(ref_ctx *c, size_t i, int32_t elem_type, int32_t rank, const int64_t *dims, tsr_tensor **out);
/* An error naming the node: "Conv 'conv3': <message>". */
tsr_status *ref_err(ref_ctx *c, int32_t code, const char *fmt, ...) REF_PRINTF(3, 4);
/* Whether the run should stop now (the application cancelled it or its
 * deadline passed; ref_stop.c): long kernels poll it between chunks of
 * work and then return ref_stopped(c). */
bool ref_should_stop(const ref_ctx *c);
tsr_status *ref_stopped(ref_ctx *c);
/* Work (about one multiply-add per unit) between two looks at the stop
 * flag: tens of milliseconds of naive kernel work. */
#define REF_WORK_PER_CHECK ((int64_t)1 << 26)
/* Counts `units` of work done; once REF_WORK_PER_CHECK have passed since the
 * last look, looks at ref_should_stop. True when the kernel should stop
 * (then it returns ref_stopped(c)). */
bool ref_work(ref_ctx *c, int64_t units);
int64_t ref_opset(ref_ctx *c);
const char *ref_op_type(ref_ctx *c);

/* --- attributes --------------------------------------------------------- */
/* tsr_util_attr_* (provider_util.h) on the kernel's node: an attribute that
 * is absent or of the wrong type reads as the default. */
bool ref_attr_has(ref_ctx *c, const char *name);
int64_t ref_attr_int(ref_ctx *c, const char *name, int64_t dflt);
float ref_attr_float(ref_ctx *c, const char *name, float dflt);
/* NUL-terminated copy-free view; `dflt` when absent. */
const char *ref_attr_str(ref_ctx *c, const char *name, const char *dflt);
/* Count of ints (0 and *out = NULL when absent). */
size_t ref_attr_ints(ref_ctx *c, const char *name, const int64_t **out);
size_t ref_attr_floats(ref_ctx *c, const char *name, const float **out);
const tsr_tensor *ref_attr_tensor(ref_ctx *c, const char *name);

/* --- element types ------------------------------------------------------ */
size_t ref_elem_size(int32_t t); /* bytes; 0 for packed 4-bit types and unknown */
bool ref_is_float(int32_t t);    /* float, double, float16, bfloat16 */
/* Claim-time check shared by the families whose kernels compute on floats
 * only: declines (TSR_DECLINE_TYPE) unless input 0's element type, when
 * known, is a float type. */
int ref_check_float(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size);
bool ref_is_int(int32_t t); /* signed or unsigned integer types, not bool */
bool ref_is_signed(int32_t t);
uint64_t ref_numel(const tsr_tensor *t);
/* Element idx of a numeric or bool tensor, converted. */
double ref_load(int32_t t, const void *data, size_t idx);
int64_t ref_load_i64(int32_t t, const void *data, size_t idx);
/* Stores v converted to type t: floats round to nearest even, ints
 * truncate toward zero (as C casts do), bool is v != 0. */
void ref_store(int32_t t, void *data, size_t idx, double v);
void ref_store_i64(int32_t t, void *data, size_t idx, int64_t v);
/* Stores n doubles into elements [off, off + n) of t, converting as
 * ref_store does; float and double without a switch per element. */
void ref_put_f64(tsr_tensor *t, size_t off, size_t n, const double *src);
float ref_half_to_float(uint16_t h);
uint16_t ref_float_to_half(float f);
float ref_bf16_to_float(uint16_t h);
uint16_t ref_float_to_bf16(float f);

/* --- shapes ------------------------------------------------------------- */
/* numpy broadcast of two shapes; false when incompatible. */
bool ref_broadcast_shape(int32_t ra, const int64_t *da, int32_t rb, const int64_t *db, int32_t *rout, int64_t *dout);
/* Element strides of a `rank_in` tensor read as the broadcast `rank_out`
 * shape: 0 along broadcast axes. */
void ref_broadcast_strides(int32_t rank_in, const int64_t *dims_in, int32_t rank_out, const int64_t *dims_out,
                           int64_t *strides_out);
/* Row-major strides of dims. */
void ref_strides(int32_t rank, const int64_t *dims, int64_t *strides);
/* An integer tensor (int32/int64) as an int64 array of *n entries; the
 * caller frees *out with free(). */
tsr_status *ref_tensor_i64(ref_ctx *c, const tsr_tensor *t, int64_t **out, size_t *n);
/* A malloc'd double copy of a numeric or bool tensor (room for at least one
 * element); the caller frees *out with free(). */
tsr_status *ref_tensor_f64(ref_ctx *c, const tsr_tensor *t, double **out);
/* Normalises a possibly negative axis into [0, rank); false when out of range. */
bool ref_axis(int64_t axis, int32_t rank, int64_t *out);

#endif
