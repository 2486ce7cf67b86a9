/*
 * MatMul, Gemm and Dropout for the reference provider.
 *
 * MatMul and Gemm run on ref_nn_sgemm_run/ref_nn_dgemm_run (ref_nn_util.c,
 * ref_nn_wide.c): float operands with double sums for float, float16 and
 * bfloat16, double math for double. Integer MatMul accumulates in 64-bit
 * unsigned arithmetic, so it wraps exactly as numpy's fixed-width integers
 * do.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_nn.h"

static bool is_float_family(int32_t t) {
    return t == TSR_FLOAT || t == TSR_DOUBLE || t == TSR_FLOAT16 || t == TSR_BFLOAT16;
}

/* --- MatMul --------------------------------------------------------------- */

/* The batch loop of a (broadcast) MatMul, shared by all element types: for
 * output matrix `bi` it gives the matrix index of A and of B. */
typedef struct mm_plan {
    int64_t m, n, k;
    int64_t batch; /* output matrices */
    int32_t brank; /* rank of the broadcast batch shape */
    int64_t bdims[REF_MAX_RANK];
    int64_t astr[REF_MAX_RANK], bstr[REF_MAX_RANK]; /* in matrices; 0 = broadcast */
} mm_plan;

static void mm_index(const mm_plan *p, int64_t bi, int64_t *ai, int64_t *bj) {
    int64_t a = 0, b = 0;
    for (int32_t d = p->brank - 1; d >= 0; d--) {
        int64_t x = bi % p->bdims[d];
        bi /= p->bdims[d];
        a += x * p->astr[d];
        b += x * p->bstr[d];
    }
    *ai = a;
    *bj = b;
}

tsr_status *ref_nn_matmul(ref_ctx *c) {
    const tsr_tensor *A = ref_in(c, 0), *B = ref_in(c, 1);
    if (!A || !B) return ref_err(c, TSR_ERR_INVALID_MODEL, "MatMul needs two inputs");
    if (A->rank < 1 || B->rank < 1) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "MatMul inputs must have rank >= 1");
    if (A->elem_type != B->elem_type)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "MatMul inputs differ in element type");

    /* numpy matmul: a 1-D A is a row vector, a 1-D B a column vector, and
     * the added axis is dropped from the result. */
    int64_t ad[REF_MAX_RANK], bd[REF_MAX_RANK];
    int32_t ar = A->rank, br = B->rank;
    if (ar > REF_MAX_RANK - 1 || br > REF_MAX_RANK - 1)
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "MatMul rank too large");
    if (ar == 1) {
        ad[0] = 1;
        ad[1] = A->dims[0];
        ar = 2;
    } else {
        memcpy(ad, A->dims, (size_t)ar * sizeof *ad);
    }
    if (br == 1) {
        bd[0] = B->dims[0];
        bd[1] = 1;
        br = 2;
    } else {
        memcpy(bd, B->dims, (size_t)br * sizeof *bd);
    }
    mm_plan p;
    p.m = ad[ar - 2];
    p.k = ad[ar - 1];
    p.n = bd[br - 1];
    if (bd[br - 2] != p.k)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "MatMul inner dimensions differ (%lld vs %lld)", (long long)p.k,
                       (long long)bd[br - 2]);
    if (!ref_broadcast_shape(ar - 2, ad, br - 2, bd, &p.brank, p.bdims))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "MatMul batch dimensions do not broadcast");
    ref_broadcast_strides(ar - 2, ad, p.brank, p.bdims, p.astr);
    ref_broadcast_strides(br - 2, bd, p.brank, p.bdims, p.bstr);
    p.batch = 1;
    for (int32_t d = 0; d < p.brank; d++) p.batch *= p.bdims[d];

    int64_t od[REF_MAX_RANK];
    int32_t orank = 0;
    for (int32_t d = 0; d < p.brank; d++) od[orank++] = p.bdims[d];
    if (A->rank > 1) od[orank++] = p.m;
    if (B->rank > 1) od[orank++] = p.n;
    tsr_tensor *Y;
    tsr_status *st = ref_out(c, 0, A->elem_type, orank, od, &Y);
    if (st) return st;
    size_t total = (size_t)(p.batch * p.m * p.n);
    if (total == 0) return NULL;

    /* When B is one matrix shared by every batch of a contiguous A, the
     * batches stack into one tall GEMM, which reuses B's cache tiles. */
    bool stack = true;
    for (int32_t d = 0; d < p.brank; d++)
        if (p.bstr[d] != 0) stack = false;
    int64_t m_eff = p.m, batch_eff = p.batch;
    if (stack) {
        int64_t anum = 1;
        for (int32_t d = 0; d < ar - 2; d++) anum *= ad[d];
        if (anum == p.batch) { /* A itself is not broadcast along the batch */
            m_eff = p.m * p.batch;
            batch_eff = 1;
        }
    }

    int32_t et = A->elem_type;
    if (et == TSR_DOUBLE) {
        const double *a = A->data, *b = B->data;
        double *y = Y->data;
        memset(y, 0, total * sizeof *y);
        for (int64_t bi = 0; bi < batch_eff && !st; bi++) {
            int64_t ai, bj;
            mm_index(&p, bi, &ai, &bj);
            st = ref_nn_dgemm_run(c, m_eff, p.n, p.k, a + ai * p.m * p.k, p.k, b + bj * p.k * p.n, p.n,
                                  y + bi * m_eff * p.n, p.n);
        }
        return st;
    }
    if (is_float_family(et)) {
        const float *a, *b;
        float *ao = NULL, *bo = NULL, *yo = NULL;
        if ((st = ref_nn_f32_view(c, A, &a, &ao)) || (st = ref_nn_f32_view(c, B, &b, &bo))) goto fdone;
        float *y = Y->data;
        if (et != TSR_FLOAT) {
            y = yo = malloc(total * sizeof *y);
            if (!y) {
                st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
                goto fdone;
            }
        }
        memset(y, 0, total * sizeof *y);
        for (int64_t bi = 0; bi < batch_eff && !st; bi++) {
            int64_t ai, bj;
            mm_index(&p, bi, &ai, &bj);
            st = ref_nn_sgemm_run(c, m_eff, p.n, p.k, a + ai * p.m * p.k, p.k, b + bj * p.k * p.n, p.n,
                                  y + bi * m_eff * p.n, p.n);
        }
        if (yo && !st) ref_nn_f32_store(Y, yo, total);
    fdone:
        free(ao);
        free(bo);
        free(yo);
        return st;
    }
    if (!ref_is_int(et)) return ref_err(c, TSR_ERR_NOT_SUPPORTED, "MatMul of element type %d", (int)et);

    /* Integers: 64-bit unsigned accumulation wraps like numpy, and storing
     * truncates to the element width, which is numpy's result too. */
    uint64_t *acc = malloc((size_t)p.n * sizeof *acc);
    if (!acc) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    for (int64_t bi = 0; bi < p.batch; bi++) {
        int64_t ai, bj;
        mm_index(&p, bi, &ai, &bj);
        size_t abase = (size_t)(ai * p.m * p.k), bbase = (size_t)(bj * p.k * p.n);
        for (int64_t i = 0; i < p.m; i++) {
            if (ref_work(c, p.k * p.n)) {
                free(acc);
                return ref_stopped(c);
            }
            memset(acc, 0, (size_t)p.n * sizeof *acc);
            for (int64_t q = 0; q < p.k; q++) {
                uint64_t av = (uint64_t)ref_load_i64(et, A->data, abase + (size_t)(i * p.k + q));
                for (int64_t j = 0; j < p.n; j++)
                    acc[j] += av * (uint64_t)ref_load_i64(et, B->data, bbase + (size_t)(q * p.n + j));
            }
            size_t ybase = (size_t)((bi * p.m + i) * p.n);
            for (int64_t j = 0; j < p.n; j++) ref_store_i64(et, Y->data, ybase + (size_t)j, (int64_t)acc[j]);
        }
    }
    free(acc);
    return NULL;
}

int ref_nn_check_matmul(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size) {
    const tsr_value_info *a = host->node_input_count(node) > 0 ? host->node_input(node, 0) : NULL;
    int32_t t = a ? host->value_elem_type(a) : 0;
    if (t == 0 || is_float_family(t) || ref_is_int(t)) return 0;
    snprintf(why, why_size, "%s of element type %d is not implemented", host->node_op_type(node), (int)t);
    return TSR_DECLINE_TYPE;
}

/* --- Gemm ----------------------------------------------------------------- */

/* One Gemm, read and checked: Y = alpha * A' B' + beta * C, where A' is
 * m x k and B' is k x n. */
typedef struct gemm_args {
    const tsr_tensor *A, *B, *C; /* C NULL: none, or beta = 0 */
    bool ta, tb;
    int64_t m, n, k;
    double alpha, beta;
    int64_t cstr[2]; /* C's strides when broadcast to m x n */
} gemm_args;

/*
 * One body for both element types the GEMM loops take, rounding
 * alpha*AB + beta*C once either way (rule 1 of docs/conformance.md,
 * "Precision"; rounding AB to float first and then adding C rounds twice,
 * 1 ULP off on a few elements in ten):
 *
 * - float (C_FIRST): alpha = beta = 1, what exporters write. Y starts as C,
 *   broadcast, and the float GEMM adds its double sums to it before its one
 *   rounding.
 * - double: any other alpha or beta, and the double and integer types. The
 *   operands are widened (exactly), AB is summed in double, then
 *   alpha*AB + beta*C in double (alpha and beta are float attributes, exact
 *   in double); the caller rounds once when it stores Y.
 *
 * Transposed operands are copied once, which costs far less than the
 * product: the GEMM loop wants A as m x k and B as k x n.
 */
#define NN_DEFINE_GEMM(SUFFIX, T, VIEW, RUN, C_FIRST)                                                                  \
    /* A row-major copy of an r x c matrix, transposed: out is c x r. */                                               \
    static void transpose_##SUFFIX(const T *in, int64_t r, int64_t cols, T *out) {                                     \
        for (int64_t i = 0; i < r; i++)                                                                                \
            for (int64_t j = 0; j < cols; j++) out[j * r + i] = in[i * cols + j];                                      \
    }                                                                                                                  \
    /* When `yes`, *mat (r x cols) becomes a transposed copy, *owned. */                                               \
    static tsr_status *gemm_transposed_##SUFFIX(ref_ctx *c, bool yes, const T **mat, int64_t r, int64_t cols,          \
                                                T **owned) {                                                           \
        *owned = NULL;                                                                                                 \
        if (!yes) return NULL;                                                                                         \
        if (!(*owned = malloc((size_t)(r * cols) * sizeof(T)))) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory"); \
        transpose_##SUFFIX(*mat, r, cols, *owned);                                                                     \
        *mat = *owned;                                                                                                 \
        return NULL;                                                                                                   \
    }                                                                                                                  \
    /* What Y holds before the GEMM adds AB to it. */                                                                  \
    static void gemm_begin_##SUFFIX(const gemm_args *g, const T *cv, T *y) {                                           \
        if (!(C_FIRST) || !cv) {                                                                                       \
            memset(y, 0, (size_t)(g->m * g->n) * sizeof *y);                                                           \
            return;                                                                                                    \
        }                                                                                                              \
        for (int64_t i = 0; i < g->m; i++)                                                                             \
            for (int64_t j = 0; j < g->n; j++) y[i * g->n + j] = cv[i * g->cstr[0] + j * g->cstr[1]];                  \
    }                                                                                                                  \
    /* alpha*AB + beta*C, in double, after the GEMM. */                                                                \
    static void gemm_finish_##SUFFIX(const gemm_args *g, const T *cv, T *y) {                                          \
        if (C_FIRST) return;                                                                                           \
        for (int64_t i = 0; i < g->m; i++)                                                                             \
            for (int64_t j = 0; j < g->n; j++) {                                                                       \
                double v = g->alpha * (double)y[i * g->n + j];                                                         \
                if (cv) v += g->beta * (double)cv[i * g->cstr[0] + j * g->cstr[1]];                                    \
                y[i * g->n + j] = (T)v;                                                                                \
            }                                                                                                          \
    }                                                                                                                  \
    /* Y (m x n, of type T) for the Gemm `g`. */                                                                       \
    static tsr_status *gemm_##SUFFIX(ref_ctx *c, const gemm_args *g, T *y) {                                           \
        const T *a, *b, *cv = NULL;                                                                                    \
        T *ao = NULL, *bo = NULL, *co = NULL, *at = NULL, *bt = NULL;                                                  \
        tsr_status *st = VIEW(c, g->A, &a, &ao);                                                                       \
        if (!st) st = VIEW(c, g->B, &b, &bo);                                                                          \
        if (!st && g->C) st = VIEW(c, g->C, &cv, &co);                                                                 \
        if (!st) st = gemm_transposed_##SUFFIX(c, g->ta, &a, g->k, g->m, &at);                                         \
        if (!st) st = gemm_transposed_##SUFFIX(c, g->tb, &b, g->n, g->k, &bt);                                         \
        if (!st) {                                                                                                     \
            gemm_begin_##SUFFIX(g, cv, y);                                                                             \
            st = RUN(c, g->m, g->n, g->k, a, g->k, b, g->n, y, g->n);                                                  \
        }                                                                                                              \
        if (!st) gemm_finish_##SUFFIX(g, cv, y);                                                                       \
        free(ao);                                                                                                      \
        free(bo);                                                                                                      \
        free(co);                                                                                                      \
        free(at);                                                                                                      \
        free(bt);                                                                                                      \
        return st;                                                                                                     \
    }
NN_DEFINE_GEMM(f32, float, ref_nn_f32_view, ref_nn_sgemm_run, true)
NN_DEFINE_GEMM(f64, double, ref_nn_f64_view, ref_nn_dgemm_run, false)

/* Reads and checks the node into *g; Y's shape into yd. */
static tsr_status *gemm_read(ref_ctx *c, gemm_args *g, int64_t yd[2]) {
    const tsr_tensor *A = ref_in(c, 0), *B = ref_in(c, 1), *C = ref_in(c, 2);
    if (!A || !B) return ref_err(c, TSR_ERR_INVALID_MODEL, "Gemm needs inputs A and B");
    if (A->rank != 2 || B->rank != 2) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "Gemm inputs A and B must be 2-D");
    bool ta = ref_attr_int(c, "transA", 0) != 0, tb = ref_attr_int(c, "transB", 0) != 0;
    double alpha = ref_attr_float(c, "alpha", 1.0f), beta = ref_attr_float(c, "beta", 1.0f);
    int64_t m = ta ? A->dims[1] : A->dims[0], k = ta ? A->dims[0] : A->dims[1];
    int64_t kb = tb ? B->dims[1] : B->dims[0], n = tb ? B->dims[0] : B->dims[1];
    if (k != kb)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "Gemm inner dimensions differ (%lld vs %lld)", (long long)k,
                       (long long)kb);
    yd[0] = m;
    yd[1] = n;
    *g = (gemm_args){A, B, C, ta, tb, m, n, k, alpha, beta, {0, 0}};
    /* beta = 0 means "no C": its values (even NaN or inf) must not leak in. */
    if (beta == 0.0) g->C = NULL;
    if (!g->C) return NULL;
    int32_t r;
    int64_t bd[REF_MAX_RANK];
    if (C->rank > 2 || !ref_broadcast_shape(C->rank, C->dims, 2, yd, &r, bd) || r != 2 || bd[0] != m || bd[1] != n)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "Gemm input C does not broadcast to [%lld, %lld]", (long long)m,
                       (long long)n);
    ref_broadcast_strides(C->rank, C->dims, 2, yd, g->cstr);
    return NULL;
}

/* Y from the double results: integers truncated (exact below 2^53, which is
 * as far as alpha and beta, being floats, make sense anyway), floats
 * rounded. */
static void gemm_store_f64(tsr_tensor *Y, const double *y, size_t total) {
    if (!ref_is_int(Y->elem_type)) {
        ref_nn_f64_store(Y, y, total);
        return;
    }
    for (size_t i = 0; i < total; i++) ref_store_i64(Y->elem_type, Y->data, i, (int64_t)y[i]);
}

tsr_status *ref_nn_gemm(ref_ctx *c) {
    gemm_args g;
    int64_t yd[2];
    tsr_status *st = gemm_read(c, &g, yd);
    if (st) return st;
    int32_t et = g.A->elem_type;
    tsr_tensor *Y;
    if ((st = ref_out(c, 0, et, 2, yd, &Y))) return st;
    size_t total = (size_t)(g.m * g.n);
    if (total == 0) return NULL;
    if (!is_float_family(et) && !ref_is_int(et))
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "Gemm of element type %d", (int)et);
    bool in_float = et != TSR_DOUBLE && is_float_family(et) && g.alpha == 1.0 && (!g.C || g.beta == 1.0);
    /* Y itself when it has the type summed in, else a buffer stored at the end. */
    void *y = Y->data, *owned = NULL;
    if (et != (in_float ? TSR_FLOAT : TSR_DOUBLE)) {
        y = owned = malloc(total * (in_float ? sizeof(float) : sizeof(double)));
        if (!y) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    }
    st = in_float ? gemm_f32(c, &g, y) : gemm_f64(c, &g, y);
    if (!st && owned) {
        if (in_float) ref_nn_f32_store(Y, owned, total);
        else gemm_store_f64(Y, owned, total);
    }
    free(owned);
    return st;
}

/* --- Dropout -------------------------------------------------------------- */

/*
 * Training-mode masks come from MT19937 seeded with the `seed` attribute
 * (0 when absent), drawing doubles as numpy's legacy RandomState does:
 * np.random.seed(seed); np.random.uniform(0, 1, shape) >= ratio is exactly
 * the mask the ONNX reference (and so its test data) uses.
 */
typedef struct nn_mt {
    uint32_t s[624];
    int i;
} nn_mt;

static void mt_seed(nn_mt *m, uint32_t seed) {
    m->s[0] = seed;
    for (int i = 1; i < 624; i++) m->s[i] = 1812433253u * (m->s[i - 1] ^ (m->s[i - 1] >> 30)) + (uint32_t)i;
    m->i = 624;
}

static uint32_t mt_next(nn_mt *m) {
    if (m->i >= 624) {
        for (int k = 0; k < 624; k++) {
            uint32_t y = (m->s[k] & 0x80000000u) | (m->s[(k + 1) % 624] & 0x7fffffffu);
            m->s[k] = m->s[(k + 397) % 624] ^ (y >> 1) ^ ((y & 1) ? 0x9908b0dfu : 0);
        }
        m->i = 0;
    }
    uint32_t y = m->s[m->i++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

/* A double in [0, 1) with 53 random bits (numpy's random_sample). */
static double mt_double(nn_mt *m) {
    uint32_t a = mt_next(m) >> 5, b = mt_next(m) >> 6;
    return ((double)a * 67108864.0 + (double)b) / 9007199254740992.0;
}

tsr_status *ref_nn_dropout(ref_ctx *c) {
    const tsr_tensor *X = ref_in(c, 0);
    if (!X) return ref_err(c, TSR_ERR_INVALID_MODEL, "Dropout needs an input");
    int64_t opset = ref_opset(c);
    double ratio = 0.5;
    bool training = false;
    if (opset >= 12) {
        const tsr_tensor *r = ref_in(c, 1), *t = ref_in(c, 2);
        if (r && ref_numel(r) > 0) ratio = ref_load(r->elem_type, r->data, 0);
        if (t && ref_numel(t) > 0) training = ref_load(t->elem_type, t->data, 0) != 0;
    } else {
        /* Before opset 12 training was a property of the framework (and of
         * is_test before 7); an inference runtime always runs it as identity. */
        ratio = ref_attr_float(c, "ratio", 0.5f);
    }
    if (ratio < 0 || ratio >= 1.0) {
        if (training || ratio < 0)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "Dropout ratio %g is outside [0, 1)", ratio);
    }
    if (ratio == 0) training = false;

    tsr_tensor *Y, *M;
    tsr_status *st = ref_out(c, 0, X->elem_type, X->rank, X->dims, &Y);
    if (st) return st;
    /* The mask became bool at opset 10; before that it had the data's type. */
    int32_t mt_type = opset >= 10 ? TSR_BOOL : X->elem_type;
    bool want_mask = ref_out_wanted(c, 1);
    M = NULL;
    if (want_mask && (st = ref_out(c, 1, mt_type, X->rank, X->dims, &M))) return st;
    size_t n = (size_t)ref_numel(X);
    if (!training) {
        if (n) memcpy(Y->data, X->data, X->nbytes < Y->nbytes ? X->nbytes : Y->nbytes);
        if (M)
            for (size_t i = 0; i < n; i++) ref_store(mt_type, M->data, i, 1.0);
        return NULL;
    }
    nn_mt *mt = malloc(sizeof *mt);
    if (!mt) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    mt_seed(mt, (uint32_t)ref_attr_int(c, "seed", 0));
    double scale = 1.0 / (1.0 - ratio);
    for (size_t i = 0; i < n; i++) {
        bool keep = mt_double(mt) >= ratio;
        ref_store(X->elem_type, Y->data, i, keep ? ref_load(X->elem_type, X->data, i) * scale : 0.0);
        if (M) ref_store(mt_type, M->data, i, keep ? 1.0 : 0.0);
    }
    free(mt);
    return NULL;
}
