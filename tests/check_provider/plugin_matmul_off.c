/* A plugin whose MatMul is off by 1e-2, for `tessera check-provider`'s
 * model_round_trip check: it claims every 2-D float MatMul and adds 1e-2
 * to each element of the product, so a whole model built on MatMul must
 * fail, naming the model and its output. */
#include "plugin_common.h"

#define OFF 1e-2f

/* A MatMul of two rank-2 float inputs; other nodes are declined. */
static bool plain_matmul(const tsr_node *node) {
    if (strcmp(host->node_op_type(node), "MatMul") != 0 || host->node_domain(node)[0]) return false;
    for (size_t i = 0; i < 2; i++) {
        const tsr_value_info *v = host->node_input(node, i);
        if (!v || host->value_elem_type(v) != TSR_FLOAT || host->value_rank(v) != 2) return false;
    }
    return true;
}

static tsr_status *claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink) {
    (void)state;
    size_t n = host->graph_node_count(graph);
    for (size_t i = 0; i < n; i++) {
        const tsr_node *node = host->graph_node(graph, i);
        if (!plain_matmul(node)) {
            host->decline_node(sink, node, TSR_DECLINE_OP, "matmul_off runs 2-D float MatMul only");
            continue;
        }
        tsr_status *s = host->claim_piece(sink, &node, 1, -1.0);
        if (s) return s;
    }
    return NULL;
}

static tsr_status *run(void *piece_state, tsr_run_context *ctx) {
    const tp_piece *p = piece_state;
    const tsr_tensor *a = host->run_input(ctx, (size_t)p->in[0]);
    const tsr_tensor *b = host->run_input(ctx, (size_t)p->in[1]);
    if (!a || !b || a->rank != 2 || b->rank != 2 || a->dims[1] != b->dims[0])
        return tp_error(TSR_ERR_NOT_SUPPORTED, "node '%s': [M,K] x [K,N] only", p->name);
    int64_t m = a->dims[0], k = a->dims[1], n = b->dims[1], dims[2] = {m, n};
    tsr_tensor *y;
    tsr_status *s = host->run_alloc_output(ctx, p->out >= 0 ? (size_t)p->out : (size_t)-1, TSR_FLOAT, 2, dims, &y);
    if (s) return s;
    const float *x = a->data, *w = b->data;
    float *out = y->data;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            float acc = 0.0f;
            for (int64_t t = 0; t < k; t++) acc += x[i * k + t] * w[t * n + j];
            out[i * n + j] = acc + OFF; /* the bug */
        }
    return NULL;
}

static tsr_status *compile(void *state, const tsr_graph *piece, void **piece_state) {
    (void)state;
    const tsr_node *node = host->graph_node(piece, 0);
    tp_piece *p = calloc(1, sizeof *p);
    if (!p) return host->status_new(TSR_ERR_NO_MEMORY, "out of memory");
    p->in[0] = tp_index(piece, host->node_input(node, 0), false);
    p->in[1] = tp_index(piece, host->node_input(node, 1), false);
    p->out = tp_index(piece, host->node_output(node, 0), true);
    snprintf(p->name, sizeof p->name, "%s", host->node_name(node));
    *piece_state = p;
    return NULL;
}

static const tsr_provider table = {
    .struct_size = sizeof(tsr_provider),
    .name = "matmul_off",
    .vendor = "Tessera tests",
    .version = "0",
    .create = tp_create,
    .destroy = tp_destroy,
    .device_count = tp_device_count,
    .device_info = tp_device_info,
    .claim = claim,
    .compile = compile,
    .run = run,
    .release = tp_release,
};

TSR_EXPORT tsr_status *tessera_provider_entry(tsr_provider_entry_args *args) { return tp_entry(args, &table); }
