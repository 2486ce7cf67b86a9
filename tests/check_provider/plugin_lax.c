/* A plugin that ignores the options it is given, for `tessera
 * check-provider`'s unknown_option check: provider.h says unknown keys
 * must be refused with TSR_ERR_INVALID_ARGUMENT naming the key, or every
 * user's typo silently becomes a default. It runs Relu right. */
#include "plugin_common.h"

static const char *const ops[] = {"Relu", NULL};

static tsr_status *create(const tsr_provider_config *config, void **state) {
    (void)config; /* the bug: no look at option_keys */
    tp_state *s = calloc(1, sizeof *s);
    if (!s) return host->status_new(TSR_ERR_NO_MEMORY, "out of memory");
    s->scale = 1.0f;
    *state = s;
    return NULL;
}

static tsr_status *claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink) {
    (void)state;
    return tp_claim_ops(graph, sink, ops, "lax");
}

static const tsr_provider table = {
    .struct_size = sizeof(tsr_provider),
    .name = "lax",
    .vendor = "Tessera tests",
    .version = "0",
    .create = create,
    .destroy = tp_destroy,
    .device_count = tp_device_count,
    .device_info = tp_device_info,
    .claim = claim,
    .compile = tp_compile,
    .run = tp_run,
    .release = tp_release,
};

TSR_EXPORT tsr_status *tessera_provider_entry(tsr_provider_entry_args *args) { return tp_entry(args, &table); }
