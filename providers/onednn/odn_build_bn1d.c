/* BatchNormalization (inference) on plain [N,C] and [N,C,L...] inputs (a
 * BN1d in an MLP head, after a Conv1d written as MatMul), where oneDNN 2.6
 * has only its ncsp_bnorm kernel (3.5 ms for 512x1024 on AVX2, 20x a Relu
 * over the same tensor): a C loop y = x * a[c] + o[c] with a = scale /
 * sqrt(var + eps), o = B - mean * a, as the reference computes them (in
 * double, applied in float).
 *
 * And BatchNormalization right after a MatMul/Gemm of constant weights
 * with an [M,N] output (channel N: MatMul [M,K]x[K,N], or Gemm with
 * constant B and a constant or no C), folded into them as the convolution
 * builder folds it (odn_build_conv.c): W' = alpha W * a per column, bias' =
 * (beta C - mean) * a + B. The folded matmul is built here (the packed GEMM
 * or oneDNN's matmul, with the nodes after the BatchNormalization fused as
 * post-ops); the folded weights are keyed in the constant cache by the
 * BatchNormalization. An [N,C,L] output of MatMul(W[C,K], X[N,K,L]) (a
 * Conv1d of kernel 1 written out) is not folded: its shift would be a bias
 * along C, for which oneDNN 2.6's matmul has only its reference kernel or a
 * binary post-op 15x slower than the product; the BatchNormalization runs
 * as the loop instead. */
#include <math.h>
#include <string.h>

#include "odn_ops.h"

/* --- the loop ----------------------------------------------------------------- */

typedef struct bn_loop {
    int64_t outer, c, inner;
    const float *a, *o; /* per channel */
} bn_loop;

static tsr_status *run_bn(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const bn_loop *l = ctx;
    void *px = NULL, *py = NULL;
    dnnl_memory_get_data_handle(src, &px);
    dnnl_memory_get_data_handle(dst, &py);
    const float *x = px, *a = l->a, *o = l->o;
    float *y = py;
    int64_t c = l->c, inner = l->inner;
    if (inner == 1) {
#pragma omp parallel for if (l->outer * c > 65536) schedule(static)
        for (int64_t r = 0; r < l->outer; r++)
            for (int64_t k = 0; k < c; k++) y[r * c + k] = x[r * c + k] * a[k] + o[k];
        return NULL;
    }
#pragma omp parallel for if (l->outer * c * inner > 65536) schedule(static)
    for (int64_t rc = 0; rc < l->outer * c; rc++) {
        float ak = a[rc % c], ok = o[rc % c];
        const float *xr = x + rc * inner;
        float *yr = y + rc * inner;
        for (int64_t i = 0; i < inner; i++) yr[i] = xr[i] * ak + ok;
    }
    return NULL;
}

/* The four statistics of `bn` as constant float32 vectors of `c` values. */
static bool bn_stats(odn_plan *p, const tsr_node *bn, int64_t c, const float *st[4]) {
    if (odn_host->node_input_count(bn) < 5) return false;
    for (size_t k = 0; k < 4; k++) {
        const odn_value *v = odn_plan_value(p, odn_host->node_input(bn, k + 1));
        if (!v || !v->constant || v->constant->elem_type != TSR_FLOAT || odn_numel(v->rank, v->dims) != c) return false;
        st[k] = v->constant->data;
    }
    return true;
}

/* a and o per channel (the plan's), in double as the reference. */
static bool bn_coeffs(odn_plan *p, const tsr_node *bn, int64_t c, float **a, float **o) {
    const float *st[4];
    if (!bn_stats(p, bn, c, st)) return false;
    *a = odn_plan_alloc(p, (size_t)c * sizeof(float));
    *o = odn_plan_alloc(p, (size_t)c * sizeof(float));
    if (!*a || !*o) return false;
    double eps = odn_attr_float(bn, "epsilon", 1e-5f);
    for (int64_t k = 0; k < c; k++) {
        double s = st[0][k] / sqrt((double)st[3][k] + eps);
        (*a)[k] = (float)s;
        (*o)[k] = (float)(st[1][k] - st[2][k] * s);
    }
    return true;
}

tsr_status *odn_bn_loop_try(odn_plan *p, size_t index, bool *handled) {
    *handled = false;
    const tsr_node *n = p->nodes[index];
    odn_value *x = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!x || !y || !x->produced || !x->mem || x->rank < 2 || x->f16 || y->f16) return NULL;
    /* plain input only: in a blocked or channels-last layout oneDNN has
     * JIT kernels */
    dnnl_memory_desc_t plain;
    if (odn_plain_md(&plain, x->rank, x->dims) != dnnl_success || !dnnl_memory_desc_equal(&plain, &x->md)) return NULL;
    float *a, *o;
    if (!bn_coeffs(p, n, x->dims[1], &a, &o)) return NULL;
    bn_loop *l = odn_plan_alloc(p, sizeof *l);
    if (!l) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    *l = (bn_loop){x->dims[0], x->dims[1], odn_numel(x->rank - 2, x->dims + 2), a, o};
    *handled = true;
    tsr_status *s = odn_plan_define(p, y, x->rank, x->dims, NULL, n);
    return s ? s : odn_plan_add_loop(p, run_bn, l, x->mem, y->mem, n);
}

/* --- folded into a matmul ----------------------------------------------------- */

static const float *const_f32(const odn_value *v) {
    return v && v->constant && v->constant->elem_type == TSR_FLOAT && !v->f16 ? v->constant->data : NULL;
}

/* The BatchNormalization reading `y` (a float32 value) alone, or NULL. */
static const tsr_node *bn_after(odn_plan *p, const odn_value *y) {
    const tsr_node *bn = odn_plan_sole_consumer(p, y);
    if (!bn || strcmp(odn_host->node_op_type(bn), "BatchNormalization") != 0 ||
        odn_plan_value(p, odn_host->node_input(bn, 0)) != y || odn_attr_int(bn, "training_mode", 0))
        return NULL;
    for (size_t k = 1; k < odn_host->node_output_count(bn); k++)
        if (odn_host->node_output(bn, k)) return NULL;
    const odn_value *out = odn_plan_value(p, odn_host->node_output(bn, 0));
    return out && !out->f16 && odn_host->value_elem_type(odn_host->node_output(bn, 0)) == TSR_FLOAT ? bn : NULL;
}

/* The folded product: src [.., M, K] (src_md over src_mem) times weights
 * [.., K, N] plus bias (bias_md), into the BatchNormalization's output
 * `bnout` of dims out (rank r), with what follows it fused. w_const: the
 * weights are the plan's constant buffer w_mem (layout w_md), reordered
 * (or packed) once, keyed by key1 (the host constant folded) and `bn`. */
static tsr_status *folded_matmul(odn_plan *p, const tsr_node *n, const tsr_node *bn, const void *key1,
                                 dnnl_memory_t src_mem, const dnnl_memory_desc_t *src_md, bool w_const,
                                 dnnl_memory_t w_mem, const dnnl_memory_desc_t *w_md, dnnl_memory_t bias_mem,
                                 const dnnl_memory_desc_t *bias_md, odn_value *bnout, int32_t r, const int64_t *out) {
    dnnl_post_ops_t po;
    dnnl_primitive_attr_t attr;
    tsr_status *s = odn_post_ops_new(n, &po, &attr);
    if (s) return s;
    dnnl_exec_arg_t args[ODN_MAX_ARGS];
    int nargs = 2;
    odn_value *last = bnout;
    bnout->rank = r;
    memcpy(bnout->dims, out, sizeof(int64_t) * (size_t)r);
    p->done[odn_plan_node_index(p, bn)] = true;
    p->fuse_collapse_2d = false;
    s = odn_fuse_post_ops(p, bnout, r, out, po, args, &nargs, &last);
    if (!s && dnnl_primitive_attr_set_post_ops(attr, po) != dnnl_success)
        s = odn_node_error(n, TSR_ERR_PROVIDER, "post-ops");
    dnnl_dims_t wd, od;
    for (int32_t i = 0; i < r; i++) {
        wd[i] = w_md->dims[i];
        od[i] = out[i];
    }
    dnnl_memory_desc_t w_any = *w_md, dst_md;
    dnnl_status_t st = dnnl_success;
    if (!s && w_const) st = dnnl_memory_desc_init_by_tag(&w_any, r, wd, dnnl_f32, dnnl_format_tag_any);
    if (!s && st == dnnl_success)
        st = last->output_index >= 0 ? odn_plain_md(&dst_md, r, out)
                                     : dnnl_memory_desc_init_by_tag(&dst_md, r, od, dnnl_f32, dnnl_format_tag_any);
    dnnl_matmul_desc_t d;
    dnnl_primitive_desc_t pd = NULL;
    if (!s && st == dnnl_success) st = dnnl_matmul_desc_init(&d, src_md, &w_any, bias_md, &dst_md);
    if (!s && st == dnnl_success) st = dnnl_primitive_desc_create(&pd, &d, attr, p->engine, NULL);
    if (!s && st != dnnl_success) s = odn_dnnl_error(n, "matmul setup", st);
    bool packed = false;
    if (!s && r == 2 && w_const)
        s = odn_sgemm_try(p, n, pd, bn, src_mem, src_md, w_mem, w_md, bias_mem, attr, last, 2, out, args + 2, nargs - 2,
                          &packed);
    if (!s && !packed) {
        dnnl_memory_t w_use = w_mem;
        const dnnl_memory_desc_t *want = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
        if (w_const && !dnnl_memory_desc_equal(want, w_md))
            s = odn_arena_const_as_keyed(p, key1, bn, w_mem, w_md, want, n, &w_use);
        if (!s) s = odn_plan_define(p, last, r, out, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), n);
        if (!s) {
            args[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, src_mem};
            args[1] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, w_use};
            args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_DST, last->mem};
            args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, bias_mem};
            s = odn_plan_add_primitive(p, pd, n, args, nargs);
        }
    }
    if (pd) dnnl_primitive_desc_destroy(pd);
    dnnl_post_ops_destroy(po);
    dnnl_primitive_attr_destroy(attr);
    return s;
}

/* A plan-owned plain f32 memory of dims over `data`. */
static tsr_status *own_mem(odn_plan *p, const tsr_node *n, int32_t r, const int64_t *dims, float *data,
                           dnnl_memory_t *mem, dnnl_memory_desc_t *md) {
    if (odn_plain_md(md, r, dims) != dnnl_success) return odn_node_error(n, TSR_ERR_PROVIDER, "folded layout");
    return odn_plan_new_mem(p, md, data, n, mem);
}

/* Output [M,N], channel N: A (dims/strides given) times constant W read as
 * w[i*wk + j*wj] (i < K, j < N), times alpha, plus c_vec[j * cs] * beta
 * (c_vec may be NULL). */
static tsr_status *fold_columns(odn_plan *p, const tsr_node *n, const tsr_node *bn, odn_value *a, const int64_t *ashape,
                                const int64_t *astr, const odn_value *w, int64_t nn, int64_t wk, int64_t wj,
                                float alpha, const float *c_vec, int64_t cs, float beta, bool *handled) {
    int64_t m = ashape[0], k = ashape[1];
    float *ba, *bo;
    if (!bn_coeffs(p, bn, nn, &ba, &bo)) return NULL;
    float *fw = odn_plan_alloc(p, (size_t)(k * nn) * sizeof(float));
    float *fb = odn_plan_alloc(p, (size_t)nn * sizeof(float));
    if (!fw || !fb) return odn_node_error(n, TSR_ERR_NO_MEMORY, "folded weights");
    const float *wv = w->constant->data;
    for (int64_t i = 0; i < k; i++)
        for (int64_t j = 0; j < nn; j++) fw[i * nn + j] = (float)((double)wv[i * wk + j * wj] * alpha * ba[j]);
    for (int64_t j = 0; j < nn; j++) fb[j] = (float)(((c_vec ? (double)c_vec[j * cs] * beta : 0.0)) * ba[j] + bo[j]);
    *handled = true;
    odn_value *bnout = odn_plan_value(p, odn_host->node_output(bn, 0));
    int64_t wdims[2] = {k, nn}, bdims[2] = {1, nn}, out[2] = {m, nn};
    dnnl_memory_t am, wm, bm;
    dnnl_memory_desc_t amd, wmd, bmd;
    tsr_status *s = odn_plan_plain_view(p, a, 2, ashape, astr, n, &am, &amd);
    if (!s) s = own_mem(p, n, 2, wdims, fw, &wm, &wmd);
    if (!s) s = own_mem(p, n, 2, bdims, fb, &bm, &bmd);
    if (!s) s = folded_matmul(p, n, bn, w->constant->data, am, &amd, true, wm, &wmd, bm, &bmd, bnout, 2, out);
    return s;
}

static bool plain_f32(const odn_value *v) {
    return v && v->mem && !v->f16 && (v->elem_type == TSR_FLOAT || !v->elem_type);
}

tsr_status *odn_build_matmul_bn(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *a = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *b = odn_plan_value(p, odn_host->node_input(n, 1));
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    const tsr_node *bn =
        y && odn_host->value_elem_type(odn_host->node_output(n, 0)) == TSR_FLOAT ? bn_after(p, y) : NULL;
    bool handled = false;
    tsr_status *s = NULL;
    if (bn && plain_f32(a) && plain_f32(b)) {
        if (a->rank == 2 && b->rank == 2 && const_f32(b) && !const_f32(a) && a->dims[1] == b->dims[0])
            s = fold_columns(p, n, bn, a, a->dims, NULL, b, b->dims[1], b->dims[1], 1, 1.0f, NULL, 0, 0.0f, &handled);
    }
    return handled || s ? s : odn_build_matmul_typed(p, index);
}

tsr_status *odn_build_gemm_bn(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *a = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *b = odn_plan_value(p, odn_host->node_input(n, 1));
    odn_value *c = odn_host->node_input_count(n) > 2 ? odn_plan_value(p, odn_host->node_input(n, 2)) : NULL;
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    const tsr_node *bn =
        y && odn_host->value_elem_type(odn_host->node_output(n, 0)) == TSR_FLOAT ? bn_after(p, y) : NULL;
    bool handled = false;
    tsr_status *s = NULL;
    if (bn && plain_f32(a) && plain_f32(b) && a->rank == 2 && b->rank == 2 && const_f32(b) && !const_f32(a)) {
        bool ta = odn_attr_int(n, "transA", 0) != 0, tb = odn_attr_int(n, "transB", 0) != 0;
        float alpha = odn_attr_float(n, "alpha", 1.0f), beta = odn_attr_float(n, "beta", 1.0f);
        int64_t m = ta ? a->dims[1] : a->dims[0], k = ta ? a->dims[0] : a->dims[1];
        int64_t kb = tb ? b->dims[1] : b->dims[0], nn = tb ? b->dims[0] : b->dims[1];
        /* C: absent, or a constant vector along N (or one value) */
        const float *cv = NULL;
        int64_t cs = 0, cn = c ? odn_numel(c->rank, c->dims) : 0;
        bool c_ok = !c || beta == 0.0f;
        if (c && beta != 0.0f && (cv = const_f32(c)) != NULL) {
            bool row = c->rank >= 1 && c->dims[c->rank - 1] == nn && cn == nn;
            c_ok = cn == 1 || row;
            cs = cn == 1 ? 0 : 1;
        }
        if (beta == 0.0f) cv = NULL;
        if (k == kb && c_ok) {
            int64_t ashape[2] = {m, k}, astr[2] = {ta ? 1 : k, ta ? m : 1};
            /* W read as [K,N]: element (i, j) at i*wk + j*wj */
            int64_t wk = tb ? 1 : nn, wj = tb ? k : 1;
            s = fold_columns(p, n, bn, a, ashape, astr, b, nn, wk, wj, alpha, cv, cs, beta, &handled);
        }
    }
    return handled || s ? s : odn_build_gemm_typed(p, index);
}
