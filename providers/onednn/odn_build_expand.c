/* Expand (ONNX's broadcast to a given shape) of float32 or one-byte data
 * (bool masks, uint8, int8) as a C loop over plain memories. Exporters
 * write it on attention masks, DistilBERT's mask.expand_as(scores) with
 * the shape read off the scores: on the reference provider that Expand
 * split the oneDNN piece around every attention (a path leaving the piece
 * and coming back). The attention step reads such a mask unexpanded,
 * through broadcast strides (odn_build_attention.c), and skips the copy. */
#include <string.h>

#include "odn.h"

typedef struct expand_loop {
    int32_t rank;
    int64_t out[ODN_MAX_RANK], st[ODN_MAX_RANK]; /* output dims; input element strides, 0 where broadcast */
    size_t esize;
} expand_loop;

static bool byte_type(int32_t t) { return t == TSR_BOOL || t == TSR_UINT8 || t == TSR_INT8; }

int odn_claim_expand(const tsr_node *n, char *why, size_t size) {
    const tsr_value_info *x = odn_input(n, 0), *shape = odn_input(n, 1), *y = odn_host->node_output(n, 0);
    if (!x || !shape || !y) return odn_decline(why, size, TSR_DECLINE_OTHER, "Expand without its two inputs");
    int32_t t = odn_host->value_elem_type(x);
    if ((t != TSR_FLOAT && !byte_type(t)) || odn_host->value_elem_type(y) != t)
        return odn_decline(why, size, TSR_DECLINE_TYPE, "Expand of other than float32 or one-byte data (type %d)",
                           (int)t);
    int32_t rx = odn_host->value_rank(x), ry = odn_host->value_rank(y);
    if (rx < 0 || rx > ODN_MAX_RANK || ry > ODN_MAX_RANK)
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "rank unknown or above %d", ODN_MAX_RANK);
    /* the shape: a constant, or int64 the plan reads when it is built */
    int64_t len = odn_host->value_rank(shape) == 1 ? odn_host->value_dim(shape, 0) : -1;
    if (odn_host->value_elem_type(shape) != TSR_INT64 || len < 0 || len > ODN_MAX_RANK)
        return odn_decline(why, size, TSR_DECLINE_OTHER, "shape is not a 1-D int64 of known length at most %d",
                           ODN_MAX_RANK);
    return 0;
}

/* ONNX's bidirectional broadcast of dims x (rank rx) and shape s (rank rs):
 * out and its rank; false when they do not broadcast. */
bool odn_expand_dims(const int64_t *x, int32_t rx, const int64_t *s, int32_t rs, int64_t *out, int32_t *ro) {
    int32_t r = rx > rs ? rx : rs;
    if (r > ODN_MAX_RANK) return false;
    for (int32_t i = 0; i < r; i++) {
        int64_t a = i < r - rx ? 1 : x[i - (r - rx)], b = i < r - rs ? 1 : s[i - (r - rs)];
        if (a < 0 || b < 0 || (a != b && a != 1 && b != 1)) return false;
        out[i] = a == 1 ? b : a;
    }
    *ro = r;
    return true;
}

static const void *data_of(dnnl_memory_t m) {
    void *h = NULL;
    dnnl_memory_get_data_handle(m, &h);
    return h;
}

static tsr_status *run_expand(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const expand_loop *l = ctx;
    const char *x = data_of(src);
    char *y = (char *)data_of(dst);
    int32_t r = l->rank, last = r - 1;
    int64_t inner = l->out[last], rows = odn_numel(last, l->out);
    if (rows == 0 || inner == 0) return NULL;
    if (!x || !y) return odn_host->status_new(TSR_ERR_PROVIDER, "onednn: Expand memory");
    size_t es = l->esize, row_bytes = (size_t)inner * es;
#pragma omp parallel for if (rows * inner > 65536) schedule(static)
    for (int64_t row = 0; row < rows; row++) {
        int64_t off = 0, rem = row;
        for (int32_t d = last - 1; d >= 0; d--) {
            off += rem % l->out[d] * l->st[d];
            rem /= l->out[d];
        }
        const char *xr = x + (size_t)off * es;
        char *yr = y + (size_t)row * row_bytes;
        if (l->st[last]) memcpy(yr, xr, row_bytes);
        else if (es == 1) memset(yr, xr[0], row_bytes);
        else
            for (int64_t j = 0; j < inner; j++) memcpy(yr + (size_t)j * es, xr, es);
    }
    return NULL;
}

tsr_status *odn_build_expand(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *x = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    int64_t count;
    const int64_t *shape = odn_plan_i64(p, odn_host->node_input(n, 1), &count);
    if (!x || !y || !x->produced) return odn_node_error(n, TSR_ERR_PROVIDER, "internal: Expand inputs");
    if (!shape || count > ODN_MAX_RANK)
        return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "shape must be a 1-D int64 of at most %d values, known when "
                                                        "the plan is built", ODN_MAX_RANK);
    expand_loop *l = odn_plan_alloc(p, sizeof *l);
    if (!l) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    memset(l, 0, sizeof *l);
    if (!odn_expand_dims(x->dims, x->rank, shape, (int32_t)count, l->out, &l->rank))
        return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "input and shape do not broadcast");
    bool bytes = byte_type(x->elem_type);
    l->esize = bytes ? 1 : sizeof(float);
    int64_t s = 1;
    for (int32_t i = l->rank - 1; i >= 0; i--) {
        int32_t k = i - (l->rank - x->rank);
        int64_t d = k < 0 ? 1 : x->dims[k];
        l->st[i] = d == 1 ? 0 : s;
        s *= d;
    }
    int32_t r0 = l->rank;
    if (r0 == 0) { /* a scalar to a scalar: one element */
        l->rank = 1;
        l->out[0] = 1;
        l->st[0] = 1;
    }
    dnnl_memory_t src;
    tsr_status *e = x->elem_type == TSR_BOOL ? odn_bool_mem(p, x, n, &src) : odn_plan_plain_mem(p, x, n, &src);
    if (!e) e = odn_plan_define(p, y, r0, l->out, NULL, n);
    return e ? e : odn_plan_add_loop(p, run_expand, l, src, y->mem, n);
}
