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

/* The memory a view ultimately shares its buffer with (views by their
 * memory in `views`, mapping to positions in view_bases). */
static dnnl_memory_t root_of(const odn_plan *p, const odn_index *views, dnnl_memory_t m) {
    size_t i;
    for (size_t hops = 0; hops <= p->view_count && odn_index_get(views, m, &i); hops++) m = p->view_bases[i];
    return m;
}

static int by_size_desc(const void *a, const void *b) {
    const arena_slot *x = a, *y = b;
    return (x->size < y->size) - (x->size > y->size);
}

static int by_offset(const void *a, const void *b) {
    const arena_slot *x = *(const arena_slot *const *)a, *y = *(const arena_slot *const *)b;
    return (x->offset > y->offset) - (x->offset < y->offset);
}

/* Per step, the placed slots alive at it: the slots a new one may clash
 * with are found through its own steps, not by scanning every placed slot
 * (quadratic on a 20,000-step plan). */
typedef struct live_lists {
    size_t **at; /* at[step]: slot positions */
    size_t *n, *cap;
} live_lists;

static bool live_add(live_lists *l, size_t step, size_t slot) {
    if (l->n[step] == l->cap[step]) {
        size_t c = l->cap[step] ? l->cap[step] * 2 : 4;
        size_t *a = realloc(l->at[step], c * sizeof *a);
        if (!a) return false;
        l->at[step] = a;
        l->cap[step] = c;
    }
    l->at[step][l->n[step]++] = slot;
    return true;
}

/* The lowest offset at which slot i clears every placed slot alive during
 * its steps (those in `cand`, gathered once each by `stamp`): bumping past
 * each clash in order of offset finds it in one pass. */
static size_t lowest_offset(arena_slot *slots, size_t i, const live_lists *l, unsigned *stamp, arena_slot **cand) {
    size_t m = 0;
    for (size_t t = slots[i].first; t <= slots[i].last; t++)
        for (size_t k = 0; k < l->n[t]; k++) {
            size_t j = l->at[t][k];
            if (stamp[j] == i + 1) continue;
            stamp[j] = (unsigned)(i + 1);
            cand[m++] = &slots[j];
        }
    qsort(cand, m, sizeof *cand, by_offset);
    size_t offset = 0;
    for (size_t k = 0; k < m; k++)
        if (offset < cand[k]->offset + cand[k]->size && cand[k]->offset < offset + slots[i].size)
            offset = cand[k]->offset + cand[k]->size;
    return offset;
}

/* Biggest first, each at the lowest offset clear of every placed slot
 * whose life overlaps; returns the bytes needed, or SIZE_MAX when out of
 * memory. */
static size_t place_slots(arena_slot *slots, size_t n, size_t steps) {
    live_lists l = {calloc(steps + 1, sizeof *l.at), calloc(steps + 1, sizeof *l.n), calloc(steps + 1, sizeof *l.cap)};
    unsigned *stamp = calloc(n + 1, sizeof *stamp);
    arena_slot **cand = malloc((n + 1) * sizeof *cand);
    size_t total = l.at && l.n && l.cap && stamp && cand ? 0 : SIZE_MAX;
    for (size_t i = 0; i < n && total != SIZE_MAX; i++) {
        if (!slots[i].used) continue;
        slots[i].offset = lowest_offset(slots, i, &l, stamp, cand);
        if (slots[i].offset + slots[i].size > total) total = slots[i].offset + slots[i].size;
        for (size_t t = slots[i].first; t <= slots[i].last && total != SIZE_MAX; t++)
            if (!live_add(&l, t, i)) total = SIZE_MAX;
    }
    for (size_t t = 0; l.at && t <= steps; t++) free(l.at[t]);
    free(l.at);
    free(l.n);
    free(l.cap);
    free(stamp);
    free(cand);
    return total;
}

tsr_status *odn_arena_place(odn_plan *p) {
    size_t n = p->arena_count;
    if (n == 0) return NULL;
    arena_slot *slots = calloc(n, sizeof *slots);
    odn_index views = {0}, by_mem = {0};
    tsr_status *st = slots ? NULL : odn_host->status_new(TSR_ERR_NO_MEMORY, "onednn: out of memory");
    for (size_t i = 0; !st && i < p->view_count; i++)
        if (!odn_index_put(&views, p->view_mems[i], i))
            st = odn_host->status_new(TSR_ERR_NO_MEMORY, "onednn: out of memory");
    for (size_t i = 0; !st && i < n; i++) {
        const dnnl_memory_desc_t *md;
        dnnl_memory_get_memory_desc(p->arena_mems[i], &md);
        slots[i].mem = p->arena_mems[i];
        slots[i].size = (dnnl_memory_desc_get_size(md) + ODN_ARENA_ALIGN - 1) / ODN_ARENA_ALIGN * ODN_ARENA_ALIGN;
        if (!odn_index_put(&by_mem, slots[i].mem, i))
            st = odn_host->status_new(TSR_ERR_NO_MEMORY, "onednn: out of memory");
    }
    for (size_t s = 0; !st && s < p->step_count; s++) {
        for (int a = 0; a < p->steps[s].nargs; a++) {
            dnnl_memory_t root = p->steps[s].args[a].memory ? root_of(p, &views, p->steps[s].args[a].memory) : NULL;
            size_t i;
            if (!root || !odn_index_get(&by_mem, root, &i)) continue;
            if (!slots[i].used) slots[i].first = s;
            slots[i].last = s;
            slots[i].used = true;
        }
    }
    odn_index_free(&views);
    odn_index_free(&by_mem);
    size_t total = 0;
    if (!st) {
        qsort(slots, n, sizeof *slots, by_size_desc);
        total = place_slots(slots, n, p->step_count);
        if (total == SIZE_MAX) st = odn_host->status_new(TSR_ERR_NO_MEMORY, "onednn: out of memory");
    }
    char *base = !st && total ? odn_plan_alloc(p, total) : NULL;
    if (!st && total && !base) st = odn_host->status_new(TSR_ERR_NO_MEMORY, "onednn: out of memory for intermediates");
    for (size_t i = 0; !st && i < n; i++) {
        if (!slots[i].used) continue; /* never touched: stays without a buffer */
        if (dnnl_memory_set_data_handle_v2(slots[i].mem, base + slots[i].offset, p->stream) != dnnl_success)
            st = odn_host->status_new(TSR_ERR_PROVIDER, "onednn: placing an intermediate");
    }
    p->arena_bytes = total;
    free(slots);
    return st;
}

/* A plan for the same shapes as the one that released the weights took
 * another form of them (odn_release_consts.c): never expected, refused
 * rather than computed from the zeros the host left. */
tsr_status *odn_const_released_error(const tsr_node *n) {
    return odn_node_error(n, TSR_ERR_PROVIDER,
                          "internal: its weights were handed back to the host after the first plan, and this plan "
                          "wants them in another layout");
}
static tsr_status *const_as_keyed(odn_plan *p, const void *key1, const void *key2, dnnl_memory_t src,
                                  const dnnl_memory_desc_t *src_md, const dnnl_memory_desc_t *md, const tsr_node *n,
                                  bool may_defer, dnnl_memory_t *out) {
    void *buf = odn_const_cache_find(p->consts, key1, key2, src_md, md);
    if (buf) return odn_plan_new_mem(p, md, buf, n, out);
    if (odn_const_cache_released(p->consts, key1)) return odn_const_released_error(n);
    size_t nbytes = dnnl_memory_desc_get_size(md);
    buf = odn_const_cache_add(p->consts, key1, key2, src_md, md, nbytes);
    if (!buf) return odn_node_error(n, TSR_ERR_NO_MEMORY, "weights of %zu bytes", nbytes);
    dnnl_memory_t dst;
    tsr_status *s = odn_plan_new_mem(p, md, buf, n, &dst);
    if (s) return s;
    if (may_defer && odn_fill_deferred(p)) {
        s = odn_fill_add_reorder(p, key1, n, src, src_md, dst, md, buf);
        if (s) return s;
    } else {
        s = odn_reorder_once(p, src, src_md, dst, md, n);
        if (s) return s;
        odn_const_cache_ready(p->consts, buf);
    }
    *out = dst;
    return NULL;
}

tsr_status *odn_arena_const_as_keyed(odn_plan *p, const void *key1, const void *key2, dnnl_memory_t src,
                                     const dnnl_memory_desc_t *src_md, const dnnl_memory_desc_t *md, const tsr_node *n,
                                     dnnl_memory_t *out) {
    return const_as_keyed(p, key1, key2, src, src_md, md, n, false, out);
}

tsr_status *odn_arena_const_deferred(odn_plan *p, const void *key1, const void *key2, dnnl_memory_t src,
                                     const dnnl_memory_desc_t *src_md, const dnnl_memory_desc_t *md, const tsr_node *n,
                                     dnnl_memory_t *out) {
    return const_as_keyed(p, key1, key2, src, src_md, md, n, true, out);
}
