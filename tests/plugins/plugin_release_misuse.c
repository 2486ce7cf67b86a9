/* A plugin that misuses constant_release, which the host must refuse
 * every time: from claim (the offer is no compiled piece), on a value that
 * is not a constant, and on NULL. Where the host accepted one, compile
 * fails (the session then falls back to the next provider, which the test
 * sees); otherwise the pieces compile and run as tp_compile's. */
#include "plugin_common.h"

static const char *const ops[] = {"Relu", "Add", NULL};

static bool refused(tsr_status *s) {
    if (!s) return false;
    bool invalid = host->status_code(s) == TSR_ERR_INVALID_ARGUMENT;
    host->status_free(s);
    return invalid;
}

static bool can_release(void) {
    return TSR_HAS_MEMBER(host, tsr_host_api, constant_release) && host->constant_release;
}

static tsr_status *claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink) {
    (void)state;
    const tsr_node *n = host->graph_node(graph, 0);
    if (can_release() && n && !refused(host->constant_release(graph, host->node_input(n, 0))))
        return tp_error(TSR_ERR_PROVIDER, "release misuse accepted in claim");
    return tp_claim_ops(graph, sink, ops, "release_misuse");
}

static tsr_status *compile(void *state, const tsr_graph *piece, void **piece_state) {
    if (can_release()) {
        if (!refused(host->constant_release(piece, NULL)))
            return tp_error(TSR_ERR_PROVIDER, "release misuse accepted: NULL value");
        for (size_t i = 0; i < host->graph_input_count(piece); i++) {
            const tsr_value_info *v = host->graph_input(piece, i);
            if (!host->value_constant(v) && !refused(host->constant_release(piece, v)))
                return tp_error(TSR_ERR_PROVIDER, "release misuse accepted: '%s' is no constant", host->value_name(v));
        }
    }
    return tp_compile(state, piece, piece_state);
}

static const tsr_provider table = {
    .struct_size = sizeof(tsr_provider),
    .name = "release_misuse",
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
