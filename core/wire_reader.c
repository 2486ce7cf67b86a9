/* Protobuf wire-format framing for the loader's raw-byte passes
 * (wire_reader.h): the varint and the field, bounded by the cursor's end. */
#include "wire_reader.h"

bool wire_read_varint(wire_cursor *c, uint64_t *out) {
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64 && c->pos < c->end; shift += 7) {
        uint8_t byte = c->base[c->pos++];
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

bool wire_next_field(wire_cursor *c, wire_field *f) {
    uint64_t key, v;
    f->start = c->pos;
    if (!wire_read_varint(c, &key)) return false;
    f->id = key >> 3;
    f->type = (unsigned)(key & 7);
    f->len_at = f->payload = c->pos;
    switch (f->type) {
    case WIRE_VARINT: f->len = 0; return wire_read_varint(c, &v);
    case WIRE_I64: f->len = 8; break;
    case WIRE_I32: f->len = 4; break;
    case WIRE_LEN:
        if (!wire_read_varint(c, &v) || v > c->end - c->pos) return false;
        f->payload = c->pos;
        f->len = (size_t)v;
        break;
    default: return false;
    }
    if (f->len > c->end - f->payload) return false;
    c->pos = f->payload + f->len;
    return true;
}
