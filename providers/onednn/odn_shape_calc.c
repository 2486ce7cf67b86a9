/* Shape arithmetic inside a piece. An exporter with dynamic axes writes
 * every reshape's target from the tensor's own shape: Shape -> Gather ->
 * Unsqueeze -> Concat -> Reshape (PyTorch's GroupNorm as InstanceNorm,
 * attention's head split). Left to the reference provider, each such chain
 * cut the oneDNN piece in two, and every tensor at a cut was made plain,
 * handed to the host and reordered back: a Stable-Diffusion VAE decoder ran
 * in 41 pieces, 17% slower and with 3.4x the peak memory of the same model
 * with its dims fixed. A plan is built for its input shapes (odn_plan.c),
 * so every value such a chain computes is known when the plan is built:
 * the provider claims the chain and computes it then, on the host, into
 * the values' i64 (what Reshape and Resize read, odn_plan_i64); no step
 * runs at run time. The plan is keyed by its input shapes, so it is built
 * again when they change.
 *
 * Claimed (odn_shape_calc_mark): Shape and Size of any value, then, in
 * graph order, Gather, Unsqueeze, Squeeze, Concat, Slice, Cast, Identity,
 * Add, Sub, Mul, Div, Mod, Min, Max, Neg, Abs, Equal and Where on int64
 * tensors of rank 0 or 1 whose inputs are constants or such values, at
 * least one of them computed. The provider keeps a chain only where every
 * reader of its values is another such node or a Reshape/Resize in the
 * same piece (odn_provider.c), since a oneDNN memory cannot hold int64. */
#include <string.h>

#include "odn.h"

enum { SHAPE_MAX_ELEMS = 64, SHAPE_MAX_GRAPH = 20000 };

static bool is(const char *a, const char *b) { return strcmp(a, b) == 0; }

static bool elementwise(const char *op) {
    static const char *const ops[] = {"Add", "Sub", "Mul", "Div", "Mod", "Min", "Max", "Equal"};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (is(op, ops[i])) return true;
    return false;
}

static bool calc_op(const char *op) {
    static const char *const ops[] = {"Gather", "Unsqueeze", "Squeeze", "Concat", "Slice",
                                      "Cast",   "Identity",  "Neg",     "Abs",    "Where"};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (is(op, ops[i])) return true;
    return elementwise(op);
}

/* A small int64 (or, for Where's condition, bool) constant. */
static bool small_constant(const tsr_value_info *v) {
    const tsr_tensor *t = odn_host->value_constant(v);
    return t && t->rank <= 1 && odn_numel(t->rank, t->dims) <= SHAPE_MAX_ELEMS &&
        (t->elem_type == TSR_INT64 || t->elem_type == TSR_BOOL);
}

bool odn_shape_calc_mark(const tsr_graph *graph, bool *shape_node) {
    size_t n = odn_host->graph_node_count(graph);
    odn_index computed = {0}; /* values the marked nodes compute */
    bool ok = true;
    memset(shape_node, 0, n * sizeof *shape_node);
    if (n > SHAPE_MAX_GRAPH) return true; /* odn_shape_calc_unclaim's scan is quadratic */
    for (size_t i = 0; ok && i < n; i++) {
        const tsr_node *nd = odn_host->graph_node(graph, i);
        const char *op = odn_host->node_op_type(nd);
        shape_node[i] = false;
        if (odn_host->node_domain(nd)[0] && !is(odn_host->node_domain(nd), "ai.onnx")) continue;
        if (odn_host->node_output_count(nd) != 1 || !odn_host->node_output(nd, 0)) continue;
        const tsr_value_info *out = odn_host->node_output(nd, 0);
        int32_t ot = odn_host->value_elem_type(out), orank = odn_host->value_rank(out);
        if (orank < 0 || orank > 1 || (ot != TSR_INT64 && !(ot == TSR_BOOL && is(op, "Equal")))) continue;
        if (orank == 1 && (odn_host->value_dim(out, 0) < 0 || odn_host->value_dim(out, 0) > SHAPE_MAX_ELEMS)) continue;
        bool mark;
        if (is(op, "Shape") || is(op, "Size")) {
            mark = odn_host->node_input_count(nd) == 1 && odn_host->node_input(nd, 0);
        } else if (calc_op(op)) {
            size_t found = 0, k;
            mark = true;
            for (k = 0; mark && k < odn_host->node_input_count(nd); k++) {
                const tsr_value_info *in = odn_host->node_input(nd, k);
                size_t dummy;
                if (!in) continue;
                if (odn_index_get(&computed, in, &dummy)) found++;
                else mark = small_constant(in);
            }
            mark = mark && found > 0;
        } else {
            mark = false;
        }
        if (mark) {
            shape_node[i] = true;
            ok = odn_index_put(&computed, out, i);
        }
    }
    odn_index_free(&computed);
    return ok;
}

/* Whether reader j (input slot k) may take a computed shape value: another
 * marked node, or a Reshape's or an Expand's shape, a Resize's sizes or a
 * Slice's starts, ends, axes or steps (read when the plan is built), in
 * the same group. */
static bool reader_ok(const tsr_node *r, size_t k, bool marked, bool claimed, bool same_group) {
    if (!claimed || !same_group) return false;
    if (marked) return true;
    const char *op = odn_host->node_op_type(r);
    return ((is(op, "Reshape") || is(op, "Expand")) && k == 1) || (is(op, "Resize") && k == 3) ||
        (is(op, "Slice") && k >= 1 && k <= 4);
}

bool odn_shape_calc_unclaim(const tsr_graph *graph, bool *claimed, const bool *shape_node, const int *group,
                            tsr_claim_sink *sink) {
    size_t n = odn_host->graph_node_count(graph);
    bool changed = false;
    for (size_t i = 0; i < n; i++) {
        if (!shape_node[i] || !claimed[i]) continue;
        const tsr_node *nd = odn_host->graph_node(graph, i);
        const tsr_value_info *v = odn_host->node_output(nd, 0);
        bool ok = true;
        for (size_t o = 0; ok && o < odn_host->graph_output_count(graph); o++) ok = odn_host->graph_output(graph, o) != v;
        for (size_t j = i + 1; ok && j < n; j++) {
            const tsr_node *r = odn_host->graph_node(graph, j);
            for (size_t k = 0; ok && k < odn_host->node_input_count(r); k++)
                if (odn_host->node_input(r, k) == v)
                    ok = reader_ok(r, k, shape_node[j], claimed[j], group[j] == group[i]);
        }
        if (ok) continue;
        claimed[i] = false;
        changed = true;
        odn_host->decline_node(sink, nd, TSR_DECLINE_OTHER,
                               "computes a shape value read outside the oneDNN piece (oneDNN holds no int64)");
    }
    return changed;
}

/* --- building: each node's value computed from its inputs' ------------- */

typedef struct calc_in {
    const int64_t *v;
    int64_t count;
    int32_t rank;
} calc_in;

static tsr_status *input_of(odn_plan *p, const tsr_node *n, size_t k, calc_in *in) {
    const tsr_value_info *vi = odn_input(n, k);
    memset(in, 0, sizeof *in);
    if (!vi) return NULL;
    const tsr_tensor *t = odn_host->value_constant(vi);
    if (t && t->elem_type == TSR_BOOL) { /* Where's condition as a constant: widened once */
        int64_t c = odn_numel(t->rank, t->dims);
        if (c < 0 || c > SHAPE_MAX_ELEMS || t->nbytes < (size_t)c)
            return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "a condition of %lld elements", (long long)c);
        int64_t *w = odn_plan_alloc(p, sizeof(int64_t) * (size_t)(c > 0 ? c : 1));
        if (!w) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
        for (int64_t i = 0; i < c; i++) w[i] = ((const uint8_t *)t->data)[i] != 0;
        *in = (calc_in){w, c, t->rank};
        return NULL;
    }
    in->v = odn_plan_i64(p, vi, &in->count);
    if (!in->v && in->count == 0 && t) in->v = (const int64_t *)""; /* an empty constant */
    if (!in->v) return odn_node_error(n, TSR_ERR_PROVIDER, "internal: shape value '%s' not computed", odn_host->value_name(vi));
    odn_value *v = t ? NULL : odn_plan_value(p, vi);
    in->rank = t ? t->rank : v ? v->rank : 1;
    if (in->count > SHAPE_MAX_ELEMS)
        return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "a shape value of %lld elements", (long long)in->count);
    return NULL;
}

static int64_t binary(const char *op, int64_t a, int64_t b, bool *bad) {
    if (is(op, "Add")) return (int64_t)((uint64_t)a + (uint64_t)b);
    if (is(op, "Sub")) return (int64_t)((uint64_t)a - (uint64_t)b);
    if (is(op, "Mul")) return (int64_t)((uint64_t)a * (uint64_t)b);
    if (is(op, "Min")) return a < b ? a : b;
    if (is(op, "Max")) return a > b ? a : b;
    if (is(op, "Equal")) return a == b;
    if (b == 0 || (a == INT64_MIN && b == -1)) {
        *bad = true;
        return 0;
    }
    if (is(op, "Div")) return a / b; /* truncated, as ONNX Runtime's integer Div */
    int64_t r = a % b;                /* Mod with fmod=0: the sign of the divisor */
    return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}

/* Output elements (at most SHAPE_MAX_ELEMS) of node n into out; *rank. */
static tsr_status *evaluate(odn_plan *p, const tsr_node *n, int64_t *out, int64_t *count, int32_t *rank) {
    const char *op = odn_host->node_op_type(n);
    calc_in a, b, c;
    tsr_status *s;
    if (is(op, "Shape") || is(op, "Size")) {
        odn_value *x = odn_plan_value(p, odn_input(n, 0));
        const tsr_tensor *t = odn_host->value_constant(odn_input(n, 0));
        /* a value no step computes (a Mul folded into the convolution
         * reading it) has its dims all the same */
        int32_t r = t ? t->rank : x ? x->rank : -1;
        const int64_t *dims = t ? t->dims : x ? x->dims : NULL;
        if (r < 0 || r > ODN_MAX_RANK || !dims || (!t && !x->produced && !x->defer_src))
            return odn_node_error(n, TSR_ERR_PROVIDER, "internal: shape of '%s' unknown when the plan is built",
                                  odn_host->value_name(odn_input(n, 0)));
        if (is(op, "Size")) {
            *out = odn_numel(r, dims);
            *count = 1, *rank = 0;
            return NULL;
        }
        int64_t lo = odn_attr_int(n, "start", 0), hi = odn_attr_int(n, "end", r);
        lo = lo < 0 ? lo + r : lo, hi = hi < 0 ? hi + r : hi;
        lo = lo < 0 ? 0 : lo > r ? r : lo, hi = hi < 0 ? 0 : hi > r ? r : hi;
        *count = hi > lo ? hi - lo : 0, *rank = 1;
        memcpy(out, dims + lo, sizeof(int64_t) * (size_t)*count);
        return NULL;
    }
    if ((s = input_of(p, n, 0, &a))) return s;
    *rank = a.rank;
    *count = a.count;
    if (is(op, "Identity") || is(op, "Cast") || is(op, "Neg") || is(op, "Abs")) {
        for (int64_t i = 0; i < a.count; i++)
            out[i] = is(op, "Neg") ? (int64_t)(0 - (uint64_t)a.v[i]) : is(op, "Abs") && a.v[i] < 0 ? -a.v[i] : a.v[i];
        return NULL;
    }
    if (is(op, "Unsqueeze") || is(op, "Squeeze")) {
        if (a.count != 1 && is(op, "Squeeze")) return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "Squeeze of a shape");
        memcpy(out, a.v, sizeof(int64_t) * (size_t)a.count);
        *rank = is(op, "Unsqueeze") ? 1 : 0;
        return NULL;
    }
    if (is(op, "Concat")) {
        *count = 0, *rank = 1;
        for (size_t k = 0; k < odn_host->node_input_count(n); k++) {
            if ((s = input_of(p, n, k, &b))) return s;
            if (*count + b.count > SHAPE_MAX_ELEMS) return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "long shape");
            memcpy(out + *count, b.v, sizeof(int64_t) * (size_t)b.count);
            *count += b.count;
        }
        return NULL;
    }
    if (is(op, "Gather")) {
        if ((s = input_of(p, n, 1, &b))) return s;
        if (a.rank != 1) return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "Gather from a scalar");
        for (int64_t i = 0; i < b.count; i++) {
            int64_t k = b.v[i] < 0 ? b.v[i] + a.count : b.v[i];
            if (k < 0 || k >= a.count) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "index %lld out of range",
                                                             (long long)b.v[i]);
            out[i] = a.v[k];
        }
        *count = b.count, *rank = b.rank;
        return NULL;
    }
    if (is(op, "Slice")) {
        int64_t st = 0, en = a.count, step = 1;
        if (odn_host->node_opset(n) < 10) {
            size_t cs = 0, ce = 0;
            const int64_t *sv = odn_attr_ints(n, "starts", &cs), *ev = odn_attr_ints(n, "ends", &ce);
            if (cs != 1 || ce != 1) return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "Slice of a shape");
            st = sv[0], en = ev[0];
        } else {
            calc_in k[4];
            for (size_t j = 1; j <= 4; j++)
                if ((s = input_of(p, n, j, &k[j - 1]))) return s;
            if (k[0].count != 1 || k[1].count != 1 || (k[2].v && k[2].count != 1) || (k[3].v && k[3].count != 1))
                return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "Slice of a shape");
            st = k[0].v[0], en = k[1].v[0], step = k[3].v ? k[3].v[0] : 1;
        }
        if (step == 0) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "Slice step 0");
        int64_t len = a.count;
        st = st < 0 ? st + len : st, en = en < 0 ? en + len : en;
        if (step > 0) {
            st = st < 0 ? 0 : st > len ? len : st, en = en < 0 ? 0 : en > len ? len : en;
        } else {
            st = st < 0 ? -1 : st > len - 1 ? len - 1 : st, en = en < -1 ? -1 : en > len - 1 ? len - 1 : en;
        }
        *count = 0;
        for (int64_t i = st; step > 0 ? i < en : i > en; i += step) out[(*count)++] = a.v[i];
        return NULL;
    }
    if (is(op, "Where")) {
        if ((s = input_of(p, n, 1, &b)) || (s = input_of(p, n, 2, &c))) return s;
        int64_t len = a.count > b.count ? a.count : b.count;
        len = c.count > len ? c.count : len;
        if ((a.count != 1 && a.count != len) || (b.count != 1 && b.count != len) || (c.count != 1 && c.count != len))
            return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "Where operands do not broadcast");
        for (int64_t i = 0; i < len; i++)
            out[i] = a.v[a.count == 1 ? 0 : i] ? b.v[b.count == 1 ? 0 : i] : c.v[c.count == 1 ? 0 : i];
        *count = len;
        *rank = a.rank > b.rank ? a.rank : b.rank;
        *rank = c.rank > *rank ? c.rank : *rank;
        return NULL;
    }
    /* elementwise binary, one of them broadcast when a single value */
    if ((s = input_of(p, n, 1, &b))) return s;
    int64_t len = a.count > b.count ? a.count : b.count;
    if ((a.count != 1 && a.count != len) || (b.count != 1 && b.count != len))
        return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "operands do not broadcast");
    bool bad = false;
    for (int64_t i = 0; i < len; i++) out[i] = binary(op, a.v[a.count == 1 ? 0 : i], b.v[b.count == 1 ? 0 : i], &bad);
    if (bad) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "integer division by zero");
    *count = len;
    *rank = a.rank > b.rank ? a.rank : b.rank;
    return NULL;
}

bool odn_shape_calc_node(const odn_plan *p, const tsr_node *n) {
    const char *op = odn_host->node_op_type(n);
    if (!is(op, "Shape") && !is(op, "Size") && !calc_op(op)) return false;
    const tsr_value_info *out = odn_host->node_output(n, 0);
    int32_t t = out ? odn_host->value_elem_type(out) : 0;
    (void)p;
    return t == TSR_INT64 || (t == TSR_BOOL && is(op, "Equal"));
}

tsr_status *odn_build_shape_calc(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!y) return odn_node_error(n, TSR_ERR_PROVIDER, "internal: shape value");
    if (y->output_index >= 0)
        return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "a shape value leaving the piece (oneDNN holds no int64)");
    int64_t buf[SHAPE_MAX_ELEMS], count = 0;
    int32_t rank = 0;
    tsr_status *s = evaluate(p, n, buf, &count, &rank);
    if (s) return s;
    int64_t *v = odn_plan_alloc(p, sizeof(int64_t) * (size_t)(count > 0 ? count : 1));
    if (!v) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    memcpy(v, buf, sizeof(int64_t) * (size_t)count);
    y->i64 = v;
    y->i64_count = count;
    y->rank = rank;
    y->dims[0] = count;
    y->elem_type = odn_host->value_elem_type(y->info);
    y->produced = true;
    return NULL;
}
