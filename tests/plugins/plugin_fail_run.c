/* A plugin that claims and compiles Relu but fails every run: the error from
 * tsr_session_run must name the provider and the node. */
#include "plugin_common.h"

static const char *const ops[] = {"Relu", NULL};

static tsr_status *claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink) {
    (void)state;
    return tp_claim_ops(graph, sink, ops, "fail_run");
}

static tsr_status *run(void *piece_state, tsr_run_context *ctx) {
    (void)piece_state;
    (void)ctx;
    return host->status_new(TSR_ERR_RUNTIME, "run failed on purpose");
}

static const tsr_provider table = {
    .struct_size = sizeof(tsr_provider),
    .name = "fail_run",
    .vendor = "Tessera tests",
    .version = "0",
    .create = tp_create,
    .destroy = tp_destroy,
    .device_count = tp_device_count,
    .device_info = tp_device_info,
    .claim = claim,
    .compile = tp_compile,
    .run = run,
    .release = tp_release,
};

TSR_EXPORT tsr_status *tessera_provider_entry(tsr_provider_entry_args *args) { return tp_entry(args, &table); }
