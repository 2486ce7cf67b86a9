/* A plugin that answers the handshake with a version the host never offered
 * (99) instead of refusing. */
#include "plugin_common.h"

static const tsr_provider table = {
    .struct_size = sizeof(tsr_provider),
    .name = "bad_version",
    .vendor = "Tessera tests",
    .version = "0",
    .create = tp_create,
    .destroy = tp_destroy,
    .device_count = tp_device_count,
    .device_info = tp_device_info,
    .claim = NULL,
    .compile = tp_compile,
    .run = tp_run,
    .release = tp_release,
};

TSR_EXPORT tsr_status *tessera_provider_entry(tsr_provider_entry_args *args) {
    host = args->host;
    args->abi_version = 99;
    args->provider = &table;
    return NULL;
}
