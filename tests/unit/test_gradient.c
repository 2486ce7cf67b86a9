/* The Gradient rewrite (core/gradient.c): the rewritten graph's shape (no
 * Gradient left, names and origins, order), and its numbers. Sessions do not
 * call gradient_expand yet, so each numeric test rewrites a loaded model,
 * writes it back to ONNX bytes and opens a session on those.
 *
 * The models are made by tests/data/make_gradient_models.py. Gradients are of
 * the sum of y's elements (the backward graph is seeded with ones):
 *
 * gradient_mlp (opset 12): Y = Relu(X W + B), B[2] broadcast over rows.
 *     X = [[1, 2], [3, -4]], W = [[1, -1], [0.5, 2]], B = [0.5, -1]
 *     X W = [[2, 3], [1, -11]]; Z = X W + B = [[2.5, 2], [1.5, -12]]
 *     Y = [[2.5, 2], [1.5, 0]]; dY/dZ = mask Z > 0 = [[1, 1], [1, 0]] = M
 *     dW = X^T M = [[1, 3], [2, -4]] M = [[4, 1], [-2, 2]]
 *     dB = column sums of M = [2, 1]; dU = [0, 0, 0] (Y ignores U)
 *
 * gradient_sub_div (opset 13): y = ((a - b) / b) * a = a^2 / b - a, b[3]
 * broadcast over a[2,3]:
 *     a = [[1, 2, 3], [4, 5, 6]], b = [1, 2, 4]
 *     y  = [[0, 0, -0.75], [12, 7.5, 3]]
 *     da = 2a/b - 1 = [[1, 1, 0.5], [7, 4, 2]]
 *     db = -sum over rows of a^2/b^2 = [-17, -29/4, -45/16]
 *
 * gradient_dynamic (opset 13): y = a * s, a[N,3], s[K,3]:
 *     a = [[1, 2, 3], [4, 5, 6]]
 *     s = [[10, 20, 30]] (K = 1): da = s on both rows, ds = [[5, 7, 9]]
 *     s = [[1, 1, 1], [2, 2, 2]] (K = 2): da = s, ds = a
 *
 * gradient_unary (opset 13): d op(x)/dx for x = [-2, -0.5, 0.5, 3], written
 * as closed forms in test_unary below.
 *
 * gradient_second_order: d1 = d(x^3)/dx = 3x^2, d2 = d(d1)/dx = 6x.
 * gradient_in_if: Gradient nodes inside both branches of an If.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gradient.h"
#include "graph_view.h"
#include "ir.h"
#include "onnx_writer.h"
#include "tessera/tessera.h"

static const char *data_path(const char *name) {
    static char buf[1024];
    const char *dir = getenv("TESSERA_TEST_DATA");
    snprintf(buf, sizeof buf, "%s/%s", dir && *dir ? dir : "tests/data", name);
    return buf;
}

/* A conformance case directory, or NULL when the corpus is absent. */
static const char *case_dir(const char *name) {
    static char buf[1024];
    const char *dir = getenv("TESSERA_ONNX_TESTS");
    if (!dir || !*dir) return NULL;
    snprintf(buf, sizeof buf, "%s/simple/%s", dir, name);
    char model[1100];
    snprintf(model, sizeof model, "%s/model.onnx", buf);
    FILE *f = fopen(model, "rb");
    if (!f) return NULL;
    fclose(f);
    return buf;
}

static int suite_init(void) {
    const char *lib = getenv("TESSERA_BUILD_LIB");
    return setenv("TESSERA_PROVIDER_PATH", lib && *lib ? lib : "build/lib", 1) == 0 ? 0 : 1;
}

static ir_model *load(const char *path) {
    ir_model *m = NULL;
    tsr_status *st = ir_model_load_file(path, &m);
    if (st) fprintf(stderr, "\n  %s: %s\n", path, tsr_status_message(st));
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    return m;
}

static ir_model *load_expanded(const char *path) {
    ir_model *m = load(path);
    if (!m) return NULL;
    tsr_status *st = gradient_expand(m->graph);
    if (st) fprintf(stderr, "\n  gradient_expand(%s): %s\n", path, tsr_status_message(st));
    CU_ASSERT_PTR_NULL(st);
    if (st) {
        tsr_status_free(st);
        ir_model_free(m);
        return NULL;
    }
    return m;
}

/* The message of gradient_expand's error on the model at path ("" when none). */
static char *expand_error(const char *path) {
    static char msg[1024];
    msg[0] = '\0';
    ir_model *m = load(path);
    if (!m) return msg;
    tsr_status *st = gradient_expand(m->graph);
    CU_ASSERT_PTR_NOT_NULL(st);
    if (st) snprintf(msg, sizeof msg, "%s", tsr_status_message(st));
    tsr_status_free(st);
    ir_model_free(m);
    return msg;
}

/* A reference-provider session on m's graph, as ONNX bytes; m is freed. */
static tsr_session *session_of(ir_model *m) {
    struct tsr_graph *view = NULL;
    void *bytes = NULL;
    size_t size = 0;
    tsr_status *st = graph_view_whole(m->graph, &view);
    if (!st) st = onnx_write_view(view, &bytes, &size);
    graph_view_free(view);
    ir_model_free(m);
    tsr_session *s = NULL;
    tsr_session_options *o = NULL;
    if (!st) st = tsr_session_options_create(&o);
    if (!st) st = tsr_session_options_add_provider(o, "reference");
    if (!st) st = tsr_session_create_from_buffer(o, bytes, size, NULL, &s);
    tsr_session_options_free(o);
    free(bytes);
    if (st) fprintf(stderr, "\n  session: %s\n", tsr_status_message(st));
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    return s;
}

static void expect_floats(const tsr_value *v, const char *what, const float *want, size_t n) {
    tsr_tensor t = {.struct_size = sizeof t};
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    CU_ASSERT_PTR_NULL_FATAL(tsr_value_tensor(v, &t));
    CU_ASSERT_EQUAL(t.elem_type, TSR_FLOAT);
    CU_ASSERT_EQUAL_FATAL(t.nbytes, n * sizeof(float));
    const float *got = t.data;
    for (size_t i = 0; i < n; i++) {
        if (fabsf(got[i] - want[i]) > 1e-5f * (1 + fabsf(want[i])))
            fprintf(stderr, "\n  %s[%zu]: got %.7g, want %.7g\n", what, i, (double)got[i], (double)want[i]);
        CU_ASSERT_DOUBLE_EQUAL(got[i], want[i], 1e-5 * (1 + fabs(want[i])));
    }
}

static void expect_dims(const tsr_value *v, int32_t rank, const int64_t *dims) {
    tsr_tensor t = {.struct_size = sizeof t};
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    CU_ASSERT_PTR_NULL_FATAL(tsr_value_tensor(v, &t));
    CU_ASSERT_EQUAL_FATAL(t.rank, rank);
    for (int32_t i = 0; i < rank; i++) CU_ASSERT_EQUAL(t.dims[i], dims[i]);
}

static tsr_tensor float_tensor(const float *data, int32_t rank, const int64_t *dims, size_t n) {
    tsr_tensor t = {sizeof t, TSR_FLOAT, rank, dims, (void *)data, n * sizeof(float), TSR_MEMORY_HOST, 0};
    return t;
}

/* Runs s, asking for every graph output. */
static bool run_all(tsr_session *s, size_t n_in, const char *const *names, const tsr_tensor *const *ins,
                    tsr_value **outs) {
    tsr_status *st = tsr_session_run(s, n_in, names, ins, tsr_session_output_count(s), NULL, outs);
    if (st) fprintf(stderr, "\n  run: %s\n", tsr_status_message(st));
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    return st == NULL;
}

static void free_values(tsr_value **v, size_t n) {
    for (size_t i = 0; i < n; i++) tsr_value_free(v[i]);
}

/* --- the rewritten graph ---------------------------------------------------------- */

static size_t count_op(const ir_graph *g, const char *op) {
    size_t k = 0;
    for (size_t i = 0; i < g->n_nodes; i++) k += strcmp(g->nodes[i]->op_type, op) == 0;
    return k;
}

static void test_rewrite_of_add(void) {
    const char *dir = case_dir("test_gradient_of_add");
    if (!dir) {
        fprintf(stderr, "\n  (no ONNX test corpus; skipped)\n");
        return;
    }
    char path[1200];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    ir_model *m = load_expanded(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    ir_graph *g = m->graph;
    CU_ASSERT_EQUAL(count_op(g, "Gradient"), 0);
    CU_ASSERT_EQUAL(count_op(g, "Add"), 1); /* scalars: nothing to un-broadcast */
    CU_ASSERT_EQUAL(count_op(g, "ReduceSum"), 0);
    CU_ASSERT_EQUAL(count_op(g, "ConstantOfShape"), 1); /* the seed, shared by both */
    CU_ASSERT_EQUAL(count_op(g, "Identity"), 2);
    for (size_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        CU_ASSERT_EQUAL(n->index, i);
        if (strcmp(n->name, "my_add") == 0) {
            CU_ASSERT_PTR_NULL(n->origin);
            continue;
        }
        CU_ASSERT_PTR_NOT_NULL_FATAL(n->origin);
        CU_ASSERT_STRING_EQUAL(n->origin, "my_gradient");
        CU_ASSERT(strncmp(n->name, "my_gradient/", 12) == 0);
        CU_ASSERT_STRING_EQUAL(n->domain, "");
        /* topological: every input is made by an earlier node or is no node's */
        for (size_t j = 0; j < n->n_inputs; j++) {
            const ir_node *p = n->inputs[j] ? n->inputs[j]->producer : NULL;
            CU_ASSERT(!p || p->index < i);
        }
    }
    const char *outs[] = {"dc_da", "dc_db"};
    for (size_t k = 0; k < 2; k++) {
        const ir_value *v = ir_graph_find(g, outs[k]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(v);
        CU_ASSERT_PTR_NOT_NULL_FATAL(v->producer);
        CU_ASSERT_STRING_EQUAL(v->producer->op_type, "Identity");
    }
    CU_ASSERT_PTR_NULL(ir_graph_check(g));
    ir_model_free(m);
}

static void test_without_gradient_untouched(void) {
    ir_model *m = load(data_path("exec_chain.onnx"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    size_t nodes = m->graph->n_nodes, values = m->graph->n_values;
    CU_ASSERT_PTR_NULL(gradient_expand(m->graph));
    CU_ASSERT_EQUAL(m->graph->n_nodes, nodes);
    CU_ASSERT_EQUAL(m->graph->n_values, values);
    ir_model_free(m);
    tsr_status *st = gradient_expand(NULL);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_ARGUMENT);
    tsr_status_free(st);
}

/* --- numbers ----------------------------------------------------------------------- */

static uint8_t *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t *buf = NULL;
    long len = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (len >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)len + 1)) &&
        fread(buf, 1, (size_t)len, f) != (size_t)len) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *size = len >= 0 ? (size_t)len : 0;
    return buf;
}

static ir_tensor *read_tensor(const char *dir, const char *name) {
    char path[1200];
    snprintf(path, sizeof path, "%s/test_data_set_0/%s", dir, name);
    size_t size;
    uint8_t *bytes = read_file(path, &size);
    CU_ASSERT_PTR_NOT_NULL(bytes);
    if (!bytes) return NULL;
    ir_tensor *t = NULL;
    tsr_status *st = ir_tensor_from_proto_bytes(bytes, size, &t);
    free(bytes);
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    return t;
}

/* A conformance case run end to end: two float inputs, three float outputs. */
static void run_case(const char *name) {
    const char *found = case_dir(name);
    if (!found) {
        fprintf(stderr, "\n  (no ONNX test corpus; skipped)\n");
        return;
    }
    char dir[1024], path[1200];
    snprintf(dir, sizeof dir, "%s", found);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    ir_model *m = load_expanded(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    tsr_session *s = session_of(m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    ir_tensor *in[2] = {read_tensor(dir, "input_0.pb"), read_tensor(dir, "input_1.pb")};
    CU_ASSERT_FATAL(in[0] && in[1]);
    const char *names[2] = {in[0]->name, in[1]->name};
    const tsr_tensor *ins[2] = {&in[0]->view, &in[1]->view};
    CU_ASSERT_EQUAL_FATAL(tsr_session_output_count(s), 3);
    tsr_value *outs[3] = {NULL, NULL, NULL};
    if (run_all(s, 2, names, ins, outs)) {
        for (int k = 0; k < 3; k++) {
            char file[32];
            snprintf(file, sizeof file, "output_%d.pb", k);
            ir_tensor *want = read_tensor(dir, file);
            if (!want) continue;
            CU_ASSERT_EQUAL(want->elem_type, TSR_FLOAT);
            expect_floats(outs[k], file, want->data, want->nbytes / sizeof(float));
            ir_tensor_free(want);
        }
    }
    free_values(outs, 3);
    ir_tensor_free(in[0]);
    ir_tensor_free(in[1]);
    tsr_session_free(s);
}

static void test_case_of_add(void) { run_case("test_gradient_of_add"); }
static void test_case_of_add_and_mul(void) { run_case("test_gradient_of_add_and_mul"); }

static void test_mlp(void) {
    ir_model *m = load_expanded(data_path("gradient_mlp.onnx"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    /* Opset 12: B's rows are summed by a ReduceSum with an 'axes' attribute. */
    const ir_graph *g = m->graph;
    size_t reduce_sums = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        if (strcmp(n->op_type, "ReduceSum") != 0) continue;
        reduce_sums++;
        const ir_attr *axes = ir_node_attr(n, "axes"), *keep = ir_node_attr(n, "keepdims");
        CU_ASSERT_EQUAL(n->n_inputs, 1);
        CU_ASSERT_FATAL(axes && axes->type == TSR_ATTR_INTS && axes->count == 1);
        CU_ASSERT_EQUAL(axes->ints[0], 0);
        CU_ASSERT(keep && keep->i == 0);
    }
    CU_ASSERT_EQUAL(reduce_sums, 1);
    tsr_session *s = session_of(m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    static const float X[] = {1, 2, 3, -4}, W[] = {1, -1, 0.5f, 2}, B[] = {0.5f, -1}, U[] = {7, 8, 9};
    const int64_t d22[] = {2, 2}, d2[] = {2}, d3[] = {3};
    tsr_tensor x = float_tensor(X, 2, d22, 4), w = float_tensor(W, 2, d22, 4);
    tsr_tensor b = float_tensor(B, 1, d2, 2), u = float_tensor(U, 1, d3, 3);
    const char *names[] = {"X", "W", "B", "U"};
    const tsr_tensor *ins[] = {&x, &w, &b, &u};
    tsr_value *outs[4] = {NULL};
    if (run_all(s, 4, names, ins, outs)) {
        static const float Y[] = {2.5f, 2, 1.5f, 0}, DW[] = {4, 1, -2, 2}, DB[] = {2, 1}, DU[] = {0, 0, 0};
        expect_floats(outs[0], "Y", Y, 4);
        expect_floats(outs[1], "dW", DW, 4);
        expect_floats(outs[2], "dB", DB, 2);
        expect_floats(outs[3], "dU", DU, 3);
        expect_dims(outs[2], 1, d2);
    }
    free_values(outs, 4);
    tsr_session_free(s);
}

static void test_sub_div(void) {
    ir_model *m = load_expanded(data_path("gradient_sub_div.onnx"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    tsr_session *s = session_of(m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    static const float A[] = {1, 2, 3, 4, 5, 6}, Bv[] = {1, 2, 4};
    const int64_t d23[] = {2, 3}, d3[] = {3};
    tsr_tensor a = float_tensor(A, 2, d23, 6), b = float_tensor(Bv, 1, d3, 3);
    const char *names[] = {"a", "b"};
    const tsr_tensor *ins[] = {&a, &b};
    tsr_value *outs[3] = {NULL};
    if (run_all(s, 2, names, ins, outs)) {
        static const float Y[] = {0, 0, -0.75f, 12, 7.5f, 3};
        static const float DA[] = {1, 1, 0.5f, 7, 4, 2};
        static const float DB[] = {-17, -7.25f, -2.8125f};
        expect_floats(outs[0], "y", Y, 6);
        expect_floats(outs[1], "da", DA, 6);
        expect_floats(outs[2], "db", DB, 3);
        expect_dims(outs[2], 1, d3);
    }
    free_values(outs, 3);
    tsr_session_free(s);
}

static void test_dynamic_broadcast(void) {
    static const float A[] = {1, 2, 3, 4, 5, 6};
    static const float S1[] = {10, 20, 30}, S2[] = {1, 1, 1, 2, 2, 2};
    const int64_t d23[] = {2, 3}, d13[] = {1, 3};
    for (int k = 1; k <= 2; k++) {
        ir_model *m = load_expanded(data_path("gradient_dynamic.onnx"));
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        tsr_session *s = session_of(m);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        tsr_tensor a = float_tensor(A, 2, d23, 6);
        tsr_tensor sv = k == 1 ? float_tensor(S1, 2, d13, 3) : float_tensor(S2, 2, d23, 6);
        const char *names[] = {"a", "s"};
        const tsr_tensor *ins[] = {&a, &sv};
        tsr_value *outs[3] = {NULL};
        if (run_all(s, 2, names, ins, outs)) {
            if (k == 1) {
                static const float DA[] = {10, 20, 30, 10, 20, 30}, DS[] = {5, 7, 9};
                expect_floats(outs[1], "da", DA, 6);
                expect_floats(outs[2], "ds", DS, 3);
                expect_dims(outs[2], 2, d13);
            } else {
                expect_floats(outs[1], "da", S2, 6);
                expect_floats(outs[2], "ds", A, 6);
                expect_dims(outs[2], 2, d23);
            }
        }
        free_values(outs, 3);
        tsr_session_free(s);
    }
}

static float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

static void test_unary(void) {
    ir_model *m = load_expanded(data_path("gradient_unary.onnx"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL(count_op(m->graph, "Gradient"), 0);
    tsr_session *s = session_of(m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    static const float X[] = {-2, -0.5f, 0.5f, 3};
    const int64_t d4[] = {4};
    tsr_tensor x = float_tensor(X, 1, d4, 4);
    const char *in_names[] = {"x"};
    const tsr_tensor *ins[] = {&x};
    enum { N_OPS = 9 };
    static const char *const ops[N_OPS] = {"abs", "identity", "neg", "relu", "sigmoid", "tanh", "exp", "log", "sqrt"};
    float want[N_OPS][4];
    for (int i = 0; i < 4; i++) {
        float v = X[i], sign = v > 0 ? 1.0f : -1.0f;
        want[0][i] = sign;                          /* |x|' */
        want[1][i] = 1;                             /* x' */
        want[2][i] = -1;                            /* (-x)' */
        want[3][i] = v > 0 ? 1.0f : 0.0f;           /* relu' */
        want[4][i] = sigmoid(v) * (1 - sigmoid(v)); /* s (1 - s) */
        want[5][i] = 1 - tanhf(v) * tanhf(v);       /* 1 - tanh^2 */
        want[6][i] = expf(v);                       /* exp */
        want[7][i] = 1 / v;                         /* log|x|' */
        want[8][i] = sign / (2 * sqrtf(fabsf(v)));  /* sqrt|x|' */
    }
    CU_ASSERT_EQUAL_FATAL(tsr_session_output_count(s), N_OPS);
    tsr_value *outs[N_OPS] = {NULL};
    if (run_all(s, 1, in_names, ins, outs))
        for (int k = 0; k < N_OPS; k++) expect_floats(outs[k], ops[k], want[k], 4);
    free_values(outs, N_OPS);
    tsr_session_free(s);
}

static void test_second_order(void) {
    ir_model *m = load_expanded(data_path("gradient_second_order.onnx"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL(count_op(m->graph, "Gradient"), 0);
    tsr_session *s = session_of(m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    static const float X[] = {1, 2, -3};
    const int64_t d3[] = {3};
    tsr_tensor x = float_tensor(X, 1, d3, 3);
    const char *names[] = {"x"};
    const tsr_tensor *ins[] = {&x};
    tsr_value *outs[2] = {NULL};
    if (run_all(s, 1, names, ins, outs)) {
        static const float D1[] = {3, 12, 27}, D2[] = {6, 12, -18}; /* 3x^2, 6x */
        expect_floats(outs[0], "d1", D1, 3);
        expect_floats(outs[1], "d2", D2, 3);
    }
    free_values(outs, 2);
    tsr_session_free(s);
}

/* then: d(x^2)/dx = 2x; else: d(-x)/dx = -1. */
static void test_in_if_branches(void) {
    for (int branch = 0; branch < 2; branch++) {
        ir_model *m = load_expanded(data_path("gradient_in_if.onnx"));
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        const ir_attr *then_g = ir_node_attr(m->graph->nodes[0], "then_branch");
        CU_ASSERT_FATAL(then_g && then_g->g);
        CU_ASSERT_EQUAL(count_op(then_g->g, "Gradient"), 0);
        tsr_session *s = session_of(m);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        static const float X[] = {1, 2, -3};
        const int64_t d3[] = {3};
        const bool cond = branch == 0;
        tsr_tensor x = float_tensor(X, 1, d3, 3);
        tsr_tensor c = {sizeof c, TSR_BOOL, 0, NULL, (void *)&cond, 1, TSR_MEMORY_HOST, 0};
        const char *names[] = {"x", "cond"};
        const tsr_tensor *ins[] = {&x, &c};
        tsr_value *outs[1] = {NULL};
        if (run_all(s, 2, names, ins, outs)) {
            static const float THEN[] = {2, 4, -6}, ELSE[] = {-1, -1, -1};
            expect_floats(outs[0], "dx", cond ? THEN : ELSE, 3);
        }
        free_values(outs, 1);
        tsr_session_free(s);
    }
}

/* --- refusals ---------------------------------------------------------------------- */

static void test_unsupported_op(void) {
    const char *msg = expand_error(data_path("gradient_unsupported.onnx"));
    CU_ASSERT(strstr(msg, "'grad'") != NULL);
    CU_ASSERT(strstr(msg, "'soft'") != NULL);
    CU_ASSERT(strstr(msg, "Softmax") != NULL);
}

static void test_ambiguous_broadcast_opset12(void) {
    const char *msg = expand_error(data_path("gradient_dynamic_opset12.onnx"));
    CU_ASSERT(strstr(msg, "'mul'") != NULL);
    CU_ASSERT(strstr(msg, "'s'") != NULL);
    CU_ASSERT(strstr(msg, "axis 0") != NULL);
}

static void test_bad_attributes(void) {
    const char *msg = expand_error(data_path("gradient_bad_attrs.onnx"));
    CU_ASSERT(strstr(msg, "'grad'") != NULL);
    CU_ASSERT(strstr(msg, "'xs'") != NULL);
}

static void test_malformed(void) {
    const char *msg = expand_error(data_path("gradient_bad_inputs.onnx"));
    CU_ASSERT(strstr(msg, "'grad'") && strstr(msg, "'z'") && strstr(msg, "'x'"));
    msg = expand_error(data_path("gradient_bad_y.onnx"));
    CU_ASSERT(strstr(msg, "'grad'") && strstr(msg, "'nowhere'"));
    msg = expand_error(data_path("gradient_bad_outputs.onnx"));
    CU_ASSERT(strstr(msg, "'grad'") && strstr(msg, "2 outputs"));
}

void unit_register(void) {
    CU_pSuite s = CU_add_suite("gradient", suite_init, NULL);
    CU_add_test(s, "test_gradient_of_add rewritten: names, origin, order", test_rewrite_of_add);
    CU_add_test(s, "a graph without Gradient is untouched", test_without_gradient_untouched);
    CU_add_test(s, "test_gradient_of_add runs", test_case_of_add);
    CU_add_test(s, "test_gradient_of_add_and_mul runs", test_case_of_add_and_mul);
    CU_add_test(s, "MatMul + broadcast Add + Relu, opset 12", test_mlp);
    CU_add_test(s, "Sub, Div, a value reaching y twice", test_sub_div);
    CU_add_test(s, "broadcast decided at run time", test_dynamic_broadcast);
    CU_add_test(s, "elementwise unary ops", test_unary);
    CU_add_test(s, "a gradient of a gradient", test_second_order);
    CU_add_test(s, "Gradient nodes inside If branches", test_in_if_branches);
    CU_add_test(s, "an op without a gradient is named", test_unsupported_op);
    CU_add_test(s, "undecidable broadcast before opset 13", test_ambiguous_broadcast_opset12);
    CU_add_test(s, "bad attributes", test_bad_attributes);
    CU_add_test(s, "inputs, y or outputs that do not fit", test_malformed);
}
