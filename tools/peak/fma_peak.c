/*
 * fma_peak [THREADS] — this CPU's FP32 fused-multiply-add throughput now,
 * in GFLOP/s (a multiply-add counts 2), for tools/bench_vs_ort.sh to state
 * "% of peak" against a figure measured in the same run as the latencies:
 * on shared machines the peak itself moves with the co-tenants. Each thread
 * runs 12 independent chains of 512-bit FMAs (AVX2 when the CPU lacks
 * AVX-512), enough to cover the FMA latency on both pipes; best of 7.
 * Prints one line: "fma_peak threads=N isa=avx512|avx2 gflops=X".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <immintrin.h>

#define CHAINS 12
#define ITERS 20000000L

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static volatile float sink;

__attribute__((target("avx512f"))) static void *chains512(void *arg) {
    (void)arg;
    __m512 a[CHAINS];
    const __m512 b = _mm512_set1_ps(0.9999999f), c = _mm512_set1_ps(1e-7f);
    for (int i = 0; i < CHAINS; i++) a[i] = _mm512_set1_ps((float)i);
    for (long k = 0; k < ITERS; k++) /* unrolled, so the chains live in registers at any -O level */
#pragma GCC unroll 16
        for (int i = 0; i < CHAINS; i++) a[i] = _mm512_fmadd_ps(a[i], b, c);
    float s = 0;
    for (int i = 0; i < CHAINS; i++) s += _mm512_reduce_add_ps(a[i]);
    sink = s;
    return NULL;
}

__attribute__((target("avx2,fma"))) static void *chains256(void *arg) {
    (void)arg;
    __m256 a[CHAINS];
    const __m256 b = _mm256_set1_ps(0.9999999f), c = _mm256_set1_ps(1e-7f);
    for (int i = 0; i < CHAINS; i++) a[i] = _mm256_set1_ps((float)i);
    for (long k = 0; k < ITERS; k++)
#pragma GCC unroll 16
        for (int i = 0; i < CHAINS; i++) a[i] = _mm256_fmadd_ps(a[i], b, c);
    float lanes[8], s = 0;
    for (int i = 0; i < CHAINS; i++) {
        _mm256_storeu_ps(lanes, a[i]);
        for (int l = 0; l < 8; l++) s += lanes[l];
    }
    sink = s;
    return NULL;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    if (threads < 1 || threads > 256) {
        fprintf(stderr, "usage: fma_peak [THREADS 1..256]\n");
        return 2;
    }
    __builtin_cpu_init();
    int wide = __builtin_cpu_supports("avx512f");
    if (!wide && !__builtin_cpu_supports("fma")) {
        fprintf(stderr, "fma_peak: this CPU has no FMA\n");
        return 1;
    }
    pthread_t *tid = calloc((size_t)threads, sizeof *tid);
    if (!tid) return 1;
    double best = 0;
    for (int rep = 0; rep < 7; rep++) {
        double t0 = now();
        for (int i = 0; i < threads; i++)
            if (pthread_create(&tid[i], NULL, wide ? chains512 : chains256, NULL)) return 1;
        for (int i = 0; i < threads; i++) pthread_join(tid[i], NULL);
        double gflops = (double)ITERS * CHAINS * (wide ? 32 : 16) * threads / (now() - t0) / 1e9;
        if (gflops > best) best = gflops;
    }
    free(tid);
    printf("fma_peak threads=%d isa=%s gflops=%.1f\n", threads, wide ? "avx512" : "avx2", best);
    return 0;
}
