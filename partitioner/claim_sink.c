/* The claim sink: what providers call, during a claim request, to claim
 * pieces and decline nodes, and how the host checks each claim before it
 * reads a node through it. Every handle must be one of the offered nodes,
 * found by its address alone (a garbage pointer is never dereferenced), and
 * no node may be named twice. A claim's connected parts (nodes passing
 * values to each other) are found too: a set that is not connected becomes
 * one piece per part. That happens legitimately: oneDNN's groups from the
 * survey of the whole graph, offered again without the nodes placement
 * gave to others, may be joined only through those nodes. */
#include "claim_sink.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
    /* the caller (claim_sink_piece_on) has refused counts above the offer */
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

tsr_status *claim_sink_piece_on(tsr_claim_sink *sink, const tsr_node *const *nodes, size_t count, double cost,
                                int32_t device) {
    if (device < 0 || (size_t)device >= (sink->n_devices ? sink->n_devices : 1))
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "a claim on device %d; the provider has %zu", (int)device,
                         sink->n_devices ? sink->n_devices : 1);
    if (count > sink->offered->n_nodes) /* before sizing anything by it */
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "a claim of %zu nodes, but only %zu were offered", count,
                         sink->offered->n_nodes);
    size_t *part = malloc(sizeof *part * (count + 1)), parts = 0;
    if (!part) return TSR_NO_MEMORY();
    tsr_status *st = claim_check(sink, nodes, count, part, &parts);
    /* one piece per connected part, the estimate shared by node count */
    for (size_t k = 0; !st && k < parts; k++) {
        size_t m = 0;
        for (size_t i = 0; i < count; i++) m += part[i] == k;
        claim_entry *c = realloc(sink->claims, sizeof *c * (sink->n_claims + 1));
        ir_node **copy = c ? malloc(sizeof *copy * m) : NULL;
        if (c) sink->claims = c;
        if (!copy) {
            st = TSR_NO_MEMORY();
            break;
        }
        for (size_t i = 0, j = 0; i < count; i++)
            if (part[i] == k) copy[j++] = (ir_node *)nodes[i];
        double share = cost >= 0 ? cost * (double)m / (double)count : cost;
        c[sink->n_claims++] = (claim_entry){copy, m, share, device};
    }
    free(part);
    return st;
}

tsr_status *claim_sink_piece(tsr_claim_sink *sink, const tsr_node *const *nodes, size_t count, double cost) {
    return claim_sink_piece_on(sink, nodes, count, cost, 0);
}

void claim_sink_decline(tsr_claim_sink *sink, const tsr_node *node, int32_t reason, const char *text) {
    if (!claim_offered(sink, node)) return;
    decline_entry *d = realloc(sink->declines, sizeof *d * (sink->n_declines + 1));
    if (!d) return;
    sink->declines = d;
    d[sink->n_declines++] = (decline_entry){(ir_node *)node, reason, strdup(text ? text : "(no reason given)")};
}

void claim_sink_clear(struct tsr_claim_sink *s) {
    for (size_t i = 0; i < s->n_claims; i++) free(s->claims[i].nodes);
    for (size_t i = 0; i < s->n_declines; i++) free(s->declines[i].text);
    free(s->claims);
    free(s->declines);
    free(s->offered_sorted);
    s->claims = NULL;
    s->declines = NULL;
    s->offered_sorted = NULL;
    s->n_claims = s->n_declines = 0;
}
