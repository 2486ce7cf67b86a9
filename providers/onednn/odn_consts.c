/* Constant weights in the layouts oneDNN asked for, kept per piece and
 * shared by all its plans. A piece whose inputs change size gets a plan
 * per size (odn_provider.c); without this each of them would reorder every
 * weight again (ResNet-50: ~0.5 s and 100 MB a plan). An entry is found by
 * where its source lives (the constant's own bytes, plus a second key for
 * derived weights such as a folded BatchNormalization) and by both
 * layouts, so a weight read two ways gets two entries. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

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
};

odn_const_cache *odn_const_cache_new(void) { return calloc(1, sizeof(odn_const_cache)); }

void odn_const_cache_free(odn_const_cache *c) {
    if (!c) return;
    for (size_t i = 0; i < c->count; i++) free(c->entries[i].raw);
    free(c->entries);
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

void *odn_const_cache_add(odn_const_cache *c, const void *key1, const void *key2, const dnnl_memory_desc_t *src_md,
                          const dnnl_memory_desc_t *md, size_t nbytes) {
    if (c->count == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        const_entry *e = realloc(c->entries, cap * sizeof *e);
        if (!e) return NULL;
        c->entries = e;
        c->cap = cap;
    }
    if (nbytes > SIZE_MAX - HUGE_PAGE) return NULL;
    bool huge = nbytes >= HUGE_PAGE;
    /* 64-byte alignment at least: oneDNN's kernels load whole cache lines.
     * The padding before a huge buffer's aligned start is never touched, so
     * it costs address space, not memory. */
    size_t align = huge ? HUGE_PAGE : 64;
    char *raw = malloc(nbytes + align);
    if (!raw) return NULL;
    char *data = raw + (align - (uintptr_t)raw % align) % align;
    if (huge) {
#ifdef MADV_HUGEPAGE
        (void)madvise(data, nbytes / HUGE_PAGE * HUGE_PAGE, MADV_HUGEPAGE); /* advice only */
#endif
    }
    c->entries[c->count++] = (const_entry){key1, key2, *src_md, *md, raw, data, false};
    return data;
}

void odn_const_cache_ready(odn_const_cache *c, const void *data) {
    for (size_t i = c->count; i-- > 0;)
        if (c->entries[i].data == data) c->entries[i].ready = true;
}
