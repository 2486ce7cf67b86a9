/* QLinearGlobalAveragePool and the whole-image QLinearAveragePool: integer sums, then the reference's scaling (odn_qop.c has the formulas and the claim checks). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "odn_ops.h"
#include "odn_qop.h"

#if ODN_QOP_X86
#include <immintrin.h>
#endif

/* --- QLinearGlobalAveragePool (and the whole-image QLinearAveragePool) --- */

typedef struct qgap {
    int32_t type;
    bool channels_last;
    int64_t blocks, channels, image;
    odn_qop_param p[4]; /* xs, zx, ys, zy */
    uint32_t *acc;      /* channels sums, channels_last */
} qgap;

/* Sum of n bytes (as uint8, or int8 when s8), exact in 64 bits. */
static int64_t sum_bytes_c(const uint8_t *x, int64_t n, bool s8) {
    int64_t s = 0;
    for (int64_t i = 0; i < n; i++) s += s8 ? (int64_t)(int8_t)x[i] : (int64_t)x[i];
    return s;
}

#if ODN_QOP_X86
ODN_QOP_AVX2 static int64_t sum_bytes_avx2(const uint8_t *x, int64_t n, bool s8) {
    /* int8 summed as uint8 x ^ 0x80 = x + 128 */
    const __m256i flip = _mm256_set1_epi8(s8 ? (char)0x80 : 0), zero = _mm256_setzero_si256();
    __m256i acc = zero;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        acc = _mm256_add_epi64(
            acc, _mm256_sad_epu8(_mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(x + i)), flip), zero));
    __m128i h = _mm_add_epi64(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
    int64_t s = _mm_cvtsi128_si64(h) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(h, h));
    if (s8) s -= 128 * i;
    return s + sum_bytes_c(x + i, n - i, s8);
}
#endif

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define QOP_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define QOP_CLONES
#endif

/* acc[ch] += x[k * channels + ch] over k < image, wrapping in 32 bits as
 * the int32 result does. */
QOP_CLONES static void sum_rows(const uint8_t *x, int64_t image, int64_t channels, bool s8, uint32_t *acc) {
    for (int64_t k = 0; k < image; k++) {
        const uint8_t *row = x + k * channels;
        if (s8)
            for (int64_t ch = 0; ch < channels; ch++) acc[ch] += (uint32_t)(int32_t)(int8_t)row[ch];
        else
            for (int64_t ch = 0; ch < channels; ch++) acc[ch] += (uint32_t)row[ch];
    }
}

static tsr_status *run_gap(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const qgap *c = ctx;
    const uint8_t *x = odn_q_handle(src);
    uint8_t *y = odn_q_handle(dst);
    if (!x || !y) return odn_host->status_new(TSR_ERR_PROVIDER, "onednn: pool without buffers");
    float xs = odn_qop_scale(&c->p[0]), ys = odn_qop_scale(&c->p[2]);
    int32_t zx = odn_qop_zp(&c->p[1]), zy = odn_qop_zp(&c->p[3]), t = c->type;
    float scale = xs / (ys * (float)(int32_t)c->image);
    bool s8 = t == TSR_INT8;
    int64_t image = c->image, ch = c->channels;
    uint32_t zsum = (uint32_t)((int64_t)zx * image);
    if (c->channels_last) {
        for (int64_t b = 0; b < c->blocks; b++) {
            memset(c->acc, 0, sizeof(uint32_t) * (size_t)ch);
            sum_rows(x + b * image * ch, image, ch, s8, c->acc);
            for (int64_t k = 0; k < ch; k++)
                odn_qop_put(t, y, (size_t)(b * ch + k), (float)(int32_t)(c->acc[k] - zsum) * scale, zy);
        }
        return NULL;
    }
    int64_t jobs = c->blocks * ch;
    bool avx2 = odn_qop_avx2();
#pragma omp parallel for if (jobs * image > 262144) schedule(static)
    for (int64_t j = 0; j < jobs; j++) {
        const uint8_t *px = x + j * image;
        int64_t sum;
#if ODN_QOP_X86
        if (avx2) sum = sum_bytes_avx2(px, image, s8);
        else
#endif
            sum = sum_bytes_c(px, image, s8);
        uint32_t acc = (uint32_t)sum - zsum;
        odn_qop_put(t, y, (size_t)j, (float)(int32_t)acc * scale, zy);
    }
    (void)avx2;
    return NULL;
}

tsr_status *odn_qop_build_pool(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *vx, *vy = odn_plan_value(p, odn_host->node_output(n, 0));
    dnnl_memory_t mx;
    tsr_status *s = odn_qop_data_in(p, n, 0, &vx, &mx);
    if (s) return s;
    if (!vy || vx->rank < 3) return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "pool input of rank %d", (int)vx->rank);
    qgap *c = odn_plan_alloc(p, sizeof *c);
    if (!c) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    memset(c, 0, sizeof *c);
    c->type = vx->elem_type;
    c->channels_last = odn_attr_int(n, "channels_last", 0) != 0;
    c->blocks = vx->dims[0];
    c->channels = c->channels_last ? vx->dims[vx->rank - 1] : vx->dims[1];
    c->image = 1;
    int64_t dims[ODN_MAX_RANK];
    for (int32_t d = 0; d < vx->rank; d++) dims[d] = 1;
    dims[0] = c->blocks;
    dims[c->channels_last ? vx->rank - 1 : 1] = c->channels;
    for (int32_t d = 0; d < vx->rank - 2; d++) c->image *= vx->dims[c->channels_last ? 1 + d : 2 + d];
    if (strcmp(odn_host->node_op_type(n), "QLinearAveragePool") == 0) {
        /* the claim saw the kernel cover the image; the plan's shape must too */
        size_t nk = 0;
        const int64_t *k = odn_attr_ints(n, "kernel_shape", &nk);
        for (int32_t d = 0; d < vx->rank - 2; d++)
            if (!k || nk != (size_t)(vx->rank - 2) || k[d] != vx->dims[c->channels_last ? 1 + d : 2 + d])
                return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "kernel does not cover the image");
    }
    if (c->image <= 0 || c->image >= 0x1000000)
        return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "image of %lld elements", (long long)c->image);
    if (c->channels_last) {
        c->acc = odn_plan_alloc(p, sizeof(uint32_t) * (size_t)c->channels);
        if (!c->acc) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    }
    dnnl_memory_t reads[16];
    size_t nreads = 0;
    for (int k = 0; k < 4 && !s; k++) s = odn_qop_param_in(p, n, (size_t)k + 1, &c->p[k], reads, &nreads);
    if (!s) s = odn_plan_define(p, vy, vx->rank, dims, NULL, n);
    if (s) return s;
    return odn_plan_add_loop_reading(p, run_gap, c, mx, vy->mem, reads, nreads, n);
}
