/* Protobuf wire format, written by hand: see pb_writer.h. */
#include "pb_writer.h"

#include <stdlib.h>
#include <string.h>

void pb_put_bytes(pb_buf *b, const void *data, size_t n) {
    if (b->failed) return;
    if (n > SIZE_MAX / 2 - b->len) {
        b->failed = true;
        return;
    }
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) cap *= 2;
        uint8_t *grown = realloc(b->p, cap);
        if (!grown) {
            b->failed = true;
            return;
        }
        b->p = grown;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->len, data, n);
    b->len += n;
}

void pb_put_varint(pb_buf *b, uint64_t v) {
    uint8_t tmp[10];
    size_t n = 0;
    do {
        tmp[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    pb_put_bytes(b, tmp, n);
}

void pb_put_varint_field(pb_buf *b, unsigned field, uint64_t v) {
    pb_put_varint(b, (uint64_t)field << 3);
    pb_put_varint(b, v);
}

void pb_put_len_field(pb_buf *b, unsigned field, const void *data, size_t n) {
    pb_put_varint(b, (uint64_t)field << 3 | 2);
    pb_put_varint(b, n);
    pb_put_bytes(b, data, n);
}

void pb_put_message(pb_buf *b, unsigned field, pb_buf *inner) {
    if (inner->failed) b->failed = true;
    pb_put_len_field(b, field, inner->p, inner->len);
    free(inner->p);
    memset(inner, 0, sizeof *inner);
}
