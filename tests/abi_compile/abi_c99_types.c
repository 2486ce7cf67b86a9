/* types.h on its own, as strict C99; and the program's main. */
#include "tessera/types.h"

#include <stdio.h>

int abi_c99_provider_check(void);
int abi_c99_tessera_check(void);
int abi_c99_provider_util_check(void);

int main(void) {
    tsr_tensor t;
    t.struct_size = (uint32_t)offsetof(tsr_tensor, nbytes); /* an older, shorter filler */
    if (TSR_HAS_MEMBER(&t, tsr_tensor, memory_kind) || !TSR_HAS_MEMBER(&t, tsr_tensor, data)) {
        fprintf(stderr, "TSR_HAS_MEMBER is wrong\n");
        return 1;
    }
    if (TSR_FLOAT != 1 || TSR_INT2 != 26 || TSR_ERR_ABI != 8 || TSR_DIM_UNKNOWN != -1) {
        fprintf(stderr, "an enum value moved\n");
        return 1;
    }
    int bad = abi_c99_provider_check() + abi_c99_tessera_check() + abi_c99_provider_util_check();
    if (!bad) printf("public headers compile as C99\n");
    return bad ? 1 : 0;
}
