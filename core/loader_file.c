/* Reading a model: the file (its size checked before it is mapped) or a
 * buffer, against the model_bytes limit; the nesting scan before protobuf-c
 * decodes (a mapped file's initializers one at a time, loader_split.c);
 * then loader.c converts it. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader_internal.h"
#include "loader_split.h"
#include "status.h"
#include "tessera/tessera.h"

/* "graph.node[3] 'if_0'" or "functions[1].node[0]": where the wire scan
 * found subgraphs too deep. */
static void wire_where(const wire_report *r, char *buf, size_t size) {
    int n = r->top_repeated ? snprintf(buf, size, "%s[%u]", r->top_field ? r->top_field : "model", r->top_index)
                            : snprintf(buf, size, "%s", r->top_field ? r->top_field : "model");
    if (n < 0 || (size_t)n >= size) return;
    size_t used = (size_t)n;
    if (r->node_index >= 0) {
        n = snprintf(buf + used, size - used, ".node[%ld]", r->node_index);
        if (n < 0 || (size_t)n >= size - used) return;
        used += (size_t)n;
    }
    int name_len = (int)(r->node_name_len > 100 ? 100 : r->node_name_len);
    if (r->node_name && name_len) snprintf(buf + used, size - used, " '%.*s'", name_len, (const char *)r->node_name);
}

/* protobuf-c's default allocator (malloc) holds each byte field, and the
 * loader keeps those buffers as the tensors' own (loader_tensor.c frees
 * them with free). They are not advised onto huge pages: in a VM that hands
 * free memory back to its host (a Firecracker guest with free page
 * reporting, the benchmark machine of 2026-12-07), each fresh huge page is
 * backed by the host at first touch, and BERT-base's session creation took
 * 4.5-6 s with them against 0.4-0.7 s without (4 KiB pages come from memory
 * the guest still holds). Weights read on every run are huge-page backed by
 * the providers that pack them (odn_consts.c), where the TLB saving pays. */

/* mapped: bytes are a private read-only mapping of the whole file, whose
 * pages loader_unpack_split may drop as it copies the weights out. */
static tsr_status *parse_model(const void *bytes, size_t size, const ir_limits *lim, bool mapped,
                               Onnx__ModelProto **out) {
    wire_report r;
    /* the setter keeps graph_depth in 1..IR_MAX_GRAPH_DEPTH; callers inside
     * the library might not */
    int depth = lim->graph_depth;
    if (depth < 0) depth = 0;
    if (depth > IR_MAX_GRAPH_DEPTH) depth = IR_MAX_GRAPH_DEPTH;
    int max_messages = LOADER_WIRE_DEPTH(depth);
    int found = loader_wire_check(bytes, size, &onnx__model_proto__descriptor, max_messages, depth, &r);
    if (found == WIRE_GRAPHS) {
        char where[256];
        wire_where(&r, where, sizeof where);
        return tsr_error(TSR_ERR_INVALID_MODEL,
                         "%s: subgraphs nest at least %d levels deep, over the graph_depth limit (%d)", where,
                         r.graphs_found, depth);
    }
    if (found == WIRE_MESSAGES)
        return tsr_error(TSR_ERR_INVALID_MODEL,
                         "messages nest deeper than %d levels, the most the graph_depth limit (%d) "
                         "allows (3 a subgraph level, %d for nested types)",
                         max_messages, depth, LOADER_WIRE_TYPE_LEVELS);
    if (mapped && loader_unpack_split(bytes, size, true, out)) return NULL;
    *out = onnx__model_proto__unpack(NULL, size, bytes);
    if (!*out) return tsr_error(TSR_ERR_INVALID_MODEL, "not a valid ONNX model (protobuf decoding failed)");
    return NULL;
}

static tsr_status *model_size_ok(const char *what, uint64_t size, const ir_limits *lim) {
    if (size <= lim->model_bytes) return NULL;
    return tsr_error(TSR_ERR_NO_MEMORY, "%s is %llu bytes, over the model_bytes limit (%llu)", what,
                     (unsigned long long)size, (unsigned long long)lim->model_bytes);
}

tsr_status *ir_model_load_buffer_limited(const void *bytes, size_t size, const char *base_dir, const ir_limits *limits,
                                         ir_model **out) {
    if ((!bytes && size) || !out) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "NULL argument");
    ir_limits lim = limits ? *limits : ir_limits_default();
    TSR_TRY(model_size_ok("the model buffer", size, &lim));
    Onnx__ModelProto *mp;
    TSR_TRY(parse_model(bytes, size, &lim, false, &mp));
    return loader_build_model(mp, base_dir, &lim, out);
}

tsr_status *ir_model_load_buffer(const void *bytes, size_t size, const char *base_dir, ir_model **out) {
    return ir_model_load_buffer_limited(bytes, size, base_dir, NULL, out);
}

/* Reads exactly `size` bytes of fd into buf. */
static bool read_all(int fd, uint8_t *buf, size_t size) {
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        got += (size_t)r;
    }
    return true;
}

tsr_status *ir_model_load_file_limited(const char *path, const ir_limits *limits, ir_model **out) {
    if (!path || !out) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "NULL argument");
    ir_limits lim = limits ? *limits : ir_limits_default();
    /* non-blocking open: a FIFO given as the model must not hang here
     * before the regular-file check refuses it */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return tsr_error(TSR_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return tsr_error(TSR_ERR_IO, "'%s' is not a regular file", path);
    }
    /* Before anything is mapped or read: the size fstat gives. */
    char what[320];
    snprintf(what, sizeof what, "model '%s'", path);
    tsr_status *st = model_size_ok(what, (uint64_t)sb.st_size, &lim);
    if (!st && (uint64_t)sb.st_size > SIZE_MAX - 1) st = tsr_error(TSR_ERR_IO, "'%s' is too large", path);
    if (st) {
        close(fd);
        return st;
    }
    size_t size = (size_t)sb.st_size;
    Onnx__ModelProto *mp;
    /* Mapped, not read: the bytes come from the page cache with no copy
     * into fresh (kernel-zeroed) memory, which was a fifth of loading
     * BERT-base. The mapping goes before converting: the file and the IR
     * need not coexist. */
    void *map = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    if (map != MAP_FAILED) {
        close(fd);
        st = parse_model(map, size, &lim, true, &mp);
        munmap(map, size);
    } else {
        uint8_t *buf = malloc(size ? size : 1);
        if (!buf) {
            close(fd);
            return TSR_NO_MEMORY();
        }
        bool ok = read_all(fd, buf, size);
        close(fd);
        if (!ok) {
            free(buf);
            return tsr_error(TSR_ERR_IO, "reading '%s' failed", path);
        }
        st = parse_model(buf, size, &lim, false, &mp);
        free(buf);
    }
    if (st) return st;
    /* External data is resolved against the directory holding the model. */
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    if (!dir) {
        onnx__model_proto__free_unpacked(mp, NULL);
        return TSR_NO_MEMORY();
    }
    st = loader_build_model(mp, dir, &lim, out);
    free(dir);
    return st;
}

tsr_status *ir_model_load_file(const char *path, ir_model **out) { return ir_model_load_file_limited(path, NULL, out); }
