/* The exact u8 x s8 GEMM of odn_igemm8.h: D1 on vpmaddubsw, the sparse
 * residual D2 and A's zero point applied after; blocked as odn_igemm.c is.
 *
 * Why: on Zen3 the int16 kernel (odn_igemm.c) issues a vpmaddwd and a
 * vpaddd per 16 multiply-adds plus a broadcast per two, which keeps all
 * four vector pipes busy and reaches about 75% of the two multiply pipes'
 * rate; ONNX Runtime's vpmaddubsw + vpmaddwd + vpaddd does 32 per two
 * multiply uops with a pipe to spare and runs at that rate. These GEMMs
 * are 70-80% of a quantize_dynamic transformer's time.
 *
 * Layout: K (padded to a multiple of 4 with zero rows) is cut into slices
 * of at most KC rows, N into panels of NR = 16 columns; the dense part
 * holds slice after slice, each slice its panels, each panel its kc / 4
 * quads of 64 bytes: columns 0..7 then 8..15, each column's 4 rows side by
 * side, so one vpmaddubsw of a broadcast A quad against 32 bytes gives two
 * pair sums per column and vpmaddwd by ones their sum. Then colsum (int32,
 * panels * NR: sum_k d[k, j], 0 past N), the residual's per-panel offsets
 * (int32, panels + 1) and its entries (int32 triples k, j, value), sorted
 * by panel. za is applied as za * colsum, so A is read as it is: uint8
 * rows of whole quads in place, others copied block by block (int8
 * shifted to uint8 by 128 with za alike, K zero-padded to quads). */
#include "odn_igemm8.h"

#include <immintrin.h>
#include <string.h>

#include "odn_gemm_split.h"
#include "odn_igemm.h"

#define NR 16
#define MR 4
#define KC 1024
#define MC 240

static int64_t k_padded(int64_t k) { return (k + 3) & ~(int64_t)3; }

/* K slices of equal size (multiples of 4), at most KC rows each. */
static int64_t slice_rows(int64_t k) {
    int64_t kp = k_padded(k), slices = (kp + KC - 1) / KC;
    int64_t kc = (kp + slices - 1) / slices;
    return (kc + 3) & ~(int64_t)3;
}

static int32_t clamp64(int32_t v) { return v < -64 ? -64 : v > 64 ? 64 : v; }

typedef struct shape8 {
    int64_t k, n, kp, panels, dense, nnz;
} shape8;

static shape8 shape_of(int64_t k, int64_t n, int64_t nnz) {
    shape8 s = {.k = k, .n = n, .kp = k_padded(k), .panels = (n + NR - 1) / NR, .nnz = nnz};
    s.dense = s.panels * NR * s.kp;
    return s;
}

static size_t bytes_of(const shape8 *s) {
    return (size_t)s->dense + sizeof(int32_t) * (size_t)(s->panels * NR + s->panels + 1 + 3 * s->nnz);
}

/* Residual entries at most: 1/256 of the weights. */
static int64_t max_residual(int64_t k, int64_t n) { return k * n / 256; }

size_t odn_igemm8_packed_bytes(int64_t k, int64_t n) {
    if (!odn_igemm_supported() || k <= 0 || n <= 0 || k > ODN_IGEMM_MAX_K || n > INT32_MAX / 2) return 0;
    if (!odn_igemm_packed_count(k, n)) return 0; /* the int16 form's size does not overflow: ours, half, neither */
    shape8 s = shape_of(k, n, max_residual(k, n));
    return bytes_of(&s);
}

/* The residual entries of (d0, d1) at rows r, r + 1 of column col, whose
 * D1 pair is (e0, e1); false past the bound. */
static bool add_residual(int32_t *ent, int64_t *nnz, int64_t limit, int64_t r, int64_t col, int32_t d0, int32_t d1,
                         int32_t e0, int32_t e1) {
    int32_t ds[2] = {d0, d1}, es[2] = {e0, e1};
    for (int h = 0; h < 2; h++) {
        if (ds[h] == es[h]) continue;
        if (*nnz >= limit) return false;
        int32_t *t = ent + 3 * *nnz;
        t[0] = (int32_t)(r + h), t[1] = (int32_t)col, t[2] = ds[h] - es[h];
        ++*nnz;
    }
    return true;
}

/* Columns [c0, c0 + NR) of d's rows r and r + 1 (0 past K and N). */
static void d_rows(const void *b, bool is_unsigned, int64_t k, int64_t n, int64_t stride_k, int64_t stride_n,
                   const int32_t *zb, int64_t zb_count, int64_t r, int64_t c0, int32_t d[2][NR]) {
    int64_t cols = n - c0 < NR ? n - c0 : NR;
    for (int h = 0; h < 2; h++) {
        int64_t jj = 0;
        if (r + h < k) {
            const uint8_t *bu = (const uint8_t *)b + (r + h) * stride_k + c0 * stride_n;
            for (; jj < cols; jj++) {
                uint8_t v = bu[jj * stride_n];
                d[h][jj] = (is_unsigned ? (int32_t)v : (int32_t)(int8_t)v) - (zb ? zb[zb_count == 1 ? 0 : c0 + jj] : 0);
            }
        }
        for (; jj < NR; jj++) d[h][jj] = 0;
    }
}

/* D1's pairs of 16 columns' d pairs, branch-free: a pair whose sums
 * vpmaddubsw keeps exact for any uint8 A stays, else both are clamped to
 * [-64, 64]. */
static void split_rows(const int32_t d[2][NR], int32_t e[2][NR]) {
    for (int jj = 0; jj < NR; jj++) {
        int32_t d0 = d[0][jj], d1 = d[1][jj];
        int32_t a0 = d0 < 0 ? -d0 : d0, a1 = d1 < 0 ? -d1 : d1;
        bool fits = d0 <= 127 && d1 <= 127 && a0 + a1 <= 128; /* |d| <= 128 follows */
        e[0][jj] = fits ? d0 : clamp64(d0);
        e[1][jj] = fits ? d1 : clamp64(d1);
    }
}

bool odn_igemm8_pack(const void *b, bool is_unsigned, int64_t k, int64_t n, int64_t stride_k, int64_t stride_n,
                     const int32_t *zb, int64_t zb_count, void *packed) {
    shape8 s = shape_of(k, n, 0);
    int8_t *dense = packed;
    int32_t *colsum = (int32_t *)(void *)(dense + s.dense), *off = colsum + s.panels * NR, *ent = off + s.panels + 1;
    int64_t kc_even = slice_rows(k), nnz = 0, limit = max_residual(k, n);
    memset(colsum, 0, sizeof(int32_t) * (size_t)(s.panels * NR));
    for (int64_t pnl = 0; pnl < s.panels; pnl++) {
        off[pnl] = (int32_t)nnz;
        int8_t *dst = NULL;
        for (int64_t r = 0; r < s.kp; r += 2) {
            if (r % kc_even == 0) /* a K slice starts: this panel's part of it */
                dst = dense + r * s.panels * NR + pnl * (s.kp - r < kc_even ? s.kp - r : kc_even) * NR;
            int32_t d[2][NR];
            d_rows(b, is_unsigned, k, n, stride_k, stride_n, zb, zb_count, r, pnl * NR, d);
            int32_t e[2][NR];
            split_rows(d, e);
            int64_t kk = r % kc_even;
            int8_t *q = dst + (kk / 4) * 4 * NR + kk % 4;
            for (int64_t jj = 0; jj < NR; jj++) {
                colsum[pnl * NR + jj] += d[0][jj] + d[1][jj];
                q[(jj / 8) * 32 + (jj % 8) * 4] = (int8_t)e[0][jj];
                q[(jj / 8) * 32 + (jj % 8) * 4 + 1] = (int8_t)e[1][jj];
            }
            for (int64_t jj = 0; jj < NR; jj++)
                if ((e[0][jj] != d[0][jj] || e[1][jj] != d[1][jj]) &&
                    !add_residual(ent, &nnz, limit, r, pnl * NR + jj, d[0][jj], d[1][jj], e[0][jj], e[1][jj])) {
                    off[s.panels] = -1;
                    return false;
                }
        }
    }
    off[s.panels] = (int32_t)nnz;
    return true;
}

bool odn_igemm8_packed_ok(const void *packed, int64_t k, int64_t n) {
    shape8 s = shape_of(k, n, 0);
    const int32_t *colsum = (const int32_t *)(const void *)((const int8_t *)packed + s.dense);
    return colsum[s.panels * NR + s.panels] >= 0;
}

size_t odn_igemm8_scratch_bytes(void) { return (size_t)MC * KC; }

/* Rows [i0, i1) of A, columns [k0, k0 + kc) (zeros past k), as uint8 rows
 * of kc bytes (int8 shifted by 128). */
__attribute__((target("avx2"))) static void copy_a(const void *a, bool a_unsigned, int64_t lda, int64_t i0, int64_t i1,
                                                   int64_t k0, int64_t kc, int64_t k, uint8_t *dst) {
    int64_t valid = k - k0 < kc ? k - k0 : kc;
    const __m256i flip = _mm256_set1_epi8((char)0x80);
    for (int64_t i = i0; i < i1; i++, dst += kc) {
        const uint8_t *src = (const uint8_t *)a + i * lda + k0;
        int64_t kk = 0;
        if (a_unsigned) {
            memcpy(dst, src, (size_t)valid);
            kk = valid;
        } else {
            for (; kk + 32 <= valid; kk += 32) {
                __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(src + kk));
                _mm256_storeu_si256((__m256i *)(void *)(dst + kk), _mm256_xor_si256(v, flip));
            }
            for (; kk < valid; kk++) dst[kk] = (uint8_t)(src[kk] ^ 0x80);
        }
        if (kc > kk) memset(dst + kk, 0, (size_t)(kc - kk));
    }
}

__attribute__((target("avx2"))) static inline __m256i lane_mask(int cols) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(cols), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

static inline int32_t load_quad(const uint8_t *p) {
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* The store of one tile row: the first K slice writes acc - za * colsum,
 * later ones add acc to C. */
__attribute__((target("avx2"))) static void store_row(int32_t *cr, __m256i v0, __m256i v1, const __m256i *sub, int cols,
                                                      bool first) {
    __m256i m0 = lane_mask(cols), m1 = lane_mask(cols - 8);
    if (first) {
        v0 = _mm256_sub_epi32(v0, sub[0]);
        v1 = _mm256_sub_epi32(v1, sub[1]);
    } else if (cols == NR) {
        v0 = _mm256_add_epi32(v0, _mm256_loadu_si256((const __m256i *)(void *)cr));
        v1 = _mm256_add_epi32(v1, _mm256_loadu_si256((const __m256i *)(void *)(cr + 8)));
    } else {
        v0 = _mm256_add_epi32(v0, _mm256_maskload_epi32(cr, m0));
        v1 = _mm256_add_epi32(v1, _mm256_maskload_epi32(cr + 8, m1));
    }
    if (cols == NR) {
        _mm256_storeu_si256((__m256i *)(void *)cr, v0);
        _mm256_storeu_si256((__m256i *)(void *)(cr + 8), v1);
    } else {
        _mm256_maskstore_epi32(cr, m0, v0);
        _mm256_maskstore_epi32(cr + 8, m1, v1);
    }
}

/* One tile of R (1..MR, a constant where inlined) rows by 16 columns over
 * kc (a multiple of 4) rows of K: A's row r at ap + r * arow, the panel
 * slice at bp. 4 rows keep the 8 accumulators, B, ones and the broadcast
 * in registers; fewer rows (M < 4, a row tail) skip the rows they lack
 * instead of computing copies. */
#define ROW(r) __m256i lo##r = _mm256_setzero_si256(), hi##r = _mm256_setzero_si256();
#define MAC(r)                                                                                                         \
    if (R > r) {                                                                                                       \
        __m256i av = _mm256_set1_epi32(load_quad(ap + r * arow + 4 * q));                                              \
        lo##r = _mm256_add_epi32(lo##r, _mm256_madd_epi16(_mm256_maddubs_epi16(av, b0), ones));                        \
        hi##r = _mm256_add_epi32(hi##r, _mm256_madd_epi16(_mm256_maddubs_epi16(av, b1), ones));                        \
    }
__attribute__((target("avx2"), always_inline)) static inline void tile_rows(const int R, int64_t kc, const uint8_t *ap,
                                                                            int64_t arow, const int8_t *bp, int32_t *c,
                                                                            int64_t ldc, int cols, bool first,
                                                                            const __m256i *sub) {
    const __m256i ones = _mm256_set1_epi16(1);
    ROW(0) ROW(1) ROW(2) ROW(3);
    for (int64_t q = 0; q < kc / 4; q++) {
        __m256i b0 = _mm256_loadu_si256((const __m256i *)(const void *)(bp + q * 4 * NR));
        __m256i b1 = _mm256_loadu_si256((const __m256i *)(const void *)(bp + q * 4 * NR + 32));
        MAC(0) MAC(1) MAC(2) MAC(3)
    }
    __m256i acc[MR][2] = {{lo0, hi0}, {lo1, hi1}, {lo2, hi2}, {lo3, hi3}};
    for (int r = 0; r < R; r++) store_row(c + r * ldc, acc[r][0], acc[r][1], sub, cols, first);
}

__attribute__((target("avx2"))) static void tile(int rows, int64_t kc, const uint8_t *ap, int64_t arow,
                                                 const int8_t *bp, int32_t *c, int64_t ldc, int cols, bool first,
                                                 const __m256i *sub) {
    switch (rows) {
    case 1: tile_rows(1, kc, ap, arow, bp, c, ldc, cols, first, sub); break;
    case 2: tile_rows(2, kc, ap, arow, bp, c, ldc, cols, first, sub); break;
    case 3: tile_rows(3, kc, ap, arow, bp, c, ldc, cols, first, sub); break;
    default: tile_rows(4, kc, ap, arow, bp, c, ldc, cols, first, sub); break;
    }
}
#undef ROW
#undef MAC

/* C[i, j] += D2[k, j] * A[i, k] over the residual entries of panels
 * [p0, p1), rows [0, m), in wrapping (unsigned) arithmetic. */
static void apply_residual(const int32_t *off, const int32_t *ent, int64_t p0, int64_t p1, int64_t m, const void *a,
                           bool a_unsigned, int64_t lda, int32_t *c, int64_t ldc) {
    int64_t e0 = off[p0], e1 = off[p1];
    if (e1 <= e0) return;
    uint8_t flip = a_unsigned ? 0 : 0x80;
    for (int64_t i = 0; i < m; i++) {
        const uint8_t *ar = (const uint8_t *)a + i * lda;
        uint32_t *cr = (uint32_t *)(void *)(c + i * ldc);
        for (int64_t e = e0; e < e1; e++) {
            const int32_t *t = ent + 3 * e;
            cr[t[1]] += (uint32_t)t[2] * (uint32_t)(uint8_t)(ar[t[0]] ^ flip);
        }
    }
}

/* One thread's share: rows [0, m) and panels [p0, p1). */
__attribute__((target("avx2"))) static void block(int64_t m, int64_t n, int64_t k, const void *a, bool a_unsigned,
                                                  int64_t lda, int32_t za, const void *packed, int64_t p0, int64_t p1,
                                                  int32_t *c, int64_t ldc, void *scratch) {
    shape8 s = shape_of(k, n, 0);
    const int8_t *dense = packed;
    const int32_t *colsum = (const int32_t *)(const void *)(dense + s.dense), *off = colsum + s.panels * NR;
    int64_t kc_even = slice_rows(k);
    int32_t zshift = a_unsigned ? za : za + 128;
    uint8_t *abuf = scratch;
    /* uint8 rows of whole quads are read where they are: each thread
     * copying all of A for its panels cost 8% of a 2-thread run */
    bool direct = a_unsigned && k % 4 == 0;
    for (int64_t i0 = 0; i0 < m; i0 += MC) {
        int64_t i1 = i0 + MC < m ? i0 + MC : m;
        for (int64_t k0 = 0; k0 < s.kp; k0 += kc_even) {
            int64_t kc = s.kp - k0 < kc_even ? s.kp - k0 : kc_even;
            if (!direct) copy_a(a, a_unsigned, lda, i0, i1, k0, kc, k, abuf);
            const uint8_t *ab = direct ? (const uint8_t *)a + i0 * lda + k0 : abuf;
            int64_t arow = direct ? lda : kc;
            for (int64_t pnl = p0; pnl < p1; pnl++) {
                int64_t jc = pnl * NR;
                int cols = (int)(n - jc < NR ? n - jc : NR);
                const int8_t *bp = dense + k0 * s.panels * NR + pnl * kc * NR;
                __m256i zv = _mm256_set1_epi32(zshift);
                __m256i sub[2] = {
                    _mm256_mullo_epi32(zv, _mm256_loadu_si256((const __m256i *)(const void *)(colsum + jc))),
                    _mm256_mullo_epi32(zv, _mm256_loadu_si256((const __m256i *)(const void *)(colsum + jc + 8)))};
                for (int64_t i = i0; i < i1; i += MR) {
                    int rows = i1 - i < MR ? (int)(i1 - i) : MR;
                    tile(rows, kc, ab + (i - i0) * arow, arow, bp, c + i * ldc + jc, ldc, cols, k0 == 0, sub);
                }
            }
        }
    }
    apply_residual(off, off + s.panels + 1, p0, p1, m, a, a_unsigned, lda, c, ldc);
}

void odn_igemm8_block(int64_t m, int64_t n, int64_t k, const void *a, bool a_unsigned, int64_t lda, int32_t za,
                      const void *packed, int64_t j0, int64_t j1, int32_t *c, int64_t ldc, void *scratch) {
    if (m <= 0 || n <= 0 || k <= 0 || j1 <= j0) return;
    block(m, n, k, a, a_unsigned, lda, za, packed, j0 / NR, (j1 + NR - 1) / NR, c, ldc, scratch);
}

typedef struct igemm8_args {
    int64_t n, k, lda, ldc;
    const void *a;
    bool a_unsigned;
    int32_t za;
    const void *packed;
    int32_t *c;
} igemm8_args;

static void part(const void *ctx, int64_t r0, int64_t r1, int64_t p0, int64_t p1, void *scratch) {
    const igemm8_args *g = ctx;
    block(r1 - r0, g->n, g->k, (const char *)g->a + r0 * g->lda, g->a_unsigned, g->lda, g->za, g->packed, p0, p1,
          g->c + r0 * g->ldc, g->ldc, scratch);
}

void odn_igemm8_run(int64_t m, int64_t n, int64_t k, const void *a, bool a_unsigned, int64_t lda, int32_t za,
                    const void *packed, int32_t *c, int64_t ldc, void *scratch, int scratch_threads) {
    if (m <= 0 || n <= 0 || k <= 0) return;
    igemm8_args g = {n, k, lda, ldc, a, a_unsigned, za, packed, c};
    odn_gemm_split(m, MR, (n + NR - 1) / NR, 2.0 * (double)m * (double)n * (double)k, (double)k * (double)n,
                   scratch_threads, scratch, odn_igemm8_scratch_bytes(), part, &g);
}
