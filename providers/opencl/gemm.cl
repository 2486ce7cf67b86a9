/* C = EPILOGUE(alpha * A.B + beta * bias), tiled through local memory.
 * A, B and bias are addressed by row and column strides, so transposed
 * operands and broadcast biases need no copies. The third NDRange dimension
 * walks a batch whose strides are given (0 for a shared operand).
 * The including source defines EPILOGUE(v). */
#define TS 16

__kernel __attribute__((reqd_work_group_size(TS, TS, 1)))
void gemm_tiled(const int M, const int N, const int K,
                __global const float *A, const int a_off, const int a_rs, const int a_cs, const int a_bs,
                __global const float *B, const int b_off, const int b_rs, const int b_cs, const int b_bs,
                __global float *C, const int c_off, const int ldc, const int c_bs,
                __global const float *bias, const int bias_off, const int bias_rs, const int bias_cs,
                const float alpha, const float beta) {
    __local float At[TS][TS + 1];
    __local float Bt[TS][TS + 1];
    const int lr = get_local_id(1), lc = get_local_id(0);
    const int row = get_group_id(1) * TS + lr, col = get_group_id(0) * TS + lc;
    const int batch = get_global_id(2);
    A += a_off + batch * a_bs;
    B += b_off + batch * b_bs;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TS) {
        int ka = k0 + lc, kb = k0 + lr;
        At[lr][lc] = (row < M && ka < K) ? A[row * a_rs + ka * a_cs] : 0.0f;
        Bt[lr][lc] = (kb < K && col < N) ? B[kb * b_rs + col * b_cs] : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TS; k++) acc = fma(At[lr][k], Bt[k][lc], acc);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (row < M && col < N) {
        float v = alpha * acc;
        if (beta != 0.0f) v += beta * bias[bias_off + row * bias_rs + col * bias_cs];
        C[c_off + batch * c_bs + row * ldc + col] = EPILOGUE(v);
    }
}

/* The same product for larger matrices: a 16x16 work-group computes a
 * 64x64 block of C, each work-item a 4x4 register tile strided by 16 so
 * neighbouring work-items touch neighbouring addresses. */
#define RT_M 64
#define RT_N 64
#define RT_K 16
#define RT_W 4

__kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void gemm_reg(const int M, const int N, const int K,
              __global const float *A, const int a_off, const int a_rs, const int a_cs, const int a_bs,
              __global const float *B, const int b_off, const int b_rs, const int b_cs, const int b_bs,
              __global float *C, const int c_off, const int ldc, const int c_bs,
              __global const float *bias, const int bias_off, const int bias_rs, const int bias_cs,
              const float alpha, const float beta) {
    __local float As[RT_K][RT_M];
    __local float Bs[RT_K][RT_N];
    const int tx = get_local_id(0), ty = get_local_id(1), tid = ty * 16 + tx;
    const int row0 = get_group_id(1) * RT_M, col0 = get_group_id(0) * RT_N;
    const int batch = get_global_id(2);
    A += a_off + batch * a_bs;
    B += b_off + batch * b_bs;
    float acc[RT_W][RT_W];
    for (int i = 0; i < RT_W; i++)
        for (int j = 0; j < RT_W; j++) acc[i][j] = 0.0f;
    for (int k0 = 0; k0 < K; k0 += RT_K) {
        for (int l = 0; l < 4; l++) {
            const int e = tid + l * 256;
            const int am = e / RT_K, ak = e % RT_K;
            const int gr = row0 + am, gk = k0 + ak;
            As[ak][am] = (gr < M && gk < K) ? A[gr * a_rs + gk * a_cs] : 0.0f;
            const int bk = e / RT_N, bn = e % RT_N;
            const int gk2 = k0 + bk, gc = col0 + bn;
            Bs[bk][bn] = (gk2 < K && gc < N) ? B[gk2 * b_rs + gc * b_cs] : 0.0f;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < RT_K; k++) {
            float a[RT_W], b[RT_W];
            for (int i = 0; i < RT_W; i++) a[i] = As[k][ty + i * 16];
            for (int j = 0; j < RT_W; j++) b[j] = Bs[k][tx + j * 16];
            for (int i = 0; i < RT_W; i++)
                for (int j = 0; j < RT_W; j++) acc[i][j] = fma(a[i], b[j], acc[i][j]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int i = 0; i < RT_W; i++) {
        const int row = row0 + ty + i * 16;
        if (row >= M) continue;
        for (int j = 0; j < RT_W; j++) {
            const int col = col0 + tx + j * 16;
            if (col >= N) continue;
            float v = alpha * acc[i][j];
            if (beta != 0.0f) v += beta * bias[bias_off + row * bias_rs + col * bias_cs];
            C[c_off + batch * c_bs + row * ldc + col] = EPILOGUE(v);
        }
    }
}
