/* An application built against the installed SDK alone (pkg-config tessera):
 * runs a one-node Relu model over the providers given on the command line
 * and checks the output against relu worked out by hand, and that the Relu
 * node ran on sdkrelu, the vendor plugin. Usage: sdk_app MODEL PROVIDER... */
#include <tessera/tessera.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail_status(tsr_status *s, const char *what) {
    fprintf(stderr, "sdk_app: %s: %s\n", what, tsr_status_message(s));
    tsr_status_free(s);
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: sdk_app MODEL PROVIDER...\n");
        return 2;
    }
    tsr_session_options *o;
    tsr_status *s = tsr_session_options_create(&o);
    if (s) return fail_status(s, "options");
    for (int i = 2; i < argc && !s; i++) s = tsr_session_options_add_provider(o, argv[i]);
    tsr_session *sess = NULL;
    if (!s) s = tsr_session_create(o, argv[1], &sess);
    tsr_session_options_free(o);
    if (s) return fail_status(s, "creating the session");

    int bad = 0;
    /* Who runs the Relu node: the vendor plugin, not the reference. */
    size_t relu_nodes = 0;
    for (size_t i = 0; i < tsr_session_node_count(sess); i++) {
        tsr_node_info ni = {.struct_size = sizeof ni};
        if ((s = tsr_session_node_info(sess, i, &ni))) {
            tsr_session_free(sess);
            return fail_status(s, "node info");
        }
        if (strcmp(ni.op_type, "Relu") != 0) continue;
        relu_nodes++;
        if (strcmp(ni.provider, "sdkrelu") != 0) {
            fprintf(stderr, "sdk_app: Relu node '%s' ran on '%s', want sdkrelu\n", ni.name, ni.provider);
            bad = 1;
        }
    }
    if (relu_nodes != 1) {
        fprintf(stderr, "sdk_app: %zu Relu nodes in the session, want 1\n", relu_nodes);
        bad = 1;
    }

    /* x is [2,3]: negatives, a zero and positives; relu by hand below. */
    float x[6] = {-2.5f, -0.0f, 0.0f, 0.75f, -1e-3f, 3.0f};
    const float want[6] = {0.0f, 0.0f, 0.0f, 0.75f, 0.0f, 3.0f};
    const int64_t dims[2] = {2, 3};
    tsr_tensor in = {.struct_size = sizeof in,
                     .elem_type = TSR_FLOAT,
                     .rank = 2,
                     .dims = dims,
                     .data = x,
                     .nbytes = sizeof x,
                     .memory_kind = TSR_MEMORY_HOST};
    const tsr_tensor *inputs[1] = {&in};
    const char *in_names[1] = {"x"};
    const char *out_names[1] = {"y"};
    tsr_value *out = NULL;
    if ((s = tsr_session_run(sess, 1, in_names, inputs, 1, out_names, &out))) {
        tsr_session_free(sess);
        return fail_status(s, "running");
    }
    tsr_tensor y = {.struct_size = sizeof y};
    if ((s = tsr_value_tensor(out, &y))) {
        tsr_value_free(out);
        tsr_session_free(sess);
        return fail_status(s, "reading y");
    }
    if (y.elem_type != TSR_FLOAT || y.rank != 2 || y.dims[0] != 2 || y.dims[1] != 3 || y.nbytes != sizeof want) {
        fprintf(stderr, "sdk_app: y has the wrong type or shape\n");
        bad = 1;
    } else {
        const float *got = y.data;
        for (size_t i = 0; i < 6; i++) {
            if (got[i] != want[i]) {
                fprintf(stderr, "sdk_app: y[%zu] = %g, want %g\n", i, got[i], want[i]);
                bad = 1;
            }
        }
    }
    tsr_value_free(out);
    tsr_session_free(sess);
    if (!bad) printf("sdk_app: ok (%s)\n", tsr_version());
    return bad;
}
