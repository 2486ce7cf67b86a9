/* One buffer for a plan's intermediate tensors: each tensor lives from the
 * first step that touches it to the last, and tensors whose lives do not
 * overlap share bytes. Keeps the working set small (in cache) and peak
 * memory near the largest live set instead of the sum of all tensors. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "odn.h"

#define ODN_ARENA_ALIGN 64

typedef struct arena_slot {
    dnnl_memory_t mem;
    size_t size, offset;
    size_t first, last; /* step interval */
    bool used;
} arena_slot;

/* The memory a view ultimately shares its buffer with. */
static dnnl_memory_t root_of(const odn_plan *p, dnnl_memory_t m) {
    for (size_t hops = 0; hops <= p->view_count; hops++) {
        size_t i = 0;
        while (i < p->view_count && p->view_mems[i] != m) i++;
        if (i == p->view_count) return m;
        m = p->view_bases[i];
    }
    return m;
}

static int by_size_desc(const void *a, const void *b) {
    const arena_slot *x = a, *y = b;
    return (x->size < y->size) - (x->size > y->size);
}

tsr_status *odn_arena_place(odn_plan *p) {
    size_t n = p->arena_count;
    if (n == 0) return NULL;
    arena_slot *slots = calloc(n, sizeof *slots);
    if (!slots) return odn_host->status_new(TSR_ERR_NO_MEMORY, "onednn: out of memory");
    for (size_t i = 0; i < n; i++) {
        const dnnl_memory_desc_t *md;
        dnnl_memory_get_memory_desc(p->arena_mems[i], &md);
        slots[i].mem = p->arena_mems[i];
        slots[i].size = (dnnl_memory_desc_get_size(md) + ODN_ARENA_ALIGN - 1) / ODN_ARENA_ALIGN * ODN_ARENA_ALIGN;
    }
    for (size_t s = 0; s < p->step_count; s++) {
        for (int a = 0; a < p->steps[s].nargs; a++) {
            dnnl_memory_t root = p->steps[s].args[a].memory ? root_of(p, p->steps[s].args[a].memory) : NULL;
            for (size_t i = 0; root && i < n; i++) {
                if (slots[i].mem != root) continue;
                if (!slots[i].used) slots[i].first = s;
                slots[i].last = s;
                slots[i].used = true;
            }
        }
    }
    qsort(slots, n, sizeof *slots, by_size_desc);
    /* biggest first, each at the lowest offset clear of every placed slot
     * whose life overlaps */
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        size_t offset = 0;
        bool moved = true;
        while (moved) {
            moved = false;
            for (size_t j = 0; j < i; j++) {
                bool overlap_time = slots[j].used && slots[i].used && slots[j].first <= slots[i].last &&
                                    slots[i].first <= slots[j].last;
                bool overlap_bytes = offset < slots[j].offset + slots[j].size && slots[j].offset < offset + slots[i].size;
                if (overlap_time && overlap_bytes) {
                    offset = slots[j].offset + slots[j].size;
                    moved = true;
                }
            }
        }
        slots[i].offset = offset;
        if (slots[i].used && offset + slots[i].size > total) total = offset + slots[i].size;
    }
    char *base = total ? odn_plan_alloc(p, total) : NULL;
    tsr_status *st = NULL;
    if (total && !base) st = odn_host->status_new(TSR_ERR_NO_MEMORY, "onednn: out of memory for intermediates");
    for (size_t i = 0; !st && i < n; i++) {
        if (!slots[i].used) continue; /* never touched: stays without a buffer */
        if (dnnl_memory_set_data_handle_v2(slots[i].mem, base + slots[i].offset, p->stream) != dnnl_success)
            st = odn_host->status_new(TSR_ERR_PROVIDER, "onednn: placing an intermediate");
    }
    p->arena_bytes = total;
    free(slots);
    return st;
}

tsr_status *odn_arena_const_as_keyed(odn_plan *p, const void *key1, const void *key2, dnnl_memory_t src,
                                     const dnnl_memory_desc_t *src_md, const dnnl_memory_desc_t *md,
                                     const tsr_node *n, dnnl_memory_t *out) {
    void *buf = odn_const_cache_find(p->consts, key1, key2, src_md, md);
    if (buf) return odn_plan_new_mem(p, md, buf, n, out);
    size_t nbytes = dnnl_memory_desc_get_size(md);
    buf = odn_const_cache_add(p->consts, key1, key2, src_md, md, nbytes);
    if (!buf) return odn_node_error(n, TSR_ERR_NO_MEMORY, "weights of %zu bytes", nbytes);
    dnnl_memory_t dst;
    tsr_status *s = odn_plan_new_mem(p, md, buf, n, &dst);
    if (s) return s;
    dnnl_primitive_desc_t pd;
    dnnl_status_t st = dnnl_reorder_primitive_desc_create(&pd, src_md, p->engine, md, p->engine, NULL);
    if (st != dnnl_success) return odn_dnnl_error(n, "weights reorder setup", st);
    dnnl_primitive_t prim;
    st = dnnl_primitive_create(&prim, pd);
    dnnl_primitive_desc_destroy(pd);
    if (st != dnnl_success) return odn_dnnl_error(n, "weights reorder creation", st);
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
    st = dnnl_primitive_execute(prim, p->stream, 2, args);
    if (st == dnnl_success) st = dnnl_stream_wait(p->stream);
    dnnl_primitive_destroy(prim);
    if (st != dnnl_success) return odn_dnnl_error(n, "weights reorder", st);
    odn_const_cache_ready(p->consts, buf);
    *out = dst;
    return NULL;
}
