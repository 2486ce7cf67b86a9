/* A partition's declines: who refused which node and why, each (node,
 * provider) pair kept once, found through a hash index so a round with
 * hundreds of thousands of declines stays linear. */
#include <stdint.h>
#include <stdlib.h>

#include "partition.h"
#include "status.h"

static size_t slot_of(const ir_node *node, size_t prov, size_t mask) {
    uint64_t h = (uint64_t)(uintptr_t)node * 0x9E3779B97F4A7C15ull ^ (uint64_t)prov * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(h >> 17) & mask;
}

/* The index entry for (node, prov): its slot, holding 1 + the decline's
 * position, or 0 when the pair is not there (then the slot to fill). */
static size_t *find(const partition *p, const ir_node *node, size_t prov) {
    size_t mask = p->decline_index_cap - 1;
    for (size_t i = slot_of(node, prov, mask);; i = (i + 1) & mask) {
        size_t *e = &p->decline_index[i];
        if (!*e) return e;
        const declined *d = &p->declines[*e - 1];
        if (d->node == node && d->prov_index == prov) return e;
    }
}

/* Room for one more decline, in the array and (at most half full) the index. */
static tsr_status *reserve(partition *p) {
    if (p->n_declines == p->declines_cap) {
        size_t cap = p->declines_cap ? p->declines_cap * 2 : 16;
        declined *d = realloc(p->declines, sizeof *d * cap);
        if (!d) return TSR_NO_MEMORY();
        p->declines = d;
        p->declines_cap = cap;
    }
    if ((p->n_declines + 1) * 2 <= p->decline_index_cap) return NULL;
    size_t cap = p->decline_index_cap ? p->decline_index_cap * 2 : 64;
    size_t *idx = calloc(cap, sizeof *idx);
    if (!idx) return TSR_NO_MEMORY();
    free(p->decline_index);
    p->decline_index = idx;
    p->decline_index_cap = cap;
    for (size_t k = 0; k < p->n_declines; k++) *find(p, p->declines[k].node, p->declines[k].prov_index) = k + 1;
    return NULL;
}

tsr_status *partition_keep_declines(partition *out, struct tsr_claim_sink *sink, size_t prov) {
    for (size_t d = 0; d < sink->n_declines; d++) {
        decline_entry *e = &sink->declines[d];
        TSR_TRY(reserve(out));
        size_t *slot = find(out, e->node, prov);
        if (*slot) continue; /* the same provider asked twice (placement's survey) */
        out->declines[out->n_declines] = (declined){e->node, prov, e->reason, e->text};
        *slot = ++out->n_declines;
        e->text = NULL;
    }
    return NULL;
}
