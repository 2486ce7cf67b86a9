/*
 * Two (or more) onednn sessions running at once on their own threads must
 * give the same results as one alone, whatever share of the process-wide
 * core budget (odn_threads.c) each run gets. Reads a backend-style case
 * (model.onnx, test_data_set_0/input_0.pb, output_0.pb: one input, one
 * float output), runs it SESSIONS x ITERS times concurrently and checks
 * every output against the expected one (|d| <= 1e-4 + 1e-4 |expected|).
 * Prints the run loops' wall time (session creation excluded) alone and
 * at once, as an observation only.
 *
 * built by providers/onednn/CMakeLists.txt (ctest onednn_concurrent); by hand:
 * cc -O2 -I abi/include providers/onednn/check/concurrent_sessions.c \
 *           -L BUILD/lib -Wl,-rpath,BUILD/lib -ltessera -lpthread -lm -o concurrent_sessions
 * usage: concurrent_sessions CASE_DIR [SESSIONS [ITERS [THREADS [PROVIDER]]]]
 * (PROVIDER: a name or .so path, default onednn, e.g. an older build's
 * plugin to compare timings with)
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tessera/tessera.h>

static const char *case_dir;
static int iters = 20, threads_opt = 0;
static const char *provider = "onednn";
static tsr_value *input, *expected;
static char *input_name;

static void *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *b = malloc(n > 0 ? (size_t)n : 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return b;
}

static tsr_value *load_tensor(const char *name, char **tensor_name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/test_data_set_0/%s", case_dir, name);
    size_t size;
    void *bytes = read_file(path, &size);
    if (!bytes) return NULL;
    tsr_value *v = NULL;
    tsr_status *s = tsr_value_from_onnx_tensor(bytes, size, &v, tensor_name);
    free(bytes);
    if (s) {
        fprintf(stderr, "%s: %s\n", path, tsr_status_message(s));
        tsr_status_free(s);
    }
    return v;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct job {
    long bad;       /* outputs off the expected ones, or -1 on an error */
    double seconds; /* of the run loop */
} job;

/* Runs the case `iters` times in a session of its own. */
static void *worker(void *arg) {
    job *j = arg;
    long *bad = &j->bad;
    *bad = 0;
    tsr_session_options *o = NULL;
    tsr_session *sess = NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/model.onnx", case_dir);
    tsr_status *s = tsr_session_options_create(&o);
    if (!s) s = tsr_session_options_add_provider(o, provider);
    if (!s) s = tsr_session_options_add_provider(o, "reference");
    if (!s && threads_opt > 0) s = tsr_session_options_set_threads(o, threads_opt);
    if (!s) s = tsr_session_create(o, path, &sess);
    tsr_session_options_free(o);
    tsr_tensor in = {.struct_size = sizeof in}, want = {.struct_size = sizeof want};
    if (!s) s = tsr_value_tensor(input, &in);
    if (!s) s = tsr_value_tensor(expected, &want);
    const char *names[1] = {input_name};
    const tsr_tensor *ins[1] = {&in};
    double t0 = now();
    for (int i = 0; !s && i < iters; i++) {
        tsr_value *out = NULL;
        s = tsr_session_run(sess, 1, names, ins, 1, NULL, &out);
        tsr_tensor got = {.struct_size = sizeof got};
        if (!s) s = tsr_value_tensor(out, &got);
        if (!s) {
            const float *g = got.data, *w = want.data;
            size_t n = want.nbytes / sizeof(float);
            if (got.nbytes != want.nbytes) *bad += 1;
            else
                for (size_t k = 0; k < n; k++)
                    if (!(fabs((double)g[k] - w[k]) <= 1e-4 + 1e-4 * fabs((double)w[k]))) {
                        *bad += 1;
                        break;
                    }
        }
        tsr_value_free(out);
    }
    j->seconds = now() - t0;
    if (s) {
        fprintf(stderr, "session: %s\n", tsr_status_message(s));
        tsr_status_free(s);
        *bad = -1;
    }
    tsr_session_free(sess);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s CASE_DIR [SESSIONS [ITERS [THREADS [PROVIDER]]]]\n", argv[0]);
        return 2;
    }
    case_dir = argv[1];
    int sessions = argc > 2 ? atoi(argv[2]) : 2;
    if (argc > 3) iters = atoi(argv[3]);
    if (argc > 4) threads_opt = atoi(argv[4]);
    if (argc > 5) provider = argv[5];
    if (sessions < 1 || sessions > 64 || iters < 1) return 2;
    input = load_tensor("input_0.pb", &input_name);
    expected = load_tensor("output_0.pb", NULL);
    if (!input || !expected) return 2;

    job alone;
    worker(&alone);
    pthread_t th[64];
    job jobs[64];
    for (int i = 0; i < sessions; i++) pthread_create(&th[i], NULL, worker, &jobs[i]);
    for (int i = 0; i < sessions; i++) pthread_join(th[i], NULL);
    int failed = alone.bad != 0;
    double slowest = 0;
    for (int i = 0; i < sessions; i++) {
        failed |= jobs[i].bad != 0;
        if (jobs[i].seconds > slowest) slowest = jobs[i].seconds;
    }
    printf("alone: %d runs in %.3f s; %d sessions at once: %d runs each, slowest in %.3f s; %s\n", iters, alone.seconds,
           sessions, iters, slowest, failed ? "MISMATCH" : "all outputs match");
    tsr_value_free(input);
    tsr_value_free(expected);
    free(input_name);
    return failed;
}
