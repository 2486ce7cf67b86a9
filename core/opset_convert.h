/* Making a model whose nodes were written for different versions of a
 * domain (a chain of models, core/model_compose.c) one that an ONNX file
 * can hold: one version per domain (core/opset_convert.c). A session needs
 * none of it: every node keeps the version it was written for, and every
 * reader (shape inference, expansion, providers through node_opset) asks
 * the node. */
#ifndef TESSERA_CORE_OPSET_CONVERT_H
#define TESSERA_CORE_OPSET_CONVERT_H

#include "ir.h"

/*
 * Every node of m's graph and subgraphs whose version is older than the
 * one m imports for its domain is made to be read at that version: nothing
 * to do where its op did not change in between in a way the node uses;
 * rewritten where it changed in form (axes, split, pads, min/max, ratio,
 * k, starts/ends from attributes to inputs; Softmax, LogSoftmax and
 * Hardmax's pre-13 2-D coercion as Flatten, the op, Reshape; renamed
 * attributes and values; core/opset_rewrite.c); else an error naming the
 * node, its op, both versions and what changed. Model-local functions that
 * leave a domain to the model's import get their body's version named.
 * On error m may be half rewritten: free it.
 */
tsr_status *ir_model_settle_opsets(ir_model *m);

#endif
