/* Large host tensor buffers freed during a run, kept for the next run.
 *
 * A session run allocates every intermediate a host provider writes and
 * frees it when its last reader is done, so the same sizes come back each
 * run. glibc serves blocks of 128 KiB and more from fresh mmap()s (or trims
 * them off the heap on free), and each run then paid the kernel zeroing
 * every page again: a keyword-spotting model's 0.48 ms run took 0.68 ms.
 * This keeps a bounded number of such blocks (best fit, at most 25% larger
 * than asked) and hands them back zeroed, as calloc would. */
#include "host_block_cache.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_SLOTS 64
#define CACHE_MIN_BYTES ((size_t)64 << 10)
#define CACHE_MAX_BLOCK ((size_t)64 << 20)
#define CACHE_MAX_TOTAL ((size_t)256 << 20)

static struct {
    pthread_mutex_t mu;
    size_t count, total;
    struct {
        void *p;
        size_t bytes;
    } slot[CACHE_SLOTS];
} cache = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* Kernels may write a tensor with instructions that need their address
 * aligned: oneDNN 2.6's AVX2 resampling stores with vmovntps (32 bytes)
 * into whatever buffer it is given, and calloc's large blocks sit 16 bytes
 * into their mmap (a SIGSEGV upsampling into a graph output at 1 thread).
 * Every block is 64-byte aligned, a cache line, and free() releases it. */
#define BLOCK_ALIGN 64

static void *zeroed_aligned(size_t bytes) {
    if (bytes > SIZE_MAX - BLOCK_ALIGN) return NULL;
    size_t rounded = (bytes + BLOCK_ALIGN - 1) / BLOCK_ALIGN * BLOCK_ALIGN;
    void *p = aligned_alloc(BLOCK_ALIGN, rounded ? rounded : BLOCK_ALIGN);
    if (p) memset(p, 0, bytes);
    return p;
}

void *host_block_alloc(size_t bytes) {
    if (bytes >= CACHE_MIN_BYTES && bytes <= CACHE_MAX_BLOCK) {
        void *p = NULL;
        pthread_mutex_lock(&cache.mu);
        size_t best = CACHE_SLOTS;
        for (size_t i = 0; i < cache.count; i++) {
            size_t b = cache.slot[i].bytes;
            if (b >= bytes && b - bytes <= bytes / 4 && (best == CACHE_SLOTS || b < cache.slot[best].bytes)) best = i;
        }
        if (best < CACHE_SLOTS) {
            p = cache.slot[best].p;
            cache.total -= cache.slot[best].bytes;
            cache.slot[best] = cache.slot[--cache.count];
        }
        pthread_mutex_unlock(&cache.mu);
        if (p) {
            memset(p, 0, bytes);
            return p;
        }
    }
    return zeroed_aligned(bytes);
}

void host_block_free(void *p, size_t bytes) {
    if (!p) return;
    /* a loader's buffer (protobuf-c's malloc) is not aligned: not kept */
    if (bytes >= CACHE_MIN_BYTES && bytes <= CACHE_MAX_BLOCK && (uintptr_t)p % BLOCK_ALIGN == 0) {
        bool kept = false;
        pthread_mutex_lock(&cache.mu);
        if (cache.count < CACHE_SLOTS && cache.total + bytes <= CACHE_MAX_TOTAL) {
            cache.slot[cache.count].p = p;
            cache.slot[cache.count].bytes = bytes;
            cache.count++;
            cache.total += bytes;
            kept = true;
        }
        pthread_mutex_unlock(&cache.mu);
        if (kept) return;
    }
    free(p);
}

void host_block_trim(void) {
    pthread_mutex_lock(&cache.mu);
    for (size_t i = 0; i < cache.count; i++) free(cache.slot[i].p);
    cache.count = 0;
    cache.total = 0;
    pthread_mutex_unlock(&cache.mu);
}
