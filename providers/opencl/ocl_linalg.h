/* Shared by the Gemm/MatMul and Conv launchers. */
#ifndef OCL_LINALG_H
#define OCL_LINALG_H

#include "ocl_op.h"

enum { OCL_LIN_GEMM, OCL_LIN_MATMUL, OCL_LIN_CONV };

typedef struct ocl_lin {
    ocl_state *st;
    int kind;
    cl_kernel gemm, gemm_big, im2col, direct;
    /* CPU devices only (gemm_cpu.cl, conv_cpu.cl); NULL elsewhere */
    cl_kernel gemm_cpu_n, gemm_cpu_t, direct_rows;
    /* Gemm */
    int trans_a, trans_b;
    float alpha, beta;
    /* Conv */
    int spatial; /* 1 or 2 */
    int64_t kernel[2], strides[2], dilations[2], pads[4], group;
    int auto_pad; /* 0 NOTSET, 1 VALID, 2 SAME_UPPER, 3 SAME_LOWER */
    bool has_kernel_shape;
    /* MatMul: step input holding a bias along the last axis, or -1 */
    int bias_input;
    /* BatchNormalization folded into these (NULL: use the node's inputs) */
    cl_mem w_folded, b_folded;
    int64_t co_folded;
} ocl_lin;

typedef struct ocl_gemm_args {
    int M, N, K, batch;
    cl_mem A;
    int a_off, a_rs, a_cs, a_bs;
    cl_mem B;
    int b_off, b_rs, b_cs, b_bs;
    cl_mem C;
    int c_off, ldc, c_bs;
    cl_mem bias; /* NULL: none */
    int bias_off, bias_rs, bias_cs;
    float alpha, beta;
} ocl_gemm_args;

/* Picks the tiled or register-tiled kernel by size and enqueues it. */
tsr_status *ocl_gemm_launch(ocl_state *st, const ocl_lin *l, const ocl_gemm_args *a);
void ocl_lin_free(void *p);

const char *ocl_gemm_check(const tsr_node *n, int32_t *reason, char *buf, size_t size);
const char *ocl_matmul_check(const tsr_node *n, int32_t *reason, char *buf, size_t size);
const char *ocl_conv_check(const tsr_node *n, int32_t *reason, char *buf, size_t size);
tsr_status *ocl_gemm_prepare(ocl_lin *l, const tsr_node *n);
tsr_status *ocl_conv_prepare(ocl_lin *l, const tsr_node *n, const tsr_node *bn);
tsr_status *ocl_gemm_run(ocl_exec *x, void *state);
tsr_status *ocl_matmul_run(ocl_exec *x, void *state);
tsr_status *ocl_conv_run(ocl_exec *x, void *state);

#endif
