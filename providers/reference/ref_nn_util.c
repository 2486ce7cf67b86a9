/*
 * Helpers shared by the neural-network kernels (ref_ops_nn.c, ref_nn_*.c):
 * float/double working buffers for the float family of element types, and
 * the GEMM loop that Conv, ConvTranspose, MatMul and Gemm all run on.
 *
 * The kernels compute in float for float, float16 and bfloat16 and in double
 * for double, so a float tensor is used in place and only the 16-bit types
 * pay for a conversion.
 */
#include <stdlib.h>
#include <string.h>

#include "ref.h"

tsr_status *ref_nn_f32_view(ref_ctx *c, const tsr_tensor *t, const float **view, float **owned);
tsr_status *ref_nn_f64_view(ref_ctx *c, const tsr_tensor *t, const double **view,
                            double **owned);
tsr_status *ref_nn_f64_copy(ref_ctx *c, const tsr_tensor *t, double **out);
void ref_nn_f32_store(tsr_tensor *t, const float *src, size_t n);
void ref_nn_f64_store(tsr_tensor *t, const double *src, size_t n);
void ref_nn_sgemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
                  int64_t ldb, float *c, int64_t ldc);
void ref_nn_dgemm(int64_t m, int64_t n, int64_t k, const double *a, int64_t lda,
                  const double *b, int64_t ldb, double *c, int64_t ldc);

/* Reads t as floats: *view points at t's own data when it already holds
 * floats, else at *owned, a converted copy the caller frees. */
tsr_status *ref_nn_f32_view(ref_ctx *c, const tsr_tensor *t, const float **view, float **owned)
{
    *owned = NULL;
    if (t->elem_type == TSR_FLOAT) {
        *view = (const float *)t->data;
        return NULL;
    }
    size_t n = (size_t)ref_numel(t);
    float *buf = malloc((n ? n : 1) * sizeof *buf);
    if (!buf)
        return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory converting an input to float");
    if (t->elem_type == TSR_FLOAT16) {
        const uint16_t *h = t->data;
        for (size_t i = 0; i < n; i++)
            buf[i] = ref_half_to_float(h[i]);
    } else if (t->elem_type == TSR_BFLOAT16) {
        const uint16_t *h = t->data;
        for (size_t i = 0; i < n; i++)
            buf[i] = ref_bf16_to_float(h[i]);
    } else {
        for (size_t i = 0; i < n; i++)
            buf[i] = (float)ref_load(t->elem_type, t->data, i);
    }
    *owned = buf;
    *view = buf;
    return NULL;
}

/* Like ref_nn_f32_view, for double. */
tsr_status *ref_nn_f64_view(ref_ctx *c, const tsr_tensor *t, const double **view,
                            double **owned)
{
    *owned = NULL;
    if (t->elem_type == TSR_DOUBLE) {
        *view = (const double *)t->data;
        return NULL;
    }
    tsr_status *st = ref_nn_f64_copy(c, t, owned);
    *view = *owned;
    return st;
}

/* A double copy of any numeric tensor; the caller frees *out. */
tsr_status *ref_nn_f64_copy(ref_ctx *c, const tsr_tensor *t, double **out)
{
    size_t n = (size_t)ref_numel(t);
    double *buf = malloc((n ? n : 1) * sizeof *buf);
    *out = buf;
    if (!buf)
        return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory converting an input to double");
    /* float and double are most of the traffic; skip ref_load's switch. */
    if (t->elem_type == TSR_FLOAT) {
        const float *f = t->data;
        for (size_t i = 0; i < n; i++)
            buf[i] = f[i];
    } else if (t->elem_type == TSR_DOUBLE) {
        if (n)
            memcpy(buf, t->data, n * sizeof *buf);
    } else {
        for (size_t i = 0; i < n; i++)
            buf[i] = ref_load(t->elem_type, t->data, i);
    }
    return NULL;
}

/* Writes n floats into t, converting to t's element type. */
void ref_nn_f32_store(tsr_tensor *t, const float *src, size_t n)
{
    if (t->elem_type == TSR_FLOAT) {
        if (n && (const void *)src != t->data)
            memcpy(t->data, src, n * sizeof *src);
    } else if (t->elem_type == TSR_FLOAT16) {
        uint16_t *h = t->data;
        for (size_t i = 0; i < n; i++)
            h[i] = ref_float_to_half(src[i]);
    } else if (t->elem_type == TSR_BFLOAT16) {
        uint16_t *h = t->data;
        for (size_t i = 0; i < n; i++)
            h[i] = ref_float_to_bf16(src[i]);
    } else {
        for (size_t i = 0; i < n; i++)
            ref_store(t->elem_type, t->data, i, src[i]);
    }
}

/* Writes n doubles into t, converting to t's element type. */
void ref_nn_f64_store(tsr_tensor *t, const double *src, size_t n)
{
    if (t->elem_type == TSR_DOUBLE) {
        if (n && (const void *)src != t->data)
            memcpy(t->data, src, n * sizeof *src);
    } else if (t->elem_type == TSR_FLOAT) {
        float *f = t->data;
        for (size_t i = 0; i < n; i++)
            f[i] = (float)src[i];
    } else {
        for (size_t i = 0; i < n; i++)
            ref_store(t->elem_type, t->data, i, src[i]);
    }
}

/*
 * C[m x n] += A[m x k] * B[k x n], all row-major with leading dimensions.
 *
 * Loop order i-k-j so the innermost loop runs along contiguous rows of B and
 * C; four rows of B are folded into each pass over a row of C so C is loaded
 * and stored once per four multiply-adds. The fixed 16-wide inner block is
 * what lets gcc -O2 (whose cheap cost model refuses loops that would need a
 * scalar epilogue) vectorise it. Blocking over n and k keeps the slice of B
 * being reused (KC x NC) in L2 while every row of A streams over it.
 */
#define NN_GEMM_KC 128
#define NN_GEMM_NC 1024

#define NN_DEFINE_GEMM(NAME, T)                                                                   \
    void NAME(int64_t m, int64_t n, int64_t k, const T *a, int64_t lda, const T *b, int64_t ldb, \
              T *c, int64_t ldc)                                                                  \
    {                                                                                             \
        for (int64_t j0 = 0; j0 < n; j0 += NN_GEMM_NC) {                                          \
            int64_t nb = n - j0 < NN_GEMM_NC ? n - j0 : NN_GEMM_NC;                               \
            for (int64_t k0 = 0; k0 < k; k0 += NN_GEMM_KC) {                                      \
                int64_t kb = k - k0 < NN_GEMM_KC ? k - k0 : NN_GEMM_KC;                           \
                for (int64_t i = 0; i < m; i++) {                                                 \
                    T *restrict cr = c + i * ldc + j0;                                            \
                    const T *ar = a + i * lda + k0;                                               \
                    int64_t p = 0;                                                                \
                    for (; p + 4 <= kb; p += 4) {                                                 \
                        const T a0 = ar[p], a1 = ar[p + 1], a2 = ar[p + 2], a3 = ar[p + 3];       \
                        const T *restrict b0 = b + (k0 + p) * ldb + j0;                           \
                        const T *restrict b1 = b0 + ldb;                                          \
                        const T *restrict b2 = b1 + ldb;                                          \
                        const T *restrict b3 = b2 + ldb;                                          \
                        int64_t j = 0;                                                            \
                        for (; j + 16 <= nb; j += 16)                                             \
                            for (int t = 0; t < 16; t++)                                          \
                                cr[j + t] += a0 * b0[j + t] + a1 * b1[j + t] + a2 * b2[j + t] +   \
                                             a3 * b3[j + t];                                      \
                        for (; j < nb; j++)                                                       \
                            cr[j] += a0 * b0[j] + a1 * b1[j] + a2 * b2[j] + a3 * b3[j];           \
                    }                                                                             \
                    for (; p < kb; p++) {                                                         \
                        const T a0 = ar[p];                                                       \
                        const T *restrict b0 = b + (k0 + p) * ldb + j0;                           \
                        int64_t j = 0;                                                            \
                        for (; j + 16 <= nb; j += 16)                                             \
                            for (int t = 0; t < 16; t++)                                          \
                                cr[j + t] += a0 * b0[j + t];                                      \
                        for (; j < nb; j++)                                                       \
                            cr[j] += a0 * b0[j];                                                  \
                    }                                                                             \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
    }

NN_DEFINE_GEMM(ref_nn_sgemm, float)
NN_DEFINE_GEMM(ref_nn_dgemm, double)
