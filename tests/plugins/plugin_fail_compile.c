/* A plugin that claims every Relu and Add but fails to compile any of them:
 * the session must hand each piece to the next provider, warn, and still
 * compute the right answer. */
#include "plugin_common.h"

static const char *const ops[] = {"Relu", "Add", NULL};

static tsr_status *claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink) {
    (void)state;
    return tp_claim_ops(graph, sink, ops, "fail_compile");
}

static tsr_status *compile(void *state, const tsr_graph *piece, void **piece_state) {
    (void)state;
    (void)piece_state;
    const tsr_node *n = host->graph_node(piece, 0);
    return tp_error(TSR_ERR_PROVIDER, "compile of '%s' failed on purpose", n ? host->node_name(n) : "?");
}

static const tsr_provider table = {
    .struct_size = sizeof(tsr_provider),
    .name = "fail_compile",
    .vendor = "Tessera tests",
    .version = "0",
    .create = tp_create,
    .destroy = tp_destroy,
    .device_count = tp_device_count,
    .device_info = tp_device_info,
    .claim = claim,
    .compile = compile,
    .run = tp_run,
    .release = tp_release,
};

TSR_EXPORT tsr_status *tessera_provider_entry(tsr_provider_entry_args *args) { return tp_entry(args, &table); }
