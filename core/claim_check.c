/* Checks a provider's claim before the host reads a node through it: every
 * handle is one of the offered nodes, found by its address alone (a
 * garbage pointer is never dereferenced), and no node is named twice. It
 * also finds the claim's connected parts (nodes passing values to each
 * other): a set that is not connected becomes one piece per part. That
 * happens legitimately: oneDNN's groups from the survey of the whole graph,
 * offered again without the nodes placement gave to others, may be joined
 * only through those nodes. */
#include <stdint.h>
#include <stdlib.h>

#include "host_api.h"
#include "status.h"

static int ptr_cmp(const void *a, const void *b) {
    uintptr_t x = (uintptr_t) * (const void *const *)a, y = (uintptr_t) * (const void *const *)b;
    return (x > y) - (x < y);
}

static const ir_node *const *find(const ir_node *const *sorted, size_t n, const void *key) {
    return bsearch(&key, sorted, n, sizeof *sorted, ptr_cmp);
}

/* The offered nodes sorted by address, made on first use. */
static const ir_node *const *offered_sorted(struct tsr_claim_sink *s) {
    if (!s->offered_sorted) {
        size_t n = s->offered->n_nodes;
        const ir_node **a = malloc(sizeof *a * (n + 1));
        if (!a) return NULL;
        for (size_t i = 0; i < n; i++) a[i] = s->offered->nodes[i];
        qsort(a, n, sizeof *a, ptr_cmp);
        s->offered_sorted = a;
    }
    return s->offered_sorted;
}

bool claim_offered(struct tsr_claim_sink *s, const void *node) {
    const ir_node *const *sorted = offered_sorted(s);
    return node && sorted && find(sorted, s->offered->n_nodes, node);
}

static size_t root(size_t *parent, size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
}

/* Joins the members (sorted by address) that pass values to each other;
 * returns the number of parts. */
static size_t join_parts(const ir_node *const *members, size_t count, size_t *parent) {
    for (size_t i = 0; i < count; i++) parent[i] = i;
    size_t groups = count;
    for (size_t i = 0; i < count; i++) {
        const ir_node *n = members[i];
        for (size_t k = 0; k < n->n_inputs; k++) {
            const ir_value *v = n->inputs[k];
            const ir_node *const *p = v && v->producer ? find(members, count, v->producer) : NULL;
            if (!p) continue;
            size_t a = root(parent, i), b = root(parent, (size_t)(p - members));
            if (a != b) {
                parent[a] = b;
                groups--;
            }
        }
    }
    return groups;
}

tsr_status *claim_check(struct tsr_claim_sink *s, const tsr_node *const *nodes, size_t count, size_t *part,
                        size_t *n_parts) {
    /* the caller (h_claim_piece_on) has refused counts above the offer */
    if (!count || !nodes) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "empty claim");
    for (size_t i = 0; i < count; i++)
        if (!claim_offered(s, nodes[i]))
            return tsr_error(TSR_ERR_INVALID_ARGUMENT, "claim entry %zu is not a node that was offered", i);
    const ir_node **members = malloc(sizeof *members * count);
    size_t *parent = malloc(sizeof *parent * count), *id = malloc(sizeof *id * count);
    tsr_status *st = members && parent && id ? NULL : TSR_NO_MEMORY();
    for (size_t i = 0; !st && i < count; i++) members[i] = (const ir_node *)nodes[i];
    if (!st) qsort(members, count, sizeof *members, ptr_cmp);
    for (size_t i = 1; !st && i < count; i++)
        if (members[i] == members[i - 1])
            st = tsr_error(TSR_ERR_INVALID_ARGUMENT, "a claim names node '%s' (%s) twice", members[i]->name,
                           members[i]->op_type);
    if (!st) {
        join_parts(members, count, parent);
        /* number the parts in the order their first node was named */
        for (size_t i = 0; i < count; i++) id[i] = SIZE_MAX;
        *n_parts = 0;
        for (size_t i = 0; i < count; i++) {
            size_t r = root(parent, (size_t)(find(members, count, nodes[i]) - members));
            if (id[r] == SIZE_MAX) id[r] = (*n_parts)++;
            part[i] = id[r];
        }
    }
    free(members);
    free(parent);
    free(id);
    return st;
}
