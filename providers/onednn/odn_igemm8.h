/* An exact 8-bit integer GEMM on vpmaddubsw for AVX2 CPUs without VNNI
 * (odn_igemm8.c), twice the multiply-adds per multiply uop of the int16
 * kernel (odn_igemm.h) for the weights it takes.
 *
 * vpmaddubsw sums two u8 x s8 products into 16 bits with saturation:
 * a0*d0 + a1*d1 with a <= 255 is exact whenever |d0| + |d1| <= 128. The
 * weights less their zero points, d = B - zb, are split at pack time into
 * D1, every K pair of which keeps that bound (pairs past it are clamped to
 * [-64, 64]), and the residual D2 = d - D1, which is sparse for the weights
 * quantizers write per tensor (a bell-shaped spread scaled to the largest:
 * 0.04% of a quantize_dynamic DistilBERT's weights, none with reduce_range;
 * per-channel ResNet weights, 1.2%, are refused). D1
 * runs on vpmaddubsw + vpmaddwd (by ones) + vpaddd, as ONNX Runtime's
 * kernel does, D2 as a list of (k, column, value) applied per row, and A's
 * zero point as za * sum_k d[k, j] per column, all in wrapping int32: the
 * result is the exact C = (A - za)(B - zb) while K <= ODN_IGEMM_MAX_K.
 * Weights whose residual would be dense (e.g. uint8 weights with zero point
 * 0) are refused at pack time and stay on the int16 kernel. */
#ifndef TESSERA_ODN_IGEMM8_H
#define TESSERA_ODN_IGEMM8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes the packed form of a K x N B takes at most (its residual up to
 * 1/256 of the weights); 0 when the kernel does not run it: no AVX2, K or
 * N not positive, K past ODN_IGEMM_MAX_K, or the size overflows. */
size_t odn_igemm8_packed_bytes(int64_t k, int64_t n);

/* Packs B - zb (B: K x N of uint8 when `is_unsigned`, else int8, element
 * (k, j) at b[k * stride_k + j * stride_n]; zb: zb_count values, 1 or one
 * per column, NULL for 0) into `packed` (odn_igemm8_packed_bytes(k, n)
 * bytes, aligned to 4). False when the residual would pass 1/256 of the
 * weights: then `packed` says so to odn_igemm8_packed_ok and B belongs on
 * the int16 kernel. */
bool odn_igemm8_pack(const void *b, bool is_unsigned, int64_t k, int64_t n, int64_t stride_k, int64_t stride_n,
                     const int32_t *zb, int64_t zb_count, void *packed);

/* Whether odn_igemm8_pack packed B into `packed` (it returned true). */
bool odn_igemm8_packed_ok(const void *packed, int64_t k, int64_t n);

/* Bytes of scratch one thread needs (its copied A block). */
size_t odn_igemm8_scratch_bytes(void);

/* One thread's share of odn_igemm8_run: rows [0, m) and columns [j0, j1)
 * (j0 a multiple of 16, j1 one or N) of C; `scratch`:
 * odn_igemm8_scratch_bytes() bytes. */
void odn_igemm8_block(int64_t m, int64_t n, int64_t k, const void *a, bool a_unsigned, int64_t lda, int32_t za,
                      const void *packed, int64_t j0, int64_t j1, int32_t *c, int64_t ldc, void *scratch);

/* C[i, j] = sum_k (A[i, k] - za) * (B[k, j] - zb[j]) as int32 (C's element
 * (i, j) at c[i * ldc + j]); A: m x k of uint8 when `a_unsigned`, else
 * int8, row stride lda; on up to scratch_threads of the caller's OpenMP
 * threads, `scratch` holding scratch_threads * odn_igemm8_scratch_bytes(). */
void odn_igemm8_run(int64_t m, int64_t n, int64_t k, const void *a, bool a_unsigned, int64_t lda, int32_t za,
                    const void *packed, int32_t *c, int64_t ldc, void *scratch, int scratch_threads);

#endif
