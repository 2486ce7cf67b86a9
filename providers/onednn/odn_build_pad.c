/* Pad as a C loop over plain memory (oneDNN has no pad primitive). A Pad
 * the load-time fold cannot take into a Conv (reflect padding before every
 * convolution of a style-transfer net, torch's ReflectionPad2d; a Pad read
 * by something else) otherwise splits the piece and runs on the reference
 * provider's generic kernel, 4.5 ms for a 32x262x262 map here.
 *
 * Each output row (every dim but the last) maps to one input row, or to
 * none in constant mode; within the row the part that lies inside the input
 * is one memcpy and the borders are filled by the mode's rule. Negative
 * pads crop, as ONNX allows. */
#include <string.h>

#include "odn.h"

enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

typedef struct pad_loop {
    int mode;
    int32_t rank;
    int64_t in[ODN_MAX_RANK], out[ODN_MAX_RANK], begin[ODN_MAX_RANK];
    float value;
} pad_loop;

/* The input index for output index o along a dim of n values, or -1 when
 * it falls outside the input in constant mode. */
static int64_t source_index(int mode, int64_t o, int64_t begin, int64_t n) {
    int64_t i = o - begin;
    if (i >= 0 && i < n) return i;
    switch (mode) {
    case PAD_EDGE: return i < 0 ? 0 : n - 1;
    case PAD_WRAP: return ((i % n) + n) % n;
    case PAD_REFLECT: {
        if (n == 1) return 0;
        int64_t period = 2 * (n - 1);
        i = ((i % period) + period) % period;
        return i < n ? i : period - i;
    }
    default: return -1;
    }
}

static tsr_status *run_pad(const void *vctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const pad_loop *l = vctx;
    void *hx = NULL, *hy = NULL;
    dnnl_memory_get_data_handle(src, &hx);
    dnnl_memory_get_data_handle(dst, &hy);
    const float *x = hx;
    float *y = hy;
    int32_t r = l->rank, last = r - 1;
    int64_t rows = 1;
    for (int32_t d = 0; d < last; d++) rows *= l->out[d];
    if (rows && l->out[last] && (!x || !y)) return odn_host->status_new(TSR_ERR_PROVIDER, "onednn: Pad memory");
    int64_t width = l->out[last], n = l->in[last], b = l->begin[last];
    /* the span of the output row copied straight from the input row */
    int64_t lo = b > 0 ? b : 0, hi = b + n < width ? b + n : width;
#pragma omp parallel for if (rows * width > 65536) schedule(static)
    for (int64_t row = 0; row < rows; row++) {
        float *yr = y + row * width;
        int64_t in_row = 0, rem = row;
        bool inside = true;
        for (int32_t d = last - 1; d >= 0; d--) {
            int64_t o = rem % l->out[d];
            rem /= l->out[d];
            int64_t i = source_index(l->mode, o, l->begin[d], l->in[d]);
            if (i < 0) inside = false;
            int64_t stride = 1;
            for (int32_t e = d + 1; e < last; e++) stride *= l->in[e];
            in_row += i * stride;
        }
        if (!inside) {
            for (int64_t j = 0; j < width; j++) yr[j] = l->value;
            continue;
        }
        const float *xr = x + in_row * n;
        for (int64_t j = 0; j < lo && j < width; j++) {
            int64_t i = source_index(l->mode, j, b, n);
            yr[j] = i < 0 ? l->value : xr[i];
        }
        if (hi > lo) memcpy(yr + lo, xr + (lo - b), (size_t)(hi - lo) * sizeof *yr);
        for (int64_t j = hi > lo ? hi : lo; j < width; j++) {
            int64_t i = source_index(l->mode, j, b, n);
            yr[j] = i < 0 ? l->value : xr[i];
        }
    }
    return NULL;
}

/* The Pad's mode, or -1 when not mapped. */
static int pad_mode(const tsr_node *n) {
    if (odn_attr_string_is(n, "mode", "constant", true)) return PAD_CONSTANT;
    if (odn_attr_string_is(n, "mode", "reflect", false)) return PAD_REFLECT;
    if (odn_attr_string_is(n, "mode", "edge", false)) return PAD_EDGE;
    if (odn_attr_string_is(n, "mode", "wrap", false)) return PAD_WRAP;
    return -1;
}

/* pads as [begin..., end...] over every dim of a rank-r input; false when
 * they are not constants or do not fit the rank. */
static bool full_pads(const tsr_node *n, int32_t r, int64_t *pads) {
    int64_t raw[2 * ODN_MAX_RANK], axes[ODN_MAX_RANK];
    memset(pads, 0, sizeof(int64_t) * 2 * (size_t)r);
    if (odn_host->node_opset(n) < 11) {
        size_t c;
        const int64_t *a = odn_attr_ints(n, "pads", &c);
        if (!a || c != 2 * (size_t)r) return false;
        memcpy(pads, a, c * sizeof *a);
        return true;
    }
    int64_t np = odn_const_ints(n, 1, raw, 2 * ODN_MAX_RANK);
    bool has_axes = odn_host->node_input_count(n) > 3 && odn_host->node_input(n, 3);
    int64_t na = has_axes ? odn_const_ints(n, 3, axes, ODN_MAX_RANK) : r;
    if (np < 0 || na < 0 || np != 2 * na) return false;
    bool seen[ODN_MAX_RANK] = {false};
    for (int64_t k = 0; k < na; k++) {
        int64_t ax = has_axes ? axes[k] : k;
        if (ax < -r || ax >= r) return false;
        if (ax < 0) ax += r;
        if (seen[ax]) return false;
        seen[ax] = true;
        pads[ax] = raw[k];
        pads[r + ax] = raw[na + k];
    }
    return true;
}

int odn_pad_check(const tsr_node *n, char *why, size_t size) {
    if (pad_mode(n) < 0) return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "Pad mode not mapped");
    int32_t r = odn_host->value_rank(odn_host->node_input(n, 0));
    if (r < 1 || r > ODN_MAX_RANK) return odn_decline(why, size, TSR_DECLINE_SHAPE, "Pad of a rank %d input", (int)r);
    int64_t pads[2 * ODN_MAX_RANK];
    if (!full_pads(n, r, pads)) return odn_decline(why, size, TSR_DECLINE_OTHER, "pads (or axes) are not constants");
    const tsr_value_info *cv = odn_host->node_input_count(n) > 2 ? odn_host->node_input(n, 2) : NULL;
    if (cv) {
        const tsr_tensor *t = odn_host->value_constant(cv);
        if (!t || t->nbytes != sizeof(float) || (t->elem_type != TSR_FLOAT))
            return odn_decline(why, size, TSR_DECLINE_OTHER, "constant_value is not a constant float32 scalar");
    }
    return 0;
}

tsr_status *odn_build_pad(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *x = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!x || !y || !x->produced || x->rank < 1) return odn_node_error(n, TSR_ERR_PROVIDER, "internal: Pad inputs");
    pad_loop *l = odn_plan_alloc(p, sizeof *l);
    if (!l) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    memset(l, 0, sizeof *l);
    l->mode = pad_mode(n);
    l->rank = x->rank;
    int64_t pads[2 * ODN_MAX_RANK];
    if (l->mode < 0 || !full_pads(n, x->rank, pads))
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: Pad attributes");
    const tsr_value_info *cv = odn_host->node_input_count(n) > 2 ? odn_host->node_input(n, 2) : NULL;
    const tsr_tensor *ct = cv ? odn_host->value_constant(cv) : NULL;
    l->value = ct ? *(const float *)ct->data : odn_host->node_opset(n) < 11 ? odn_attr_float(n, "value", 0.0f) : 0.0f;
    for (int32_t d = 0; d < x->rank; d++) {
        l->in[d] = x->dims[d];
        l->begin[d] = pads[d];
        int64_t grown;
        if (__builtin_add_overflow(x->dims[d], pads[d], &grown) ||
            __builtin_add_overflow(grown, pads[x->rank + d], &l->out[d]))
            return odn_node_error(n, TSR_ERR_INVALID_MODEL, "pads of dim %d overflow", (int)d);
        if (l->out[d] < 0) return odn_node_error(n, TSR_ERR_INVALID_MODEL, "pads crop dim %d below zero", (int)d);
        /* reflect, edge and wrap read the input even where it is cropped
         * to nothing: an empty input dim has nothing to read */
        if (l->mode != PAD_CONSTANT && l->in[d] == 0 && l->out[d] > 0)
            return odn_node_error(n, TSR_ERR_INVALID_MODEL, "cannot pad an empty dim %d in this mode", (int)d);
    }
    dnnl_memory_t src;
    tsr_status *s = odn_plan_plain_mem(p, x, n, &src);
    if (!s) s = odn_plan_define(p, y, x->rank, l->out, NULL, n);
    return s ? s : odn_plan_add_loop(p, run_pad, l, src, y->mem, n);
}
