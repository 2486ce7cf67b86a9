/*
 * What the model file says about its inputs that the session does not:
 * which inputs are indices (Gather*, Scatter*'s input 1) and the size of the
 * axis they index, so made-up indices stay in range (the recipe of
 * ../shared/bench/benchlib.py: [0, n) where n is known, 0 where it is not).
 *
 * The command may use only the public API, so this reads the ONNX protobuf
 * itself: a streaming reader over the file that looks at the main graph's
 * nodes, initializer dims, Constant-node dims and the fixed shapes of graph
 * inputs and value_info, and seeks past everything else — weights are never
 * read into memory, so a bench's peak RSS does not see this pass.
 */
#define _FILE_OFFSET_BITS 64
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "cli.h"

#define SCAN_MAX_STRING (1u << 20) /* a name longer than this is not a model */
#define SCAN_MAX_RANK 64

typedef struct rd {
    FILE *f;
    uint64_t pos, size;
    bool bad;
} rd;

typedef struct shape_entry {
    char *name;
    int32_t rank;
    int64_t dims[SCAN_MAX_RANK];
} shape_entry;

typedef struct index_use {
    char *indices, *data;
    int64_t axis;  /* the indexed axis of data */
    bool has_axis; /* false for GatherND/ScatterND: no single axis */
} index_use;

typedef struct scan {
    shape_entry *shapes;
    size_t shape_count;
    index_use *uses;
    size_t use_count;
} scan;

/* --- wire format --------------------------------------------------------- */
static bool rd_varint(rd *r, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        int c = fgetc(r->f);
        if (c == EOF) break;
        r->pos++;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *out = v;
            return true;
        }
    }
    r->bad = true;
    return false;
}

static bool rd_seek(rd *r, uint64_t to) {
    if (to > r->size || fseeko(r->f, (off_t)to, SEEK_SET) != 0) {
        r->bad = true;
        return false;
    }
    r->pos = to;
    return true;
}

/* Next field before `end`: its number, wire type and (wire type 2) length.
 * False at `end` or on a malformed tag. */
static bool rd_field(rd *r, uint64_t end, uint32_t *field, int *wt, uint64_t *len) {
    uint64_t tag;
    if (r->pos >= end || !rd_varint(r, &tag)) return false;
    *field = (uint32_t)(tag >> 3);
    *wt = (int)(tag & 7);
    *len = 0;
    if (*wt == 2 && (!rd_varint(r, len) || *len > end - r->pos)) {
        r->bad = true;
        return false;
    }
    return true;
}

static bool rd_skip(rd *r, int wt, uint64_t len) {
    uint64_t v;
    switch (wt) {
    case 0: return rd_varint(r, &v);
    case 1: return rd_seek(r, r->pos + 8);
    case 2: return rd_seek(r, r->pos + len);
    case 5: return rd_seek(r, r->pos + 4);
    default: r->bad = true; return false; /* groups: not in ONNX */
    }
}

static char *rd_string(rd *r, uint64_t len) {
    if (len > SCAN_MAX_STRING) {
        r->bad = true;
        return NULL;
    }
    char *s = malloc((size_t)len + 1);
    if (!s || fread(s, 1, (size_t)len, r->f) != (size_t)len) {
        free(s);
        r->bad = true;
        return NULL;
    }
    r->pos += len;
    s[len] = '\0';
    return s;
}

/* --- messages ------------------------------------------------------------ */
/* TensorProto: dims (1, packed or not) and name (8). */
static void tensor_shape(rd *r, uint64_t end, shape_entry *e, char **name) {
    uint32_t f;
    int wt;
    uint64_t len, v;
    e->rank = 0;
    while (!r->bad && rd_field(r, end, &f, &wt, &len)) {
        if (f == 1 && wt == 0 && rd_varint(r, &v)) {
            if (e->rank < SCAN_MAX_RANK) e->dims[e->rank] = (int64_t)v;
            e->rank++;
        } else if (f == 1 && wt == 2) {
            uint64_t stop = r->pos + len;
            while (!r->bad && r->pos < stop && rd_varint(r, &v)) {
                if (e->rank < SCAN_MAX_RANK) e->dims[e->rank] = (int64_t)v;
                e->rank++;
            }
        } else if (f == 8 && wt == 2 && name && !*name) {
            *name = rd_string(r, len);
        } else {
            rd_skip(r, wt, len);
        }
    }
    rd_seek(r, end);
}

static bool add_shape(scan *s, char *name, const shape_entry *e) {
    if (!name || e->rank > SCAN_MAX_RANK) {
        free(name);
        return true;
    }
    shape_entry *grown = realloc(s->shapes, (s->shape_count + 1) * sizeof *grown);
    if (!grown) {
        free(name);
        return false;
    }
    s->shapes = grown;
    s->shapes[s->shape_count] = *e;
    s->shapes[s->shape_count++].name = name;
    return true;
}

/* ValueInfoProto: the name, and the shape when every dim is a fixed value. */
static void value_info(rd *r, uint64_t end, scan *s) {
    char *name = NULL;
    shape_entry e = {.rank = 0};
    bool fixed = false;
    uint32_t f;
    int wt;
    uint64_t len, v;
    while (!r->bad && rd_field(r, end, &f, &wt, &len)) {
        if (f == 1 && wt == 2 && !name) {
            name = rd_string(r, len);
            continue;
        }
        if (f != 2 || wt != 2) {
            rd_skip(r, wt, len);
            continue;
        }
        /* TypeProto -> tensor_type (1) -> shape (2) -> dim (1) -> dim_value (1) */
        uint64_t type_end = r->pos + len;
        while (!r->bad && rd_field(r, type_end, &f, &wt, &len)) {
            if (f != 1 || wt != 2) {
                rd_skip(r, wt, len);
                continue;
            }
            uint64_t tt_end = r->pos + len;
            while (!r->bad && rd_field(r, tt_end, &f, &wt, &len)) {
                if (f != 2 || wt != 2) {
                    rd_skip(r, wt, len);
                    continue;
                }
                uint64_t shape_end = r->pos + len;
                fixed = true;
                while (!r->bad && rd_field(r, shape_end, &f, &wt, &len)) {
                    if (f != 1 || wt != 2) {
                        rd_skip(r, wt, len);
                        continue;
                    }
                    uint64_t dim_end = r->pos + len;
                    int64_t d = -1;
                    while (!r->bad && rd_field(r, dim_end, &f, &wt, &len)) {
                        if (f == 1 && wt == 0 && rd_varint(r, &v)) d = (int64_t)v;
                        else rd_skip(r, wt, len);
                    }
                    if (d <= 0) fixed = false;
                    if (e.rank < SCAN_MAX_RANK) e.dims[e.rank] = d;
                    e.rank++;
                }
            }
        }
    }
    rd_seek(r, end);
    if (fixed && e.rank > 0 && !r->bad) add_shape(s, name, &e);
    else free(name);
}

static bool is_index_op(const char *op, bool *has_axis) {
    *has_axis = strcmp(op, "Gather") == 0 || strcmp(op, "GatherElements") == 0 || strcmp(op, "ScatterElements") == 0 ||
        strcmp(op, "Scatter") == 0;
    return *has_axis || strcmp(op, "GatherND") == 0 || strcmp(op, "ScatterND") == 0;
}

/* NodeProto: inputs 0 and 1, output 0, op_type, domain, and the attributes
 * "axis" (i) and "value" (t, for a Constant's shape). */
static void node(rd *r, uint64_t end, scan *s) {
    char *in[2] = {NULL, NULL}, *out0 = NULL, *op = NULL, *domain = NULL;
    int in_count = 0;
    int64_t axis = 0;
    shape_entry value = {.rank = -1};
    uint32_t f;
    int wt;
    uint64_t len, v;
    while (!r->bad && rd_field(r, end, &f, &wt, &len)) {
        if (f == 1 && wt == 2 && in_count < 2) {
            in[in_count++] = rd_string(r, len);
        } else if (f == 2 && wt == 2 && !out0) {
            out0 = rd_string(r, len);
        } else if (f == 4 && wt == 2 && !op) {
            op = rd_string(r, len);
        } else if (f == 7 && wt == 2 && !domain) {
            domain = rd_string(r, len);
        } else if (f == 5 && wt == 2) {
            uint64_t attr_end = r->pos + len;
            char *aname = NULL;
            while (!r->bad && rd_field(r, attr_end, &f, &wt, &len)) {
                if (f == 1 && wt == 2 && !aname) aname = rd_string(r, len);
                else if (f == 3 && wt == 0 && rd_varint(r, &v) && aname && strcmp(aname, "axis") == 0)
                    axis = (int64_t)v;
                else if (f == 5 && wt == 2 && aname && strcmp(aname, "value") == 0)
                    tensor_shape(r, r->pos + len, &value, NULL);
                else rd_skip(r, wt, len);
            }
            free(aname);
        } else {
            rd_skip(r, wt, len);
        }
    }
    rd_seek(r, end);
    bool ai_onnx = !domain || !*domain || strcmp(domain, "ai.onnx") == 0;
    bool has_axis;
    if (!r->bad && op && ai_onnx && strcmp(op, "Constant") == 0 && value.rank >= 0 && out0) {
        add_shape(s, out0, &value);
        out0 = NULL;
    } else if (!r->bad && op && ai_onnx && is_index_op(op, &has_axis) && in_count == 2 && *in[1]) {
        index_use *grown = realloc(s->uses, (s->use_count + 1) * sizeof *grown);
        if (grown) {
            s->uses = grown;
            s->uses[s->use_count++] = (index_use){in[1], in[0], axis, has_axis};
            in[0] = in[1] = NULL;
        }
    }
    free(in[0]);
    free(in[1]);
    free(out0);
    free(op);
    free(domain);
}

static void graph(rd *r, uint64_t end, scan *s) {
    uint32_t f;
    int wt;
    uint64_t len;
    while (!r->bad && rd_field(r, end, &f, &wt, &len)) {
        uint64_t stop = r->pos + len;
        if (wt == 2 && f == 1) {
            node(r, stop, s);
        } else if (wt == 2 && f == 5) {
            shape_entry e;
            char *name = NULL;
            tensor_shape(r, stop, &e, &name);
            add_shape(s, name, &e);
        } else if (wt == 2 && (f == 11 || f == 13)) {
            value_info(r, stop, s);
        } else {
            rd_skip(r, wt, len);
        }
    }
}

static void free_scan(scan *s) {
    for (size_t i = 0; i < s->shape_count; i++) free(s->shapes[i].name);
    for (size_t i = 0; i < s->use_count; i++) {
        free(s->uses[i].indices);
        free(s->uses[i].data);
    }
    free(s->shapes);
    free(s->uses);
}

static const shape_entry *find_shape(const scan *s, const char *name) {
    for (size_t i = 0; i < s->shape_count; i++)
        if (strcmp(s->shapes[i].name, name) == 0) return &s->shapes[i];
    return NULL;
}

bool ms_index_bounds(const char *model_path, size_t count, const char *const *names, int64_t *bounds) {
    for (size_t i = 0; i < count; i++) bounds[i] = -1;
    rd r = {.f = fopen(model_path, "rb")};
    if (!r.f) return false;
    if (fseeko(r.f, 0, SEEK_END) == 0) {
        off_t size = ftello(r.f);
        r.size = size > 0 ? (uint64_t)size : 0;
    }
    rewind(r.f);
    scan s = {0};
    uint32_t f;
    int wt;
    uint64_t len;
    while (!r.bad && rd_field(&r, r.size, &f, &wt, &len)) {
        if (f == 7 && wt == 2) graph(&r, r.pos + len, &s); /* ModelProto.graph */
        else rd_skip(&r, wt, len);
    }
    fclose(r.f);
    bool ok = !r.bad;
    for (size_t u = 0; ok && u < s.use_count; u++) {
        const index_use *use = &s.uses[u];
        const shape_entry *data = find_shape(&s, use->data);
        int64_t n = 0;
        if (data && use->has_axis && data->rank > 0 && use->axis >= -data->rank && use->axis < data->rank)
            n = data->dims[use->axis < 0 ? use->axis + data->rank : use->axis];
        if (n < 0) n = 0;
        for (size_t i = 0; i < count; i++)
            if (strcmp(names[i], use->indices) == 0) bounds[i] = bounds[i] < 0 ? n : (n < bounds[i] ? n : bounds[i]);
    }
    free_scan(&s);
    if (!ok)
        for (size_t i = 0; i < count; i++) bounds[i] = -1;
    return ok;
}
