/* Exact integer Winograd F(2x2, 3x3) convolution for AVX2 (odn_iwino_f23.h).
 * On AVX2 without VNNI an exact 8-bit convolution multiplies int16 pairs
 * with vpmaddwd (odn_igemm.c); F(2x2, 3x3) does 16 multiply-adds per 2x2
 * output tile and input channel where the direct form does 36, and in
 * integers with G' = 2G it stays exact (the header says why).
 *
 * Matrices: B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1],
 * G' = [2 0 0; 1 1 1; 1 -1 1; 0 0 2], A^T = [1 1 1 0; 0 1 -1 -1];
 * A^T ((G' g G'^T) . (B^T d B)) A = 4 * (the 2x2 outputs of g over d).
 *
 * Work, as odn_wino_f43.c: the output is cut into 2x2 tiles, tiles into
 * blocks of TB (a multiple of 6), and OpenMP threads take (block,
 * output-channel group) items as they come free. Per item, in the
 * thread's scratch:
 *   V[16][TB][CP16] int16  B^T d B of the block's tiles, a tile's channels
 *                          contiguous (the input transform writes 16
 *                          channels of a tile with one store; the GEMM
 *                          broadcasts channel pairs from 6 tile rows);
 *   Mo[16][TB][MC] int32   the 16 GEMMs V[pos] x U'[pos] for a chunk of
 *                          MC output channels, read once by the output
 *                          transform (A^T m A) >> 2 -> y.
 * The GEMM's register tile is 6 tiles x 16 output channels (12 int32
 * accumulators): per channel pair, 6 broadcasts of a V pair as int32, two
 * loads of U' pairs, 12 vpmaddwd and 12 vpaddd (wrapping, see header).
 *
 * Packed weights: U'[16][M16/16 panels][CP/2][16][2] int16, M padded to a
 * multiple of 16 and C to a multiple of 2 with zero filters: a panel is
 * streamed in order by the kernel, each 32-bit lane a channel pair. */
#include "odn_iwino_f23.h"

#include <string.h>

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#include <omp.h>
#define IW_X86 1
#define IW_AVX2 __attribute__((target("avx2")))
#else
#define IW_X86 0
#endif

enum {
    IW_STRIP = 6,   /* tiles in the GEMM's register tile */
    IW_NR = 16,     /* output channels in the GEMM's register tile */
    IW_POS = 16,    /* 4x4 transformed positions */
    IW_TB_MAX = 96, /* tiles in a block at most */
};

/* Scratch of one item (V and Mo) to aim at: inside a Zen3 core's 512 KiB
 * L2, as odn_wino_f43.c measured for its blocks. */
#define IW_BUDGET (384 * 1024)
#define IW_MC 64 /* output channels of a chunk of Mo */

typedef struct iw_plan {
    int64_t tiles_h, tiles_w, tiles; /* tiles of an image's rows, columns; in all */
    int64_t tb, blocks;              /* tiles per block, blocks */
    int64_t mp;                      /* m rounded up to 16 (packed columns) */
    int64_t kp;                      /* channel pairs: (c + 1) / 2 */
    int64_t vrow;                    /* int16 from one tile's V row to the next: c rounded up to 16 */
    int64_t mg, groups;              /* output channels per group (multiple of 16), groups */
    int64_t mc;                      /* output channels of Mo at once */
    int64_t vpos, mpos;              /* elements from one position's V, Mo to the next */
    size_t item_bytes;               /* scratch bytes of one thread (V + Mo, multiple of 64) */
} iw_plan;

static bool mul_ok(uint64_t a, uint64_t b, uint64_t *out) {
    if (a != 0 && b > UINT64_MAX / a) return false;
    *out = a * b;
    return true;
}

static bool make_plan(const odn_iwino_shape *s, int threads, iw_plan *p) {
    if (threads < 1) threads = 1;
    if (s->n <= 0 || s->oh <= 0 || s->ow <= 0 || s->oh > INT32_MAX || s->ow > INT32_MAX || s->n > INT32_MAX)
        return false;
    if (s->c <= 0 || s->c > ODN_IWINO_MAX_C || s->m <= 0 || s->m > INT32_MAX - 16) return false;
    p->tiles_h = (s->oh + 1) / 2;
    p->tiles_w = (s->ow + 1) / 2;
    uint64_t per_img, tiles;
    if (!mul_ok((uint64_t)p->tiles_h, (uint64_t)p->tiles_w, &per_img) || !mul_ok(per_img, (uint64_t)s->n, &tiles) ||
        tiles > (uint64_t)INT64_MAX / 8)
        return false;
    p->tiles = (int64_t)tiles;
    p->mp = (s->m + 15) / 16 * 16;
    p->kp = (s->c + 1) / 2;
    p->vrow = (s->c + 15) / 16 * 16;
    p->mg = p->mp;
    p->groups = 1;
    p->mc = p->mp > IW_MC ? IW_MC : p->mp;
    int64_t strip_bytes = IW_POS * (2 * p->vrow + 4 * p->mc) * IW_STRIP, per_strip = IW_BUDGET / strip_bytes;
    if (per_strip < 1) per_strip = 1;
    if (per_strip > IW_TB_MAX / IW_STRIP) per_strip = IW_TB_MAX / IW_STRIP;
    /* blocks of equal strips, so that the last is not mostly empty */
    int64_t strips = (p->tiles + IW_STRIP - 1) / IW_STRIP;
    p->blocks = (strips + per_strip - 1) / per_strip;
    int64_t tb = (strips + p->blocks - 1) / p->blocks * IW_STRIP;
    p->tb = tb;
    p->blocks = (strips + tb / IW_STRIP - 1) / (tb / IW_STRIP);
    /* Too few items for two per thread: split M, each group repeating the
     * block's input transform (small against its GEMM). */
    int64_t want = threads > 1 ? 2 * (int64_t)threads : 1;
    while (p->blocks * p->groups < want && p->mg % 32 == 0) p->mg /= 2, p->groups *= 2;
    /* mc (Mo's row) and so the scratch do not depend on the groups, nor on
     * `threads`: a run on fewer threads than the scratch was sized for
     * fits it */
    /* each position's V and Mo 64 bytes past what it fills, so that the 16
     * stores of a tile do not all fall in one L1 set */
    uint64_t vpos, mpos;
    if (!mul_ok((uint64_t)tb, (uint64_t)p->vrow, &vpos) || !mul_ok((uint64_t)tb, (uint64_t)p->mc, &mpos)) return false;
    p->vpos = (int64_t)vpos + 32;
    p->mpos = (int64_t)mpos + 16;
    uint64_t bytes = (uint64_t)IW_POS * ((uint64_t)p->vpos * 2 + (uint64_t)p->mpos * 4);
    bytes = (bytes + 63) / 64 * 64;
    if (bytes > SIZE_MAX / 2 / (uint64_t)threads) return false;
    p->item_bytes = (size_t)bytes;
    return true;
}

size_t odn_iwino_f23_weights_bytes(int64_t c, int64_t m) {
    if (c <= 0 || c > ODN_IWINO_MAX_C || m <= 0 || m > INT32_MAX - 16) return 0;
    uint64_t cols = (uint64_t)(m + 15) / 16 * 16, pairs = (uint64_t)(c + 1) / 2, all;
    if (!mul_ok(cols * pairs * 2, IW_POS * sizeof(int16_t), &all) || all > SIZE_MAX) return 0;
    return (size_t)all;
}

static bool cpu_ok(void) {
#if IW_X86
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
#else
    return false;
#endif
}

bool odn_iwino_f23_supported(const odn_iwino_shape *s) {
    if (!s || s->n <= 0 || s->c <= 0 || s->h <= 0 || s->w <= 0 || s->m <= 0 || s->oh <= 0 || s->ow <= 0) return false;
    if (s->pt < 0 || s->pt > 2 || s->pl < 0 || s->pl > 2) return false;
    if (s->h > INT32_MAX || s->w > INT32_MAX) return false;
    int64_t pb = s->oh - s->h - s->pt + 2, pr = s->ow - s->w - s->pl + 2;
    if (pb < 0 || pb > 2 || pr < 0 || pr > 2) return false;
    uint64_t hw, nhw, xb, yb;
    if (!mul_ok((uint64_t)s->h, (uint64_t)s->w, &hw) || !mul_ok(hw, (uint64_t)s->n, &nhw) ||
        !mul_ok(nhw, (uint64_t)s->c, &xb) || xb > (uint64_t)INT64_MAX)
        return false;
    if (!mul_ok((uint64_t)s->oh, (uint64_t)s->ow, &hw) || !mul_ok(hw, (uint64_t)s->n, &nhw) ||
        !mul_ok(nhw, (uint64_t)s->m, &yb) || yb > (uint64_t)INT64_MAX / 4)
        return false;
    iw_plan p;
    if (!odn_iwino_f23_weights_bytes(s->c, s->m) || !make_plan(s, 64, &p)) return false;
    return cpu_ok();
}

size_t odn_iwino_f23_scratch_bytes(const odn_iwino_shape *s, int threads) {
    iw_plan p;
    if (threads < 1) threads = 1;
    if (!s || !make_plan(s, threads, &p)) return 0;
    return p.item_bytes * (size_t)threads;
}

/* U' = G' g G'^T of one 3x3 filter (g already less its zero point). */
static void filter_transform(const int32_t g[9], int32_t u[4][4]) {
    static const int32_t G2[4][3] = {{2, 0, 0}, {1, 1, 1}, {1, -1, 1}, {0, 0, 2}};
    int32_t t[4][3];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++) t[i][j] = G2[i][0] * g[j] + G2[i][1] * g[3 + j] + G2[i][2] * g[6 + j];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) u[i][j] = t[i][0] * G2[j][0] + t[i][1] * G2[j][1] + t[i][2] * G2[j][2];
}

/* Element of U'[pos] for input channel k, output column j. */
static size_t packed_index(int64_t kp, int64_t mp, int pos, int64_t k, int64_t j) {
    return (size_t)(((pos * (mp / IW_NR) + j / IW_NR) * kp + k / 2) * (IW_NR * 2) + (j % IW_NR) * 2 + k % 2);
}

void odn_iwino_f23_pack_weights(const void *w, bool w_unsigned, const int32_t *zw, int64_t zw_count, int64_t c,
                                int64_t m, void *packed) {
    size_t bytes = odn_iwino_f23_weights_bytes(c, m);
    if (!bytes) return;
    int16_t *out = packed;
    memset(out, 0, bytes); /* the padding channel and columns: zero filters */
    int64_t kp = (c + 1) / 2, mp = (m + 15) / 16 * 16;
    for (int64_t j = 0; j < m; j++) {
        int32_t z = zw ? zw[zw_count == m ? j : 0] : 0;
        for (int64_t k = 0; k < c; k++) {
            int32_t g[9], u[4][4];
            for (int e = 0; e < 9; e++) {
                size_t at = (size_t)((j * c + k) * 9 + e);
                g[e] = (w_unsigned ? (int32_t)((const uint8_t *)w)[at] : (int32_t)((const int8_t *)w)[at]) - z;
            }
            filter_transform(g, u);
            for (int pos = 0; pos < IW_POS; pos++) out[packed_index(kp, mp, pos, k, j)] = (int16_t)u[pos / 4][pos % 4];
        }
    }
}

#if IW_X86

typedef struct iw_run {
    const odn_iwino_shape *s;
    const iw_plan *p;
    const uint8_t *x;
    bool x_unsigned;
    int32_t zx;
    const int16_t *packed;
    int32_t *y;
} iw_run;

static void tile_at(const iw_plan *p, int64_t g, int64_t *b, int64_t *ty, int64_t *tx) {
    int64_t per = p->tiles_h * p->tiles_w;
    *b = g / per;
    *ty = g % per / p->tiles_w;
    *tx = g % p->tiles_w;
}

/* 16 channels of one pixel, less zx, as int16. */
IW_AVX2 static inline __m256i load16(const uint8_t *px, bool u, __m256i zx) {
    __m128i v = _mm_loadu_si128((const __m128i *)px);
    return _mm256_sub_epi16(u ? _mm256_cvtepu8_epi16(v) : _mm256_cvtepi8_epi16(v), zx);
}

/* The 4x4 input tile of channels c0..c0+16 at rows iy0.., columns ix0..:
 * 0 outside the image (padding, and past the last partial tiles, whose
 * outputs are dropped) and for channels past C (V's padding, read by no
 * filter but the zero one). */
IW_AVX2 static void load_tile(const iw_run *r, const uint8_t *xb, int64_t iy0, int64_t ix0, int64_t c0,
                              __m256i d[4][4]) {
    const odn_iwino_shape *s = r->s;
    const __m256i zx = _mm256_set1_epi16((int16_t)r->zx);
    int64_t nc = s->c - c0 < 16 ? s->c - c0 : 16;
    if (nc == 16 && iy0 >= 0 && ix0 >= 0 && iy0 + 4 <= s->h && ix0 + 4 <= s->w) {
        const uint8_t *p0 = xb + (iy0 * s->w + ix0) * s->c + c0;
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) d[i][j] = load16(p0 + (i * s->w + j) * s->c, r->x_unsigned, zx);
        return;
    }
    for (int i = 0; i < 4; i++) {
        int64_t iy = iy0 + i;
        for (int j = 0; j < 4; j++) {
            int64_t ix = ix0 + j;
            int16_t v[16] = {0};
            if (iy >= 0 && iy < s->h && ix >= 0 && ix < s->w) {
                const uint8_t *px = xb + (iy * s->w + ix) * s->c + c0;
                for (int64_t k = 0; k < nc; k++)
                    v[k] = (int16_t)((r->x_unsigned ? (int32_t)px[k] : (int32_t)(int8_t)px[k]) - r->zx);
            }
            d[i][j] = _mm256_loadu_si256((const __m256i *)v);
        }
    }
}

/* B^T applied to 4 values (a row or a column). */
IW_AVX2 static inline void input_1d(__m256i d0, __m256i d1, __m256i d2, __m256i d3, __m256i t[4]) {
    t[0] = _mm256_sub_epi16(d0, d2);
    t[1] = _mm256_add_epi16(d1, d2);
    t[2] = _mm256_sub_epi16(d2, d1);
    t[3] = _mm256_sub_epi16(d1, d3);
}

/* B^T d B of the tile, each of the 16 results to v + pos * vpos. */
IW_AVX2 static void input_tile(__m256i d[4][4], int16_t *v, int64_t vpos) {
    __m256i t[4][4], o[4];
    for (int i = 0; i < 4; i++) input_1d(d[i][0], d[i][1], d[i][2], d[i][3], t[i]); /* rows: d B */
    for (int j = 0; j < 4; j++) {
        input_1d(t[0][j], t[1][j], t[2][j], t[3][j], o); /* columns: B^T (d B) */
        for (int i = 0; i < 4; i++) _mm256_store_si256((__m256i *)(v + (i * 4 + j) * vpos), o[i]);
    }
}

/* V of the block's tiles [g0, g0 + tb) that are in the output (the GEMM
 * reads no others: a partial strip has a kernel of its own), each tile's
 * row padded to vrow channels with zeros. */
IW_AVX2 static void input_block(const iw_run *r, int64_t g0, int16_t *v) {
    const odn_iwino_shape *s = r->s;
    const iw_plan *p = r->p;
    int64_t live = p->tiles - g0 < p->tb ? p->tiles - g0 : p->tb;
    for (int64_t t = 0; t < live; t++) {
        int64_t b, ty, tx;
        tile_at(p, g0 + t, &b, &ty, &tx);
        const uint8_t *xb = r->x + b * s->h * s->w * s->c;
        for (int64_t c0 = 0; c0 < p->vrow; c0 += 16) {
            __m256i d[4][4];
            load_tile(r, xb, ty * 2 - s->pt, tx * 2 - s->pl, c0, d);
            input_tile(d, v + t * p->vrow + c0, p->vpos);
        }
    }
}

/* Mo[R][16] = V rows of R tiles (channel pairs) x U' panel (pairs x 16),
 * R 1..6 (a constant where inlined). Accumulators named one by one: an
 * array of them is not kept in registers. */
#define ACC(t) __m256i lo##t = _mm256_setzero_si256(), hi##t = _mm256_setzero_si256();
#define MADD(t)                                                                                                        \
    if (R > t) {                                                                                                       \
        __m256i bc = _mm256_set1_epi32(*(const int32_t *)(v##t + 2 * k));                                              \
        lo##t = _mm256_add_epi32(lo##t, _mm256_madd_epi16(bc, u0));                                                    \
        hi##t = _mm256_add_epi32(hi##t, _mm256_madd_epi16(bc, u1));                                                    \
    }
#define STORE(t)                                                                                                       \
    if (R > t) {                                                                                                       \
        _mm256_store_si256((__m256i *)(mo + t * ldm), lo##t);                                                          \
        _mm256_store_si256((__m256i *)(mo + t * ldm + 8), hi##t);                                                      \
    }
IW_AVX2 __attribute__((always_inline)) static inline void
strip_panel(const int R, const int16_t *vs, int64_t vrow, const int16_t *u, int64_t kp, int32_t *mo, int64_t ldm) {
    const int16_t *v0 = vs, *v1 = vs + vrow, *v2 = vs + 2 * vrow, *v3 = vs + 3 * vrow, *v4 = vs + 4 * vrow,
                  *v5 = vs + 5 * vrow;
    ACC(0) ACC(1) ACC(2) ACC(3) ACC(4) ACC(5);
    for (int64_t k = 0; k < kp; k++, u += 32) {
        __m256i u0 = _mm256_load_si256((const __m256i *)u), u1 = _mm256_load_si256((const __m256i *)(u + 16));
        MADD(0) MADD(1) MADD(2) MADD(3) MADD(4) MADD(5)
    }
    STORE(0) STORE(1) STORE(2) STORE(3) STORE(4) STORE(5)(void) v1, (void)v2, (void)v3, (void)v4, (void)v5;
}
#undef ACC
#undef MADD
#undef STORE

typedef void (*strip_fn)(const int16_t *vs, int64_t vrow, const int16_t *u, int64_t kp, int32_t *mo, int64_t ldm);
#define STRIP_OF(r)                                                                                                    \
    IW_AVX2 static void strip_##r(const int16_t *vs, int64_t vrow, const int16_t *u, int64_t kp, int32_t *mo,          \
                                  int64_t ldm) {                                                                       \
        strip_panel(r, vs, vrow, u, kp, mo, ldm);                                                                      \
    }
STRIP_OF(1)
STRIP_OF(2)
STRIP_OF(3)
STRIP_OF(4)
STRIP_OF(5)
STRIP_OF(6)
#undef STRIP_OF
static const strip_fn strip_kernels[IW_STRIP] = {strip_1, strip_2, strip_3, strip_4, strip_5, strip_6};

/* Mo[pos] for the packed columns [m0, m0 + width): panel by panel (a
 * panel, C x 16 int16, stays in L1 while the block's strips pass it). */
IW_AVX2 static void gemm_block(const iw_run *r, const int16_t *v, int64_t g0, int64_t m0, int64_t width, int32_t *mo) {
    const iw_plan *p = r->p;
    int64_t live = p->tiles - g0 < p->tb ? p->tiles - g0 : p->tb;
    int64_t strips = (live + IW_STRIP - 1) / IW_STRIP;
    for (int pos = 0; pos < IW_POS; pos++) {
        const int16_t *vp = v + pos * p->vpos;
        int32_t *mp = mo + pos * p->mpos;
        for (int64_t j = 0; j < width; j += IW_NR) {
            const int16_t *u = r->packed + packed_index(p->kp, p->mp, pos, 0, m0 + j);
            for (int64_t st = 0; st < strips; st++) {
                int64_t rows = live - st * IW_STRIP < IW_STRIP ? live - st * IW_STRIP : IW_STRIP;
                strip_kernels[rows - 1](vp + st * IW_STRIP * p->vrow, p->vrow, u, p->kp, mp + st * IW_STRIP * p->mc + j,
                                        p->mc);
            }
        }
    }
}

/* A^T applied to 4 values: 2 results. */
IW_AVX2 static inline void output_1d(__m256i m0, __m256i m1, __m256i m2, __m256i m3, __m256i o[2]) {
    o[0] = _mm256_add_epi32(_mm256_add_epi32(m0, m1), m2);
    o[1] = _mm256_sub_epi32(_mm256_sub_epi32(m1, m2), m3);
}

/* y at (b, oy0.., ox0.., channels j0..j0+8) = (A^T m A) >> 2, rows and
 * columns past oh, ow and channels past m dropped. */
IW_AVX2 static void output_tile(const iw_run *r, const int32_t *mt, int64_t ldpos, int64_t b, int64_t oy0, int64_t ox0,
                                int64_t j0) {
    const odn_iwino_shape *s = r->s;
    __m256i t[4][2], o[2];
    for (int i = 0; i < 4; i++) {
        __m256i m[4];
        for (int j = 0; j < 4; j++) m[j] = _mm256_load_si256((const __m256i *)(mt + (i * 4 + j) * ldpos));
        output_1d(m[0], m[1], m[2], m[3], t[i]); /* rows: m A */
    }
    int rows = s->oh - oy0 < 2 ? 1 : 2, cols = s->ow - ox0 < 2 ? 1 : 2;
    int64_t left = s->m - j0;
    __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)(left < 8 ? left : 8)),
                                      _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    int32_t *yt = r->y + ((b * s->oh + oy0) * s->ow + ox0) * s->m + j0;
    for (int j = 0; j < cols; j++) {
        output_1d(t[0][j], t[1][j], t[2][j], t[3][j], o); /* columns: A^T (m A) */
        for (int i = 0; i < rows; i++) {
            int32_t *yp = yt + (i * s->ow + j) * s->m;
            __m256i v = _mm256_srai_epi32(o[i], 2); /* exact: A^T m A is 4y */
            if (left >= 8) _mm256_storeu_si256((__m256i *)yp, v);
            else _mm256_maskstore_epi32(yp, mask, v);
        }
    }
}

IW_AVX2 static void output_block(const iw_run *r, int64_t g0, int64_t m0, int64_t width, const int32_t *mo) {
    const iw_plan *p = r->p;
    for (int64_t t = 0; t < p->tb && g0 + t < p->tiles; t++) {
        int64_t b, ty, tx;
        tile_at(p, g0 + t, &b, &ty, &tx);
        for (int64_t j = 0; j < width && m0 + j < r->s->m; j += 8)
            output_tile(r, mo + t * p->mc + j, p->mpos, b, ty * 2, tx * 2, m0 + j);
    }
}

IW_AVX2 static void run_item(const iw_run *r, int64_t item, uint8_t *scratch) {
    const iw_plan *p = r->p;
    int64_t blk = item / p->groups, m0 = item % p->groups * p->mg, g0 = blk * p->tb;
    int16_t *v = (int16_t *)scratch;
    int32_t *mo = (int32_t *)(scratch + (size_t)IW_POS * (size_t)p->vpos * 2);
    input_block(r, g0, v);
    for (int64_t j = 0; j < p->mg; j += p->mc) {
        int64_t width = p->mg - j < p->mc ? p->mg - j : p->mc;
        if (m0 + j >= r->s->m) break; /* only padding columns left */
        gemm_block(r, v, g0, m0 + j, width, mo);
        output_block(r, g0, m0 + j, width, mo);
    }
}

void odn_iwino_f23_run(const odn_iwino_shape *s, const void *x, bool x_unsigned, int32_t zx, const void *packed,
                       int32_t *y, void *scratch, int threads) {
    iw_plan p;
    if (threads < 1) threads = 1;
    if (!make_plan(s, threads, &p)) return;
    iw_run r = {s, &p, x, x_unsigned, zx, packed, y};
    int64_t items = p.blocks * p.groups;
    if (threads > items) threads = (int)items;
    if (threads <= 1) {
        for (int64_t it = 0; it < items; it++) run_item(&r, it, scratch);
        return;
    }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (int64_t it = 0; it < items; it++)
        run_item(&r, it, (uint8_t *)scratch + (size_t)omp_get_thread_num() * p.item_bytes);
}

#else /* not x86: odn_iwino_f23_supported says false, so this is never called */

void odn_iwino_f23_run(const odn_iwino_shape *s, const void *x, bool x_unsigned, int32_t zx, const void *packed,
                       int32_t *y, void *scratch, int threads) {
    (void)s, (void)x, (void)x_unsigned, (void)zx, (void)packed, (void)y, (void)scratch, (void)threads;
}

#endif
