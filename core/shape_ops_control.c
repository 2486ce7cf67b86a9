/*
 * Shape rules for control flow: If, Loop and Scan. Each infers its bodies
 * (feeding them the types it knows) and reads its outputs off the bodies'
 * outputs. If's outputs and Loop's carried values may be sequences or
 * optionals as well as tensors (Scan's are tensors only).
 */
#include <stdlib.h>
#include <string.h>

#include "shape_infer_internal.h"
#include "tessera/tessera.h"

static ir_graph *graph_attr(const ir_node *n, const char *name) {
    const ir_attr *a = shape_attr(n, name);
    return a && a->type == TSR_ATTR_GRAPH ? a->g : NULL;
}

static bool is_container(const ir_type *t) {
    return t && (t->kind == IR_TYPE_SEQUENCE || t->kind == IR_TYPE_OPTIONAL || t->kind == IR_TYPE_MAP);
}

static tsr_status *rule_if(shape_ctx *c, const ir_node *n) {
    ir_graph *th = graph_attr(n, "then_branch"), *el = graph_attr(n, "else_branch");
    TSR_TRY(shape_infer_subgraph(c, n, th, 0, NULL));
    TSR_TRY(shape_infer_subgraph(c, n, el, 0, NULL));
    if (!th || !el) return NULL;
    for (size_t i = 0; i < n->n_outputs; i++) {
        if (i >= th->n_outputs || i >= el->n_outputs) break;
        const ir_type *ta = shape_value_type(th->outputs[i]), *tb = shape_value_type(el->outputs[i]);
        if (is_container(ta) || is_container(tb)) {
            /* a sequence or optional: what both branches agree on */
            TSR_TRY(shape_set_out_join(c, n, i, ta, tb));
            continue;
        }
        shape_dims a, b, s;
        shape_value_shape(th->outputs[i], &a);
        shape_value_shape(el->outputs[i], &b);
        shape_dims_join(&a, &b, &s);
        int32_t ea = shape_value_elem(th->outputs[i]), eb = shape_value_elem(el->outputs[i]);
        if (!ea && !eb) continue; /* not a tensor we know of */
        TSR_TRY(shape_set_out(c, n, i, ea ? ea : eb, &s));
    }
    return NULL;
}

/* Loop: body inputs (iteration, cond, carried...), body outputs (cond,
 * carried..., scan outputs...). Node outputs: carried finals, then each scan
 * output stacked along a new first axis of unknown length. A carried
 * sequence or optional reaches the body without the shapes of its tensors,
 * as ONNX's Loop inference passes it (a sequence grows and its tensors may
 * differ from one iteration to the next). */
static tsr_status *rule_loop(shape_ctx *c, const ir_node *n) {
    ir_graph *body = graph_attr(n, "body");
    if (!body) return NULL;
    size_t carried = n->n_inputs > 2 ? n->n_inputs - 2 : 0;
    size_t nf = carried + 2;
    shape_feed *f = calloc(nf, sizeof *f);
    if (!f) return TSR_NO_MEMORY();
    f[0].elem = TSR_INT64;
    f[0].shape.rank = 0;
    f[1].elem = TSR_BOOL;
    f[1].shape.rank = 0;
    for (size_t i = 0; i < carried; i++) {
        f[i + 2].elem = shape_in_elem(c, n, i + 2);
        shape_in_shape(c, n, i + 2, &f[i + 2].shape);
        const ir_type *t = shape_in_type(c, n, i + 2);
        if (is_container(t)) {
            f[i + 2].type = t;
            f[i + 2].flags = SHAPE_NO_SHAPES;
        }
    }
    tsr_status *st = shape_infer_subgraph(c, n, body, nf, f);
    /* ONNX's inference feeds the body carried tensors without shapes; fed
     * the initial ones, a value that grows (acc = Concat(acc, x)) was
     * inferred at its first size and the second iteration failed the
     * output check. Dims on which the body's output and its input differ
     * are fed unknown and the body inferred again, until they agree (each
     * pass forgets a dim, so at most IR_MAX_RANK passes per value); a body
     * output of unknown shape keeps the initial shape, as before. */
    for (int pass = 0; !st && pass < (int)carried * IR_MAX_RANK + 1; pass++) {
        bool relaxed = false;
        for (size_t i = 0; i < carried && i + 1 < body->n_outputs; i++) {
            if (is_container(f[i + 2].type)) continue;
            shape_dims s, j;
            shape_value_shape(body->outputs[i + 1], &s);
            if (s.rank < 0 || f[i + 2].shape.rank < 0) continue;
            shape_dims_join(&f[i + 2].shape, &s, &j);
            bool same = j.rank == f[i + 2].shape.rank;
            for (int32_t d = 0; same && d < j.rank; d++) same = shape_dim_same(j.dims[d], f[i + 2].shape.dims[d]);
            if (same) continue;
            f[i + 2].shape = j;
            relaxed = true;
        }
        if (!relaxed) break;
        st = shape_infer_subgraph(c, n, body, nf, f);
    }
    for (size_t i = 0; i < n->n_outputs && !st; i++) {
        size_t bo = i + 1;
        if (bo >= body->n_outputs) break;
        const ir_type *bt = shape_value_type(body->outputs[bo]);
        if (i < carried && (is_container(f[i + 2].type) || is_container(bt))) {
            /* The final value is the initial one (no iteration) or the
             * body's last: what both allow. An optional that the body turns
             * into its content (test_loop16_seq_none) gives the body's
             * type, as ONNX's inference takes it. */
            const ir_type *it = f[i + 2].type;
            if (it && bt && bt->kind != IR_TYPE_UNKNOWN && it->kind != bt->kind) it = NULL;
            st = shape_set_out_join(c, n, i, it, bt);
            continue;
        }
        shape_dims s;
        shape_value_shape(body->outputs[bo], &s);
        int32_t elem = shape_value_elem(body->outputs[bo]);
        if (i < carried) {
            /* The carried value's shape may change between iterations:
             * only what the initial value and the body agree on holds. */
            shape_dims j;
            shape_dims_join(&f[i + 2].shape, &s, &j);
            if (!elem) elem = f[i + 2].elem;
            if (elem) st = shape_set_out(c, n, i, elem, &j);
        } else if (elem) {
            if (s.rank >= 0 && s.rank < IR_MAX_RANK) {
                memmove(&s.dims[1], &s.dims[0], (size_t)s.rank * sizeof s.dims[0]);
                s.dims[0] = shape_unknown();
                s.rank++;
            } else {
                shape_dims_unknown(&s);
            }
            st = shape_set_out(c, n, i, elem, &s);
        }
    }
    free(f);
    return st;
}

/* Scan (opset 9+): N state inputs then M scan inputs (num_scan_inputs);
 * the body sees each scan input without its scan axis; scan outputs gain
 * the scan length at their scan_output_axes. */
static tsr_status *rule_scan(shape_ctx *c, const ir_node *n) {
    ir_graph *body = graph_attr(n, "body");
    if (!body) return NULL;
    int64_t m = shape_attr_int(n, "num_scan_inputs", 0);
    if (m < 0 || (size_t)m > n->n_inputs) return shape_err(n, "num_scan_inputs %lld", (long long)m);
    size_t ni = n->n_inputs, ns = ni - (size_t)m;
    size_t cnt_in = 0, cnt_out = 0;
    const int64_t *in_axes = shape_attr_ints(n, "scan_input_axes", &cnt_in);
    const int64_t *out_axes = shape_attr_ints(n, "scan_output_axes", &cnt_out);
    if (in_axes && cnt_in != (size_t)m)
        return shape_err(n, "%zu scan_input_axes for %lld scan inputs", cnt_in, (long long)m);
    shape_feed *f = calloc(ni ? ni : 1, sizeof *f);
    if (!f) return TSR_NO_MEMORY();
    shape_dim len = shape_unknown();
    tsr_status *st = NULL;
    for (size_t i = 0; i < ni && !st; i++) {
        f[i].elem = shape_in_elem(c, n, i);
        shape_in_shape(c, n, i, &f[i].shape);
        if (i < ns || f[i].shape.rank < 0) continue;
        int32_t axis;
        shape_dims *sh = &f[i].shape;
        if (!shape_axis(in_axes ? in_axes[i - ns] : 0, sh->rank, &axis)) {
            st = shape_err(n, "scan input %zu: axis out of range for rank %d", i - ns, (int)sh->rank);
            break;
        }
        shape_dim d = sh->dims[axis];
        if (i == ns) len = d;
        else if (!shape_dim_unify(len, d, &len))
            st = shape_err(n, "scan inputs of lengths %lld and %lld", (long long)len.value, (long long)d.value);
        memmove(&sh->dims[axis], &sh->dims[axis + 1], (size_t)(sh->rank - axis - 1) * sizeof sh->dims[0]);
        sh->rank--;
    }
    if (!st) st = shape_infer_subgraph(c, n, body, ni, f);
    for (size_t i = 0; i < n->n_outputs && i < body->n_outputs && !st; i++) {
        shape_dims s;
        shape_value_shape(body->outputs[i], &s);
        int32_t elem = shape_value_elem(body->outputs[i]);
        if (!elem) continue;
        if (i >= ns) {
            size_t k = i - ns;
            int32_t axis;
            if (s.rank < 0 || s.rank >= IR_MAX_RANK) {
                shape_dims_unknown(&s);
            } else if (!shape_axis(out_axes && k < cnt_out ? out_axes[k] : 0, s.rank + 1, &axis)) {
                st = shape_err(n, "scan output %zu: axis out of range", k);
                break;
            } else {
                memmove(&s.dims[axis + 1], &s.dims[axis], (size_t)(s.rank - axis) * sizeof s.dims[0]);
                s.dims[axis] = len;
                s.rank++;
            }
        }
        st = shape_set_out(c, n, i, elem, &s);
    }
    free(f);
    return st;
}

/* Drops `k` dims of s from position `at` (s->rank >= at + k). */
static void drop_dims(shape_dims *s, int32_t at, int32_t k) {
    memmove(&s->dims[at], &s->dims[at + k], (size_t)(s->rank - at - k) * sizeof s->dims[0]);
    s->rank -= k;
}

/* Scan (opset 8): sequence_lens (optional), then N state inputs [batch,
 * ...] and M scan inputs [batch, sequence, ...]. The body sees states
 * without the batch axis and scan inputs without both; the final states
 * get the batch axis back, the scan outputs [batch, sequence, ...]. */
static tsr_status *rule_scan8(shape_ctx *c, const ir_node *n) {
    ir_graph *body = graph_attr(n, "body");
    if (!body || n->n_inputs < 1) return NULL;
    int64_t m = shape_attr_int(n, "num_scan_inputs", 0);
    size_t ni = n->n_inputs - 1;
    if (m < 0 || (size_t)m > ni) return shape_err(n, "num_scan_inputs %lld", (long long)m);
    size_t ns = ni - (size_t)m;
    shape_feed *f = calloc(ni ? ni : 1, sizeof *f);
    if (!f) return TSR_NO_MEMORY();
    shape_dim batch = shape_unknown(), len = shape_unknown();
    for (size_t i = 0; i < ni; i++) {
        f[i].elem = shape_in_elem(c, n, i + 1);
        shape_in_shape(c, n, i + 1, &f[i].shape);
        shape_dims *sh = &f[i].shape;
        int32_t axes = i < ns ? 1 : 2;
        if (sh->rank < axes) {
            shape_dims_unknown(sh);
            continue;
        }
        if (!shape_is_known(batch)) shape_dim_unify(batch, sh->dims[0], &batch);
        if (i >= ns && !shape_is_known(len)) shape_dim_unify(len, sh->dims[1], &len);
        drop_dims(sh, 0, axes);
    }
    tsr_status *st = shape_infer_subgraph(c, n, body, ni, f);
    for (size_t i = 0; i < n->n_outputs && i < body->n_outputs && !st; i++) {
        shape_dims s;
        shape_value_shape(body->outputs[i], &s);
        int32_t elem = i < ns ? f[i].elem : 0;
        if (!elem) elem = shape_value_elem(body->outputs[i]);
        int32_t axes = i < ns ? 1 : 2;
        if (s.rank >= 0 && s.rank + axes <= IR_MAX_RANK) {
            memmove(&s.dims[axes], &s.dims[0], (size_t)s.rank * sizeof s.dims[0]);
            s.dims[0] = batch;
            if (axes == 2) s.dims[1] = len;
            s.rank += axes;
        } else {
            shape_dims_unknown(&s);
        }
        if (elem) st = shape_set_out(c, n, i, elem, &s);
    }
    free(f);
    return st;
}

const shape_op shape_ops_control[] = {
    {"If", 1, rule_if},
    {"Loop", 1, rule_loop},
    {"Scan", 8, rule_scan8},
    {"Scan", 9, rule_scan},
};
const size_t shape_ops_control_count = sizeof shape_ops_control / sizeof shape_ops_control[0];
