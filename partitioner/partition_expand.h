/* The partitioner's side of function-op expansion (partitioner/partition_expand.c). */
#ifndef TESSERA_PARTITION_EXPAND_H
#define TESSERA_PARTITION_EXPAND_H

#include "partition.h"

/* Replaces each node of g that assigned[] leaves unclaimed and whose op is a
 * function by its body; appends a record per expansion to *log and says how
 * many there were. */
tsr_status *partition_expand_unclaimed(ir_graph *g, const bool *assigned, expansion **log, size_t *n_log,
                                       size_t *n_expanded);

/* After `rounds` rounds of expansion (the function_depth limit): an error
 * naming the first node assigned[] leaves unclaimed whose op is still a
 * function, or NULL when none is (nobody runs the rest: not a depth
 * matter). */
tsr_status *partition_depth_error(const ir_graph *g, const bool *assigned, int rounds);

/* Moves the records of this call (log, whose entries are left empty) into
 * out->expanded, sets each top-level record's total_nodes, and adds a record
 * per origin for nodes an earlier call expanded. */
tsr_status *partition_collect_expansions(const ir_graph *g, expansion *log, size_t n_log, partition *out);

#endif
