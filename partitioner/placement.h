/* Placement before claims: which provider each node should go to, by the
 * session's policy, from a survey of what every provider can run. */
#ifndef TESSERA_PARTITIONER_PLACEMENT_H
#define TESSERA_PARTITIONER_PLACEMENT_H

#include "partition.h"

/*
 * allowed[i * n_provs + p]: whether node i of g may go to provider p (pins,
 * compile failures). Fills choice[i] (g->n_nodes entries) with the provider
 * node i should go to, or SIZE_MAX to leave it to the claims in list order;
 * *n_moved counts the nodes whose choice differs from list order. Each
 * provider is asked once for its claims over every node it may run; the
 * claims themselves are made afterwards by the partitioner. The reasons
 * providers give for the nodes they decline go to out->declines.
 */
tsr_status *placement_choose(ir_graph *g, provider_inst *const *provs, size_t n_provs, const bool *allowed,
                             const placement_policy *policy, size_t *choice, size_t *n_moved, partition *out);

/* Whether placement_choose would ask anything: a cost policy, a fallback,
 * or providers on more than one memory. */
bool placement_needed(provider_inst *const *provs, size_t n_provs, const placement_policy *policy);

#endif
