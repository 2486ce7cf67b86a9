/* The ai.onnx.preview.training Gradient operator as a graph rewrite.
 *
 * A Gradient node's result depends on the nodes elsewhere in the graph that
 * compute its `y` from its `xs`, so no provider kernel could compute it from
 * its inputs alone. The core therefore replaces it, before shape inference
 * and partitioning, by the backward graph of those nodes written in plain
 * ai.onnx operators. */
#ifndef TESSERA_CORE_GRADIENT_H
#define TESSERA_CORE_GRADIENT_H

#include "ir.h"

/*
 * Replaces every Gradient node of g, and of its subgraphs, by reverse-mode
 * differentiation of the nodes between its xs and its y, seeded with ones
 * shaped like y. Each new node is named after the Gradient node and has
 * `origin` set to it. Differentiates Add, Sub, Mul, Div, Neg, Identity,
 * MatMul (2-D), Relu, Sigmoid, Tanh, Exp, Log, Sqrt and Abs, undoing
 * broadcasting with ReduceSum; Shape, ConstantOfShape, Sign, comparisons
 * and the like pass no gradient (so a gradient of a gradient works when
 * the inner one needed no ReduceSum or Transpose). Any other operator on
 * the way from an x to y is refused with an error naming the node and its op.
 *
 * A graph without Gradient nodes is left untouched. Otherwise shape
 * inference runs on g first (ranks and dims decide which axes were
 * broadcast), and g is re-sorted after each rewrite. On error g may be left
 * partly rewritten: the caller discards the model.
 */
tsr_status *gradient_expand(ir_graph *g);

#endif
