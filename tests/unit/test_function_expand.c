/* Function-op expansion: the ONNX-text parser (good text and malformed text
 * with errors that say where), splicing a body into a graph (names, origin,
 * order), attribute references, nested functions, and partition_graph
 * expanding an op the reference provider was told to decline. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "function_expand.h"
#include "onnx_text.h"
#include "partition.h"
#include "plugin.h"
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
    ir_function *f =
        parse_ok("# a comment line\n"
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
        tsr_status *st =
            onnx_text_parse_function(function_texts[i].text, function_texts[i].file, &f);
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
    for (size_t i = 0; i < g->n_nodes; i++)
        CU_ASSERT_EQUAL(g->nodes[i]->index, i);
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

static const ir_attr *attr_of(const ir_node *n, const char *name) {
    return n ? ir_node_attr(n, name) : NULL;
}

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

/* --- through the partitioner --------------------------------------------------- */

static const char *env_or(const char *name, const char *dflt) {
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

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
    snprintf(path, sizeof path, "%s/libtessera_provider_reference.so",
             env_or("TESSERA_BUILD_LIB", "build/lib"));
    tsr_plugin *plugin = NULL;
    provider_inst *inst = NULL;
    tsr_status *st = plugin_load(path, &plugin);
    const char *keys[] = {"exclude_ops"}, *values[] = {"HardSwish,CastLike"};
    tsr_provider_config cfg = {sizeof cfg, 1, keys, values, 0, TSR_LOG_WARNING};
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
            char *text = partition_text(&pt, m->graph, &inst, 1);
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
    CU_pSuite s = CU_add_suite("function expansion", NULL, NULL);
    CU_add_test(s, "parser: a function using every construct", test_parse_good);
    CU_add_test(s, "parser: malformed text, errors with line and column", test_parse_errors);
    CU_add_test(s, "parser: every built-in body", test_builtin_bodies_parse);
    CU_add_test(s, "expansion: names, origin, order", test_expand_builtin);
    CU_add_test(s, "expansion: attribute references, nested functions", test_attr_refs_and_nesting);
    CU_add_test(s, "expansion: arity error", test_expand_arity_error);
    CU_add_test(s, "expansion: a function calling itself is refused", test_recursive_function);
    CU_add_test(s, "partition_graph expands what the provider declines",
                test_partition_expands_declined);
}
