/* A vendor's provider as docs/writing-a-provider.md describes it, built by
 * run_sdk_test.sh against the installed headers alone (pkg-config
 * tessera-provider): it claims float Relu and computes it. */
#include <tessera/provider.h>

#include <stdio.h>
#include <string.h>

static const tsr_host_api *host;

static tsr_status *sdk_create(const tsr_provider_config *cfg, void **state) {
    /* No options exist, so any key is unknown and must be refused. */
    if (cfg && cfg->option_count) {
        char msg[160];
        snprintf(msg, sizeof msg, "sdkrelu: unknown option '%s' (it takes none)", cfg->option_keys[0]);
        return host->status_new(TSR_ERR_INVALID_ARGUMENT, msg);
    }
    *state = NULL;
    return NULL;
}

static void sdk_destroy(void *state) { (void)state; }

static size_t sdk_device_count(void *state) {
    (void)state;
    return 1;
}

static tsr_status *sdk_device_info(void *state, size_t i, tsr_device_info *info) {
    (void)state;
    (void)i;
    info->name = "sdk test chip";
    info->vendor = "sdk test";
    info->kind = TSR_DEVICE_ACCELERATOR;
    info->memory_kind = TSR_MEMORY_HOST;
    return NULL;
}

static tsr_status *sdk_claim(void *state, const tsr_graph *g, tsr_claim_sink *sink) {
    (void)state;
    for (size_t i = 0; i < host->graph_node_count(g); i++) {
        const tsr_node *n = host->graph_node(g, i);
        if (strcmp(host->node_op_type(n), "Relu") != 0 || host->node_domain(n)[0] != 0) {
            host->decline_node(sink, n, TSR_DECLINE_OP, "only Relu");
        } else if (host->value_elem_type(host->node_input(n, 0)) != TSR_FLOAT) {
            host->decline_node(sink, n, TSR_DECLINE_TYPE, "only float");
        } else {
            tsr_status *s = host->claim_piece(sink, &n, 1, -1.0);
            if (s) return s;
        }
    }
    return NULL;
}

static tsr_status *sdk_compile(void *state, const tsr_graph *piece, void **ps) {
    (void)state;
    *ps = (void *)piece;
    return NULL;
}

static tsr_status *sdk_run(void *ps, tsr_run_context *ctx) {
    (void)ps;
    const tsr_tensor *x = host->run_input(ctx, 0);
    if (!x || x->elem_type != TSR_FLOAT)
        return host->status_new(TSR_ERR_RUNTIME, "sdkrelu: Relu input is not a float tensor");
    tsr_tensor *y;
    tsr_status *s = host->run_alloc_output(ctx, 0, x->elem_type, x->rank, x->dims, &y);
    if (s) return s;
    const float *in = x->data;
    float *out = y->data;
    for (size_t i = 0; i < x->nbytes / sizeof(float); i++) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
    return NULL;
}

static void sdk_release(void *ps) { (void)ps; }

static const tsr_provider sdk_provider = {
    .struct_size = sizeof(tsr_provider),
    .name = "sdkrelu",
    .vendor = "sdk test",
    .version = "1.0",
    .create = sdk_create,
    .destroy = sdk_destroy,
    .device_count = sdk_device_count,
    .device_info = sdk_device_info,
    .claim = sdk_claim,
    .compile = sdk_compile,
    .run = sdk_run,
    .release = sdk_release,
};

TSR_EXPORT tsr_status *tessera_provider_entry(tsr_provider_entry_args *args) {
    if (args->host_abi_max < 1) return args->host->status_new(TSR_ERR_ABI, "needs ABI 1");
    host = args->host;
    args->abi_version = 1;
    args->provider = &sdk_provider;
    return NULL;
}
