/*
 * check-provider, check 4: concurrency. provider.h lets the host run
 * instances of different sessions at once, so a plugin must lock whatever
 * its instances share (a device context, a kernel cache, counters). Tessera
 * has no Python at run time to make a model, so the model is a case the
 * plugin passed in check 2, read once into memory.
 *  - concurrency_sessions: CP_THREADS threads, each creating its own session
 *    from the bytes and running it CP_RUNS times;
 *  - concurrency_shared: CP_THREADS threads on one session, CP_RUNS runs
 *    each (the host serialises them; the plugin must not mind changing
 *    threads between calls).
 * Every output must equal the single-threaded run's exactly: same plugin,
 * same inputs, so any difference is a race, not rounding.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check_provider.h"

typedef struct shared_model {
    const cp_run *run;
    const char *case_dir;
    void *bytes;
    size_t size;
    const tc_data *data;  /* data set 0, for its names and inputs */
    tsr_value **baseline; /* the single-threaded outputs */
    size_t nout;
    tsr_session *shared; /* concurrency_shared: the one session */
} shared_model;

typedef struct worker {
    const shared_model *m;
    pthread_barrier_t *start; /* every thread ready (session made) before any run */
    pthread_t thread;
    char error[TC_REASON_MAX / 2]; /* the first thing that went wrong */
} worker;

static tsr_session *open_bytes(const shared_model *m, char *why, size_t size) {
    tsr_session_options *o = NULL;
    tsr_session *s = NULL;
    tsr_status *st = cp_plugin_options(m->run, &o);
    if (!st) st = tsr_session_create_from_buffer(o, m->bytes, m->size, m->case_dir, &s);
    tsr_session_options_free(o);
    if (st) {
        cli_format(why, size, "session: %s", tsr_status_message(st));
        tsr_status_free(st);
        return NULL;
    }
    return s;
}

/* Runs `s` on the data set's inputs into `outs` (nout entries). */
static bool run_once(const shared_model *m, tsr_session *s, tsr_value **inputs, tsr_value **outs, char *why,
                     size_t size) {
    tsr_status *st =
        tsr_session_run_values(s, m->data->nin, m->data->names, (const tsr_value *const *)inputs, m->nout, NULL, outs);
    if (!st) return true;
    cli_format(why, size, "run: %s", tsr_status_message(st));
    tsr_status_free(st);
    return false;
}

static void *work(void *arg) {
    worker *w = arg;
    const shared_model *m = w->m;
    /* Values are not locked (tessera.h): each thread feeds its own copies. */
    size_t nin = m->data->nin;
    tsr_value **inputs = calloc(nin + 1, sizeof *inputs);
    tsr_value **outs = calloc(m->nout + 1, sizeof *outs);
    tsr_session *own = NULL, *s = NULL;
    if (!inputs || !outs) snprintf(w->error, sizeof w->error, "out of memory");
    for (size_t i = 0; !w->error[0] && i < nin; i++) {
        tsr_status *st = tsr_value_clone(m->data->inputs[i], &inputs[i]);
        if (st) {
            cli_format(w->error, sizeof w->error, "clone: %s", tsr_status_message(st));
            tsr_status_free(st);
        }
    }
    if (!w->error[0]) s = m->shared ? m->shared : (own = open_bytes(m, w->error, sizeof w->error));
    /* Sessions are made at once (allowed, and worth testing too), then the
     * runs start together, so they overlap for as long as possible. Every
     * thread reaches the barrier, failed or not, or the others would wait
     * for ever. */
    pthread_barrier_wait(w->start);
    if (!s) goto done;
    cmp_tolerance exact = {0, 0};
    for (size_t run = 0; run < CP_RUNS; run++) {
        if (!run_once(m, s, inputs, outs, w->error, sizeof w->error)) goto done;
        for (size_t k = 0; k < m->nout; k++) {
            char why[TC_REASON_MAX / 4];
            bool same = outs[k] && cmp_values(outs[k], m->baseline[k], exact, why, sizeof why);
            if (!outs[k]) snprintf(why, sizeof why, "no value returned");
            tsr_value_free(outs[k]);
            outs[k] = NULL;
            if (!same && !w->error[0])
                cli_format(w->error, sizeof w->error,
                           "run %zu, output %zu differs from the "
                           "single-threaded run: %s",
                           run + 1, k, why);
        }
        if (w->error[0]) goto done;
    }
done:
    tsr_session_free(own);
    for (size_t i = 0; inputs && i < nin; i++) tsr_value_free(inputs[i]);
    free(inputs);
    free(outs);
    return NULL;
}

static char run_threads(const cp_run *r, bool shared, char *msg, size_t size) {
    const cp_op_tally *t = &r->ops_tally;
    if (!t->passed_count) {
        snprintf(msg, size, "no claimed case passed check 2, so there is no model to run");
        return TC_SKIP;
    }
    const tc_case *c = &r->cases.items[t->passed_cases[0].index];
    shared_model m = {.run = r, .case_dir = c->dir};
    char *model = tc_join(c->dir, "model.onnx"), *set = cp_first_data_set(c->dir);
    char why[TC_REASON_MAX / 2] = "";
    tc_data d = {0};
    tsr_session *first = NULL;
    worker w[CP_THREADS];
    size_t started = 0;
    char kind = TC_FAIL;
    if (!model || !set || !tio_read_file(model, &m.bytes, &m.size)) {
        cli_format(msg, size, "%s: cannot read the model or its data", c->name);
        goto done;
    }
    if (!(first = open_bytes(&m, why, sizeof why)) || tc_load_data_set(first, set, &d, why, sizeof why) != TC_PASS) {
        cli_format(msg, size, "%s: %s", c->name, why);
        goto done;
    }
    m.data = &d;
    m.nout = tsr_session_output_count(first);
    m.shared = shared ? first : NULL;
    if (!(m.baseline = calloc(m.nout + 1, sizeof *m.baseline))) {
        snprintf(msg, size, "out of memory");
        goto done;
    }
    /* The single-threaded reference run, itself checked against the case. */
    if (!run_once(&m, first, d.inputs, m.baseline, why, sizeof why) ||
        tc_check_outputs(first, &d, m.baseline, r->tol, why, sizeof why) != TC_PASS) {
        cli_format(msg, size, "%s, single-threaded: %s", c->name, why);
        goto done;
    }
    memset(w, 0, sizeof w);
    pthread_barrier_t *start = malloc(sizeof *start);
    if (!start || pthread_barrier_init(start, NULL, CP_THREADS) != 0) {
        free(start);
        snprintf(msg, size, "cannot make a barrier for %d threads", CP_THREADS);
        goto done;
    }
    for (size_t i = 0; i < CP_THREADS; i++) {
        w[i].m = &m;
        w[i].start = start;
        if (pthread_create(&w[i].thread, NULL, work, &w[i]) != 0) break;
        started++;
    }
    if (started < CP_THREADS) {
        /* Those started wait at the barrier for ever, touching nothing but
         * it: the barrier is left allocated, and the child's exit ends them. */
        cli_format(msg, size, "could not start %d threads", CP_THREADS);
        goto done;
    }
    for (size_t i = 0; i < started; i++) pthread_join(w[i].thread, NULL);
    pthread_barrier_destroy(start);
    free(start);
    kind = TC_PASS;
    for (size_t i = 0; i < started && kind == TC_PASS; i++) {
        if (w[i].error[0]) {
            cli_format(msg, size, "%s, thread %zu: %s", c->name, i, w[i].error);
            kind = TC_FAIL;
        }
    }
    if (kind == TC_PASS)
        cli_format(msg, size,
                   "%s: %d threads x %d runs %s, every output equal to the "
                   "single-threaded run",
                   c->name, CP_THREADS, CP_RUNS, shared ? "on one shared session" : "each on a session of its own");
done:
    for (size_t k = 0; m.baseline && k < m.nout; k++) tsr_value_free(m.baseline[k]);
    free(m.baseline);
    tc_data_free(&d);
    tsr_session_free(first);
    free(m.bytes);
    free(model);
    free(set);
    return kind;
}

char cp_job_sessions_threads(const cp_run *r, char *msg, size_t size) { return run_threads(r, false, msg, size); }

char cp_job_shared_session(const cp_run *r, char *msg, size_t size) { return run_threads(r, true, msg, size); }
