/* conv_direct for CPU devices (same arguments): a work-item computes one
 * output row y[n][co][oh][*], accumulating in place over c, kh, kw in
 * conv_direct's order with fma, so every element gets the same terms in the
 * same order and the same bits. The innermost loop runs over the row's
 * columns whose input is inside the image, worked out before the loop, so
 * it has no branch and the compiler can vectorize it; conv_direct's one
 * element per work-item leaves a CPU nothing to vectorize.
 * The including source defines EPILOGUE(v). */
__kernel void conv_direct_rows(__global const float *restrict x, __global const float *restrict w,
                               __global const float *restrict bias, const int has_bias,
                               __global float *restrict y, const int N, const int C, const int H,
                               const int W, const int CO, const int OH, const int OW, const int KH,
                               const int KW, const int SH, const int SW, const int PH, const int PW,
                               const int DH, const int DW, const int G) {
    const int i = get_global_id(0);
    if (i >= N * CO * OH) return;
    const int oh = i % OH, co = (i / OH) % CO, n = i / (OH * CO);
    const int cg = C / G, cog = CO / G, g = co / cog;
    __global float *yr = y + (size_t)i * OW;
    const float b0 = has_bias ? bias[co] : 0.0f;
    for (int ow = 0; ow < OW; ow++) yr[ow] = b0;
    for (int c = 0; c < cg; c++) {
        __global const float *xp = x + ((size_t)(n * C + g * cg + c) * H) * W;
        __global const float *wp = w + ((co * cg + c) * KH) * KW;
        for (int kh = 0; kh < KH; kh++) {
            const int ih = oh * SH - PH + kh * DH;
            if (ih < 0 || ih >= H) continue;
            __global const float *xr = xp + ih * W;
            for (int kw = 0; kw < KW; kw++) {
                const float wv = wp[kh * KW + kw];
                /* iw = ow * SW + off must lie in [0, W) */
                const int off = kw * DW - PW;
                const int lo = off >= 0 ? 0 : (-off + SW - 1) / SW;
                int hi = W - 1 - off < 0 ? -1 : (W - 1 - off) / SW;
                if (hi > OW - 1) hi = OW - 1;
                if (SW == 1) {
                    for (int ow = lo; ow <= hi; ow++) yr[ow] = fma(xr[ow + off], wv, yr[ow]);
                } else {
                    for (int ow = lo; ow <= hi; ow++) yr[ow] = fma(xr[ow * SW + off], wv, yr[ow]);
                }
            }
        }
    }
    for (int ow = 0; ow < OW; ow++) yr[ow] = EPILOGUE(yr[ow]);
}
