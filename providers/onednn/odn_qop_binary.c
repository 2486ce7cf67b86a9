/* QLinearAdd and QLinearMul as C loops, AVX2 16 values at a time (odn_qop.c has the formulas and the claim checks). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "odn_ops.h"
#include "odn_qop.h"

#if ODN_QOP_X86
#include <immintrin.h>
#endif

/* --- QLinearAdd, QLinearMul --------------------------------------------- */

/* The broadcast as an odometer over outer dims and an innermost run along
 * which each side is either contiguous or one value. */
typedef struct qbin {
    bool mul;
    int32_t type;
    int kind; /* 0: both runs; 1: A one value along the run; 2: B */
    int32_t outer_rank;
    int64_t outer[ODN_MAX_RANK], sa[ODN_MAX_RANK], sb[ODN_MAX_RANK];
    int64_t outer_count, run, chunk;
    dnnl_memory_t b;
    odn_qop_param p[6]; /* sa, za, sb, zb, sc, zc */
    const tsr_node *node;
} qbin;

#define QBIN_CHUNK 32768

static void add_run_both_c(int32_t t, const void *a, const void *b, void *y, int64_t n, float ra, float rb,
                           float fixed) {
    for (int64_t i = 0; i < n; i++)
        odn_qop_put(t, y, (size_t)i,
                    fmaf((float)odn_qop_get(t, a, (size_t)i), ra, fmaf((float)odn_qop_get(t, b, (size_t)i), rb, fixed)),
                    0);
}

static void add_run_one_c(int32_t t, const void *a, void *y, int64_t n, float ra, float c) {
    for (int64_t i = 0; i < n; i++) odn_qop_put(t, y, (size_t)i, fmaf((float)odn_qop_get(t, a, (size_t)i), ra, c), 0);
}

/* sa, sb: 1 or 0 (one value) */
static void mul_run_c(int32_t t, const void *a, int64_t sa, const void *b, int64_t sb, void *y, int64_t n, int32_t za,
                      int32_t zb, float r, float zc) {
    for (int64_t i = 0; i < n; i++) {
        int32_t prod = (odn_qop_get(t, a, (size_t)(i * sa)) - za) * (odn_qop_get(t, b, (size_t)(i * sb)) - zb);
        odn_qop_put(t, y, (size_t)i, (float)prod * r + zc, 0);
    }
}

#if ODN_QOP_X86
ODN_QOP_AVX2 static inline __m256i load8_i32(const void *x, bool s8) {
    __m128i v = _mm_loadl_epi64((const __m128i *)x);
    return s8 ? _mm256_cvtepi8_epi32(v) : _mm256_cvtepu8_epi32(v);
}

ODN_QOP_AVX2 static inline __m256 load8_f(const void *x, bool s8) { return _mm256_cvtepi32_ps(load8_i32(x, s8)); }

/* Rounds 16 floats half to even (NaN as 0), saturates and stores them as bytes. */
ODN_QOP_AVX2 static inline void store16(void *y, __m256 v0, __m256 v1, bool s8) {
    const __m256 lo = _mm256_set1_ps(s8 ? -128.0f : 0.0f), hi = _mm256_set1_ps(s8 ? 127.0f : 255.0f);
    v0 = _mm256_and_ps(v0, _mm256_cmp_ps(v0, v0, _CMP_ORD_Q));
    v1 = _mm256_and_ps(v1, _mm256_cmp_ps(v1, v1, _CMP_ORD_Q));
    v0 = _mm256_round_ps(v0, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    v1 = _mm256_round_ps(v1, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    v0 = _mm256_min_ps(_mm256_max_ps(v0, lo), hi);
    v1 = _mm256_min_ps(_mm256_max_ps(v1, lo), hi);
    __m256i w = _mm256_packs_epi32(_mm256_cvttps_epi32(v0), _mm256_cvttps_epi32(v1));
    w = _mm256_permute4x64_epi64(w, 0xD8);
    __m128i l = _mm256_castsi256_si128(w), h = _mm256_extracti128_si256(w, 1);
    _mm_storeu_si128((__m128i *)y, s8 ? _mm_packs_epi16(l, h) : _mm_packus_epi16(l, h));
}

ODN_QOP_AVX2 static void add_run_both_avx2(int32_t t, const void *a, const void *b, void *y, int64_t n, float ra,
                                           float rb, float fixed) {
    bool s8 = t == TSR_INT8;
    const uint8_t *pa = a, *pb = b;
    uint8_t *py = y;
    const __m256 vra = _mm256_set1_ps(ra), vrb = _mm256_set1_ps(rb), vf = _mm256_set1_ps(fixed);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 v0 = _mm256_fmadd_ps(load8_f(pa + i, s8), vra, _mm256_fmadd_ps(load8_f(pb + i, s8), vrb, vf));
        __m256 v1 = _mm256_fmadd_ps(load8_f(pa + i + 8, s8), vra, _mm256_fmadd_ps(load8_f(pb + i + 8, s8), vrb, vf));
        store16(py + i, v0, v1, s8);
    }
    add_run_both_c(t, pa + i, pb + i, py + i, n - i, ra, rb, fixed);
}

ODN_QOP_AVX2 static void add_run_one_avx2(int32_t t, const void *a, void *y, int64_t n, float ra, float c) {
    bool s8 = t == TSR_INT8;
    const uint8_t *pa = a;
    uint8_t *py = y;
    const __m256 vra = _mm256_set1_ps(ra), vc = _mm256_set1_ps(c);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 v0 = _mm256_fmadd_ps(load8_f(pa + i, s8), vra, vc);
        __m256 v1 = _mm256_fmadd_ps(load8_f(pa + i + 8, s8), vra, vc);
        store16(py + i, v0, v1, s8);
    }
    add_run_one_c(t, pa + i, py + i, n - i, ra, c);
}

ODN_QOP_AVX2 static void mul_run_avx2(int32_t t, const void *a, int64_t sa, const void *b, int64_t sb, void *y,
                                      int64_t n, int32_t za, int32_t zb, float r, float zc) {
    bool s8 = t == TSR_INT8;
    const uint8_t *pa = a, *pb = b;
    uint8_t *py = y;
    const __m256i vza = _mm256_set1_epi32(za), vzb = _mm256_set1_epi32(zb);
    const __m256 vr = _mm256_set1_ps(r), vzc = _mm256_set1_ps(zc);
    /* a side of one value: its centered value in every lane */
    __m256i ca = _mm256_set1_epi32(odn_qop_get(t, a, 0) - za), cb = _mm256_set1_epi32(odn_qop_get(t, b, 0) - zb);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 v[2];
        for (int h = 0; h < 2; h++) {
            __m256i xa = sa ? _mm256_sub_epi32(load8_i32(pa + i + 8 * h, s8), vza) : ca;
            __m256i xb = sb ? _mm256_sub_epi32(load8_i32(pb + i + 8 * h, s8), vzb) : cb;
            v[h] = _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_mullo_epi32(xa, xb)), vr), vzc);
        }
        store16(py + i, v[0], v[1], s8);
    }
    mul_run_c(t, pa + i * sa, sa, pb + i * sb, sb, py + i, n - i, za, zb, r, zc);
}
#endif

static tsr_status *run_qbin(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const qbin *c = ctx;
    const uint8_t *a = odn_q_handle(src), *b = odn_q_handle(c->b);
    uint8_t *y = odn_q_handle(dst);
    if (!a || !b || !y) return odn_node_error(c->node, TSR_ERR_PROVIDER, "internal: operands without buffers");
    float sa = odn_qop_scale(&c->p[0]), sb = odn_qop_scale(&c->p[2]), sc = odn_qop_scale(&c->p[4]);
    int32_t za = odn_qop_zp(&c->p[1]), zb = odn_qop_zp(&c->p[3]), zc = odn_qop_zp(&c->p[5]);
    int32_t t = c->type;
    bool avx2 = odn_qop_avx2();
    float ra = sa / sc, rb = sb / sc;
    float fixed = (float)zc - (ra * (float)za + rb * (float)zb);
    float rm = sa * sb / sc, zcf = (float)zc;
    int64_t chunks = (c->run + c->chunk - 1) / c->chunk, jobs = c->outer_count * chunks;
    int64_t run = c->run;
#pragma omp parallel for if (jobs > 1 && c->outer_count * run > 65536) schedule(static)
    for (int64_t job = 0; job < jobs; job++) {
        int64_t o = job / chunks, k0 = (job % chunks) * c->chunk, len = run - k0 < c->chunk ? run - k0 : c->chunk;
        int64_t oa = 0, ob = 0, rem = o;
        for (int32_t d = c->outer_rank - 1; d >= 0; d--) {
            int64_t i = rem % c->outer[d];
            rem /= c->outer[d];
            oa += i * c->sa[d];
            ob += i * c->sb[d];
        }
        int64_t ka = c->kind == 1 ? 0 : k0, kb = c->kind == 2 ? 0 : k0;
        const uint8_t *pa = a + oa + ka, *pb = b + ob + kb;
        uint8_t *py = y + o * run + k0;
        if (c->mul) {
            int64_t sa1 = c->kind == 1 ? 0 : 1, sb1 = c->kind == 2 ? 0 : 1;
#if ODN_QOP_X86
            if (avx2) {
                mul_run_avx2(t, pa, sa1, pb, sb1, py, len, za, zb, rm, zcf);
                continue;
            }
#endif
            mul_run_c(t, pa, sa1, pb, sb1, py, len, za, zb, rm, zcf);
        } else if (c->kind == 0) {
#if ODN_QOP_X86
            if (avx2) {
                add_run_both_avx2(t, pa, pb, py, len, ra, rb, fixed);
                continue;
            }
#endif
            add_run_both_c(t, pa, pb, py, len, ra, rb, fixed);
        } else {
            /* ORT's kernel gets the run as its A and folds the one value in */
            const uint8_t *pp = c->kind == 1 ? pb : pa;
            float rp = c->kind == 1 ? rb : ra;
            float cq =
                c->kind == 1 ? fixed + (float)odn_qop_get(t, pa, 0) * ra : fixed + (float)odn_qop_get(t, pb, 0) * rb;
#if ODN_QOP_X86
            if (avx2) {
                add_run_one_avx2(t, pp, py, len, rp, cq);
                continue;
            }
#endif
            add_run_one_c(t, pp, py, len, rp, cq);
        }
    }
    (void)avx2;
    return NULL;
}

tsr_status *odn_qop_build_binary(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *va, *vb, *vy = odn_plan_value(p, odn_host->node_output(n, 0));
    dnnl_memory_t ma, mb;
    tsr_status *s = odn_qop_data_in(p, n, 0, &va, &ma);
    if (!s) s = odn_qop_data_in(p, n, 3, &vb, &mb);
    if (s) return s;
    if (!vy) return odn_node_error(n, TSR_ERR_PROVIDER, "internal: output");
    qbin *c = odn_plan_alloc(p, sizeof *c);
    if (!c) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    memset(c, 0, sizeof *c);
    c->mul = strcmp(odn_host->node_op_type(n), "QLinearMul") == 0;
    c->type = va->elem_type;
    c->node = n;
    c->b = mb;
    /* numpy broadcast */
    int32_t rank = va->rank > vb->rank ? va->rank : vb->rank;
    int64_t dims[ODN_MAX_RANK], da[ODN_MAX_RANK], db[ODN_MAX_RANK], sa[ODN_MAX_RANK], sb[ODN_MAX_RANK];
    for (int32_t d = 0; d < rank; d++) {
        int32_t ia = d - (rank - va->rank), ib = d - (rank - vb->rank);
        da[d] = ia >= 0 ? va->dims[ia] : 1;
        db[d] = ib >= 0 ? vb->dims[ib] : 1;
        if (da[d] != db[d] && da[d] != 1 && db[d] != 1)
            return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "A and B do not broadcast");
        dims[d] = da[d] == 1 ? db[d] : da[d];
    }
    int64_t ea = 1, eb = 1;
    for (int32_t d = rank - 1; d >= 0; d--) {
        sa[d] = da[d] == 1 ? 0 : ea;
        sb[d] = db[d] == 1 ? 0 : eb;
        ea *= da[d];
        eb *= db[d];
    }
    /* the dims longer than 1; the run: the innermost of them, and those
     * before it with the same sides constant */
    int32_t kept = 0;
    int64_t kd[ODN_MAX_RANK], ksa[ODN_MAX_RANK], ksb[ODN_MAX_RANK];
    for (int32_t d = 0; d < rank; d++)
        if (dims[d] != 1) kd[kept] = dims[d], ksa[kept] = sa[d], ksb[kept] = sb[d], kept++;
    int64_t na = odn_numel(va->rank, va->dims), nb = odn_numel(vb->rank, vb->dims);
    c->kind = na == 1 || kept == 0 || ksa[kept - 1] == 0 ? 1 : nb == 1 || ksb[kept - 1] == 0 ? 2 : 0;
    int32_t cut = kept;
    c->run = 1;
    while (cut > 0 && (ksa[cut - 1] == 0) == (c->kind == 1) && (ksb[cut - 1] == 0) == (c->kind == 2)) {
        cut--;
        c->run *= kd[cut];
    }
    c->outer_rank = cut;
    c->outer_count = 1;
    for (int32_t d = 0; d < cut; d++) {
        c->outer[d] = kd[d];
        c->sa[d] = ksa[d];
        c->sb[d] = ksb[d];
        c->outer_count *= kd[d];
    }
    c->chunk = c->outer_count == 1 && c->run > 2 * QBIN_CHUNK ? QBIN_CHUNK : c->run;
    if (c->chunk < 1) c->chunk = 1;
    dnnl_memory_t reads[16];
    size_t nreads = 0;
    reads[nreads++] = mb;
    static const size_t ins[6] = {1, 2, 4, 5, 6, 7};
    for (int k = 0; k < 6 && !s; k++) s = odn_qop_param_in(p, n, ins[k], &c->p[k], reads, &nreads);
    if (!s) s = odn_plan_define(p, vy, rank, dims, NULL, n);
    if (s) return s;
    return odn_plan_add_loop_reading(p, run_qbin, c, ma, vy->mem, reads, nreads, n);
}
