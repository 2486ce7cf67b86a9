/* The compiled-piece cache (core/piece_cache.c). */
#ifndef TESSERA_CORE_PIECE_CACHE_H
#define TESSERA_CORE_PIECE_CACHE_H

#include "plugin.h"

struct tsr_graph;

/* Compiles `view` on pv: through the cache in cache_dir when there is one
 * and the provider can export and import pieces, else by plain compile. A
 * cache that cannot be read or written is logged, never an error. */
tsr_status *piece_cache_compile(provider_inst *pv, const struct tsr_graph *view, const char *cache_dir,
                                void **compiled);

#endif
