/* Chains of models made one model (core/model_compose.c): what
 * tsr_session_options_add_stage and `tessera run pre.onnx model.onnx`
 * ask for, merged as onnx.compose.merge_models merges two models. */
#ifndef TESSERA_CORE_MODEL_COMPOSE_H
#define TESSERA_CORE_MODEL_COMPOSE_H

#include <stddef.h>

#include "ir.h"

/* Output `output` of an earlier stage feeds input `input` of `stage`; both
 * named as in their own files (before prefixes). */
typedef struct compose_link {
    size_t stage; /* >= 1; 0: the one later stage that has an input `input` */
    char *output;
    char *input;
} compose_link;

/* What the session options say about the chain. Stage 0 is the model given
 * to tsr_session_create; paths[k - 1] is stage k. */
typedef struct compose_spec {
    size_t n_paths;
    char **paths;
    char **prefixes; /* n_prefixes entries by stage, NULL where none */
    size_t n_prefixes;
    compose_link *links; /* in the order given */
    size_t n_links;
} compose_spec;

void compose_spec_clear(compose_spec *s);

/*
 * Merges models[0..n) (n >= 2), each as loaded and checked, into models[0],
 * which *out then is; every model is consumed, also on failure. labels[k]
 * names stage k in messages (its file). In order, as onnx.compose does:
 *   - a stage with links takes exactly those: its input IN is fed by output
 *     OUT of the nearest earlier stage that has one so named; a stage without
 *     links has stage k-1's outputs feed its inputs (not counting inputs
 *     that have an initializer) by position;
 *   - names get their stage's prefix (values, nodes, subgraphs included;
 *     model-local functions and the ops calling them), as
 *     onnx.compose.add_prefix;
 *   - a value name used by two stages is an error naming it and both;
 *   - the graph's inputs are stage 0's, then each later stage's
 *     unconnected ones; its outputs are the earlier stages' outputs not
 *     connected, then the last stage's, stage by stage;
 *   - opset imports are united, a domain at several versions taking the
 *     newest: each node keeps its own file's version (ir_node.opset), which
 *     every reader asks, so nothing is converted (a file written from the
 *     result needs ir_model_settle_opsets, opset_convert.h);
 *     ir_version is the largest; metadata_props united (one key with two
 *     values is an error); functions united (one defined twice is an error).
 * Shapes are not inferred: the result is what loading one file would give.
 */
tsr_status *ir_model_compose(ir_model **models, const char *const *labels, size_t n, const compose_spec *spec,
                             ir_model **out);

#endif
