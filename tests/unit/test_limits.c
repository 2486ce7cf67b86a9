/* The session limits of tsr_session_options_set_limit: their names and
 * ranges, and for each one a model just within it (which runs) and just
 * over it (a status naming the limit, its value, the size found and the
 * model element, never a crash or an allocation without bound). Models:
 * tests/data/make_limit_models.py (tests/data/limits/); graph_depth has its
 * own file, test_limits_depth.c. */
#include <CUnit/CUnit.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session.h"
#include "tessera/tessera.h"

static const char *data_path(const char *name) {
    static char buf[1024];
    const char *dir = getenv("TESSERA_TEST_DATA");
    snprintf(buf, sizeof buf, "%s/limits/%s", dir && *dir ? dir : "tests/data", name);
    return buf;
}

static int suite_init(void) {
    const char *lib = getenv("TESSERA_BUILD_LIB");
    return setenv("TESSERA_PROVIDER_PATH", lib && *lib ? lib : "build/lib", 1) == 0 ? 0 : 1;
}

/* Options on the reference provider with one limit set (none when name is NULL). */
static tsr_session_options *options(const char *name, int64_t value) {
    tsr_session_options *o = NULL;
    CU_ASSERT_PTR_NULL_FATAL(tsr_session_options_create(&o));
    CU_ASSERT_PTR_NULL(tsr_session_options_add_provider(o, "reference"));
    CU_ASSERT_PTR_NULL(tsr_session_options_set_log_level(o, TSR_LOG_ERROR));
    if (name) CU_ASSERT_PTR_NULL(tsr_session_options_set_limit(o, name, value));
    return o;
}

/* st failed with `code` and has every string of want (NULL-terminated). */
static void expect_status(tsr_status *st, int32_t code, const char *const *want) {
    CU_ASSERT_PTR_NOT_NULL_FATAL(st);
    CU_ASSERT_EQUAL(tsr_status_code(st), code);
    const char *msg = tsr_status_message(st);
    for (size_t i = 0; want[i]; i++) {
        if (!strstr(msg, want[i])) fprintf(stderr, "\n  wanted \"%s\" in \"%s\"\n", want[i], msg);
        CU_ASSERT_PTR_NOT_NULL(strstr(msg, want[i]));
    }
    tsr_status_free(st);
}

/* Runs s once on x (float[n], values 1, -1, 2, -2, ...): the status. */
static tsr_status *run_once(tsr_session *s, size_t n) {
    float *x = malloc(n * sizeof *x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    for (size_t i = 0; i < n; i++) x[i] = (float)((i / 2 + 1) * (i % 2 ? -1 : 1));
    int64_t dims[1] = {(int64_t)n};
    tsr_tensor t = {sizeof t, TSR_FLOAT, 1, dims, x, n * sizeof *x, TSR_MEMORY_HOST, 0};
    const char *names[1] = {"x"};
    const tsr_tensor *ins[1] = {&t};
    tsr_value *y = NULL;
    tsr_status *st = tsr_session_run(s, 1, names, ins, 1, NULL, &y);
    tsr_value_free(y);
    free(x);
    return st;
}

/* A session on `model` under limit name=value (no limit when name is
 * NULL), or NULL with *st set. */
static tsr_session *open_model(const char *model, const char *name, int64_t value, tsr_status **st) {
    tsr_session_options *o = options(name, value);
    tsr_session *s = NULL;
    *st = tsr_session_create(o, data_path(model), &s);
    tsr_session_options_free(o);
    return s;
}

/* Creating (and running on float[n]) model under name=value succeeds. */
static void expect_runs(const char *model, const char *name, int64_t value, size_t n) {
    tsr_status *st;
    tsr_session *s = open_model(model, name, value, &st);
    if (st) fprintf(stderr, "\n  %s: %s\n", model, tsr_status_message(st));
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    if (!s) return;
    st = run_once(s, n);
    if (st) fprintf(stderr, "\n  %s, run: %s\n", model, tsr_status_message(st));
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    tsr_session_free(s);
}

/* --- names and ranges ------------------------------------------------------ */

static void test_names(void) {
    static const char *const names[] = {"tensor_bytes", "working_bytes",  "model_bytes",   "external_bytes",
                                        "graph_depth",  "function_nodes", "function_depth", "fold_bytes"};
    tsr_session_options *o = options(NULL, 0);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        CU_ASSERT_PTR_NULL(tsr_session_options_set_limit(o, names[i], 7));
    const char *const unknown[] = {"no limit named 'heap_bytes'",
                                   "(known: tensor_bytes, working_bytes, model_bytes, external_bytes, "
                                   "graph_depth, function_nodes, function_depth, fold_bytes)",
                                   NULL};
    expect_status(tsr_session_options_set_limit(o, "heap_bytes", 5), TSR_ERR_INVALID_ARGUMENT, unknown);
    const char *const zero[] = {"limit model_bytes=0: a limit is > 0", NULL};
    expect_status(tsr_session_options_set_limit(o, "model_bytes", 0), TSR_ERR_INVALID_ARGUMENT, zero);
    const char *const negative[] = {"limit working_bytes=-1", NULL};
    expect_status(tsr_session_options_set_limit(o, "working_bytes", -1), TSR_ERR_INVALID_ARGUMENT, negative);
    const char *const deep[] = {"limit graph_depth=257: at most 256", NULL};
    expect_status(tsr_session_options_set_limit(o, "graph_depth", 257), TSR_ERR_INVALID_ARGUMENT, deep);
    const char *const fdeep[] = {"limit function_depth=1025: at most 1024", NULL};
    expect_status(tsr_session_options_set_limit(o, "function_depth", 1025), TSR_ERR_INVALID_ARGUMENT, fdeep);
    /* the values set are the session options' */
    CU_ASSERT_EQUAL(o->max_tensor_bytes, 7);
    CU_ASSERT_EQUAL(o->max_working_bytes, 7);
    CU_ASSERT_EQUAL(o->limits.model_bytes, 7);
    CU_ASSERT_EQUAL(o->limits.external_bytes, 7);
    CU_ASSERT_EQUAL(o->limits.graph_depth, 7);
    CU_ASSERT_EQUAL(o->limits.function_nodes, 7);
    CU_ASSERT_EQUAL(o->limits.function_depth, 7);
    tsr_session_options_free(o);
    /* and the defaults */
    o = options(NULL, 0);
    CU_ASSERT_EQUAL(o->max_tensor_bytes, (uint64_t)16 << 30);
    CU_ASSERT_EQUAL(o->max_working_bytes, (uint64_t)64 << 30);
    CU_ASSERT_EQUAL(o->limits.model_bytes, (uint64_t)4 << 30);
    CU_ASSERT_EQUAL(o->limits.external_bytes, (uint64_t)64 << 30);
    CU_ASSERT_EQUAL(o->limits.graph_depth, 64);
    CU_ASSERT_EQUAL(o->limits.function_nodes, 1000000);
    CU_ASSERT_EQUAL(o->limits.function_depth, 64);
    tsr_session_options_free(o);
}

/* --- model_bytes ------------------------------------------------------------- */

static void test_model_bytes(void) {
    /* chain.onnx is 118 bytes */
    tsr_status *st;
    const char *const over[] = {"chain.onnx' is 118 bytes", "over the model_bytes limit (117)", NULL};
    CU_ASSERT_PTR_NULL(open_model("chain.onnx", "model_bytes", 117, &st));
    expect_status(st, TSR_ERR_NO_MEMORY, over);
    expect_runs("chain.onnx", "model_bytes", 118, 1024);

    /* the bytes given to create-from-memory */
    FILE *f = fopen(data_path("chain.onnx"), "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char bytes[256];
    size_t n = fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    CU_ASSERT_EQUAL_FATAL(n, 118);
    tsr_session_options *o = options("model_bytes", 100);
    tsr_session *s = NULL;
    const char *const buffer[] = {"the model buffer is 118 bytes", "over the model_bytes limit (100)", NULL};
    expect_status(tsr_session_create_from_buffer(o, bytes, n, NULL, &s), TSR_ERR_NO_MEMORY, buffer);
    CU_ASSERT_PTR_NULL(s);
    tsr_session_options_free(o);

    /* An 8 GiB file (sparse: no disk space) under the 4 GiB default: refused
     * from its fstat size, before anything is mapped or read. */
    char path[] = "/tmp/tessera_model_bytes_XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL_FATAL(ftruncate(fd, (off_t)8 << 30), 0);
    close(fd);
    o = options(NULL, 0);
    const char *const huge[] = {"is 8589934592 bytes", "over the model_bytes limit (4294967296)", NULL};
    expect_status(tsr_session_create(o, path, &s), TSR_ERR_NO_MEMORY, huge);
    tsr_session_options_free(o);
    unlink(path);
}

/* --- external_bytes -------------------------------------------------------- */

static void test_external_bytes(void) {
    /* ext_two.onnx reads 256 + 256 bytes of ext_two.bin */
    tsr_status *st;
    const char *const over[] = {"graph.initializer[1] 'w2'", "external data of 256 bytes", "512 bytes read in all",
                                "over the external_bytes limit (511)", NULL};
    CU_ASSERT_PTR_NULL(open_model("ext_two.onnx", "external_bytes", 511, &st));
    expect_status(st, TSR_ERR_NO_MEMORY, over);
    const char *const first[] = {"graph.initializer[0] 'w1'", "over the external_bytes limit (255)", NULL};
    CU_ASSERT_PTR_NULL(open_model("ext_two.onnx", "external_bytes", 255, &st));
    expect_status(st, TSR_ERR_NO_MEMORY, first);
    expect_runs("ext_two.onnx", "external_bytes", 512, 64);
}

/* --- working_bytes --------------------------------------------------------- */

static void test_working_bytes(void) {
    /* chain.onnx, x float[1024]: a = Relu(x), b = Relu(a), y = Add(a, b);
     * 'add' runs with a and b live (8192 bytes) and asks for 4096 more. */
    tsr_status *st;
    tsr_session *s = open_model("chain.onnx", "working_bytes", 12287, &st);
    CU_ASSERT_PTR_NULL(st);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    const char *const over[] = {"node 'add' (Add)", "an output of 4096 bytes, with 8192 bytes live",
                                "would make 12288 bytes", "over the working_bytes limit (12287)", NULL};
    expect_status(run_once(s, 1024), TSR_ERR_NO_MEMORY, over);
    CU_ASSERT_EQUAL(s->working_left, 0); /* everything charged was given back */
    tsr_session_free(s);

    s = open_model("chain.onnx", "working_bytes", 12288, &st);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_PTR_NULL(st = run_once(s, 1024));
    tsr_status_free(st);
    CU_ASSERT_EQUAL(s->working_peak, 12288);
    CU_ASSERT_EQUAL(s->working_left, 0);
    /* runs are counted each on its own: a second one fits as well */
    CU_ASSERT_PTR_NULL(st = run_once(s, 1024));
    tsr_status_free(st);
    CU_ASSERT_EQUAL(s->working_peak, 12288);
    tsr_session_free(s);
}

/* A provider's own memory counts too (host run_charge): on onednn (or
 * opencl) the chain is one piece whose intermediate a = Relu(x) (4096
 * bytes, read twice, so kept) lives in the plan's arena (a device buffer)
 * beside the 4096-byte output y, so a run
 * holds at least 8192 bytes (4096 before run_charge: the output alone);
 * a limit one byte under the run's peak stops it, naming the memory. */
static void provider_memory_on(const char *provider) {
    tsr_session_options *o = NULL;
    CU_ASSERT_PTR_NULL_FATAL(tsr_session_options_create(&o));
    CU_ASSERT_PTR_NULL(tsr_session_options_add_provider(o, provider));
    CU_ASSERT_PTR_NULL(tsr_session_options_add_provider(o, "reference"));
    CU_ASSERT_PTR_NULL(tsr_session_options_set_log_level(o, TSR_LOG_ERROR));
    tsr_session *s = NULL;
    tsr_status *st = tsr_session_create(o, data_path("chain.onnx"), &s);
    if (st && strstr(tsr_status_message(st), "not found")) { /* a build without that provider (sanitizers) */
        tsr_status_free(st);
        tsr_session_options_free(o);
        return;
    }
    CU_ASSERT_PTR_NULL_FATAL(st);
    CU_ASSERT_PTR_NULL(st = run_once(s, 1024));
    tsr_status_free(st);
    uint64_t peak = s->working_peak;
    CU_ASSERT(peak >= 8192);
    CU_ASSERT_EQUAL(s->working_left, 0);
    tsr_session_free(s);
    CU_ASSERT_PTR_NULL(tsr_session_options_set_limit(o, "working_bytes", (int64_t)peak - 1));
    CU_ASSERT_PTR_NULL_FATAL(st = tsr_session_create(o, data_path("chain.onnx"), &s));
    const char *const over[] = {"over the working_bytes limit", NULL};
    expect_status(run_once(s, 1024), TSR_ERR_NO_MEMORY, over);
    CU_ASSERT_EQUAL(s->working_left, 0);
    tsr_session_free(s);
    CU_ASSERT_PTR_NULL(tsr_session_options_set_limit(o, "working_bytes", (int64_t)peak));
    CU_ASSERT_PTR_NULL_FATAL(st = tsr_session_create(o, data_path("chain.onnx"), &s));
    CU_ASSERT_PTR_NULL(st = run_once(s, 1024));
    tsr_status_free(st);
    tsr_session_free(s);
    tsr_session_options_free(o);
}

static void test_working_bytes_provider_memory(void) {
    provider_memory_on("onednn");
    provider_memory_on("opencl"); /* its intermediates are device buffers */
}

/* Inside a Loop body: 16 iterations each leave a float[1024] scan output
 * (4096 bytes; 64 KiB in all), then stacked into y (64 KiB more). */
static void test_working_bytes_loop(void) {
    tsr_status *st;
    tsr_session *s = open_model("loop_scan.onnx", "working_bytes", 40000, &st);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    const char *const body[] = {"Loop 'loop' iteration 9", "node 'body_relu' (Relu)",
                                "over the working_bytes limit (40000)", NULL};
    expect_status(run_once(s, 1024), TSR_ERR_NO_MEMORY, body);
    CU_ASSERT_EQUAL(s->working_left, 0);
    tsr_session_free(s);

    /* the items fit (16 x 4097 with each iteration's condition), their
     * stacked copy does not */
    s = open_model("loop_scan.onnx", "working_bytes", 100000, &st);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    const char *const stack[] = {"Loop 'loop' scan output 0 of 65536 bytes", "over the working_bytes limit (100000)",
                                 NULL};
    expect_status(run_once(s, 1024), TSR_ERR_NO_MEMORY, stack);
    CU_ASSERT_EQUAL(s->working_left, 0);
    tsr_session_free(s);

    s = open_model("loop_scan.onnx", NULL, 0, &st);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_PTR_NULL(st = run_once(s, 1024));
    tsr_status_free(st);
    CU_ASSERT(s->working_peak >= 2 * 65536 && s->working_peak < 2 * 65536 + 8192);
    CU_ASSERT_EQUAL(s->working_left, 0);
    tsr_session_free(s);
}

/* --- function_nodes and function_depth ------------------------------------- */

static void test_function_nodes(void) {
    /* fn_wide.onnx: ten calls of a two-node function, 20 nodes made */
    tsr_status *st;
    const char *const over[] = {"node 'call7'", "would make more than 15 nodes", "over the function_nodes limit (15)",
                                NULL};
    CU_ASSERT_PTR_NULL(open_model("fn_wide.onnx", "function_nodes", 15, &st));
    expect_status(st, TSR_ERR_NO_MEMORY, over);
    expect_runs("fn_wide.onnx", "function_nodes", 20, 4);

    /* fn_doubling.onnx: one call that would expand to 2^20 nodes */
    const char *const grow[] = {"of node 'grow'", "over the function_nodes limit (1000)", NULL};
    CU_ASSERT_PTR_NULL(open_model("fn_doubling.onnx", "function_nodes", 1000, &st));
    expect_status(st, TSR_ERR_NO_MEMORY, grow);
}

static void test_function_depth(void) {
    /* fn_chain.onnx: F1 calls F2 ... calls F80 */
    tsr_status *st;
    const char *const over[] = {"node 'call'", "function local.F1 calls functions more than 64 levels deep",
                                "over the function_depth limit (64)", NULL};
    CU_ASSERT_PTR_NULL(open_model("fn_chain.onnx", NULL, 0, &st));
    expect_status(st, TSR_ERR_INVALID_MODEL, over);
    const char *const over79[] = {"more than 79 levels deep", "over the function_depth limit (79)", NULL};
    CU_ASSERT_PTR_NULL(open_model("fn_chain.onnx", "function_depth", 79, &st));
    expect_status(st, TSR_ERR_INVALID_MODEL, over79);
    expect_runs("fn_chain.onnx", "function_depth", 80, 4);
}

void unit_register(void) {
    CU_pSuite s = CU_add_suite("limits", suite_init, NULL);
    CU_add_test(s, "names, ranges and defaults", test_names);
    CU_add_test(s, "model_bytes: file (by its fstat size) and buffer", test_model_bytes);
    CU_add_test(s, "external_bytes: all external data together", test_external_bytes);
    CU_add_test(s, "working_bytes: tensors live at once", test_working_bytes);
    CU_add_test(s, "working_bytes: inside a Loop body and its results", test_working_bytes_loop);
    CU_add_test(s, "working_bytes: a provider's own memory (onednn, opencl)", test_working_bytes_provider_memory);
    CU_add_test(s, "function_nodes: nodes expansion makes", test_function_nodes);
    CU_add_test(s, "function_depth: functions calling functions", test_function_depth);
}
