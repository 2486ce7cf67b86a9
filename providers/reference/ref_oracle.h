/*
 * The float64 oracle (provider option precision=double): a piece of one or
 * more nodes whose float32, float16 and bfloat16 values are computed and
 * kept in float64 inside the piece, and rounded to their declared type only
 * at the piece's outputs (where the host, and so the caller, reads them).
 * See docs/compare.md, "The float64 oracle".
 */
#ifndef TESSERA_REF_ORACLE_H
#define TESSERA_REF_ORACLE_H

#include "ref.h"

typedef struct ref_oracle ref_oracle;

/* Whether `node` may join a multi-node oracle piece: every value it reads
 * or writes is a plain numeric or bool tensor of a known type (no strings,
 * sequences, optionals or packed 4-bit types). Others run alone, as in
 * precision=float. */
bool ref_oracle_node_ok(const tsr_host_api *host, const tsr_node *node);

/* Compiles `piece` (nodes in topological order, each with a reference
 * kernel) for the oracle. Constants it reads are widened once, here. */
tsr_status *ref_oracle_compile(const tsr_host_api *host, const tsr_graph *piece, int threads, ref_oracle **out);
tsr_status *ref_oracle_run(ref_oracle *o, tsr_run_context *run);
void ref_oracle_free(ref_oracle *o);

#endif
