/* Looking inside a session: intermediate values by name (observe_all), the
 * node table (who runs what) and profiling events.
 *
 * exec_chain.onnx (tests/data/make_abi_models.py), x float[2,3]:
 *     n0: a = Relu(x)        n1: b = Add(a, k)   k = [0.5, -1, 2]
 *     n2: c = Relu(b)        n3: d = Add(c, a)
 *     n4: e = Relu(d)        n5: y = Add(e, c)
 * For x = [-1, 2, -3, 4, -5, 6], worked by hand:
 *     a = [0, 2, 0, 4, 0, 6]
 *     b = [0.5, 1, 2, 4.5, -1, 8]
 *     d = [0.5, 3, 2, 8.5, 0, 14]
 */
#include <CUnit/CUnit.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/tessera.h"

static const float X[6] = {-1, 2, -3, 4, -5, 6};
static const float WANT_A[6] = {0, 2, 0, 4, 0, 6};
static const float WANT_B[6] = {0.5f, 1, 2, 4.5f, -1, 8};
static const float WANT_D[6] = {0.5f, 3, 2, 8.5f, 0, 14};
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

static tsr_session *open_chain(int observe, int profile) {
    tsr_session_options *o;
    if (tsr_session_options_create(&o)) return NULL;
    tsr_status_free(tsr_session_options_add_provider(o, "reference"));
    tsr_status_free(tsr_session_options_set_observe_all(o, observe));
    tsr_status_free(tsr_session_options_set_profiling(o, profile));
    tsr_session *s = NULL;
    tsr_status *st = tsr_session_create(o, data_path("exec_chain.onnx"), &s);
    tsr_session_options_free(o);
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    return s;
}

static tsr_status *run_names(tsr_session *s, size_t n, const char *const *names, tsr_value **out) {
    tsr_tensor x = {sizeof x, TSR_FLOAT, 2, DIMS23, (void *)X, sizeof X, TSR_MEMORY_HOST, 0};
    const char *in_name = "x";
    const tsr_tensor *ins[1] = {&x};
    return tsr_session_run(s, 1, &in_name, ins, n, names, out);
}

static void expect_value(const tsr_value *v, const float *want) {
    tsr_tensor t = {.struct_size = sizeof t};
    CU_ASSERT_PTR_NULL_FATAL(tsr_value_tensor(v, &t));
    CU_ASSERT_EQUAL_FATAL(t.nbytes, 6 * sizeof(float));
    for (int i = 0; i < 6; i++) CU_ASSERT_DOUBLE_EQUAL(((const float *)t.data)[i], want[i], 1e-6);
}

static void test_intermediates_by_name(void) {
    tsr_session *s = open_chain(1, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    const char *names[4] = {"a", "y", "b", "d"};
    tsr_value *out[4] = {NULL};
    tsr_status *st = run_names(s, 4, names, out);
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    if (out[0]) expect_value(out[0], WANT_A);
    if (out[2]) expect_value(out[2], WANT_B);
    if (out[3]) expect_value(out[3], WANT_D);
    for (int i = 0; i < 4; i++) tsr_value_free(out[i]);
    tsr_session_free(s);
}

static void test_intermediate_needs_observe(void) {
    tsr_session *s = open_chain(0, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    const char *names[1] = {"a"};
    tsr_value *out[1] = {NULL};
    tsr_status *st = run_names(s, 1, names, out);
    CU_ASSERT_PTR_NOT_NULL(st);
    if (st) CU_ASSERT_PTR_NOT_NULL(strstr(tsr_status_message(st), "observe_all"));
    tsr_status_free(st);
    tsr_session_free(s);
}

static void test_node_table(void) {
    tsr_session *s = open_chain(0, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL_FATAL(tsr_session_node_count(s), 6);
    static const char *const ops[6] = {"Relu", "Add", "Relu", "Add", "Relu", "Add"};
    static const char *const outs[6] = {"a", "b", "c", "d", "e", "y"};
    static const char *const ins[6][2] = {{"x"}, {"a", "k"}, {"b"}, {"c", "a"}, {"d"}, {"e", "c"}};
    for (size_t i = 0; i < 6; i++) {
        tsr_node_info ni = {.struct_size = sizeof ni};
        CU_ASSERT_PTR_NULL_FATAL(tsr_session_node_info(s, i, &ni));
        CU_ASSERT_STRING_EQUAL(ni.op_type, ops[i]);
        CU_ASSERT_STRING_EQUAL(ni.provider, "reference");
        CU_ASSERT_EQUAL(ni.output_count, 1);
        CU_ASSERT_STRING_EQUAL(ni.outputs[0], outs[i]);
        CU_ASSERT_PTR_NULL(ni.origin);
        CU_ASSERT_EQUAL_FATAL(ni.input_count, ins[i][1] ? 2 : 1);
        for (size_t k = 0; k < ni.input_count; k++) CU_ASSERT_STRING_EQUAL(ni.inputs[k], ins[i][k]);
    }
    tsr_node_info bad = {.struct_size = sizeof bad};
    tsr_status *st = tsr_session_node_info(s, 6, &bad);
    CU_ASSERT_PTR_NOT_NULL(st);
    tsr_status_free(st);
    tsr_session_free(s);
}

static void test_profile_events(void) {
    tsr_session *s = open_chain(0, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    tsr_value *out[2] = {NULL};
    tsr_status *st = run_names(s, 2, NULL, out);
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    tsr_value_free(out[0]);
    tsr_value_free(out[1]);
    char *json = NULL;
    CU_ASSERT_PTR_NULL_FATAL(tsr_session_profile_take(s, &json));
    CU_ASSERT_EQUAL(json[0], '[');
    /* one event per piece: six single-node pieces */
    size_t events = 0;
    for (const char *p = json; (p = strstr(p, "\"cat\":\"piece\"")); p++) events++;
    CU_ASSERT_EQUAL(events, 6);
    CU_ASSERT_PTR_NOT_NULL(strstr(json, "\"provider\":\"reference\""));
    free(json);
    /* taken: the next take is empty */
    CU_ASSERT_PTR_NULL_FATAL(tsr_session_profile_take(s, &json));
    CU_ASSERT_STRING_EQUAL(json, "[]");
    free(json);
    tsr_session_free(s);
}

/* A session over [faulty (runs Add), reference] with the given pins. */
static tsr_status *open_pinned(const char *const *pins, size_t n, tsr_session **s) {
    char path[1024];
    const char *dir = getenv("TESSERA_TEST_PLUGINS");
    snprintf(path, sizeof path, "%s/plugin_faulty.so", dir && *dir ? dir : "build/test-plugins");
    tsr_session_options *o;
    tsr_status *st = tsr_session_options_create(&o);
    if (st) return st;
    tsr_status_free(tsr_session_options_add_provider(o, path));
    tsr_status_free(tsr_session_options_add_provider(o, "reference"));
    tsr_status_free(tsr_session_options_set_provider_option(o, "faulty", "op", "Add"));
    for (size_t i = 0; i < n; i++) tsr_status_free(tsr_session_options_assign(o, pins[2 * i], pins[2 * i + 1]));
    st = tsr_session_create(o, data_path("exec_chain.onnx"), s);
    tsr_session_options_free(o);
    return st;
}

static const char *provider_of(tsr_session *s, size_t node) {
    tsr_node_info ni = {.struct_size = sizeof ni};
    tsr_status *st = tsr_session_node_info(s, node, &ni);
    tsr_status_free(st);
    return st ? "?" : ni.provider;
}

static void test_assign(void) {
    tsr_session *s = NULL;
    /* No pins: faulty takes the three Adds (n1, n3, n5). */
    CU_ASSERT_PTR_NULL_FATAL(open_pinned(NULL, 0, &s));
    CU_ASSERT_STRING_EQUAL(provider_of(s, 1), "faulty");
    CU_ASSERT_STRING_EQUAL(provider_of(s, 3), "faulty");
    tsr_session_free(s);
    /* n1 by name to reference; a name rule beats the op rule for n5. */
    const char *pins[6] = {"n1", "reference", "Add", "faulty", "n5", "reference"};
    s = NULL;
    CU_ASSERT_PTR_NULL_FATAL(open_pinned(pins, 3, &s));
    CU_ASSERT_STRING_EQUAL(provider_of(s, 1), "reference");
    CU_ASSERT_STRING_EQUAL(provider_of(s, 3), "faulty");
    CU_ASSERT_STRING_EQUAL(provider_of(s, 5), "reference");
    CU_ASSERT_STRING_EQUAL(provider_of(s, 0), "reference");
    tsr_session_free(s);
}

static void test_assign_errors(void) {
    tsr_session *s = NULL;
    const char *nosuch[2] = {"nosuch", "reference"};
    tsr_status *st = open_pinned(nosuch, 1, &s);
    CU_ASSERT_PTR_NOT_NULL(st);
    if (st) CU_ASSERT_PTR_NOT_NULL(strstr(tsr_status_message(st), "no node and no op type named 'nosuch'"));
    tsr_status_free(st);
    const char *ghost[2] = {"Add", "ghost"};
    st = open_pinned(ghost, 1, &s);
    CU_ASSERT_PTR_NOT_NULL(st);
    if (st) CU_ASSERT_PTR_NOT_NULL(strstr(tsr_status_message(st), "'ghost' is not in the session"));
    tsr_status_free(st);
    /* faulty runs only Add: pinning a Relu to it leaves nobody for it */
    const char *relu[2] = {"n0", "faulty"};
    st = open_pinned(relu, 1, &s);
    CU_ASSERT_PTR_NOT_NULL(st);
    if (st) CU_ASSERT_PTR_NOT_NULL(strstr(tsr_status_message(st), "n0"));
    tsr_status_free(st);
}

/* A pin on a function node follows it into its body: with LayerNormalization
 * declined by reference (so it is expanded) and faulty claiming every Add,
 * pinning 'ln' to reference keeps the body's Adds off faulty; 'res' stays. */
static void test_assign_follows_expansion(void) {
    char path[1024];
    const char *dir = getenv("TESSERA_TEST_PLUGINS");
    snprintf(path, sizeof path, "%s/plugin_faulty.so", dir && *dir ? dir : "build/test-plugins");
    tsr_session_options *o;
    CU_ASSERT_PTR_NULL_FATAL(tsr_session_options_create(&o));
    tsr_status_free(tsr_session_options_add_provider(o, path));
    tsr_status_free(tsr_session_options_add_provider(o, "reference"));
    tsr_status_free(tsr_session_options_set_provider_option(o, "faulty", "op", "Add"));
    tsr_status_free(tsr_session_options_set_provider_option(o, "reference", "exclude_ops", "LayerNormalization"));
    tsr_status_free(tsr_session_options_assign(o, "ln", "reference"));
    tsr_session *s = NULL;
    tsr_status *st = tsr_session_create(o, data_path("pin_layernorm.onnx"), &s);
    tsr_session_options_free(o);
    CU_ASSERT_PTR_NULL_FATAL(st);
    size_t body = 0, n = tsr_session_node_count(s);
    for (size_t i = 0; i < n; i++) {
        tsr_node_info ni = {.struct_size = sizeof ni};
        CU_ASSERT_PTR_NULL_FATAL(tsr_session_node_info(s, i, &ni));
        if (ni.origin && strcmp(ni.origin, "ln") == 0) {
            body++;
            CU_ASSERT_STRING_EQUAL(ni.provider, "reference");
        } else if (strcmp(ni.name, "res") == 0) {
            CU_ASSERT_STRING_EQUAL(ni.provider, "faulty");
        }
    }
    CU_ASSERT(body > 1); /* expanded */
    tsr_session_free(s);
}

/* names[0..count) joined by spaces, into buf. */
static const char *join_names(const char *const *names, size_t count, char *buf, size_t size) {
    size_t used = 0;
    buf[0] = 0;
    for (size_t k = 0; k < count && used < size; k++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", k ? " " : "", names[k]);
    return buf;
}

/* abi_node_inputs.onnx: y = Clip(x, "", hi) 'clip', z = Add(y, y) 'twice'.
 * Inputs come in the model's order and names, "" where one is omitted; a
 * caller whose struct ends before them (built against ABI 1 as frozen)
 * gets them left alone. */
static void test_node_inputs(void) {
    tsr_session_options *o;
    CU_ASSERT_PTR_NULL_FATAL(tsr_session_options_create(&o));
    tsr_status_free(tsr_session_options_add_provider(o, "reference"));
    tsr_session *s = NULL;
    tsr_status *st = tsr_session_create(o, data_path("abi_node_inputs.onnx"), &s);
    tsr_session_options_free(o);
    CU_ASSERT_PTR_NULL_FATAL(st);
    CU_ASSERT_EQUAL_FATAL(tsr_session_node_count(s), 2);
    static const char *const want[2][3] = {{"x", "", "hi"}, {"y", "y"}};
    for (size_t i = 0; i < 2; i++) {
        tsr_node_info ni = {.struct_size = sizeof ni};
        CU_ASSERT_PTR_NULL_FATAL(tsr_session_node_info(s, i, &ni));
        CU_ASSERT_EQUAL_FATAL(ni.input_count, i ? 2 : 3);
        for (size_t k = 0; k < ni.input_count; k++) CU_ASSERT_STRING_EQUAL(ni.inputs[k], want[i][k]);
    }
    tsr_node_info found = {.struct_size = sizeof found};
    CU_ASSERT_PTR_NULL_FATAL(tsr_session_node_find(s, "clip", &found));
    CU_ASSERT_EQUAL_FATAL(found.input_count, 3);
    CU_ASSERT_STRING_EQUAL(found.inputs[1], "");
    CU_ASSERT_STRING_EQUAL(found.inputs[2], "hi");
    static const char *const sentinel[1] = {"untouched"};
    tsr_node_info old = {.struct_size = offsetof(tsr_node_info, input_count), .input_count = 99, .inputs = sentinel};
    CU_ASSERT_PTR_NULL(tsr_session_node_info(s, 0, &old));
    CU_ASSERT_STRING_EQUAL(old.op_type, "Clip");
    CU_ASSERT_EQUAL(old.input_count, 99);
    CU_ASSERT_PTR_EQUAL(old.inputs, sentinel);
    old.op_type = NULL;
    CU_ASSERT_PTR_NULL(tsr_session_node_find(s, "twice", &old));
    CU_ASSERT_STRING_EQUAL(old.op_type, "Add");
    CU_ASSERT_EQUAL(old.input_count, 99);
    tsr_session_free(s);
}

/* Nodes inside control-flow bodies by path: abi_nested_cf.onnx is Loop
 * 'loop0' whose body holds Add 'body_add' and If 'body_if' (Relu
 * 'relu_then' / Neg 'neg_else'). */
static void test_node_find_in_bodies(void) {
    tsr_session_options *o;
    CU_ASSERT_PTR_NULL_FATAL(tsr_session_options_create(&o));
    tsr_status_free(tsr_session_options_add_provider(o, "reference"));
    tsr_session *s = NULL;
    tsr_status *st = tsr_session_create(o, data_path("abi_nested_cf.onnx"), &s);
    tsr_session_options_free(o);
    CU_ASSERT_PTR_NULL_FATAL(st);
    /* inputs: the node's own, never the outer values a body reads (x, s) */
    struct {
        const char *path, *name, *op, *provider, *output, *inputs;
    } want[] = {
        {"loop0", "loop0", "Loop", "core", "a", "n c a0"},
        {"loop0/body/body_add", "body_add", "Add", "reference", "s", "acc_in x"},
        {"loop0/body/body_if", "body_if", "If", "core", "acc_out", "cond_in"},
        {"loop0/body/body_if/then_branch/relu_then", "relu_then", "Relu", "reference", "t", "s"},
        {"loop0/body/body_if/else_branch/neg_else", "neg_else", "Neg", "reference", "e", "s"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        tsr_node_info ni = {.struct_size = sizeof ni};
        st = tsr_session_node_find(s, want[i].path, &ni);
        CU_ASSERT_PTR_NULL(st);
        if (st) {
            tsr_status_free(st);
            continue;
        }
        CU_ASSERT_STRING_EQUAL(ni.name, want[i].name);
        CU_ASSERT_STRING_EQUAL(ni.op_type, want[i].op);
        CU_ASSERT_STRING_EQUAL(ni.provider, want[i].provider);
        CU_ASSERT_EQUAL(ni.output_count, 1);
        CU_ASSERT_STRING_EQUAL(ni.outputs[0], want[i].output);
        char joined[64];
        CU_ASSERT_STRING_EQUAL(join_names(ni.inputs, ni.input_count, joined, sizeof joined), want[i].inputs);
    }
    /* the same node twice: the same borrowed output list */
    tsr_node_info a = {.struct_size = sizeof a}, b = {.struct_size = sizeof b};
    CU_ASSERT_PTR_NULL(tsr_session_node_find(s, "loop0/body/body_add", &a));
    CU_ASSERT_PTR_NULL(tsr_session_node_find(s, "loop0/body/body_add", &b));
    CU_ASSERT_PTR_EQUAL(a.outputs, b.outputs);
    CU_ASSERT_PTR_EQUAL(a.inputs, b.inputs);
    static const char *const missing[] = {
        "body_add", "loop0/body", "loop0/then_branch/body_add", "loop0/body/body_if/body/relu_then", "loop0//body_add",
        ""};
    for (size_t i = 0; i < sizeof missing / sizeof missing[0]; i++) {
        tsr_node_info ni = {.struct_size = sizeof ni};
        st = tsr_session_node_find(s, missing[i], &ni);
        CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_ARGUMENT);
        tsr_status_free(st);
    }
    tsr_session_free(s);
}

void unit_register(void) {
    CU_pSuite s = CU_add_suite("observe", suite_init, NULL);
    CU_add_test(s, "observe_all returns intermediates by name", test_intermediates_by_name);
    CU_add_test(s, "intermediates need observe_all", test_intermediate_needs_observe);
    CU_add_test(s, "node table names op, provider, outputs and inputs", test_node_table);
    CU_add_test(s, "node inputs by name, omitted ones empty", test_node_inputs);
    CU_add_test(s, "nodes inside control-flow bodies are found by path", test_node_find_in_bodies);
    CU_add_test(s, "profiling records one event per piece", test_profile_events);
    CU_add_test(s, "assign pins nodes and op types", test_assign);
    CU_add_test(s, "assign errors name what is wrong", test_assign_errors);
    CU_add_test(s, "assign follows a function node into its body", test_assign_follows_expansion);
}
