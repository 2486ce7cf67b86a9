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
#include "wire_reader.h"

enum { MODEL_GRAPH = 7, GRAPH_INITIALIZER = 5 };

/* More initializers than this is unusual enough for the whole unpack, which
 * needs no list of them (a million: ten times the largest real models). */
#define SPLIT_MAX_INITIALIZERS ((size_t)1 << 20)

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

/* The next field; false also for field number 0, which protobuf-c refuses. */
static bool next_field(wire_cursor *c, wire_field *f) { return wire_next_field(c, f) && f->id != 0; }

/* The one ModelProto.graph; false when absent, repeated (protobuf merges
 * the copies) or not length-delimited, or when any top field is malformed. */
static bool find_graph(const uint8_t *b, size_t size, wire_field *graph) {
    wire_cursor c = {b, 0, size};
    int seen = 0;
    while (c.pos < c.end) {
        wire_field f;
        if (!next_field(&c, &f)) return false;
        if (f.id != MODEL_GRAPH) continue;
        if (f.type != WIRE_LEN || seen++) return false;
        *graph = f;
    }
    return seen == 1;
}

/* Counts the graph's initializer fields (list NULL) or lists them. */
static bool scan_initializers(const uint8_t *b, const wire_field *g, wire_field *list, size_t *n) {
    wire_cursor c = wire_value_cursor(b, g);
    size_t count = 0;
    while (c.pos < c.end) {
        wire_field f;
        if (!next_field(&c, &f)) return false;
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
