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
static si_dim sval_dim(si_dim e) {
    if (e.value == SI_NAN || e.value < 0) {
        si_dim d = {TSR_DIM_UNKNOWN, e.value == SI_NAN ? e.symbol : NULL};
        return d;
    }
    return si_known(e.value);
}

/* Axes from input `idx` (newer opsets) or attribute `name` (older ones);
 * false when they can't be known. *given is false when neither is present. */
static bool read_axes(si_ctx *c, const ir_node *n, bool from_input, size_t idx, const char *name,
                      int64_t *axes, size_t *count, bool *given) {
    *given = true;
    if (from_input) {
        if (!si_has_in(n, idx)) {
            *given = false;
            *count = 0;
            return true;
        }
        return si_in_ints(c, n, idx, axes, IR_MAX_RANK, count, NULL);
    }
    size_t cnt;
    const int64_t *a = si_attr_ints(n, name, &cnt);
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

static void prod_add(sym_product *p, si_dim d) {
    if (si_is_known(d)) {
        if (p->k != 0 && d.value > INT64_MAX / (p->k ? p->k : 1)) p->unknown = true;
        else p->k *= d.value;
    } else if (d.symbol && p->nsym < IR_MAX_RANK) {
        p->sym[p->nsym++] = d.symbol;
    } else {
        p->unknown = true;
    }
}

/* The dim that makes `part` * dim == `whole`, or unknown. */
static si_dim prod_divide(const sym_product *whole, const sym_product *part) {
    if (whole->unknown || part->unknown || part->k == 0) return si_unknown();
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
        if (!used[j]) return si_unknown();
    if (whole->k % part->k) return si_unknown();
    int64_t k = whole->k / part->k;
    if (nrest == 0) return si_known(k);
    if (nrest == 1 && k == 1) {
        si_dim d = {TSR_DIM_UNKNOWN, rest[0]};
        return d;
    }
    return si_unknown();
}

static tsr_status *rule_reshape(si_ctx *c, const ir_node *n) {
    si_shape x, out;
    si_in_shape(c, n, 0, &x);
    int32_t elem = si_in_elem(c, n, 0);
    si_dim tgt[IR_MAX_RANK];
    size_t cnt;
    int32_t trank;
    if (si_opset(n) < 5) {
        const int64_t *a = si_attr_ints(n, "shape", &cnt);
        if (!a || cnt > IR_MAX_RANK) return si_set_out(c, n, 0, elem, NULL);
        for (size_t i = 0; i < cnt; i++) tgt[i] = si_known(a[i]);
    } else if (!si_in_dims(c, n, 1, tgt, IR_MAX_RANK, &cnt, &trank)) {
        /* The target's length still gives the rank. */
        si_shape ts;
        si_in_shape(c, n, 1, &ts);
        if (ts.rank == 1 && si_is_known(ts.dims[0]) && ts.dims[0].value <= IR_MAX_RANK) {
            si_shape_rank(&out, (int32_t)ts.dims[0].value);
            return si_set_out(c, n, 0, elem, &out);
        }
        return si_set_out(c, n, 0, elem, NULL);
    }
    bool allowzero = si_attr_int(n, "allowzero", 0) != 0;
    out.rank = (int32_t)cnt;
    int infer = -1;
    sym_product part = {1, 0, {0}, false};
    for (size_t i = 0; i < cnt; i++) {
        si_dim e = tgt[i];
        if (e.value == -1) {
            if (infer >= 0) return si_err(n, "more than one -1 in the target shape");
            infer = (int)i;
            out.dims[i] = si_unknown();
            continue;
        }
        if (e.value == 0 && !allowzero) {
            if (x.rank >= 0 && (int32_t)i >= x.rank)
                return si_err(n, "target copies dimension %zu of a rank-%d input", i, (int)x.rank);
            out.dims[i] = x.rank >= 0 ? x.dims[i] : si_unknown();
        } else if (e.value < -1 && e.value != SI_NAN) {
            return si_err(n, "target dimension %lld", (long long)e.value);
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
                return si_err(n, "can't reshape %lld elements with a -1 beside %lld", (long long)whole.k,
                              (long long)part.k);
            out.dims[infer] = part.k == 0 ? si_unknown() : prod_divide(&whole, &part);
        } else if (!whole.unknown && !part.unknown && whole.nsym == 0 && part.nsym == 0 &&
                   whole.k != part.k) {
            return si_err(n, "can't reshape %lld elements into %lld", (long long)whole.k,
                          (long long)part.k);
        }
    }
    return si_set_out(c, n, 0, elem, &out);
}

/* ------------------------------------------------------------------------ */

static tsr_status *rule_transpose(si_ctx *c, const ir_node *n) {
    si_shape x, out;
    si_in_shape(c, n, 0, &x);
    int32_t elem = si_in_elem(c, n, 0);
    size_t cnt;
    const int64_t *perm = si_attr_ints(n, "perm", &cnt);
    if (x.rank < 0) {
        if (!perm) return si_set_out(c, n, 0, elem, NULL);
        si_shape_rank(&out, (int32_t)cnt);
        return si_set_out(c, n, 0, elem, &out);
    }
    if (perm && cnt != (size_t)x.rank)
        return si_err(n, "perm has %zu entries for rank %d", cnt, (int)x.rank);
    bool used[IR_MAX_RANK] = {false};
    out.rank = x.rank;
    for (int32_t i = 0; i < x.rank; i++) {
        int32_t p;
        if (!perm) p = x.rank - 1 - i;
        else if (!si_axis(perm[i], x.rank, &p) || used[p])
            return si_err(n, "perm is not a permutation of %d axes", (int)x.rank);
        used[p] = true;
        out.dims[i] = x.dims[p];
    }
    return si_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_concat(si_ctx *c, const ir_node *n) {
    si_shape out;
    int32_t elem = 0;
    int32_t rank = -1;
    for (size_t i = 0; i < n->n_inputs; i++) {
        if (!elem) elem = si_in_elem(c, n, i);
        si_shape s;
        si_in_shape(c, n, i, &s);
        if (s.rank < 0) continue;
        if (rank >= 0 && s.rank != rank)
            return si_err(n, "inputs of rank %d and %d", (int)rank, (int)s.rank);
        rank = s.rank;
    }
    if (rank < 0) return si_set_out(c, n, 0, elem, NULL);
    int64_t a = si_attr_int(n, "axis", 0);
    int32_t axis;
    if (!si_axis(a, rank, &axis)) return si_err(n, "axis %lld out of range for rank %d", (long long)a, (int)rank);
    si_shape_rank(&out, rank);
    bool first = true;
    si_dim sum = si_known(0);
    for (size_t i = 0; i < n->n_inputs; i++) {
        si_shape s;
        si_in_shape(c, n, i, &s);
        if (s.rank < 0) {
            if (si_has_in(n, i)) sum = si_unknown();
            continue;
        }
        for (int32_t d = 0; d < rank; d++) {
            if (d == axis) continue;
            if (first) out.dims[d] = s.dims[d];
            else if (!si_dim_unify(out.dims[d], s.dims[d], &out.dims[d]))
                return si_err(n, "input %zu has %lld on axis %d where others have %lld", i,
                              (long long)s.dims[d].value, (int)d, (long long)out.dims[d].value);
        }
        first = false;
        si_dim e = s.dims[axis];
        if (si_is_known(sum) && si_is_known(e)) sum = si_known(sum.value + e.value);
        else if (sum.value == 0 && !sum.symbol) sum = e; /* 0 + N = N */
        else if (!(e.value == 0)) sum = si_unknown();
    }
    out.dims[axis] = sum;
    return si_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_split(si_ctx *c, const ir_node *n) {
    si_shape x;
    si_in_shape(c, n, 0, &x);
    int32_t elem = si_in_elem(c, n, 0);
    size_t nout = n->n_outputs;
    if (x.rank < 0) {
        for (size_t i = 0; i < nout; i++) TSR_TRY(si_set_out(c, n, i, elem, NULL));
        return NULL;
    }
    int64_t a = si_attr_int(n, "axis", 0);
    int32_t axis;
    if (!si_axis(a, x.rank, &axis)) return si_err(n, "axis %lld out of range for rank %d", (long long)a, (int)x.rank);
    int64_t split[IR_MAX_RANK * 4];
    size_t cnt = 0;
    bool have = false, given;
    /* `split` moved from an attribute to an input in opset 13. */
    if (si_opset(n) >= 13) {
        given = si_has_in(n, 1);
        have = given && si_in_ints(c, n, 1, split, sizeof split / sizeof split[0], &cnt, NULL);
        if (given && have && cnt == 0) have = given = false; /* an empty tensor means "not given" */
    } else {
        const int64_t *p = si_attr_ints(n, "split", &cnt);
        given = p != NULL;
        if (p && cnt <= sizeof split / sizeof split[0]) {
            memcpy(split, p, cnt * sizeof *p);
            have = true;
        }
    }
    si_dim len = x.dims[axis];
    if (have) {
        if (cnt != nout) return si_err(n, "split has %zu entries for %zu outputs", cnt, nout);
        int64_t total = 0;
        for (size_t i = 0; i < cnt; i++) {
            if (split[i] < 0) return si_err(n, "split entry %lld", (long long)split[i]);
            /* no axis is longer than 2^56 (IR_MAX_ELEMENTS): a longer sum
             * is refused before it could overflow */
            if (split[i] > IR_MAX_ELEMENTS - total)
                return si_err(n, "split entries sum to more than 2^56 (entry %zu: %lld)", i, (long long)split[i]);
            total += split[i];
        }
        if (si_is_known(len) && total != len.value)
            return si_err(n, "split sums to %lld, axis %d has %lld", (long long)total, (int)axis,
                          (long long)len.value);
        for (size_t i = 0; i < nout; i++) {
            si_shape o = x;
            o.dims[axis] = si_known(split[i]);
            TSR_TRY(si_set_out(c, n, i, elem, &o));
        }
        return NULL;
    }
    for (size_t i = 0; i < nout; i++) {
        si_shape o = x;
        o.dims[axis] = si_unknown();
        if (!given && si_is_known(len) && nout > 0) {
            int64_t parts = (int64_t)nout;
            if (si_opset(n) >= 18) {
                /* num_outputs: ceil-sized pieces, the last takes the rest. */
                int64_t piece = (len.value + parts - 1) / parts;
                int64_t start = piece * (int64_t)i;
                int64_t sz = len.value - start < piece ? len.value - start : piece;
                o.dims[axis] = si_known(sz < 0 ? 0 : sz);
            } else if (len.value % parts == 0) {
                o.dims[axis] = si_known(len.value / parts);
            } else {
                return si_err(n, "axis %d of %lld doesn't split evenly into %zu", (int)axis,
                              (long long)len.value, nout);
            }
        }
        TSR_TRY(si_set_out(c, n, i, elem, &o));
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

static tsr_status *rule_slice(si_ctx *c, const ir_node *n) {
    si_shape x;
    si_in_shape(c, n, 0, &x);
    int32_t elem = si_in_elem(c, n, 0);
    if (x.rank < 0) return si_set_out(c, n, 0, elem, NULL);
    int64_t st[IR_MAX_RANK], en[IR_MAX_RANK], ax[IR_MAX_RANK], sp[IR_MAX_RANK];
    size_t ns, ne, na, nsp;
    bool ok = true, have_axes = false;
    if (si_opset(n) < 10) {
        const int64_t *p;
        ok = (p = si_attr_ints(n, "starts", &ns)) && ns <= IR_MAX_RANK;
        if (ok) memcpy(st, p, ns * sizeof *p);
        ok = ok && (p = si_attr_ints(n, "ends", &ne)) && ne <= IR_MAX_RANK;
        if (ok) memcpy(en, p, ne * sizeof *p);
        ok = ok && read_axes(c, n, false, 0, "axes", ax, &na, &have_axes);
        nsp = 0;
    } else {
        ok = si_in_ints(c, n, 1, st, IR_MAX_RANK, &ns, NULL) &&
             si_in_ints(c, n, 2, en, IR_MAX_RANK, &ne, NULL) &&
             read_axes(c, n, true, 3, NULL, ax, &na, &have_axes);
        nsp = 0;
        if (ok && si_has_in(n, 4)) ok = si_in_ints(c, n, 4, sp, IR_MAX_RANK, &nsp, NULL);
    }
    si_shape out = x;
    if (!ok) {
        /* Unknown bounds: only the axes, when known, say which dims change. */
        bool axes_given = false;
        if (si_opset(n) >= 10 && read_axes(c, n, true, 3, NULL, ax, &na, &axes_given) && axes_given) {
            for (size_t i = 0; i < na; i++) {
                int32_t a;
                if (!si_axis(ax[i], x.rank, &a)) return si_err(n, "axis %lld out of range for rank %d", (long long)ax[i], (int)x.rank);
                out.dims[a] = si_unknown();
            }
        } else {
            si_shape_rank(&out, x.rank);
        }
        return si_set_out(c, n, 0, elem, &out);
    }
    if (ns != ne) return si_err(n, "%zu starts but %zu ends", ns, ne);
    if (!have_axes) {
        na = ns;
        for (size_t i = 0; i < na; i++) ax[i] = (int64_t)i;
    }
    if (na != ns) return si_err(n, "%zu axes for %zu starts", na, ns);
    if (nsp && nsp != ns) return si_err(n, "%zu steps for %zu starts", nsp, ns);
    bool seen[IR_MAX_RANK] = {false};
    for (size_t i = 0; i < ns; i++) {
        int32_t a;
        if (!si_axis(ax[i], x.rank, &a)) return si_err(n, "axis %lld out of range for rank %d", (long long)ax[i], (int)x.rank);
        if (seen[a]) return si_err(n, "axis %d sliced twice", (int)a);
        seen[a] = true;
        int64_t step = nsp ? sp[i] : 1;
        if (step == 0) return si_err(n, "step 0 on axis %d", (int)a);
        si_dim d = x.dims[a];
        if (si_is_known(d)) {
            out.dims[a] = si_known(slice_len(d.value, st[i], en[i], step));
        } else if (step == 1 && st[i] == 0 && en[i] >= (INT64_MAX >> 1)) {
            out.dims[a] = d; /* the whole axis: keeps its name */
        } else if (step == 1 && st[i] >= 0 && en[i] >= 0 && en[i] <= st[i]) {
            out.dims[a] = si_known(0);
        } else {
            out.dims[a] = si_unknown();
        }
    }
    return si_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_gather(si_ctx *c, const ir_node *n) {
    si_shape x, idx, out;
    si_in_shape(c, n, 0, &x);
    si_in_shape(c, n, 1, &idx);
    int32_t elem = si_in_elem(c, n, 0);
    if (x.rank < 0 || idx.rank < 0) return si_set_out(c, n, 0, elem, NULL);
    int64_t a = si_attr_int(n, "axis", 0);
    int32_t axis;
    if (!si_axis(a, x.rank, &axis)) return si_err(n, "axis %lld out of range for rank %d", (long long)a, (int)x.rank);
    if (x.rank + idx.rank - 1 > IR_MAX_RANK) return si_err(n, "result rank over %d", IR_MAX_RANK);
    out.rank = 0;
    for (int32_t i = 0; i < axis; i++) out.dims[out.rank++] = x.dims[i];
    for (int32_t i = 0; i < idx.rank; i++) out.dims[out.rank++] = idx.dims[i];
    for (int32_t i = axis + 1; i < x.rank; i++) out.dims[out.rank++] = x.dims[i];
    return si_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_gather_elements(si_ctx *c, const ir_node *n) {
    si_shape x, idx;
    si_in_shape(c, n, 0, &x);
    si_in_shape(c, n, 1, &idx);
    if (x.rank >= 0 && idx.rank >= 0 && x.rank != idx.rank)
        return si_err(n, "data of rank %d, indices of rank %d", (int)x.rank, (int)idx.rank);
    return si_set_out(c, n, 0, si_in_elem(c, n, 0), &idx);
}

static tsr_status *rule_gather_nd(si_ctx *c, const ir_node *n) {
    si_shape x, idx, out;
    si_in_shape(c, n, 0, &x);
    si_in_shape(c, n, 1, &idx);
    int32_t elem = si_in_elem(c, n, 0);
    int64_t b = si_attr_int(n, "batch_dims", 0);
    if (x.rank < 0 || idx.rank < 1 || !si_is_known(idx.dims[idx.rank - 1]))
        return si_set_out(c, n, 0, elem, NULL);
    int64_t k = idx.dims[idx.rank - 1].value;
    if (b < 0 || b > x.rank || k > x.rank - b) return si_err(n, "indices of depth %lld beyond data of rank %d", (long long)k, (int)x.rank);
    out.rank = 0;
    for (int32_t i = 0; i < idx.rank - 1; i++) out.dims[out.rank++] = idx.dims[i];
    for (int64_t i = b + k; i < x.rank && out.rank < IR_MAX_RANK; i++) out.dims[out.rank++] = x.dims[i];
    return si_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_squeeze(si_ctx *c, const ir_node *n) {
    si_shape x, out;
    si_in_shape(c, n, 0, &x);
    int32_t elem = si_in_elem(c, n, 0);
    int64_t axes[IR_MAX_RANK];
    size_t na;
    bool given;
    if (!read_axes(c, n, si_opset(n) >= 13, 1, "axes", axes, &na, &given))
        return si_set_out(c, n, 0, elem, NULL);
    if (x.rank < 0) {
        return si_set_out(c, n, 0, elem, NULL);
    }
    bool drop[IR_MAX_RANK] = {false};
    if (!given || na == 0) {
        /* Every 1 goes; with a dim unknown we can't tell the rank. */
        for (int32_t i = 0; i < x.rank; i++) {
            if (!si_is_known(x.dims[i])) return si_set_out(c, n, 0, elem, NULL);
            drop[i] = x.dims[i].value == 1;
        }
    } else {
        for (size_t i = 0; i < na; i++) {
            int32_t a;
            if (!si_axis(axes[i], x.rank, &a)) return si_err(n, "axis %lld out of range for rank %d", (long long)axes[i], (int)x.rank);
            if (si_is_known(x.dims[a]) && x.dims[a].value != 1)
                return si_err(n, "can't squeeze axis %d of length %lld", (int)a, (long long)x.dims[a].value);
            drop[a] = true;
        }
    }
    out.rank = 0;
    for (int32_t i = 0; i < x.rank; i++)
        if (!drop[i]) out.dims[out.rank++] = x.dims[i];
    return si_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_unsqueeze(si_ctx *c, const ir_node *n) {
    si_shape x, out;
    si_in_shape(c, n, 0, &x);
    int32_t elem = si_in_elem(c, n, 0);
    int64_t axes[IR_MAX_RANK];
    size_t na;
    bool given;
    if (!read_axes(c, n, si_opset(n) >= 13, 1, "axes", axes, &na, &given))
        return si_set_out(c, n, 0, elem, NULL);
    if (!given) return si_err(n, "no axes");
    if (x.rank < 0) return si_set_out(c, n, 0, elem, NULL);
    int32_t r = x.rank + (int32_t)na;
    if (r > IR_MAX_RANK) return si_err(n, "result rank over %d", IR_MAX_RANK);
    bool ins[IR_MAX_RANK] = {false};
    for (size_t i = 0; i < na; i++) {
        int32_t a;
        if (!si_axis(axes[i], r, &a)) return si_err(n, "axis %lld out of range for rank %d", (long long)axes[i], (int)r);
        if (ins[a]) return si_err(n, "axis %d given twice", (int)a);
        ins[a] = true;
    }
    out.rank = r;
    for (int32_t i = 0, j = 0; i < r; i++) out.dims[i] = ins[i] ? si_known(1) : x.dims[j++];
    return si_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_flatten(si_ctx *c, const ir_node *n) {
    si_shape x, out;
    si_in_shape(c, n, 0, &x);
    int32_t elem = si_in_elem(c, n, 0);
    out.rank = 2;
    if (x.rank < 0) {
        si_shape_rank(&out, 2);
        return si_set_out(c, n, 0, elem, &out);
    }
    int64_t a = si_attr_int(n, "axis", 1);
    if (a < 0) a += x.rank;
    if (a < 0 || a > x.rank) return si_err(n, "axis %lld out of range for rank %d", (long long)si_attr_int(n, "axis", 1), (int)x.rank);
    out.dims[0] = si_known(1);
    out.dims[1] = si_known(1);
    for (int32_t i = 0; i < x.rank; i++) {
        si_dim *d = &out.dims[i < a ? 0 : 1];
        *d = si_dim_mul(*d, x.dims[i]);
    }
    return si_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_expand(si_ctx *c, const ir_node *n) {
    si_shape x, t, out;
    si_in_shape(c, n, 0, &x);
    int32_t elem = si_in_elem(c, n, 0);
    si_dim tgt[IR_MAX_RANK];
    size_t cnt;
    if (!si_in_dims(c, n, 1, tgt, IR_MAX_RANK, &cnt, NULL)) {
        si_shape ts;
        si_in_shape(c, n, 1, &ts);
        if (x.rank >= 0 && ts.rank == 1 && si_is_known(ts.dims[0]) && ts.dims[0].value <= IR_MAX_RANK) {
            /* Unknown target dims still keep x's dims other than 1. */
            si_shape_rank(&t, (int32_t)ts.dims[0].value);
            TSR_TRY(si_broadcast(c, n, &x, &t, &out));
            return si_set_out(c, n, 0, elem, &out);
        }
        return si_set_out(c, n, 0, elem, NULL);
    }
    t.rank = (int32_t)cnt;
    for (size_t i = 0; i < cnt; i++) {
        if (tgt[i].value < 0 && tgt[i].value != SI_NAN)
            return si_err(n, "target dimension %lld", (long long)tgt[i].value);
        t.dims[i] = sval_dim(tgt[i]);
    }
    TSR_TRY(si_broadcast(c, n, &x, &t, &out));
    return si_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_shape(si_ctx *c, const ir_node *n) {
    si_shape x, out;
    si_in_shape(c, n, 0, &x);
    out.rank = 1;
    out.dims[0] = si_unknown();
    if (x.rank >= 0) {
        int64_t r = x.rank, start = si_attr_int(n, "start", 0), end = si_attr_int(n, "end", r);
        if (start < 0) start += r;
        if (end < 0) end += r;
        start = start < 0 ? 0 : start > r ? r : start;
        end = end < 0 ? 0 : end > r ? r : end;
        out.dims[0] = si_known(end > start ? end - start : 0);
    }
    return si_set_out_ex(c, n, 0, TSR_INT64, &out, SI_ELEM_CERTAIN);
}

static tsr_status *rule_size(si_ctx *c, const ir_node *n) {
    si_shape out;
    out.rank = 0;
    return si_set_out_ex(c, n, 0, TSR_INT64, &out, SI_ELEM_CERTAIN);
}

static tsr_status *rule_tile(si_ctx *c, const ir_node *n) {
    si_shape x, out;
    si_in_shape(c, n, 0, &x);
    int32_t elem = si_in_elem(c, n, 0);
    if (x.rank < 0) return si_set_out(c, n, 0, elem, NULL);
    int64_t rep[IR_MAX_RANK];
    size_t cnt;
    out = x;
    if (!si_in_ints(c, n, 1, rep, IR_MAX_RANK, &cnt, NULL)) {
        si_shape_rank(&out, x.rank);
        return si_set_out(c, n, 0, elem, &out);
    }
    if (cnt != (size_t)x.rank) return si_err(n, "%zu repeats for rank %d", cnt, (int)x.rank);
    for (int32_t i = 0; i < x.rank; i++) {
        if (rep[i] < 0) return si_err(n, "repeat %lld", (long long)rep[i]);
        out.dims[i] = si_dim_mul(x.dims[i], si_known(rep[i]));
    }
    return si_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_pad(si_ctx *c, const ir_node *n) {
    si_shape x, out;
    si_in_shape(c, n, 0, &x);
    int32_t elem = si_in_elem(c, n, 0);
    if (x.rank < 0) return si_set_out(c, n, 0, elem, NULL);
    int64_t pads[2 * IR_MAX_RANK], axes[IR_MAX_RANK];
    size_t np, na = 0;
    bool ok, given = false;
    if (si_opset(n) < 11) {
        const int64_t *p = si_attr_ints(n, "pads", &np);
        if (!p) p = si_attr_ints(n, "paddings", &np); /* opset 1 */
        ok = p && np <= 2 * IR_MAX_RANK;
        if (ok) memcpy(pads, p, np * sizeof *p);
    } else {
        ok = si_in_ints(c, n, 1, pads, 2 * IR_MAX_RANK, &np, NULL);
        if (ok && si_opset(n) >= 18) ok = read_axes(c, n, true, 3, NULL, axes, &na, &given);
    }
    out = x;
    if (!ok) {
        si_shape_rank(&out, x.rank);
        return si_set_out(c, n, 0, elem, &out);
    }
    if (!given) {
        na = (size_t)x.rank;
        for (size_t i = 0; i < na; i++) axes[i] = (int64_t)i;
    }
    if (np != 2 * na) return si_err(n, "%zu pads for %zu axes", np, na);
    for (size_t i = 0; i < na; i++) {
        int32_t a;
        if (!si_axis(axes[i], x.rank, &a)) return si_err(n, "axis %lld out of range for rank %d", (long long)axes[i], (int)x.rank);
        /* no tensor has 2^56 elements (IR_MAX_ELEMENTS): larger pads are
         * refused before the sums below could overflow */
        if (pads[i] > IR_MAX_ELEMENTS || pads[i] < -IR_MAX_ELEMENTS || pads[i + na] > IR_MAX_ELEMENTS ||
            pads[i + na] < -IR_MAX_ELEMENTS)
            return si_err(n, "pads of %lld and %lld on axis %d", (long long)pads[i], (long long)pads[i + na], (int)a);
        int64_t add = pads[i] + pads[i + na];
        si_dim d = x.dims[a];
        if (si_is_known(d)) {
            if (d.value + add < 0) return si_err(n, "padding leaves axis %d with %lld", (int)a, (long long)(d.value + add));
            out.dims[a] = si_known(d.value + add);
        } else if (add != 0) {
            out.dims[a] = si_unknown();
        }
    }
    return si_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_constant(si_ctx *c, const ir_node *n) {
    /* The loader already attached the tensor; its type came from it. */
    if (n->n_outputs && n->outputs[0] && n->outputs[0]->constant) return NULL;
    si_shape s;
    const ir_attr *a;
    s.rank = 0;
    if ((a = si_attr(n, "value")) && a->type == TSR_ATTR_TENSOR && a->t) {
        if (a->t->rank > IR_MAX_RANK) return NULL;
        s.rank = a->t->rank;
        for (int32_t i = 0; i < s.rank; i++) s.dims[i] = si_known(a->t->dims[i]);
        return si_set_out_ex(c, n, 0, a->t->elem_type, &s, SI_ELEM_CERTAIN);
    }
    static const struct {
        const char *name;
        int32_t elem;
        bool list;
    } kinds[] = {{"value_float", TSR_FLOAT, false}, {"value_floats", TSR_FLOAT, true},
                 {"value_int", TSR_INT64, false},   {"value_ints", TSR_INT64, true},
                 {"value_string", TSR_STRING, false}, {"value_strings", TSR_STRING, true}};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        if (!(a = si_attr(n, kinds[k].name))) continue;
        if (kinds[k].list) {
            s.rank = 1;
            s.dims[0] = si_known((int64_t)a->count);
        }
        return si_set_out_ex(c, n, 0, kinds[k].elem, &s, SI_ELEM_CERTAIN);
    }
    return NULL; /* sparse_value: left alone */
}

static tsr_status *rule_constant_of_shape(si_ctx *c, const ir_node *n) {
    const ir_attr *v = si_attr(n, "value");
    int32_t elem = v && v->type == TSR_ATTR_TENSOR && v->t ? v->t->elem_type : TSR_FLOAT;
    si_dim tgt[IR_MAX_RANK];
    size_t cnt;
    si_shape out;
    if (!si_in_dims(c, n, 0, tgt, IR_MAX_RANK, &cnt, NULL)) {
        si_shape ts;
        si_in_shape(c, n, 0, &ts);
        if (ts.rank == 1 && si_is_known(ts.dims[0]) && ts.dims[0].value <= IR_MAX_RANK) {
            si_shape_rank(&out, (int32_t)ts.dims[0].value);
            return si_set_out_ex(c, n, 0, elem, &out, SI_ELEM_CERTAIN);
        }
        return si_set_out_ex(c, n, 0, elem, NULL, SI_ELEM_CERTAIN);
    }
    out.rank = (int32_t)cnt;
    for (size_t i = 0; i < cnt; i++) {
        if (tgt[i].value < 0 && tgt[i].value != SI_NAN)
            return si_err(n, "dimension %lld", (long long)tgt[i].value);
        out.dims[i] = sval_dim(tgt[i]);
    }
    return si_set_out_ex(c, n, 0, elem, &out, SI_ELEM_CERTAIN);
}

/* Resize (and Upsample): sizes win over scales; a scale gives floor(d * s). */
static tsr_status *rule_resize(si_ctx *c, const ir_node *n) {
    si_shape x, out;
    si_in_shape(c, n, 0, &x);
    int32_t elem = si_in_elem(c, n, 0);
    if (x.rank < 0) return si_set_out(c, n, 0, elem, NULL);
    bool upsample = !strcmp(n->op_type, "Upsample");
    size_t scales_in = upsample || si_opset(n) < 11 ? 1 : 2, sizes_in = 3;
    int64_t axes[IR_MAX_RANK];
    size_t na = 0;
    bool have_axes = false;
    if (!upsample && si_opset(n) >= 18) {
        size_t cnt;
        const int64_t *p = si_attr_ints(n, "axes", &cnt);
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
        if (!si_axis(axes[i], x.rank, &ax[i])) return si_err(n, "axis %lld out of range for rank %d", (long long)axes[i], (int)x.rank);
    out = x;
    int64_t sizes[IR_MAX_RANK];
    double scales[IR_MAX_RANK];
    size_t cnt;
    if (!upsample && si_opset(n) >= 11 && si_has_in(n, sizes_in) &&
        si_in_ints(c, n, sizes_in, sizes, IR_MAX_RANK, &cnt, NULL) && cnt > 0) {
        if (cnt != na) return si_err(n, "%zu sizes for %zu axes", cnt, na);
        const char *policy = si_attr_str(n, "keep_aspect_ratio_policy", "stretch");
        if (si_opset(n) >= 18 && strcmp(policy, "stretch")) {
            /* One scale for all axes: the smallest or largest ratio. */
            bool larger = !strcmp(policy, "not_smaller");
            double s = 0;
            for (size_t i = 0; i < na; i++) {
                if (!si_is_known(x.dims[ax[i]]) || x.dims[ax[i]].value == 0) {
                    for (size_t j = 0; j < na; j++) out.dims[ax[j]] = si_unknown();
                    return si_set_out(c, n, 0, elem, &out);
                }
                double r = (double)sizes[i] / (double)x.dims[ax[i]].value;
                if (i == 0 || (larger ? r > s : r < s)) s = r;
            }
            for (size_t i = 0; i < na; i++) {
                double len = floor((double)x.dims[ax[i]].value * s + 0.5);
                /* sizes are not bounded: the product may pass int64 */
                if (!(len >= 0 && len <= (double)IR_MAX_ELEMENTS))
                    return si_err(n, "axis %d would be resized to %g elements", (int)ax[i], len);
                out.dims[ax[i]] = si_known((int64_t)len);
            }
        } else {
            for (size_t i = 0; i < na; i++) {
                if (sizes[i] < 0) return si_err(n, "size %lld", (long long)sizes[i]);
                out.dims[ax[i]] = si_known(sizes[i]);
            }
        }
        return si_set_out(c, n, 0, elem, &out);
    }
    bool have_scales;
    if (upsample && si_opset(n) < 9) {
        const ir_attr *a = si_attr(n, "scales");
        have_scales = a && a->type == TSR_ATTR_FLOATS && a->count <= IR_MAX_RANK;
        cnt = have_scales ? a->count : 0;
        for (size_t i = 0; i < cnt; i++) scales[i] = a->floats[i];
    } else {
        have_scales = si_has_in(n, scales_in) && si_in_doubles(c, n, scales_in, scales, IR_MAX_RANK, &cnt);
    }
    if (have_scales && cnt > 0) {
        if (cnt != na) return si_err(n, "%zu scales for %zu axes", cnt, na);
        for (size_t i = 0; i < na; i++) {
            if (!(scales[i] > 0)) return si_err(n, "scale %g", scales[i]); /* NaN too */
            si_dim d = x.dims[ax[i]];
            if (scales[i] == 1.0) continue; /* keeps a symbolic dim's name */
            out.dims[ax[i]] = si_unknown();
            if (!si_is_known(d)) continue;
            double len = floor((double)d.value * scales[i]);
            /* a huge scale would pass int64 in the conversion */
            if (len > (double)IR_MAX_ELEMENTS)
                return si_err(n, "scale %g makes axis %d longer than 2^56", scales[i], (int)ax[i]);
            out.dims[ax[i]] = si_known((int64_t)len);
        }
        return si_set_out(c, n, 0, elem, &out);
    }
    si_shape_rank(&out, x.rank);
    return si_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_range(si_ctx *c, const ir_node *n) {
    int32_t elem = si_in_elem(c, n, 0);
    if (!elem) elem = si_in_elem(c, n, 1);
    si_shape out;
    out.rank = 1;
    out.dims[0] = si_unknown();
    double v[3];
    size_t cnt;
    bool known = true;
    for (size_t i = 0; i < 3 && known; i++) known = si_in_doubles(c, n, i, &v[i], 1, &cnt) && cnt == 1;
    if (known) {
        if (v[2] == 0) return si_err(n, "delta is 0");
        double len = ceil((v[1] - v[0]) / v[2]);
        /* converting a longer (or NaN) length to int64 would be undefined */
        if (len != len || len > (double)IR_MAX_ELEMENTS)
            return si_err(n, "Range of %g elements (start %g, limit %g, delta %g)", len, v[0], v[1], v[2]);
        out.dims[0] = si_known(len > 0 ? (int64_t)len : 0);
    } else {
        /* Range(0, N, 1), N from a Shape: position ids of length N. */
        int64_t s0[1], d0[1];
        si_dim lim[1];
        size_t k1, k2, k3;
        if (si_in_ints(c, n, 0, s0, 1, &k1, NULL) && k1 == 1 && s0[0] == 0 &&
            si_in_ints(c, n, 2, d0, 1, &k3, NULL) && k3 == 1 && d0[0] == 1 &&
            si_in_dims(c, n, 1, lim, 1, &k2, NULL) && k2 == 1) {
            out.dims[0] = sval_dim(lim[0]);
            if (si_is_known(out.dims[0]) && out.dims[0].value < 0) out.dims[0] = si_known(0);
        }
    }
    return si_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_topk(si_ctx *c, const ir_node *n) {
    si_shape x;
    si_in_shape(c, n, 0, &x);
    int32_t elem = si_in_elem(c, n, 0);
    if (x.rank >= 0) {
        int64_t a = si_attr_int(n, "axis", -1);
        int32_t axis;
        if (!si_axis(a, x.rank, &axis)) return si_err(n, "axis %lld out of range for rank %d", (long long)a, (int)x.rank);
        int64_t k[1];
        size_t cnt;
        bool have;
        if (si_opset(n) < 10) {
            const ir_attr *ka = si_attr(n, "k");
            have = ka && ka->type == TSR_ATTR_INT;
            if (have) k[0] = ka->i;
        } else {
            have = si_in_ints(c, n, 1, k, 1, &cnt, NULL) && cnt == 1;
        }
        if (have && (k[0] < 0 || (si_is_known(x.dims[axis]) && k[0] > x.dims[axis].value)))
            return si_err(n, "k = %lld for an axis of %lld", (long long)k[0], (long long)x.dims[axis].value);
        x.dims[axis] = have ? si_known(k[0]) : si_unknown();
    }
    TSR_TRY(si_set_out(c, n, 0, elem, &x));
    return si_set_out_ex(c, n, 1, TSR_INT64, &x, SI_ELEM_CERTAIN);
}

static tsr_status *rule_nonzero(si_ctx *c, const ir_node *n) {
    si_shape x, out;
    si_in_shape(c, n, 0, &x);
    out.rank = 2;
    out.dims[0] = x.rank >= 0 ? si_known(x.rank) : si_unknown();
    out.dims[1] = si_unknown(); /* how many are non-zero is data */
    return si_set_out_ex(c, n, 0, TSR_INT64, &out, SI_ELEM_CERTAIN);
}

static tsr_status *rule_compress(si_ctx *c, const ir_node *n) {
    si_shape x, out;
    si_in_shape(c, n, 0, &x);
    int32_t elem = si_in_elem(c, n, 0);
    const ir_attr *a = si_attr(n, "axis");
    if (!a) {
        out.rank = 1;
        out.dims[0] = si_unknown();
        return si_set_out(c, n, 0, elem, &out);
    }
    if (x.rank < 0) return si_set_out(c, n, 0, elem, NULL);
    int32_t axis;
    if (!si_axis(a->i, x.rank, &axis)) return si_err(n, "axis %lld out of range for rank %d", (long long)a->i, (int)x.rank);
    x.dims[axis] = si_unknown();
    return si_set_out(c, n, 0, elem, &x);
}

static tsr_status *rule_onehot(si_ctx *c, const ir_node *n) {
    si_shape x, out;
    si_in_shape(c, n, 0, &x);
    int32_t elem = si_in_elem(c, n, 2);
    if (x.rank < 0) return si_set_out(c, n, 0, elem, NULL);
    int32_t r = x.rank + 1, axis;
    int64_t a = si_attr_int(n, "axis", -1);
    if (r > IR_MAX_RANK) return si_err(n, "result rank over %d", IR_MAX_RANK);
    if (!si_axis(a, r, &axis)) return si_err(n, "axis %lld out of range for rank %d", (long long)a, (int)r);
    double depth[1];
    size_t cnt;
    si_dim dd = si_unknown();
    if (si_in_doubles(c, n, 1, depth, 1, &cnt) && cnt == 1) {
        /* NaN or past int64 the conversion is undefined; no axis is longer
         * than 2^56 */
        if (!(depth[0] >= 0 && depth[0] <= (double)IR_MAX_ELEMENTS)) return si_err(n, "depth %g", depth[0]);
        dd = si_known((int64_t)depth[0]);
    }
    out.rank = r;
    for (int32_t i = 0, j = 0; i < r; i++) out.dims[i] = i == axis ? dd : x.dims[j++];
    return si_set_out(c, n, 0, elem, &out);
}

/* DepthToSpace and SpaceToDepth move blocksize^2 between channels and space. */
static tsr_status *rule_depth_space(si_ctx *c, const ir_node *n) {
    si_shape x;
    si_in_shape(c, n, 0, &x);
    int32_t elem = si_in_elem(c, n, 0);
    int64_t b = si_attr_int(n, "blocksize", 0);
    if (x.rank < 0) return si_set_out(c, n, 0, elem, NULL);
    if (x.rank != 4) return si_err(n, "input of rank %d; need 4", (int)x.rank);
    if (b < 1 || b > (INT64_C(1) << 31)) return si_err(n, "blocksize %lld", (long long)b); /* b * b must not overflow */
    bool to_space = !strcmp(n->op_type, "DepthToSpace");
    si_dim *ch = &x.dims[1];
    if (to_space) {
        if (si_is_known(*ch) && ch->value % (b * b)) return si_err(n, "%lld channels not divisible by %lld", (long long)ch->value, (long long)(b * b));
        *ch = si_is_known(*ch) ? si_known(ch->value / (b * b)) : si_unknown();
        for (int i = 2; i < 4; i++) x.dims[i] = si_dim_mul(x.dims[i], si_known(b));
    } else {
        *ch = si_dim_mul(*ch, si_known(b * b));
        for (int i = 2; i < 4; i++) {
            si_dim *d = &x.dims[i];
            if (si_is_known(*d) && d->value % b) return si_err(n, "axis %d of %lld not divisible by %lld", i, (long long)d->value, (long long)b);
            *d = si_is_known(*d) ? si_known(d->value / b) : si_unknown();
        }
    }
    return si_set_out(c, n, 0, elem, &x);
}

static tsr_status *rule_eyelike(si_ctx *c, const ir_node *n) {
    si_shape x;
    si_in_shape(c, n, 0, &x);
    int32_t elem = (int32_t)si_attr_int(n, "dtype", 0);
    if (!elem) elem = si_in_elem(c, n, 0);
    return si_set_out(c, n, 0, elem, &x);
}

static tsr_status *rule_same(si_ctx *c, const ir_node *n) { return si_same_as_in(c, n, 0, 0); }

/* RandomUniformLike, RandomNormalLike, Bernoulli: the input's shape, typed
 * by `dtype` or else like the input. */
static tsr_status *rule_random_like(si_ctx *c, const ir_node *n) {
    si_shape x;
    si_in_shape(c, n, 0, &x);
    int32_t elem = (int32_t)si_attr_int(n, "dtype", 0);
    if (!elem) elem = si_in_elem(c, n, 0);
    return si_set_out(c, n, 0, elem, &x);
}

/* RandomUniform, RandomNormal: the `shape` attribute, float by default. */
static tsr_status *rule_random(si_ctx *c, const ir_node *n) {
    size_t cnt;
    const int64_t *sh = si_attr_ints(n, "shape", &cnt);
    int32_t elem = (int32_t)si_attr_int(n, "dtype", TSR_FLOAT);
    if (!sh || cnt > IR_MAX_RANK) return si_set_out(c, n, 0, elem, NULL);
    si_shape out;
    out.rank = (int32_t)cnt;
    for (size_t i = 0; i < cnt; i++) {
        if (sh[i] < 0) return si_err(n, "dimension %lld", (long long)sh[i]);
        out.dims[i] = si_known(sh[i]);
    }
    return si_set_out(c, n, 0, elem, &out);
}

const si_op si_ops_tensor[] = {
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
const size_t si_ops_tensor_count = sizeof si_ops_tensor / sizeof si_ops_tensor[0];
