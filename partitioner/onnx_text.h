/* A parser for function bodies written in ONNX's textual syntax (the format
 * of onnx.parser):
 *
 *   <domain: "", opset_import: ["" : 18]>
 *   Celu <alpha: float = 1.0> (X) => (Y) {
 *       Alpha = Constant <value_float: float = @alpha> ()
 *       ...
 *   }
 *
 * Supported: the header keys domain and opset_import, function attributes
 * with or without defaults, nodes `outs = [domain.]Op <attrs> (ins)` with
 * int / float / string / list / tensor literal values and attribute
 * references (`name: type = @ref`), omitted inputs (empty or ""), `#`
 * comments, graph attributes written `name: graph = G (ins) => (outs) { nodes }`
 * (untyped inputs; their nodes may read the enclosing graphs' values), and
 * calls of the caller's graph attributes, `outs = @attr (ins)`, which the
 * expander splices in. */
#ifndef TESSERA_ONNX_TEXT_H
#define TESSERA_ONNX_TEXT_H

#include "ir.h"

/* Parses one function. Its body graph has no model; each body node's opset
 * is the function's import of its domain (0 when it imports none). Errors
 * give `what` (a file or op name), the line and the column. */
tsr_status *onnx_text_parse_function(const char *text, const char *what, ir_function **out);

#endif
