/* Checks of what a provider's run hands back (output_check.c). */
#ifndef TESSERA_CORE_OUTPUT_CHECK_H
#define TESSERA_CORE_OUTPUT_CHECK_H

#include "ir.h"
#include "plugin.h"
#include "rt_tensor.h"

/* NULL when tensor `t`, which node `n`'s piece on `prov` produced for `v`,
 * has the element type, rank and the fixed dims inference derived for `v`
 * (not those only the model declares); otherwise
 * a TSR_ERR_PROVIDER naming the provider, the node and the value. */
tsr_status *output_check(const provider_inst *prov, const ir_node *n, const ir_value *v, const rt_tensor *t);

#endif
