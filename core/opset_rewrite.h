/* Rewriting one node into the form a newer opset reads with the same
 * meaning (core/opset_rewrite.c); used by core/opset_convert.c. */
#ifndef TESSERA_CORE_OPSET_REWRITE_H
#define TESSERA_CORE_OPSET_REWRITE_H

#include <stdint.h>

#include "ir.h"

/* n, written for a version before `since` of its op, rewritten for the
 * change opset_next_change reported as OPSET_REWRITE at `since`. Nodes it
 * adds to n's graph (appended, unsorted) are read at version `to`; n's own
 * version is the caller's to set. Errors say what could not be rewritten,
 * not which node. */
tsr_status *opset_rewrite(ir_node *n, int64_t since, int64_t to);

#endif
