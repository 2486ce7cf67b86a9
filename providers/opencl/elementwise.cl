/* Helpers for generated elementwise kernels (ocl_elementwise.c appends the
 * kernel itself). */

/* Offset into input `input` of output element i: meta holds the output's
 * dims, then each input's strides (0 along broadcast axes). */
inline int ew_offset(int i, int rank, __constant int *meta, int input) {
    __constant int *stride = meta + (input + 1) * rank;
    int off = 0;
    for (int d = rank - 1; d >= 0; d--) {
        int c = i % meta[d];
        i /= meta[d];
        off += c * stride[d];
    }
    return off;
}

inline float ew_sign(float x) { return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f); }
inline float ew_softplus(float x) { return log1p(exp(x)); }
inline float ew_leaky(float x, float a) { return x < 0.0f ? a * x : x; }
inline float ew_elu(float x, float a) { return x < 0.0f ? a * (exp(x) - 1.0f) : x; }
inline float ew_selu(float x, float a, float g) {
    return x <= 0.0f ? g * (a * exp(x) - a) : g * x;
}
inline float ew_hardsigmoid(float x, float a, float b) {
    return fmax(0.0f, fmin(1.0f, a * x + b));
}
inline float ew_pow(float x, float y) { return pow(x, y); }
