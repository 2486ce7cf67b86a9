/* Pooling, BatchNormalization, Softmax/LogSoftmax and LayerNormalization. */
#include <stdlib.h>
#include <string.h>

#include "ocl_op.h"

typedef struct nn_state {
    cl_kernel k;
    int is_max;
    int count_pad, ceil_mode, auto_pad;
    int64_t kernel[2], strides[2], dilations[2], pads[4];
    int64_t axis;
    int opset;
    float eps;
} nn_state;

static void nn_free(void *p) {
    nn_state *s = p;
    if (!s) return;
    if (s->k) clReleaseKernel(s->k);
    free(s);
}

static tsr_status *nn_new(ocl_state *st, const char *kernel, nn_state **out) {
    nn_state *s = calloc(1, sizeof *s);
    if (!s) return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
    tsr_status *e = ocl_kernel_create(st, "nn", "", kernel, &s->k);
    if (e) {
        free(s);
        return e;
    }
    *out = s;
    return NULL;
}

static bool fits_int(int64_t v) { return v >= 0 && v <= INT32_MAX; }

static tsr_status *set_args(cl_kernel k, const ocl_tensor *x, const ocl_tensor *y, const int *ints, int n_ints,
                            const char *what) {
    cl_int e = clSetKernelArg(k, 0, sizeof(cl_mem), &x->mem);
    e |= clSetKernelArg(k, 1, sizeof(cl_mem), &y->mem);
    for (int i = 0; i < n_ints; i++) e |= clSetKernelArg(k, (cl_uint)(2 + i), sizeof(int), &ints[i]);
    return e == CL_SUCCESS ? NULL : ocl_cl_error(e, what);
}

/* --- MaxPool / AveragePool -------------------------------------------------- */

static const char *pool_check(const tsr_node *n, int32_t *reason, char *buf, size_t size) {
    (void)buf;
    (void)size;
    const char *why = ocl_check_float(n, reason);
    if (why) return why;
    if (ocl_output_present(n, 1)) {
        *reason = TSR_DECLINE_OTHER;
        return "MaxPool Indices output not supported";
    }
    if (ocl_host->value_rank(ocl_host->node_input(n, 0)) != 4) {
        *reason = TSR_DECLINE_SHAPE;
        return "only 2-D pooling";
    }
    int64_t v[8];
    if (ocl_attr_ints(n, "kernel_shape", v, 8) != 2 || v[0] < 1 || v[1] < 1) {
        *reason = TSR_DECLINE_ATTRIBUTE;
        return "kernel_shape must have two positive values";
    }
    const char *lists[3] = {"strides", "dilations", "pads"};
    int lens[3] = {2, 2, 4};
    for (int i = 0; i < 3; i++) {
        int len = ocl_attr_ints(n, lists[i], v, 8);
        if (len >= 0 && len != lens[i]) {
            *reason = TSR_DECLINE_ATTRIBUTE;
            return "strides/dilations/pads length does not match the input";
        }
        for (int k = 0; k < len; k++)
            if (v[k] < (i == 2 ? 0 : 1)) {
                *reason = TSR_DECLINE_ATTRIBUTE;
                return "strides/dilations must be positive, pads non-negative";
            }
    }
    if (ocl_attr_int(n, "storage_order", 0) != 0) {
        *reason = TSR_DECLINE_ATTRIBUTE;
        return "storage_order 1 not supported";
    }
    if (!ocl_attr_string_is(n, "auto_pad", "NOTSET", true) && !ocl_attr_string_is(n, "auto_pad", "VALID", false) &&
        !ocl_attr_string_is(n, "auto_pad", "SAME_UPPER", false) &&
        !ocl_attr_string_is(n, "auto_pad", "SAME_LOWER", false)) {
        *reason = TSR_DECLINE_ATTRIBUTE;
        return "unknown auto_pad";
    }
    return NULL;
}

static tsr_status *pool_prepare(ocl_state *st, const tsr_node *n, void **out) {
    nn_state *s = NULL;
    tsr_status *e = nn_new(st, "pool2d", &s);
    if (e) return e;
    s->is_max = strcmp(ocl_host->node_op_type(n), "MaxPool") == 0;
    s->count_pad = (int)ocl_attr_int(n, "count_include_pad", 0);
    s->ceil_mode = (int)ocl_attr_int(n, "ceil_mode", 0);
    s->auto_pad = ocl_attr_string_is(n, "auto_pad", "VALID", false) ? 1
        : ocl_attr_string_is(n, "auto_pad", "SAME_UPPER", false)    ? 2
        : ocl_attr_string_is(n, "auto_pad", "SAME_LOWER", false)    ? 3
                                                                    : 0;
    int64_t v[8];
    ocl_attr_ints(n, "kernel_shape", s->kernel, 2);
    s->strides[0] = s->strides[1] = s->dilations[0] = s->dilations[1] = 1;
    if (ocl_attr_ints(n, "strides", v, 8) == 2) s->strides[0] = v[0], s->strides[1] = v[1];
    if (ocl_attr_ints(n, "dilations", v, 8) == 2) s->dilations[0] = v[0], s->dilations[1] = v[1];
    if (ocl_attr_ints(n, "pads", v, 8) == 4) memcpy(s->pads, v, sizeof s->pads);
    *out = s;
    return NULL;
}

static tsr_status *pool_run(ocl_exec *x, void *state) {
    nn_state *p = state;
    const ocl_tensor *in = ocl_exec_input(x, 0);
    if (!in || in->rank != 4) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "pooling needs a 4-D input");
    int64_t sz[2] = {in->dims[2], in->dims[3]}, osz[2], pb[2], pe[2];
    for (int i = 0; i < 2; i++) {
        int64_t ek = (p->kernel[i] - 1) * p->dilations[i] + 1, s = p->strides[i];
        if (p->auto_pad >= 2) {
            osz[i] = (sz[i] + s - 1) / s;
            int64_t total = (osz[i] - 1) * s + ek - sz[i];
            if (total < 0) total = 0;
            pb[i] = p->auto_pad == 2 ? total / 2 : total - total / 2;
            pe[i] = total - pb[i];
        } else {
            pb[i] = p->auto_pad == 1 ? 0 : p->pads[i];
            pe[i] = p->auto_pad == 1 ? 0 : p->pads[i + 2];
            int64_t span = sz[i] + pb[i] + pe[i] - ek;
            if (span < 0) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "pooling window larger than input");
            osz[i] = (p->ceil_mode ? (span + s - 1) / s : span / s) + 1;
            /* a last window starting past the padded input is dropped */
            if (p->ceil_mode && (osz[i] - 1) * s >= sz[i] + pb[i]) osz[i]--;
        }
    }
    int64_t odims[4] = {in->dims[0], in->dims[1], osz[0], osz[1]};
    ocl_tensor *y;
    tsr_status *s = ocl_exec_output(x, 0, TSR_FLOAT, 4, odims, &y);
    if (s || !y->count) return s;
    if (!fits_int((int64_t)in->count) || !fits_int((int64_t)y->count))
        return ocl_error(TSR_ERR_NOT_SUPPORTED, "tensor too large");
    int ints[17] = {(int)(in->dims[0] * in->dims[1]),
                    (int)sz[0],
                    (int)sz[1],
                    (int)osz[0],
                    (int)osz[1],
                    (int)p->kernel[0],
                    (int)p->kernel[1],
                    (int)p->strides[0],
                    (int)p->strides[1],
                    (int)pb[0],
                    (int)pb[1],
                    (int)pe[0],
                    (int)pe[1],
                    (int)p->dilations[0],
                    (int)p->dilations[1],
                    p->is_max,
                    p->count_pad};
    if ((s = set_args(p->k, in, y, ints, 17, "clSetKernelArg(pool2d)"))) return s;
    return ocl_launch_1d(ocl_exec_state(x), p->k, y->count, "pool2d");
}

/* --- GlobalAveragePool / GlobalMaxPool ------------------------------------ */

static const char *global_pool_check(const tsr_node *n, int32_t *reason, char *buf, size_t size) {
    (void)buf;
    (void)size;
    const char *why = ocl_check_float(n, reason);
    if (why) return why;
    int32_t r = ocl_host->value_rank(ocl_host->node_input(n, 0));
    if (r != -1 && r < 2) {
        *reason = TSR_DECLINE_SHAPE;
        return "input rank must be at least 2";
    }
    return NULL;
}

static tsr_status *global_pool_prepare(ocl_state *st, const tsr_node *n, void **out) {
    nn_state *s = NULL;
    tsr_status *e = nn_new(st, "global_pool", &s);
    if (e) return e;
    s->is_max = strcmp(ocl_host->node_op_type(n), "GlobalMaxPool") == 0;
    *out = s;
    return NULL;
}

static tsr_status *global_pool_run(ocl_exec *x, void *state) {
    nn_state *p = state;
    const ocl_tensor *in = ocl_exec_input(x, 0);
    if (!in || in->rank < 2) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "input rank must be at least 2");
    int64_t odims[OCL_MAX_RANK];
    for (int32_t d = 0; d < in->rank; d++) odims[d] = d < 2 ? in->dims[d] : 1;
    ocl_tensor *y;
    tsr_status *s = ocl_exec_output(x, 0, TSR_FLOAT, in->rank, odims, &y);
    if (s || !y->count) return s;
    if (!fits_int((int64_t)in->count)) return ocl_error(TSR_ERR_NOT_SUPPORTED, "tensor too large");
    int ints[3] = {(int)y->count, (int)(in->count / y->count), p->is_max};
    if ((s = set_args(p->k, in, y, ints, 3, "clSetKernelArg(global_pool)"))) return s;
    return ocl_launch_1d(ocl_exec_state(x), p->k, y->count, "global_pool");
}

/* --- BatchNormalization (inference) --------------------------------------- */

static const char *bn_check(const tsr_node *n, int32_t *reason, char *buf, size_t size) {
    (void)buf;
    (void)size;
    const char *why = ocl_check_float(n, reason);
    if (why) return why;
    if (ocl_attr_int(n, "training_mode", 0) != 0 || ocl_host->node_output_count(n) > 1) {
        *reason = TSR_DECLINE_ATTRIBUTE;
        return "training mode (running statistics outputs) not supported";
    }
    if (ocl_host->node_input_count(n) != 5) {
        *reason = TSR_DECLINE_OTHER;
        return "needs five inputs";
    }
    if (ocl_attr_int(n, "spatial", 1) != 1) {
        *reason = TSR_DECLINE_ATTRIBUTE;
        return "spatial=0 not supported";
    }
    return NULL;
}

static tsr_status *bn_prepare(ocl_state *st, const tsr_node *n, void **out) {
    nn_state *s = NULL;
    tsr_status *e = nn_new(st, "batchnorm", &s);
    if (e) return e;
    s->eps = ocl_attr_float(n, "epsilon", 1e-5f);
    *out = s;
    return NULL;
}

static tsr_status *bn_run(ocl_exec *x, void *state) {
    nn_state *p = state;
    const ocl_tensor *in = ocl_exec_input(x, 0);
    if (!in || in->rank < 2) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "X must have rank >= 2");
    int64_t C = in->dims[1];
    for (size_t i = 1; i < 5; i++) {
        const ocl_tensor *t = ocl_exec_input(x, i);
        if (!t || t->count != (size_t)C || t->elem_type != TSR_FLOAT)
            return ocl_error(TSR_ERR_INVALID_ARGUMENT, "input %zu must have %lld floats", i, (long long)C);
    }
    ocl_tensor *y;
    tsr_status *s = ocl_exec_output(x, 0, TSR_FLOAT, in->rank, in->dims, &y);
    if (s || !y->count) return s;
    if (!fits_int((int64_t)in->count)) return ocl_error(TSR_ERR_NOT_SUPPORTED, "tensor too large");
    int inner = (int)(in->count / (size_t)in->dims[0] / (size_t)C), c = (int)C, n = (int)in->count;
    cl_int e = clSetKernelArg(p->k, 0, sizeof(cl_mem), &in->mem);
    e |= clSetKernelArg(p->k, 1, sizeof(cl_mem), &y->mem);
    for (cl_uint i = 1; i < 5; i++) e |= clSetKernelArg(p->k, 1 + i, sizeof(cl_mem), &ocl_exec_input(x, i)->mem);
    e |= clSetKernelArg(p->k, 6, sizeof(float), &p->eps);
    e |= clSetKernelArg(p->k, 7, sizeof(int), &c);
    e |= clSetKernelArg(p->k, 8, sizeof(int), &inner);
    e |= clSetKernelArg(p->k, 9, sizeof(int), &n);
    if (e != CL_SUCCESS) return ocl_cl_error(e, "clSetKernelArg(batchnorm)");
    return ocl_launch_1d(ocl_exec_state(x), p->k, in->count, "batchnorm");
}

/* --- Softmax / LogSoftmax ---------------------------------------------------- */

static const char *softmax_check(const tsr_node *n, int32_t *reason, char *buf, size_t size) {
    (void)buf;
    (void)size;
    return ocl_check_float(n, reason);
}

static tsr_status *softmax_prepare(ocl_state *st, const tsr_node *n, void **out) {
    nn_state *s = NULL;
    tsr_status *e = nn_new(st, "softmax", &s);
    if (e) return e;
    s->opset = (int)ocl_host->node_opset(n);
    s->axis = ocl_attr_int(n, "axis", s->opset < 13 ? 1 : -1);
    s->is_max = strcmp(ocl_host->node_op_type(n), "LogSoftmax") == 0; /* log form */
    *out = s;
    return NULL;
}

static tsr_status *softmax_run(ocl_exec *x, void *state) {
    nn_state *p = state;
    const ocl_tensor *in = ocl_exec_input(x, 0);
    if (!in) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "missing input");
    int64_t axis = p->axis < 0 ? p->axis + in->rank : p->axis;
    if (axis < 0 || axis >= (in->rank ? in->rank : 1))
        return ocl_error(TSR_ERR_INVALID_ARGUMENT, "axis %lld out of range for rank %d", (long long)p->axis,
                         (int)in->rank);
    ocl_tensor *y;
    tsr_status *s = ocl_exec_output(x, 0, TSR_FLOAT, in->rank, in->dims, &y);
    if (s || !y->count) return s;
    if (!fits_int((int64_t)in->count)) return ocl_error(TSR_ERR_NOT_SUPPORTED, "tensor too large");
    int64_t outer = 1, len = 1, inner = 1;
    for (int32_t d = 0; d < in->rank; d++) {
        if (d < axis) outer *= in->dims[d];
        else if (d == axis || p->opset < 13) len *= in->dims[d]; /* before 13: flatten to 2-D */
        else inner *= in->dims[d];
    }
    int ints[4] = {(int)outer, (int)len, (int)inner, p->is_max};
    if ((s = set_args(p->k, in, y, ints, 4, "clSetKernelArg(softmax)"))) return s;
    return ocl_launch_1d(ocl_exec_state(x), p->k, (size_t)(outer * inner), "softmax");
}

/* --- LayerNormalization ---------------------------------------------------- */

static const char *layernorm_check(const tsr_node *n, int32_t *reason, char *buf, size_t size) {
    (void)buf;
    (void)size;
    const char *why = ocl_check_float(n, reason);
    if (why) return why;
    if (ocl_output_present(n, 1) || ocl_output_present(n, 2)) {
        *reason = TSR_DECLINE_OTHER;
        return "Mean/InvStdDev outputs not supported";
    }
    if (!ocl_input_present(n, 1)) {
        *reason = TSR_DECLINE_OTHER;
        return "needs Scale";
    }
    return NULL;
}

static tsr_status *layernorm_prepare(ocl_state *st, const tsr_node *n, void **out) {
    nn_state *s = NULL;
    tsr_status *e = nn_new(st, "layernorm", &s);
    if (e) return e;
    s->axis = ocl_attr_int(n, "axis", -1);
    s->eps = ocl_attr_float(n, "epsilon", 1e-5f);
    *out = s;
    return NULL;
}

static tsr_status *layernorm_run(ocl_exec *x, void *state) {
    nn_state *p = state;
    const ocl_tensor *in = ocl_exec_input(x, 0), *sc = ocl_exec_input(x, 1), *b = ocl_exec_input(x, 2);
    if (!in || !sc) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "missing input");
    int64_t axis = p->axis < 0 ? p->axis + in->rank : p->axis;
    if (axis < 0 || axis >= in->rank)
        return ocl_error(TSR_ERR_INVALID_ARGUMENT, "axis %lld out of range", (long long)p->axis);
    size_t rows = 1, len = 1;
    for (int32_t d = 0; d < in->rank; d++) {
        if (d < axis) rows *= (size_t)in->dims[d];
        else len *= (size_t)in->dims[d];
    }
    if ((sc->count != len && sc->count != 1) || (b && b->count != len && b->count != 1))
        return ocl_error(TSR_ERR_NOT_SUPPORTED, "Scale/B must have the normalized shape or one element");
    ocl_tensor *y;
    tsr_status *s = ocl_exec_output(x, 0, TSR_FLOAT, in->rank, in->dims, &y);
    if (s || !y->count) return s;
    if (!fits_int((int64_t)in->count)) return ocl_error(TSR_ERR_NOT_SUPPORTED, "tensor too large");
    int sstride = sc->count == 1 ? 0 : 1, bstride = b && b->count != 1 ? 1 : 0, has_b = b != NULL;
    int r = (int)rows, l = (int)len;
    cl_mem bm = b ? b->mem : sc->mem;
    cl_int e = clSetKernelArg(p->k, 0, sizeof(cl_mem), &in->mem);
    e |= clSetKernelArg(p->k, 1, sizeof(cl_mem), &y->mem);
    e |= clSetKernelArg(p->k, 2, sizeof(cl_mem), &sc->mem);
    e |= clSetKernelArg(p->k, 3, sizeof(int), &sstride);
    e |= clSetKernelArg(p->k, 4, sizeof(cl_mem), &bm);
    e |= clSetKernelArg(p->k, 5, sizeof(int), &bstride);
    e |= clSetKernelArg(p->k, 6, sizeof(int), &has_b);
    e |= clSetKernelArg(p->k, 7, sizeof(int), &r);
    e |= clSetKernelArg(p->k, 8, sizeof(int), &l);
    e |= clSetKernelArg(p->k, 9, sizeof(float), &p->eps);
    if (e != CL_SUCCESS) return ocl_cl_error(e, "clSetKernelArg(layernorm)");
    return ocl_launch_1d(ocl_exec_state(x), p->k, rows, "layernorm");
}

const ocl_op ocl_ops_nn[] = {
    {"MaxPool", pool_check, pool_prepare, pool_run, nn_free},
    {"AveragePool", pool_check, pool_prepare, pool_run, nn_free},
    {"GlobalAveragePool", global_pool_check, global_pool_prepare, global_pool_run, nn_free},
    {"GlobalMaxPool", global_pool_check, global_pool_prepare, global_pool_run, nn_free},
    {"BatchNormalization", bn_check, bn_prepare, bn_run, nn_free},
    {"Softmax", softmax_check, softmax_prepare, softmax_run, nn_free},
    {"LogSoftmax", softmax_check, softmax_prepare, softmax_run, nn_free},
    {"LayerNormalization", layernorm_check, layernorm_prepare, layernorm_run, nn_free},
    {NULL, NULL, NULL, NULL, NULL},
};
