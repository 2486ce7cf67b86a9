/*
 * Shape rules for operators that move, cut, join or make tensors: Reshape,
 * Transpose, Concat, Split, Slice, Gather*, Squeeze/Unsqueeze, Flatten,
 * Expand, Tile, Pad, Resize, Shape, Size, Constant*, Range, TopK, NonZero
 * and a few relatives. Many read a constant input (or a shape value the
 * driver worked out) to know the result's shape.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shape_infer_internal.h"
#include "tessera/tessera.h"

/* A shape-value element as a dim: a number, or a named/unnamed unknown. */
static shape_dim sval_dim(shape_dim e) {
    if (e.value == SHAPE_NAN || e.value < 0) {
        shape_dim d = {TSR_DIM_UNKNOWN, e.value == SHAPE_NAN ? e.symbol : NULL};
        return d;
    }
    return shape_known(e.value);
}

/* Axes from input `idx` (newer opsets) or attribute `name` (older ones);
 * false when they can't be known. *given is false when neither is present. */
static bool read_axes(shape_ctx *c, const ir_node *n, bool from_input, size_t idx, const char *name, int64_t *axes,
                      size_t *count, bool *given) {
    *given = true;
    if (from_input) {
        if (!shape_has_in(n, idx)) {
            *given = false;
            *count = 0;
            return true;
        }
        return shape_in_ints(c, n, idx, axes, IR_MAX_RANK, count, NULL);
    }
    size_t cnt;
    const int64_t *a = shape_attr_ints(n, name, &cnt);
    if (!a) {
        *given = false;
        *count = 0;
        return true;
    }
    if (cnt > IR_MAX_RANK) return false;
    memcpy(axes, a, cnt * sizeof *a);
    *count = cnt;
    return true;
}

/* ------------------------------------------------------------------------ */
/* Reshape                                                                   */

/* A product of dims kept as a number times a list of symbols, so that
 * "N*S*768 / (N*S)" can still give 768. */
typedef struct sym_product {
    int64_t k;
    int nsym;
    const char *sym[IR_MAX_RANK];
    bool unknown; /* some factor had no name */
} sym_product;

static void prod_add(sym_product *p, shape_dim d) {
    if (shape_is_known(d)) {
        if (p->k != 0 && d.value > INT64_MAX / (p->k ? p->k : 1)) p->unknown = true;
        else p->k *= d.value;
    } else if (d.symbol && p->nsym < IR_MAX_RANK) {
        p->sym[p->nsym++] = d.symbol;
    } else {
        p->unknown = true;
    }
}

/* The dim that makes `part` * dim == `whole`, or unknown. */
static shape_dim prod_divide(const sym_product *whole, const sym_product *part) {
    if (whole->unknown || part->unknown || part->k == 0) return shape_unknown();
    const char *rest[IR_MAX_RANK];
    int nrest = 0;
    bool used[IR_MAX_RANK] = {false};
    for (int i = 0; i < whole->nsym; i++) {
        int j = 0;
        for (; j < part->nsym; j++)
            if (!used[j] && !strcmp(whole->sym[i], part->sym[j])) break;
        if (j < part->nsym) used[j] = true;
        else rest[nrest++] = whole->sym[i];
    }
    for (int j = 0; j < part->nsym; j++)
        if (!used[j]) return shape_unknown();
    if (whole->k % part->k) return shape_unknown();
    int64_t k = whole->k / part->k;
    if (nrest == 0) return shape_known(k);
    if (nrest == 1 && k == 1) {
        shape_dim d = {TSR_DIM_UNKNOWN, rest[0]};
        return d;
    }
    return shape_unknown();
}

static tsr_status *rule_reshape(shape_ctx *c, const ir_node *n) {
    shape_dims x, out;
    shape_in_shape(c, n, 0, &x);
    int32_t elem = shape_in_elem(c, n, 0);
    shape_dim tgt[IR_MAX_RANK];
    size_t cnt;
    int32_t trank;
    if (shape_opset(n) < 5) {
        const int64_t *a = shape_attr_ints(n, "shape", &cnt);
        if (!a || cnt > IR_MAX_RANK) return shape_set_out(c, n, 0, elem, NULL);
        for (size_t i = 0; i < cnt; i++) tgt[i] = shape_known(a[i]);
    } else if (!shape_in_dims(c, n, 1, tgt, IR_MAX_RANK, &cnt, &trank)) {
        /* The target's length still gives the rank. */
        shape_dims ts;
        shape_in_shape(c, n, 1, &ts);
        if (ts.rank == 1 && shape_is_known(ts.dims[0]) && ts.dims[0].value <= IR_MAX_RANK) {
            shape_dims_rank(&out, (int32_t)ts.dims[0].value);
            return shape_set_out(c, n, 0, elem, &out);
        }
        return shape_set_out(c, n, 0, elem, NULL);
    }
    bool allowzero = shape_attr_int(n, "allowzero", 0) != 0;
    out.rank = (int32_t)cnt;
    int infer = -1;
    sym_product part = {1, 0, {0}, false};
    for (size_t i = 0; i < cnt; i++) {
        shape_dim e = tgt[i];
        if (e.value == -1) {
            if (infer >= 0) return shape_err(n, "more than one -1 in the target shape");
            infer = (int)i;
            out.dims[i] = shape_unknown();
            continue;
        }
        if (e.value == 0 && !allowzero) {
            if (x.rank >= 0 && (int32_t)i >= x.rank)
                return shape_err(n, "target copies dimension %zu of a rank-%d input", i, (int)x.rank);
            out.dims[i] = x.rank >= 0 ? x.dims[i] : shape_unknown();
        } else if (e.value < -1 && e.value != SHAPE_NAN) {
            return shape_err(n, "target dimension %lld", (long long)e.value);
        } else {
            out.dims[i] = sval_dim(e);
        }
        prod_add(&part, out.dims[i]);
    }
    if (x.rank >= 0) {
        sym_product whole = {1, 0, {0}, false};
        for (int32_t i = 0; i < x.rank; i++) prod_add(&whole, x.dims[i]);
        if (infer >= 0) {
            if (!whole.unknown && !part.unknown && whole.nsym == 0 && part.nsym == 0 &&
                (part.k == 0 ? whole.k != 0 : whole.k % part.k != 0))
                return shape_err(n, "can't reshape %lld elements with a -1 beside %lld", (long long)whole.k,
                                 (long long)part.k);
            out.dims[infer] = part.k == 0 ? shape_unknown() : prod_divide(&whole, &part);
        } else if (!whole.unknown && !part.unknown && whole.nsym == 0 && part.nsym == 0 && whole.k != part.k) {
            return shape_err(n, "can't reshape %lld elements into %lld", (long long)whole.k, (long long)part.k);
        }
    }
    return shape_set_out(c, n, 0, elem, &out);
}

/* ------------------------------------------------------------------------ */

static tsr_status *rule_transpose(shape_ctx *c, const ir_node *n) {
    shape_dims x, out;
    shape_in_shape(c, n, 0, &x);
    int32_t elem = shape_in_elem(c, n, 0);
    size_t cnt;
    const int64_t *perm = shape_attr_ints(n, "perm", &cnt);
    if (x.rank < 0) {
        if (!perm) return shape_set_out(c, n, 0, elem, NULL);
        shape_dims_rank(&out, (int32_t)cnt);
        return shape_set_out(c, n, 0, elem, &out);
    }
    if (perm && cnt != (size_t)x.rank) return shape_err(n, "perm has %zu entries for rank %d", cnt, (int)x.rank);
    bool used[IR_MAX_RANK] = {false};
    out.rank = x.rank;
    for (int32_t i = 0; i < x.rank; i++) {
        int32_t p;
        if (!perm) p = x.rank - 1 - i;
        else if (!shape_axis(perm[i], x.rank, &p) || used[p])
            return shape_err(n, "perm is not a permutation of %d axes", (int)x.rank);
        used[p] = true;
        out.dims[i] = x.dims[p];
    }
    return shape_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_concat(shape_ctx *c, const ir_node *n) {
    shape_dims out;
    int32_t elem = 0;
    int32_t rank = -1;
    for (size_t i = 0; i < n->n_inputs; i++) {
        if (!elem) elem = shape_in_elem(c, n, i);
        shape_dims s;
        shape_in_shape(c, n, i, &s);
        if (s.rank < 0) continue;
        if (rank >= 0 && s.rank != rank) return shape_err(n, "inputs of rank %d and %d", (int)rank, (int)s.rank);
        rank = s.rank;
    }
    if (rank < 0) return shape_set_out(c, n, 0, elem, NULL);
    int64_t a = shape_attr_int(n, "axis", 0);
    int32_t axis;
    if (!shape_axis(a, rank, &axis)) return shape_err(n, "axis %lld out of range for rank %d", (long long)a, (int)rank);
    shape_dims_rank(&out, rank);
    bool first = true;
    shape_dim sum = shape_known(0);
    for (size_t i = 0; i < n->n_inputs; i++) {
        shape_dims s;
        shape_in_shape(c, n, i, &s);
        if (s.rank < 0) {
            if (shape_has_in(n, i)) sum = shape_unknown();
            continue;
        }
        for (int32_t d = 0; d < rank; d++) {
            if (d == axis) continue;
            if (first) out.dims[d] = s.dims[d];
            else if (!shape_dim_unify(out.dims[d], s.dims[d], &out.dims[d]))
                return shape_err(n, "input %zu has %lld on axis %d where others have %lld", i,
                                 (long long)s.dims[d].value, (int)d, (long long)out.dims[d].value);
        }
        first = false;
        shape_dim e = s.dims[axis];
        if (shape_is_known(sum) && shape_is_known(e)) sum = shape_known(sum.value + e.value);
        else if (sum.value == 0 && !sum.symbol) sum = e; /* 0 + N = N */
        else if (!(e.value == 0)) sum = shape_unknown();
    }
    out.dims[axis] = sum;
    return shape_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_split(shape_ctx *c, const ir_node *n) {
    shape_dims x;
    shape_in_shape(c, n, 0, &x);
    int32_t elem = shape_in_elem(c, n, 0);
    size_t nout = n->n_outputs;
    if (x.rank < 0) {
        for (size_t i = 0; i < nout; i++) TSR_TRY(shape_set_out(c, n, i, elem, NULL));
        return NULL;
    }
    int64_t a = shape_attr_int(n, "axis", 0);
    int32_t axis;
    if (!shape_axis(a, x.rank, &axis))
        return shape_err(n, "axis %lld out of range for rank %d", (long long)a, (int)x.rank);
    int64_t split[IR_MAX_RANK * 4];
    size_t cnt = 0;
    bool have = false, given;
    /* `split` moved from an attribute to an input in opset 13. */
    if (shape_opset(n) >= 13) {
        given = shape_has_in(n, 1);
        have = given && shape_in_ints(c, n, 1, split, sizeof split / sizeof split[0], &cnt, NULL);
        if (given && have && cnt == 0) have = given = false; /* an empty tensor means "not given" */
    } else {
        const int64_t *p = shape_attr_ints(n, "split", &cnt);
        given = p != NULL;
        if (p && cnt <= sizeof split / sizeof split[0]) {
            memcpy(split, p, cnt * sizeof *p);
            have = true;
        }
    }
    shape_dim len = x.dims[axis];
    if (have) {
        if (cnt != nout) return shape_err(n, "split has %zu entries for %zu outputs", cnt, nout);
        int64_t total = 0;
        for (size_t i = 0; i < cnt; i++) {
            if (split[i] < 0) return shape_err(n, "split entry %lld", (long long)split[i]);
            /* no axis is longer than 2^56 (IR_MAX_ELEMENTS): a longer sum
             * is refused before it could overflow */
            if (split[i] > IR_MAX_ELEMENTS - total)
                return shape_err(n, "split entries sum to more than 2^56 (entry %zu: %lld)", i, (long long)split[i]);
            total += split[i];
        }
        if (shape_is_known(len) && total != len.value)
            return shape_err(n, "split sums to %lld, axis %d has %lld", (long long)total, (int)axis,
                             (long long)len.value);
        for (size_t i = 0; i < nout; i++) {
            shape_dims o = x;
            o.dims[axis] = shape_known(split[i]);
            TSR_TRY(shape_set_out(c, n, i, elem, &o));
        }
        return NULL;
    }
    for (size_t i = 0; i < nout; i++) {
        shape_dims o = x;
        o.dims[axis] = shape_unknown();
        if (!given && shape_is_known(len) && nout > 0) {
            int64_t parts = (int64_t)nout;
            if (shape_opset(n) >= 18) {
                /* num_outputs: ceil-sized pieces, the last takes the rest. */
                int64_t piece = (len.value + parts - 1) / parts;
                int64_t start = piece * (int64_t)i;
                int64_t sz = len.value - start < piece ? len.value - start : piece;
                o.dims[axis] = shape_known(sz < 0 ? 0 : sz);
            } else if (len.value % parts == 0) {
                o.dims[axis] = shape_known(len.value / parts);
            } else {
                return shape_err(n, "axis %d of %lld doesn't split evenly into %zu", (int)axis, (long long)len.value,
                                 nout);
            }
        }
        TSR_TRY(shape_set_out(c, n, i, elem, &o));
    }
    return NULL;
}

/* Length of a slice of a dim of `dim` elements. */
static int64_t slice_len(int64_t dim, int64_t start, int64_t end, int64_t step) {
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    if (step > 0) {
        start = start < 0 ? 0 : start > dim ? dim : start;
        end = end < 0 ? 0 : end > dim ? dim : end;
        return end > start ? (end - start - 1) / step + 1 : 0; /* no step - 1 added: it may be INT64_MAX */
    }
    /* backward: both in [-1, dim-1], -1 meaning before the first (as the
     * kernels clamp: a start still negative selects nothing) */
    start = start < 0 ? -1 : start > dim - 1 ? dim - 1 : start;
    end = end < -1 ? -1 : end > dim - 1 ? dim - 1 : end;
    /* -step overflows for INT64_MIN: divide by its magnitude unsigned */
    return start > end ? (int64_t)((uint64_t)(start - end - 1) / (0 - (uint64_t)step)) + 1 : 0;
}

static tsr_status *rule_slice(shape_ctx *c, const ir_node *n) {
    shape_dims x;
    shape_in_shape(c, n, 0, &x);
    int32_t elem = shape_in_elem(c, n, 0);
    if (x.rank < 0) return shape_set_out(c, n, 0, elem, NULL);
    int64_t st[IR_MAX_RANK], en[IR_MAX_RANK], ax[IR_MAX_RANK], sp[IR_MAX_RANK];
    size_t ns, ne, na, nsp;
    bool ok = true, have_axes = false;
    if (shape_opset(n) < 10) {
        const int64_t *p;
        ok = (p = shape_attr_ints(n, "starts", &ns)) && ns <= IR_MAX_RANK;
        if (ok) memcpy(st, p, ns * sizeof *p);
        ok = ok && (p = shape_attr_ints(n, "ends", &ne)) && ne <= IR_MAX_RANK;
        if (ok) memcpy(en, p, ne * sizeof *p);
        ok = ok && read_axes(c, n, false, 0, "axes", ax, &na, &have_axes);
        nsp = 0;
    } else {
        ok = shape_in_ints(c, n, 1, st, IR_MAX_RANK, &ns, NULL) && shape_in_ints(c, n, 2, en, IR_MAX_RANK, &ne, NULL) &&
            read_axes(c, n, true, 3, NULL, ax, &na, &have_axes);
        nsp = 0;
        if (ok && shape_has_in(n, 4)) ok = shape_in_ints(c, n, 4, sp, IR_MAX_RANK, &nsp, NULL);
    }
    shape_dims out = x;
    if (!ok) {
        /* Unknown bounds: only the axes, when known, say which dims change. */
        bool axes_given = false;
        if (shape_opset(n) >= 10 && read_axes(c, n, true, 3, NULL, ax, &na, &axes_given) && axes_given) {
            for (size_t i = 0; i < na; i++) {
                int32_t a;
                if (!shape_axis(ax[i], x.rank, &a))
                    return shape_err(n, "axis %lld out of range for rank %d", (long long)ax[i], (int)x.rank);
                out.dims[a] = shape_unknown();
            }
        } else {
            shape_dims_rank(&out, x.rank);
        }
        return shape_set_out(c, n, 0, elem, &out);
    }
    if (ns != ne) return shape_err(n, "%zu starts but %zu ends", ns, ne);
    if (!have_axes) {
        na = ns;
        for (size_t i = 0; i < na; i++) ax[i] = (int64_t)i;
    }
    if (na != ns) return shape_err(n, "%zu axes for %zu starts", na, ns);
    if (nsp && nsp != ns) return shape_err(n, "%zu steps for %zu starts", nsp, ns);
    bool seen[IR_MAX_RANK] = {false};
    for (size_t i = 0; i < ns; i++) {
        int32_t a;
        if (!shape_axis(ax[i], x.rank, &a))
            return shape_err(n, "axis %lld out of range for rank %d", (long long)ax[i], (int)x.rank);
        if (seen[a]) return shape_err(n, "axis %d sliced twice", (int)a);
        seen[a] = true;
        int64_t step = nsp ? sp[i] : 1;
        if (step == 0) return shape_err(n, "step 0 on axis %d", (int)a);
        shape_dim d = x.dims[a];
        if (shape_is_known(d)) {
            out.dims[a] = shape_known(slice_len(d.value, st[i], en[i], step));
        } else if (step == 1 && st[i] == 0 && en[i] >= (INT64_MAX >> 1)) {
            out.dims[a] = d; /* the whole axis: keeps its name */
        } else if (step == 1 && st[i] >= 0 && en[i] >= 0 && en[i] <= st[i]) {
            out.dims[a] = shape_known(0);
        } else {
            out.dims[a] = shape_unknown();
        }
    }
    return shape_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_gather(shape_ctx *c, const ir_node *n) {
    shape_dims x, idx, out;
    shape_in_shape(c, n, 0, &x);
    shape_in_shape(c, n, 1, &idx);
    int32_t elem = shape_in_elem(c, n, 0);
    if (x.rank < 0 || idx.rank < 0) return shape_set_out(c, n, 0, elem, NULL);
    int64_t a = shape_attr_int(n, "axis", 0);
    int32_t axis;
    if (!shape_axis(a, x.rank, &axis))
        return shape_err(n, "axis %lld out of range for rank %d", (long long)a, (int)x.rank);
    if (x.rank + idx.rank - 1 > IR_MAX_RANK) return shape_err(n, "result rank over %d", IR_MAX_RANK);
    out.rank = 0;
    for (int32_t i = 0; i < axis; i++) out.dims[out.rank++] = x.dims[i];
    for (int32_t i = 0; i < idx.rank; i++) out.dims[out.rank++] = idx.dims[i];
    for (int32_t i = axis + 1; i < x.rank; i++) out.dims[out.rank++] = x.dims[i];
    return shape_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_gather_elements(shape_ctx *c, const ir_node *n) {
    shape_dims x, idx;
    shape_in_shape(c, n, 0, &x);
    shape_in_shape(c, n, 1, &idx);
    if (x.rank >= 0 && idx.rank >= 0 && x.rank != idx.rank)
        return shape_err(n, "data of rank %d, indices of rank %d", (int)x.rank, (int)idx.rank);
    return shape_set_out(c, n, 0, shape_in_elem(c, n, 0), &idx);
}

static tsr_status *rule_gather_nd(shape_ctx *c, const ir_node *n) {
    shape_dims x, idx, out;
    shape_in_shape(c, n, 0, &x);
    shape_in_shape(c, n, 1, &idx);
    int32_t elem = shape_in_elem(c, n, 0);
    int64_t b = shape_attr_int(n, "batch_dims", 0);
    if (x.rank < 0 || idx.rank < 1 || !shape_is_known(idx.dims[idx.rank - 1]))
        return shape_set_out(c, n, 0, elem, NULL);
    int64_t k = idx.dims[idx.rank - 1].value;
    if (b < 0 || b > x.rank || k > x.rank - b)
        return shape_err(n, "indices of depth %lld beyond data of rank %d", (long long)k, (int)x.rank);
    out.rank = 0;
    for (int32_t i = 0; i < idx.rank - 1; i++) out.dims[out.rank++] = idx.dims[i];
    for (int64_t i = b + k; i < x.rank && out.rank < IR_MAX_RANK; i++) out.dims[out.rank++] = x.dims[i];
    return shape_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_squeeze(shape_ctx *c, const ir_node *n) {
    shape_dims x, out;
    shape_in_shape(c, n, 0, &x);
    int32_t elem = shape_in_elem(c, n, 0);
    int64_t axes[IR_MAX_RANK];
    size_t na;
    bool given;
    if (!read_axes(c, n, shape_opset(n) >= 13, 1, "axes", axes, &na, &given)) return shape_set_out(c, n, 0, elem, NULL);
    if (x.rank < 0) {
        return shape_set_out(c, n, 0, elem, NULL);
    }
    bool drop[IR_MAX_RANK] = {false};
    if (!given || na == 0) {
        /* Every 1 goes; with a dim unknown we can't tell the rank. */
        for (int32_t i = 0; i < x.rank; i++) {
            if (!shape_is_known(x.dims[i])) return shape_set_out(c, n, 0, elem, NULL);
            drop[i] = x.dims[i].value == 1;
        }
    } else {
        for (size_t i = 0; i < na; i++) {
            int32_t a;
            if (!shape_axis(axes[i], x.rank, &a))
                return shape_err(n, "axis %lld out of range for rank %d", (long long)axes[i], (int)x.rank);
            if (shape_is_known(x.dims[a]) && x.dims[a].value != 1)
                return shape_err(n, "can't squeeze axis %d of length %lld", (int)a, (long long)x.dims[a].value);
            drop[a] = true;
        }
    }
    out.rank = 0;
    for (int32_t i = 0; i < x.rank; i++)
        if (!drop[i]) out.dims[out.rank++] = x.dims[i];
    return shape_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_unsqueeze(shape_ctx *c, const ir_node *n) {
    shape_dims x, out;
    shape_in_shape(c, n, 0, &x);
    int32_t elem = shape_in_elem(c, n, 0);
    int64_t axes[IR_MAX_RANK];
    size_t na;
    bool given;
    if (!read_axes(c, n, shape_opset(n) >= 13, 1, "axes", axes, &na, &given)) return shape_set_out(c, n, 0, elem, NULL);
    if (!given) return shape_err(n, "no axes");
    if (x.rank < 0) return shape_set_out(c, n, 0, elem, NULL);
    int32_t r = x.rank + (int32_t)na;
    if (r > IR_MAX_RANK) return shape_err(n, "result rank over %d", IR_MAX_RANK);
    bool ins[IR_MAX_RANK] = {false};
    for (size_t i = 0; i < na; i++) {
        int32_t a;
        if (!shape_axis(axes[i], r, &a))
            return shape_err(n, "axis %lld out of range for rank %d", (long long)axes[i], (int)r);
        if (ins[a]) return shape_err(n, "axis %d given twice", (int)a);
        ins[a] = true;
    }
    out.rank = r;
    for (int32_t i = 0, j = 0; i < r; i++) out.dims[i] = ins[i] ? shape_known(1) : x.dims[j++];
    return shape_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_flatten(shape_ctx *c, const ir_node *n) {
    shape_dims x, out;
    shape_in_shape(c, n, 0, &x);
    int32_t elem = shape_in_elem(c, n, 0);
    out.rank = 2;
    if (x.rank < 0) {
        shape_dims_rank(&out, 2);
        return shape_set_out(c, n, 0, elem, &out);
    }
    int64_t a = shape_attr_int(n, "axis", 1);
    if (a < 0) a += x.rank;
    if (a < 0 || a > x.rank)
        return shape_err(n, "axis %lld out of range for rank %d", (long long)shape_attr_int(n, "axis", 1), (int)x.rank);
    out.dims[0] = shape_known(1);
    out.dims[1] = shape_known(1);
    for (int32_t i = 0; i < x.rank; i++) {
        shape_dim *d = &out.dims[i < a ? 0 : 1];
        *d = shape_dim_mul(*d, x.dims[i]);
    }
    return shape_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_expand(shape_ctx *c, const ir_node *n) {
    shape_dims x, t, out;
    shape_in_shape(c, n, 0, &x);
    int32_t elem = shape_in_elem(c, n, 0);
    shape_dim tgt[IR_MAX_RANK];
    size_t cnt;
    if (!shape_in_dims(c, n, 1, tgt, IR_MAX_RANK, &cnt, NULL)) {
        shape_dims ts;
        shape_in_shape(c, n, 1, &ts);
        if (x.rank >= 0 && ts.rank == 1 && shape_is_known(ts.dims[0]) && ts.dims[0].value <= IR_MAX_RANK) {
            /* Unknown target dims still keep x's dims other than 1. */
            shape_dims_rank(&t, (int32_t)ts.dims[0].value);
            TSR_TRY(shape_broadcast(c, n, &x, &t, &out));
            return shape_set_out(c, n, 0, elem, &out);
        }
        return shape_set_out(c, n, 0, elem, NULL);
    }
    t.rank = (int32_t)cnt;
    for (size_t i = 0; i < cnt; i++) {
        if (tgt[i].value < 0 && tgt[i].value != SHAPE_NAN)
            return shape_err(n, "target dimension %lld", (long long)tgt[i].value);
        t.dims[i] = sval_dim(tgt[i]);
    }
    TSR_TRY(shape_broadcast(c, n, &x, &t, &out));
    return shape_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_shape(shape_ctx *c, const ir_node *n) {
    shape_dims x, out;
    shape_in_shape(c, n, 0, &x);
    out.rank = 1;
    out.dims[0] = shape_unknown();
    if (x.rank >= 0) {
        int64_t r = x.rank, start = shape_attr_int(n, "start", 0), end = shape_attr_int(n, "end", r);
        if (start < 0) start += r;
        if (end < 0) end += r;
        start = start < 0 ? 0 : start > r ? r : start;
        end = end < 0 ? 0 : end > r ? r : end;
        out.dims[0] = shape_known(end > start ? end - start : 0);
    }
    return shape_set_out_ex(c, n, 0, TSR_INT64, &out, SHAPE_ELEM_CERTAIN);
}

static tsr_status *rule_size(shape_ctx *c, const ir_node *n) {
    shape_dims out;
    out.rank = 0;
    return shape_set_out_ex(c, n, 0, TSR_INT64, &out, SHAPE_ELEM_CERTAIN);
}

static tsr_status *rule_tile(shape_ctx *c, const ir_node *n) {
    shape_dims x, out;
    shape_in_shape(c, n, 0, &x);
    int32_t elem = shape_in_elem(c, n, 0);
    if (x.rank < 0) return shape_set_out(c, n, 0, elem, NULL);
    int64_t rep[IR_MAX_RANK];
    size_t cnt;
    out = x;
    if (!shape_in_ints(c, n, 1, rep, IR_MAX_RANK, &cnt, NULL)) {
        shape_dims_rank(&out, x.rank);
        return shape_set_out(c, n, 0, elem, &out);
    }
    if (cnt != (size_t)x.rank) return shape_err(n, "%zu repeats for rank %d", cnt, (int)x.rank);
    for (int32_t i = 0; i < x.rank; i++) {
        if (rep[i] < 0) return shape_err(n, "repeat %lld", (long long)rep[i]);
        out.dims[i] = shape_dim_mul(x.dims[i], shape_known(rep[i]));
    }
    return shape_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_pad(shape_ctx *c, const ir_node *n) {
    shape_dims x, out;
    shape_in_shape(c, n, 0, &x);
    int32_t elem = shape_in_elem(c, n, 0);
    if (x.rank < 0) return shape_set_out(c, n, 0, elem, NULL);
    int64_t pads[2 * IR_MAX_RANK], axes[IR_MAX_RANK];
    size_t np, na = 0;
    bool ok, given = false;
    if (shape_opset(n) < 11) {
        const int64_t *p = shape_attr_ints(n, "pads", &np);
        if (!p) p = shape_attr_ints(n, "paddings", &np); /* opset 1 */
        ok = p && np <= 2 * IR_MAX_RANK;
        if (ok) memcpy(pads, p, np * sizeof *p);
    } else {
        ok = shape_in_ints(c, n, 1, pads, 2 * IR_MAX_RANK, &np, NULL);
        if (ok && shape_opset(n) >= 18) ok = read_axes(c, n, true, 3, NULL, axes, &na, &given);
    }
    out = x;
    if (!ok) {
        shape_dims_rank(&out, x.rank);
        return shape_set_out(c, n, 0, elem, &out);
    }
    if (!given) {
        na = (size_t)x.rank;
        for (size_t i = 0; i < na; i++) axes[i] = (int64_t)i;
    }
    if (np != 2 * na) return shape_err(n, "%zu pads for %zu axes", np, na);
    for (size_t i = 0; i < na; i++) {
        int32_t a;
        if (!shape_axis(axes[i], x.rank, &a))
            return shape_err(n, "axis %lld out of range for rank %d", (long long)axes[i], (int)x.rank);
        /* no tensor has 2^56 elements (IR_MAX_ELEMENTS): larger pads are
         * refused before the sums below could overflow */
        if (pads[i] > IR_MAX_ELEMENTS || pads[i] < -IR_MAX_ELEMENTS || pads[i + na] > IR_MAX_ELEMENTS ||
            pads[i + na] < -IR_MAX_ELEMENTS)
            return shape_err(n, "pads of %lld and %lld on axis %d", (long long)pads[i], (long long)pads[i + na],
                             (int)a);
        int64_t add = pads[i] + pads[i + na];
        shape_dim d = x.dims[a];
        if (shape_is_known(d)) {
            if (d.value + add < 0)
                return shape_err(n, "padding leaves axis %d with %lld", (int)a, (long long)(d.value + add));
            out.dims[a] = shape_known(d.value + add);
        } else if (add != 0) {
            out.dims[a] = shape_unknown();
        }
    }
    return shape_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_constant(shape_ctx *c, const ir_node *n) {
    /* The loader already attached the tensor; its type came from it. */
    if (n->n_outputs && n->outputs[0] && n->outputs[0]->constant) return NULL;
    shape_dims s;
    const ir_attr *a;
    s.rank = 0;
    if ((a = shape_attr(n, "value")) && a->type == TSR_ATTR_TENSOR && a->t) {
        if (a->t->rank > IR_MAX_RANK) return NULL;
        s.rank = a->t->rank;
        for (int32_t i = 0; i < s.rank; i++) s.dims[i] = shape_known(a->t->dims[i]);
        return shape_set_out_ex(c, n, 0, a->t->elem_type, &s, SHAPE_ELEM_CERTAIN);
    }
    static const struct {
        const char *name;
        int32_t elem;
        bool list;
    } kinds[] = {{"value_float", TSR_FLOAT, false},   {"value_floats", TSR_FLOAT, true},
                 {"value_int", TSR_INT64, false},     {"value_ints", TSR_INT64, true},
                 {"value_string", TSR_STRING, false}, {"value_strings", TSR_STRING, true}};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        if (!(a = shape_attr(n, kinds[k].name))) continue;
        if (kinds[k].list) {
            s.rank = 1;
            s.dims[0] = shape_known((int64_t)a->count);
        }
        return shape_set_out_ex(c, n, 0, kinds[k].elem, &s, SHAPE_ELEM_CERTAIN);
    }
    return NULL; /* sparse_value: left alone */
}

static tsr_status *rule_constant_of_shape(shape_ctx *c, const ir_node *n) {
    const ir_attr *v = shape_attr(n, "value");
    int32_t elem = v && v->type == TSR_ATTR_TENSOR && v->t ? v->t->elem_type : TSR_FLOAT;
    shape_dim tgt[IR_MAX_RANK];
    size_t cnt;
    shape_dims out;
    if (!shape_in_dims(c, n, 0, tgt, IR_MAX_RANK, &cnt, NULL)) {
        shape_dims ts;
        shape_in_shape(c, n, 0, &ts);
        if (ts.rank == 1 && shape_is_known(ts.dims[0]) && ts.dims[0].value <= IR_MAX_RANK) {
            shape_dims_rank(&out, (int32_t)ts.dims[0].value);
            return shape_set_out_ex(c, n, 0, elem, &out, SHAPE_ELEM_CERTAIN);
        }
        return shape_set_out_ex(c, n, 0, elem, NULL, SHAPE_ELEM_CERTAIN);
    }
    out.rank = (int32_t)cnt;
    for (size_t i = 0; i < cnt; i++) {
        if (tgt[i].value < 0 && tgt[i].value != SHAPE_NAN)
            return shape_err(n, "dimension %lld", (long long)tgt[i].value);
        out.dims[i] = sval_dim(tgt[i]);
    }
    return shape_set_out_ex(c, n, 0, elem, &out, SHAPE_ELEM_CERTAIN);
}

/* Resize (and Upsample): sizes win over scales; a scale gives floor(d * s). */
static tsr_status *rule_resize(shape_ctx *c, const ir_node *n) {
    shape_dims x, out;
    shape_in_shape(c, n, 0, &x);
    int32_t elem = shape_in_elem(c, n, 0);
    if (x.rank < 0) return shape_set_out(c, n, 0, elem, NULL);
    bool upsample = !strcmp(n->op_type, "Upsample");
    size_t scales_in = upsample || shape_opset(n) < 11 ? 1 : 2, sizes_in = 3;
    int64_t axes[IR_MAX_RANK];
    size_t na = 0;
    bool have_axes = false;
    if (!upsample && shape_opset(n) >= 18) {
        size_t cnt;
        const int64_t *p = shape_attr_ints(n, "axes", &cnt);
        if (p && cnt <= IR_MAX_RANK) {
            memcpy(axes, p, cnt * sizeof *p);
            na = cnt;
            have_axes = true;
        }
    }
    if (!have_axes) {
        na = (size_t)x.rank;
        for (size_t i = 0; i < na; i++) axes[i] = (int64_t)i;
    }
    int32_t ax[IR_MAX_RANK];
    for (size_t i = 0; i < na; i++)
        if (!shape_axis(axes[i], x.rank, &ax[i]))
            return shape_err(n, "axis %lld out of range for rank %d", (long long)axes[i], (int)x.rank);
    out = x;
    int64_t sizes[IR_MAX_RANK];
    double scales[IR_MAX_RANK];
    size_t cnt;
    if (!upsample && shape_opset(n) >= 11 && shape_has_in(n, sizes_in) &&
        shape_in_ints(c, n, sizes_in, sizes, IR_MAX_RANK, &cnt, NULL) && cnt > 0) {
        if (cnt != na) return shape_err(n, "%zu sizes for %zu axes", cnt, na);
        const char *policy = shape_attr_str(n, "keep_aspect_ratio_policy", "stretch");
        if (shape_opset(n) >= 18 && strcmp(policy, "stretch")) {
            /* One scale for all axes: the smallest or largest ratio. */
            bool larger = !strcmp(policy, "not_smaller");
            double s = 0;
            for (size_t i = 0; i < na; i++) {
                if (!shape_is_known(x.dims[ax[i]]) || x.dims[ax[i]].value == 0) {
                    for (size_t j = 0; j < na; j++) out.dims[ax[j]] = shape_unknown();
                    return shape_set_out(c, n, 0, elem, &out);
                }
                double r = (double)sizes[i] / (double)x.dims[ax[i]].value;
                if (i == 0 || (larger ? r > s : r < s)) s = r;
            }
            for (size_t i = 0; i < na; i++) {
                double len = floor((double)x.dims[ax[i]].value * s + 0.5);
                /* sizes are not bounded: the product may pass int64 */
                if (!(len >= 0 && len <= (double)IR_MAX_ELEMENTS))
                    return shape_err(n, "axis %d would be resized to %g elements", (int)ax[i], len);
                out.dims[ax[i]] = shape_known((int64_t)len);
            }
        } else {
            for (size_t i = 0; i < na; i++) {
                if (sizes[i] < 0) return shape_err(n, "size %lld", (long long)sizes[i]);
                out.dims[ax[i]] = shape_known(sizes[i]);
            }
        }
        return shape_set_out(c, n, 0, elem, &out);
    }
    bool have_scales;
    if (upsample && shape_opset(n) < 9) {
        const ir_attr *a = shape_attr(n, "scales");
        have_scales = a && a->type == TSR_ATTR_FLOATS && a->count <= IR_MAX_RANK;
        cnt = have_scales ? a->count : 0;
        for (size_t i = 0; i < cnt; i++) scales[i] = a->floats[i];
    } else {
        have_scales = shape_has_in(n, scales_in) && shape_in_doubles(c, n, scales_in, scales, IR_MAX_RANK, &cnt);
    }
    if (have_scales && cnt > 0) {
        if (cnt != na) return shape_err(n, "%zu scales for %zu axes", cnt, na);
        for (size_t i = 0; i < na; i++) {
            if (!(scales[i] > 0)) return shape_err(n, "scale %g", scales[i]); /* NaN too */
            shape_dim d = x.dims[ax[i]];
            if (scales[i] == 1.0) continue; /* keeps a symbolic dim's name */
            out.dims[ax[i]] = shape_unknown();
            if (!shape_is_known(d)) continue;
            double len = floor((double)d.value * scales[i]);
            /* a huge scale would pass int64 in the conversion */
            if (len > (double)IR_MAX_ELEMENTS)
                return shape_err(n, "scale %g makes axis %d longer than 2^56", scales[i], (int)ax[i]);
            out.dims[ax[i]] = shape_known((int64_t)len);
        }
        return shape_set_out(c, n, 0, elem, &out);
    }
    shape_dims_rank(&out, x.rank);
    return shape_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_range(shape_ctx *c, const ir_node *n) {
    int32_t elem = shape_in_elem(c, n, 0);
    if (!elem) elem = shape_in_elem(c, n, 1);
    shape_dims out;
    out.rank = 1;
    out.dims[0] = shape_unknown();
    double v[3];
    size_t cnt;
    bool known = true;
    for (size_t i = 0; i < 3 && known; i++) known = shape_in_doubles(c, n, i, &v[i], 1, &cnt) && cnt == 1;
    if (known) {
        if (v[2] == 0) return shape_err(n, "delta is 0");
        double len = ceil((v[1] - v[0]) / v[2]);
        /* converting a longer (or NaN) length to int64 would be undefined */
        if (len != len || len > (double)IR_MAX_ELEMENTS)
            return shape_err(n, "Range of %g elements (start %g, limit %g, delta %g)", len, v[0], v[1], v[2]);
        out.dims[0] = shape_known(len > 0 ? (int64_t)len : 0);
    } else {
        /* Range(0, N, 1), N from a Shape: position ids of length N. */
        int64_t s0[1], d0[1];
        shape_dim lim[1];
        size_t k1, k2, k3;
        if (shape_in_ints(c, n, 0, s0, 1, &k1, NULL) && k1 == 1 && s0[0] == 0 &&
            shape_in_ints(c, n, 2, d0, 1, &k3, NULL) && k3 == 1 && d0[0] == 1 &&
            shape_in_dims(c, n, 1, lim, 1, &k2, NULL) && k2 == 1) {
            out.dims[0] = sval_dim(lim[0]);
            if (shape_is_known(out.dims[0]) && out.dims[0].value < 0) out.dims[0] = shape_known(0);
        }
    }
    return shape_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_topk(shape_ctx *c, const ir_node *n) {
    shape_dims x;
    shape_in_shape(c, n, 0, &x);
    int32_t elem = shape_in_elem(c, n, 0);
    if (x.rank >= 0) {
        int64_t a = shape_attr_int(n, "axis", -1);
        int32_t axis;
        if (!shape_axis(a, x.rank, &axis))
            return shape_err(n, "axis %lld out of range for rank %d", (long long)a, (int)x.rank);
        int64_t k[1];
        size_t cnt;
        bool have;
        if (shape_opset(n) < 10) {
            const ir_attr *ka = shape_attr(n, "k");
            have = ka && ka->type == TSR_ATTR_INT;
            if (have) k[0] = ka->i;
        } else {
            have = shape_in_ints(c, n, 1, k, 1, &cnt, NULL) && cnt == 1;
        }
        if (have && (k[0] < 0 || (shape_is_known(x.dims[axis]) && k[0] > x.dims[axis].value)))
            return shape_err(n, "k = %lld for an axis of %lld", (long long)k[0], (long long)x.dims[axis].value);
        x.dims[axis] = have ? shape_known(k[0]) : shape_unknown();
    }
    TSR_TRY(shape_set_out(c, n, 0, elem, &x));
    return shape_set_out_ex(c, n, 1, TSR_INT64, &x, SHAPE_ELEM_CERTAIN);
}

static tsr_status *rule_nonzero(shape_ctx *c, const ir_node *n) {
    shape_dims x, out;
    shape_in_shape(c, n, 0, &x);
    out.rank = 2;
    out.dims[0] = x.rank >= 0 ? shape_known(x.rank) : shape_unknown();
    out.dims[1] = shape_unknown(); /* how many are non-zero is data */
    return shape_set_out_ex(c, n, 0, TSR_INT64, &out, SHAPE_ELEM_CERTAIN);
}

static tsr_status *rule_compress(shape_ctx *c, const ir_node *n) {
    shape_dims x, out;
    shape_in_shape(c, n, 0, &x);
    int32_t elem = shape_in_elem(c, n, 0);
    const ir_attr *a = shape_attr(n, "axis");
    if (!a) {
        out.rank = 1;
        out.dims[0] = shape_unknown();
        return shape_set_out(c, n, 0, elem, &out);
    }
    if (x.rank < 0) return shape_set_out(c, n, 0, elem, NULL);
    int32_t axis;
    if (!shape_axis(a->i, x.rank, &axis))
        return shape_err(n, "axis %lld out of range for rank %d", (long long)a->i, (int)x.rank);
    x.dims[axis] = shape_unknown();
    return shape_set_out(c, n, 0, elem, &x);
}

static tsr_status *rule_onehot(shape_ctx *c, const ir_node *n) {
    shape_dims x, out;
    shape_in_shape(c, n, 0, &x);
    int32_t elem = shape_in_elem(c, n, 2);
    if (x.rank < 0) return shape_set_out(c, n, 0, elem, NULL);
    int32_t r = x.rank + 1, axis;
    int64_t a = shape_attr_int(n, "axis", -1);
    if (r > IR_MAX_RANK) return shape_err(n, "result rank over %d", IR_MAX_RANK);
    if (!shape_axis(a, r, &axis)) return shape_err(n, "axis %lld out of range for rank %d", (long long)a, (int)r);
    double depth[1];
    size_t cnt;
    shape_dim dd = shape_unknown();
    if (shape_in_doubles(c, n, 1, depth, 1, &cnt) && cnt == 1) {
        /* NaN or past int64 the conversion is undefined; no axis is longer
         * than 2^56 */
        if (!(depth[0] >= 0 && depth[0] <= (double)IR_MAX_ELEMENTS)) return shape_err(n, "depth %g", depth[0]);
        dd = shape_known((int64_t)depth[0]);
    }
    out.rank = r;
    for (int32_t i = 0, j = 0; i < r; i++) out.dims[i] = i == axis ? dd : x.dims[j++];
    return shape_set_out(c, n, 0, elem, &out);
}

/* DepthToSpace and SpaceToDepth move blocksize^2 between channels and space. */
static tsr_status *rule_depth_space(shape_ctx *c, const ir_node *n) {
    shape_dims x;
    shape_in_shape(c, n, 0, &x);
    int32_t elem = shape_in_elem(c, n, 0);
    int64_t b = shape_attr_int(n, "blocksize", 0);
    if (x.rank < 0) return shape_set_out(c, n, 0, elem, NULL);
    if (x.rank != 4) return shape_err(n, "input of rank %d; need 4", (int)x.rank);
    if (b < 1 || b > (INT64_C(1) << 31))
        return shape_err(n, "blocksize %lld", (long long)b); /* b * b must not overflow */
    bool to_space = !strcmp(n->op_type, "DepthToSpace");
    shape_dim *ch = &x.dims[1];
    if (to_space) {
        if (shape_is_known(*ch) && ch->value % (b * b))
            return shape_err(n, "%lld channels not divisible by %lld", (long long)ch->value, (long long)(b * b));
        *ch = shape_is_known(*ch) ? shape_known(ch->value / (b * b)) : shape_unknown();
        for (int i = 2; i < 4; i++) x.dims[i] = shape_dim_mul(x.dims[i], shape_known(b));
    } else {
        *ch = shape_dim_mul(*ch, shape_known(b * b));
        for (int i = 2; i < 4; i++) {
            shape_dim *d = &x.dims[i];
            if (shape_is_known(*d) && d->value % b)
                return shape_err(n, "axis %d of %lld not divisible by %lld", i, (long long)d->value, (long long)b);
            *d = shape_is_known(*d) ? shape_known(d->value / b) : shape_unknown();
        }
    }
    return shape_set_out(c, n, 0, elem, &x);
}

static tsr_status *rule_eyelike(shape_ctx *c, const ir_node *n) {
    shape_dims x;
    shape_in_shape(c, n, 0, &x);
    int32_t elem = (int32_t)shape_attr_int(n, "dtype", 0);
    if (!elem) elem = shape_in_elem(c, n, 0);
    return shape_set_out(c, n, 0, elem, &x);
}

static tsr_status *rule_same(shape_ctx *c, const ir_node *n) { return shape_same_as_in(c, n, 0, 0); }

/* RandomUniformLike, RandomNormalLike, Bernoulli: the input's shape, typed
 * by `dtype` or else like the input. */
static tsr_status *rule_random_like(shape_ctx *c, const ir_node *n) {
    shape_dims x;
    shape_in_shape(c, n, 0, &x);
    int32_t elem = (int32_t)shape_attr_int(n, "dtype", 0);
    if (!elem) elem = shape_in_elem(c, n, 0);
    return shape_set_out(c, n, 0, elem, &x);
}

/* RandomUniform, RandomNormal: the `shape` attribute, float by default. */
static tsr_status *rule_random(shape_ctx *c, const ir_node *n) {
    size_t cnt;
    const int64_t *sh = shape_attr_ints(n, "shape", &cnt);
    int32_t elem = (int32_t)shape_attr_int(n, "dtype", TSR_FLOAT);
    if (!sh || cnt > IR_MAX_RANK) return shape_set_out(c, n, 0, elem, NULL);
    shape_dims out;
    out.rank = (int32_t)cnt;
    for (size_t i = 0; i < cnt; i++) {
        if (sh[i] < 0) return shape_err(n, "dimension %lld", (long long)sh[i]);
        out.dims[i] = shape_known(sh[i]);
    }
    return shape_set_out(c, n, 0, elem, &out);
}

const shape_op shape_ops_tensor[] = {
    {"Reshape", 1, rule_reshape},
    {"Transpose", 1, rule_transpose},
    {"Concat", 1, rule_concat},
    {"Split", 1, rule_split},
    {"Slice", 1, rule_slice},
    {"Gather", 1, rule_gather},
    {"GatherElements", 11, rule_gather_elements},
    {"GatherND", 11, rule_gather_nd},
    {"Squeeze", 1, rule_squeeze},
    {"Unsqueeze", 1, rule_unsqueeze},
    {"Flatten", 1, rule_flatten},
    {"Expand", 8, rule_expand},
    {"Shape", 1, rule_shape},
    {"Size", 1, rule_size},
    {"Tile", 6, rule_tile},
    {"Pad", 1, rule_pad},
    {"Constant", 1, rule_constant},
    {"ConstantOfShape", 9, rule_constant_of_shape},
    {"Resize", 10, rule_resize},
    {"Upsample", 7, rule_resize},
    {"Range", 11, rule_range},
    {"TopK", 1, rule_topk},
    {"NonZero", 9, rule_nonzero},
    {"Compress", 9, rule_compress},
    {"OneHot", 9, rule_onehot},
    {"DepthToSpace", 1, rule_depth_space},
    {"SpaceToDepth", 1, rule_depth_space},
    {"EyeLike", 9, rule_eyelike},
    {"Scatter", 9, rule_same},
    {"ScatterElements", 11, rule_same},
    {"ScatterND", 11, rule_same},
    {"Trilu", 14, rule_same},
    {"CumSum", 11, rule_same},
    {"ReverseSequence", 10, rule_same},
    {"RandomUniformLike", 1, rule_random_like},
    {"RandomNormalLike", 1, rule_random_like},
    {"Bernoulli", 15, rule_random_like},
    {"RandomUniform", 1, rule_random},
    {"RandomNormal", 1, rule_random},
};
const size_t shape_ops_tensor_count = sizeof shape_ops_tensor / sizeof shape_ops_tensor[0];
