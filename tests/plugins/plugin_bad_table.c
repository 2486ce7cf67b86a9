/* A plugin whose table leaves required slots (claim, compile, run) NULL: the
 * host must refuse it at load time rather than crash on first use. */
#include "plugin_common.h"

static const tsr_provider table = {
    .struct_size = sizeof(tsr_provider),
    .name = "bad_table",
    .vendor = "Tessera tests",
    .version = "0",
    .create = tp_create,
    .destroy = tp_destroy,
    .device_count = tp_device_count,
    .device_info = tp_device_info,
    /* claim, compile, run, release: missing */
};

TSR_EXPORT tsr_status *tessera_provider_entry(tsr_provider_entry_args *args) { return tp_entry(args, &table); }
