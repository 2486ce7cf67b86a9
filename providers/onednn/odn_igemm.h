/* An exact 8-bit integer GEMM for AVX2 CPUs without VNNI (odn_igemm.c).
 * oneDNN's int8 kernels there multiply with vpmaddubsw, whose 16-bit pair
 * sums saturate for full-range weights; here both operands, less their
 * zero points, are widened to int16 (|v| <= 255) and multiplied with
 * vpmaddwd, whose pair sums |a0*b0 + a1*b1| <= 2 * 255 * 255 fit int32:
 * C = (A - za)(B - zb) is exact while K * 65025 < 2^31. Only this header
 * and odn_igemm.c know the packed layout. */
#ifndef TESSERA_ODN_IGEMM_H
#define TESSERA_ODN_IGEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether this CPU runs the kernel (AVX2). */
bool odn_igemm_supported(void);

/* The deepest K whose int32 sums cannot overflow (255 * 255 per product). */
#define ODN_IGEMM_MAX_K ((int64_t)(INT32_MAX / (255 * 255)))

/* int16 elements the packed form of a K x N matrix takes; 0 when K or N
 * is not positive, K exceeds ODN_IGEMM_MAX_K or the size overflows. */
size_t odn_igemm_packed_count(int64_t k, int64_t n);

/* Packs B - zb (B: K x N of uint8 when `is_unsigned`, else int8; element
 * (k, j) at b[k * stride_k + j * stride_n]; zb: zb_count values, 1 or one
 * per column, NULL for 0) into `packed` (odn_igemm_packed_count(k, n)). */
void odn_igemm_pack(const void *b, bool is_unsigned, int64_t k, int64_t n, int64_t stride_k, int64_t stride_n,
                    const int32_t *zb, int64_t zb_count, int16_t *packed);

/* Bytes of scratch one thread needs (its widened A block). */
size_t odn_igemm_scratch_bytes(void);

/* One thread's share: C[i, j] = sum_k (A[i, k] - za) * (Bp[k, j]) as int32
 * for rows [0, m) and columns [j0, j1) (j0 a multiple of 16; C's element
 * (i, j) at c[i * ldc + j]); A: m x k of uint8 when `a_unsigned`, else int8,
 * row stride lda; `scratch`: odn_igemm_scratch_bytes() bytes. */
void odn_igemm_block(int64_t m, int64_t n, int64_t k, const void *a, bool a_unsigned, int64_t lda, int32_t za,
                     const int16_t *packed, int64_t j0, int64_t j1, int32_t *c, int64_t ldc, void *scratch);

/* The whole product on up to scratch_threads of the caller's OpenMP
 * threads (dynamic chunks of rows or columns); `scratch` holds
 * scratch_threads * odn_igemm_scratch_bytes() bytes. */
void odn_igemm_run(int64_t m, int64_t n, int64_t k, const void *a, bool a_unsigned, int64_t lda, int32_t za,
                   const int16_t *packed, int32_t *c, int64_t ldc, void *scratch, int scratch_threads);

#endif
