/*
 * TIFF decoding through libtiff, reading the stream from memory. The first
 * image of the file is converted by libtiff's RGBA interface, which covers
 * every photometric interpretation, bit depth and compression the library
 * knows; alpha is dropped.
 *
 * Errors and warnings go to per-handle handlers (TIFFOpenOptions, libtiff
 * 4.5), never to libtiff's global ones that print to stderr.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tiffio.h>

#include "ref_image.h"

typedef struct tiff_source {
    const uint8_t *data;
    uint64_t size, pos;
    char message[200];
} tiff_source;

static tmsize_t src_read(thandle_t h, void *buf, tmsize_t n) {
    tiff_source *s = h;
    if (n < 0) return -1;
    uint64_t left = s->size - s->pos, take = (uint64_t)n < left ? (uint64_t)n : left;
    memcpy(buf, s->data + s->pos, (size_t)take);
    s->pos += take;
    return (tmsize_t)take;
}

static tmsize_t src_write(thandle_t h, void *buf, tmsize_t n) {
    (void)h;
    (void)buf;
    (void)n;
    return -1; /* read-only */
}

static toff_t src_seek(thandle_t h, toff_t off, int whence) {
    tiff_source *s = h;
    uint64_t base = whence == SEEK_CUR ? s->pos : whence == SEEK_END ? s->size : 0;
    /* Offsets past the end are allowed (reads there return nothing). */
    if (off > UINT64_MAX - base) return (toff_t)-1;
    s->pos = base + off > s->size ? s->size : base + off;
    return s->pos;
}

static int src_close(thandle_t h) {
    (void)h;
    return 0;
}

static toff_t src_size(thandle_t h) { return ((tiff_source *)h)->size; }

static int src_map(thandle_t h, void **base, toff_t *size) {
    (void)h;
    (void)base;
    (void)size;
    return 0;
}

static void src_unmap(thandle_t h, void *base, toff_t size) {
    (void)h;
    (void)base;
    (void)size;
}

static int on_error(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap) {
    (void)tif;
    (void)module;
    tiff_source *s = user;
    if (!s->message[0]) vsnprintf(s->message, sizeof s->message, fmt, ap);
    return 1; /* handled: do not call the global handler */
}

static int on_warning(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap) {
    (void)tif;
    (void)user;
    (void)module;
    (void)fmt;
    (void)ap;
    return 1;
}

bool ref_image_decode_tiff(const uint8_t *data, size_t size, ref_image_rgb *img, char *why, size_t why_size) {
    tiff_source src = {data, size, 0, ""};
    TIFFOpenOptions *opts = TIFFOpenOptionsAlloc();
    if (!opts) {
        snprintf(why, why_size, "out of memory");
        return false;
    }
    TIFFOpenOptionsSetErrorHandlerExtR(opts, on_error, &src);
    TIFFOpenOptionsSetWarningHandlerExtR(opts, on_warning, &src);
    /* "m": no memory mapping; our source is memory already. */
    TIFF *tif = TIFFClientOpenExt("stream", "rm", &src, src_read, src_write, src_seek, src_close, src_size, src_map,
                                  src_unmap, opts);
    TIFFOpenOptionsFree(opts);
    if (!tif) {
        snprintf(why, why_size, "%s", src.message[0] ? src.message : "not a readable TIFF");
        return false;
    }
    uint32_t w = 0, h = 0;
    uint32_t *raster = NULL;
    bool ok = false;
    char emsg[1024] = "";
    if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w) || !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h)) {
        snprintf(why, why_size, "the image has no width or height");
    } else if (!TIFFRGBAImageOK(tif, emsg)) {
        snprintf(why, why_size, "%s", emsg);
    } else if (ref_image_rgb_alloc(img, w, h, why, why_size)) {
        raster = malloc((size_t)w * h * sizeof *raster);
        if (!raster) {
            snprintf(why, why_size, "out of memory");
        } else if (!TIFFReadRGBAImageOriented(tif, w, h, raster, ORIENTATION_TOPLEFT, 1)) {
            snprintf(why, why_size, "%s", src.message[0] ? src.message : "decoding failed");
        } else {
            for (size_t i = 0; i < (size_t)w * h; i++) {
                img->pixels[3 * i] = (uint8_t)TIFFGetR(raster[i]);
                img->pixels[3 * i + 1] = (uint8_t)TIFFGetG(raster[i]);
                img->pixels[3 * i + 2] = (uint8_t)TIFFGetB(raster[i]);
            }
            ok = true;
        }
    }
    free(raster);
    TIFFClose(tif);
    return ok;
}
