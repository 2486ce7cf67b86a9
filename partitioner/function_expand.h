/* Function-op expansion: replacing a node whose op is defined by a function
 * body (an ONNX function op, or a function of the model itself) by that body. */
#ifndef TESSERA_FUNCTION_EXPAND_H
#define TESSERA_FUNCTION_EXPAND_H

#include "ir.h"

/* Built-in bodies: ONNX ops the spec defines by a function, written in the
 * ONNX textual syntax in partitioner/functions/ and embedded by
 * partitioner/functions/embed.sh into function_texts.c. */
typedef struct function_text {
    const char *domain; /* "" for ai.onnx */
    const char *op_type;
    int64_t since; /* first opset of the op the body is valid for */
    int64_t until; /* last such opset; 0 for no limit */
    /* `when=ATTR:VALUE`: the body applies only when the node's ATTR, a string or
     * int attribute (the function's default counting; an int compares in
     * decimal) or a made-up one (function_synth_attr: __type_X, __dim_X_A),
     * is known and reads VALUE; a VALUE written "!V" holds when ATTR is known
     * and is not V. An unknown ATTR (absent without default, another type,
     * not inferred) satisfies neither form. NULL: no condition. */
    const char *when_attr;
    const char *when_value;
    const char *has_inputs;   /* body applies only when these formal inputs are given, */
    const char *lacks_inputs; /* and these omitted (comma-separated; NULL: no condition) */
    const char *has_attrs;    /* likewise for attributes the node gives, */
    const char *lacks_attrs;  /* and attributes it does not; */
    const char *rank_input;   /* and this formal input ... */
    int32_t rank;             /* ... has this rank by shape inference (NULL: no condition) */
    const char *file;         /* where the text came from, for error messages */
    const char *text;
} function_text;

extern const function_text function_texts[];
extern const size_t function_text_count;

/* What an expansion did, for the assignment report. */
typedef struct expansion {
    char *node; /* name of the node that was replaced */
    char *op;
    char *domain;
    char *origin;       /* the model node it came from, when it was itself made by expansion */
    size_t body_nodes;  /* nodes of its body */
    size_t total_nodes; /* for a top-level record: nodes in the graph that came from it,
                         * nested expansions included (set by the partitioner) */
} expansion;

/* Whether the conditions of built-in entry t (when=, has=/lacks=,
 * hasattr=/lacksattr=, rank=; not its op, domain or opsets) hold for n, f
 * being t's parsed body (its attribute defaults and formal input names). */
bool function_text_conditions_hold(const function_text *t, const ir_node *n, const ir_function *f);

/* Attributes made up for context-dependent bodies (ONNX builds those from
 * the node's input types and shapes): "__type_<formal input>" is the element
 * type of n's input bound to that formal input of f, "__dim_<formal
 * input>_<axis>" its size along axis (a decimal number), both from shape
 * inference. True with *value set when `name` is such a name and shape
 * inference knows the number; false when it is not, when f has no such
 * formal input or n omits it, or when the type or size is unknown. Body
 * attribute references (@__type_X) and when= conditions both read them. */
bool function_synth_attr(const ir_node *n, const ir_function *f, const char *name, int64_t *value);

/* The function for `n`, or *out NULL when its op is not a function: a
 * model-local function matching its domain and op first, then a built-in
 * body for its opset. The result is malloc'd (*owned true) or the model's
 * (*owned false). */
tsr_status *function_find(const ir_node *n, ir_function **out, bool *owned);

/* Replaces n (in g) by f's body: attribute references resolved with n's
 * attributes or f's defaults, body nodes named "<n>/<Op>_<k>" with origin
 * set to n's (or n's own origin), intermediate values renamed uniquely. The
 * body nodes take n's place, so the order stays topological. *rec describes
 * what happened (its strings malloc'd); n is freed. */
tsr_status *function_expand_node(ir_graph *g, ir_node *n, const ir_function *f, expansion *rec);

/* The first half of function_expand_node: appends the body nodes at the end
 * of g (from *first_new on) and points n's outputs at them, but leaves n in
 * place; ir_graph_splice_nodes then moves many such bodies at once. */
tsr_status *function_expand_append(ir_graph *g, ir_node *n, const ir_function *f, expansion *rec, size_t *first_new);

void expansion_clear(expansion *e);

#endif
