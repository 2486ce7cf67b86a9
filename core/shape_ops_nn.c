/*
 * Shape rules for neural-network operators: convolution and pooling windows,
 * normalisations, softmax, MatMul, Gemm and Einsum.
 */
#include <string.h>

#include "shape_infer_internal.h"
#include "tessera/tessera.h"

/* ------------------------------------------------------------------------ */
/* Sliding windows                                                           */

/* The attributes of a sliding window over `k` spatial axes. */
typedef struct window {
    int32_t k;
    shape_dim kernel[IR_MAX_RANK];
    int64_t strides[IR_MAX_RANK], dilations[IR_MAX_RANK];
    int64_t pads[2 * IR_MAX_RANK];
    const char *auto_pad;
    bool ceil_mode;
} window;

/* Reads strides, dilations, pads and auto_pad; kernel set by the caller.
 * An error when a list has the wrong length. */
static tsr_status *read_window(const ir_node *n, window *w) {
    size_t cnt;
    const int64_t *v;
    for (int32_t i = 0; i < w->k; i++) {
        w->strides[i] = 1;
        w->dilations[i] = 1;
        w->pads[i] = w->pads[i + w->k] = 0;
    }
    if ((v = shape_attr_ints(n, "strides", &cnt))) {
        if (cnt != (size_t)w->k) return shape_err(n, "%zu strides for %d spatial axes", cnt, (int)w->k);
        for (int32_t i = 0; i < w->k; i++) w->strides[i] = v[i];
    }
    if ((v = shape_attr_ints(n, "dilations", &cnt))) {
        if (cnt != (size_t)w->k) return shape_err(n, "%zu dilations for %d spatial axes", cnt, (int)w->k);
        for (int32_t i = 0; i < w->k; i++) w->dilations[i] = v[i];
    }
    if ((v = shape_attr_ints(n, "pads", &cnt))) {
        if (cnt != 2 * (size_t)w->k) return shape_err(n, "%zu pads for %d spatial axes", cnt, (int)w->k);
        for (int32_t i = 0; i < 2 * w->k; i++) w->pads[i] = v[i];
    }
    /* Bounded so the window arithmetic below cannot overflow: no real
     * model comes near 2^31 for any of them. */
    const int64_t lim = INT64_C(1) << 31;
    for (int32_t i = 0; i < w->k; i++) {
        if (w->strides[i] < 1 || w->strides[i] > lim) return shape_err(n, "stride %lld", (long long)w->strides[i]);
        if (w->dilations[i] < 1 || w->dilations[i] > lim)
            return shape_err(n, "dilation %lld", (long long)w->dilations[i]);
    }
    for (int32_t i = 0; i < 2 * w->k; i++)
        if (w->pads[i] < -lim || w->pads[i] > lim) return shape_err(n, "pad %lld", (long long)w->pads[i]);
    w->auto_pad = shape_attr_str(n, "auto_pad", "NOTSET");
    w->ceil_mode = shape_attr_int(n, "ceil_mode", 0) != 0;
    return NULL;
}

static int64_t div_ceil(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }
static int64_t div_floor(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* Output length of spatial axis i for input length `in`. */
static tsr_status *window_out(const ir_node *n, const window *w, int32_t i, shape_dim in, shape_dim *out) {
    *out = shape_unknown();
    if (!shape_is_known(in)) return NULL;
    int64_t s = w->strides[i];
    /* checked before SAME padding too: kernels read it there as well */
    if (shape_is_known(w->kernel[i]) && (w->kernel[i].value < 1 || w->kernel[i].value > (INT64_C(1) << 31)))
        return shape_err(n, "kernel size %lld on spatial axis %d", (long long)w->kernel[i].value, (int)i);
    if (!strcmp(w->auto_pad, "SAME_UPPER") || !strcmp(w->auto_pad, "SAME_LOWER")) {
        *out = shape_known(div_ceil(in.value, s));
        return NULL;
    }
    if (!shape_is_known(w->kernel[i])) return NULL;
    int64_t eff = (w->kernel[i].value - 1) * w->dilations[i] + 1;
    int64_t pb = 0, pe = 0;
    if (strcmp(w->auto_pad, "VALID") != 0) {
        pb = w->pads[i];
        pe = w->pads[i + w->k];
    }
    int64_t span = in.value + pb + pe - eff;
    if (span < 0)
        return shape_err(n, "window of %lld (kernel %lld, dilation %lld) exceeds padded input %lld on spatial axis %d",
                         (long long)eff, (long long)w->kernel[i].value, (long long)w->dilations[i],
                         (long long)(in.value + pb + pe), (int)i);
    int64_t o = (w->ceil_mode ? div_ceil(span, s) : div_floor(span, s)) + 1;
    /* With ceil_mode a last window that would start inside the end padding
     * is dropped (PyTorch and current ONNX agree). */
    if (w->ceil_mode && (o - 1) * s >= in.value + pb) o--;
    *out = shape_known(o);
    return NULL;
}

/* Conv and its quantised relatives: x at input xi, weights at wi. */
static tsr_status *conv_like(shape_ctx *c, const ir_node *n, size_t xi, size_t wi, int32_t elem) {
    shape_dims x, w, out;
    shape_in_shape(c, n, xi, &x);
    shape_in_shape(c, n, wi, &w);
    if (!elem) elem = shape_in_elem(c, n, xi);
    int32_t rank = x.rank >= 0 ? x.rank : w.rank;
    if (rank < 0) {
        size_t cnt;
        if (shape_attr_ints(n, "kernel_shape", &cnt)) rank = (int32_t)cnt + 2;
    }
    if (rank < 0) return shape_set_out(c, n, 0, elem, NULL);
    if (rank < 3) return shape_err(n, "input of rank %d; need at least 3", (int)rank);
    if (x.rank >= 0 && w.rank >= 0 && x.rank != w.rank)
        return shape_err(n, "input of rank %d with weights of rank %d", (int)x.rank, (int)w.rank);
    if (x.rank < 0) shape_dims_rank(&x, rank);
    if (w.rank < 0) shape_dims_rank(&w, rank);
    int64_t group = shape_attr_int(n, "group", 1);
    if (group < 1 || group > (INT64_C(1) << 31)) return shape_err(n, "group %lld", (long long)group);
    /* a declared weight dim may reach 2^56 and group 2^31: the product is
     * checked (fuzz_session found the same pattern overflowing elsewhere) */
    int64_t want_c;
    if (shape_is_known(x.dims[1]) && shape_is_known(w.dims[1])) {
        if (__builtin_mul_overflow(w.dims[1].value, group, &want_c))
            return shape_err(n, "input has %lld channels, weights expect %lld x group %lld (past int64)",
                             (long long)x.dims[1].value, (long long)w.dims[1].value, (long long)group);
        if (x.dims[1].value != want_c)
            return shape_err(n, "input has %lld channels, weights expect %lld (%lld x group %lld)",
                             (long long)x.dims[1].value, (long long)want_c, (long long)w.dims[1].value,
                             (long long)group);
    }
    window win;
    win.k = rank - 2;
    size_t cnt;
    const int64_t *ks = shape_attr_ints(n, "kernel_shape", &cnt);
    if (ks && cnt != (size_t)win.k)
        return shape_err(n, "kernel_shape has %zu entries for %d spatial axes", cnt, (int)win.k);
    for (int32_t i = 0; i < win.k; i++) win.kernel[i] = ks ? shape_known(ks[i]) : w.dims[i + 2];
    TSR_TRY(read_window(n, &win));
    win.ceil_mode = false;
    out.rank = rank;
    out.dims[0] = x.dims[0];
    out.dims[1] = w.dims[0];
    for (int32_t i = 0; i < win.k; i++) TSR_TRY(window_out(n, &win, i, x.dims[i + 2], &out.dims[i + 2]));
    return shape_set_out(c, n, 0, elem, &out);
}

static tsr_status *rule_conv(shape_ctx *c, const ir_node *n) { return conv_like(c, n, 0, 1, 0); }
static tsr_status *rule_conv_integer(shape_ctx *c, const ir_node *n) { return conv_like(c, n, 0, 1, TSR_INT32); }
static tsr_status *rule_qlinear_conv(shape_ctx *c, const ir_node *n) {
    return conv_like(c, n, 0, 3, shape_in_elem(c, n, 7));
}

static tsr_status *rule_conv_transpose(shape_ctx *c, const ir_node *n) {
    shape_dims x, w, out;
    shape_in_shape(c, n, 0, &x);
    shape_in_shape(c, n, 1, &w);
    int32_t elem = shape_in_elem(c, n, 0);
    int32_t rank = x.rank >= 0 ? x.rank : w.rank;
    if (rank < 0) return shape_set_out(c, n, 0, elem, NULL);
    if (rank < 3) return shape_err(n, "input of rank %d; need at least 3", (int)rank);
    if (x.rank < 0) shape_dims_rank(&x, rank);
    if (w.rank < 0) shape_dims_rank(&w, rank);
    int64_t group = shape_attr_int(n, "group", 1);
    if (group < 1) return shape_err(n, "group %lld", (long long)group);
    if (shape_is_known(x.dims[1]) && shape_is_known(w.dims[0]) && x.dims[1].value != w.dims[0].value)
        return shape_err(n, "input has %lld channels, weights expect %lld", (long long)x.dims[1].value,
                         (long long)w.dims[0].value);
    window win;
    win.k = rank - 2;
    size_t cnt;
    const int64_t *ks = shape_attr_ints(n, "kernel_shape", &cnt);
    if (ks && cnt != (size_t)win.k)
        return shape_err(n, "kernel_shape has %zu entries for %d spatial axes", cnt, (int)win.k);
    for (int32_t i = 0; i < win.k; i++) win.kernel[i] = ks ? shape_known(ks[i]) : w.dims[i + 2];
    TSR_TRY(read_window(n, &win));
    out.rank = rank;
    out.dims[0] = x.dims[0];
    out.dims[1] = shape_dim_mul(w.dims[1], shape_known(group));
    const int64_t *os = shape_attr_ints(n, "output_shape", &cnt);
    if (os) {
        /* Either the spatial dims or the whole shape. */
        if (cnt != (size_t)win.k && cnt != (size_t)rank)
            return shape_err(n, "output_shape has %zu entries for %d spatial axes", cnt, (int)win.k);
        const int64_t *sp = os + (cnt == (size_t)rank ? 2 : 0);
        for (int32_t i = 0; i < win.k; i++) out.dims[i + 2] = shape_known(sp[i]);
        return shape_set_out(c, n, 0, elem, &out);
    }
    size_t ocnt = 0;
    const int64_t *op = shape_attr_ints(n, "output_padding", &ocnt);
    if (op && ocnt != (size_t)win.k)
        return shape_err(n, "output_padding has %zu entries for %d spatial axes", ocnt, (int)win.k);
    bool same = !strcmp(win.auto_pad, "SAME_UPPER") || !strcmp(win.auto_pad, "SAME_LOWER");
    for (int32_t i = 0; i < win.k; i++) {
        shape_dim in = x.dims[i + 2];
        out.dims[i + 2] = shape_unknown();
        if (!shape_is_known(in)) continue;
        /* in, strides, dilations and pads are bounded (< 2^56, <= 2^31);
         * kernel and output_padding are checked here, the sum in 128 bits */
        if (same) {
            int64_t grown;
            if (!__builtin_mul_overflow(in.value, win.strides[i], &grown)) out.dims[i + 2] = shape_known(grown);
            continue;
        }
        if (!shape_is_known(win.kernel[i])) continue;
        int64_t k = win.kernel[i].value, pad_out = op ? op[i] : 0;
        if (k < 1 || k > (INT64_C(1) << 31) || pad_out < 0 || pad_out > (INT64_C(1) << 31))
            return shape_err(n, "kernel %lld, output_padding %lld on spatial axis %d", (long long)k, (long long)pad_out,
                             (int)i);
        int64_t pads = strcmp(win.auto_pad, "VALID") ? win.pads[i] + win.pads[i + win.k] : 0;
        __int128 wide =
            (__int128)win.strides[i] * (in.value - 1) + pad_out + (__int128)(k - 1) * win.dilations[i] + 1 - pads;
        if (wide < 0 || wide > IR_MAX_ELEMENTS)
            return shape_err(n, "spatial axis %d would have length %s", (int)i, wide < 0 ? "below 0" : "above 2^56");
        int64_t o = (int64_t)wide;
        out.dims[i + 2] = shape_known(o);
    }
    return shape_set_out(c, n, 0, elem, &out);
}

/* MaxPool, AveragePool, LpPool; MaxPool's second output is int64 Indices. */
static tsr_status *rule_pool(shape_ctx *c, const ir_node *n) {
    shape_dims x, out;
    shape_in_shape(c, n, 0, &x);
    int32_t elem = shape_in_elem(c, n, 0);
    size_t cnt;
    const int64_t *ks = shape_attr_ints(n, "kernel_shape", &cnt);
    if (x.rank < 0 && ks) shape_dims_rank(&x, (int32_t)cnt + 2);
    if (x.rank < 0) {
        TSR_TRY(shape_set_out(c, n, 0, elem, NULL));
        return shape_set_out_ex(c, n, 1, TSR_INT64, NULL, SHAPE_ELEM_CERTAIN);
    }
    if (x.rank < 3) return shape_err(n, "input of rank %d; need at least 3", (int)x.rank);
    window win;
    win.k = x.rank - 2;
    if (!ks) return shape_err(n, "no kernel_shape");
    if (cnt != (size_t)win.k) return shape_err(n, "kernel_shape has %zu entries for %d spatial axes", cnt, (int)win.k);
    for (int32_t i = 0; i < win.k; i++) win.kernel[i] = shape_known(ks[i]);
    TSR_TRY(read_window(n, &win));
    out.rank = x.rank;
    out.dims[0] = x.dims[0];
    out.dims[1] = x.dims[1];
    for (int32_t i = 0; i < win.k; i++) TSR_TRY(window_out(n, &win, i, x.dims[i + 2], &out.dims[i + 2]));
    TSR_TRY(shape_set_out(c, n, 0, elem, &out));
    return shape_set_out_ex(c, n, 1, TSR_INT64, &out, SHAPE_ELEM_CERTAIN);
}

/* GlobalAveragePool, GlobalMaxPool, GlobalLpPool: spatial dims become 1. */
tsr_status *shape_rule_pool(shape_ctx *c, const ir_node *n) { return rule_pool(c, n); }

static tsr_status *rule_global_pool(shape_ctx *c, const ir_node *n) {
    shape_dims x;
    shape_in_shape(c, n, 0, &x);
    if (x.rank >= 0 && x.rank < 2) return shape_err(n, "input of rank %d; need at least 2", (int)x.rank);
    for (int32_t i = 2; i < x.rank; i++) x.dims[i] = shape_known(1);
    return shape_set_out(c, n, 0, shape_in_elem(c, n, 0), &x);
}

tsr_status *shape_rule_global_pool(shape_ctx *c, const ir_node *n) { return rule_global_pool(c, n); }

/* ------------------------------------------------------------------------ */
/* Normalisation                                                             */

static tsr_status *rule_batch_norm(shape_ctx *c, const ir_node *n) {
    shape_dims x, ch;
    shape_in_shape(c, n, 0, &x);
    TSR_TRY(shape_set_out(c, n, 0, shape_in_elem(c, n, 0), &x));
    /* The optional outputs (running or saved statistics) are per channel. */
    ch.rank = 1;
    ch.dims[0] = x.rank >= 2 ? x.dims[1] : shape_unknown();
    int32_t stat_elem = shape_in_elem(c, n, 3);
    if (!stat_elem) stat_elem = shape_in_elem(c, n, 1);
    for (size_t i = 1; i < n->n_outputs; i++) TSR_TRY(shape_set_out(c, n, i, stat_elem, &ch));
    return NULL;
}

/* LayerNormalization: Y like X; Mean and InvStdDev keep the axes before
 * `axis` and are 1 from there on, typed by stash_type. */
static tsr_status *rule_layer_norm(shape_ctx *c, const ir_node *n) {
    shape_dims x;
    shape_in_shape(c, n, 0, &x);
    TSR_TRY(shape_set_out(c, n, 0, shape_in_elem(c, n, 0), &x));
    int32_t stash = (int32_t)shape_attr_int(n, "stash_type", TSR_FLOAT);
    if (x.rank >= 0) {
        int32_t axis;
        if (!shape_axis(shape_attr_int(n, "axis", -1), x.rank, &axis))
            return shape_err(n, "axis %lld out of range for rank %d", (long long)shape_attr_int(n, "axis", -1),
                             (int)x.rank);
        for (int32_t i = axis; i < x.rank; i++) x.dims[i] = shape_known(1);
    }
    TSR_TRY(shape_set_out(c, n, 1, stash, &x));
    return shape_set_out(c, n, 2, stash, &x);
}

/* Softmax and friends: like the input; check the axis. */
static tsr_status *rule_softmax(shape_ctx *c, const ir_node *n) {
    shape_dims x;
    shape_in_shape(c, n, 0, &x);
    int64_t axis = shape_attr_int(n, "axis", shape_opset(n) >= 13 ? -1 : 1);
    int32_t a;
    if (x.rank > 0 && !shape_axis(axis, x.rank, &a))
        return shape_err(n, "axis %lld out of range for rank %d", (long long)axis, (int)x.rank);
    return shape_set_out(c, n, 0, shape_in_elem(c, n, 0), &x);
}

static tsr_status *rule_same(shape_ctx *c, const ir_node *n) { return shape_same_as_in(c, n, 0, 0); }

/* ------------------------------------------------------------------------ */
/* Matrix products                                                           */

/* numpy matmul of inputs ai and bi into *out. */
static tsr_status *matmul_shape(shape_ctx *c, const ir_node *n, size_t ai, size_t bi, shape_dims *out) {
    shape_dims a, b;
    shape_in_shape(c, n, ai, &a);
    shape_in_shape(c, n, bi, &b);
    if (a.rank < 0 || b.rank < 0) {
        shape_dims_unknown(out);
        return NULL;
    }
    if (a.rank == 0 || b.rank == 0) return shape_err(n, "scalar operand");
    bool a1 = a.rank == 1, b1 = b.rank == 1;
    /* 1-D operands become matrices and the added axis goes again after. */
    if (a1) {
        a.dims[1] = a.dims[0];
        a.dims[0] = shape_known(1);
        a.rank = 2;
    }
    if (b1) {
        b.dims[1] = shape_known(1);
        b.rank = 2;
    }
    shape_dim k1 = a.dims[a.rank - 1], k2 = b.dims[b.rank - 2];
    if (shape_is_known(k1) && shape_is_known(k2) && k1.value != k2.value)
        return shape_err(n, "inner dimensions %lld and %lld differ", (long long)k1.value, (long long)k2.value);
    shape_dims ba = a, bb = b;
    ba.rank = a.rank - 2;
    bb.rank = b.rank - 2;
    TSR_TRY(shape_broadcast(c, n, &ba, &bb, out));
    if (!a1) out->dims[out->rank++] = a.dims[a.rank - 2];
    if (!b1) out->dims[out->rank++] = b.dims[b.rank - 1];
    return NULL;
}

static tsr_status *rule_matmul(shape_ctx *c, const ir_node *n) {
    shape_dims s;
    TSR_TRY(matmul_shape(c, n, 0, 1, &s));
    int32_t elem = shape_in_elem(c, n, 0);
    if (!elem) elem = shape_in_elem(c, n, 1);
    return shape_set_out(c, n, 0, elem, &s);
}

static tsr_status *rule_matmul_integer(shape_ctx *c, const ir_node *n) {
    shape_dims s;
    TSR_TRY(matmul_shape(c, n, 0, 1, &s));
    return shape_set_out_ex(c, n, 0, TSR_INT32, &s, SHAPE_ELEM_CERTAIN);
}

static tsr_status *rule_qlinear_matmul(shape_ctx *c, const ir_node *n) {
    shape_dims s;
    TSR_TRY(matmul_shape(c, n, 0, 3, &s));
    return shape_set_out(c, n, 0, shape_in_elem(c, n, 7), &s);
}

static tsr_status *rule_gemm(shape_ctx *c, const ir_node *n) {
    shape_dims a, b, out;
    shape_in_shape(c, n, 0, &a);
    shape_in_shape(c, n, 1, &b);
    int32_t elem = shape_in_elem(c, n, 0);
    if (!elem) elem = shape_in_elem(c, n, 1);
    if ((a.rank >= 0 && a.rank != 2) || (b.rank >= 0 && b.rank != 2))
        return shape_err(n, "operands of rank %d and %d; Gemm needs matrices", (int)a.rank, (int)b.rank);
    if (a.rank < 0) shape_dims_rank(&a, 2);
    if (b.rank < 0) shape_dims_rank(&b, 2);
    bool ta = shape_attr_int(n, "transA", 0) != 0, tb = shape_attr_int(n, "transB", 0) != 0;
    shape_dim m = a.dims[ta ? 1 : 0], ka = a.dims[ta ? 0 : 1];
    shape_dim kb = b.dims[tb ? 1 : 0], nn = b.dims[tb ? 0 : 1];
    if (shape_is_known(ka) && shape_is_known(kb) && ka.value != kb.value)
        return shape_err(n, "inner dimensions %lld and %lld differ", (long long)ka.value, (long long)kb.value);
    out.rank = 2;
    out.dims[0] = m;
    out.dims[1] = nn;
    /* C must broadcast to the result; a clash there is an error too. */
    if (shape_has_in(n, 2)) {
        shape_dims cc, tmp;
        shape_in_shape(c, n, 2, &cc);
        TSR_TRY(shape_broadcast(c, n, &out, &cc, &tmp));
        if (tmp.rank == 2) {
            /* C may name a dim A and B leave unknown. */
            for (int32_t i = 0; i < 2; i++)
                if (!shape_is_known(out.dims[i]) && !out.dims[i].symbol) out.dims[i] = tmp.dims[i];
        }
    }
    return shape_set_out(c, n, 0, elem, &out);
}

/* Einsum: labels name dims; "..." broadcasts. Without "->" the output is the
 * ellipsis dims then the labels used once, in alphabetical order. */
static tsr_status *rule_einsum(shape_ctx *c, const ir_node *n) {
    const char *eq = shape_attr_str(n, "equation", NULL);
    int32_t elem = shape_in_elem(c, n, 0);
    if (!eq) return shape_set_out(c, n, 0, elem, NULL);
    shape_dim label[128];
    int count[128] = {0};
    bool seen[128] = {false};
    shape_dims ell;
    bool have_ell = false;
    ell.rank = 0;
    const char *p = eq;
    size_t term = 0;
    for (;; term++) {
        while (*p == ' ') p++;
        shape_dims x;
        shape_in_shape(c, n, term, &x);
        if (term >= n->n_inputs) return shape_err(n, "equation '%s' has more operands than inputs", eq);
        /* Count labels of this term first to size the ellipsis. */
        int nlab = 0;
        bool dots = false;
        const char *q = p;
        for (; *q && *q != ',' && *q != '-'; q++) {
            if (*q == '.') {
                if (q[1] != '.' || q[2] != '.') return shape_err(n, "bad equation '%s'", eq);
                dots = true;
                q += 2;
            } else if ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z')) {
                nlab++;
            } else if (*q != ' ') {
                return shape_err(n, "bad character in equation '%s'", eq);
            }
        }
        int32_t ell_rank = x.rank >= 0 ? x.rank - nlab : -1;
        if (x.rank >= 0 && (ell_rank < 0 || (!dots && ell_rank != 0)))
            return shape_err(n, "operand %zu of rank %d doesn't match '%.*s'", term, (int)x.rank, (int)(q - p), p);
        int32_t d = 0;
        for (; p < q; p++) {
            if (*p == '.') {
                p += 2;
                if (x.rank < 0) {
                    have_ell = true;
                    ell.rank = -1;
                    continue;
                }
                shape_dims e;
                e.rank = ell_rank;
                for (int32_t i = 0; i < ell_rank; i++) e.dims[i] = x.dims[d + i];
                d += ell_rank;
                if (!have_ell) ell = e;
                else if (ell.rank >= 0) TSR_TRY(shape_broadcast(c, n, &ell, &e, &ell));
                have_ell = true;
            } else if (*p != ' ') {
                int l = (unsigned char)*p;
                shape_dim dim = x.rank >= 0 ? x.dims[d++] : shape_unknown();
                if (!seen[l]) {
                    label[l] = dim;
                    seen[l] = true;
                } else if (!shape_dim_unify(label[l], dim, &label[l])) {
                    /* A label of length 1 may broadcast against another. */
                    if (label[l].value == 1) label[l] = dim;
                    else if (dim.value != 1)
                        return shape_err(n, "label '%c' is %lld in one operand and %lld in another", *p,
                                         (long long)label[l].value, (long long)dim.value);
                }
                count[l]++;
            }
        }
        if (*p == ',') {
            p++;
            continue;
        }
        break;
    }
    shape_dims out;
    out.rank = 0;
    if (*p == '-') {
        if (p[1] != '>') return shape_err(n, "bad equation '%s'", eq);
        for (p += 2; *p; p++) {
            if (*p == ' ') continue;
            if (*p == '.') {
                /* "..." whole, or p would step past the terminator */
                if (p[1] != '.' || p[2] != '.') return shape_err(n, "bad equation '%s'", eq);
                p += 2;
                if (ell.rank < 0) return shape_set_out(c, n, 0, elem, NULL);
                for (int32_t i = 0; i < ell.rank && out.rank < IR_MAX_RANK; i++) out.dims[out.rank++] = ell.dims[i];
                continue;
            }
            int l = (unsigned char)*p;
            if (l >= 128 || !seen[l]) return shape_err(n, "output label '%c' is not in any operand", *p);
            if (out.rank >= IR_MAX_RANK) return shape_err(n, "output rank over %d", IR_MAX_RANK);
            out.dims[out.rank++] = label[l];
        }
    } else {
        if (ell.rank < 0) return shape_set_out(c, n, 0, elem, NULL);
        for (int32_t i = 0; i < ell.rank; i++) out.dims[out.rank++] = ell.dims[i];
        for (int l = 0; l < 128; l++)
            if (count[l] == 1 && out.rank < IR_MAX_RANK) out.dims[out.rank++] = label[l];
    }
    return shape_set_out(c, n, 0, elem, &out);
}

const shape_op shape_ops_nn[] = {
    {"Conv", 1, rule_conv},
    {"ConvInteger", 10, rule_conv_integer},
    {"QLinearConv", 10, rule_qlinear_conv},
    {"ConvTranspose", 1, rule_conv_transpose},
    /* X and W as Conv's; the offsets only move where the kernel samples */
    {"DeformConv", 19, rule_conv},
    {"MaxPool", 1, rule_pool},
    {"AveragePool", 1, rule_pool},
    {"LpPool", 1, rule_pool},
    {"GlobalAveragePool", 1, rule_global_pool},
    {"GlobalMaxPool", 1, rule_global_pool},
    {"GlobalLpPool", 1, rule_global_pool},
    {"BatchNormalization", 1, rule_batch_norm},
    {"InstanceNormalization", 1, rule_same},
    {"GroupNormalization", 18, rule_same},
    {"LayerNormalization", 17, rule_layer_norm},
    {"RMSNormalization", 23, rule_same},
    {"LpNormalization", 1, rule_same},
    {"MeanVarianceNormalization", 9, rule_same},
    {"LRN", 1, rule_same},
    {"Softmax", 1, rule_softmax},
    {"LogSoftmax", 1, rule_softmax},
    {"Hardmax", 1, rule_softmax},
    {"MatMul", 1, rule_matmul},
    {"MatMulInteger", 10, rule_matmul_integer},
    {"QLinearMatMul", 10, rule_qlinear_matmul},
    {"Gemm", 1, rule_gemm},
    {"Einsum", 12, rule_einsum},
};
const size_t shape_ops_nn_count = sizeof shape_ops_nn / sizeof shape_ops_nn[0];
