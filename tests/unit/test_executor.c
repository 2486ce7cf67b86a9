/* The executor: its liveness plan (each value's last reading piece) checked
 * against a table worked out by hand, and the numbers a run produces.
 *
 * exec_chain.onnx (tests/data/make_abi_models.py), x float[2,3]:
 *     n0: a = Relu(x)
 *     n1: b = Add(a, k)    k = [0.5, -1, 2], an initializer
 *     n2: c = Relu(b)
 *     n3: d = Add(c, a)    skip connection from n0
 *     n4: e = Relu(d)
 *     n5: y = Add(e, c)
 *     outputs: y, c  (c is also read by n5 after it is an output)
 * With the reference provider every node is a piece of its own, in this
 * order, so piece p is node n<p>. Last reader of each value:
 *     x: n0   k: n1   a: n3   b: n2   c: n5   d: n4   e: n5   y: none
 * For x = [-1, 2, -3, 4, -5, 6]:
 *     a = [0, 2, 0, 4, 0, 6]
 *     b = [0.5, 1, 2, 4.5, -1, 8]
 *     c = [0.5, 1, 2, 4.5, 0, 8]
 *     d = c + a = [0.5, 3, 2, 8.5, 0, 14]
 *     e = d
 *     y = e + c = [1, 4, 4, 13, 0, 22]
 */
#include <CUnit/CUnit.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"
#include "tessera/tessera.h"

static const float X[6] = {-1, 2, -3, 4, -5, 6};
static const float WANT_Y[6] = {1, 4, 4, 13, 0, 22};
static const float WANT_C[6] = {0.5f, 1, 2, 4.5f, 0, 8};
static const int64_t DIMS23[2] = {2, 3};

static const char *data_path(const char *name) {
    static char buf[1024];
    const char *dir = getenv("TESSERA_TEST_DATA");
    snprintf(buf, sizeof buf, "%s/%s", dir && *dir ? dir : "tests/data", name);
    return buf;
}

static int suite_init(void) {
    const char *lib = getenv("TESSERA_BUILD_LIB");
    return setenv("TESSERA_PROVIDER_PATH", lib && *lib ? lib : "build/lib", 1) == 0 ? 0 : 1;
}

static tsr_session *open_chain(void) {
    tsr_session_options *o;
    if (tsr_session_options_create(&o)) return NULL;
    tsr_status_free(tsr_session_options_add_provider(o, "reference"));
    tsr_session *s = NULL;
    tsr_status *st = tsr_session_create(o, data_path("exec_chain.onnx"), &s);
    tsr_session_options_free(o);
    if (st) fprintf(stderr, "\n  exec_chain.onnx: %s\n", tsr_status_message(st));
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    return s;
}

static void expect_value(tsr_value *v, const float *want) {
    tsr_tensor t = {.struct_size = sizeof t};
    CU_ASSERT_PTR_NULL_FATAL(tsr_value_tensor(v, &t));
    CU_ASSERT_EQUAL(t.elem_type, TSR_FLOAT);
    CU_ASSERT_EQUAL(t.rank, 2);
    CU_ASSERT_EQUAL_FATAL(t.nbytes, 6 * sizeof(float));
    const float *got = t.data;
    for (int i = 0; i < 6; i++) {
        if (got[i] != want[i]) fprintf(stderr, "\n  element %d: got %g, want %g\n", i, (double)got[i], (double)want[i]);
        CU_ASSERT_DOUBLE_EQUAL(got[i], want[i], 1e-6);
    }
}

static void test_piece_order(void) {
    tsr_session *s = open_chain();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL_FATAL(s->main.part.n_pieces, 6);
    for (size_t p = 0; p < 6; p++) {
        char want[8];
        snprintf(want, sizeof want, "n%zu", p);
        CU_ASSERT_EQUAL(s->main.part.pieces[p].view->n_nodes, 1);
        CU_ASSERT_STRING_EQUAL(s->main.part.pieces[p].view->nodes[0]->name, want);
    }
    tsr_session_free(s);
}

static void test_last_use(void) {
    tsr_session *s = open_chain();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s->main.last_use);
    const ir_graph *g = s->model->graph;
    static const struct {
        const char *value;
        size_t last;
    } want[] = {
        {"x", 0}, {"k", 1}, {"a", 3}, {"b", 2}, {"c", 5}, {"d", 4}, {"e", 5}, {"y", SIZE_MAX},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const ir_value *v = ir_graph_find(g, want[i].value);
        CU_ASSERT_PTR_NOT_NULL(v);
        if (!v) continue;
        size_t got = s->main.last_use[v->index];
        if (got != want[i].last)
            fprintf(stderr, "\n  last_use[%s] = %zu, want %zu\n", want[i].value, got, want[i].last);
        CU_ASSERT_EQUAL(got, want[i].last);
    }
    /* Every other value of the graph (none here) is never read. */
    size_t read = 0;
    for (size_t i = 0; i < g->n_values; i++) read += s->main.last_use[i] != SIZE_MAX;
    CU_ASSERT_EQUAL(read, 7);
    tsr_session_free(s);
}

static tsr_status *run_chain(tsr_session *s, const char *const *out_names, tsr_value **outs) {
    tsr_tensor x = {sizeof x, TSR_FLOAT, 2, DIMS23, (void *)X, sizeof X, TSR_MEMORY_HOST, 0};
    const char *in_names[] = {"x"};
    const tsr_tensor *ins[] = {&x};
    return tsr_session_run(s, 1, in_names, ins, 2, out_names, outs);
}

static void test_results(void) {
    tsr_session *s = open_chain();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(tsr_session_output_count(s), 2);
    /* Twice: the second run must not see anything the first one freed. */
    for (int round = 0; round < 2; round++) {
        tsr_value *outs[2] = {NULL, NULL};
        tsr_status *st = run_chain(s, NULL, outs);
        CU_ASSERT_PTR_NULL(st);
        if (st) fprintf(stderr, "\n  run: %s\n", tsr_status_message(st));
        tsr_status_free(st);
        if (outs[0]) expect_value(outs[0], WANT_Y);
        if (outs[1]) expect_value(outs[1], WANT_C); /* still alive after n5 read it */
        tsr_value_free(outs[0]);
        tsr_value_free(outs[1]);
    }
    /* By name, in the other order, and the same output twice. */
    const char *names[] = {"c", "c"};
    tsr_value *outs[2] = {NULL, NULL};
    tsr_status *st = run_chain(s, names, outs);
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    CU_ASSERT(outs[0] != outs[1]);
    if (outs[0]) expect_value(outs[0], WANT_C);
    if (outs[1]) expect_value(outs[1], WANT_C);
    tsr_value_free(outs[0]);
    tsr_value_free(outs[1]);
    tsr_session_free(s);
}

static void test_bad_inputs(void) {
    tsr_session *s = open_chain();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    tsr_value *outs[2] = {NULL, NULL};
    /* The initializer k is not an input the caller feeds. */
    CU_ASSERT_EQUAL(tsr_session_input_count(s), 1);
    tsr_status *st = tsr_session_run(s, 0, NULL, NULL, 2, NULL, outs);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_ARGUMENT);
    CU_ASSERT(strstr(tsr_status_message(st), "'x'") != NULL);
    tsr_status_free(st);
    const int64_t dims[2] = {3, 2};
    tsr_tensor x = {sizeof x, TSR_FLOAT, 2, dims, (void *)X, sizeof X, TSR_MEMORY_HOST, 0};
    const char *in_names[] = {"x"};
    const tsr_tensor *ins[] = {&x};
    st = tsr_session_run(s, 1, in_names, ins, 2, NULL, outs);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_ARGUMENT);
    CU_ASSERT(strstr(tsr_status_message(st), "dimension 0") != NULL);
    tsr_status_free(st);
    CU_ASSERT_PTR_NULL(outs[0]);
    CU_ASSERT_PTR_NULL(outs[1]);
    const char *bad[] = {"nope", "y"};
    st = run_chain(s, bad, outs);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_ARGUMENT);
    CU_ASSERT(strstr(tsr_status_message(st), "'nope'") != NULL);
    tsr_status_free(st);
    CU_ASSERT_PTR_NULL(outs[0]);
    CU_ASSERT_PTR_NULL(outs[1]);
    tsr_session_free(s);
}

/* exec_dynamic.onnx: y = Relu(x) + [0.5, -1, 2] on x[N, 3]. A run's N must
 * not bind the next: the input is checked against its declaration. */
static void test_symbolic_batch_across_runs(void) {
    tsr_session_options *o;
    CU_ASSERT_PTR_NULL_FATAL(tsr_session_options_create(&o));
    tsr_status_free(tsr_session_options_add_provider(o, "reference"));
    tsr_session *s = NULL;
    tsr_status *st = tsr_session_create(o, data_path("exec_dynamic.onnx"), &s);
    tsr_session_options_free(o);
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    /* X = {-1, 2, -3, 4, -5, 6}; by hand: relu then + k per column */
    static const float want_n2[6] = {0.5f, 1, 2, 4.5f, -1, 8};
    static const int64_t batches[] = {2, 1, 2};
    for (size_t r = 0; r < 3; r++) {
        const int64_t dims[2] = {batches[r], 3};
        tsr_tensor x = {sizeof x,        TSR_FLOAT, 2, dims, (void *)X, sizeof(float) * 3 * (size_t)batches[r],
                        TSR_MEMORY_HOST, 0};
        const char *in_names[] = {"x"};
        const tsr_tensor *ins[] = {&x};
        tsr_value *y = NULL;
        st = tsr_session_run(s, 1, in_names, ins, 1, NULL, &y);
        if (st) fprintf(stderr, "\n  run with N=%lld: %s\n", (long long)batches[r], tsr_status_message(st));
        CU_ASSERT_PTR_NULL(st);
        tsr_status_free(st);
        if (!y) continue;
        tsr_tensor t = {.struct_size = sizeof t};
        CU_ASSERT_PTR_NULL(tsr_value_tensor(y, &t));
        CU_ASSERT_EQUAL(t.rank, 2);
        CU_ASSERT_EQUAL(t.nbytes, sizeof(float) * 3 * (size_t)batches[r]);
        if (t.rank == 2 && t.dims[0] == batches[r] && t.data)
            for (int64_t i = 0; i < 3 * batches[r]; i++)
                CU_ASSERT_DOUBLE_EQUAL(((const float *)t.data)[i], want_n2[i], 1e-6);
        tsr_value_free(y);
    }
    /* the declared 3 still binds */
    const int64_t bad[2] = {1, 4};
    tsr_tensor x = {sizeof x, TSR_FLOAT, 2, bad, (void *)X, sizeof(float) * 4, TSR_MEMORY_HOST, 0};
    const char *in_names[] = {"x"};
    const tsr_tensor *ins[] = {&x};
    tsr_value *y = NULL;
    st = tsr_session_run(s, 1, in_names, ins, 1, NULL, &y);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_ARGUMENT);
    CU_ASSERT(st && strstr(tsr_status_message(st), "dimension 1 must be 3") != NULL);
    tsr_status_free(st);
    CU_ASSERT_PTR_NULL(y);
    tsr_session_free(s);
}

void unit_register(void) {
    CU_pSuite s = CU_add_suite("executor", suite_init, NULL);
    CU_add_test(s, "pieces run in node order", test_piece_order);
    CU_add_test(s, "last_use matches the hand-made table", test_last_use);
    CU_add_test(s, "results, repeated runs, outputs by name", test_results);
    CU_add_test(s, "bad inputs and output names", test_bad_inputs);
    CU_add_test(s, "symbolic batch: each run's N, declared dims still bind", test_symbolic_batch_across_runs);
}
