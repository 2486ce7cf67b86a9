/* Driver for the exact int8 GEMM (odn_igemm.c), for check/igemm_cases.py,
 * which writes the operands with numpy and checks the product against its
 * own:
 *   onednn_igemm run IN OUT   IN: int64 m, n, k, lda, a_unsigned,
 *       b_unsigned, za, zb_count, threads, trans_b; A (m x lda bytes); B
 *       (k x n bytes, or n x k when trans_b); zb (int32 x zb_count);
 *       OUT: C as int32, m x n
 *   onednn_igemm bench M K N THREADS RUNS: GOP/s of this GEMM and of the
 *       float packed GEMM (odn_sgemm.c) on the same shape, best of RUNS.
 * Exit 77 (skip) on a CPU without AVX2. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../odn_igemm.h"
#include "../odn_sgemm.h"

static int run(const char *in, const char *out) {
    FILE *f = fopen(in, "rb");
    int64_t h[10];
    if (!f || fread(h, sizeof(int64_t), 10, f) != 10) return 2;
    int64_t m = h[0], n = h[1], k = h[2], lda = h[3], zb_count = h[7];
    bool au = h[4] != 0, bu = h[5] != 0, tb = h[9] != 0;
    int threads = (int)h[8];
    uint8_t *a = malloc((size_t)(m * lda)), *b = malloc((size_t)(k * n));
    int32_t *zb = malloc(sizeof(int32_t) * (size_t)(zb_count + 1));
    int32_t *c = malloc(sizeof(int32_t) * (size_t)(m * n));
    int16_t *packed = malloc(sizeof(int16_t) * odn_igemm_packed_count(k, n));
    void *scratch = malloc(odn_igemm_scratch_bytes() * (size_t)threads);
    if (fread(a, 1, (size_t)(m * lda), f) != (size_t)(m * lda) || fread(b, 1, (size_t)(k * n), f) != (size_t)(k * n) ||
        fread(zb, sizeof(int32_t), (size_t)zb_count, f) != (size_t)zb_count)
        return 2;
    fclose(f);
    for (int64_t i = 0; i < m * n; i++) c[i] = 0x5a5a5a5a;
    odn_igemm_pack(b, bu, k, n, tb ? 1 : n, tb ? k : 1, zb_count ? zb : NULL, zb_count, packed);
    omp_set_num_threads(threads);
    odn_igemm_run(m, n, k, a, au, lda, (int32_t)h[6], packed, c, n, scratch, threads);
    f = fopen(out, "wb");
    if (!f || fwrite(c, sizeof(int32_t), (size_t)(m * n), f) != (size_t)(m * n)) return 2;
    fclose(f);
    free(a), free(b), free(zb), free(c), free(packed), free(scratch);
    return 0;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int bench(int64_t m, int64_t k, int64_t n, int threads, int runs) {
    uint8_t *a = malloc((size_t)(m * k)), *b = malloc((size_t)(k * n));
    float *af = malloc(sizeof(float) * (size_t)(m * k)), *bf = malloc(sizeof(float) * (size_t)(k * n));
    int32_t *c = malloc(sizeof(int32_t) * (size_t)(m * n));
    float *cf = malloc(sizeof(float) * (size_t)(m * n));
    int16_t *packed = malloc(sizeof(int16_t) * odn_igemm_packed_count(k, n));
    float *fpacked = malloc(sizeof(float) * odn_sgemm_packed_floats(k, n));
    void *scratch = malloc(odn_igemm_scratch_bytes() * (size_t)threads);
    float *fscratch = malloc(sizeof(float) * odn_sgemm_scratch_floats(threads));
    unsigned s = 1;
    for (int64_t i = 0; i < m * k; i++) af[i] = a[i] = (uint8_t)((s = s * 1103515245u + 12345u) >> 16);
    for (int64_t i = 0; i < k * n; i++) bf[i] = (int8_t)(b[i] = (uint8_t)((s = s * 1103515245u + 12345u) >> 16));
    odn_igemm_pack(b, false, k, n, n, 1, NULL, 0, packed);
    odn_sgemm_pack(bf, k, n, n, 1, fpacked);
    omp_set_num_threads(threads);
    double best_i = 1e30, best_f = 1e30;
    for (int r = 0; r < runs; r++) {
        double t0 = now();
        odn_igemm_run(m, n, k, a, true, k, 128, packed, c, n, scratch, threads);
        double t1 = now();
        odn_sgemm_run(m, n, k, af, k, fpacked, NULL, cf, n, fscratch, threads);
        double t2 = now();
        best_i = t1 - t0 < best_i ? t1 - t0 : best_i;
        best_f = t2 - t1 < best_f ? t2 - t1 : best_f;
    }
    double ops = 2.0 * (double)m * (double)n * (double)k;
    printf("M=%lld K=%lld N=%lld threads=%d: igemm %.3f ms %.1f GOP/s | sgemm %.3f ms %.1f GFLOP/s\n", (long long)m,
           (long long)k, (long long)n, threads, best_i * 1e3, ops / best_i * 1e-9, best_f * 1e3, ops / best_f * 1e-9);
    return 0;
}

int main(int argc, char **argv) {
    if (!odn_igemm_supported() || !odn_sgemm_supported()) {
        puts("skipped: no AVX2/FMA");
        return 77;
    }
    if (argc == 4 && strcmp(argv[1], "run") == 0) return run(argv[2], argv[3]);
    if (argc == 7 && strcmp(argv[1], "bench") == 0)
        return bench(atoll(argv[2]), atoll(argv[3]), atoll(argv[4]), atoi(argv[5]), atoi(argv[6]));
    fprintf(stderr, "usage: %s run IN OUT | bench M K N THREADS RUNS\n", argv[0]);
    return 2;
}
