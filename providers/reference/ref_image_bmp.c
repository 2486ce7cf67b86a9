/*
 * Windows BMP decoding, written here from the format description: core
 * (12-byte), info (40-byte) and v2..v5 headers; 1, 2, 4 and 8 bits per
 * pixel through a palette (uncompressed, RLE8 or RLE4), and 16, 24 and 32
 * bits per pixel directly or through channel bit masks (BI_BITFIELDS).
 * Rows are bottom-up unless the height is negative; alpha is dropped.
 * Pixels an RLE stream skips take palette entry 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_image.h"

enum { BI_RGB = 0, BI_RLE8 = 1, BI_RLE4 = 2, BI_BITFIELDS = 3, BI_ALPHABITFIELDS = 6 };

static uint32_t le16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }

static uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* One channel's bit mask: where it starts and how wide it is. */
typedef struct bmp_mask {
    uint32_t mask;
    int shift, bits;
} bmp_mask;

static bmp_mask make_mask(uint32_t m) {
    bmp_mask r = {m, 0, 0};
    if (!m) return r;
    while (!((m >> r.shift) & 1)) r.shift++;
    while (r.shift + r.bits < 32 && ((m >> (r.shift + r.bits)) & 1)) r.bits++;
    return r;
}

/* A masked channel scaled to 0..255, rounding to nearest. */
static uint8_t channel(uint32_t px, const bmp_mask *m) {
    if (!m->bits) return 0;
    uint64_t v = (px & m->mask) >> m->shift, max = ((uint64_t)1 << m->bits) - 1;
    return (uint8_t)((v * 255 + max / 2) / max);
}

typedef struct bmp_info {
    int64_t width, height;
    bool top_down;
    unsigned bpp, compression;
    bmp_mask masks[3];
    uint8_t palette[256][3]; /* RGB */
    unsigned colors;
} bmp_info;

/* Expands an RLE8 / RLE4 stream into palette indices, bottom row first
 * (row 0 of `idx` is the bottom row). */
static bool decode_rle(const uint8_t *s, size_t n, bool four, const bmp_info *bi, uint8_t *idx) {
    int64_t x = 0, y = 0, w = bi->width, h = bi->height;
    size_t i = 0;
    while (i + 1 < n) {
        unsigned count = s[i], val = s[i + 1];
        i += 2;
        if (count) { /* a run of `count` pixels */
            for (unsigned k = 0; k < count && x < w; k++, x++)
                if (y < h) idx[y * w + x] = (uint8_t)(four ? (k & 1 ? val & 15 : val >> 4) : val);
            continue;
        }
        if (val == 0) { /* end of line */
            x = 0;
            y++;
        } else if (val == 1) { /* end of bitmap */
            return true;
        } else if (val == 2) { /* delta */
            if (i + 1 >= n) return false;
            x += s[i];
            y += s[i + 1];
            i += 2;
        } else { /* absolute: `val` literal pixels, padded to 16 bits */
            size_t bytes = four ? (val + 1) / 2 : val;
            if (bytes > n - i) return false;
            for (unsigned k = 0; k < val; k++, x++) {
                unsigned v = four ? (k & 1 ? s[i + k / 2] & 15 : s[i + k / 2] >> 4) : s[i + k];
                if (x < w && y < h) idx[y * w + x] = (uint8_t)v;
            }
            i += bytes + (bytes & 1);
        }
        if (y >= h) return true;
    }
    return true; /* a missing end marker is tolerated */
}

/* Reads the headers and palette; returns the pixel data offset or 0. */
static size_t read_headers(const uint8_t *d, size_t n, bmp_info *bi, char *why, size_t why_size) {
    if (n < 26) {
        snprintf(why, why_size, "the file is shorter than its headers");
        return 0;
    }
    size_t off = le32(d + 10), hs = le32(d + 14);
    if (hs != 12 && (hs < 40 || hs > 124)) {
        snprintf(why, why_size, "unknown header size %zu", hs);
        return 0;
    }
    if (14 + hs > n) {
        snprintf(why, why_size, "the file is shorter than its headers");
        return 0;
    }
    const uint8_t *h = d + 14;
    int64_t height;
    uint32_t rmask = 0, gmask = 0, bmask = 0, colors_used = 0;
    if (hs == 12) {
        bi->width = le16(h + 4);
        height = (int16_t)le16(h + 6);
        bi->bpp = le16(h + 10);
        bi->compression = BI_RGB;
    } else {
        bi->width = (int32_t)le32(h + 4);
        height = (int32_t)le32(h + 8);
        bi->bpp = le16(h + 14);
        bi->compression = le32(h + 16);
        colors_used = le32(h + 32);
        if (hs >= 52) {
            rmask = le32(h + 40);
            gmask = le32(h + 44);
            bmask = le32(h + 48);
        }
    }
    bi->top_down = height < 0;
    bi->height = height < 0 ? -height : height;
    size_t pal_at = 14 + hs;
    if (hs == 40 && (bi->compression == BI_BITFIELDS || bi->compression == BI_ALPHABITFIELDS)) {
        size_t nm = bi->compression == BI_BITFIELDS ? 3 : 4;
        if (pal_at + 4 * nm > n) {
            snprintf(why, why_size, "the file ends inside the bit masks");
            return 0;
        }
        rmask = le32(d + pal_at);
        gmask = le32(d + pal_at + 4);
        bmask = le32(d + pal_at + 8);
        pal_at += 4 * nm;
    }
    bool masked = bi->compression == BI_BITFIELDS || bi->compression == BI_ALPHABITFIELDS;
    bool ok_combo = (bi->compression == BI_RGB &&
                     (bi->bpp == 1 || bi->bpp == 2 || bi->bpp == 4 || bi->bpp == 8 || bi->bpp == 16 || bi->bpp == 24 ||
                      bi->bpp == 32)) ||
        (bi->compression == BI_RLE8 && bi->bpp == 8) || (bi->compression == BI_RLE4 && bi->bpp == 4) ||
        (masked && (bi->bpp == 16 || bi->bpp == 32));
    if (!ok_combo) {
        snprintf(why, why_size, "%u bits per pixel with compression %u is not supported", bi->bpp, bi->compression);
        return 0;
    }
    if (!masked) { /* the defaults: 5-5-5 for 16 bits, 8-8-8 for 32 */
        rmask = bi->bpp == 16 ? 0x7c00 : 0xff0000;
        gmask = bi->bpp == 16 ? 0x03e0 : 0x00ff00;
        bmask = bi->bpp == 16 ? 0x001f : 0x0000ff;
    }
    bi->masks[0] = make_mask(rmask);
    bi->masks[1] = make_mask(gmask);
    bi->masks[2] = make_mask(bmask);
    if (bi->bpp <= 8) {
        size_t entry = hs == 12 ? 3 : 4, most = (size_t)1 << bi->bpp;
        size_t count = colors_used && colors_used < most ? colors_used : most;
        /* Files may store fewer entries than they could use: take what
         * fits before the pixels, and black for the rest. */
        memset(bi->palette, 0, sizeof bi->palette);
        for (size_t k = 0; k < count && pal_at + (k + 1) * entry <= n && (off == 0 || pal_at + (k + 1) * entry <= off);
             k++) {
            const uint8_t *e = d + pal_at + k * entry;
            bi->palette[k][0] = e[2];
            bi->palette[k][1] = e[1];
            bi->palette[k][2] = e[0];
        }
        bi->colors = (unsigned)count;
    }
    if (off == 0 || off > n) {
        snprintf(why, why_size, "the pixel data offset %zu is outside the file", off);
        return 0;
    }
    return off;
}

bool ref_image_decode_bmp(const uint8_t *data, size_t size, ref_image_rgb *img, char *why, size_t why_size) {
    bmp_info bi;
    memset(&bi, 0, sizeof bi);
    size_t off = read_headers(data, size, &bi, why, why_size);
    if (!off || !ref_image_rgb_alloc(img, bi.width, bi.height, why, why_size)) return false;
    int64_t w = bi.width, h = bi.height;
    const uint8_t *px = data + off;
    size_t avail = size - off;
    uint8_t *idx = NULL;
    if (bi.compression == BI_RLE8 || bi.compression == BI_RLE4) {
        idx = calloc((size_t)(w * h), 1);
        if (!idx) {
            snprintf(why, why_size, "out of memory");
            return false;
        }
        if (!decode_rle(px, avail, bi.compression == BI_RLE4, &bi, idx)) {
            free(idx);
            snprintf(why, why_size, "the RLE data is truncated");
            return false;
        }
        for (int64_t y = 0; y < h; y++) {
            uint8_t *dst = img->pixels + (size_t)(bi.top_down ? y : h - 1 - y) * (size_t)w * 3;
            for (int64_t x = 0; x < w; x++) memcpy(dst + 3 * x, bi.palette[idx[y * w + x]], 3);
        }
        free(idx);
        return true;
    }
    size_t stride = (size_t)((w * bi.bpp + 31) / 32) * 4;
    if (stride && avail / stride < (size_t)h) {
        snprintf(why, why_size, "the pixel data is truncated");
        return false;
    }
    for (int64_t y = 0; y < h; y++) {
        const uint8_t *row = px + (size_t)y * stride;
        uint8_t *dst = img->pixels + (size_t)(bi.top_down ? y : h - 1 - y) * (size_t)w * 3;
        for (int64_t x = 0; x < w; x++, dst += 3) {
            if (bi.bpp <= 8) {
                size_t bit = (size_t)x * bi.bpp;
                unsigned v = (row[bit / 8] >> (8 - bi.bpp - bit % 8)) & ((1u << bi.bpp) - 1);
                memcpy(dst, bi.palette[v], 3);
            } else if (bi.bpp == 24) {
                const uint8_t *s = row + 3 * x;
                dst[0] = s[2];
                dst[1] = s[1];
                dst[2] = s[0];
            } else {
                uint32_t v = bi.bpp == 16 ? le16(row + 2 * x) : le32(row + 4 * x);
                for (int k = 0; k < 3; k++) dst[k] = channel(v, &bi.masks[k]);
            }
        }
    }
    return true;
}
