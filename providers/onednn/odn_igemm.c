/* The exact int8 GEMM of odn_igemm.h: int16 operands, vpmaddwd, int32 sums;
 * blocked as odn_sgemm.c is.
 *
 * Layout: K (padded to even with a zero row) is cut into slices of at most
 * KC rows (even), N into panels of NR = 16 columns; the packed matrix holds
 * slice after slice, each slice its panels one after another, each panel
 * its kc / 2 row pairs; a pair is 32 int16: columns 0..7 then 8..15, each
 * column's two rows side by side, so one vpmaddwd of a broadcast A pair
 * (a[2p], a[2p+1]) against 8 columns gives 8 int32 partial sums. Columns
 * past N are zeros.
 *
 * A: each (row block of up to MC rows, K slice) is widened, less za, into
 * an int16 block (row stride kc) that stays in L2 while a tile of up to MR
 * = 6 rows by 16 columns sweeps it against a panel's slice (16 KiB, in L1):
 * 12 int32 accumulators, 2 B loads and 6 broadcasts per row pair, 12
 * vpmaddwd + 12 vpaddd. On Zen3 it runs as fast as a register-only loop
 * of vpmaddwd + vpaddd pairs (4.7 a ns, ~150 GOP/s a core); a 4 x 24 tile
 * (fewer broadcasts) and pre-broadcast A were no faster. */
#include "odn_igemm.h"

#include <immintrin.h>
#include <string.h>

#include "odn_gemm_split.h"

#define NR 16
#define MR 6
#define KC 512
#define MC 240

bool odn_igemm_supported(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
}

/* K slices of equal size (even), at most KC rows each, over K padded to
 * even. */
static int64_t slice_rows(int64_t k) {
    int64_t kp = (k + 1) & ~(int64_t)1, slices = (kp + KC - 1) / KC;
    int64_t kc = (kp + slices - 1) / slices;
    return (kc + 1) & ~(int64_t)1;
}

size_t odn_igemm_scratch_bytes(void) { return (size_t)MC * KC * sizeof(int16_t); }

size_t odn_igemm_packed_count(int64_t k, int64_t n) {
    if (k <= 0 || n <= 0 || k > ODN_IGEMM_MAX_K) return 0;
    uint64_t panels = ((uint64_t)n + NR - 1) / NR, kp = ((uint64_t)k + 1) & ~(uint64_t)1;
    if (panels > SIZE_MAX / NR / kp / sizeof(int16_t)) return 0;
    return (size_t)(panels * NR * kp);
}

void odn_igemm_pack(const void *b, bool is_unsigned, int64_t k, int64_t n, int64_t stride_k, int64_t stride_n,
                    const int32_t *zb, int64_t zb_count, int16_t *packed) {
    int64_t panels = (n + NR - 1) / NR, kc_even = slice_rows(k), kp = (k + 1) & ~(int64_t)1;
    const uint8_t *bu = b;
    const int8_t *bs = b;
    for (int64_t k0 = 0; k0 < kp; k0 += kc_even) {
        int64_t kc = kp - k0 < kc_even ? kp - k0 : kc_even;
        for (int64_t pnl = 0; pnl < panels; pnl++) {
            int16_t *dst = packed + k0 * panels * NR + pnl * kc * NR;
            for (int64_t kk = 0; kk < kc; kk++) {
                int64_t row = k0 + kk;
                for (int64_t j = 0; j < NR; j++) {
                    int64_t col = pnl * NR + j;
                    int32_t v = 0;
                    if (row < k && col < n) {
                        int64_t at = row * stride_k + col * stride_n;
                        int32_t z = zb ? zb[zb_count == 1 ? 0 : col] : 0;
                        v = (is_unsigned ? (int32_t)bu[at] : (int32_t)bs[at]) - z;
                    }
                    /* pair kk / 2, half j / 8, column j % 8, row kk % 2 */
                    dst[(kk / 2) * 2 * NR + (j / 8) * 16 + (j % 8) * 2 + kk % 2] = (int16_t)v;
                }
            }
        }
    }
}

/* Rows [i0, i1) of A, columns [k0, k0 + kc) (zeros past k), less za, as
 * int16 rows of kc elements. */
__attribute__((target("avx2"))) static void widen_a(const void *a, bool a_unsigned, int64_t lda, int32_t za, int64_t i0,
                                                    int64_t i1, int64_t k0, int64_t kc, int64_t k, int16_t *dst) {
    int64_t valid = k - k0 < kc ? k - k0 : kc;
    __m256i z = _mm256_set1_epi16((int16_t)za);
    for (int64_t i = i0; i < i1; i++, dst += kc) {
        int64_t kk = 0;
        if (a_unsigned) {
            const uint8_t *src = (const uint8_t *)a + i * lda + k0;
            for (; kk + 16 <= valid; kk += 16) {
                __m256i w = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(src + kk)));
                _mm256_storeu_si256((__m256i *)(dst + kk), _mm256_sub_epi16(w, z));
            }
            for (; kk < valid; kk++) dst[kk] = (int16_t)(src[kk] - za);
        } else {
            const int8_t *src = (const int8_t *)a + i * lda + k0;
            for (; kk + 16 <= valid; kk += 16) {
                __m256i w = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(src + kk)));
                _mm256_storeu_si256((__m256i *)(dst + kk), _mm256_sub_epi16(w, z));
            }
            for (; kk < valid; kk++) dst[kk] = (int16_t)(src[kk] - za);
        }
        for (; kk < kc; kk++) dst[kk] = 0;
    }
}

__attribute__((target("avx2"))) static inline __m256i lane_mask(int cols) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(cols), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

static inline int32_t load_pair(const int16_t *p) {
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* One tile of `rows` (1..MR) rows by 16 columns over kc (even) rows of K:
 * A's row r at ap + r * arow (int16), the panel slice at bp. `first`: the
 * first K slice writes C, later ones add to it. The accumulators are named
 * one by one, as in odn_sgemm.c: an array of them is not kept in registers;
 * rows past `rows` repeat the last one and are not stored. */
#define ROW(r) __m256i lo##r = _mm256_setzero_si256(), hi##r = _mm256_setzero_si256();
#define MAC(r)                                                                                                         \
    {                                                                                                                  \
        __m256i av = _mm256_set1_epi32(load_pair(a##r + 2 * pp));                                                      \
        lo##r = _mm256_add_epi32(lo##r, _mm256_madd_epi16(av, b0));                                                    \
        hi##r = _mm256_add_epi32(hi##r, _mm256_madd_epi16(av, b1));                                                    \
    }
__attribute__((target("avx2"))) static void tile(int rows, int64_t kc, const int16_t *ap, int64_t arow,
                                                 const int16_t *bp, int32_t *c, int64_t ldc, int cols, bool first) {
    const int16_t *a0 = ap, *a1 = ap + (rows > 1 ? 1 : 0) * arow, *a2 = ap + (rows > 2 ? 2 : 0) * arow,
                  *a3 = ap + (rows > 3 ? 3 : 0) * arow, *a4 = ap + (rows > 4 ? 4 : 0) * arow,
                  *a5 = ap + (rows > 5 ? 5 : 0) * arow;
    ROW(0) ROW(1) ROW(2) ROW(3) ROW(4) ROW(5);
    for (int64_t pp = 0; pp < kc / 2; pp++) {
        __m256i b0 = _mm256_loadu_si256((const __m256i *)(bp + pp * 2 * NR));
        __m256i b1 = _mm256_loadu_si256((const __m256i *)(bp + pp * 2 * NR + 16));
        MAC(0) MAC(1) MAC(2) MAC(3) MAC(4) MAC(5)
    }
    __m256i acc[MR][2] = {{lo0, hi0}, {lo1, hi1}, {lo2, hi2}, {lo3, hi3}, {lo4, hi4}, {lo5, hi5}};
    __m256i m0 = lane_mask(cols), m1 = lane_mask(cols - 8);
    for (int r = 0; r < rows; r++) {
        int32_t *cr = c + r * ldc;
        __m256i v0 = acc[r][0], v1 = acc[r][1];
        if (cols == NR) {
            if (!first) {
                v0 = _mm256_add_epi32(v0, _mm256_loadu_si256((const __m256i *)cr));
                v1 = _mm256_add_epi32(v1, _mm256_loadu_si256((const __m256i *)(cr + 8)));
            }
            _mm256_storeu_si256((__m256i *)cr, v0);
            _mm256_storeu_si256((__m256i *)(cr + 8), v1);
        } else {
            if (!first) {
                v0 = _mm256_add_epi32(v0, _mm256_maskload_epi32(cr, m0));
                v1 = _mm256_add_epi32(v1, _mm256_maskload_epi32(cr + 8, m1));
            }
            _mm256_maskstore_epi32(cr, m0, v0);
            _mm256_maskstore_epi32(cr + 8, m1, v1);
        }
    }
}
#undef ROW
#undef MAC

void odn_igemm_block(int64_t m, int64_t n, int64_t k, const void *a, bool a_unsigned, int64_t lda, int32_t za,
                     const int16_t *packed, int64_t j0, int64_t j1, int32_t *c, int64_t ldc, void *scratch) {
    if (m <= 0 || j1 <= j0) return;
    int64_t panels = (n + NR - 1) / NR, kc_even = slice_rows(k), kp = (k + 1) & ~(int64_t)1;
    int64_t p0 = j0 / NR, p1 = (j1 + NR - 1) / NR;
    int16_t *abuf = scratch;
    for (int64_t i0 = 0; i0 < m; i0 += MC) {
        int64_t i1 = i0 + MC < m ? i0 + MC : m;
        for (int64_t k0 = 0; k0 < kp; k0 += kc_even) {
            int64_t kc = kp - k0 < kc_even ? kp - k0 : kc_even;
            widen_a(a, a_unsigned, lda, za, i0, i1, k0, kc, k, abuf);
            for (int64_t pnl = p0; pnl < p1; pnl++) {
                int64_t jc = pnl * NR, lim = j1 < n ? j1 : n;
                int cols = (int)(lim - jc < NR ? lim - jc : NR);
                const int16_t *bp = packed + k0 * panels * NR + pnl * kc * NR;
                for (int64_t i = i0; i < i1; i += MR) {
                    int rows = i1 - i < MR ? (int)(i1 - i) : MR;
                    tile(rows, kc, abuf + (i - i0) * kc, kc, bp, c + i * ldc + jc, ldc, cols, k0 == 0);
                }
            }
        }
    }
}

typedef struct igemm_args {
    int64_t n, k, lda, ldc;
    const void *a;
    bool a_unsigned;
    int32_t za;
    const int16_t *packed;
    int32_t *c;
} igemm_args;

static void part(const void *ctx, int64_t r0, int64_t r1, int64_t p0, int64_t p1, void *scratch) {
    const igemm_args *g = ctx;
    int64_t j0 = p0 * NR, j1 = p1 * NR < g->n ? p1 * NR : g->n;
    odn_igemm_block(r1 - r0, g->n, g->k, (const char *)g->a + r0 * g->lda, g->a_unsigned, g->lda, g->za, g->packed,
                    j0, j1, g->c + r0 * g->ldc, g->ldc, scratch);
}

void odn_igemm_run(int64_t m, int64_t n, int64_t k, const void *a, bool a_unsigned, int64_t lda, int32_t za,
                   const int16_t *packed, int32_t *c, int64_t ldc, void *scratch, int scratch_threads) {
    if (m <= 0 || n <= 0 || k <= 0) return;
    igemm_args g = {n, k, lda, ldc, a, a_unsigned, za, packed, c};
    odn_gemm_split(m, MR, (n + NR - 1) / NR, 2.0 * (double)m * (double)n * (double)k,
                   (double)k * (double)n * sizeof(int16_t), scratch_threads, scratch, odn_igemm_scratch_bytes(), part,
                   &g);
}
