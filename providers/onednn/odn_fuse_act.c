/* Recognising activations that exporters write as `x * f(x)`:
 *     SiLU / Swish:  x * Sigmoid(x)                  (EfficientNet, YOLOv5/v8)
 *     HardSwish:     x * HardSigmoid(x; 1/6, 1/2)    (MobileNetV3 before opset 14)
 * so each is one swish or hardswish eltwise post-op on the producing
 * primitive instead of an eltwise primitive plus a binary one over the whole
 * tensor. Operands of the Mul may come in either order. */
#include <math.h>
#include <string.h>

#include "odn.h"

static bool is_op(const tsr_node *n, const char *op) { return n && strcmp(odn_host->node_op_type(n), op) == 0; }

static bool reads(const tsr_node *n, const odn_value *v) {
    for (size_t k = 0; k < odn_host->node_input_count(n); k++)
        if (odn_host->node_input(n, k) == v->info) return true;
    return false;
}

/* The eltwise algorithm `x * gate(x)` amounts to, or 0. */
static dnnl_alg_kind_t gated_alg(const tsr_node *gate) {
    if (is_op(gate, "Sigmoid")) return dnnl_eltwise_swish;
    if (is_op(gate, "HardSigmoid") && fabsf(odn_attr_float(gate, "alpha", 0.2f) - 1.0f / 6.0f) <= 1e-6f &&
        odn_attr_float(gate, "beta", 0.5f) == 0.5f)
        return dnnl_eltwise_hardswish;
    return (dnnl_alg_kind_t)0;
}

bool odn_fuse_gated_act(odn_plan *p, const odn_value *x, odn_eltwise *el, odn_value **out) {
    if (x->output_index >= 0 || x->consumers != 2) return false;
    const tsr_node *gate = NULL, *mul = NULL;
    for (size_t i = 0; i < p->node_count; i++) {
        const tsr_node *n = p->nodes[i];
        if (p->done[i] || !reads(n, x)) continue;
        if (is_op(n, "Mul") && !mul) mul = n;
        else if (!gate && gated_alg(n) && odn_host->node_input_count(n) == 1) gate = n;
        else return false;
    }
    if (!gate || !mul) return false;
    odn_value *g = odn_plan_value(p, odn_host->node_output(gate, 0));
    if (!g || odn_plan_sole_consumer(p, g) != mul) return false;
    const tsr_value_info *a = odn_host->node_input(mul, 0), *b = odn_host->node_input(mul, 1);
    if (!((a == x->info && b == g->info) || (a == g->info && b == x->info))) return false;
    *el = (odn_eltwise){.alg = gated_alg(gate), .alpha = 1.0f, .beta = 0.0f};
    p->done[odn_plan_node_index(p, gate)] = true;
    p->done[odn_plan_node_index(p, mul)] = true;
    *out = odn_plan_value(p, odn_host->node_output(mul, 0));
    return *out != NULL;
}
