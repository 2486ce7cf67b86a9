/* Ops that only move data: Reshape (to a constant shape or one computed at
 * run time, read when the plan is built), Flatten and Identity are views of
 * their input's plain buffer (no copy); Transpose is a view with permuted strides,
 * turned into a real copy only by a consumer that needs plain data. Erf,
 * which oneDNN lacks, is a C loop (when not fused into a Gelu post-op). */
#include <math.h>
#include <string.h>

#include "odn.h"
#include "odn_erf.h"

/* Gives `v` the layout `md` over `base`'s buffer; a piece output gets its
 * own (plain) buffer and a copy instead. */
static tsr_status *define_view(odn_plan *p, odn_value *v, int32_t rank, const int64_t *dims,
                               const dnnl_memory_desc_t *md, dnnl_memory_t base, const tsr_node *n) {
    dnnl_memory_t view;
    tsr_status *s = odn_plan_view(p, base, md, n, &view);
    if (s) return s;
    if (v->output_index >= 0) {
        s = odn_plan_define(p, v, rank, dims, NULL, n);
        return s ? s : odn_plan_add_reorder(p, view, md, v->mem, &v->md, n);
    }
    if (rank > ODN_MAX_RANK) return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "rank %d output", (int)rank);
    v->rank = rank;
    memcpy(v->dims, dims, sizeof(int64_t) * (size_t)rank);
    v->md = *md;
    v->mem = view;
    v->is_view = true;
    v->produced = true;
    return NULL;
}

static tsr_status *reshape_to(odn_plan *p, const tsr_node *n, int32_t rank, const int64_t *dims) {
    odn_value *x = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    bool mask = x && x->elem_type == TSR_BOOL; /* bytes, its memory made on first use */
    if (!x || !y || !x->produced || (!x->mem && !mask))
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: reshape inputs");
    if (odn_numel(rank, dims) != odn_numel(x->rank, x->dims))
        return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "new shape has %lld elements, input %lld",
                              (long long)odn_numel(rank, dims), (long long)odn_numel(x->rank, x->dims));
    dnnl_memory_t base;
    tsr_status *s = mask ? odn_bool_mem(p, x, n, &base) : odn_plan_plain_mem(p, x, n, &base);
    dnnl_memory_desc_t md;
    if (!s && odn_plain_md_typed(&md, rank, dims, mask ? dnnl_u8 : dnnl_f32) != dnnl_success)
        s = odn_node_error(n, TSR_ERR_PROVIDER, "reshape layout");
    return s ? s : define_view(p, y, rank, dims, &md, base, n);
}

tsr_status *odn_build_reshape(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    const char *op = odn_host->node_op_type(n);
    odn_value *x = odn_plan_value(p, odn_host->node_input(n, 0));
    if (!x) return odn_node_error(n, TSR_ERR_PROVIDER, "internal: reshape input");
    int64_t dims[ODN_MAX_RANK];
    int32_t rank = x->rank;
    memcpy(dims, x->dims, sizeof dims);
    if (strcmp(op, "Flatten") == 0) {
        int64_t axis = odn_attr_int(n, "axis", 1);
        if (axis < -x->rank || axis > x->rank) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "axis out of range");
        if (axis < 0) axis += x->rank;
        dims[0] = odn_numel((int32_t)axis, x->dims);
        dims[1] = odn_numel(x->rank - (int32_t)axis, x->dims + axis);
        rank = 2;
    } else if (strcmp(op, "Reshape") == 0) {
        /* a constant, or a value input read when the plan is built */
        const tsr_value_info *sv = odn_host->node_input_count(n) > 1 ? odn_host->node_input(n, 1) : NULL;
        odn_value *shape = odn_plan_value(p, sv);
        int64_t count;
        const int64_t *want = odn_plan_i64(p, sv, &count);
        if (!want || (shape && shape->rank != 1) || count > ODN_MAX_RANK)
            return odn_node_error(n, TSR_ERR_NOT_SUPPORTED,
                                  "shape must be a 1-D int64 of at most %d values, constant or a piece input",
                                  ODN_MAX_RANK);
        bool allowzero = odn_attr_int(n, "allowzero", 0) != 0;
        rank = (int32_t)count;
        int infer = -1;
        int64_t known = 1;
        for (int32_t i = 0; i < rank; i++) {
            dims[i] = want[i];
            if (want[i] == 0 && !allowzero) {
                if (i >= x->rank) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "0 copies a dim the input lacks");
                dims[i] = x->dims[i];
            }
            if (dims[i] == -1) {
                if (infer >= 0) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "two -1 dims");
                infer = i;
                continue;
            }
            if (dims[i] < 0) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "negative dim");
            if (dims[i] != 0 && known > INT64_MAX / dims[i])
                return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "size overflows");
            known *= dims[i];
        }
        if (infer >= 0) {
            int64_t total = odn_numel(x->rank, x->dims);
            if (known == 0 || total % known)
                return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "cannot infer the -1 dim");
            dims[infer] = total / known;
        }
    }
    return reshape_to(p, n, rank, dims);
}

tsr_status *odn_build_transpose(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *x = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!x || !y || !x->produced || !x->mem || x->rank < 1)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: transpose inputs");
    bool fused = false;
    tsr_status *fs = p->fuse ? odn_fuse_transposed_softmax(p, index, &fused) : NULL;
    if (fs || fused) return fs;
    size_t count;
    const int64_t *perm = odn_attr_ints(n, "perm", &count);
    int64_t pm[ODN_MAX_RANK], dims[ODN_MAX_RANK], in_str[ODN_MAX_RANK], str[ODN_MAX_RANK];
    bool seen[ODN_MAX_RANK] = {false};
    if (perm && count != (size_t)x->rank)
        return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "perm has %zu values for rank %d", count, (int)x->rank);
    for (int32_t i = 0; i < x->rank; i++) {
        pm[i] = perm ? perm[i] : x->rank - 1 - i;
        if (pm[i] < 0 || pm[i] >= x->rank || seen[pm[i]])
            return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "perm is not a permutation");
        seen[pm[i]] = true;
    }
    /* strides of the input as laid out: its own when plain with any
     * strides (a producer may have written it pre-transposed), else plain */
    const dnnl_memory_desc_t *xm = &x->md;
    bool strided =
        x->mem && xm->format_kind == dnnl_blocked && xm->format_desc.blocking.inner_nblks == 0 && xm->ndims == x->rank;
    int64_t s = 1;
    for (int32_t i = x->rank - 1; i >= 0; i--) {
        in_str[i] = strided ? xm->format_desc.blocking.strides[i] : s;
        s *= x->dims[i] ? x->dims[i] : 1;
    }
    for (int32_t i = 0; i < x->rank; i++) {
        dims[i] = x->dims[pm[i]];
        str[i] = in_str[pm[i]];
    }
    dnnl_memory_t base = x->mem;
    tsr_status *st = strided ? NULL : odn_plan_plain_mem(p, x, n, &base);
    if (st) return st;
    dnnl_memory_desc_t md;
    dnnl_dims_t d, ds;
    for (int32_t i = 0; i < x->rank; i++) {
        d[i] = dims[i];
        ds[i] = str[i];
    }
    if (dnnl_memory_desc_init_by_strides(&md, x->rank, d, dnnl_f32, ds) != dnnl_success)
        return odn_node_error(n, TSR_ERR_PROVIDER, "transpose layout");
    st = define_view(p, y, x->rank, dims, &md, base, n);
    if (!st && y->is_view && base == x->mem) y->const_view = x->constant ? x->constant->data : x->const_view;
    return st;
}

static tsr_status *erf_loop(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const dnnl_memory_desc_t *md;
    void *in = NULL, *out = NULL;
    (void)ctx;
    dnnl_memory_get_memory_desc(src, &md);
    dnnl_memory_get_data_handle(src, &in);
    dnnl_memory_get_data_handle(dst, &out);
    int64_t count = (int64_t)(dnnl_memory_desc_get_size(md) / sizeof(float));
    const float *x = in;
    float *y = out;
    /* 8-lane erf (odn_erf.c), in blocks the run's threads share */
#pragma omp parallel for if (count > 65536) schedule(static)
    for (int64_t i = 0; i < count; i += 4096) odn_erf(x + i, y + i, count - i < 4096 ? count - i : 4096);
    return NULL;
}

tsr_status *odn_build_erf(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *x = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!x || !y || !x->produced || !x->mem) return odn_node_error(n, TSR_ERR_PROVIDER, "internal: erf inputs");
    dnnl_memory_t src;
    tsr_status *s = odn_plan_plain_mem(p, x, n, &src);
    if (!s) s = odn_plan_define(p, y, x->rank, x->dims, NULL, n);
    return s ? s : odn_plan_add_loop(p, erf_loop, NULL, src, y->mem, n);
}
