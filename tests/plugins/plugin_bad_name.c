/* A plugin calling itself "Evil Name/../x": names show in reports, option
 * keys and --assign rules, so the host refuses it at load. */
#include "plugin_common.h"

static tsr_status *claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink) {
    (void)state, (void)graph, (void)sink;
    return NULL;
}

static const tsr_provider table = {
    .struct_size = sizeof(tsr_provider),
    .name = "Evil Name/../x",
    .vendor = "Tessera tests",
    .version = "0",
    .create = tp_create,
    .destroy = tp_destroy,
    .device_count = tp_device_count,
    .device_info = tp_device_info,
    .claim = claim,
    .compile = tp_compile,
    .run = tp_run,
    .release = tp_release,
};

TSR_EXPORT tsr_status *tessera_provider_entry(tsr_provider_entry_args *args) { return tp_entry(args, &table); }
