/* Static estimates of work and data size. They only rank placements, so an
 * estimate within a factor of a few is enough; what matters is that a
 * convolution weighs a thousand times a Reshape. */
#include "cost.h"

#include <string.h>

/* A node below this many flops with everything it touches small is cheap. */
#define CHEAP_FLOPS 65536.0

static double value_elems(const ir_value *v) {
    if (!v || v->type.kind != IR_TYPE_TENSOR || v->type.rank < 0) return -1.0;
    double n = 1.0;
    for (int32_t i = 0; i < v->type.rank; i++) {
        int64_t d = v->type.dims[i].value;
        if (d < 0) return -1.0;
        n *= (double)d;
    }
    return n;
}

double cost_value_bytes(const ir_value *v) {
    double n = value_elems(v);
    size_t one = 0;
    if (n < 0 || !v->type.elem_type || !ir_elem_bytes(v->type.elem_type, 1, &one)) return -1.0;
    return n * (double)one;
}

static const ir_value *in(const ir_node *n, size_t k) {
    return k < n->n_inputs ? n->inputs[k] : NULL;
}

static const ir_value *out0(const ir_node *n) {
    return n->n_outputs ? n->outputs[0] : NULL;
}

static int64_t dim(const ir_value *v, int32_t axis) {
    if (!v || v->type.kind != IR_TYPE_TENSOR || axis < 0 || axis >= v->type.rank) return -1;
    return v->type.dims[axis].value;
}

static bool op_is(const ir_node *n, const char *const *ops) {
    for (; *ops; ops++)
        if (strcmp(n->op_type, *ops) == 0) return true;
    return false;
}

double cost_node_flops(const ir_node *n) {
    const ir_value *y = out0(n);
    double out = value_elems(y);
    if (n->domain[0]) return out;
    if (strcmp(n->op_type, "Conv") == 0 || strcmp(n->op_type, "ConvTranspose") == 0) {
        /* Each element on the weight's first axis meets weight / that axis
         * multiply-adds: Conv's weight is Cout x Cin/group x k... and each
         * output element does Cin/group x k...; ConvTranspose's is
         * Cin x Cout/group x k... and each input element scatters that many. */
        bool transposed = n->op_type[4] == 'T';
        double each = value_elems(transposed ? in(n, 0) : y);
        double we = value_elems(in(n, 1));
        int64_t lead = dim(in(n, 1), 0);
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
        int64_t k = dim(a, ax);
        return k < 0 ? -1.0 : 2.0 * out * (double)k;
    }
    static const char *const reads_all[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin",
                                            "ReduceProd", "Softmax", "LogSoftmax",
                                            "LayerNormalization", "BatchNormalization",
                                            "MaxPool", "AveragePool", "GlobalAveragePool",
                                            "GlobalMaxPool", "LRN", NULL};
    if (op_is(n, reads_all)) {
        double x = value_elems(in(n, 0));
        return x < 0 ? out : 4.0 * x;
    }
    return out;
}

bool cost_node_is_cheap(const ir_node *n) {
    static const char *const shape_ops[] = {"Shape", "Size", "Reshape", "Flatten", "Squeeze",
                                            "Unsqueeze", "Identity", "ConstantOfShape",
                                            "Constant", "Range", NULL};
    if (!n->domain[0] && op_is(n, shape_ops)) return true;
    double f = cost_node_flops(n);
    if (f < 0 || f > CHEAP_FLOPS) return false;
    for (size_t k = 0; k < n->n_inputs; k++) {
        double e = value_elems(n->inputs[k]);
        if (n->inputs[k] && (e < 0 || e > CHEAP_FLOPS)) return false;
    }
    return true;
}
