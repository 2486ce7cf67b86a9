/* Gemm, MatMul and Conv, each optionally with a folded BatchNormalization
 * (Conv only) and elementwise epilogues compiled into the same kernel. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl_fuse.h"
#include "ocl_linalg.h"

#define GEMM_TS 16

void ocl_lin_free(void *p) {
    ocl_lin *l = p;
    if (!l) return;
    if (l->gemm) clReleaseKernel(l->gemm);
    if (l->gemm_big) clReleaseKernel(l->gemm_big);
    if (l->gemm_cpu_n) clReleaseKernel(l->gemm_cpu_n);
    if (l->gemm_cpu_t) clReleaseKernel(l->gemm_cpu_t);
    if (l->direct_rows) clReleaseKernel(l->direct_rows);
    if (l->im2col) clReleaseKernel(l->im2col);
    if (l->direct) clReleaseKernel(l->direct);
    if (l->w_folded) clReleaseMemObject(l->w_folded);
    if (l->b_folded) clReleaseMemObject(l->b_folded);
    free(l);
}

static size_t round_up(size_t v, size_t m) { return (v + m - 1) / m * m; }

tsr_status *ocl_gemm_launch(ocl_state *st, const ocl_lin *l, const ocl_gemm_args *a) {
    if (a->M <= 0 || a->N <= 0 || a->batch <= 0) return NULL;
    /* On a CPU: a barrier-free kernel when B's rows (or A's rows and B's
     * columns) are contiguous. */
    bool cpu_n = l->gemm_cpu_n && a->b_cs == 1;
    bool cpu_t = !cpu_n && l->gemm_cpu_t && a->a_cs == 1 && a->b_rs == 1;
    /* the register-tiled kernel wastes most of a 64x64 block on thin products */
    bool big = a->M >= 48 && a->N >= 48;
    cl_kernel k = cpu_n ? l->gemm_cpu_n : cpu_t ? l->gemm_cpu_t : big ? l->gemm_big : l->gemm;
    cl_int e = 0;
    cl_uint i = 0;
    float beta = a->bias ? a->beta : 0.0f;
    cl_mem bias = a->bias ? a->bias : a->C;
    e |= clSetKernelArg(k, i++, sizeof(int), &a->M);
    e |= clSetKernelArg(k, i++, sizeof(int), &a->N);
    e |= clSetKernelArg(k, i++, sizeof(int), &a->K);
    e |= clSetKernelArg(k, i++, sizeof(cl_mem), &a->A);
    e |= clSetKernelArg(k, i++, sizeof(int), &a->a_off);
    e |= clSetKernelArg(k, i++, sizeof(int), &a->a_rs);
    e |= clSetKernelArg(k, i++, sizeof(int), &a->a_cs);
    e |= clSetKernelArg(k, i++, sizeof(int), &a->a_bs);
    e |= clSetKernelArg(k, i++, sizeof(cl_mem), &a->B);
    e |= clSetKernelArg(k, i++, sizeof(int), &a->b_off);
    e |= clSetKernelArg(k, i++, sizeof(int), &a->b_rs);
    e |= clSetKernelArg(k, i++, sizeof(int), &a->b_cs);
    e |= clSetKernelArg(k, i++, sizeof(int), &a->b_bs);
    e |= clSetKernelArg(k, i++, sizeof(cl_mem), &a->C);
    e |= clSetKernelArg(k, i++, sizeof(int), &a->c_off);
    e |= clSetKernelArg(k, i++, sizeof(int), &a->ldc);
    e |= clSetKernelArg(k, i++, sizeof(int), &a->c_bs);
    e |= clSetKernelArg(k, i++, sizeof(cl_mem), &bias);
    e |= clSetKernelArg(k, i++, sizeof(int), &a->bias_off);
    e |= clSetKernelArg(k, i++, sizeof(int), &a->bias_rs);
    e |= clSetKernelArg(k, i++, sizeof(int), &a->bias_cs);
    e |= clSetKernelArg(k, i++, sizeof(float), &a->alpha);
    e |= clSetKernelArg(k, i++, sizeof(float), &beta);
    if (e != CL_SUCCESS) return ocl_cl_error(e, "clSetKernelArg(gemm)");
    if (cpu_n) {
        /* 16 columns x 8 rows per work-item; the driver picks groups */
        size_t global[3] = {((size_t)a->N + 15) / 16, ((size_t)a->M + 7) / 8, (size_t)a->batch};
        return ocl_launch(st, k, 3, global, NULL, "gemm_cpu_n");
    }
    if (cpu_t) {
        /* 4 x 4 dot products per work-item */
        size_t global[3] = {((size_t)a->N + 3) / 4, ((size_t)a->M + 3) / 4, (size_t)a->batch};
        return ocl_launch(st, k, 3, global, NULL, "gemm_cpu_t");
    }
    size_t local[3] = {GEMM_TS, GEMM_TS, 1};
    if (big) {
        size_t global[3] = {round_up((size_t)a->N, 64) / 4, round_up((size_t)a->M, 64) / 4, (size_t)a->batch};
        return ocl_launch(st, k, 3, global, local, "gemm_reg");
    }
    size_t global[3] = {round_up((size_t)a->N, GEMM_TS), round_up((size_t)a->M, GEMM_TS), (size_t)a->batch};
    return ocl_launch(st, k, 3, global, local, "gemm_tiled");
}

/* "#define EPILOGUE(v) ..." for the epilogue nodes, applied in order. */
static tsr_status *epilogue_define(const tsr_node *const *epi, size_t n, char *buf, size_t size) {
    char expr[2048] = "(v)", next[2048];
    for (size_t i = 0; i < n; i++) {
        if (!ocl_ew_epilogue_expr(epi[i], expr, next, sizeof next))
            return ocl_error(TSR_ERR_NOT_SUPPORTED, "opencl: cannot fuse node '%s'", ocl_host->node_name(epi[i]));
        int len = snprintf(expr, sizeof expr, "(%s)", next);
        if (len < 0 || (size_t)len >= sizeof expr) return ocl_error(TSR_ERR_NOT_SUPPORTED, "opencl: epilogue too long");
    }
    int len = snprintf(buf, size, "#define EPILOGUE(v) %s\n", expr);
    if (len < 0 || (size_t)len >= size) return ocl_error(TSR_ERR_NOT_SUPPORTED, "opencl: epilogue too long");
    return NULL;
}

static tsr_status *build_kernels(ocl_lin *l, const char *define) {
    /* elementwise.cl first: a fused epilogue calls its helpers (ew_leaky,
     * ew_hardsigmoid, ...) */
    const char *names[5] = {"elementwise", "gemm", "conv", "gemm_cpu", "conv_cpu"};
    bool cpu = l->st->cpu_kernels && l->st->devices[l->st->active].kind == TSR_DEVICE_CPU;
    cl_program prog;
    tsr_status *s = ocl_program_get(l->st, define, names, cpu ? 5 : 3, NULL, "", &prog);
    if (!s) s = ocl_kernel_from(l->st, prog, "gemm_tiled", &l->gemm);
    if (!s) s = ocl_kernel_from(l->st, prog, "gemm_reg", &l->gemm_big);
    if (!s && cpu) s = ocl_kernel_from(l->st, prog, "gemm_cpu_n", &l->gemm_cpu_n);
    if (!s && cpu) s = ocl_kernel_from(l->st, prog, "gemm_cpu_t", &l->gemm_cpu_t);
    if (!s && l->kind == OCL_LIN_CONV) s = ocl_kernel_from(l->st, prog, "im2col", &l->im2col);
    if (!s && l->kind == OCL_LIN_CONV) s = ocl_kernel_from(l->st, prog, "conv_direct", &l->direct);
    if (!s && cpu && l->kind == OCL_LIN_CONV) s = ocl_kernel_from(l->st, prog, "conv_direct_rows", &l->direct_rows);
    return s;
}

static const ocl_op *op_for(int kind);

tsr_status *ocl_anchor_step(ocl_state *st, const tsr_node *anchor, const tsr_node *bn, const tsr_node *bias_add,
                            const tsr_node *const *epi, size_t n_epi, ocl_step *step) {
    const char *op = ocl_host->node_op_type(anchor);
    int kind = !strcmp(op, "Conv") ? OCL_LIN_CONV : !strcmp(op, "Gemm") ? OCL_LIN_GEMM : OCL_LIN_MATMUL;
    ocl_lin *l = calloc(1, sizeof *l);
    size_t ni = ocl_host->node_input_count(anchor);
    step->in_names = calloc(ni + 2, sizeof *step->in_names);
    step->out_names = calloc(2, sizeof *step->out_names);
    if (!l || !step->in_names || !step->out_names) {
        free(l);
        return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
    }
    l->st = st;
    l->kind = kind;
    step->op = op_for(kind);
    step->op_state = l;
    step->node = anchor;
    step->n_in = ni;
    for (size_t i = 0; i < ni; i++) {
        const tsr_value_info *v = ocl_host->node_input(anchor, i);
        step->in_names[i] = v ? ocl_host->value_name(v) : NULL;
    }
    l->bias_input = -1;
    if (bias_add) {
        /* the Add's other input: the bias, read as an extra step input */
        const char *mm_out = ocl_host->value_name(ocl_host->node_output(anchor, 0));
        const tsr_value_info *b = ocl_host->node_input(bias_add, 0);
        if (!strcmp(ocl_host->value_name(b), mm_out)) b = ocl_host->node_input(bias_add, 1);
        step->in_names[ni] = ocl_host->value_name(b);
        l->bias_input = (int)ni;
        step->n_in = ni + 1;
    }
    const tsr_node *last = n_epi ? epi[n_epi - 1] : bn ? bn : bias_add ? bias_add : anchor;
    step->n_out = 1;
    step->out_names[0] = ocl_host->value_name(ocl_host->node_output(last, 0));
    char define[2300];
    tsr_status *s = epilogue_define(epi, n_epi, define, sizeof define);
    if (!s) s = kind == OCL_LIN_CONV ? ocl_conv_prepare(l, anchor, bn) : ocl_gemm_prepare(l, anchor);
    if (!s) s = build_kernels(l, define);
    return s; /* on failure the step (and l) is freed by the caller */
}

static tsr_status *plain_prepare(ocl_state *st, const tsr_node *n, void **out) {
    ocl_step tmp;
    memset(&tmp, 0, sizeof tmp);
    tsr_status *s = ocl_anchor_step(st, n, NULL, NULL, NULL, 0, &tmp);
    free(tmp.in_names);
    free(tmp.out_names);
    if (s) {
        ocl_lin_free(tmp.op_state);
        return s;
    }
    *out = tmp.op_state;
    return NULL;
}

const ocl_op ocl_ops_linalg[] = {
    {"Gemm", ocl_gemm_check, plain_prepare, ocl_gemm_run, ocl_lin_free},
    {"MatMul", ocl_matmul_check, plain_prepare, ocl_matmul_run, ocl_lin_free},
    {"Conv", ocl_conv_check, plain_prepare, ocl_conv_run, ocl_lin_free},
    {NULL, NULL, NULL, NULL, NULL},
};

static const ocl_op *op_for(int kind) {
    return &ocl_ops_linalg[kind == OCL_LIN_GEMM ? 0 : kind == OCL_LIN_MATMUL ? 1 : 2];
}
