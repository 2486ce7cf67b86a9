/* Loading a mapped model with one copy of its weights resident, not two.
 * protobuf-c copies every bytes field, so unpacking the mapped file whole
 * keeps the file's pages (counted in RSS while mapped) and the copies
 * together until the end (BERT-base: a 652 MiB peak for 340 MB of
 * weights). Here the wire format is read just far enough to find
 * ModelProto.graph and its initializer fields; each initializer is unpacked
 * by itself and the file pages under it dropped, and the rest of the model
 * is unpacked from a copy that leaves them out. The result is the message a
 * whole unpack makes, so loader_build_model cannot tell the paths apart. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "loader_split.h"

enum { MODEL_GRAPH = 7, GRAPH_INITIALIZER = 5 };
enum { WIRE_VARINT = 0, WIRE_I64 = 1, WIRE_LEN = 2, WIRE_I32 = 5 };

/* More initializers than this is unusual enough for the whole unpack, which
 * needs no list of them (a million: ten times the largest real models). */
#define SPLIT_MAX_INITIALIZERS ((size_t)1 << 20)

/* One field, as offsets into the buffer scanned. */
typedef struct wire_field {
    size_t start;   /* its key */
    size_t len_at;  /* its length varint (WIRE_LEN) */
    size_t payload; /* its value */
    size_t len;     /* bytes of value (WIRE_LEN, I32, I64) */
    uint64_t id;
    unsigned type;
} wire_field;

static bool get_varint(const uint8_t *b, size_t end, size_t *pos, uint64_t *out) {
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64 && *pos < end; shift += 7) {
        uint8_t byte = b[(*pos)++];
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

static size_t varint_size(uint64_t v) {
    size_t n = 1;
    for (; v >= 0x80; v >>= 7) n++;
    return n;
}

static size_t put_varint(uint8_t *p, uint64_t v) {
    size_t n = 0;
    for (; v >= 0x80; v >>= 7) p[n++] = (uint8_t)(v | 0x80);
    p[n++] = (uint8_t)v;
    return n;
}

/* Reads the field at *pos (which must end by `end`) and moves past it.
 * False for anything malformed and for groups, which ONNX never writes. */
static bool next_field(const uint8_t *b, size_t end, size_t *pos, wire_field *f) {
    uint64_t key, v;
    f->start = *pos;
    if (!get_varint(b, end, pos, &key) || key >> 3 == 0) return false;
    f->id = key >> 3;
    f->type = (unsigned)(key & 7);
    f->len_at = f->payload = *pos;
    switch (f->type) {
    case WIRE_VARINT: f->len = 0; return get_varint(b, end, pos, &v);
    case WIRE_I64: f->len = 8; break;
    case WIRE_I32: f->len = 4; break;
    case WIRE_LEN:
        if (!get_varint(b, end, pos, &v) || v > end - *pos) return false;
        f->payload = *pos;
        f->len = (size_t)v;
        break;
    default: return false;
    }
    if (f->len > end - f->payload) return false;
    *pos = f->payload + f->len;
    return true;
}

/* The one ModelProto.graph; false when absent, repeated (protobuf merges
 * the copies) or not length-delimited, or when any top field is malformed. */
static bool find_graph(const uint8_t *b, size_t size, wire_field *graph) {
    size_t pos = 0;
    int seen = 0;
    while (pos < size) {
        wire_field f;
        if (!next_field(b, size, &pos, &f)) return false;
        if (f.id != MODEL_GRAPH) continue;
        if (f.type != WIRE_LEN || seen++) return false;
        *graph = f;
    }
    return seen == 1;
}

/* Counts the graph's initializer fields (list NULL) or lists them. */
static bool scan_initializers(const uint8_t *b, const wire_field *g, wire_field *list, size_t *n) {
    size_t pos = g->payload, end = g->payload + g->len, count = 0;
    while (pos < end) {
        wire_field f;
        if (!next_field(b, end, &pos, &f)) return false;
        if (f.id != GRAPH_INITIALIZER) continue;
        if (f.type != WIRE_LEN) return false;
        if (list) list[count] = f;
        count++;
    }
    *n = count;
    return true;
}

/* The graph's initializer fields in file order, malloc'd; false (nothing
 * allocated) when there are none, too many, or the graph is malformed. */
static bool list_initializers(const uint8_t *b, const wire_field *g, wire_field **out, size_t *n) {
    if (!scan_initializers(b, g, NULL, n) || *n == 0 || *n > SPLIT_MAX_INITIALIZERS) return false;
    wire_field *list = malloc(*n * sizeof *list);
    if (!list) return false;
    (void)scan_initializers(b, g, list, n); /* the same bytes: cannot fail now */
    *out = list;
    return true;
}

/* The model's bytes with the initializer fields left out and the graph's
 * length re-encoded (never longer than the original: the new length is
 * smaller and written minimally). */
static uint8_t *strip_initializers(const uint8_t *b, size_t size, const wire_field *g, const wire_field *inits,
                                   size_t n, size_t *out_size) {
    size_t removed = 0;
    for (size_t i = 0; i < n; i++) removed += inits[i].payload + inits[i].len - inits[i].start;
    size_t glen = g->len - removed, tail = g->payload + g->len;
    size_t total = g->len_at + varint_size(glen) + glen + (size - tail);
    uint8_t *out = malloc(total ? total : 1);
    if (!out) return NULL;
    memcpy(out, b, g->len_at);
    size_t at = g->len_at + put_varint(out + g->len_at, glen), from = g->payload;
    for (size_t i = 0; i < n; i++) {
        memcpy(out + at, b + from, inits[i].start - from);
        at += inits[i].start - from;
        from = inits[i].payload + inits[i].len;
    }
    memcpy(out + at, b + from, tail - from);
    at += tail - from;
    memcpy(out + at, b + tail, size - tail);
    *out_size = total;
    return out;
}

/* Drops the whole pages inside bytes [off, off + len) of a private
 * read-only mapping; pages shared with neighbouring fields stay. */
static void release_pages(const uint8_t *base, size_t off, size_t len) {
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0) return;
    uintptr_t mask = (uintptr_t)page - 1, lo = (uintptr_t)(base + off), hi = lo + len;
    uintptr_t first = (lo + mask) & ~mask, last = hi & ~mask;
    /* advice only: if refused, the pages just stay until munmap */
    if (last > first) (void)madvise((void *)first, last - first, MADV_DONTNEED);
}

static void free_tensors(Onnx__TensorProto **t, size_t n) {
    for (size_t i = 0; i < n; i++) onnx__tensor_proto__free_unpacked(t[i], NULL);
    free(t);
}

/* Each initializer unpacked alone, in file order, its pages released after
 * (with `release`). NULL when protobuf-c refuses one. */
static Onnx__TensorProto **unpack_initializers(const uint8_t *b, const wire_field *inits, size_t n, bool release) {
    Onnx__TensorProto **t = calloc(n, sizeof *t);
    if (!t) return NULL;
    for (size_t i = 0; i < n; i++) {
        if (!(t[i] = onnx__tensor_proto__unpack(NULL, inits[i].len, b + inits[i].payload))) {
            free_tensors(t, i);
            return NULL;
        }
        if (release) release_pages(b, inits[i].payload, inits[i].len);
    }
    return t;
}

/* The model without its initializers; NULL when protobuf-c refuses it.
 * With `release`, the whole mapping is dropped once the rest is copied out:
 * weights kept as Constant nodes are in the rest, and the file, the copy
 * and protobuf-c's copies of them must not be resident at once. */
static Onnx__ModelProto *unpack_rest(const uint8_t *b, size_t size, const wire_field *g, const wire_field *inits,
                                     size_t n, bool release) {
    size_t rest_size;
    uint8_t *rest = strip_initializers(b, size, g, inits, n, &rest_size);
    if (!rest) return NULL;
    if (release) release_pages(b, 0, size);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, rest_size, rest);
    free(rest);
    if (mp && (!mp->graph || mp->graph->n_initializer)) {
        onnx__model_proto__free_unpacked(mp, NULL);
        return NULL;
    }
    return mp;
}

bool loader_unpack_split(const uint8_t *bytes, size_t size, bool release, Onnx__ModelProto **out) {
    wire_field graph = {0}, *inits = NULL;
    size_t n = 0;
    if (!bytes || !find_graph(bytes, size, &graph) || !list_initializers(bytes, &graph, &inits, &n)) return false;
    /* The rest first: a model refused there costs no weight copies before
     * the whole unpack reports it. */
    Onnx__ModelProto *mp = unpack_rest(bytes, size, &graph, inits, n, release);
    Onnx__TensorProto **t = mp ? unpack_initializers(bytes, inits, n, release) : NULL;
    free(inits);
    if (!t) {
        if (mp) onnx__model_proto__free_unpacked(mp, NULL);
        return false;
    }
    /* free_unpacked releases these with the default allocator, as it
     * would protobuf-c's own array and messages */
    mp->graph->initializer = t;
    mp->graph->n_initializer = n;
    *out = mp;
    return true;
}
