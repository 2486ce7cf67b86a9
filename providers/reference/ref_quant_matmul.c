/*
 * MatMulInteger and QLinearMatMul: numpy.matmul (1-D operands promoted,
 * batch dimensions broadcast) of operands with their zero points taken
 * off. A zero point or scale is per tensor, per row of A ([..., M, 1], or
 * 1-D with M elements) or per column of B ([..., 1, N], or 1-D with N).
 *
 * Operands become doubles with the zero point subtracted: 8-bit integer
 * products and their sums stay exact in a double (up to 2^37 terms), and
 * float8 operands need no other path.
 */
#include <stdlib.h>
#include <string.h>

#include "ref_quant.h"

typedef struct mm_plan {
    int32_t rank; /* the output's */
    int64_t dims[REF_MAX_RANK];
    int64_t m, n, k;
    uint64_t batch; /* matrices in the output */
    /* Operands with 1-D ones promoted to matrices: A as [1, K], B as [K, 1]. */
    int32_t a_rank, b_rank;
    int64_t a_dims[REF_MAX_RANK], b_dims[REF_MAX_RANK];
    uint64_t *a_mat, *b_mat; /* per output matrix, the operand matrix it reads */
} mm_plan;

static void mm_plan_free(mm_plan *p) {
    free(p->a_mat);
    free(p->b_mat);
}

static tsr_status *mm_plan_init(ref_ctx *c, const tsr_tensor *a, const tsr_tensor *b, mm_plan *p) {
    memset(p, 0, sizeof *p);
    if (a->rank < 1 || b->rank < 1) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "matrix product of a scalar");
    p->a_rank = a->rank == 1 ? 2 : a->rank;
    p->b_rank = b->rank == 1 ? 2 : b->rank;
    if (a->rank == 1) {
        p->a_dims[0] = 1;
        p->a_dims[1] = a->dims[0];
    } else {
        memcpy(p->a_dims, a->dims, sizeof(int64_t) * (size_t)a->rank);
    }
    if (b->rank == 1) {
        p->b_dims[0] = b->dims[0];
        p->b_dims[1] = 1;
    } else {
        memcpy(p->b_dims, b->dims, sizeof(int64_t) * (size_t)b->rank);
    }
    p->m = p->a_dims[p->a_rank - 2];
    p->k = p->a_dims[p->a_rank - 1];
    p->n = p->b_dims[p->b_rank - 1];
    if (p->b_dims[p->b_rank - 2] != p->k)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "A has %lld columns but B has %lld rows", (long long)p->k,
                       (long long)p->b_dims[p->b_rank - 2]);
    int32_t brank;
    int64_t bdims[REF_MAX_RANK];
    if (!ref_broadcast_shape(p->a_rank - 2, p->a_dims, p->b_rank - 2, p->b_dims, &brank, bdims))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "batch dimensions of A and B do not broadcast");
    p->rank = 0;
    uint64_t total = 1;
    for (int32_t d = 0; d < brank; d++) {
        p->dims[p->rank++] = bdims[d];
        if (!rq_mul_size(total, (uint64_t)bdims[d], &total))
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "output too large");
    }
    p->batch = total;
    if (a->rank > 1) p->dims[p->rank++] = p->m;
    if (b->rank > 1) p->dims[p->rank++] = p->n;
    uint64_t out;
    if (!rq_mul_size(total, (uint64_t)p->m, &out) || !rq_mul_size(out, (uint64_t)p->n, &out))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "output too large");

    p->a_mat = malloc(sizeof(uint64_t) * (size_t)(total ? total : 1));
    p->b_mat = malloc(sizeof(uint64_t) * (size_t)(total ? total : 1));
    if (!p->a_mat || !p->b_mat) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    int64_t sa[REF_MAX_RANK], sb[REF_MAX_RANK], idx[REF_MAX_RANK] = {0};
    ref_broadcast_strides(p->a_rank - 2, p->a_dims, brank, bdims, sa);
    ref_broadcast_strides(p->b_rank - 2, p->b_dims, brank, bdims, sb);
    uint64_t oa = 0, ob = 0;
    for (uint64_t i = 0; i < total; i++) {
        p->a_mat[i] = oa;
        p->b_mat[i] = ob;
        for (int32_t d = brank - 1; d >= 0; d--) {
            oa += (uint64_t)sa[d];
            ob += (uint64_t)sb[d];
            if (++idx[d] < bdims[d]) break;
            oa -= (uint64_t)(sa[d] * bdims[d]);
            ob -= (uint64_t)(sb[d] * bdims[d]);
            idx[d] = 0;
        }
    }
    return NULL;
}

/* A zero point or scale of A (side 0) as one value per row of each of A's
 * matrices, or of B (side 1) as one per column. */
static tsr_status *side_values(ref_ctx *c, const tsr_tensor *p, const mm_plan *pl, int side, const char *what,
                               double **out) {
    int32_t r = side ? pl->b_rank : pl->a_rank;
    int64_t dims[REF_MAX_RANK];
    memcpy(dims, side ? pl->b_dims : pl->a_dims, sizeof(int64_t) * (size_t)r);
    dims[side ? r - 2 : r - 1] = 1;
    tsr_tensor rows;
    int64_t rows_dims[2];
    if (p && side == 0 && p->rank == 1 && p->dims[0] != 1) {
        /* A 1-D per-row vector lines up with A's rows, not its last axis. */
        rows = *p;
        rows_dims[0] = p->dims[0];
        rows_dims[1] = 1;
        rows.rank = 2;
        rows.dims = rows_dims;
        p = &rows;
    }
    return rq_broadcast_values(c, p, r, dims, what, out);
}

/* The operand's values less its zero point, as doubles. */
static tsr_status *centered(ref_ctx *c, const tsr_tensor *t, const tsr_tensor *zp, const mm_plan *pl, int side,
                            const char *what, double **out) {
    double *z;
    tsr_status *st = side_values(c, zp, pl, side, what, &z);
    if (st) return st;
    uint64_t n = ref_numel(t);
    double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
    if (!v) {
        free(z);
        return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    }
    uint64_t kn = (uint64_t)pl->k * (uint64_t)pl->n;
    for (uint64_t i = 0; i < n; i++) {
        /* A: its row's value (i / K); B: its matrix's column's value. */
        uint64_t zi = side ? (i / kn) * (uint64_t)pl->n + i % (uint64_t)pl->n : i / (uint64_t)pl->k;
        v[i] = rq_load(t->elem_type, t->data, (size_t)i) - z[zi];
    }
    free(z);
    *out = v;
    return NULL;
}

/* c[i][m][n] = sum over k of a[a_mat[i]][m][k] * b[b_mat[i]][k][n]. */
static tsr_status *mm_compute(ref_ctx *ctx, const mm_plan *p, const double *a, const double *b, double *c) {
    uint64_t m = (uint64_t)p->m, n = (uint64_t)p->n, k = (uint64_t)p->k;
    for (uint64_t i = 0; i < p->batch; i++) {
        const double *am = a + p->a_mat[i] * m * k;
        const double *bm = b + p->b_mat[i] * k * n;
        double *cm = c + i * m * n;
        for (uint64_t r = 0; r < m * n; r++) cm[r] = 0.0;
        for (uint64_t r = 0; r < m; r++) {
            if (ref_work(ctx, (int64_t)(k * n))) return ref_stopped(ctx);
            for (uint64_t j = 0; j < k; j++) {
                double av = am[r * k + j];
                if (av == 0.0) continue;
                for (uint64_t q = 0; q < n; q++) cm[r * n + q] += av * bm[j * n + q];
            }
        }
    }
    return NULL;
}

/* The product of the centered operands, as a malloc'd array of
 * batch * M * N doubles. */
static tsr_status *centered_product(ref_ctx *c, const mm_plan *pl, const tsr_tensor *a, const tsr_tensor *za,
                                    const tsr_tensor *b, const tsr_tensor *zb, double **out) {
    double *av = NULL, *bv = NULL, *cv = NULL;
    tsr_status *st = centered(c, a, za, pl, 0, "a_zero_point", &av);
    if (!st) st = centered(c, b, zb, pl, 1, "b_zero_point", &bv);
    if (!st) {
        uint64_t n = pl->batch * (uint64_t)pl->m * (uint64_t)pl->n;
        cv = malloc(sizeof(double) * (size_t)(n ? n : 1));
        if (!cv) st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    }
    if (!st) st = mm_compute(c, pl, av, bv, cv);
    free(av);
    free(bv);
    *out = cv;
    return st;
}

static bool is_8bit_int(int32_t t) { return t == TSR_INT8 || t == TSR_UINT8; }

static bool is_qmatmul_type(int32_t t) {
    return is_8bit_int(t) || t == TSR_FLOAT8E4M3FN || t == TSR_FLOAT8E4M3FNUZ || t == TSR_FLOAT8E5M2 ||
        t == TSR_FLOAT8E5M2FNUZ;
}

/* Checks input i (required unless `optional`) has an allowed type, and its
 * zero point (if any) the same type. */
static tsr_status *check_operand(ref_ctx *c, size_t i, const char *name, size_t zi, const char *zname,
                                 bool (*type_ok)(int32_t)) {
    const tsr_tensor *t = ref_in(c, i), *z = ref_in(c, zi);
    tsr_status *st = rq_check_tensor(c, t, name);
    if (!st && z) st = rq_check_tensor(c, z, zname);
    if (st) return st;
    if (!type_ok(t->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s has unsupported element type %s", name,
                       rq_type_name(t->elem_type));
    if (z && z->elem_type != t->elem_type)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s is %s but %s is %s", zname, rq_type_name(z->elem_type), name,
                       rq_type_name(t->elem_type));
    return NULL;
}

tsr_status *ref_quant_matmul_integer(ref_ctx *c) {
    tsr_status *st = check_operand(c, 0, "A", 2, "a_zero_point", is_8bit_int);
    if (!st) st = check_operand(c, 1, "B", 3, "b_zero_point", is_8bit_int);
    if (st) return st;
    const tsr_tensor *a = ref_in(c, 0), *b = ref_in(c, 1);
    mm_plan pl;
    st = mm_plan_init(c, a, b, &pl);
    double *prod = NULL;
    if (!st) st = centered_product(c, &pl, a, ref_in(c, 2), b, ref_in(c, 3), &prod);
    tsr_tensor *y;
    if (!st) st = ref_out(c, 0, TSR_INT32, pl.rank, pl.dims, &y);
    if (!st) {
        uint64_t n = pl.batch * (uint64_t)pl.m * (uint64_t)pl.n;
        /* The sums are exact integers; int32 accumulation is allowed to
         * wrap, so keep the low 32 bits. */
        for (uint64_t i = 0; i < n; i++) ((int32_t *)y->data)[i] = (int32_t)(uint32_t)(int64_t)prod[i];
    }
    free(prod);
    mm_plan_free(&pl);
    return st;
}

tsr_status *ref_quant_qlinear_matmul(ref_ctx *c) {
    static const char *const scale_names[] = {"a_scale", "b_scale", "y_scale"};
    static const size_t scale_inputs[] = {1, 4, 6};
    tsr_status *st = check_operand(c, 0, "a", 2, "a_zero_point", is_qmatmul_type);
    if (!st) st = check_operand(c, 3, "b", 5, "b_zero_point", is_qmatmul_type);
    for (int i = 0; !st && i < 3; i++) {
        const tsr_tensor *s = ref_in(c, scale_inputs[i]);
        st = rq_check_tensor(c, s, scale_names[i]);
        if (!st && !rq_is_float_out_type(s->elem_type))
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s has element type %s", scale_names[i],
                         rq_type_name(s->elem_type));
    }
    const tsr_tensor *yz = ref_in(c, 7);
    if (!st && yz) st = rq_check_tensor(c, yz, "y_zero_point");
    if (st) return st;
    const tsr_tensor *a = ref_in(c, 0), *b = ref_in(c, 3);
    int32_t out_type = yz ? yz->elem_type : a->elem_type;
    if (!is_qmatmul_type(out_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "y_zero_point has unsupported element type %s",
                       rq_type_name(out_type));
    /* The scales' products round in the scales' own precision. */
    int32_t sprec = ref_in(c, 1)->elem_type;

    mm_plan pl;
    st = mm_plan_init(c, a, b, &pl);
    double *prod = NULL, *sa = NULL, *sb = NULL, *sy = NULL, *zy = NULL;
    if (!st) st = centered_product(c, &pl, a, ref_in(c, 2), b, ref_in(c, 5), &prod);
    if (!st) st = side_values(c, ref_in(c, 1), &pl, 0, "a_scale", &sa);
    if (!st) st = side_values(c, ref_in(c, 4), &pl, 1, "b_scale", &sb);
    if (!st) st = rq_broadcast_values(c, ref_in(c, 6), pl.rank, pl.dims, "y_scale", &sy);
    if (!st) st = rq_broadcast_values(c, yz, pl.rank, pl.dims, "y_zero_point", &zy);
    tsr_tensor *y;
    if (!st) st = ref_out(c, 0, out_type, pl.rank, pl.dims, &y);
    if (!st) {
        uint64_t m = (uint64_t)pl.m, n = (uint64_t)pl.n;
        for (uint64_t i = 0; i < pl.batch; i++) {
            for (uint64_t r = 0; r < m; r++) {
                for (uint64_t q = 0; q < n; q++) {
                    uint64_t o = (i * m + r) * n + q;
                    double mul = sa[pl.a_mat[i] * m + r] * sb[pl.b_mat[i] * n + q];
                    mul = rq_round_to(sprec, mul);
                    mul = rq_round_to(sprec, mul / sy[o]);
                    rq_quant_store(out_type, y->data, (size_t)o, prod[o] * mul, zy[o], true);
                }
            }
        }
    }
    free(prod);
    free(sa);
    free(sb);
    free(sy);
    free(zy);
    mm_plan_free(&pl);
    return st;
}
