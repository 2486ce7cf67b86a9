/* A plugin that claims every Relu and Add of what it is offered as ONE piece
 * (cost 1 s), whether or not that set is convex, and then compiles only
 * one-node pieces. The partitioner must split a set that would make the
 * piece graph cyclic; a session must hand a many-node piece that fails to
 * compile to the next provider as a whole. */
#include "plugin_common.h"

static const char *const ops[] = {"Relu", "Add", NULL};

static tsr_status *claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink) {
    (void)state;
    size_t n = host->graph_node_count(graph), k = 0;
    const tsr_node **mine = calloc(n + 1, sizeof *mine);
    if (!mine) return host->status_new(TSR_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const tsr_node *node = host->graph_node(graph, i);
        if (tp_op_in(node, ops)) mine[k++] = node;
        else host->decline_node(sink, node, TSR_DECLINE_OP, "greedy runs only Relu and Add");
    }
    tsr_status *s = k ? host->claim_piece(sink, mine, k, 1.0) : NULL;
    free(mine);
    return s;
}

static const tsr_provider table = {
    .struct_size = sizeof(tsr_provider),
    .name = "greedy",
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
