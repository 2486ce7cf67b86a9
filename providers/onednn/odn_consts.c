/* Constant weights in the layouts oneDNN asked for, kept per piece and
 * shared by all its plans. A piece whose inputs change size gets a plan
 * per size (odn_provider.c); without this each of them would reorder every
 * weight again (ResNet-50: ~0.5 s and 100 MB a plan). An entry is found by
 * where its source lives (the constant's own bytes, plus a second key for
 * derived weights such as a folded BatchNormalization) and by both
 * layouts, so a weight read two ways gets two entries. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include "odn.h"

typedef struct const_entry {
    const void *key1, *key2;
    dnnl_memory_desc_t src_md, md;
    void *raw;  /* as allocated; freed with the cache */
    void *data; /* the reordered bytes */
    bool ready; /* the reorder into data succeeded */
} const_entry;

struct odn_const_cache {
    const_entry *entries;
    size_t count, cap;
    const void **released; /* key1s whose host bytes are gone */
    size_t n_released;
    int int8_choice; /* -1: no plan has chosen yet */
};

odn_const_cache *odn_const_cache_new(void) {
    odn_const_cache *c = calloc(1, sizeof(odn_const_cache));
    if (c) c->int8_choice = -1;
    return c;
}

int odn_const_cache_int8_choice(const odn_const_cache *c) { return c->int8_choice; }

void odn_const_cache_set_int8_choice(odn_const_cache *c, bool int8) { c->int8_choice = int8; }

void odn_const_cache_free(odn_const_cache *c) {
    if (!c) return;
    for (size_t i = 0; i < c->count; i++) free(c->entries[i].raw);
    free(c->entries);
    free(c->released);
    free(c);
}

void *odn_const_cache_find(const odn_const_cache *c, const void *key1, const void *key2,
                           const dnnl_memory_desc_t *src_md, const dnnl_memory_desc_t *md) {
    for (size_t i = 0; c && i < c->count; i++) {
        const const_entry *e = &c->entries[i];
        if (e->ready && e->key1 == key1 && e->key2 == key2 && dnnl_memory_desc_equal(&e->md, md) &&
            dnnl_memory_desc_equal(&e->src_md, src_md))
            return e->data;
    }
    return NULL;
}

/* Large weights get 2 MiB-aligned buffers with transparent huge pages
 * asked for (kernels whose THP mode is "madvise", as on the benchmark
 * machine, give them only when asked): a batch-1 run streams every weight
 * from memory once, and with 4 KiB pages each page costs a TLB walk
 * (BERT-base reads 340 MB per run). A 128x768 by 768x3072 matmul over
 * rotating cold weights ran 2-4% faster this way. */
#define HUGE_PAGE ((size_t)2 << 20)

/* Cleared when a huge page took longer than this to fault in. A guest VM
 * that reports free memory to its host (free page reporting, as Firecracker
 * guests do) gets huge pages from blocks the host has taken back, and each
 * is backed again at first touch: on the 2026-12-07 benchmark VM a fault
 * took 5.5-24 ms per 2 MiB against 0.16-0.3 ms when backed, which made
 * BERT-base's session creation 0.4-6 s (ONNX Runtime's: 0.9-7 s, the same
 * effect on its 4 KiB pages, less often). Its runs are 7% faster on huge
 * pages (263 vs 283 ms), so they are kept while they come fast; after one
 * slow fault the process keeps to 4 KiB pages, which the guest more often
 * has backed (creation then 0.53-0.59 s). */
#define SLOW_HUGE_FAULT_NS 2000000L
static atomic_bool huge_pages_fast = true;

static long elapsed_ns(const struct timespec *a, const struct timespec *b) {
    return (b->tv_sec - a->tv_sec) * 1000000000L + (b->tv_nsec - a->tv_nsec);
}

static void advise_huge(char *data, size_t bytes) {
#ifdef MADV_HUGEPAGE
    if (bytes == 0 || !atomic_load_explicit(&huge_pages_fast, memory_order_relaxed)) return;
    if (madvise(data, bytes, MADV_HUGEPAGE) != 0) return; /* advice only */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    *(volatile char *)data = 0; /* faults in (and clears) the first huge page */
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (elapsed_ns(&t0, &t1) <= SLOW_HUGE_FAULT_NS) return;
    atomic_store_explicit(&huge_pages_fast, false, memory_order_relaxed);
    if (bytes > HUGE_PAGE) (void)madvise(data + HUGE_PAGE, bytes - HUGE_PAGE, MADV_NOHUGEPAGE);
#else
    (void)data;
    (void)bytes;
#endif
}

void *odn_const_cache_add(odn_const_cache *c, const void *key1, const void *key2, const dnnl_memory_desc_t *src_md,
                          const dnnl_memory_desc_t *md, size_t nbytes) {
    if (c->count == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        const_entry *e = realloc(c->entries, cap * sizeof *e);
        if (!e) return NULL;
        c->entries = e;
        c->cap = cap;
    }
    if (nbytes > SIZE_MAX - HUGE_PAGE || odn_const_cache_released(c, key1)) return NULL;
    bool huge = nbytes >= HUGE_PAGE;
    /* 64-byte alignment at least: oneDNN's kernels load whole cache lines.
     * The padding before a huge buffer's aligned start is never touched, so
     * it costs address space, not memory. */
    size_t align = huge ? HUGE_PAGE : 64;
    char *raw = malloc(nbytes + align);
    if (!raw) return NULL;
    char *data = raw + (align - (uintptr_t)raw % align) % align;
    if (huge) advise_huge(data, nbytes / HUGE_PAGE * HUGE_PAGE);
    c->entries[c->count++] = (const_entry){key1, key2, *src_md, *md, raw, data, false};
    return data;
}

void odn_const_cache_ready(odn_const_cache *c, const void *data) {
    for (size_t i = c->count; i-- > 0;)
        if (c->entries[i].data == data) c->entries[i].ready = true;
}

bool odn_const_cache_released(const odn_const_cache *c, const void *key1) {
    for (size_t i = 0; c && key1 && i < c->n_released; i++)
        if (c->released[i] == key1) return true;
    return false;
}

bool odn_const_cache_mark_released(odn_const_cache *c, const void *key1) {
    if (odn_const_cache_released(c, key1)) return true;
    const void **grown = realloc(c->released, (c->n_released + 1) * sizeof *grown);
    if (!grown) return false;
    c->released = grown;
    c->released[c->n_released++] = key1;
    return true;
}

void odn_const_cache_unmark_released(odn_const_cache *c, const void *key1) {
    for (size_t i = 0; i < c->n_released; i++)
        if (c->released[i] == key1) c->released[i] = c->released[--c->n_released];
}
