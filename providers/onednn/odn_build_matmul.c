/* MatMul and Gemm as oneDNN matmul. Constant weights are reordered once
 * into the layout the kernel prefers; Gemm's transposes are strided views,
 * alpha an eltwise post-op and C a bias or a binary post-op. Following
 * Add/activation nodes fuse as post-ops. */
#include <string.h>

#include "odn.h"

/* When the result's only reader is a Transpose, a dst layout whose strides
 * make that Transpose's output plain: the matmul then writes the transposed
 * tensor directly and the Transpose (and a Reshape after it) cost nothing. */
bool odn_matmul_transposed_dst(odn_plan *p, const odn_value *y, int32_t r, const int64_t *out, dnnl_memory_desc_t *md) {
    const tsr_node *t = odn_plan_sole_consumer(p, y);
    if (!t || strcmp(odn_host->node_op_type(t), "Transpose") != 0) return false;
    size_t count;
    const int64_t *perm = odn_attr_ints(t, "perm", &count);
    if (!perm || count != (size_t)r) return false;
    int64_t tstr[ODN_MAX_RANK], s = 1;
    bool seen[ODN_MAX_RANK] = {false};
    for (int32_t i = 0; i < r; i++)
        if (perm[i] < 0 || perm[i] >= r || seen[perm[i]]) return false;
        else seen[perm[i]] = true;
    for (int32_t i = r - 1; i >= 0; i--) {
        tstr[i] = s;
        s *= out[perm[i]];
    }
    dnnl_dims_t d, str;
    for (int32_t i = 0; i < r; i++) {
        d[i] = out[i];
        str[perm[i]] = tstr[i];
    }
    return dnnl_memory_desc_init_by_strides(md, r, d, dnnl_f32, str) == dnnl_success;
}

/* Creates the matmul for src `a_md`/weights (constant: "any" layout,
 * reordered once) and appends it. `last` gets dims `out` (rank r). */
static tsr_status *finish_matmul(odn_plan *p, const tsr_node *n, dnnl_memory_t a_mem, const dnnl_memory_desc_t *a_md,
                                 odn_value *bv, dnnl_memory_t b_mem, const dnnl_memory_desc_t *b_md,
                                 dnnl_memory_t bias_mem, const dnnl_memory_desc_t *bias_md, dnnl_primitive_attr_t attr,
                                 odn_value *last, int32_t r, const int64_t *out, int32_t onnx_rank,
                                 const int64_t *onnx_dims, dnnl_exec_arg_t *args, int nargs) {
    dnnl_dims_t wd, od;
    for (int32_t i = 0; i < r; i++) {
        wd[i] = b_md->dims[i];
        od[i] = out[i];
    }
    dnnl_memory_desc_t w_any, dst_md;
    dnnl_status_t st = dnnl_success;
    const void *const_key = bv->constant ? bv->constant->data : bv->const_view;
    if (const_key) st = dnnl_memory_desc_init_by_tag(&w_any, r, wd, dnnl_f32, dnnl_format_tag_any);
    else w_any = *b_md;
    bool plain_dst = last->output_index >= 0 || r != onnx_rank;
    bool transposed = false;
    if (st == dnnl_success)
        st = plain_dst ? odn_plain_md(&dst_md, r, out)
            : (transposed = odn_matmul_transposed_dst(p, last, r, out, &dst_md))
            ? dnnl_success
            : dnnl_memory_desc_init_by_tag(&dst_md, r, od, dnnl_f32, dnnl_format_tag_any);
    if (st != dnnl_success) return odn_dnnl_error(n, "matmul layouts", st);
    dnnl_matmul_desc_t d;
    st = dnnl_matmul_desc_init(&d, a_md, &w_any, bias_md, &dst_md);
    dnnl_primitive_desc_t pd = NULL;
    if (st == dnnl_success) st = dnnl_primitive_desc_create(&pd, &d, attr, p->engine, NULL);
    /* a transposed dst has only the reference kernel for some shapes (a
     * 2-D product written column-major): write it plain then, and let the
     * Transpose copy */
    if (st == dnnl_success && !plain_dst && dst_md.format_kind == dnnl_blocked && odn_impl_is_ref(odn_impl_name(pd))) {
        dnnl_primitive_desc_destroy(pd);
        pd = NULL;
        transposed = false;
        st = dnnl_memory_desc_init_by_tag(&dst_md, r, od, dnnl_f32, dnnl_format_tag_any);
        if (st == dnnl_success) st = dnnl_matmul_desc_init(&d, a_md, &w_any, bias_md, &dst_md);
        if (st == dnnl_success) st = dnnl_primitive_desc_create(&pd, &d, attr, p->engine, NULL);
    }
    if (st != dnnl_success) return odn_dnnl_error(n, "matmul setup", st);
    bool packed = false;
    tsr_status *s = NULL;
    if (r == 2 && !transposed)
        s = odn_sgemm_try(p, n, pd, const_key, a_mem, a_md, b_mem, b_md, bias_mem, attr, last, onnx_rank, onnx_dims,
                          args + 2, nargs - 2, &packed);
    /* the constant itself (not a view of another) went into the cache */
    bool own_constant = bv->constant && const_key == bv->constant->data;
    if (s || packed) {
        if (!s && own_constant) odn_const_read_cached(p, bv, false);
        dnnl_primitive_desc_destroy(pd);
        return s;
    }
    dnnl_memory_t w_mem = b_mem;
    const dnnl_memory_desc_t *want = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    if (const_key && !dnnl_memory_desc_equal(want, b_md)) {
        s = odn_arena_const_deferred(p, const_key, NULL, b_mem, b_md, want, n, &w_mem);
        if (!s && own_constant) odn_const_read_cached(p, bv, false);
    }
    dnnl_memory_t dst = NULL;
    if (!s)
        s = odn_plan_define(p, last, onnx_rank, onnx_dims,
                            r == onnx_rank ? dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0) : NULL, n);
    if (!s) {
        dst = last->mem;
        if (r != onnx_rank) s = odn_plan_plain_view(p, last, r, out, NULL, n, &dst, NULL);
    }
    if (!s) {
        args[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, a_mem};
        args[1] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, w_mem};
        args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_DST, dst};
        if (bias_mem) args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, bias_mem};
        s = odn_plan_add_primitive(p, pd, n, args, nargs);
    }
    dnnl_primitive_desc_destroy(pd);
    return s;
}

/* A matmul operand as `v`'s own buffer when its layout is plain with any
 * strides (a Transpose view): oneDNN's matmul reads batch and row strides
 * directly, which saves copying the transposed tensor. Other layouts go
 * through a plain copy. */
static tsr_status *operand(odn_plan *p, odn_value *v, int32_t r, const int64_t *dims, const tsr_node *n,
                           dnnl_memory_t *mem, dnnl_memory_desc_t *md) {
    const dnnl_memory_desc_t *own = &v->md;
    bool strided =
        own->format_kind == dnnl_blocked && own->format_desc.blocking.inner_nblks == 0 && v->rank >= 2 && v->rank <= r;
    if (!strided) return odn_plan_plain_view(p, v, r, dims, NULL, n, mem, md);
    dnnl_dims_t d, str;
    int32_t lead = r - v->rank;
    for (int32_t i = 0; i < r; i++) {
        d[i] = dims[i];
        str[i] = i < lead ? own->dims[0] * own->format_desc.blocking.strides[0]
                          : own->format_desc.blocking.strides[i - lead];
    }
    if (dnnl_memory_desc_init_by_strides(md, r, d, dnnl_f32, str) != dnnl_success)
        return odn_node_error(n, TSR_ERR_PROVIDER, "matmul operand layout");
    if (dnnl_memory_desc_equal(md, own)) {
        *mem = v->mem;
        return NULL;
    }
    return odn_plan_view(p, v->mem, md, n, mem);
}

/* When the product's only reader is an Add of a constant float vector of
 * the output's last size (a bias, [N] or [1,..,1,N]), that Add is marked done
 * and the constant returned: it is then the matmul's bias argument, which
 * oneDNN applies about 1.5% cheaper than the same add as a binary post-op
 * (128x768 by 768x3072 and 768x768, BERT-base's shapes). */
static odn_value *bias_add(odn_plan *p, odn_value *y, int32_t r, const int64_t *out, odn_value **sum_out) {
    const tsr_node *add = odn_plan_sole_consumer(p, y);
    if (!add || strcmp(odn_host->node_op_type(add), "Add") != 0 || odn_host->node_input_count(add) != 2) return NULL;
    const char *dom = odn_host->node_domain(add);
    if (dom[0] && strcmp(dom, "ai.onnx") != 0) return NULL;
    odn_value *i0 = odn_plan_value(p, odn_host->node_input(add, 0));
    odn_value *i1 = odn_plan_value(p, odn_host->node_input(add, 1));
    odn_value *c = i0 == y ? i1 : i0;
    odn_value *sum = odn_plan_value(p, odn_host->node_output(add, 0));
    if (!c || c == y || !sum || sum == y || !c->constant || !c->mem || c->constant->elem_type != TSR_FLOAT ||
        c->rank < 1 || c->rank > r || c->dims[c->rank - 1] != out[r - 1])
        return NULL;
    for (int32_t i = 0; i + 1 < c->rank; i++)
        if (c->dims[i] != 1) return NULL;
    p->done[odn_plan_node_index(p, add)] = true;
    sum->rank = r;
    memcpy(sum->dims, out, sizeof(int64_t) * (size_t)r);
    *sum_out = sum;
    return c;
}

tsr_status *odn_build_matmul(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    bool attention;
    tsr_status *fs = odn_fuse_attention(p, index, &attention);
    if (fs || attention) return fs;
    odn_value *a = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *b = odn_plan_value(p, odn_host->node_input(n, 1));
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!a || !b || !y || !a->mem || !b->mem || a->rank < 1 || b->rank < 1)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: matmul inputs");
    /* promote vectors to matrices, then pad batch dims with leading 1s */
    int64_t ad[ODN_MAX_RANK + 1], bd[ODN_MAX_RANK + 1];
    int32_t ar = a->rank, br = b->rank;
    if (ar == 1) {
        ad[0] = 1;
        ad[1] = a->dims[0];
        ar = 2;
    } else memcpy(ad, a->dims, sizeof(int64_t) * (size_t)ar);
    if (br == 1) {
        bd[0] = b->dims[0];
        bd[1] = 1;
        br = 2;
    } else memcpy(bd, b->dims, sizeof(int64_t) * (size_t)br);
    int32_t r = ar > br ? ar : br;
    if (r > ODN_MAX_RANK) return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "rank above %d", ODN_MAX_RANK);
    int64_t pa[ODN_MAX_RANK], pb[ODN_MAX_RANK], out[ODN_MAX_RANK];
    for (int32_t i = 0; i < r; i++) {
        pa[i] = i < r - ar ? 1 : ad[i - (r - ar)];
        pb[i] = i < r - br ? 1 : bd[i - (r - br)];
    }
    if (pa[r - 1] != pb[r - 2])
        return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "inner dims %lld and %lld differ", (long long)pa[r - 1],
                              (long long)pb[r - 2]);
    for (int32_t i = 0; i < r - 2; i++) {
        if (pa[i] != pb[i] && pa[i] != 1 && pb[i] != 1)
            return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "batch dims do not broadcast");
        out[i] = pa[i] == 1 ? pb[i] : pa[i]; /* not the larger: 1 against 0 broadcasts to 0 */
    }
    out[r - 2] = pa[r - 2];
    out[r - 1] = pb[r - 1];
    /* the ONNX output drops the promoted dims */
    int64_t od[ODN_MAX_RANK];
    int32_t orank = 0;
    for (int32_t i = 0; i < r - 2; i++) od[orank++] = out[i];
    if (a->rank > 1) od[orank++] = out[r - 2];
    if (b->rank > 1) od[orank++] = out[r - 1];
    bool same_rank = orank == r;
    /* a stack of no matrices: nothing to compute, and oneDNN refuses a
     * matmul with an empty batch (its consumers see an empty tensor) */
    if (odn_numel(orank, od) == 0) return odn_plan_define(p, y, orank, od, NULL, n);

    dnnl_post_ops_t po;
    dnnl_primitive_attr_t attr;
    tsr_status *s = odn_post_ops_new(n, &po, &attr);
    if (s) return s;
    dnnl_exec_arg_t args[ODN_MAX_ARGS];
    int nargs = 2;
    odn_value *last = y;
    /* A stack of rows times one constant matrix ([..., M, K] x [K, N]) is a
     * single 2-D matmul over all rows; oneDNN then picks a blocked weight
     * layout, which it does not for weights with batch dims. */
    const tsr_node *next = odn_plan_sole_consumer(p, y);
    bool collapse = same_rank && a->rank >= 3 && b->rank == 2 && (b->constant || b->const_view) &&
        !(next && strcmp(odn_host->node_op_type(next), "Transpose") == 0);
    p->fuse_collapse_2d = collapse;
    odn_value *bias = NULL, *biased = y;
    if (same_rank) bias = bias_add(p, y, r, out, &biased);
    if (same_rank) s = odn_fuse_post_ops(p, biased, r, out, po, args, &nargs, &last);
    p->fuse_collapse_2d = false;
    if (!s && dnnl_primitive_attr_set_post_ops(attr, po) != dnnl_success)
        s = odn_node_error(n, TSR_ERR_PROVIDER, "post-ops");
    dnnl_memory_t am, bm, bias_mem = NULL;
    dnnl_memory_desc_t amd, bmd, bias_md;
    if (collapse) {
        int64_t k = pa[r - 1], nn = pb[r - 1];
        int64_t rows = odn_numel(a->rank, a->dims) / (k ? k : 1);
        int64_t a2[2] = {rows, k}, b2[2] = {k, nn}, out2[2] = {rows, nn};
        int64_t bias2[2] = {1, nn};
        if (!s) s = odn_plan_plain_view(p, a, 2, a2, NULL, n, &am, &amd);
        if (!s)
            s = b->const_view ? operand(p, b, 2, b2, n, &bm, &bmd)
                              : odn_plan_plain_view(p, b, 2, b2, NULL, n, &bm, &bmd);
        if (!s && bias) s = odn_plan_plain_view(p, bias, 2, bias2, NULL, n, &bias_mem, &bias_md);
        if (!s)
            s = finish_matmul(p, n, am, &amd, b, bm, &bmd, bias_mem, bias ? &bias_md : NULL, attr, last, 2, out2, r,
                              out, args, nargs);
    } else {
        int64_t biasd[ODN_MAX_RANK];
        for (int32_t i = 0; i < r; i++) biasd[i] = i + 1 < r ? 1 : out[r - 1];
        if (!s) s = operand(p, a, r, pa, n, &am, &amd);
        if (!s) s = operand(p, b, r, pb, n, &bm, &bmd);
        if (!s && bias) s = odn_plan_plain_view(p, bias, r, biasd, NULL, n, &bias_mem, &bias_md);
        if (!s)
            s = finish_matmul(p, n, am, &amd, b, bm, &bmd, bias_mem, bias ? &bias_md : NULL, attr, last, r, out,
                              same_rank ? r : orank, same_rank ? out : od, args, nargs);
    }
    dnnl_post_ops_destroy(po);
    dnnl_primitive_attr_destroy(attr);
    return s;
}

tsr_status *odn_build_gemm(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *a = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *b = odn_plan_value(p, odn_host->node_input(n, 1));
    odn_value *c = odn_host->node_input_count(n) > 2 ? odn_plan_value(p, odn_host->node_input(n, 2)) : NULL;
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!a || !b || !y || !a->mem || !b->mem || a->rank != 2 || b->rank != 2 || (c && (!c->mem || c->rank > 2)))
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: gemm inputs");
    bool ta = odn_attr_int(n, "transA", 0) != 0, tb = odn_attr_int(n, "transB", 0) != 0;
    float alpha = odn_attr_float(n, "alpha", 1.0f), beta = odn_attr_float(n, "beta", 1.0f);
    int64_t m = ta ? a->dims[1] : a->dims[0], k = ta ? a->dims[0] : a->dims[1];
    int64_t kb = tb ? b->dims[1] : b->dims[0], nn = tb ? b->dims[0] : b->dims[1];
    if (k != kb)
        return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "inner dims %lld and %lld differ", (long long)k,
                              (long long)kb);
    int64_t out[2] = {m, nn};
    /* C broadcast to [M,N] */
    int64_t cd[2] = {1, 1};
    if (c) {
        if (c->rank == 1) cd[1] = c->dims[0];
        if (c->rank == 2) {
            cd[0] = c->dims[0];
            cd[1] = c->dims[1];
        }
        if ((cd[0] != 1 && cd[0] != m) || (cd[1] != 1 && cd[1] != nn))
            return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "C does not broadcast to [%lld,%lld]", (long long)m,
                                  (long long)nn);
        if (beta == 0.0f) c = NULL;
    }
    dnnl_post_ops_t po;
    dnnl_primitive_attr_t attr;
    tsr_status *s = odn_post_ops_new(n, &po, &attr);
    if (s) return s;
    dnnl_exec_arg_t args[ODN_MAX_ARGS];
    int nargs = 2;
    dnnl_memory_t bias_mem = NULL;
    dnnl_memory_desc_t bias_md;
    bool use_bias = c && alpha == 1.0f && beta == 1.0f && cd[0] == 1;
    if (use_bias) {
        s = odn_plan_plain_view(p, c, 2, cd, NULL, n, &bias_mem, &bias_md);
    } else {
        if (alpha != 1.0f && dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_linear, alpha, 0.0f) != dnnl_success)
            s = odn_node_error(n, TSR_ERR_PROVIDER, "alpha post-op");
        if (!s && c) {
            dnnl_memory_t cm;
            dnnl_memory_desc_t cmd;
            if (beta != 1.0f) {
                /* beta*C once, from the constant C (checked at claim) */
                int64_t cn = cd[0] * cd[1];
                float *scaled = odn_plan_alloc(p, (size_t)cn * sizeof(float));
                if (!c->constant || !scaled)
                    s = odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "beta != 1 needs a constant C");
                for (int64_t i = 0; !s && i < cn; i++) scaled[i] = beta * ((const float *)c->constant->data)[i];
                if (!s && odn_plain_md(&cmd, 2, cd) != dnnl_success)
                    s = odn_node_error(n, TSR_ERR_PROVIDER, "C layout");
                if (!s) s = odn_plan_new_mem(p, &cmd, scaled, n, &cm);
            } else {
                s = odn_plan_plain_view(p, c, 2, cd, NULL, n, &cm, &cmd);
            }
            if (!s && dnnl_post_ops_append_binary(po, dnnl_binary_add, &cmd) != dnnl_success)
                s = odn_node_error(n, TSR_ERR_PROVIDER, "C post-op");
            if (!s)
                args[nargs++] =
                    (dnnl_exec_arg_t){DNNL_ARG_ATTR_MULTIPLE_POST_OP(dnnl_post_ops_len(po) - 1) | DNNL_ARG_SRC_1, cm};
        }
    }
    odn_value *last = y;
    if (!s) s = odn_fuse_post_ops(p, y, 2, out, po, args, &nargs, &last);
    if (!s && dnnl_primitive_attr_set_post_ops(attr, po) != dnnl_success)
        s = odn_node_error(n, TSR_ERR_PROVIDER, "post-ops");
    dnnl_memory_t am, bm;
    dnnl_memory_desc_t amd, bmd;
    int64_t ashape[2] = {m, k}, bshape[2] = {k, nn};
    int64_t astr[2] = {ta ? 1 : k, ta ? m : 1}, bstr[2] = {tb ? 1 : nn, tb ? k : 1};
    if (!s) s = odn_plan_plain_view(p, a, 2, ashape, astr, n, &am, &amd);
    if (!s) s = odn_plan_plain_view(p, b, 2, bshape, bstr, n, &bm, &bmd);
    if (!s)
        s = finish_matmul(p, n, am, &amd, b, bm, &bmd, bias_mem, use_bias ? &bias_md : NULL, attr, last, 2, out, 2, out,
                          args, nargs);
    dnnl_post_ops_destroy(po);
    dnnl_primitive_attr_destroy(attr);
    return s;
}
