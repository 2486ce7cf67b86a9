/*
 * Shape and type inference: small graphs built through ir.h, shapes worked
 * out by hand. Shapes are written as strings: "N,3,?" is rank 3 with a
 * symbolic, a fixed and an unnamed dim; "" is a scalar; "*" an unknown rank.
 */
#include <CUnit/CUnit.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "status.h"
#include "tessera/tessera.h"

/* ------------------------------------------------------------------------ */
/* Graph building                                                            */

typedef struct tb {
    ir_model *m;
    ir_graph *g;
    int64_t opset;
} tb;

static tb tb_new(int64_t opset) {
    tb t;
    t.m = ir_model_new();
    t.g = ir_graph_new(t.m, NULL, "main");
    t.m->graph = t.g;
    t.m->n_opsets = 1;
    t.m->opsets = calloc(1, sizeof *t.m->opsets);
    t.m->opsets[0].domain = strdup("");
    t.m->opsets[0].version = opset;
    t.opset = opset;
    return t;
}

static void tb_free(tb *t) { ir_model_free(t->m); }

/* Parses "N,3,?" into a type (elem 0 leaves the element type unknown). */
static void set_type(ir_type *ty, int32_t elem, const char *shape) {
    ir_type_clear(ty);
    ty->kind = IR_TYPE_TENSOR;
    ty->elem_type = elem;
    ty->rank = -1;
    if (!shape || !strcmp(shape, "*")) return;
    int32_t rank = 0;
    if (shape[0]) {
        rank = 1;
        for (const char *p = shape; *p; p++) rank += *p == ',';
    }
    ty->rank = rank;
    ty->dims = rank ? calloc((size_t)rank, sizeof *ty->dims) : NULL;
    const char *p = shape;
    for (int32_t i = 0; i < rank; i++) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char buf[64];
        snprintf(buf, sizeof buf, "%.*s", (int)len, p);
        if (buf[0] >= '0' && buf[0] <= '9') {
            ty->dims[i].value = atoll(buf);
        } else {
            ty->dims[i].value = TSR_DIM_UNKNOWN;
            if (strcmp(buf, "?")) ty->dims[i].symbol = strdup(buf);
        }
        p += len + 1;
    }
}

/* The type as a string in the same notation, "" for a scalar. */
static const char *shape_str(const ir_type *ty) {
    static char buf[512];
    if (ty->kind != IR_TYPE_TENSOR || ty->rank < 0) return "*";
    buf[0] = 0;
    for (int32_t i = 0; i < ty->rank; i++) {
        char d[64];
        if (ty->dims[i].value >= 0) snprintf(d, sizeof d, "%lld", (long long)ty->dims[i].value);
        else snprintf(d, sizeof d, "%s", ty->dims[i].symbol ? ty->dims[i].symbol : "?");
        strcat(buf, i ? "," : "");
        strcat(buf, d);
    }
    return buf;
}

static ir_value *val(tb *t, const char *name) {
    ir_value *v = NULL;
    CU_ASSERT_PTR_NULL_FATAL(ir_graph_value(t->g, name, &v));
    return v;
}

static ir_value *input(tb *t, const char *name, int32_t elem, const char *shape) {
    ir_value *v = val(t, name);
    set_type(&v->type, elem, shape);
    v->is_graph_input = true;
    t->g->inputs = realloc(t->g->inputs, (t->g->n_inputs + 1) * sizeof *t->g->inputs);
    t->g->inputs[t->g->n_inputs++] = v;
    return v;
}

static ir_value *output(tb *t, const char *name, int32_t elem, const char *shape) {
    ir_value *v = val(t, name);
    set_type(&v->type, elem, shape);
    v->is_graph_output = true;
    t->g->outputs = realloc(t->g->outputs, (t->g->n_outputs + 1) * sizeof *t->g->outputs);
    t->g->outputs[t->g->n_outputs++] = v;
    return v;
}

/* An int64 initializer of the given dims (rank -1 .. : a 1-D of `count`). */
static ir_value *const_i64(tb *t, const char *name, int32_t rank, size_t count, const int64_t *data) {
    ir_value *v = val(t, name);
    int64_t dims[1] = {(int64_t)count};
    CU_ASSERT_PTR_NULL_FATAL(ir_tensor_new(TSR_INT64, rank, dims, &v->constant));
    if (count) memcpy(v->constant->data, data, count * sizeof *data);
    return v;
}

static ir_value *const_f32(tb *t, const char *name, size_t count, const float *data) {
    ir_value *v = val(t, name);
    int64_t dims[1] = {(int64_t)count};
    CU_ASSERT_PTR_NULL_FATAL(ir_tensor_new(TSR_FLOAT, 1, dims, &v->constant));
    if (count) memcpy(v->constant->data, data, count * sizeof *data);
    return v;
}

/* Splits "a,,b" into names; empty entries are omitted optional slots. */
static size_t names(tb *t, const char *list, ir_value ***out) {
    size_t n = 0;
    *out = NULL;
    if (!list || !list[0]) return 0;
    const char *p = list;
    for (;;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char buf[128];
        snprintf(buf, sizeof buf, "%.*s", (int)len, p);
        *out = realloc(*out, (n + 1) * sizeof **out);
        (*out)[n++] = len ? val(t, buf) : NULL;
        if (!e) break;
        p = e + 1;
    }
    return n;
}

static ir_node *node(tb *t, const char *op, const char *name, const char *ins, const char *outs) {
    ir_node *n = NULL;
    CU_ASSERT_PTR_NULL_FATAL(ir_graph_add_node(t->g, &n));
    n->name = strdup(name);
    n->op_type = strdup(op);
    n->domain = strdup("");
    n->opset = t->opset;
    n->n_inputs = names(t, ins, &n->inputs);
    n->n_outputs = names(t, outs, &n->outputs);
    for (size_t i = 0; i < n->n_outputs; i++) {
        if (!n->outputs[i]) continue;
        n->outputs[i]->producer = n;
        n->outputs[i]->producer_output = i;
    }
    return n;
}

static ir_attr *add_attr(ir_node *n, const char *name, int32_t type) {
    n->attrs = realloc(n->attrs, (n->n_attrs + 1) * sizeof *n->attrs);
    ir_attr *a = &n->attrs[n->n_attrs++];
    memset(a, 0, sizeof *a);
    a->name = strdup(name);
    a->type = type;
    return a;
}

static void attr_int(ir_node *n, const char *name, int64_t v) { add_attr(n, name, TSR_ATTR_INT)->i = v; }

static void attr_str(ir_node *n, const char *name, const char *s) {
    ir_attr *a = add_attr(n, name, TSR_ATTR_STRING);
    a->s = strdup(s);
    a->s_len = strlen(s);
}

static void attr_ints(ir_node *n, const char *name, size_t count, ...) {
    ir_attr *a = add_attr(n, name, TSR_ATTR_INTS);
    a->count = count;
    a->ints = calloc(count ? count : 1, sizeof *a->ints);
    va_list ap;
    va_start(ap, count);
    for (size_t i = 0; i < count; i++) a->ints[i] = va_arg(ap, int);
    va_end(ap);
}

/* Runs inference; returns the error message ("" when it succeeded). */
static const char *infer(tb *t) {
    static char msg[512];
    tsr_status *st = ir_infer_shapes(t->g);
    snprintf(msg, sizeof msg, "%s", st ? tsr_status_message(st) : "");
    tsr_status_free(st);
    return msg;
}

#define EXPECT_OK(t) CU_ASSERT_STRING_EQUAL(infer(t), "")
#define EXPECT_SHAPE(t, name, shape) CU_ASSERT_STRING_EQUAL(shape_str(&val(t, name)->type), shape)
#define EXPECT_ELEM(t, name, elem) CU_ASSERT_EQUAL(val(t, name)->type.elem_type, elem)

/* ------------------------------------------------------------------------ */
/* Tests                                                                     */

/* A reduced shape value (issue 16): Shape(start=1) -> ReduceProd gives the
 * flattened size, Concat with the batch builds [N, 3*16*16] for Reshape. */
static void test_reduced_shape_value(void) {
    tb t = tb_new(17);
    input(&t, "x", TSR_FLOAT, "N,3,16,16");
    ir_node *n = node(&t, "Shape", "tail", "x", "s");
    attr_int(n, "start", 1);
    node(&t, "ReduceProd", "prod", "s", "p");
    n = node(&t, "Shape", "head", "x", "b");
    attr_int(n, "end", 1);
    n = node(&t, "Concat", "cat", "b,p", "shape");
    attr_int(n, "axis", 0);
    node(&t, "Reshape", "flat", "x,shape", "y");
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "p", "1");
    EXPECT_SHAPE(&t, "y", "N,768");
    tb_free(&t);

    /* ReduceSum with keepdims 0 over axes [0] (an input at opset 13):
     * 2 + 5 + 7 = 14, the length z [2,7] is reshaped to */
    t = tb_new(13);
    input(&t, "x", TSR_FLOAT, "2,5,7");
    input(&t, "z", TSR_FLOAT, "2,7");
    node(&t, "Shape", "sh", "x", "s");
    int64_t zero = 0;
    const_i64(&t, "axes", 1, 1, &zero);
    n = node(&t, "ReduceSum", "sum", "s,axes", "total");
    attr_int(n, "keepdims", 0);
    node(&t, "Unsqueeze", "u", "total,axes", "one");
    node(&t, "Reshape", "r", "z,one", "y");
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "y", "14");
    tb_free(&t);
}

/* Signal and image ops shaped by constant inputs (issue 16). */
static void test_signal_shapes(void) {
    tb t = tb_new(17);
    input(&t, "x", TSR_FLOAT, "2,16,1");
    ir_node *n = node(&t, "DFT", "dft", "x", "spec");
    attr_int(n, "onesided", 1);
    input(&t, "sig", TSR_FLOAT, "1,128,1");
    int64_t eight = 8, thirty_two = 32, sixty_four = 64;
    const_i64(&t, "step", 0, 1, &eight);
    const_i64(&t, "flen", 0, 1, &thirty_two);
    node(&t, "STFT", "stft", "sig,step,,flen", "frames");
    const_i64(&t, "bins", 0, 1, &eight);
    const_i64(&t, "dftlen", 0, 1, &sixty_four);
    input(&t, "rate", TSR_INT64, "");
    input(&t, "lo", TSR_FLOAT, "");
    input(&t, "hi", TSR_FLOAT, "");
    node(&t, "MelWeightMatrix", "mel", "bins,dftlen,rate,lo,hi", "melw");
    input(&t, "pooled", TSR_FLOAT, "1,1,2,2");
    input(&t, "where", TSR_INT64, "1,1,2,2");
    n = node(&t, "MaxUnpool", "unpool", "pooled,where", "unpooled");
    attr_ints(n, "kernel_shape", 2, 2, 2);
    attr_ints(n, "strides", 2, 2, 2);
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "spec", "2,9,2");
    /* (128 - 32) / 8 + 1 = 13 frames of 32 / 2 + 1 = 17 bins */
    EXPECT_SHAPE(&t, "frames", "1,13,17,2");
    EXPECT_SHAPE(&t, "melw", "33,8");
    EXPECT_SHAPE(&t, "unpooled", "1,1,4,4");
    tb_free(&t);

    t = tb_new(20);
    input(&t, "cols", TSR_FLOAT, "1,20,16");
    int64_t image[2] = {5, 5}, block[2] = {2, 2}, size[4] = {2, 3, 8, 10};
    const_i64(&t, "image", 1, 2, image);
    const_i64(&t, "block", 1, 2, block);
    node(&t, "Col2Im", "c2i", "cols,image,block", "img");
    input(&t, "theta", TSR_FLOAT, "2,2,3");
    const_i64(&t, "size", 1, 4, size);
    node(&t, "AffineGrid", "ag", "theta,size", "grid");
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "img", "1,5,5,5");
    EXPECT_SHAPE(&t, "grid", "2,8,10,2");
    tb_free(&t);
}

/* Ops whose outputs follow from attributes and ranks (issue 16). */
static void test_attribute_shaped(void) {
    tb t = tb_new(17);
    int64_t ten = 10;
    const_i64(&t, "size", 0, 1, &ten);
    ir_node *n = node(&t, "HannWindow", "hann", "size", "w");
    attr_int(n, "output_datatype", TSR_DOUBLE);
    input(&t, "x", TSR_FLOAT, "N,3");
    node(&t, "DynamicQuantizeLinear", "dq", "x", "q,scale,zp");
    input(&t, "boxes", TSR_FLOAT, "1,100,4");
    input(&t, "scores", TSR_FLOAT, "1,5,100");
    node(&t, "NonMaxSuppression", "nms", "boxes,scores", "sel");
    input(&t, "u", TSR_FLOAT, "6,4");
    n = node(&t, "Unique", "uniq", "u", "uy,ui,uinv,ucnt");
    attr_int(n, "axis", 0);
    input(&t, "logits", TSR_FLOAT, "2,7");
    n = node(&t, "Multinomial", "mn", "logits", "draws");
    attr_int(n, "sample_size", 4);
    input(&t, "target", TSR_INT64, "2");
    n = node(&t, "SoftmaxCrossEntropyLoss", "sce", "logits,target", "loss,logp");
    attr_str(n, "reduction", "none");
    node(&t, "NegativeLogLikelihoodLoss", "nll", "logits,target", "mean_loss");
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "w", "10");
    EXPECT_ELEM(&t, "w", TSR_DOUBLE);
    EXPECT_SHAPE(&t, "q", "N,3");
    EXPECT_ELEM(&t, "q", TSR_UINT8);
    EXPECT_SHAPE(&t, "scale", "");
    EXPECT_ELEM(&t, "zp", TSR_UINT8);
    EXPECT_SHAPE(&t, "sel", "?,3");
    EXPECT_ELEM(&t, "sel", TSR_INT64);
    EXPECT_SHAPE(&t, "uy", "?,4");
    EXPECT_SHAPE(&t, "uinv", "?");
    EXPECT_SHAPE(&t, "draws", "2,4");
    EXPECT_ELEM(&t, "draws", TSR_INT32);
    EXPECT_SHAPE(&t, "loss", "2");
    EXPECT_SHAPE(&t, "logp", "2,7");
    EXPECT_SHAPE(&t, "mean_loss", "");
    tb_free(&t);

    t = tb_new(13);
    input(&t, "m", TSR_FLOAT, "B,4,3,3");
    node(&t, "Det", "det", "m", "d");
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "d", "B,4");
    tb_free(&t);

    /* string ops came with opset 20 */
    t = tb_new(20);
    input(&t, "s1", TSR_STRING, "2,1");
    input(&t, "s2", TSR_STRING, "3");
    node(&t, "StringConcat", "cat", "s1,s2", "joined");
    node(&t, "RegexFullMatch", "re", "joined", "matched");
    node(&t, "StringSplit", "split", "joined", "parts,counts");
    input(&t, "words", TSR_STRING, "1,6");
    node(&t, "StringNormalizer", "norm", "words", "normed");
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "parts", "2,3,?");
    EXPECT_SHAPE(&t, "counts", "2,3");
    EXPECT_ELEM(&t, "counts", TSR_INT64);
    EXPECT_SHAPE(&t, "normed", "1,?");
    EXPECT_SHAPE(&t, "joined", "2,3");
    EXPECT_ELEM(&t, "joined", TSR_STRING);
    EXPECT_SHAPE(&t, "matched", "2,3");
    EXPECT_ELEM(&t, "matched", TSR_BOOL);
    tb_free(&t);
}

/* Recurrent ops (issue 16): shapes by the ONNX definitions, worked by hand. */
static void test_recurrent(void) {
    /* LSTM, layout 0, bidirectional, hidden 20: Y [seq, 2, batch, 20] */
    tb t = tb_new(14);
    input(&t, "x", TSR_FLOAT, "T,B,10");
    input(&t, "w", TSR_FLOAT, "2,80,10");
    input(&t, "r", TSR_FLOAT, "2,80,20");
    ir_node *n = node(&t, "LSTM", "lstm", "x,w,r", "y,yh,yc");
    attr_int(n, "hidden_size", 20);
    attr_str(n, "direction", "bidirectional");
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "y", "T,2,B,20");
    EXPECT_SHAPE(&t, "yh", "2,B,20");
    EXPECT_SHAPE(&t, "yc", "2,B,20");
    EXPECT_ELEM(&t, "y", TSR_FLOAT);
    tb_free(&t);

    /* GRU, layout 1, hidden from W (3 gates x 16), only Y_h asked for */
    t = tb_new(14);
    input(&t, "x", TSR_FLOAT, "4,7,8");
    input(&t, "w", TSR_FLOAT, "1,48,8");
    input(&t, "r", TSR_FLOAT, "1,48,16");
    n = node(&t, "GRU", "gru", "x,w,r", ",h");
    attr_int(n, "layout", 1);
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "h", "4,1,16");
    tb_free(&t);

    /* W for one direction under "bidirectional" contradicts it */
    t = tb_new(14);
    input(&t, "x", TSR_FLOAT, "5,2,3");
    input(&t, "w", TSR_FLOAT, "1,4,3");
    input(&t, "r", TSR_FLOAT, "1,4,4");
    n = node(&t, "RNN", "rnn", "x,w,r", "y");
    attr_str(n, "direction", "bidirectional");
    CU_ASSERT(strstr(infer(&t), "W has 1 directions") != NULL);
    tb_free(&t);
}

/* Spatial sampling ops (issue 16). */
static void test_sampling(void) {
    tb t = tb_new(16);
    input(&t, "x", TSR_FLOAT, "N,3,32,32");
    input(&t, "g", TSR_FLOAT, "N,10,12,2");
    node(&t, "GridSample", "gs", "x,g", "y");
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "y", "N,3,10,12");
    tb_free(&t);

    t = tb_new(16);
    input(&t, "x", TSR_FLOAT, "1,256,50,50");
    input(&t, "rois", TSR_FLOAT, "R,4");
    input(&t, "idx", TSR_INT64, "R");
    ir_node *n = node(&t, "RoiAlign", "ra", "x,rois,idx", "y");
    attr_int(n, "output_height", 7);
    attr_int(n, "output_width", 5);
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "y", "R,256,7,5");
    tb_free(&t);

    /* CenterCropPad of axes 1 and 2 (HWC image) to 224x200 */
    t = tb_new(18);
    input(&t, "img", TSR_FLOAT, "1,480,640,3");
    int64_t hw[2] = {224, 200};
    const_i64(&t, "shape", 1, 2, hw);
    n = node(&t, "CenterCropPad", "ccp", "img,shape", "crop");
    attr_ints(n, "axes", 2, 1, 2);
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "crop", "1,224,200,3");
    tb_free(&t);
}

static void test_conv(void) {
    tb t = tb_new(13);
    input(&t, "x", TSR_FLOAT, "1,3,224,224");
    input(&t, "w", TSR_FLOAT, "64,3,7,7");
    ir_node *n = node(&t, "Conv", "conv1", "x,w", "y");
    attr_ints(n, "strides", 2, 2, 2);
    attr_ints(n, "pads", 4, 3, 3, 3, 3);
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "y", "1,64,112,112");
    EXPECT_ELEM(&t, "y", TSR_FLOAT);
    tb_free(&t);

    /* Symbolic batch, SAME_UPPER, grouped (depthwise) weights, dilation. */
    t = tb_new(13);
    input(&t, "x", TSR_FLOAT, "N,32,H,15");
    input(&t, "w", TSR_FLOAT, "32,1,3,3");
    n = node(&t, "Conv", "dw", "x,w", "y");
    attr_int(n, "group", 32);
    attr_str(n, "auto_pad", "SAME_UPPER");
    attr_ints(n, "strides", 2, 2, 2);
    n = node(&t, "Conv", "dil", "x,w", "z");
    attr_int(n, "group", 32);
    attr_ints(n, "dilations", 2, 2, 2);
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "y", "N,32,?,8");
    EXPECT_SHAPE(&t, "z", "N,32,?,11");
    tb_free(&t);

    /* Channels that don't match the weights. */
    t = tb_new(13);
    input(&t, "x", TSR_FLOAT, "1,4,8,8");
    input(&t, "w", TSR_FLOAT, "8,3,3,3");
    node(&t, "Conv", "bad", "x,w", "y");
    CU_ASSERT_STRING_EQUAL(infer(&t), "node 'bad' (Conv): input has 4 channels, weights expect 3 (3 x group 1)");
    tb_free(&t);
}

static void test_conv_transpose(void) {
    tb t = tb_new(13);
    input(&t, "x", TSR_FLOAT, "1,16,10,10");
    input(&t, "w", TSR_FLOAT, "16,8,3,3");
    ir_node *n = node(&t, "ConvTranspose", "ct", "x,w", "y");
    attr_ints(n, "strides", 2, 2, 2);
    attr_ints(n, "pads", 4, 1, 1, 1, 1);
    attr_ints(n, "output_padding", 2, 1, 1);
    n = node(&t, "ConvTranspose", "ct2", "x,w", "z");
    attr_ints(n, "output_shape", 2, 21, 22);
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "y", "1,8,20,20"); /* 2*9 + 1 + 3 - 2 */
    EXPECT_SHAPE(&t, "z", "1,8,21,22");
    tb_free(&t);
}

static void test_broadcast(void) {
    tb t = tb_new(13);
    input(&t, "a", TSR_FLOAT, "N,1,4");
    input(&t, "b", TSR_FLOAT, "3,1");
    input(&t, "c", TSR_FLOAT, "M,4");
    node(&t, "Add", "add", "a,b", "y");
    node(&t, "Mul", "mul", "a,c", "z");
    node(&t, "Less", "lt", "a,b", "l");
    node(&t, "Where", "wh", "l,a,b", "w");
    node(&t, "Sum", "sum", "a,b,c", "s");
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "y", "N,3,4");
    EXPECT_ELEM(&t, "y", TSR_FLOAT);
    EXPECT_SHAPE(&t, "z", "N,M,4");
    EXPECT_SHAPE(&t, "l", "N,3,4");
    EXPECT_ELEM(&t, "l", TSR_BOOL);
    EXPECT_SHAPE(&t, "w", "N,3,4");
    EXPECT_ELEM(&t, "w", TSR_FLOAT);
    /* 3 against M: a valid run has M in {1, 3}, so the result is 3. */
    EXPECT_SHAPE(&t, "s", "N,3,4");
    tb_free(&t);

    t = tb_new(13);
    input(&t, "a", TSR_FLOAT, "2,3");
    input(&t, "b", TSR_FLOAT, "4,3");
    node(&t, "Sub", "sub1", "a,b", "y");
    CU_ASSERT_STRING_EQUAL(infer(&t), "node 'sub1' (Sub): can't broadcast dimension 2 with 4 (axis 0 of the result)");
    tb_free(&t);

    /* Two different names may differ at run time: unknown, not an error. */
    t = tb_new(13);
    input(&t, "a", TSR_FLOAT, "N");
    input(&t, "b", TSR_FLOAT, "M");
    node(&t, "Add", "", "a,b", "y");
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "y", "?");
    tb_free(&t);
}

static void test_unary_and_cast(void) {
    tb t = tb_new(13);
    input(&t, "x", TSR_FLOAT16, "B,7");
    ir_node *n = node(&t, "Cast", "c", "x", "y");
    attr_int(n, "to", TSR_INT32);
    node(&t, "Relu", "r", "x", "r1");
    node(&t, "IsNaN", "nan", "x", "isn");
    node(&t, "CastLike", "cl", "x,y", "z");
    node(&t, "Dropout", "d", "x", "dr,mask");
    node(&t, "Clip", "clip", "x,,", "cl1");
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "y", "B,7");
    EXPECT_ELEM(&t, "y", TSR_INT32);
    EXPECT_ELEM(&t, "r1", TSR_FLOAT16);
    EXPECT_ELEM(&t, "isn", TSR_BOOL);
    EXPECT_ELEM(&t, "z", TSR_INT32);
    EXPECT_ELEM(&t, "mask", TSR_BOOL);
    EXPECT_SHAPE(&t, "mask", "B,7");
    EXPECT_SHAPE(&t, "cl1", "B,7");
    tb_free(&t);
}

static void test_matmul_gemm(void) {
    tb t = tb_new(13);
    input(&t, "a", TSR_FLOAT, "B,2,3");
    input(&t, "b", TSR_FLOAT, "3,5");
    input(&t, "v", TSR_FLOAT, "3");
    input(&t, "c", TSR_FLOAT, "4,1,5,3");
    node(&t, "MatMul", "m1", "a,b", "y");
    node(&t, "MatMul", "m2", "a,v", "y2");
    node(&t, "MatMul", "m3", "v,b", "y3");
    node(&t, "MatMul", "m4", "c,a", "y4"); /* [4,1,5,3] x [B,3?..] no: inner 3 vs 2 */
    CU_ASSERT_STRING_EQUAL(infer(&t), "node 'm4' (MatMul): inner dimensions 3 and 2 differ");
    EXPECT_SHAPE(&t, "y", "B,2,5");
    EXPECT_SHAPE(&t, "y2", "B,2");
    EXPECT_SHAPE(&t, "y3", "5");
    tb_free(&t);

    t = tb_new(13);
    input(&t, "a", TSR_FLOAT, "2,3");
    input(&t, "b", TSR_FLOAT, "4,3");
    node(&t, "MatMul", "mm1", "a,b", "y");
    CU_ASSERT_STRING_EQUAL(infer(&t), "node 'mm1' (MatMul): inner dimensions 3 and 4 differ");
    tb_free(&t);

    t = tb_new(13);
    input(&t, "a", TSR_FLOAT, "N,3");
    input(&t, "b", TSR_FLOAT, "10,3");
    input(&t, "c", TSR_FLOAT, "10");
    ir_node *n = node(&t, "Gemm", "fc", "a,b,c", "y");
    attr_int(n, "transB", 1);
    n = node(&t, "Gemm", "fc2", "a,b,c", "z");
    EXPECT_SHAPE(&t, "y", "*");
    CU_ASSERT_STRING_EQUAL(infer(&t), "node 'fc2' (Gemm): inner dimensions 3 and 10 differ");
    EXPECT_SHAPE(&t, "y", "N,10");
    tb_free(&t);
}

static void test_pool(void) {
    tb t = tb_new(13);
    input(&t, "x", TSR_FLOAT, "1,3,32,32");
    ir_node *n = node(&t, "MaxPool", "mp", "x", "y,idx");
    attr_ints(n, "kernel_shape", 2, 3, 3);
    attr_ints(n, "strides", 2, 2, 2);
    attr_int(n, "ceil_mode", 1);
    n = node(&t, "MaxPool", "mp2", "x", "y2");
    attr_ints(n, "kernel_shape", 2, 3, 3);
    attr_ints(n, "strides", 2, 2, 2);
    n = node(&t, "AveragePool", "ap", "x", "y3");
    attr_ints(n, "kernel_shape", 2, 3, 3);
    attr_ints(n, "strides", 2, 2, 2);
    attr_str(n, "auto_pad", "SAME_UPPER");
    n = node(&t, "AveragePool", "ap2", "x", "y4");
    attr_ints(n, "kernel_shape", 2, 2, 2);
    attr_ints(n, "strides", 2, 2, 2);
    attr_ints(n, "pads", 4, 1, 1, 1, 1);
    attr_int(n, "ceil_mode", 1);
    node(&t, "GlobalAveragePool", "gap", "x", "g");
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "y", "1,3,16,16"); /* ceil(29/2)+1 = 16 */
    EXPECT_SHAPE(&t, "idx", "1,3,16,16");
    EXPECT_ELEM(&t, "idx", TSR_INT64);
    EXPECT_SHAPE(&t, "y2", "1,3,15,15");
    EXPECT_SHAPE(&t, "y3", "1,3,16,16");
    /* ceil(32/2)+1 = 17: the 17th window starts at 31, inside the input. */
    EXPECT_SHAPE(&t, "y4", "1,3,17,17");
    EXPECT_SHAPE(&t, "g", "1,3,1,1");
    tb_free(&t);
}

static void test_norms(void) {
    tb t = tb_new(17);
    input(&t, "x", TSR_FLOAT16, "N,S,8");
    input(&t, "s", TSR_FLOAT16, "8");
    node(&t, "LayerNormalization", "ln", "x,s,s", "y,mean,inv");
    input(&t, "img", TSR_FLOAT, "N,4,5,5");
    input(&t, "c", TSR_FLOAT, "4");
    node(&t, "BatchNormalization", "bn", "img,c,c,c,c", "b");
    node(&t, "InstanceNormalization", "in", "img,c,c", "i");
    node(&t, "Softmax", "sm", "x", "sm1");
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "y", "N,S,8");
    EXPECT_ELEM(&t, "y", TSR_FLOAT16);
    EXPECT_SHAPE(&t, "mean", "N,S,1");
    EXPECT_ELEM(&t, "mean", TSR_FLOAT);
    EXPECT_SHAPE(&t, "b", "N,4,5,5");
    EXPECT_SHAPE(&t, "i", "N,4,5,5");
    EXPECT_SHAPE(&t, "sm1", "N,S,8");
    tb_free(&t);
}

static void test_reduce(void) {
    tb t = tb_new(11);
    input(&t, "x", TSR_FLOAT, "N,3,4");
    ir_node *n = node(&t, "ReduceMean", "rm", "x", "y");
    attr_ints(n, "axes", 1, -1);
    n = node(&t, "ReduceSum", "rs", "x", "y2");
    attr_int(n, "keepdims", 0);
    n = node(&t, "ArgMax", "am", "x", "y3");
    attr_int(n, "axis", 1);
    attr_int(n, "keepdims", 0);
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "y", "N,3,1");
    EXPECT_SHAPE(&t, "y2", "");
    EXPECT_SHAPE(&t, "y3", "N,4");
    EXPECT_ELEM(&t, "y3", TSR_INT64);
    tb_free(&t);

    t = tb_new(18);
    input(&t, "x", TSR_FLOAT, "N,3,4");
    const_i64(&t, "ax", 1, 2, (int64_t[]){0, 2});
    const_i64(&t, "none", 1, 0, NULL);
    input(&t, "dyn", TSR_INT64, "1");
    n = node(&t, "ReduceMax", "r1", "x,ax", "y");
    attr_int(n, "keepdims", 0);
    n = node(&t, "ReduceMax", "r2", "x,none", "y2");
    attr_int(n, "noop_with_empty_axes", 1);
    node(&t, "ReduceL2", "r3", "x,dyn", "y3");
    n = node(&t, "ReduceL2", "r4", "x,dyn", "y4");
    attr_int(n, "keepdims", 0);
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "y", "3");
    EXPECT_SHAPE(&t, "y2", "N,3,4");
    EXPECT_SHAPE(&t, "y3", "?,?,?");
    EXPECT_SHAPE(&t, "y4", "*");
    tb_free(&t);
}

static void test_reshape_family(void) {
    tb t = tb_new(13);
    input(&t, "x", TSR_FLOAT, "N,4,6");
    const_i64(&t, "s1", 1, 3, (int64_t[]){0, -1, 3});
    const_i64(&t, "s2", 1, 2, (int64_t[]){5, 5});
    const_i64(&t, "ax", 1, 2, (int64_t[]){0, 3});
    const_i64(&t, "ax1", 1, 1, (int64_t[]){1});
    const_i64(&t, "e", 1, 3, (int64_t[]){2, 1, 1});
    node(&t, "Reshape", "r1", "x,s1", "y1");
    ir_node *n = node(&t, "Transpose", "tr", "x", "t");
    attr_ints(n, "perm", 3, 0, 2, 1);
    node(&t, "Transpose", "tr2", "x", "t2");
    node(&t, "Unsqueeze", "us", "x,ax", "u");
    node(&t, "Squeeze", "sq", "u,ax", "sq1");
    n = node(&t, "Flatten", "fl", "x", "f");
    n = node(&t, "Flatten", "fl2", "x", "f2");
    attr_int(n, "axis", 2);
    node(&t, "Expand", "ex", "ax1,e", "e1");
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "y1", "N,8,3");
    EXPECT_SHAPE(&t, "t", "N,6,4");
    EXPECT_SHAPE(&t, "t2", "6,4,N");
    EXPECT_SHAPE(&t, "u", "1,N,4,1,6");
    EXPECT_SHAPE(&t, "sq1", "N,4,6");
    EXPECT_SHAPE(&t, "f", "N,24");
    EXPECT_SHAPE(&t, "f2", "?,6");
    EXPECT_SHAPE(&t, "e1", "2,1,1");
    tb_free(&t);

    t = tb_new(13);
    input(&t, "x", TSR_FLOAT, "2,4,6");
    const_i64(&t, "s2", 1, 2, (int64_t[]){5, 5});
    node(&t, "Reshape", "rs", "x,s2", "y");
    CU_ASSERT_STRING_EQUAL(infer(&t), "node 'rs' (Reshape): can't reshape 48 elements into 25");
    tb_free(&t);

    t = tb_new(13);
    input(&t, "x", TSR_FLOAT, "2,3,6");
    const_i64(&t, "ax", 1, 1, (int64_t[]){1});
    node(&t, "Squeeze", "sq", "x,ax", "y");
    CU_ASSERT_STRING_EQUAL(infer(&t), "node 'sq' (Squeeze): can't squeeze axis 1 of length 3");
    tb_free(&t);

    /* Opset 11: Squeeze/Unsqueeze axes are attributes. */
    t = tb_new(11);
    input(&t, "x", TSR_FLOAT, "1,N,1");
    n = node(&t, "Squeeze", "sq", "x", "y");
    attr_ints(n, "axes", 1, 0);
    n = node(&t, "Unsqueeze", "us", "y", "z");
    attr_ints(n, "axes", 2, 0, -1);
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "y", "N,1");
    EXPECT_SHAPE(&t, "z", "1,N,1,1");
    tb_free(&t);
}

/* The BERT pattern: the Reshape target comes from the input's own shape. */
static void test_shape_values(void) {
    tb t = tb_new(13);
    input(&t, "x", TSR_FLOAT, "B,S,768");
    const_i64(&t, "i0", 0, 1, (int64_t[]){0});
    const_i64(&t, "i1", 0, 1, (int64_t[]){1});
    const_i64(&t, "ax0", 1, 1, (int64_t[]){0});
    const_i64(&t, "heads", 1, 2, (int64_t[]){12, 64});
    const_i64(&t, "zero", 0, 1, (int64_t[]){0});
    const_i64(&t, "one", 0, 1, (int64_t[]){1});
    node(&t, "Shape", "sh", "x", "shp");
    node(&t, "Gather", "g0", "shp,i0", "b");
    node(&t, "Gather", "g1", "shp,i1", "s");
    node(&t, "Unsqueeze", "u0", "b,ax0", "bu");
    node(&t, "Unsqueeze", "u1", "s,ax0", "su");
    ir_node *n = node(&t, "Concat", "cat", "bu,su,heads", "target");
    attr_int(n, "axis", 0);
    node(&t, "Reshape", "rs", "x,target", "y");
    node(&t, "Range", "pos", "zero,s,one", "ids");
    node(&t, "ConstantOfShape", "cos", "target", "ones");
    /* Flatten the batch: [B*S, 768] with -1, then back. */
    const_i64(&t, "flat", 1, 2, (int64_t[]){-1, 768});
    node(&t, "Reshape", "rs2", "x,flat", "y2");
    n = node(&t, "Concat", "cat2", "bu,su,flat", "back0");
    attr_int(n, "axis", 0);
    const_i64(&t, "st", 1, 1, (int64_t[]){0});
    const_i64(&t, "en", 1, 1, (int64_t[]){2});
    node(&t, "Slice", "sl", "shp,st,en", "bs");
    const_i64(&t, "last", 1, 1, (int64_t[]){768});
    n = node(&t, "Concat", "cat3", "bs,last", "back");
    attr_int(n, "axis", 0);
    node(&t, "Reshape", "rs3", "y2,back", "y3");
    node(&t, "Shape", "sh2", "y", "shp2");
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "shp", "3");
    EXPECT_ELEM(&t, "shp", TSR_INT64);
    EXPECT_SHAPE(&t, "b", "");
    EXPECT_SHAPE(&t, "target", "4");
    EXPECT_SHAPE(&t, "y", "B,S,12,64");
    EXPECT_SHAPE(&t, "ids", "S");
    EXPECT_ELEM(&t, "ids", TSR_INT64);
    EXPECT_SHAPE(&t, "ones", "B,S,12,64");
    EXPECT_SHAPE(&t, "y2", "?,768");
    EXPECT_SHAPE(&t, "y3", "B,S,768");
    EXPECT_SHAPE(&t, "shp2", "4");
    tb_free(&t);
}

static void test_concat_split_slice_gather(void) {
    tb t = tb_new(13);
    input(&t, "a", TSR_FLOAT, "N,2,5");
    input(&t, "b", TSR_FLOAT, "N,3,5");
    input(&t, "i", TSR_INT64, "7,8");
    const_i64(&t, "sp", 1, 2, (int64_t[]){1, 4});
    const_i64(&t, "st", 1, 2, (int64_t[]){1, -4});
    const_i64(&t, "en", 1, 2, (int64_t[]){1000, -1});
    const_i64(&t, "ax", 1, 2, (int64_t[]){1, 2});
    const_i64(&t, "stp", 1, 2, (int64_t[]){2, 1});
    ir_node *n = node(&t, "Concat", "cat", "a,b", "c");
    attr_int(n, "axis", -2);
    n = node(&t, "Split", "spl", "c,sp", "s1,s2");
    attr_int(n, "axis", 1);
    n = node(&t, "Split", "spl2", "a", "h1,h2");
    attr_int(n, "axis", 1);
    node(&t, "Slice", "sl", "c,st,en,ax,stp", "sl1");
    n = node(&t, "Gather", "ga", "c,i", "g");
    attr_int(n, "axis", 1);
    node(&t, "GatherElements", "ge", "a,a", "ge1");
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "c", "N,5,5");
    EXPECT_SHAPE(&t, "s1", "N,1,5");
    EXPECT_SHAPE(&t, "s2", "N,4,5");
    EXPECT_SHAPE(&t, "h1", "N,1,5");
    EXPECT_SHAPE(&t, "sl1", "N,2,3");
    EXPECT_SHAPE(&t, "g", "N,7,8,5");
    tb_free(&t);

    t = tb_new(18);
    input(&t, "x", TSR_FLOAT, "7,4");
    n = node(&t, "Split", "s", "x", "a,b,c");
    attr_int(n, "num_outputs", 3);
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "a", "3,4");
    EXPECT_SHAPE(&t, "c", "1,4");
    tb_free(&t);

    t = tb_new(13);
    input(&t, "a", TSR_FLOAT, "2,3");
    input(&t, "b", TSR_FLOAT, "2,4");
    node(&t, "Concat", "cat", "a,b", "c");
    CU_ASSERT_STRING_EQUAL(infer(&t), "node 'cat' (Concat): input 1 has 4 on axis 1 where others have 3");
    tb_free(&t);
}

static void test_tensor_makers(void) {
    tb t = tb_new(13);
    input(&t, "x", TSR_FLOAT, "N,3,8,8");
    const_i64(&t, "rep", 1, 4, (int64_t[]){1, 2, 1, 3});
    const_i64(&t, "pads", 1, 8, (int64_t[]){0, 0, 1, 2, 0, 0, 3, 4});
    const_i64(&t, "shape", 1, 2, (int64_t[]){2, 3});
    const_i64(&t, "k", 1, 1, (int64_t[]){5});
    const_f32(&t, "scales", 4, (float[]){1, 1, 2, 0.5f});
    const_i64(&t, "sizes", 1, 4, (int64_t[]){1, 3, 16, 16});
    node(&t, "Tile", "tile", "x,rep", "ti");
    node(&t, "Pad", "pad", "x,pads", "pa");
    ir_node *n = node(&t, "ConstantOfShape", "cos", "shape", "co");
    (void)n;
    node(&t, "TopK", "topk", "x,k", "tv,tix");
    node(&t, "NonZero", "nz", "x", "nz1");
    node(&t, "Resize", "rz", "x,,scales", "r1");
    node(&t, "Resize", "rz2", "x,,,sizes", "r2");
    node(&t, "Shape", "sh", "x", "s");
    node(&t, "Size", "sz", "x", "n");
    n = node(&t, "Constant", "k2", "", "cst");
    ir_attr *a = add_attr(n, "value_ints", TSR_ATTR_INTS);
    a->count = 3;
    a->ints = calloc(3, sizeof *a->ints);
    n = node(&t, "Einsum", "ein", "x,x", "es");
    attr_str(n, "equation", "bchw,bcwk->bchk");
    n = node(&t, "Einsum", "ein2", "x", "es2");
    attr_str(n, "equation", "...ii");
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "ti", "N,6,8,24");
    EXPECT_SHAPE(&t, "pa", "N,3,12,14");
    EXPECT_SHAPE(&t, "co", "2,3");
    EXPECT_ELEM(&t, "co", TSR_FLOAT);
    EXPECT_SHAPE(&t, "tv", "N,3,8,5");
    EXPECT_ELEM(&t, "tix", TSR_INT64);
    EXPECT_SHAPE(&t, "nz1", "4,?");
    EXPECT_SHAPE(&t, "r1", "N,3,16,4");
    EXPECT_SHAPE(&t, "r2", "1,3,16,16");
    EXPECT_SHAPE(&t, "s", "4");
    EXPECT_SHAPE(&t, "n", "");
    EXPECT_SHAPE(&t, "cst", "3");
    EXPECT_ELEM(&t, "cst", TSR_INT64);
    EXPECT_SHAPE(&t, "es", "N,3,8,8");
    EXPECT_SHAPE(&t, "es2", "N,3");
    tb_free(&t);
}

/* Declarations win over less specific inference, and unknown ops are left
 * alone without an error. */
static void test_declared_and_unknown(void) {
    tb t = tb_new(13);
    input(&t, "x", TSR_FLOAT, "N,3");
    output(&t, "y", TSR_FLOAT, "batch,?");
    output(&t, "z", TSR_FLOAT, "5,3");
    output(&t, "w", 0, "*");
    node(&t, "Relu", "r", "x", "y");
    node(&t, "Relu", "r2", "x", "z"); /* declared 5 against N: the declaration stands */
    node(&t, "Sigmoid", "r3", "x", "w");
    ir_node *n = node(&t, "FancyOp", "f", "x", "q");
    (void)n;
    n = node(&t, "Relu", "r4", "x", "v");
    free(n->domain);
    n->domain = strdup("com.example");
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "y", "batch,3");
    EXPECT_SHAPE(&t, "z", "5,3");
    EXPECT_SHAPE(&t, "w", "N,3");
    EXPECT_ELEM(&t, "w", TSR_FLOAT);
    EXPECT_SHAPE(&t, "q", "*");
    EXPECT_SHAPE(&t, "v", "*");
    tb_free(&t);
}

/* The session re-infers with the shapes of actual inputs: earlier inferred
 * shapes are replaced, declared ones come back each time. */
static void test_rerun(void) {
    tb t = tb_new(13);
    input(&t, "x", TSR_FLOAT, "N,3");
    output(&t, "y", TSR_FLOAT, "N,?");
    node(&t, "Relu", "r", "x", "h");
    node(&t, "Relu", "r2", "h", "y");
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "h", "N,3");
    EXPECT_SHAPE(&t, "y", "N,3");

    int64_t d2[2] = {2, 3};
    tsr_tensor in = {.struct_size = sizeof in, .elem_type = TSR_FLOAT, .rank = 2, .dims = d2};
    const tsr_tensor *ins[1] = {&in};
    CU_ASSERT_PTR_NULL(ir_infer_shapes_for_inputs(t.g, 1, ins));
    EXPECT_SHAPE(&t, "x", "2,3");
    EXPECT_SHAPE(&t, "h", "2,3");
    EXPECT_SHAPE(&t, "y", "2,3");
    /* The symbol is kept beside the number. */
    CU_ASSERT_STRING_EQUAL(val(&t, "y")->type.dims[0].symbol, "N");

    int64_t d5[2] = {5, 3};
    in.dims = d5;
    CU_ASSERT_PTR_NULL(ir_infer_shapes_for_inputs(t.g, 1, ins));
    EXPECT_SHAPE(&t, "h", "5,3");
    EXPECT_SHAPE(&t, "y", "5,3");

    /* A run that contradicts the declaration is refused, naming the input. */
    int64_t bad[2] = {5, 4};
    in.dims = bad;
    tsr_status *st = ir_infer_shapes_for_inputs(t.g, 1, ins);
    CU_ASSERT_STRING_EQUAL(tsr_status_message(st), "input 'x': dimension 1 is 4, the model says 3");
    tsr_status_free(st);

    /* Back to the declaration. */
    CU_ASSERT_PTR_NULL(ir_infer_shapes_for_inputs(t.g, 1, (const tsr_tensor *const[]){NULL}));
    EXPECT_SHAPE(&t, "x", "N,3");
    EXPECT_SHAPE(&t, "h", "N,3");
    EXPECT_SHAPE(&t, "y", "N,3");
    tb_free(&t);
}

static void test_if_subgraph(void) {
    tb t = tb_new(13);
    input(&t, "c", TSR_BOOL, "");
    input(&t, "x", TSR_FLOAT, "N,4");
    ir_node *n = node(&t, "If", "if1", "c", "y");
    ir_graph *br[2];
    for (int k = 0; k < 2; k++) {
        ir_graph *g = ir_graph_new(t.m, t.g, k ? "else" : "then");
        br[k] = g;
        ir_value *xo = ir_graph_resolve(g, "x");
        ir_value *o = NULL;
        CU_ASSERT_PTR_NULL_FATAL(ir_graph_value(g, k ? "eo" : "to", &o));
        ir_node *bn = NULL;
        CU_ASSERT_PTR_NULL_FATAL(ir_graph_add_node(g, &bn));
        bn->name = strdup("inner");
        bn->op_type = strdup(k ? "Relu" : "Neg");
        bn->domain = strdup("");
        bn->opset = 13;
        bn->n_inputs = 1;
        bn->inputs = malloc(sizeof *bn->inputs);
        bn->inputs[0] = xo;
        bn->n_outputs = 1;
        bn->outputs = malloc(sizeof *bn->outputs);
        bn->outputs[0] = o;
        o->producer = bn;
        g->n_outputs = 1;
        g->outputs = malloc(sizeof *g->outputs);
        g->outputs[0] = o;
        o->is_graph_output = true;
        ir_attr *a = add_attr(n, k ? "else_branch" : "then_branch", TSR_ATTR_GRAPH);
        a->g = g;
    }
    EXPECT_OK(&t);
    CU_ASSERT_STRING_EQUAL(shape_str(&br[0]->outputs[0]->type), "N,4");
    EXPECT_SHAPE(&t, "y", "N,4");
    EXPECT_ELEM(&t, "y", TSR_FLOAT);
    tb_free(&t);
}

static void test_more_ops(void) {
    tb t = tb_new(18);
    input(&t, "x", TSR_FLOAT, "N,3,10");
    input(&t, "slope", TSR_FLOAT, "3,1");
    const_i64(&t, "st", 1, 1, (int64_t[]){-1});
    const_i64(&t, "en", 1, 1, (int64_t[]){-100});
    const_i64(&t, "ax", 1, 1, (int64_t[]){2});
    const_i64(&t, "stp", 1, 1, (int64_t[]){-3});
    const_i64(&t, "pads", 1, 2, (int64_t[]){2, 3});
    const_i64(&t, "r0", 0, 1, (int64_t[]){10});
    const_i64(&t, "r1", 0, 1, (int64_t[]){1});
    const_i64(&t, "r2", 0, 1, (int64_t[]){-2});
    node(&t, "PRelu", "pr", "x,slope", "p");
    node(&t, "Slice", "sl", "x,st,en,ax,stp", "s");
    node(&t, "Pad", "pad", "x,pads,,ax", "pd");
    node(&t, "Range", "rg", "r0,r1,r2", "rg1");
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "p", "N,3,10");
    EXPECT_SHAPE(&t, "s", "N,3,4"); /* 9, 6, 3, 0 */
    EXPECT_SHAPE(&t, "pd", "N,3,15");
    EXPECT_SHAPE(&t, "rg1", "5"); /* 10, 8, 6, 4, 2 */
    EXPECT_ELEM(&t, "rg1", TSR_INT64);
    tb_free(&t);

    /* An unnamed node is named by what it produces. */
    t = tb_new(13);
    input(&t, "a", TSR_FLOAT, "2,3");
    input(&t, "b", TSR_FLOAT, "4,5");
    node(&t, "MatMul", "", "a,b", "prod");
    CU_ASSERT_STRING_EQUAL(infer(&t), "node #0 (MatMul) producing 'prod': inner dimensions 3 and 4 differ");
    tb_free(&t);
}

/* Exporters guard Reshape targets with Where(Equal(shape, -1), ...). */
static void test_shape_value_where(void) {
    tb t = tb_new(13);
    input(&t, "x", TSR_FLOAT, "B,5");
    const_i64(&t, "neg", 1, 2, (int64_t[]){-1, -1});
    const_i64(&t, "one", 1, 2, (int64_t[]){1, 1});
    node(&t, "Shape", "sh", "x", "s");
    node(&t, "Equal", "eq", "s,neg", "m");
    node(&t, "Where", "wh", "m,one,s", "tgt");
    node(&t, "Expand", "ex", "x,tgt", "y");
    EXPECT_OK(&t);
    EXPECT_SHAPE(&t, "m", "2");
    EXPECT_SHAPE(&t, "y", "B,5");
    tb_free(&t);
}

/* A body graph with one node op(in0[, in1]) -> out, inputs and outputs
 * declared as given ("" leaves a type out). */
static ir_graph *body1(tb *t, const char *op, size_t n_in, const char *const *ins, const char *const *in_shapes,
                       size_t n_out, const char *const *outs, const char *node_in0, const char *node_in1,
                       const char *node_out) {
    ir_graph *g = ir_graph_new(t->m, t->g, "body");
    g->inputs = calloc(n_in, sizeof *g->inputs);
    for (size_t i = 0; i < n_in; i++) {
        ir_value *v = NULL;
        CU_ASSERT_PTR_NULL_FATAL(ir_graph_value(g, ins[i], &v));
        if (in_shapes[i][0])
            set_type(&v->type,
                     in_shapes[i][0] == 'b'       ? TSR_BOOL
                         : in_shapes[i][0] == 'i' ? TSR_INT64
                                                  : 0,
                     in_shapes[i] + 1);
        v->is_graph_input = true;
        g->inputs[g->n_inputs++] = v;
    }
    ir_node *bn = NULL;
    CU_ASSERT_PTR_NULL_FATAL(ir_graph_add_node(g, &bn));
    bn->name = strdup("inner");
    bn->op_type = strdup(op);
    bn->domain = strdup("");
    bn->opset = t->opset;
    bn->n_inputs = node_in1 ? 2 : 1;
    bn->inputs = calloc(2, sizeof *bn->inputs);
    bn->inputs[0] = ir_graph_resolve(g, node_in0);
    if (node_in1) bn->inputs[1] = ir_graph_resolve(g, node_in1);
    bn->n_outputs = 1;
    bn->outputs = calloc(1, sizeof *bn->outputs);
    CU_ASSERT_PTR_NULL_FATAL(ir_graph_value(g, node_out, &bn->outputs[0]));
    bn->outputs[0]->producer = bn;
    g->outputs = calloc(n_out, sizeof *g->outputs);
    for (size_t i = 0; i < n_out; i++) g->outputs[g->n_outputs++] = ir_graph_resolve(g, outs[i]);
    return g;
}

static void test_loop_scan(void) {
    tb t = tb_new(13);
    input(&t, "m", TSR_INT64, "");
    input(&t, "cond", TSR_BOOL, "");
    input(&t, "acc", TSR_FLOAT, "4");
    ir_node *n = node(&t, "Loop", "loop", "m,cond,acc", "acc_out,stack");
    /* body(i, c, a) -> (c, a + a, a + a) */
    ir_graph *g = body1(&t, "Add", 3, (const char *[]){"i", "c", "a"}, (const char *[]){"", "", ""}, 3,
                        (const char *[]){"c", "a2", "a2"}, "a", "a", "a2");
    add_attr(n, "body", TSR_ATTR_GRAPH)->g = g;
    EXPECT_OK(&t);
    CU_ASSERT_STRING_EQUAL(shape_str(&g->inputs[0]->type), "");
    CU_ASSERT_EQUAL(g->inputs[0]->type.elem_type, TSR_INT64);
    CU_ASSERT_STRING_EQUAL(shape_str(&g->inputs[2]->type), "4");
    EXPECT_SHAPE(&t, "acc_out", "4");
    EXPECT_SHAPE(&t, "stack", "?,4");
    EXPECT_ELEM(&t, "stack", TSR_FLOAT);
    tb_free(&t);

    t = tb_new(13);
    input(&t, "init", TSR_FLOAT, "2");
    input(&t, "seq", TSR_FLOAT, "T,2");
    n = node(&t, "Scan", "scan", "init,seq", "final,ys");
    attr_int(n, "num_scan_inputs", 1);
    /* body(s, x) -> (s + x, s + x) */
    g = body1(&t, "Add", 2, (const char *[]){"s", "x"}, (const char *[]){"", ""}, 2, (const char *[]){"s2", "s2"}, "s",
              "x", "s2");
    add_attr(n, "body", TSR_ATTR_GRAPH)->g = g;
    EXPECT_OK(&t);
    CU_ASSERT_STRING_EQUAL(shape_str(&g->inputs[1]->type), "2");
    EXPECT_SHAPE(&t, "final", "2");
    EXPECT_SHAPE(&t, "ys", "T,2");
    tb_free(&t);
}

/* ------------------------------------------------------------------------ */
/* Sequences, optionals and ops of other domains                             */

/* A type as "float[2,?]", "seq(int32[*])", "opt(seq(float[]))"; "?" when
 * not even the kind is known. */
static void type_str_into(const ir_type *t, char *buf, size_t size) {
    if (!t || t->kind == IR_TYPE_UNKNOWN) {
        snprintf(buf, size, "?");
    } else if (t->kind == IR_TYPE_TENSOR) {
        snprintf(buf, size, "%s[%s]", tsr_elem_type_name(t->elem_type), shape_str(t));
    } else if (t->kind == IR_TYPE_SEQUENCE || t->kind == IR_TYPE_OPTIONAL) {
        char inner[256];
        type_str_into(t->elem, inner, sizeof inner);
        snprintf(buf, size, "%s(%s)", t->kind == IR_TYPE_SEQUENCE ? "seq" : "opt", inner);
    } else {
        snprintf(buf, size, "kind %d", (int)t->kind);
    }
}

static const char *type_str(const ir_type *t) {
    static char buf[512];
    type_str_into(t, buf, sizeof buf);
    return buf;
}

#define EXPECT_TYPE(t, name, want) CU_ASSERT_STRING_EQUAL(type_str(&val(t, name)->type), want)

/* A graph input typed as a sequence (kind IR_TYPE_SEQUENCE) or optional of
 * tensors of elem and shape. */
static ir_value *wrapped_input(tb *t, const char *name, int32_t kind, int32_t elem, const char *shape) {
    ir_value *v = input(t, name, elem, shape);
    ir_type inner = v->type;
    memset(&v->type, 0, sizeof v->type);
    v->type.kind = kind;
    v->type.rank = -1;
    v->type.elem = malloc(sizeof *v->type.elem);
    *v->type.elem = inner;
    return v;
}

static ir_node *domain_node(tb *t, const char *domain, int64_t opset, const char *op, const char *ins,
                            const char *outs) {
    ir_node *n = node(t, op, op, ins, outs);
    free(n->domain);
    n->domain = strdup(domain);
    n->opset = opset;
    return n;
}

/* The sequence ops, typed as their ONNX schemas say (onnx/defs/sequence). */
static void test_sequences(void) {
    tb t = tb_new(12);
    input(&t, "a", TSR_FLOAT, "2,3");
    input(&t, "b", TSR_FLOAT, "2,4");
    input(&t, "x", TSR_FLOAT, "6,4");
    const_i64(&t, "pos", 0, 1, (int64_t[]){0});
    const_i64(&t, "two", 0, 1, (int64_t[]){2});
    const_i64(&t, "four", 0, 1, (int64_t[]){4});
    const_i64(&t, "halves", 1, 2, (int64_t[]){3, 3});
    const_i64(&t, "uneven", 1, 2, (int64_t[]){2, 4});
    node(&t, "SequenceEmpty", "empty", "", "e_float");
    attr_int(node(&t, "SequenceEmpty", "empty_i32", "", "e_i32"), "dtype", TSR_INT32);
    node(&t, "SequenceConstruct", "construct", "a,b", "ab");
    node(&t, "SequenceConstruct", "construct_aa", "a,a", "aa");
    node(&t, "SequenceInsert", "insert", "e_float,x", "ins");
    node(&t, "SequenceInsert", "insert_a", "aa,b,pos", "aab");
    node(&t, "SequenceAt", "at", "ab,pos", "at0");
    node(&t, "SequenceErase", "erase", "ab", "erased");
    node(&t, "SequenceLength", "len", "ab", "n");
    node(&t, "SplitToSequence", "split_scalar", "x,two", "by2");
    node(&t, "SplitToSequence", "split_scalar_4", "x,four", "by4");
    node(&t, "SplitToSequence", "split_equal", "x,halves", "by3");
    node(&t, "SplitToSequence", "split_uneven", "x,uneven", "byu");
    attr_int(node(&t, "SplitToSequence", "split_ones", "x", "ones"), "axis", 1);
    ir_node *n = node(&t, "SplitToSequence", "split_squeezed", "x", "squeezed");
    attr_int(n, "axis", 1);
    attr_int(n, "keepdims", 0);
    attr_int(node(&t, "ConcatFromSequence", "cat0", "aa", "cat0_out"), "axis", 0);
    n = node(&t, "ConcatFromSequence", "stack_last", "aa", "stacked");
    attr_int(n, "axis", -1);
    attr_int(n, "new_axis", 1);
    EXPECT_OK(&t);
    EXPECT_TYPE(&t, "e_float", "seq(float[*])"); /* dtype defaults to float */
    EXPECT_TYPE(&t, "e_i32", "seq(int32[*])");
    EXPECT_TYPE(&t, "ab", "seq(float[2,?])"); /* [2,3] and [2,4] share [2,?] */
    EXPECT_TYPE(&t, "aa", "seq(float[2,3])");
    EXPECT_TYPE(&t, "ins", "seq(float[*])"); /* the empty sequence has no shape */
    EXPECT_TYPE(&t, "aab", "seq(float[2,?])");
    EXPECT_TYPE(&t, "at0", "float[2,?]");
    EXPECT_TYPE(&t, "erased", "seq(float[2,?])");
    EXPECT_TYPE(&t, "n", "int64[]");
    EXPECT_TYPE(&t, "by2", "seq(float[2,4])"); /* 6 rows in pieces of 2 */
    EXPECT_TYPE(&t, "by4", "seq(float[?,4])"); /* 4 and 2 rows */
    EXPECT_TYPE(&t, "by3", "seq(float[3,4])");
    EXPECT_TYPE(&t, "byu", "seq(float[?,4])");
    EXPECT_TYPE(&t, "ones", "seq(float[6,1])");   /* no split: pieces of 1, kept */
    EXPECT_TYPE(&t, "squeezed", "seq(float[6])"); /* ... or dropped with keepdims 0 */
    EXPECT_TYPE(&t, "cat0_out", "float[?,3]");    /* the sequence's length is not known */
    EXPECT_TYPE(&t, "stacked", "float[2,3,?]");
    tb_free(&t);
}

/* Optional, OptionalHasElement, OptionalGetElement, Identity of a sequence
 * (onnx/defs/optional; Identity takes any type from opset 14/16). */
static void test_optionals(void) {
    tb t = tb_new(18);
    input(&t, "x", TSR_FLOAT, "3");
    wrapped_input(&t, "s", IR_TYPE_SEQUENCE, TSR_INT64, "N");
    wrapped_input(&t, "os", IR_TYPE_OPTIONAL, TSR_BOOL, "2,2");
    node(&t, "Optional", "wrap", "x", "ox");
    node(&t, "Optional", "wrap_seq", "s", "oseq");
    node(&t, "OptionalHasElement", "has", "ox", "h");
    node(&t, "OptionalGetElement", "get", "ox", "gx");
    node(&t, "OptionalGetElement", "get_seq", "oseq", "gs");
    node(&t, "OptionalGetElement", "get_plain", "x", "gp"); /* opset 18: a tensor passes */
    node(&t, "OptionalGetElement", "get_input", "os", "go");
    node(&t, "Identity", "id_seq", "s", "ids");
    node(&t, "Identity", "id_opt", "oseq", "ido");
    EXPECT_OK(&t);
    EXPECT_TYPE(&t, "ox", "opt(float[3])");
    EXPECT_TYPE(&t, "oseq", "opt(seq(int64[N]))");
    EXPECT_TYPE(&t, "h", "bool[]");
    EXPECT_TYPE(&t, "gx", "float[3]");
    EXPECT_TYPE(&t, "gs", "seq(int64[N])");
    EXPECT_TYPE(&t, "gp", "float[3]");
    EXPECT_TYPE(&t, "go", "bool[2,2]");
    EXPECT_TYPE(&t, "ids", "seq(int64[N])");
    EXPECT_TYPE(&t, "ido", "opt(seq(int64[N]))");
    tb_free(&t);
}

/* A declared sequence output keeps its declaration across runs: what one
 * run inferred inside it (its tensors' shape) is redone for the next run's
 * inputs, not kept. */
static void test_sequence_rerun(void) {
    tb t = tb_new(12);
    input(&t, "x", TSR_FLOAT, "N,3");
    ir_value *o = output(&t, "seq", 0, "*");
    ir_type_clear(&o->type);
    o->type.kind = IR_TYPE_SEQUENCE; /* declared: a sequence, of nothing more */
    o->type.rank = -1;
    node(&t, "SequenceConstruct", "construct", "x,x", "seq");
    node(&t, "SequenceAt", "at", "seq,x", "first");
    EXPECT_OK(&t);
    EXPECT_TYPE(&t, "seq", "seq(float[N,3])");
    int64_t d2[2] = {2, 3}, d5[2] = {5, 3};
    tsr_tensor in = {0};
    in.elem_type = TSR_FLOAT;
    in.rank = 2;
    in.dims = d2;
    const tsr_tensor *ins[1] = {&in};
    CU_ASSERT_PTR_NULL(ir_infer_shapes_for_inputs(t.g, 1, ins));
    EXPECT_TYPE(&t, "seq", "seq(float[2,3])");
    EXPECT_TYPE(&t, "first", "float[2,3]");
    in.dims = d5;
    CU_ASSERT_PTR_NULL(ir_infer_shapes_for_inputs(t.g, 1, ins));
    EXPECT_TYPE(&t, "seq", "seq(float[5,3])");
    EXPECT_TYPE(&t, "first", "float[5,3]");
    tb_free(&t);
}

/* A branch of an If: out = op(outer value `in`). */
static ir_graph *branch(tb *t, const char *name, const char *op, const char *in, const char *out) {
    ir_graph *g = ir_graph_new(t->m, t->g, name);
    ir_value *o = NULL;
    CU_ASSERT_PTR_NULL_FATAL(ir_graph_value(g, out, &o));
    ir_node *bn = NULL;
    CU_ASSERT_PTR_NULL_FATAL(ir_graph_add_node(g, &bn));
    bn->name = strdup(op);
    bn->op_type = strdup(op);
    bn->domain = strdup("");
    bn->opset = t->opset;
    bn->n_inputs = 1;
    bn->inputs = malloc(sizeof *bn->inputs);
    bn->inputs[0] = ir_graph_resolve(g, in);
    bn->n_outputs = 1;
    bn->outputs = malloc(sizeof *bn->outputs);
    bn->outputs[0] = o;
    o->producer = bn;
    g->n_outputs = 1;
    g->outputs = malloc(sizeof *g->outputs);
    g->outputs[0] = o;
    o->is_graph_output = true;
    return g;
}

/* If and Loop pass sequences on: If's output is what both branches allow;
 * a Loop's carried sequence is the initial one's or the body's. */
static void test_sequence_control_flow(void) {
    tb t = tb_new(16);
    input(&t, "c", TSR_BOOL, "");
    input(&t, "a", TSR_FLOAT, "2");
    input(&t, "b", TSR_FLOAT, "3");
    ir_node *n = node(&t, "If", "if", "c", "y");
    add_attr(n, "then_branch", TSR_ATTR_GRAPH)->g = branch(&t, "then", "SequenceConstruct", "a", "ta");
    add_attr(n, "else_branch", TSR_ATTR_GRAPH)->g = branch(&t, "else", "SequenceConstruct", "b", "eb");
    n = node(&t, "If", "if_opt", "c", "z");
    add_attr(n, "then_branch", TSR_ATTR_GRAPH)->g = branch(&t, "then2", "Optional", "a", "oa");
    add_attr(n, "else_branch", TSR_ATTR_GRAPH)->g = branch(&t, "else2", "Optional", "a", "oa2");
    EXPECT_OK(&t);
    EXPECT_TYPE(&t, "y", "seq(float[?])"); /* [2] or [3] */
    EXPECT_TYPE(&t, "z", "opt(float[2])");
    tb_free(&t);

    t = tb_new(13);
    input(&t, "m", TSR_INT64, "");
    input(&t, "cond", TSR_BOOL, "");
    input(&t, "x", TSR_FLOAT, "4");
    wrapped_input(&t, "s0", IR_TYPE_SEQUENCE, TSR_FLOAT, "4");
    n = node(&t, "Loop", "loop", "m,cond,s0", "s_out");
    /* body(i, c, s) -> (c, SequenceInsert(s, x)) */
    ir_graph *g = body1(&t, "SequenceInsert", 3, (const char *[]){"i", "c", "s"}, (const char *[]){"", "b", ""}, 2,
                        (const char *[]){"c", "s2"}, "s", "x", "s2");
    add_attr(n, "body", TSR_ATTR_GRAPH)->g = g;
    EXPECT_OK(&t);
    /* the body sees the sequence without its tensors' shapes (they may
     * change from one iteration to the next) */
    CU_ASSERT_STRING_EQUAL(type_str(&g->inputs[2]->type), "seq(float[*])");
    CU_ASSERT_STRING_EQUAL(type_str(&g->outputs[1]->type), "seq(float[*])");
    EXPECT_TYPE(&t, "s_out", "seq(float[*])");
    tb_free(&t);

    /* Scan at opset 8: a batch axis before everything, the sequence axis
     * second in scan inputs and outputs. */
    t = tb_new(8);
    input(&t, "init", TSR_FLOAT, "B,2");
    input(&t, "xs", TSR_FLOAT, "B,T,2");
    n = node(&t, "Scan", "scan8", ",init,xs", "final,ys");
    attr_int(n, "num_scan_inputs", 1);
    g = body1(&t, "Add", 2, (const char *[]){"s", "x"}, (const char *[]){"", ""}, 2, (const char *[]){"s2", "s2"}, "s",
              "x", "s2");
    add_attr(n, "body", TSR_ATTR_GRAPH)->g = g;
    EXPECT_OK(&t);
    CU_ASSERT_STRING_EQUAL(type_str(&g->inputs[1]->type), "float[2]");
    EXPECT_TYPE(&t, "final", "float[B,2]");
    EXPECT_TYPE(&t, "ys", "float[B,T,2]");
    tb_free(&t);
}

/* The ops that had no rule (shape_rules' former NO_RULE_YET), with shapes
 * from their ONNX schemas. */
static void test_newer_ops(void) {
    tb t = tb_new(28);
    input(&t, "ga", TSR_FLOAT16, "N,8");
    input(&t, "gb", TSR_FLOAT16, "?,8");
    node(&t, "SwiGLU", "swiglu", "ga,gb", "glu");
    /* LinearAttention: 4 query heads, 2 kv heads; d_k 8, d_v 6 */
    input(&t, "q", TSR_FLOAT, "2,5,32");
    input(&t, "k", TSR_FLOAT, "2,5,16");
    input(&t, "v", TSR_FLOAT, "2,5,12");
    ir_node *n = node(&t, "LinearAttention", "la", "q,k,v", "la_out,la_state");
    attr_int(n, "q_num_heads", 4);
    attr_int(n, "kv_num_heads", 2);
    attr_str(n, "update_rule", "linear");
    input(&t, "past", TSR_DOUBLE, "2,2,8,6");
    n = node(&t, "LinearAttention", "la_past", "q,k,v,past", "lp_out,lp_state");
    attr_int(n, "q_num_heads", 4);
    attr_int(n, "kv_num_heads", 2);
    /* CausalConvWithState: 16 channels, kernel 4 */
    input(&t, "cx", TSR_FLOAT, "1,16,10");
    input(&t, "cw", TSR_FLOAT, "16,1,4");
    node(&t, "CausalConvWithState", "ccs", "cx,cw", "cc_out,cc_state");
    /* DeformConv: Conv's output shape */
    input(&t, "dx", TSR_FLOAT, "1,4,10,10");
    input(&t, "dw", TSR_FLOAT, "8,4,3,3");
    input(&t, "doff", TSR_FLOAT, "1,18,8,8");
    node(&t, "DeformConv", "dc", "dx,dw,doff", "dy");
    input(&t, "tokens", TSR_INT32, "2,7");
    n = node(&t, "TfIdfVectorizer", "tfidf", "tokens", "tf");
    attr_ints(n, "ngram_indexes", 4, 0, 1, 2, 5);
    input(&t, "jpeg", TSR_UINT8, "?");
    attr_str(node(&t, "ImageDecoder", "dec_gray", "jpeg", "gray"), "pixel_format", "Grayscale");
    node(&t, "ImageDecoder", "dec_rgb", "jpeg", "rgb");
    EXPECT_OK(&t);
    EXPECT_TYPE(&t, "glu", "float16[N,8]");
    EXPECT_TYPE(&t, "la_out", "float[2,5,24]");     /* [B, T, Hq * d_v] */
    EXPECT_TYPE(&t, "la_state", "float[2,2,8,6]");  /* [B, Hkv, d_k, d_v], the query's type */
    EXPECT_TYPE(&t, "lp_state", "double[2,2,8,6]"); /* past_state's type */
    EXPECT_TYPE(&t, "cc_out", "float[1,16,10]");
    EXPECT_TYPE(&t, "cc_state", "float[1,16,3]"); /* the last k - 1 positions */
    EXPECT_TYPE(&t, "dy", "float[1,8,8,8]");
    EXPECT_TYPE(&t, "tf", "float[2,6]"); /* max(ngram_indexes) + 1 */
    EXPECT_TYPE(&t, "gray", "uint8[?,?,1]");
    EXPECT_TYPE(&t, "rgb", "uint8[?,?,3]");
    tb_free(&t);

    /* SwiGLU's inputs have one shape: no broadcasting */
    t = tb_new(28);
    input(&t, "ga", TSR_FLOAT, "4,8");
    input(&t, "gb", TSR_FLOAT, "1,8");
    node(&t, "SwiGLU", "swiglu", "ga,gb", "glu");
    CU_ASSERT_STRING_EQUAL(infer(&t), "node 'swiglu' (SwiGLU): A and B differ in dimension 0 (4 against 1)");
    tb_free(&t);

    /* DFT one-sided and inverse is the IRFFT: 6 bins make a real signal of
     * 2 * (6 - 1) = 10 (the schema's default dft_length). */
    t = tb_new(19);
    input(&t, "spec", TSR_FLOAT, "1,6,10,2");
    n = node(&t, "DFT", "irfft", "spec", "signal");
    attr_int(n, "axis", 1);
    attr_int(n, "inverse", 1);
    attr_int(n, "onesided", 1);
    EXPECT_OK(&t);
    EXPECT_TYPE(&t, "signal", "float[1,10,10,1]");
    tb_free(&t);
}

/* ai.onnx.ml, ai.onnx.preview.training and ai.onnx.preview ops. */
static void test_other_domains(void) {
    tb t = tb_new(18);
    input(&t, "x", TSR_DOUBLE, "N,3");
    input(&t, "names", TSR_STRING, "5");
    input(&t, "idx", TSR_INT64, "2");
    domain_node(&t, "ai.onnx.ml", 1, "Binarizer", "x", "bin");
    ir_node *n = domain_node(&t, "ai.onnx.ml", 2, "LabelEncoder", "names", "codes");
    add_attr(n, "values_int64s", TSR_ATTR_INTS);
    domain_node(&t, "ai.onnx.ml", 1, "LabelEncoder", "names", "codes_v1"); /* strings -> int64 */
    domain_node(&t, "ai.onnx.ml", 1, "ArrayFeatureExtractor", "x,idx", "picked");
    attr_int(domain_node(&t, "ai.onnx.ml", 5, "TreeEnsemble", "x", "trees"), "n_targets", 2);
    input(&t, "r", TSR_FLOAT, "");
    input(&t, "step", TSR_INT64, "");
    input(&t, "w", TSR_FLOAT, "3,4");
    input(&t, "g", TSR_FLOAT, "3,4");
    input(&t, "m1", TSR_FLOAT, "3,4");
    input(&t, "m2", TSR_DOUBLE, "3,4");
    domain_node(&t, "ai.onnx.preview.training", 1, "Adam", "r,step,w,g,m1,m2", "w_new,m1_new,m2_new");
    domain_node(&t, "ai.onnx.preview.training", 1, "Momentum", "r,step,w,g,m1", "mw_new,mv_new");
    domain_node(&t, "ai.onnx.preview.training", 1, "Adagrad", "r,step,w,g,m2", "aw_new,ah_new");
    EXPECT_OK(&t);
    EXPECT_TYPE(&t, "bin", "double[N,3]");
    EXPECT_TYPE(&t, "codes", "int64[5]");
    EXPECT_TYPE(&t, "codes_v1", "int64[5]");
    EXPECT_TYPE(&t, "picked", "double[N,2]");
    EXPECT_TYPE(&t, "trees", "double[N,2]");
    EXPECT_TYPE(&t, "w_new", "float[3,4]");
    EXPECT_TYPE(&t, "m2_new", "double[3,4]");
    EXPECT_TYPE(&t, "mv_new", "float[3,4]");
    EXPECT_TYPE(&t, "ah_new", "double[3,4]");
    tb_free(&t);

    /* FlexAttention: Y [B, Hq, L, Ev]; the score_mod body sees the scores
     * [B, Hq, L, S] in float (the default softmax precision for float16) */
    t = tb_new(26);
    input(&t, "q", TSR_FLOAT16, "B,4,7,8");
    input(&t, "k", TSR_FLOAT16, "B,2,9,8");
    input(&t, "v", TSR_FLOAT16, "B,2,9,5");
    n = domain_node(&t, "ai.onnx.preview", 1, "FlexAttention", "q,k,v", "y");
    ir_graph *g = body1(&t, "Neg", 1, (const char *[]){"scores"}, (const char *[]){""}, 1, (const char *[]){"neg"},
                        "scores", NULL, "neg");
    add_attr(n, "score_mod", TSR_ATTR_GRAPH)->g = g;
    EXPECT_OK(&t);
    EXPECT_TYPE(&t, "y", "float16[B,4,7,5]");
    CU_ASSERT_STRING_EQUAL(type_str(&g->inputs[0]->type), "float[B,4,7,9]");
    CU_ASSERT_STRING_EQUAL(type_str(&g->outputs[0]->type), "float[B,4,7,9]");
    tb_free(&t);
}

void unit_register(void) {
    CU_pSuite s = CU_add_suite("shape_infer", NULL, NULL);
    CU_add_test(s, "conv", test_conv);
    CU_add_test(s, "recurrent ops", test_recurrent);
    CU_add_test(s, "attribute-shaped ops", test_attribute_shaped);
    CU_add_test(s, "signal and image ops", test_signal_shapes);
    CU_add_test(s, "reduced shape values", test_reduced_shape_value);
    CU_add_test(s, "grid sample, roi align, center crop pad", test_sampling);
    CU_add_test(s, "conv_transpose", test_conv_transpose);
    CU_add_test(s, "broadcast", test_broadcast);
    CU_add_test(s, "unary_and_cast", test_unary_and_cast);
    CU_add_test(s, "matmul_gemm", test_matmul_gemm);
    CU_add_test(s, "pool", test_pool);
    CU_add_test(s, "norms", test_norms);
    CU_add_test(s, "reduce", test_reduce);
    CU_add_test(s, "reshape_family", test_reshape_family);
    CU_add_test(s, "shape_values", test_shape_values);
    CU_add_test(s, "concat_split_slice_gather", test_concat_split_slice_gather);
    CU_add_test(s, "tensor_makers", test_tensor_makers);
    CU_add_test(s, "declared_and_unknown", test_declared_and_unknown);
    CU_add_test(s, "rerun", test_rerun);
    CU_add_test(s, "if_subgraph", test_if_subgraph);
    CU_add_test(s, "more_ops", test_more_ops);
    CU_add_test(s, "shape_value_where", test_shape_value_where);
    CU_add_test(s, "loop_scan", test_loop_scan);
    CU_add_test(s, "sequences", test_sequences);
    CU_add_test(s, "optionals", test_optionals);
    CU_add_test(s, "sequence_rerun", test_sequence_rerun);
    CU_add_test(s, "sequence_control_flow", test_sequence_control_flow);
    CU_add_test(s, "newer_ops", test_newer_ops);
    CU_add_test(s, "other_domains", test_other_domains);
}
