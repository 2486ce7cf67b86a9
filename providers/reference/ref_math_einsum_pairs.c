/*
 * Einsum as pairwise tensor contractions, the reference kernel's fast path
 * (ref_math_einsum.c keeps the per-element loop for what this declines).
 *
 * The operands are contracted left to right. Each step takes two operands
 * A and B and sorts the labels either holds into
 *   batch       in A and B, needed after the step (in the output or a
 *               later operand),
 *   left        in A alone, needed after,
 *   right       in B alone, needed after,
 *   contracted  in A and B, not needed after,
 *   summed      in A alone or B alone, not needed after,
 * copies A to a contiguous [batch, left, contracted] and B to [batch,
 * contracted, right] (summing the summed labels out on the way, adding up
 * the strides of a label repeated in a term: a diagonal), and runs one
 * GEMM per batch index, [left x contracted] times [contracted x right], on
 * the GEMM that MatMul runs (ref_nn_util.c). The result, [batch, left,
 * right] in doubles, is the next step's A; the last is copied to the
 * output's order and rounded once to the output type.
 *
 * Dimensions of size 1 drop out: a size-1 ellipsis dimension against a
 * wider one is a broadcast, and a label of size 1 everywhere indexes
 * nothing. The sums are those of the per-element loop, in double, in
 * another order: products of two float-family operands (float, float16,
 * bfloat16) are exact in double, so two such operands with nothing summed
 * alone go through the float-operand, double-sum GEMM (ref_nn_sgemm_run_d)
 * without a copy when already in order; anything else (integers, double,
 * three or more operands, a label summed on one side) is copied as double
 * and runs on the double GEMM. Integers are exact while the sums stay
 * within 2^53, as in the per-element loop.
 */
#include <stdlib.h>
#include <string.h>

#include "ref.h"
#include "ref_math.h"
#include "ref_math_einsum.h"
#include "ref_nn.h"

/* An operand: a typed buffer and its distinct labels of size > 1, each
 * with its stride in elements (a diagonal's strides added up). */
typedef struct ein_op {
    int32_t type;
    const void *data;
    int n;
    int lab[REF_MAX_RANK];
    int64_t str[REF_MAX_RANK];
    double *owned; /* an intermediate result, freed after its step */
} ein_op;

/* A copy from an operand: the kept dimensions in destination (row-major)
 * order and the dimensions summed over, each with its source stride;
 * dimensions of size 1 left out, kept ones merged where contiguous. */
typedef struct ein_gather {
    int n, ns;
    int64_t dims[REF_MAX_RANK], str[REF_MAX_RANK];
    int64_t sdims[REF_MAX_RANK], sstr[REF_MAX_RANK];
} ein_gather;

static void g_keep(ein_gather *g, int64_t d, int64_t s) {
    if (d == 1) return;
    if (g->n > 0 && g->str[g->n - 1] == s * d) {
        g->dims[g->n - 1] *= d;
        g->str[g->n - 1] = s;
        return;
    }
    g->dims[g->n] = d;
    g->str[g->n++] = s;
}

static void g_sum(ein_gather *g, int64_t d, int64_t s) {
    if (d == 1) return;
    g->sdims[g->ns] = d;
    g->sstr[g->ns++] = s;
}

/* The element types the kernel takes, for loops with the type's switch
 * folded away. */
#define EIN_TYPES(X)                                                                                                   \
    X(TSR_FLOAT)                                                                                                       \
    X(TSR_DOUBLE)                                                                                                      \
    X(TSR_FLOAT16)                                                                                                     \
    X(TSR_BFLOAT16)                                                                                                    \
    X(TSR_INT8)                                                                                                        \
    X(TSR_INT16)                                                                                                       \
    X(TSR_INT32)                                                                                                       \
    X(TSR_INT64)                                                                                                       \
    X(TSR_UINT8)                                                                                                       \
    X(TSR_UINT16)                                                                                                      \
    X(TSR_UINT32)                                                                                                      \
    X(TSR_UINT64)                                                                                                      \
    X(TSR_BOOL)

/* n elements from src[off], src[off + str], ... as doubles. */
static void row_d(int32_t t, const void *src, int64_t off, int64_t str, int64_t n, double *dst) {
    switch (t) {
#define EIN_ROW(T)                                                                                                     \
    case T:                                                                                                            \
        for (int64_t j = 0; j < n; j++) dst[j] = m_ldd(T, src, (size_t)(off + j * str));                               \
        return;
        EIN_TYPES(EIN_ROW)
#undef EIN_ROW
    default:
        for (int64_t j = 0; j < n; j++) dst[j] = m_ldd(t, src, (size_t)(off + j * str));
    }
}

/* The same as floats, for the float family (exact). */
static void row_f(int32_t t, const void *src, int64_t off, int64_t str, int64_t n, float *dst) {
    switch (t) {
#define EIN_ROW(T)                                                                                                     \
    case T:                                                                                                            \
        for (int64_t j = 0; j < n; j++) dst[j] = m_ldf(T, src, (size_t)(off + j * str));                               \
        return;
        EIN_ROW(TSR_FLOAT)
        EIN_ROW(TSR_FLOAT16)
        EIN_ROW(TSR_BFLOAT16)
#undef EIN_ROW
    default:
        for (int64_t j = 0; j < n; j++) dst[j] = m_ldf(t, src, (size_t)(off + j * str));
    }
}

/* Their sum, in double. */
static double row_sum(int32_t t, const void *src, int64_t off, int64_t str, int64_t n) {
    double s = 0;
    switch (t) {
#define EIN_ROW(T)                                                                                                     \
    case T:                                                                                                            \
        for (int64_t j = 0; j < n; j++) s += m_ldd(T, src, (size_t)(off + j * str));                                   \
        return s;
        EIN_TYPES(EIN_ROW)
#undef EIN_ROW
    default:
        for (int64_t j = 0; j < n; j++) s += m_ldd(t, src, (size_t)(off + j * str));
    }
    return s;
}

/* The sum of src over g's summed dimensions from src[base]. */
static double sum_over(int32_t t, const void *src, int64_t base, const ein_gather *g) {
    int ns = g->ns;
    int64_t inner = g->sdims[ns - 1], istr = g->sstr[ns - 1], outer = 1;
    int64_t idx[REF_MAX_RANK];
    for (int d = 0; d + 1 < ns; d++) {
        outer *= g->sdims[d];
        idx[d] = 0;
    }
    double s = 0;
    int64_t off = base;
    for (int64_t r = 0; r < outer; r++) {
        s += row_sum(t, src, off, istr, inner);
        for (int d = ns - 2; d >= 0; d--) {
            off += g->sstr[d];
            if (++idx[d] < g->sdims[d]) break;
            off -= g->sstr[d] * g->sdims[d];
            idx[d] = 0;
        }
    }
    return s;
}

/* Copies src through g into dd (doubles) or df (floats; nothing summed).
 * True when the run was stopped. */
static bool gather(ref_ctx *c, int32_t t, const void *src, const ein_gather *g, double *dd, float *df) {
    int n = g->n;
    int64_t inner = n ? g->dims[n - 1] : 1, istr = n ? g->str[n - 1] : 0, outer = 1, per = inner;
    int64_t idx[REF_MAX_RANK];
    for (int d = 0; d + 1 < n; d++) {
        outer *= g->dims[d];
        idx[d] = 0;
    }
    for (int d = 0; d < g->ns; d++) per *= g->sdims[d];
    int64_t off = 0;
    for (int64_t r = 0; r < outer; r++) {
        if (ref_work(c, per)) return true;
        if (g->ns == 0) {
            if (df) row_f(t, src, off, istr, inner, df + r * inner);
            else row_d(t, src, off, istr, inner, dd + r * inner);
        } else {
            for (int64_t j = 0; j < inner; j++) dd[r * inner + j] = sum_over(t, src, off + j * istr, g);
        }
        for (int d = n - 2; d >= 0; d--) {
            off += g->str[d];
            if (++idx[d] < g->dims[d]) break;
            off -= g->str[d] * g->dims[d];
            idx[d] = 0;
        }
    }
    return false;
}

/* x through g as a contiguous buffer of `count` floats (f) or doubles:
 * x's own data when it is that already, else a copy in *owned. */
static tsr_status *pack(ref_ctx *c, const ein_op *x, const ein_gather *g, int64_t count, bool f, const void **view,
                        void **owned) {
    *owned = NULL;
    if (g->ns == 0 && (g->n == 0 || (g->n == 1 && g->str[0] == 1)) && x->type == (f ? TSR_FLOAT : TSR_DOUBLE)) {
        *view = x->data;
        return NULL;
    }
    void *buf = malloc((size_t)(count ? count : 1) * (f ? sizeof(float) : sizeof(double)));
    if (!buf) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory copying an Einsum operand");
    if (gather(c, x->type, x->data, g, f ? NULL : buf, f ? buf : NULL)) {
        free(buf);
        return ref_stopped(c);
    }
    *owned = buf;
    *view = buf;
    return NULL;
}

/* Sums of products in four chains, for the GEMMs with one column. */
static double dot_f(const float *a, const float *b, int64_t k) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int64_t p = 0;
    for (; p + 4 <= k; p += 4) {
        s0 += (double)a[p] * b[p];
        s1 += (double)a[p + 1] * b[p + 1];
        s2 += (double)a[p + 2] * b[p + 2];
        s3 += (double)a[p + 3] * b[p + 3];
    }
    for (; p < k; p++) s0 += (double)a[p] * b[p];
    return (s0 + s1) + (s2 + s3);
}

static double dot_d(const double *a, const double *b, int64_t k) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int64_t p = 0;
    for (; p + 4 <= k; p += 4) {
        s0 += a[p] * b[p];
        s1 += a[p + 1] * b[p + 1];
        s2 += a[p + 2] * b[p + 2];
        s3 += a[p + 3] * b[p + 3];
    }
    for (; p < k; p++) s0 += a[p] * b[p];
    return (s0 + s1) + (s2 + s3);
}

/* A step's labels by kind, each list in the order the GEMM lays it out. */
typedef struct ein_kinds {
    int nb, nl, nr, nc, nsa, nsb;
    int bat[REF_MAX_RANK], lef[REF_MAX_RANK], rig[REF_MAX_RANK], con[REF_MAX_RANK];
    int suma[REF_MAX_RANK], sumb[REF_MAX_RANK];
} ein_kinds;

/* Sorts labels by their place in the output (labels not in it last, in the
 * order given); stable. */
static void sort_by(int *lab, int n, const int *key) {
    for (int i = 1; i < n; i++) {
        int l = lab[i], j = i;
        for (; j > 0 && key[lab[j - 1]] > key[l]; j--) lab[j] = lab[j - 1];
        lab[j] = l;
    }
}

static void classify(const ein_op *A, const ein_op *B, const int64_t *sa, const int64_t *sb, const bool *keep,
                     const int *key, ein_kinds *k) {
    memset(k, 0, sizeof *k);
    for (int i = 0; i < A->n; i++) {
        int l = A->lab[i];
        if (sb[l] >= 0) {
            if (keep[l]) k->bat[k->nb++] = l;
            else k->con[k->nc++] = l;
        } else if (keep[l]) {
            k->lef[k->nl++] = l;
        } else {
            k->suma[k->nsa++] = l;
        }
    }
    for (int i = 0; i < B->n; i++) {
        int l = B->lab[i];
        if (sa[l] >= 0) continue;
        if (keep[l]) k->rig[k->nr++] = l;
        else k->sumb[k->nsb++] = l;
    }
    sort_by(k->bat, k->nb, key);
    sort_by(k->lef, k->nl, key);
    sort_by(k->rig, k->nr, key);
}

static void op_strides(const ein_op *x, int64_t *s) {
    for (int l = 0; l < EIN_MAX_LABELS; l++) s[l] = -1;
    for (int i = 0; i < x->n; i++) s[x->lab[i]] = x->str[i];
}

static int64_t op_count(const ein_eq *q, const ein_op *x) {
    int64_t n = 1;
    for (int i = 0; i < x->n; i++) n *= q->size[x->lab[i]];
    return n;
}

/* The product of the sizes of n labels; -1 past 2^48 (no buffer that big). */
static int64_t prod(const ein_eq *q, const int *lab, int n) {
    int64_t p = 1;
    for (int i = 0; i < n; i++)
        if (__builtin_mul_overflow(p, q->size[lab[i]], &p) || p > ((int64_t)1 << 48)) return -1;
    return p;
}

/* One step: R = the contraction of A and B keeping the labels in `keep`. */
static tsr_status *contract(ref_ctx *c, const ein_eq *q, const ein_op *A, const ein_op *B, const bool *keep,
                            const int *key, bool allow_f, ein_op *R) {
    int64_t sa[EIN_MAX_LABELS], sb[EIN_MAX_LABELS];
    op_strides(A, sa);
    op_strides(B, sb);
    ein_kinds k;
    classify(A, B, sa, sb, keep, key, &k);
    /* B's labels first in the output: swap, so that C needs no transpose. */
    if (k.nl && k.nr && key[k.rig[0]] < key[k.lef[0]]) {
        const ein_op *x = A;
        A = B;
        B = x;
        op_strides(A, sa);
        op_strides(B, sb);
        classify(A, B, sa, sb, keep, key, &k);
    }
    /* Contracted labels in the memory order of the larger operand. */
    const int64_t *sbig = op_count(q, A) >= op_count(q, B) ? sa : sb;
    for (int i = 1; i < k.nc; i++) {
        int l = k.con[i], j = i;
        for (; j > 0 && sbig[k.con[j - 1]] < sbig[l]; j--) k.con[j] = k.con[j - 1];
        k.con[j] = l;
    }
    int64_t nb = prod(q, k.bat, k.nb), m = prod(q, k.lef, k.nl), n = prod(q, k.rig, k.nr), kk = prod(q, k.con, k.nc);
    int64_t mn, mnb;
    if (nb < 0 || m < 0 || n < 0 || kk < 0 || __builtin_mul_overflow(m, n, &mn) ||
        __builtin_mul_overflow(mn, nb, &mnb) || mnb > ((int64_t)1 << 48))
        return ref_err(c, TSR_ERR_NO_MEMORY, "Einsum intermediate result too large");
    bool f = allow_f && k.nsa == 0 && k.nsb == 0;

    ein_gather ga = {0}, gb = {0};
    for (int i = 0; i < k.nb; i++) g_keep(&ga, q->size[k.bat[i]], sa[k.bat[i]]);
    for (int i = 0; i < k.nl; i++) g_keep(&ga, q->size[k.lef[i]], sa[k.lef[i]]);
    for (int i = 0; i < k.nc; i++) g_keep(&ga, q->size[k.con[i]], sa[k.con[i]]);
    for (int i = 0; i < k.nsa; i++) g_sum(&ga, q->size[k.suma[i]], sa[k.suma[i]]);
    for (int i = 0; i < k.nb; i++) g_keep(&gb, q->size[k.bat[i]], sb[k.bat[i]]);
    for (int i = 0; i < k.nc; i++) g_keep(&gb, q->size[k.con[i]], sb[k.con[i]]);
    for (int i = 0; i < k.nr; i++) g_keep(&gb, q->size[k.rig[i]], sb[k.rig[i]]);
    for (int i = 0; i < k.nsb; i++) g_sum(&gb, q->size[k.sumb[i]], sb[k.sumb[i]]);

    const void *pa, *pb;
    void *oa = NULL, *ob = NULL;
    tsr_status *st = pack(c, A, &ga, nb * m * kk, f, &pa, &oa);
    if (!st) st = pack(c, B, &gb, nb * kk * n, f, &pb, &ob);
    double *cbuf = NULL;
    if (!st) {
        cbuf = calloc((size_t)(mnb ? mnb : 1), sizeof *cbuf);
        if (!cbuf) st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory for an Einsum intermediate result");
    }
    size_t es = f ? sizeof(float) : sizeof(double);
    for (int64_t b = 0; !st && b < nb; b++) {
        const char *ab = (const char *)pa + (size_t)(b * m * kk) * es,
                   *bb = (const char *)pb + (size_t)(b * kk * n) * es;
        double *cb = cbuf + b * mn;
        if (n == 1) {
            /* One column: a dot product per row. */
            if (ref_work(c, m * kk)) st = ref_stopped(c);
            else if (f)
                for (int64_t i = 0; i < m; i++) cb[i] = dot_f((const float *)ab + i * kk, (const float *)bb, kk);
            else
                for (int64_t i = 0; i < m; i++) cb[i] = dot_d((const double *)ab + i * kk, (const double *)bb, kk);
        } else {
            if (nb > 1 && ref_work(c, m * n * kk)) st = ref_stopped(c);
            else if (f) st = ref_nn_sgemm_run_d(c, m, n, kk, (const float *)ab, kk, (const float *)bb, n, cb, n);
            else st = ref_nn_dgemm_run(c, m, n, kk, (const double *)ab, kk, (const double *)bb, n, cb, n);
        }
    }
    free(oa);
    free(ob);
    if (st) {
        free(cbuf);
        return st;
    }
    /* C is [batch, left, right]. */
    memset(R, 0, sizeof *R);
    R->type = TSR_DOUBLE;
    R->data = cbuf;
    R->owned = cbuf;
    for (int i = 0; i < k.nb; i++) R->lab[R->n++] = k.bat[i];
    for (int i = 0; i < k.nl; i++) R->lab[R->n++] = k.lef[i];
    for (int i = 0; i < k.nr; i++) R->lab[R->n++] = k.rig[i];
    int64_t s = 1;
    for (int i = R->n - 1; i >= 0; i--) {
        R->str[i] = s;
        s *= q->size[R->lab[i]];
    }
    return NULL;
}

/* n doubles into an output of type t, each rounded once. */
static void store(int32_t t, void *dst, const double *src, size_t n) {
    switch (t) {
#define EIN_ST(T)                                                                                                      \
    case T:                                                                                                            \
        for (size_t i = 0; i < n; i++) m_std(T, dst, i, src[i]);                                                       \
        return;
        EIN_TYPES(EIN_ST)
#undef EIN_ST
    default:
        for (size_t i = 0; i < n; i++) m_std(t, dst, i, src[i]);
    }
}

tsr_status *ref_math_einsum_pairs(ref_ctx *c, const ein_eq *q, int32_t t, tsr_tensor *o, bool *done) {
    *done = false;
    /* key: a label's place in the output, past every place when absent. */
    int key[EIN_MAX_LABELS];
    for (int l = 0; l < EIN_MAX_LABELS; l++) key[l] = REF_MAX_RANK;
    for (int i = 0; i < q->on; i++) {
        if (key[q->olab[i]] < REF_MAX_RANK) return NULL; /* "i->ii": the per-element loop */
        key[q->olab[i]] = i;
    }
    *done = true;
    size_t nout = (size_t)ref_numel(o);
    for (int l = 0; l < EIN_MAX_LABELS; l++)
        if (q->size[l] == 0) { /* an empty sum, or an empty output */
            for (size_t i = 0; i < nout; i++) m_std(t, o->data, i, 0.0);
            return NULL;
        }

    /* The operands, without their size-1 dimensions. */
    ein_op ops[EIN_MAX_INPUTS];
    bool allow_f = q->nin == 2;
    for (size_t k = 0; k < q->nin; k++) {
        const tsr_tensor *x = q->in[k];
        ein_op *p = &ops[k];
        memset(p, 0, sizeof *p);
        p->type = x->elem_type;
        p->data = x->data;
        allow_f = allow_f && m_class(x->elem_type) == MC_F32;
        int64_t s = 1;
        for (int32_t d = x->rank - 1; d >= 0; d--) {
            int l = q->labels[k][d];
            if (x->dims[d] != 1) {
                int i = 0;
                while (i < p->n && p->lab[i] != l) i++;
                if (i == p->n) {
                    p->lab[p->n] = l;
                    p->str[p->n++] = 0;
                }
                p->str[i] += s;
            }
            s *= x->dims[d];
        }
    }

    /* Left to right; after step k the labels of the output and of the
     * operands still to come are kept. */
    ein_op cur = ops[0];
    for (size_t k = 1; k < q->nin; k++) {
        bool keep[EIN_MAX_LABELS] = {false};
        for (int i = 0; i < q->on; i++) keep[q->olab[i]] = true;
        for (size_t j = k + 1; j < q->nin; j++)
            for (int i = 0; i < ops[j].n; i++) keep[ops[j].lab[i]] = true;
        ein_op next;
        tsr_status *st = contract(c, q, &cur, &ops[k], keep, key, allow_f, &next);
        free(cur.owned);
        if (st) return st;
        cur = next;
    }

    /* Into the output's order, summing what a single operand has beyond
     * the output's labels. */
    int64_t s[EIN_MAX_LABELS];
    op_strides(&cur, s);
    ein_gather g = {0};
    for (int i = 0; i < q->on; i++) g_keep(&g, q->size[q->olab[i]], s[q->olab[i]] < 0 ? 0 : s[q->olab[i]]);
    for (int i = 0; i < cur.n; i++)
        if (key[cur.lab[i]] == REF_MAX_RANK) g_sum(&g, q->size[cur.lab[i]], cur.str[i]);
    const double *res = cur.data;
    double *tmp = NULL;
    if (!(g.ns == 0 && (g.n == 0 || (g.n == 1 && g.str[0] == 1)) && cur.type == TSR_DOUBLE)) {
        tmp = malloc((nout ? nout : 1) * sizeof *tmp);
        if (!tmp) {
            free(cur.owned);
            return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory for the Einsum output");
        }
        if (gather(c, cur.type, cur.data, &g, tmp, NULL)) {
            free(tmp);
            free(cur.owned);
            return ref_stopped(c);
        }
        res = tmp;
    }
    store(t, o->data, res, nout);
    free(tmp);
    free(cur.owned);
    return NULL;
}
