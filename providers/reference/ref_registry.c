/* Finds the kernel for an op among the per-family tables. */
#include <string.h>

#include "ref.h"
#include "ref_quant_ms.h"

/* Every family's table (ref.h); one missing fails the link. */
static const ref_op *const ref_tables[] = {ref_ops_math,     ref_ops_nn,    ref_ops_tensor,   ref_ops_attention,
                                           ref_ops_loss,     ref_ops_quant, ref_ops_rnn,      ref_ops_signal,
                                           ref_ops_image,    ref_ops_text,  ref_ops_sequence, ref_ops_ml,
                                           ref_ops_training, ref_ops_misc,  ref_ops_quant_ms};

const ref_op *ref_find_op(const char *domain, const char *op_type, int64_t opset) {
    const ref_op *best = NULL;
    for (size_t t = 0; t < sizeof ref_tables / sizeof ref_tables[0]; t++) {
        for (const ref_op *op = ref_tables[t]; op->op_type; op++) {
            if (strcmp(op->op_type, op_type) != 0 || strcmp(op->domain, domain) != 0) continue;
            /* Several entries may cover one op at different opsets: take the
             * newest one that the node's opset reaches. */
            if (op->min_opset <= opset && (!best || op->min_opset > best->min_opset)) best = op;
        }
    }
    return best;
}
