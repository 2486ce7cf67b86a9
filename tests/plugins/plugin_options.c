/* A plugin with one option, `scale` (a number): it runs Relu and multiplies
 * the result by the scale, so a test sees that the option arrived. Unknown
 * keys and bad values are refused with a message naming them. */
#include "plugin_common.h"

static const char *const ops[] = {"Relu", NULL};

static tsr_status *create(const tsr_provider_config *config, void **state) {
    float scale = 1.0f;
    for (size_t i = 0; i < config->option_count; i++) {
        const char *key = config->option_keys[i];
        const char *val = config->option_values[i];
        if (strcmp(key, "scale") != 0)
            return tp_error(TSR_ERR_INVALID_ARGUMENT, "options provider has no option '%s' (it knows: scale)", key);
        char *end = NULL;
        scale = strtof(val, &end);
        if (!*val || !end || *end)
            return tp_error(TSR_ERR_INVALID_ARGUMENT, "option 'scale' needs a number, got '%s'", val);
    }
    tp_state *s = calloc(1, sizeof *s);
    if (!s) return host->status_new(TSR_ERR_NO_MEMORY, "out of memory");
    s->scale = scale;
    *state = s;
    return NULL;
}

static tsr_status *claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink) {
    (void)state;
    return tp_claim_ops(graph, sink, ops, "options");
}

static const tsr_provider table = {
    .struct_size = sizeof(tsr_provider),
    .name = "options",
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
