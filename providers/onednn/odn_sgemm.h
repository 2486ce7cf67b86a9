/* A float32 GEMM with the weights packed once (odn_sgemm.c), for CPUs where
 * oneDNN 2.6's matmul has only its `gemm:jit` kernel (AVX2 without
 * AVX-512): that kernel repacks the weights on every call, which costs a
 * third of a BERT-sized feed-forward layer whose weights exceed the caches.
 * Only this header and odn_sgemm.c know the packed layout. */
#ifndef TESSERA_ODN_SGEMM_H
#define TESSERA_ODN_SGEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether this CPU runs the packed kernel (AVX2 and FMA). */
bool odn_sgemm_supported(void);

/* Floats the packed form of a K x N matrix takes (N rounded up to the
 * kernel's column block); 0 when that overflows. */
size_t odn_sgemm_packed_floats(int64_t k, int64_t n);

/* Packs B (K x N, element (k, j) at b[k * stride_k + j * stride_n]) into
 * `packed` (odn_sgemm_packed_floats(k, n) floats). */
void odn_sgemm_pack(const float *b, int64_t k, int64_t n, int64_t stride_k, int64_t stride_n, float *packed);

/* Floats of scratch odn_sgemm_run needs for `threads` threads. */
size_t odn_sgemm_scratch_floats(int threads);

/* C[i, j] = sum_k A[i, k] * B[k, j] (+ bias[j] when bias is not NULL) for
 * M x N C with row stride ldc, M x K A with row stride lda (unit column
 * stride), B packed by odn_sgemm_pack. Runs on up to scratch_threads of
 * the caller's OpenMP threads; `scratch` holds
 * odn_sgemm_scratch_floats(scratch_threads) floats. */
void odn_sgemm_run(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *packed, const float *bias,
                   float *c, int64_t ldc, float *scratch, int scratch_threads);

#endif
