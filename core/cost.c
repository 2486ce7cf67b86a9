/* Static estimates of work and data size. They only rank placements, so an
 * estimate within a factor of a few is enough; what matters is that a
 * convolution weighs a thousand times a Reshape. */
#include "cost.h"

#include <string.h>

/* A node below this many flops with everything it touches small is cheap. */
#define CHEAP_FLOPS 65536.0
/* What a symbolic dimension (batch, sequence, height...) counts as when
 * estimating. Without a number every shape-dependent estimate is unknown,
 * every provider then costs the same and placement cannot tell a matrix
 * product from a Reshape. 32 sits between a batch of 1 and sequences and
 * images of hundreds; erring large only favours the faster provider for
 * work that is in fact small, where any provider is quick. */
#define SYMBOLIC_DIM_GUESS 32

static int64_t dim_of(const ir_value *v, int32_t axis, bool estimate) {
    if (!v || v->type.kind != IR_TYPE_TENSOR || axis < 0 || axis >= v->type.rank) return -1;
    int64_t d = v->type.dims[axis].value;
    return d < 0 && estimate ? SYMBOLIC_DIM_GUESS : d;
}

static double value_elems(const ir_value *v, bool estimate) {
    if (!v || v->type.kind != IR_TYPE_TENSOR || v->type.rank < 0) return -1.0;
    double n = 1.0;
    for (int32_t i = 0; i < v->type.rank; i++) {
        int64_t d = dim_of(v, i, estimate);
        if (d < 0) return -1.0;
        n *= (double)d;
    }
    return n;
}

double cost_value_bytes(const ir_value *v, bool estimate) {
    double n = value_elems(v, estimate);
    size_t one = 0;
    if (n < 0 || !v->type.elem_type || !ir_elem_bytes(v->type.elem_type, 1, &one)) return -1.0;
    return n * (double)one;
}

static const ir_value *in(const ir_node *n, size_t k) { return k < n->n_inputs ? n->inputs[k] : NULL; }

static const ir_value *out0(const ir_node *n) { return n->n_outputs ? n->outputs[0] : NULL; }

static bool op_is(const ir_node *n, const char *const *ops) {
    for (; *ops; ops++)
        if (strcmp(n->op_type, *ops) == 0) return true;
    return false;
}

static double node_flops(const ir_node *n, bool estimate) {
    const ir_value *y = out0(n);
    double out = value_elems(y, estimate);
    if (n->domain[0]) return out;
    static const char *const convs[] = {"Conv", "ConvTranspose", "ConvInteger", "QLinearConv", NULL};
    if (op_is(n, convs)) {
        /* Each element on the weight's first axis meets weight / that axis
         * multiply-adds: Conv's weight is Cout x Cin/group x k... and each
         * output element does Cin/group x k...; ConvTranspose's is
         * Cin x Cout/group x k... and each input element scatters that many.
         * QLinearConv's weight follows x and its scale and zero point. */
        bool transposed = strcmp(n->op_type, "ConvTranspose") == 0;
        size_t w = n->op_type[0] == 'Q' ? 3 : 1;
        double each = value_elems(transposed ? in(n, 0) : y, estimate);
        double we = value_elems(in(n, w), estimate);
        int64_t lead = dim_of(in(n, w), 0, estimate);
        if (each < 0 || we < 0 || lead <= 0) return -1.0;
        return 2.0 * each * we / (double)lead;
    }
    if (strcmp(n->op_type, "MatMul") == 0 || strcmp(n->op_type, "Gemm") == 0 ||
        strcmp(n->op_type, "MatMulInteger") == 0 || strcmp(n->op_type, "QLinearMatMul") == 0) {
        /* 2 * M * N * K: output elements times the shared dimension. */
        const ir_value *a = in(n, 0);
        if (!a || a->type.rank < 1 || out < 0) return -1.0;
        int32_t ax = a->type.rank - 1;
        if (strcmp(n->op_type, "Gemm") == 0) {
            for (size_t i = 0; i < n->n_attrs; i++)
                if (strcmp(n->attrs[i].name, "transA") == 0 && n->attrs[i].i) ax = 0;
        }
        int64_t k = dim_of(a, ax, estimate);
        return k < 0 ? -1.0 : 2.0 * out * (double)k;
    }
    static const char *const reads_all[] = {"ReduceSum",          "ReduceMean", "ReduceMax",   "ReduceMin",
                                            "ReduceProd",         "Softmax",    "LogSoftmax",  "LayerNormalization",
                                            "BatchNormalization", "MaxPool",    "AveragePool", "GlobalAveragePool",
                                            "GlobalMaxPool",      "LRN",        NULL};
    if (op_is(n, reads_all)) {
        double x = value_elems(in(n, 0), estimate);
        return x < 0 ? out : 4.0 * x;
    }
    return out;
}

double cost_node_flops(const ir_node *n) { return node_flops(n, true); }

bool cost_node_is_cheap(const ir_node *n) {
    static const char *const shape_ops[] = {"Shape",    "Size",      "Reshape",  "Flatten",
                                            "Squeeze",  "Unsqueeze", "Identity", "ConstantOfShape",
                                            "Constant", "Range",     NULL};
    if (!n->domain[0] && op_is(n, shape_ops)) return true;
    /* Only known sizes: a guessed dimension could hide a large tensor, and
     * the order policy moves cheap nodes without weighing their work. */
    double f = node_flops(n, false);
    if (f < 0 || f > CHEAP_FLOPS) return false;
    for (size_t k = 0; k < n->n_inputs; k++) {
        double e = value_elems(n->inputs[k], false);
        if (n->inputs[k] && (e < 0 || e > CHEAP_FLOPS)) return false;
    }
    return true;
}
