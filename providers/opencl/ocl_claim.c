/* Claims: every node this provider computes to the reference's tolerance,
 * grouped as it will be fused; every other node declined with its reason.
 *
 * Each fusion group is one piece, except that a view node (Reshape,
 * Flatten, Squeeze, Unsqueeze, a lone Identity) joins the piece of the node
 * that reads its output: inside a piece a view shares its input's buffer,
 * while a view that is a piece of its own must copy into the buffer the host
 * allocates for its output. Joining the reader (not the producer) keeps the
 * view's output private to the piece, and the set stays convex: the view's
 * output goes nowhere else, and nothing in the reader's group can reach the
 * view, which runs before it. */
#include <stdlib.h>

#include "ocl_group.h"
#include "ocl_piece.h"

/* The node a view's output goes to, when it is the only reader, the value
 * is not a graph output (`outputs`, sorted) and we run the reader; else
 * SIZE_MAX. */
static size_t view_reader(const ocl_nodes *l, const ocl_names *outputs, size_t i, const bool *supported) {
    const tsr_node *node = l->at[i];
    if (!ocl_is_view(node) || ocl_host->node_output_count(node) != 1) return SIZE_MAX;
    const tsr_value_info *o = ocl_host->node_output(node, 0);
    size_t first;
    if (!o || ocl_names_find(outputs, ocl_host->value_name(o), &first)) return SIZE_MAX;
    size_t j = ocl_sole_consumer(l, i, ocl_host->value_name(o));
    return j != SIZE_MAX && supported[j] ? j : SIZE_MAX;
}

static size_t find(size_t *piece_of, size_t g) {
    while (piece_of[g] != g) g = piece_of[g] = piece_of[piece_of[g]];
    return g;
}

/* Seconds a piece takes: a launch per node plus its flops at a rough
 * throughput from the device's units and clock (16 flops a cycle per unit
 * on a GPU, 4 on a CPU device, where PoCL vectorises less). Negative
 * (unknown) with a host too old to estimate flops. */
static double piece_cost(const ocl_state *st, const tsr_node *const *nodes, size_t count) {
    if (!TSR_HAS_MEMBER(ocl_host, tsr_host_api, node_flops) || !st->have_device) return -1.0;
    const ocl_device_desc *d = &st->devices[st->active];
    cl_uint units = 0, mhz = 0;
    if (clGetDeviceInfo(d->id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL) != CL_SUCCESS ||
        clGetDeviceInfo(d->id, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof mhz, &mhz, NULL) != CL_SUCCESS || !units || !mhz)
        return -1.0;
    double rate = (double)units * (double)mhz * 1e6 * (d->kind == TSR_DEVICE_GPU ? 16.0 : 4.0);
    double t = 0.0;
    for (size_t i = 0; i < count; i++) {
        double f = ocl_host->node_flops(nodes[i]);
        if (f < 0) return -1.0;
        t += 8e-6 + f / rate;
    }
    return t;
}

tsr_status *ocl_claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink) {
    ocl_state *st = state;
    size_t n = ocl_host->graph_node_count(graph);
    if (!st->have_device) {
        for (size_t i = 0; i < n; i++)
            ocl_host->decline_node(sink, ocl_host->graph_node(graph, i), TSR_DECLINE_OTHER,
                                   "no OpenCL platform or device found");
        return NULL;
    }
    /* Built once: who reads each value, and the graph's outputs, by name. */
    ocl_nodes l;
    ocl_names outputs = {0};
    tsr_status *s = ocl_nodes_init(&l, graph);
    if (!s) s = ocl_names_of_outputs(&outputs, graph);
    const tsr_node *const *nodes = l.at;
    bool *supported = calloc(n + 1, sizeof *supported);
    bool *taken = calloc(n + 1, sizeof *taken);
    size_t *group_of = calloc(n + 1, sizeof *group_of); /* node -> group (its first node) */
    size_t *piece_of = calloc(n + 1, sizeof *piece_of); /* group -> merged group */
    size_t *lone = calloc(n + 1, sizeof *lone);         /* group -> 1 when a single node */
    const tsr_node **members = calloc(n + 1, sizeof *members);
    if (s) goto done;
    if (!supported || !taken || !group_of || !piece_of || !lone || !members) {
        s = ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        group_of[i] = piece_of[i] = i;
        int32_t reason = TSR_DECLINE_OTHER;
        const char *why = NULL;
        char buf[256];
        supported[i] = ocl_node_supported(nodes[i], &reason, &why, buf, sizeof buf);
        if (!supported[i]) ocl_host->decline_node(sink, nodes[i], reason, why);
    }
    for (size_t i = 0; i < n; i++) {
        if (!supported[i] || taken[i]) continue;
        ocl_group g;
        ocl_group_from(&l, i, supported, taken, NULL, NULL, &g);
        for (size_t k = 0; k < g.count; k++) {
            taken[g.members[k]] = true;
            group_of[g.members[k]] = i;
        }
        lone[i] = g.count == 1 && g.kind == OCL_GROUP_SINGLE;
    }
    /* Views join their reader's piece; backwards, so a chain of views
     * follows its last one into the reader. */
    for (size_t i = n; i-- > 0;) {
        if (!supported[i] || group_of[i] != i || !lone[i]) continue;
        size_t j = view_reader(&l, &outputs, i, supported);
        if (j != SIZE_MAX) piece_of[i] = find(piece_of, group_of[j]);
    }
    /* Bucket the nodes by piece (in node order, so topological), then claim
     * each piece at its first node. */
    for (size_t k = 0; k < n; k++) lone[k] = 0; /* reused: bucket sizes, then offsets */
    for (size_t k = 0; k < n; k++)
        if (supported[k]) lone[find(piece_of, group_of[k])]++;
    size_t total = 0;
    for (size_t k = 0; k < n; k++) {
        size_t c = lone[k];
        lone[k] = total;
        total += c;
    }
    for (size_t k = 0; k < n; k++)
        if (supported[k]) members[lone[find(piece_of, group_of[k])]++] = nodes[k];
    /* lone[r] is now the end of piece r's bucket; it starts where the
     * previous root's ended. */
    size_t start = 0;
    for (size_t i = 0; i < n && !s; i++) {
        if (!supported[i] || group_of[i] != i || find(piece_of, i) != i) continue;
        s = ocl_host->claim_piece(sink, members + start, lone[i] - start,
                                  piece_cost(st, members + start, lone[i] - start));
        start = lone[i];
    }
done:
    ocl_nodes_free(&l);
    ocl_names_free(&outputs);
    free(supported);
    free(taken);
    free(group_of);
    free(piece_of);
    free(lone);
    free(members);
    return s;
}
