/* Serializing a graph view (a whole graph or one piece of it) as an ONNX
 * ModelProto: what host->graph_to_onnx hands a plugin. */
#ifndef TESSERA_CORE_ONNX_WRITER_H
#define TESSERA_CORE_ONNX_WRITER_H

#include <stddef.h>

#include "graph_view.h"

/*
 * Writes `v` as a serialized ModelProto:
 *   - graph inputs: v's inputs, in order, with their types; those that are
 *     constants (initializers, Constant-node outputs of other pieces) are also
 *     written as initializers;
 *   - values the nodes read from v's graph that v does not list (initializers
 *     not declared as graph inputs, outer-scope values a subgraph reads) are
 *     added after them: constants as initializers only, others as inputs;
 *   - nodes with every attribute, subgraphs recursively (a densified sparse
 *     attribute is written back as a SparseTensorProto);
 *   - graph outputs: v's outputs; value_info for the typed intermediates;
 *   - model-local functions from v's model; opset_import one version per
 *     domain (onnx_opsets_for): a piece whose nodes of a domain share a
 *     version gets it (after a chain of models, a piece of one stage is
 *     written at that stage's opset), else the newest, and an older node
 *     whose op changed in between is an error naming it.
 * *bytes is malloc'd (so host->free releases it too); *size gets its length.
 * Nothing is written on error.
 */
tsr_status *onnx_write_view(const struct tsr_graph *v, void **bytes, size_t *size);

/* The same, but a constant the view reads that takes more than
 * `inline_max` bytes is written as a graph input without data (its type
 * only), for the caller to feed from the constant itself: a weight is not
 * copied twice into a model that runs once (runtime/session_fold.c). */
tsr_status *onnx_write_view_by_reference(const struct tsr_graph *v, size_t inline_max, void **bytes, size_t *size);

/* All of model `m` the same way, with the model's own producer, doc string
 * and metadata_props: what `tessera compose -o` writes. */
tsr_status *onnx_write_model(ir_model *m, void **bytes, size_t *size);

#endif
