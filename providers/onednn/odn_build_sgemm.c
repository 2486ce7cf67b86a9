/* A matmul with constant 2-D weights as our packed-weights GEMM
 * (odn_sgemm.c) where oneDNN would run its `gemm:jit` kernel: that kernel
 * repacks the weights on every call, ours packs them once per session.
 * Fused post-ops (activations, residual adds) then run as in-place oneDNN
 * eltwise and binary passes over the product, one per post-op, while it is
 * still in cache: oneDNN 2.6 has only its reference kernel for an eltwise
 * carrying post-ops, so the chain cannot ride on one primitive. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "odn.h"
#include "odn_sgemm.h"

typedef struct sgemm_ctx {
    int64_t m, n, k, lda, ldc;
    const float *packed, *bias;
    float *scratch; /* the plan's: runs of one plan never overlap */
    int threads;    /* the plan's thread count, which scratch is sized for */
} sgemm_ctx;

static tsr_status *run_sgemm(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const sgemm_ctx *g = ctx;
    const float *a = odn_mem_f32(src);
    float *c = odn_mem_f32(dst);
    if (!a || !c) return odn_host->status_new(TSR_ERR_PROVIDER, "onednn: packed gemm without buffers");
    odn_sgemm_run(g->m, g->n, g->k, a, g->lda, g->packed, g->bias, c, g->ldc, g->scratch, g->threads);
    return NULL;
}

/* A 2-D plain layout (any row stride, unit column stride for A): its row
 * stride, else 0. */
static int64_t row_stride(const dnnl_memory_desc_t *md, bool unit_columns) {
    if (md->ndims != 2 || md->data_type != dnnl_f32 || md->format_kind != dnnl_blocked ||
        md->format_desc.blocking.inner_nblks != 0)
        return 0;
    if (unit_columns && md->format_desc.blocking.strides[1] != 1) return 0;
    return md->format_desc.blocking.strides[0];
}

/* The post-op chain as in-place passes over the product (layout md):
 * a primitive per post-op, or false when one has no fast kernel or is a
 * sum (which would add the product to itself). */
#define MAX_PASSES 8
typedef struct post_passes {
    int count;
    dnnl_primitive_desc_t pd[MAX_PASSES]; /* NULL for a gelu_tanh loop */
    bool binary[MAX_PASSES];
    int64_t elements; /* of the product, for the loops */
} post_passes;

static void passes_free(post_passes *pp) {
    for (int i = 0; i < pp->count; i++)
        if (pp->pd[i]) dnnl_primitive_desc_destroy(pp->pd[i]);
    pp->count = 0;
}

static bool post_passes_make(odn_plan *p, const_dnnl_primitive_attr_t attr, const dnnl_memory_desc_t *md,
                             post_passes *pp) {
    const_dnnl_post_ops_t po = NULL;
    pp->count = 0;
    pp->elements = 1;
    for (int d = 0; d < md->ndims; d++) pp->elements *= md->dims[d];
    if (dnnl_primitive_attr_get_post_ops(attr, &po) != dnnl_success) return false;
    int len = po ? dnnl_post_ops_len(po) : 0;
    if (len > MAX_PASSES) return false;
    for (int i = 0; i < len; i++) {
        dnnl_primitive_desc_t pd = NULL;
        dnnl_alg_kind_t alg;
        dnnl_status_t st = dnnl_unimplemented;
        if (dnnl_post_ops_get_kind(po, i) == dnnl_eltwise) {
            float scale, alpha, beta;
            dnnl_eltwise_desc_t ed;
            if (dnnl_post_ops_get_params_eltwise(po, i, &scale, &alg, &alpha, &beta) == dnnl_success && scale == 1.0f &&
                alg == dnnl_eltwise_gelu_tanh && odn_gelu_loop_supported())
                st = dnnl_success; /* odn_gelu_loop.c, pd stays NULL */
            else if (dnnl_post_ops_get_params_eltwise(po, i, &scale, &alg, &alpha, &beta) == dnnl_success &&
                     scale == 1.0f &&
                     dnnl_eltwise_forward_desc_init(&ed, dnnl_forward_inference, alg, md, alpha, beta) == dnnl_success)
                st = odn_pd_create(p, &ed, NULL, &pd);
        } else if (dnnl_post_ops_get_kind(po, i) == dnnl_binary) {
            const dnnl_memory_desc_t *src1 = NULL;
            dnnl_binary_desc_t bd;
            if (dnnl_post_ops_get_params_binary(po, i, &alg, &src1) == dnnl_success &&
                dnnl_binary_desc_init(&bd, alg, md, src1, md) == dnnl_success)
                st = odn_pd_create(p, &bd, NULL, &pd);
            pp->binary[i] = true;
        }
        if (st != dnnl_success) {
            passes_free(pp);
            return false;
        }
        pp->pd[pp->count++] = pd;
    }
    return true;
}

/* Appends the passes on dst; post_args hold the binary operands under
 * their post-op argument numbers. */
static tsr_status *post_passes_add(odn_plan *p, const tsr_node *n, const post_passes *pp, dnnl_memory_t dst,
                                   const dnnl_exec_arg_t *post_args, int npost) {
    for (int i = 0; i < pp->count; i++) {
        dnnl_exec_arg_t args[3];
        int nargs = 0;
        if (pp->binary[i]) {
            dnnl_memory_t operand = NULL;
            for (int j = 0; j < npost; j++)
                if (post_args[j].arg == (DNNL_ARG_ATTR_MULTIPLE_POST_OP(i) | DNNL_ARG_SRC_1))
                    operand = post_args[j].memory;
            if (!operand) return odn_node_error(n, TSR_ERR_PROVIDER, "internal: post-op %d without its operand", i);
            args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_SRC_0, dst};
            args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_SRC_1, operand};
        } else {
            args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, dst};
        }
        args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_DST, dst};
        tsr_status *s = pp->pd[i] ? odn_plan_add_primitive(p, pp->pd[i], n, args, nargs)
                                  : odn_gelu_loop_add(p, n, dst, dst, pp->elements);
        if (s) return s;
    }
    return NULL;
}

static const char packed_tag = 0; /* the constant cache's key2 for packed weights */

/* The packed form of constant B, from the piece's constant cache or packed
 * now into it. */
static tsr_status *packed_weights(odn_plan *p, const void *key, dnnl_memory_t b_mem, const dnnl_memory_desc_t *b_md,
                                  int64_t k, int64_t n, const tsr_node *nd, const float **out) {
    size_t floats = odn_sgemm_packed_floats(k, n);
    int64_t fd[1] = {(int64_t)floats};
    dnnl_memory_desc_t md;
    if (!floats || odn_plain_md(&md, 1, fd) != dnnl_success)
        return odn_node_error(nd, TSR_ERR_NO_MEMORY, "packed weights of %lld x %lld", (long long)k, (long long)n);
    float *buf = odn_const_cache_find(p->consts, key, &packed_tag, b_md, &md);
    if (!buf && odn_const_cache_released(p->consts, key)) return odn_const_released_error(nd);
    if (!buf) {
        const float *b = odn_mem_f32(b_mem);
        if (!b) return odn_node_error(nd, TSR_ERR_PROVIDER, "internal: constant weights without data");
        buf = odn_const_cache_add(p->consts, key, &packed_tag, b_md, &md, floats * sizeof(float));
        if (!buf) return odn_node_error(nd, TSR_ERR_NO_MEMORY, "packed weights of %zu bytes", floats * sizeof(float));
        int64_t sk = b_md->format_desc.blocking.strides[0], sn = b_md->format_desc.blocking.strides[1];
        if (odn_fill_deferred(p)) {
            tsr_status *s = odn_fill_add_pack(p, key, nd, b, k, n, sk, sn, buf);
            if (s) return s;
        } else {
            odn_sgemm_pack(b, k, n, sk, sn, buf);
            odn_const_cache_ready(p->consts, buf);
        }
    }
    *out = buf;
    return NULL;
}

tsr_status *odn_sgemm_add_step(odn_plan *p, const tsr_node *n, int64_t m, int64_t cols, int64_t k, int64_t lda,
                               dnnl_memory_t a, const float *packed, const float *bias, dnnl_memory_t c) {
    if (!p->sgemm_scratch) {
        p->sgemm_threads = omp_get_max_threads();
        p->sgemm_scratch = odn_plan_alloc(p, odn_sgemm_scratch_floats(p->sgemm_threads) * sizeof(float));
        if (!p->sgemm_scratch) return odn_node_error(n, TSR_ERR_NO_MEMORY, "packed gemm scratch");
    }
    sgemm_ctx *g = odn_plan_alloc(p, sizeof *g);
    if (!g) return odn_node_error(n, TSR_ERR_NO_MEMORY, "packed gemm");
    *g = (sgemm_ctx){.m = m,
                     .n = cols,
                     .k = k,
                     .lda = lda,
                     .ldc = cols,
                     .packed = packed,
                     .bias = bias,
                     .scratch = p->sgemm_scratch,
                     .threads = p->sgemm_threads};
    tsr_status *s = odn_plan_add_loop(p, run_sgemm, g, a, c, n);
    /* named as oneDNN names kernels, for profiles and piece reports */
    if (!s) snprintf(p->steps[p->step_count - 1].impl, sizeof p->steps[0].impl, "packed_gemm:avx2");
    return s;
}

tsr_status *odn_sgemm_try(odn_plan *p, const tsr_node *n, const_dnnl_primitive_desc_t pd, const void *const_key,
                          dnnl_memory_t a_mem, const dnnl_memory_desc_t *a_md, dnnl_memory_t b_mem,
                          const dnnl_memory_desc_t *b_md, dnnl_memory_t bias_mem, const_dnnl_primitive_attr_t attr,
                          odn_value *last, int32_t onnx_rank, const int64_t *onnx_dims,
                          const dnnl_exec_arg_t *post_args, int npost, bool *done) {
    *done = false;
    int64_t lda = row_stride(a_md, true), ldb = row_stride(b_md, false);
    if (!p->packed_gemm || !odn_sgemm_supported() || !const_key || strncmp(odn_impl_name(pd), "gemm:jit", 8) != 0 ||
        !lda || !ldb)
        return NULL;
    int64_t m = a_md->dims[0], k = a_md->dims[1], nn = b_md->dims[1];
    /* a row or a handful (a batch-1 MLP: oneDNN's gemv needs no packing)
     * and tiny products (its call costs less than our A copy) stay oneDNN's */
    if (m < 6 || (double)m * (double)k * (double)nn < 262144.0) return NULL;
    const float *bias = NULL;
    if (bias_mem && !(bias = odn_mem_f32(bias_mem))) return NULL;
    int64_t out[2] = {m, nn};
    dnnl_memory_desc_t dst_md;
    if (odn_plain_md(&dst_md, 2, out) != dnnl_success) return NULL;
    post_passes pp;
    pp.count = 0;
    memset(pp.binary, 0, sizeof pp.binary);
    if (!post_passes_make(p, attr, &dst_md, &pp)) return NULL;
    const float *packed = NULL;
    tsr_status *s = packed_weights(p, const_key, b_mem, b_md, k, nn, n, &packed);
    if (!s) s = odn_plan_define(p, last, onnx_rank, onnx_dims, onnx_rank == 2 ? &dst_md : NULL, n);
    dnnl_memory_t dst = last->mem;
    if (!s && onnx_rank != 2) s = odn_plan_plain_view(p, last, 2, out, NULL, n, &dst, NULL);
    if (!s) s = odn_sgemm_add_step(p, n, m, nn, k, lda, a_mem, packed, bias, dst);
    if (!s) s = post_passes_add(p, n, &pp, dst, post_args, npost);
    passes_free(&pp);
    *done = !s;
    return s;
}
