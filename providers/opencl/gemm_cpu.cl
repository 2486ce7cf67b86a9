/* C = EPILOGUE(alpha * A.B + beta * bias) for CPU devices (PoCL and the
 * like), with the arguments of gemm_tiled. No local memory and no barriers:
 * a CPU driver runs a work-group as a loop over its work-items, and across a
 * barrier it must keep every work-item's live registers in memory, which is
 * what makes the tiled kernels slow there. Instead each work-item keeps a
 * block of C in vector registers and streams A and B through the caches.
 * The sums run over k in order with fma from 0, as in gemm_tiled.
 * The including source defines EPILOGUE(v). */

/* gemm_cpu_n: B's columns are contiguous (b_cs == 1). A work-item computes
 * GC_R rows x 16 columns: per k, one 16-wide load of B and GC_R broadcasts
 * of A into GC_R vector accumulators. */
#define GC_R 8

#define GC_STORE(row, col, acc)                                                       \
    do {                                                                              \
        float v_ = alpha * (acc);                                                     \
        if (beta != 0.0f) v_ += beta * bias[bias_off + (row) * bias_rs + (col) * bias_cs]; \
        C[(row) * ldc + (col)] = EPILOGUE(v_);                                        \
    } while (0)

__kernel void gemm_cpu_n(const int M, const int N, const int K,
                         __global const float *A, const int a_off, const int a_rs, const int a_cs, const int a_bs,
                         __global const float *B, const int b_off, const int b_rs, const int b_cs, const int b_bs,
                         __global float *C, const int c_off, const int ldc, const int c_bs,
                         __global const float *bias, const int bias_off, const int bias_rs, const int bias_cs,
                         const float alpha, const float beta) {
    const int c0 = get_global_id(0) * 16, r0 = get_global_id(1) * GC_R, batch = get_global_id(2);
    if (c0 >= N || r0 >= M) return;
    A += a_off + batch * a_bs;
    B += b_off + batch * b_bs;
    C += c_off + batch * c_bs;
    if (c0 + 16 <= N && r0 + GC_R <= M) {
        float16 acc[GC_R];
        for (int i = 0; i < GC_R; i++) acc[i] = (float16)(0.0f);
        const __global float *a = A + r0 * a_rs;
        const __global float *b = B + c0;
        for (int k = 0; k < K; k++) {
            const float16 bv = vload16(0, b + k * b_rs);
            for (int i = 0; i < GC_R; i++) acc[i] = fma((float16)(a[i * a_rs + k * a_cs]), bv, acc[i]);
        }
        for (int i = 0; i < GC_R; i++) {
            float t[16];
            vstore16(acc[i], 0, t);
            for (int j = 0; j < 16; j++) GC_STORE(r0 + i, c0 + j, t[j]);
        }
        return;
    }
    /* the ragged edge of C */
    for (int i = r0; i < r0 + GC_R && i < M; i++)
        for (int j = c0; j < c0 + 16 && j < N; j++) {
            float s = 0.0f;
            for (int k = 0; k < K; k++) s = fma(A[i * a_rs + k * a_cs], B[k * b_rs + j * b_cs], s);
            GC_STORE(i, j, s);
        }
}

/* gemm_cpu_t: A's rows and B's columns both run along k (a_cs == 1 and
 * b_rs == 1, e.g. Gemm with transB, a PyTorch Linear layer). A work-item
 * computes GT_R x GT_C dot products, 16 k at a time in vector
 * accumulators, summed across lanes at the end: the only kernel here whose
 * sums are not in k order (the rounding differs from the others' by a few
 * ulps of the sum's magnitude). */
#define GT_R 4
#define GT_C 4

static inline float gc_lanes(float16 v) {
    float8 h = v.lo + v.hi;
    float4 q = h.lo + h.hi;
    float2 d = q.lo + q.hi;
    return d.x + d.y;
}

__kernel void gemm_cpu_t(const int M, const int N, const int K,
                         __global const float *A, const int a_off, const int a_rs, const int a_cs, const int a_bs,
                         __global const float *B, const int b_off, const int b_rs, const int b_cs, const int b_bs,
                         __global float *C, const int c_off, const int ldc, const int c_bs,
                         __global const float *bias, const int bias_off, const int bias_rs, const int bias_cs,
                         const float alpha, const float beta) {
    const int c0 = get_global_id(0) * GT_C, r0 = get_global_id(1) * GT_R, batch = get_global_id(2);
    if (c0 >= N || r0 >= M) return;
    A += a_off + batch * a_bs;
    B += b_off + batch * b_bs;
    C += c_off + batch * c_bs;
    if (c0 + GT_C <= N && r0 + GT_R <= M) {
        float16 acc[GT_R][GT_C];
        for (int i = 0; i < GT_R; i++)
            for (int j = 0; j < GT_C; j++) acc[i][j] = (float16)(0.0f);
        const int k16 = K & ~15;
        for (int k = 0; k < k16; k += 16) {
            float16 av[GT_R], bv[GT_C];
            for (int i = 0; i < GT_R; i++) av[i] = vload16(0, A + (r0 + i) * a_rs + k);
            for (int j = 0; j < GT_C; j++) bv[j] = vload16(0, B + (c0 + j) * b_cs + k);
            for (int i = 0; i < GT_R; i++)
                for (int j = 0; j < GT_C; j++) acc[i][j] = fma(av[i], bv[j], acc[i][j]);
        }
        for (int i = 0; i < GT_R; i++)
            for (int j = 0; j < GT_C; j++) {
                float s = gc_lanes(acc[i][j]);
                for (int k = k16; k < K; k++)
                    s = fma(A[(r0 + i) * a_rs + k], B[(c0 + j) * b_cs + k], s);
                GC_STORE(r0 + i, c0 + j, s);
            }
        return;
    }
    for (int i = r0; i < r0 + GT_R && i < M; i++)
        for (int j = c0; j < c0 + GT_C && j < N; j++) {
            float s = 0.0f;
            for (int k = 0; k < K; k++) s = fma(A[i * a_rs + k * a_cs], B[k * b_rs + j * b_cs], s);
            GC_STORE(i, j, s);
        }
}
