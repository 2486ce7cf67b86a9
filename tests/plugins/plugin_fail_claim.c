/* A plugin whose claim fails: session creation must fail with a message that
 * names the provider and carries the plugin's own reason. */
#include "plugin_common.h"

static tsr_status *fail_claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink) {
    (void)state;
    (void)graph;
    (void)sink;
    return host->status_new(TSR_ERR_PROVIDER, "claim exploded on purpose");
}

static const tsr_provider table = {
    .struct_size = sizeof(tsr_provider),
    .name = "fail_claim",
    .vendor = "Tessera tests",
    .version = "0",
    .create = tp_create,
    .destroy = tp_destroy,
    .device_count = tp_device_count,
    .device_info = tp_device_info,
    .claim = fail_claim,
    .compile = tp_compile,
    .run = tp_run,
    .release = tp_release,
};

TSR_EXPORT tsr_status *tessera_provider_entry(tsr_provider_entry_args *args) { return tp_entry(args, &table); }
