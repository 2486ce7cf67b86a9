/*
 * Private to the ref_misc_*.c files and ref_ops_misc.c: the kernels each
 * file implements, listed in ref_ops_misc.c's table.
 */
#ifndef TESSERA_REF_MISC_H
#define TESSERA_REF_MISC_H

#include "ref.h"

/* ref_misc_topk.c */
tsr_status *ref_misc_topk(ref_ctx *c);
int ref_misc_topk_check(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size);

/* ref_misc_random.c */
tsr_status *ref_misc_random_uniform(ref_ctx *c);
tsr_status *ref_misc_random_normal(ref_ctx *c);
tsr_status *ref_misc_random_uniform_like(ref_ctx *c);
tsr_status *ref_misc_random_normal_like(ref_ctx *c);
tsr_status *ref_misc_bernoulli(ref_ctx *c);
tsr_status *ref_misc_multinomial(ref_ctx *c);
int ref_misc_random_check(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size);

#endif
