/* Splitting a graph into pieces, each run by one provider. */
#ifndef TESSERA_PARTITION_H
#define TESSERA_PARTITION_H

#include "function_expand.h"
#include "host_api.h"
#include "ir.h"
#include "plugin.h"

typedef struct piece {
    size_t prov_index;       /* into the session's provider list */
    struct tsr_graph *view;  /* nodes, inputs, outputs (host-API view) */
    double cost;             /* provider's estimate, seconds; < 0 unknown */
    void *compiled;          /* provider's piece state after compile */
} piece;

typedef struct declined {
    ir_node *node;
    size_t prov_index;
    int32_t reason;
    char *text;
} declined;

/* A node that must not go to a provider (its piece failed to compile there). */
typedef struct exclusion {
    ir_node *node;
    size_t prov_index;
} exclusion;

typedef struct partition {
    piece *pieces; /* in an order that runs (topological over pieces) */
    size_t n_pieces;
    declined *declines;
    size_t n_declines;
    expansion *expanded; /* function ops replaced by their bodies, in order */
    size_t n_expanded;
} partition;

/* Asks providers in order for claims over g's still-unassigned nodes and
 * builds pieces. A function op nobody claims whole is replaced in g by its
 * body (see function_expand.h), shapes are inferred again and the providers
 * asked again. A node nobody claims that is not a function op is an error
 * listing every provider's reason. */
tsr_status *partition_graph(ir_graph *g, provider_inst *const *provs, size_t n_provs,
                            const exclusion *excl, size_t n_excl, partition *out);
void partition_free(partition *p);

/* A readable table: piece, provider, node count, ops, inputs/outputs; then
 * declines. malloc'd. */
char *partition_text(const partition *p, const ir_graph *g, provider_inst *const *provs,
                     size_t n_provs);

#endif
