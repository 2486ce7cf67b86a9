/* Function-op expansion: the ONNX-text parser (good text and malformed text
 * with errors that say where, graph attributes reading enclosing values),
 * splicing a body into a graph (names, origin, order), attribute references,
 * nested functions, graph attributes in bodies, `@attr` calls and
 * `graph = @attr` references to the caller's graphs (run on the reference
 * provider, results worked out by hand), the when= conditions that choose a
 * body, and partition_graph expanding an op the reference provider was told
 * to decline. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "function_expand.h"
#include "graph_view.h"
#include "host_api.h"
#include "onnx_text.h"
#include "onnx_writer.h"
#include "partition.h"
#include "plugin.h"
#include "status.h"
#include "tessera/tessera.h"

static ir_function *parse_ok(const char *text) {
    ir_function *f = NULL;
    tsr_status *st = onnx_text_parse_function(text, "test", &f);
    if (st) fprintf(stderr, "\n  %s\n", tsr_status_message(st));
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    return f;
}

static const ir_node *find_node(const ir_graph *g, const char *name) {
    for (size_t i = 0; i < g->n_nodes; i++)
        if (strcmp(g->nodes[i]->name, name) == 0) return g->nodes[i];
    return NULL;
}

/* A model whose main graph is the body of `main_text` (a handy way to write a
 * graph), every graph input a float tensor of unknown shape; `functions`
 * (NULL-terminated texts) become the model's own functions. */
static ir_model *model_from_text(const char *main_text, const char *const *functions) {
    ir_function *f = parse_ok(main_text);
    if (!f) return NULL;
    ir_model *m = ir_model_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    m->graph = f->body;
    f->body = NULL;
    m->graph->model = m;
    m->opsets = f->opsets;
    m->n_opsets = f->n_opsets;
    f->opsets = NULL;
    f->n_opsets = 0;
    ir_function_free(f);
    for (size_t i = 0; i < m->graph->n_inputs; i++) {
        ir_value *v = m->graph->inputs[i];
        v->type.kind = IR_TYPE_TENSOR;
        v->type.elem_type = TSR_FLOAT;
        v->type.rank = -1;
    }
    for (size_t k = 0; functions && functions[k]; k++) {
        ir_function *lf = parse_ok(functions[k]);
        if (!lf) continue;
        lf->body->model = m;
        ir_function **nf = realloc(m->functions, sizeof *nf * (m->n_functions + 1));
        CU_ASSERT_PTR_NOT_NULL_FATAL(nf);
        m->functions = nf;
        m->functions[m->n_functions++] = lf;
    }
    return m;
}

/* --- parser ------------------------------------------------------------------- */

static void test_parse_good(void) {
    ir_function *f = parse_ok("# a comment line\n"
                              "<domain: \"com.example\", opset_import: [\"\": 18, \"com.example\": 1]>\n"
                              "Scale <alpha: float = 2.5, mode: string = \"x\", axes: ints = [0, -1], k> (X, B) "
                              "=> (Y) {\n"
                              "    A = Constant <value_float: float = @alpha> ()\n"
                              "    T = Constant <value = int64[2] {3, -4}> ()\n"
                              "    P = Pad <mode: string = @mode> (X, T, , B)  # an omitted input\n"
                              "    Y = com.example.Helper <f = [1.0, 2], s = \"q\\\"z\"> (P, A)\n"
                              "}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_STRING_EQUAL(f->name, "Scale");
    CU_ASSERT_STRING_EQUAL(f->domain, "com.example");
    CU_ASSERT_EQUAL(f->n_opsets, 2);
    CU_ASSERT_EQUAL(f->n_attr_names, 1);
    CU_ASSERT_STRING_EQUAL(f->attr_names[0], "k");
    CU_ASSERT_EQUAL_FATAL(f->n_attr_defaults, 3);
    CU_ASSERT_EQUAL(f->attr_defaults[0].type, TSR_ATTR_FLOAT);
    CU_ASSERT_DOUBLE_EQUAL(f->attr_defaults[0].f, 2.5, 1e-9);
    CU_ASSERT_STRING_EQUAL(f->attr_defaults[1].s, "x");
    CU_ASSERT_EQUAL(f->attr_defaults[2].type, TSR_ATTR_INTS);
    CU_ASSERT_EQUAL(f->attr_defaults[2].count, 2);
    CU_ASSERT_EQUAL(f->attr_defaults[2].ints[1], -1);
    const ir_graph *b = f->body;
    CU_ASSERT_EQUAL(b->n_inputs, 2);
    CU_ASSERT_EQUAL(b->n_outputs, 1);
    CU_ASSERT_EQUAL_FATAL(b->n_nodes, 4);
    const ir_node *c = b->nodes[0];
    CU_ASSERT_STRING_EQUAL(c->op_type, "Constant");
    CU_ASSERT_EQUAL(c->opset, 18);
    CU_ASSERT_STRING_EQUAL(c->attrs[0].ref_attr_name, "alpha");
    const ir_attr *t = &b->nodes[1]->attrs[0];
    CU_ASSERT_EQUAL_FATAL(t->type, TSR_ATTR_TENSOR);
    CU_ASSERT_EQUAL(t->t->elem_type, TSR_INT64);
    CU_ASSERT_EQUAL(((int64_t *)t->t->data)[1], -4);
    const ir_node *pad = b->nodes[2];
    CU_ASSERT_EQUAL_FATAL(pad->n_inputs, 4);
    CU_ASSERT_PTR_NULL(pad->inputs[2]);
    CU_ASSERT_STRING_EQUAL(pad->inputs[3]->name, "B");
    const ir_node *h = b->nodes[3];
    CU_ASSERT_STRING_EQUAL(h->domain, "com.example");
    CU_ASSERT_STRING_EQUAL(h->op_type, "Helper");
    CU_ASSERT_EQUAL(h->opset, 1);
    CU_ASSERT_EQUAL(h->attrs[0].type, TSR_ATTR_FLOATS);
    CU_ASSERT_DOUBLE_EQUAL(h->attrs[0].floats[1], 2.0, 1e-9);
    CU_ASSERT_STRING_EQUAL(h->attrs[1].s, "q\"z");
    CU_ASSERT_PTR_EQUAL(b->outputs[0]->producer, h);
    ir_function_free(f);
}

static void test_parse_errors(void) {
    static const struct {
        const char *text;
        const char *want; /* part of the message */
    } bad[] = {
        {"F (X) => (Y) {\n  Y = Relu (X\n}\n", "line 3, column 1: expected ','"},
        {"F (X) => (Y) {\n  Y = Relu <alpha = @a> (X)\n}\n", "needs a declared type"},
        {"F (X) => (Y) {\n  Y = Relu (Z)\n}\n", "reads 'Z' before anything makes it"},
        {"F (X) => (Y) {\n  Z = Relu (X)\n}\n", "output 'Y' is made by no node"},
        {"F (X) => (Y) {\n  Y = Relu (X)\n", "missing '}'"},
        {"F (X) => (Y) {\n  Y = Relu <a: int = 1.5> (X)\n}\n", "'1.5' is not an integer"},
        {"F (X) => (Y) {\n  Y = Relu <t = float[2] {1}> (X)\n}\n", "fewer values"},
        {"F (X) => (Y) {\n  Y = Relu <t = float[99999999999] {1}> (X)\n}\n", "tensor too large"},
        {"<opset_import: [\"\": x]> F (X) => (Y) { Y = Relu (X) }", "expected an opset version"},
        {"<colour: \"red\"> F (X) => (Y) { Y = Relu (X) }", "unknown header key 'colour'"},
        {"F (X) => (Y) {\n  Y = Relu (X)\n  Y = Relu (X)\n}\n", "'Y' is produced twice"},
        {"F (X) => (Y) { Y = Loop <body = {}> (X) }", "graph-valued attributes are not supported"},
        {"F (X) => (Y) { Y = Relu (X) } trailing", "after the function"},
        {"F (X) => (Y) { Y = Relu (X) $ }", "unexpected character '$'"},
        {"F (X, X) => (Y) { Y = Relu (X) }", "listed twice"},
        {"", "expected a name"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ir_function *f = NULL;
        tsr_status *st = onnx_text_parse_function(bad[i].text, "bad.onnxtxt", &f);
        CU_ASSERT_PTR_NOT_NULL(st);
        CU_ASSERT_PTR_NULL(f);
        if (!st) continue;
        const char *msg = tsr_status_message(st);
        bool ok = strstr(msg, bad[i].want) != NULL && strstr(msg, "bad.onnxtxt: line ") != NULL;
        if (!ok) fprintf(stderr, "\n  case %zu: got \"%s\", wanted \"%s\"\n", i, msg, bad[i].want);
        CU_ASSERT(ok);
        CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_MODEL);
        tsr_status_free(st);
    }
}

/* Every built-in body parses. */
static void test_builtin_bodies_parse(void) {
    for (size_t i = 0; i < function_text_count; i++) {
        ir_function *f = NULL;
        tsr_status *st = onnx_text_parse_function(function_texts[i].text, function_texts[i].file, &f);
        if (st) fprintf(stderr, "\n  %s\n", tsr_status_message(st));
        CU_ASSERT_PTR_NULL(st);
        tsr_status_free(st);
        if (f) CU_ASSERT_STRING_EQUAL(f->name, function_texts[i].op_type);
        ir_function_free(f);
    }
}

/* --- expansion ---------------------------------------------------------------- */

/* A built-in body spliced in: names derived from the node, origin set, the
 * body where the node was, its output now made by the body's last node. */
static void test_expand_builtin(void) {
    ir_model *m = model_from_text("<opset_import: [\"\": 18]>\n"
                                  "main (X) => (Z) {\n"
                                  "    A = Abs (X)\n"
                                  "    Y = Softsign (A)\n"
                                  "    Z = Neg (Y)\n"
                                  "}\n",
                                  NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    ir_graph *g = m->graph;
    ir_node *n = g->nodes[1];
    free(n->name);
    n->name = strdup("ss");
    ir_value *y = n->outputs[0];
    ir_function *f;
    bool owned;
    CU_ASSERT_PTR_NULL_FATAL(function_find(n, &f, &owned));
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT(owned);
    size_t body = f->body->n_nodes;
    expansion rec;
    tsr_status *st = function_expand_node(g, n, f, &rec);
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    ir_function_free(f);
    CU_ASSERT_EQUAL(g->n_nodes, 2 + body);
    CU_ASSERT_STRING_EQUAL(rec.node, "ss");
    CU_ASSERT_STRING_EQUAL(rec.op, "Softsign");
    CU_ASSERT_EQUAL(rec.body_nodes, body);
    CU_ASSERT_PTR_NULL(rec.origin);
    expansion_clear(&rec);
    CU_ASSERT_STRING_EQUAL(g->nodes[0]->op_type, "Abs");
    CU_ASSERT_STRING_EQUAL(g->nodes[g->n_nodes - 1]->op_type, "Neg");
    for (size_t i = 0; i < g->n_nodes; i++) CU_ASSERT_EQUAL(g->nodes[i]->index, i);
    for (size_t i = 1; i + 1 < g->n_nodes; i++) {
        CU_ASSERT_PTR_NOT_NULL_FATAL(g->nodes[i]->origin);
        CU_ASSERT_STRING_EQUAL(g->nodes[i]->origin, "ss");
        CU_ASSERT(strncmp(g->nodes[i]->name, "ss/", 3) == 0);
    }
    CU_ASSERT_PTR_NOT_NULL(find_node(g, "ss/Constant_0"));
    CU_ASSERT_PTR_EQUAL(y->producer, g->nodes[g->n_nodes - 2]);
    CU_ASSERT_STRING_EQUAL(y->producer->op_type, "Div");
    /* Intermediate values are named after the node too. */
    CU_ASSERT_PTR_NOT_NULL(ir_graph_find(g, "ss/Abs"));
    CU_ASSERT_PTR_NULL(ir_graph_check(g));
    ir_model_free(m);
}

static const char *const local_functions[] = {
    /* alpha has a default, beta none; gamma is referenced but nobody gives it. */
    "<domain: \"local\", opset_import: [\"\": 18, \"local\": 1]>\n"
    "Outer <alpha: float = 0.5, beta> (X) => (Y) {\n"
    "    S = Constant <value_float: float = @alpha> ()\n"
    "    B = Constant <value_int: int = @beta> ()\n"
    "    E = Elu <alpha: float = @gamma> (X)\n"
    "    P = Mul (E, S)\n"
    "    Y = local.Inner <k: int = @beta> (P)\n"
    "}\n",
    "<domain: \"local\", opset_import: [\"\": 18]>\n"
    "Inner <k: int = 7> (X) => (Y) {\n"
    "    K = Constant <value_int: int = @k> ()\n"
    "    Y = Identity (X)\n"
    "}\n",
    NULL};

static const ir_attr *attr_of(const ir_node *n, const char *name) { return n ? ir_node_attr(n, name) : NULL; }

/* References resolve to the caller's attribute, else the default, else the
 * attribute is left out; a nested model-local function expands in turn,
 * keeping the original node as origin. */
static void test_attr_refs_and_nesting(void) {
    ir_model *m = model_from_text("<opset_import: [\"\": 18, \"local\": 1]>\n"
                                  "main (X) => (Y) {\n"
                                  "    Y = local.Outer <beta = 3> (X)\n"
                                  "}\n",
                                  local_functions);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    ir_graph *g = m->graph;
    free(g->nodes[0]->name);
    g->nodes[0]->name = strdup("o");
    ir_function *f;
    bool owned;
    expansion rec;
    CU_ASSERT_PTR_NULL_FATAL(function_find(g->nodes[0], &f, &owned));
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT(!owned); /* the model's own */
    CU_ASSERT_PTR_NULL_FATAL(function_expand_node(g, g->nodes[0], f, &rec));
    expansion_clear(&rec);
    CU_ASSERT_EQUAL_FATAL(g->n_nodes, 5);
    const ir_attr *a = attr_of(find_node(g, "o/Constant_0"), "value_float");
    CU_ASSERT(a && a->type == TSR_ATTR_FLOAT && a->f == 0.5f);
    a = attr_of(find_node(g, "o/Constant_1"), "value_int");
    CU_ASSERT(a && a->type == TSR_ATTR_INT && a->i == 3);
    const ir_node *elu = find_node(g, "o/Elu_2");
    CU_ASSERT_PTR_NOT_NULL_FATAL(elu);
    CU_ASSERT_EQUAL(elu->n_attrs, 0); /* @gamma: given by nobody */
    CU_ASSERT_EQUAL(elu->opset, 18);
    ir_node *inner = (ir_node *)find_node(g, "o/Inner_4");
    CU_ASSERT_PTR_NOT_NULL_FATAL(inner);
    CU_ASSERT_EQUAL(inner->opset, 1);
    a = attr_of(inner, "k");
    CU_ASSERT(a && a->i == 3 && !a->ref_attr_name);

    CU_ASSERT_PTR_NULL_FATAL(function_find(inner, &f, &owned));
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_PTR_NULL_FATAL(function_expand_node(g, inner, f, &rec));
    CU_ASSERT_STRING_EQUAL(rec.node, "o/Inner_4");
    CU_ASSERT_STRING_EQUAL(rec.origin, "o");
    expansion_clear(&rec);
    CU_ASSERT_EQUAL_FATAL(g->n_nodes, 6);
    const ir_node *k = find_node(g, "o/Inner_4/Constant_0");
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    CU_ASSERT_STRING_EQUAL(k->origin, "o");
    a = attr_of(k, "value_int");
    CU_ASSERT(a && a->i == 3);
    CU_ASSERT_PTR_EQUAL(g->outputs[0]->producer, g->nodes[5]);
    CU_ASSERT_STRING_EQUAL(g->nodes[5]->op_type, "Identity");
    CU_ASSERT_PTR_NULL(ir_graph_check(g));
    ir_model_free(m);
}

/* Wrong arity is an error naming the node, and the graph keeps the node. */
static void test_expand_arity_error(void) {
    ir_model *m = model_from_text("<opset_import: [\"\": 18]>\n"
                                  "main (X) => (Y) {\n"
                                  "    Y = Relu (X, X)\n"
                                  "}\n",
                                  NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    ir_function *f;
    bool owned;
    CU_ASSERT_PTR_NULL_FATAL(function_find(m->graph->nodes[0], &f, &owned));
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    expansion rec;
    tsr_status *st = function_expand_node(m->graph, m->graph->nodes[0], f, &rec);
    CU_ASSERT_PTR_NOT_NULL(st);
    if (st) CU_ASSERT(strstr(tsr_status_message(st), "Relu") != NULL);
    tsr_status_free(st);
    CU_ASSERT_EQUAL(m->graph->n_nodes, 1);
    ir_function_free(f);
    ir_model_free(m);
}

/* A model function that calls itself (through another) is refused up front. */
static void test_recursive_function(void) {
    static const char *const fns[] = {"<domain: \"local\", opset_import: [\"local\": 1]>\n"
                                      "A (X) => (Y) { Y = local.B (X) }",
                                      "<domain: \"local\", opset_import: [\"local\": 1]>\n"
                                      "B (X) => (Y) { T = local.A (X)\n Y = local.A (T) }",
                                      NULL};
    ir_model *m = model_from_text("<opset_import: [\"local\": 1]>\n"
                                  "main (X) => (Y) { Y = local.A (X) }",
                                  fns);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    ir_function *f = NULL;
    bool owned;
    tsr_status *st = function_find(m->graph->nodes[0], &f, &owned);
    CU_ASSERT_PTR_NOT_NULL(st);
    CU_ASSERT_PTR_NULL(f);
    if (st) CU_ASSERT(strstr(tsr_status_message(st), "function local.A calls itself") != NULL);
    tsr_status_free(st);
    ir_model_free(m);
}

static const char *env_or(const char *name, const char *dflt) {
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

/* --- graph attributes and calls of the caller's graphs --------------------------- */

/* The value v stands for: v itself, or what its outer-scope placeholders
 * lead to through each enclosing graph. */
static const ir_value *outer_root(const ir_value *v) {
    while (v && v->is_outer) v = v->outer;
    return v;
}

static const ir_graph *graph_attr(const ir_node *n, const char *name) {
    const ir_attr *a = n ? ir_node_attr(n, name) : NULL;
    return a && a->type == TSR_ATTR_GRAPH ? a->g : NULL;
}

/* A graph attribute whose nodes read the values of the function body (S
 * from one level up, X from two, T from the graph holding the If), and
 * passes its condition input on as an output. */
static void test_parse_graph_attr(void) {
    ir_function *f = parse_ok("<domain: \"local\", opset_import: [\"\": 18]>\n"
                              "F (X) => (Y) {\n"
                              "    S = Mul (X, X)\n"
                              "    M = Constant <value = int64 {2}> ()\n"
                              "    C = Constant <value = bool {1}> ()\n"
                              "    Y = Loop <body: graph = step (i, c, acc) => (c, acc2) {\n"
                              "        T = Add (acc, S)\n"
                              "        acc2 = If <then_branch: graph = yes () => (u) { u = Identity (T) },\n"
                              "                   else_branch: graph = no () => (w) { w = Mul (T, X) }> (c)\n"
                              "    }> (M, C, X)\n"
                              "}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    const ir_graph *b = f->body;
    CU_ASSERT_EQUAL_FATAL(b->n_nodes, 4);
    const ir_node *loop = b->nodes[3];
    CU_ASSERT_STRING_EQUAL(loop->op_type, "Loop");
    CU_ASSERT_EQUAL(loop->n_inputs, 3);
    const ir_graph *g = graph_attr(loop, "body");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_STRING_EQUAL(g->name, "step");
    CU_ASSERT_PTR_EQUAL(g->parent, b);
    CU_ASSERT_EQUAL_FATAL(g->n_inputs, 3);
    CU_ASSERT_EQUAL_FATAL(g->n_outputs, 2);
    CU_ASSERT_STRING_EQUAL(g->inputs[2]->name, "acc");
    CU_ASSERT_PTR_EQUAL(g->outputs[0], g->inputs[1]); /* the condition passed on */
    CU_ASSERT_EQUAL_FATAL(g->n_nodes, 2);
    const ir_node *add = g->nodes[0];
    CU_ASSERT_PTR_EQUAL(add->inputs[0], g->inputs[2]);
    CU_ASSERT(add->inputs[1]->is_outer);
    CU_ASSERT_PTR_EQUAL(add->inputs[1]->outer, ir_graph_find(b, "S"));
    CU_ASSERT_PTR_EQUAL(g->outputs[1]->producer, g->nodes[1]);
    const ir_graph *no = graph_attr(g->nodes[1], "else_branch");
    const ir_graph *yes = graph_attr(g->nodes[1], "then_branch");
    CU_ASSERT_PTR_NOT_NULL_FATAL(no);
    CU_ASSERT_PTR_NOT_NULL_FATAL(yes);
    CU_ASSERT_PTR_EQUAL(no->parent, g);
    CU_ASSERT_EQUAL(no->n_inputs, 0);
    CU_ASSERT_EQUAL_FATAL(no->n_nodes, 1);
    const ir_node *mul = no->nodes[0];
    CU_ASSERT(mul->inputs[0]->is_outer && mul->inputs[1]->is_outer);
    CU_ASSERT_PTR_EQUAL(outer_root(mul->inputs[0]), ir_graph_find(g, "T"));
    CU_ASSERT_PTR_EQUAL(outer_root(mul->inputs[1]), b->inputs[0]);
    CU_ASSERT_PTR_EQUAL(outer_root(yes->nodes[0]->inputs[0]), ir_graph_find(g, "T"));
    /* The graph's own names stay its own: none leaks into the body. */
    CU_ASSERT_PTR_NULL(ir_graph_find(b, "acc"));
    CU_ASSERT_PTR_NULL(ir_graph_find(b, "T"));
    ir_function_free(f);
}

/* Malformed graph attributes: names that repeat one in scope, values read
 * before they are made, calls without a name; each error says where. */
static void test_parse_graph_attr_errors(void) {
#define HEAD "<opset_import: [\"\": 18]>\nF (X) => (Y) {\n    S = Relu (X)\n"
    static const struct {
        const char *text;
        const char *want; /* part of the message */
    } bad[] = {
        /* an input named like a value of the enclosing graph */
        {HEAD "    Y = Loop <body: graph = g (i, c, X) => (c, X) { }> (, , X)\n}\n",
         "line 4, column 41: 'X' is already a value of an enclosing graph"},
        /* an output named like one */
        {HEAD "    Y = Loop <body: graph = g (i, c, a) => (c, S) {\n        S = Add (a, a)\n"
              "    }> (, , X)\n}\n",
         "line 5, column 9: 'S' is already a value of an enclosing graph"},
        {HEAD "    Y = Loop <body: graph = g (i, c, c) => (c) { }> (, , X)\n}\n", "input 'c' listed twice"},
        {HEAD "    Y = Loop <body: graph = g (i, c, a) => (c, t) {\n        t = Add (a, S)\n"
              "        t = Add (a, a)\n    }> (, , X)\n}\n",
         "line 6, column 9: 't' is produced twice"},
        /* the node holding the graph makes Y: the graph cannot read it */
        {HEAD "    Y = Loop <body: graph = g (i, c, a) => (c, t) {\n        t = Add (a, Y)\n"
              "    }> (, , X)\n}\n",
         "line 5, column 21: 'Y' is read before anything makes it"},
        /* L is made after the node holding the graph */
        {HEAD "    Y = Loop <body: graph = g (i, c, a) => (c, t) {\n        t = Add (a, L)\n"
              "    }> (, , X)\n    L = Relu (S)\n}\n",
         "node 0 (Add) reads 'L' before anything makes it"},
        {HEAD "    Y = Loop <body: graph = g (i, c, a) => (c, z) {\n        t = Add (a, S)\n"
              "    }> (, , X)\n}\n",
         "output 'z' is made by no node"},
        {HEAD "    Y = Loop <body: graph = g (i, c, a) (c, a) { }> (, , X)\n}\n", "expected '=>'"},
        {HEAD "    Y = Loop <body: graph = g (i, c, a) => (c, t) {\n        t = Add (a, S)\n",
         "missing '}' at the end of a graph"},
        {HEAD "    Y = @ (S)\n}\n", "line 4, column 11: expected a graph attribute name"},
        {HEAD "    Y = @3 (S)\n}\n", "expected a graph attribute name, found '3'"},
    };
#undef HEAD
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ir_function *f = NULL;
        tsr_status *st = onnx_text_parse_function(bad[i].text, "bad.onnxtxt", &f);
        CU_ASSERT_PTR_NOT_NULL(st);
        CU_ASSERT_PTR_NULL(f);
        if (!st) {
            fprintf(stderr, "\n  case %zu: parsed, wanted \"%s\"\n", i, bad[i].want);
            ir_function_free(f);
            continue;
        }
        const char *msg = tsr_status_message(st);
        bool ok = strstr(msg, bad[i].want) != NULL && strstr(msg, "bad.onnxtxt: line ") != NULL;
        if (!ok) fprintf(stderr, "\n  case %zu: got \"%s\", wanted \"%s\"\n", i, msg, bad[i].want);
        CU_ASSERT(ok);
        CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_MODEL);
        tsr_status_free(st);
    }
}

static int suite_init(void) {
    return setenv("TESSERA_PROVIDER_PATH", env_or("TESSERA_BUILD_LIB", "build/lib"), 1) == 0 ? 0 : 1;
}

/* Runs m's main graph (written back as ONNX, so exactly what the IR says)
 * on the reference provider with the float vector x as input X and checks
 * its only output against want. m is freed. */
static void run_and_check(ir_model *m, const float *x, const float *want, size_t n) {
    struct tsr_graph *view = NULL;
    void *bytes = NULL;
    size_t size = 0;
    tsr_session *s = NULL;
    tsr_session_options *o = NULL;
    tsr_value *out = NULL;
    tsr_status *st = graph_view_whole(m->graph, &view);
    if (!st) st = onnx_write_view(view, &bytes, &size);
    graph_view_free(view);
    ir_model_free(m);
    if (!st) st = tsr_session_options_create(&o);
    if (!st) st = tsr_session_options_add_provider(o, "reference");
    if (!st) st = tsr_session_create_from_buffer(o, bytes, size, NULL, &s);
    tsr_session_options_free(o);
    free(bytes);
    int64_t dims[1] = {(int64_t)n};
    tsr_tensor in = {sizeof in, TSR_FLOAT, 1, dims, (void *)x, n * sizeof(float), TSR_MEMORY_HOST, 0};
    const tsr_tensor *ins[1] = {&in};
    const char *names[1] = {"X"};
    if (!st) st = tsr_session_run(s, 1, names, ins, 1, NULL, &out);
    if (st) fprintf(stderr, "\n  run: %s\n", tsr_status_message(st));
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    tsr_tensor t = {.struct_size = sizeof t};
    if (out && !tsr_value_tensor(out, &t)) {
        CU_ASSERT_EQUAL(t.elem_type, TSR_FLOAT);
        CU_ASSERT_EQUAL(t.nbytes, n * sizeof(float));
        for (size_t i = 0; t.elem_type == TSR_FLOAT && i < n && i < t.nbytes / sizeof(float); i++) {
            float got = ((const float *)t.data)[i];
            if (got != want[i]) fprintf(stderr, "\n  [%zu]: got %g, want %g\n", i, got, want[i]);
            CU_ASSERT_DOUBLE_EQUAL(got, want[i], 1e-6);
        }
    } else {
        CU_FAIL("no output");
    }
    tsr_value_free(out);
    tsr_session_free(s);
}

/* Expands g's node at index i, renamed `name`, by f (NULL: function_find's). */
static tsr_status *expand_at(ir_graph *g, size_t i, const char *name, const ir_function *f) {
    ir_node *n = g->nodes[i];
    free(n->name);
    n->name = strdup(name);
    ir_function *found = NULL;
    bool owned = false;
    if (!f) {
        TSR_TRY(function_find(n, &found, &owned));
        if (!found) return tsr_error(TSR_ERR_INVALID_MODEL, "no function for %s", n->op_type);
        f = found;
    }
    expansion rec;
    tsr_status *st = function_expand_node(g, n, f, &rec);
    if (!st) expansion_clear(&rec);
    if (owned) ir_function_free(found);
    return st;
}

static void expand_ok(ir_graph *g, size_t i, const char *name, const ir_function *f) {
    tsr_status *st = expand_at(g, i, name, f);
    if (st) fprintf(stderr, "\n  %s\n", tsr_status_message(st));
    CU_ASSERT_PTR_NULL_FATAL(st);
    st = ir_graph_check(g);
    if (st) fprintf(stderr, "\n  check: %s\n", tsr_status_message(st));
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
}

/* Y = X + 3 X^2: a Loop of three turns adding S = X * X, a value of the
 * function body, to its carried value. */
static const char *const loop_functions[] = {"<domain: \"local\", opset_import: [\"\": 18]>\n"
                                             "SumSq (X) => (Y) {\n"
                                             "    S = Mul (X, X)\n"
                                             "    M = Constant <value = int64 {3}> ()\n"
                                             "    C = Constant <value = bool {1}> ()\n"
                                             "    Y = Loop <body: graph = step (i, c, acc) => (c, acc2) {\n"
                                             "        acc2 = Add (acc, S)\n"
                                             "    }> (M, C, X)\n"
                                             "}\n",
                                             NULL};
static const char loop_main[] = "<opset_import: [\"\": 18, \"local\": 1]>\n"
                                "main (X) => (Y) { Y = local.SumSq (X) }";

/* The Loop's body copied as a subgraph of the caller's graph, its read of S
 * now a read of the spliced value; run, by the partitioner (the reference
 * provider knows no local.SumSq) and expanded here beforehand. */
static void test_expand_loop_reading_outer(void) {
    static const float x[3] = {1, -2, 0.5f};
    static const float want[3] = {1 + 3 * 1, -2 + 3 * 4, 0.5f + 3 * 0.25f}; /* 4, 10, 1.25 */
    ir_model *m = model_from_text(loop_main, loop_functions);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    run_and_check(m, x, want, 3);

    m = model_from_text(loop_main, loop_functions);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    ir_graph *g = m->graph;
    expand_ok(g, 0, "f", NULL);
    CU_ASSERT_EQUAL_FATAL(g->n_nodes, 4);
    const ir_node *loop = find_node(g, "f/Loop_3");
    CU_ASSERT_PTR_NOT_NULL_FATAL(loop);
    CU_ASSERT_PTR_EQUAL(loop->outputs[0], g->outputs[0]);
    const ir_graph *body = graph_attr(loop, "body");
    CU_ASSERT_PTR_NOT_NULL_FATAL(body);
    CU_ASSERT_PTR_EQUAL(body->parent, g);
    CU_ASSERT_EQUAL_FATAL(body->n_nodes, 1);
    const ir_node *add = body->nodes[0];
    CU_ASSERT_STRING_EQUAL(add->name, "f/body/Add_0");
    CU_ASSERT_STRING_EQUAL(add->origin, "f");
    CU_ASSERT_STRING_EQUAL(add->outputs[0]->name, "f/body/acc2");
    CU_ASSERT_PTR_EQUAL(add->inputs[0], body->inputs[2]);
    CU_ASSERT(add->inputs[1]->is_outer);
    CU_ASSERT_PTR_EQUAL(outer_root(add->inputs[1]), ir_graph_find(g, "f/S"));
    CU_ASSERT_PTR_EQUAL(body->outputs[0], body->inputs[1]);
    run_and_check(m, x, want, 3);
}

/* Y = -score(|X|), score the caller's graph (or nothing). */
static const char mod_function[] = "<domain: \"local\", opset_import: [\"\": 18]>\n"
                                   "Mod (X) => (Y) {\n"
                                   "    A = Abs (X)\n"
                                   "    B = @score (A)\n"
                                   "    Y = Neg (B)\n"
                                   "}\n";

static ir_model *mod_caller(const char *score) {
    char text[1024];
    snprintf(text, sizeof text,
             "<opset_import: [\"\": 18, \"local\": 1]>\n"
             "main (X) => (Y) {\n"
             "    K = Constant <value = float {2}> ()\n"
             "    Y = local.Mod %s (X)\n"
             "}\n",
             score);
    return model_from_text(text, NULL);
}

/* `B = @score (A)`: the caller's graph spliced in, reading the caller's K;
 * without one, B is a copy of A; a graph passing its input on becomes an
 * Identity. Then the errors: not a graph, the wrong number of inputs. */
static void test_call_graph_attr(void) {
    static const float x[3] = {-1, 2, -3};
    ir_function *f = parse_ok(mod_function);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);

    ir_model *m = mod_caller("<score: graph = sm (s) => (t) { t = Mul (s, K) }>");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    ir_graph *g = m->graph;
    expand_ok(g, 1, "n", f);
    CU_ASSERT_EQUAL_FATAL(g->n_nodes, 4);
    const ir_node *abs = find_node(g, "n/Abs_0"), *mul = find_node(g, "n/score/Mul_0"), *neg = find_node(g, "n/Neg_2");
    CU_ASSERT_PTR_NOT_NULL_FATAL(abs);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mul);
    CU_ASSERT_PTR_NOT_NULL_FATAL(neg);
    CU_ASSERT_STRING_EQUAL(mul->origin, "n");
    CU_ASSERT_PTR_EQUAL(mul->inputs[0], abs->outputs[0]);
    CU_ASSERT_PTR_EQUAL(mul->inputs[1], ir_graph_find(g, "K"));
    CU_ASSERT_PTR_EQUAL(mul->outputs[0], ir_graph_find(g, "n/B"));
    CU_ASSERT_PTR_EQUAL(neg->inputs[0], mul->outputs[0]);
    CU_ASSERT(abs->index < mul->index && mul->index < neg->index);
    static const float want_mul[3] = {-2, -4, -6};
    run_and_check(m, x, want_mul, 3);

    m = mod_caller("");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    g = m->graph;
    expand_ok(g, 1, "n", f);
    CU_ASSERT_EQUAL_FATAL(g->n_nodes, 4);
    const ir_node *id = find_node(g, "n/Identity_1");
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    CU_ASSERT_PTR_EQUAL(id->inputs[0], ir_graph_find(g, "n/A"));
    CU_ASSERT_PTR_EQUAL(id->outputs[0], ir_graph_find(g, "n/B"));
    static const float want_none[3] = {-1, -2, -3};
    run_and_check(m, x, want_none, 3);

    m = mod_caller("<score: graph = sm (s) => (s) { }>");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    g = m->graph;
    expand_ok(g, 1, "n", f);
    id = find_node(g, "n/score/Identity_0");
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    CU_ASSERT_PTR_EQUAL(id->outputs[0], ir_graph_find(g, "n/B"));
    run_and_check(m, x, want_none, 3);

    static const struct {
        const char *attrs, *want;
    } bad[] = {
        {"<score = 3>", "attribute 'score' is not a graph"},
        {"<score: graph = sm (s, r) => (t) { t = Mul (s, r) }>",
         "graph attribute 'score' takes 2 inputs and makes 1 outputs; the body calls it with 1 and 1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        m = mod_caller(bad[i].attrs);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        tsr_status *st = expand_at(m->graph, 1, "n", f);
        CU_ASSERT_PTR_NOT_NULL(st);
        const char *msg = st ? tsr_status_message(st) : "";
        bool ok = strstr(msg, bad[i].want) && strstr(msg, "expanding node 'n' (Mod)");
        if (!ok) fprintf(stderr, "\n  case %zu: got \"%s\", wanted \"%s\"\n", i, msg, bad[i].want);
        CU_ASSERT(ok);
        tsr_status_free(st);
        ir_model_free(m);
    }
    ir_function_free(f);
}

/* `body: graph = @body`: the caller's graph, reading the caller's K, copied
 * as the Loop's body. Y = X K^2 after two turns. */
static void test_graph_attr_by_reference(void) {
    ir_function *f = parse_ok("<domain: \"local\", opset_import: [\"\": 18]>\n"
                              "Rep <body> (X) => (Y) {\n"
                              "    M = Constant <value = int64 {2}> ()\n"
                              "    C = Constant <value = bool {1}> ()\n"
                              "    Y = Loop <body: graph = @body> (M, C, X)\n"
                              "}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    ir_model *m = model_from_text("<opset_import: [\"\": 18, \"local\": 1]>\n"
                                  "main (X) => (Y) {\n"
                                  "    K = Constant <value = float {3}> ()\n"
                                  "    Y = local.Rep <body: graph = step (i, c, a) => (c, a2) {\n"
                                  "        a2 = Mul (a, K)\n"
                                  "    }> (X)\n"
                                  "}\n",
                                  NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    ir_graph *g = m->graph;
    expand_ok(g, 1, "n", f);
    ir_function_free(f);
    const ir_node *loop = find_node(g, "n/Loop_2");
    CU_ASSERT_PTR_NOT_NULL_FATAL(loop);
    const ir_graph *body = graph_attr(loop, "body");
    CU_ASSERT_PTR_NOT_NULL_FATAL(body);
    CU_ASSERT_PTR_EQUAL(body->parent, g);
    CU_ASSERT_EQUAL_FATAL(body->n_nodes, 1);
    CU_ASSERT_EQUAL_FATAL(body->n_inputs, 3);
    const ir_node *mul = body->nodes[0];
    CU_ASSERT_STRING_EQUAL(mul->name, "n/body/Mul_0");
    CU_ASSERT_STRING_EQUAL(mul->origin, "n");
    CU_ASSERT_STRING_EQUAL(mul->outputs[0]->name, "n/body/a2");
    CU_ASSERT_PTR_EQUAL(outer_root(mul->inputs[1]), ir_graph_find(g, "K"));
    static const float x[2] = {1, -2}, want[2] = {9, -18};
    run_and_check(m, x, want, 2);
}

/* --- when= conditions and made-up attributes ------------------------------------- */

static void set_tensor_type(ir_value *v, int32_t elem, int32_t rank, const int64_t *dims) {
    ir_type_clear(&v->type);
    v->type.kind = IR_TYPE_TENSOR;
    v->type.elem_type = elem;
    v->type.rank = rank;
    if (rank > 0) {
        v->type.dims = calloc((size_t)rank, sizeof(ir_dim));
        CU_ASSERT_PTR_NOT_NULL_FATAL(v->type.dims);
        for (int32_t i = 0; i < rank; i++) v->type.dims[i].value = dims[i];
    }
}

/* Conditions of a made-up table entry for local.Pick, given X float [2, 5],
 * W of unknown type and shape, Z omitted, mode = 2 (the default 0 in the
 * second node), kind and ratio by default. */
static void test_when_conditions(void) {
    ir_function *f = parse_ok("<domain: \"local\", opset_import: [\"\": 18]>\n"
                              "Pick <mode: int = 0, kind: string = \"a\", ratio: float = 0.5> "
                              "(X, W, Z) => (Y) { Y = Add (X, W) }\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    ir_model *m = model_from_text("<opset_import: [\"\": 18, \"local\": 1]>\n"
                                  "main (X, W) => (Y, V) {\n"
                                  "    Y = local.Pick <mode = 2> (X, W)\n"
                                  "    V = local.Pick (X, W)\n"
                                  "}\n",
                                  NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    const int64_t dims[2] = {2, 5};
    set_tensor_type(m->graph->inputs[0], TSR_FLOAT, 2, dims);
    m->graph->inputs[1]->type.elem_type = 0;
    static const struct {
        const char *attr, *value;
        bool holds, holds_default; /* for the node with mode = 2, and the one without */
    } cases[] = {
        {"mode", "2", true, false},         {"mode", "0", false, true},        {"mode", "!0", true, false},
        {"mode", "!2", false, true},        {"kind", "a", true, true},         {"kind", "!a", false, false},
        {"kind", "b", false, false},        {"kind", "!b", true, true},        {"ratio", "0.5", false, false},
        {"ratio", "!0.5", false, false}, /* a float: unknown */
        {"absent", "x", false, false},      {"absent", "!x", false, false},    {"__type_X", "1", true, true},
        {"__type_X", "!1", false, false},   {"__type_X", "11", false, false},  {"__type_X", "!11", true, true},
        {"__type_W", "1", false, false},    {"__type_W", "!1", false, false}, /* unknown type */
        {"__type_Z", "!1", false, false},                                     /* omitted */
        {"__type_Q", "!1", false, false},                                     /* no such input */
        {"__dim_X_0", "2", true, true},     {"__dim_X_1", "5", true, true},    {"__dim_X_1", "!5", false, false},
        {"__dim_X_1", "!4", true, true},    {"__dim_X_2", "!1", false, false}, /* beyond the rank */
        {"__dim_W_0", "!1", false, false},                                     /* unknown shape */
        {"__dim_X", "!1", false, false},    {"__dim_X_", "!1", false, false},  {"__dim_X_1x", "!1", false, false},
        {"__dim_X_-1", "!1", false, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        function_text t = {
            .domain = "local", .op_type = "Pick", .since = 1, .when_attr = cases[i].attr, .when_value = cases[i].value};
        bool got = function_text_conditions_hold(&t, m->graph->nodes[0], f);
        bool got_default = function_text_conditions_hold(&t, m->graph->nodes[1], f);
        if (got != cases[i].holds || got_default != cases[i].holds_default)
            fprintf(stderr, "\n  when=%s:%s: got %d/%d\n", cases[i].attr, cases[i].value, got, got_default);
        CU_ASSERT_EQUAL(got, cases[i].holds);
        CU_ASSERT_EQUAL(got_default, cases[i].holds_default);
    }
    /* when= together with the other conditions. */
    function_text t = {.domain = "local",
                       .op_type = "Pick",
                       .since = 1,
                       .when_attr = "mode",
                       .when_value = "2",
                       .has_inputs = "X,W",
                       .lacks_inputs = "Z",
                       .rank_input = "X",
                       .rank = 2};
    CU_ASSERT(function_text_conditions_hold(&t, m->graph->nodes[0], f));
    t.lacks_inputs = "W";
    CU_ASSERT(!function_text_conditions_hold(&t, m->graph->nodes[0], f));

    int64_t v = -1;
    CU_ASSERT(function_synth_attr(m->graph->nodes[0], f, "__dim_X_1", &v) && v == 5);
    CU_ASSERT(function_synth_attr(m->graph->nodes[0], f, "__type_X", &v) && v == TSR_FLOAT);
    CU_ASSERT(!function_synth_attr(m->graph->nodes[0], f, "mode", &v));
    ir_model_free(m);
    ir_function_free(f);
}

/* A body reading @__dim_X_1 gets X's size; when shape inference does not
 * know it, the error names the attribute. */
static void test_synth_attr_reference(void) {
    ir_function *f = parse_ok("<domain: \"local\", opset_import: [\"\": 18]>\n"
                              "Width (X) => (Y) { Y = Constant <value_int: int = @__dim_X_1> () }\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    const char *main_text = "<opset_import: [\"\": 18, \"local\": 1]>\n"
                            "main (X) => (Y) { Y = local.Width (X) }";
    ir_model *m = model_from_text(main_text, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    const int64_t dims[2] = {3, 7};
    set_tensor_type(m->graph->inputs[0], TSR_FLOAT, 2, dims);
    expand_ok(m->graph, 0, "w", f);
    const ir_attr *a = attr_of(find_node(m->graph, "w/Constant_0"), "value_int");
    CU_ASSERT(a && a->type == TSR_ATTR_INT && a->i == 7);
    ir_model_free(m);

    m = model_from_text(main_text, NULL); /* X of unknown shape */
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    tsr_status *st = expand_at(m->graph, 0, "w", f);
    CU_ASSERT_PTR_NOT_NULL(st);
    if (st) CU_ASSERT(strstr(tsr_status_message(st), "the body needs '__dim_X_1'") != NULL);
    tsr_status_free(st);
    ir_model_free(m);
    ir_function_free(f);
}

/* The built-in bodies chosen by made-up attributes: FlexAttention's by Q's
 * element type (when=__type_Q:11 or :!11), AffineGrid's by the length of
 * size (when=__dim_size_0:4 or :5); nothing when shape inference does not
 * know. */
static void test_when_selects_builtin(void) {
    static const struct {
        int32_t q_type;
        int64_t cast_to; /* of the body's ScoreS = Cast; 0: no body */
    } flex[] = {{TSR_DOUBLE, TSR_DOUBLE}, {TSR_FLOAT, TSR_FLOAT}, {TSR_FLOAT16, TSR_FLOAT}, {0, 0}};
    for (size_t i = 0; i < sizeof flex / sizeof flex[0]; i++) {
        ir_model *m = model_from_text("<opset_import: [\"\": 26, \"ai.onnx.preview\": 1]>\n"
                                      "main (Q, K, V) => (Y) {\n"
                                      "    Y = ai.onnx.preview.FlexAttention (Q, K, V)\n"
                                      "}\n",
                                      NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        const int64_t dims[4] = {1, 2, 3, 4};
        set_tensor_type(m->graph->inputs[0], flex[i].q_type, 4, dims);
        ir_function *f = NULL;
        bool owned = false;
        tsr_status *st = function_find(m->graph->nodes[0], &f, &owned);
        CU_ASSERT_PTR_NULL(st);
        tsr_status_free(st);
        if (!flex[i].cast_to) {
            CU_ASSERT_PTR_NULL(f);
        } else {
            CU_ASSERT_PTR_NOT_NULL_FATAL(f);
            const ir_value *s = ir_graph_find(f->body, "ScoreS");
            const ir_attr *to = s && s->producer ? ir_node_attr(s->producer, "to") : NULL;
            CU_ASSERT(to && to->i == flex[i].cast_to);
        }
        if (owned) ir_function_free(f);
        ir_model_free(m);
    }
    static const struct {
        int64_t size_len; /* -1: unknown */
        int rank;         /* 0: no body */
    } grid[] = {{4, 2}, {5, 3}, {3, 0}, {-1, 0}};
    for (size_t i = 0; i < sizeof grid / sizeof grid[0]; i++) {
        ir_model *m = model_from_text("<opset_import: [\"\": 20]>\n"
                                      "main (theta, size) => (Y) { Y = AffineGrid (theta, size) }",
                                      NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        set_tensor_type(m->graph->inputs[1], TSR_INT64, 1, &grid[i].size_len);
        ir_function *f = NULL;
        bool owned = false;
        tsr_status *st = function_find(m->graph->nodes[0], &f, &owned);
        CU_ASSERT_PTR_NULL(st);
        tsr_status_free(st);
        if (!grid[i].rank) {
            CU_ASSERT_PTR_NULL(f);
        } else {
            CU_ASSERT_PTR_NOT_NULL_FATAL(f);
            /* Only the 3-D body slices out a depth (D1D). */
            CU_ASSERT_EQUAL(ir_graph_find(f->body, "D1D") != NULL, grid[i].rank == 3);
        }
        if (owned) ir_function_free(f);
        ir_model_free(m);
    }
}

/* --- through the partitioner --------------------------------------------------- */

/* The reference provider, told to decline HardSwish and CastLike: the
 * partitioner expands HardSwish, then the CastLike nodes of its body, and
 * the reference provider runs the rest. */
static void test_partition_expands_declined(void) {
    ir_model *m = model_from_text("<opset_import: [\"\": 22]>\n"
                                  "main (X) => (Y) {\n"
                                  "    Y = HardSwish (X)\n"
                                  "}\n",
                                  NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    free(m->graph->nodes[0]->name);
    m->graph->nodes[0]->name = strdup("hs");
    char path[1024];
    snprintf(path, sizeof path, "%s/libtessera_provider_reference.so", env_or("TESSERA_BUILD_LIB", "build/lib"));
    tsr_plugin *plugin = NULL;
    provider_inst *inst = NULL;
    tsr_status *st = plugin_load(path, host_api_table(), &plugin);
    const char *keys[] = {"exclude_ops"}, *values[] = {"HardSwish,CastLike"};
    tsr_provider_config cfg = {sizeof cfg, 1, keys, values, 0, TSR_LOG_WARNING, 0};
    if (!st) st = provider_create(plugin, &cfg, &inst);
    if (!st) st = ir_infer_shapes(m->graph);
    if (st) fprintf(stderr, "\n  %s\n", tsr_status_message(st));
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    if (!st) {
        partition pt;
        st = partition_graph(m->graph, &inst, 1, NULL, 0, &pt);
        if (st) fprintf(stderr, "\n  %s\n", tsr_status_message(st));
        CU_ASSERT_PTR_NULL(st);
        tsr_status_free(st);
        if (!st) {
            CU_ASSERT(pt.n_expanded >= 2);
            CU_ASSERT_STRING_EQUAL(pt.expanded[0].op, "HardSwish");
            CU_ASSERT_STRING_EQUAL(pt.expanded[0].node, "hs");
            CU_ASSERT_STRING_EQUAL(pt.expanded[1].op, "CastLike");
            CU_ASSERT_STRING_EQUAL(pt.expanded[1].origin, "hs");
            CU_ASSERT_EQUAL(pt.n_pieces, m->graph->n_nodes);
            for (size_t i = 0; i < m->graph->n_nodes; i++) {
                CU_ASSERT_STRING_NOT_EQUAL(m->graph->nodes[i]->op_type, "CastLike");
                CU_ASSERT_STRING_EQUAL(m->graph->nodes[i]->origin, "hs");
            }
            char *text = partition_text(&pt, m->graph, &inst, 1, NULL);
            CU_ASSERT(text && strstr(text, "HardSwish 'hs' expanded: ") != NULL);
            free(text);
            partition_free(&pt);
        }
    }
    if (inst) provider_destroy(inst);
    if (plugin) plugin_unload(plugin);
    ir_model_free(m);
}

void unit_register(void) {
    CU_pSuite s = CU_add_suite("function expansion", suite_init, NULL);
    CU_add_test(s, "parser: a function using every construct", test_parse_good);
    CU_add_test(s, "parser: malformed text, errors with line and column", test_parse_errors);
    CU_add_test(s, "parser: every built-in body", test_builtin_bodies_parse);
    CU_add_test(s, "expansion: names, origin, order", test_expand_builtin);
    CU_add_test(s, "expansion: attribute references, nested functions", test_attr_refs_and_nesting);
    CU_add_test(s, "expansion: arity error", test_expand_arity_error);
    CU_add_test(s, "expansion: a function calling itself is refused", test_recursive_function);
    CU_add_test(s, "parser: graph attributes reading enclosing values", test_parse_graph_attr);
    CU_add_test(s, "parser: malformed graph attributes and calls", test_parse_graph_attr_errors);
    CU_add_test(s, "expansion: a Loop body reading the function's values, run", test_expand_loop_reading_outer);
    CU_add_test(s, "expansion: @attr calls of the caller's graph, run", test_call_graph_attr);
    CU_add_test(s, "expansion: a graph attribute passed by reference, run", test_graph_attr_by_reference);
    CU_add_test(s, "when=: int, string, __type_ and __dim_ conditions, !VALUE", test_when_conditions);
    CU_add_test(s, "expansion: @__dim_ references", test_synth_attr_reference);
    CU_add_test(s, "when=: built-in bodies chosen by __type_ and __dim_", test_when_selects_builtin);
    CU_add_test(s, "partition_graph expands what the provider declines", test_partition_expands_declined);
}
