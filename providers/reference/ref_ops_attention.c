/*
 * The reference provider's attention family: the table ref_registry.c finds
 * by name. The kernels live in ref_attn_*.c (see ref_attn.h).
 */
#include <stdio.h>

#include "ref_attn.h"

/* FlexAttention runs its modifier graphs with the reference kernels (see
 * ref_attn_subgraph.c), so every node in them needs one. */
static int check_flex(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size) {
    int r = ref_check_float(host, node, why, why_size);
    if (r) return r;
    static const char *const mods[] = {"score_mod", "prob_mod"};
    for (size_t m = 0; m < 2; m++) {
        const tsr_attr *a = host->node_attr_find(node, mods[m]);
        if (!a) continue;
        const tsr_graph *g = host->attr_type(a) == TSR_ATTR_GRAPH ? host->attr_graph(a) : NULL;
        if (!g) {
            snprintf(why, why_size, "%s is not a graph", mods[m]);
            return TSR_DECLINE_ATTRIBUTE;
        }
        for (size_t i = 0, n = host->graph_node_count(g); i < n; i++) {
            const tsr_node *b = host->graph_node(g, i);
            const char *dom = host->node_domain(b), *op = host->node_op_type(b);
            if (!ref_find_op(dom, op, host->node_opset(b))) {
                snprintf(why, why_size, "%s uses %s%s%s, which has no reference kernel", mods[m], dom,
                         dom[0] ? "." : "", op);
                return TSR_DECLINE_ATTRIBUTE;
            }
        }
    }
    return 0;
}

const ref_op ref_ops_attention[] = {
    {"", "Attention", 23, ref_attn_sdpa, ref_check_float},
    {"", "RMSNormalization", 23, ref_attn_rms_norm, ref_check_float},
    {"", "RotaryEmbedding", 23, ref_attn_rotary, ref_check_float},
    {"", "LinearAttention", 27, ref_attn_linear, ref_check_float},
    {"", "CausalConvWithState", 27, ref_attn_causal_conv, ref_check_float},
    {"ai.onnx.preview", "FlexAttention", 1, ref_attn_flex, check_flex},
    {NULL, NULL, 0, NULL, NULL},
};
