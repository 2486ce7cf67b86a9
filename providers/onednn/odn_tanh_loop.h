/* Tanh as a plan step (odn_tanh_loop.c), for the unary builder. */
#ifndef TESSERA_ODN_TANH_LOOP_H
#define TESSERA_ODN_TANH_LOOP_H
#include "odn.h"

/* Whether the C loop replaces oneDNN's tanh here: AVX2+FMA, and
 * TESSERA_ODN_DNNL_TANH not 1. oneDNN 2.6's tanh eltwise runs 5x slower
 * than its logistic on AVX2. */
bool odn_tanh_loop_supported(void);
/* Appends y = tanh(x) over `count` floats from src into dst (the same
 * memory or one of the same odn_md_flat_f32 layout). */
tsr_status *odn_tanh_loop_add(odn_plan *p, const tsr_node *n, dnnl_memory_t src, dnnl_memory_t dst, int64_t count);

#endif
