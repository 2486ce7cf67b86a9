/* Pieces: a claimed set of nodes compiled into steps (one op, or a fused
 * group of nodes, each step one or a few kernel launches) that pass device
 * buffers to each other. The provider's claim, compile, run and release,
 * and the compiled-piece cache's export and import; ocl_provider.c is
 * their only caller. */
#ifndef OCL_PIECE_H
#define OCL_PIECE_H

#include "ocl.h"

tsr_status *ocl_claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink);
tsr_status *ocl_piece_compile(void *state, const tsr_graph *graph, void **piece_state);
tsr_status *ocl_piece_run(void *piece_state, tsr_run_context *ctx);
void ocl_piece_release(void *piece_state);

/* For the compiled-piece cache (ocl_piece_cache.c): the instance a piece
 * belongs to, the programs its compile asked for, and a hash of its steps
 * (ops, nodes, value names), which an import must rebuild alike. */
ocl_state *ocl_piece_owner(const void *piece_state);
const ocl_program_set *ocl_piece_programs(const void *piece_state);
uint64_t ocl_piece_plan(const void *piece_state);

/* The host's compiled-piece cache slots (ocl_piece_cache.c). */
const char *ocl_cache_compat(void *state, int32_t device);
tsr_status *ocl_piece_export(void *piece_state, void **bytes, size_t *size);
tsr_status *ocl_piece_import(void *state, const tsr_graph *graph, const void *bytes, size_t size, void **piece_state);

#endif
