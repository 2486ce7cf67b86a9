/* MatMulInteger and QLinearMatMul as oneDNN int8 matmuls.
 *
 * oneDNN 2.6's CPU int8 matmul takes u8 or s8 sources but only s8 weights,
 * so a uint8 B is shifted to int8 (b - 128, with its zero point shifted
 * alike: (b - 128) - (zb - 128) = b - zb). Zero points are runtime values
 * (the conformance cases feed them as inputs): a C loop before the matmul
 * copies them into s32 memories each run.
 *
 * The matmul writes the exact int32 sum of (a - za)(b - zb). For
 * QLinearMatMul a C loop then scales, rounds half to even, adds y's zero
 * point and saturates: oneDNN's own output scale and zero point add the
 * zero point before rounding, which differs from ONNX on ties.
 *
 * Zero points per row of A (za[m]) or column of B (zb[n]), which oneDNN
 * 2.6's CPU matmul does not take for weights: the matmul runs without zero
 * points (a @ b8, b8 = b less any shift) and a C loop adds the rest,
 * exactly in 64 bits, with zb8 = zb less the same shift:
 *
 *     sum_k (a - za[m])(b8 - zb8[n]) = (a @ b8)[m][n] - za[m] * colsum(b8)[n]
 *                                      - zb8[n] * rowsum(a)[m] + K za[m] zb8[n]
 *
 * then scales by sa[m] * sb[n] / sy for QLinearMatMul, as above. Scales
 * per row/column with per-tensor zero points take the same path.
 */
#include <string.h>

#include "odn_quant.h"

/* --- run-time loops --------------------------------------------------------- */

typedef struct zp_prep {
    dnnl_memory_t za, zb; /* zero point inputs, or NULL (0) */
    int32_t za_type, zb_type;
    dnnl_memory_t za32, zb32; /* the s32 memories oneDNN reads */
    int32_t zb_shift;         /* 128 when B is uint8 shifted to int8 */
    bool raw;                 /* zero points left to vec_loop: oneDNN's are 0 */
    size_t b_count;           /* elements of B to shift each run, or 0 */
    const tsr_node *node;
} zp_prep;

static tsr_status *prep_loop(const void *vctx, dnnl_memory_t b, dnnl_memory_t b_s8) {
    const zp_prep *c = vctx;
    int32_t *za = odn_q_handle(c->za32), *zb = odn_q_handle(c->zb32);
    if (!za || !zb) return odn_node_error(c->node, TSR_ERR_PROVIDER, "internal: zero point memory");
    *za = c->raw ? 0 : (int32_t)odn_q_value(c->za, c->za_type, 0);
    *zb = c->raw ? 0 : (int32_t)odn_q_value(c->zb, c->zb_type, 0) - c->zb_shift;
    if (c->b_count) {
        const uint8_t *src = odn_q_handle(b);
        int8_t *dst = odn_q_handle(b_s8);
        if (!src || !dst) return odn_node_error(c->node, TSR_ERR_PROVIDER, "internal: B memory");
        odn_q_shift_u8(src, dst, c->b_count);
    }
    return NULL;
}

typedef struct requant {
    dnnl_memory_t sa, sb, sy, zy;
    int32_t scale_type, y_type;
    size_t count;
    const tsr_node *node;
} requant;

static tsr_status *requant_loop(const void *vctx, dnnl_memory_t acc_mem, dnnl_memory_t y_mem) {
    const requant *c = vctx;
    const int32_t *acc = odn_q_handle(acc_mem);
    void *y = odn_q_handle(y_mem);
    if (!acc || !y) return odn_node_error(c->node, TSR_ERR_PROVIDER, "internal: requantize memory");
    double mul =
        odn_q_round_prec(c->scale_type, odn_q_value(c->sa, c->scale_type, 0) * odn_q_value(c->sb, c->scale_type, 0));
    mul = odn_q_round_prec(c->scale_type, mul / odn_q_value(c->sy, c->scale_type, 0));
    double zy = odn_q_value(c->zy, c->y_type, 0);
    for (size_t i = 0; i < c->count; i++) odn_q_store(c->y_type, y, i, (double)acc[i] * mul, zy);
    return NULL;
}

/* Zero points and scales per row of A / column of B (2-D operands). */
typedef struct vec_post {
    dnnl_memory_t a, b8; /* plain A (uint8/int8) and B as int8 */
    bool a_u8;
    dnnl_memory_t za, zb; /* zero points, or NULL (0) */
    int32_t za_type, zb_type, zb_shift;
    size_t za_count, zb_count; /* 1, or one per row / column */
    int64_t m, k, n;
    int64_t *colsum, *zb8;         /* scratch, n each */
    double *sb;                    /* scratch, n */
    dnnl_memory_t sa, sbm, sy, zy; /* QLinearMatMul only */
    size_t sa_count, sb_count;
    int32_t scale_type, y_type; /* y_type TSR_INT32 for MatMulInteger */
    const tsr_node *node;
} vec_post;

static tsr_status *vec_loop(const void *vctx, dnnl_memory_t acc_mem, dnnl_memory_t y_mem) {
    const vec_post *c = vctx;
    const int32_t *acc = odn_q_handle(acc_mem);
    const void *a = odn_q_handle(c->a);
    const int8_t *b = odn_q_handle(c->b8);
    void *y = odn_q_handle(y_mem);
    if (!acc || !a || !b || !y) return odn_node_error(c->node, TSR_ERR_PROVIDER, "internal: matmul memory");
    int64_t m = c->m, k = c->k, n = c->n;
    bool q8 = c->y_type != TSR_INT32;
    for (int64_t q = 0; q < n; q++) {
        c->colsum[q] = 0;
        c->zb8[q] = (int64_t)odn_q_value(c->zb, c->zb_type, c->zb_count == 1 ? 0 : (size_t)q) - c->zb_shift;
        if (q8) c->sb[q] = odn_q_value(c->sbm, c->scale_type, c->sb_count == 1 ? 0 : (size_t)q);
    }
    for (int64_t i = 0; i < k; i++)
        for (int64_t q = 0; q < n; q++) c->colsum[q] += b[i * n + q];
    double sy = q8 ? odn_q_value(c->sy, c->scale_type, 0) : 1.0, zy = q8 ? odn_q_value(c->zy, c->y_type, 0) : 0.0;
    for (int64_t r = 0; r < m; r++) {
        int64_t za = (int64_t)odn_q_value(c->za, c->za_type, c->za_count == 1 ? 0 : (size_t)r), rowsum = 0;
        for (int64_t i = 0; i < k; i++)
            rowsum += c->a_u8 ? ((const uint8_t *)a)[r * k + i] : ((const int8_t *)a)[r * k + i];
        double sa = q8 ? odn_q_value(c->sa, c->scale_type, c->sa_count == 1 ? 0 : (size_t)r) : 0.0;
        for (int64_t q = 0; q < n; q++) {
            size_t o = (size_t)(r * n + q);
            int64_t v = acc[o] - za * c->colsum[q] - c->zb8[q] * rowsum + k * za * c->zb8[q];
            if (!q8) {
                ((int32_t *)y)[o] = (int32_t)(uint32_t)(uint64_t)v; /* ONNX's int32 sums wrap */
                continue;
            }
            double mul = odn_q_round_prec(c->scale_type, sa * c->sb[q]);
            odn_q_store(c->y_type, y, o, (double)v * odn_q_round_prec(c->scale_type, mul / sy), zy);
        }
    }
    return NULL;
}

/* Element count of node input k, or 0 when absent. */
static size_t input_count(odn_plan *p, const tsr_node *n, size_t k) {
    if (k >= odn_host->node_input_count(n) || !odn_host->node_input(n, k)) return 0;
    odn_value *v = odn_plan_value(p, odn_host->node_input(n, k));
    return v ? (size_t)odn_numel(v->rank, v->dims) : 0;
}

/* The per-row/column path's loop after the matmul (see the header). */
static tsr_status *add_vec_post(odn_plan *p, const tsr_node *n, bool qlinear, const zp_prep *prep, odn_value *va,
                                dnnl_memory_t a_mem, dnnl_memory_t b8, const int64_t *dy, int64_t k, dnnl_memory_t acc,
                                odn_value *vy) {
    vec_post *c = odn_plan_alloc(p, sizeof *c);
    if (!c) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    memset(c, 0, sizeof *c);
    c->node = n;
    c->a = a_mem;
    c->b8 = b8;
    c->a_u8 = va->elem_type == TSR_UINT8;
    c->za = prep->za;
    c->zb = prep->zb;
    c->za_type = prep->za_type;
    c->zb_type = prep->zb_type;
    c->zb_shift = prep->zb_shift;
    c->za_count = input_count(p, n, 2);
    c->zb_count = input_count(p, n, qlinear ? 5 : 3);
    c->m = dy[0];
    c->k = k;
    c->n = dy[1];
    c->colsum = odn_plan_alloc(p, sizeof(int64_t) * (size_t)c->n);
    c->zb8 = odn_plan_alloc(p, sizeof(int64_t) * (size_t)c->n);
    c->sb = odn_plan_alloc(p, sizeof(double) * (size_t)c->n);
    if (!c->colsum || !c->zb8 || !c->sb) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    c->y_type = qlinear ? vy->elem_type : TSR_INT32;
    tsr_status *s = NULL;
    if (qlinear) {
        int32_t t;
        s = odn_q_input(p, n, 1, &c->sa, &c->scale_type);
        if (!s) s = odn_q_input(p, n, 4, &c->sbm, &t);
        if (!s) s = odn_q_input(p, n, 6, &c->sy, &t);
        if (!s) s = odn_q_input(p, n, 7, &c->zy, &t);
        c->sa_count = input_count(p, n, 1);
        c->sb_count = input_count(p, n, 4);
    }
    const dnnl_memory_t reads[] = {c->a, c->b8, c->za, c->zb, c->sa, c->sbm, c->sy, c->zy};
    return s ? s : odn_plan_add_loop_reading(p, vec_loop, c, acc, vy->mem, reads, sizeof reads / sizeof *reads, n);
}

/* --- the builder ------------------------------------------------------------ */

/* True when B's zero point, less `shift`, is a constant 0 (or absent with
 * no shift). */
static bool weights_zero_point_zero(odn_plan *p, const tsr_node *n, size_t izb, int32_t shift) {
    if (izb >= odn_host->node_input_count(n) || !odn_host->node_input(n, izb)) return shift == 0;
    odn_value *v = odn_plan_value(p, odn_host->node_input(n, izb));
    if (!v || !v->constant || odn_numel(v->rank, v->dims) != 1 || !v->constant->data) return false;
    int32_t t = v->constant->elem_type;
    int64_t z = t == TSR_UINT8 ? ((const uint8_t *)v->constant->data)[0]
        : t == TSR_INT8        ? ((const int8_t *)v->constant->data)[0]
                               : INT64_MIN;
    return z != INT64_MIN && z - shift == 0;
}

/* Operand `v` viewed at rank `r` (leading 1s), in its own type. */
static tsr_status *padded_view(odn_plan *p, odn_value *v, int32_t r, const tsr_node *n, dnnl_memory_t *m,
                               dnnl_memory_desc_t *md, int64_t *dims) {
    int32_t lead = r - v->rank;
    for (int32_t i = 0; i < r; i++) dims[i] = i < lead ? 1 : v->dims[i - lead];
    return odn_plan_plain_view(p, v, r, dims, NULL, n, m, md);
}

tsr_status *odn_build_quant_matmul(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    bool qlinear = strcmp(odn_host->node_op_type(n), "QLinearMatMul") == 0;
    size_t ib = qlinear ? 3 : 1, iza = 2, izb = qlinear ? 5 : 3;
    odn_value *va = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *vb = odn_plan_value(p, odn_host->node_input(n, ib));
    odn_value *vy = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!va || !vb || !vy || !va->produced || !vb->produced || !va->mem || !vb->mem)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: matmul operands not ready");
    /* a stack of rows ([batch, seq, K]) by one matrix runs as one 2-D
     * matmul, for which oneDNN takes blocked weights */
    bool flat = vb->rank == 2 && va->rank > 2;
    int32_t r = flat ? 2 : va->rank > vb->rank ? va->rank : vb->rank;
    int64_t da[ODN_MAX_RANK], db[ODN_MAX_RANK], dy[ODN_MAX_RANK];
    dnnl_memory_desc_t a_md, b_md, acc_md;
    dnnl_memory_t a_mem, b_mem, b_s8 = NULL, acc = NULL;
    tsr_status *s = NULL;
    if (flat) {
        da[1] = va->dims[va->rank - 1];
        da[0] = da[1] ? odn_numel(va->rank, va->dims) / da[1] : 0;
        s = odn_plan_plain_view(p, va, 2, da, NULL, n, &a_mem, &a_md);
    } else {
        s = padded_view(p, va, r, n, &a_mem, &a_md, da);
    }
    if (!s) s = padded_view(p, vb, r, n, &b_mem, &b_md, db);
    if (s) return s;
    for (int32_t i = 0; i < r - 2; i++) dy[i] = da[i] > db[i] ? da[i] : db[i];
    dy[r - 2] = da[r - 2];
    dy[r - 1] = db[r - 1];
    /* the output's ONNX shape: A's leading dims and B's columns when flat */
    int32_t ry = flat ? va->rank : r;
    int64_t y_dims[ODN_MAX_RANK];
    for (int32_t i = 0; i < ry; i++) y_dims[i] = flat ? va->dims[i] : dy[i];
    if (flat) y_dims[ry - 1] = db[1];

    zp_prep *prep = odn_plan_alloc(p, sizeof *prep);
    if (!prep) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    memset(prep, 0, sizeof *prep);
    prep->node = n;
    s = odn_q_input(p, n, iza, &prep->za, &prep->za_type);
    if (!s) s = odn_q_input(p, n, izb, &prep->zb, &prep->zb_type);
    if (!s) s = odn_q_s32_scalar(p, n, &prep->za32);
    if (!s) s = odn_q_s32_scalar(p, n, &prep->zb32);
    if (s) return s;
    /* any zero point or scale per row/column (the claim allows them for
     * 2-D operands only) */
    prep->raw = input_count(p, n, iza) > 1 || input_count(p, n, izb) > 1 ||
        (qlinear && (input_count(p, n, 1) > 1 || input_count(p, n, 4) > 1));
    if (prep->raw && r != 2)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: per-row/column zero point or scale at rank %d", (int)r);
    if (vb->elem_type == TSR_UINT8) {
        /* B as int8: shifted once now when constant, else every run */
        size_t count = (size_t)odn_numel(r, db);
        b_md.data_type = dnnl_s8;
        s = odn_plan_new_mem(p, &b_md, DNNL_MEMORY_ALLOCATE, n, &b_s8);
        if (s) return s;
        prep->zb_shift = 128;
        if (vb->constant) odn_q_shift_u8(odn_q_handle(b_mem), odn_q_handle(b_s8), count);
        else prep->b_count = count;
    }
    const dnnl_memory_t prep_reads[] = {prep->za, prep->zb, prep->za32, prep->zb32};
    s = odn_plan_add_loop_reading(p, prep_loop, prep, b_mem, b_s8, prep_reads, sizeof prep_reads / sizeof *prep_reads,
                                  n);
    if (s) return s;

    dnnl_primitive_attr_t attr;
    dnnl_status_t st = dnnl_primitive_attr_create(&attr);
    if (st != dnnl_success) return odn_dnnl_error(n, "attribute creation", st);
    const int32_t rt = DNNL_RUNTIME_S32_VAL;
    st = dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_SRC, 1, 0, &rt);
    /* a weight zero point that is constant 0 once shifted (symmetric int8
     * weights, as quantizers write them) is left out: the kernel then has
     * no weight-side compensation to make */
    bool wzp = !weights_zero_point_zero(p, n, izb, prep->zb_shift);
    if (st == dnnl_success && wzp) st = dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_WEIGHTS, 1, 0, &rt);
    if (st == dnnl_success) st = odn_plain_md_typed(&acc_md, r, dy, dnnl_s32);
    /* constant weights (the per-row/column loop reads them plain) in the
     * layout the kernel prefers, reordered once: with plain ones the VNNI
     * kernel repacks B on every run */
    bool blocked_b = vb->constant && !prep->raw;
    dnnl_memory_desc_t w_md = b_md;
    if (st == dnnl_success && blocked_b) {
        dnnl_dims_t wd;
        for (int32_t i = 0; i < r; i++) wd[i] = db[i];
        st = dnnl_memory_desc_init_by_tag(&w_md, r, wd, dnnl_s8, dnnl_format_tag_any);
    }
    dnnl_matmul_desc_t d;
    if (st == dnnl_success) st = dnnl_matmul_desc_init(&d, &a_md, &w_md, NULL, &acc_md);
    dnnl_primitive_desc_t pd = NULL;
    if (st == dnnl_success) st = dnnl_primitive_desc_create(&pd, &d, attr, p->engine, NULL);
    dnnl_primitive_attr_destroy(attr);
    if (st != dnnl_success) return odn_dnnl_error(n, "int8 matmul setup", st);
    dnnl_memory_t w_mem = b_s8 ? b_s8 : b_mem;
    if (blocked_b) {
        static const char shifted; /* keys the shifted copy of a uint8 B apart from B */
        const dnnl_memory_desc_t *want = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
        dnnl_memory_desc_t src_md = b_md; /* b_md.data_type is s8 once shifted */
        if (!dnnl_memory_desc_equal(want, &src_md))
            s = odn_arena_const_as_keyed(p, vb->constant->data, b_s8 ? &shifted : NULL, w_mem, &src_md, want, n,
                                         &w_mem);
        if (s) {
            dnnl_primitive_desc_destroy(pd);
            return s;
        }
    }

    if (qlinear || prep->raw) {
        /* the int32 sums go to a buffer of their own, requantized after */
        s = odn_plan_new_mem(p, &acc_md, DNNL_MEMORY_ALLOCATE, n, &acc);
        if (!s) s = odn_plan_define(p, vy, ry, y_dims, NULL, n);
    } else {
        s = odn_plan_define(p, vy, ry, y_dims, NULL, n);
        acc = vy->mem;
        if (!s && flat) s = odn_plan_plain_view(p, vy, r, dy, NULL, n, &acc, NULL);
    }
    if (!s && vy->md.data_type != (qlinear ? odn_dnnl_type(vy->elem_type) : dnnl_s32))
        s = odn_node_error(n, TSR_ERR_PROVIDER, "internal: output type");
    dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, a_mem},
                              {DNNL_ARG_WEIGHTS, w_mem},
                              {DNNL_ARG_DST, acc},
                              {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, prep->za32},
                              {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_WEIGHTS, prep->zb32}};
    if (!s) s = odn_plan_add_primitive(p, pd, n, args, wzp ? 5 : 4);
    dnnl_primitive_desc_destroy(pd);
    if (s) return s;
    if (prep->raw) return add_vec_post(p, n, qlinear, prep, va, a_mem, b_s8 ? b_s8 : b_mem, dy, da[r - 1], acc, vy);
    if (!qlinear) return s;

    requant *rq = odn_plan_alloc(p, sizeof *rq);
    if (!rq) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    memset(rq, 0, sizeof *rq);
    rq->node = n;
    rq->y_type = vy->elem_type;
    rq->count = (size_t)odn_numel(r, dy);
    int32_t t;
    s = odn_q_input(p, n, 1, &rq->sa, &rq->scale_type);
    if (!s) s = odn_q_input(p, n, 4, &rq->sb, &t);
    if (!s) s = odn_q_input(p, n, 6, &rq->sy, &t);
    if (!s) s = odn_q_input(p, n, 7, &rq->zy, &t);
    const dnnl_memory_t rq_reads[] = {rq->sa, rq->sb, rq->sy, rq->zy};
    if (!s)
        s = odn_plan_add_loop_reading(p, requant_loop, rq, acc, vy->mem, rq_reads, sizeof rq_reads / sizeof *rq_reads,
                                      n);
    return s;
}
