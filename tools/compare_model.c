/*
 * The node list of an ONNX model file, read straight from the protobuf wire
 * format: ModelProto.graph (7) -> GraphProto.node (1) -> NodeProto input (1),
 * output (2), name (3), op_type (4), domain (7). Everything else is skipped.
 *
 * `tessera compare --per-node` needs each original node's *inputs*, to say
 * whether a divergent node was fed diverging values; the public API lists
 * the session's nodes and outputs only, so the command reads the file itself.
 * Every length is checked against what is left of the buffer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compare_tool.h"

typedef struct pb_reader {
    const uint8_t *p, *end;
    const uint8_t *base; /* the file's first byte, for offsets */
} pb_reader;

enum { WIRE_VARINT = 0, WIRE_FIXED64 = 1, WIRE_LEN = 2, WIRE_FIXED32 = 5 };

static bool read_varint(pb_reader *r, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end) return false;
        uint8_t b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

/* Reads one field's key and, for length-delimited fields, its body. Other
 * wire types are skipped (body left empty). */
static bool read_field(pb_reader *r, uint64_t *field, int *wire, pb_reader *body) {
    uint64_t key;
    if (!read_varint(r, &key)) return false;
    *field = key >> 3;
    *wire = (int)(key & 7);
    body->p = body->end = r->p;
    body->base = r->base;
    uint64_t len;
    switch (*wire) {
    case WIRE_VARINT: return read_varint(r, &len);
    case WIRE_FIXED64: len = 8; break;
    case WIRE_FIXED32: len = 4; break;
    case WIRE_LEN:
        if (!read_varint(r, &len)) return false;
        break;
    default: return false; /* groups: not used by ONNX */
    }
    if (len > (uint64_t)(r->end - r->p)) return false;
    body->p = r->p;
    body->end = r->p + len;
    r->p += len;
    return true;
}

static char *dup_body(const pb_reader *b) {
    size_t n = (size_t)(b->end - b->p);
    char *s = malloc(n + 1);
    if (!s) return NULL;
    memcpy(s, b->p, n);
    s[n] = 0;
    return s;
}

static bool push_string(char ***list, size_t *count, const pb_reader *b) {
    char **grown = realloc(*list, (*count + 1) * sizeof *grown);
    if (!grown) return false;
    *list = grown;
    if (!(grown[*count] = dup_body(b))) return false;
    (*count)++;
    return true;
}

static void free_node(cmpx_node *n) {
    free(n->name);
    free(n->op_type);
    free(n->domain);
    for (size_t i = 0; i < n->input_count; i++) free(n->inputs[i]);
    for (size_t i = 0; i < n->output_count; i++) free(n->outputs[i]);
    free(n->inputs);
    free(n->outputs);
}

static bool read_node(pb_reader r, cmpx_node *n) {
    memset(n, 0, sizeof *n);
    n->raw_offset = (size_t)(r.p - r.base);
    n->raw_size = (size_t)(r.end - r.p);
    while (r.p < r.end) {
        uint64_t field;
        int wire;
        pb_reader b;
        if (!read_field(&r, &field, &wire, &b)) return false;
        if (wire != WIRE_LEN) continue;
        bool ok = true;
        switch (field) {
        case 1: ok = push_string(&n->inputs, &n->input_count, &b); break;
        case 2: ok = push_string(&n->outputs, &n->output_count, &b); break;
        case 3: free(n->name); ok = (n->name = dup_body(&b)) != NULL; break;
        case 4: free(n->op_type); ok = (n->op_type = dup_body(&b)) != NULL; break;
        case 7: free(n->domain); ok = (n->domain = dup_body(&b)) != NULL; break;
        default: break;
        }
        if (!ok) return false;
    }
    if (!n->name) n->name = strdup("");
    if (!n->op_type) n->op_type = strdup("");
    if (!n->domain) n->domain = strdup("");
    return n->name && n->op_type && n->domain;
}

static bool add_span(cmpx_span **list, size_t *count, const pb_reader *b, char *name) {
    cmpx_span *grown = realloc(*list, (*count + 1) * sizeof *grown);
    if (!grown) return false;
    *list = grown;
    grown[*count].offset = (size_t)(b->p - b->base);
    grown[*count].size = (size_t)(b->end - b->p);
    grown[*count].name = name;
    (*count)++;
    return true;
}

/* An initializer: its span and its name (TensorProto field 8). */
static bool add_initializer(cmpx_model *m, const pb_reader *tensor) {
    pb_reader r = *tensor;
    char *name = NULL;
    while (r.p < r.end) {
        uint64_t field;
        int wire;
        pb_reader b;
        if (!read_field(&r, &field, &wire, &b)) break;
        if (field == 8 && wire == WIRE_LEN) {
            free(name);
            name = dup_body(&b);
        }
    }
    if (!name || !add_span(&m->initializers, &m->initializer_count, tensor, name)) {
        free(name);
        return false;
    }
    return true;
}

static bool read_graph(pb_reader r, cmpx_model *m, char *err, size_t err_size) {
    while (r.p < r.end) {
        uint64_t field;
        int wire;
        pb_reader b;
        if (!read_field(&r, &field, &wire, &b)) {
            snprintf(err, err_size, "malformed GraphProto");
            return false;
        }
        if (field == 5 && wire == WIRE_LEN) {
            if (!add_initializer(m, &b)) {
                snprintf(err, err_size, "malformed or unreadable initializer");
                return false;
            }
            continue;
        }
        if (field != 1 || wire != WIRE_LEN) continue;
        cmpx_node *grown = realloc(m->nodes, (m->node_count + 1) * sizeof *grown);
        if (!grown) {
            snprintf(err, err_size, "out of memory");
            return false;
        }
        m->nodes = grown;
        if (!read_node(b, &m->nodes[m->node_count])) {
            free_node(&m->nodes[m->node_count]);
            snprintf(err, err_size, "malformed NodeProto (node %zu)", m->node_count);
            return false;
        }
        m->node_count++;
    }
    return true;
}

bool cmpx_model_load(const char *path, cmpx_model *out, char *err, size_t err_size) {
    memset(out, 0, sizeof *out);
    void *bytes;
    size_t size;
    if (!tio_read_file(path, &bytes, &size)) {
        snprintf(err, err_size, "cannot read %s: %s", path, tio_file_error(errno));
        return false;
    }
    pb_reader r = {bytes, (const uint8_t *)bytes + size, bytes};
    bool ok = true, found = false;
    while (ok && r.p < r.end) {
        uint64_t field;
        int wire;
        pb_reader b;
        if (!read_field(&r, &field, &wire, &b)) {
            snprintf(err, err_size, "%s: malformed ModelProto", path);
            ok = false;
        } else if (field == 7 && wire == WIRE_LEN && !found) {
            found = true;
            ok = read_graph(b, out, err, err_size);
        } else if (field == 1 && wire == WIRE_VARINT) {
            pb_reader v = {b.p, r.p, b.base};
            ok = read_varint(&v, &out->ir_version);
        } else if (field == 8 && wire == WIRE_LEN) {
            ok = add_span(&out->opsets, &out->opset_count, &b, NULL);
            if (!ok) snprintf(err, err_size, "out of memory");
        }
    }
    if (ok && !found) {
        snprintf(err, err_size, "%s: no graph in the model", path);
        ok = false;
    }
    free(bytes);
    if (!ok) cmpx_model_free(out);
    return ok;
}

void cmpx_model_free(cmpx_model *m) {
    for (size_t i = 0; i < m->node_count; i++) free_node(&m->nodes[i]);
    free(m->nodes);
    for (size_t i = 0; i < m->initializer_count; i++) free(m->initializers[i].name);
    free(m->initializers);
    free(m->opsets);
    memset(m, 0, sizeof *m);
}
