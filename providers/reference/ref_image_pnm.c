/*
 * Netpbm decoding, written here (the formats are a few lines of spec):
 * P1/P4 bitmaps (1 is black), P2/P5 greymaps and P3/P6 pixmaps, in their
 * plain (ASCII) and raw (binary) forms. Samples with a maxval other than
 * 255 are rescaled to 0..255, rounding to nearest; raw samples take two
 * big-endian bytes when maxval exceeds 255.
 */
#include <stdio.h>

#include "ref_image.h"

typedef struct pnm_reader {
    const uint8_t *d;
    size_t n, pos;
} pnm_reader;

static bool is_space(uint8_t ch) {
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
}

/* Skips whitespace and '#' comments (which run to the end of the line). */
static void skip_blank(pnm_reader *r) {
    while (r->pos < r->n) {
        if (r->d[r->pos] == '#') {
            while (r->pos < r->n && r->d[r->pos] != '\n' && r->d[r->pos] != '\r') r->pos++;
        } else if (is_space(r->d[r->pos])) {
            r->pos++;
        } else {
            break;
        }
    }
}

/* A decimal number no larger than `max`; false when absent or too large. */
static bool read_number(pnm_reader *r, int64_t max, int64_t *out) {
    skip_blank(r);
    int64_t v = 0;
    size_t start = r->pos;
    while (r->pos < r->n && r->d[r->pos] >= '0' && r->d[r->pos] <= '9') {
        v = v * 10 + (r->d[r->pos++] - '0');
        if (v > max) return false;
    }
    *out = v;
    return r->pos > start;
}

/* The next sample of a plain or raw raster; false when the data runs out
 * or the sample exceeds maxval. */
static bool read_sample(pnm_reader *r, bool raw, int64_t maxval, int64_t *v) {
    if (!raw) return read_number(r, maxval, v);
    size_t bytes = maxval > 255 ? 2 : 1;
    if (r->n - r->pos < bytes) return false;
    *v = bytes == 2 ? (int64_t)r->d[r->pos] << 8 | r->d[r->pos + 1] : r->d[r->pos];
    r->pos += bytes;
    return *v <= maxval;
}

static uint8_t scale(int64_t v, int64_t maxval) {
    return (uint8_t)(maxval == 255 ? v : (v * 255 + maxval / 2) / maxval);
}

/* P1 and P4: one bit per pixel, 1 = black. */
static bool read_bitmap(pnm_reader *r, bool raw, ref_image_rgb *img) {
    uint8_t *p = img->pixels;
    size_t row_bytes = (size_t)(img->width + 7) / 8;
    for (int64_t y = 0; y < img->height; y++) {
        if (raw && r->n - r->pos < row_bytes) return false;
        for (int64_t x = 0; x < img->width; x++, p += 3) {
            int bit;
            if (raw) {
                bit = (r->d[r->pos + (size_t)x / 8] >> (7 - x % 8)) & 1;
            } else {
                skip_blank(r);
                if (r->pos >= r->n || (r->d[r->pos] != '0' && r->d[r->pos] != '1')) return false;
                bit = r->d[r->pos++] - '0';
            }
            p[0] = p[1] = p[2] = bit ? 0 : 255;
        }
        if (raw) r->pos += row_bytes;
    }
    return true;
}

bool ref_image_decode_pnm(const uint8_t *data, size_t size, ref_image_rgb *img, char *why, size_t why_size) {
    pnm_reader r = {data, size, 2};
    int kind = data[1] - '0'; /* 1..6, checked by the caller */
    bool raw = kind >= 4, bitmap = kind == 1 || kind == 4, color = kind == 3 || kind == 6;
    int64_t w, h, maxval = 1;
    if (!read_number(&r, INT32_MAX, &w) || !read_number(&r, INT32_MAX, &h) ||
        (!bitmap && !read_number(&r, 65535, &maxval))) {
        snprintf(why, why_size, "malformed header");
        return false;
    }
    if (maxval < 1) {
        snprintf(why, why_size, "maxval must be 1 to 65535");
        return false;
    }
    /* Raw rasters start after exactly one whitespace byte. */
    if (raw) {
        if (r.pos >= r.n || !is_space(r.d[r.pos])) {
            snprintf(why, why_size, "no whitespace after the header");
            return false;
        }
        r.pos++;
    }
    if (!ref_image_rgb_alloc(img, w, h, why, why_size)) return false;
    if (bitmap) {
        if (!read_bitmap(&r, raw, img)) {
            snprintf(why, why_size, "the raster is truncated or malformed");
            return false;
        }
        return true;
    }
    uint8_t *p = img->pixels;
    for (int64_t i = 0; i < w * h; i++, p += 3) {
        int64_t v[3];
        for (int k = 0; k < (color ? 3 : 1); k++)
            if (!read_sample(&r, raw, maxval, &v[k])) {
                snprintf(why, why_size, "the raster is truncated or has a sample above maxval");
                return false;
            }
        if (!color) v[1] = v[2] = v[0];
        for (int k = 0; k < 3; k++) p[k] = scale(v[k], maxval);
    }
    return true;
}
