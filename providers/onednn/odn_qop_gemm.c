/*
 * QGemm and MatMulIntegerToFloat (com.microsoft) as an integer GEMM: B
 * less its zero point as int16 rows (packed once when B and its zero
 * point are constant), A less its zero point widened to int16 each run,
 * and AVX2 vpmaddwd dot products summed in int32. Every product of two
 * centered 8-bit values is below 2^16 and every pair sum below 2^17, so
 * the int32 sums are exact modulo 2^32, which is what the reference
 * provider's int64 sums become when it takes them as int32 (ref_quant_ms.c).
 * The epilogues are the reference's, float op for float op:
 *
 *   QGemm                 s = alpha*sa*sb[n] (/ys); f = float(int32(acc +
 *                         C)) * s; quantized round(f) + zy saturated, or f.
 *   MatMulIntegerToFloat  float(int32(acc)) * (sa*sb[n]) + bias[n].
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "odn_ops.h"
#include "odn_qop.h"

#if ODN_QOP_X86
#include <immintrin.h>
#endif

static bool is_q8(int32_t t) { return t == TSR_UINT8 || t == TSR_INT8; }

static int64_t known_numel(const tsr_value_info *v) {
    if (!v) return -1;
    int32_t r = odn_host->value_rank(v);
    if (r < 0) return -1;
    int64_t c = 1;
    for (int32_t d = 0; d < r; d++) {
        int64_t e = odn_host->value_dim(v, d);
        if (e < 0) return -1;
        c *= e;
    }
    return c;
}

/* 8-bit, rank known (`rank` when positive, else >= 1), not empty. */
static int want_matrix(const tsr_node *n, size_t k, int32_t rank, char *why, size_t size) {
    const tsr_value_info *v = odn_input(n, k);
    if (!v) return odn_decline(why, size, TSR_DECLINE_OTHER, "input %zu missing", k);
    int32_t t = odn_host->value_elem_type(v), r = odn_host->value_rank(v);
    if (!is_q8(t)) return odn_decline(why, size, TSR_DECLINE_TYPE, "input %zu is not uint8 or int8", k);
    if (r < 1 || r > ODN_MAX_RANK || (rank > 0 && r != rank))
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "input %zu of rank %d", k, (int)r);
    for (int32_t d = 0; d < r; d++)
        if (odn_host->value_dim(v, d) == 0) return odn_decline(why, size, TSR_DECLINE_SHAPE, "empty tensor");
    return 0;
}

/* A scale (float) or zero point (of type zt): absent when allowed, else
 * one value, or (per_col > 0) one per column. */
static int want_param(const tsr_node *n, size_t k, bool scale, int32_t zt, bool required, int64_t per_col, char *why,
                      size_t size) {
    const tsr_value_info *v = odn_input(n, k);
    if (!v) return required ? odn_decline(why, size, TSR_DECLINE_OTHER, "input %zu missing", k) : 0;
    int32_t t = odn_host->value_elem_type(v);
    if (scale ? t != TSR_FLOAT : t != zt)
        return odn_decline(why, size, TSR_DECLINE_TYPE, "input %zu of type %d", k, (int)t);
    int64_t c = known_numel(v);
    if (c != 1 && !(per_col > 0 && c == per_col && odn_host->value_rank(v) == 1))
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "input %zu is not one value%s", k,
                           per_col > 0 ? " or one per column" : "");
    return 0;
}

int odn_qop_gemm_check(const tsr_node *n, char *why, size_t size) {
    const char *op = odn_host->node_op_type(n);
    bool qgemm = strcmp(op, "QGemm") == 0;
    size_t ib = qgemm ? 3 : 1;
    int r = want_matrix(n, 0, qgemm ? 2 : 0, why, size);
    if (!r) r = want_matrix(n, ib, 2, why, size);
    if (r) return r;
    int32_t ta = odn_host->value_elem_type(odn_input(n, 0)), tb = odn_host->value_elem_type(odn_input(n, ib));
    const tsr_value_info *b = odn_input(n, ib);
    int64_t cols = odn_host->value_dim(b, qgemm && odn_attr_int(n, "transB", 0) ? 0 : 1);
    const tsr_value_info *y = odn_host->node_output_count(n) ? odn_host->node_output(n, 0) : NULL;
    int32_t yt = y ? odn_host->value_elem_type(y) : 0;
    if (qgemm) {
        r = want_param(n, 1, true, ta, true, 0, why, size);
        if (!r) r = want_param(n, 2, false, ta, false, 0, why, size);
        if (!r) r = want_param(n, 4, true, tb, true, cols, why, size);
        if (!r) r = want_param(n, 5, false, tb, false, cols, why, size);
        if (r) return r;
        const tsr_value_info *c = odn_input(n, 6), *ys = odn_input(n, 7), *zy = odn_input(n, 8);
        if (c && odn_host->value_elem_type(c) != TSR_INT32)
            return odn_decline(why, size, TSR_DECLINE_TYPE, "C is not int32");
        if (c && (odn_host->value_rank(c) < 0 || odn_host->value_rank(c) > 2))
            return odn_decline(why, size, TSR_DECLINE_SHAPE, "C of unknown rank or above 2");
        if (!ys != !zy) return odn_decline(why, size, TSR_DECLINE_OTHER, "y_scale without y_zero_point or back");
        if (ys) {
            int32_t zt = odn_host->value_elem_type(zy);
            if (!is_q8(zt)) return odn_decline(why, size, TSR_DECLINE_TYPE, "y_zero_point is not 8-bit");
            r = want_param(n, 7, true, zt, true, 0, why, size);
            if (!r) r = want_param(n, 8, false, zt, true, 0, why, size);
            if (r) return r;
        }
        int32_t want = ys ? odn_host->value_elem_type(zy) : TSR_FLOAT;
        if (yt != want) return odn_decline(why, size, TSR_DECLINE_TYPE, "output of type %d", (int)yt);
        return 0;
    }
    /* MatMulIntegerToFloat: A, B, a_scale, b_scale, a_zero_point, b_zero_point, bias */
    r = want_param(n, 2, true, ta, true, 0, why, size);
    if (!r) r = want_param(n, 3, true, tb, true, cols, why, size);
    if (!r) r = want_param(n, 4, false, ta, false, 0, why, size);
    if (!r) r = want_param(n, 5, false, tb, false, cols, why, size);
    if (r) return r;
    const tsr_value_info *bias = odn_input(n, 6);
    if (bias && (odn_host->value_elem_type(bias) != TSR_FLOAT || cols < 0 || known_numel(bias) != cols))
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "bias is not float with one value per column");
    if (yt != TSR_FLOAT) return odn_decline(why, size, TSR_DECLINE_TYPE, "output is not float");
    return 0;
}

typedef struct qgemm {
    bool qgemm, ta, tb, b_packed, float_out;
    int32_t a_type, b_type, y_type;
    int64_t m, n, k, kp;
    float alpha;
    int bias_kind; /* 0 none, 1 one value, 2 per column, 3 per row, 4 full */
    dnnl_memory_t b, bias;
    odn_qop_param sa, za, ys, zy;
    dnnl_memory_t sb, zb; /* one value or one per column */
    int32_t sb_type, zb_type;
    int64_t sb_count, zb_count;
    int16_t *a16, *b16; /* [m][kp], [n][kp] */
    int32_t *acc;       /* [m][n] */
    float *scale;       /* [n] */
    const tsr_node *node;
} qgemm;

/* b16[j][l] = b(l, j) - zb[j], zero past k (zb: NULL for 0). */
static void pack_b(const qgemm *c, const void *b, const void *zb) {
    for (int64_t j = 0; j < c->n; j++) {
        int32_t z = zb ? odn_qop_get(c->b_type, zb, c->zb_count == 1 ? 0 : (size_t)j) : 0;
        int16_t *row = c->b16 + j * c->kp;
        for (int64_t l = 0; l < c->k; l++)
            row[l] = (int16_t)(odn_qop_get(c->b_type, b, (size_t)(c->tb ? j * c->k + l : l * c->n + j)) - z);
        for (int64_t l = c->k; l < c->kp; l++) row[l] = 0;
    }
}

static void dot_rows_c(const int16_t *a, const int16_t *b, int64_t kp, int64_t j0, int64_t j1, int32_t *out) {
    for (int64_t j = j0; j < j1; j++) {
        uint32_t s = 0;
        const int16_t *bj = b + j * kp;
        for (int64_t l = 0; l < kp; l++) s += (uint32_t)((int32_t)a[l] * bj[l]);
        out[j] = (int32_t)s;
    }
}

#if ODN_QOP_X86
ODN_QOP_AVX2 static void dot_rows_avx2(const int16_t *a, const int16_t *b, int64_t kp, int64_t j0, int64_t j1,
                                       int32_t *out) {
    int64_t j = j0;
    for (; j + 4 <= j1; j += 4) {
        const int16_t *b0 = b + j * kp, *b1 = b0 + kp, *b2 = b1 + kp, *b3 = b2 + kp;
        __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0;
        for (int64_t l = 0; l < kp; l += 16) {
            __m256i av = _mm256_loadu_si256((const __m256i *)(a + l));
            s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(av, _mm256_loadu_si256((const __m256i *)(b0 + l))));
            s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(av, _mm256_loadu_si256((const __m256i *)(b1 + l))));
            s2 = _mm256_add_epi32(s2, _mm256_madd_epi16(av, _mm256_loadu_si256((const __m256i *)(b2 + l))));
            s3 = _mm256_add_epi32(s3, _mm256_madd_epi16(av, _mm256_loadu_si256((const __m256i *)(b3 + l))));
        }
        __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(s0, s1), _mm256_hadd_epi32(s2, s3));
        __m128i r = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
        _mm_storeu_si128((__m128i *)(out + j), r);
    }
    for (; j < j1; j++) {
        const int16_t *bj = b + j * kp;
        __m256i s = _mm256_setzero_si256();
        for (int64_t l = 0; l < kp; l += 16)
            s = _mm256_add_epi32(s,
                                 _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(a + l)),
                                                   _mm256_loadu_si256((const __m256i *)(bj + l))));
        __m128i r = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
        r = _mm_hadd_epi32(r, r);
        r = _mm_hadd_epi32(r, r);
        out[j] = _mm_cvtsi128_si32(r);
    }
}
#endif

#define QG_COLS 64 /* columns per job */

static tsr_status *run_qgemm(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const qgemm *c = ctx;
    const void *a = odn_q_handle(src);
    void *y = odn_q_handle(dst);
    const void *b = c->b_packed ? NULL : odn_q_handle(c->b);
    if (!a || !y || (!c->b_packed && !b)) return odn_node_error(c->node, TSR_ERR_PROVIDER, "internal: gemm buffers");
    if (!c->b_packed) pack_b(c, b, c->zb ? odn_q_handle(c->zb) : NULL);
    int32_t za = odn_qop_zp(&c->za);
    int64_t m = c->m, k = c->k, kp = c->kp, nn = c->n;
    for (int64_t i = 0; i < m; i++) {
        int16_t *row = c->a16 + i * kp;
        for (int64_t l = 0; l < k; l++)
            row[l] = (int16_t)(odn_qop_get(c->a_type, a, (size_t)(c->ta ? l * m + i : i * k + l)) - za);
        for (int64_t l = k; l < kp; l++) row[l] = 0;
    }
    int64_t cb = (nn + QG_COLS - 1) / QG_COLS, jobs = m * cb;
    bool avx2 = odn_qop_avx2();
#pragma omp parallel for if (jobs > 1 && m * nn * kp > 262144) schedule(static)
    for (int64_t job = 0; job < jobs; job++) {
        int64_t i = job / cb, j0 = (job % cb) * QG_COLS, j1 = j0 + QG_COLS < nn ? j0 + QG_COLS : nn;
#if ODN_QOP_X86
        if (avx2) {
            dot_rows_avx2(c->a16 + i * kp, c->b16, kp, j0, j1, c->acc + i * nn);
            continue;
        }
#endif
        dot_rows_c(c->a16 + i * kp, c->b16, kp, j0, j1, c->acc + i * nn);
    }
    (void)avx2;
    /* the per-column scales, in the reference's order of float operations */
    float sa = odn_qop_scale(&c->sa);
    for (int64_t j = 0; j < nn; j++) {
        float sb = (float)odn_q_value(c->sb, c->sb_type, c->sb_count == 1 ? 0 : (size_t)j);
        if (c->qgemm) {
            float s = c->alpha * sa * sb;
            if (c->ys.mem) s /= odn_qop_scale(&c->ys);
            c->scale[j] = s;
        } else {
            c->scale[j] = sa * sb;
        }
    }
    const int32_t *bias = c->bias ? odn_q_handle(c->bias) : NULL;
    const float *fbias = c->bias ? odn_q_handle(c->bias) : NULL;
    int32_t zy = odn_qop_zp(&c->zy);
    for (int64_t i = 0; i < m; i++) {
        for (int64_t j = 0; j < nn; j++) {
            uint32_t v = (uint32_t)c->acc[i * nn + j];
            if (c->qgemm && bias) {
                int64_t at = c->bias_kind == 1 ? 0 : c->bias_kind == 2 ? j : c->bias_kind == 3 ? i : i * nn + j;
                v += (uint32_t)bias[at];
            }
            float f = (float)(int32_t)v * c->scale[j];
            size_t at = (size_t)(i * nn + j);
            if (!c->qgemm && fbias) f += fbias[j];
            if (c->float_out) ((float *)y)[at] = f;
            else odn_qop_put(c->y_type, y, at, f, zy);
        }
    }
    return NULL;
}

static tsr_status *param_vec(odn_plan *p, const tsr_node *n, size_t k, dnnl_memory_t *m, int32_t *type, int64_t *count,
                             int64_t cols, dnnl_memory_t *reads, size_t *nreads) {
    tsr_status *s = odn_q_input(p, n, k, m, type);
    if (s || !*m) return s;
    odn_value *v = odn_plan_value(p, odn_input(n, k));
    *count = v ? odn_numel(v->rank, v->dims) : 1;
    if (*count != 1 && *count != cols)
        return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "input %zu has %lld values for %lld columns", k,
                              (long long)*count, (long long)cols);
    if (v && !v->constant) reads[(*nreads)++] = *m;
    return NULL;
}

tsr_status *odn_qop_build_gemm(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    bool qg = strcmp(odn_host->node_op_type(n), "QGemm") == 0;
    size_t ib = qg ? 3 : 1;
    odn_value *va, *vb, *vy = odn_plan_value(p, odn_host->node_output(n, 0));
    dnnl_memory_t ma, mb;
    tsr_status *s = odn_qop_data_in(p, n, 0, &va, &ma);
    if (!s) s = odn_qop_data_in(p, n, ib, &vb, &mb);
    if (s) return s;
    if (!vy || vb->rank != 2 || va->rank < 1 || (qg && va->rank != 2))
        return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "operand ranks");
    qgemm *c = odn_plan_alloc(p, sizeof *c);
    if (!c) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    memset(c, 0, sizeof *c);
    c->qgemm = qg;
    c->node = n;
    c->ta = qg && odn_attr_int(n, "transA", 0) != 0;
    c->tb = qg && odn_attr_int(n, "transB", 0) != 0;
    c->alpha = qg ? odn_attr_float(n, "alpha", 1.0f) : 1.0f;
    c->a_type = va->elem_type;
    c->b_type = vb->elem_type;
    c->y_type = vy->elem_type;
    c->float_out = vy->elem_type == TSR_FLOAT;
    int64_t dims[ODN_MAX_RANK];
    int32_t yrank;
    if (qg) {
        c->m = c->ta ? va->dims[1] : va->dims[0];
        c->k = c->ta ? va->dims[0] : va->dims[1];
        yrank = 2;
    } else {
        c->m = odn_numel(va->rank - 1, va->dims);
        c->k = va->dims[va->rank - 1];
        yrank = va->rank;
        memcpy(dims, va->dims, sizeof dims);
    }
    c->n = c->tb ? vb->dims[0] : vb->dims[1];
    if ((c->tb ? vb->dims[1] : vb->dims[0]) != c->k)
        return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "A has %lld columns, B %lld rows", (long long)c->k,
                              (long long)(c->tb ? vb->dims[1] : vb->dims[0]));
    if (qg) dims[0] = c->m;
    dims[yrank - 1] = c->n;
    c->kp = (c->k + 15) / 16 * 16;
    dnnl_memory_t reads[16];
    size_t nreads = 0;
    if (!vb->constant) reads[nreads++] = mb;
    c->b = mb;
    s = odn_qop_param_in(p, n, qg ? 1 : 2, &c->sa, reads, &nreads);
    if (!s) s = odn_qop_param_in(p, n, qg ? 2 : 4, &c->za, reads, &nreads);
    if (!s) s = param_vec(p, n, qg ? 4 : 3, &c->sb, &c->sb_type, &c->sb_count, c->n, reads, &nreads);
    if (!s) s = param_vec(p, n, 5, &c->zb, &c->zb_type, &c->zb_count, c->n, reads, &nreads);
    if (!s && qg) s = odn_qop_param_in(p, n, 7, &c->ys, reads, &nreads);
    if (!s && qg) s = odn_qop_param_in(p, n, 8, &c->zy, reads, &nreads);
    if (s) return s;
    if (!c->sb) return odn_node_error(n, TSR_ERR_INVALID_MODEL, "b_scale is required");
    odn_value *vbias = odn_plan_value(p, odn_input(n, 6));
    if (vbias) {
        int32_t bt;
        s = odn_q_input(p, n, 6, &c->bias, &bt);
        if (s) return s;
        int64_t cnt = odn_numel(vbias->rank, vbias->dims);
        if (!qg) {
            if (bt != TSR_FLOAT || cnt != c->n) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "bias shape");
            c->bias_kind = 2;
        } else if (bt != TSR_INT32) {
            return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "C must be int32");
        } else if (cnt == 1) {
            c->bias_kind = 1;
        } else if ((vbias->rank == 1 || (vbias->rank == 2 && vbias->dims[0] == 1)) && cnt == c->n) {
            c->bias_kind = 2;
        } else if (vbias->rank == 2 && vbias->dims[1] == 1 && vbias->dims[0] == c->m) {
            c->bias_kind = 3;
        } else if (vbias->rank == 2 && vbias->dims[0] == c->m && vbias->dims[1] == c->n) {
            c->bias_kind = 4;
        } else {
            return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "C does not broadcast to %lld x %lld", (long long)c->m,
                                  (long long)c->n);
        }
        if (!vbias->constant) reads[nreads++] = c->bias;
    }
    size_t a_bytes = sizeof(int16_t) * (size_t)(c->m * c->kp), b_bytes = sizeof(int16_t) * (size_t)(c->n * c->kp);
    c->a16 = odn_plan_alloc(p, a_bytes + 32);
    c->b16 = odn_plan_alloc(p, b_bytes + 32);
    c->acc = odn_plan_alloc(p, sizeof(int32_t) * (size_t)(c->m * c->n) + 16);
    c->scale = odn_plan_alloc(p, sizeof(float) * (size_t)c->n + 16);
    if (!c->a16 || !c->b16 || !c->acc || !c->scale) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    odn_value *vzb = odn_plan_value(p, odn_input(n, 5));
    if (vb->constant && (!vzb || vzb->constant)) {
        pack_b(c, vb->constant->data, vzb ? vzb->constant->data : NULL);
        c->b_packed = true;
    }
    s = odn_plan_define(p, vy, yrank, dims, NULL, n);
    if (s) return s;
    return odn_plan_add_loop_reading(p, run_qgemm, c, ma, vy->mem, reads, nreads, n);
}
