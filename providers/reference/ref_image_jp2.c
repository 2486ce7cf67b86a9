/*
 * JPEG 2000 decoding (JP2 files and raw J2K codestreams) through OpenJPEG,
 * reading from memory. Components become 8-bit samples (signed ones are
 * offset to unsigned, deeper ones keep their top 8 bits, shallower ones
 * are scaled up); one or two components are grey (plus alpha, dropped),
 * three or more are RGB, converted from YCbCr when the file says sYCC.
 * Subsampled components are read at the nearest sample.
 */
#include <stdio.h>
#include <string.h>

#include <openjpeg.h>

#include "ref_image.h"

typedef struct jp2_source {
    const uint8_t *data;
    uint64_t size, pos;
    char message[200];
} jp2_source;

static OPJ_SIZE_T src_read(void *buf, OPJ_SIZE_T n, void *user) {
    jp2_source *s = user;
    uint64_t left = s->size - s->pos;
    if (left == 0) return (OPJ_SIZE_T)-1; /* OpenJPEG's end-of-stream answer */
    uint64_t take = n < left ? n : left;
    memcpy(buf, s->data + s->pos, (size_t)take);
    s->pos += take;
    return (OPJ_SIZE_T)take;
}

static OPJ_OFF_T src_skip(OPJ_OFF_T n, void *user) {
    jp2_source *s = user;
    if (n < 0) n = (uint64_t)-n > s->pos ? -(OPJ_OFF_T)s->pos : n;
    else if ((uint64_t)n > s->size - s->pos) n = (OPJ_OFF_T)(s->size - s->pos);
    s->pos = (uint64_t)((OPJ_OFF_T)s->pos + n);
    return n;
}

static OPJ_BOOL src_seek(OPJ_OFF_T off, void *user) {
    jp2_source *s = user;
    if (off < 0 || (uint64_t)off > s->size) return OPJ_FALSE;
    s->pos = (uint64_t)off;
    return OPJ_TRUE;
}

static void on_error(const char *msg, void *user) {
    jp2_source *s = user;
    if (!s->message[0]) {
        snprintf(s->message, sizeof s->message, "%s", msg);
        /* OpenJPEG messages end in a newline. */
        size_t n = strlen(s->message);
        if (n && s->message[n - 1] == '\n') s->message[n - 1] = 0;
    }
}

static void on_quiet(const char *msg, void *user) {
    (void)msg;
    (void)user;
}

/* Component sample as an 8-bit value. */
static int sample8(const opj_image_comp_t *c, OPJ_INT32 v) {
    int prec = (int)c->prec;
    int64_t u = v;
    if (c->sgnd && prec > 0) u += (int64_t)1 << (prec - 1);
    if (prec > 8) u >>= prec - 8;
    else if (prec > 0 && prec < 8) u = u * 255 / (((int64_t)1 << prec) - 1);
    return u < 0 ? 0 : u > 255 ? 255 : (int)u;
}

/* The sample of component c covering image pixel (x, y) (reference-grid
 * coordinates). */
static OPJ_INT32 comp_at(const opj_image_comp_t *c, uint64_t x, uint64_t y) {
    uint64_t cx = x / c->dx, cy = y / c->dy;
    cx = cx > c->x0 ? cx - c->x0 : 0;
    cy = cy > c->y0 ? cy - c->y0 : 0;
    if (cx >= c->w) cx = c->w - 1;
    if (cy >= c->h) cy = c->h - 1;
    return c->data[cy * c->w + cx];
}

static uint8_t clamp8(double v) {
    v = v < 0 ? 0 : v > 255 ? 255 : v;
    return (uint8_t)(v + 0.5);
}

static bool convert(const opj_image_t *im, ref_image_rgb *img, char *why, size_t why_size) {
    if (im->numcomps < 1) {
        snprintf(why, why_size, "the image has no components");
        return false;
    }
    size_t nc = im->numcomps >= 3 ? 3 : 1;
    for (size_t k = 0; k < nc; k++) {
        const opj_image_comp_t *c = &im->comps[k];
        if (!c->data || c->w == 0 || c->h == 0 || c->dx == 0 || c->dy == 0 || c->prec > 31) {
            snprintf(why, why_size, "component %zu is empty or malformed", k);
            return false;
        }
    }
    bool sycc = nc == 3 && im->color_space == OPJ_CLRSPC_SYCC;
    uint8_t *p = img->pixels;
    for (int64_t y = 0; y < img->height; y++)
        for (int64_t x = 0; x < img->width; x++, p += 3) {
            uint64_t gx = im->x0 + (uint64_t)x, gy = im->y0 + (uint64_t)y;
            int v[3];
            for (size_t k = 0; k < nc; k++) v[k] = sample8(&im->comps[k], comp_at(&im->comps[k], gx, gy));
            if (nc == 1) {
                p[0] = p[1] = p[2] = (uint8_t)v[0];
            } else if (sycc) {
                double yy = v[0], cb = v[1] - 128.0, cr = v[2] - 128.0;
                p[0] = clamp8(yy + 1.402 * cr);
                p[1] = clamp8(yy - 0.344136 * cb - 0.714136 * cr);
                p[2] = clamp8(yy + 1.772 * cb);
            } else {
                p[0] = (uint8_t)v[0];
                p[1] = (uint8_t)v[1];
                p[2] = (uint8_t)v[2];
            }
        }
    return true;
}

bool ref_image_decode_jp2(const uint8_t *data, size_t size, ref_image_rgb *img, char *why, size_t why_size) {
    jp2_source src = {data, size, 0, ""};
    bool raw = size >= 2 && data[0] == 0xff && data[1] == 0x4f;
    opj_codec_t *codec = opj_create_decompress(raw ? OPJ_CODEC_J2K : OPJ_CODEC_JP2);
    opj_stream_t *stream = opj_stream_create(OPJ_J2K_STREAM_CHUNK_SIZE, OPJ_TRUE);
    opj_image_t *im = NULL;
    bool ok = false;
    if (!codec || !stream) {
        snprintf(why, why_size, "out of memory");
        goto done;
    }
    opj_set_error_handler(codec, on_error, &src);
    opj_set_warning_handler(codec, on_quiet, &src);
    opj_set_info_handler(codec, on_quiet, &src);
    opj_stream_set_user_data(stream, &src, NULL);
    opj_stream_set_user_data_length(stream, size);
    opj_stream_set_read_function(stream, src_read);
    opj_stream_set_skip_function(stream, src_skip);
    opj_stream_set_seek_function(stream, src_seek);
    opj_dparameters_t params;
    opj_set_default_decoder_parameters(&params);
    if (!opj_setup_decoder(codec, &params) || !opj_read_header(stream, codec, &im) || !im) {
        snprintf(why, why_size, "%s", src.message[0] ? src.message : "unreadable header");
        goto done;
    }
    /* The cap applies before OpenJPEG allocates the component planes. */
    if (im->x1 <= im->x0 || im->y1 <= im->y0) {
        snprintf(why, why_size, "the image area is empty");
        goto done;
    }
    if (!ref_image_rgb_alloc(img, (int64_t)im->x1 - im->x0, (int64_t)im->y1 - im->y0, why, why_size)) goto done;
    if (im->numcomps > 4) {
        snprintf(why, why_size, "%u components are more than this decoder reads", (unsigned)im->numcomps);
        goto done;
    }
    if (!opj_decode(codec, stream, im) || !opj_end_decompress(codec, stream)) {
        snprintf(why, why_size, "%s", src.message[0] ? src.message : "decoding failed");
        goto done;
    }
    ok = convert(im, img, why, why_size);
done:
    if (im) opj_image_destroy(im);
    if (stream) opj_stream_destroy(stream);
    if (codec) opj_destroy_codec(codec);
    return ok;
}
