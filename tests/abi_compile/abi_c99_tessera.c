/* tessera.h on its own, as strict C99. Nothing is called (this program does
 * not link the library); the declarations must parse and the structs fill. */
#include "tessera/tessera.h"

#include <stdio.h>

int abi_c99_tessera_check(void) {
    tsr_io_info io = {sizeof io, "x", TSR_FLOAT, 0, NULL, NULL, TSR_VALUE_TENSOR};
    tsr_provider_desc pd = {sizeof pd, "a", "b", "c", "d", 1, 0, NULL};
    tsr_device_desc dd = {sizeof dd, "cpu", "v", NULL, 0, TSR_MEMORY_HOST, 0};
    /* Type-checked, never evaluated: this program does not link the library. */
    tsr_status *(*create)(const tsr_session_options *, const char *, tsr_session **) = NULL;
    (void)sizeof(create = tsr_session_create);
    (void)create;
    if (!TSR_HAS_MEMBER(&io, tsr_io_info, dim_symbols) || !TSR_HAS_MEMBER(&pd, tsr_provider_desc, error) ||
        !TSR_HAS_MEMBER(&dd, tsr_device_desc, memory_bytes)) {
        fprintf(stderr, "tessera.h: struct_size checks failed\n");
        return 1;
    }
    return TESSERA_VERSION_MAJOR == 0 ? 0 : 1;
}
