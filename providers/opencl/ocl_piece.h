/* Pieces: a claimed set of nodes compiled into steps (one op, or a fused
 * group of nodes, each step one or a few kernel launches) that pass device
 * buffers to each other. The provider's claim, compile, run and release;
 * ocl_provider.c is their only caller. */
#ifndef OCL_PIECE_H
#define OCL_PIECE_H

#include "ocl.h"

tsr_status *ocl_claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink);
tsr_status *ocl_piece_compile(void *state, const tsr_graph *graph, void **piece_state);
tsr_status *ocl_piece_run(void *piece_state, tsr_run_context *ctx);
void ocl_piece_release(void *piece_state);

#endif
