/* The ONNX loader: real values from small models, and every way a file can be
 * wrong failing with a named error and never a crash. Models come from
 * tests/data/make_test_models.py. */
#include <CUnit/CUnit.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir.h"
#include "loader_test_files.h"
#include "status.h"
#include "tessera/tessera.h"

static ir_model *load_ok(const char *name) {
    ir_model *m = NULL;
    tsr_status *st = ir_model_load_file(data_path(name), &m);
    if (st) fprintf(stderr, "\n%s: %s\n", name, tsr_status_message(st));
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    return m;
}

/* Loads `path` expecting failure with `code` and a message containing `want`. */
static void expect_error_at(const char *path, int32_t code, const char *want) {
    ir_model *m = NULL;
    tsr_status *st = ir_model_load_file(path, &m);
    CU_ASSERT_PTR_NOT_NULL(st);
    CU_ASSERT_PTR_NULL(m);
    if (!st) {
        ir_model_free(m);
        return;
    }
    CU_ASSERT_EQUAL(tsr_status_code(st), code);
    if (!strstr(tsr_status_message(st), want))
        fprintf(stderr, "\nwanted \"%s\" in \"%s\"\n", want, tsr_status_message(st));
    CU_ASSERT_PTR_NOT_NULL(strstr(tsr_status_message(st), want));
    tsr_status_free(st);
}

static void expect_error(const char *name, int32_t code, const char *want) {
    expect_error_at(data_path(name), code, want);
}

static ir_value *value(ir_graph *g, const char *name) {
    ir_value *v = ir_graph_find(g, name);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    return v;
}

static ir_node *node_named(ir_graph *g, const char *name) {
    for (size_t i = 0; i < g->n_nodes; i++)
        if (strcmp(g->nodes[i]->name, name) == 0) return g->nodes[i];
    CU_FAIL_FATAL("node not found");
    return NULL;
}

/* --- a valid model, value by value ----------------------------------------- */

static void test_valid_model(void) {
    ir_model *m = load_ok("valid.onnx");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL(m->ir_version, 8);
    CU_ASSERT_STRING_EQUAL(m->producer_name, "tessera-tests");
    CU_ASSERT_EQUAL(ir_model_opset(m, ""), 17);
    CU_ASSERT_EQUAL(ir_model_opset(m, "ai.onnx"), 17);
    CU_ASSERT_EQUAL(m->n_metadata, 2);
    bool author = false;
    for (size_t i = 0; i < m->n_metadata; i++)
        if (!strcmp(m->metadata[i].key, "author")) author = !strcmp(m->metadata[i].value, "tests");
    CU_ASSERT(author);

    ir_graph *g = m->graph;
    CU_ASSERT_EQUAL(g->n_inputs, 2);
    CU_ASSERT_EQUAL(g->n_outputs, 2);
    ir_value *x = g->inputs[0];
    CU_ASSERT_STRING_EQUAL(x->name, "x");
    CU_ASSERT(x->is_graph_input);
    CU_ASSERT_EQUAL(x->type.kind, IR_TYPE_TENSOR);
    CU_ASSERT_EQUAL(x->type.elem_type, TSR_FLOAT);
    CU_ASSERT_EQUAL_FATAL(x->type.rank, 2);
    CU_ASSERT_STRING_EQUAL(x->type.dims[0].symbol, "N");
    CU_ASSERT_EQUAL(x->type.dims[0].value, TSR_DIM_UNKNOWN);
    CU_ASSERT_EQUAL(x->type.dims[1].value, 3);

    ir_tensor *w = value(g, "w")->constant;
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    CU_ASSERT_EQUAL(w->elem_type, TSR_FLOAT);
    CU_ASSERT_EQUAL_FATAL(w->rank, 2);
    CU_ASSERT_EQUAL(w->dims[0], 2);
    CU_ASSERT_EQUAL(w->dims[1], 3);
    CU_ASSERT_EQUAL_FATAL(w->nbytes, 24);
    const float wf[] = {1.5f, -2.0f, 3.25f, 0.0f, 4.0f, -1.0f};
    CU_ASSERT(memcmp(w->data, wf, sizeof wf) == 0);
    CU_ASSERT(w->view.data == w->data && w->view.nbytes == 24);
    CU_ASSERT_EQUAL(value(g, "w")->type.rank, 2);

    const int64_t bi[] = {7, -8, 9};
    CU_ASSERT(memcmp(value(g, "b")->constant->data, bi, sizeof bi) == 0);
    const uint16_t hbits[] = {15360, 49152};
    CU_ASSERT_EQUAL(value(g, "h")->constant->nbytes, 4);
    CU_ASSERT(memcmp(value(g, "h")->constant->data, hbits, sizeof hbits) == 0);
    const uint8_t fl[] = {1, 0};
    CU_ASSERT(memcmp(value(g, "flag")->constant->data, fl, 2) == 0);
    const tsr_string *ss = value(g, "names")->constant->data;
    CU_ASSERT(ss[0].size == 2 && memcmp(ss[0].data, "ab", 2) == 0);
    CU_ASSERT(ss[1].size == 3 && memcmp(ss[1].data, "xyz", 3) == 0);
    const float cp[] = {1.0f, 2.0f};
    CU_ASSERT(memcmp(value(g, "cplx")->constant->data, cp, sizeof cp) == 0);
    CU_ASSERT_EQUAL(value(g, "hi")->constant->rank, 0);
    CU_ASSERT_EQUAL(*(float *)value(g, "hi")->constant->data, 6.0f);

    /* The Constant node is folded at load: its output is a constant with no
     * producer, as an initializer is, and the node is gone. */
    for (size_t i = 0; i < g->n_nodes; i++) CU_ASSERT_STRING_NOT_EQUAL(g->nodes[i]->op_type, "Constant");
    ir_value *c = value(g, "c");
    CU_ASSERT_PTR_NULL(c->producer);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c->constant);
    const float cf[] = {0.5f, 1.5f, 2.5f};
    CU_ASSERT_EQUAL(c->constant->nbytes, sizeof cf);
    CU_ASSERT(memcmp(c->constant->data, cf, sizeof cf) == 0);
    CU_ASSERT_EQUAL(c->type.elem_type, TSR_FLOAT);
    CU_ASSERT_EQUAL_FATAL(c->type.rank, 1);
    CU_ASSERT_EQUAL(c->type.dims[0].value, 3);

    /* relu came first in the file but reads add's output. */
    ir_node *add = node_named(g, "add"), *relu = node_named(g, "relu");
    CU_ASSERT(add->index < relu->index);
    for (size_t i = 0; i < g->n_nodes; i++) {
        CU_ASSERT_EQUAL(g->nodes[i]->index, i);
        CU_ASSERT_PTR_EQUAL(g->nodes[i]->graph, g);
        CU_ASSERT_EQUAL(g->nodes[i]->opset, 17);
        CU_ASSERT_STRING_EQUAL(g->nodes[i]->domain, "");
    }
    CU_ASSERT_EQUAL(value(g, "sum")->type.rank, 2); /* from value_info */

    ir_node *clip = node_named(g, "clip");
    CU_ASSERT_EQUAL_FATAL(clip->n_inputs, 3);
    CU_ASSERT_PTR_NULL(clip->inputs[1]);
    CU_ASSERT_PTR_EQUAL(clip->inputs[2], value(g, "hi"));

    /* The If branches read y and c from the main graph through placeholders,
     * and If runs after both producers. */
    ir_node *iff = node_named(g, "if");
    CU_ASSERT(iff->index > relu->index);
    const ir_attr *tb = ir_node_attr(iff, "then_branch");
    CU_ASSERT_PTR_NOT_NULL_FATAL(tb);
    CU_ASSERT_EQUAL(tb->type, TSR_ATTR_GRAPH);
    ir_graph *then_g = tb->g;
    CU_ASSERT_PTR_EQUAL(then_g->parent, g);
    CU_ASSERT_EQUAL(then_g->depth, 1);
    ir_value *oy = value(then_g, "y"), *oc = value(then_g, "c");
    CU_ASSERT(oy->is_outer && oc->is_outer);
    CU_ASSERT_PTR_EQUAL(oy->outer, value(g, "y"));
    CU_ASSERT_PTR_EQUAL(oc->outer, c);
    CU_ASSERT_EQUAL(then_g->n_outputs, 1);
    CU_ASSERT_PTR_EQUAL(then_g->nodes[0]->graph, then_g);
    ir_model_free(m);
}

static void test_sparse_initializer(void) {
    ir_model *m = load_ok("sparse.onnx");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    ir_tensor *t = value(m->graph, "sv")->constant;
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL_FATAL(t->rank, 2);
    CU_ASSERT(t->dims[0] == 3 && t->dims[1] == 4);
    const float *f = t->data;
    for (int i = 0; i < 12; i++) CU_ASSERT_EQUAL(f[i], i == 1 ? 5.0f : i == 10 ? 6.0f : 0.0f);
    ir_model_free(m);
}

static void test_local_function(void) {
    ir_model *m = load_ok("function.onnx");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL_FATAL(m->n_functions, 1);
    ir_function *f = m->functions[0];
    CU_ASSERT_STRING_EQUAL(f->name, "AddTwice");
    CU_ASSERT_STRING_EQUAL(f->domain, "local");
    CU_ASSERT_EQUAL(f->n_opsets, 1);
    CU_ASSERT_EQUAL_FATAL(f->body->n_inputs, 2);
    CU_ASSERT_STRING_EQUAL(f->body->inputs[1]->name, "b");
    CU_ASSERT_EQUAL_FATAL(f->body->n_outputs, 1);
    CU_ASSERT_STRING_EQUAL(f->body->outputs[0]->name, "c");
    CU_ASSERT_EQUAL(f->body->n_nodes, 2);
    CU_ASSERT_EQUAL(f->body->nodes[1]->opset, 17);
    ir_node *call = m->graph->nodes[0];
    CU_ASSERT_STRING_EQUAL(call->domain, "local");
    CU_ASSERT_EQUAL(call->opset, 1);
    CU_ASSERT_PTR_EQUAL(call->inputs[0], call->inputs[1]);
    ir_model_free(m);
}

static void test_constant_kinds(void) {
    ir_model *m = load_ok("constants.onnx");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    ir_graph *g = m->graph;
    ir_tensor *t = value(g, "ci")->constant;
    CU_ASSERT(t->elem_type == TSR_INT64 && t->rank == 0 && *(int64_t *)t->data == -5);
    t = value(g, "cis")->constant;
    const int64_t cis[] = {1, 2, 3};
    CU_ASSERT(t->rank == 1 && t->dims[0] == 3 && memcmp(t->data, cis, sizeof cis) == 0);
    t = value(g, "cf")->constant;
    CU_ASSERT(t->elem_type == TSR_FLOAT && t->rank == 0 && *(float *)t->data == 0.25f);
    t = value(g, "cs")->constant;
    const tsr_string *s = t->data;
    CU_ASSERT(t->elem_type == TSR_STRING && t->rank == 0 && s[0].size == 3 && memcmp(s[0].data, "hey", 3) == 0);
    t = value(g, "css")->constant;
    s = t->data;
    CU_ASSERT(t->dims[0] == 2 && s[1].size == 2 && memcmp(s[1].data, "bc", 2) == 0);
    t = value(g, "csp")->constant;
    const int64_t dense[] = {0, 0, 42, 0};
    CU_ASSERT(t->dims[0] == 4 && memcmp(t->data, dense, sizeof dense) == 0);
    /* INT4 in int32_data: one packed byte per entry */
    t = value(g, "q")->constant;
    CU_ASSERT(t->elem_type == TSR_INT4 && t->nbytes == 2);
    CU_ASSERT(((uint8_t *)t->data)[0] == 0x21 && ((uint8_t *)t->data)[1] == 0x03);
    CU_ASSERT(value(g, "ci")->type.kind == IR_TYPE_TENSOR && value(g, "ci")->type.rank == 0);
    ir_model_free(m);

    expect_error("bad_attr.onnx", TSR_ERR_INVALID_MODEL,
                 "graph.node[0] 'c' attribute 'value': raw_data has 3 bytes, shape [2] float "
                 "needs 8");
    expect_error("no_such_model.onnx", TSR_ERR_IO, "no_such_model.onnx");
}

/* --- broken files ----------------------------------------------------------- */

static void load_any(const unsigned char *b, size_t n) {
    ir_model *m = NULL;
    tsr_status *st = ir_model_load_buffer(b, n, NULL, &m);
    CU_ASSERT((st == NULL) != (m == NULL));
    tsr_status_free(st);
    ir_model_free(m);
}

static void test_truncated_every_length(void) {
    static const char *const names[] = {"valid.onnx", "sparse.onnx", "function.onnx", "constants.onnx"};
    for (size_t k = 0; k < 4; k++) {
        size_t n;
        unsigned char *b = slurp(data_path(names[k]), &n);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        for (size_t len = 0; len < n; len++) {
            /* A fresh copy of exactly len bytes, so ASan sees any overread. */
            unsigned char *cut = malloc(len ? len : 1);
            memcpy(cut, b, len);
            load_any(cut, len);
            free(cut);
        }
        free(b);
    }
}

static void test_garbled_bytes(void) {
    size_t n;
    unsigned char *b = slurp(data_path("valid.onnx"), &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    unsigned char *copy = malloc(n);
    uint32_t seed = 12345;
    for (int iter = 0; iter < 3000; iter++) {
        memcpy(copy, b, n);
        garble(copy, n, 1 + iter % 4, &seed);
        load_any(copy, n);
    }
    for (int iter = 0; iter < 500; iter++) {
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1664525u + 1013904223u;
            copy[i] = (unsigned char)(seed >> 24);
        }
        load_any(copy, (size_t)iter % n);
    }
    free(copy);
    free(b);
    load_any(NULL, 0);
}

static void test_tensor_faults(void) {
    expect_error("raw_mismatch.onnx", TSR_ERR_INVALID_MODEL,
                 "graph.initializer[0] 'w': raw_data has 12 bytes, shape [2,3] float needs 24");
    expect_error("negative_dim.onnx", TSR_ERR_INVALID_MODEL, "graph.initializer[0] 'w': dims[0] is negative (-2)");
    /* Under ASan a 4e17-byte allocation would abort: passing shows none. */
    expect_error("huge_dim.onnx", TSR_ERR_INVALID_MODEL,
                 "raw_data has 4 bytes, shape [100000000000000000] float needs 400000000000000000");
    expect_error("overflow_dim.onnx", TSR_ERR_INVALID_MODEL, "is too large");
    expect_error("huge_typed.onnx", TSR_ERR_INVALID_MODEL,
                 "float_data has 1 values, shape [1000000000000] float needs 1000000000000");
}

static void test_graph_faults(void) {
    expect_error("cycle.onnx", TSR_ERR_INVALID_MODEL, "graph.node[1] 'n_b' is part of a cycle");
    expect_error("undefined_input.onnx", TSR_ERR_INVALID_MODEL, "graph.node[0] 'adder': input 'nope' is not defined");
    expect_error("duplicate_output.onnx", TSR_ERR_INVALID_MODEL,
                 "graph.node[1] 'second': output 'y' is also produced by graph.node[0] 'first'");
    expect_error("missing_opset.onnx", TSR_ERR_INVALID_MODEL,
                 "graph.node[0] 'frob': domain 'com.example' has no opset import");
    expect_error("arity_relu_two_inputs.onnx", TSR_ERR_INVALID_MODEL,
                 "graph.node[0] 'relu2': Relu (opset 17) takes 1 input, not 2");
    expect_error("arity_relu_three_outputs.onnx", TSR_ERR_INVALID_MODEL,
                 "graph.node[0] 'relu3': Relu (opset 17) has 1 output, not 3");
    expect_error("arity_conv_no_inputs.onnx", TSR_ERR_INVALID_MODEL,
                 "graph.node[0] 'conv0': Conv (opset 17) takes 2 to 3 inputs, not 0");
    expect_error("negative_input_dim.onnx", TSR_ERR_INVALID_MODEL,
                 "graph.input[0] 'x': dim 1 is -5 (a size is >= 0, or -1 for unknown)");
    expect_error("huge_input_dims.onnx", TSR_ERR_INVALID_MODEL,
                 "graph.input[0] 'x': its known dims make more than 2^56 elements");
    ir_model *m = load_ok("extra_opset.onnx");
    CU_ASSERT_PTR_NOT_NULL(m);
    CU_ASSERT_EQUAL(ir_model_opset(m, "com.unused"), 3);
    ir_model_free(m);
}

static void test_depth_limit(void) {
    ir_model *m = load_ok("depth_ok.onnx");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    ir_graph *g = m->graph;
    int depth = 0;
    while (g->n_nodes && ir_node_attr(g->nodes[0], "then_branch")) {
        g = ir_node_attr(g->nodes[0], "then_branch")->g;
        depth++;
    }
    CU_ASSERT_EQUAL(depth, IR_DEFAULT_GRAPH_DEPTH);
    CU_ASSERT_EQUAL(g->depth, IR_DEFAULT_GRAPH_DEPTH);
    /* the leaf reads x from the main graph, through every level */
    ir_value *x = ir_graph_find(g, "x");
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    int hops = 0;
    while (x->is_outer) {
        x = x->outer;
        hops++;
    }
    CU_ASSERT_EQUAL(hops, IR_DEFAULT_GRAPH_DEPTH);
    CU_ASSERT_PTR_EQUAL(x, ir_graph_find(m->graph, "x"));
    ir_model_free(m);
    expect_error("depth_too_deep.onnx", TSR_ERR_INVALID_MODEL,
                 "graph.node[0] 'if64': subgraphs nest at least 65 levels deep, over the graph_depth "
                 "limit (64)");
}

/* A TypeProto nested 100001 deep (sequence of sequence of ...), which
 * protobuf-c alone would follow until the stack ran out. */
static void test_wire_nesting(void) {
    size_t levels = 100001, cap = levels * 8 + 64, len = 0;
    unsigned char *buf = malloc(cap);
    unsigned char *tmp = malloc(cap);
    /* Build inside out: each level wraps the previous bytes in a field. */
    for (size_t i = 0; i < levels + 4; i++) {
        unsigned tag;
        if (i < levels) tag = (i % 2 == 0) ? (4u << 3 | 2) : (1u << 3 | 2); /* sequence_type / elem_type */
        else if (i == levels) tag = 2u << 3 | 2;                            /* ValueInfoProto.type */
        else if (i == levels + 1) tag = 11u << 3 | 2;                       /* GraphProto.input */
        else if (i == levels + 2) tag = 7u << 3 | 2;                        /* ModelProto.graph */
        else break;
        size_t n = 0;
        tmp[n++] = (unsigned char)tag;
        size_t v = len;
        do {
            tmp[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
            v >>= 7;
        } while (v);
        memcpy(tmp + n, buf, len);
        len += n;
        unsigned char *sw = buf;
        buf = tmp;
        tmp = sw;
    }
    ir_model *m = NULL;
    tsr_status *st = ir_model_load_buffer(buf, len, NULL, &m);
    CU_ASSERT_PTR_NOT_NULL(st);
    CU_ASSERT_PTR_NOT_NULL(strstr(tsr_status_message(st), "nest deeper"));
    tsr_status_free(st);
    free(buf);
    free(tmp);
}

/* --- external data ---------------------------------------------------------- */

static char tmpdir[256], outside[256];

static void copy_model(const char *name) {
    size_t n;
    unsigned char *b = slurp(data_path(name), &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    write_file(path, b, n);
    free(b);
}

static char *in_tmp(const char *name) {
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    return path;
}

static void test_external_data(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tessera_loader_XXXXXX");
    snprintf(outside, sizeof outside, "/tmp/tessera_outside_XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmpdir));
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(outside));
    static const char *const models[] = {"ext_valid.onnx",   "ext_dotdot.onnx",   "ext_absolute.onnx",
                                         "ext_symlink.onnx", "ext_past_end.onnx", "ext_offset_past_end.onnx"};
    for (size_t i = 0; i < 6; i++) copy_model(models[i]);
    /* 8 bytes of padding, then the four floats at offset 8, then padding */
    float payload[8] = {-9, -9, 1.0f, 2.0f, 3.0f, 4.0f, -9, -9};
    write_file(in_tmp("weights.bin"), payload, sizeof payload);
    char out_file[512];
    snprintf(out_file, sizeof out_file, "%s/secret.bin", outside);
    write_file(out_file, payload, sizeof payload);
    CU_ASSERT_EQUAL(symlink(out_file, in_tmp("link.bin")), 0);

    ir_model *m = NULL;
    tsr_status *st = ir_model_load_file(in_tmp("ext_valid.onnx"), &m);
    CU_ASSERT_PTR_NULL(st);
    if (st) fprintf(stderr, "\n%s\n", tsr_status_message(st));
    tsr_status_free(st);
    if (m) {
        ir_tensor *t = ir_graph_find(m->graph, "w")->constant;
        const float want[] = {1.0f, 2.0f, 3.0f, 4.0f};
        CU_ASSERT_EQUAL(t->nbytes, 16);
        CU_ASSERT(memcmp(t->data, want, 16) == 0);
        ir_model_free(m);
    }
    expect_error_at(in_tmp("ext_dotdot.onnx"), TSR_ERR_INVALID_MODEL,
                    "graph.initializer[0] 'w': external data location '../weights.bin' leaves the "
                    "model directory");
    expect_error_at(in_tmp("ext_absolute.onnx"), TSR_ERR_INVALID_MODEL, "is an absolute path");
    expect_error_at(in_tmp("ext_symlink.onnx"), TSR_ERR_INVALID_MODEL, "resolves outside the model directory");
    expect_error_at(in_tmp("ext_past_end.onnx"), TSR_ERR_INVALID_MODEL,
                    "offset 20 + length 16 is past the end of 'weights.bin' (32 bytes)");
    expect_error_at(in_tmp("ext_offset_past_end.onnx"), TSR_ERR_INVALID_MODEL, "offset 4000 is past the end");

    /* A symlink that stays inside the directory is fine. */
    unlink(in_tmp("link.bin"));
    CU_ASSERT_EQUAL(symlink("weights.bin", in_tmp("link.bin")), 0);
    m = NULL;
    st = ir_model_load_file(in_tmp("ext_symlink.onnx"), &m);
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    ir_model_free(m);

    /* Without a directory, external data is refused. */
    size_t n;
    unsigned char *b = slurp(in_tmp("ext_valid.onnx"), &n);
    m = NULL;
    st = ir_model_load_buffer(b, n, NULL, &m);
    CU_ASSERT_PTR_NOT_NULL(st);
    CU_ASSERT_PTR_NOT_NULL(strstr(tsr_status_message(st), "external data is not allowed"));
    tsr_status_free(st);
    free(b);

    /* FIFOs, as the model and as its external data: refused at once (an
     * open waiting for a writer would hang the load) */
    CU_ASSERT_EQUAL(mkfifo(in_tmp("fifo.onnx"), 0600), 0);
    expect_error_at(in_tmp("fifo.onnx"), TSR_ERR_IO, "is not a regular file");
    unlink(in_tmp("fifo.onnx"));
    unlink(in_tmp("weights.bin"));
    CU_ASSERT_EQUAL(mkfifo(in_tmp("weights.bin"), 0600), 0);
    expect_error_at(in_tmp("ext_valid.onnx"), TSR_ERR_INVALID_MODEL,
                    "external data 'weights.bin' is not a regular file");

    for (size_t i = 0; i < 6; i++) unlink(in_tmp(models[i]));
    unlink(in_tmp("weights.bin"));
    unlink(in_tmp("link.bin"));
    unlink(out_file);
    rmdir(tmpdir);
    rmdir(outside);
}

/* --- TensorProto bytes ------------------------------------------------------ */

static void test_tensor_proto_roundtrip(void) {
    int64_t dims[] = {2, 2};
    ir_tensor *t;
    CU_ASSERT_PTR_NULL_FATAL(ir_tensor_new(TSR_FLOAT, 2, dims, &t));
    float vals[] = {1, -2, 3.5f, 1e-3f};
    memcpy(t->data, vals, sizeof vals);
    void *bytes;
    size_t size;
    CU_ASSERT_PTR_NULL_FATAL(ir_tensor_to_proto_bytes(&t->view, "tee", &bytes, &size));
    ir_tensor *back;
    CU_ASSERT_PTR_NULL_FATAL(ir_tensor_from_proto_bytes(bytes, size, &back));
    CU_ASSERT_STRING_EQUAL(back->name, "tee");
    CU_ASSERT_EQUAL(back->rank, 2);
    CU_ASSERT(memcmp(back->data, vals, sizeof vals) == 0);
    ir_tensor_free(back);
    free(bytes);
    ir_tensor_free(t);

    int64_t two = 2;
    CU_ASSERT_PTR_NULL_FATAL(ir_tensor_new(TSR_STRING, 1, &two, &t));
    CU_ASSERT_PTR_NULL(ir_tensor_set_string(t, 0, "hello", 5));
    CU_ASSERT_PTR_NULL(ir_tensor_set_string(t, 1, "", 0));
    CU_ASSERT_PTR_NULL_FATAL(ir_tensor_to_proto_bytes(&t->view, NULL, &bytes, &size));
    CU_ASSERT_PTR_NULL_FATAL(ir_tensor_from_proto_bytes(bytes, size, &back));
    const tsr_string *s = back->data;
    CU_ASSERT(s[0].size == 5 && memcmp(s[0].data, "hello", 5) == 0);
    CU_ASSERT_EQUAL(s[1].size, 0);
    ir_tensor_free(back);
    free(bytes);
    ir_tensor_free(t);

    /* Truncations of a serialized tensor never crash. */
    CU_ASSERT_PTR_NULL_FATAL(ir_tensor_new(TSR_INT64, 2, dims, &t));
    CU_ASSERT_PTR_NULL_FATAL(ir_tensor_to_proto_bytes(&t->view, "n", &bytes, &size));
    for (size_t len = 0; len < size; len++) {
        unsigned char *cut = malloc(len ? len : 1);
        memcpy(cut, bytes, len);
        tsr_status *st = ir_tensor_from_proto_bytes(cut, len, &back);
        if (!st) ir_tensor_free(back);
        tsr_status_free(st);
        free(cut);
    }
    free(bytes);
    ir_tensor_free(t);
}

static void test_conformance_test_data(void) {
    const char *root = getenv("TESSERA_ONNX_TESTS");
    char path[1024];
    snprintf(path, sizeof path, "%s/node/test_abs/test_data_set_0/input_0.pb", root ? root : "../shared/onnx-tests");
    size_t n;
    unsigned char *b = slurp(path, &n);
    if (!b) return; /* the shared suite is not on this machine */
    ir_tensor *t;
    tsr_status *st = ir_tensor_from_proto_bytes(b, n, &t);
    CU_ASSERT_PTR_NULL_FATAL(st);
    CU_ASSERT_EQUAL(t->elem_type, TSR_FLOAT);
    CU_ASSERT_EQUAL_FATAL(t->rank, 3);
    CU_ASSERT(t->dims[0] == 3 && t->dims[1] == 4 && t->dims[2] == 5);
    CU_ASSERT_EQUAL(t->nbytes, 240);
    ir_tensor_free(t);
    free(b);

    /* Sequence test data is named as such, not misread. */
    snprintf(path, sizeof path, "%s/node/test_sequence_insert_at_back/test_data_set_0/input_0.pb",
             root ? root : "../shared/onnx-tests");
    b = slurp(path, &n);
    if (!b) return;
    st = ir_tensor_from_proto_bytes(b, n, &t);
    CU_ASSERT_PTR_NOT_NULL(st);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_NOT_SUPPORTED);
    tsr_status_free(st);
    free(b);
}

void unit_register(void) {
    CU_pSuite s = CU_add_suite("loader", NULL, NULL);
    CU_add_test(s, "valid model, values", test_valid_model);
    CU_add_test(s, "sparse initializer densified", test_sparse_initializer);
    CU_add_test(s, "model-local function", test_local_function);
    CU_add_test(s, "Constant node kinds", test_constant_kinds);
    CU_add_test(s, "truncated at every length", test_truncated_every_length);
    CU_add_test(s, "garbled bytes", test_garbled_bytes);
    CU_add_test(s, "tensor faults", test_tensor_faults);
    CU_add_test(s, "graph faults", test_graph_faults);
    CU_add_test(s, "subgraph depth limit", test_depth_limit);
    CU_add_test(s, "wire nesting limit", test_wire_nesting);
    CU_add_test(s, "external data", test_external_data);
    CU_add_test(s, "TensorProto round trip", test_tensor_proto_roundtrip);
    CU_add_test(s, "conformance test data", test_conformance_test_data);
}
