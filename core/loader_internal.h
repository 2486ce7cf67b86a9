/* Shared between the loader's files (core/loader*.c); not for other stages. */
#ifndef TESSERA_CORE_LOADER_INTERNAL_H
#define TESSERA_CORE_LOADER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ir.h"
#include "onnx.pb-c.h"

/* Dense tensors made from a sparse one may be far larger than the file that
 * declares them; this bounds what a tiny hostile file can make us allocate. */
#define LOADER_MAX_DENSIFIED_BYTES ((size_t)1 << 30)

/* Message nesting accepted before protobuf-c sees the bytes. protobuf-c
 * recurses once per nested message with no limit of its own; each level of
 * subgraph costs three (graph, node, attribute), and types nest besides
 * (a sequence of sequences: two per level). 320 for the default 64 levels. */
#define LOADER_WIRE_TYPE_LEVELS 128
#define LOADER_WIRE_DEPTH(graph_depth) (3 * (graph_depth) + LOADER_WIRE_TYPE_LEVELS)

/* External data: where it is resolved and how much may be read. */
typedef struct loader_ext {
    const char *base_dir; /* NULL refuses external data */
    uint64_t limit;       /* "external_bytes" */
    uint64_t used;        /* read so far, every tensor of the model */
} loader_ext;

/* A TensorProto to a host tensor. ext resolves external data and counts it
 * (NULL refuses it). May take over tp's raw_data buffer, leaving tp without it.
 * Errors say what is wrong without naming the tensor; the caller prefixes
 * where it is. */
tsr_status *loader_tensor_decode(Onnx__TensorProto *tp, loader_ext *ext, ir_tensor **out);
/* A SparseTensorProto, densified. */
tsr_status *loader_sparse_decode(const Onnx__SparseTensorProto *sp, loader_ext *ext, ir_tensor **out);
/* "[2,3]" into buf (truncated to fit). */
void loader_format_shape(char *buf, size_t size, size_t rank, const int64_t *dims);

/* Converts mp (freeing it) into a model under `lim`; base_dir resolves
 * external data (NULL refuses it). core/loader.c. */
tsr_status *loader_build_model(Onnx__ModelProto *mp, const char *base_dir, const ir_limits *lim, ir_model **out);

/* What loader_wire_check found: WIRE_OK, messages nested deeper than
 * max_messages, or subgraphs (a GraphProto in an AttributeProto) deeper than
 * max_graphs. Malformed bytes pass: protobuf-c reports them properly. */
enum { WIRE_OK = 0, WIRE_MESSAGES = 1, WIRE_GRAPHS = 2 };
typedef struct wire_report {
    int graphs_found;      /* WIRE_GRAPHS: the level reached (max_graphs + 1) */
    const char *top_field; /* the ModelProto field it was in ("graph", "functions") */
    unsigned top_index;    /* its index when repeated */
    bool top_repeated;
    long node_index;          /* the node of that graph or function, or -1 */
    const uint8_t *node_name; /* its name (in the bytes), or NULL */
    size_t node_name_len;
} wire_report;
int loader_wire_check(const uint8_t *bytes, size_t size, const ProtobufCMessageDescriptor *desc, int max_messages,
                      int max_graphs, wire_report *r);

#endif
