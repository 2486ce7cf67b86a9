/* Recognising Gelu written out in primitive ops, as exporters emit it:
 *     y = (x * (Erf(x / sqrt(2)) + 1)) * 0.5
 * (Div by sqrt(2) or Mul by 1/sqrt(2); operands of Add and Mul in either
 * order), so it becomes one gelu_erf post-op instead of five steps. */
#include <math.h>
#include <string.h>

#include "odn.h"

static bool is_op(const tsr_node *n, const char *op) { return n && strcmp(odn_host->node_op_type(n), op) == 0; }

/* The single-float constant feeding `n` at input `k`, or NAN. */
static float scalar(const odn_plan *p, const tsr_node *n, size_t k) {
    odn_value *v = odn_plan_value((odn_plan *)p, odn_host->node_input(n, k));
    if (!v || !v->constant || v->constant->elem_type != TSR_FLOAT || odn_numel(v->rank, v->dims) != 1) return NAN;
    return *(const float *)v->constant->data;
}

static bool near(float a, double b) { return fabs((double)a - b) <= 1e-6 * fabs(b); }

/* The other operand's scalar when `n` reads `v` at one input. */
static float other_scalar(const odn_plan *p, const tsr_node *n, const odn_value *v) {
    if (odn_host->node_input_count(n) != 2) return NAN;
    if (odn_host->node_input(n, 0) == v->info) return scalar(p, n, 1);
    if (odn_host->node_input(n, 1) == v->info) return scalar(p, n, 0);
    return NAN;
}

static bool reads(const tsr_node *n, const odn_value *v) {
    for (size_t k = 0; k < odn_host->node_input_count(n); k++)
        if (odn_host->node_input(n, k) == v->info) return true;
    return false;
}

bool odn_fuse_gelu(odn_plan *p, const odn_value *x, odn_value **out) {
    if (x->output_index >= 0 || x->consumers != 2) return false;
    const tsr_node *scale = NULL, *mul = NULL;
    for (size_t i = 0; i < p->node_count; i++) {
        const tsr_node *n = p->nodes[i];
        if (p->done[i] || !reads(n, x)) continue;
        if ((is_op(n, "Div") && odn_host->node_input(n, 0) == x->info && near(scalar(p, n, 1), sqrt(2.0))) ||
            (is_op(n, "Mul") && near(other_scalar(p, n, x), sqrt(0.5))))
            scale = n;
        else if (is_op(n, "Mul"))
            mul = n;
    }
    if (!scale || !mul) return false;
    odn_value *t = odn_plan_value(p, odn_host->node_output(scale, 0));
    const tsr_node *erf = t ? odn_plan_sole_consumer(p, t) : NULL;
    if (!is_op(erf, "Erf")) return false;
    odn_value *e = odn_plan_value(p, odn_host->node_output(erf, 0));
    const tsr_node *add = e ? odn_plan_sole_consumer(p, e) : NULL;
    if (!is_op(add, "Add") || !near(other_scalar(p, add, e), 1.0)) return false;
    odn_value *a = odn_plan_value(p, odn_host->node_output(add, 0));
    if (!a || odn_plan_sole_consumer(p, a) != mul) return false;
    odn_value *m = odn_plan_value(p, odn_host->node_output(mul, 0));
    const tsr_node *half = m ? odn_plan_sole_consumer(p, m) : NULL;
    if (!is_op(half, "Mul") || !near(other_scalar(p, half, m), 0.5)) return false;
    const tsr_node *all[] = {scale, erf, add, mul, half};
    for (size_t i = 0; i < 5; i++) p->done[odn_plan_node_index(p, all[i])] = true;
    *out = odn_plan_value(p, odn_host->node_output(half, 0));
    return *out != NULL;
}
