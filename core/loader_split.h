/* Unpacking a model with its main graph's initializers one at a time, so a
 * mapped file's pages under each can be released once protobuf-c has
 * copied it (core/loader_split.c). Shared by the loader's files only. */
#ifndef TESSERA_CORE_LOADER_SPLIT_H
#define TESSERA_CORE_LOADER_SPLIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "onnx.pb-c.h"

/* Unpacks the ModelProto in bytes[0..size) into *out, the same message
 * onnx__model_proto__unpack makes, but each ModelProto.graph.initializer
 * unpacked by itself. With `release`, bytes must be a private read-only
 * mapping: the whole mapping is dropped (MADV_DONTNEED) once the rest of
 * the model is copied out, and the pages under each initializer once its
 * copy exists; they come back from the page cache if read again.
 * Returns false, with nothing allocated and *out untouched, for anything it
 * does not handle plainly: no graph or a repeated one, no initializers,
 * malformed framing of the model or graph, or a piece protobuf-c refuses.
 * The caller then unpacks the whole buffer, which reports errors as ever. */
bool loader_unpack_split(const uint8_t *bytes, size_t size, bool release, Onnx__ModelProto **out);

#endif
