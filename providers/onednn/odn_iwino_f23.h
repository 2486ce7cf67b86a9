/* An exact integer Winograd F(2x2, 3x3) convolution for AVX2 CPUs without
 * VNNI (odn_iwino_f23.c), for quantized (QDQ / ConvInteger) 3x3 stride-1
 * convolutions with 8-bit activations and weights. odn_igemm's int16 GEMM
 * needs 9 multiply-adds per output and input channel; F(2x2, 3x3) needs 4
 * (16 per 2x2 tile), and unlike a float Winograd it is exact: with G' = 2G
 * every transform is an integer matrix, so y is computed exactly, as ONNX
 * defines it (int32 sums, no saturation), whatever the weights' range.
 *
 * Why exact: d = x - zx and g = w - zw are in [-255, 255] (zero points in
 * their type's range). V = B^T d B has |V| <= 4 * 255 = 1020, U' = G' g G'^T
 * = 4U has |U'| <= 9 * 255 = 2295: both int16, and vpmaddwd's pair sums
 * (<= 2 * 1020 * 2295) fit int32. The C-deep sums M = sum U' V and the
 * output transform A^T M A's sums of up to 9 of them are additions in
 * wrapping int32 (a ring), so the result is 4y modulo 2^32, which is 4y
 * itself while |4y| < 2^31, a multiple of 4 so y = (4y) >> 2 exactly.
 * |y| <= 9 * C * 255 * 255, so that holds for every input while
 * C <= ODN_IWINO_MAX_C (917); deeper convolutions are refused. Only this
 * header and odn_iwino_f23.c know the packed weights' layout. */
#ifndef TESSERA_ODN_IWINO_F23_H
#define TESSERA_ODN_IWINO_F23_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The deepest C for which 4 * 9 * C * 255 * 255 < 2^31 (see above). */
#define ODN_IWINO_MAX_C ((int64_t)(INT32_MAX / (4 * 9 * 255 * 255)))

/* x: NHWC [n][h][w][c], contiguous (row stride c); y: int32 NHWC
 * [n][oh][ow][m], contiguous. 3x3 kernel, stride 1, dilation 1, no groups;
 * pt, pl (top, left padding) in 0..2, and the bottom and right paddings
 * they imply, pb = oh - h - pt + 2 and pr = ow - w - pl + 2, in 0..2. */
typedef struct odn_iwino_shape {
    int64_t n, c, h, w, m, oh, ow, pt, pl;
} odn_iwino_shape;

/* Whether this CPU runs the kernel (AVX2) and it takes the shape: sizes
 * positive, paddings as above, 1 <= c <= ODN_IWINO_MAX_C (exactness), and
 * the buffers' sizes representable. False on other architectures. */
bool odn_iwino_f23_supported(const odn_iwino_shape *s);

/* Bytes the packed weights of an M x C x 3 x 3 filter take (32-byte
 * aligned buffer); 0 when c or m is out of range or the size overflows. */
size_t odn_iwino_f23_weights_bytes(int64_t c, int64_t m);

/* Packs U' = G'(w - zw)G'^T of the ONNX filter w ([m][c][3][3], int8, or
 * uint8 when w_unsigned) into `packed` (odn_iwino_f23_weights_bytes bytes,
 * 32-byte aligned). zw: zw_count (1 or m) zero points in w's type's range,
 * NULL for 0. */
void odn_iwino_f23_pack_weights(const void *w, bool w_unsigned, const int32_t *zw, int64_t zw_count, int64_t c,
                                int64_t m, void *packed);

/* Bytes of scratch (64-byte aligned) odn_iwino_f23_run needs on up to
 * `threads` threads (at most about 400 KiB a thread: a block's transforms
 * are sized for a core's L2); 0 when the shape is not supported. */
size_t odn_iwino_f23_scratch_bytes(const odn_iwino_shape *s, int threads);

/* y[b, oy, ox, j] = sum over c, ky, kx of (x[b, oy+ky-pt, ox+kx-pl, c] - zx)
 * * (w[j, c, ky, kx] - zw[j]), positions outside the image contributing 0
 * (ONNX pads with the zero point). x is uint8 when x_unsigned, else int8,
 * zx in its type's range; `packed` from odn_iwino_f23_pack_weights. Runs
 * on up to `threads` of the caller's OpenMP threads; `scratch` holds
 * odn_iwino_f23_scratch_bytes(s, t) bytes for some t >= threads. y is
 * exact, so it does not depend on `threads`. y must not overlap x. */
void odn_iwino_f23_run(const odn_iwino_shape *s, const void *x, bool x_unsigned, int32_t zx, const void *packed,
                       int32_t *y, void *scratch, int threads);

#endif
