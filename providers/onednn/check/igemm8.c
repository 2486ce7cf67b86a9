/* Driver for the exact u8 x s8 GEMM (odn_igemm8.c), for
 * check/igemm8_cases.py, which writes the operands with numpy and checks
 * the product against its own:
 *   onednn_igemm8 run IN OUT   IN as check/igemm.c reads it (int64 m, n,
 *       k, lda, a_unsigned, b_unsigned, za, zb_count, threads, trans_b;
 *       A; B; zb); OUT: C as int32, m x n. Exit 3 when the kernel refuses
 *       B (a residual past its bound), after checking that
 *       odn_igemm8_packed_ok says so too.
 *   onednn_igemm8 bench M K N THREADS RUNS: ms of this GEMM and of the
 *       int16 one (odn_igemm.c) on the same shape and weights (int8, a
 *       bell-shaped spread as quantizers write), best of RUNS.
 * Exit 77 (skip) on a CPU without AVX2. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../odn_igemm.h"
#include "../odn_igemm8.h"

/* The product of IN written to OUT (0), B refused (3) or bad files (2). */
static int product(FILE *f, const char *out, const int64_t *h, uint8_t *a, uint8_t *b, int32_t *zb, int32_t *c,
                   void *packed, void *scratch) {
    int64_t m = h[0], n = h[1], k = h[2], lda = h[3], zb_count = h[7];
    bool au = h[4] != 0, bu = h[5] != 0, tb = h[9] != 0;
    int threads = (int)h[8];
    if (fread(a, 1, (size_t)(m * lda), f) != (size_t)(m * lda) || fread(b, 1, (size_t)(k * n), f) != (size_t)(k * n) ||
        fread(zb, sizeof(int32_t), (size_t)zb_count, f) != (size_t)zb_count)
        return 2;
    for (int64_t i = 0; i < m * n; i++) c[i] = 0x5a5a5a5a;
    bool ok = odn_igemm8_pack(b, bu, k, n, tb ? 1 : n, tb ? k : 1, zb_count ? zb : NULL, zb_count, packed);
    if (ok != odn_igemm8_packed_ok(packed, k, n)) return 2;
    if (!ok) return 3;
    omp_set_num_threads(threads);
    odn_igemm8_run(m, n, k, a, au, lda, (int32_t)h[6], packed, c, n, scratch, threads);
    FILE *o = fopen(out, "wb");
    bool written = o && fwrite(c, sizeof(int32_t), (size_t)(m * n), o) == (size_t)(m * n);
    if (o) fclose(o);
    return written ? 0 : 2;
}

static int run(const char *in, const char *out) {
    FILE *f = fopen(in, "rb");
    int64_t h[10];
    if (!f || fread(h, sizeof(int64_t), 10, f) != 10) {
        if (f) fclose(f);
        return 2;
    }
    int64_t m = h[0], n = h[1], k = h[2], lda = h[3], zb_count = h[7];
    uint8_t *a = malloc((size_t)(m * lda)), *b = malloc((size_t)(k * n));
    int32_t *zb = malloc(sizeof(int32_t) * (size_t)(zb_count + 1));
    int32_t *c = malloc(sizeof(int32_t) * (size_t)(m * n));
    size_t bytes = odn_igemm8_packed_bytes(k, n);
    void *packed = malloc(bytes + 64), *scratch = malloc(odn_igemm8_scratch_bytes() * (size_t)h[8]);
    int rc = bytes && a && b && zb && c && packed && scratch ? product(f, out, h, a, b, zb, c, packed, scratch) : 2;
    fclose(f);
    free(a), free(b), free(zb), free(c), free(packed), free(scratch);
    return rc;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* int8 weights of a normal spread scaled so that the largest is 127, as
 * a symmetric per-tensor quantizer writes them (seeded LCG, Box-Muller) */
static void bell_weights(int8_t *b, int64_t count) {
    unsigned s = 7;
    double *w = malloc(sizeof(double) * (size_t)count), top = 0;
    for (int64_t i = 0; i < count; i++) {
        double u1 = ((s = s * 1103515245u + 12345u) >> 8) / 16777216.0 + 1e-9;
        double u2 = ((s = s * 1103515245u + 12345u) >> 8) / 16777216.0;
        w[i] = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
        top = fabs(w[i]) > top ? fabs(w[i]) : top;
    }
    for (int64_t i = 0; i < count; i++) b[i] = (int8_t)lrint(w[i] / top * 127);
    free(w);
}

static int bench(int64_t m, int64_t k, int64_t n, int threads, int runs) {
    uint8_t *a = malloc((size_t)(m * k));
    int8_t *b = malloc((size_t)(k * n));
    int32_t *c = malloc(sizeof(int32_t) * (size_t)(m * n));
    void *packed = malloc(odn_igemm8_packed_bytes(k, n));
    int16_t *p16 = malloc(sizeof(int16_t) * odn_igemm_packed_count(k, n));
    size_t per =
        odn_igemm8_scratch_bytes() > odn_igemm_scratch_bytes() ? odn_igemm8_scratch_bytes() : odn_igemm_scratch_bytes();
    void *scratch = malloc(per * (size_t)threads);
    unsigned s = 1;
    for (int64_t i = 0; i < m * k; i++) a[i] = (uint8_t)((s = s * 1103515245u + 12345u) >> 16);
    bell_weights(b, k * n);
    if (!odn_igemm8_pack(b, false, k, n, n, 1, NULL, 0, packed)) {
        puts("refused");
        free(a), free(b), free(c), free(packed), free(p16), free(scratch);
        return 1;
    }
    odn_igemm_pack(b, false, k, n, n, 1, NULL, 0, p16);
    omp_set_num_threads(threads);
    double best8 = 1e30, best16 = 1e30;
    for (int r = 0; r < runs; r++) {
        double t0 = now();
        odn_igemm8_run(m, n, k, a, true, k, 128, packed, c, n, scratch, threads);
        double t1 = now();
        odn_igemm_run(m, n, k, a, true, k, 128, p16, c, n, scratch, threads);
        double t2 = now();
        best8 = t1 - t0 < best8 ? t1 - t0 : best8;
        best16 = t2 - t1 < best16 ? t2 - t1 : best16;
    }
    double ops = 2.0 * (double)m * (double)n * (double)k;
    printf("M=%lld K=%lld N=%lld threads=%d: igemm8 %.3f ms %.1f GOP/s | igemm (int16) %.3f ms %.1f GOP/s\n",
           (long long)m, (long long)k, (long long)n, threads, best8 * 1e3, ops / best8 * 1e-9, best16 * 1e3,
           ops / best16 * 1e-9);
    free(a), free(b), free(c), free(packed), free(p16), free(scratch);
    return 0;
}

int main(int argc, char **argv) {
    if (!odn_igemm_supported()) {
        puts("skipped: no AVX2");
        return 77;
    }
    if (argc == 4 && strcmp(argv[1], "run") == 0) return run(argv[2], argv[3]);
    if (argc == 7 && strcmp(argv[1], "bench") == 0)
        return bench(atoll(argv[2]), atoll(argv[3]), atoll(argv[4]), atoi(argv[5]), atoi(argv[6]));
    fprintf(stderr, "usage: %s run IN OUT | bench M K N THREADS RUNS\n", argv[0]);
    return 2;
}
