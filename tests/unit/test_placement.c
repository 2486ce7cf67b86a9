/* Placement policies through the public API, with a provider that owns its
 * memory (tests/plugins/plugin_device.c: Relu, Add, Reshape; copies counted
 * by the host's copies report) and the reference provider.
 *
 * placement_*.onnx (tests/data/make_placement_models.py), x float[n,n]:
 *     r0: t0 = Relu(x)   rs: t1 = Reshape(t0, [n*n])   r1: t2 = Relu(t1)
 *     rs2: t3 = Reshape(t2, [n,n])   a0: y = Add(t3, x)
 * so y = relu(x) + x; placement_fallback.onnx ends with sg: y = Sigmoid(.).
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/tessera.h"

static const char *data_path(const char *name) {
    static char buf[1024];
    const char *dir = getenv("TESSERA_TEST_DATA");
    snprintf(buf, sizeof buf, "%s/%s", dir && *dir ? dir : "tests/data", name);
    return buf;
}

static char device_path[1024];

static int suite_init(void) {
    const char *lib = getenv("TESSERA_BUILD_LIB");
    const char *plugins = getenv("TESSERA_TEST_PLUGINS");
    snprintf(device_path, sizeof device_path, "%s/plugin_device.so",
             plugins && *plugins ? plugins : "build/test-plugins");
    return setenv("TESSERA_PROVIDER_PATH", lib && *lib ? lib : "build/lib", 1) == 0 ? 0 : 1;
}

typedef struct setup {
    const char *providers[3]; /* "device" means the test plugin */
    const char *device_ops;   /* NULL: its default */
    const char *device_cost;  /* NULL: no estimate */
    const char *ref_decline;  /* NULL: none */
    int32_t policy;
    const char *fallback;
    const char *device_count; /* NULL: one device */
} setup;

static tsr_status *open_session(const char *model, const setup *su, tsr_session **s) {
    tsr_session_options *o;
    tsr_status *st = tsr_session_options_create(&o);
    if (st) return st;
    for (size_t i = 0; i < 3 && su->providers[i] && !st; i++)
        st = tsr_session_options_add_provider(o,
                                              strcmp(su->providers[i], "device") == 0 ? device_path : su->providers[i]);
    if (!st && su->device_ops) st = tsr_session_options_set_provider_option(o, "device", "ops", su->device_ops);
    if (!st && su->device_cost) st = tsr_session_options_set_provider_option(o, "device", "cost", su->device_cost);
    if (!st && su->device_count) st = tsr_session_options_set_provider_option(o, "device", "devices", su->device_count);
    if (!st && su->ref_decline)
        st = tsr_session_options_set_provider_option(o, "reference", "decline", su->ref_decline);
    if (!st) st = tsr_session_options_set_policy(o, su->policy);
    if (!st && su->fallback) st = tsr_session_options_set_fallback(o, su->fallback);
    if (!st) st = tsr_session_options_set_log_level(o, TSR_LOG_ERROR);
    if (!st) st = tsr_session_create(o, data_path(model), s);
    tsr_session_options_free(o);
    return st;
}

/* The provider of the node named `name`, or "" when there is none. */
static const char *provider_of(const tsr_session *s, const char *name) {
    for (size_t i = 0; i < tsr_session_node_count(s); i++) {
        tsr_node_info info = {.struct_size = sizeof info};
        if (tsr_session_node_info(s, i, &info)) return "";
        if (strcmp(info.name, name) == 0) return info.provider;
    }
    return "";
}

/* Runs the session on x[i] = (i % 7) - 3 (n x n) and checks y against
 * relu(x) + x, through a sigmoid when `sigmoid`. */
static void check_run(tsr_session *s, int64_t n, bool sigmoid) {
    size_t count = (size_t)(n * n);
    float *x = malloc(sizeof(float) * count);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    for (size_t i = 0; i < count; i++) x[i] = (float)((int)(i % 7) - 3);
    int64_t dims[2] = {n, n};
    tsr_tensor in = {sizeof in, TSR_FLOAT, 2, dims, x, sizeof(float) * count, TSR_MEMORY_HOST, 0};
    const tsr_tensor *ins[1] = {&in};
    const char *in_name = "x";
    tsr_value *out = NULL;
    tsr_status *st = tsr_session_run(s, 1, &in_name, ins, 1, NULL, &out);
    if (st) fprintf(stderr, "\n  run: %s\n", tsr_status_message(st));
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    tsr_tensor t = {.struct_size = sizeof t};
    if (out && !tsr_value_tensor(out, &t) && t.nbytes == sizeof(float) * count) {
        const float *y = t.data;
        size_t bad = 0;
        for (size_t i = 0; i < count; i++) {
            double want = (x[i] > 0 ? x[i] : 0.0) + x[i];
            if (sigmoid) want = 1.0 / (1.0 + exp(-want));
            bad += fabs(y[i] - want) > 1e-6;
        }
        CU_ASSERT_EQUAL(bad, 0);
    } else {
        CU_FAIL("no output of the expected size");
    }
    tsr_value_free(out);
    free(x);
}

static bool text_has(const tsr_session *s, const char *needle) {
    char *text = NULL;
    if (tsr_session_assignment_text(s, &text)) return false;
    bool found = strstr(text, needle) != NULL;
    if (!found) fprintf(stderr, "\n  no '%s' in:\n%s", needle, text);
    free(text);
    return found;
}

/* Order policy: reference is listed first but declines Relu and Add, so
 * only the Reshapes would stay on the host, between device nodes: four
 * copies for nothing. They follow their neighbours to the device. */
static void test_cheap_nodes_follow_neighbours(void) {
    setup su = {{"reference", "device", NULL}, NULL, NULL, "Relu,Add", TSR_POLICY_ORDER, NULL, NULL};
    tsr_session *s = NULL;
    tsr_status *st = open_session("placement_chain.onnx", &su, &s);
    CU_ASSERT_PTR_NULL_FATAL(st);
    const char *nodes[] = {"r0", "rs", "r1", "rs2", "a0"};
    for (size_t i = 0; i < 5; i++) CU_ASSERT_STRING_EQUAL(provider_of(s, nodes[i]), "device");
    CU_ASSERT(text_has(s, "2 node(s) placed off list order"));
    check_run(s, 64, false);
    tsr_session_free(s);

    /* Policy "first" keeps list order, copies or not. */
    su.policy = TSR_POLICY_FIRST;
    CU_ASSERT_PTR_NULL_FATAL(open_session("placement_chain.onnx", &su, &s));
    CU_ASSERT_STRING_EQUAL(provider_of(s, "rs"), "reference");
    CU_ASSERT_STRING_EQUAL(provider_of(s, "rs2"), "reference");
    CU_ASSERT_STRING_EQUAL(provider_of(s, "r1"), "device");
    check_run(s, 64, false);
    tsr_session_free(s);
    su.policy = TSR_POLICY_ORDER;

    /* A Reshape the device does not run stays on the host: correct, with copies. */
    su.device_ops = "Relu,Add";
    CU_ASSERT_PTR_NULL_FATAL(open_session("placement_chain.onnx", &su, &s));
    CU_ASSERT_STRING_EQUAL(provider_of(s, "rs"), "reference");
    CU_ASSERT_STRING_EQUAL(provider_of(s, "r1"), "device");
    CU_ASSERT(text_has(s, "host -> device"));
    check_run(s, 64, false);
    tsr_session_free(s);
}

/* Cost policy: the device claims to be a thousand times faster, listed
 * second. On a 64x64 chain the two copies (x in, y out) cost more than the
 * reference's whole run, so nothing moves; on 1024x1024 compute dominates
 * and everything goes to the device. */
/* Two devices of one provider (issue 15): exec_chain's Relus on device 0,
 * its same-shape Adds on device 1 (plugin_device.c, devices=2; the
 * broadcasting n1 goes to reference). Every piece reads its
 * device's tensors (the plugin fails on another device's), constants are
 * copied to the device that reads them, and tensors cross between the
 * devices through copy_between_devices. Values worked by hand from
 * x = [-1,2,-3,4,-5,6], k = [0.5,-1,2]. */
static void test_two_devices(void) {
    setup su = {{"device", "reference", NULL}, NULL, NULL, NULL, TSR_POLICY_FIRST, NULL, "2"};
    tsr_session *s = NULL;
    tsr_status *st = open_session("exec_chain.onnx", &su, &s);
    CU_ASSERT_PTR_NULL_FATAL(st);
    CU_ASSERT_STRING_EQUAL(provider_of(s, "n0"), "device");
    CU_ASSERT_STRING_EQUAL(provider_of(s, "n1"), "reference"); /* a broadcasting Add */
    CU_ASSERT_STRING_EQUAL(provider_of(s, "n3"), "device");
    char *json = NULL;
    CU_ASSERT_PTR_NULL(tsr_session_assignment_json(s, &json));
    CU_ASSERT(json && strstr(json, "\"provider\":\"device\",\"device\":1"));
    free(json);
    size_t (*between)(void) = NULL;
    void *dl = dlopen(device_path, RTLD_NOW | RTLD_NOLOAD);
    if (dl) *(void **)&between = dlsym(dl, "plugin_device_between_copies");
    CU_ASSERT_PTR_NOT_NULL_FATAL(between);
    size_t before = between();
    static const float x[6] = {-1, 2, -3, 4, -5, 6};
    static const float want_y[6] = {1, 4, 4, 13, 0, 22}, want_c[6] = {0.5f, 1, 2, 4.5f, 0, 8};
    int64_t dims[2] = {2, 3};
    tsr_tensor in = {sizeof in, TSR_FLOAT, 2, dims, (void *)x, sizeof x, TSR_MEMORY_HOST, 0};
    const char *names[] = {"x"};
    const tsr_tensor *ins[] = {&in};
    tsr_value *outs[2] = {NULL, NULL};
    st = tsr_session_run(s, 1, names, ins, 2, NULL, outs);
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    tsr_tensor y = {.struct_size = sizeof y}, c = {.struct_size = sizeof c};
    if (outs[0] && outs[1] && !tsr_value_tensor(outs[0], &y) && !tsr_value_tensor(outs[1], &c)) {
        for (int i = 0; i < 6; i++) {
            CU_ASSERT_DOUBLE_EQUAL(((const float *)y.data)[i], want_y[i], 1e-6);
            CU_ASSERT_DOUBLE_EQUAL(((const float *)c.data)[i], want_c[i], 1e-6);
        }
    } else {
        CU_FAIL("no outputs");
    }
    /* a, c and e from device 0 to 1, d from 1 to 0 */
    CU_ASSERT(between() - before >= 4);
    tsr_value_free(outs[0]);
    tsr_value_free(outs[1]);
    if (dl) dlclose(dl);
    tsr_session_free(s);
}

/* TSR_PROVIDER_HOST_CONSTANTS: the Reshapes' constant shapes reach the
 * device provider in host memory (plugin_device_host_consts fails the run
 * otherwise) and are never copied; the activations still are. */
static void test_host_constants(void) {
    char path[1100];
    snprintf(path, sizeof path, "%.1000s", device_path);
    char *slash = strrchr(path, '/');
    snprintf(slash ? slash + 1 : path, sizeof path - (size_t)(slash ? slash + 1 - path : 0),
             "plugin_device_host_consts.so");
    tsr_session_options *o = NULL;
    tsr_session *s = NULL;
    tsr_status *st = tsr_session_options_create(&o);
    if (!st) st = tsr_session_options_add_provider(o, path);
    if (!st) st = tsr_session_options_add_provider(o, "reference");
    if (!st) st = tsr_session_options_set_policy(o, TSR_POLICY_FIRST);
    if (!st) st = tsr_session_options_set_profiling(o, true);
    if (!st) st = tsr_session_create(o, data_path("placement_chain.onnx"), &s);
    tsr_session_options_free(o);
    CU_ASSERT_PTR_NULL_FATAL(st);
    CU_ASSERT_STRING_EQUAL(provider_of(s, "rs"), "device_host_consts");
    check_run(s, 64, false);
    char *json = NULL;
    CU_ASSERT_PTR_NULL(tsr_session_profile_take(s, &json));
    CU_ASSERT(json && strstr(json, "\"value\":\"x\"") && !strstr(json, "\"value\":\"flat\"") &&
              !strstr(json, "\"value\":\"square\""));
    free(json);
    tsr_session_free(s);
}

/* A Shape on the host reading a tensor in device memory gets its dims
 * without the tensor being copied to the host (issue 16): no copy event for
 * t0, and y = relu(relu(x)) worked out from x[i] = (i % 7) - 3. */
static void test_shape_reads_no_data(void) {
    tsr_session_options *o = NULL;
    tsr_session *s = NULL;
    tsr_status *st = tsr_session_options_create(&o);
    if (!st) st = tsr_session_options_add_provider(o, device_path);
    if (!st) st = tsr_session_options_add_provider(o, "reference");
    if (!st) st = tsr_session_options_set_policy(o, TSR_POLICY_FIRST);
    if (!st) st = tsr_session_options_set_profiling(o, 1);
    /* x's shape is declared, so folding would make the Shape a constant */
    if (!st) st = tsr_session_options_set_limit(o, "fold_bytes", 1);
    if (!st) st = tsr_session_create(o, data_path("placement_shape.onnx"), &s);
    tsr_session_options_free(o);
    CU_ASSERT_PTR_NULL_FATAL(st);
    CU_ASSERT_STRING_EQUAL(provider_of(s, "sh"), "reference");
    CU_ASSERT_STRING_EQUAL(provider_of(s, "r0"), "device");
    float x[24];
    for (int i = 0; i < 24; i++) x[i] = (float)(i % 7 - 3);
    int64_t dims[2] = {4, 6};
    tsr_tensor in = {sizeof in, TSR_FLOAT, 2, dims, x, sizeof x, TSR_MEMORY_HOST, 0};
    const tsr_tensor *ins[1] = {&in};
    const char *name = "x";
    tsr_value *out = NULL;
    st = tsr_session_run(s, 1, &name, ins, 1, NULL, &out);
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    tsr_tensor y = {.struct_size = sizeof y};
    if (out && !tsr_value_tensor(out, &y) && y.nbytes == sizeof x) {
        for (int i = 0; i < 24; i++) CU_ASSERT_DOUBLE_EQUAL(((const float *)y.data)[i], x[i] > 0 ? x[i] : 0, 0);
    } else {
        CU_FAIL("no output");
    }
    tsr_value_free(out);
    char *json = NULL;
    CU_ASSERT_PTR_NULL(tsr_session_profile_take(s, &json));
    CU_ASSERT(json && strstr(json, "\"name\":\"Shape\"") && !strstr(json, "\"value\":\"t0\""));
    free(json);
    tsr_session_free(s);
}

static void test_cost_counts_copies(void) {
    setup su = {{"reference", "device", NULL}, NULL, "1e-9", NULL, TSR_POLICY_COST, NULL, NULL};
    tsr_session *s = NULL;
    CU_ASSERT_PTR_NULL_FATAL(open_session("placement_chain.onnx", &su, &s));
    const char *nodes[] = {"r0", "rs", "r1", "rs2", "a0"};
    for (size_t i = 0; i < 5; i++) CU_ASSERT_STRING_EQUAL(provider_of(s, nodes[i]), "reference");
    CU_ASSERT(text_has(s, "placement: by estimated cost"));
    check_run(s, 64, false);
    tsr_session_free(s);

    CU_ASSERT_PTR_NULL_FATAL(open_session("placement_big.onnx", &su, &s));
    for (size_t i = 0; i < 5; i++) CU_ASSERT_STRING_EQUAL(provider_of(s, nodes[i]), "device");
    CU_ASSERT(text_has(s, "5 node(s) placed off list order"));
    check_run(s, 1024, false);
    tsr_session_free(s);

    /* A slow device listed first loses every node under cost, none under order. */
    setup slow = {{"device", "reference", NULL}, NULL, "1", NULL, TSR_POLICY_COST, NULL, NULL};
    CU_ASSERT_PTR_NULL_FATAL(open_session("placement_big.onnx", &slow, &s));
    for (size_t i = 0; i < 5; i++) CU_ASSERT_STRING_EQUAL(provider_of(s, nodes[i]), "reference");
    tsr_session_free(s);
    slow.policy = TSR_POLICY_ORDER;
    CU_ASSERT_PTR_NULL_FATAL(open_session("placement_big.onnx", &slow, &s));
    for (size_t i = 0; i < 5; i++) CU_ASSERT_STRING_EQUAL(provider_of(s, nodes[i]), "device");
    check_run(s, 1024, false);
    tsr_session_free(s);
}

/* Without a fallback, a node the device cannot run fails the session with
 * the device's reason; with reference as fallback it runs there, and only
 * it: the nodes the device claims stay on the device although reference
 * could run them too. */
static void test_fallback(void) {
    setup su = {{"device", NULL, NULL}, NULL, NULL, NULL, TSR_POLICY_ORDER, NULL, NULL};
    tsr_session *s = NULL;
    tsr_status *st = open_session("placement_fallback.onnx", &su, &s);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_NOT_SUPPORTED);
    CU_ASSERT(st && strstr(tsr_status_message(st), "'sg'") &&
              strstr(tsr_status_message(st), "not in the device's ops option"));
    tsr_status_free(st);
    CU_ASSERT_PTR_NULL(s);

    su.fallback = "reference";
    for (int32_t policy = TSR_POLICY_ORDER; policy <= TSR_POLICY_COST; policy++) {
        su.policy = policy;
        st = open_session("placement_fallback.onnx", &su, &s);
        CU_ASSERT_PTR_NULL_FATAL(st);
        CU_ASSERT_STRING_EQUAL(provider_of(s, "sg"), "reference");
        CU_ASSERT_STRING_EQUAL(provider_of(s, "r0"), "device");
        CU_ASSERT_STRING_EQUAL(provider_of(s, "a0"), "device");
        CU_ASSERT(text_has(s, "(fallback)"));
        CU_ASSERT(text_has(s, "fallback reference"));
        check_run(s, 64, true);
        tsr_session_free(s);
        s = NULL;
    }

    /* Listed first, the fallback still only gets what nobody else claims. */
    setup first = {{"reference", "device", NULL}, NULL, NULL, NULL, TSR_POLICY_ORDER, "reference", NULL};
    CU_ASSERT_PTR_NULL_FATAL(open_session("placement_fallback.onnx", &first, &s));
    CU_ASSERT_STRING_EQUAL(provider_of(s, "r0"), "device");
    CU_ASSERT_STRING_EQUAL(provider_of(s, "sg"), "reference");
    tsr_session_free(s);
}

static void test_bad_policy(void) {
    tsr_session_options *o;
    CU_ASSERT_PTR_NULL_FATAL(tsr_session_options_create(&o));
    tsr_status *st = tsr_session_options_set_policy(o, 7);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_INVALID_ARGUMENT);
    tsr_status_free(st);
    CU_ASSERT_PTR_NULL(tsr_session_options_set_fallback(o, NULL));
    tsr_session_options_free(o);
}

void unit_register(void) {
    CU_pSuite s = CU_add_suite("placement", suite_init, NULL);
    CU_add_test(s, "cheap nodes follow their neighbours' memory", test_cheap_nodes_follow_neighbours);
    CU_add_test(s, "cost policy counts copies", test_cost_counts_copies);
    CU_add_test(s, "two devices of one provider", test_two_devices);
    CU_add_test(s, "constants stay in host memory when the provider asks", test_host_constants);
    CU_add_test(s, "a Shape reads a device tensor's dims without a copy", test_shape_reads_no_data);
    CU_add_test(s, "fallback provider", test_fallback);
    CU_add_test(s, "bad policy value", test_bad_policy);
}
