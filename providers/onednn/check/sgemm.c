/* The packed GEMM (odn_sgemm.c) against a double-precision product
 * computed here, on shapes that hit every edge of its blocking: rows short
 * of a 6-row tile and of a 240-row block, columns short of a 16-column
 * panel, K short of, at and past a 256-row slice, transposed weights, bias,
 * row strides wider than the rows, and 1 and 2 threads; A read in place
 * (at most 16 panels a thread) and copied (more). Exit 77 (skip)
 * on a CPU without AVX2 and FMA. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "../odn_sgemm.h"

static float uniform(unsigned *state) {
    *state = *state * 1103515245u + 12345u;
    return (float)((*state >> 8) & 0xFFFF) / 32768.0f - 1.0f;
}

static int check(int64_t m, int64_t k, int64_t n, bool trans_b, bool with_bias, int threads) {
    unsigned seed = (unsigned)(m * 131 + k * 17 + n);
    int64_t lda = k + 3, ldc = n + 5; /* rows wider than the matrix */
    float *a = malloc(sizeof(float) * (size_t)(m * lda + 1));
    float *b = malloc(sizeof(float) * (size_t)(k * n + 1));
    float *bias = malloc(sizeof(float) * (size_t)(n + 1));
    float *c = malloc(sizeof(float) * (size_t)(m * ldc + 1));
    float *packed = malloc(sizeof(float) * odn_sgemm_packed_floats(k, n));
    float *scratch = malloc(sizeof(float) * odn_sgemm_scratch_floats(threads));
    for (int64_t i = 0; i < m * lda; i++) a[i] = uniform(&seed);
    for (int64_t i = 0; i < k * n; i++) b[i] = uniform(&seed);
    for (int64_t j = 0; j < n; j++) bias[j] = uniform(&seed);
    for (int64_t i = 0; i < m * ldc; i++) c[i] = 1e30f; /* the padding must stay */
    /* B[kk, j] at b[kk * n + j], or at b[j * k + kk] when transposed */
    odn_sgemm_pack(b, k, n, trans_b ? 1 : n, trans_b ? k : 1, packed);
    omp_set_num_threads(threads);
    odn_sgemm_run(m, n, k, a, lda, packed, with_bias ? bias : NULL, c, ldc, scratch, threads);
    int bad = 0;
    for (int64_t i = 0; i < m && !bad; i++) {
        for (int64_t j = 0; j < n && !bad; j++) {
            double want = with_bias ? bias[j] : 0.0, mag = fabs(want);
            for (int64_t kk = 0; kk < k; kk++) {
                double t = (double)a[i * lda + kk] * (trans_b ? b[j * k + kk] : b[kk * n + j]);
                want += t;
                mag += fabs(t);
            }
            if (fabs(c[i * ldc + j] - want) > 1e-6 * mag + 1e-7) {
                printf("FAIL m=%lld k=%lld n=%lld trans=%d bias=%d threads=%d: C[%lld,%lld] = %.9g, want %.9g\n",
                       (long long)m, (long long)k, (long long)n, trans_b, with_bias, threads, (long long)i,
                       (long long)j, c[i * ldc + j], want);
                bad = 1;
            }
        }
        for (int64_t j = n; j < ldc && !bad; j++)
            if (c[i * ldc + j] != 1e30f) {
                printf("FAIL m=%lld k=%lld n=%lld: wrote past row end at column %lld\n", (long long)m, (long long)k,
                       (long long)n, (long long)j);
                bad = 1;
            }
    }
    free(a);
    free(b);
    free(bias);
    free(c);
    free(packed);
    free(scratch);
    return bad;
}

int main(void) {
    if (!odn_sgemm_supported()) {
        printf("SKIP: no AVX2/FMA\n");
        return 77;
    }
    static const int64_t ms[] = {1, 2, 3, 4, 5, 6, 7, 13, 241, 500};
    static const int64_t ks[] = {1, 3, 256, 257, 600};
    static const int64_t ns[] = {1, 15, 16, 17, 40, 300};
    int failed = 0, cases = 0;
    for (size_t x = 0; x < sizeof ms / sizeof *ms; x++)
        for (size_t y = 0; y < sizeof ks / sizeof *ks; y++)
            for (size_t z = 0; z < sizeof ns / sizeof *ns; z++)
                for (int variant = 0; variant < 4; variant++) {
                    cases++;
                    failed += check(ms[x], ks[y], ns[z], variant & 1, variant & 2, 1 + (variant == 3));
                }
    /* a wide matrix, so both threads take panels, and a tall one, so they take row blocks */
    failed += check(64, 300, 700, false, true, 2) + check(1000, 70, 20, true, false, 2);
    cases += 2;
    printf("%d of %d cases right\n", cases - failed, cases);
    return failed ? 1 : 0;
}
