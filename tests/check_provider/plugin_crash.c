/* A plugin that crashes the process in every Relu run (a NULL write, as a
 * vendor's bug would), for `tessera check-provider`: the case must come
 * back as a FAIL naming the signal, and the other checks must still run
 * and report, because each runs in a child of its own. */
#include "plugin_common.h"

static const char *const ops[] = {"Relu", NULL};

static tsr_status *claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink) {
    (void)state;
    return tp_claim_ops(graph, sink, ops, "crash");
}

static tsr_status *run(void *piece_state, tsr_run_context *ctx) {
    (void)piece_state;
    (void)ctx;
    /* volatile: the compiler must not prove the write away. */
    volatile int *nowhere = NULL;
    *nowhere = 1;
    return NULL;
}

static const tsr_provider table = {
    .struct_size = sizeof(tsr_provider),
    .name = "crash",
    .vendor = "Tessera tests",
    .version = "0",
    .create = tp_create,
    .destroy = tp_destroy,
    .device_count = tp_device_count,
    .device_info = tp_device_info,
    .claim = claim,
    .compile = tp_compile,
    .run = run,
    .release = tp_release,
};

TSR_EXPORT tsr_status *tessera_provider_entry(tsr_provider_entry_args *args) { return tp_entry(args, &table); }
