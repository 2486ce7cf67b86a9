/* Driver for the Winograd F(4x4, 3x3) convolution (odn_wino_f43.c), for
 * check/wino_f43_cases.py, which lays the operands out with numpy and
 * checks y against its own float64 direct convolution:
 *   onednn_wino_f43 run IN OUT   IN: int64 n, c, h, w, m, oh, ow, pt, pl,
 *       has_bias, accumulate, relu, threads, x strides (img, cb, row, pix),
 *       x_floats, y strides, y_floats; then float x (x_floats), w
 *       ([M][C][3][3]), bias (m floats when has_bias), y (y_floats, its
 *       previous contents and guards). OUT: y after the call (y_floats).
 *       Exit 3 when odn_wino_f43_supported refuses the shape.
 *   onednn_wino_f43 supported N C H W M OH OW PT PL: exit 0 when the
 *       shape is taken, 3 when refused (whatever the CPU: a refused shape
 *       must be refused everywhere).
 *   onednn_wino_f43 bench N C H W M THREADS RUNS: pads 1, nChw8c in and
 *       out, bias; best-of-RUNS ms and the GFLOP/s of the direct
 *       convolution's 2*N*M*C*9*OH*OW operations.
 * Exit 77 (skip) on a CPU without AVX2 and FMA where the kernel would run. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../odn_wino_f43.h"

static bool cpu_has_avx2_fma(void) {
#if defined(__GNUC__) && defined(__x86_64__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return false;
#endif
}

/* 64-byte aligned, or NULL (also when `floats` is 0 or too many). */
static void *aligned(size_t floats) {
    if (floats == 0 || floats > ((size_t)1 << 40)) return NULL;
    size_t bytes = (floats * sizeof(float) + 63) / 64 * 64;
    return aligned_alloc(64, bytes);
}

static bool read_floats(FILE *f, float *p, size_t count) { return fread(p, sizeof(float), count, f) == count; }

/* Runs the case of header h on the operands that follow it in f. */
static int run_case(FILE *f, const int64_t *h, const char *out) {
    odn_wino_shape s = {h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8]};
    bool has_bias = h[9] != 0, accumulate = h[10] != 0, relu = h[11] != 0;
    int threads = (int)h[12];
    odn_wino_strides xs = {h[13], h[14], h[15], h[16]}, ys = {h[18], h[19], h[20], h[21]};
    size_t x_floats = (size_t)h[17], y_floats = (size_t)h[22];
    if (!odn_wino_f43_supported(&s)) return cpu_has_avx2_fma() ? 3 : 77;
    size_t wf = (size_t)(s.m * s.c * 9), pf = odn_wino_f43_weights_floats(s.c, s.m);
    size_t scratch_bytes = odn_wino_f43_scratch_bytes(&s, threads);
    float *x = aligned(x_floats), *w = aligned(wf), *bias = aligned((size_t)s.m), *y = aligned(y_floats);
    float *packed = aligned(pf);
    void *scratch = aligned(scratch_bytes / sizeof(float) + 16);
    int rc = 2;
    if (x && w && bias && y && packed && scratch && scratch_bytes && read_floats(f, x, x_floats) &&
        read_floats(f, w, wf) && (!has_bias || read_floats(f, bias, (size_t)s.m)) && read_floats(f, y, y_floats)) {
        odn_wino_f43_pack_weights(w, s.c, s.m, packed);
        omp_set_num_threads(threads);
        odn_wino_f43_run(&s, x, &xs, packed, has_bias ? bias : NULL, y, &ys, accumulate, relu, scratch, threads);
        FILE *o = fopen(out, "wb");
        rc = o && fwrite(y, sizeof(float), y_floats, o) == y_floats ? 0 : 2;
        if (o) fclose(o);
    }
    free(x), free(w), free(bias), free(y), free(packed), free(scratch);
    return rc;
}

static int run(const char *in, const char *out) {
    FILE *f = fopen(in, "rb");
    int64_t h[23];
    if (!f) return 2;
    int rc = fread(h, sizeof(int64_t), 23, f) == 23 ? run_case(f, h, out) : 2;
    fclose(f);
    return rc;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Uniform in [-1, 1) from a seeded LCG: timing does not depend on values. */
static void fill(float *p, size_t count, unsigned seed, float scale) {
    for (size_t i = 0; i < count; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = scale * ((float)(seed >> 8) / 8388608.0f - 1.0f);
    }
}

static int bench(int64_t n, int64_t c, int64_t h, int64_t w, int64_t m, int threads, int runs) {
    odn_wino_shape s = {n, c, h, w, m, h, w, 1, 1};
    if (!cpu_has_avx2_fma()) return 77;
    if (!odn_wino_f43_supported(&s) || threads < 1 || runs < 1) return 2;
    odn_wino_strides xs = {c * h * w, h * w * 8, w * 8, 8}, ys = {m * h * w, h * w * 8, w * 8, 8};
    size_t xf = (size_t)(n * c * h * w), yf = (size_t)(n * m * h * w), wf = (size_t)(m * c * 9);
    size_t pf = odn_wino_f43_weights_floats(c, m), sb = odn_wino_f43_scratch_bytes(&s, threads);
    float *x = aligned(xf), *y = aligned(yf), *wt = aligned(wf), *bias = aligned((size_t)m), *packed = aligned(pf);
    void *scratch = aligned(sb / sizeof(float) + 16);
    int rc = 2;
    if (x && y && wt && bias && packed && scratch) {
        fill(x, xf, 1, 1.0f), fill(wt, wf, 2, 0.05f), fill(bias, (size_t)m, 3, 0.1f);
        odn_wino_f43_pack_weights(wt, c, m, packed);
        omp_set_num_threads(threads);
        double best = 1e30;
        for (int i = 0; i < runs + 1; i++) { /* the first run warms up */
            double t0 = now();
            odn_wino_f43_run(&s, x, &xs, packed, bias, y, &ys, false, false, scratch, threads);
            double dt = now() - t0;
            if (i > 0 && dt < best) best = dt;
        }
        double flops = 2.0 * (double)n * (double)m * (double)c * 9.0 * (double)h * (double)w;
        printf("wino_f43 n=%lld c=%lld %lldx%lld m=%lld threads=%d: %.3f ms %.1f GFLOP/s\n", (long long)n, (long long)c,
               (long long)h, (long long)w, (long long)m, threads, best * 1e3, flops / best * 1e-9);
        rc = 0;
    }
    free(x), free(y), free(wt), free(bias), free(packed), free(scratch);
    return rc;
}

int main(int argc, char **argv) {
    if (argc == 4 && !strcmp(argv[1], "run")) return run(argv[2], argv[3]);
    if (argc == 11 && !strcmp(argv[1], "supported")) {
        int64_t v[9];
        for (int i = 0; i < 9; i++) v[i] = strtoll(argv[2 + i], NULL, 10);
        odn_wino_shape s = {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]};
        return odn_wino_f43_supported(&s) ? 0 : 3;
    }
    if (argc == 9 && !strcmp(argv[1], "bench"))
        return bench(atoll(argv[2]), atoll(argv[3]), atoll(argv[4]), atoll(argv[5]), atoll(argv[6]), atoi(argv[7]),
                     atoi(argv[8]));
    fprintf(stderr,
            "usage: onednn_wino_f43 run IN OUT | supported N C H W M OH OW PT PL | "
            "bench N C H W M THREADS RUNS\n");
    return 2;
}
