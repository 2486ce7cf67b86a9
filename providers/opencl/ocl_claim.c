/* Claims: every node this provider computes to the reference's tolerance,
 * grouped as it will be fused; every other node declined with its reason. */
#include <stdlib.h>

#include "ocl_group.h"

tsr_status *ocl_claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink) {
    ocl_state *st = state;
    size_t n = ocl_host->graph_node_count(graph);
    if (!st->have_device) {
        for (size_t i = 0; i < n; i++)
            ocl_host->decline_node(sink, ocl_host->graph_node(graph, i), TSR_DECLINE_OTHER,
                                   "no OpenCL platform or device found");
        return NULL;
    }
    const tsr_node **nodes = calloc(n + 1, sizeof *nodes);
    bool *supported = calloc(n + 1, sizeof *supported);
    bool *taken = calloc(n + 1, sizeof *taken);
    tsr_status *s = NULL;
    if (!nodes || !supported || !taken) {
        s = ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        nodes[i] = ocl_host->graph_node(graph, i);
        int32_t reason = TSR_DECLINE_OTHER;
        const char *why = NULL;
        char buf[256];
        supported[i] = ocl_node_supported(nodes[i], &reason, &why, buf, sizeof buf);
        if (!supported[i]) ocl_host->decline_node(sink, nodes[i], reason, why);
    }
    for (size_t i = 0; i < n && !s; i++) {
        if (!supported[i] || taken[i]) continue;
        ocl_group g;
        ocl_group_from(nodes, n, i, supported, taken, NULL, NULL, &g);
        const tsr_node *members[OCL_GROUP_MAX];
        for (size_t k = 0; k < g.count; k++) {
            members[k] = nodes[g.members[k]];
            taken[g.members[k]] = true;
        }
        s = ocl_host->claim_piece(sink, members, g.count, -1.0);
    }
done:
    free(nodes);
    free(supported);
    free(taken);
    return s;
}
