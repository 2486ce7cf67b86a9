/* Control-flow bodies' intermediates in a planned arena (runtime/cf_util.c,
 * cf_piece.arenas): a Loop body's first iteration records, later
 * iterations and runs place its intermediates in one block, values stay
 * right while an intermediate's size grows every iteration, a value placed
 * in a Loop body is read in place by an If nested in it, and one session
 * runs from four threads at once. One plan per body, whatever the shapes.
 *
 * body_arena_loop.onnx (tests/data/make_body_arena_models.py), x float[n]:
 *     acc = x; for i < trip: acc = relu(0.5 acc + x); totals[i] = 0+1+...+i
 * The body's intermediates: half, moved ([n] floats), i1 (int64 scalar),
 * upto and upto_f (i + 1 elements: larger every iteration, so never placed
 * by the plan of the one before until the plan grows past them). Expected
 * values are computed here in double, independently of the kernels.
 *
 * abi_nested_cf.onnx (make_abi_models.py): a Loop adds x to the carried
 * value (s = acc + x, an intermediate) and an If in the body returns
 * Relu(s) (cond true), reading s from the enclosing body. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena_plan.h"
#include "control_flow.h"
#include "session.h"
#include "tessera/tessera.h"

static const char *data_path(const char *name) {
    static __thread char buf[1024];
    const char *dir = getenv("TESSERA_TEST_DATA");
    snprintf(buf, sizeof buf, "%s/%s", dir && *dir ? dir : "tests/data", name);
    return buf;
}

static int suite_init(void) {
    const char *lib = getenv("TESSERA_BUILD_LIB");
    return setenv("TESSERA_PROVIDER_PATH", lib && *lib ? lib : "build/lib", 1) == 0 ? 0 : 1;
}

static tsr_session *open_model(const char *name) {
    tsr_session_options *o;
    if (tsr_session_options_create(&o)) return NULL;
    tsr_status_free(tsr_session_options_add_provider(o, "reference"));
    tsr_status_free(tsr_session_options_set_log_level(o, TSR_LOG_ERROR));
    tsr_session *s = NULL;
    tsr_status *st = tsr_session_create(o, data_path(name), &s);
    tsr_session_options_free(o);
    if (st) fprintf(stderr, "\n  %s: %s\n", name, tsr_status_message(st));
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    return s;
}

/* The arena of the body of the session's one control-flow piece. */
static arena_stats body_stats(tsr_session *s) {
    arena_stats a;
    memset(&a, 0, sizeof a);
    for (size_t i = 0; i < s->main.part.n_pieces; i++) {
        const piece *pc = &s->main.part.pieces[i];
        if (s->provs[pc->prov_index]->plugin != control_flow_plugin()) continue;
        const cf_piece *p = pc->compiled;
        arena_plans_stats(p->arenas[0], &a);
    }
    return a;
}

static bool close_to(const tsr_value *v, const double *want, size_t n) {
    tsr_tensor t = {.struct_size = sizeof t};
    tsr_status *st = tsr_value_tensor(v, &t);
    bool ok = !st && t.elem_type == TSR_FLOAT && t.nbytes == n * sizeof(float);
    tsr_status_free(st);
    for (size_t i = 0; ok && i < n; i++) ok = fabs(((const float *)t.data)[i] - want[i]) <= 1e-5 * (1 + fabs(want[i]));
    return ok;
}

/* One run of body_arena_loop with x[i] = (i % 3) - 1.25 - seed, trip
 * iterations; *right when both outputs are as computed here. */
static tsr_status *run_loop(tsr_session *s, int64_t n, int64_t trip, double seed, bool *right) {
    float x[16];
    double acc[16], totals[32] = {0};
    for (int64_t i = 0; i < n; i++) {
        x[i] = (float)((double)(i % 3) - 1.25 - seed);
        acc[i] = x[i];
    }
    for (int64_t k = 0; k < trip; k++) {
        for (int64_t i = 0; i < n; i++) acc[i] = fmax(0.5 * acc[i] + x[i], 0);
        totals[k] = (double)k * (double)(k + 1) / 2;
    }
    int64_t dims[1] = {n};
    tsr_tensor xt = {sizeof xt, TSR_FLOAT, 1, dims, x, (size_t)n * sizeof(float), TSR_MEMORY_HOST, 0};
    tsr_tensor tt = {sizeof tt, TSR_INT64, 0, NULL, &trip, sizeof trip, TSR_MEMORY_HOST, 0};
    const char *in_names[] = {"x", "trip"}, *out_names[] = {"acc", "totals"};
    const tsr_tensor *ins[] = {&xt, &tt};
    tsr_value *outs[2] = {NULL, NULL};
    tsr_status *st = tsr_session_run(s, 2, in_names, ins, 2, out_names, outs);
    *right = !st && close_to(outs[0], acc, (size_t)n) && close_to(outs[1], totals, (size_t)trip);
    tsr_value_free(outs[0]);
    tsr_value_free(outs[1]);
    return st;
}

static void test_loop_places_intermediates(void) {
    tsr_session *s = open_model("body_arena_loop.onnx");
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    for (int r = 0; r < 3; r++) {
        bool right = false;
        tsr_status *st = run_loop(s, 5, 12, 0.1 * r, &right);
        CU_ASSERT_PTR_NULL(st);
        CU_ASSERT(right);
        tsr_status_free(st);
        arena_stats a = body_stats(s);
        CU_ASSERT_EQUAL(a.plans, 1);
        CU_ASSERT(a.runs_placed >= 12 * (uint64_t)r + 11); /* every iteration but the very first */
        /* the last iteration (i = 11): half, moved, i1, and upto and
         * upto_f too, 12 elements: the plan grew to half as large again
         * as what it met at i = 10, so even in the first run they fit */
        CU_ASSERT(a.placed >= 5);
        CU_ASSERT(a.planned_bytes >= 2 * 64);
    }
    /* other shapes: the one plan grows to them, values still right */
    for (int64_t n = 1; n <= 9; n += 4) {
        bool right = false;
        tsr_status *st = run_loop(s, n, 7, 0.3, &right);
        CU_ASSERT_PTR_NULL(st);
        CU_ASSERT(right);
        tsr_status_free(st);
    }
    CU_ASSERT_EQUAL(body_stats(s).plans, 1);
    /* zero iterations: the body never runs */
    bool right = false;
    tsr_status *st = run_loop(s, 4, 0, 0, &right);
    CU_ASSERT_PTR_NULL(st);
    CU_ASSERT(right);
    tsr_status_free(st);
    tsr_session_free(s);
}

/* s = acc + x is placed in the Loop body's block; the If inside reads it. */
static void test_nested_if_reads_placed_value(void) {
    tsr_session *s = open_model("abi_nested_cf.onnx");
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    float x[2] = {1.5f, -2}, a0[2] = {0, 0};
    int64_t n = 6, dims[1] = {2};
    uint8_t c = 1;
    tsr_tensor xt = {sizeof xt, TSR_FLOAT, 1, dims, x, sizeof x, TSR_MEMORY_HOST, 0};
    tsr_tensor at = {sizeof at, TSR_FLOAT, 1, dims, a0, sizeof a0, TSR_MEMORY_HOST, 0};
    tsr_tensor nt = {sizeof nt, TSR_INT64, 0, NULL, &n, sizeof n, TSR_MEMORY_HOST, 0};
    tsr_tensor ct = {sizeof ct, TSR_BOOL, 0, NULL, &c, sizeof c, TSR_MEMORY_HOST, 0};
    const char *in_names[] = {"x", "n", "c", "a0"}, *out_names[] = {"a"};
    const tsr_tensor *ins[] = {&xt, &nt, &ct, &at};
    const double want[2] = {6 * 1.5, 0}; /* relu(acc + x) six times from 0 */
    for (int r = 0; r < 2; r++) {
        tsr_value *out = NULL;
        tsr_status *st = tsr_session_run(s, 4, in_names, ins, 1, out_names, &out);
        CU_ASSERT_PTR_NULL(st);
        CU_ASSERT(!st && close_to(out, want, 2));
        tsr_status_free(st);
        tsr_value_free(out);
    }
    arena_stats a = body_stats(s);
    CU_ASSERT(a.runs_placed >= 2 * 6 - 1);
    CU_ASSERT(a.placed >= 1); /* s */
    tsr_session_free(s);
}

typedef struct worker {
    tsr_session *s;
    int id;
    int wrong;
} worker;

static void *work(void *p) {
    worker *w = p;
    for (int r = 0; r < 25; r++) {
        bool right = false;
        int odd = (r + w->id) % 2;
        tsr_status *st = run_loop(w->s, odd ? 3 : 7, odd ? 9 : 20, 0.01 * w->id, &right);
        if (st || !right) w->wrong++;
        tsr_status_free(st);
    }
    return NULL;
}

static void test_threads(void) {
    tsr_session *s = open_model("body_arena_loop.onnx");
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    pthread_t t[4];
    worker w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){s, i, 0};
        CU_ASSERT_EQUAL(pthread_create(&t[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        CU_ASSERT_EQUAL(w[i].wrong, 0);
    }
    arena_stats a = body_stats(s);
    CU_ASSERT_EQUAL(a.plans, 1);
    CU_ASSERT(a.runs_placed > 0);
    tsr_session_free(s);
}

void unit_register(void) {
    CU_pSuite s = CU_add_suite("body arena", suite_init, NULL);
    CU_add_test(s, "a Loop body's intermediates placed", test_loop_places_intermediates);
    CU_add_test(s, "an If reads a value placed in its Loop body", test_nested_if_reads_placed_value);
    CU_add_test(s, "runs from four threads", test_threads);
}
