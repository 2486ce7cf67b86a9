/* A nesting check on raw protobuf bytes, run before protobuf-c unpacks
 * them: protobuf-c recurses per nested message without a bound, so a small
 * file of deeply nested messages could exhaust the stack. It bounds message
 * nesting and, separately, subgraph nesting (a GraphProto inside an
 * AttributeProto), and says where the latter went too deep. */
#include <string.h>

#include "loader_internal.h"
#include "wire_reader.h"

typedef struct wire_scan {
    int max_graphs;
    wire_report *r;
    unsigned top_seen[64]; /* occurrences of each ModelProto field so far */
} wire_scan;

/* Notes the path to the message being entered, for the report: the
 * ModelProto field (level 0), the node of that graph or function (level 1),
 * and that node's name when its bytes come before its attributes (level 2,
 * as every serializer writes them). */
static void note_path(wire_scan *w, int level, const ProtobufCFieldDescriptor *f, unsigned *nodes_seen) {
    wire_report *r = w->r;
    if (level == 0) {
        r->top_field = f->name;
        r->top_index = f->id < 64 ? w->top_seen[f->id]++ : 0;
        r->top_repeated = f->label == PROTOBUF_C_LABEL_REPEATED;
        r->node_index = -1;
        r->node_name = NULL;
        r->node_name_len = 0;
    } else if (level == 1 && strcmp(f->name, "node") == 0) {
        r->node_index = (long)(*nodes_seen)++;
        r->node_name = NULL;
        r->node_name_len = 0;
    }
}

/* Returns WIRE_OK, or what was exceeded; anything malformed (groups
 * included: ONNX has none) stops the scan of that message with WIRE_OK and
 * is left to protobuf-c to report. */
static int scan(wire_scan *w, wire_cursor c, const ProtobufCMessageDescriptor *desc, int depth_left, int graphs,
                int level) {
    if (depth_left <= 0) return WIRE_MESSAGES;
    unsigned nodes_seen = 0;
    while (c.pos < c.end) {
        wire_field fd;
        if (!wire_next_field(&c, &fd)) return WIRE_OK;
        if (fd.type != WIRE_LEN) continue;
        const ProtobufCFieldDescriptor *f =
            fd.id <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(desc, (unsigned)fd.id) : NULL;
        if (f && level == 2 && desc == &onnx__node_proto__descriptor && f->type == PROTOBUF_C_TYPE_STRING &&
            strcmp(f->name, "name") == 0) {
            w->r->node_name = c.base + fd.payload;
            w->r->node_name_len = fd.len;
        }
        if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
            int g = graphs;
            if (desc == &onnx__attribute_proto__descriptor && f->descriptor == &onnx__graph_proto__descriptor &&
                ++g > w->max_graphs) {
                w->r->graphs_found = g;
                return WIRE_GRAPHS;
            }
            if (level <= 1) note_path(w, level, f, &nodes_seen);
            int st = scan(w, wire_value_cursor(c.base, &fd), f->descriptor, depth_left - 1, g, level + 1);
            if (st != WIRE_OK) return st;
        }
    }
    return WIRE_OK;
}

int loader_wire_check(const uint8_t *bytes, size_t size, const ProtobufCMessageDescriptor *desc, int max_messages,
                      int max_graphs, wire_report *r) {
    memset(r, 0, sizeof *r);
    r->node_index = -1;
    wire_scan w = {max_graphs, r, {0}};
    return scan(&w, (wire_cursor){bytes, 0, size}, desc, max_messages, 0, 0);
}
