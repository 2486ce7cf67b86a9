/* A plugin whose Relu hands back the wrong tensor, by its option `mode`:
 * "type" an int64 tensor of the right shape, "shape" a float [3]. The host
 * must stop the run with an error naming the provider, node and value,
 * not pass the tensor on. */
#include "plugin_common.h"

typedef struct wrong_state {
    bool shape; /* else the type is wrong */
} wrong_state;

static const char *const ops[] = {"Relu", NULL};

static tsr_status *create(const tsr_provider_config *config, void **state) {
    if (config->option_count != 1 || strcmp(config->option_keys[0], "mode") != 0 ||
        (strcmp(config->option_values[0], "type") != 0 && strcmp(config->option_values[0], "shape") != 0))
        return tp_error(TSR_ERR_INVALID_ARGUMENT, "wrong_output needs mode=type|shape");
    wrong_state *s = calloc(1, sizeof *s);
    if (!s) return host->status_new(TSR_ERR_NO_MEMORY, "out of memory");
    s->shape = strcmp(config->option_values[0], "shape") == 0;
    *state = s;
    return NULL;
}

static tsr_status *claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink) {
    (void)state;
    return tp_claim_ops(graph, sink, ops, "wrong_output");
}

static tsr_status *compile(void *state, const tsr_graph *piece, void **piece_state) {
    *piece_state = state;
    (void)piece;
    return NULL;
}

static void release(void *piece_state) { (void)piece_state; }

static tsr_status *run(void *piece_state, tsr_run_context *ctx) {
    const wrong_state *s = piece_state;
    const tsr_tensor *x = host->run_input(ctx, 0);
    int64_t three = 3;
    tsr_tensor *out;
    tsr_status *st = s->shape ? host->run_alloc_output(ctx, 0, TSR_FLOAT, 1, &three, &out)
                              : host->run_alloc_output(ctx, 0, TSR_INT64, x->rank, x->dims, &out);
    if (!st) memset(out->data, 0, out->nbytes);
    return st;
}

static const tsr_provider table = {
    .struct_size = sizeof(tsr_provider),
    .name = "wrong_output",
    .vendor = "Tessera tests",
    .version = "0",
    .create = create,
    .destroy = tp_destroy,
    .device_count = tp_device_count,
    .device_info = tp_device_info,
    .claim = claim,
    .compile = compile,
    .run = run,
    .release = release,
};

TSR_EXPORT tsr_status *tessera_provider_entry(tsr_provider_entry_args *args) { return tp_entry(args, &table); }
