/* The planned arena for host intermediates (runtime/arena_plan.c): the
 * block a plan needs, worked out by hand for small chains, that a second
 * run with the same input shapes places every intermediate in it and
 * allocates only graph outputs, that other shapes get plans of their own
 * (at most ARENA_MAX_PLANS), that working_bytes counts what it counted
 * before, and that runs from several threads get the right numbers.
 *
 * exec_chain.onnx (tests/data/make_abi_models.py; see test_executor.c),
 * x float[2,3] (24 bytes a tensor), one reference piece per node:
 *     p0 a = Relu(x)   p1 b = Add(a, k)   p2 c = Relu(b)   p3 d = Add(c, a)
 *     p4 e = Relu(d)   p5 y = Add(e, c)   outputs y, c
 * c and y are graph outputs: never placed. The others live from their
 * producer to their last reader: a [0,3], b [1,2], d [3,4], e [4,5]; each
 * takes 64 bytes (24 rounded up to ARENA_ALIGN). In allocation order,
 * best fit:
 *     a -> 0     (nothing live)
 *     b -> 64    (a live)
 *     d -> 64    (b died after p2; a still live at p3, so not 0)
 *     e -> 0     (a died after p3; the gap below d fits exactly)
 * so the block's tensor region is 128 bytes, where four separate tensors
 * took 256, and the dims of the four (rank 2) take 4 * 2 * 8 = 64 more. */
#include <CUnit/CUnit.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena_plan.h"
#include "session.h"
#include "tessera/tessera.h"

static const float X[6] = {-1, 2, -3, 4, -5, 6};
static const float WANT_Y[6] = {1, 4, 4, 13, 0, 22};
static const float WANT_C[6] = {0.5f, 1, 2, 4.5f, 0, 8};
static const float WANT_A[6] = {0, 2, 0, 4, 0, 6};

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

static tsr_session *open_model(const char *name, bool observe_all, const char *limit, int64_t value) {
    tsr_session_options *o;
    if (tsr_session_options_create(&o)) return NULL;
    tsr_status_free(tsr_session_options_add_provider(o, "reference"));
    tsr_status_free(tsr_session_options_set_log_level(o, TSR_LOG_ERROR));
    if (observe_all) tsr_status_free(tsr_session_options_set_observe_all(o, 1));
    if (limit) tsr_status_free(tsr_session_options_set_limit(o, limit, value));
    tsr_session *s = NULL;
    tsr_status *st = tsr_session_create(o, data_path(name), &s);
    tsr_session_options_free(o);
    if (st) fprintf(stderr, "\n  %s: %s\n", name, tsr_status_message(st));
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    return s;
}

static bool same(const tsr_value *v, const float *want, size_t n) {
    tsr_tensor t = {.struct_size = sizeof t};
    tsr_status *st = tsr_value_tensor(v, &t);
    bool ok = !st && t.elem_type == TSR_FLOAT && t.nbytes == n * sizeof(float);
    tsr_status_free(st);
    for (size_t i = 0; ok && i < n; i++) ok = ((const float *)t.data)[i] == want[i];
    return ok;
}

/* One run of exec_chain asking for `names` (n of them). */
static tsr_status *run_chain(tsr_session *s, size_t n, const char *const *names, tsr_value **outs) {
    static const int64_t dims[2] = {2, 3};
    tsr_tensor x = {sizeof x, TSR_FLOAT, 2, dims, (void *)X, sizeof X, TSR_MEMORY_HOST, 0};
    const char *in_names[] = {"x"};
    const tsr_tensor *ins[] = {&x};
    return tsr_session_run(s, 1, in_names, ins, n, names, outs);
}

static arena_stats stats(tsr_session *s) {
    arena_stats a;
    arena_plans_stats(s->arena, &a);
    return a;
}

static void test_chain_plan(void) {
    tsr_session *s = open_model("exec_chain.onnx", false, NULL, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s->arena);
    CU_ASSERT_EQUAL_FATAL(s->main.part.n_pieces, 6);
    uint64_t peaks[4];
    for (int round = 0; round < 4; round++) {
        tsr_value *outs[2] = {NULL, NULL};
        tsr_status *st = run_chain(s, 2, NULL, outs);
        if (st) fprintf(stderr, "\n  run %d: %s\n", round, tsr_status_message(st));
        CU_ASSERT_PTR_NULL(st);
        tsr_status_free(st);
        CU_ASSERT(outs[0] && same(outs[0], WANT_Y, 6));
        CU_ASSERT(outs[1] && same(outs[1], WANT_C, 6));
        tsr_value_free(outs[0]);
        tsr_value_free(outs[1]);
        arena_stats a = stats(s);
        CU_ASSERT_EQUAL(a.plans, 1);
        if (round == 0) {
            /* recorded: all six allocated alone, nothing placed yet */
            CU_ASSERT_EQUAL(a.placed, 0);
            CU_ASSERT_EQUAL(a.allocated, 6);
            CU_ASSERT_EQUAL(a.planned_bytes, 0);
            CU_ASSERT_EQUAL(a.blocks, 0);
        } else {
            /* a, b, d, e in the block; only the outputs c and y alone */
            CU_ASSERT_EQUAL(a.placed, 4);
            CU_ASSERT_EQUAL(a.allocated, 2);
            CU_ASSERT_EQUAL(a.planned_bytes, 128);
            CU_ASSERT_EQUAL(a.blocks, 1);
            CU_ASSERT_EQUAL(a.block_bytes, 128 + 64);
            CU_ASSERT_EQUAL(a.runs_placed, (uint64_t)round);
        }
        uint64_t left = 1;
        CU_ASSERT_PTR_NULL(tsr_session_working_bytes(s, &peaks[round], &left));
        CU_ASSERT_EQUAL(left, 0);
    }
    /* working_bytes counts each tensor as before: the same each run */
    for (int round = 1; round < 4; round++) CU_ASSERT_EQUAL(peaks[round], peaks[0]);
    tsr_session_free(s);
}

/* With observe_all, an intermediate asked for by name is copied out of the
 * block: it must hold a's numbers after the block was reused for e. */
static void test_observed_value_is_a_copy(void) {
    tsr_session *s = open_model("exec_chain.onnx", true, NULL, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    const char *names[] = {"a", "y"};
    for (int round = 0; round < 3; round++) {
        tsr_value *outs[2] = {NULL, NULL};
        tsr_status *st = run_chain(s, 2, names, outs);
        CU_ASSERT_PTR_NULL(st);
        tsr_status_free(st);
        CU_ASSERT(outs[0] && same(outs[0], WANT_A, 6));
        CU_ASSERT(outs[1] && same(outs[1], WANT_Y, 6));
        tsr_value_free(outs[0]);
        tsr_value_free(outs[1]);
    }
    arena_stats a = stats(s);
    /* observe_all makes every node its own piece boundary, as before */
    CU_ASSERT_EQUAL(a.placed, 4);
    CU_ASSERT_EQUAL(a.planned_bytes, 128);
    tsr_session_free(s);
}

/* exec_dynamic.onnx: a = Relu(x), y = Add(a, k) on x[N, 3]. a is the one
 * intermediate: 12 N bytes, live [0, 1], so a plan's tensor region is
 * 12 N rounded up to 64. */
static tsr_status *run_dynamic(tsr_session *s, int64_t n, bool *right) {
    float x[3 * 8];
    float want[3 * 8];
    static const float k[3] = {0.5f, -1, 2};
    for (int64_t i = 0; i < 3 * n; i++) {
        x[i] = (float)((i % 2) ? i : -i);
        want[i] = (x[i] > 0 ? x[i] : 0) + k[i % 3];
    }
    const int64_t dims[2] = {n, 3};
    tsr_tensor t = {sizeof t, TSR_FLOAT, 2, dims, x, sizeof(float) * 3 * (size_t)n, TSR_MEMORY_HOST, 0};
    const char *in_names[] = {"x"};
    const tsr_tensor *ins[] = {&t};
    tsr_value *y = NULL;
    tsr_status *st = tsr_session_run(s, 1, in_names, ins, 1, NULL, &y);
    *right = !st && y && same(y, want, 3 * (size_t)n);
    tsr_value_free(y);
    return st;
}

static void test_plans_per_shape(void) {
    tsr_session *s = open_model("exec_dynamic.onnx", false, NULL, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    /* N, then whether that run places (a plan for N exists), its planned
     * bytes, and how many plans are kept after it */
    static const struct {
        int64_t n;
        uint64_t placed, planned, plans;
    } steps[] = {
        {2, 0, 0, 1},
        {2, 1, 64, 1},
        {1, 0, 0, 2},
        {1, 1, 64, 2},
        {2, 1, 64, 2},
        {6, 0, 0, 3},
        {6, 1, 128, 3}, /* 72 bytes: two alignment units */
        {5, 0, 0, 4},
        {5, 1, 64, 4},
        /* a fifth shape: the least recently used plan (N = 1) goes */
        {8, 0, 0, 4},
        {8, 1, 128, 4},
        {2, 1, 64, 4},
        {1, 0, 0, 4},
        {1, 1, 64, 4},
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        bool right = false;
        tsr_status *st = run_dynamic(s, steps[i].n, &right);
        if (st) fprintf(stderr, "\n  N=%lld: %s\n", (long long)steps[i].n, tsr_status_message(st));
        CU_ASSERT_PTR_NULL(st);
        tsr_status_free(st);
        CU_ASSERT(right);
        arena_stats a = stats(s);
        if (a.placed != steps[i].placed || a.planned_bytes != steps[i].planned || a.plans != steps[i].plans)
            fprintf(stderr, "\n  step %zu (N=%lld): placed %llu planned %llu plans %llu\n", i, (long long)steps[i].n,
                    (unsigned long long)a.placed, (unsigned long long)a.planned_bytes, (unsigned long long)a.plans);
        CU_ASSERT_EQUAL(a.placed, steps[i].placed);
        CU_ASSERT_EQUAL(a.allocated, 2 - steps[i].placed); /* y always, a until planned */
        CU_ASSERT_EQUAL(a.planned_bytes, steps[i].planned);
        CU_ASSERT_EQUAL(a.plans, steps[i].plans);
        CU_ASSERT(a.blocks <= ARENA_MAX_IDLE_BLOCKS);
    }
    tsr_session_free(s);
}

/* limits/chain.onnx (tests/data/make_limit_models.py): a = Relu(x),
 * b = Relu(a), y = Add(a, b) on float[1024]; at most 12288 bytes live.
 * Placed tensors are charged as allocated ones: the limit holds exactly,
 * and a run the limit stops plans nothing. */
static tsr_status *run_1024(tsr_session *s) {
    static float x[1024];
    static const int64_t dims[1] = {1024};
    tsr_tensor t = {sizeof t, TSR_FLOAT, 1, dims, x, sizeof x, TSR_MEMORY_HOST, 0};
    const char *names[] = {"x"};
    const tsr_tensor *ins[] = {&t};
    tsr_value *y = NULL;
    tsr_status *st = tsr_session_run(s, 1, names, ins, 1, NULL, &y);
    tsr_value_free(y);
    return st;
}

static void test_working_bytes_limit(void) {
    tsr_session *s = open_model("limits/chain.onnx", false, "working_bytes", 12288);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    for (int round = 0; round < 3; round++) {
        tsr_status *st = run_1024(s);
        CU_ASSERT_PTR_NULL(st);
        tsr_status_free(st);
        CU_ASSERT_EQUAL(s->working_peak, 12288);
        CU_ASSERT_EQUAL(s->working_left, 0);
    }
    arena_stats a = stats(s);
    CU_ASSERT_EQUAL(a.placed, 2);
    /* a [0,2] and b [1,2] overlap: 4096 + 4096 */
    CU_ASSERT_EQUAL(a.planned_bytes, 8192);
    tsr_session_free(s);

    s = open_model("limits/chain.onnx", false, "working_bytes", 12287);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    for (int round = 0; round < 2; round++) {
        tsr_status *st = run_1024(s);
        CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_NO_MEMORY);
        tsr_status_free(st);
        CU_ASSERT_EQUAL(s->working_left, 0);
        CU_ASSERT_EQUAL(stats(s).plans, 0);
    }
    tsr_session_free(s);
}

/* One session run from four threads with two shapes in turn: each run
 * gets its own block (tessera.h lets runs of a session queue on its lock;
 * the arena must be right however they interleave). */
typedef struct {
    tsr_session *s;
    int id;
    int wrong;
} worker;

static void *work(void *p) {
    worker *w = p;
    for (int r = 0; r < 25; r++) {
        bool right = false;
        tsr_status *st = run_dynamic(w->s, (r + w->id) % 2 ? 3 : 7, &right);
        if (st || !right) w->wrong++;
        tsr_status_free(st);
    }
    return NULL;
}

static void test_threads(void) {
    tsr_session *s = open_model("exec_dynamic.onnx", false, NULL, 0);
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
    arena_stats a = stats(s);
    CU_ASSERT_EQUAL(a.plans, 2);
    CU_ASSERT(a.runs_placed >= 90); /* 100 runs, two of them recording */
    tsr_session_free(s);
}

void unit_register(void) {
    CU_pSuite s = CU_add_suite("arena", suite_init, NULL);
    CU_add_test(s, "a chain's plan, by hand", test_chain_plan);
    CU_add_test(s, "an observed intermediate is copied out", test_observed_value_is_a_copy);
    CU_add_test(s, "one plan per input shape, at most four", test_plans_per_shape);
    CU_add_test(s, "working_bytes as before", test_working_bytes_limit);
    CU_add_test(s, "runs from four threads", test_threads);
}
