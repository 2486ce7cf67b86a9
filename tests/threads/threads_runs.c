/*
 * The threading contract of tessera.h, tested: THREADS threads each run
 * RUNS times, alternating batch 2 and 3 (every run changes the input
 * shapes), either all on one shared session ("shared") or each on a
 * session of its own ("own"). Every output is checked against numpy's
 * (make_threads_case.py): |got - want| <= 1e-5 + 1e-4 |want|.
 *
 * usage: threads_runs CASE_DIR shared|own THREADS RUNS PROVIDER[,PROVIDER...]
 * exit 0 when every run succeeded and matched, 1 otherwise, 2 on bad usage.
 */
#include <math.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/tessera.h>

#define MAX_THREADS 64

static const char *case_dir, *providers;
static int runs;
static tsr_value *inputs[2], *expected[2]; /* batch 2, batch 3 */
static tsr_session *shared_session;

static tsr_value *load(const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", case_dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    tsr_value *v = NULL;
    tsr_status *s = tsr_value_from_onnx_tensor(buf, n, &v, NULL);
    if (s) {
        fprintf(stderr, "%s: %s\n", path, tsr_status_message(s));
        tsr_status_free(s);
    }
    return v;
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
    if (!s) s = tsr_session_create(o, path, out);
    tsr_session_options_free(o);
    return s;
}

/* 0 when `got` matches `want` element for element. */
static int mismatch(const tsr_value *got, const tsr_value *want) {
    tsr_tensor g = {.struct_size = sizeof g}, w = {.struct_size = sizeof w};
    tsr_status *s = tsr_value_tensor(got, &g);
    if (!s) s = tsr_value_tensor(want, &w);
    if (s) {
        tsr_status_free(s);
        return 1;
    }
    if (g.elem_type != TSR_FLOAT || g.nbytes != w.nbytes || g.rank != w.rank) return 1;
    const float *a = g.data, *b = w.data;
    for (size_t i = 0; i < w.nbytes / sizeof(float); i++)
        if (!(fabs((double)a[i] - b[i]) <= 1e-5 + 1e-4 * fabs((double)b[i]))) return 1;
    return 0;
}

typedef struct job {
    int index;
    long failures;
} job;

static void *worker(void *arg) {
    job *j = arg;
    tsr_session *own = NULL;
    tsr_status *s = shared_session ? NULL : make_session(&own);
    tsr_session *sess = shared_session ? shared_session : own;
    const char *names[1] = {"X"};
    for (int i = 0; !s && i < runs; i++) {
        int b = (j->index + i) % 2;
        tsr_tensor in = {.struct_size = sizeof in};
        s = tsr_value_tensor(inputs[b], &in);
        const tsr_tensor *ins[1] = {&in};
        tsr_value *out = NULL;
        if (!s) s = tsr_session_run(sess, 1, names, ins, 1, NULL, &out);
        if (!s && mismatch(out, expected[b])) j->failures++;
        tsr_value_free(out);
    }
    if (s) {
        fprintf(stderr, "thread %d: %s\n", j->index, tsr_status_message(s));
        tsr_status_free(s);
        j->failures++;
    }
    tsr_session_free(own);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: %s CASE_DIR shared|own THREADS RUNS PROVIDERS\n", argv[0]);
        return 2;
    }
    case_dir = argv[1];
    bool shared = strcmp(argv[2], "shared") == 0;
    int threads = atoi(argv[3]);
    runs = atoi(argv[4]);
    providers = argv[5];
    if (threads < 1 || threads > MAX_THREADS || runs < 1 || (!shared && strcmp(argv[2], "own") != 0)) return 2;
    inputs[0] = load("x2.pb");
    inputs[1] = load("x3.pb");
    expected[0] = load("y2.pb");
    expected[1] = load("y3.pb");
    if (!inputs[0] || !inputs[1] || !expected[0] || !expected[1]) return 2;
    if (shared) {
        tsr_status *s = make_session(&shared_session);
        if (s) {
            fprintf(stderr, "session: %s\n", tsr_status_message(s));
            tsr_status_free(s);
            return 1;
        }
    }
    pthread_t th[MAX_THREADS];
    job jobs[MAX_THREADS];
    for (int i = 0; i < threads; i++) {
        jobs[i] = (job){i, 0};
        pthread_create(&th[i], NULL, worker, &jobs[i]);
    }
    long failures = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(th[i], NULL);
        failures += jobs[i].failures;
    }
    tsr_session_free(shared_session);
    for (int i = 0; i < 2; i++) {
        tsr_value_free(inputs[i]);
        tsr_value_free(expected[i]);
    }
    printf("%s session%s, %d threads x %d runs on %s: %ld failed\n", shared ? "one shared" : "own", shared ? "" : "s",
           threads, runs, providers, failures);
    return failures != 0;
}
