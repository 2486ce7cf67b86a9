/* The graph IR: name lookup, outer-scope placeholders, ordering and the
 * checks ir_graph_check makes on graphs built by hand. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "status.h"
#include "tessera/tessera.h"

/* Appends op(in0, in1) -> out to g; NULL input names are omitted inputs. */
static ir_node *mk(ir_graph *g, const char *op, const char *in0, const char *in1, const char *out) {
    ir_node *n;
    CU_ASSERT_PTR_NULL_FATAL(ir_graph_add_node(g, &n));
    n->name = strdup(out);
    n->op_type = strdup(op);
    n->domain = strdup("");
    const char *ins[2] = {in0, in1};
    n->n_inputs = 2;
    n->inputs = calloc(2, sizeof *n->inputs);
    for (int i = 0; i < 2; i++) {
        if (!ins[i]) continue;
        ir_value *v = ir_graph_resolve(g, ins[i]);
        if (!v) CU_ASSERT_PTR_NULL_FATAL(ir_graph_value(g, ins[i], &v));
        n->inputs[i] = v;
    }
    n->n_outputs = 1;
    n->outputs = calloc(1, sizeof *n->outputs);
    ir_value *o;
    CU_ASSERT_PTR_NULL_FATAL(ir_graph_value(g, out, &o));
    if (!o->producer) o->producer = n;
    n->outputs[0] = o;
    return n;
}

static ir_value *input(ir_graph *g, const char *name) {
    ir_value *v;
    CU_ASSERT_PTR_NULL_FATAL(ir_graph_value(g, name, &v));
    v->is_graph_input = true;
    g->inputs = realloc(g->inputs, (g->n_inputs + 1) * sizeof *g->inputs);
    g->inputs[g->n_inputs++] = v;
    return v;
}

static void expect_check_error(ir_graph *g, const char *want) {
    tsr_status *st = ir_graph_check(g);
    CU_ASSERT_PTR_NOT_NULL_FATAL(st);
    if (!strstr(tsr_status_message(st), want))
        fprintf(stderr, "\nwanted \"%s\" in \"%s\"\n", want, tsr_status_message(st));
    CU_ASSERT_PTR_NOT_NULL(strstr(tsr_status_message(st), want));
    tsr_status_free(st);
}

static void test_lookup_many(void) {
    ir_model *m = ir_model_new();
    ir_graph *g = ir_graph_new(m, NULL, "g");
    m->graph = g;
    char name[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "v%d", i);
        ir_value *v;
        CU_ASSERT_PTR_NULL_FATAL(ir_graph_value(g, name, &v));
        CU_ASSERT_EQUAL(v->index, (size_t)i);
        CU_ASSERT_EQUAL(v->type.rank, -1);
    }
    CU_ASSERT_EQUAL(g->n_values, 5000);
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "v%d", i);
        ir_value *v = ir_graph_find(g, name), *again;
        CU_ASSERT_PTR_NOT_NULL_FATAL(v);
        CU_ASSERT_STRING_EQUAL(v->name, name);
        CU_ASSERT_PTR_EQUAL(g->values[i], v);
        CU_ASSERT_PTR_NULL(ir_graph_value(g, name, &again));
        CU_ASSERT_PTR_EQUAL(again, v);
    }
    CU_ASSERT_EQUAL(g->n_values, 5000);
    CU_ASSERT_PTR_NULL(ir_graph_find(g, "v5000"));
    CU_ASSERT_PTR_NULL(ir_graph_find(g, ""));
    ir_model_free(m);
}

static void test_resolve_outer(void) {
    ir_model *m = ir_model_new();
    ir_graph *p = ir_graph_new(m, NULL, "main");
    m->graph = p;
    ir_value *a = input(p, "a");
    a->type.kind = IR_TYPE_TENSOR;
    a->type.elem_type = TSR_FLOAT;
    ir_graph *c = ir_graph_new(m, p, "child"), *gc = ir_graph_new(m, c, "grandchild");
    CU_ASSERT_EQUAL(gc->depth, 2);
    ir_value *ga = ir_graph_resolve(gc, "a");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ga);
    CU_ASSERT(ga->is_outer);
    CU_ASSERT_EQUAL(ga->type.elem_type, TSR_FLOAT);
    /* one placeholder per level, each bound to the level above */
    ir_value *ca = ir_graph_find(c, "a");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ca);
    CU_ASSERT(ca->is_outer);
    CU_ASSERT_PTR_EQUAL(ga->outer, ca);
    CU_ASSERT_PTR_EQUAL(ca->outer, a);
    CU_ASSERT_PTR_EQUAL(ir_graph_resolve(gc, "a"), ga);
    CU_ASSERT_EQUAL(gc->n_values, 1);
    /* absent names create nothing */
    CU_ASSERT_PTR_NULL(ir_graph_resolve(gc, "zz"));
    CU_ASSERT_EQUAL(gc->n_values, 1);
    CU_ASSERT_EQUAL(c->n_values, 1);
    /* local names shadow outer ones */
    ir_value *local;
    CU_ASSERT_PTR_NULL(ir_graph_value(c, "b", &local));
    CU_ASSERT_PTR_NULL(ir_graph_value(p, "b", &local));
    CU_ASSERT_FALSE(ir_graph_resolve(c, "b")->is_outer);
    ir_graph_free(gc);
    ir_graph_free(c);
    ir_model_free(m);
}

static void test_sort_stable_and_reorders(void) {
    ir_graph *g = ir_graph_new(NULL, NULL, "g");
    input(g, "x");
    /* already sorted, with independent nodes: order kept */
    ir_node *n0 = mk(g, "Neg", "x", NULL, "a");
    ir_node *n1 = mk(g, "Abs", "x", NULL, "b");
    ir_node *n2 = mk(g, "Add", "a", "b", "c");
    ir_node *n3 = mk(g, "Neg", "x", NULL, "d");
    CU_ASSERT_PTR_NULL(ir_graph_check(g));
    CU_ASSERT(g->nodes[0] == n0 && g->nodes[1] == n1 && g->nodes[2] == n2 && g->nodes[3] == n3);
    ir_graph_free(g);

    /* reversed chain: sorted */
    g = ir_graph_new(NULL, NULL, "g");
    input(g, "x");
    ir_node *r2 = mk(g, "Neg", "q", NULL, "r");
    ir_node *r1 = mk(g, "Neg", "p", NULL, "q");
    ir_node *r0 = mk(g, "Neg", "x", NULL, "p");
    ir_value *out = ir_graph_find(g, "r");
    out->is_graph_output = true;
    g->outputs = malloc(sizeof *g->outputs);
    g->outputs[g->n_outputs++] = out;
    CU_ASSERT_PTR_NULL(ir_graph_check(g));
    CU_ASSERT(g->nodes[0] == r0 && g->nodes[1] == r1 && g->nodes[2] == r2);
    for (size_t i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(g->nodes[i]->index, i);
        CU_ASSERT_PTR_EQUAL(g->nodes[i]->graph, g);
    }
    ir_graph_free(g);
}

static void test_check_errors(void) {
    ir_graph *g = ir_graph_new(NULL, NULL, "g");
    input(g, "x");
    mk(g, "Neg", "b", NULL, "a");
    mk(g, "Neg", "a", NULL, "b");
    expect_check_error(g, "is part of a cycle");
    ir_graph_free(g);

    g = ir_graph_new(NULL, NULL, "g");
    mk(g, "Neg", "a", NULL, "a"); /* reads itself */
    expect_check_error(g, "graph.node[0] 'a' is part of a cycle");
    ir_graph_free(g);

    g = ir_graph_new(NULL, NULL, "g");
    input(g, "x");
    mk(g, "Add", "x", "ghost", "y");
    expect_check_error(g, "graph.node[0] 'y': input 'ghost' is not defined");
    ir_graph_free(g);

    g = ir_graph_new(NULL, NULL, "g");
    input(g, "x");
    mk(g, "Neg", "x", NULL, "y");
    ir_node *second = mk(g, "Abs", "x", NULL, "y");
    free(second->name);
    second->name = strdup("dup");
    expect_check_error(g, "graph.node[1] 'dup': output 'y' is also produced by graph.node[0] 'y'");
    ir_graph_free(g);

    g = ir_graph_new(NULL, NULL, "g");
    input(g, "x");
    ir_value *ghost;
    CU_ASSERT_PTR_NULL(ir_graph_value(g, "nothing", &ghost));
    g->outputs = malloc(sizeof *g->outputs);
    g->outputs[g->n_outputs++] = ghost;
    expect_check_error(g, "graph.output[0] 'nothing' is not defined");
    ir_graph_free(g);

    /* A domain without an opset import, in a model. */
    ir_model *m = ir_model_new();
    m->graph = g = ir_graph_new(m, NULL, "g");
    m->opsets = calloc(1, sizeof *m->opsets);
    m->opsets[0].domain = strdup("");
    m->opsets[0].version = 13;
    m->n_opsets = 1;
    input(g, "x");
    ir_node *n = mk(g, "Custom", "x", NULL, "y");
    free(n->domain);
    n->domain = strdup("com.acme");
    expect_check_error(g, "graph.node[0] 'y': domain 'com.acme' has no opset import");
    free(n->domain);
    n->domain = strdup("ai.onnx");
    CU_ASSERT_PTR_NULL(ir_graph_check(g));
    CU_ASSERT_EQUAL(ir_model_opset(m, "ai.onnx"), 13);
    CU_ASSERT_EQUAL(ir_model_opset(m, "com.acme"), 0);
    ir_model_free(m);
}

/* A node whose subgraph reads an outer value depends on that value's
 * producer even though it is not among the node's inputs. */
static void test_implicit_subgraph_dependency(void) {
    ir_graph *g = ir_graph_new(NULL, NULL, "g");
    input(g, "x");
    input(g, "cond");
    ir_node *iff = mk(g, "If", "cond", NULL, "z");
    ir_node *prod = mk(g, "Neg", "x", NULL, "hidden");
    iff->n_attrs = 1;
    iff->attrs = calloc(1, sizeof *iff->attrs);
    iff->attrs[0].name = strdup("then_branch");
    iff->attrs[0].type = TSR_ATTR_GRAPH;
    ir_graph *body = ir_graph_new(NULL, g, "then");
    iff->attrs[0].g = body;
    mk(body, "Identity", "hidden", NULL, "out");
    CU_ASSERT(ir_graph_find(body, "hidden")->is_outer);
    CU_ASSERT_PTR_NULL(ir_graph_check(g));
    CU_ASSERT(g->nodes[0] == prod && g->nodes[1] == iff);
    CU_ASSERT_PTR_EQUAL(body->nodes[0]->graph, body);

    /* and an undefined name inside the body is reported through the node */
    mk(body, "Identity", "nowhere", NULL, "out2");
    expect_check_error(g,
                       "graph.node[1] 'z' attribute 'then_branch': graph.node[1] 'out2': input "
                       "'nowhere' is not defined");
    ir_graph_free(g);
}

static void test_types_and_attrs(void) {
    ir_type t = {.kind = IR_TYPE_SEQUENCE, .rank = -1};
    t.elem = calloc(1, sizeof *t.elem);
    t.elem->kind = IR_TYPE_TENSOR;
    t.elem->elem_type = TSR_INT64;
    t.elem->rank = 2;
    t.elem->dims = calloc(2, sizeof *t.elem->dims);
    t.elem->dims[0].value = TSR_DIM_UNKNOWN;
    t.elem->dims[0].symbol = strdup("batch");
    t.elem->dims[1].value = 7;
    ir_type copy;
    CU_ASSERT_PTR_NULL_FATAL(ir_type_copy(&copy, &t));
    ir_type_clear(&t);
    CU_ASSERT_EQUAL(t.rank, -1);
    CU_ASSERT_PTR_NULL(t.elem);
    CU_ASSERT_EQUAL(copy.kind, IR_TYPE_SEQUENCE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(copy.elem);
    CU_ASSERT_STRING_EQUAL(copy.elem->dims[0].symbol, "batch");
    CU_ASSERT_EQUAL(copy.elem->dims[1].value, 7);
    ir_type_clear(&copy);

    ir_node n = {0};
    ir_attr attrs[2] = {{.name = "alpha", .type = TSR_ATTR_FLOAT, .f = 0.5f},
                        {.name = "axes", .type = TSR_ATTR_INTS, .count = 2}};
    n.attrs = attrs;
    n.n_attrs = 2;
    CU_ASSERT_PTR_EQUAL(ir_node_attr(&n, "axes"), &attrs[1]);
    CU_ASSERT_EQUAL(ir_node_attr(&n, "alpha")->f, 0.5f);
    CU_ASSERT_PTR_NULL(ir_node_attr(&n, "beta"));

    ir_attr a = {0};
    a.name = strdup("s");
    a.strings = calloc(2, sizeof *a.strings);
    a.string_lens = calloc(2, sizeof *a.string_lens);
    a.strings[0] = strdup("one");
    a.count = 2;
    ir_attr_clear(&a); /* frees every member, tolerates the NULL entry */
    CU_ASSERT_PTR_NULL(a.name);
    CU_ASSERT_EQUAL(a.count, 0);
}

void unit_register(void) {
    CU_pSuite s = CU_add_suite("ir", NULL, NULL);
    CU_add_test(s, "lookup of many names", test_lookup_many);
    CU_add_test(s, "outer-scope placeholders", test_resolve_outer);
    CU_add_test(s, "stable topological sort", test_sort_stable_and_reorders);
    CU_add_test(s, "check errors", test_check_errors);
    CU_add_test(s, "implicit subgraph dependency", test_implicit_subgraph_dependency);
    CU_add_test(s, "types and attributes", test_types_and_attrs);
}
