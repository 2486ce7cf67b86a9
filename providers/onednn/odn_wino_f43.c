/* Winograd F(4x4, 3x3) float32 convolution for AVX2+FMA (odn_wino_f43.h).
 * oneDNN 2.6 runs 3x3 stride-1 convolutions direct on AVX2 (its Winograd
 * is AVX-512 only), and so does ONNX Runtime's MLAS; F(4x4, 3x3) needs 36
 * multiply-adds per output tile and channel pair where direct needs 144,
 * so even with its transforms it runs 2-3x faster than a direct kernel near
 * FMA peak (Zen3, 64 to 256 channels, 1 and 2 threads).
 *
 * Matrices: Toom-Cook with the points 0, 1, -1, 2, -1/2 and infinity
 * (B^T, G, A^T in the comments of input_1d, filter_transform, output_1d)
 * rather than Lavin & Gray's 0, +-1, +-2: the same work, and 2-3x less
 * float32 error, measured (C = 512, He weights, 14x14: max abs error
 * 2.6e-5 against 6.9e-5; float32 direct 3e-6; five point sets compared
 * in a numpy simulation, this one and 0, 1, -1, 1/2, -2 the best).
 *
 * Work: the output is cut into 4x4 tiles, tiles into blocks of TB (a
 * multiple of 6), and OpenMP threads take (block, output-channel group)
 * items as they come free. Per item, in the thread's scratch:
 *   V[36][TB/6][C/8][6][8]  the input transform B^T d B of the block's tiles
 *                           (6 tiles of a strip next to each other: the GEMM
 *                           broadcasts them in turn, 6 tiles per k);
 *   Mo[36][TB][MC]          the 36 GEMMs V[pos] x U[pos] for a chunk of MC
 *                           of the group's output channels (all of them
 *                           unless U is large), read back by the output
 *                           transform A^T m A, + bias, + y, relu -> y.
 * The GEMM is a 6-tile x 16-channel register tile (12 accumulators) over
 * all of C, so Mo is written once and never re-read by the GEMM; it is
 * our own rather than odn_sgemm's, which would copy each V strip again
 * (odn_sgemm packs A) and cannot read V's 8-channel interleave in place.
 * Measured at 1 thread, the GEMM runs at 90-100 GFLOP/s of 101 peak; the
 * transforms take 15-25% of the time at C = M = 64, 8% at 256.
 *
 * Packed weights: U[36][M/16 panels][C][16] (a last panel of 8 columns when
 * M % 16 == 8, stored [C][8]): a panel is streamed in order by the kernel.
 */
#include "odn_wino_f43.h"

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#include <omp.h>
#define WF_X86 1
#define WF_AVX2 __attribute__((target("avx2,fma")))
#else
#define WF_X86 0
#endif

enum {
    WF_STRIP = 6,   /* tiles in the GEMM's register tile */
    WF_NR = 16,     /* output channels in the GEMM's register tile */
    WF_POS = 36,    /* 6x6 transformed positions */
    WF_TB_MAX = 96, /* tiles in a block at most */
};

/* Scratch of one item (V and Mo) to aim at, in bytes: it stays in the
 * 512 KiB L2 of a Zen3 core (18 tiles for C = M = 64, 6 from C + M = 256).
 * Measured at 1 thread on 64..256 channels, budgets of 200..600 KiB alike,
 * 1000 and 1800 KiB no faster (V, Mo then in L3). */
#define WF_BUDGET (400 * 1024)
#define WF_MC 64                         /* output channels of a chunk of Mo, where U is large */
#define WF_SCRATCH_MAX (2 * 1024 * 1024) /* per thread, the budget the provider gives */
#define WF_BIG_U (512 * 512)             /* C * M from which a position's U is 1 MiB */

/* Tiles per block, tile counts, output-channel groups. */
typedef struct wf_plan {
    int64_t tiles_h, tiles_w, tiles; /* tiles of an image's rows, columns; in all */
    int64_t tb, blocks;              /* tiles per block, blocks */
    int64_t mg, groups;              /* output channels per group, groups */
    int64_t mc;                      /* output channels of Mo at once (a group's chunk) */
    int64_t vpos, mpos;              /* floats from one position's V, Mo to the next */
    size_t item_floats;              /* scratch floats of one thread (V + Mo, rounded to 16) */
} wf_plan;

static bool mul_ok(uint64_t a, uint64_t b, uint64_t *out) {
    if (a != 0 && b > UINT64_MAX / a) return false;
    *out = a * b;
    return true;
}

/* Whether the plan's sizes fit; fills it for `threads`. */
static bool make_plan(const odn_wino_shape *s, int threads, wf_plan *p) {
    if (threads < 1) threads = 1;
    if (s->n <= 0 || s->oh <= 0 || s->ow <= 0 || s->oh > INT32_MAX || s->ow > INT32_MAX) return false;
    p->tiles_h = (s->oh + 3) / 4;
    p->tiles_w = (s->ow + 3) / 4;
    uint64_t per_img, tiles;
    if (!mul_ok((uint64_t)p->tiles_h, (uint64_t)p->tiles_w, &per_img) || !mul_ok(per_img, (uint64_t)s->n, &tiles) ||
        tiles > (uint64_t)INT64_MAX / 8)
        return false;
    p->tiles = (int64_t)tiles;
    if (s->c <= 0 || s->m <= 0 || s->c > INT32_MAX || s->m > INT32_MAX) return false;
    p->mg = s->m;
    p->groups = 1;
    /* Where U is large, Mo a chunk of channels at a time, leaving the
     * scratch to larger blocks; elsewhere all of M (256 x 14 x 14 in 64-
     * channel chunks: 1.37 ms against 1.0, V leaving L1 between chunks). */
    bool big_u = s->c * s->m >= WF_BIG_U;
    p->mc = big_u && s->m > WF_MC ? WF_MC : s->m;
    int64_t strip_bytes = WF_POS * 4 * (s->c + p->mc) * WF_STRIP, per_strip = WF_BUDGET / strip_bytes;
    /* Where one position's U (C x M) exceeds L2 it comes from L3 or DRAM
     * (36 MiB at C = M = 512) for every block: then larger blocks read it
     * fewer times, as large as WF_SCRATCH_MAX allows. 512 x 32 x 32 at 1
     * thread: 6 tiles a block 27.7 ms, 12 tiles 23.6, 24 tiles (64-channel
     * chunks of Mo) 21.2; C = M = 256 gains nothing. */
    if (big_u && per_strip < WF_SCRATCH_MAX / strip_bytes) per_strip = WF_SCRATCH_MAX / strip_bytes;
    if (per_strip < 1) per_strip = 1;
    if (per_strip > WF_TB_MAX / WF_STRIP) per_strip = WF_TB_MAX / WF_STRIP;
    /* blocks of equal strips: 16 tiles in 2 blocks of 12 would compute 24 */
    int64_t strips = (p->tiles + WF_STRIP - 1) / WF_STRIP;
    p->blocks = (strips + per_strip - 1) / per_strip;
    int64_t tb = (strips + p->blocks - 1) / p->blocks * WF_STRIP;
    p->tb = tb;
    p->blocks = (strips + tb / WF_STRIP - 1) / (tb / WF_STRIP);
    /* Too few items for two per thread (taken as threads come free, so a
     * thread the VM's host slows does less): split M, each group repeating
     * the block's input transform (a few percent of its GEMM). 256 x 14 x
     * 14 at 2 threads: 3 blocks 0.66 ms, 6 items of 128 channels 0.52. */
    int64_t want = threads > 1 ? 2 * (int64_t)threads : 1;
    while (p->blocks * p->groups < want && p->mg % 32 == 0) p->mg /= 2, p->groups *= 2;
    /* A position's V and Mo 64 bytes more apart than they fill: at
     * multiples of 4 KiB (6 tiles x 512 channels) the 36 stores of a tile
     * would all fall in one L1 set. */
    uint64_t vpos, mpos, floats;
    if (p->mc > p->mg) p->mc = p->mg;
    if (!mul_ok((uint64_t)tb, (uint64_t)s->c, &vpos) || !mul_ok((uint64_t)tb, (uint64_t)p->mc, &mpos) ||
        vpos > UINT64_MAX / 4 || mpos > UINT64_MAX / 4 || !mul_ok(vpos + mpos + 32, WF_POS, &floats) ||
        floats > SIZE_MAX / 4 / (uint64_t)threads - 64)
        return false;
    p->vpos = (int64_t)vpos + 16;
    p->mpos = (int64_t)mpos + 16;
    p->item_floats = (size_t)((floats + 15) / 16 * 16);
    return true;
}

size_t odn_wino_f43_weights_floats(int64_t c, int64_t m) {
    uint64_t cm, all;
    if (c <= 0 || m <= 0 || !mul_ok((uint64_t)c, (uint64_t)m, &cm) || !mul_ok(cm, WF_POS, &all) ||
        all > SIZE_MAX / sizeof(float))
        return 0;
    return (size_t)all;
}

static bool cpu_ok(void) {
#if WF_X86
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return false;
#endif
}

bool odn_wino_f43_supported(const odn_wino_shape *s) {
    if (!s || s->n <= 0 || s->c <= 0 || s->h <= 0 || s->w <= 0 || s->m <= 0 || s->oh <= 0 || s->ow <= 0) return false;
    if (s->c % 8 || s->m % 8 || s->pt < 0 || s->pt > 2 || s->pl < 0 || s->pl > 2) return false;
    if (s->h > INT32_MAX || s->w > INT32_MAX || s->c > INT32_MAX || s->m > INT32_MAX || s->n > INT32_MAX) return false;
    int64_t pb = s->oh - s->h - s->pt + 2, pr = s->ow - s->w - s->pl + 2;
    if (pb < 0 || pb > 2 || pr < 0 || pr > 2) return false;
    wf_plan p;
    if (!odn_wino_f43_weights_floats(s->c, s->m) || !make_plan(s, 64, &p)) return false;
    return cpu_ok();
}

size_t odn_wino_f43_scratch_bytes(const odn_wino_shape *s, int threads) {
    wf_plan p;
    if (threads < 1) threads = 1;
    if (!make_plan(s, threads, &p)) return 0;
    return p.item_floats * sizeof(float) * (size_t)threads;
}

/* U = G g G^T for one 3x3 filter, in double (the weights are transformed
 * once; rounding once at the end keeps U as exact as float allows).
 * G = [1 0 0; -1/3 -1/3 -1/3; 1/3 -1/3 1/3; 1/15 2/15 4/15;
 *      -16/15 8/15 -4/15; 0 0 1]. */
static const double G[6][3] = {{1, 0, 0},
                               {-1.0 / 3, -1.0 / 3, -1.0 / 3},
                               {1.0 / 3, -1.0 / 3, 1.0 / 3},
                               {1.0 / 15, 2.0 / 15, 4.0 / 15},
                               {-16.0 / 15, 8.0 / 15, -4.0 / 15},
                               {0, 0, 1}};

static void filter_transform(const float *g, double u[6][6]) {
    double t[6][3];
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 3; j++) t[i][j] = G[i][0] * g[0 * 3 + j] + G[i][1] * g[1 * 3 + j] + G[i][2] * g[2 * 3 + j];
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) u[i][j] = t[i][0] * G[j][0] + t[i][1] * G[j][1] + t[i][2] * G[j][2];
}

/* Where U[pos][c][j] lies in the packed weights: panels of 16 columns,
 * the last one 8 wide when M % 16 == 8. */
static size_t packed_index(int64_t c_all, int64_t m_all, int pos, int64_t c, int64_t j) {
    int64_t panel = j / WF_NR, width = m_all - panel * WF_NR < WF_NR ? m_all - panel * WF_NR : WF_NR;
    return (size_t)(pos * c_all * m_all + panel * WF_NR * c_all + c * width + j % WF_NR);
}

#if WF_X86
/* filter_transform of the filters of columns j0 .. j0 + width (a multiple
 * of 4) at input channel k, four at a time in double vectors, each U row's
 * four columns stored together: at one filter at a time (scalar, 36
 * scattered stores) ResNet-50's 3x3 layers took 250 ms of its session
 * creation. */
WF_AVX2 static void pack_row(const float *w, int64_t c, int64_t m, int64_t k, int64_t j0, int64_t width,
                             float *packed) {
    for (int64_t q = j0; q < j0 + width; q += 4) {
        __m256d g[9], t[6][3];
        const float *f0 = w + (q * c + k) * 9, *f1 = f0 + c * 9, *f2 = f1 + c * 9, *f3 = f2 + c * 9;
        for (int e = 0; e < 9; e++) g[e] = _mm256_setr_pd(f0[e], f1[e], f2[e], f3[e]);
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 3; j++)
                t[i][j] = _mm256_fmadd_pd(
                    _mm256_set1_pd(G[i][2]), g[6 + j],
                    _mm256_fmadd_pd(_mm256_set1_pd(G[i][1]), g[3 + j], _mm256_mul_pd(_mm256_set1_pd(G[i][0]), g[j])));
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++) {
                __m256d u = _mm256_fmadd_pd(
                    t[i][2], _mm256_set1_pd(G[j][2]),
                    _mm256_fmadd_pd(t[i][1], _mm256_set1_pd(G[j][1]), _mm256_mul_pd(t[i][0], _mm256_set1_pd(G[j][0]))));
                _mm_storeu_ps(packed + packed_index(c, m, i * 6 + j, k, q), _mm256_cvtpd_ps(u));
            }
    }
}
#endif

/* Panel by panel, a row of 16 columns at a time: the 36 rows a filter row
 * lands in are each written whole while in cache (filter by filter, every
 * row was reloaded 16 times from memory). */
void odn_wino_f43_pack_weights(const float *w, int64_t c, int64_t m, float *packed) {
#if WF_X86
    if (cpu_ok() && m % 4 == 0) {
        for (int64_t j0 = 0; j0 < m; j0 += WF_NR)
            for (int64_t k = 0; k < c; k++) pack_row(w, c, m, k, j0, m - j0 < WF_NR ? m - j0 : WF_NR, packed);
        return;
    }
#endif
    for (int64_t j0 = 0; j0 < m; j0 += WF_NR) {
        int64_t j1 = m - j0 < WF_NR ? m : j0 + WF_NR;
        for (int64_t k = 0; k < c; k++)
            for (int64_t j = j0; j < j1; j++) {
                double u[6][6];
                filter_transform(w + (j * c + k) * 9, u);
                for (int pos = 0; pos < WF_POS; pos++)
                    packed[packed_index(c, m, pos, k, j)] = (float)u[pos / 6][pos % 6];
            }
    }
}

#if WF_X86

/* B^T d for 6 values: B^T = [1 3/2 -2 -3/2 1 0; 0 -1 -5/2 -1/2 1 0;
 * 0 1 1/2 -5/2 1 0; 0 -1/2 -1 1/2 1 0; 0 2 -1 -2 1 0; 0 1 3/2 -2 -3/2 1]
 * (points 0, 1, -1, 2, -1/2 and infinity), sharing d4 - d2 and d3 - d1. */
WF_AVX2 static inline void input_1d(const __m256 d[6], __m256 t[6]) {
    const __m256 half = _mm256_set1_ps(0.5f), two = _mm256_set1_ps(2.0f);
    const __m256 three_half = _mm256_set1_ps(1.5f), five_half = _mm256_set1_ps(2.5f);
    __m256 c = _mm256_sub_ps(d[4], d[2]), e = _mm256_sub_ps(d[3], d[1]);
    t[0] = _mm256_fnmadd_ps(three_half, e, _mm256_fnmadd_ps(two, d[2], _mm256_add_ps(d[0], d[4])));
    t[1] = _mm256_fnmadd_ps(half, d[3], _mm256_fnmadd_ps(five_half, d[2], _mm256_sub_ps(d[4], d[1])));
    t[2] = _mm256_fnmadd_ps(five_half, d[3], _mm256_fmadd_ps(half, d[2], _mm256_add_ps(d[4], d[1])));
    t[3] = _mm256_fmadd_ps(half, e, c);
    t[4] = _mm256_fnmadd_ps(two, e, c);
    t[5] = _mm256_fnmadd_ps(three_half, c, _mm256_fnmadd_ps(two, d[3], _mm256_add_ps(d[1], d[5])));
}

/* A^T m for 6 values: A^T = [1 1 1 1 1 0; 0 1 -1 2 -1/2 0;
 * 0 1 1 4 1/4 0; 0 1 -1 8 -1/8 1]. */
WF_AVX2 static inline void output_1d(const __m256 m[6], __m256 o[4]) {
    __m256 s12 = _mm256_add_ps(m[1], m[2]), d12 = _mm256_sub_ps(m[1], m[2]);
    o[0] = _mm256_add_ps(_mm256_add_ps(m[0], s12), _mm256_add_ps(m[3], m[4]));
    o[1] = _mm256_fnmadd_ps(_mm256_set1_ps(0.5f), m[4], _mm256_fmadd_ps(_mm256_set1_ps(2.0f), m[3], d12));
    o[2] = _mm256_fmadd_ps(_mm256_set1_ps(0.25f), m[4], _mm256_fmadd_ps(_mm256_set1_ps(4.0f), m[3], s12));
    o[3] = _mm256_fnmadd_ps(_mm256_set1_ps(0.125f), m[4],
                            _mm256_fmadd_ps(_mm256_set1_ps(8.0f), m[3], _mm256_add_ps(d12, m[5])));
}

typedef struct wf_run {
    const odn_wino_shape *s;
    const wf_plan *p;
    const float *x, *packed, *bias;
    const odn_wino_strides *xs, *ys;
    float *y;
    bool accumulate, relu;
} wf_run;

/* Image, tile row and tile column of tile `g`. */
static void tile_at(const wf_plan *p, int64_t g, int64_t *b, int64_t *ty, int64_t *tx) {
    int64_t per = p->tiles_h * p->tiles_w;
    *b = g / per;
    *ty = g % per / p->tiles_w;
    *tx = g % p->tiles_w;
}

/* The 6x6 input tile of 8 channels at rows iy0.., columns ix0.., zeros
 * outside the image (padding, and past the bottom/right of the last
 * partial tiles: those outputs are dropped). */
WF_AVX2 static void load_tile(const wf_run *r, const float *xc, int64_t iy0, int64_t ix0, __m256 d[6][6]) {
    const odn_wino_shape *s = r->s;
    const odn_wino_strides *xs = r->xs;
    if (iy0 >= 0 && ix0 >= 0 && iy0 + 6 <= s->h && ix0 + 6 <= s->w) {
        const float *p0 = xc + iy0 * xs->row + ix0 * xs->pix;
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++) d[i][j] = _mm256_loadu_ps(p0 + i * xs->row + j * xs->pix);
        return;
    }
    for (int i = 0; i < 6; i++) {
        int64_t iy = iy0 + i;
        for (int j = 0; j < 6; j++) {
            int64_t ix = ix0 + j;
            bool in = iy >= 0 && iy < s->h && ix >= 0 && ix < s->w;
            d[i][j] = in ? _mm256_loadu_ps(xc + iy * xs->row + ix * xs->pix) : _mm256_setzero_ps();
        }
    }
}

/* B^T d B of the 6x6 tile d, each of the 36 results to v + pos * vpos. */
WF_AVX2 static void input_tile(__m256 d[6][6], float *v, int64_t vpos) {
    __m256 t[6][6], col[6], out[6];
    for (int i = 0; i < 6; i++) input_1d(d[i], t[i]); /* rows: d B */
    for (int j = 0; j < 6; j++) {
        for (int i = 0; i < 6; i++) col[i] = t[i][j];
        input_1d(col, out); /* columns: B^T (d B) */
        for (int i = 0; i < 6; i++) _mm256_store_ps(v + (i * 6 + j) * vpos, out[i]);
    }
}

/* V of the block's tiles [g0, g0 + tb) that are in the output (the GEMM
 * reads no others). Channel block outer, tiles inner: in nChw8c each
 * channel block is a plane of its own, and the tiles of a block walk along
 * it, rows the prefetchers follow; tiles outer read 6 rows of every plane
 * per tile (nChw8c 64 x 160 x 160 at 1 thread: 8.9-9.7 ms tiles outer,
 * 7.5-7.9 channel blocks outer, as fast as NHWC; 128 x 128 x 128: 18.5 ->
 * 16.4). */
WF_AVX2 static void input_block(const wf_run *r, int64_t g0, float *v) {
    const odn_wino_shape *s = r->s;
    const wf_plan *p = r->p;
    int64_t cbs = s->c / 8, vpos = p->vpos, live = p->tiles - g0 < p->tb ? p->tiles - g0 : p->tb;
    for (int64_t cb = 0; cb < cbs; cb++) {
        for (int64_t t = 0; t < live; t++) {
            float *vt = v + t / WF_STRIP * WF_STRIP * s->c + t % WF_STRIP * 8 + cb * 48;
            int64_t b, ty, tx;
            tile_at(p, g0 + t, &b, &ty, &tx);
            __m256 d[6][6];
            load_tile(r, r->x + b * r->xs->img + cb * r->xs->cb, ty * 4 - s->pt, tx * 4 - s->pl, d);
            input_tile(d, vt, vpos);
        }
    }
}

/* Mo[R][W] = V strip (R of its 6 tiles x C) x U panel (C x W), W 16 or
 * 8 and R 1..6 (constants where inlined): R broadcasts and W/8 loads per
 * k. A block's last strip is often partial (16 tiles of a 14x14 map: 3
 * strips, 4 tiles in the last), and a 6-tile kernel there computed zeros.
 * The accumulators are named one by one: an array of them is not kept in
 * registers. */
#define ACC(t) __m256 lo##t = _mm256_setzero_ps(), hi##t = _mm256_setzero_ps();
#define FMA(t)                                                                                                         \
    if (R > t) {                                                                                                       \
        __m256 bc = _mm256_broadcast_ss(vs + t * 8 + cc);                                                              \
        lo##t = _mm256_fmadd_ps(bc, u0, lo##t);                                                                        \
        if (W == 16) hi##t = _mm256_fmadd_ps(bc, u1, hi##t);                                                           \
    }
#define STORE(t)                                                                                                       \
    if (R > t) {                                                                                                       \
        _mm256_store_ps(mo + t * ldm, lo##t);                                                                          \
        if (W == 16) _mm256_store_ps(mo + t * ldm + 8, hi##t);                                                         \
    }
WF_AVX2 __attribute__((always_inline)) static inline void
strip_panel(const int W, const int R, const float *vs, const float *u, int64_t cbs, float *mo, int64_t ldm) {
    ACC(0) ACC(1) ACC(2) ACC(3) ACC(4) ACC(5);
    for (int64_t cb = 0; cb < cbs; cb++, vs += 48) {
        for (int cc = 0; cc < 8; cc++, u += W) {
            __m256 u0 = _mm256_load_ps(u), u1 = W == 16 ? _mm256_load_ps(u + 8) : u0;
            FMA(0) FMA(1) FMA(2) FMA(3) FMA(4) FMA(5)
        }
    }
    STORE(0) STORE(1) STORE(2) STORE(3) STORE(4) STORE(5)
}
#undef ACC
#undef FMA
#undef STORE

typedef void (*strip_fn)(const float *vs, const float *u, int64_t cbs, float *mo, int64_t ldm);
#define STRIP_OF(w, r)                                                                                                 \
    WF_AVX2 static void strip##w##_##r(const float *vs, const float *u, int64_t cbs, float *mo, int64_t ldm) {         \
        strip_panel(w, r, vs, u, cbs, mo, ldm);                                                                        \
    }
STRIP_OF(16, 1)
STRIP_OF(16, 2) STRIP_OF(16, 3) STRIP_OF(16, 4) STRIP_OF(16, 5) STRIP_OF(16, 6) STRIP_OF(8, 1) STRIP_OF(8, 2)
    STRIP_OF(8, 3) STRIP_OF(8, 4) STRIP_OF(8, 5) STRIP_OF(8, 6)
#undef STRIP_OF
    /* [full panel][tiles - 1] */
    static const strip_fn strip_kernels[2][WF_STRIP] = {
        {strip8_1, strip8_2, strip8_3, strip8_4, strip8_5, strip8_6},
        {strip16_1, strip16_2, strip16_3, strip16_4, strip16_5, strip16_6}};

/* Mo[pos] for the channels [m0, m0 + width): panel by panel (a panel,
 * C x 16, stays in L1 while every strip of V passes it). */
WF_AVX2 static void gemm_block(const wf_run *r, const float *v, int64_t g0, int64_t m0, int64_t width, float *mo) {
    const odn_wino_shape *s = r->s;
    const wf_plan *p = r->p;
    int64_t live = p->tiles - g0 < p->tb ? p->tiles - g0 : p->tb; /* tiles of the block in the output */
    int64_t strips = (live + WF_STRIP - 1) / WF_STRIP, vpos = p->vpos;
    for (int pos = 0; pos < WF_POS; pos++) {
        const float *vp = v + pos * vpos;
        float *mp = mo + pos * p->mpos;
        for (int64_t j = 0; j < width; j += WF_NR) {
            size_t at = packed_index(s->c, s->m, pos, 0, m0 + j);
            const float *u = r->packed + at;
            bool full = s->m - (m0 + j) >= WF_NR;
            for (int64_t st = 0; st < strips; st++) {
                const float *vs = vp + st * WF_STRIP * s->c;
                float *ms = mp + st * WF_STRIP * p->mc + j;
                int64_t rows = live - st * WF_STRIP < WF_STRIP ? live - st * WF_STRIP : WF_STRIP;
                strip_kernels[full][rows - 1](vs, u, s->c / 8, ms, p->mc);
            }
        }
    }
}

/* y at (b, oy0.., ox0.., channels cb*8..) = A^T m A (+ bias, + y, relu),
 * the rows and columns past oh, ow dropped. */
WF_AVX2 static void output_tile(const wf_run *r, const float *mt, int64_t ldpos, int64_t b, int64_t oy0, int64_t ox0,
                                int64_t cb) {
    const odn_wino_shape *s = r->s;
    const odn_wino_strides *ys = r->ys;
    __m256 t[6][4], m[6], col[6], o[4];
    for (int i = 0; i < 6; i++) {
        for (int j = 0; j < 6; j++) m[j] = _mm256_load_ps(mt + (i * 6 + j) * ldpos);
        output_1d(m, t[i]); /* rows: m A */
    }
    __m256 bias = r->bias ? _mm256_loadu_ps(r->bias + cb * 8) : _mm256_setzero_ps(), zero = _mm256_setzero_ps();
    int rows = s->oh - oy0 < 4 ? (int)(s->oh - oy0) : 4, cols = s->ow - ox0 < 4 ? (int)(s->ow - ox0) : 4;
    float *yt = r->y + b * ys->img + cb * ys->cb + oy0 * ys->row + ox0 * ys->pix;
    for (int j = 0; j < cols; j++) {
        for (int i = 0; i < 6; i++) col[i] = t[i][j];
        output_1d(col, o); /* columns: A^T (m A) */
        for (int i = 0; i < rows; i++) {
            float *yp = yt + i * ys->row + j * ys->pix;
            __m256 v = _mm256_add_ps(o[i], bias);
            if (r->accumulate) v = _mm256_add_ps(v, _mm256_loadu_ps(yp));
            if (r->relu) v = _mm256_max_ps(v, zero);
            _mm256_storeu_ps(yp, v);
        }
    }
}

WF_AVX2 static void output_block(const wf_run *r, int64_t g0, int64_t m0, int64_t width, const float *mo) {
    const wf_plan *p = r->p;
    int64_t ldpos = p->mpos;
    for (int64_t j = 0; j < width; j += 8) /* channel blocks outer, as in input_block */
        for (int64_t t = 0; t < p->tb && g0 + t < p->tiles; t++) {
            int64_t b, ty, tx;
            tile_at(p, g0 + t, &b, &ty, &tx);
            output_tile(r, mo + t * p->mc + j, ldpos, b, ty * 4, tx * 4, (m0 + j) / 8);
        }
}

WF_AVX2 static void run_item(const wf_run *r, int64_t item, float *scratch) {
    const wf_plan *p = r->p;
    int64_t blk = item / p->groups, m0 = item % p->groups * p->mg, g0 = blk * p->tb;
    float *v = scratch, *mo = scratch + (size_t)WF_POS * (size_t)p->vpos;
    input_block(r, g0, v);
    /* Mo a chunk of channels at a time: V (all of C) is what the GEMM
     * rereads, Mo only what the output transform reads once. */
    for (int64_t j = 0; j < p->mg; j += p->mc) {
        int64_t width = p->mg - j < p->mc ? p->mg - j : p->mc;
        gemm_block(r, v, g0, m0 + j, width, mo);
        output_block(r, g0, m0 + j, width, mo);
    }
}

void odn_wino_f43_run(const odn_wino_shape *s, const float *x, const odn_wino_strides *xs, const float *packed,
                      const float *bias, float *y, const odn_wino_strides *ys, bool accumulate, bool relu,
                      void *scratch, int threads) {
    wf_plan p;
    if (threads < 1) threads = 1;
    if (!make_plan(s, threads, &p)) return;
    wf_run r = {s, &p, x, packed, bias, xs, ys, y, accumulate, relu};
    int64_t items = p.blocks * p.groups;
    if (threads > items) threads = (int)items;
    if (threads <= 1) {
        for (int64_t it = 0; it < items; it++) run_item(&r, it, scratch);
        return;
    }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (int64_t it = 0; it < items; it++)
        run_item(&r, it, (float *)scratch + (size_t)omp_get_thread_num() * p.item_floats);
}

#else /* not x86: odn_wino_f43_supported says false, so this is never called */

void odn_wino_f43_run(const odn_wino_shape *s, const float *x, const odn_wino_strides *xs, const float *packed,
                      const float *bias, float *y, const odn_wino_strides *ys, bool accumulate, bool relu,
                      void *scratch, int threads) {
    (void)s, (void)x, (void)xs, (void)packed, (void)bias, (void)y, (void)ys, (void)accumulate, (void)relu;
    (void)scratch, (void)threads;
}

#endif
