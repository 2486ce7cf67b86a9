/* A plugin for an op nobody else runs, com.example.Mystery (y = 2x), which
 * declines everything else. Its compile asks for the piece as ONNX bytes
 * (host->graph_to_onnx), as a vendor with its own ONNX parser would. */
#include "plugin_common.h"

static const char *const ops[] = {"com.example.Mystery", NULL};

static tsr_status *claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink) {
    (void)state;
    return tp_claim_ops(graph, sink, ops, "custom");
}

static tsr_status *compile(void *state, const tsr_graph *piece, void **piece_state) {
    void *bytes = NULL;
    size_t size = 0;
    tsr_status *s = host->graph_to_onnx(piece, &bytes, &size);
    if (s) return s;
    /* A ModelProto with a graph is never empty; field 7 (graph) is in it. */
    bool ok = bytes && size > 8;
    host->free(bytes);
    if (!ok) return host->status_new(TSR_ERR_PROVIDER, "graph_to_onnx gave no bytes");
    return tp_compile(state, piece, piece_state);
}

static const tsr_provider table = {
    .struct_size = sizeof(tsr_provider),
    .name = "custom",
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
