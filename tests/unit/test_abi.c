/* The provider ABI from the outside: loading plugins that misbehave in each
 * way the host must survive (the .c files in tests/plugins), negotiation, options,
 * discovery, falling back when a compile fails, and graph_to_onnx. */
#include <CUnit/CUnit.h>
#include <dlfcn.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph_view.h"
#include "host_api.h"
#include "host_log.h"
#include "onnx_writer.h"
#include "session.h"
#include "tessera/tessera.h"

/* --- paths ----------------------------------------------------------------- */

static char path_buf[8][1024];
static int path_next;

/* A rotating buffer, so a few paths can be live at once. */
static const char *fmt_path(const char *dir, const char *name) {
    char *b = path_buf[path_next++ & 7];
    snprintf(b, sizeof path_buf[0], "%.800s/%.200s", dir, name);
    return b;
}

static const char *env_or(const char *name, const char *dflt) {
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

static const char *lib_dir(void) { return env_or("TESSERA_BUILD_LIB", "build/lib"); }
static const char *data_path(const char *name) { return fmt_path(env_or("TESSERA_TEST_DATA", "tests/data"), name); }

/* tests/plugins/<name>.c is built as <build>/test-plugins/<name>.so. */
static const char *plugin_path(const char *name) {
    char file[128];
    snprintf(file, sizeof file, "%s.so", name);
    const char *dir = getenv("TESSERA_TEST_PLUGINS");
    if (dir && *dir) return fmt_path(dir, file);
    static char guess[1024];
    snprintf(guess, sizeof guess, "%.700s/../test-plugins", lib_dir());
    return fmt_path(guess, file);
}

/* --- capturing the log (host_log writes to stderr) -------------------------- */

typedef struct capture {
    int saved;
    FILE *tmp;
} capture;

static void capture_begin(capture *c) {
    fflush(stderr);
    c->tmp = tmpfile();
    c->saved = dup(2);
    if (c->tmp && c->saved >= 0) dup2(fileno(c->tmp), 2);
}

/* The captured text, malloc'd (never NULL). It is echoed so ctest logs keep it. */
static char *capture_end(capture *c) {
    fflush(stderr);
    if (c->saved >= 0) {
        dup2(c->saved, 2);
        close(c->saved);
    }
    char *text = calloc(1, 1);
    if (!c->tmp) return text;
    long n = ftell(c->tmp);
    if (n > 0) {
        free(text);
        text = calloc(1, (size_t)n + 1);
        rewind(c->tmp);
        if (text && fread(text, 1, (size_t)n, c->tmp) != (size_t)n) text[0] = 0;
    }
    fclose(c->tmp);
    if (text && text[0]) fprintf(stderr, "[captured log] %s", text);
    return text ? text : calloc(1, 1);
}

/* --- sessions ---------------------------------------------------------------- */

#define CONTAINS(hay, needle)                                                                                          \
    do {                                                                                                               \
        const char *h_ = (hay);                                                                                        \
        bool found_ = h_ && strstr(h_, (needle)) != NULL;                                                              \
        if (!found_) fprintf(stderr, "\n  expected \"%s\" in: %s\n", (needle), h_ ? h_ : "(null)");                    \
        CU_ASSERT(found_);                                                                                             \
    } while (0)

/* A session over `model` with providers (names or paths) in order, with
 * optional key=value options for provider `opt_prov`. */
static tsr_status *open_session(const char *model, const char *const *provs, size_t n, const char *opt_prov,
                                const char *key, const char *value, tsr_session **out) {
    tsr_session_options *o;
    tsr_status *s = tsr_session_options_create(&o);
    if (s) return s;
    for (size_t i = 0; i < n && !s; i++) s = tsr_session_options_add_provider(o, provs[i]);
    if (!s && key) s = tsr_session_options_set_provider_option(o, opt_prov, key, value);
    if (!s) s = tsr_session_create(o, data_path(model), out);
    tsr_session_options_free(o);
    return s;
}

static const float X[6] = {-1, 2, -3, 4, -5, 6};
static const int64_t DIMS23[2] = {2, 3};

/* Runs a one-input ("x", float[2,3] = X), one-output model; y gets 6 floats. */
static tsr_status *run_x(tsr_session *s, float *y) {
    tsr_tensor x = {sizeof x, TSR_FLOAT, 2, DIMS23, (void *)X, sizeof X, TSR_MEMORY_HOST, 0};
    const char *in_names[] = {"x"};
    const tsr_tensor *ins[] = {&x};
    tsr_value *out = NULL;
    tsr_status *st = tsr_session_run(s, 1, in_names, ins, 1, NULL, &out);
    if (st) {
        CU_ASSERT_PTR_NULL(out);
        return st;
    }
    tsr_tensor t = {.struct_size = sizeof t};
    st = tsr_value_tensor(out, &t);
    if (!st) {
        CU_ASSERT_EQUAL(t.elem_type, TSR_FLOAT);
        CU_ASSERT_EQUAL(t.rank, 2);
        CU_ASSERT_EQUAL(t.nbytes, 6 * sizeof(float));
        if (t.nbytes == 6 * sizeof(float)) memcpy(y, t.data, t.nbytes);
    }
    tsr_value_free(out);
    return st;
}

static void expect_floats(const float *got, const float *want, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (fabsf(got[i] - want[i]) > 1e-6f)
            fprintf(stderr, "\n  element %zu: got %g, want %g\n", i, (double)got[i], (double)want[i]);
        CU_ASSERT_DOUBLE_EQUAL(got[i], want[i], 1e-6);
    }
}

static float relu(float v) { return v > 0 ? v : 0; }

/* The provider that runs the node named `node` in session s, or NULL. */
static const char *provider_of(const tsr_session *s, const char *node) {
    for (size_t p = 0; p < s->main.part.n_pieces; p++) {
        const struct tsr_graph *v = s->main.part.pieces[p].view;
        for (size_t k = 0; k < v->n_nodes; k++)
            if (strcmp(v->nodes[k]->name, node) == 0) return s->provs[s->main.part.pieces[p].prov_index]->name;
    }
    return NULL;
}

/* A session that must fail: returns the status for the caller to inspect. */
static tsr_status *must_fail(const char *model, const char *const *provs, size_t n) {
    tsr_session *s = NULL;
    tsr_status *st = open_session(model, provs, n, NULL, NULL, NULL, &s);
    CU_ASSERT_PTR_NOT_NULL(st);
    CU_ASSERT_PTR_NULL(s);
    tsr_session_free(s);
    if (st) fprintf(stderr, "\n  [expected error] %s\n", tsr_status_message(st));
    return st;
}

static int suite_init(void) {
    /* "reference" resolves through the search path. */
    return setenv("TESSERA_PROVIDER_PATH", lib_dir(), 1) == 0 ? 0 : 1;
}

/* --- loading and negotiation ------------------------------------------------ */

static void test_reference_alone(void) {
    const char *provs[] = {"reference"};
    tsr_session *s = NULL;
    tsr_status *st = open_session("abi_relu_add.onnx", provs, 1, NULL, NULL, NULL, &s);
    CU_ASSERT_PTR_NULL_FATAL(st);
    float y[6], want[6];
    for (int i = 0; i < 6; i++) want[i] = relu(X[i]) + X[i];
    st = run_x(s, y);
    CU_ASSERT_PTR_NULL(st);
    if (!st) expect_floats(y, want, 6);
    tsr_status_free(st);
    CU_ASSERT_STRING_EQUAL(provider_of(s, "relu0"), "reference");
    tsr_session_free(s);
}

static void test_missing_file(void) {
    const char *path = "/nonexistent/dir/libtessera_provider_ghost.so";
    const char *provs[] = {path, "reference"};
    tsr_status *st = must_fail("abi_relu_add.onnx", provs, 2);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_PROVIDER);
    CONTAINS(tsr_status_message(st), path);
    CONTAINS(tsr_status_message(st), "cannot load");
    tsr_status_free(st);
}

static void test_unknown_name(void) {
    const char *provs[] = {"ghost"};
    tsr_status *st = must_fail("abi_relu_add.onnx", provs, 1);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_PROVIDER);
    CONTAINS(tsr_status_message(st), "'ghost' not found");
    CONTAINS(tsr_status_message(st), "libtessera_provider_ghost.so");
    tsr_status_free(st);
    const char *bad[] = {"Bad Name!"};
    st = must_fail("abi_relu_add.onnx", bad, 1);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_ARGUMENT);
    CONTAINS(tsr_status_message(st), "Bad Name!");
    tsr_status_free(st);
}

static void test_no_entry(void) {
    const char *path = plugin_path("plugin_no_entry");
    const char *provs[] = {path, "reference"};
    tsr_status *st = must_fail("abi_relu_add.onnx", provs, 2);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_PROVIDER);
    CONTAINS(tsr_status_message(st), path);
    CONTAINS(tsr_status_message(st), "no symbol");
    CONTAINS(tsr_status_message(st), TSR_PROVIDER_ENTRY);
    tsr_status_free(st);
}

static void test_newer_abi(void) {
    const char *path = plugin_path("plugin_newer_abi");
    const char *provs[] = {path, "reference"};
    tsr_status *st = must_fail("abi_relu_add.onnx", provs, 2);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_ABI);
    CONTAINS(tsr_status_message(st), path);
    CONTAINS(tsr_status_message(st), "refused");
    CONTAINS(tsr_status_message(st), "needs ABI 2");
    CONTAINS(tsr_status_message(st), "ABI 1..1"); /* the plugin saw the host's range */
    tsr_status_free(st);
}

static void test_bad_version(void) {
    const char *path = plugin_path("plugin_bad_version");
    const char *provs[] = {path, "reference"};
    tsr_status *st = must_fail("abi_relu_add.onnx", provs, 2);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_ABI);
    CONTAINS(tsr_status_message(st), path);
    CONTAINS(tsr_status_message(st), "ABI 99");
    tsr_status_free(st);
}

static void test_bad_table(void) {
    const char *path = plugin_path("plugin_bad_table");
    const char *provs[] = {path, "reference"};
    tsr_status *st = must_fail("abi_relu_add.onnx", provs, 2);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_ABI);
    CONTAINS(tsr_status_message(st), path);
    CONTAINS(tsr_status_message(st), "incomplete function table");
    tsr_status_free(st);
}

static void test_listed_twice(void) {
    const char *provs[] = {"reference", fmt_path(lib_dir(), "libtessera_provider_reference.so")};
    tsr_status *st = must_fail("abi_relu_add.onnx", provs, 2);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_ARGUMENT);
    CONTAINS(tsr_status_message(st), "listed twice");
    tsr_status_free(st);
}

/* --- failures inside a provider --------------------------------------------- */

static void test_fail_claim(void) {
    const char *provs[] = {plugin_path("plugin_fail_claim"), "reference"};
    tsr_status *st = must_fail("abi_relu_add.onnx", provs, 2);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_PROVIDER);
    CONTAINS(tsr_status_message(st), "'fail_claim'");
    CONTAINS(tsr_status_message(st), "claiming");
    CONTAINS(tsr_status_message(st), "claim exploded on purpose");
    tsr_status_free(st);
}

/* constant_release misused (from claim, on a non-constant, on NULL) is
 * refused each time with TSR_ERR_INVALID_ARGUMENT: the plugin's pieces
 * compile (it fails compile where the host accepted one) and run right. */
static void test_release_misuse_refused(void) {
    const char *provs[] = {plugin_path("plugin_release_misuse"), "reference"};
    tsr_session *s = NULL;
    tsr_status *st = open_session("abi_relu_add.onnx", provs, 2, NULL, NULL, NULL, &s);
    if (st) fprintf(stderr, "\n  unexpected: %s\n", tsr_status_message(st));
    CU_ASSERT_PTR_NULL_FATAL(st);
    CU_ASSERT_STRING_EQUAL(provider_of(s, "relu0"), "release_misuse");
    CU_ASSERT_STRING_EQUAL(provider_of(s, "add0"), "release_misuse");
    float y[6], want[6];
    for (int i = 0; i < 6; i++) want[i] = relu(X[i]) + X[i];
    st = run_x(s, y);
    CU_ASSERT_PTR_NULL(st);
    if (!st) expect_floats(y, want, 6);
    tsr_status_free(st);
    tsr_session_free(s);
}

/* Every piece fails to compile in fail_compile: each is handed to the
 * reference provider, a warning names both, and the numbers are right. */
static void test_fail_compile_falls_back(void) {
    const char *provs[] = {plugin_path("plugin_fail_compile"), "reference"};
    tsr_session *s = NULL;
    capture cap;
    capture_begin(&cap);
    tsr_status *st = open_session("abi_relu_add.onnx", provs, 2, NULL, NULL, NULL, &s);
    char *log = capture_end(&cap);
    if (st) fprintf(stderr, "\n  unexpected: %s\n", tsr_status_message(st));
    CU_ASSERT_PTR_NULL_FATAL(st);
    CONTAINS(log, "warning");
    CONTAINS(log, "fail_compile");
    CONTAINS(log, "failed to compile");
    CONTAINS(log, "compile of 'relu0' failed on purpose");
    CONTAINS(log, "compile of 'add0' failed on purpose");
    CONTAINS(log, "next provider");
    free(log);
    CU_ASSERT_STRING_EQUAL(provider_of(s, "relu0"), "reference");
    CU_ASSERT_STRING_EQUAL(provider_of(s, "add0"), "reference");
    float y[6], want[6];
    for (int i = 0; i < 6; i++) want[i] = relu(X[i]) + X[i]; /* {-1,4,-3,8,-5,12} */
    st = run_x(s, y);
    CU_ASSERT_PTR_NULL(st);
    if (!st) expect_floats(y, want, 6);
    tsr_status_free(st);
    tsr_session_free(s);
}

/* The same on a longer chain with an initializer and two outputs. */
static void test_fail_compile_chain(void) {
    const char *provs[] = {plugin_path("plugin_fail_compile"), "reference"};
    tsr_session *s = NULL;
    capture cap;
    capture_begin(&cap);
    tsr_status *st = open_session("exec_chain.onnx", provs, 2, NULL, NULL, NULL, &s);
    free(capture_end(&cap));
    CU_ASSERT_PTR_NULL_FATAL(st);
    for (size_t p = 0; p < s->main.part.n_pieces; p++)
        CU_ASSERT_STRING_EQUAL(s->provs[s->main.part.pieces[p].prov_index]->name, "reference");
    tsr_tensor x = {sizeof x, TSR_FLOAT, 2, DIMS23, (void *)X, sizeof X, TSR_MEMORY_HOST, 0};
    const char *in_names[] = {"x"};
    const tsr_tensor *ins[] = {&x};
    const char *out_names[] = {"y"};
    tsr_value *out = NULL;
    st = tsr_session_run(s, 1, in_names, ins, 1, out_names, &out);
    CU_ASSERT_PTR_NULL(st);
    if (!st) {
        tsr_tensor t = {.struct_size = sizeof t};
        CU_ASSERT_PTR_NULL(tsr_value_tensor(out, &t));
        const float want[6] = {1, 4, 4, 13, 0, 22}; /* see test_executor.c */
        if (t.nbytes == sizeof want) expect_floats(t.data, want, 6);
        else CU_FAIL("wrong output size");
    }
    tsr_status_free(st);
    tsr_value_free(out);
    tsr_session_free(s);
}

static void test_fail_run(void) {
    const char *provs[] = {plugin_path("plugin_fail_run"), "reference"};
    tsr_session *s = NULL;
    tsr_status *st = open_session("abi_relu_add.onnx", provs, 2, NULL, NULL, NULL, &s);
    CU_ASSERT_PTR_NULL_FATAL(st);
    CU_ASSERT_STRING_EQUAL(provider_of(s, "relu0"), "fail_run");
    CU_ASSERT_STRING_EQUAL(provider_of(s, "add0"), "reference");
    float y[6];
    for (int round = 0; round < 2; round++) { /* and the session survives it */
        st = run_x(s, y);
        CU_ASSERT_PTR_NOT_NULL(st);
        if (st) fprintf(stderr, "\n  [expected error] %s\n", tsr_status_message(st));
        CONTAINS(tsr_status_message(st), "'fail_run'");
        CONTAINS(tsr_status_message(st), "'relu0'");
        CONTAINS(tsr_status_message(st), "Relu");
        CONTAINS(tsr_status_message(st), "run failed on purpose");
        CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_RUNTIME);
        tsr_status_free(st);
    }
    tsr_session_free(s);
}

/* --- an older plugin --------------------------------------------------------- */

static void test_old_struct(void) {
    const char *provs[] = {plugin_path("plugin_old_struct"), "reference"};
    tsr_session *s = NULL;
    tsr_status *st = open_session("abi_relu_add.onnx", provs, 2, NULL, NULL, NULL, &s);
    if (st) fprintf(stderr, "\n  unexpected: %s\n", tsr_status_message(st));
    CU_ASSERT_PTR_NULL_FATAL(st);
    CU_ASSERT_STRING_EQUAL(provider_of(s, "relu0"), "old_struct");
    CU_ASSERT_EQUAL(s->plugins[0]->vt->struct_size, offsetof(tsr_provider, mem_alloc));
    CU_ASSERT_PTR_NULL(PLUGIN_SLOT(s->plugins[0], mem_alloc));
    CU_ASSERT_PTR_NULL(PLUGIN_SLOT(s->plugins[0], copy_to_host));
    float y[6], want[6];
    for (int i = 0; i < 6; i++) want[i] = relu(X[i]) + X[i];
    st = run_x(s, y);
    CU_ASSERT_PTR_NULL(st);
    if (!st) expect_floats(y, want, 6);
    tsr_status_free(st);
    tsr_session_free(s);
}

/* A node whose output nobody reads makes a piece with no outputs: the
 * plugin allocates it as host scratch (index (size_t)-1), which the host
 * frees when the run ends (LeakSanitizer checks). */
static void test_scratch_output(void) {
    const char *provs[] = {plugin_path("plugin_options"), "reference"};
    tsr_session *s = NULL;
    tsr_status *st = open_session("abi_dangling.onnx", provs, 2, NULL, NULL, NULL, &s);
    CU_ASSERT_PTR_NULL_FATAL(st);
    CU_ASSERT_STRING_EQUAL(provider_of(s, "relu_unused"), "options");
    for (size_t p = 0; p < s->main.part.n_pieces; p++)
        if (strcmp(s->main.part.pieces[p].view->nodes[0]->name, "relu_unused") == 0)
            CU_ASSERT_EQUAL(s->main.part.pieces[p].view->n_outputs, 0);
    float y[6], want[6];
    for (int i = 0; i < 6; i++) want[i] = relu(X[i]) + X[i];
    for (int round = 0; round < 2; round++) {
        st = run_x(s, y);
        CU_ASSERT_PTR_NULL(st);
        if (!st) expect_floats(y, want, 6);
        tsr_status_free(st);
    }
    tsr_session_free(s);
}

/* --- options ----------------------------------------------------------------- */

static void test_option_scale(void) {
    const char *provs[] = {plugin_path("plugin_options"), "reference"};
    tsr_session *s = NULL;
    tsr_status *st = open_session("abi_relu_add.onnx", provs, 2, "options", "scale", "3", &s);
    CU_ASSERT_PTR_NULL_FATAL(st);
    CU_ASSERT_STRING_EQUAL(provider_of(s, "relu0"), "options");
    float y[6], want[6];
    for (int i = 0; i < 6; i++) want[i] = 3 * relu(X[i]) + X[i];
    st = run_x(s, y);
    CU_ASSERT_PTR_NULL(st);
    if (!st) expect_floats(y, want, 6);
    tsr_status_free(st);
    tsr_session_free(s);

    /* Options may also be addressed by the path the provider was added by. */
    st = open_session("abi_relu_add.onnx", provs, 2, provs[0], "scale", "0.5", &s);
    CU_ASSERT_PTR_NULL_FATAL(st);
    for (int i = 0; i < 6; i++) want[i] = 0.5f * relu(X[i]) + X[i];
    st = run_x(s, y);
    CU_ASSERT_PTR_NULL(st);
    if (!st) expect_floats(y, want, 6);
    tsr_status_free(st);
    tsr_session_free(s);
}

static void test_option_refused(void) {
    const char *provs[] = {plugin_path("plugin_options"), "reference"};
    tsr_session *s = NULL;
    tsr_status *st = open_session("abi_relu_add.onnx", provs, 2, "options", "bogus_key", "1", &s);
    CU_ASSERT_PTR_NOT_NULL(st);
    CU_ASSERT_PTR_NULL(s);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_ARGUMENT);
    CONTAINS(tsr_status_message(st), "bogus_key");
    CONTAINS(tsr_status_message(st), "'options'");
    tsr_status_free(st);

    st = open_session("abi_relu_add.onnx", provs, 2, "options", "scale", "three", &s);
    CU_ASSERT_PTR_NOT_NULL(st);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_ARGUMENT);
    CONTAINS(tsr_status_message(st), "'scale'");
    CONTAINS(tsr_status_message(st), "three");
    tsr_status_free(st);

    /* The reference provider has no options at all. */
    st = open_session("abi_relu_add.onnx", provs + 1, 1, "reference", "threads_please", "4", &s);
    CU_ASSERT_PTR_NOT_NULL(st);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_ARGUMENT);
    CONTAINS(tsr_status_message(st), "threads_please");
    tsr_status_free(st);

    /* An option for a provider the session does not have. */
    st = open_session("abi_relu_add.onnx", provs + 1, 1, "nobody", "scale", "2", &s);
    CU_ASSERT_PTR_NOT_NULL(st);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_ARGUMENT);
    CONTAINS(tsr_status_message(st), "'nobody'");
    tsr_status_free(st);

    /* Bad calls to the setter itself. */
    tsr_session_options *o;
    CU_ASSERT_PTR_NULL_FATAL(tsr_session_options_create(&o));
    st = tsr_session_options_set_provider_option(o, "options", "", "1");
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_ARGUMENT);
    tsr_status_free(st);
    st = tsr_session_options_set_provider_option(o, "options", "scale", NULL);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_ARGUMENT);
    tsr_status_free(st);
    st = tsr_session_options_add_provider(o, "");
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_ARGUMENT);
    tsr_status_free(st);
    tsr_session_options_free(o);
}

/* --- discovery --------------------------------------------------------------- */

static void test_discover(void) {
    const char *extra[] = {plugin_path("plugin_old_struct"), plugin_path("plugin_newer_abi")};
    tsr_provider_list *l = NULL;
    tsr_status *st = tsr_providers_discover(extra, 2, &l);
    CU_ASSERT_PTR_NULL_FATAL(st);
    size_t n = tsr_provider_list_size(l);
    bool ref = false, old = false, newer = false;
    for (size_t i = 0; i < n; i++) {
        tsr_provider_desc d = {.struct_size = sizeof d};
        CU_ASSERT_PTR_NULL(tsr_provider_list_get(l, i, &d));
        if (strstr(d.path, "libtessera_provider_reference.so")) {
            ref = true;
            CU_ASSERT_PTR_NULL(d.error);
            CU_ASSERT_STRING_EQUAL(d.name, "reference");
            CU_ASSERT_EQUAL(d.abi_version, 1);
            CU_ASSERT(d.device_count >= 1);
            CU_ASSERT(strncmp(d.path, lib_dir(), strlen(lib_dir())) == 0);
            tsr_device_desc dd = {.struct_size = sizeof dd};
            CU_ASSERT_PTR_NULL(tsr_provider_list_device(l, i, 0, &dd));
            CU_ASSERT(dd.name && dd.name[0]);
            CU_ASSERT_EQUAL(dd.memory_kind, TSR_MEMORY_HOST);
            tsr_status *bad = tsr_provider_list_device(l, i, d.device_count, &dd);
            CU_ASSERT_EQUAL(tsr_status_code(bad), TSR_ERR_INVALID_ARGUMENT);
            tsr_status_free(bad);
        } else if (strstr(d.path, "plugin_old_struct")) {
            old = true;
            CU_ASSERT_PTR_NULL(d.error);
            CU_ASSERT_STRING_EQUAL(d.name, "old_struct");
            CU_ASSERT_STRING_EQUAL(d.version, "0.0.1");
            CU_ASSERT_EQUAL(d.abi_version, 1);
            CU_ASSERT_EQUAL(d.device_count, 1);
        } else if (strstr(d.path, "plugin_newer_abi")) {
            newer = true; /* listed, with the reason it did not load */
            CU_ASSERT_PTR_NOT_NULL(d.error);
            CONTAINS(d.error, "needs ABI 2");
            CU_ASSERT_EQUAL(d.device_count, 0);
        }
    }
    CU_ASSERT(ref);
    CU_ASSERT(old);
    CU_ASSERT(newer);
    tsr_provider_desc d = {.struct_size = sizeof d};
    st = tsr_provider_list_get(l, n, &d);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_ARGUMENT);
    tsr_status_free(st);
    tsr_provider_list_free(l);
}

/* With no provider named, a session takes every plugin on the search path:
 * here, only the reference one. */
static void test_default_providers(void) {
    tsr_session *s = NULL;
    tsr_status *st = tsr_session_create(NULL, data_path("abi_relu_add.onnx"), &s);
    CU_ASSERT_PTR_NULL_FATAL(st);
    CU_ASSERT_FATAL(s->n_provs >= 2);
    /* plugins first, then reference, then only plugins whose device is
     * this CPU behind device memory (an OpenCL CPU driver), then the
     * core's own */
    size_t ref = 0;
    while (ref < s->n_provs && strcmp(s->provs[ref]->name, "reference") != 0) ref++;
    CU_ASSERT_FATAL(ref < s->n_provs - 1);
    for (size_t i = ref + 1; i + 1 < s->n_provs; i++)
        CU_ASSERT(s->provs[i]->memory_kind == TSR_MEMORY_DEVICE && s->provs[i]->device_kind == TSR_DEVICE_CPU);
    for (size_t i = 0; i < ref; i++)
        CU_ASSERT(!(s->provs[i]->memory_kind == TSR_MEMORY_DEVICE && s->provs[i]->device_kind == TSR_DEVICE_CPU));
    CU_ASSERT_STRING_EQUAL(s->provs[s->n_provs - 1]->name, "core");
    float y[6], want[6];
    for (int i = 0; i < 6; i++) want[i] = relu(X[i]) + X[i];
    st = run_x(s, y);
    CU_ASSERT_PTR_NULL(st);
    if (!st) expect_floats(y, want, 6);
    tsr_status_free(st);
    tsr_session_free(s);
}

/* --- a provider for an op nobody else has; graph_to_onnx from a plugin ------ */

static void test_custom_op(void) {
    const char *provs[] = {plugin_path("plugin_custom_op"), "reference"};
    tsr_session *s = NULL;
    tsr_status *st = open_session("abi_mystery.onnx", provs, 2, NULL, NULL, NULL, &s);
    if (st) fprintf(stderr, "\n  unexpected: %s\n", tsr_status_message(st));
    CU_ASSERT_PTR_NULL_FATAL(st);
    CU_ASSERT_STRING_EQUAL(provider_of(s, "mystery0"), "custom");
    CU_ASSERT_STRING_EQUAL(provider_of(s, "relu0"), "reference");
    CU_ASSERT_STRING_EQUAL(provider_of(s, "add0"), "reference");
    float y[6], want[6];
    for (int i = 0; i < 6; i++) want[i] = 3 * relu(X[i]); /* r + 2r */
    st = run_x(s, y);
    CU_ASSERT_PTR_NULL(st);
    if (!st) expect_floats(y, want, 6);
    tsr_status_free(st);
    char *text = NULL;
    CU_ASSERT_PTR_NULL(tsr_session_assignment_text(s, &text));
    CONTAINS(text, "custom");
    CONTAINS(text, "declined");
    CONTAINS(text, "Mystery");
    free(text);
    tsr_session_free(s);

    /* Without the custom provider nobody runs Mystery. */
    st = must_fail("abi_mystery.onnx", provs + 1, 1);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_NOT_SUPPORTED);
    CONTAINS(tsr_status_message(st), "'mystery0'");
    CONTAINS(tsr_status_message(st), "reference");
    tsr_status_free(st);
}

/* --- graph_to_onnx ----------------------------------------------------------- */

static ir_model *load_model(const char *name, bool infer) {
    ir_model *m = NULL;
    tsr_status *st = ir_model_load_file(data_path(name), &m);
    if (!st && infer) st = ir_infer_shapes(m->graph);
    if (st) fprintf(stderr, "\n  loading %s: %s\n", name, tsr_status_message(st));
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    return st ? (ir_model_free(m), NULL) : m;
}

static ir_node *node_named(const ir_graph *g, const char *name) {
    for (size_t i = 0; i < g->n_nodes; i++)
        if (strcmp(g->nodes[i]->name, name) == 0) return g->nodes[i];
    return NULL;
}

static ir_model *reload(const void *bytes, size_t size) {
    ir_model *m = NULL;
    tsr_status *st = ir_model_load_buffer(bytes, size, NULL, &m);
    if (st) fprintf(stderr, "\n  reloading: %s\n", tsr_status_message(st));
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    return m;
}

/* A piece of the chain (n1..n3): inputs a and k (k constant, so also an
 * initializer), outputs c and d; then the bytes run as a model. */
static void test_to_onnx_piece(void) {
    ir_model *m = load_model("exec_chain.onnx", true);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    ir_graph *g = m->graph;
    ir_node *nodes[3] = {node_named(g, "n1"), node_named(g, "n2"), node_named(g, "n3")};
    CU_ASSERT_FATAL(nodes[0] && nodes[1] && nodes[2]);
    struct tsr_graph *v = NULL;
    CU_ASSERT_PTR_NULL_FATAL(graph_view_nodes(g, nodes, 3, &v));
    void *bytes = NULL;
    size_t size = 0;
    const tsr_host_api *h = host_api_table();
    tsr_status *st = h->graph_to_onnx((const tsr_graph *)v, &bytes, &size);
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    graph_view_free(v);
    CU_ASSERT_FATAL(bytes && size);

    ir_model *r = reload(bytes, size);
    if (r) {
        const ir_graph *rg = r->graph;
        CU_ASSERT_EQUAL(rg->n_nodes, 3);
        const char *ops[] = {"Add", "Relu", "Add"}, *names[] = {"n1", "n2", "n3"};
        for (size_t i = 0; i < 3 && i < rg->n_nodes; i++) {
            CU_ASSERT_STRING_EQUAL(rg->nodes[i]->op_type, ops[i]);
            CU_ASSERT_STRING_EQUAL(rg->nodes[i]->name, names[i]);
        }
        CU_ASSERT_EQUAL(rg->n_inputs, 2);
        if (rg->n_inputs == 2) {
            CU_ASSERT_STRING_EQUAL(rg->inputs[0]->name, "a");
            CU_ASSERT_STRING_EQUAL(rg->inputs[1]->name, "k");
            CU_ASSERT_PTR_NULL(rg->inputs[0]->constant);
            const ir_value *a = rg->inputs[0];
            CU_ASSERT_EQUAL(a->type.kind, IR_TYPE_TENSOR);
            CU_ASSERT_EQUAL(a->type.elem_type, TSR_FLOAT);
            CU_ASSERT_EQUAL(a->type.rank, 2);
            if (a->type.rank == 2) {
                CU_ASSERT_EQUAL(a->type.dims[0].value, 2);
                CU_ASSERT_EQUAL(a->type.dims[1].value, 3);
            }
            const ir_tensor *k = rg->inputs[1]->constant;
            CU_ASSERT_PTR_NOT_NULL(k);
            if (k) {
                const float want[3] = {0.5f, -1.0f, 2.0f};
                CU_ASSERT_EQUAL(k->elem_type, TSR_FLOAT);
                CU_ASSERT_EQUAL(k->rank, 1);
                CU_ASSERT_EQUAL(k->nbytes, sizeof want);
                if (k->nbytes == sizeof want) expect_floats(k->data, want, 3);
            }
        }
        CU_ASSERT_EQUAL(rg->n_outputs, 2);
        if (rg->n_outputs == 2) {
            CU_ASSERT_STRING_EQUAL(rg->outputs[0]->name, "c");
            CU_ASSERT_STRING_EQUAL(rg->outputs[1]->name, "d");
        }
        CU_ASSERT_EQUAL(ir_model_opset(r, ""), 13);
        ir_model_free(r);
    }

    /* The bytes are a model of their own: feed a, get c = relu(a + k) and
     * d = c + a. */
    tsr_session_options *o;
    CU_ASSERT_PTR_NULL_FATAL(tsr_session_options_create(&o));
    CU_ASSERT_PTR_NULL(tsr_session_options_add_provider(o, "reference"));
    tsr_session *s = NULL;
    st = tsr_session_create_from_buffer(o, bytes, size, NULL, &s);
    tsr_session_options_free(o);
    if (st) fprintf(stderr, "\n  piece as a model: %s\n", tsr_status_message(st));
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    if (s) {
        CU_ASSERT_EQUAL(tsr_session_input_count(s), 1);
        const float a[6] = {0, 2, 0, 4, 0, 6};
        tsr_tensor ta = {sizeof ta, TSR_FLOAT, 2, DIMS23, (void *)a, sizeof a, TSR_MEMORY_HOST, 0};
        const char *in_names[] = {"a"};
        const tsr_tensor *ins[] = {&ta};
        tsr_value *outs[2] = {NULL, NULL};
        st = tsr_session_run(s, 1, in_names, ins, 2, NULL, outs);
        CU_ASSERT_PTR_NULL(st);
        bool ran = st == NULL;
        tsr_status_free(st);
        const float want_c[6] = {0.5f, 1, 2, 4.5f, 0, 8}, want_d[6] = {0.5f, 3, 2, 8.5f, 0, 14};
        for (int j = 0; j < 2 && ran; j++) {
            tsr_tensor t = {.struct_size = sizeof t};
            CU_ASSERT_PTR_NULL(tsr_value_tensor(outs[j], &t));
            if (t.nbytes == 6 * sizeof(float)) expect_floats(t.data, j ? want_d : want_c, 6);
            else CU_FAIL("wrong output size");
            tsr_value_free(outs[j]);
        }
        tsr_session_free(s);
    }
    free(bytes);
    ir_model_free(m);
}

/* Deep comparison of what the writer must carry over. Each check is a CUnit
 * assertion; a mismatch in a count stops the comparison of that object (so
 * nothing reads past an array) and makes the function return false. */
#define SAME(cond)                                                                                                     \
    do {                                                                                                               \
        bool ok_ = (cond);                                                                                             \
        CU_ASSERT(ok_);                                                                                                \
        if (!ok_) same = false;                                                                                        \
    } while (0)
#define SAME_OR_STOP(cond)                                                                                             \
    do {                                                                                                               \
        bool ok_ = (cond);                                                                                             \
        CU_ASSERT(ok_);                                                                                                \
        if (!ok_) return false;                                                                                        \
    } while (0)

static bool same_tensor(const ir_tensor *a, const ir_tensor *b) {
    bool same = true;
    SAME_OR_STOP(a && b);
    SAME(a->elem_type == b->elem_type);
    SAME_OR_STOP(a->rank == b->rank);
    for (int32_t d = 0; d < a->rank; d++) SAME(a->dims[d] == b->dims[d]);
    SAME_OR_STOP(a->nbytes == b->nbytes);
    if (a->elem_type == TSR_STRING) {
        const tsr_string *sa = a->data, *sb = b->data;
        for (size_t i = 0; i < a->nbytes / sizeof(tsr_string); i++)
            SAME(sa[i].size == sb[i].size && (!sa[i].size || memcmp(sa[i].data, sb[i].data, sa[i].size) == 0));
    } else if (a->nbytes) {
        SAME(memcmp(a->data, b->data, a->nbytes) == 0);
    }
    return same;
}

static bool same_graph(const ir_graph *a, const ir_graph *b);

static bool same_type(const ir_type *a, const ir_type *b) {
    bool same = true;
    SAME_OR_STOP(a->kind == b->kind);
    SAME(a->elem_type == b->elem_type);
    SAME(a->key_type == b->key_type);
    SAME_OR_STOP(a->rank == b->rank);
    for (int32_t d = 0; d < a->rank; d++) {
        SAME(a->dims[d].value == b->dims[d].value);
        SAME(!a->dims[d].symbol == !b->dims[d].symbol);
        if (a->dims[d].symbol && b->dims[d].symbol) SAME(strcmp(a->dims[d].symbol, b->dims[d].symbol) == 0);
    }
    SAME_OR_STOP(!a->elem == !b->elem);
    if (a->elem && !same_type(a->elem, b->elem)) same = false;
    return same;
}

static bool same_attr(const ir_attr *a, const ir_attr *b) {
    bool same = true;
    SAME(strcmp(a->name, b->name) == 0);
    SAME_OR_STOP(a->type == b->type);
    SAME(!a->ref_attr_name == !b->ref_attr_name);
    if (a->ref_attr_name && b->ref_attr_name) SAME(strcmp(a->ref_attr_name, b->ref_attr_name) == 0);
    SAME(a->i == b->i);
    SAME(memcmp(&a->f, &b->f, sizeof a->f) == 0); /* bit-exact, NaN included */
    SAME(a->s_len == b->s_len);
    if (a->s && b->s && a->s_len == b->s_len) SAME(memcmp(a->s, b->s, a->s_len) == 0);
    SAME_OR_STOP(a->count == b->count);
    for (size_t i = 0; i < a->count; i++) {
        if (a->ints) SAME(b->ints && a->ints[i] == b->ints[i]);
        if (a->floats) SAME(b->floats && memcmp(&a->floats[i], &b->floats[i], sizeof(float)) == 0);
        if (a->strings)
            SAME(b->strings && a->string_lens[i] == b->string_lens[i] &&
                 memcmp(a->strings[i], b->strings[i], a->string_lens[i]) == 0);
        if (a->tensors && !same_tensor(a->tensors[i], b->tensors ? b->tensors[i] : NULL)) same = false;
        if (a->graphs && !same_graph(a->graphs[i], b->graphs ? b->graphs[i] : NULL)) same = false;
    }
    if (a->t && !same_tensor(a->t, b->t)) same = false;
    if (a->g && !same_graph(a->g, b->g)) same = false;
    return same;
}

static bool same_name(const ir_value *a, const ir_value *b) { return a && b ? strcmp(a->name, b->name) == 0 : a == b; }

/* True when a node of g (or of its subgraphs) reads v, or v is an output. */
static bool used_in(const ir_graph *g, const ir_value *v) {
    for (size_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == v) return true;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        for (size_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] == v) return true;
        for (size_t k = 0; k < n->n_attrs; k++) {
            const ir_attr *at = &n->attrs[k];
            size_t count = at->g ? 1 : (at->graphs ? at->count : 0);
            for (size_t j = 0; j < count; j++) {
                const ir_graph *sg = at->g ? at->g : at->graphs[j];
                for (size_t x = 0; sg && x < sg->n_values; x++)
                    if (sg->values[x]->is_outer && sg->values[x]->outer == v && used_in(sg, sg->values[x])) return true;
            }
        }
    }
    return false;
}

static bool same_graph(const ir_graph *a, const ir_graph *b) {
    bool same = true;
    SAME_OR_STOP(a && b);
    SAME_OR_STOP(a->n_nodes == b->n_nodes);
    for (size_t i = 0; i < a->n_nodes; i++) {
        const ir_node *x = a->nodes[i], *y = b->nodes[i];
        SAME(strcmp(x->name, y->name) == 0);
        SAME(strcmp(x->op_type, y->op_type) == 0);
        SAME(strcmp(x->domain, y->domain) == 0);
        SAME(x->opset == y->opset);
        SAME_OR_STOP(x->n_inputs == y->n_inputs);
        for (size_t k = 0; k < x->n_inputs; k++) SAME(same_name(x->inputs[k], y->inputs[k]));
        SAME_OR_STOP(x->n_outputs == y->n_outputs);
        for (size_t k = 0; k < x->n_outputs; k++) SAME(same_name(x->outputs[k], y->outputs[k]));
        SAME_OR_STOP(x->n_attrs == y->n_attrs);
        for (size_t k = 0; k < x->n_attrs; k++)
            if (!same_attr(&x->attrs[k], &y->attrs[k])) same = false;
    }
    SAME_OR_STOP(a->n_outputs == b->n_outputs);
    for (size_t i = 0; i < a->n_outputs; i++) {
        SAME(same_name(a->outputs[i], b->outputs[i]));
        if (!same_type(&a->outputs[i]->type, &b->outputs[i]->type)) same = false;
    }
    SAME_OR_STOP(a->n_inputs == b->n_inputs);
    for (size_t i = 0; i < a->n_inputs; i++) {
        SAME(same_name(a->inputs[i], b->inputs[i]));
        if (!same_type(&a->inputs[i]->type, &b->inputs[i]->type)) same = false;
    }
    /* Initializers, by name; a folded Constant node nobody reads is not
     * written (it defines nothing the graph uses). */
    for (size_t i = 0; i < a->n_values; i++) {
        const ir_value *v = a->values[i];
        if (!v->constant || v->producer || v->is_outer || !used_in(a, v)) continue;
        const ir_value *w = ir_graph_find(b, v->name);
        SAME(w != NULL);
        if (w && !same_tensor(v->constant, w->constant)) same = false;
    }
    return same;
}

/* The whole graph with every attribute kind, subgraphs included, survives a
 * round trip through the writer and the loader unchanged. */
static void test_to_onnx_round_trip(void) {
    ir_model *m = load_model("abi_attrs.onnx", false);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    struct tsr_graph *v = NULL;
    CU_ASSERT_PTR_NULL_FATAL(graph_view_whole(m->graph, &v));
    void *bytes = NULL;
    size_t size = 0;
    tsr_status *st = onnx_write_view(v, &bytes, &size);
    if (st) fprintf(stderr, "\n  writing: %s\n", tsr_status_message(st));
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    graph_view_free(v);
    ir_model *r = bytes ? reload(bytes, size) : NULL;
    if (r) {
        same_graph(m->graph, r->graph);
        CU_ASSERT_EQUAL(ir_model_opset(r, ""), 13);
        CU_ASSERT_EQUAL(ir_model_opset(r, "com.example"), 1);
        const ir_node *kn = node_named(r->graph, "kitchen0");
        CU_ASSERT_PTR_NOT_NULL(kn);
        if (kn) {
            const ir_attr *alpha = ir_node_attr(kn, "alpha"), *tags = ir_node_attr(kn, "tags");
            CU_ASSERT(alpha && alpha->type == TSR_ATTR_FLOAT && alpha->f == 0.25f);
            CU_ASSERT(tags && tags->type == TSR_ATTR_STRINGS && tags->count == 2 &&
                      strcmp(tags->strings[1], "bc") == 0);
        }
        /* The sparse Constant node, folded at load, is written back as a
         * dense initializer holding the same [0,7,0,0,9]. */
        const ir_value *sv = ir_graph_find(r->graph, "spc");
        CU_ASSERT(sv && sv->constant && !sv->producer);
        if (sv && sv->constant && sv->constant->nbytes == 5 * sizeof(int64_t)) {
            const int64_t *d = sv->constant->data;
            CU_ASSERT(d[0] == 0 && d[1] == 7 && d[2] == 0 && d[3] == 0 && d[4] == 9);
        }
        ir_model_free(r);
    }
    free(bytes);
    ir_model_free(m);
}

/* A piece holding only the If node: its branches read x and w from the
 * enclosing graph. They are the piece's (implicit) inputs, so the writer
 * lists both as graph inputs, w with its initializer, and the bytes are a
 * complete model. */
static void test_to_onnx_outer_reads(void) {
    ir_model *m = load_model("abi_attrs.onnx", false);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    ir_node *ifn = node_named(m->graph, "if0");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ifn);
    struct tsr_graph *v = NULL;
    CU_ASSERT_PTR_NULL_FATAL(graph_view_nodes(m->graph, &ifn, 1, &v));
    void *bytes = NULL;
    size_t size = 0;
    tsr_status *st = onnx_write_view(v, &bytes, &size);
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    graph_view_free(v);
    ir_model *r = bytes ? reload(bytes, size) : NULL;
    if (r) {
        const ir_graph *rg = r->graph;
        CU_ASSERT_EQUAL(rg->n_nodes, 1);
        bool has_cond = false, has_x = false;
        for (size_t i = 0; i < rg->n_inputs; i++) {
            has_cond = has_cond || strcmp(rg->inputs[i]->name, "cond") == 0;
            has_x = has_x || strcmp(rg->inputs[i]->name, "x") == 0;
        }
        CU_ASSERT(has_cond);
        CU_ASSERT(has_x);
        const ir_value *w = ir_graph_find(rg, "w");
        CU_ASSERT(w && w->constant && w->is_graph_input);
        CU_ASSERT_EQUAL(rg->n_outputs, 1);
        if (rg->n_nodes == 1) same_graph(ifn->attrs[0].g, rg->nodes[0]->attrs[0].g);
        ir_model_free(r);
    }
    free(bytes);
    ir_model_free(m);
}

static void test_to_onnx_bad_args(void) {
    void *bytes = NULL;
    size_t size = 0;
    tsr_status *st = onnx_write_view(NULL, &bytes, &size);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_ARGUMENT);
    CU_ASSERT_PTR_NULL(bytes);
    tsr_status_free(st);
}

/* A claim the host refuses before reading a node through it (issue 15). */
static void expect_bad_claim(const char *mode, const char *says) {
    const char *provs[] = {plugin_path("plugin_bad_claims"), "reference"};
    tsr_session *s = NULL;
    tsr_status *st = open_session("exec_chain.onnx", provs, 2, "bad_claims", "mode", mode, &s);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_ARGUMENT);
    CONTAINS(tsr_status_message(st), "bad_claims");
    CONTAINS(tsr_status_message(st), says);
    CU_ASSERT_PTR_NULL(s);
    tsr_status_free(st);
    tsr_session_free(s);
}

static void test_claim_garbage_handle(void) { expect_bad_claim("garbage", "entry 1 is not a node that was offered"); }
static void test_claim_duplicate_node(void) { expect_bad_claim("duplicate", "names node 'n0' (Relu) twice"); }
static void test_claim_missing_device(void) { expect_bad_claim("device", "a claim on device 5; the provider has 1"); }
/* Nodes 0 and 4 of exec_chain pass no value to each other: the claim
 * becomes two pieces, both on bad_claims, and the session runs. */
static void test_claim_disconnected(void) {
    const char *provs[] = {plugin_path("plugin_bad_claims"), "reference"};
    tsr_session *s = NULL;
    tsr_status *st = open_session("exec_chain.onnx", provs, 2, "bad_claims", "mode", "disconnected", &s);
    CU_ASSERT_PTR_NULL_FATAL(st);
    size_t piece[2] = {SIZE_MAX, SIZE_MAX};
    for (size_t i = 0; i < tsr_session_node_count(s); i++) {
        tsr_node_info info = {.struct_size = sizeof info};
        CU_ASSERT_PTR_NULL(tsr_session_node_info(s, i, &info));
        int which = strcmp(info.name, "n0") == 0 ? 0 : strcmp(info.name, "n4") == 0 ? 1 : -1;
        if (which >= 0) {
            CU_ASSERT_STRING_EQUAL(info.provider, "bad_claims");
            piece[which] = info.piece;
        }
    }
    CU_ASSERT(piece[0] != SIZE_MAX && piece[1] != SIZE_MAX && piece[0] != piece[1]);
    tsr_tensor x = {sizeof x, TSR_FLOAT, 2, DIMS23, (void *)X, sizeof X, TSR_MEMORY_HOST, 0};
    const char *in_names[] = {"x"};
    const tsr_tensor *ins[] = {&x};
    tsr_value *outs[2] = {NULL, NULL};
    st = tsr_session_run(s, 1, in_names, ins, 2, NULL, outs);
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    tsr_value_free(outs[0]);
    tsr_value_free(outs[1]);
    tsr_session_free(s);
}

/* Tables the host refuses at load or instance creation. */
static void expect_refused(const char *plugin, const char *says1, const char *says2) {
    const char *provs[] = {plugin_path(plugin)};
    tsr_session *s = NULL;
    tsr_status *st = open_session("exec_chain.onnx", provs, 1, NULL, NULL, NULL, &s);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_ABI);
    CONTAINS(tsr_status_message(st), says1);
    CONTAINS(tsr_status_message(st), says2);
    CU_ASSERT_PTR_NULL(s);
    tsr_status_free(st);
    tsr_session_free(s);
}

static void test_bad_provider_name(void) { expect_refused("plugin_bad_name", "'Evil Name/../x'", "[a-z0-9_]"); }
static void test_device_without_copies(void) {
    expect_refused("plugin_device_no_copy", "device_no_copy", "copy_to_device and copy_to_host");
}

/* A provider's output that contradicts inference stops the run (issue 15). */
static void expect_wrong_output(const char *mode, const char *says) {
    const char *provs[] = {plugin_path("plugin_wrong_output"), "reference"};
    tsr_session *s = NULL;
    tsr_status *st = open_session("exec_chain.onnx", provs, 2, "wrong_output", "mode", mode, &s);
    CU_ASSERT_PTR_NULL_FATAL(st);
    tsr_tensor x = {sizeof x, TSR_FLOAT, 2, DIMS23, (void *)X, sizeof X, TSR_MEMORY_HOST, 0};
    const char *in_names[] = {"x"};
    const tsr_tensor *ins[] = {&x};
    tsr_value *outs[2] = {NULL, NULL};
    st = tsr_session_run(s, 1, in_names, ins, 2, NULL, outs);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_PROVIDER);
    CONTAINS(tsr_status_message(st), "provider 'wrong_output' running node 'n0' (Relu) produced 'a' with");
    CONTAINS(tsr_status_message(st), says);
    CU_ASSERT_PTR_NULL(outs[0]);
    tsr_status_free(st);
    tsr_session_free(s);
}

static void test_output_wrong_type(void) { expect_wrong_output("type", "element type int64; inference says float"); }
static void test_output_wrong_shape(void) { expect_wrong_output("shape", "rank 1; inference says 2"); }

/* The model's own description (tsr_session_metadata): every field as
 * make_abi_models.py wrote it into abi_metadata.onnx. */
static void test_model_metadata(void) {
    const char *provs[] = {"reference"};
    tsr_session *s = NULL;
    tsr_status *st = open_session("abi_metadata.onnx", provs, 1, NULL, NULL, NULL, &s);
    CU_ASSERT_PTR_NULL_FATAL(st);
    tsr_model_metadata m = {.struct_size = sizeof m};
    CU_ASSERT_PTR_NULL_FATAL(tsr_session_metadata(s, &m));
    CU_ASSERT_STRING_EQUAL(m.producer_name, "tessera-tests");
    CU_ASSERT_STRING_EQUAL(m.producer_version, "1.2");
    CU_ASSERT_STRING_EQUAL(m.domain, "org.example");
    CU_ASSERT_EQUAL(m.model_version, 7);
    CU_ASSERT_STRING_EQUAL(m.doc_string, "a Relu");
    CU_ASSERT_STRING_EQUAL(m.graph_name, "metadata_graph");
    CU_ASSERT_EQUAL(m.ir_version, 8);
    CU_ASSERT_EQUAL_FATAL(m.property_count, 2);
    CU_ASSERT_EQUAL_FATAL(m.opset_count, 2);
    const char *key, *value, *domain;
    int64_t version;
    CU_ASSERT_PTR_NULL(tsr_session_metadata_property(s, 1, &key, &value));
    CU_ASSERT_STRING_EQUAL(key, "license");
    CU_ASSERT_STRING_EQUAL(value, "MIT");
    CU_ASSERT_PTR_NULL(tsr_session_opset(s, 1, &domain, &version));
    CU_ASSERT_STRING_EQUAL(domain, "com.example");
    CU_ASSERT_EQUAL(version, 2);
    st = tsr_session_metadata_property(s, 2, &key, &value);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_ARGUMENT);
    tsr_status_free(st);
    tsr_model_metadata old = {.struct_size = 8};
    st = tsr_session_metadata(s, &old);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_ARGUMENT);
    tsr_status_free(st);
    tsr_session_free(s);
}

/* A six-node piece that fails to compile goes to the next provider whole. */
static void test_many_node_piece_falls_back(void) {
    const char *provs[] = {plugin_path("plugin_greedy"), "reference"};
    tsr_session *s = NULL;
    capture cap;
    capture_begin(&cap);
    tsr_status *st = open_session("exec_chain.onnx", provs, 2, NULL, NULL, NULL, &s);
    char *log = capture_end(&cap);
    CU_ASSERT_PTR_NULL_FATAL(st);
    CONTAINS(log, "greedy");
    CONTAINS(log, "piece of 6 node(s) starting at 'n0'");
    CONTAINS(log, "test pieces hold one node");
    free(log);
    CU_ASSERT_EQUAL(s->main.part.n_pieces, 6);
    for (size_t p = 0; p < s->main.part.n_pieces; p++)
        CU_ASSERT_STRING_EQUAL(s->provs[s->main.part.pieces[p].prov_index]->name, "reference");
    tsr_tensor x = {sizeof x, TSR_FLOAT, 2, DIMS23, (void *)X, sizeof X, TSR_MEMORY_HOST, 0};
    const char *in_names[] = {"x"};
    const tsr_tensor *ins[] = {&x};
    tsr_value *outs[2] = {NULL, NULL};
    st = tsr_session_run(s, 1, in_names, ins, 2, NULL, outs);
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    const float want_y[6] = {1, 4, 4, 13, 0, 22}, want_c[6] = {0.5f, 1, 2, 4.5f, 0, 8};
    for (int j = 0; j < 2; j++) {
        tsr_tensor t = {.struct_size = sizeof t};
        if (!outs[j] || tsr_value_tensor(outs[j], &t) || t.nbytes != 6 * sizeof(float)) {
            CU_FAIL("missing output");
            continue;
        }
        expect_floats(t.data, j ? want_c : want_y, 6);
        tsr_value_free(outs[j]);
    }
    tsr_session_free(s);
}

/* The shared library finds the reference plugin beside itself with no
 * TESSERA_PROVIDER_PATH at all (the unit tests link the static core, whose
 * "beside" is the test's own directory, so this opens libtessera.so). */
static void test_discover_beside_library(void) {
    typedef tsr_status *(*discover_fn)(const char *const *, size_t, tsr_provider_list **);
    typedef size_t (*size_fn)(const tsr_provider_list *);
    typedef tsr_status *(*get_fn)(const tsr_provider_list *, size_t, tsr_provider_desc *);
    typedef void (*free_fn)(tsr_provider_list *);
    typedef void (*status_free_fn)(tsr_status *);
    void *lib = dlopen(fmt_path(lib_dir(), "libtessera.so"), RTLD_NOW | RTLD_LOCAL);
    if (!lib) fprintf(stderr, "\n  dlopen: %s\n", dlerror());
    CU_ASSERT_PTR_NOT_NULL_FATAL(lib);
    discover_fn discover;
    size_fn size;
    get_fn get;
    free_fn list_free;
    status_free_fn status_free;
    *(void **)&discover = dlsym(lib, "tsr_providers_discover");
    *(void **)&size = dlsym(lib, "tsr_provider_list_size");
    *(void **)&get = dlsym(lib, "tsr_provider_list_get");
    *(void **)&list_free = dlsym(lib, "tsr_provider_list_free");
    *(void **)&status_free = dlsym(lib, "tsr_status_free");
    CU_ASSERT_FATAL(discover && size && get && list_free && status_free);
    /* Internal symbols stay hidden. */
    CU_ASSERT_PTR_NULL(dlsym(lib, "plugin_load"));
    CU_ASSERT_PTR_NULL(dlsym(lib, "onnx_write_view"));
    char *saved = getenv("TESSERA_PROVIDER_PATH") ? strdup(getenv("TESSERA_PROVIDER_PATH")) : NULL;
    unsetenv("TESSERA_PROVIDER_PATH");
    tsr_provider_list *l = NULL;
    tsr_status *st = discover(NULL, 0, &l);
    if (saved) setenv("TESSERA_PROVIDER_PATH", saved, 1);
    free(saved);
    CU_ASSERT_PTR_NULL(st);
    status_free(st);
    bool found = false;
    for (size_t i = 0; l && i < size(l); i++) {
        tsr_provider_desc d = {.struct_size = sizeof d};
        CU_ASSERT_PTR_NULL(get(l, i, &d));
        if (d.name && strcmp(d.name, "reference") == 0 && !d.error) found = true;
    }
    CU_ASSERT(found);
    if (l) list_free(l);
    dlclose(lib);
}

/* A subgraph seen through the host API (attr_graph) as a whole-graph view:
 * its nodes, and as ONNX bytes a complete model (the outer x becomes an
 * input, the outer initializer w an initializer). The view is made on
 * demand and must go away with the model (LeakSanitizer checks). */
static void test_attr_graph_view(void) {
    ir_model *m = load_model("abi_attrs.onnx", false);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    ir_node *ifn = node_named(m->graph, "if0");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ifn);
    const tsr_host_api *h = host_api_table();
    const tsr_attr *a = h->node_attr_find((const tsr_node *)ifn, "then_branch");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(h->attr_type(a), TSR_ATTR_GRAPH);
    const tsr_graph *sg = h->attr_graph(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sg);
    CU_ASSERT_PTR_EQUAL(h->attr_graph(a), sg); /* made once */
    CU_ASSERT_EQUAL(h->graph_node_count(sg), 1);
    CU_ASSERT_STRING_EQUAL(h->node_op_type(h->graph_node(sg, 0)), "Add");
    void *bytes = NULL;
    size_t size = 0;
    tsr_status *st = h->graph_to_onnx(sg, &bytes, &size);
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    ir_model *r = bytes ? reload(bytes, size) : NULL;
    if (r) {
        const ir_graph *rg = r->graph;
        CU_ASSERT_EQUAL(rg->n_nodes, 1);
        CU_ASSERT_EQUAL(rg->n_inputs, 1);
        if (rg->n_inputs == 1) {
            CU_ASSERT_STRING_EQUAL(rg->inputs[0]->name, "x");
            CU_ASSERT_EQUAL(rg->inputs[0]->type.elem_type, TSR_FLOAT);
            CU_ASSERT_EQUAL(rg->inputs[0]->type.rank, 2);
        }
        const ir_value *w = ir_graph_find(rg, "w");
        CU_ASSERT(w && w->constant && w->constant->nbytes == 6 * sizeof(float));
        CU_ASSERT_EQUAL(rg->n_outputs, 1);
        if (rg->n_outputs == 1) CU_ASSERT_STRING_EQUAL(rg->outputs[0]->name, "t_out");
        ir_model_free(r);
    }
    h->free(bytes);
    ir_model_free(m);
}

/* Every model of the ONNX test corpus (TESSERA_ONNX_TESTS) that the loader
 * accepts survives writer + loader unchanged: nodes, attributes (subgraphs
 * included), inputs and outputs with their types, initializers, opsets and
 * functions. Models with TypeProto attributes cannot be written (the loader
 * keeps only their kind) and must say so. */
static struct { size_t loaded, written, refused_typeproto, differed; } corpus;

static int corpus_visit(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st;
    (void)ftw;
    size_t len = strlen(path);
    if (flag != FTW_F || len < 5 || strcmp(path + len - 5, ".onnx") != 0) return 0;
    ir_model *m = NULL;
    tsr_status *err = ir_model_load_file(path, &m);
    if (err) { /* the loader's business, not the writer's */
        tsr_status_free(err);
        return 0;
    }
    corpus.loaded++;
    struct tsr_graph *v = NULL;
    void *bytes = NULL;
    size_t size = 0;
    err = graph_view_whole(m->graph, &v);
    if (!err) err = onnx_write_view(v, &bytes, &size);
    graph_view_free(v);
    if (err) {
        bool typeproto =
            tsr_status_code(err) == TSR_ERR_NOT_SUPPORTED && strstr(tsr_status_message(err), "TypeProto") != NULL;
        if (typeproto) corpus.refused_typeproto++;
        else fprintf(stderr, "\n  %s: writing failed: %s\n", path, tsr_status_message(err));
        CU_ASSERT(typeproto);
        tsr_status_free(err);
        ir_model_free(m);
        return 0;
    }
    corpus.written++;
    ir_model *r = NULL;
    err = ir_model_load_buffer(bytes, size, NULL, &r);
    if (err) fprintf(stderr, "\n  %s: reloading failed: %s\n", path, tsr_status_message(err));
    CU_ASSERT_PTR_NULL(err);
    tsr_status_free(err);
    if (r) {
        bool same = same_graph(m->graph, r->graph);
        CU_ASSERT(r->n_opsets == m->n_opsets);
        for (size_t i = 0; i < m->n_opsets; i++) {
            bool ok = ir_model_opset(r, m->opsets[i].domain) == m->opsets[i].version;
            CU_ASSERT(ok);
            same = same && ok;
        }
        CU_ASSERT(r->n_functions == m->n_functions);
        for (size_t i = 0; i < m->n_functions && i < r->n_functions; i++) {
            const ir_function *f = m->functions[i], *g = r->functions[i];
            CU_ASSERT(strcmp(f->name, g->name) == 0 && strcmp(f->domain, g->domain) == 0);
            CU_ASSERT(f->n_attr_names == g->n_attr_names);
            if (f->body && g->body && !same_graph(f->body, g->body)) same = false;
        }
        if (!same) {
            corpus.differed++;
            fprintf(stderr, "\n  %s: differs after the round trip\n", path);
        }
        ir_model_free(r);
    }
    free(bytes);
    ir_model_free(m);
    return 0;
}

static void test_to_onnx_corpus(void) {
    const char *dir = getenv("TESSERA_ONNX_TESTS");
    struct stat st;
    if (!dir || stat(dir, &st) != 0) {
        fprintf(stderr, "\n  (no ONNX test corpus at %s; skipped)\n", dir ? dir : "$TESSERA_ONNX_TESTS");
        return;
    }
    memset(&corpus, 0, sizeof corpus);
    CU_ASSERT_EQUAL(nftw(dir, corpus_visit, 16, FTW_PHYS), 0);
    fprintf(stderr, "\n  corpus: %zu loaded, %zu written and reloaded, %zu refused (TypeProto), %zu differed\n",
            corpus.loaded, corpus.written, corpus.refused_typeproto, corpus.differed);
    CU_ASSERT(corpus.loaded > 0);
    CU_ASSERT_EQUAL(corpus.differed, 0);
}

void unit_register(void) {
    CU_pSuite s = CU_add_suite("abi", suite_init, NULL);
    CU_add_test(s, "reference provider alone", test_reference_alone);
    CU_add_test(s, "missing plugin file names the path", test_missing_file);
    CU_add_test(s, "unknown provider name", test_unknown_name);
    CU_add_test(s, "no entry symbol", test_no_entry);
    CU_add_test(s, "plugin needs a newer ABI", test_newer_abi);
    CU_add_test(s, "plugin picks a version never offered", test_bad_version);
    CU_add_test(s, "NULL required slots", test_bad_table);
    CU_add_test(s, "same provider twice", test_listed_twice);
    CU_add_test(s, "claim fails", test_fail_claim);
    CU_add_test(s, "constant_release misuse refused", test_release_misuse_refused);
    CU_add_test(s, "compile fails: fall back to reference", test_fail_compile_falls_back);
    CU_add_test(s, "compile fails on a chain", test_fail_compile_chain);
    CU_add_test(s, "run fails: error names provider and node", test_fail_run);
    CU_add_test(s, "older, shorter tsr_provider", test_old_struct);
    CU_add_test(s, "piece with no outputs: host scratch", test_scratch_output);
    CU_add_test(s, "provider option reaches the plugin", test_option_scale);
    CU_add_test(s, "provider options refused", test_option_refused);
    CU_add_test(s, "discovery", test_discover);
    CU_add_test(s, "default providers from the search path", test_default_providers);
    CU_add_test(s, "discovery beside libtessera.so", test_discover_beside_library);
    CU_add_test(s, "a many-node piece falls back whole", test_many_node_piece_falls_back);
    CU_add_test(s, "custom op provider and declines", test_custom_op);
    CU_add_test(s, "graph_to_onnx: a piece", test_to_onnx_piece);
    CU_add_test(s, "graph_to_onnx: every attribute round-trips", test_to_onnx_round_trip);
    CU_add_test(s, "graph_to_onnx: outer-scope reads", test_to_onnx_outer_reads);
    CU_add_test(s, "graph_to_onnx: bad arguments", test_to_onnx_bad_args);
    CU_add_test(s, "claims: a garbage node handle is refused unread", test_claim_garbage_handle);
    CU_add_test(s, "claims: a node named twice is refused", test_claim_duplicate_node);
    CU_add_test(s, "claims: a device the provider lacks is refused", test_claim_missing_device);
    CU_add_test(s, "claims: a disconnected set becomes one piece per part", test_claim_disconnected);
    CU_add_test(s, "load: a provider name outside [a-z0-9_] is refused", test_bad_provider_name);
    CU_add_test(s, "load: device memory without copy slots is refused", test_device_without_copies);
    CU_add_test(s, "run: an output of the wrong type is an error", test_output_wrong_type);
    CU_add_test(s, "model metadata", test_model_metadata);
    CU_add_test(s, "run: an output of the wrong shape is an error", test_output_wrong_shape);
    CU_add_test(s, "attr_graph view, as ONNX, freed with the model", test_attr_graph_view);
    CU_add_test(s, "graph_to_onnx: the ONNX test corpus round-trips", test_to_onnx_corpus);
}
