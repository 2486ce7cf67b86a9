/* A nesting-depth check on raw protobuf bytes, run before protobuf-c unpacks
 * them: protobuf-c recurses per nested message without a bound, so a small
 * file of deeply nested messages could exhaust the stack. */
#include "loader_internal.h"

static int read_varint(const uint8_t **p, const uint8_t *end, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*p >= end) return 0;
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 1;
        }
    }
    return 0;
}

/* Returns 0 only when the nesting limit is exceeded; anything malformed
 * stops the scan with 1 and is left to protobuf-c to report. */
static int scan(const uint8_t *p, const uint8_t *end, const ProtobufCMessageDescriptor *desc,
                int depth_left) {
    if (depth_left <= 0) return 0;
    while (p < end) {
        uint64_t key, len;
        if (!read_varint(&p, end, &key)) return 1;
        switch (key & 7) {
        case 0:
            if (!read_varint(&p, end, &len)) return 1;
            break;
        case 1:
            if (end - p < 8) return 1;
            p += 8;
            break;
        case 5:
            if (end - p < 4) return 1;
            p += 4;
            break;
        case 2: {
            if (!read_varint(&p, end, &len) || len > (uint64_t)(end - p)) return 1;
            uint64_t id = key >> 3;
            const ProtobufCFieldDescriptor *f =
                id <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(desc, (unsigned)id) : NULL;
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE &&
                !scan(p, p + len, f->descriptor, depth_left - 1))
                return 0;
            p += len;
            break;
        }
        default:
            return 1; /* groups are not used by ONNX; protobuf-c decides */
        }
    }
    return 1;
}

int loader_wire_depth_ok(const uint8_t *bytes, size_t size, const ProtobufCMessageDescriptor *desc,
                         int limit) {
    return scan(bytes, bytes + size, desc, limit);
}
