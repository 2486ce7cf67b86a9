/* Chains of models through the API (tsr_session_options_add_stage,
 * _connect, _set_stage_prefix, tsr_model_compose; core/model_compose.c).
 *
 * exec_chain.onnx (tests/data/make_abi_models.py), x float[2,3] -> y, c:
 *     a = Relu(x)   b = Add(a, k)   c = Relu(b)   k = [0.5, -1, 2]
 *     d = Add(c, a) e = Relu(d)     y = Add(e, c)
 * Chained with itself (prefixes a_, b_), worked by hand for
 * x = [-1, 2, -3, 4, -5, 6]:
 *   stage 0: c = [0.5, 1, 2, 4.5, 0, 8], y = [1, 4, 4, 13, 0, 22]
 *   by position (y feeds x): b_y = [4, 10, 16, 40, 0, 70]
 *   connected c -> x:        b_y = [2.5, 1, 10, 14.5, 0, 28]
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/tessera.h"

static const float X[6] = {-1, 2, -3, 4, -5, 6};
static const float WANT_A_Y[6] = {1, 4, 4, 13, 0, 22};
static const float WANT_B_Y[6] = {4, 10, 16, 40, 0, 70};
static const float WANT_B_Y_FROM_C[6] = {2.5f, 1, 10, 14.5f, 0, 28};
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

/* exec_chain twice, prefixes a_ and b_, reference provider. */
static tsr_session_options *chain_options(int prefixes) {
    tsr_session_options *o = NULL;
    CU_ASSERT_PTR_NULL_FATAL(tsr_session_options_create(&o));
    CU_ASSERT_PTR_NULL(tsr_session_options_add_provider(o, "reference"));
    CU_ASSERT_PTR_NULL(tsr_session_options_add_stage(o, data_path("exec_chain.onnx")));
    if (prefixes) {
        CU_ASSERT_PTR_NULL(tsr_session_options_set_stage_prefix(o, 0, "a_"));
        CU_ASSERT_PTR_NULL(tsr_session_options_set_stage_prefix(o, 1, "b_"));
    }
    return o;
}

static void expect_output(tsr_session *s, const char *name, const float *want) {
    tsr_tensor x = {sizeof x, TSR_FLOAT, 2, DIMS23, (void *)X, sizeof X, TSR_MEMORY_HOST, 0};
    const char *in_name = "a_x";
    const tsr_tensor *ins[1] = {&x};
    tsr_value *out = NULL;
    tsr_status *st = tsr_session_run(s, 1, &in_name, ins, 1, &name, &out);
    CU_ASSERT_PTR_NULL(st);
    if (st) fprintf(stderr, "run: %s\n", tsr_status_message(st));
    tsr_status_free(st);
    tsr_tensor t = {.struct_size = sizeof t};
    if (out && !tsr_value_tensor(out, &t) && t.nbytes == sizeof X) {
        for (int i = 0; i < 6; i++) CU_ASSERT_DOUBLE_EQUAL(((const float *)t.data)[i], want[i], 1e-5);
    } else {
        CU_FAIL("no float[2,3] output");
    }
    tsr_value_free(out);
}

static void expect_outputs(tsr_session *s, size_t n, const char *const *names) {
    CU_ASSERT_EQUAL_FATAL(tsr_session_output_count(s), n);
    for (size_t i = 0; i < n; i++) {
        tsr_io_info info = {.struct_size = sizeof info};
        CU_ASSERT_PTR_NULL_FATAL(tsr_session_output_info(s, i, &info));
        CU_ASSERT_STRING_EQUAL(info.name, names[i]);
    }
}

static void test_chain_by_position(void) {
    tsr_session_options *o = chain_options(1);
    tsr_session *s = NULL;
    tsr_status *st = tsr_session_create(o, data_path("exec_chain.onnx"), &s);
    tsr_session_options_free(o);
    CU_ASSERT_PTR_NULL_FATAL(st);
    /* as onnx.compose: stage 0's unconnected c, then stage 1's y and c */
    const char *outs[3] = {"a_c", "b_y", "b_c"};
    expect_outputs(s, 3, outs);
    CU_ASSERT_EQUAL(tsr_session_input_count(s), 1);
    expect_output(s, "b_y", WANT_B_Y);
    tsr_model_metadata md = {.struct_size = sizeof md};
    CU_ASSERT_PTR_NULL(tsr_session_metadata(s, &md));
    CU_ASSERT_STRING_EQUAL(md.producer_name, "tessera compose");
    CU_ASSERT_STRING_EQUAL(md.graph_name, "exec_chain_exec_chain");
    tsr_session_free(s);
}

static void test_chain_connected(void) {
    tsr_session_options *o = chain_options(1);
    CU_ASSERT_PTR_NULL(tsr_session_options_connect(o, 1, "c", "x"));
    tsr_session *s = NULL;
    tsr_status *st = tsr_session_create(o, data_path("exec_chain.onnx"), &s);
    tsr_session_options_free(o);
    CU_ASSERT_PTR_NULL_FATAL(st);
    const char *outs[3] = {"a_y", "b_y", "b_c"};
    expect_outputs(s, 3, outs);
    expect_output(s, "a_y", WANT_A_Y);
    expect_output(s, "b_y", WANT_B_Y_FROM_C);
    tsr_session_free(s);
}

static void expect_create_error(tsr_session_options *o, tsr_code code, const char *needle) {
    tsr_session *s = NULL;
    tsr_status *st = tsr_session_create(o, data_path("exec_chain.onnx"), &s);
    CU_ASSERT_PTR_NOT_NULL(st);
    CU_ASSERT_PTR_NULL(s);
    CU_ASSERT_EQUAL(tsr_status_code(st), code);
    if (!strstr(tsr_status_message(st), needle)) {
        fprintf(stderr, "message '%s' lacks '%s'\n", tsr_status_message(st), needle);
        CU_FAIL("message");
    }
    tsr_status_free(st);
    tsr_session_free(s);
}

static void test_errors(void) {
    tsr_session_options *o = chain_options(0);
    expect_create_error(o, TSR_ERR_INVALID_MODEL, "name clash: 'a' is the output of node 'n0' (Relu)");
    tsr_session_options_free(o);

    o = chain_options(1);
    CU_ASSERT_PTR_NULL(tsr_session_options_connect(o, 1, "y", "nope"));
    expect_create_error(o, TSR_ERR_INVALID_ARGUMENT, "has no graph input 'nope' (its inputs: 'x')");
    tsr_session_options_free(o);

    o = chain_options(1);
    CU_ASSERT_PTR_NULL(tsr_session_options_connect(o, 0, "z", "x"));
    expect_create_error(o, TSR_ERR_INVALID_ARGUMENT, "has a graph output 'z' (stage 0 ");
    tsr_session_options_free(o);

    /* options: stages that are not there */
    o = chain_options(0);
    tsr_status *st = tsr_session_options_connect(o, 2, "y", "x");
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_ARGUMENT);
    tsr_status_free(st);
    st = tsr_session_options_set_stage_prefix(o, 2, "p_");
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_ARGUMENT);
    tsr_status_free(st);
    st = tsr_session_options_add_stage(o, "");
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_ARGUMENT);
    tsr_status_free(st);
    tsr_session_options_free(o);

    o = chain_options(1);
    CU_ASSERT_PTR_NULL(tsr_session_options_add_stage(o, data_path("no_such_model.onnx")));
    expect_create_error(o, TSR_ERR_IO, "stage 2 ");
    tsr_session_options_free(o);
}

/* The merged model written out loads and runs as the chain does. */
static void test_compose_bytes(void) {
    tsr_session_options *o = chain_options(1);
    void *bytes = NULL;
    size_t size = 0;
    tsr_status *st = tsr_model_compose(o, data_path("exec_chain.onnx"), &bytes, &size);
    CU_ASSERT_PTR_NULL_FATAL(st);
    tsr_session_options *plain = NULL;
    CU_ASSERT_PTR_NULL_FATAL(tsr_session_options_create(&plain));
    CU_ASSERT_PTR_NULL(tsr_session_options_add_provider(plain, "reference"));
    tsr_session *s = NULL;
    st = tsr_session_create_from_buffer(plain, bytes, size, NULL, &s);
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    if (s) expect_output(s, "b_y", WANT_B_Y);
    tsr_session_free(s);
    tsr_session_options_free(plain);
    tsr_session_options_free(o);
    free(bytes);
}

void unit_register(void) {
    CU_pSuite s = CU_add_suite("compose", suite_init, NULL);
    CU_add_test(s, "a chain fed by position", test_chain_by_position);
    CU_add_test(s, "a chain fed by connection", test_chain_connected);
    CU_add_test(s, "errors name what is wrong", test_errors);
    CU_add_test(s, "tsr_model_compose writes the chain", test_compose_bytes);
}
