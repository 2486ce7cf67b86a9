/*
 * The graph IR: what the loader produces and every later stage reads.
 * Everything here is owned by its ir_model; free it with ir_model_free.
 */
#ifndef TESSERA_CORE_IR_H
#define TESSERA_CORE_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tessera/provider.h"
#include "tessera/types.h"

/* Subgraph nesting (If/Loop/Scan bodies inside bodies): the default of the
 * session's "graph_depth" limit, and the most it may be set to. Every stage
 * that walks subgraphs recurses once per level (protobuf-c, the loader, the
 * checks, shape inference, planning, running, freeing), so the ceiling is
 * what the stack is known to hold (docs/security.md, "Stack"). */
#define IR_DEFAULT_GRAPH_DEPTH 64
#define IR_MAX_GRAPH_DEPTH 256
/* The other limits a model carries (see ir_limits). */
#define IR_DEFAULT_MODEL_BYTES ((uint64_t)4 << 30)
#define IR_DEFAULT_EXTERNAL_BYTES ((uint64_t)64 << 30)
#define IR_DEFAULT_FUNCTION_NODES ((uint64_t)1000000)
#define IR_DEFAULT_FUNCTION_DEPTH 64
/* The most "function_depth" may be set to: checking a model's functions for
 * cycles recurses once per level. */
#define IR_MAX_FUNCTION_DEPTH 1024
/* Largest rank accepted anywhere. */
#define IR_MAX_RANK 64
/* Most elements a tensor may have: 2^56, so element count times the widest
 * element (16 bytes) fits a signed 64-bit size. Larger known shapes are
 * refused where they are declared or inferred, before any provider plans
 * (oneDNN computed with such dims in 32-bit and trapped). */
#define IR_MAX_ELEMENTS ((int64_t)1 << 56)

typedef struct ir_graph ir_graph;
typedef struct ir_node ir_node;
typedef struct ir_model ir_model;

/* A dense host tensor. `view` describes the same memory through the ABI type
 * and is kept in sync by ir_tensor_* functions. For TSR_STRING, data holds
 * tsr_string elements whose bytes are malloc'd and owned by the tensor. */
typedef struct ir_tensor {
    char *name;        /* may be NULL */
    int32_t elem_type; /* tsr_elem_type */
    int32_t rank;
    int64_t *dims; /* rank entries (NULL when rank is 0) */
    void *data;    /* nbytes, malloc'd (NULL when nbytes is 0) */
    size_t nbytes;
    tsr_tensor view;
    /* every reader keeps its own form of the bytes, which went back to the
     * system: data reads as zeros (core/constant_release.c) */
    bool bytes_released;
} ir_tensor;

typedef enum ir_type_kind {
    IR_TYPE_UNKNOWN = 0,
    IR_TYPE_TENSOR = 1,
    IR_TYPE_SEQUENCE = 2,
    IR_TYPE_OPTIONAL = 3,
    IR_TYPE_MAP = 4,
    IR_TYPE_SPARSE_TENSOR = 5
} ir_type_kind;

typedef struct ir_dim {
    int64_t value; /* TSR_DIM_UNKNOWN when not a fixed number */
    char *symbol;  /* dim_param, or NULL */
} ir_dim;

typedef struct ir_type {
    int32_t kind;         /* ir_type_kind */
    int32_t elem_type;    /* tensor / sparse: element type; map: value elem if tensor */
    int32_t rank;         /* -1 when the shape is unknown */
    ir_dim *dims;         /* rank entries */
    struct ir_type *elem; /* sequence / optional element type; map value type */
    int32_t key_type;     /* map key type */
} ir_type;

/* A named edge: graph input, initializer, node output. */
typedef struct ir_value {
    char *name;
    ir_type type;
    ir_tensor *constant; /* initializer or Constant-node data; owned */
    ir_node *producer;   /* NULL for graph inputs, initializers, outer-scope values */
    size_t producer_output;
    bool is_graph_input;
    bool is_graph_output;
    bool is_outer;          /* a placeholder for a value of an enclosing graph */
    struct ir_value *outer; /* when is_outer: the value it stands for (may be NULL before binding) */
    size_t index;           /* position in its graph's values[] */
    /* Private to core/shape_infer.c, zero when the value is made: which parts
     * of `type` the model declared, so inference run again (with the shapes
     * of actual inputs) replaces what it inferred before yet keeps what was
     * declared. infer_open_dims marks declared dims that were not numbers. */
    uint32_t infer_flags;
    uint64_t infer_open_dims;
    /* Kept observable for comparing providers: always a piece output. */
    bool observed;
    /* Host bookkeeping for constant_release: readers, in pieces that
     * released this constant, that will not read its bytes again. */
    size_t released_readers;
} ir_value;

typedef struct ir_attr {
    char *name;
    int32_t type;        /* tsr_attr_type */
    char *ref_attr_name; /* inside functions: refers to the caller's attribute, or NULL */
    int64_t i;
    float f;
    char *s; /* bytes, NUL-terminated for convenience */
    size_t s_len;
    size_t count; /* list length for the list kinds */
    int64_t *ints;
    float *floats;
    char **strings; /* each NUL-terminated */
    size_t *string_lens;
    ir_tensor *t;
    ir_tensor **tensors;
    ir_graph *g;
    ir_graph **graphs;
} ir_attr;

struct ir_node {
    char *name; /* "" when the model gave none */
    char *op_type;
    char *domain;  /* "" for ai.onnx ("ai.onnx" is normalised to "") */
    int64_t opset; /* version of its domain it was written for: its file's import (or
                     * its function's). Nodes of one graph may differ (a chain of models
                     * at different opsets, expanded function bodies): ask the node,
                     * not the model (ir_model_opset is the newest, for new nodes) */
    size_t n_inputs;
    ir_value **inputs; /* NULL entries for omitted optional inputs */
    size_t n_outputs;
    ir_value **outputs; /* NULL entries for omitted optional outputs */
    size_t n_attrs;
    ir_attr *attrs;
    size_t index;    /* position in its graph's nodes[] (topological) */
    char *origin;    /* original model node name when made by expansion, else NULL */
    ir_graph *graph; /* the graph that holds it */
};

struct ir_graph {
    char *name;
    size_t n_nodes;
    ir_node **nodes; /* topological order after ir_graph_sort */
    size_t n_values;
    ir_value **values; /* every value of this graph, owned */
    size_t n_inputs;
    ir_value **inputs; /* declared graph inputs (may include initializers in old models) */
    size_t n_outputs;
    ir_value **outputs;
    ir_graph *parent; /* enclosing graph for subgraphs, else NULL */
    ir_model *model;
    int depth;              /* 0 for the main graph */
    void *lookup;           /* name -> value map (core/ir.c) */
    struct tsr_graph *view; /* host-API view of the whole graph, made on demand by
                             * core/graph_api.c; ir_graph_free releases it with
                             * graph_view_free */
};

typedef struct ir_opset {
    char *domain; /* "" for ai.onnx */
    int64_t version;
} ir_opset;

/* A model-local function (ModelProto.functions). */
typedef struct ir_function {
    char *name;
    char *domain;
    char *overload;
    size_t n_opsets;
    ir_opset *opsets;
    size_t n_attr_names;
    char **attr_names; /* attributes without defaults */
    size_t n_attr_defaults;
    ir_attr *attr_defaults; /* attribute_proto: attributes with defaults */
    ir_graph *body;         /* inputs/outputs are the function's formal parameters */
} ir_function;

/* Limits a model is loaded and expanded under: the session's
 * (tsr_session_options_set_limit), or the defaults ir_limits_default gives. */
typedef struct ir_limits {
    uint64_t model_bytes;    /* "model_bytes": the .onnx file, or the buffer */
    uint64_t external_bytes; /* "external_bytes": external data read, all tensors together */
    int32_t graph_depth;     /* "graph_depth": subgraph nesting, 1..IR_MAX_GRAPH_DEPTH */
    uint64_t function_nodes; /* "function_nodes": nodes function expansion may make, in total */
    int32_t function_depth;  /* "function_depth": function ops expanded inside expanded bodies */
} ir_limits;

ir_limits ir_limits_default(void);

typedef struct ir_metadata {
    char *key;
    char *value;
} ir_metadata;

struct ir_model {
    int64_t ir_version;
    char *producer_name;
    char *producer_version;
    char *domain;
    int64_t model_version;
    char *doc_string;
    size_t n_opsets;
    ir_opset *opsets;
    size_t n_metadata;
    ir_metadata *metadata;
    ir_graph *graph;
    size_t n_functions;
    ir_function **functions;
    char *base_dir;          /* for external data; NULL when loaded from a buffer without one */
    ir_limits limits;        /* what it was loaded under; later stages obey them too */
    uint64_t function_nodes; /* nodes function expansion has made so far (all graphs) */
    /* a compiled piece released a constant (core/constant_release.c): its
     * bytes may be gone, so no piece may be compiled again from them */
    bool constants_released;
};

/* --- tensors (core/tensor.c) --------------------------------------------- */
/* Bytes for `count` elements of `elem_type` (packed types round up); false on
 * overflow or unknown type. Strings count sizeof(tsr_string) each. */
bool ir_elem_bytes(int32_t elem_type, uint64_t count, size_t *out);
/* Product of dims; false on negative dims, on overflow, or when an empty
 * shape's nonzero dims make more than IR_MAX_ELEMENTS. */
bool ir_dims_count(int32_t rank, const int64_t *dims, uint64_t *out);
/* A new zero-filled tensor. */
tsr_status *ir_tensor_new(int32_t elem_type, int32_t rank, const int64_t *dims, ir_tensor **out);
tsr_status *ir_tensor_clone(const tsr_tensor *src, ir_tensor **out);
void ir_tensor_free(ir_tensor *t);
tsr_status *ir_tensor_set_string(ir_tensor *t, size_t index, const char *data, size_t size);
/* Element `index` of a string tensor's data (`nbytes` of tsr_string) becomes
 * a copy of data[0..size), the old bytes freed: what ir_tensor_set_string
 * and the host's tensor_set_string (core/run_context.c) share. */
tsr_status *ir_strings_set(void *strings, size_t nbytes, size_t index, const char *data, size_t size);
/* Recomputes t->view from the other members. */
void ir_tensor_sync_view(ir_tensor *t);

/* --- graph building and lookup (core/ir.c) -------------------------------- */
/* An empty model under the default limits. */
ir_model *ir_model_new(void);
void ir_model_free(ir_model *m);
ir_graph *ir_graph_new(ir_model *model, ir_graph *parent, const char *name);
void ir_graph_free(ir_graph *g);
/* The value named `name` in g (not its parents), or NULL. */
ir_value *ir_graph_find(const ir_graph *g, const char *name);
/* Finds or creates the value named `name` in g. */
tsr_status *ir_graph_value(ir_graph *g, const char *name, ir_value **out);
/* Looks `name` up in g, then its ancestors; when found in an ancestor, makes
 * (or reuses) an is_outer placeholder in g bound to it. NULL when absent. */
ir_value *ir_graph_resolve(ir_graph *g, const char *name);
/* A new value of g named "<base>/<what>", with "_2", "_3"... appended until
 * no value of g or of the graphs enclosing it has that name (a subgraph may
 * not shadow an outer name); for the values rewrites add. */
tsr_status *ir_graph_new_named_value(ir_graph *g, const char *base, const char *what, ir_value **out);
tsr_status *ir_graph_add_node(ir_graph *g, ir_node **out); /* zeroed node appended */
void ir_attr_clear(ir_attr *a);
void ir_type_clear(ir_type *t);
tsr_status *ir_type_copy(ir_type *dst, const ir_type *src);
const ir_attr *ir_node_attr(const ir_node *n, const char *name);
/* Opset version the model imports for `domain` ("" or "ai.onnx" alike); 0 when none. */
int64_t ir_model_opset(const ir_model *m, const char *domain);

/* --- validation and order (core/graph_check.c) --------------------------- */
/* Sorts g->nodes topologically (stable for already-sorted graphs) and checks
 * it: undefined inputs, duplicate outputs, cycles, missing opsets. Recurses
 * into subgraphs. Errors name the node. */
tsr_status *ir_graph_check(ir_graph *g);

/* --- loading (core/loader.c) --------------------------------------------- */
/* Loads and validates a model; errors name the element
 * ("graph.node[12] 'conv3' attribute 'pads': ..."). */
tsr_status *ir_model_load_file(const char *path, ir_model **out);
/* base_dir resolves external data; NULL refuses external data. */
tsr_status *ir_model_load_buffer(const void *bytes, size_t size, const char *base_dir, ir_model **out);
/* The same under `limits` (NULL: ir_limits_default()), which the model
 * keeps: the file's size (from fstat, before it is mapped) or the buffer's
 * against model_bytes, the external data read against external_bytes,
 * subgraph nesting against graph_depth (in the raw bytes, before protobuf-c
 * recurses into them). */
tsr_status *ir_model_load_file_limited(const char *path, const ir_limits *limits, ir_model **out);
tsr_status *ir_model_load_buffer_limited(const void *bytes, size_t size, const char *base_dir, const ir_limits *limits,
                                         ir_model **out);
/* A serialized TensorProto to a host tensor (name kept in ->name). */
tsr_status *ir_tensor_from_proto_bytes(const void *bytes, size_t size, ir_tensor **out);
/* A host tensor to a serialized TensorProto; *bytes is malloc'd. */
tsr_status *ir_tensor_to_proto_bytes(const tsr_tensor *t, const char *name, void **bytes, size_t *size);

/* --- shape and type inference (core/shape_infer.c) ----------------------- */
/* Fills in types of every value it can, keeping symbolic dims. Values whose
 * shape can't be known stay rank -1. Errors only on a contradiction (e.g.
 * incompatible broadcast), naming the node. */
tsr_status *ir_infer_shapes(ir_graph *g);
/* Re-infers for one run: inputs[i] (n_inputs entries, NULL keeps the
 * declaration) gives g->inputs[i]'s element type and shape; only its
 * elem_type, rank and dims are read. Each is checked against what the model
 * declared (an error names the input); its open dims take the run's numbers.
 * Every type an earlier run inferred is recomputed; declared ones are kept. */
tsr_status *ir_infer_shapes_for_inputs(ir_graph *g, size_t n_inputs, const tsr_tensor *const *inputs);
/* What graph input `v` declared, whatever an earlier run wrote into its
 * type: its element type (0 when not declared), rank (-1 when not) and
 * dim d (-1 when symbolic or unknown). */
int32_t ir_input_declared_elem(const ir_value *v);
int32_t ir_input_declared_rank(const ir_value *v);
int64_t ir_input_declared_dim(const ir_value *v, int32_t d);

/* --- graph surgery (core/ir.c; used by partitioner/function_expand.c) ---- */
void ir_function_free(ir_function *f);
/* Replaces `old` by the nodes g->nodes[first_new..] (appended after it), which
 * move into its place so the order stays topological; frees `old` and renumbers
 * the nodes. Values `old` used stay in the graph. */
tsr_status *ir_graph_splice_node(ir_graph *g, ir_node *old, size_t first_new);
/* The same for many nodes at once, in one pass: the nodes replacing olds[i]
 * are g->nodes[first_new[i] .. first_new[i + 1]) (first_new has n_old + 1
 * entries, the last g->n_nodes), all appended after every node of olds. */
tsr_status *ir_graph_splice_nodes(ir_graph *g, size_t n_old, ir_node *const *olds, const size_t *first_new);
/* Rebuilds g's name -> value map and every value's index from g->values,
 * after values were renamed or moved in from another graph
 * (core/model_compose.c). Two values with one name: an error naming it, and
 * the old map stays. */
tsr_status *ir_graph_reindex(ir_graph *g);

/* --- constants (core/constant_fold.c) -------------------------------------- */
/* Removes every ai.onnx Constant node whose output already holds its tensor,
 * here and in subgraphs: the output becomes a constant with no producer, as
 * an initializer is. */
tsr_status *ir_graph_fold_constant_nodes(ir_graph *g);
/* Replaces each Transpose -> Pad -> Transpose whose permutations cancel by
 * the Pad alone, its pads permuted back; then removes each constant-zero Pad
 * of spatial dims whose only reader is a Conv with explicit pads, adding its
 * pads to the Conv's (core/pad_fold.c). Needs the input ranks (run after
 * shape inference). */
tsr_status *ir_graph_fold_pads(ir_graph *g);
/* Elementwise ops between two Transposes that cancel run on the
 * untransposed tensor and the Transposes go (core/transpose_cancel.c;
 * tf2onnx's NHWC activations between NCHW Convs). Needs inferred shapes. */
tsr_status *ir_graph_cancel_transposes(ir_graph *g);
/* Replaces each Einsum that is a contraction of two operands (or a
 * permutation of one) by Transpose/Reshape/MatMul nodes, here and in
 * subgraphs (core/einsum_lower.c says which). Runs before shape inference,
 * which then types the new values. */
tsr_status *ir_graph_lower_einsum(ir_graph *g);
/* Removes the Identity nodes of control-flow bodies (not of g itself), at
 * every depth, and Dropouts that pass their input through everywhere (in g
 * unless their output is one of g's): their readers and the bodies' outputs
 * read the node's input instead (core/identity_elide.c). Runs after shape
 * inference. */
tsr_status *ir_graph_elide_body_identities(ir_graph *g);
/* The same, leaving the Einsum nodes for which keep(node, ctx) is true. */
tsr_status *ir_graph_lower_einsum_except(ir_graph *g, bool (*keep)(const ir_node *, void *), void *ctx);

#endif
