/* Convolution: im2col (then gemm_tiled) for wide channels, a direct kernel
 * for few channels per group (depthwise and the first layer). Spatial rank
 * 2; 1-D convolutions come in with H = 1. The including source defines
 * EPILOGUE(v). */

/* col[(c*KH + kh)*KW + kw][oh*OW + ow] for one image and one group. */
__kernel void im2col(__global const float *x, const int x_off, const int C, const int H,
                     const int W, const int KH, const int KW, const int OH, const int OW,
                     const int SH, const int SW, const int PH, const int PW, const int DH,
                     const int DW, __global float *col) {
    const int p = get_global_id(0), r = get_global_id(1);
    if (p >= OH * OW || r >= C * KH * KW) return;
    const int kw = r % KW, kh = (r / KW) % KH, c = r / (KW * KH);
    const int oh = p / OW, ow = p % OW;
    const int ih = oh * SH - PH + kh * DH, iw = ow * SW - PW + kw * DW;
    float v = 0.0f;
    if (ih >= 0 && ih < H && iw >= 0 && iw < W) v = x[x_off + (c * H + ih) * W + iw];
    col[r * (OH * OW) + p] = v;
}

/* One output element per work-item: y[n][co][oh][ow]. */
__kernel void conv_direct(__global const float *x, __global const float *w,
                          __global const float *bias, const int has_bias, __global float *y,
                          const int N, const int C, const int H, const int W, const int CO,
                          const int OH, const int OW, const int KH, const int KW, const int SH,
                          const int SW, const int PH, const int PW, const int DH, const int DW,
                          const int G) {
    const int i = get_global_id(0);
    if (i >= N * CO * OH * OW) return;
    const int ow = i % OW, oh = (i / OW) % OH, co = (i / (OW * OH)) % CO, n = i / (OW * OH * CO);
    const int cg = C / G, cog = CO / G, g = co / cog;
    float acc = has_bias ? bias[co] : 0.0f;
    for (int c = 0; c < cg; c++) {
        __global const float *xp = x + ((n * C + g * cg + c) * H) * W;
        __global const float *wp = w + ((co * cg + c) * KH) * KW;
        for (int kh = 0; kh < KH; kh++) {
            const int ih = oh * SH - PH + kh * DH;
            if (ih < 0 || ih >= H) continue;
            for (int kw = 0; kw < KW; kw++) {
                const int iw = ow * SW - PW + kw * DW;
                if (iw < 0 || iw >= W) continue;
                acc = fma(xp[ih * W + iw], wp[kh * KW + kw], acc);
            }
        }
    }
    y[i] = EPILOGUE(acc);
}
