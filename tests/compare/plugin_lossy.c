/* A provider with a deliberate precision loss, for `compare --oracle`
 * tests: it claims 2-D float MatMul and sums each dot product in float32,
 * in order (one rounding per product and one per addition, as numpy's
 * float32 cumsum does), the textbook way a float32 GEMM loses precision.
 * Its results are right to float32 rounding; only the oracle can tell they
 * are less accurate than the reference provider's. */
#include <stdint.h>

#include "plugin_common.h"

typedef struct lossy_piece {
    int in[2], out;
    char name[128];
} lossy_piece;

static tsr_status *create(const tsr_provider_config *config, void **state) {
    if (config->option_count)
        return tp_error(TSR_ERR_INVALID_ARGUMENT, "lossy provider has no option '%s'", config->option_keys[0]);
    *state = NULL;
    return NULL;
}

static bool float_2d(const tsr_value_info *v) {
    return v && host->value_elem_type(v) == TSR_FLOAT && host->value_rank(v) == 2;
}

static tsr_status *claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink) {
    (void)state;
    size_t n = host->graph_node_count(graph);
    for (size_t i = 0; i < n; i++) {
        const tsr_node *node = host->graph_node(graph, i);
        bool op_ok = host->node_domain(node)[0] == 0 && strcmp(host->node_op_type(node), "MatMul") == 0;
        if (op_ok && host->node_input_count(node) == 2 && float_2d(host->node_input(node, 0)) &&
            float_2d(host->node_input(node, 1))) {
            tsr_status *s = host->claim_piece(sink, &node, 1, -1.0);
            if (s) return s;
        } else {
            host->decline_node(sink, node, op_ok ? TSR_DECLINE_TYPE : TSR_DECLINE_OP,
                               "lossy runs only 2-D float MatMul");
        }
    }
    return NULL;
}

static tsr_status *compile(void *state, const tsr_graph *piece, void **piece_state) {
    (void)state;
    if (host->graph_node_count(piece) != 1)
        return host->status_new(TSR_ERR_NOT_SUPPORTED, "lossy pieces hold one node");
    const tsr_node *node = host->graph_node(piece, 0);
    lossy_piece *p = calloc(1, sizeof *p);
    if (!p) return host->status_new(TSR_ERR_NO_MEMORY, "out of memory");
    p->in[0] = tp_index(piece, host->node_input(node, 0), false);
    p->in[1] = tp_index(piece, host->node_input(node, 1), false);
    p->out = tp_index(piece, host->node_output(node, 0), true);
    snprintf(p->name, sizeof p->name, "%s", host->node_name(node));
    *piece_state = p;
    return NULL;
}

static tsr_status *run(void *piece_state, tsr_run_context *ctx) {
    const lossy_piece *p = piece_state;
    const tsr_tensor *a = p->in[0] >= 0 ? host->run_input(ctx, (size_t)p->in[0]) : NULL;
    const tsr_tensor *b = p->in[1] >= 0 ? host->run_input(ctx, (size_t)p->in[1]) : NULL;
    if (!a || !b || a->elem_type != TSR_FLOAT || b->elem_type != TSR_FLOAT || a->rank != 2 || b->rank != 2 ||
        a->dims[1] != b->dims[0])
        return tp_error(TSR_ERR_INVALID_ARGUMENT, "node '%s': [M,K] x [K,N] floats only", p->name);
    int64_t m = a->dims[0], k = a->dims[1], n = b->dims[1], dims[2] = {m, n};
    tsr_tensor *out;
    tsr_status *s = host->run_alloc_output(ctx, p->out >= 0 ? (size_t)p->out : (size_t)-1, TSR_FLOAT, 2, dims, &out);
    if (s) return s;
    const float *x = a->data, *w = b->data;
    float *y = out->data;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            float acc = 0.0f;
            for (int64_t q = 0; q < k; q++) {
                float prod = x[i * k + q] * w[q * n + j]; /* rounded: no FMA */
                acc += prod;
            }
            y[i * n + j] = acc;
        }
    return NULL;
}

static const tsr_provider table = {
    .struct_size = sizeof(tsr_provider),
    .name = "lossy",
    .vendor = "Tessera tests",
    .version = "0",
    .create = create,
    .destroy = tp_destroy,
    .device_count = tp_device_count,
    .device_info = tp_device_info,
    .claim = claim,
    .compile = compile,
    .run = run,
    .release = tp_release,
};

TSR_EXPORT tsr_status *tessera_provider_entry(tsr_provider_entry_args *args) { return tp_entry(args, &table); }
