/*
 * Private interface of the reference provider's image family: the kernels
 * (ref_image_*.c) that ref_ops_image.c lists, and the helpers they share.
 */
#ifndef TESSERA_REF_IMAGE_H
#define TESSERA_REF_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ref.h"

/* Output shapes taken from tensor *data* (Col2Im's image_shape, MaxUnpool's
 * output_shape, an image header) are capped at this many elements, so a
 * corrupt or hostile value cannot make the kernel reserve unbounded memory. */
#define REF_IMAGE_MAX_ELEMS ((int64_t)1 << 28)

/* --- kernels ------------------------------------------------------------ */
tsr_status *ref_image_grid_sample(ref_ctx *c);
tsr_status *ref_image_affine_grid(ref_ctx *c);
tsr_status *ref_image_roi_align(ref_ctx *c);
tsr_status *ref_image_nms(ref_ctx *c);
tsr_status *ref_image_col2im(ref_ctx *c);
tsr_status *ref_image_deform_conv(ref_ctx *c);
tsr_status *ref_image_max_unpool(ref_ctx *c);
tsr_status *ref_image_decoder(ref_ctx *c);

/* --- shared helpers (ref_image_util.c) ---------------------------------- */
/* A numeric tensor's elements as a malloc'ed double array (free()). */
tsr_status *ref_image_f64(ref_ctx *c, const tsr_tensor *t, const char *what, double **out);
/* Stores n doubles into t, converting to t's element type. */
void ref_image_store_f64(tsr_tensor *t, const double *src, size_t n);
/* *out = product of dims[0..n), false on a negative dim or when the product
 * passes `limit`. */
bool ref_image_numel(const int64_t *dims, size_t n, int64_t limit, int64_t *out);
/* Reads the optional INTS attribute `name` into out[0..n): absent gives
 * `dflt` everywhere; present must have exactly n entries, each >= min. */
tsr_status *ref_image_ints_attr(ref_ctx *c, const char *name, size_t n, int64_t dflt, int64_t min, int64_t *out);
/* Bilinear (N-linear) sample of one channel `data` of rank nd with shape
 * dims at fractional position pos[0..nd); points outside read as zero. */
double ref_image_sample_linear_zero(const double *data, size_t nd, const int64_t *dims, const double *pos);

/* --- image decoding (ref_image_decode.c and one file per format) -------- */
/* A decoded picture: 8-bit RGB, rows top to bottom, width*height*3 bytes. */
typedef struct ref_image_rgb {
    int64_t width, height;
    uint8_t *pixels; /* malloc'ed; the caller frees */
} ref_image_rgb;

/* Each decoder fills *img or returns false with a sentence in `why`. The
 * caller has checked the format's signature; decoders check everything else
 * (and cap the size at REF_IMAGE_MAX_ELEMS pixels). */
typedef bool (*ref_image_decode_fn)(const uint8_t *data, size_t size, ref_image_rgb *img, char *why, size_t why_size);
bool ref_image_decode_jpeg(const uint8_t *data, size_t size, ref_image_rgb *img, char *why, size_t why_size);
bool ref_image_decode_png(const uint8_t *data, size_t size, ref_image_rgb *img, char *why, size_t why_size);
bool ref_image_decode_tiff(const uint8_t *data, size_t size, ref_image_rgb *img, char *why, size_t why_size);
bool ref_image_decode_webp(const uint8_t *data, size_t size, ref_image_rgb *img, char *why, size_t why_size);
bool ref_image_decode_jp2(const uint8_t *data, size_t size, ref_image_rgb *img, char *why, size_t why_size);
bool ref_image_decode_bmp(const uint8_t *data, size_t size, ref_image_rgb *img, char *why, size_t why_size);
bool ref_image_decode_pnm(const uint8_t *data, size_t size, ref_image_rgb *img, char *why, size_t why_size);
/* Allocates img->pixels for width x height after checking the size cap. */
bool ref_image_rgb_alloc(ref_image_rgb *img, int64_t width, int64_t height, char *why, size_t why_size);

#endif
