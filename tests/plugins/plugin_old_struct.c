/* A plugin compiled before the device-memory slots (mem_alloc and later) were
 * appended to tsr_provider. Its table is its own, shorter struct, exactly as
 * an old header would have laid it out, so a host that reads past
 * struct_size reads past the object (AddressSanitizer reports it). It must
 * load and run Relu. */
#include "plugin_common.h"

typedef struct old_provider {
    uint32_t struct_size;
    const char *name;
    const char *vendor;
    const char *version;
    tsr_status *(*create)(const tsr_provider_config *config, void **state);
    void (*destroy)(void *state);
    size_t (*device_count)(void *state);
    tsr_status *(*device_info)(void *state, size_t index, tsr_device_info *info);
    tsr_status *(*claim)(void *state, const tsr_graph *graph, tsr_claim_sink *sink);
    tsr_status *(*compile)(void *state, const tsr_graph *piece, void **piece_state);
    tsr_status *(*run)(void *piece_state, tsr_run_context *ctx);
    void (*release)(void *piece_state);
} old_provider;

_Static_assert(sizeof(old_provider) == offsetof(tsr_provider, mem_alloc),
               "old_provider must be tsr_provider up to (not including) mem_alloc");
_Static_assert(offsetof(old_provider, release) == offsetof(tsr_provider, release),
               "old_provider must lay out like the start of tsr_provider");

static const char *const ops[] = {"Relu", NULL};

static tsr_status *claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink) {
    (void)state;
    return tp_claim_ops(graph, sink, ops, "old_struct");
}

static const old_provider table = {
    .struct_size = (uint32_t)offsetof(tsr_provider, mem_alloc),
    .name = "old_struct",
    .vendor = "Tessera tests",
    .version = "0.0.1",
    .create = tp_create,
    .destroy = tp_destroy,
    .device_count = tp_device_count,
    .device_info = tp_device_info,
    .claim = claim,
    .compile = tp_compile,
    .run = tp_run,
    .release = tp_release,
};

TSR_EXPORT tsr_status *tessera_provider_entry(tsr_provider_entry_args *args) {
    return tp_entry(args, (const tsr_provider *)(const void *)&table);
}
