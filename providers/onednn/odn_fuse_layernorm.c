/* Recognising LayerNorm written out in primitive ops, as exporters wrote
 * it before opset 17 (torch.onnx, tf2onnx, PaddlePaddle):
 *     m = ReduceMean(x, last axes)     d = x - m
 *     v = ReduceMean(d ^ 2 or d * d)   y = d / Sqrt(v + eps)
 *     [y = y * gamma]  [y = y + beta]
 * so it runs as one oneDNN layer normalization instead of eight steps, two
 * of which are broadcasts ([N,T,1] against [N,T,C]) oneDNN has no JIT
 * kernel for. The statistics are computed as written (mean, then the mean
 * of squared deviations), so results agree with the graph to rounding. */
#include <math.h>
#include <string.h>

#include "odn.h"

static bool is_op(const tsr_node *n, const char *op) { return n && strcmp(odn_host->node_op_type(n), op) == 0; }

/* The one-value constant (float32 or float16) at input k of n. */
static odn_scalar scalar_at(odn_plan *p, const tsr_node *n, size_t k) {
    return odn_value_scalar(p, k < odn_host->node_input_count(n) ? odn_host->node_input(n, k) : NULL);
}

/* The readers of v inside the plan that are not done yet (at most `max`). */
static size_t readers(odn_plan *p, const odn_value *v, const tsr_node **out, size_t max) {
    size_t count = 0;
    for (size_t i = 0; i < p->node_count; i++) {
        if (p->done[i]) continue;
        const tsr_node *n = p->nodes[i];
        for (size_t k = 0; k < odn_host->node_input_count(n); k++)
            if (odn_host->node_input(n, k) == v->info) {
                if (count < max) out[count] = n;
                count++;
                break;
            }
    }
    return count;
}

static odn_value *out_of(odn_plan *p, const tsr_node *n) { return odn_plan_value(p, odn_host->node_output(n, 0)); }

/* The only reader of n's output (n's output not a piece output), or NULL. */
static const tsr_node *next(odn_plan *p, const tsr_node *n) {
    odn_value *v = out_of(p, n);
    return v ? odn_plan_sole_consumer(p, v) : NULL;
}

/* First reduced axis when ReduceMean `n` over a rank-`rank` input reduces
 * exactly the trailing axes and keeps dims; else -1. */
static int32_t trailing_axis(const tsr_node *n, int32_t rank) {
    bool reduce[ODN_MAX_RANK];
    if (rank < 1 || rank > ODN_MAX_RANK || !odn_reduce_axes(n, rank, reduce) || !odn_attr_int(n, "keepdims", 1))
        return -1;
    int32_t first = rank;
    while (first > 0 && reduce[first - 1]) first--;
    for (int32_t d = 0; d < first; d++)
        if (reduce[d]) return -1;
    return first < rank ? first : -1;
}

/* A constant per-feature vector operand of the affine Mul/Add `n` (the
 * other input being `cur`) of `c` elements, or NULL. */
static odn_value *affine_operand(odn_plan *p, const tsr_node *n, const odn_value *cur, int64_t c) {
    if (!n || odn_host->node_input_count(n) != 2) return NULL;
    size_t k = odn_host->node_input(n, 0) == cur->info ? 1 : 0;
    if (odn_host->node_input(n, 1 - k) != cur->info) return NULL;
    odn_value *v = odn_plan_value(p, odn_host->node_input(n, k));
    if (!v || !v->constant || !v->mem || v->constant->elem_type != TSR_FLOAT || odn_numel(v->rank, v->dims) != c)
        return NULL;
    for (int32_t d = 0; d + 1 < v->rank; d++)
        if (v->dims[d] != 1) return NULL;
    return v;
}

tsr_status *odn_fuse_layernorm(odn_plan *p, size_t index, bool *handled) {
    *handled = false;
    const tsr_node *mean = p->nodes[index];
    odn_value *x = odn_plan_value(p, odn_host->node_input(mean, 0));
    if (!x || !x->produced || !x->mem || (x->elem_type && x->elem_type != TSR_FLOAT)) return NULL;
    int32_t axis = trailing_axis(mean, x->rank);
    if (axis < 0) return NULL;
    const tsr_node *sub = next(p, mean);
    if (!is_op(sub, "Sub") || odn_host->node_input(sub, 0) != x->info) return NULL;
    odn_value *d = out_of(p, sub);
    const tsr_node *r[3];
    if (!d || d->output_index >= 0 || readers(p, d, r, 3) != 2) return NULL;
    const tsr_node *sq = is_op(r[0], "Div") ? r[1] : r[0], *div = is_op(r[0], "Div") ? r[0] : r[1];
    bool squares =
        (is_op(sq, "Pow") && odn_host->node_input(sq, 0) == d->info && odn_scalar_near(scalar_at(p, sq, 1), 2.0, 0)) ||
        (is_op(sq, "Mul") && odn_host->node_input(sq, 0) == d->info && odn_host->node_input(sq, 1) == d->info);
    if (!squares || !is_op(div, "Div") || odn_host->node_input(div, 0) != d->info) return NULL;
    const tsr_node *var = next(p, sq);
    if (!is_op(var, "ReduceMean") || trailing_axis(var, x->rank) != axis) return NULL;
    const tsr_node *add = next(p, var);
    if (!is_op(add, "Add")) return NULL;
    float eps =
        (odn_host->node_input(add, 0) == odn_host->node_output(var, 0) ? scalar_at(p, add, 1) : scalar_at(p, add, 0))
            .value;
    const tsr_node *root = next(p, add);
    if (!(eps >= 0) || !is_op(root, "Sqrt") || next(p, root) != div ||
        odn_host->node_input(div, 1) != odn_host->node_output(root, 0))
        return NULL;
    int64_t c = odn_numel(x->rank - axis, x->dims + axis);
    const tsr_node *last = div, *mul = next(p, div), *shift_add = NULL;
    odn_value *gamma = is_op(mul, "Mul") ? affine_operand(p, mul, out_of(p, div), c) : NULL, *beta = NULL;
    if (gamma) last = mul;
    const tsr_node *after = next(p, last);
    if (is_op(after, "Add") && (beta = affine_operand(p, after, out_of(p, last), c))) last = shift_add = after;
    odn_value *y = out_of(p, last);
    if (!y) return NULL;

    *handled = true;
    const tsr_node *all[] = {sub, sq, var, add, root, div, gamma ? mul : NULL, shift_add};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]) p->done[odn_plan_node_index(p, all[i])] = true;
    int64_t two[2] = {odn_numel(axis, x->dims), c};
    dnnl_memory_t src, dst, scale = NULL, shift = NULL;
    dnnl_memory_desc_t md;
    tsr_status *s = odn_plan_plain_view(p, x, 2, two, NULL, mean, &src, &md);
    if (!s && gamma) s = odn_plan_plain_view(p, gamma, 1, &c, NULL, mean, &scale, NULL);
    if (!s && beta) s = odn_plan_plain_view(p, beta, 1, &c, NULL, mean, &shift, NULL);
    if (!s) s = odn_plan_define(p, y, x->rank, x->dims, NULL, mean);
    if (!s) s = odn_plan_plain_view(p, y, 2, two, NULL, mean, &dst, NULL);
    if (s) return s;
    dnnl_layer_normalization_desc_t ld;
    unsigned flags = (gamma ? dnnl_use_scale : 0) | (beta ? dnnl_use_shift : 0);
    dnnl_status_t st = dnnl_layer_normalization_forward_desc_init(&ld, dnnl_forward_inference, &md, NULL, eps, flags);
    dnnl_primitive_desc_t pd = NULL;
    if (st == dnnl_success) st = odn_pd_create(p, &ld, NULL, &pd);
    if (st != dnnl_success) return odn_dnnl_error(mean, "layer normalization (written out) setup", st);
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
    int nargs = 2;
    if (scale) args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_SCALE, scale};
    if (shift) args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_SHIFT, shift};
    s = odn_plan_add_primitive(p, pd, mean, args, nargs);
    dnnl_primitive_desc_destroy(pd);
    return s;
}
