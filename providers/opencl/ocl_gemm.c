/* Gemm and MatMul on gemm_tiled: shapes, strides and batching. */
#include <stdio.h>
#include <string.h>

#include "ocl_linalg.h"

const char *ocl_gemm_check(const tsr_node *n, int32_t *reason, char *buf, size_t size) {
    (void)buf;
    (void)size;
    const char *why = ocl_check_float(n, reason);
    if (why) return why;
    if (ocl_host->node_input_count(n) < 2 || ocl_host->node_output_count(n) != 1) {
        *reason = TSR_DECLINE_OTHER;
        return "needs A and B";
    }
    for (size_t i = 0; i < 2; i++) {
        int32_t r = ocl_host->value_rank(ocl_host->node_input(n, i));
        if (r != 2 && r != -1) {
            *reason = TSR_DECLINE_SHAPE;
            return "A and B must be 2-D";
        }
    }
    return NULL;
}

const char *ocl_matmul_check(const tsr_node *n, int32_t *reason, char *buf, size_t size) {
    (void)buf;
    (void)size;
    const char *why = ocl_check_float(n, reason);
    if (why) return why;
    if (ocl_host->node_input_count(n) != 2) {
        *reason = TSR_DECLINE_OTHER;
        return "needs two inputs";
    }
    return NULL;
}

tsr_status *ocl_gemm_prepare(ocl_lin *l, const tsr_node *n) {
    l->trans_a = ocl_attr_int(n, "transA", 0) != 0;
    l->trans_b = ocl_attr_int(n, "transB", 0) != 0;
    l->alpha = ocl_attr_float(n, "alpha", 1.0f);
    l->beta = ocl_attr_float(n, "beta", 1.0f);
    return NULL;
}

static bool fits_int(int64_t v) { return v >= 0 && v <= INT32_MAX; }

tsr_status *ocl_gemm_run(ocl_exec *x, void *state) {
    ocl_lin *l = state;
    const ocl_tensor *a = ocl_exec_input(x, 0), *b = ocl_exec_input(x, 1), *c = ocl_exec_input(x, 2);
    if (!a || !b || a->rank != 2 || b->rank != 2) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "Gemm needs 2-D A and B");
    int64_t M = l->trans_a ? a->dims[1] : a->dims[0], K = l->trans_a ? a->dims[0] : a->dims[1];
    int64_t Kb = l->trans_b ? b->dims[1] : b->dims[0], N = l->trans_b ? b->dims[0] : b->dims[1];
    if (K != Kb)
        return ocl_error(TSR_ERR_INVALID_ARGUMENT, "Gemm: inner dims %lld and %lld differ", (long long)K,
                         (long long)Kb);
    if (!fits_int(a->count) || !fits_int(b->count) || !fits_int(M * N))
        return ocl_error(TSR_ERR_NOT_SUPPORTED, "Gemm: tensors too large");
    ocl_gemm_args g = {0};
    g.M = (int)M, g.N = (int)N, g.K = (int)K, g.batch = 1;
    g.A = a->mem, g.a_rs = l->trans_a ? 1 : (int)K, g.a_cs = l->trans_a ? (int)M : 1;
    g.B = b->mem, g.b_rs = l->trans_b ? 1 : (int)N, g.b_cs = l->trans_b ? (int)K : 1;
    g.alpha = l->alpha, g.beta = l->beta;
    if (c && l->beta != 0.0f) {
        /* C broadcasts to [M, N] from its trailing dims */
        if (c->rank > 2) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "Gemm: C has rank > 2");
        int64_t cm = c->rank == 2 ? c->dims[0] : 1, cn = c->rank >= 1 ? c->dims[c->rank - 1] : 1;
        if ((cm != 1 && cm != M) || (cn != 1 && cn != N))
            return ocl_error(TSR_ERR_INVALID_ARGUMENT, "Gemm: C does not broadcast to [%lld, %lld]", (long long)M,
                             (long long)N);
        g.bias = c->mem;
        g.bias_rs = cm == 1 ? 0 : (int)cn;
        g.bias_cs = cn == 1 ? 0 : 1;
    }
    int64_t dims[2] = {M, N};
    ocl_tensor *y;
    tsr_status *s = ocl_exec_output(x, 0, TSR_FLOAT, 2, dims, &y);
    if (s) return s;
    g.C = y->mem, g.ldc = (int)N;
    return ocl_gemm_launch(ocl_exec_state(x), l, &g);
}

tsr_status *ocl_matmul_run(ocl_exec *x, void *state) {
    ocl_lin *l = state;
    const ocl_tensor *a = ocl_exec_input(x, 0), *b = ocl_exec_input(x, 1);
    if (!a || !b || a->rank < 1 || b->rank < 1)
        return ocl_error(TSR_ERR_INVALID_ARGUMENT, "MatMul needs inputs of rank >= 1");
    /* 1-D operands: a row vector on the left, a column vector on the right */
    int64_t M = a->rank >= 2 ? a->dims[a->rank - 2] : 1, K = a->dims[a->rank - 1];
    int64_t Kb = b->rank >= 2 ? b->dims[b->rank - 2] : b->dims[0];
    int64_t N = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
    if (K != Kb)
        return ocl_error(TSR_ERR_INVALID_ARGUMENT, "MatMul: inner dims %lld and %lld differ", (long long)K,
                         (long long)Kb);
    int ab = a->rank > 2 ? a->rank - 2 : 0, bb = b->rank > 2 ? b->rank - 2 : 0;
    int ob = ab > bb ? ab : bb;
    int64_t bdims[OCL_MAX_RANK], adims_b[OCL_MAX_RANK], bdims_b[OCL_MAX_RANK];
    for (int d = 0; d < ob; d++) {
        int ia = d - (ob - ab), ib = d - (ob - bb);
        adims_b[d] = ia >= 0 ? a->dims[ia] : 1;
        bdims_b[d] = ib >= 0 ? b->dims[ib] : 1;
        if (adims_b[d] != bdims_b[d] && adims_b[d] != 1 && bdims_b[d] != 1)
            return ocl_error(TSR_ERR_INVALID_ARGUMENT, "MatMul: batch dims do not broadcast");
        bdims[d] = adims_b[d] == 1 ? bdims_b[d] : adims_b[d];
    }
    int64_t odims[OCL_MAX_RANK];
    int orank = 0;
    for (int d = 0; d < ob; d++) odims[orank++] = bdims[d];
    if (a->rank >= 2) odims[orank++] = M;
    if (b->rank >= 2) odims[orank++] = N;
    ocl_tensor *y;
    tsr_status *s = ocl_exec_output(x, 0, TSR_FLOAT, orank, odims, &y);
    if (s) return s;
    if (!fits_int(a->count) || !fits_int(b->count) || !fits_int((int64_t)y->count))
        return ocl_error(TSR_ERR_NOT_SUPPORTED, "MatMul: tensors too large");
    size_t batch = 1, a_batch = 1, b_batch = 1;
    for (int d = 0; d < ob; d++) {
        batch *= (size_t)bdims[d];
        a_batch *= (size_t)adims_b[d];
        b_batch *= (size_t)bdims_b[d];
    }
    ocl_gemm_args g = {0};
    g.K = (int)K, g.N = (int)N, g.alpha = 1.0f;
    g.A = a->mem, g.a_rs = (int)K, g.a_cs = 1;
    g.B = b->mem, g.b_rs = (int)N, g.b_cs = 1;
    g.C = y->mem, g.ldc = (int)N;
    if (l->bias_input >= 0) {
        /* a fused Add: bias[col] for every row and batch */
        const ocl_tensor *bias = ocl_exec_input(x, (size_t)l->bias_input);
        if (!bias || bias->elem_type != TSR_FLOAT || (int64_t)bias->count != N)
            return ocl_error(TSR_ERR_INVALID_ARGUMENT, "MatMul: fused bias does not have %lld values", (long long)N);
        g.bias = bias->mem, g.bias_rs = 0, g.bias_cs = 1, g.beta = 1.0f;
    }
    if (b_batch == 1) {
        /* B shared: A's batch folds into its rows */
        g.M = (int)(M * (int64_t)batch), g.batch = 1;
        if (a_batch != batch) {
            g.M = (int)M, g.batch = (int)batch, g.a_bs = 0, g.c_bs = (int)(M * N);
        }
        return ocl_gemm_launch(ocl_exec_state(x), l, &g);
    }
    if (a_batch == batch || a_batch == 1) {
        if (b_batch == batch) {
            g.M = (int)M, g.batch = (int)batch;
            g.a_bs = a_batch == 1 ? 0 : (int)(M * K);
            g.b_bs = (int)(K * N), g.c_bs = (int)(M * N);
            return ocl_gemm_launch(ocl_exec_state(x), l, &g);
        }
    }
    /* Mixed broadcasting: one launch per output matrix. */
    g.M = (int)M, g.batch = 1;
    for (size_t i = 0; i < batch && !s; i++) {
        size_t rem = i, ai = 0, bi = 0, as = 1, bs = 1;
        for (int d = ob - 1; d >= 0; d--) {
            size_t c = rem % (size_t)bdims[d];
            rem /= (size_t)bdims[d];
            if (adims_b[d] != 1) ai += c * as;
            if (bdims_b[d] != 1) bi += c * bs;
            as *= (size_t)adims_b[d];
            bs *= (size_t)bdims_b[d];
        }
        g.a_off = (int)(ai * (size_t)(M * K));
        g.b_off = (int)(bi * (size_t)(K * N));
        g.c_off = (int)(i * (size_t)(M * N));
        s = ocl_gemm_launch(ocl_exec_state(x), l, &g);
    }
    return s;
}
