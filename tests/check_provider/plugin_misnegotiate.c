/* A plugin that answers every host with ABI 1, for `tessera
 * check-provider`'s negotiation check: it never looks at the range it is
 * offered, so today's host (1..1) loads it and every other check passes,
 * but a host that has dropped ABI 1 would be told "1" where provider.h
 * asks for a refusal with a message. It runs Relu right. */
#include "plugin_common.h"

static const char *const ops[] = {"Relu", NULL};

static tsr_status *claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink) {
    (void)state;
    return tp_claim_ops(graph, sink, ops, "misnegotiate");
}

static const tsr_provider table = {
    .struct_size = sizeof(tsr_provider),
    .name = "misnegotiate",
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

TSR_EXPORT tsr_status *tessera_provider_entry(tsr_provider_entry_args *args) {
    host = args->host; /* the bug: no look at host_abi_min/host_abi_max */
    args->abi_version = 1;
    args->provider = &table;
    return NULL;
}
