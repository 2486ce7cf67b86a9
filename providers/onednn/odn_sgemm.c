/* The packed-weights float32 GEMM of odn_sgemm.h, blocked as GotoBLAS is.
 *
 * Layout: K is cut into slices of about KC = 256 rows and N into panels of
 * NR = 16 columns; the packed matrix holds slice after slice, each slice its
 * panels one after another, each panel its kc rows of 16 floats (columns
 * past N are zeros). The kernel streams a panel with two loads per k, and a
 * sweep over a slice's panels reads memory in order, which the hardware
 * prefetchers follow (the weights of a large model come from DRAM).
 *
 * Blocking: M in blocks of up to MC = 240 rows (the A block of a slice,
 * 240 KiB, stays in L2).
 * Each thread copies the A block of a (row block, K slice) into 6-row
 * strips (k-major, 6 floats per k: one broadcast stream instead of six
 * strided ones), which stay in L2 while it sweeps its share of the panels;
 * a panel's K slice (16 KiB) stays in L1 across the block's 6-row tiles.
 * C tiles are accumulated slice by slice. Threads split the panels (large
 * B), or the rows (B small enough for each thread's L2). */
#include "odn_sgemm.h"

#include <immintrin.h>
#include <omp.h>
#include <string.h>

#define NR 16
#define MR 6
#ifndef KC
#define KC 256
#endif
#define MC 240
/* panels a thread sweeps at most for A to be read in place (N <= 256 on
 * one thread): measured on Zen3, 197x192x192 88 -> 95 GFLOP/s and
 * 197x197x64 74 -> 96, no change past it */
#ifndef DIRECT_PANELS
#define DIRECT_PANELS 16
#endif

bool odn_sgemm_supported(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

/* K slices of equal size, at most KC rows each. */
static int64_t slice_rows(int64_t k) {
    int64_t slices = (k + KC - 1) / KC;
    return (k + slices - 1) / slices;
}

size_t odn_sgemm_scratch_floats(int threads) { return (size_t)(threads > 0 ? threads : 1) * MC * KC; }

size_t odn_sgemm_packed_floats(int64_t k, int64_t n) {
    if (k <= 0 || n <= 0) return 0;
    uint64_t panels = ((uint64_t)n + NR - 1) / NR;
    if ((uint64_t)k > SIZE_MAX / NR / panels / sizeof(float)) return 0;
    return (size_t)(panels * NR * (uint64_t)k);
}

void odn_sgemm_pack(const float *b, int64_t k, int64_t n, int64_t stride_k, int64_t stride_n, float *packed) {
    int64_t panels = (n + NR - 1) / NR, kc_even = slice_rows(k);
    for (int64_t k0 = 0; k0 < k; k0 += kc_even) {
        int64_t kc = k - k0 < kc_even ? k - k0 : kc_even;
        for (int64_t pnl = 0; pnl < panels; pnl++) {
            float *dst = packed + k0 * panels * NR + pnl * kc * NR;
            int64_t j0 = pnl * NR, cols = n - j0 < NR ? n - j0 : NR;
            for (int64_t kk = 0; kk < kc; kk++) {
                const float *src = b + (k0 + kk) * stride_k + j0 * stride_n;
                float *row = dst + kk * NR;
                for (int64_t j = 0; j < cols; j++) row[j] = src[j * stride_n];
                for (int64_t j = cols; j < NR; j++) row[j] = 0.0f;
            }
        }
    }
}

/* Lane masks for the last, partial panel: lane l is on when l < cols. */
__attribute__((target("avx2"))) static inline __m256i lane_mask(int cols) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(cols), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* One tile of R (1..MR, a constant where it is inlined) rows by 16
 * columns over kc steps. `first`: the first K slice, which writes C (plus
 * bias) instead of adding to it. The twelve accumulators are named one by
 * one: an array of them is not kept in registers. Rows past R are not
 * computed: a recurrence's step products have a row per batch row (1 to
 * 4 typically), and a 6-row tile there spent most of its FMAs on copies of
 * the last row. `ap` is the tile's strip of packed A (zeros past R). */
#define ROW(r) __m256 lo##r = _mm256_setzero_ps(), hi##r = _mm256_setzero_ps();

#define FMA(r)                                                                                                         \
    if (R > r) {                                                                                                       \
        __m256 av = _mm256_broadcast_ss(ap + r * arow + kk * astep);                                                   \
        lo##r = _mm256_fmadd_ps(av, b0, lo##r);                                                                        \
        hi##r = _mm256_fmadd_ps(av, b1, hi##r);                                                                        \
    }
__attribute__((target("avx2,fma"), always_inline)) static inline void
tile_rows(const int R, int64_t kc, const float *ap, int64_t arow, int64_t astep, const float *bp, float *c, int64_t ldc,
          int cols, bool first, const float *bias) {
    ROW(0) ROW(1) ROW(2) ROW(3) ROW(4) ROW(5) for (int64_t kk = 0; kk < kc; kk++) {
        __m256 b0 = _mm256_loadu_ps(bp + kk * NR), b1 = _mm256_loadu_ps(bp + kk * NR + 8);
        FMA(0) FMA(1) FMA(2) FMA(3) FMA(4) FMA(5)
    }
    __m256 acc[MR][2] = {{lo0, hi0}, {lo1, hi1}, {lo2, hi2}, {lo3, hi3}, {lo4, hi4}, {lo5, hi5}};
    __m256i m0 = lane_mask(cols), m1 = lane_mask(cols - 8);
    __m256 add0 = _mm256_setzero_ps(), add1 = _mm256_setzero_ps();
    if (first && bias) {
        add0 = _mm256_maskload_ps(bias, m0);
        add1 = _mm256_maskload_ps(bias + 8, m1);
    }
    for (int r = 0; r < R; r++) {
        float *cr = c + r * ldc;
        if (cols == NR) {
            if (!first) {
                add0 = _mm256_loadu_ps(cr);
                add1 = _mm256_loadu_ps(cr + 8);
            }
            _mm256_storeu_ps(cr, _mm256_add_ps(acc[r][0], add0));
            _mm256_storeu_ps(cr + 8, _mm256_add_ps(acc[r][1], add1));
        } else {
            if (!first) {
                add0 = _mm256_maskload_ps(cr, m0);
                add1 = _mm256_maskload_ps(cr + 8, m1);
            }
            _mm256_maskstore_ps(cr, m0, _mm256_add_ps(acc[r][0], add0));
            _mm256_maskstore_ps(cr + 8, m1, _mm256_add_ps(acc[r][1], add1));
        }
    }
}
#undef ROW
#undef FMA

#define TILE_OF(r)                                                                                                     \
    __attribute__((target("avx2,fma"))) static void tile##r(int64_t kc, const float *ap, int64_t arow, int64_t astep,  \
                                                            const float *bp, float *c, int64_t ldc, int cols,          \
                                                            bool first, const float *bias) {                           \
        tile_rows(r, kc, ap, arow, astep, bp, c, ldc, cols, first, bias);                                              \
    }
TILE_OF(1)
TILE_OF(2) TILE_OF(3) TILE_OF(4) TILE_OF(5) TILE_OF(6)
#undef TILE_OF

    typedef void (*tile_fn)(int64_t, const float *, int64_t, int64_t, const float *, float *, int64_t, int, bool,
                            const float *);
static const tile_fn tiles_by_rows[MR + 1] = {NULL, tile1, tile2, tile3, tile4, tile5, tile6};

static void tile(int rows, int64_t kc, const float *ap, int64_t arow, int64_t astep, const float *bp, float *c,
                 int64_t ldc, int cols, bool first, const float *bias) {
    tiles_by_rows[rows](kc, ap, arow, astep, bp, c, ldc, cols, first, bias);
}

/* Rows [i0, i1) of A, columns [k0, k0 + kc), into 6-row strips. */
static void pack_a(const float *a, int64_t lda, int64_t i0, int64_t i1, int64_t k0, int64_t kc, float *dst) {
    for (int64_t i = i0; i < i1; i += MR, dst += kc * MR) {
        int rows = i1 - i < MR ? (int)(i1 - i) : MR;
        for (int r = 0; r < MR; r++) {
            if (r < rows) {
                const float *src = a + (i + r) * lda + k0;
                for (int64_t kk = 0; kk < kc; kk++) dst[kk * MR + r] = src[kk];
            } else
                for (int64_t kk = 0; kk < kc; kk++) dst[kk * MR + r] = 0.0f;
        }
    }
}

typedef struct gemm_shape {
    int64_t m, n, k, lda, ldc;
    const float *a, *packed, *bias;
    float *c;
} gemm_shape;

/* Row block [i0, i1) times panels [p0, p1), over every K slice; `abuf`
 * holds MC x KC floats. */
static void block(const gemm_shape *g, int64_t i0, int64_t i1, int64_t p0, int64_t p1, int64_t kc_even, float *abuf) {
    int64_t panels = (g->n + NR - 1) / NR;
    for (int64_t k0 = 0; k0 < g->k; k0 += kc_even) {
        int64_t kc = g->k - k0 < kc_even ? g->k - k0 : kc_even;
        /* Sweeping few panels, the copy of A costs more than it saves
         * (pack_a's interleave is scalar): the tiles then read A's rows in
         * place, six streams from L1/L2. Over many panels the copy wins. */
        bool direct = p1 - p0 <= DIRECT_PANELS;
        if (!direct) pack_a(g->a, g->lda, i0, i1, k0, kc, abuf);
        for (int64_t pnl = p0; pnl < p1; pnl++) {
            int64_t j0 = pnl * NR;
            int cols = (int)(g->n - j0 < NR ? g->n - j0 : NR);
            const float *bp = g->packed + k0 * panels * NR + pnl * kc * NR;
            const float *bias = g->bias ? g->bias + j0 : NULL;
            const float *ap = abuf;
            for (int64_t i = i0; i < i1; i += MR, ap += kc * MR) {
                int rows = i1 - i < MR ? (int)(i1 - i) : MR;
                float *ct = g->c + i * g->ldc + j0;
                if (direct) tile(rows, kc, g->a + i * g->lda + k0, g->lda, 1, bp, ct, g->ldc, cols, k0 == 0, bias);
                else tile(rows, kc, ap, 1, MR, bp, ct, g->ldc, cols, k0 == 0, bias);
            }
        }
    }
}

void odn_sgemm_run(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *packed, const float *bias,
                   float *c, int64_t ldc, float *scratch, int scratch_threads) {
    if (m <= 0 || n <= 0) return;
    if (k <= 0) { /* an empty sum: C is the bias, or zeros */
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) c[i * ldc + j] = bias ? bias[j] : 0.0f;
        return;
    }
    gemm_shape g = {m, n, k, lda, ldc, a, packed, bias, c};
    int64_t panels = (n + NR - 1) / NR, kc_even = slice_rows(k);
    int threads = omp_get_max_threads();
    if (threads > scratch_threads) threads = scratch_threads;
    double flops = 2.0 * (double)m * (double)n * (double)k;
    if (threads < 1 || flops < 2e6) threads = 1;
    /* Threads share out the panels when B is too large for each to read
     * all of it from L2, else the rows: then no thread copies A rows another
     * one also copies (with 192 columns that copy is a fifth of the work). */
    int64_t tiles = (m + MR - 1) / MR;
    bool by_panels = (double)k * (double)n * sizeof(float) > 256.0 * 1024 || tiles < 2 * (int64_t)threads;
    if (threads == 1) {
        for (int64_t i0 = 0; i0 < m; i0 += MC) block(&g, i0, i0 + MC < m ? i0 + MC : m, 0, panels, kc_even, scratch);
        return;
    }
    /* Several chunks per thread, taken as threads come free: a static half
     * each made every parallel GEMM wait for the slower core, and on a VM
     * that is often one the host lent elsewhere for a moment (bert_base at
     * 2 threads: runs of 133 to 211 ms). A chunk of panels sweeps at most
     * DIRECT_PANELS of them, so it reads A in place and copies nothing. */
    int64_t row_blocks = (m + MC - 1) / MC, chunk, chunks;
    if (by_panels) {
        chunk = (panels + 4 * threads - 1) / (4 * threads);
        chunk = chunk < 1 ? 1 : chunk > DIRECT_PANELS ? DIRECT_PANELS : chunk;
        chunks = (panels + chunk - 1) / chunk;
    } else {
        chunk = (tiles + 4 * threads - 1) / (4 * threads);
        chunk = chunk < 1 ? 1 : chunk;
        chunks = (tiles + chunk - 1) / chunk;
        row_blocks = 1;
    }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (int64_t item = 0; item < row_blocks * chunks; item++) {
        float *abuf = scratch + (int64_t)omp_get_thread_num() * MC * KC;
        int64_t c = item % chunks;
        if (by_panels) {
            int64_t i0 = item / chunks * MC, p0 = c * chunk, p1 = p0 + chunk < panels ? p0 + chunk : panels;
            block(&g, i0, i0 + MC < m ? i0 + MC : m, p0, p1, kc_even, abuf);
        } else {
            int64_t r0 = c * chunk * MR, r1 = (c + 1) * chunk * MR < m ? (c + 1) * chunk * MR : m;
            for (int64_t i0 = r0; i0 < r1; i0 += MC)
                block(&g, i0, i0 + MC < r1 ? i0 + MC : r1, 0, panels, kc_even, abuf);
        }
    }
}
