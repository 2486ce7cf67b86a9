/* A plugin built for a future host: it speaks ABI 2 only and refuses a host
 * whose range does not include it, saying why. */
#include <stdio.h>

#include "tessera/provider.h"

TSR_EXPORT tsr_status *tessera_provider_entry(tsr_provider_entry_args *args) {
    char msg[128];
    if (args->host_abi_min > 2 || args->host_abi_max < 2) {
        snprintf(msg, sizeof msg, "needs ABI 2; this host speaks ABI %u..%u", (unsigned)args->host_abi_min,
                 (unsigned)args->host_abi_max);
        return args->host->status_new(TSR_ERR_ABI, msg);
    }
    /* Not reached with any host that exists yet. */
    return args->host->status_new(TSR_ERR_ABI, "ABI 2 is not defined yet");
}
