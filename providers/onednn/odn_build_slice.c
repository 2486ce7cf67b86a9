/* Slice of float data (or one-byte data: GPT-2's causal mask is a Slice of
 * a bool buffer) as a C loop over plain memory (constant starts, ends,
 * axes and steps). Exporters write Slice on activations in the middle of
 * fused work: rotate_half in every rotary attention (x[..., :d/2],
 * x[..., d/2:]), YOLO heads, chunked projections; on the reference
 * provider each one split the oneDNN piece. Each output row maps to one
 * input row; along the last axis the slice is one memcpy when its step is
 * 1. The bounds follow ONNX (Python's slicing): negative starts and ends
 * count from the end, then clamp to [0, dim] (step > 0) or [-1, dim - 1]
 * (step < 0). */
#include <string.h>

#include "odn.h"

typedef struct slice_loop {
    int32_t rank;
    int64_t in[ODN_MAX_RANK], out[ODN_MAX_RANK], start[ODN_MAX_RANK], step[ODN_MAX_RANK];
    size_t esize; /* 4 (float32), or 1 (bool, uint8, int8: a causal mask's rows) */
} slice_loop;

static tsr_status *run_slice(const void *vctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const slice_loop *l = vctx;
    void *hx = NULL, *hy = NULL;
    dnnl_memory_get_data_handle(src, &hx);
    dnnl_memory_get_data_handle(dst, &hy);
    const char *x = hx;
    char *y = hy;
    size_t es = l->esize;
    int32_t r = l->rank, last = r - 1;
    int64_t rows = 1;
    for (int32_t d = 0; d < last; d++) rows *= l->out[d];
    int64_t width = l->out[last];
    if (rows == 0 || width == 0) return NULL;
    if (!x || !y) return odn_host->status_new(TSR_ERR_PROVIDER, "onednn: Slice memory");
    int64_t s0 = l->start[last], st = l->step[last];
#pragma omp parallel for if (rows * width > 65536) schedule(static)
    for (int64_t row = 0; row < rows; row++) {
        int64_t in_row = 0, rem = row, stride = 1;
        for (int32_t d = last - 1; d >= 0; d--) {
            int64_t o = rem % l->out[d];
            rem /= l->out[d];
            in_row += (l->start[d] + o * l->step[d]) * stride;
            stride *= l->in[d];
        }
        const char *xr = x + (size_t)(in_row * l->in[last]) * es;
        char *yr = y + (size_t)(row * width) * es;
        if (st == 1) memcpy(yr, xr + (size_t)s0 * es, es * (size_t)width);
        else if (es == sizeof(float))
            for (int64_t j = 0; j < width; j++) memcpy(yr + (size_t)j * es, xr + (size_t)(s0 + j * st) * es, es);
        else
            for (int64_t j = 0; j < width; j++) yr[j] = xr[s0 + j * st];
    }
    return NULL;
}

/* Input k's ints: a constant's, or, while plan p is built (p not NULL),
 * the int64 values the plan computed (shape arithmetic in the piece) or was
 * given; -1 when neither. */
static int64_t slice_ints(odn_plan *p, const tsr_node *n, size_t k, int64_t *v) {
    int64_t c = odn_const_ints(n, k, v, ODN_MAX_RANK);
    if (c >= 0 || !p) return c;
    int64_t count;
    const int64_t *d = odn_plan_i64(p, odn_input(n, k), &count);
    if (!d || count > ODN_MAX_RANK) return -1;
    memcpy(v, d, sizeof(int64_t) * (size_t)count);
    return count;
}

/* starts, ends, axes (normalised, distinct) and steps of n for a rank-r
 * input: false when they are not known (constants, or while plan p is
 * built its computed values) or do not fit. */
static bool slice_params(odn_plan *p, const tsr_node *n, int32_t r, int64_t *count, int64_t *starts, int64_t *ends,
                         int64_t *axes, int64_t *steps) {
    int64_t c;
    if (odn_host->node_opset(n) < 10) {
        size_t cs = 0, ce = 0, ca = 0;
        const int64_t *s = odn_attr_ints(n, "starts", &cs), *e = odn_attr_ints(n, "ends", &ce);
        const int64_t *a = odn_attr_ints(n, "axes", &ca);
        if (!s || !e || cs != ce || cs > (size_t)r || (a && ca != cs)) return false;
        c = (int64_t)cs;
        for (int64_t i = 0; i < c; i++) starts[i] = s[i], ends[i] = e[i], axes[i] = a ? a[i] : i, steps[i] = 1;
    } else {
        c = slice_ints(p, n, 1, starts);
        if (c < 0 || slice_ints(p, n, 2, ends) != c) return false;
        bool has_axes = odn_host->node_input_count(n) > 3 && odn_host->node_input(n, 3);
        bool has_steps = odn_host->node_input_count(n) > 4 && odn_host->node_input(n, 4);
        if (has_axes && slice_ints(p, n, 3, axes) != c) return false;
        if (has_steps && slice_ints(p, n, 4, steps) != c) return false;
        for (int64_t i = 0; i < c; i++) {
            if (!has_axes) axes[i] = i;
            if (!has_steps) steps[i] = 1;
        }
    }
    bool seen[ODN_MAX_RANK] = {false};
    for (int64_t i = 0; i < c; i++) {
        if (axes[i] < -r || axes[i] >= r || steps[i] == 0) return false;
        if (steps[i] == INT64_MIN) steps[i] = -INT64_MAX; /* so -step exists; the length is the same */
        if (axes[i] < 0) axes[i] += r;
        if (seen[axes[i]]) return false;
        seen[axes[i]] = true;
    }
    *count = c;
    return true;
}

bool odn_slice_byte_type(int32_t t) { return t == TSR_BOOL || t == TSR_UINT8 || t == TSR_INT8; }

int odn_slice_check(const tsr_node *n, char *why, size_t size) {
    int32_t r = odn_host->value_rank(odn_host->node_input(n, 0));
    if (r < 1 || r > ODN_MAX_RANK) return odn_decline(why, size, TSR_DECLINE_SHAPE, "Slice of a rank %d input", (int)r);
    int64_t c, s[ODN_MAX_RANK], e[ODN_MAX_RANK], a[ODN_MAX_RANK], st[ODN_MAX_RANK];
    if (slice_params(NULL, n, r, &c, s, e, a, st)) return 0;
    /* or int64 computed in the piece (GPT-2 slices its causal mask to the
     * sequence lengths), checked when the plan is built */
    bool computed = odn_host->node_opset(n) >= 10 && odn_host->node_input_count(n) >= 3;
    for (size_t k = 1; computed && k < odn_host->node_input_count(n) && k <= 4; k++) {
        const tsr_value_info *v = odn_host->node_input(n, k);
        int64_t len = v && odn_host->value_rank(v) == 1 ? odn_host->value_dim(v, 0) : -1;
        computed = !v || odn_const_ints(n, k, s, ODN_MAX_RANK) >= 0 ||
            (odn_host->value_elem_type(v) == TSR_INT64 && len >= 0 && len <= r);
    }
    if (!computed)
        return odn_decline(why, size, TSR_DECLINE_OTHER,
                           "starts, ends, axes or steps are not constants or 1-D int64 of known length (or malformed)");
    return 0;
}

/* ONNX's bounds, as Python slices them (and the reference provider): the
 * first index and the length along a dim of d. */
static void bounds(int64_t d, int64_t s, int64_t e, int64_t k, int64_t *first, int64_t *len) {
    if (s < 0) s += d;
    if (e < 0) e += d;
    if (k > 0) {
        s = s < 0 ? 0 : s > d ? d : s;
        e = e < 0 ? 0 : e > d ? d : e;
        *len = e > s ? (e - s - 1) / k + 1 : 0;
    } else {
        s = s < 0 ? -1 : s > d - 1 ? d - 1 : s;
        e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
        *len = s > e ? (s - e - 1) / -k + 1 : 0;
    }
    *first = s;
}

/* The slice `l` over x's channel-blocked layout (`blk` channels innermost,
 * [N, C/blk, spatial..., blk] as plain memory) when it takes whole blocks of
 * the channels, as a TCN's chomp (a time-axis Slice between convolutions)
 * does: the loop then reads and writes the convolutions' own layout, where
 * a plain one cost a reorder either side. False when it does not apply. */
static bool blocked_slice(const slice_loop *l, int64_t blk, slice_loop *b) {
    if (l->rank < 3 || l->rank + 1 > ODN_MAX_RANK || l->in[1] % blk || l->step[1] != 1 || l->start[1] % blk ||
        l->out[1] % blk)
        return false;
    memset(b, 0, sizeof *b);
    b->rank = l->rank + 1;
    b->esize = l->esize;
    for (int32_t d = 0; d < l->rank; d++) {
        b->in[d] = l->in[d];
        b->out[d] = l->out[d];
        b->start[d] = l->start[d];
        b->step[d] = l->step[d];
    }
    b->in[1] /= blk;
    b->out[1] /= blk;
    b->start[1] /= blk;
    b->in[l->rank] = b->out[l->rank] = blk;
    b->step[l->rank] = 1;
    return true;
}

tsr_status *odn_build_slice(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *x = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!x || !y || !x->produced || x->rank < 1) return odn_node_error(n, TSR_ERR_PROVIDER, "internal: Slice inputs");
    slice_loop *l = odn_plan_alloc(p, sizeof *l);
    if (!l) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    memset(l, 0, sizeof *l);
    l->rank = x->rank;
    bool bytes = odn_slice_byte_type(x->elem_type);
    l->esize = bytes ? 1 : sizeof(float);
    int64_t c, s[ODN_MAX_RANK], e[ODN_MAX_RANK], a[ODN_MAX_RANK], st[ODN_MAX_RANK];
    if (!slice_params(p, n, x->rank, &c, s, e, a, st))
        return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "starts, ends, axes or steps unknown when the plan is built, "
                                                        "or out of range");
    for (int32_t d = 0; d < x->rank; d++) {
        l->in[d] = l->out[d] = x->dims[d];
        l->step[d] = 1;
    }
    for (int64_t i = 0; i < c; i++) {
        int32_t d = (int32_t)a[i];
        bounds(x->dims[d], s[i], e[i], st[i], &l->start[d], &l->out[d]);
        l->step[d] = st[i];
    }
    dnnl_format_tag_t tag = odn_layout_tag(x);
    slice_loop *b = odn_plan_alloc(p, sizeof *b);
    if (!b) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    if (!bytes && y->output_index < 0 && x->mem && x->md.data_type == dnnl_f32 && odn_layout_is_blocked(tag) &&
        blocked_slice(l, odn_block(), b)) {
        dnnl_memory_desc_t md;
        dnnl_dims_t od;
        for (int32_t d = 0; d < x->rank; d++) od[d] = l->out[d];
        if (dnnl_memory_desc_init_by_tag(&md, x->rank, od, dnnl_f32, tag) == dnnl_success) {
            tsr_status *bs = odn_plan_define(p, y, x->rank, l->out, &md, n);
            return bs ? bs : odn_plan_add_loop(p, run_slice, b, x->mem, y->mem, n);
        }
    }
    dnnl_memory_t src;
    tsr_status *sst = x->elem_type == TSR_BOOL ? odn_bool_mem(p, x, n, &src) : odn_plan_plain_mem(p, x, n, &src);
    if (!sst) sst = odn_plan_define(p, y, x->rank, l->out, NULL, n);
    return sst ? sst : odn_plan_add_loop(p, run_slice, l, src, y->mem, n);
}
