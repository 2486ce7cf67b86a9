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
 * recurses once per nested message with no limit of its own; IR_MAX_GRAPH_DEPTH
 * graphs cost three levels each (graph, node, attribute) plus type nesting. */
#define LOADER_MAX_WIRE_DEPTH 320

/* A TensorProto to a host tensor. base_dir resolves external data (NULL
 * refuses it). May take over tp's raw_data buffer, leaving tp without it.
 * Errors say what is wrong without naming the tensor; the caller prefixes
 * where it is. */
tsr_status *loader_tensor_decode(Onnx__TensorProto *tp, const char *base_dir,
                                 ir_tensor **out);
/* A SparseTensorProto, densified. */
tsr_status *loader_sparse_decode(const Onnx__SparseTensorProto *sp, const char *base_dir,
                                 ir_tensor **out);
/* "[2,3]" into buf (truncated to fit). */
void loader_format_shape(char *buf, size_t size, size_t rank, const int64_t *dims);

/* True when no message in `bytes` (of type `desc`) nests deeper than `limit`.
 * Malformed bytes pass: protobuf-c reports them properly. */
int loader_wire_depth_ok(const uint8_t *bytes, size_t size, const ProtobufCMessageDescriptor *desc,
                         int limit);

#endif
