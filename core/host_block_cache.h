/* A bounded, thread-safe cache of large freed host tensor buffers, so a
 * session's runs reuse the previous run's pages (host_block_cache.c). */
#ifndef TESSERA_CORE_HOST_BLOCK_CACHE_H
#define TESSERA_CORE_HOST_BLOCK_CACHE_H

#include <stdbool.h>
#include <stddef.h>

/* `bytes` of zeroed memory aligned to 64 bytes (a cached block or
 * aligned_alloc); free with host_block_free(p, bytes), or free(). */
void *host_block_alloc(size_t bytes);
/* Keeps `p` (a malloc'd block of `bytes`) for a later host_block_alloc, or
 * frees it when the cache is full, the size is not cached or p is not
 * 64-byte aligned. */
void host_block_free(void *p, size_t bytes);
/* Frees every cached block (a session going away). */
void host_block_trim(void);

#endif
