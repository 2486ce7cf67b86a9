/* The opset_import of a graph or piece written as one ONNX file
 * (core/onnx_opsets.c, for core/onnx_writer.c). */
#ifndef TESSERA_CORE_ONNX_OPSETS_H
#define TESSERA_CORE_ONNX_OPSETS_H

#include <stddef.h>

#include "ir.h"

/*
 * One version per domain for `nodes` (and their subgraphs) of model m. A
 * node keeps the version its own file imported (ir_node.opset), and after
 * a chain of models or function expansion one domain may have several:
 *   - a piece (whole false) whose nodes of a domain share one version gets
 *     that version, so a piece of one stage is written as that stage's;
 *   - else the domain gets the newest of m's import and its nodes', and
 *     every node of an older version must mean the same there
 *     (opset_compat.c): an error names the first that does not.
 * Domains m imports that no node uses keep m's version. *out (malloc'd,
 * *n_out entries; free it, not the domains, which are borrowed from m and
 * the nodes).
 */
tsr_status *onnx_opsets_for(const ir_model *m, ir_node *const *nodes, size_t n_nodes, bool whole, ir_opset **out,
                            size_t *n_out);

#endif
