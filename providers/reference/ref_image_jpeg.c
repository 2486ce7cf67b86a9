/*
 * JPEG decoding through libjpeg (libjpeg-turbo on Debian), with the
 * library's defaults: the accurate integer IDCT and "fancy" (smooth)
 * chroma upsampling, the method the ImageDecoder spec describes and that
 * Pillow uses, so results match it bit for bit.
 *
 * libjpeg reports fatal errors through error_exit, which must not return:
 * we longjmp back to decode_jpeg. Its warnings would go to stderr; they are
 * dropped instead (a library prints nothing).
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

#include "ref_image.h"

typedef struct jpeg_failure {
    struct jpeg_error_mgr mgr; /* first: libjpeg sees only this */
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
    bool truncated; /* libjpeg met the end of data and padded the image */
} jpeg_failure;

static void on_error(j_common_ptr cinfo) {
    jpeg_failure *f = (jpeg_failure *)cinfo->err;
    f->mgr.format_message(cinfo, f->message);
    longjmp(f->jump, 1);
}

/* Replaces the default, which prints warnings; one warning matters: a
 * stream that ends early, which Pillow refuses by default. */
static void on_message(j_common_ptr cinfo, int level) {
    jpeg_failure *f = (jpeg_failure *)cinfo->err;
    if (level < 0) {
        f->mgr.num_warnings++;
        if (f->mgr.msg_code == JWRN_JPEG_EOF) f->truncated = true;
    }
}

/* Adobe CMYK JPEGs store inverted inks, so ink k is already "1 - K". */
static void cmyk_row_to_rgb(const JSAMPLE *src, uint8_t *dst, JDIMENSION width) {
    for (JDIMENSION x = 0; x < width; x++, src += 4, dst += 3) {
        unsigned k = src[3];
        dst[0] = (uint8_t)((src[0] * k + 127) / 255);
        dst[1] = (uint8_t)((src[1] * k + 127) / 255);
        dst[2] = (uint8_t)((src[2] * k + 127) / 255);
    }
}

bool ref_image_decode_jpeg(const uint8_t *data, size_t size, ref_image_rgb *img, char *why, size_t why_size) {
    struct jpeg_decompress_struct cinfo;
    jpeg_failure fail;
    /* Written between setjmp and a possible longjmp: volatile keeps it. */
    JSAMPLE *volatile row = NULL;
    memset(&cinfo, 0, sizeof cinfo);
    cinfo.err = jpeg_std_error(&fail.mgr);
    fail.mgr.error_exit = on_error;
    fail.mgr.emit_message = on_message;
    fail.message[0] = 0;
    fail.truncated = false;
    if (setjmp(fail.jump)) {
        snprintf(why, why_size, "%s", fail.message);
        free(row);
        jpeg_destroy_decompress(&cinfo);
        return false;
    }
    jpeg_create_decompress(&cinfo);
    if (size > (unsigned long)-1) {
        snprintf(why, why_size, "stream too large");
        jpeg_destroy_decompress(&cinfo);
        return false;
    }
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    bool cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
    cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
    if (!ref_image_rgb_alloc(img, cinfo.image_width, cinfo.image_height, why, why_size)) {
        jpeg_destroy_decompress(&cinfo);
        return false;
    }
    jpeg_start_decompress(&cinfo);
    if (cinfo.output_width != (JDIMENSION)img->width || cinfo.output_height != (JDIMENSION)img->height ||
        cinfo.output_components != (cmyk ? 4 : 3)) {
        snprintf(why, why_size, "unexpected output layout from libjpeg");
        jpeg_destroy_decompress(&cinfo);
        return false;
    }
    row = malloc((size_t)cinfo.output_width * 4);
    if (!row) {
        snprintf(why, why_size, "out of memory");
        jpeg_destroy_decompress(&cinfo);
        return false;
    }
    while (cinfo.output_scanline < cinfo.output_height) {
        uint8_t *dst = img->pixels + (size_t)cinfo.output_scanline * (size_t)img->width * 3;
        JSAMPROW rows[1] = {cmyk ? row : dst};
        /* With a memory source libjpeg never suspends; 0 rows would loop. */
        if (jpeg_read_scanlines(&cinfo, rows, 1) != 1) fail.truncated = true;
        if (fail.truncated) break;
        if (cmyk) cmyk_row_to_rgb(row, dst, cinfo.output_width);
    }
    if (fail.truncated) {
        snprintf(why, why_size, "the stream ends before the image does");
        free(row);
        jpeg_destroy_decompress(&cinfo);
        return false;
    }
    jpeg_finish_decompress(&cinfo);
    free(row);
    jpeg_destroy_decompress(&cinfo);
    return true;
}
