/* The one reader of protobuf wire-format framing in core/: a bounded cursor
 * over a byte span that reads varints, keys and field values, every length
 * checked against what is left of the span. The loader's nesting check
 * (loader_wire.c) and its one-initializer-at-a-time unpack (loader_split.c)
 * both read fields with it, so they agree on what is malformed. */
#ifndef TESSERA_CORE_WIRE_READER_H
#define TESSERA_CORE_WIRE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The wire types ONNX files use; groups (3, 4) and 6, 7 are refused. */
enum { WIRE_VARINT = 0, WIRE_I64 = 1, WIRE_LEN = 2, WIRE_I32 = 5 };

/* Offsets into base; the cursor never reads at or past `end`. */
typedef struct wire_cursor {
    const uint8_t *base;
    size_t pos, end;
} wire_cursor;

/* One field, as offsets into the cursor's base. */
typedef struct wire_field {
    size_t start;   /* its key */
    size_t len_at;  /* its length varint (WIRE_LEN) */
    size_t payload; /* its value */
    size_t len;     /* bytes of value (WIRE_LEN, I32, I64; 0 for VARINT) */
    uint64_t id;    /* may be 0: whether that is an error is the caller's */
    unsigned type;
} wire_field;

/* A varint of at most ten bytes (a longer run of continuation bytes, or
 * one cut by the end, is refused); bits past 64 are dropped, as
 * protobuf-c drops them. False leaves pos wherever the read stopped. */
bool wire_read_varint(wire_cursor *c, uint64_t *out);

/* Reads the field at pos and moves past it. False for a cut key or value,
 * a length past the span's end, and wire types ONNX never writes. */
bool wire_next_field(wire_cursor *c, wire_field *f);

/* A cursor over the value of a field read from base. */
static inline wire_cursor wire_value_cursor(const uint8_t *base, const wire_field *f) {
    return (wire_cursor){base, f->payload, f->payload + f->len};
}

#endif
