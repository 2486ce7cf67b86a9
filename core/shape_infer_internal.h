/*
 * Shape and type inference, private to core/shape_infer.c and the rule files
 * core/shape_ops_*.c. Rules see shapes through the small si_shape struct
 * (symbols borrowed, no allocation) and write outputs through si_set_out,
 * which merges with what the model declared; only the driver touches
 * ir_type memory.
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
typedef struct si_dim {
    int64_t value;
    const char *symbol;
} si_dim;

/* A shape while inferring; rank -1 when even the rank is unknown. Big
 * (IR_MAX_RANK dims), so rules keep a few on the stack, not arrays of them. */
typedef struct si_shape {
    int32_t rank;
    si_dim dims[IR_MAX_RANK];
} si_shape;

/* The state of one ir_infer_shapes run over one graph (opaque to rules). */
typedef struct si_ctx si_ctx;

/* A rule fills the outputs of one node. It returns an error only for a real
 * contradiction (made with si_err); anything it can't work out stays unknown. */
typedef tsr_status *(*si_rule)(si_ctx *c, const ir_node *n);

/* One row of a rule table: the rule for `op_type` in the default ONNX domain
 * from opset `since` on (until a row with a larger `since` takes over). */
typedef struct si_op {
    const char *op_type;
    int64_t since;
    si_rule rule;
} si_op;

/* The rule tables, one per family of operators. */
extern const si_op si_ops_elementwise[];
extern const size_t si_ops_elementwise_count;
extern const si_op si_ops_nn[];
extern const size_t si_ops_nn_count;
extern const si_op si_ops_tensor[];
extern const size_t si_ops_tensor_count;
extern const si_op si_ops_reduce[];
extern const size_t si_ops_reduce_count;
extern const si_op si_ops_control[];
extern const size_t si_ops_control_count;
extern const si_op si_ops_rnn[];
extern const size_t si_ops_rnn_count;
extern const si_op si_ops_misc[];
extern const size_t si_ops_misc_count;
extern const si_op si_ops_sequence[];
extern const size_t si_ops_sequence_count;

/* A rule for an op of another domain (ai.onnx.ml, ai.onnx.preview, ...),
 * from version `since` of that domain on. */
typedef struct si_domain_op {
    const char *domain;
    const char *op_type;
    int64_t since;
    si_rule rule;
} si_domain_op;
extern const si_domain_op si_ops_domains[];
extern const size_t si_ops_domains_count;

/* --- dims and shapes ------------------------------------------------------ */
static inline si_dim si_known(int64_t v) { si_dim d = {v, NULL}; return d; }
static inline si_dim si_unknown(void) { si_dim d = {TSR_DIM_UNKNOWN, NULL}; return d; }
static inline bool si_is_known(si_dim d) { return d.value >= 0; }
void si_shape_unknown(si_shape *s);
/* s = a rank-`rank` shape of unknown dims. */
void si_shape_rank(si_shape *s, int32_t rank);
/* Product of two dims (known only when both are, or one is 0; 1 keeps the other). */
si_dim si_dim_mul(si_dim a, si_dim b);
/* The same dimension for sure (equal numbers, or equal symbols). */
bool si_dim_same(si_dim a, si_dim b);
/* Numpy broadcast of a and b into out; an error naming n when two known dims clash. */
tsr_status *si_broadcast(si_ctx *c, const ir_node *n, const si_shape *a, const si_shape *b,
                         si_shape *out);
/* What two possible shapes of one value agree on (If's branches, the
 * tensors of a sequence): rank -1 when the ranks differ, a dim unknown
 * where they differ. out may be a or b. */
void si_shape_join(const si_shape *a, const si_shape *b, si_shape *out);
/* Merges two dims that must be equal (e.g. Concat's other axes): the known or
 * named one wins; false when both are known and differ. */
bool si_dim_unify(si_dim a, si_dim b, si_dim *out);
/* Normalises a possibly negative axis for `rank`; false when out of range. */
bool si_axis(int64_t axis, int32_t rank, int32_t *out);

/* An element of a shape value that is not a known number. */
#define SI_NAN INT64_MIN

/* --- node inputs ---------------------------------------------------------- */
/* The effective type of input i (following outer-scope placeholders), or
 * NULL when the input is omitted. */
const ir_type *si_in_type(si_ctx *c, const ir_node *n, size_t i);
bool si_has_in(const ir_node *n, size_t i);
/* Element type of input i; 0 when unknown or omitted. */
int32_t si_in_elem(si_ctx *c, const ir_node *n, size_t i);
/* Shape of input i (rank -1 when unknown or omitted). */
void si_in_shape(si_ctx *c, const ir_node *n, size_t i, si_shape *out);
/* The values of input i when they are all known integers (a constant, or a
 * shape value worked out earlier): scalar or 1-D, at most `cap` elements.
 * *count gets the element count; *rank (may be NULL) 0 or 1. */
bool si_in_ints(si_ctx *c, const ir_node *n, size_t i, int64_t *buf, size_t cap, size_t *count,
                int32_t *rank);
/* Like si_in_ints but elements may be unknown: each is a number in .value
 * (any, -1 included: Reshape's "infer this") or .value == SI_NAN with .symbol
 * naming it ("N", from a Shape of a symbolic dim) or NULL. */
bool si_in_dims(si_ctx *c, const ir_node *n, size_t i, si_dim *buf, size_t cap, size_t *count,
                int32_t *rank);
/* Input i's values as doubles (constant float or int tensors only). */
bool si_in_doubles(si_ctx *c, const ir_node *n, size_t i, double *buf, size_t cap,
                   size_t *count);
/* The constant tensor of input i, or NULL. */
const ir_tensor *si_in_const(si_ctx *c, const ir_node *n, size_t i);

/* --- attributes ----------------------------------------------------------- */
int64_t si_attr_int(const ir_node *n, const char *name, int64_t dflt);
float si_attr_float(const ir_node *n, const char *name, float dflt);
/* NUL-terminated string attribute, or dflt. */
const char *si_attr_str(const ir_node *n, const char *name, const char *dflt);
/* An INTS attribute: *count entries at the returned pointer; NULL when absent. */
const int64_t *si_attr_ints(const ir_node *n, const char *name, size_t *count);
const ir_attr *si_attr(const ir_node *n, const char *name);

/* --- node outputs --------------------------------------------------------- */
/* Flags for si_set_out_ex. */
enum {
    /* The element type follows from the op alone (Shape -> int64, Cast's
     * `to`), so a contradicting declaration is plainly wrong and loses. */
    SI_ELEM_CERTAIN = 1u,
    /* Element types only: the tensors' shapes are left out (si_feed.flags). */
    SI_NO_SHAPES = 2u
};
/* Sets output i (ignored when omitted) to a tensor of `elem` (0 unknown) and
 * shape s (NULL: unknown), merged with the declared type. */
tsr_status *si_set_out(si_ctx *c, const ir_node *n, size_t i, int32_t elem, const si_shape *s);
tsr_status *si_set_out_ex(si_ctx *c, const ir_node *n, size_t i, int32_t elem, const si_shape *s,
                          unsigned flags);
/* Output i gets exactly input j's type (element type and shape). */
tsr_status *si_same_as_in(si_ctx *c, const ir_node *n, size_t i, size_t j);

/* Values of any kind: sequences, optionals and maps as well as tensors.
 * Each merges with the declared type level by level (a declared level of
 * another kind stays, with everything below it). */
/* Output i gets a copy of type t (NULL or unknown: nothing). */
tsr_status *si_set_out_type(si_ctx *c, const ir_node *n, size_t i, const ir_type *t);
/* Output i gets a sequence or optional (kind) of type inner. */
tsr_status *si_set_out_wrap(si_ctx *c, const ir_node *n, size_t i, int32_t kind, const ir_type *inner);
/* Output i gets a sequence of tensors of `elem` (0 unknown) and shape s (NULL unknown). */
tsr_status *si_set_out_seq(si_ctx *c, const ir_node *n, size_t i, int32_t elem, const si_shape *s);
/* Output i gets what types a and b both allow (If's two branches, a Loop
 * value's initial and body types); a side with no type at all gives the
 * other's element types without shapes. */
tsr_status *si_set_out_join(si_ctx *c, const ir_node *n, size_t i, const ir_type *a, const ir_type *b);
/* The type inside input i when it is a sequence or an optional (NULL when it
 * is not, or when that type is unknown). */
const ir_type *si_in_inner(si_ctx *c, const ir_node *n, size_t i);
/* A type's shape when it is a tensor (rank -1 otherwise), and element type
 * (0 when not a tensor or unknown). */
void si_type_shape(const ir_type *t, si_shape *out);
int32_t si_type_elem(const ir_type *t);
/* Interns a symbol for the rest of the run (NULL on allocation failure). */
const char *si_intern(si_ctx *c, const char *s);

/* --- subgraphs ------------------------------------------------------------ */
/* What a node feeds a subgraph input: element type (0 unknown) and shape,
 * or, when `type` is not NULL, that type of any kind (a sequence a Loop
 * carries) merged under `flags` (SI_NO_SHAPES). */
typedef struct si_feed {
    int32_t elem;
    si_shape shape;
    const ir_type *type;
    unsigned flags;
} si_feed;
/* Infers a subgraph attribute's body. feeds (may be NULL) gives the types of
 * the body's first n_feeds inputs, merged with what the body declares. */
tsr_status *si_infer_subgraph(si_ctx *c, const ir_node *n, ir_graph *body, size_t n_feeds,
                              const si_feed *feeds);
/* The type of any value (e.g. a body's output) as a shape and element type,
 * and whole (following outer-scope placeholders; NULL for NULL). */
void si_value_shape(const ir_value *v, si_shape *out);
int32_t si_value_elem(const ir_value *v);
const ir_type *si_value_type(const ir_value *v);

/* An error about node n: "node 'name' (Op): <message>". */
tsr_status *si_err(const ir_node *n, const char *fmt, ...) TSR_PRINTF(2, 3);

/* The opset a rule should honour: the node's, or "newest" when unknown. */
static inline int64_t si_opset(const ir_node *n) { return n->opset > 0 ? n->opset : INT64_MAX; }

#endif
