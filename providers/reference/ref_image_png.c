/*
 * PNG decoding through libpng. Every PNG colour type is normalised to
 * 8-bit RGB with libpng's own transforms: palettes and low bit depths are
 * expanded, 16-bit samples keep their high byte, grey is replicated and
 * alpha is dropped (as Pillow's convert("RGB") does; no compositing).
 *
 * libpng reports errors through a callback that must not return: we
 * longjmp back (png_jmpbuf). Warnings are dropped.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

#include "ref_image.h"

typedef struct png_source {
    const uint8_t *data;
    size_t size, pos;
    char message[200];
} png_source;

static void read_bytes(png_structp png, png_bytep out, size_t n) {
    png_source *src = png_get_io_ptr(png);
    if (n > src->size - src->pos) png_error(png, "the stream ends early");
    memcpy(out, src->data + src->pos, n);
    src->pos += n;
}

static void on_error(png_structp png, png_const_charp msg) {
    png_source *src = png_get_error_ptr(png);
    snprintf(src->message, sizeof src->message, "%s", msg);
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg) {
    (void)png;
    (void)msg;
}

bool ref_image_decode_png(const uint8_t *data, size_t size, ref_image_rgb *img, char *why, size_t why_size) {
    png_source src = {data, size, 0, ""};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &src, on_error, on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    /* Written between setjmp and a possible longjmp: volatile keeps it. */
    png_bytep *volatile rows = NULL;
    if (!info) {
        snprintf(why, why_size, "out of memory");
        png_destroy_read_struct(png ? &png : NULL, NULL, NULL);
        return false;
    }
    if (setjmp(png_jmpbuf(png))) {
        snprintf(why, why_size, "%s", src.message);
        free(rows);
        png_destroy_read_struct(&png, &info, NULL);
        return false;
    }
    png_set_read_fn(png, &src, read_bytes);
    /* Our own size cap applies below; lift libpng's default 1e6 limit. */
    png_set_user_limits(png, 0x7fffffff, 0x7fffffff);
    png_read_info(png, info);
    png_uint_32 w = png_get_image_width(png, info), h = png_get_image_height(png, info);
    int color = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
    if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
    if (depth == 16) png_set_strip_16(png);
    if (depth < 8) png_set_packing(png);
    png_set_strip_alpha(png);
    if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != (size_t)w * 3) {
        snprintf(why, why_size, "libpng did not produce 8-bit RGB rows");
        png_destroy_read_struct(&png, &info, NULL);
        return false;
    }
    if (!ref_image_rgb_alloc(img, w, h, why, why_size)) {
        png_destroy_read_struct(&png, &info, NULL);
        return false;
    }
    rows = malloc((size_t)h * sizeof *rows);
    if (!rows) {
        snprintf(why, why_size, "out of memory");
        png_destroy_read_struct(&png, &info, NULL);
        return false;
    }
    for (png_uint_32 y = 0; y < h; y++) rows[y] = img->pixels + (size_t)y * w * 3;
    png_read_image(png, rows);
    png_read_end(png, NULL);
    free(rows);
    png_destroy_read_struct(&png, &info, NULL);
    return true;
}
