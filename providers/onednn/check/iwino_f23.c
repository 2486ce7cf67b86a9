/* Driver for the exact integer Winograd F(2x2, 3x3) convolution
 * (odn_iwino_f23.c), for check/iwino_f23_cases.py, which makes the
 * operands with numpy and checks y bit for bit against its own int64
 * direct convolution:
 *   onednn_iwino_f23 run IN OUT   IN: int64 n, c, h, w, m, oh, ow, pt, pl,
 *       x_unsigned, w_unsigned, zx, zw_count (0: NULL), threads, guard
 *       (int32 elements after y); then x (n*h*w*c bytes, NHWC), w
 *       (m*c*9 bytes, [M][C][3][3]), zw (zw_count int32). OUT: y and the
 *       guard after it (int32), y prefilled with IWF_FILL, the guard with
 *       IWF_GUARD. Exit 3 when odn_iwino_f23_supported refuses the shape.
 *   onednn_iwino_f23 supported N C H W M OH OW PT PL: exit 0 when taken,
 *       3 when refused (a shape refused anywhere is refused everywhere).
 *   onednn_iwino_f23 bench N C H W M THREADS RUNS: pads 1, uint8 x with
 *       zero point 128, int8 weights with per-channel zero points 0;
 *       best and median ms of RUNS, and the direct convolution's
 *       GMAC/s (N*M*C*9*OH*OW multiply-adds).
 * Exit 77 (skip) on a CPU without AVX2 where the kernel would run. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../odn_iwino_f23.h"

#define IWF_FILL 0x5A5A5A5A
#define IWF_GUARD (-0x21524111)

static bool cpu_has_avx2(void) {
#if defined(__GNUC__) && defined(__x86_64__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
#else
    return false;
#endif
}

/* 64-byte aligned, or NULL (also when `bytes` is 0 or absurd). */
static void *aligned(size_t bytes) {
    if (bytes == 0 || bytes > ((size_t)1 << 40)) return NULL;
    return aligned_alloc(64, (bytes + 63) / 64 * 64);
}

static int run_case(FILE *f, const int64_t *h, const char *out) {
    odn_iwino_shape s = {h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8]};
    bool x_unsigned = h[9] != 0, w_unsigned = h[10] != 0;
    int32_t zx = (int32_t)h[11];
    int64_t zw_count = h[12];
    int threads = (int)h[13];
    size_t guard = (size_t)h[14];
    if (!odn_iwino_f23_supported(&s)) return cpu_has_avx2() ? 3 : 77;
    if (zw_count != 0 && zw_count != 1 && zw_count != s.m) return 2;
    size_t xb = (size_t)(s.n * s.h * s.w * s.c), wb = (size_t)(s.m * s.c * 9), yn = (size_t)(s.n * s.oh * s.ow * s.m);
    size_t pb = odn_iwino_f23_weights_bytes(s.c, s.m), sb = odn_iwino_f23_scratch_bytes(&s, threads);
    uint8_t *x = aligned(xb), *w = aligned(wb);
    int32_t *zw = aligned(4 * (size_t)(zw_count ? zw_count : 1)), *y = aligned(4 * (yn + guard));
    void *packed = aligned(pb), *scratch = aligned(sb);
    int rc = 2;
    if (x && w && zw && y && packed && scratch && fread(x, 1, xb, f) == xb && fread(w, 1, wb, f) == wb &&
        fread(zw, 4, (size_t)zw_count, f) == (size_t)zw_count) {
        for (size_t i = 0; i < yn; i++) y[i] = IWF_FILL;
        for (size_t i = 0; i < guard; i++) y[yn + i] = IWF_GUARD;
        odn_iwino_f23_pack_weights(w, w_unsigned, zw_count ? zw : NULL, zw_count ? zw_count : 1, s.c, s.m, packed);
        omp_set_num_threads(threads);
        odn_iwino_f23_run(&s, x, x_unsigned, zx, packed, y, scratch, threads);
        FILE *o = fopen(out, "wb");
        rc = o && fwrite(y, 4, yn + guard, o) == yn + guard ? 0 : 2;
        if (o) fclose(o);
    }
    free(x), free(w), free(zw), free(y), free(packed), free(scratch);
    return rc;
}

static int run(const char *in, const char *out) {
    FILE *f = fopen(in, "rb");
    int64_t h[15];
    if (!f) return 2;
    int rc = fread(h, sizeof(int64_t), 15, f) == 15 ? run_case(f, h, out) : 2;
    fclose(f);
    return rc;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void fill(uint8_t *p, size_t count, unsigned seed) {
    for (size_t i = 0; i < count; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (uint8_t)(seed >> 16);
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int bench(int64_t n, int64_t c, int64_t h, int64_t w, int64_t m, int threads, int runs) {
    odn_iwino_shape s = {n, c, h, w, m, h, w, 1, 1};
    if (!cpu_has_avx2()) return 77;
    if (!odn_iwino_f23_supported(&s) || threads < 1 || runs < 1 || runs > 10000) return 2;
    size_t xb = (size_t)(n * h * w * c), wb = (size_t)(m * c * 9), yn = (size_t)(n * h * w * m);
    size_t pb = odn_iwino_f23_weights_bytes(c, m), sb = odn_iwino_f23_scratch_bytes(&s, threads);
    uint8_t *x = aligned(xb), *wt = aligned(wb);
    int32_t *y = aligned(4 * yn), *zw = aligned(4 * (size_t)m);
    void *packed = aligned(pb), *scratch = aligned(sb);
    double *times = malloc(sizeof(double) * (size_t)runs);
    int rc = 2;
    if (x && wt && y && zw && packed && scratch && times) {
        fill(x, xb, 1), fill(wt, wb, 2);
        memset(zw, 0, 4 * (size_t)m);
        odn_iwino_f23_pack_weights(wt, false, zw, m, c, m, packed);
        omp_set_num_threads(threads);
        odn_iwino_f23_run(&s, x, true, 128, packed, y, scratch, threads); /* warm-up */
        for (int i = 0; i < runs; i++) {
            double t0 = now();
            odn_iwino_f23_run(&s, x, true, 128, packed, y, scratch, threads);
            times[i] = now() - t0;
        }
        qsort(times, (size_t)runs, sizeof(double), cmp_double);
        double macs = (double)n * (double)m * (double)c * 9.0 * (double)h * (double)w;
        printf("iwino_f23 n=%lld c=%lld %lldx%lld m=%lld threads=%d: best %.3f ms median %.3f ms %.1f GMAC/s\n",
               (long long)n, (long long)c, (long long)h, (long long)w, (long long)m, threads, times[0] * 1e3,
               times[runs / 2] * 1e3, macs / times[0] * 1e-9);
        rc = 0;
    }
    free(x), free(wt), free(y), free(zw), free(packed), free(scratch), free(times);
    return rc;
}

int main(int argc, char **argv) {
    if (argc == 4 && !strcmp(argv[1], "run")) return run(argv[2], argv[3]);
    if (argc == 11 && !strcmp(argv[1], "supported")) {
        int64_t v[9];
        for (int i = 0; i < 9; i++) v[i] = strtoll(argv[2 + i], NULL, 10);
        odn_iwino_shape s = {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]};
        return odn_iwino_f23_supported(&s) ? 0 : 3;
    }
    if (argc == 9 && !strcmp(argv[1], "bench"))
        return bench(atoll(argv[2]), atoll(argv[3]), atoll(argv[4]), atoll(argv[5]), atoll(argv[6]), atoi(argv[7]),
                     atoi(argv[8]));
    fprintf(stderr,
            "usage: onednn_iwino_f23 run IN OUT | supported N C H W M OH OW PT PL | "
            "bench N C H W M THREADS RUNS\n");
    return 2;
}
