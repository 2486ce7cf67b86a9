/* The host API table (tsr_host_api) that every plugin receives, and the
 * built-in control-flow provider calls: assembled here, in the top layer,
 * because its slots come from every layer below (graph accessors and run
 * slots from core/, the claim sink from partitioner/). */
#ifndef TESSERA_RUNTIME_HOST_API_H
#define TESSERA_RUNTIME_HOST_API_H

#include "tessera/provider.h"

const tsr_host_api *host_api_table(void);

#endif
