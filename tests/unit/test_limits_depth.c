/* The graph_depth limit: subgraphs nested in subgraphs (If inside If) up
 * to the limit load, plan, run and free; one level more is refused with an
 * error naming the limit, what was found and where; 10,000 levels are
 * refused before protobuf-c recurses into them (the stack would not hold
 * them). The models are made here, by a protobuf writer that builds the
 * bytes from the inside out (so 10,000 levels cost linear time and no
 * recursion), as a Python script could not write them without recursing:
 *   main graph (x float[4], cond bool): y0 = If(cond) named if0,
 *     then_branch: a graph holding y1 = If(cond) named if1, ..., whose
 *     innermost then_branch is Identity(x); every else_branch is
 *     Identity(x).
 * Its deepest graph is `levels` deep; with cond true, y0 == x. */
#include <CUnit/CUnit.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "tessera/tessera.h"

/* --- a protobuf writer filling its buffer from the end ----------------- */

typedef struct pb {
    uint8_t *buf;
    size_t cap, pos; /* the bytes written are buf[pos, cap) */
    bool overflow;   /* something did not fit (and was left out) */
} pb;

static size_t pb_len(const pb *b) { return b->cap - b->pos; }

static void pb_raw(pb *b, const void *p, size_t n) {
    if (n > b->pos) {
        b->overflow = true;
        return;
    }
    b->pos -= n;
    memcpy(b->buf + b->pos, p, n);
}

static void pb_varint(pb *b, uint64_t v) {
    uint8_t t[10];
    size_t n = 0;
    do {
        t[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    pb_raw(b, t, n);
}

/* Fields are prepended: a message's last field is written first. */
static void pb_int(pb *b, unsigned field, uint64_t v) {
    pb_varint(b, v);
    pb_varint(b, field << 3 | 0);
}

static void pb_str(pb *b, unsigned field, const char *s) {
    pb_raw(b, s, strlen(s));
    pb_varint(b, strlen(s));
    pb_varint(b, field << 3 | 2);
}

/* Makes what was written since pb_len(b) was `mark` the body of a
 * length-delimited field. */
static void pb_close(pb *b, unsigned field, size_t mark) {
    pb_varint(b, pb_len(b) - mark);
    pb_varint(b, field << 3 | 2);
}

/* onnx.proto field numbers */
enum {
    MODEL_IR_VERSION = 1,
    MODEL_GRAPH = 7,
    MODEL_OPSET = 8,
    OPSET_VERSION = 2,
    GRAPH_NODE = 1,
    GRAPH_NAME = 2,
    GRAPH_INPUT = 11,
    GRAPH_OUTPUT = 12,
    NODE_INPUT = 1,
    NODE_OUTPUT = 2,
    NODE_NAME = 3,
    NODE_OP = 4,
    NODE_ATTR = 5,
    ATTR_NAME = 1,
    ATTR_G = 6,
    ATTR_TYPE = 20,
    ATTR_GRAPH = 5,
    VI_NAME = 1,
    VI_TYPE = 2,
    TYPE_TENSOR = 1,
    TENSOR_ELEM = 1,
    TENSOR_SHAPE = 2,
    SHAPE_DIM = 1,
    DIM_VALUE = 1
};

/* A ValueInfoProto as graph field `field`: a tensor of elem_type and rank
 * 0 or 1 (dims[0] = dim), or untyped when elem_type is 0. */
static void pb_value_info(pb *b, unsigned field, const char *name, int elem_type, int rank, int64_t dim) {
    size_t mark = pb_len(b);
    if (elem_type) {
        size_t type = pb_len(b), tensor = pb_len(b), shape = pb_len(b);
        if (rank == 1) {
            size_t d = pb_len(b);
            pb_int(b, DIM_VALUE, (uint64_t)dim);
            pb_close(b, SHAPE_DIM, d);
        }
        pb_close(b, TENSOR_SHAPE, shape);
        pb_int(b, TENSOR_ELEM, (uint64_t)elem_type);
        pb_close(b, TYPE_TENSOR, tensor);
        pb_close(b, VI_TYPE, type);
    }
    pb_str(b, VI_NAME, name);
    pb_close(b, field, mark);
}

/* The body of a graph holding out = Identity(x). */
static void pb_leaf_graph(pb *b, const char *name, const char *out) {
    pb_value_info(b, GRAPH_OUTPUT, out, 0, 0, 0);
    pb_str(b, GRAPH_NAME, name);
    size_t node = pb_len(b);
    pb_str(b, NODE_OP, "Identity");
    pb_str(b, NODE_OUTPUT, out);
    pb_str(b, NODE_INPUT, "x");
    pb_close(b, GRAPH_NODE, node);
}

/* An attribute of type GRAPH whose graph's body was written since `mark`. */
static void pb_graph_attr(pb *b, const char *name, size_t mark) {
    pb_close(b, ATTR_G, mark);
    pb_int(b, ATTR_TYPE, ATTR_GRAPH);
    pb_str(b, ATTR_NAME, name);
    pb_close(b, NODE_ATTR, mark);
}

/* The nested model described at the top; malloc'd, *size its length. */
static uint8_t *nested_if_model(int levels, size_t *size) {
    pb b = {NULL, (size_t)levels * 256 + 4096, 0, false};
    b.buf = malloc(b.cap);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b.buf);
    b.pos = b.cap;
    char name[64], out[64];
    /* Everything from here to the end of the buffer is one chain of
     * nested bodies, so each closes at mark 0. */
    snprintf(name, sizeof name, "then%d", levels);
    pb_leaf_graph(&b, name, "t");
    for (int k = levels - 1; k >= 0; k--) {
        /* if_k's attributes: then_branch (the graph written so far), else_branch */
        pb_graph_attr(&b, "then_branch", 0);
        size_t e = pb_len(&b);
        snprintf(name, sizeof name, "else%d", k);
        snprintf(out, sizeof out, "e%d", k);
        pb_leaf_graph(&b, name, out);
        pb_graph_attr(&b, "else_branch", e);
        pb_str(&b, NODE_OP, "If");
        snprintf(name, sizeof name, "if%d", k);
        pb_str(&b, NODE_NAME, name);
        snprintf(out, sizeof out, "y%d", k);
        pb_str(&b, NODE_OUTPUT, out);
        pb_str(&b, NODE_INPUT, "cond");
        pb_close(&b, GRAPH_NODE, 0);
        /* the graph holding if_k: a then_branch, or the main graph */
        if (k > 0) {
            pb_value_info(&b, GRAPH_OUTPUT, out, 0, 0, 0);
            snprintf(name, sizeof name, "then%d", k);
            pb_str(&b, GRAPH_NAME, name);
        } else {
            pb_value_info(&b, GRAPH_OUTPUT, "y0", TSR_FLOAT, 1, 4);
            pb_value_info(&b, GRAPH_INPUT, "cond", TSR_BOOL, 0, 0);
            pb_value_info(&b, GRAPH_INPUT, "x", TSR_FLOAT, 1, 4);
            pb_str(&b, GRAPH_NAME, "nested");
        }
    }
    pb_close(&b, MODEL_GRAPH, 0);
    size_t op = pb_len(&b);
    pb_int(&b, OPSET_VERSION, 17);
    pb_close(&b, MODEL_OPSET, op);
    pb_int(&b, MODEL_IR_VERSION, 8);
    CU_ASSERT_FATAL(!b.overflow);
    *size = pb_len(&b);
    memmove(b.buf, b.buf + b.pos, *size);
    return b.buf;
}

/* --- sessions ------------------------------------------------------------- */

static int suite_init(void) {
    const char *lib = getenv("TESSERA_BUILD_LIB");
    return setenv("TESSERA_PROVIDER_PATH", lib && *lib ? lib : "build/lib", 1) == 0 ? 0 : 1;
}

/* Options on the reference provider, with graph_depth set when > 0. */
static tsr_session_options *options(int64_t graph_depth) {
    tsr_session_options *o = NULL;
    CU_ASSERT_PTR_NULL_FATAL(tsr_session_options_create(&o));
    CU_ASSERT_PTR_NULL(tsr_session_options_add_provider(o, "reference"));
    CU_ASSERT_PTR_NULL(tsr_session_options_set_log_level(o, TSR_LOG_ERROR));
    if (graph_depth > 0) CU_ASSERT_PTR_NULL(tsr_session_options_set_limit(o, "graph_depth", graph_depth));
    return o;
}

/* Creating a session on the nested model fails with `code` and every
 * string of `want` (NULL-terminated) in its message. */
static void expect_refused(int levels, int64_t graph_depth, int32_t code, const char *const *want) {
    size_t size;
    uint8_t *bytes = nested_if_model(levels, &size);
    tsr_session_options *o = options(graph_depth);
    tsr_session *s = NULL;
    tsr_status *st = tsr_session_create_from_buffer(o, bytes, size, NULL, &s);
    CU_ASSERT_PTR_NOT_NULL(st);
    CU_ASSERT_PTR_NULL(s);
    CU_ASSERT_EQUAL(tsr_status_code(st), code);
    const char *msg = tsr_status_message(st);
    for (size_t i = 0; want[i]; i++) {
        if (!strstr(msg, want[i])) fprintf(stderr, "\n  wanted \"%s\" in \"%s\"\n", want[i], msg);
        CU_ASSERT_PTR_NOT_NULL(strstr(msg, want[i]));
    }
    tsr_status_free(st);
    tsr_session_free(s);
    tsr_session_options_free(o);
    free(bytes);
}

/* Creates a session on the nested model, runs it with cond true and checks
 * y0 == x, frees it. Returns false (with CUnit failures) when any fails. */
static bool create_run_free(int levels, int64_t graph_depth) {
    size_t size;
    uint8_t *bytes = nested_if_model(levels, &size);
    tsr_session_options *o = options(graph_depth);
    tsr_session *s = NULL;
    tsr_status *st = tsr_session_create_from_buffer(o, bytes, size, NULL, &s);
    tsr_session_options_free(o);
    free(bytes);
    if (st) fprintf(stderr, "\n  %d levels: %s\n", levels, tsr_status_message(st));
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    if (!s) return false;
    const float x[4] = {1.5f, -2, 3, 0.25f};
    const int64_t dims[1] = {4};
    uint8_t cond = 1;
    tsr_tensor tx = {sizeof tx, TSR_FLOAT, 1, dims, (void *)x, sizeof x, TSR_MEMORY_HOST, 0};
    tsr_tensor tc = {sizeof tc, TSR_BOOL, 0, NULL, &cond, 1, TSR_MEMORY_HOST, 0};
    const char *names[2] = {"x", "cond"};
    const tsr_tensor *ins[2] = {&tx, &tc};
    tsr_value *y = NULL;
    st = tsr_session_run(s, 2, names, ins, 1, NULL, &y);
    if (st) fprintf(stderr, "\n  %d levels, run: %s\n", levels, tsr_status_message(st));
    CU_ASSERT_PTR_NULL(st);
    bool ok = !st;
    tsr_status_free(st);
    tsr_tensor ty = {.struct_size = sizeof ty};
    if (ok) {
        CU_ASSERT_PTR_NULL(tsr_value_tensor(y, &ty));
        /* no _FATAL here: this may run on another thread */
        CU_ASSERT_EQUAL(ty.nbytes, sizeof x);
        ok = ty.nbytes == sizeof x && memcmp(ty.data, x, sizeof x) == 0;
        CU_ASSERT(ok);
    }
    tsr_value_free(y);
    tsr_session_free(s);
    return ok;
}

static void test_ten_thousand_levels(void) {
    const char *const want[] = {"graph.node[0] 'if0'", "subgraphs nest at least 65 levels deep",
                                "over the graph_depth limit (64)", NULL};
    expect_refused(10000, 0, TSR_ERR_INVALID_MODEL, want);
    /* still refused, and by the same check, at the most graph_depth can be */
    const char *const want_max[] = {"graph.node[0] 'if0'", "at least 257 levels deep",
                                    "over the graph_depth limit (256)", NULL};
    expect_refused(10000, IR_MAX_GRAPH_DEPTH, TSR_ERR_INVALID_MODEL, want_max);
}

static void test_default_limit(void) {
    CU_ASSERT(create_run_free(IR_DEFAULT_GRAPH_DEPTH, 0));
    const char *const want[] = {"graph.node[0] 'if0'", "at least 65 levels deep", "over the graph_depth limit (64)",
                                NULL};
    expect_refused(IR_DEFAULT_GRAPH_DEPTH + 1, 0, TSR_ERR_INVALID_MODEL, want);
}

static void test_lower_limit(void) {
    CU_ASSERT(create_run_free(8, 8));
    const char *const want[] = {"graph.node[0] 'if0'", "at least 9 levels deep", "over the graph_depth limit (8)",
                                NULL};
    expect_refused(9, 8, TSR_ERR_INVALID_MODEL, want);
}

/* --- the stack the deepest allowed nesting needs ------------------------- */

typedef struct stack_job {
    int levels;
    int64_t graph_depth;
    bool ok;
} stack_job;

static void *stack_job_run(void *p) {
    stack_job *j = p;
    j->ok = create_run_free(j->levels, j->graph_depth);
    return NULL;
}

/* Runs create_run_free on a thread whose `size`-byte stack starts filled
 * with a pattern; *used gets how much of it was touched. */
static bool on_measured_stack(int levels, int64_t graph_depth, size_t size, size_t *used) {
    uint8_t *stack = aligned_alloc(4096, size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(stack);
    memset(stack, 0xA5, size);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    CU_ASSERT_EQUAL_FATAL(pthread_attr_setstack(&attr, stack, size), 0);
    stack_job job = {levels, graph_depth, false};
    pthread_t t;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t, &attr, stack_job_run, &job), 0);
    pthread_join(t, NULL);
    pthread_attr_destroy(&attr);
    size_t untouched = 0;
    while (untouched < size && stack[untouched] == 0xA5) untouched++;
    *used = size - untouched;
    free(stack);
    return job.ok;
}

/* The stack the whole pipeline (byte scan, protobuf-c, loader, checks,
 * shape inference, planning, the run, freeing) needs at the deepest
 * nesting graph_depth allows. docs/security.md ("Stack") quotes these. */
static void test_stack_at_ceiling(void) {
    size_t used64 = 0, used256 = 0, size = (size_t)64 << 20;
    CU_ASSERT(on_measured_stack(IR_DEFAULT_GRAPH_DEPTH, 0, size, &used64));
    CU_ASSERT(on_measured_stack(IR_MAX_GRAPH_DEPTH, IR_MAX_GRAPH_DEPTH, size, &used256));
    fprintf(stderr, "\n  stack: %zu KiB at 64 levels, %zu KiB at 256 (%zu bytes a level) ", used64 >> 10, used256 >> 10,
            (used256 - used64) / (IR_MAX_GRAPH_DEPTH - IR_DEFAULT_GRAPH_DEPTH));
    /* within the 8 MiB of a default main thread or pthread */
    CU_ASSERT(used256 < (size_t)8 << 20);
    const char *const want[] = {"at least 257 levels deep", "over the graph_depth limit (256)", NULL};
    expect_refused(IR_MAX_GRAPH_DEPTH + 1, IR_MAX_GRAPH_DEPTH, TSR_ERR_INVALID_MODEL, want);
}

void unit_register(void) {
    CU_pSuite s = CU_add_suite("limits_depth", suite_init, NULL);
    CU_add_test(s, "10,000 nested Ifs: refused before decoding", test_ten_thousand_levels);
    CU_add_test(s, "64 levels run, 65 are refused (default)", test_default_limit);
    CU_add_test(s, "graph_depth=8: 8 levels run, 9 are refused", test_lower_limit);
    CU_add_test(s, "256 levels (the ceiling): stack used", test_stack_at_ceiling);
}
