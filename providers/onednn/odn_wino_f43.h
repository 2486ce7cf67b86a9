/* A Winograd F(4x4, 3x3) convolution for AVX2 CPUs (odn_wino_f43.c), where
 * oneDNN 2.6 has Winograd kernels only for AVX-512: a 3x3, stride-1,
 * undilated, ungrouped 2-D convolution computed per 4x4 output tile from a
 * 6x6 input tile as 36 independent GEMMs (tiles x C by C x M), 36
 * multiply-adds per tile and channel pair instead of 144. The activations
 * stay in an 8-channel layout, nChw8c or NHWC (what oneDNN's AVX2
 * convolutions around it read and write), described by strides.
 * Only this header and odn_wino_f43.c know the transformed weights' layout. */
#ifndef TESSERA_ODN_WINO_F43_H
#define TESSERA_ODN_WINO_F43_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where element (image b, channel c, row y, column x) of an activation
 * tensor lies, in floats: b * img + (c / 8) * cb + y * row + x * pix + c % 8.
 * nChw8c: pix 8, row W*8, cb H*W*8, img C*H*W; NHWC: pix C, row W*C, cb 8,
 * img H*W*C. */
typedef struct odn_wino_strides {
    int64_t img, cb, row, pix;
} odn_wino_strides;

typedef struct odn_wino_shape {
    int64_t n, c, h, w; /* input: images, channels (a multiple of 8), rows, columns */
    int64_t m, oh, ow;  /* output channels (a multiple of 8), rows, columns */
    int64_t pt, pl;     /* top and left padding (0..2); the bottom and right follow from oh, ow */
} odn_wino_shape;

/* Whether this CPU runs the kernel (AVX2 and FMA) and the shape is one it
 * takes: c and m positive multiples of 8, pt and pl in 0..2, oh = h + pt +
 * pb - 2 and ow likewise with pb, pr in 0..2, every size positive and the
 * buffers' sizes representable. */
bool odn_wino_f43_supported(const odn_wino_shape *s);

/* Floats the transformed weights of an M x C x 3 x 3 filter take; 0 when
 * that overflows. */
size_t odn_wino_f43_weights_floats(int64_t c, int64_t m);

/* Transforms the ONNX filter w ([M][C][3][3], float) into `packed`
 * (odn_wino_f43_weights_floats(c, m) floats, 32-byte aligned). */
void odn_wino_f43_pack_weights(const float *w, int64_t c, int64_t m, float *packed);

/* Bytes of scratch odn_wino_f43_run needs on up to `threads` threads. */
size_t odn_wino_f43_scratch_bytes(const odn_wino_shape *s, int threads);

/* y = conv(x, w) + bias (bias: m floats, NULL for none); when
 * `accumulate`, y's previous contents are added first (oneDNN's sum
 * post-op, scale 1: a residual already in y); then, when `relu`, max(y, 0).
 * x and y in the layouts their strides say (y does not overlap x). Runs on
 * up to `threads` of the caller's OpenMP threads; `scratch` holds
 * odn_wino_f43_scratch_bytes(s, threads) bytes, 64-byte aligned (at most
 * about 2 MiB a thread while C + M <= 2048; 864 * (C + M) bytes past that). Each output is computed by one thread in a fixed
 * order, so y does not depend on `threads`. Float32 error: a few 1e-6 of
 * max|y| (C = 512, He-initialised weights: 4e-6; float32 direct: 5e-7). */
void odn_wino_f43_run(const odn_wino_shape *s, const float *x, const odn_wino_strides *xs, const float *packed,
                      const float *bias, float *y, const odn_wino_strides *ys, bool accumulate, bool relu,
                      void *scratch, int threads);

#endif
