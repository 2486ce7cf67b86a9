/*
 * WebP decoding through libwebp (lossy and lossless still images; alpha is
 * dropped). The header is read first so that the size cap applies before
 * any pixel buffer exists; libwebp then decodes straight into ours.
 * Animated WebP files are not decoded (libwebp's simple API refuses them).
 */
#include <stdio.h>

#include <webp/decode.h>

#include "ref_image.h"

bool ref_image_decode_webp(const uint8_t *data, size_t size, ref_image_rgb *img, char *why, size_t why_size) {
    int w = 0, h = 0;
    if (!WebPGetInfo(data, size, &w, &h)) {
        snprintf(why, why_size, "not a valid WebP header");
        return false;
    }
    if (!ref_image_rgb_alloc(img, w, h, why, why_size)) return false;
    size_t bytes = (size_t)w * (size_t)h * 3;
    if (!WebPDecodeRGBInto(data, size, img->pixels, bytes, w * 3)) {
        snprintf(why, why_size,
                 "the stream is corrupt or uses an unsupported feature "
                 "(e.g. animation)");
        return false;
    }
    return true;
}
