/*
 * Device-resident inputs and outputs (tsr_io_binding), tested on one step
 * of a recurrent cell (make_iobinding_case.py) run 100 times with its
 * state fed back:
 *  - bound: state_out stays in the provider's memory and is bound as the
 *    next run's state_in. Every y is checked against numpy's, and the
 *    profile must show that after the first run no byte of state crosses
 *    between memories: only x goes in and y comes out.
 *  - unbound: the same 100 runs through tsr_session_run, for the copies it
 *    makes and the same numbers.
 *  - hostile use: unknown names, wrong shapes, a value of another session,
 *    a freed value, a binding of another session, taking twice, a value
 *    outliving its session; each must fail with a clear error.
 *
 * usage: iobinding_runs CASE_DIR PROVIDER[,PROVIDER...]
 * exit 0 on success, 1 on a failure, 77 when a provider in the list is not
 * available (no plugin, or a plugin without a device), 2 on bad usage.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/tessera.h>

#define STEPS 100
#define IN 8
#define HID 16
#define OUT 4

static const char *case_dir, *providers;
static int failures;

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                       \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fprintf(stderr, "\n");                                                                                     \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

/* Fails the test (and returns 1 from main's helpers) on an error status. */
static bool ok(tsr_status *s, const char *what) {
    if (!s) return true;
    fprintf(stderr, "FAIL %s: %s\n", what, tsr_status_message(s));
    tsr_status_free(s);
    failures++;
    return false;
}

/* An expected error: the call must fail with `code` and a message that
 * contains `needle`. */
static void expect_error(tsr_status *s, tsr_code code, const char *needle, const char *what) {
    if (!s) {
        fprintf(stderr, "FAIL %s: succeeded, an error was expected\n", what);
        failures++;
        return;
    }
    if (tsr_status_code(s) != code || !strstr(tsr_status_message(s), needle)) {
        fprintf(stderr, "FAIL %s: got code %d '%s', wanted code %d with '%s'\n", what, (int)tsr_status_code(s),
                tsr_status_message(s), (int)code, needle);
        failures++;
    } else {
        printf("  refused as expected: %s: %s\n", what, tsr_status_message(s));
    }
    tsr_status_free(s);
}

static tsr_value *load(const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", case_dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    tsr_value *v = NULL;
    if (!ok(tsr_value_from_onnx_tensor(buf, n, &v, NULL), path)) return NULL;
    return v;
}

static const float *floats(const tsr_value *v, size_t want) {
    tsr_tensor t = {.struct_size = sizeof t};
    if (!ok(tsr_value_tensor(v, &t), "tensor view")) return NULL;
    if (t.elem_type != TSR_FLOAT || t.nbytes != want * sizeof(float)) {
        fprintf(stderr, "FAIL: a tensor of %zu bytes, wanted %zu floats\n", t.nbytes, want);
        failures++;
        return NULL;
    }
    return t.data;
}

/* Whether every element of got[n] is within 1e-4 + 1e-4 |want| of want[n]. */
static bool close_to(const float *got, const float *want, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!(fabs((double)got[i] - want[i]) <= 1e-4 + 1e-4 * fabs((double)want[i]))) return false;
    return true;
}

/* Whether every provider of the list loads and has a device: the test is
 * skipped (77) otherwise, as on a machine without an OpenCL driver. */
static bool providers_available(void) {
    tsr_provider_list *list = NULL;
    if (!ok(tsr_providers_discover(NULL, 0, &list), "discover")) return false;
    char names[256];
    snprintf(names, sizeof names, "%s", providers);
    bool all = true;
    for (char *save = NULL, *name = strtok_r(names, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        bool found = false;
        for (size_t i = 0; i < tsr_provider_list_size(list); i++) {
            tsr_provider_desc d = {.struct_size = sizeof d};
            if (!tsr_provider_list_get(list, i, &d) && !d.error && strcmp(d.name, name) == 0 && d.device_count > 0)
                found = true;
        }
        if (!found) printf("provider '%s' is not available (no plugin or no device)\n", name);
        all = all && found;
    }
    tsr_provider_list_free(list);
    return all;
}

static tsr_status *make_session(tsr_session **out) {
    char path[4096];
    snprintf(path, sizeof path, "%s/model.onnx", case_dir);
    tsr_session_options *o = NULL;
    tsr_status *s = tsr_session_options_create(&o);
    char list[256];
    snprintf(list, sizeof list, "%s", providers);
    for (char *save = NULL, *name = strtok_r(list, ",", &save); !s && name; name = strtok_r(NULL, ",", &save))
        s = tsr_session_options_add_provider(o, name);
    if (!s) s = tsr_session_options_set_profiling(o, 1);
    /* every node on the first provider that claims it: the state is read
     * and made on the device, which is what binding is for */
    if (!s) s = tsr_session_options_set_policy(o, TSR_POLICY_FIRST);
    if (!s) s = tsr_session_create(o, path, out);
    tsr_session_options_free(o);
    return s;
}

/* Copies in one profile: of x, of y, and of the state (either name). */
typedef struct copies {
    int x, y, state, other;
    size_t state_bytes;
} copies;

/* Counts the copy events of the profile recorded since the last call. */
static copies take_copies(tsr_session *s) {
    copies c = {0};
    char *json = NULL;
    if (!ok(tsr_session_profile_take(s, &json), "profile")) return c;
    for (const char *p = json; (p = strstr(p, "\"cat\":\"copy\"")) != NULL; p++) {
        const char *v = strstr(p, "\"value\":\"");
        const char *b = strstr(p, "\"bytes\":");
        if (!v || !b) break;
        v += strlen("\"value\":\"");
        if (strncmp(v, "x\"", 2) == 0) c.x++;
        else if (strncmp(v, "y\"", 2) == 0) c.y++;
        else if (strncmp(v, "state_in\"", 9) == 0 || strncmp(v, "state_out\"", 10) == 0) {
            c.state++;
            c.state_bytes += strtoull(b + strlen("\"bytes\":"), NULL, 10);
        } else {
            c.other++;
        }
    }
    free(json);
    return c;
}

static tsr_tensor x_step(const float *xs, int t, const int64_t *dims) {
    tsr_tensor x = {sizeof x,           TSR_FLOAT,       2, dims, (void *)(xs + (size_t)t * IN),
                    IN * sizeof(float), TSR_MEMORY_HOST, 0};
    return x;
}

/* 100 runs with the state bound: checks values and copies. */
static void bound_runs(tsr_session *s, const float *xs, const tsr_tensor *state0, const float *ys,
                       const float *state100, bool device) {
    tsr_io_binding *b = NULL;
    if (!ok(tsr_io_binding_create(s, &b), "binding")) return;
    static const int64_t xdims[2] = {1, IN};
    ok(tsr_io_binding_bind_output(b, "y"), "bind y");
    ok(tsr_io_binding_bind_output_device(b, "state_out"), "bind state_out");
    ok(tsr_io_binding_bind_input(b, "state_in", state0), "bind state0");
    tsr_device_value *state = NULL;
    copies total = {0};
    int bad_values = 0;
    for (int t = 0; t < STEPS; t++) {
        tsr_tensor x = x_step(xs, t, xdims);
        if (!ok(tsr_io_binding_bind_input(b, "x", &x), "bind x")) break;
        if (!ok(tsr_session_run_with_binding(s, NULL, b), "bound run")) break;
        tsr_device_value *next = NULL;
        tsr_value *y = NULL;
        if (!ok(tsr_io_binding_take_output_device(b, "state_out", &next), "take state_out")) break;
        if (!ok(tsr_io_binding_bind_input_device(b, "state_in", next), "bind state")) break;
        tsr_device_value_free(state);
        state = next;
        if (!ok(tsr_io_binding_take_output(b, "y", &y), "take y")) break;
        const float *got = floats(y, OUT);
        if (got && !close_to(got, ys + (size_t)t * OUT, OUT)) bad_values++;
        tsr_value_free(y);
        copies c = take_copies(s);
        if (t == 0) {
            /* the zero state goes in once; x in and y out */
            CHECK(c.state == (device ? 1 : 0), "run 1: %d copies of the state", c.state);
            printf("  run 1: copies x %d, y %d, state %d (%zu bytes)\n", c.x, c.y, c.state, c.state_bytes);
            continue;
        }
        total.x += c.x;
        total.y += c.y;
        total.state += c.state;
        total.other += c.other;
        total.state_bytes += c.state_bytes;
    }
    CHECK(bad_values == 0, "%d of %d runs gave a y unlike numpy's", bad_values, STEPS);
    int runs = STEPS - 1, per_run = device ? 1 : 0;
    printf("  runs 2..%d: copies of x %d, of y %d, of the state %d (%zu bytes), other %d\n", STEPS, total.x, total.y,
           total.state, total.state_bytes, total.other);
    CHECK(total.state == 0 && total.state_bytes == 0, "the bound state was copied %d times (%zu bytes)", total.state,
          total.state_bytes);
    CHECK(total.x == per_run * runs && total.y == per_run * runs, "x copied %d times, y %d, expected %d each", total.x,
          total.y, per_run * runs);
    CHECK(total.other == 0, "%d other copies", total.other);
    /* the device value itself, and read back */
    tsr_tensor info = {.struct_size = sizeof info};
    const char *where = NULL;
    if (state && ok(tsr_device_value_info(state, &info, &where), "info")) {
        CHECK(info.elem_type == TSR_FLOAT && info.rank == 2 && info.dims[0] == 1 && info.dims[1] == HID,
              "state is not float [1, %d]", HID);
        CHECK(info.memory_kind == (device ? TSR_MEMORY_DEVICE : TSR_MEMORY_HOST), "state in memory kind %d",
              (int)info.memory_kind);
        printf("  the state lives in %s memory (%s)\n", info.memory_kind == TSR_MEMORY_DEVICE ? "device" : "host",
               where);
    }
    tsr_value *last = NULL;
    if (state && ok(tsr_device_value_to_host(state, &last), "to host")) {
        const float *got = floats(last, HID);
        CHECK(got && close_to(got, state100, HID), "the final state differs from numpy's");
        tsr_value_free(last);
    }
    uint64_t peak = 0, left = 1;
    if (ok(tsr_session_working_bytes(s, &peak, &left), "working bytes"))
        CHECK(left == 0, "the last run left %llu bytes charged", (unsigned long long)left);
    tsr_device_value_free(state);
    tsr_io_binding_free(b);
}

/* The same 100 runs without binding: the state crosses twice per run. */
static void unbound_runs(tsr_session *s, const float *xs, const tsr_value *state0, const float *ys,
                         const float *state100, bool device) {
    static const int64_t xdims[2] = {1, IN};
    tsr_value *state = NULL;
    if (!ok(tsr_value_clone(state0, &state), "clone")) return;
    copies total = {0};
    int bad_values = 0;
    for (int t = 0; t < STEPS; t++) {
        tsr_tensor x = x_step(xs, t, xdims), st = {.struct_size = sizeof st};
        if (!ok(tsr_value_tensor(state, &st), "state view")) break;
        const char *names[2] = {"x", "state_in"};
        const tsr_tensor *ins[2] = {&x, &st};
        tsr_value *outs[2] = {NULL, NULL};
        if (!ok(tsr_session_run(s, 2, names, ins, 2, NULL, outs), "unbound run")) break;
        const float *got = floats(outs[0], OUT);
        if (got && !close_to(got, ys + (size_t)t * OUT, OUT)) bad_values++;
        tsr_value_free(outs[0]);
        tsr_value_free(state);
        state = outs[1];
        copies c = take_copies(s);
        total.x += c.x;
        total.y += c.y;
        total.state += c.state;
        total.state_bytes += c.state_bytes;
    }
    const float *got = floats(state, HID);
    CHECK(got && close_to(got, state100, HID), "unbound: the final state differs from numpy's");
    CHECK(bad_values == 0, "unbound: %d of %d runs gave a y unlike numpy's", bad_values, STEPS);
    printf("  %d runs: copies of x %d, of y %d, of the state %d (%zu bytes)\n", STEPS, total.x, total.y, total.state,
           total.state_bytes);
    CHECK(total.state == (device ? 2 * STEPS : 0), "unbound: %d copies of the state", total.state);
    tsr_value_free(state);
}

/* Every misuse is an error that says what is wrong. */
static void hostile(tsr_session *s, const float *xs, const tsr_tensor *state0) {
    static const int64_t xdims[2] = {1, IN}, bad_dims[2] = {1, IN + 1};
    tsr_tensor x = x_step(xs, 0, xdims);
    tsr_io_binding *b = NULL, *b2 = NULL;
    if (!ok(tsr_io_binding_create(s, &b), "binding")) return;
    expect_error(tsr_io_binding_bind_input(b, "nope", &x), TSR_ERR_INVALID_ARGUMENT, "no input 'nope'",
                 "unknown input");
    expect_error(tsr_io_binding_bind_input(b, "W", &x), TSR_ERR_INVALID_ARGUMENT, "no input 'W'",
                 "an initializer as input");
    expect_error(tsr_io_binding_bind_output(b, "nope"), TSR_ERR_INVALID_ARGUMENT, "no output 'nope'", "unknown output");
    expect_error(tsr_io_binding_bind_output_device(b, "x"), TSR_ERR_INVALID_ARGUMENT, "no output 'x'",
                 "an input bound as output");
    tsr_tensor wrong = {sizeof wrong, TSR_FLOAT, 2, bad_dims, (void *)xs, (IN + 1) * sizeof(float), TSR_MEMORY_HOST, 0};
    expect_error(tsr_io_binding_bind_input(b, "x", &wrong), TSR_ERR_INVALID_ARGUMENT, "dimension 1 must be 8",
                 "a host tensor of the wrong shape");
    tsr_tensor on_dev = x;
    on_dev.memory_kind = TSR_MEMORY_DEVICE;
    expect_error(tsr_io_binding_bind_input(b, "x", &on_dev), TSR_ERR_INVALID_ARGUMENT, "host memory",
                 "a raw device pointer as a host tensor");
    expect_error(tsr_io_binding_bind_input_device(b, "x", NULL), TSR_ERR_INVALID_ARGUMENT, "NULL",
                 "a NULL device value");
    ok(tsr_io_binding_bind_input(b, "x", &x), "bind x");
    expect_error(tsr_session_run_with_binding(s, NULL, b), TSR_ERR_INVALID_ARGUMENT, "'state_in' is not bound",
                 "an input left unbound");
    ok(tsr_io_binding_bind_input(b, "state_in", state0), "bind state0");
    ok(tsr_io_binding_bind_output_device(b, "y"), "bind y to device");
    ok(tsr_io_binding_bind_output_device(b, "state_out"), "bind state_out to device");
    ok(tsr_session_run_with_binding(s, NULL, b), "run");
    tsr_value *hv = NULL;
    expect_error(tsr_io_binding_take_output(b, "y", &hv), TSR_ERR_INVALID_ARGUMENT, "tsr_io_binding_take_output_device",
                 "a device output taken as host");
    tsr_device_value *y = NULL, *st = NULL, *again = NULL;
    ok(tsr_io_binding_take_output_device(b, "y", &y), "take y");
    ok(tsr_io_binding_take_output_device(b, "state_out", &st), "take state");
    expect_error(tsr_io_binding_take_output_device(b, "y", &again), TSR_ERR_INVALID_ARGUMENT, "holds no result",
                 "an output taken twice");
    expect_error(tsr_io_binding_bind_input_device(b, "state_in", y), TSR_ERR_INVALID_ARGUMENT, "dimension 1 must be 16",
                 "a device value of the wrong shape");
    /* a value freed while bound: the run names it, reads nothing */
    ok(tsr_io_binding_bind_input_device(b, "state_in", st), "bind state");
    tsr_device_value_free(st);
    expect_error(tsr_session_run_with_binding(s, NULL, b), TSR_ERR_INVALID_ARGUMENT, "freed",
                 "a bound device value freed before the run");
    /* another session's values and bindings */
    tsr_session *other = NULL;
    if (ok(make_session(&other), "second session") && ok(tsr_io_binding_create(other, &b2), "binding 2")) {
        ok(tsr_io_binding_bind_input(b2, "x", &x), "bind x 2");
        ok(tsr_io_binding_bind_input(b2, "state_in", state0), "bind state0 2");
        ok(tsr_io_binding_bind_output_device(b2, "state_out"), "bind state_out 2");
        expect_error(tsr_session_run_with_binding(s, NULL, b2), TSR_ERR_INVALID_ARGUMENT, "another session",
                     "a binding run on another session");
        tsr_device_value *foreign = NULL;
        if (ok(tsr_session_run_with_binding(other, NULL, b2), "run 2") &&
            ok(tsr_io_binding_take_output_device(b2, "state_out", &foreign), "take 2")) {
            expect_error(tsr_io_binding_bind_input_device(b, "state_in", foreign), TSR_ERR_INVALID_ARGUMENT,
                         "another session", "a device value of another session");
            /* results the binding still holds, and a value taken, outlive
             * the session only as handles */
            ok(tsr_session_run_with_binding(other, NULL, b2), "run 2 again");
            tsr_session_free(other);
            other = NULL;
            tsr_value *v = NULL;
            expect_error(tsr_device_value_to_host(foreign, &v), TSR_ERR_INVALID_ARGUMENT, "has been freed",
                         "a device value after its session was freed");
            tsr_tensor info = {.struct_size = sizeof info};
            expect_error(tsr_device_value_info(foreign, &info, NULL), TSR_ERR_INVALID_ARGUMENT, "has been freed",
                         "info after its session was freed");
            expect_error(tsr_io_binding_bind_input_device(b, "state_in", foreign), TSR_ERR_INVALID_ARGUMENT,
                         "has been freed", "binding a value whose session was freed");
            tsr_device_value_free(foreign);
        }
        tsr_io_binding_free(b2); /* after its session: frees the handles only */
    }
    tsr_session_free(other);
    /* a binding reused after clear needs everything bound again */
    tsr_io_binding_clear(b);
    expect_error(tsr_session_run_with_binding(s, NULL, b), TSR_ERR_INVALID_ARGUMENT, "is not bound",
                 "a run after clear");
    tsr_device_value_free(y);
    tsr_io_binding_free(b);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s CASE_DIR PROVIDER[,PROVIDER...]\n", argv[0]);
        return 2;
    }
    case_dir = argv[1];
    providers = argv[2];
    if (!providers_available()) return 77;
    tsr_value *xs_v = load("xs.pb"), *ys_v = load("ys.pb"), *s0_v = load("state0.pb"), *s100_v = load("state100.pb");
    if (!xs_v || !ys_v || !s0_v || !s100_v) return 1;
    const float *xs = floats(xs_v, STEPS * IN), *ys = floats(ys_v, STEPS * OUT), *s100 = floats(s100_v, HID);
    tsr_tensor state0 = {.struct_size = sizeof state0};
    if (!xs || !ys || !s100 || !ok(tsr_value_tensor(s0_v, &state0), "state0")) return 1;
    tsr_session *s = NULL;
    if (!ok(make_session(&s), "session")) return 1;
    /* Whether the state is made in device memory: the provider that runs
     * Tanh keeps its tensors there. */
    bool device = false;
    for (size_t i = 0; i < tsr_session_node_count(s); i++) {
        tsr_node_info n = {.struct_size = sizeof n};
        if (!tsr_session_node_info(s, i, &n) && strcmp(n.op_type, "Tanh") == 0)
            device = strcmp(n.provider, "reference") != 0;
    }
    printf("%s: bound state, %d runs\n", providers, STEPS);
    bound_runs(s, xs, &state0, ys, s100, device);
    printf("%s: unbound, %d runs\n", providers, STEPS);
    unbound_runs(s, xs, s0_v, ys, s100, device);
    printf("%s: misuse\n", providers);
    hostile(s, xs, &state0);
    tsr_session_free(s);
    tsr_value_free(xs_v);
    tsr_value_free(ys_v);
    tsr_value_free(s0_v);
    tsr_value_free(s100_v);
    printf("%s\n", failures ? "FAILED" : "OK");
    return failures ? 1 : 0;
}
