/* A shared object that is not a Tessera provider: it exports a function, but
 * not TSR_PROVIDER_ENTRY. */
#include "tessera/provider.h"

TSR_EXPORT int tessera_provider_entry_v0(void) { return 42; }
