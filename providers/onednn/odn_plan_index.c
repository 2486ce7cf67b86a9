/* Pointer-keyed lookups for a plan: a piece's values by their host value
 * info and its nodes by their host node, in open-addressing hash tables.
 * Builders look values and nodes up for every node they build; scanning
 * the plan each time made a 20,000-node piece take seconds to plan. */
#include <stdint.h>
#include <stdlib.h>

#include "odn.h"

static size_t slot_of(const void *key, size_t cap) {
    uint64_t h = (uint64_t)(uintptr_t)key;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return (size_t)h & (cap - 1);
}

void odn_index_free(odn_index *x) {
    free(x->keys);
    free(x->vals);
    *x = (odn_index){0};
}

/* Doubles the table when it would be more than half full. */
static bool reserve(odn_index *x, size_t need) {
    if (need * 2 <= x->cap) return true;
    size_t cap = x->cap ? x->cap * 2 : 64;
    while (need * 2 > cap) cap *= 2;
    const void **keys = calloc(cap, sizeof *keys);
    size_t *vals = calloc(cap, sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return false;
    }
    for (size_t i = 0; i < x->cap; i++) {
        if (!x->keys[i]) continue;
        size_t s = slot_of(x->keys[i], cap);
        while (keys[s]) s = (s + 1) & (cap - 1);
        keys[s] = x->keys[i];
        vals[s] = x->vals[i];
    }
    free(x->keys);
    free(x->vals);
    x->keys = keys;
    x->vals = vals;
    x->cap = cap;
    return true;
}

bool odn_index_put(odn_index *x, const void *key, size_t val) {
    if (!key || !reserve(x, x->count + 1)) return false;
    size_t s = slot_of(key, x->cap);
    while (x->keys[s] && x->keys[s] != key) s = (s + 1) & (x->cap - 1);
    if (x->keys[s]) return true; /* the first entry for a key stays */
    x->count++;
    x->keys[s] = key;
    x->vals[s] = val;
    return true;
}

bool odn_index_get(const odn_index *x, const void *key, size_t *val) {
    if (!key || !x->cap) return false;
    for (size_t s = slot_of(key, x->cap); x->keys[s]; s = (s + 1) & (x->cap - 1))
        if (x->keys[s] == key) {
            *val = x->vals[s];
            return true;
        }
    return false;
}
