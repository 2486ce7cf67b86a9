/* Pooling, BatchNormalization, Softmax and LayerNormalization. */

/* One output element per work-item over a [NC, H, W] input. */
__kernel void pool2d(__global const float *x, __global float *y, const int NC, const int H,
                     const int W, const int OH, const int OW, const int KH, const int KW,
                     const int SH, const int SW, const int PH, const int PW, const int PHE,
                     const int PWE, const int DH, const int DW, const int is_max,
                     const int count_pad) {
    const int i = get_global_id(0);
    if (i >= NC * OH * OW) return;
    const int ow = i % OW, oh = (i / OW) % OH, nc = i / (OW * OH);
    __global const float *xp = x + nc * H * W;
    float acc = is_max ? -INFINITY : 0.0f;
    int count = 0;
    for (int kh = 0; kh < KH; kh++) {
        const int ih = oh * SH - PH + kh * DH;
        for (int kw = 0; kw < KW; kw++) {
            const int iw = ow * SW - PW + kw * DW;
            const bool inside = ih >= 0 && ih < H && iw >= 0 && iw < W;
            /* positions in the explicit padding count for count_include_pad */
            if (ih >= -PH && ih < H + PHE && iw >= -PW && iw < W + PWE && !inside && count_pad) count++;
            if (!inside) continue;
            const float v = xp[ih * W + iw];
            acc = is_max ? fmax(acc, v) : acc + v;
            count++;
        }
    }
    y[i] = is_max ? acc : (count ? acc / (float)count : 0.0f);
}

__kernel void global_pool(__global const float *x, __global float *y, const int NC,
                          const int HW, const int is_max) {
    const int i = get_global_id(0);
    if (i >= NC) return;
    __global const float *xp = x + i * HW;
    float acc = is_max ? -INFINITY : 0.0f;
    for (int k = 0; k < HW; k++) acc = is_max ? fmax(acc, xp[k]) : acc + xp[k];
    y[i] = is_max ? acc : acc / (float)HW;
}

__kernel void batchnorm(__global const float *x, __global float *y, __global const float *scale,
                        __global const float *bias, __global const float *mean,
                        __global const float *var, const float eps, const int C,
                        const int inner, const int n) {
    const int i = get_global_id(0);
    if (i >= n) return;
    const int c = (i / inner) % C;
    y[i] = (x[i] - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c];
}

/* One (outer, inner) line per work-item, reduced along `len` elements
 * `inner` apart. */
__kernel void softmax(__global const float *x, __global float *y, const int outer,
                      const int len, const int inner, const int log_form) {
    const int i = get_global_id(0);
    if (i >= outer * inner) return;
    const int o = i / inner, in = i % inner;
    __global const float *xp = x + o * len * inner + in;
    __global float *yp = y + o * len * inner + in;
    float m = -INFINITY;
    for (int k = 0; k < len; k++) m = fmax(m, xp[k * inner]);
    float sum = 0.0f;
    for (int k = 0; k < len; k++) sum += exp(xp[k * inner] - m);
    if (log_form) {
        const float ls = log(sum);
        for (int k = 0; k < len; k++) yp[k * inner] = xp[k * inner] - m - ls;
    } else {
        for (int k = 0; k < len; k++) yp[k * inner] = exp(xp[k * inner] - m) / sum;
    }
}

/* One row of `len` per work-item; scale/bias strides are 0 when broadcast. */
__kernel void layernorm(__global const float *x, __global float *y, __global const float *scale,
                        const int scale_stride, __global const float *bias,
                        const int bias_stride, const int has_bias, const int rows, const int len,
                        const float eps) {
    const int r = get_global_id(0);
    if (r >= rows) return;
    __global const float *xp = x + r * len;
    __global float *yp = y + r * len;
    float mean = 0.0f;
    for (int k = 0; k < len; k++) mean += xp[k];
    mean /= (float)len;
    float var = 0.0f;
    for (int k = 0; k < len; k++) {
        const float d = xp[k] - mean;
        var += d * d;
    }
    var /= (float)len;
    const float inv = 1.0f / sqrt(var + eps);
    for (int k = 0; k < len; k++) {
        float v = (xp[k] - mean) * inv * scale[k * scale_stride];
        if (has_bias) v += bias[k * bias_stride];
        yp[k] = v;
    }
}
