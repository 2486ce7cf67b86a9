/* Nodes of different opset versions in one model (a chain of models at
 * different opsets): the table of what changed between versions
 * (core/opset_compat.c), ir_model_settle_opsets rewriting older nodes into
 * the merged model's version (core/opset_convert.c, opset_rewrite.c) and
 * refusing by name what it cannot, and the opset_import a written piece
 * gets (core/onnx_opsets.c).
 *
 * Each rewrite is checked by running: the model as written at its own
 * opset, then settled at opset 18, both on the reference provider with the
 * same input; every output must agree. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_view.h"
#include "onnx_text.h"
#include "onnx_writer.h"
#include "opset_compat.h"
#include "opset_convert.h"
#include "status.h"
#include "tessera/tessera.h"

/* The body of `text` as a model's main graph (inputs float, shape unknown). */
static ir_model *model_from_text(const char *text) {
    ir_function *f = NULL;
    tsr_status *st = onnx_text_parse_function(text, "test", &f);
    if (st) fprintf(stderr, "\n  %s\n", tsr_status_message(st));
    CU_ASSERT_PTR_NULL_FATAL(st);
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
    m->ir_version = 8;
    for (size_t i = 0; i < m->graph->n_inputs; i++) {
        ir_value *v = m->graph->inputs[i];
        v->type.kind = IR_TYPE_TENSOR;
        v->type.elem_type = TSR_FLOAT;
        v->type.rank = -1;
    }
    for (size_t i = 0; i < m->graph->n_nodes; i++) { /* names for messages: n0, n1, ... */
        char name[32];
        snprintf(name, sizeof name, "n%zu", i);
        free(m->graph->nodes[i]->name);
        m->graph->nodes[i]->name = strdup(name);
    }
    return m;
}

static void set_import(ir_model *m, const char *domain, int64_t version) {
    for (size_t i = 0; i < m->n_opsets; i++)
        if (strcmp(m->opsets[i].domain, domain) == 0) m->opsets[i].version = version;
}

static ir_node *node_named(ir_graph *g, const char *name) {
    for (size_t i = 0; i < g->n_nodes; i++)
        if (strcmp(g->nodes[i]->name, name) == 0) return g->nodes[i];
    return NULL;
}

static void expect_error(tsr_status *st, const char *const *needles) {
    CU_ASSERT_PTR_NOT_NULL(st);
    const char *msg = st ? tsr_status_message(st) : "";
    for (size_t i = 0; needles[i]; i++)
        if (!strstr(msg, needles[i])) {
            fprintf(stderr, "\n  message lacks '%s': %s\n", needles[i], msg);
            CU_FAIL("message");
        }
    tsr_status_free(st);
}

/* --- the table ---------------------------------------------------------------- */

static void test_table(void) {
    CU_ASSERT(opset_compat_rows_sorted());
    CU_ASSERT(opset_has_version("", "ReduceMean", 18));
    CU_ASSERT(opset_has_version("", "Softmax", 13));
    CU_ASSERT(!opset_has_version("", "Softmax", 12));
    CU_ASSERT(opset_has_version("ai.onnx.ml", "LabelEncoder", 4));
}

static void test_next_change(void) {
    ir_model *m = model_from_text("<opset_import: [\"\": 13, \"com.x\": 1]>\n"
                                  "main (X) => (Y, Z, W, V) {\n"
                                  "    A = Relu (X)\n"
                                  "    Y = ReduceMean <axes: ints = [1]> (A)\n"
                                  "    Z = Softmax <axis: int = -1> (A)\n"
                                  "    W = ReduceMean (A)\n"
                                  "    V = com.x.Foo (A)\n"
                                  "}\n");
    ir_graph *g = m->graph;
    opset_change c;
    bool found = true;
    /* Relu-14 only added types */
    CU_ASSERT_PTR_NULL(opset_next_change(m, g->nodes[0], 13, 18, &c, &found));
    CU_ASSERT(!found);
    /* ReduceMean-18 took axes as an input */
    CU_ASSERT_PTR_NULL(opset_next_change(m, g->nodes[1], 13, 18, &c, &found));
    CU_ASSERT(found && c.since == 18 && c.kind == OPSET_REWRITE);
    /* Softmax on axis -1 means the same before and after 13 */
    CU_ASSERT_PTR_NULL(opset_next_change(m, g->nodes[2], 11, 18, &c, &found));
    CU_ASSERT(!found);
    /* ReduceMean without axes reduces all axes in both forms */
    CU_ASSERT_PTR_NULL(opset_next_change(m, g->nodes[3], 13, 18, &c, &found));
    CU_ASSERT(!found);
    const char *domain[] = {"domain 'com.x'", NULL};
    expect_error(opset_next_change(m, g->nodes[4], 1, 2, &c, &found), domain);
    const char *newer[] = {"ends at opset 28", NULL};
    expect_error(opset_next_change(m, g->nodes[0], 13, 40, &c, &found), newer);
    ir_model_free(m);
}

/* --- rewrites, checked by running ---------------------------------------------- */

static tsr_session *session_of(ir_model *m) {
    void *bytes = NULL;
    size_t size = 0;
    tsr_session_options *o = NULL;
    tsr_session *s = NULL;
    tsr_status *st = onnx_write_model(m, &bytes, &size);
    if (!st) st = tsr_session_options_create(&o);
    if (!st) st = tsr_session_options_add_provider(o, "reference");
    if (!st) st = tsr_session_create_from_buffer(o, bytes, size, NULL, &s);
    if (st) fprintf(stderr, "\n  session: %s\n", tsr_status_message(st));
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    tsr_session_options_free(o);
    free(bytes);
    return s;
}

#define MAX_OUT 4

static size_t run_all(tsr_session *s, const int64_t *dims, int32_t rank, tsr_value **outs) {
    float x[64];
    size_t count = 1;
    for (int32_t d = 0; d < rank; d++) count *= (size_t)dims[d];
    for (size_t i = 0; i < count && i < 64; i++) x[i] = (float)((int)((i * 37) % 23) - 11) / 8.0f;
    tsr_tensor in = {sizeof in, TSR_FLOAT, rank, dims, x, count * sizeof(float), TSR_MEMORY_HOST, 0};
    const tsr_tensor *ins[1] = {&in};
    const char *names[1] = {"X"};
    size_t n = tsr_session_output_count(s);
    if (n > MAX_OUT) n = MAX_OUT;
    tsr_status *st = tsr_session_run(s, 1, names, ins, n, NULL, outs);
    if (st) fprintf(stderr, "\n  run: %s\n", tsr_status_message(st));
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    return st ? 0 : n;
}

static void expect_same(tsr_value *a, tsr_value *b) {
    tsr_tensor ta = {.struct_size = sizeof ta}, tb = {.struct_size = sizeof tb};
    CU_ASSERT_PTR_NULL_FATAL(tsr_value_tensor(a, &ta));
    CU_ASSERT_PTR_NULL_FATAL(tsr_value_tensor(b, &tb));
    CU_ASSERT_EQUAL(ta.elem_type, tb.elem_type);
    CU_ASSERT_EQUAL_FATAL(ta.rank, tb.rank);
    for (int32_t d = 0; d < ta.rank; d++) CU_ASSERT_EQUAL(ta.dims[d], tb.dims[d]);
    CU_ASSERT_EQUAL_FATAL(ta.nbytes, tb.nbytes);
    if (ta.elem_type != TSR_FLOAT) {
        CU_ASSERT(memcmp(ta.data, tb.data, ta.nbytes) == 0);
        return;
    }
    for (size_t i = 0; i < ta.nbytes / sizeof(float); i++)
        CU_ASSERT_DOUBLE_EQUAL(((const float *)ta.data)[i], ((const float *)tb.data)[i], 1e-6);
}

static bool all_at(const ir_graph *g, int64_t version) {
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i]->opset != version) return false;
    return true;
}

/* `text` run as written, then settled at opset 18: the same outputs. */
static void check_rewrite(const char *text, const int64_t *dims, int32_t rank) {
    ir_model *m = model_from_text(text);
    tsr_session *before = session_of(m);
    set_import(m, "", 18);
    tsr_status *st = ir_model_settle_opsets(m);
    if (st) fprintf(stderr, "\n  settle: %s\n", tsr_status_message(st));
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    CU_ASSERT(all_at(m->graph, 18));
    tsr_session *after = session_of(m);
    ir_model_free(m);
    tsr_value *a[MAX_OUT] = {0}, *b[MAX_OUT] = {0};
    size_t na = before ? run_all(before, dims, rank, a) : 0;
    size_t nb = after ? run_all(after, dims, rank, b) : 0;
    CU_ASSERT_EQUAL(na, nb);
    for (size_t i = 0; i < na && i < nb; i++) expect_same(a[i], b[i]);
    for (size_t i = 0; i < MAX_OUT; i++) tsr_value_free(a[i]), tsr_value_free(b[i]);
    tsr_session_free(before);
    tsr_session_free(after);
}

static const int64_t DIMS234[3] = {2, 3, 4};

static void test_rewrite_softmax(void) {
    /* axis 1 of a rank-3 input: rows of 12 before opset 13 */
    check_rewrite("<opset_import: [\"\": 11]>\n"
                  "main (X) => (Y, Z, W) {\n"
                  "    Y = Softmax <axis: int = 1> (X)\n"
                  "    Z = LogSoftmax (X)\n"
                  "    W = Hardmax <axis: int = 2> (X)\n"
                  "}\n",
                  DIMS234, 3);
}

static void test_rewrite_axes(void) {
    check_rewrite("<opset_import: [\"\": 11]>\n"
                  "main (X) => (Y, Z, A, B) {\n"
                  "    Y = ReduceSum <axes: ints = [1], keepdims: int = 0> (X)\n"
                  "    U = Unsqueeze <axes: ints = [0]> (X)\n"
                  "    Z = Squeeze <axes: ints = [0]> (U)\n"
                  "    A, B = Split <axis: int = 2, split: ints = [1, 3]> (X)\n"
                  "}\n",
                  DIMS234, 3);
    check_rewrite("<opset_import: [\"\": 13]>\n"
                  "main (X) => (Y, Z) {\n"
                  "    Y = ReduceMean <axes: ints = [2]> (X)\n"
                  "    Z = ReduceL2 <axes: ints = [0, 2], keepdims: int = 0> (X)\n"
                  "}\n",
                  DIMS234, 3);
}

static void test_rewrite_attrs_to_inputs(void) {
    check_rewrite("<opset_import: [\"\": 10]>\n"
                  "main (X) => (Y, Z, C, P) {\n"
                  "    Y = Clip <min: float = -0.5, max: float = 0.5> (X)\n"
                  "    Z = Pad <pads: ints = [0, 0, 1, 0, 1, 2], value: float = 1.5> (X)\n"
                  "    R = Relu (X)\n" /* no declared type: the bounds go through CastLike */
                  "    C = Clip <max: float = 0.25> (R)\n"
                  "    P = Pad <pads: ints = [1, 0, 0, 0, 0, 0], value: float = -2> (R)\n"
                  "}\n",
                  DIMS234, 3);
    check_rewrite("<opset_import: [\"\": 9]>\n"
                  "main (X) => (Y, V, I) {\n"
                  "    Y = Slice <starts: ints = [0, 1], ends: ints = [2, 3], axes: ints = [1, 2]> (X)\n"
                  "    V, I = TopK <k: int = 2> (X)\n"
                  "}\n",
                  DIMS234, 3);
    check_rewrite("<opset_import: [\"\": 11]>\n"
                  "main (X) => (Y) {\n"
                  "    Y = Dropout <ratio: float = 0.3> (X)\n"
                  "}\n",
                  DIMS234, 3);
}

/* --- refusals ------------------------------------------------------------------- */

static void test_refuse(void) {
    ir_model *m = model_from_text("<opset_import: [\"\": 10]>\n"
                                  "main (X, S) => (Y) {\n"
                                  "    A = Relu (X)\n"
                                  "    Y = Resize <mode: string = \"nearest\"> (A, S)\n"
                                  "}\n");
    set_import(m, "", 18);
    const char *resize[] = {"node 'n1' (Resize, opset 10)", "opset 18", "at opset 11", "tessera run", NULL};
    expect_error(ir_model_settle_opsets(m), resize);
    ir_model_free(m);

    m = model_from_text("<opset_import: [\"\": 18, \"com.x\": 1]>\n"
                        "main (X) => (Y) {\n"
                        "    Y = com.x.Foo (X)\n"
                        "}\n");
    set_import(m, "com.x", 2);
    const char *domain[] = {"node 'n0' (Foo, opset 1)", "domain 'com.x'", NULL};
    expect_error(ir_model_settle_opsets(m), domain);
    ir_model_free(m);
}

/* --- pieces written as ONNX ------------------------------------------------------- */

static int64_t written_opset(const void *bytes, size_t size) {
    ir_model *m = NULL;
    tsr_status *st = ir_model_load_buffer(bytes, size, NULL, &m);
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    int64_t v = m ? ir_model_opset(m, "") : -1;
    ir_model_free(m);
    return v;
}

static void test_piece_opsets(void) {
    /* as after a chain: Relu from a stage at 18, ReduceMean from one at 13 */
    ir_model *m = model_from_text("<opset_import: [\"\": 18]>\n"
                                  "main (X) => (Y) {\n"
                                  "    A = Relu (X)\n"
                                  "    Y = ReduceMean <axes: ints = [1]> (A)\n"
                                  "}\n");
    ir_node *rm = node_named(m->graph, "n1");
    rm->opset = 13;
    struct tsr_graph *v = NULL;
    void *bytes = NULL;
    size_t size = 0;
    /* a piece of one stage is written at that stage's opset */
    CU_ASSERT_PTR_NULL_FATAL(graph_view_nodes(m->graph, &rm, 1, &v));
    CU_ASSERT_PTR_NULL(onnx_write_view(v, &bytes, &size));
    graph_view_free(v);
    CU_ASSERT_EQUAL(written_opset(bytes, size), 13);
    free(bytes);
    bytes = NULL;
    /* both: one file at 18 cannot hold ReduceMean-13's axes attribute */
    CU_ASSERT_PTR_NULL_FATAL(graph_view_whole(m->graph, &v));
    const char *both[] = {"node 'n1' (ReduceMean, opset 13)", "opset 18", NULL};
    expect_error(onnx_write_view(v, &bytes, &size), both);
    graph_view_free(v);
    /* a Relu-13 beside nodes of 18 means the same there (Relu-14 added types) */
    rm->opset = 18;
    node_named(m->graph, "n0")->opset = 13;
    CU_ASSERT_PTR_NULL_FATAL(graph_view_whole(m->graph, &v));
    CU_ASSERT_PTR_NULL(onnx_write_view(v, &bytes, &size));
    graph_view_free(v);
    CU_ASSERT_EQUAL(written_opset(bytes, size), 18);
    free(bytes);
    ir_model_free(m);
}

static int suite_init(void) {
    const char *lib = getenv("TESSERA_BUILD_LIB");
    return setenv("TESSERA_PROVIDER_PATH", lib && *lib ? lib : "build/lib", 1) == 0 ? 0 : 1;
}

void unit_register(void) {
    CU_pSuite s = CU_add_suite("opset", suite_init, NULL);
    CU_add_test(s, "table", test_table);
    CU_add_test(s, "next_change", test_next_change);
    CU_add_test(s, "rewrite_softmax", test_rewrite_softmax);
    CU_add_test(s, "rewrite_axes", test_rewrite_axes);
    CU_add_test(s, "rewrite_attrs_to_inputs", test_rewrite_attrs_to_inputs);
    CU_add_test(s, "refuse", test_refuse);
    CU_add_test(s, "piece_opsets", test_piece_opsets);
}
