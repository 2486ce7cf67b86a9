/* Recognising Gelu written out in primitive ops, as exporters emit it:
 *     y = (x * (Erf(x / sqrt(2)) + 1)) * 0.5
 * (Div by sqrt(2) or Mul by 1/sqrt(2); operands of Add and Mul in either
 * order), so it becomes one gelu_erf post-op instead of five steps. */
#include <math.h>
#include <string.h>

#include "odn.h"

static bool is_op(const tsr_node *n, const char *op) { return n && strcmp(odn_host->node_op_type(n), op) == 0; }

/* The one-value constant (float32 or float16) feeding `n` at input `k`. */
static odn_scalar scalar(const odn_plan *p, const tsr_node *n, size_t k) {
    return odn_value_scalar((odn_plan *)p, odn_host->node_input(n, k));
}

/* float32 constants within 1e-6 (torch writes sqrt(2) as 1.4142135),
 * float16 ones as the value rounded to float16 (1.4140625) */
static bool near(odn_scalar s, double b) { return odn_scalar_near(s, b, 1e-6); }

/* The other operand's scalar when `n` reads `v` at one input. */
static odn_scalar other_scalar(const odn_plan *p, const tsr_node *n, const odn_value *v) {
    if (odn_host->node_input_count(n) == 2) {
        if (odn_host->node_input(n, 0) == v->info) return scalar(p, n, 1);
        if (odn_host->node_input(n, 1) == v->info) return scalar(p, n, 0);
    }
    return (odn_scalar){NAN, false, false};
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
        else if (is_op(n, "Mul")) mul = n;
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

/* The tanh form (GPT-2's gelu_new, BERT-TF's), as torch exports it:
 *     0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * Pow(x, 3))))
 * with the half taken first (Mul(x, 0.5) times the bracket) or last;
 * operands of Add and Mul in either order. One gelu_tanh post-op. */
static const tsr_node *only_reader(const odn_plan *p, const tsr_node *n) {
    odn_value *v = odn_plan_value((odn_plan *)p, odn_host->node_output(n, 0));
    return v ? odn_plan_sole_consumer(p, v) : NULL;
}

static odn_value *output_of(const odn_plan *p, const tsr_node *n) {
    return odn_plan_value((odn_plan *)p, odn_host->node_output(n, 0));
}

bool odn_fuse_gelu_tanh(odn_plan *p, const odn_value *x, odn_value **out) {
    if (x->output_index >= 0 || (x->consumers != 3 && x->consumers != 2)) return false;
    const tsr_node *half = NULL, *cube = NULL, *inner_add = NULL, *outer_mul = NULL;
    for (size_t i = 0; i < p->node_count; i++) {
        const tsr_node *n = p->nodes[i];
        if (p->done[i] || !reads(n, x)) continue;
        if (is_op(n, "Pow") && odn_host->node_input(n, 0) == x->info && odn_scalar_near(scalar(p, n, 1), 3.0, 0))
            cube = n;
        else if (is_op(n, "Mul") && near(other_scalar(p, n, x), 0.5)) half = n;
        else if (is_op(n, "Add")) inner_add = n;
        else if (is_op(n, "Mul")) outer_mul = n; /* x * bracket, halved after */
        else return false;
    }
    if (!cube || !inner_add || !!half == !!outer_mul) return false;
    const tsr_node *k = only_reader(p, cube);
    if (!is_op(k, "Mul") || !near(other_scalar(p, k, output_of(p, cube)), 0.044715)) return false;
    if (only_reader(p, k) != inner_add) return false;
    const tsr_node *scale = only_reader(p, inner_add);
    if (!is_op(scale, "Mul") || !near(other_scalar(p, scale, output_of(p, inner_add)), 0.7978845608028654))
        return false;
    const tsr_node *th = only_reader(p, scale);
    if (!is_op(th, "Tanh")) return false;
    const tsr_node *one = only_reader(p, th);
    if (!is_op(one, "Add") || !near(other_scalar(p, one, output_of(p, th)), 1.0)) return false;
    const tsr_node *prod = only_reader(p, one), *last;
    if (half) {
        if (!is_op(prod, "Mul") || only_reader(p, half) != prod) return false;
        last = prod;
    } else {
        if (prod != outer_mul) return false;
        last = only_reader(p, prod);
        if (!is_op(last, "Mul") || !near(other_scalar(p, last, output_of(p, prod)), 0.5)) return false;
    }
    const tsr_node *all[] = {cube, k, inner_add, scale, th, one, prod, half ? half : last};
    for (size_t i = 0; i < 8; i++) p->done[odn_plan_node_index(p, all[i])] = true;
    *out = output_of(p, last);
    return *out != NULL;
}
