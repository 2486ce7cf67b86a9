/*
 * Shape rules for control flow: If, Loop and Scan. Each infers its bodies
 * (feeding them the types it knows) and reads its outputs off the bodies'
 * outputs. Only tensors are handled; sequence- or optional-typed outputs are
 * left as the model declared them.
 */
#include <stdlib.h>
#include <string.h>

#include "shape_infer_internal.h"
#include "tessera/tessera.h"

static ir_graph *graph_attr(const ir_node *n, const char *name) {
    const ir_attr *a = si_attr(n, name);
    return a && a->type == TSR_ATTR_GRAPH ? a->g : NULL;
}

/* What both of two possible shapes agree on. */
static void join_shapes(const si_shape *a, const si_shape *b, si_shape *out) {
    if (a->rank < 0 || b->rank < 0 || a->rank != b->rank) {
        si_shape_unknown(out);
        return;
    }
    out->rank = a->rank;
    for (int32_t i = 0; i < a->rank; i++)
        out->dims[i] = si_dim_same(a->dims[i], b->dims[i]) ? a->dims[i] : si_unknown();
}

static tsr_status *rule_if(si_ctx *c, const ir_node *n) {
    ir_graph *th = graph_attr(n, "then_branch"), *el = graph_attr(n, "else_branch");
    TSR_TRY(si_infer_subgraph(c, n, th, 0, NULL));
    TSR_TRY(si_infer_subgraph(c, n, el, 0, NULL));
    if (!th || !el) return NULL;
    for (size_t i = 0; i < n->n_outputs; i++) {
        if (i >= th->n_outputs || i >= el->n_outputs) break;
        si_shape a, b, s;
        si_value_shape(th->outputs[i], &a);
        si_value_shape(el->outputs[i], &b);
        join_shapes(&a, &b, &s);
        int32_t ea = si_value_elem(th->outputs[i]), eb = si_value_elem(el->outputs[i]);
        if (!ea && !eb) continue; /* not a tensor we know of */
        TSR_TRY(si_set_out(c, n, i, ea ? ea : eb, &s));
    }
    return NULL;
}

/* Loop: body inputs (iteration, cond, carried...), body outputs (cond,
 * carried..., scan outputs...). Node outputs: carried finals, then each scan
 * output stacked along a new first axis of unknown length. */
static tsr_status *rule_loop(si_ctx *c, const ir_node *n) {
    ir_graph *body = graph_attr(n, "body");
    if (!body) return NULL;
    size_t carried = n->n_inputs > 2 ? n->n_inputs - 2 : 0;
    size_t nf = carried + 2;
    si_feed *f = malloc(nf * sizeof *f);
    if (!f) return TSR_NO_MEMORY();
    f[0].elem = TSR_INT64;
    f[0].shape.rank = 0;
    f[1].elem = TSR_BOOL;
    f[1].shape.rank = 0;
    for (size_t i = 0; i < carried; i++) {
        f[i + 2].elem = si_in_elem(c, n, i + 2);
        si_in_shape(c, n, i + 2, &f[i + 2].shape);
    }
    tsr_status *st = si_infer_subgraph(c, n, body, nf, f);
    for (size_t i = 0; i < n->n_outputs && !st; i++) {
        size_t bo = i + 1;
        if (bo >= body->n_outputs) break;
        si_shape s;
        si_value_shape(body->outputs[bo], &s);
        int32_t elem = si_value_elem(body->outputs[bo]);
        if (i < carried) {
            /* The carried value's shape may change between iterations:
             * only what the initial value and the body agree on holds. */
            si_shape j;
            join_shapes(&f[i + 2].shape, &s, &j);
            if (!elem) elem = f[i + 2].elem;
            if (elem) st = si_set_out(c, n, i, elem, &j);
        } else if (elem) {
            if (s.rank >= 0 && s.rank < IR_MAX_RANK) {
                memmove(&s.dims[1], &s.dims[0], (size_t)s.rank * sizeof s.dims[0]);
                s.dims[0] = si_unknown();
                s.rank++;
            } else {
                si_shape_unknown(&s);
            }
            st = si_set_out(c, n, i, elem, &s);
        }
    }
    free(f);
    return st;
}

/* Scan (opset 9+): N state inputs then M scan inputs (num_scan_inputs);
 * the body sees each scan input without its scan axis; scan outputs gain
 * the scan length at their scan_output_axes. */
static tsr_status *rule_scan(si_ctx *c, const ir_node *n) {
    ir_graph *body = graph_attr(n, "body");
    if (!body) return NULL;
    int64_t m = si_attr_int(n, "num_scan_inputs", 0);
    if (m < 0 || (size_t)m > n->n_inputs) return si_err(n, "num_scan_inputs %lld", (long long)m);
    size_t ni = n->n_inputs, ns = ni - (size_t)m;
    size_t cnt_in = 0, cnt_out = 0;
    const int64_t *in_axes = si_attr_ints(n, "scan_input_axes", &cnt_in);
    const int64_t *out_axes = si_attr_ints(n, "scan_output_axes", &cnt_out);
    if (in_axes && cnt_in != (size_t)m) return si_err(n, "%zu scan_input_axes for %lld scan inputs", cnt_in, (long long)m);
    si_feed *f = malloc((ni ? ni : 1) * sizeof *f);
    if (!f) return TSR_NO_MEMORY();
    si_dim len = si_unknown();
    tsr_status *st = NULL;
    for (size_t i = 0; i < ni && !st; i++) {
        f[i].elem = si_in_elem(c, n, i);
        si_in_shape(c, n, i, &f[i].shape);
        if (i < ns || f[i].shape.rank < 0) continue;
        int32_t axis;
        si_shape *sh = &f[i].shape;
        if (!si_axis(in_axes ? in_axes[i - ns] : 0, sh->rank, &axis)) {
            st = si_err(n, "scan input %zu: axis out of range for rank %d", i - ns, (int)sh->rank);
            break;
        }
        si_dim d = sh->dims[axis];
        if (i == ns) len = d;
        else if (!si_dim_unify(len, d, &len)) st = si_err(n, "scan inputs of lengths %lld and %lld", (long long)len.value, (long long)d.value);
        memmove(&sh->dims[axis], &sh->dims[axis + 1], (size_t)(sh->rank - axis - 1) * sizeof sh->dims[0]);
        sh->rank--;
    }
    if (!st) st = si_infer_subgraph(c, n, body, ni, f);
    for (size_t i = 0; i < n->n_outputs && i < body->n_outputs && !st; i++) {
        si_shape s;
        si_value_shape(body->outputs[i], &s);
        int32_t elem = si_value_elem(body->outputs[i]);
        if (!elem) continue;
        if (i >= ns) {
            size_t k = i - ns;
            int32_t axis;
            if (s.rank < 0 || s.rank >= IR_MAX_RANK) {
                si_shape_unknown(&s);
            } else if (!si_axis(out_axes && k < cnt_out ? out_axes[k] : 0, s.rank + 1, &axis)) {
                st = si_err(n, "scan output %zu: axis out of range", k);
                break;
            } else {
                memmove(&s.dims[axis + 1], &s.dims[axis], (size_t)(s.rank - axis) * sizeof s.dims[0]);
                s.dims[axis] = len;
                s.rank++;
            }
        }
        st = si_set_out(c, n, i, elem, &s);
    }
    free(f);
    return st;
}

const si_op si_ops_control[] = {
    {"If", 1, rule_if},
    {"Loop", 1, rule_loop},
    {"Scan", 9, rule_scan},
};
const size_t si_ops_control_count = sizeof si_ops_control / sizeof si_ops_control[0];
