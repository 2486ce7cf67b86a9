/*
 * The neural-network family of the reference provider: its table is in
 * ref_ops_nn.c, its kernels (ref_nn_<op>) and claim-time checks in
 * ref_nn_*.c, one file per group of ops, and what they share in
 * ref_nn_util.c. One header, so a kernel's prototype is written once and
 * the compiler checks the table and the definition against it.
 */
#ifndef TESSERA_REF_NN_H
#define TESSERA_REF_NN_H

#include <stddef.h>
#include <stdint.h>

#include "ref.h"

/* --- shared helpers (ref_nn_util.c) -------------------------------------- */
/* Reads t as floats: *view points at t's own data when it already holds
 * floats, else at *owned, a converted copy the caller frees. */
tsr_status *ref_nn_f32_view(ref_ctx *c, const tsr_tensor *t, const float **view, float **owned);
/* Like ref_nn_f32_view, for double. */
tsr_status *ref_nn_f64_view(ref_ctx *c, const tsr_tensor *t, const double **view, double **owned);
/* Writes n floats (doubles) into t, converting to t's element type. */
void ref_nn_f32_store(tsr_tensor *t, const float *src, size_t n);
void ref_nn_f64_store(tsr_tensor *t, const double *src, size_t n);
/* Elements [off, off + n) of a numeric tensor as doubles (and back with
 * ref_put_f64, ref.h), converting: slice-by-slice kernels keep their
 * working set in cache. */
void ref_nn_get_f64(const tsr_tensor *t, size_t off, size_t n, double *dst);
/* Indices i in [0, n) with i*step + off inside [0, lim) form [lo, hi): the
 * output positions a convolution's kernel tap reaches (step: the stride),
 * or the taps of a pooling window that land on the input (step: the
 * dilation). Inline: both call it in their innermost loops. */
static inline void ref_nn_inside_range(int64_t n, int64_t step, int64_t off, int64_t lim, int64_t *lo, int64_t *hi) {
    int64_t l = off >= 0 ? 0 : (-off + step - 1) / step;
    int64_t h = lim - off > 0 ? (lim - off + step - 1) / step : 0;
    if (l > n) l = n;
    if (h > n) h = n;
    if (h < l) h = l;
    *lo = l;
    *hi = h;
}
/* C += A B, row-major, on the run's threads, looking at the stop flag
 * between bands of rows. */
tsr_status *ref_nn_sgemm_run(ref_ctx *ctx, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
                             int64_t ldb, float *c, int64_t ldc);
tsr_status *ref_nn_dgemm_run(ref_ctx *ctx, int64_t m, int64_t n, int64_t k, const double *a, int64_t lda,
                             const double *b, int64_t ldb, double *c, int64_t ldc);
/* C += A B with float A and B and a double C: sums that go on past the
 * GEMM (ConvTranspose's overlapping columns) before their one rounding. */
tsr_status *ref_nn_sgemm_run_d(ref_ctx *ctx, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                               const float *b, int64_t ldb, double *c, int64_t ldc);

/* The float GEMM under ref_nn_sgemm_run (ref_nn_wide.c): float operands,
 * double sums, each C element rounded once. */
void ref_nn_sgemm_wide(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb,
                       float *c, int64_t ldc);
void ref_nn_sgemm_wide_d(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb,
                         double *c, int64_t ldc);

/* The GEMM loops run over k in blocks of KC, so a block of B stays in cache
 * (ref_nn_util.c, ref_nn_wide.c). */
#define NN_GEMM_KC 256

/* On x86-64 gcc also builds the GEMM kernels for AVX2 and AVX-512 and picks
 * one when the library loads (an ifunc): the same code, twice the width of
 * the SSE2 baseline. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define NN_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define NN_CLONES
#endif

/* --- kernels and checks --------------------------------------------------- */
/* ref_nn_conv.c */
tsr_status *ref_nn_conv(ref_ctx *c);
tsr_status *ref_nn_conv_transpose(ref_ctx *c);
int ref_nn_check_conv(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size);

/* ref_nn_gemm.c */
tsr_status *ref_nn_matmul(ref_ctx *c);
tsr_status *ref_nn_gemm(ref_ctx *c);
tsr_status *ref_nn_dropout(ref_ctx *c);
int ref_nn_check_matmul(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size);

/* ref_nn_norm.c */
tsr_status *ref_nn_batchnorm(ref_ctx *c);
tsr_status *ref_nn_layernorm(ref_ctx *c);
tsr_status *ref_nn_instancenorm(ref_ctx *c);
tsr_status *ref_nn_groupnorm(ref_ctx *c);
tsr_status *ref_nn_lrn(ref_ctx *c);

/* ref_nn_pool.c */
tsr_status *ref_nn_maxpool(ref_ctx *c);
tsr_status *ref_nn_avgpool(ref_ctx *c);
tsr_status *ref_nn_lppool(ref_ctx *c);
tsr_status *ref_nn_global_maxpool(ref_ctx *c);
tsr_status *ref_nn_global_avgpool(ref_ctx *c);
tsr_status *ref_nn_global_lppool(ref_ctx *c);
int ref_nn_check_pool(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size);

/* ref_nn_resize.c */
tsr_status *ref_nn_resize(ref_ctx *c);
tsr_status *ref_nn_upsample(ref_ctx *c);
int ref_nn_check_numeric(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size);

#endif
