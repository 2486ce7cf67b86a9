/*
 * Cutting candidate subgraphs out of a model file for `tessera reduce`.
 *
 * A cut is a set of the model's nodes. Its ModelProto holds those nodes'
 * NodeProto bytes verbatim (in file order), the initializers they read, the
 * model's opset imports and local functions, and:
 *   - as graph inputs, every value a kept node reads that no kept node makes
 *     and no initializer holds, typed from the baseline's captured value
 *     (the run feeds that value);
 *   - as graph outputs, every value a kept node makes that a node outside
 *     the cut reads, that the model outputs, or that no kept node reads.
 * Everything here is wire-format work on bytes; the library is not called
 * (the parent process must not call it: its children fork from it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pb_writer.h"
#include "reduce_tool.h"

/* --- names to indices ---------------------------------------------------- */
static size_t hash_str(const char *s) {
    size_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static bool map_grow(rdc_map *m) {
    size_t cap = m->cap ? m->cap * 2 : 64;
    rdc_map bigger = {calloc(cap, sizeof(char *)), calloc(cap, sizeof(size_t)), cap, 0};
    if (!bigger.keys || !bigger.vals) {
        free(bigger.keys);
        free(bigger.vals);
        return false;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i]) continue;
        size_t k = hash_str(m->keys[i]) & (cap - 1);
        while (bigger.keys[k]) k = (k + 1) & (cap - 1);
        bigger.keys[k] = m->keys[i];
        bigger.vals[k] = m->vals[i];
        bigger.count++;
    }
    free(m->keys);
    free(m->vals);
    *m = bigger;
    return true;
}

bool rdc_map_put(rdc_map *m, const char *key, size_t val) {
    if ((m->count + 1) * 2 > m->cap && !map_grow(m)) return false;
    size_t k = hash_str(key) & (m->cap - 1);
    while (m->keys[k]) {
        if (strcmp(m->keys[k], key) == 0) return true;
        k = (k + 1) & (m->cap - 1);
    }
    m->keys[k] = key;
    m->vals[k] = val;
    m->count++;
    return true;
}

bool rdc_map_get(const rdc_map *m, const char *key, size_t *val) {
    if (!m->cap) return false;
    size_t k = hash_str(key) & (m->cap - 1);
    while (m->keys[k]) {
        if (strcmp(m->keys[k], key) == 0) {
            if (val) *val = m->vals[k];
            return true;
        }
        k = (k + 1) & (m->cap - 1);
    }
    return false;
}

void rdc_map_free(rdc_map *m) {
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* --- protobuf wire format -------------------------------------------------- */

static bool get_varint(const uint8_t **p, const uint8_t *end, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*p >= end) return false;
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

/* One field of a message: its number, wire type and (length-delimited)
 * body. False at the end or on malformed bytes (*bad then set). */
static bool next_field(const uint8_t **p, const uint8_t *end, uint64_t *field, int *wire, const uint8_t **body,
                       const uint8_t **body_end, bool *bad) {
    if (*p >= end) return false;
    uint64_t key, len = 0;
    *bad = true;
    if (!get_varint(p, end, &key)) return false;
    *field = key >> 3;
    *wire = (int)(key & 7);
    switch (*wire) {
    case 0: /* the body is the varint itself */
        *body = *p;
        if (!get_varint(p, end, &len)) return false;
        *body_end = *p;
        *bad = false;
        return true;
    case 1: len = 8; break;
    case 5: len = 4; break;
    case 2:
        if (!get_varint(p, end, &len)) return false;
        break;
    default: return false;
    }
    if (len > (uint64_t)(end - *p)) return false;
    *body = *p;
    *body_end = *p + len;
    *p += len;
    *bad = false;
    return true;
}

#define MAX_SUBGRAPH_DEPTH 64

static bool push_name(char ***names, size_t *count, const uint8_t *p, const uint8_t *end) {
    char **grown = realloc(*names, (*count + 1) * sizeof *grown);
    if (!grown) return false;
    *names = grown;
    if (!(grown[*count] = strndup((const char *)p, (size_t)(end - p)))) return false;
    (*count)++;
    return true;
}

static bool scan_node_subgraphs(const uint8_t *p, const uint8_t *end, int depth, bool inner, char ***names,
                                size_t *count);

/* The node inputs of a GraphProto (a subgraph), and of its subgraphs. */
static bool scan_graph_reads(const uint8_t *p, const uint8_t *end, int depth, char ***names, size_t *count) {
    uint64_t field;
    int wire;
    const uint8_t *b, *be;
    bool bad = false;
    if (depth > MAX_SUBGRAPH_DEPTH) return false;
    while (next_field(&p, end, &field, &wire, &b, &be, &bad))
        if (field == 1 && wire == 2 && !scan_node_subgraphs(b, be, depth, true, names, count)) return false;
    return !bad;
}

/* What the subgraphs of a NodeProto read (with `inner`, the node's own
 * inputs too: it lies inside a subgraph). Over-approximates: a name made
 * inside the subgraph is listed too, and is dropped later because the main
 * graph does not know it (ONNX names are unique across scopes). */
static bool scan_node_subgraphs(const uint8_t *p, const uint8_t *end, int depth, bool inner, char ***names,
                                size_t *count) {
    uint64_t field;
    int wire;
    const uint8_t *b, *be;
    bool bad = false;
    while (next_field(&p, end, &field, &wire, &b, &be, &bad)) {
        if (wire != 2) continue;
        if (field == 1 && inner) {
            if (be > b && !push_name(names, count, b, be)) return false;
        } else if (field == 5) { /* AttributeProto: g (6), graphs (11) */
            uint64_t af;
            int aw;
            const uint8_t *ab, *abe;
            bool abad = false;
            while (next_field(&b, be, &af, &aw, &ab, &abe, &abad))
                if ((af == 6 || af == 11) && aw == 2 && !scan_graph_reads(ab, abe, depth + 1, names, count))
                    return false;
            if (abad) return false;
        }
    }
    return !bad;
}

/* The spans of ModelProto.functions (field 25), and of the main graph's
 * sparse initializers (GraphProto field 15) with their names
 * (SparseTensorProto.values.name), to copy them whole. */
static bool scan_model(rdc_graph *g, char *err, size_t err_size) {
    const uint8_t *p = g->file, *end = g->file + g->file_size, *b, *be;
    uint64_t field;
    int wire;
    bool bad = false, seen_graph = false;
    while (next_field(&p, end, &field, &wire, &b, &be, &bad)) {
        if (wire != 2) continue;
        if (field == 25) {
            cmpx_span *grown = realloc(g->functions, (g->function_count + 1) * sizeof *grown);
            if (!grown) goto bad;
            g->functions = grown;
            grown[g->function_count++] = (cmpx_span){(size_t)(b - g->file), (size_t)(be - b), NULL};
        } else if (field == 7 && !seen_graph) {
            seen_graph = true;
            const uint8_t *gb, *gbe;
            uint64_t gf;
            int gw;
            bool gbad = false;
            while (next_field(&b, be, &gf, &gw, &gb, &gbe, &gbad)) {
                if (gf != 15 || gw != 2) continue;
                /* SparseTensorProto.values (1) -> TensorProto.name (8) */
                char *name = NULL;
                const uint8_t *sb = gb, *vb, *vbe, *nb, *nbe;
                uint64_t sf, nf;
                int sw, nw;
                bool sbad = false, nbad = false;
                while (next_field(&sb, gbe, &sf, &sw, &vb, &vbe, &sbad))
                    if (sf == 1 && sw == 2)
                        while (next_field(&vb, vbe, &nf, &nw, &nb, &nbe, &nbad))
                            if (nf == 8 && nw == 2) {
                                free(name);
                                name = strndup((const char *)nb, (size_t)(nbe - nb));
                            }
                cmpx_span *grown = name ? realloc(g->sparse, (g->sparse_count + 1) * sizeof *grown) : NULL;
                if (!grown) {
                    free(name);
                    goto bad;
                }
                g->sparse = grown;
                grown[g->sparse_count++] = (cmpx_span){(size_t)(gb - g->file), (size_t)(gbe - gb), name};
            }
            if (gbad) goto bad;
        }
    }
    if (!bad) return true;
bad:
    snprintf(err, err_size, "%s: malformed ModelProto", g->path);
    return false;
}

/* --- the graph's wiring ----------------------------------------------------- */
bool rdc_graph_load(const char *path, rdc_graph *g, char *err, size_t err_size) {
    memset(g, 0, sizeof *g);
    g->path = path;
    if (!cmpx_model_load(path, &g->m, err, err_size)) return false;
    void *bytes = NULL;
    if (!tio_read_file(path, &bytes, &g->file_size)) {
        snprintf(err, err_size, "cannot read %s: %s", path, tio_file_error(errno));
        return false;
    }
    g->file = bytes;
    if (!scan_model(g, err, err_size)) return false;
    const char *slash = strrchr(path, '/');
    g->base_dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
    size_t n = g->m.node_count;
    g->producer = calloc(n + 1, sizeof *g->producer);
    g->consumers = calloc(n + 1, sizeof *g->consumers);
    g->consumer_count = calloc(n + 1, sizeof *g->consumer_count);
    g->out_base = calloc(n + 1, sizeof *g->out_base);
    if (!g->base_dir || !g->producer || !g->consumers || !g->consumer_count || !g->out_base) goto oom;
    for (size_t i = 0; i < g->m.initializer_count; i++)
        if (!rdc_map_put(&g->initializers, g->m.initializers[i].name, i)) goto oom;
    for (size_t i = 0; i < g->sparse_count; i++)
        if (!rdc_map_put(&g->sparse_names, g->sparse[i].name, i)) goto oom;
    /* Each node's inputs: its own, then what its subgraphs read. */
    g->ins = calloc(n + 1, sizeof *g->ins);
    g->in_count = calloc(n + 1, sizeof *g->in_count);
    g->implicit = calloc(n + 1, sizeof *g->implicit);
    g->implicit_count = calloc(n + 1, sizeof *g->implicit_count);
    if (!g->ins || !g->in_count || !g->implicit || !g->implicit_count) goto oom;
    for (size_t i = 0; i < n; i++) {
        const cmpx_node *node = &g->m.nodes[i];
        if (node->raw_offset <= g->file_size && node->raw_size <= g->file_size - node->raw_offset &&
            !scan_node_subgraphs(g->file + node->raw_offset, g->file + node->raw_offset + node->raw_size, 0, false,
                                 &g->implicit[i], &g->implicit_count[i])) {
            snprintf(err, err_size, "%s: node %zu: malformed or too deeply nested subgraphs", path, i);
            return false;
        }
        g->in_count[i] = node->input_count + g->implicit_count[i];
        g->ins[i] = calloc(g->in_count[i] + 1, sizeof *g->ins[i]);
        if (!g->ins[i]) goto oom;
        for (size_t k = 0; k < node->input_count; k++) g->ins[i][k] = node->inputs[k];
        for (size_t k = 0; k < g->implicit_count[i]; k++) g->ins[i][node->input_count + k] = g->implicit[i][k];
    }
    /* Who makes each value (the first maker, as ONNX allows only one). */
    rdc_map made = {0};
    size_t total_outputs = 0;
    for (size_t i = 0; i < n; i++) {
        const cmpx_node *node = &g->m.nodes[i];
        g->out_base[i] = total_outputs;
        total_outputs += node->output_count;
        g->consumers[i] = calloc(node->output_count + 1, sizeof *g->consumers[i]);
        g->consumer_count[i] = calloc(node->output_count + 1, sizeof *g->consumer_count[i]);
        if (!g->consumers[i] || !g->consumer_count[i]) goto oom_made;
        for (size_t k = 0; k < node->output_count; k++)
            if (*node->outputs[k] && !rdc_map_put(&made, node->outputs[k], i << 8 | (k & 0xff))) goto oom_made;
    }
    g->is_output = calloc(total_outputs + 1, sizeof *g->is_output);
    if (!g->is_output) goto oom_made;
    for (size_t i = 0; i < n; i++) {
        const char *const *ins = g->ins[i];
        g->producer[i] = calloc(g->in_count[i] + 1, sizeof *g->producer[i]);
        if (!g->producer[i]) goto oom_made;
        for (size_t k = 0; k < g->in_count[i]; k++) {
            size_t code;
            g->producer[i][k] = SIZE_MAX;
            if (!*ins[k] || !rdc_map_get(&made, ins[k], &code)) continue;
            size_t p = code >> 8;
            /* Outputs past the 256th of one node are looked up by name. */
            size_t out = code & 0xff;
            const cmpx_node *pn = &g->m.nodes[p];
            if (out >= pn->output_count || strcmp(pn->outputs[out], ins[k]) != 0)
                for (out = 0; out < pn->output_count; out++)
                    if (strcmp(pn->outputs[out], ins[k]) == 0) break;
            if (out >= pn->output_count) continue;
            g->producer[i][k] = p;
            size_t c = g->consumer_count[p][out];
            size_t *grown = realloc(g->consumers[p][out], (c + 1) * sizeof *grown);
            if (!grown) goto oom_made;
            grown[c] = i;
            g->consumers[p][out] = grown;
            g->consumer_count[p][out] = c + 1;
        }
    }
    rdc_map_free(&made);
    return true;
oom_made:
    rdc_map_free(&made);
oom:
    snprintf(err, err_size, "out of memory");
    return false;
}

void rdc_capture_free(rdc_capture *c) {
    for (size_t i = 0; i < c->count; i++) {
        free(c->values[i].name);
        free(c->values[i].dims);
        free(c->values[i].file);
    }
    free(c->values);
    for (size_t i = 0; i < c->output_count; i++) free(c->outputs[i]);
    free(c->outputs);
    memset(c, 0, sizeof *c);
}

/* Manifest lines (reduce_jobs.c writes them):
 *   V <TAB> elem_type <TAB> rank <TAB> d0,d1,... (or -) <TAB> file <TAB> name
 *   O <TAB> name                                     (a graph output) */
static bool parse_value_line(char *line, rdc_value *v) {
    char *fields[6];
    for (int f = 0; f < 6; f++) {
        fields[f] = line;
        char *tab = f < 5 ? strchr(line, '\t') : NULL;
        if (f < 5 && !tab) return false;
        if (tab) {
            *tab = 0;
            line = tab + 1;
        }
    }
    int64_t type, rank;
    if (!cli_parse_int64(fields[1], &type) || !cli_parse_int64(fields[2], &rank) || rank < 0 || rank > 64) return false;
    v->elem_type = (int32_t)type;
    v->rank = (int32_t)rank;
    v->dims = calloc((size_t)rank + 1, sizeof *v->dims);
    if (!v->dims) return false;
    char *d = fields[3];
    for (int64_t k = 0; k < rank; k++) {
        char *comma = strchr(d, ',');
        if (comma) *comma = 0;
        if (!cli_parse_int64(d, &v->dims[k])) return false;
        d = comma ? comma + 1 : d + strlen(d);
    }
    v->file = strdup(fields[4]);
    v->name = strdup(fields[5]);
    return v->file && v->name;
}

bool rdc_capture_read(const char *dir, rdc_capture *c, char *err, size_t err_size) {
    memset(c, 0, sizeof *c);
    char *path = tc_join(dir, "manifest.txt");
    FILE *f = path ? fopen(path, "r") : NULL;
    free(path);
    if (!f) {
        snprintf(err, err_size, "the capture left no manifest");
        return false;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    bool ok = true;
    while (ok && (len = getline(&line, &cap, f)) > 0) {
        if (line[len - 1] == '\n') line[--len] = 0;
        if (line[0] == 'O' && line[1] == '\t') {
            char **grown = realloc(c->outputs, (c->output_count + 1) * sizeof *grown);
            ok = grown && (grown[c->output_count] = strdup(line + 2));
            if (grown) c->outputs = grown;
            if (ok) c->output_count++;
        } else if (line[0] == 'V' && line[1] == '\t') {
            rdc_value *grown = realloc(c->values, (c->count + 1) * sizeof *grown);
            ok = grown != NULL;
            if (!ok) break;
            c->values = grown;
            memset(&grown[c->count], 0, sizeof *grown);
            ok = parse_value_line(line, &grown[c->count]);
            c->count++;
        }
    }
    free(line);
    fclose(f);
    if (!ok) {
        snprintf(err, err_size, "the capture's manifest is unreadable");
        rdc_capture_free(c);
    }
    return ok;
}

bool rdc_graph_set_capture(rdc_graph *g, rdc_capture *c, char *err, size_t err_size) {
    g->capture = *c;
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < g->capture.count; i++)
        if (!rdc_map_put(&g->captured, g->capture.values[i].name, i)) goto oom;
    rdc_map outs = {0};
    for (size_t i = 0; i < g->capture.output_count; i++)
        if (!rdc_map_put(&outs, g->capture.outputs[i], i)) {
            rdc_map_free(&outs);
            goto oom;
        }
    for (size_t i = 0; i < g->m.node_count; i++)
        for (size_t k = 0; k < g->m.nodes[i].output_count; k++)
            g->is_output[g->out_base[i] + k] = rdc_map_get(&outs, g->m.nodes[i].outputs[k], NULL);
    rdc_map_free(&outs);
    return true;
oom:
    snprintf(err, err_size, "out of memory");
    return false;
}

void rdc_graph_free(rdc_graph *g) {
    for (size_t i = 0; i < g->m.node_count; i++) {
        if (g->producer) free(g->producer[i]);
        for (size_t k = 0; g->consumers && g->consumers[i] && k < g->m.nodes[i].output_count; k++)
            free(g->consumers[i][k]);
        if (g->consumers) free(g->consumers[i]);
        if (g->consumer_count) free(g->consumer_count[i]);
    }
    for (size_t i = 0; g->implicit && i < g->m.node_count; i++) {
        for (size_t k = 0; k < g->implicit_count[i]; k++) free(g->implicit[i][k]);
        free(g->implicit[i]);
    }
    for (size_t i = 0; g->ins && i < g->m.node_count; i++) free(g->ins[i]);
    free(g->ins);
    free(g->in_count);
    free(g->implicit);
    free(g->implicit_count);
    for (size_t i = 0; i < g->sparse_count; i++) free(g->sparse[i].name);
    free(g->sparse);
    rdc_map_free(&g->sparse_names);
    free(g->producer);
    free(g->consumers);
    free(g->consumer_count);
    free(g->is_output);
    free(g->out_base);
    free(g->functions);
    free(g->file);
    free(g->base_dir);
    rdc_map_free(&g->initializers);
    rdc_map_free(&g->captured);
    rdc_capture_free(&g->capture);
    cmpx_model_free(&g->m);
    memset(g, 0, sizeof *g);
}

/* --- cutting ----------------------------------------------------------------- */
/* ValueInfoProto{name, type{tensor_type{elem_type, shape}}}; untyped when
 * the baseline did not capture the value. */
static void put_value_info(pb_buf *graph, unsigned field, const char *name, const rdc_value *v) {
    pb_buf info = {0};
    pb_put_len_field(&info, 1, name, strlen(name));
    if (v) {
        pb_buf shape = {0}, tensor_type = {0}, type = {0};
        for (int32_t k = 0; k < v->rank; k++) {
            pb_buf dim = {0};
            pb_put_varint_field(&dim, 1, (uint64_t)v->dims[k]);
            pb_put_message(&shape, 1, &dim);
        }
        pb_put_varint_field(&tensor_type, 1, (uint64_t)v->elem_type);
        pb_put_message(&tensor_type, 2, &shape);
        pb_put_message(&type, 1, &tensor_type);
        pb_put_message(&info, 2, &type);
    }
    pb_put_message(graph, field, &info);
}

static bool span_ok(const rdc_graph *g, size_t offset, size_t size) {
    return offset <= g->file_size && size <= g->file_size - offset;
}

/* TensorProto fields for external data. */
enum { TP_RAW_DATA = 9, TP_EXTERNAL_DATA = 13, TP_DATA_LOCATION = 14 };

/* The bytes an external-data initializer points at, read from the model's
 * folder; the location must stay inside it, as the loader requires. */
static uint8_t *read_external(const rdc_graph *g, const char *location, uint64_t offset, uint64_t length, size_t *size,
                              char *err, size_t err_size) {
    if (!*location || location[0] == '/' || strstr(location, "..")) {
        snprintf(err, err_size, "external data location '%s' is not inside the model's folder", location);
        return NULL;
    }
    char *path = tc_join(g->base_dir, location);
    FILE *f = path ? fopen(path, "rb") : NULL;
    free(path);
    uint8_t *out = NULL;
    long long total = -1;
    if (f && fseeko(f, 0, SEEK_END) == 0) total = (long long)ftello(f);
    if (!f || total < 0 || offset > (uint64_t)total || (length != UINT64_MAX && length > (uint64_t)total - offset) ||
        fseeko(f, (off_t)offset, SEEK_SET) != 0) {
        snprintf(err, err_size, "external data '%s' cannot be read (or is too short)", location);
        if (f) fclose(f);
        return NULL;
    }
    uint64_t len = length == UINT64_MAX ? (uint64_t)total - offset : length;
    if (len > TIO_MAX_FILE_BYTES || !(out = malloc((size_t)len + 1))) {
        snprintf(err, err_size, "external data '%s': %llu bytes, too many to hold", location, (unsigned long long)len);
        fclose(f);
        return NULL;
    }
    if (fread(out, 1, (size_t)len, f) != (size_t)len) {
        snprintf(err, err_size, "external data '%s' cannot be read", location);
        free(out);
        out = NULL;
    }
    fclose(f);
    *size = (size_t)len;
    return out;
}

/* Writes initializer `s` as GraphProto field `field`: verbatim, or, when its
 * data is external and `inline_external`, with the bytes as raw_data (a
 * case folder must stand alone). False with a reason on failure. */
static bool put_initializer(pb_buf *out, unsigned field, const rdc_graph *g, const cmpx_span *s, bool inline_external,
                            char *err, size_t err_size) {
    const uint8_t *p = g->file + s->offset, *end = p + s->size, *b, *be;
    uint64_t f, v;
    int wire;
    bool bad = false, external = false;
    char location[1024] = "";
    uint64_t offset = 0, length = UINT64_MAX;
    while (inline_external && next_field(&p, end, &f, &wire, &b, &be, &bad)) {
        if (f == TP_DATA_LOCATION && wire == 0 && get_varint(&b, be, &v)) external = v == 1;
        if (f != TP_EXTERNAL_DATA || wire != 2) continue;
        /* StringStringEntryProto{key (1), value (2)} */
        const uint8_t *eb, *ebe, *key = NULL, *val = NULL;
        size_t key_len = 0, val_len = 0;
        uint64_t ef;
        int ew;
        bool ebad = false;
        while (next_field(&b, be, &ef, &ew, &eb, &ebe, &ebad)) {
            if (ew != 2) continue;
            if (ef == 1) key = eb, key_len = (size_t)(ebe - eb);
            if (ef == 2) val = eb, val_len = (size_t)(ebe - eb);
        }
        if (!key || !val) continue;
        char text[1024];
        snprintf(text, sizeof text, "%.*s", (int)(val_len < 1023 ? val_len : 1023), val);
        int64_t num;
        if (key_len == 8 && memcmp(key, "location", 8) == 0) snprintf(location, sizeof location, "%s", text);
        else if (key_len == 6 && memcmp(key, "offset", 6) == 0 && cli_parse_int64(text, &num) && num >= 0)
            offset = (uint64_t)num;
        else if (key_len == 6 && memcmp(key, "length", 6) == 0 && cli_parse_int64(text, &num) && num >= 0)
            length = (uint64_t)num;
    }
    if (!external || bad) {
        pb_put_len_field(out, field, g->file + s->offset, s->size);
        return true;
    }
    size_t n = 0;
    uint8_t *data = read_external(g, location, offset, length, &n, err, err_size);
    if (!data) return false;
    pb_buf tensor = {0};
    p = g->file + s->offset;
    for (const uint8_t *start = p; next_field(&p, end, &f, &wire, &b, &be, &bad); start = p)
        if (f != TP_EXTERNAL_DATA && f != TP_DATA_LOCATION && f != TP_RAW_DATA)
            pb_put_bytes(&tensor, start, (size_t)(p - start));
    pb_put_len_field(&tensor, TP_RAW_DATA, data, n);
    free(data);
    pb_put_message(out, field, &tensor);
    return true;
}

/* Whether node output (i, k) leaves the cut: with `sinks_only`, only when
 * no kept node reads it. */
static bool leaves_cut(const rdc_graph *g, const bool *keep, size_t i, size_t k, bool sinks_only) {
    size_t c = g->consumer_count[i][k];
    if (sinks_only) {
        for (size_t j = 0; j < c; j++)
            if (keep[g->consumers[i][k][j]]) return false;
        return true;
    }
    if (g->is_output[g->out_base[i] + k]) return true;
    if (c == 0) return true;
    bool read_inside = false;
    for (size_t j = 0; j < c; j++) {
        if (!keep[g->consumers[i][k][j]]) return true;
        read_inside = true;
    }
    return !read_inside;
}

/* keep, plus the makers of every value a kept node reads that the baseline
 * did not hand back (a Constant the session folded into an initializer,
 * a value inside a function it ran whole), and theirs in turn. */
static bool *close_over_uncaptured(const rdc_graph *g, const bool *keep) {
    size_t n = g->m.node_count;
    bool *eff = malloc(n + 1);
    size_t *stack = malloc((n + 1) * sizeof *stack), top = 0;
    if (!eff || !stack) {
        free(eff);
        free(stack);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if ((eff[i] = keep[i])) stack[top++] = i;
    while (top) {
        size_t i = stack[--top];
        for (size_t k = 0; k < g->in_count[i]; k++) {
            size_t p = g->producer[i][k];
            if (p == SIZE_MAX || eff[p] || rdc_map_get(&g->captured, g->ins[i][k], NULL)) continue;
            eff[p] = true;
            stack[top++] = p;
        }
    }
    free(stack);
    return eff;
}

bool rdc_cut_build(const rdc_graph *g, const bool *wanted, unsigned flags, rdc_cut *out, char *err, size_t err_size) {
    bool sinks_only = flags & RDC_CUT_SINKS_ONLY;
    memset(out, 0, sizeof *out);
    const cmpx_model *m = &g->m;
    bool *keep = close_over_uncaptured(g, wanted);
    out->kept = keep;
    bool *fed = calloc(g->capture.count + 1, sizeof *fed);
    bool *init_used = calloc(m->initializer_count + 1, sizeof *init_used);
    bool *sparse_used = calloc(g->sparse_count + 1, sizeof *sparse_used);
    out->inputs = calloc(g->capture.count + 1, sizeof *out->inputs);
    pb_buf graph = {0}, inits = {0}, inputs = {0}, outputs = {0};
    if (!keep || !fed || !init_used || !sparse_used || !out->inputs) {
        snprintf(err, err_size, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < m->node_count; i++) {
        if (!keep[i]) continue;
        const cmpx_node *n = &m->nodes[i];
        if (!span_ok(g, n->raw_offset, n->raw_size)) {
            snprintf(err, err_size, "node %zu lies outside the file", i);
            goto fail;
        }
        pb_put_len_field(&graph, 1, g->file + n->raw_offset, n->raw_size);
        out->node_count++;
        for (size_t k = 0; k < g->in_count[i]; k++) {
            const char *in = g->ins[i][k];
            bool implicit = k >= n->input_count;
            size_t p = g->producer[i][k], idx;
            if (!*in || (p != SIZE_MAX && keep[p])) continue;
            if (p == SIZE_MAX && rdc_map_get(&g->sparse_names, in, &idx)) {
                if (sparse_used[idx]) continue;
                sparse_used[idx] = true;
                const cmpx_span *sp = &g->sparse[idx];
                if (!span_ok(g, sp->offset, sp->size)) {
                    snprintf(err, err_size, "sparse initializer '%s' lies outside the file", in);
                    goto fail;
                }
                pb_put_len_field(&inits, 15, g->file + sp->offset, sp->size);
            } else if (p == SIZE_MAX && rdc_map_get(&g->initializers, in, &idx)) {
                if (init_used[idx]) continue;
                init_used[idx] = true;
                const cmpx_span *s = &m->initializers[idx];
                if (!span_ok(g, s->offset, s->size)) {
                    snprintf(err, err_size, "initializer '%s' lies outside the file", in);
                    goto fail;
                }
                if (!put_initializer(&inits, 5, g, s, flags & RDC_CUT_INLINE_EXTERNAL, err, err_size)) goto fail;
            } else if (rdc_map_get(&g->captured, in, &idx)) {
                if (fed[idx]) continue;
                fed[idx] = true;
                out->inputs[out->input_count++] = idx;
                put_value_info(&inputs, 11, in, &g->capture.values[idx]);
            } else if (!implicit || p != SIZE_MAX) {
                snprintf(err, err_size, "value '%s' was not captured from the baseline", in);
                goto fail;
            } /* else a name made inside the subgraph itself */
        }
    }
    for (size_t i = 0; i < m->node_count; i++) {
        if (!keep[i]) continue;
        const cmpx_node *n = &m->nodes[i];
        for (size_t k = 0; k < n->output_count; k++) {
            if (!*n->outputs[k] || !leaves_cut(g, keep, i, k, sinks_only)) continue;
            char **grown = realloc(out->outputs, (out->output_count + 1) * sizeof *grown);
            if (!grown) {
                snprintf(err, err_size, "out of memory");
                goto fail;
            }
            out->outputs = grown;
            grown[out->output_count++] = n->outputs[k];
            size_t idx;
            put_value_info(&outputs, 12, n->outputs[k],
                           rdc_map_get(&g->captured, n->outputs[k], &idx) ? &g->capture.values[idx] : NULL);
        }
    }
    if (!out->node_count || !out->output_count) {
        snprintf(err, err_size, out->node_count ? "the cut has no output" : "the cut is empty");
        goto fail;
    }
    /* GraphProto: node (1), name (2), initializer (5), input (11), output (12). */
    pb_put_len_field(&graph, 2, "reduced", 7);
    pb_put_bytes(&graph, inits.p, inits.len);
    pb_put_bytes(&graph, inputs.p, inputs.len);
    pb_put_bytes(&graph, outputs.p, outputs.len);
    pb_buf model = {0};
    pb_put_varint_field(&model, 1, m->ir_version ? m->ir_version : 8);
    pb_put_len_field(&model, 2, "tessera-reduce", 14); /* producer_name */
    for (size_t i = 0; i < m->opset_count; i++)
        if (span_ok(g, m->opsets[i].offset, m->opsets[i].size))
            pb_put_len_field(&model, 8, g->file + m->opsets[i].offset, m->opsets[i].size);
    pb_put_message(&model, 7, &graph);
    for (size_t i = 0; i < g->function_count; i++)
        if (span_ok(g, g->functions[i].offset, g->functions[i].size))
            pb_put_len_field(&model, 25, g->file + g->functions[i].offset, g->functions[i].size);
    bool failed = model.failed || inits.failed || inputs.failed || outputs.failed;
    free(inits.p);
    free(inputs.p);
    free(outputs.p);
    free(fed);
    free(init_used);
    free(sparse_used);
    if (failed) {
        free(model.p);
        snprintf(err, err_size, "out of memory");
        rdc_cut_free(out);
        return false;
    }
    out->model = model.p;
    out->model_size = model.len;
    return true;
fail:
    free(graph.p);
    free(inits.p);
    free(inputs.p);
    free(outputs.p);
    free(fed);
    free(init_used);
    free(sparse_used);
    rdc_cut_free(out);
    return false;
}

void rdc_cut_free(rdc_cut *c) {
    free(c->kept);
    free(c->model);
    free(c->inputs);
    free(c->outputs);
    memset(c, 0, sizeof *c);
}
