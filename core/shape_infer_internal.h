/*
 * Shape and type inference, private to core/shape_infer.c and the rule files
 * core/shape_ops_*.c. Rules see shapes through the small shape_dims struct
 * (symbols borrowed, no allocation) and write outputs through shape_set_out,
 * which merges with what the model declared; only the driver touches
 * ir_type memory. Everything here is prefixed shape_ (SHAPE_ for
 * constants), after the files that share it.
 */
#ifndef TESSERA_CORE_SHAPE_INFER_INTERNAL_H
#define TESSERA_CORE_SHAPE_INFER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir.h"
#include "status.h"

/* One dimension while inferring: value >= 0 when known; otherwise symbol
 * names it (borrowed: from an input type or the run's string pool) or is NULL
 * for a dimension nobody can name. */
typedef struct shape_dim {
    int64_t value;
    const char *symbol;
} shape_dim;

/* A shape while inferring; rank -1 when even the rank is unknown. Big
 * (IR_MAX_RANK dims), so rules keep a few on the stack, not arrays of them. */
typedef struct shape_dims {
    int32_t rank;
    shape_dim dims[IR_MAX_RANK];
} shape_dims;

/* The state of one ir_infer_shapes run over one graph (opaque to rules). */
typedef struct shape_ctx shape_ctx;

/* A rule fills the outputs of one node. It returns an error only for a real
 * contradiction (made with shape_err); anything it can't work out stays unknown. */
typedef tsr_status *(*shape_rule)(shape_ctx *c, const ir_node *n);

/* One row of a rule table: the rule for `op_type` in the default ONNX domain
 * from opset `since` on (until a row with a larger `since` takes over). */
typedef struct shape_op {
    const char *op_type;
    int64_t since;
    shape_rule rule;
} shape_op;

/* The rule tables, one per family of operators. */
extern const shape_op shape_ops_elementwise[];
extern const size_t shape_ops_elementwise_count;
extern const shape_op shape_ops_nn[];
extern const size_t shape_ops_nn_count;
extern const shape_op shape_ops_tensor[];
extern const size_t shape_ops_tensor_count;
extern const shape_op shape_ops_reduce[];
extern const size_t shape_ops_reduce_count;
extern const shape_op shape_ops_control[];
extern const size_t shape_ops_control_count;
extern const shape_op shape_ops_rnn[];
extern const size_t shape_ops_rnn_count;
extern const shape_op shape_ops_misc[];
extern const size_t shape_ops_misc_count;
extern const shape_op shape_ops_sequence[];
extern const size_t shape_ops_sequence_count;

/* A rule for an op of another domain (ai.onnx.ml, ai.onnx.preview, ...),
 * from version `since` of that domain on. */
typedef struct shape_domain_op {
    const char *domain;
    const char *op_type;
    int64_t since;
    shape_rule rule;
} shape_domain_op;
extern const shape_domain_op shape_ops_domains[];
extern const size_t shape_ops_domains_count;

/* --- dims and shapes ------------------------------------------------------ */
static inline shape_dim shape_known(int64_t v) {
    shape_dim d = {v, NULL};
    return d;
}
static inline shape_dim shape_unknown(void) {
    shape_dim d = {TSR_DIM_UNKNOWN, NULL};
    return d;
}
static inline bool shape_is_known(shape_dim d) { return d.value >= 0; }
void shape_dims_unknown(shape_dims *s);
/* s = a rank-`rank` shape of unknown dims. */
void shape_dims_rank(shape_dims *s, int32_t rank);
/* Product of two dims (known only when both are, or one is 0; 1 keeps the other). */
shape_dim shape_dim_mul(shape_dim a, shape_dim b);
/* The same dimension for sure (equal numbers, or equal symbols). */
bool shape_dim_same(shape_dim a, shape_dim b);
/* Numpy broadcast of a and b into out; an error naming n when two known dims clash. */
tsr_status *shape_broadcast(shape_ctx *c, const ir_node *n, const shape_dims *a, const shape_dims *b, shape_dims *out);
/* What two possible shapes of one value agree on (If's branches, the
 * tensors of a sequence): rank -1 when the ranks differ, a dim unknown
 * where they differ. out may be a or b. */
void shape_dims_join(const shape_dims *a, const shape_dims *b, shape_dims *out);
/* Merges two dims that must be equal (e.g. Concat's other axes): the known or
 * named one wins; false when both are known and differ. */
bool shape_dim_unify(shape_dim a, shape_dim b, shape_dim *out);
/* Normalises a possibly negative axis for `rank`; false when out of range. */
bool shape_axis(int64_t axis, int32_t rank, int32_t *out);

/* An element of a shape value that is not a known number. */
#define SHAPE_NAN INT64_MIN

/* --- node inputs ---------------------------------------------------------- */
/* The effective type of input i (following outer-scope placeholders), or
 * NULL when the input is omitted. */
const ir_type *shape_in_type(shape_ctx *c, const ir_node *n, size_t i);
bool shape_has_in(const ir_node *n, size_t i);
/* Element type of input i; 0 when unknown or omitted. */
int32_t shape_in_elem(shape_ctx *c, const ir_node *n, size_t i);
/* Shape of input i (rank -1 when unknown or omitted). */
void shape_in_shape(shape_ctx *c, const ir_node *n, size_t i, shape_dims *out);
/* The values of input i when they are all known integers (a constant, or a
 * shape value worked out earlier): scalar or 1-D, at most `cap` elements.
 * *count gets the element count; *rank (may be NULL) 0 or 1. */
bool shape_in_ints(shape_ctx *c, const ir_node *n, size_t i, int64_t *buf, size_t cap, size_t *count, int32_t *rank);
/* Like shape_in_ints but elements may be unknown: each is a number in .value
 * (any, -1 included: Reshape's "infer this") or .value == SHAPE_NAN with .symbol
 * naming it ("N", from a Shape of a symbolic dim) or NULL. */
bool shape_in_dims(shape_ctx *c, const ir_node *n, size_t i, shape_dim *buf, size_t cap, size_t *count, int32_t *rank);
/* Input i's values as doubles (constant float or int tensors only). */
bool shape_in_doubles(shape_ctx *c, const ir_node *n, size_t i, double *buf, size_t cap, size_t *count);
/* The constant tensor of input i, or NULL. */
const ir_tensor *shape_in_const(shape_ctx *c, const ir_node *n, size_t i);

/* --- attributes ----------------------------------------------------------- */
int64_t shape_attr_int(const ir_node *n, const char *name, int64_t dflt);
float shape_attr_float(const ir_node *n, const char *name, float dflt);
/* NUL-terminated string attribute, or dflt. */
const char *shape_attr_str(const ir_node *n, const char *name, const char *dflt);
/* An INTS attribute: *count entries at the returned pointer; NULL when absent. */
const int64_t *shape_attr_ints(const ir_node *n, const char *name, size_t *count);
const ir_attr *shape_attr(const ir_node *n, const char *name);

/* --- node outputs --------------------------------------------------------- */
/* Flags for shape_set_out_ex. */
enum {
    /* The element type follows from the op alone (Shape -> int64, Cast's
     * `to`), so a contradicting declaration is plainly wrong and loses. */
    SHAPE_ELEM_CERTAIN = 1u,
    /* Element types only: the tensors' shapes are left out (shape_feed.flags). */
    SHAPE_NO_SHAPES = 2u
};
/* Sets output i (ignored when omitted) to a tensor of `elem` (0 unknown) and
 * shape s (NULL: unknown), merged with the declared type. */
tsr_status *shape_set_out(shape_ctx *c, const ir_node *n, size_t i, int32_t elem, const shape_dims *s);
tsr_status *shape_set_out_ex(shape_ctx *c, const ir_node *n, size_t i, int32_t elem, const shape_dims *s,
                             unsigned flags);
/* Output i gets exactly input j's type (element type and shape). */
tsr_status *shape_same_as_in(shape_ctx *c, const ir_node *n, size_t i, size_t j);

/* Values of any kind: sequences, optionals and maps as well as tensors.
 * Each merges with the declared type level by level (a declared level of
 * another kind stays, with everything below it). */
/* Output i gets a copy of type t (NULL or unknown: nothing). */
tsr_status *shape_set_out_type(shape_ctx *c, const ir_node *n, size_t i, const ir_type *t);
/* Output i gets a sequence or optional (kind) of type inner. */
tsr_status *shape_set_out_wrap(shape_ctx *c, const ir_node *n, size_t i, int32_t kind, const ir_type *inner);
/* Output i gets a sequence of tensors of `elem` (0 unknown) and shape s (NULL unknown). */
tsr_status *shape_set_out_seq(shape_ctx *c, const ir_node *n, size_t i, int32_t elem, const shape_dims *s);
/* Output i gets what types a and b both allow (If's two branches, a Loop
 * value's initial and body types); a side with no type at all gives the
 * other's element types without shapes. */
tsr_status *shape_set_out_join(shape_ctx *c, const ir_node *n, size_t i, const ir_type *a, const ir_type *b);
/* The type inside input i when it is a sequence or an optional (NULL when it
 * is not, or when that type is unknown). */
const ir_type *shape_in_inner(shape_ctx *c, const ir_node *n, size_t i);
/* A type's shape when it is a tensor (rank -1 otherwise), and element type
 * (0 when not a tensor or unknown). */
void shape_type_shape(const ir_type *t, shape_dims *out);
int32_t shape_type_elem(const ir_type *t);
/* Interns a symbol for the rest of the run (NULL on allocation failure). */
const char *shape_intern(shape_ctx *c, const char *s);

/* --- subgraphs ------------------------------------------------------------ */
/* What a node feeds a subgraph input: element type (0 unknown) and shape,
 * or, when `type` is not NULL, that type of any kind (a sequence a Loop
 * carries) merged under `flags` (SHAPE_NO_SHAPES). */
typedef struct shape_feed {
    int32_t elem;
    shape_dims shape;
    const ir_type *type;
    unsigned flags;
} shape_feed;
/* Infers a subgraph attribute's body. feeds (may be NULL) gives the types of
 * the body's first n_feeds inputs, merged with what the body declares. */
tsr_status *shape_infer_subgraph(shape_ctx *c, const ir_node *n, ir_graph *body, size_t n_feeds,
                                 const shape_feed *feeds);
/* The type of any value (e.g. a body's output) as a shape and element type,
 * and whole (following outer-scope placeholders; NULL for NULL). */
void shape_value_shape(const ir_value *v, shape_dims *out);
int32_t shape_value_elem(const ir_value *v);
const ir_type *shape_value_type(const ir_value *v);

/* An error about node n: "node 'name' (Op): <message>". */
/* The pooling rules of shape_ops_nn.c (MaxPool/AveragePool/LpPool, and the
 * global ones), for ops of other domains laid out the same way. */
tsr_status *shape_rule_pool(shape_ctx *c, const ir_node *n);
tsr_status *shape_rule_global_pool(shape_ctx *c, const ir_node *n);

tsr_status *shape_err(const ir_node *n, const char *fmt, ...) TSR_PRINTF(2, 3);

/* The opset a rule should honour: the node's, or "newest" when unknown. */
static inline int64_t shape_opset(const ir_node *n) { return n->opset > 0 ? n->opset : INT64_MAX; }

#endif
