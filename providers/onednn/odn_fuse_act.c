/* Recognising activations that exporters write as `x * f(x)`:
 *     SiLU / Swish:  x * Sigmoid(x)                  (EfficientNet, YOLOv5/v8)
 *     HardSwish:     x * HardSigmoid(x; 1/6, 1/2)    (MobileNetV3 before opset 14)
 *                    x * Clip(x + 3, 0, 6) / 6       (Paddle2ONNX, Keras)
 *     Mish:          x * Tanh(Softplus(x))           (YOLOv4, CSP backbones)
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

/* The eltwise algorithm `x * gate(x)` amounts to, or 0 (Softplus: when a
 * Tanh follows it, gate_end checks). */
static dnnl_alg_kind_t gated_alg(const tsr_node *gate) {
    if (is_op(gate, "Sigmoid")) return dnnl_eltwise_swish;
    if (is_op(gate, "Softplus")) return dnnl_eltwise_mish;
    if (is_op(gate, "HardSigmoid") && fabsf(odn_attr_float(gate, "alpha", 0.2f) - 1.0f / 6.0f) <= 1e-6f &&
        odn_attr_float(gate, "beta", 0.5f) == 0.5f)
        return dnnl_eltwise_hardswish;
    return (dnnl_alg_kind_t)0;
}

/* The one-value constant (float32 or float16) at input k of n. */
static odn_scalar scalar_at(odn_plan *p, const tsr_node *n, size_t k) {
    return odn_value_scalar(p, k < odn_host->node_input_count(n) ? odn_host->node_input(n, k) : NULL);
}

/* The scalar operand of binary `n` whose other input is `v`. */
static odn_scalar other_scalar(odn_plan *p, const tsr_node *n, const odn_value *v) {
    if (odn_host->node_input_count(n) == 2) {
        if (odn_host->node_input(n, 0) == v->info) return scalar_at(p, n, 1);
        if (odn_host->node_input(n, 1) == v->info && strcmp(odn_host->node_op_type(n), "Div") != 0)
            return scalar_at(p, n, 0);
    }
    return (odn_scalar){NAN, false, false};
}

static const tsr_node *sole_reader(odn_plan *p, const tsr_node *n) {
    odn_value *v = odn_plan_value(p, odn_host->node_output(n, 0));
    return v ? odn_plan_sole_consumer(p, v) : NULL;
}

/* Scaling by 1/6 as `Div(v, 6)` or `Mul(v, 1/6)`. */
static bool is_sixth(odn_plan *p, const tsr_node *n, const odn_value *v) {
    if (!v) return false;
    odn_scalar f = other_scalar(p, n, v);
    return (is_op(n, "Div") && odn_scalar_near(f, 6.0, 0)) || (is_op(n, "Mul") && odn_scalar_near(f, 1.0 / 6.0, 6e-7));
}

/* x * Clip(x + 3, 0, 6) / 6, with the division before or after the
 * product: `add` is the Add reading x, `mul` the Mul reading x. */
static bool clip_hardswish(odn_plan *p, const odn_value *x, const tsr_node *add, const tsr_node *mul,
                           const tsr_node **chain, size_t *len) {
    if (!odn_scalar_near(other_scalar(p, add, x), 3.0, 0)) return false;
    const tsr_node *clip = sole_reader(p, add);
    if (!is_op(clip, "Clip")) return false;
    odn_eltwise el[2];
    if (odn_eltwise_of(clip, el) != 1 || el[0].alpha != 0.0f || el[0].beta != 6.0f) return false;
    const tsr_node *after = sole_reader(p, clip);
    size_t k = 0;
    chain[k++] = add;
    chain[k++] = clip;
    if (after != mul) { /* Clip / 6, then the product */
        if (!after || !is_sixth(p, after, odn_plan_value(p, odn_host->node_output(clip, 0))) ||
            sole_reader(p, after) != mul)
            return false;
        chain[k++] = after;
        chain[k++] = mul;
    } else { /* the product, then / 6 */
        const tsr_node *div = sole_reader(p, mul);
        if (!div || !is_sixth(p, div, odn_plan_value(p, odn_host->node_output(mul, 0)))) return false;
        chain[k++] = mul;
        chain[k++] = div;
    }
    *len = k;
    return true;
}

bool odn_fuse_gated_act(odn_plan *p, const odn_value *x, odn_eltwise *el, odn_value **out) {
    if (x->output_index >= 0 || x->consumers != 2) return false;
    {
        const tsr_node *add = NULL, *mul = NULL;
        for (size_t i = 0; i < p->node_count; i++) {
            const tsr_node *n = p->nodes[i];
            if (p->done[i] || !reads(n, x)) continue;
            if (is_op(n, "Add") && !add) add = n;
            else if (is_op(n, "Mul") && !mul) mul = n;
        }
        const tsr_node *chain[4];
        size_t len = 0;
        if (add && mul && clip_hardswish(p, x, add, mul, chain, &len)) {
            odn_value *last = odn_plan_value(p, odn_host->node_output(chain[len - 1], 0));
            if (!last) return false;
            for (size_t i = 0; i < len; i++) p->done[odn_plan_node_index(p, chain[i])] = true;
            *el = (odn_eltwise){.alg = dnnl_eltwise_hardswish, .alpha = 1.0f, .beta = 0.0f};
            *out = last;
            return true;
        }
    }
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
    const tsr_node *tanh = NULL; /* Mish's Tanh after the Softplus */
    if (g && is_op(gate, "Softplus")) {
        tanh = odn_plan_sole_consumer(p, g);
        if (!is_op(tanh, "Tanh") || odn_plan_node_index(p, tanh) < 0 || p->done[odn_plan_node_index(p, tanh)])
            return false;
        g = odn_plan_value(p, odn_host->node_output(tanh, 0));
    }
    if (!g || odn_plan_sole_consumer(p, g) != mul) return false;
    const tsr_value_info *a = odn_host->node_input(mul, 0), *b = odn_host->node_input(mul, 1);
    if (!((a == x->info && b == g->info) || (a == g->info && b == x->info))) return false;
    *el = (odn_eltwise){.alg = gated_alg(gate), .alpha = 1.0f, .beta = 0.0f};
    p->done[odn_plan_node_index(p, gate)] = true;
    if (tanh) p->done[odn_plan_node_index(p, tanh)] = true;
    p->done[odn_plan_node_index(p, mul)] = true;
    *out = odn_plan_value(p, odn_host->node_output(mul, 0));
    return *out != NULL;
}

/* An activation written out in primitive ops (Gelu in either form, SiLU,
 * HardSwish) whose input `x` no primitive of the piece could take it on as
 * a post-op (x is a piece input, or comes through a Reshape): one eltwise
 * step from x instead of four to eight. `index` is the node being built (a
 * reader of x). */
tsr_status *odn_build_written_act(odn_plan *p, size_t index, bool *handled) {
    *handled = false;
    const tsr_node *n = p->nodes[index];
    if (odn_host->node_input_count(n) < 1) return NULL;
    odn_value *x = odn_plan_value(p, odn_host->node_input(n, 0));
    if ((!x || !x->produced || !x->mem || x->constant) && odn_host->node_input_count(n) == 2)
        x = odn_plan_value(p, odn_host->node_input(n, 1));
    if (!x || !x->produced || !x->mem || x->constant || x->output_index >= 0 ||
        (x->elem_type && x->elem_type != TSR_FLOAT))
        return NULL;
    /* the matchers look at the readers of x not yet built, this one included */
    p->done[index] = false;
    odn_eltwise el = {.alg = dnnl_eltwise_gelu_erf, .alpha = 0.0f, .beta = 0.0f};
    odn_value *y = NULL;
    bool found = odn_fuse_gelu(p, x, &y);
    if (!found && odn_fuse_gelu_tanh(p, x, &y)) {
        el.alg = dnnl_eltwise_gelu_tanh;
        found = true;
    }
    if (!found) found = odn_fuse_gated_act(p, x, &el, &y);
    p->done[index] = true;
    if (!found) return NULL;
    *handled = true;
    dnnl_memory_t src = x->mem;
    const dnnl_memory_desc_t *md = &x->md;
    if (y->output_index >= 0) {
        tsr_status *s = odn_plan_plain_mem(p, x, n, &src);
        if (s) return s;
        dnnl_memory_get_memory_desc(src, &md);
    }
    tsr_status *s = odn_plan_define(p, y, x->rank, x->dims, md, n);
    if (!s && el.alg == dnnl_eltwise_gelu_tanh && odn_gelu_loop_supported() && odn_md_flat_f32(md))
        return odn_gelu_loop_add(p, n, src, y->mem, odn_numel(md->ndims, md->dims));
    return s ? s : odn_eltwise_step(p, n, &el, md, src, y->mem);
}
