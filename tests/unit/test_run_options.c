/* Run options: stopping a run (terminate from another thread, a deadline)
 * with TSR_ERR_CANCELLED, inside a long reference kernel and between Loop
 * iterations; the session runs normally afterwards; tags in profiles. */
#include <CUnit/CUnit.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tessera/tessera.h"

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

static tsr_session *open_model(const char *name, int profile) {
    tsr_session_options *o;
    if (tsr_session_options_create(&o)) return NULL;
    tsr_status_free(tsr_session_options_add_provider(o, "reference"));
    tsr_status_free(tsr_session_options_set_profiling(o, profile));
    tsr_session *s = NULL;
    tsr_status *st = tsr_session_create(o, data_path(name), &s);
    tsr_session_options_free(o);
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    return s;
}

/* abi_slow_pool.onnx: a MaxPool of hours on the reference provider. */
static tsr_status *run_slow_pool(tsr_session *s, const tsr_run_options *ro, tsr_value **out) {
    static float x[1024 * 1024];
    const int64_t dims[4] = {1, 1, 1024, 1024};
    tsr_tensor t = {.struct_size = sizeof t,
                    .elem_type = TSR_FLOAT,
                    .rank = 4,
                    .dims = dims,
                    .data = x,
                    .nbytes = sizeof x,
                    .memory_kind = TSR_MEMORY_HOST};
    const char *name = "x";
    const tsr_tensor *in = &t;
    return tsr_session_run_with_options(s, ro, 1, &name, &in, 1, NULL, out);
}

/* y = Relu(x) + x on abi_relu_add.onnx, worked out by hand. */
static void check_relu_add(tsr_session *s, const tsr_run_options *ro) {
    const float x[6] = {-1, 2, -3, 4, -5, 6}, want[6] = {-1, 4, -3, 8, -5, 12};
    const int64_t dims[2] = {2, 3};
    tsr_tensor t = {.struct_size = sizeof t,
                    .elem_type = TSR_FLOAT,
                    .rank = 2,
                    .dims = dims,
                    .data = (void *)x,
                    .nbytes = sizeof x,
                    .memory_kind = TSR_MEMORY_HOST};
    const char *name = "x";
    const tsr_tensor *in = &t;
    tsr_value *out = NULL;
    tsr_status *st = tsr_session_run_with_options(s, ro, 1, &name, &in, 1, NULL, &out);
    CU_ASSERT_PTR_NULL_FATAL(st);
    tsr_tensor y = {.struct_size = sizeof y};
    CU_ASSERT_PTR_NULL_FATAL(tsr_value_tensor(out, &y));
    CU_ASSERT_EQUAL_FATAL(y.nbytes, sizeof want);
    CU_ASSERT(memcmp(y.data, want, sizeof want) == 0);
    tsr_value_free(out);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void test_deadline_inside_kernel(void) {
    tsr_session *s = open_model("abi_slow_pool.onnx", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    tsr_run_options *ro;
    CU_ASSERT_PTR_NULL_FATAL(tsr_run_options_create(&ro));
    CU_ASSERT_PTR_NULL(tsr_run_options_set_timeout_ms(ro, 100));
    tsr_value *out = NULL;
    double t0 = now();
    tsr_status *st = run_slow_pool(s, ro, &out);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_CANCELLED);
    CU_ASSERT_PTR_NULL(out);
    /* the kernel looks every 2^20 taps: well under a second past the deadline */
    CU_ASSERT(now() - t0 < 30.0);
    CU_ASSERT_PTR_NOT_NULL(strstr(tsr_status_message(st), "bigpool"));
    tsr_status_free(st);
    tsr_run_options_free(ro);
    tsr_session_free(s);
}

/* Runs `path` with every input zero-filled (shapes from the model) under
 * run options ro. */
static tsr_status *run_zeros(tsr_session *s, const tsr_run_options *ro, tsr_value **outs) {
    size_t n = tsr_session_input_count(s);
    const char *names[8];
    tsr_tensor ts[8];
    const tsr_tensor *ins[8];
    void *bufs[8] = {0};
    CU_ASSERT_FATAL(n <= 8);
    for (size_t i = 0; i < n; i++) {
        tsr_io_info info = {.struct_size = sizeof info};
        CU_ASSERT_PTR_NULL_FATAL(tsr_session_input_info(s, i, &info));
        size_t count = 1;
        for (int32_t d = 0; d < info.rank; d++) count *= (size_t)info.dims[d];
        size_t bytes = count * tsr_elem_type_bits(info.elem_type) / 8;
        bufs[i] = calloc(bytes ? bytes : 1, 1);
        CU_ASSERT_PTR_NOT_NULL_FATAL(bufs[i]);
        names[i] = info.name;
        ts[i] = (tsr_tensor){.struct_size = sizeof ts[i],
                             .elem_type = info.elem_type,
                             .rank = info.rank,
                             .dims = info.dims,
                             .data = bufs[i],
                             .nbytes = bytes,
                             .memory_kind = TSR_MEMORY_HOST};
        ins[i] = &ts[i];
    }
    tsr_status *st = tsr_session_run_with_options(s, ro, n, names, ins, tsr_session_output_count(s), NULL, outs);
    for (size_t i = 0; i < n; i++) free(bufs[i]);
    return st;
}

/* tests/data/slow (make_slow_models.py): one node each whose naive kernel
 * takes from many seconds to hours. A 100 ms deadline must stop each inside
 * its kernel (the message is the kernel's own), not after it. */
static void test_deadline_inside_each_heavy_kernel(void) {
    static const char *const models[][2] = {
        {"slow/slow_matmul.onnx", "bigmatmul"},       {"slow/slow_gemm.onnx", "biggemm"},
        {"slow/slow_conv.onnx", "bigconv"},           {"slow/slow_conv_transpose.onnx", "bigdeconv"},
        {"slow/slow_einsum.onnx", "bigeinsum"},       {"slow/slow_lstm.onnx", "biglstm"},
        {"slow/slow_matmulinteger.onnx", "bigmmint"}, {"slow/slow_convinteger.onnx", "bigconvint"},
        {"slow/slow_attention.onnx", "bigattention"}, {"slow/slow_nms.onnx", "bignms"},
    };
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
        tsr_session *s = open_model(models[m][0], 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        tsr_run_options *ro;
        CU_ASSERT_PTR_NULL_FATAL(tsr_run_options_create(&ro));
        CU_ASSERT_PTR_NULL(tsr_run_options_set_timeout_ms(ro, 100));
        tsr_value *outs[4] = {NULL};
        double t0 = now();
        tsr_status *st = run_zeros(s, ro, outs);
        double took = now() - t0;
        CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_CANCELLED);
        const char *msg = tsr_status_message(st);
        CU_ASSERT_PTR_NOT_NULL(msg && strstr(msg, models[m][1]));
        CU_ASSERT_PTR_NOT_NULL(msg && strstr(msg, "stopped: the run was cancelled"));
        /* the kernels look every 2^26 multiply-adds or so: far under a second
         * past the deadline, even under the sanitizers */
        CU_ASSERT(took < 30.0);
        if (tsr_status_code(st) != TSR_ERR_CANCELLED || took >= 30.0)
            fprintf(stderr, "%s: %.2f s, %s\n", models[m][0], took, msg ? msg : "(no error)");
        CU_ASSERT_PTR_NULL(outs[0]);
        tsr_status_free(st);
        tsr_run_options_free(ro);
        tsr_session_free(s);
    }
}

typedef struct stopper {
    tsr_run_options *ro;
} stopper;

static void *stop_later(void *arg) {
    struct timespec t = {0, 100 * 1000 * 1000};
    nanosleep(&t, NULL);
    tsr_status_free(tsr_run_options_set_terminate(((stopper *)arg)->ro, 1));
    return NULL;
}

static void test_terminate_from_another_thread(void) {
    tsr_session *s = open_model("abi_slow_pool.onnx", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    tsr_run_options *ro;
    CU_ASSERT_PTR_NULL_FATAL(tsr_run_options_create(&ro));
    stopper sp = {ro};
    pthread_t th;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, stop_later, &sp), 0);
    tsr_value *out = NULL;
    tsr_status *st = run_slow_pool(s, ro, &out);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_CANCELLED);
    CU_ASSERT_PTR_NULL(out);
    tsr_status_free(st);
    tsr_session_free(s);

    /* the flag stays: the next run stops before its first node; cleared, it runs */
    s = open_model("abi_relu_add.onnx", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    const float x[6] = {0};
    const int64_t dims[2] = {2, 3};
    tsr_tensor t = {.struct_size = sizeof t,
                    .elem_type = TSR_FLOAT,
                    .rank = 2,
                    .dims = dims,
                    .data = (void *)x,
                    .nbytes = sizeof x,
                    .memory_kind = TSR_MEMORY_HOST};
    const char *name = "x";
    const tsr_tensor *in = &t;
    st = tsr_session_run_with_options(s, ro, 1, &name, &in, 1, NULL, &out);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_CANCELLED);
    CU_ASSERT_PTR_NOT_NULL(strstr(tsr_status_message(st), "terminate was asked"));
    tsr_status_free(st);
    CU_ASSERT_PTR_NULL(tsr_run_options_set_terminate(ro, 0));
    check_relu_add(s, ro);
    check_relu_add(s, NULL);
    tsr_run_options_free(ro);
    tsr_session_free(s);
}

/* A Loop of 2^40 iterations stops at an iteration boundary. */
static void test_deadline_between_loop_iterations(void) {
    tsr_session *s = open_model("abi_nested_cf.onnx", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    float x[2] = {1, -1}, a0[2] = {0, 0};
    int64_t n = (int64_t)1 << 40;
    uint8_t c = 1;
    const int64_t d2[1] = {2};
    tsr_tensor tx = {.struct_size = sizeof tx,
                     .elem_type = TSR_FLOAT,
                     .rank = 1,
                     .dims = d2,
                     .data = x,
                     .nbytes = sizeof x,
                     .memory_kind = TSR_MEMORY_HOST};
    tsr_tensor ta = tx;
    ta.data = a0;
    tsr_tensor tn = {.struct_size = sizeof tn,
                     .elem_type = TSR_INT64,
                     .rank = 0,
                     .data = &n,
                     .nbytes = sizeof n,
                     .memory_kind = TSR_MEMORY_HOST};
    tsr_tensor tc = {.struct_size = sizeof tc,
                     .elem_type = TSR_BOOL,
                     .rank = 0,
                     .data = &c,
                     .nbytes = 1,
                     .memory_kind = TSR_MEMORY_HOST};
    const char *names[4] = {"x", "n", "c", "a0"};
    const tsr_tensor *ins[4] = {&tx, &tn, &tc, &ta};
    tsr_run_options *ro;
    CU_ASSERT_PTR_NULL_FATAL(tsr_run_options_create(&ro));
    CU_ASSERT_PTR_NULL(tsr_run_options_set_timeout_ms(ro, 50));
    tsr_value *out = NULL;
    tsr_status *st = tsr_session_run_with_options(s, ro, 4, names, ins, 1, NULL, &out);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_CANCELLED);
    CU_ASSERT_PTR_NOT_NULL(strstr(tsr_status_message(st), "Loop 'loop0' iteration"));
    CU_ASSERT_PTR_NOT_NULL(strstr(tsr_status_message(st), "deadline (50 ms)"));
    CU_ASSERT_PTR_NULL(out);
    tsr_status_free(st);
    tsr_run_options_free(ro);
    tsr_session_free(s);
}

static void test_tag_in_profile(void) {
    tsr_session *s = open_model("abi_relu_add.onnx", 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    tsr_run_options *ro;
    CU_ASSERT_PTR_NULL_FATAL(tsr_run_options_create(&ro));
    CU_ASSERT_PTR_NULL(tsr_run_options_set_tag(ro, "request \"42\""));
    check_relu_add(s, ro);
    char *json = NULL;
    CU_ASSERT_PTR_NULL_FATAL(tsr_session_profile_take(s, &json));
    CU_ASSERT_PTR_NOT_NULL(strstr(json, "\"tag\":\"request \\\"42\\\"\""));
    free(json);
    check_relu_add(s, NULL); /* untagged: no tag */
    CU_ASSERT_PTR_NULL_FATAL(tsr_session_profile_take(s, &json));
    CU_ASSERT_PTR_NULL(strstr(json, "\"tag\""));
    free(json);
    tsr_run_options_free(ro);
    tsr_session_free(s);
}

/* abi_relu_add.onnx: r = Relu(x) and y = r + x, 24 bytes each, both live
 * while the Add runs; y is handed to the caller. */
static void test_working_bytes(void) {
    tsr_session *s = open_model("abi_relu_add.onnx", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    uint64_t peak = 1, left = 1;
    CU_ASSERT_PTR_NULL(tsr_session_working_bytes(s, &peak, &left));
    CU_ASSERT_EQUAL(peak, 0); /* no run yet */
    check_relu_add(s, NULL);
    CU_ASSERT_PTR_NULL(tsr_session_working_bytes(s, &peak, &left));
    CU_ASSERT_EQUAL(peak, 48);
    CU_ASSERT_EQUAL(left, 0);
    tsr_status *st = tsr_session_working_bytes(s, NULL, &left);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_ARGUMENT);
    tsr_status_free(st);
    tsr_session_free(s);
}

static void test_bad_options(void) {
    tsr_run_options *ro;
    CU_ASSERT_PTR_NULL_FATAL(tsr_run_options_create(&ro));
    tsr_status *st = tsr_run_options_set_timeout_ms(ro, -1);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_ARGUMENT);
    tsr_status_free(st);
    char long_tag[400];
    memset(long_tag, 'a', sizeof long_tag - 1);
    long_tag[sizeof long_tag - 1] = 0;
    st = tsr_run_options_set_tag(ro, long_tag);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_ARGUMENT);
    tsr_status_free(st);
    CU_ASSERT_PTR_NULL(tsr_run_options_set_tag(ro, NULL));
    st = tsr_run_options_set_terminate(NULL, 1);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_ARGUMENT);
    tsr_status_free(st);
    tsr_run_options_free(ro);
    tsr_run_options_free(NULL);
}

void unit_register(void) {
    CU_pSuite s = CU_add_suite("run_options", suite_init, NULL);
    CU_add_test(s, "a deadline stops a long kernel", test_deadline_inside_kernel);
    CU_add_test(s, "a deadline stops every heavy reference kernel inside it", test_deadline_inside_each_heavy_kernel);
    CU_add_test(s, "terminate from another thread stops a run", test_terminate_from_another_thread);
    CU_add_test(s, "a deadline stops a Loop between iterations", test_deadline_between_loop_iterations);
    CU_add_test(s, "a run's tag is in its profile events", test_tag_in_profile);
    CU_add_test(s, "bad run options are refused", test_bad_options);
    CU_add_test(s, "a run's working bytes are reported", test_working_bytes);
}
