/* Where a provider's answers to a claim request go: struct tsr_claim_sink,
 * the concrete struct behind the ABI's opaque tsr_claim_sink handle, and
 * the host API slots providers call on it (claim_piece, claim_piece_on,
 * decline_node; the table is assembled in runtime/host_api.c). The
 * partitioner and placement make one per request and read what it
 * collected. */
#ifndef TESSERA_PARTITIONER_CLAIM_SINK_H
#define TESSERA_PARTITIONER_CLAIM_SINK_H

#include "graph_view.h"

typedef struct claim_entry {
    ir_node **nodes;
    size_t n;
    double cost;
    int32_t device; /* of the claiming provider */
} claim_entry;

typedef struct decline_entry {
    ir_node *node;
    int32_t reason;
    char *text;
} decline_entry;

struct tsr_claim_sink {
    const struct tsr_graph *offered; /* the nodes a claim may name */
    claim_entry *claims;
    size_t n_claims;
    decline_entry *declines;
    size_t n_declines;
    /* The offered nodes sorted by address: built on the first claim, so a
     * handle is checked in O(log n) without reading through it. */
    const struct ir_node **offered_sorted;
    size_t n_devices; /* the claiming provider's: claim_piece_on checks against it */
};

void claim_sink_clear(struct tsr_claim_sink *s);
/* True when `node` (any pointer) is one of the offered nodes. */
bool claim_offered(struct tsr_claim_sink *s, const void *node);
/* NULL when `nodes` may be claimed: offered nodes, none twice. part[i]
 * (count entries) gets the connected part of nodes[i], numbered from 0 in
 * the order parts are first named; *n_parts their number. */
tsr_status *claim_check(struct tsr_claim_sink *s, const tsr_node *const *nodes, size_t count, size_t *part,
                        size_t *n_parts);

/* The host API slots. */
tsr_status *claim_sink_piece(tsr_claim_sink *sink, const tsr_node *const *nodes, size_t count, double cost);
tsr_status *claim_sink_piece_on(tsr_claim_sink *sink, const tsr_node *const *nodes, size_t count, double cost,
                                int32_t device);
void claim_sink_decline(tsr_claim_sink *sink, const tsr_node *node, int32_t reason, const char *text);

#endif
