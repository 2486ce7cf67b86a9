/* Scaled-dot-product attention for a stack of matrices (odn_attention.h)
 * on odn_sgemm.c's packed kernel. K and V of every matrix are packed once
 * (phase 1; once for all the matrices sharing one where K or V
 * broadcasts, as multi-query attention's do); then each thread takes
 * (matrix, block of query rows) items: the block's scores S = Q K land in
 * a per-thread buffer small enough for L2, are modified and soft-maxed row
 * by row while still there, and feed O = P V at once. The unfused operators would write and read the whole
 * tq x tk score matrix three or four times through memory instead.
 * Softmax's 1 / sum multiplies the row of O (dv values) rather than the
 * row of P (tk values): the same to float rounding, a pass fewer.
 *
 * Every float an item computes depends only on its inputs, never on the
 * block size or the thread that runs it (the GEMM's sums run in the same
 * order whatever rows it is given), so any thread count gives the same
 * bits. */
#include "odn_attention.h"

#include <math.h>
#include <omp.h>
#include <string.h>

#include "odn_sgemm.h"
#include "odn_vexp.h"

/* Query rows per item: a multiple of the GEMM's 6-row tile, at most 48
 * (48 x 500 scores: 94 KiB), fewer where a row is long, so the block's
 * scores stay in L2 between the two products beside K's and V's packs. */
#define ROW_TILE 6
#define ROWS_MAX 48
#define SCORE_BYTES (160 * 1024)
/* Scratch past this is refused (a model asking for more is hostile or
 * better served by the unfused operators). */
#define SCRATCH_LIMIT ((size_t)1 << 30)
#define FLOATS_64B 16 /* floats in 64 bytes */
/* K is packed as column chunks of at most this many, each its own packed
 * matrix: odn_sgemm_run reads a block of Q rows in place over 16 panels
 * but copies it over more (tq = tk = 500, d = 64: the copy was 2.5% of
 * the step, 0.8% chunked). */
#define KCOLS 256

typedef struct att_plan {
    int64_t nbatch;      /* matrices in the stack */
    int64_t nk, nv;      /* distinct K and V matrices (fewer where they broadcast) */
    int64_t rows;        /* query rows per item */
    int64_t blocks;      /* items per matrix */
    int64_t lds;         /* row stride of the score buffer */
    size_t kpack, vpack; /* floats of one matrix's packed K, V */
    size_t kchunk;       /* floats of one of K's column chunks */
    size_t s_floats, q_floats, o_floats, g_floats, thread_floats;
    size_t total_bytes;
    bool q_copy, o_copy; /* Q read through a copy, O written through one */
} att_plan;

static bool add_sz(size_t a, size_t b, size_t *r) { return !__builtin_add_overflow(a, b, r); }
static bool mul_sz(size_t a, size_t b, size_t *r) { return !__builtin_mul_overflow(a, b, r); }

/* n rounded up to whole 64-byte lines of floats; false on overflow. */
static bool lines(size_t n, size_t *r) {
    if (!add_sz(n, FLOATS_64B - 1, r)) return false;
    *r = *r / FLOATS_64B * FLOATS_64B;
    return true;
}

/* Strides only: the data pointers are known at run time (checked there). */
static bool operand_ok(const odn_att_operand *x, int nb) {
    if (x->rs < 0 || x->cs < 0) return false;
    for (int i = 0; i < nb; i++)
        if (x->bstride[i] < 0) return false;
    return true;
}

/* The output must not broadcast: two items would write one element. */
static bool output_ok(const odn_attention *a) {
    if ((a->tq > 1 && a->o.rs == 0) || (a->dv > 1 && a->o.cs == 0)) return false;
    for (int i = 0; i < a->nb; i++)
        if (a->batch[i] > 1 && a->o.bstride[i] == 0) return false;
    return true;
}

static bool mods_ok(const odn_attention *a) {
    if (a->nmods < 0 || a->nmods > ODN_ATT_MAX_MODS) return false;
    for (int m = 0; m < a->nmods; m++) {
        const odn_att_mod *md = &a->mods[m];
        switch (md->kind) {
        case ODN_ATT_MUL:
        case ODN_ATT_DIV: break;
        case ODN_ATT_ADD:
        case ODN_ATT_SELECT:
            if (!operand_ok(&md->t, a->nb)) return false;
            break;
        default: return false;
        }
    }
    return true;
}

static bool shape_ok(const odn_attention *a) {
    if (a->nb < 0 || a->nb > ODN_ATT_MAX_BATCH) return false;
    if (a->tq < 1 || a->tk < 1 || a->d < 1 || a->dv < 1) return false;
    for (int i = 0; i < a->nb; i++)
        if (a->batch[i] < 1) return false;
    return operand_ok(&a->q, a->nb) && operand_ok(&a->k, a->nb) && operand_ok(&a->v, a->nb) &&
        operand_ok(&a->o, a->nb) && output_ok(a) && mods_ok(a);
}

/* The block size: as many rows as keep the scores in L2, fewer while the
 * items would not give each thread several to balance (a VM's cores are
 * often lent elsewhere for a moment), then evened out over the blocks. */
static void choose_rows(att_plan *p, int64_t tq, int threads) {
    int64_t rows = SCORE_BYTES / ((int64_t)sizeof(float) * p->lds) / ROW_TILE * ROW_TILE;
    rows = rows < ROW_TILE ? ROW_TILE : rows > ROWS_MAX ? ROWS_MAX : rows;
    while (rows > ROW_TILE && p->nbatch * ((tq + rows - 1) / rows) < 4 * (int64_t)threads) rows -= ROW_TILE;
    if (rows >= tq) {
        p->rows = tq;
        p->blocks = 1;
        return;
    }
    int64_t blocks = (tq + rows - 1) / rows, even = (tq + blocks - 1) / blocks;
    p->rows = (even + ROW_TILE - 1) / ROW_TILE * ROW_TILE;
    p->blocks = (tq + p->rows - 1) / p->rows;
}

/* Per-thread buffers: scores, Q copy, O copy, the GEMM's own scratch. */
static bool thread_floats(att_plan *p, const odn_attention *a) {
    size_t s, q = 0, o = 0, g, t;
    if (!mul_sz((size_t)p->rows, (size_t)p->lds, &s) || !lines(s, &p->s_floats)) return false;
    if (p->q_copy && (!mul_sz((size_t)p->rows, (size_t)a->d, &q) || !lines(q, &q))) return false;
    if (p->o_copy && (!mul_sz((size_t)p->rows, (size_t)a->dv, &o) || !lines(o, &o))) return false;
    if (!lines(odn_sgemm_scratch_floats(1), &g)) return false;
    p->q_floats = q;
    p->o_floats = o;
    p->g_floats = g;
    return add_sz(p->s_floats, q, &t) && add_sz(t, o, &t) && add_sz(t, g, &p->thread_floats);
}

/* Matrices of x that differ: those along dims it does not broadcast. */
static int64_t distinct(const odn_attention *a, const odn_att_operand *x) {
    int64_t n = 1;
    for (int i = 0; i < a->nb; i++)
        if (x->bstride[i] != 0) n *= a->batch[i];
    return n;
}

static bool plan(const odn_attention *a, int threads, att_plan *p) {
    if (!odn_sgemm_supported() || !shape_ok(a)) return false;
    memset(p, 0, sizeof *p);
    p->nbatch = 1;
    for (int i = 0; i < a->nb; i++)
        if (__builtin_mul_overflow(p->nbatch, a->batch[i], &p->nbatch)) return false;
    int64_t work;
    if (__builtin_mul_overflow(p->nbatch, a->tq, &work)) return false;
    p->nk = distinct(a, &a->k);
    p->nv = distinct(a, &a->v);
    if (a->tk > INT64_MAX - 2 * FLOATS_64B) return false;
    /* rows of 64-byte lines; never a multiple of 4 KiB, where the six
     * rows a GEMM tile reads would share L1 sets */
    p->lds = (a->tk + FLOATS_64B - 1) / FLOATS_64B * FLOATS_64B;
    if (p->lds % 1024 == 0) p->lds += FLOATS_64B;
    p->q_copy = a->q.cs != 1 && a->d > 1;
    p->o_copy = a->o.cs != 1 && a->dv > 1;
    choose_rows(p, a->tq, threads);
    int64_t chunks = (a->tk + KCOLS - 1) / KCOLS;
    size_t kp = odn_sgemm_packed_floats(a->d, a->tk < KCOLS ? a->tk : KCOLS),
           vp = odn_sgemm_packed_floats(a->tk, a->dv);
    size_t kv, all;
    if (kp == 0 || vp == 0 || !lines(kp, &p->kchunk) || !lines(vp, &p->vpack)) return false;
    if (!mul_sz(p->kchunk, (size_t)chunks, &p->kpack)) return false;
    if (!thread_floats(p, a)) return false;
    size_t ks, vs;
    if (!mul_sz(p->kpack, (size_t)p->nk, &ks) || !mul_sz(p->vpack, (size_t)p->nv, &vs) || !add_sz(ks, vs, &kv))
        return false;
    if (!mul_sz(p->thread_floats, (size_t)threads, &all) || !add_sz(all, kv, &all)) return false;
    if (!mul_sz(all, sizeof(float), &p->total_bytes) || p->total_bytes > SCRATCH_LIMIT) return false;
    return true;
}

bool odn_attention_supported(const odn_attention *a) {
    att_plan p;
    return a && plan(a, 1, &p);
}

size_t odn_attention_scratch_bytes(const odn_attention *a, int threads) {
    att_plan p;
    return a && plan(a, threads < 1 ? 1 : threads, &p) ? p.total_bytes : 0;
}

/* Element offset of matrix `b` (flattened over a->batch) in x. */
static int64_t batch_offset(const odn_attention *a, const odn_att_operand *x, int64_t b) {
    int64_t off = 0;
    for (int i = a->nb - 1; i >= 0; i--) {
        off += b % a->batch[i] * x->bstride[i];
        b /= a->batch[i];
    }
    return off;
}

/* Index among x's distinct matrices of matrix b. */
static int64_t distinct_index(const odn_attention *a, const odn_att_operand *x, int64_t b) {
    int64_t idx = 0, scale = 1;
    for (int i = a->nb - 1; i >= 0; i--) {
        if (x->bstride[i] != 0) {
            idx += b % a->batch[i] * scale;
            scale *= a->batch[i];
        }
        b /= a->batch[i];
    }
    return idx;
}

/* Element offset of x's distinct matrix u. */
static int64_t distinct_offset(const odn_attention *a, const odn_att_operand *x, int64_t u) {
    int64_t off = 0;
    for (int i = a->nb - 1; i >= 0; i--)
        if (x->bstride[i] != 0) {
            off += u % a->batch[i] * x->bstride[i];
            u /= a->batch[i];
        }
    return off;
}

/* Packs distinct matrix u of K (u < nk) or u - nk of V. */
static void pack_matrix(const odn_attention *a, const att_plan *p, int64_t u, float *kv) {
    if (u < p->nk) {
        const float *k = (const float *)a->k.data + distinct_offset(a, &a->k, u);
        for (int64_t j0 = 0; j0 < a->tk; j0 += KCOLS)
            odn_sgemm_pack(k + j0 * a->k.cs, a->d, a->tk - j0 < KCOLS ? a->tk - j0 : KCOLS, a->k.rs, a->k.cs,
                           kv + (size_t)u * p->kpack + (size_t)(j0 / KCOLS) * p->kchunk);
        return;
    }
    u -= p->nk;
    const float *v = (const float *)a->v.data + distinct_offset(a, &a->v, u);
    odn_sgemm_pack(v, a->tk, a->dv, a->v.rs, a->v.cs, kv + (size_t)p->nk * p->kpack + (size_t)u * p->vpack);
}

/* Lanes [0, n) of 8 on. */
static inline ODN_AVX2_TARGET __m256i lanes8(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n > 8 ? 8 : n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* s[j] = s[j] * f, or / f. */
static ODN_AVX2_TARGET void scale_row(float *s, int64_t n, float f, bool divide) {
    __m256 v = _mm256_set1_ps(f);
    int64_t j = 0;
    if (divide) {
        for (; j + 8 <= n; j += 8) _mm256_storeu_ps(s + j, _mm256_div_ps(_mm256_loadu_ps(s + j), v));
        for (; j < n; j++) s[j] = s[j] / f;
    } else {
        for (; j + 8 <= n; j += 8) _mm256_storeu_ps(s + j, _mm256_mul_ps(_mm256_loadu_ps(s + j), v));
        for (; j < n; j++) s[j] = s[j] * f;
    }
}

/* s[j] += t[j * cs]. */
static ODN_AVX2_TARGET void add_row(float *s, int64_t n, const float *t, int64_t cs) {
    int64_t j = 0;
    if (cs == 1)
        for (; j + 8 <= n; j += 8)
            _mm256_storeu_ps(s + j, _mm256_add_ps(_mm256_loadu_ps(s + j), _mm256_loadu_ps(t + j)));
    else if (cs == 0)
        for (__m256 b = _mm256_set1_ps(t[0]); j + 8 <= n; j += 8)
            _mm256_storeu_ps(s + j, _mm256_add_ps(_mm256_loadu_ps(s + j), b));
    for (; j < n; j++) s[j] = s[j] + t[j * cs];
}

/* s[j] = fill where (t[j * cs] != 0) == when. */
static ODN_AVX2_TARGET void select_row(float *s, int64_t n, const uint8_t *t, int64_t cs, bool when, float fill) {
    int64_t j = 0;
    if (cs == 0) {
        if ((t[0] != 0) == when)
            for (; j < n; j++) s[j] = fill;
        return;
    }
    if (cs == 1) {
        __m256 f = _mm256_set1_ps(fill);
        __m256i zero = _mm256_setzero_si256(), flip = _mm256_set1_epi32(when ? -1 : 0);
        for (; j + 8 <= n; j += 8) {
            __m128i bytes = _mm_loadl_epi64((const __m128i *)(t + j));
            __m256i is_zero = _mm256_cmpeq_epi32(_mm256_cvtepu8_epi32(bytes), zero);
            __m256 pick = _mm256_castsi256_ps(_mm256_xor_si256(is_zero, flip));
            _mm256_storeu_ps(s + j, _mm256_blendv_ps(_mm256_loadu_ps(s + j), f, pick));
        }
    }
    for (; j < n; j++)
        if ((t[j * cs] != 0) == when) s[j] = fill;
}

/* Whether s / f is s * (1 / f) bit for bit: f a power of two whose
 * reciprocal is a normal float (both round the same exact quotient).
 * vdivps cost a third of the exponential. */
static bool exact_reciprocal(float f) {
    int e;
    return frexpf(f, &e) == 0.5f && e >= -124 && e <= 127;
}

/* The modifiers on score row i of matrix b, in order; toff[m]: mod m's
 * operand offset for b. */
static void mods_row(const odn_attention *a, const int64_t *toff, int64_t i, float *s) {
    for (int m = 0; m < a->nmods; m++) {
        const odn_att_mod *md = &a->mods[m];
        int64_t at = toff[m] + i * md->t.rs;
        switch (md->kind) {
        case ODN_ATT_MUL: scale_row(s, a->tk, md->value, false); break;
        case ODN_ATT_DIV:
            if (exact_reciprocal(md->value)) scale_row(s, a->tk, 1.0f / md->value, false);
            else scale_row(s, a->tk, md->value, true);
            break;
        case ODN_ATT_ADD: add_row(s, a->tk, (const float *)md->t.data + at, md->t.cs); break;
        case ODN_ATT_SELECT:
            select_row(s, a->tk, (const uint8_t *)md->t.data + at, md->t.cs, md->fill_if_true, md->value);
            break;
        }
    }
}

/* The row's largest score (NaN skipped, -inf for none). */
static ODN_AVX2_TARGET float row_max(const float *s, int64_t n) {
    __m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0;
    int64_t j = 0;
    for (; j + 16 <= n; j += 16) {
        m0 = _mm256_max_ps(_mm256_loadu_ps(s + j), m0);
        m1 = _mm256_max_ps(_mm256_loadu_ps(s + j + 8), m1);
    }
    for (; j < n; j += 8) {
        __m256i k = lanes8(n - j);
        __m256 x = _mm256_maskload_ps(s + j, k);
        m0 = _mm256_max_ps(_mm256_blendv_ps(_mm256_set1_ps(-INFINITY), x, _mm256_castsi256_ps(k)), m0);
    }
    float lane[8], r = -INFINITY;
    _mm256_storeu_ps(lane, _mm256_max_ps(m0, m1));
    for (int l = 0; l < 8; l++) r = lane[l] > r ? lane[l] : r;
    return r;
}

/* odn_exp8 for x <= 0 or NaN (softmax's shifted scores), the same bits:
 * x above 88 cannot occur, which saves its clamp and blend. */
static inline ODN_AVX2_TARGET __m256 exp8_nonpositive(__m256 x) {
    __m256 e = odn_exp8_in_range(_mm256_max_ps(_mm256_set1_ps(-87.0f), x)); /* NaN stays */
    return _mm256_andnot_ps(_mm256_cmp_ps(x, _mm256_set1_ps(-87.3f), _CMP_LT_OQ), e);
}

/* s = e^(s - max) in place; returns 1 / their sum, the factor that makes
 * them a softmax (applied to the row's output, dv values, instead of its
 * tk probabilities). A row of -inf only (or holding NaN or +inf) gives
 * NaN, as ONNX's Softmax computes it: e^(-inf - -inf) is NaN. */
static ODN_AVX2_TARGET float exp_row(float *s, int64_t n, float max) {
    __m256 m = _mm256_set1_ps(max), sum = _mm256_setzero_ps();
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) {
        __m256 e = exp8_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(s + j), m));
        _mm256_storeu_ps(s + j, e);
        sum = _mm256_add_ps(sum, e);
    }
    if (j < n) {
        __m256i k = lanes8(n - j);
        __m256 e = exp8_nonpositive(_mm256_sub_ps(_mm256_maskload_ps(s + j, k), m));
        e = _mm256_and_ps(e, _mm256_castsi256_ps(k));
        _mm256_maskstore_ps(s + j, k, e);
        sum = _mm256_add_ps(sum, e);
    }
    float lane[8];
    _mm256_storeu_ps(lane, sum);
    return 1.0f / (((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7])));
}

/* One thread's buffers within the scratch. */
typedef struct att_bufs {
    float *s, *q, *o, *g;
} att_bufs;

static att_bufs thread_bufs(const att_plan *p, float *scratch, int thread) {
    float *base = scratch + (size_t)p->nk * p->kpack + (size_t)p->nv * p->vpack + (size_t)thread * p->thread_floats;
    att_bufs b = {base, base + p->s_floats, base + p->s_floats + p->q_floats,
                  base + p->s_floats + p->q_floats + p->o_floats};
    return b;
}

/* Score rows [i0, i0 + m) of matrix b: modified, exponentiated; their
 * softmax factors to inv. */
static void softmax_rows(const odn_attention *a, const att_plan *p, int64_t b, int64_t i0, int64_t m, float *s,
                         float *inv) {
    int64_t toff[ODN_ATT_MAX_MODS] = {0};
    for (int md = 0; md < a->nmods; md++) toff[md] = batch_offset(a, &a->mods[md].t, b);
    for (int64_t r = 0; r < m; r++) {
        float *row = s + r * p->lds;
        mods_row(a, toff, i0 + r, row);
        inv[r] = exp_row(row, a->tk, row_max(row, a->tk));
    }
}

/* Query rows [i0, i0 + m) of matrix b. */
static void run_item(const odn_attention *a, const att_plan *p, const float *kv, int64_t b, int64_t i0, int64_t m,
                     const att_bufs *buf) {
    const float *q = (const float *)a->q.data + batch_offset(a, &a->q, b) + i0 * a->q.rs;
    int64_t lda = a->q.rs;
    if (p->q_copy) {
        for (int64_t r = 0; r < m; r++)
            for (int64_t c = 0; c < a->d; c++) buf->q[r * a->d + c] = q[r * a->q.rs + c * a->q.cs];
        q = buf->q;
        lda = a->d;
    }
    const float *kp = kv + (size_t)distinct_index(a, &a->k, b) * p->kpack;
    const float *vp = kv + (size_t)p->nk * p->kpack + (size_t)distinct_index(a, &a->v, b) * p->vpack;
    float inv[ROWS_MAX];
    for (int64_t j0 = 0; j0 < a->tk; j0 += KCOLS)
        odn_sgemm_run(m, a->tk - j0 < KCOLS ? a->tk - j0 : KCOLS, a->d, q, lda, kp + (size_t)(j0 / KCOLS) * p->kchunk,
                      NULL, buf->s + j0, p->lds, buf->g, 1);
    softmax_rows(a, p, b, i0, m, buf->s, inv);
    float *o = (float *)a->o.data + batch_offset(a, &a->o, b) + i0 * a->o.rs, *out = p->o_copy ? buf->o : o;
    int64_t ldo = p->o_copy ? a->dv : a->o.rs;
    odn_sgemm_run(m, a->dv, a->tk, buf->s, p->lds, vp, NULL, out, ldo, buf->g, 1);
    for (int64_t r = 0; r < m; r++) scale_row(out + r * ldo, a->dv, inv[r], false);
    if (p->o_copy)
        for (int64_t r = 0; r < m; r++)
            for (int64_t c = 0; c < a->dv; c++) o[r * a->o.rs + c * a->o.cs] = buf->o[r * a->dv + c];
}

static bool has_data(const odn_attention *a) {
    if (!a->q.data || !a->k.data || !a->v.data || !a->o.data) return false;
    for (int m = 0; m < a->nmods && m < ODN_ATT_MAX_MODS; m++)
        if ((a->mods[m].kind == ODN_ATT_ADD || a->mods[m].kind == ODN_ATT_SELECT) && !a->mods[m].t.data) return false;
    return true;
}

void odn_attention_run(const odn_attention *a, void *scratch, int threads) {
    att_plan p;
    if (threads < 1) threads = 1;
    if (!a || !scratch || !has_data(a) || !plan(a, threads, &p)) return;
    float *kv = scratch;
    int64_t items = p.nbatch * p.blocks;
#pragma omp parallel num_threads(threads)
    {
#pragma omp for schedule(static)
        for (int64_t u = 0; u < p.nk + p.nv; u++) pack_matrix(a, &p, u, kv);
        att_bufs buf = thread_bufs(&p, kv, omp_get_thread_num());
#pragma omp for schedule(dynamic, 1)
        for (int64_t item = 0; item < items; item++) {
            int64_t b = item / p.blocks, i0 = item % p.blocks * p.rows;
            run_item(a, &p, kv, b, i0, a->tq - i0 < p.rows ? a->tq - i0 : p.rows, &buf);
        }
    }
}
