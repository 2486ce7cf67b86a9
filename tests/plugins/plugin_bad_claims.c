/* A plugin whose claims are odd, by its option `mode`: "garbage" names a
 * pointer that is no node and "duplicate" the same node twice (the host must
 * refuse both with a clear error, never reading through the garbage
 * handle), "device" claims node 0 on device 5 of its one device (refused
 * too); "disconnected" claims the offered nodes 0 and 4, which pass no
 * values to each other in exec_chain.onnx (the host makes two pieces). */
#include <stdint.h>

#include "plugin_common.h"

typedef struct bad_state {
    char mode[16];
} bad_state;

static tsr_status *create(const tsr_provider_config *config, void **state) {
    if (config->option_count != 1 || strcmp(config->option_keys[0], "mode") != 0 ||
        strlen(config->option_values[0]) >= sizeof((bad_state *)0)->mode)
        return tp_error(TSR_ERR_INVALID_ARGUMENT, "bad_claims needs mode=garbage|duplicate|device|disconnected");
    bad_state *s = calloc(1, sizeof *s);
    if (!s) return host->status_new(TSR_ERR_NO_MEMORY, "out of memory");
    strcpy(s->mode, config->option_values[0]);
    *state = s;
    return NULL;
}

static tsr_status *claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink) {
    const bad_state *s = state;
    if (host->graph_node_count(graph) < 5) return NULL;
    const tsr_node *nodes[2] = {host->graph_node(graph, 0), host->graph_node(graph, 4)};
    if (strcmp(s->mode, "garbage") == 0) nodes[1] = (const tsr_node *)(uintptr_t)0x1000;
    else if (strcmp(s->mode, "duplicate") == 0) nodes[1] = nodes[0];
    else if (strcmp(s->mode, "device") == 0) return host->claim_piece_on(sink, nodes, 1, 1.0, 5);
    return host->claim_piece(sink, nodes, 2, 1.0);
}

static const tsr_provider table = {
    .struct_size = sizeof(tsr_provider),
    .name = "bad_claims",
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
