/* Loading a mapped model with its initializers unpacked one at a time
 * (core/loader_split.c) must give exactly the IR the whole unpack gives:
 * ir_model_load_file takes the split path, ir_model_load_buffer the whole
 * one, and every model here goes through both. Hand-written models put the
 * initializers between the graph's other fields and check their values
 * against numbers written here; cut and garbled files must fail as the
 * buffer path fails, with the same message, and never crash. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir.h"
#include "loader_internal.h"
#include "loader_split.h"
#include "loader_test_files.h"
#include "onnx_writer.h"
#include "status.h"
#include "tessera/tessera.h"

#define BIG_N 70000 /* floats: 280 KB, so whole pages lie inside it */

static char tmpdir[64];

static const char *in_tmp(const char *name) {
    static char buf[256];
    snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
    return buf;
}

/* --- protobuf bytes written by hand ---------------------------------------- */

typedef struct wbuf {
    uint8_t *p;
    size_t n, cap;
} wbuf;

static void put(wbuf *b, const void *d, size_t n) {
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2;
        b->p = realloc(b->p, b->cap);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b->p);
    }
    if (n) memcpy(b->p + b->n, d, n);
    b->n += n;
}

static void put_varint(wbuf *b, uint64_t v) {
    for (; v >= 0x80; v >>= 7) put(b, &(uint8_t){(uint8_t)(v | 0x80)}, 1);
    put(b, &(uint8_t){(uint8_t)v}, 1);
}

/* A length-delimited field; `pad` writes the length in 5 bytes, as a
 * serializer that reserves the room before it knows the length does. */
static void put_len_field(wbuf *b, unsigned id, const void *d, size_t n, bool pad) {
    put_varint(b, (uint64_t)id << 3 | 2);
    if (pad) {
        uint8_t v[5];
        for (int i = 0; i < 5; i++) v[i] = (uint8_t)(((uint64_t)n >> (7 * i)) & 0x7f) | (i < 4 ? 0x80 : 0);
        put(b, v, 5);
    } else {
        put_varint(b, n);
    }
    put(b, d, n);
}

static void put_msg(wbuf *b, unsigned id, const void *msg) {
    const ProtobufCMessage *m = msg;
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *t = malloc(n ? n : 1);
    CU_ASSERT_FATAL(protobuf_c_message_pack(m, t) == n);
    put_len_field(b, id, t, n, false);
    free(t);
}

static float big_value(size_t i) { return (float)(i % 1000) * 0.25f - 100.0f; }

/* Graph fields in the order a hand-rolled writer might use: initializers
 * before, between and after the nodes, inputs and outputs. */
static void put_graph_fields(wbuf *g) {
    put_len_field(g, 2, "split", 5, false); /* name */
    float *big = malloc(BIG_N * sizeof *big);
    for (size_t i = 0; i < BIG_N; i++) big[i] = big_value(i);
    int64_t big_dims[] = {BIG_N};
    Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
    t.name = "big", t.has_data_type = 1, t.data_type = TSR_FLOAT, t.n_dims = 1, t.dims = big_dims;
    t.has_raw_data = 1, t.raw_data.len = BIG_N * sizeof *big, t.raw_data.data = (uint8_t *)big;
    put_msg(g, 5, &t);
    free(big);

    Onnx__TypeProto__Tensor tt = ONNX__TYPE_PROTO__TENSOR__INIT;
    tt.has_elem_type = 1, tt.elem_type = TSR_FLOAT;
    Onnx__TypeProto ty = ONNX__TYPE_PROTO__INIT;
    ty.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE, ty.tensor_type = &tt;
    Onnx__ValueInfoProto x = ONNX__VALUE_INFO_PROTO__INIT, y = ONNX__VALUE_INFO_PROTO__INIT;
    x.name = "x", x.type = &ty, y.name = "y", y.type = &ty;
    put_msg(g, 11, &x); /* input */

    char *in[] = {"x", "big"}, *out[] = {"y"};
    Onnx__NodeProto add = ONNX__NODE_PROTO__INIT;
    add.name = "add", add.op_type = "Add", add.n_input = 2, add.input = in, add.n_output = 1, add.output = out;
    put_msg(g, 1, &add);

    float typed[] = {1.5f, -2.0f, 0.25f};
    int64_t three[] = {3}, two[] = {2}, four[] = {4};
    Onnx__TensorProto tf = ONNX__TENSOR_PROTO__INIT;
    tf.name = "typed", tf.has_data_type = 1, tf.data_type = TSR_FLOAT, tf.n_dims = 1, tf.dims = three;
    tf.n_float_data = 3, tf.float_data = typed;
    put_msg(g, 5, &tf);
    put_msg(g, 12, &y); /* output */

    int64_t ids[] = {7, -9};
    Onnx__TensorProto ti = ONNX__TENSOR_PROTO__INIT;
    ti.name = "ids", ti.has_data_type = 1, ti.data_type = TSR_INT64, ti.n_dims = 1, ti.dims = two;
    ti.n_int64_data = 2, ti.int64_data = ids;
    put_msg(g, 5, &ti);

    Onnx__StringStringEntryProto loc = ONNX__STRING_STRING_ENTRY_PROTO__INIT, len = loc;
    loc.key = "location", loc.value = "weights.bin", len.key = "length", len.value = "16";
    Onnx__StringStringEntryProto *ext_kv[] = {&loc, &len};
    Onnx__TensorProto te = ONNX__TENSOR_PROTO__INIT;
    te.name = "ext", te.has_data_type = 1, te.data_type = TSR_FLOAT, te.n_dims = 1, te.dims = four;
    te.has_data_location = 1, te.data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    te.n_external_data = 2, te.external_data = ext_kv;
    put_msg(g, 5, &te);
    put_len_field(g, 10, "doc", 3, false); /* doc_string */

    ProtobufCBinaryData strs[] = {{2, (uint8_t *)"ab"}, {3, (uint8_t *)"xyz"}};
    Onnx__TensorProto ts = ONNX__TENSOR_PROTO__INIT;
    ts.name = "s", ts.has_data_type = 1, ts.data_type = TSR_STRING, ts.n_dims = 1, ts.dims = two;
    ts.n_string_data = 2, ts.string_data = strs;
    put_msg(g, 5, &ts);
}

/* The model: ir_version, opset_import, the graph (its length padded when
 * asked), then producer_name after it. */
static wbuf built_model(bool pad) {
    wbuf g = {0}, m = {0};
    put_graph_fields(&g);
    put_varint(&m, 1 << 3 | 0);
    put_varint(&m, 8);
    Onnx__OperatorSetIdProto op = ONNX__OPERATOR_SET_ID_PROTO__INIT;
    op.domain = "", op.has_version = 1, op.version = 17;
    put_msg(&m, 8, &op);
    put_len_field(&m, 7, g.p, g.n, pad);
    put_len_field(&m, 2, "hand", 4, false);
    free(g.p);
    return m;
}

static void write_weights(void) {
    float w[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    write_file(in_tmp("weights.bin"), w, sizeof w);
}

/* --- comparing the two paths ----------------------------------------------- */

static void same_tensor(const ir_tensor *a, const ir_tensor *b) {
    CU_ASSERT_EQUAL(a->elem_type, b->elem_type);
    CU_ASSERT_EQUAL_FATAL(a->rank, b->rank);
    for (int32_t i = 0; i < a->rank; i++) CU_ASSERT_EQUAL(a->dims[i], b->dims[i]);
    CU_ASSERT_EQUAL_FATAL(a->nbytes, b->nbytes);
    if (a->elem_type != TSR_STRING) {
        CU_ASSERT(a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0);
        return;
    }
    const tsr_string *sa = a->data, *sb = b->data;
    for (size_t i = 0; i < a->nbytes / sizeof *sa; i++)
        CU_ASSERT(sa[i].size == sb[i].size && memcmp(sa[i].data, sb[i].data, sa[i].size) == 0);
}

/* Values in creation order (inputs, initializers, node outputs), with each
 * constant's bytes; then the nodes; then everything else through the
 * writer, which covers subgraphs and functions. */
static void same_model(ir_model *a, ir_model *b) {
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    const ir_graph *ga = a->graph, *gb = b->graph;
    CU_ASSERT_EQUAL_FATAL(ga->n_values, gb->n_values);
    for (size_t i = 0; i < ga->n_values; i++) {
        const ir_value *va = ga->values[i], *vb = gb->values[i];
        CU_ASSERT_STRING_EQUAL(va->name, vb->name);
        CU_ASSERT_EQUAL_FATAL(va->constant == NULL, vb->constant == NULL);
        if (va->constant) same_tensor(va->constant, vb->constant);
    }
    CU_ASSERT_EQUAL_FATAL(ga->n_nodes, gb->n_nodes);
    for (size_t i = 0; i < ga->n_nodes; i++) CU_ASSERT_STRING_EQUAL(ga->nodes[i]->name, gb->nodes[i]->name);
    void *wa = NULL, *wb = NULL;
    size_t na = 0, nb = 0;
    tsr_status *sa = onnx_write_model(a, &wa, &na), *sb = onnx_write_model(b, &wb, &nb);
    CU_ASSERT_EQUAL(sa == NULL, sb == NULL);
    if (!sa && !sb) CU_ASSERT(na == nb && memcmp(wa, wb, na) == 0);
    tsr_status_free(sa);
    tsr_status_free(sb);
    free(wa);
    free(wb);
}

/* Loads `path` as a file and, read into memory, as a buffer: the same IR,
 * or the same error. Returns the file's model (or NULL). */
static ir_model *load_both(const char *path, const char *dir) {
    size_t n;
    unsigned char *bytes = slurp(path, &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bytes);
    ir_model *mf = NULL, *mb = NULL;
    tsr_status *sf = ir_model_load_file(path, &mf);
    tsr_status *sb = ir_model_load_buffer(bytes, n, dir, &mb);
    free(bytes);
    CU_ASSERT_EQUAL(sf == NULL, sb == NULL);
    CU_ASSERT((sf == NULL) != (mf == NULL));
    if (sf && sb) {
        CU_ASSERT_EQUAL(tsr_status_code(sf), tsr_status_code(sb));
        if (strcmp(tsr_status_message(sf), tsr_status_message(sb)) != 0)
            fprintf(stderr, "\nfile: %s\nbuffer: %s\n", tsr_status_message(sf), tsr_status_message(sb));
        CU_ASSERT_STRING_EQUAL(tsr_status_message(sf), tsr_status_message(sb));
    }
    if (mf && mb) same_model(mf, mb);
    tsr_status_free(sf);
    tsr_status_free(sb);
    ir_model_free(mb);
    return mf;
}

/* loader_unpack_split on an exact-size copy (so ASan sees any overread):
 * when it takes the bytes, the whole unpack must too, and the two must
 * build the same model. Returns whether it took them. */
static bool split_matches_whole(const uint8_t *bytes, size_t n, const char *dir) {
    uint8_t *copy = malloc(n ? n : 1);
    if (n) memcpy(copy, bytes, n);
    Onnx__ModelProto *split = NULL;
    bool took = loader_unpack_split(copy, n, false, &split);
    Onnx__ModelProto *whole = onnx__model_proto__unpack(NULL, n, copy);
    free(copy);
    if (!took) {
        if (whole) onnx__model_proto__free_unpacked(whole, NULL);
        return false;
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(whole);
    ir_limits lim = ir_limits_default();
    ir_model *ms = NULL, *mw = NULL;
    tsr_status *ss = loader_build_model(split, dir, &lim, &ms);
    tsr_status *sw = loader_build_model(whole, dir, &lim, &mw);
    CU_ASSERT_EQUAL(ss == NULL, sw == NULL);
    if (ss && sw) CU_ASSERT_STRING_EQUAL(tsr_status_message(ss), tsr_status_message(sw));
    if (ms && mw) same_model(ms, mw);
    tsr_status_free(ss);
    tsr_status_free(sw);
    ir_model_free(ms);
    ir_model_free(mw);
    return true;
}

/* --- tests ----------------------------------------------------------------- */

/* The loader's own test models: raw_data, int64/int32/string/bool typed
 * fields, sparse initializers, functions, Constant nodes, an If whose
 * branches keep their own values. */
static void test_data_models(void) {
    static const char *const names[] = {"valid.onnx",      "sparse.onnx",       "function.onnx", "constants.onnx",
                                        "huge_typed.onnx", "raw_mismatch.onnx", "bad_attr.onnx"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        ir_model *m = load_both(data_path(names[i]), NULL);
        ir_model_free(m);
        size_t n;
        unsigned char *b = slurp(data_path(names[i]), &n);
        bool took = split_matches_whole(b, n, NULL);
        free(b);
        /* valid.onnx has six initializers; the split path must be the one taken */
        if (i == 0) CU_ASSERT(took);
    }
}

static void check_built_values(ir_model *m) {
    static const char *const order[] = {"x", "big", "typed", "ids", "ext", "s", "y"};
    CU_ASSERT_EQUAL_FATAL(m->graph->n_values, 7);
    for (size_t i = 0; i < 7; i++) CU_ASSERT_STRING_EQUAL(m->graph->values[i]->name, order[i]);
    const ir_tensor *big = ir_graph_find(m->graph, "big")->constant;
    CU_ASSERT_EQUAL_FATAL(big->nbytes, BIG_N * sizeof(float));
    const float *bv = big->data;
    size_t bad = 0;
    for (size_t i = 0; i < BIG_N; i++) bad += bv[i] != big_value(i);
    CU_ASSERT_EQUAL(bad, 0);
    const float typed[] = {1.5f, -2.0f, 0.25f}, ext[] = {1.0f, 2.0f, 3.0f, 4.0f};
    const int64_t ids[] = {7, -9};
    CU_ASSERT(memcmp(ir_graph_find(m->graph, "typed")->constant->data, typed, sizeof typed) == 0);
    CU_ASSERT(memcmp(ir_graph_find(m->graph, "ids")->constant->data, ids, sizeof ids) == 0);
    CU_ASSERT(memcmp(ir_graph_find(m->graph, "ext")->constant->data, ext, sizeof ext) == 0);
    const tsr_string *s = ir_graph_find(m->graph, "s")->constant->data;
    CU_ASSERT(s[0].size == 2 && memcmp(s[0].data, "ab", 2) == 0);
    CU_ASSERT(s[1].size == 3 && memcmp(s[1].data, "xyz", 3) == 0);
    CU_ASSERT_STRING_EQUAL(m->producer_name, "hand");
    CU_ASSERT_EQUAL(m->graph->n_nodes, 1);
}

/* Initializers interleaved with the other graph fields, external data, the
 * graph length minimal and padded; loaded twice (the second load reads the
 * pages the first dropped back from the page cache). */
static void test_built_model(void) {
    write_weights();
    for (int pad = 0; pad < 2; pad++) {
        wbuf b = built_model(pad);
        write_file(in_tmp("built.onnx"), b.p, b.n);
        CU_ASSERT(split_matches_whole(b.p, b.n, tmpdir));
        free(b.p);
        for (int round = 0; round < 2; round++) {
            ir_model *m = load_both(in_tmp("built.onnx"), tmpdir);
            if (m) check_built_values(m);
            ir_model_free(m);
        }
    }
}

static bool split_takes(const wbuf *b) {
    Onnx__ModelProto *mp = NULL;
    bool took = loader_unpack_split(b->p, b->n, false, &mp);
    if (took) onnx__model_proto__free_unpacked(mp, NULL);
    return took;
}

/* What the split leaves to the whole unpack, which then decides as ever. */
static void test_declines(void) {
    wbuf g = {0};
    put_graph_fields(&g);
    write_weights();

    wbuf twice = built_model(false); /* a second graph: protobuf merges the two */
    put_len_field(&twice, 7, "\x12\x03two", 5, false);
    CU_ASSERT(!split_takes(&twice));
    write_file(in_tmp("twice.onnx"), twice.p, twice.n);
    ir_model *m = load_both(in_tmp("twice.onnx"), tmpdir);
    CU_ASSERT_PTR_NOT_NULL(m);
    if (m) CU_ASSERT_STRING_EQUAL(m->graph->name, "two");
    ir_model_free(m);

    wbuf first = {0}; /* a graph before the one holding every initializer */
    put_len_field(&first, 7, "\x12\x03one", 5, false);
    wbuf rest = built_model(false);
    put(&first, rest.p, rest.n);
    CU_ASSERT(!split_takes(&first));
    write_file(in_tmp("twice.onnx"), first.p, first.n);
    m = load_both(in_tmp("twice.onnx"), tmpdir);
    CU_ASSERT_PTR_NOT_NULL(m);
    if (m) check_built_values(m);
    ir_model_free(m);

    wbuf none = {0}; /* a graph without initializers */
    put_len_field(&none, 7, "\x12\x03one", 5, false);
    CU_ASSERT(!split_takes(&none));

    wbuf varint_graph = {0}; /* graph as a varint: the whole unpack refuses it */
    put_varint(&varint_graph, 7 << 3 | 0);
    put_varint(&varint_graph, 1);
    CU_ASSERT(!split_takes(&varint_graph));

    wbuf bad_init = {0}; /* an initializer field that is not length-delimited */
    wbuf gi = {0};
    put(&gi, g.p, g.n);
    put_varint(&gi, 5 << 3 | 0);
    put_varint(&gi, 3);
    put_len_field(&bad_init, 7, gi.p, gi.n, false);
    CU_ASSERT(!split_takes(&bad_init));

    wbuf long_init = {0}; /* an initializer's length runs past the graph */
    wbuf gl = {0};
    put(&gl, g.p, g.n);
    put_varint(&gl, 5 << 3 | 2);
    put_varint(&gl, 100);
    put_len_field(&long_init, 7, gl.p, gl.n, false);
    CU_ASSERT(!split_takes(&long_init));

    wbuf group = built_model(false); /* a group field at the top: never ONNX */
    put_varint(&group, 9 << 3 | 3);
    CU_ASSERT(!split_takes(&group));

    wbuf *all[] = {&g, &twice, &first, &rest, &none, &varint_graph, &bad_init, &gi, &long_init, &gl, &group};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]->p);
}

/* A file cut short: the same error as the buffer path, never a crash. */
static void cut_at(const uint8_t *b, size_t len) {
    write_file(in_tmp("cut.onnx"), b, len);
    ir_model *m = load_both(in_tmp("cut.onnx"), tmpdir);
    ir_model_free(m);
    split_matches_whole(b, len, tmpdir);
}

static void test_truncated(void) {
    write_weights();
    wbuf b = built_model(true);
    /* every length through the model's header, the graph's header and the
     * first initializer's header; then strides through the weights; then
     * every length of the tail, where the small fields are */
    for (size_t len = 0; len < 160; len++) cut_at(b.p, len);
    for (size_t len = 160; len + 600 < b.n; len += 4099) cut_at(b.p, len);
    for (size_t len = b.n - 600; len <= b.n; len++) cut_at(b.p, len);
    free(b.p);
    size_t n;
    unsigned char *v = slurp(data_path("valid.onnx"), &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    for (size_t len = 0; len <= n; len += 7) cut_at(v, len);
    free(v);
}

/* Random bytes overwritten in the small model: the same outcome both ways. */
static void test_garbled(void) {
    size_t n;
    unsigned char *v = slurp(data_path("valid.onnx"), &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    unsigned char *copy = malloc(n);
    uint32_t seed = 4242;
    for (int iter = 0; iter < 400; iter++) {
        memcpy(copy, v, n);
        garble(copy, n, 1 + iter % 3, &seed);
        cut_at(copy, n);
    }
    free(copy);
    free(v);
}

static int make_tmpdir(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tessera_split_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : 1;
}

static int remove_tmpdir(void) {
    static const char *const files[] = {"built.onnx", "weights.bin", "twice.onnx", "cut.onnx"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) unlink(in_tmp(files[i]));
    return rmdir(tmpdir) == 0 ? 0 : 1;
}

void unit_register(void) {
    CU_pSuite s = CU_add_suite("loader_split", make_tmpdir, remove_tmpdir);
    CU_add_test(s, "data models: split and whole agree", test_data_models);
    CU_add_test(s, "interleaved initializers, external data, padded length", test_built_model);
    CU_add_test(s, "unusual framing falls back", test_declines);
    CU_add_test(s, "truncated files", test_truncated);
    CU_add_test(s, "garbled files", test_garbled);
}
