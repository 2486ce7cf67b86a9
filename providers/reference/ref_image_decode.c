/*
 * ImageDecoder (opset 20): decodes one encoded image (a 1-D uint8 tensor)
 * into an (H, W, C) uint8 tensor, C = 3 for RGB and BGR, 1 for Grayscale.
 *
 * The format is told by the stream's signature; each format has its own
 * decoder file (ref_image_<format>.c) that yields 8-bit RGB, which this
 * file turns into the requested pixel format. Grayscale is computed from
 * RGB with the ITU-R 601-2 luma weights in 16-bit fixed point, rounding to
 * nearest — the conversion Pillow's convert("L") applies, which is what
 * the operator's reference outputs were made with.
 *
 * As the operator specifies, a stream that cannot be decoded gives an
 * empty (0, 0, C) image rather than an error; the reason goes to the
 * session log as a warning naming the node.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_image.h"

bool ref_image_rgb_alloc(ref_image_rgb *img, int64_t width, int64_t height, char *why, size_t why_size) {
    img->pixels = NULL;
    int64_t dims[3] = {width, height, 3}, n;
    if (width < 1 || height < 1 || !ref_image_numel(dims, 3, REF_IMAGE_MAX_ELEMS, &n)) {
        snprintf(why, why_size, "image size %lld x %lld is empty or over the limit of %lld bytes", (long long)width,
                 (long long)height, (long long)REF_IMAGE_MAX_ELEMS);
        return false;
    }
    img->pixels = malloc((size_t)n);
    if (!img->pixels) {
        snprintf(why, why_size, "out of memory for a %lld x %lld image", (long long)width, (long long)height);
        return false;
    }
    img->width = width;
    img->height = height;
    return true;
}

typedef struct image_format {
    const char *name;
    ref_image_decode_fn decode;
} image_format;

static bool has_prefix(const uint8_t *d, size_t n, const char *sig, size_t len) {
    return n >= len && memcmp(d, sig, len) == 0;
}

/* The format whose signature starts the stream, or NULL. */
static const image_format *sniff(const uint8_t *d, size_t n) {
    static const image_format jpeg = {"JPEG", ref_image_decode_jpeg}, png = {"PNG", ref_image_decode_png},
                              tiff = {"TIFF", ref_image_decode_tiff}, webp = {"WebP", ref_image_decode_webp},
                              jp2 = {"JPEG 2000", ref_image_decode_jp2}, bmp = {"BMP", ref_image_decode_bmp},
                              pnm = {"PNM", ref_image_decode_pnm};
    if (has_prefix(d, n, "\xff\xd8\xff", 3)) return &jpeg;
    if (has_prefix(d, n, "\x89PNG\r\n\x1a\n", 8)) return &png;
    if (has_prefix(d, n, "II*\0", 4) || has_prefix(d, n, "MM\0*", 4)) return &tiff;
    if (n >= 12 && has_prefix(d, n, "RIFF", 4) && memcmp(d + 8, "WEBP", 4) == 0) return &webp;
    if (has_prefix(d, n, "\0\0\0\x0cjP  \r\n\x87\n", 12) || has_prefix(d, n, "\xff\x4f\xff\x51", 4)) return &jp2;
    if (has_prefix(d, n, "BM", 2)) return &bmp;
    if (n >= 2 && d[0] == 'P' && d[1] >= '1' && d[1] <= '6') return &pnm;
    return NULL;
}

/* Writes the empty (0, 0, channels) result and logs why. */
static tsr_status *empty_image(ref_ctx *c, int64_t channels, const char *why) {
    char msg[600];
    snprintf(msg, sizeof msg,
             "ImageDecoder '%s': cannot decode the image (%s); the output is "
             "empty",
             c->host->node_name(c->node), why);
    c->host->log(TSR_LOG_WARNING, "reference", msg);
    int64_t dims[3] = {0, 0, channels};
    tsr_tensor *Y;
    return ref_out(c, 0, TSR_UINT8, 3, dims, &Y);
}

tsr_status *ref_image_decoder(ref_ctx *c) {
    const tsr_tensor *X = ref_in(c, 0);
    if (!X) return ref_err(c, TSR_ERR_INVALID_MODEL, "ImageDecoder needs the encoded stream");
    if (X->elem_type != TSR_UINT8 || X->rank != 1)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                       "encoded_stream must be a 1-D uint8 tensor (type %d, rank %d given)", (int)X->elem_type,
                       (int)X->rank);
    const char *fmt = ref_attr_str(c, "pixel_format", "RGB");
    bool gray = !strcmp(fmt, "Grayscale"), bgr = !strcmp(fmt, "BGR");
    if (!gray && !bgr && strcmp(fmt, "RGB"))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "pixel_format '%s' is not RGB, BGR or Grayscale", fmt);
    int64_t channels = gray ? 1 : 3;
    const uint8_t *data = X->data;
    size_t size = (size_t)X->dims[0];
    const image_format *f = sniff(data, size);
    if (!f) return empty_image(c, channels, "the stream is not in a known image format");
    ref_image_rgb img = {0, 0, NULL};
    char why[256] = "";
    if (!f->decode(data, size, &img, why, sizeof why)) {
        free(img.pixels);
        char msg[300];
        snprintf(msg, sizeof msg, "%s: %s", f->name, why);
        return empty_image(c, channels, msg);
    }
    int64_t dims[3] = {img.height, img.width, channels};
    tsr_tensor *Y;
    tsr_status *st = ref_out(c, 0, TSR_UINT8, 3, dims, &Y);
    if (st) {
        free(img.pixels);
        return st;
    }
    size_t npix = (size_t)(img.width * img.height);
    uint8_t *out = Y->data;
    const uint8_t *p = img.pixels;
    for (size_t i = 0; i < npix; i++, p += 3) {
        if (gray) {
            out[i] = (uint8_t)((p[0] * 19595u + p[1] * 38470u + p[2] * 7471u + 0x8000u) >> 16);
        } else {
            out[3 * i] = bgr ? p[2] : p[0];
            out[3 * i + 1] = p[1];
            out[3 * i + 2] = bgr ? p[0] : p[2];
        }
    }
    free(img.pixels);
    return NULL;
}
