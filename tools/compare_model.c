/*
 * The node list of an ONNX model file, read straight from the protobuf wire
 * format: ModelProto.graph (7) -> GraphProto.node (1) -> NodeProto input (1),
 * output (2), name (3), op_type (4), domain (7), and the bodies of If, Loop,
 * Scan and SequenceMap nodes (AttributeProto g named then_branch,
 * else_branch or body: their nodes, inputs, outputs, initializer names).
 * Everything else is skipped.
 *
 * Why not the public API, which lists the session's nodes with their inputs
 * and outputs (tsr_node_info, tsr_session_node_find):
 * - `tessera compare --per-node` walks and names the nodes as the file has
 *   them, while the session's graph is rewritten (Constant nodes folded
 *   away, function ops expanded, Einsum lowered); and to follow values into
 *   and out of bodies it needs what the API does not list: a body's nodes,
 *   its inputs, outputs and initializers, and Scan's num_scan_inputs.
 * - Running the divergent node alone (compare_isolate.c) and `tessera
 *   reduce`'s cuts (reduce_model.c) copy NodeProto, initializer and opset
 *   bytes verbatim: they need where each lies in the file.
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

static void free_strings(char **list, size_t count) {
    for (size_t i = 0; i < count; i++) free(list[i]);
    free(list);
}

static void free_node(cmpx_node *n);

static void free_body(cmpx_body *b) {
    free(b->attribute);
    for (size_t i = 0; i < b->node_count; i++) free_node(&b->nodes[i]);
    free(b->nodes);
    free_strings(b->inputs, b->input_count);
    free_strings(b->outputs, b->output_count);
    free_strings(b->initializers, b->initializer_count);
}

static void free_node(cmpx_node *n) {
    free(n->name);
    free(n->op_type);
    free(n->domain);
    free_strings(n->inputs, n->input_count);
    free_strings(n->outputs, n->output_count);
    for (size_t i = 0; i < n->body_count; i++) free_body(&n->bodies[i]);
    free(n->bodies);
}

/* Bodies nest at most this deep here (the library's default limit is 64). */
#define MAX_BODY_DEPTH 64

static bool read_node(pb_reader r, cmpx_node *n, int depth);

/* The name (field 1) of a ValueInfoProto or, with field 8, a TensorProto. */
static bool push_name_of(char ***list, size_t *count, pb_reader r, uint64_t name_field) {
    while (r.p < r.end) {
        uint64_t field;
        int wire;
        pb_reader b;
        if (!read_field(&r, &field, &wire, &b)) return false;
        if (field == name_field && wire == WIRE_LEN) return push_string(list, count, &b);
    }
    return push_string(list, count, &(pb_reader){r.end, r.end, r.base});
}

/* A control-flow body: its nodes (with their own bodies), the names of its
 * inputs, outputs and initializers. */
static bool read_body(pb_reader r, cmpx_body *body, int depth) {
    while (r.p < r.end) {
        uint64_t field;
        int wire;
        pb_reader b;
        if (!read_field(&r, &field, &wire, &b)) return false;
        if (wire != WIRE_LEN) continue;
        bool ok = true;
        if (field == 1) {
            cmpx_node *grown = realloc(body->nodes, (body->node_count + 1) * sizeof *grown);
            if (!grown) return false;
            body->nodes = grown;
            ok = read_node(b, &body->nodes[body->node_count], depth);
            body->node_count++; /* freed with the body even when half read */
        } else if (field == 11) {
            ok = push_name_of(&body->inputs, &body->input_count, b, 1);
        } else if (field == 12) {
            ok = push_name_of(&body->outputs, &body->output_count, b, 1);
        } else if (field == 5) {
            ok = push_name_of(&body->initializers, &body->initializer_count, b, 8);
        }
        if (!ok) return false;
    }
    return true;
}

/* An AttributeProto: a body (g, field 6, named then_branch, else_branch or
 * body) is read into n->bodies; Scan's num_scan_inputs (i, field 3) kept. */
static bool read_attribute(pb_reader r, cmpx_node *n, int depth) {
    pb_reader name = {0}, graph = {0};
    uint64_t ival = 0;
    bool has_graph = false;
    while (r.p < r.end) {
        uint64_t field;
        int wire;
        pb_reader b;
        if (!read_field(&r, &field, &wire, &b)) return false;
        if (field == 1 && wire == WIRE_LEN) name = b;
        if (field == 6 && wire == WIRE_LEN) {
            graph = b;
            has_graph = true;
        }
        if (field == 3 && wire == WIRE_VARINT) {
            pb_reader v = {b.p, r.p, b.base};
            if (!read_varint(&v, &ival)) return false;
        }
    }
    size_t len = (size_t)(name.end - name.p);
    if (len == 15 && memcmp(name.p, "num_scan_inputs", 15) == 0) n->num_scan_inputs = (int64_t)ival;
    bool body_name =
        (len == 11 && (memcmp(name.p, "then_branch", 11) == 0 || memcmp(name.p, "else_branch", 11) == 0)) ||
        (len == 4 && memcmp(name.p, "body", 4) == 0);
    /* deeper bodies are not walked: the node itself still is */
    if (!has_graph || !body_name || depth >= MAX_BODY_DEPTH) return true;
    cmpx_body *grown = realloc(n->bodies, (n->body_count + 1) * sizeof *grown);
    if (!grown) return false;
    n->bodies = grown;
    cmpx_body *body = &n->bodies[n->body_count++];
    memset(body, 0, sizeof *body);
    if (!(body->attribute = dup_body(&name))) return false;
    return read_body(graph, body, depth + 1);
}

static bool read_node(pb_reader r, cmpx_node *n, int depth) {
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
        case 3:
            free(n->name);
            ok = (n->name = dup_body(&b)) != NULL;
            break;
        case 4:
            free(n->op_type);
            ok = (n->op_type = dup_body(&b)) != NULL;
            break;
        case 5: ok = read_attribute(b, n, depth); break;
        case 7:
            free(n->domain);
            ok = (n->domain = dup_body(&b)) != NULL;
            break;
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
        if (!read_node(b, &m->nodes[m->node_count], 0)) {
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

void cmpx_node_label(const cmpx_model *m, size_t i, char *buf, size_t size) {
    const cmpx_node *n = &m->nodes[i];
    if (*n->name) snprintf(buf, size, "%s", n->name);
    else snprintf(buf, size, "#%zu %s (-> %s)", i, n->op_type, n->output_count ? n->outputs[0] : "nothing");
}
