/*
 * The float GEMM the kernels run (MatMul, Gemm, Conv, ConvTranspose):
 * C[m x n] += A[m x k] * B[k x n], float operands, double sums.
 *
 * A product of two floats is exact in double and a sum of k of them loses
 * next to nothing, so each C element is its initial value plus the exact
 * dot product, rounded once to float — where a float accumulator rounds
 * twice per term (ONNX Runtime's MLAS, with FMA, once). About half the
 * speed of a float-accumulating loop; the reference kernels are the
 * yardstick, so precision comes first (docs/conformance.md, "Precision").
 *
 * The register-blocked kernels are those of ref_nn_util.c's GEMM with
 * double accumulators (4 x 8 elements of C, a step of k each turn). Up to
 * k = KC one pass of them adds each sum straight to C. Past KC, C is made
 * in tiles of NN_TM x NN_TN whose sums build up in a double scratch over
 * all the KC blocks and meet C once at the end: rounding C after each
 * block instead rounds k / KC times (12 times in a 3072-wide layer).
 */
#include <string.h>

#include "ref_nn.h"

typedef float nn_wf32 __attribute__((vector_size(16)));
typedef double nn_wf64 __attribute__((vector_size(32)));
enum { NN_WL = 4, NN_WW = 8 };    /* doubles per vector; columns per strip */
enum { NN_TM = 32, NN_TN = 128 }; /* a tile of C for k > KC: 32 KiB of doubles */

/* Loads 4 floats as doubles; adds 4 double sums to 4 floats (rounding
 * there) or to 4 doubles. Macros: passing vectors to functions would tie
 * the baseline build to an AVX calling convention. */
#define NN_WLD(v, p)                                                                                                   \
    do {                                                                                                               \
        nn_wf32 f_;                                                                                                    \
        memcpy(&f_, (p), sizeof f_);                                                                                   \
        (v) = __builtin_convertvector(f_, nn_wf64);                                                                    \
    } while (0)
#define NN_WADD_float(p, acc)                                                                                          \
    do {                                                                                                               \
        nn_wf64 d_;                                                                                                    \
        NN_WLD(d_, p);                                                                                                 \
        d_ += (acc);                                                                                                   \
        nn_wf32 f_ = __builtin_convertvector(d_, nn_wf32);                                                             \
        memcpy((p), &f_, sizeof f_);                                                                                   \
    } while (0)
#define NN_WADD_double(p, acc)                                                                                         \
    do {                                                                                                               \
        nn_wf64 d_;                                                                                                    \
        memcpy(&d_, (p), sizeof d_);                                                                                   \
        d_ += (acc);                                                                                                   \
        memcpy((p), &d_, sizeof d_);                                                                                   \
    } while (0)

/* nn_wgemm_4xw_T, nn_wgemm_1xw_T: C (of type T) += the sums of kb steps
 * for 4 rows (1 row) by NN_WW columns. */
#define NN_DEFINE_WIDE(T)                                                                                              \
    NN_CLONES static void nn_wgemm_4xw_##T(int64_t kb, const float *restrict a, int64_t lda, const float *restrict b,  \
                                           int64_t ldb, T *restrict c, int64_t ldc) {                                  \
        nn_wf64 z = {0};                                                                                               \
        nn_wf64 c00 = z, c01 = z, c10 = z, c11 = z, c20 = z, c21 = z, c30 = z, c31 = z;                                \
        for (int64_t p = 0; p < kb; p++) {                                                                             \
            const float *bp = b + p * ldb;                                                                             \
            nn_wf64 b0, b1;                                                                                            \
            NN_WLD(b0, bp);                                                                                            \
            NN_WLD(b1, bp + NN_WL);                                                                                    \
            nn_wf64 a0 = z + (double)a[p], a1 = z + (double)a[lda + p];                                                \
            nn_wf64 a2 = z + (double)a[2 * lda + p], a3 = z + (double)a[3 * lda + p];                                  \
            c00 += a0 * b0;                                                                                            \
            c01 += a0 * b1;                                                                                            \
            c10 += a1 * b0;                                                                                            \
            c11 += a1 * b1;                                                                                            \
            c20 += a2 * b0;                                                                                            \
            c21 += a2 * b1;                                                                                            \
            c30 += a3 * b0;                                                                                            \
            c31 += a3 * b1;                                                                                            \
        }                                                                                                              \
        T *r0 = c, *r1 = c + ldc, *r2 = c + 2 * ldc, *r3 = c + 3 * ldc;                                                \
        NN_WADD_##T(r0, c00);                                                                                          \
        NN_WADD_##T(r0 + NN_WL, c01);                                                                                  \
        NN_WADD_##T(r1, c10);                                                                                          \
        NN_WADD_##T(r1 + NN_WL, c11);                                                                                  \
        NN_WADD_##T(r2, c20);                                                                                          \
        NN_WADD_##T(r2 + NN_WL, c21);                                                                                  \
        NN_WADD_##T(r3, c30);                                                                                          \
        NN_WADD_##T(r3 + NN_WL, c31);                                                                                  \
    }                                                                                                                  \
    NN_CLONES static void nn_wgemm_1xw_##T(int64_t kb, const float *restrict a, const float *restrict b, int64_t ldb,  \
                                           T *restrict c) {                                                            \
        nn_wf64 z = {0};                                                                                               \
        nn_wf64 c00 = z, c01 = z;                                                                                      \
        for (int64_t p = 0; p < kb; p++) {                                                                             \
            const float *bp = b + p * ldb;                                                                             \
            nn_wf64 b0, b1;                                                                                            \
            NN_WLD(b0, bp);                                                                                            \
            NN_WLD(b1, bp + NN_WL);                                                                                    \
            nn_wf64 a0 = z + (double)a[p];                                                                             \
            c00 += a0 * b0;                                                                                            \
            c01 += a0 * b1;                                                                                            \
        }                                                                                                              \
        NN_WADD_##T(c, c00);                                                                                           \
        NN_WADD_##T(c + NN_WL, c01);                                                                                   \
    }                                                                                                                  \
    /* One block of k (kb <= KC) of an m x n block of C. */                                                            \
    static void nn_wblock_##T(int64_t m, int64_t n, int64_t kb, const float *a, int64_t lda, const float *b,           \
                              int64_t ldb, T *c, int64_t ldc) {                                                        \
        int64_t nw = n - n % NN_WW;                                                                                    \
        for (int64_t j = 0; j < nw; j += NN_WW) {                                                                      \
            int64_t i = 0;                                                                                             \
            for (; i + 4 <= m; i += 4) nn_wgemm_4xw_##T(kb, a + i * lda, lda, b + j, ldb, c + i * ldc + j, ldc);       \
            for (; i < m; i++) nn_wgemm_1xw_##T(kb, a + i * lda, b + j, ldb, c + i * ldc + j);                         \
        }                                                                                                              \
        /* The last n % W columns, plainly: the same sums in the same order. */                                        \
        for (int64_t i = 0; i < m && nw < n; i++)                                                                      \
            for (int64_t j = nw; j < n; j++) {                                                                         \
                double sum = 0;                                                                                        \
                for (int64_t p = 0; p < kb; p++) sum += (double)a[i * lda + p] * b[p * ldb + j];                       \
                c[i * ldc + j] = (T)(c[i * ldc + j] + sum);                                                            \
            }                                                                                                          \
    }

NN_DEFINE_WIDE(float)
NN_DEFINE_WIDE(double)

void ref_nn_sgemm_wide(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb,
                       float *c, int64_t ldc) {
    if (k <= NN_GEMM_KC) {
        nn_wblock_float(m, n, k, a, lda, b, ldb, c, ldc);
        return;
    }
    double acc[NN_TM * NN_TN];
    for (int64_t i0 = 0; i0 < m; i0 += NN_TM) {
        int64_t mb = m - i0 < NN_TM ? m - i0 : NN_TM;
        for (int64_t j0 = 0; j0 < n; j0 += NN_TN) {
            int64_t nb = n - j0 < NN_TN ? n - j0 : NN_TN;
            for (int64_t i = 0; i < mb; i++) memset(acc + i * NN_TN, 0, (size_t)nb * sizeof *acc);
            for (int64_t k0 = 0; k0 < k; k0 += NN_GEMM_KC) {
                int64_t kb = k - k0 < NN_GEMM_KC ? k - k0 : NN_GEMM_KC;
                nn_wblock_double(mb, nb, kb, a + i0 * lda + k0, lda, b + k0 * ldb + j0, ldb, acc, NN_TN);
            }
            for (int64_t i = 0; i < mb; i++) {
                float *cr = c + (i0 + i) * ldc + j0;
                const double *ar = acc + i * NN_TN;
                for (int64_t j = 0; j < nb; j++) cr[j] = (float)(cr[j] + ar[j]);
            }
        }
    }
}

/* The same sums added to a double C, unrounded (ref_nn_sgemm_run_d). */
void ref_nn_sgemm_wide_d(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb,
                         double *c, int64_t ldc) {
    for (int64_t k0 = 0; k0 < k; k0 += NN_GEMM_KC) {
        int64_t kb = k - k0 < NN_GEMM_KC ? k - k0 : NN_GEMM_KC;
        nn_wblock_double(m, n, kb, a + k0, lda, b + k0 * ldb, ldb, c, ldc);
    }
}
