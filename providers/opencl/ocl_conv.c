/* Conv: attributes, BatchNormalization folding, and the choice between the
 * direct kernel and im2col + gemm_tiled. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ocl_linalg.h"

/* Below this many multiply-adds per output, im2col costs more than it saves. */
#define DIRECT_MAX_MACS 64
#define MAX_COL_BYTES ((size_t)1 << 30)

const char *ocl_conv_check(const tsr_node *n, int32_t *reason, char *buf, size_t size) {
    (void)buf;
    (void)size;
    const char *why = ocl_check_float(n, reason);
    if (why) return why;
    int32_t r = ocl_host->value_rank(ocl_host->node_input(n, 0));
    if (r != 3 && r != 4) {
        *reason = TSR_DECLINE_SHAPE;
        return "only 1-D and 2-D convolutions";
    }
    if (!ocl_input_present(n, 1)) {
        *reason = TSR_DECLINE_OTHER;
        return "needs weights";
    }
    int spatial = r - 2;
    int64_t v[8];
    const char *names[3] = {"strides", "dilations", "kernel_shape"};
    for (int i = 0; i < 3; i++) {
        int len = ocl_attr_ints(n, names[i], v, 8);
        if (len >= 0 && len != spatial) {
            *reason = TSR_DECLINE_ATTRIBUTE;
            return "strides/dilations/kernel_shape length does not match the input";
        }
        for (int k = 0; k < len; k++)
            if (v[k] < 1) {
                *reason = TSR_DECLINE_ATTRIBUTE;
                return "strides/dilations/kernel_shape must be positive";
            }
    }
    int len = ocl_attr_ints(n, "pads", v, 8);
    if (len >= 0 && len != 2 * spatial) {
        *reason = TSR_DECLINE_ATTRIBUTE;
        return "pads length does not match the input";
    }
    for (int k = 0; k < len; k++)
        if (v[k] < 0) {
            *reason = TSR_DECLINE_ATTRIBUTE;
            return "negative pads";
        }
    if (ocl_attr_int(n, "group", 1) < 1) {
        *reason = TSR_DECLINE_ATTRIBUTE;
        return "group must be positive";
    }
    if (!ocl_attr_string_is(n, "auto_pad", "NOTSET", true) && !ocl_attr_string_is(n, "auto_pad", "VALID", false) &&
        !ocl_attr_string_is(n, "auto_pad", "SAME_UPPER", false) &&
        !ocl_attr_string_is(n, "auto_pad", "SAME_LOWER", false)) {
        *reason = TSR_DECLINE_ATTRIBUTE;
        return "unknown auto_pad";
    }
    return NULL;
}

/* Folds y = scale * (conv + b - mean) / sqrt(var + eps) + beta into the
 * weights and bias, once, on the host in double precision. */
static tsr_status *fold_bn(ocl_lin *l, const tsr_node *conv, const tsr_node *bn) {
    const tsr_tensor *w = ocl_host->value_constant(ocl_host->node_input(conv, 1));
    const tsr_tensor *b = ocl_input_present(conv, 2) ? ocl_host->value_constant(ocl_host->node_input(conv, 2)) : NULL;
    const tsr_tensor *p[4];
    for (int i = 0; i < 4; i++) p[i] = ocl_host->value_constant(ocl_host->node_input(bn, (size_t)i + 1));
    if (!w || w->elem_type != TSR_FLOAT || w->rank < 1 || w->memory_kind != TSR_MEMORY_HOST)
        return ocl_error(TSR_ERR_NOT_SUPPORTED, "opencl: conv weights are not a float constant");
    int64_t co = w->dims[0];
    size_t wcount = w->nbytes / sizeof(float);
    if (co <= 0 || wcount % (size_t)co) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "opencl: bad conv weight shape");
    for (int i = 0; i < 4; i++)
        if (!p[i] || p[i]->elem_type != TSR_FLOAT || p[i]->nbytes != (size_t)co * sizeof(float))
            return ocl_error(TSR_ERR_INVALID_ARGUMENT, "opencl: BatchNormalization parameters must be float [%lld]",
                             (long long)co);
    if (b && (b->elem_type != TSR_FLOAT || b->nbytes != (size_t)co * sizeof(float)))
        return ocl_error(TSR_ERR_INVALID_ARGUMENT, "opencl: conv bias must be float [%lld]", (long long)co);
    double eps = ocl_attr_float(bn, "epsilon", 1e-5f);
    size_t per = wcount / (size_t)co;
    float *wf = malloc(w->nbytes ? w->nbytes : 1), *bf = malloc((size_t)co * sizeof(float));
    if (!wf || !bf) {
        free(wf);
        free(bf);
        return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
    }
    const float *scale = p[0]->data, *beta = p[1]->data, *mean = p[2]->data, *var = p[3]->data;
    const float *wd = w->data, *bd = b ? b->data : NULL;
    for (int64_t c = 0; c < co; c++) {
        double f = (double)scale[c] / sqrt((double)var[c] + eps);
        for (size_t k = 0; k < per; k++) wf[(size_t)c * per + k] = (float)((double)wd[(size_t)c * per + k] * f);
        bf[c] = (float)(((bd ? (double)bd[c] : 0.0) - (double)mean[c]) * f + (double)beta[c]);
    }
    cl_int err;
    l->w_folded = clCreateBuffer(l->st->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, w->nbytes, wf, &err);
    if (l->w_folded)
        l->b_folded = clCreateBuffer(l->st->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                     (size_t)co * sizeof(float), bf, &err);
    free(wf);
    free(bf);
    if (!l->w_folded || !l->b_folded) return ocl_cl_error(err, "clCreateBuffer(folded weights)");
    l->co_folded = co;
    return NULL;
}

tsr_status *ocl_conv_prepare(ocl_lin *l, const tsr_node *n, const tsr_node *bn) {
    l->spatial = ocl_host->value_rank(ocl_host->node_input(n, 0)) - 2;
    if (l->spatial < 1 || l->spatial > 2) l->spatial = 2;
    for (int i = 0; i < 2; i++) l->strides[i] = l->dilations[i] = 1, l->kernel[i] = 0;
    for (int i = 0; i < 4; i++) l->pads[i] = 0;
    int64_t v[8];
    int len;
    if ((len = ocl_attr_ints(n, "strides", v, 8)) == l->spatial)
        for (int i = 0; i < len; i++) l->strides[i] = v[i];
    if ((len = ocl_attr_ints(n, "dilations", v, 8)) == l->spatial)
        for (int i = 0; i < len; i++) l->dilations[i] = v[i];
    if ((len = ocl_attr_ints(n, "kernel_shape", v, 8)) == l->spatial) {
        for (int i = 0; i < len; i++) l->kernel[i] = v[i];
        l->has_kernel_shape = true;
    }
    if ((len = ocl_attr_ints(n, "pads", v, 8)) == 2 * l->spatial) {
        /* pads are [begins..., ends...]; stored as [h_begin, w_begin, h_end, w_end] */
        if (l->spatial == 1) {
            l->pads[1] = v[0], l->pads[3] = v[1];
        } else {
            for (int i = 0; i < 4; i++) l->pads[i] = v[i];
        }
    }
    l->group = ocl_attr_int(n, "group", 1);
    l->auto_pad = ocl_attr_string_is(n, "auto_pad", "VALID", false) ? 1
        : ocl_attr_string_is(n, "auto_pad", "SAME_UPPER", false)    ? 2
        : ocl_attr_string_is(n, "auto_pad", "SAME_LOWER", false)    ? 3
                                                                    : 0;
    if (l->spatial == 1) {
        /* a 1-D conv is a 2-D one with H = 1: index 1 is the real axis */
        l->strides[1] = l->strides[0], l->strides[0] = 1;
        l->dilations[1] = l->dilations[0], l->dilations[0] = 1;
        l->kernel[1] = l->kernel[0], l->kernel[0] = 1;
    }
    return bn ? fold_bn(l, n, bn) : NULL;
}

static bool fits_int(int64_t v) { return v >= 0 && v <= INT32_MAX; }

static void set_ints(cl_kernel k, cl_uint first, const int *v, int n, cl_int *err) {
    for (int i = 0; i < n; i++) *err |= clSetKernelArg(k, first + (cl_uint)i, sizeof(int), &v[i]);
}

tsr_status *ocl_conv_run(ocl_exec *x, void *state) {
    ocl_lin *l = state;
    ocl_state *st = ocl_exec_state(x);
    const ocl_tensor *in = ocl_exec_input(x, 0), *w = ocl_exec_input(x, 1), *b = ocl_exec_input(x, 2);
    int sp = l->spatial;
    if (!in || !w || in->rank != sp + 2 || w->rank != sp + 2)
        return ocl_error(TSR_ERR_INVALID_ARGUMENT, "Conv: X and W must have rank %d", sp + 2);
    int64_t N = in->dims[0], C = in->dims[1], H = sp == 2 ? in->dims[2] : 1, W = in->dims[sp + 1];
    int64_t CO = w->dims[0], CG = w->dims[1], KH = sp == 2 ? w->dims[2] : 1, KW = w->dims[sp + 1];
    int64_t G = l->group;
    if (l->has_kernel_shape && (KH != l->kernel[0] || KW != l->kernel[1]))
        return ocl_error(TSR_ERR_INVALID_ARGUMENT, "Conv: kernel_shape does not match W");
    if (C != CG * G || CO % G || CO < G)
        return ocl_error(TSR_ERR_INVALID_ARGUMENT, "Conv: channels %lld, weight channels %lld and group %lld disagree",
                         (long long)C, (long long)CG, (long long)G);
    if (b && (b->rank != 1 || b->dims[0] != CO))
        return ocl_error(TSR_ERR_INVALID_ARGUMENT, "Conv: B must have %lld elements", (long long)CO);
    if (l->w_folded && l->co_folded != CO) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "Conv: weights changed shape");
    int64_t in_sz[2] = {H, W}, k_sz[2] = {KH, KW}, out_sz[2], pb[2], pe[2];
    for (int i = 0; i < 2; i++) {
        int64_t ek = (k_sz[i] - 1) * l->dilations[i] + 1, s = l->strides[i];
        if (l->auto_pad >= 2) {
            out_sz[i] = (in_sz[i] + s - 1) / s;
            int64_t total = (out_sz[i] - 1) * s + ek - in_sz[i];
            if (total < 0) total = 0;
            pb[i] = l->auto_pad == 2 ? total / 2 : total - total / 2;
            pe[i] = total - pb[i];
        } else {
            pb[i] = l->auto_pad == 1 ? 0 : l->pads[i];
            pe[i] = l->auto_pad == 1 ? 0 : l->pads[i + 2];
            int64_t span = in_sz[i] + pb[i] + pe[i] - ek;
            if (span < 0) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "Conv: kernel larger than padded input");
            out_sz[i] = span / s + 1;
        }
    }
    int64_t odims[4] = {N, CO, out_sz[0], out_sz[1]};
    if (sp == 1) odims[2] = out_sz[1];
    ocl_tensor *y;
    tsr_status *s = ocl_exec_output(x, 0, TSR_FLOAT, sp + 2, odims, &y);
    if (s) return s;
    if (!y->count) return NULL;
    int64_t P = out_sz[0] * out_sz[1], KC = CG * KH * KW;
    if (!fits_int((int64_t)in->count) || !fits_int((int64_t)y->count) || !fits_int((int64_t)w->count) ||
        !fits_int(KC * P))
        return ocl_error(TSR_ERR_NOT_SUPPORTED, "Conv: tensors too large");
    cl_mem wm = l->w_folded ? l->w_folded : w->mem;
    cl_mem bm = l->b_folded ? l->b_folded : b ? b->mem : NULL;
    cl_int err = 0;
    if (KC <= DIRECT_MAX_MACS || CO / G < 4) {
        /* on a CPU, one output row per work-item (conv_cpu.cl) */
        cl_kernel k = l->direct_rows ? l->direct_rows : l->direct;
        int has_bias = bm != NULL;
        cl_mem bias_arg = bm ? bm : wm;
        err |= clSetKernelArg(k, 0, sizeof(cl_mem), &in->mem);
        err |= clSetKernelArg(k, 1, sizeof(cl_mem), &wm);
        err |= clSetKernelArg(k, 2, sizeof(cl_mem), &bias_arg);
        err |= clSetKernelArg(k, 3, sizeof(int), &has_bias);
        err |= clSetKernelArg(k, 4, sizeof(cl_mem), &y->mem);
        int args[16] = {(int)N,
                        (int)C,
                        (int)H,
                        (int)W,
                        (int)CO,
                        (int)out_sz[0],
                        (int)out_sz[1],
                        (int)KH,
                        (int)KW,
                        (int)l->strides[0],
                        (int)l->strides[1],
                        (int)pb[0],
                        (int)pb[1],
                        (int)l->dilations[0],
                        (int)l->dilations[1],
                        (int)G};
        set_ints(k, 5, args, 16, &err);
        if (err != CL_SUCCESS) return ocl_cl_error(err, "clSetKernelArg(conv_direct)");
        if (l->direct_rows) return ocl_launch_1d(st, k, (size_t)(N * CO * out_sz[0]), "conv_direct_rows");
        return ocl_launch_1d(st, k, y->count, "conv_direct");
    }
    int64_t M = CO / G;
    ocl_gemm_args g = {0};
    g.M = (int)M, g.N = (int)P, g.K = (int)KC, g.alpha = 1.0f, g.beta = 1.0f;
    g.A = wm, g.a_rs = (int)KC, g.a_cs = 1;
    g.C = y->mem, g.ldc = (int)P;
    g.bias = bm, g.bias_rs = 1, g.bias_cs = 0;
    bool pointwise = KH == 1 && KW == 1 && l->strides[0] == 1 && l->strides[1] == 1 && pb[0] == 0 && pb[1] == 0 &&
        pe[0] == 0 && pe[1] == 0;
    if (pointwise) {
        /* 1x1: the input already is the column matrix; batch over images */
        g.B = in->mem, g.b_rs = (int)P, g.b_cs = 1, g.b_bs = (int)(C * P);
        g.batch = (int)N, g.c_bs = (int)(CO * P);
        for (int64_t gi = 0; gi < G && !s; gi++) {
            g.a_off = (int)(gi * M * KC), g.b_off = (int)(gi * CG * P);
            g.c_off = (int)(gi * M * P), g.bias_off = (int)(gi * M);
            s = ocl_gemm_launch(st, l, &g);
        }
        return s;
    }
    size_t col_bytes = (size_t)(KC * P) * sizeof(float);
    if (col_bytes > MAX_COL_BYTES)
        return ocl_error(TSR_ERR_NOT_SUPPORTED, "Conv: im2col buffer of %zu bytes is too large", col_bytes);
    cl_mem col = clCreateBuffer(st->context, CL_MEM_READ_WRITE, col_bytes, NULL, &err);
    if (!col) return ocl_cl_error(err, "clCreateBuffer(im2col)");
    g.B = col, g.b_rs = (int)P, g.b_cs = 1, g.batch = 1;
    for (int64_t n = 0; n < N && !s; n++) {
        for (int64_t gi = 0; gi < G && !s; gi++) {
            int x_off = (int)((n * C + gi * CG) * H * W);
            cl_kernel k = l->im2col;
            err = clSetKernelArg(k, 0, sizeof(cl_mem), &in->mem);
            int args[14] = {x_off,
                            (int)CG,
                            (int)H,
                            (int)W,
                            (int)KH,
                            (int)KW,
                            (int)out_sz[0],
                            (int)out_sz[1],
                            (int)l->strides[0],
                            (int)l->strides[1],
                            (int)pb[0],
                            (int)pb[1],
                            (int)l->dilations[0],
                            (int)l->dilations[1]};
            set_ints(k, 1, args, 14, &err);
            err |= clSetKernelArg(k, 15, sizeof(cl_mem), &col);
            if (err != CL_SUCCESS) {
                s = ocl_cl_error(err, "clSetKernelArg(im2col)");
                break;
            }
            size_t global[2] = {((size_t)P + 63) / 64 * 64, (size_t)KC};
            size_t local[2] = {64, 1};
            s = ocl_launch(st, k, 2, global, local, "im2col");
            g.a_off = (int)(gi * M * KC);
            g.c_off = (int)((n * CO + gi * M) * P), g.bias_off = (int)(gi * M);
            if (!s) s = ocl_gemm_launch(st, l, &g);
        }
    }
    clReleaseMemObject(col);
    return s;
}
