/* Resize by per-axis tables the host computed: for output coordinate c on
 * axis d, source indices lo[off_d + c], hi[...] and the weight of hi.
 * Nearest uses lo only; linear blends the 2^rank corners. meta: output dims,
 * input strides, table offsets (rank each). */
__kernel void resize_nd(__global const float *x, __global float *y, const int n, const int rank,
                        const int linear, __constant int *meta, __global const int *lo,
                        __global const int *hi, __global const float *w) {
    const int i = get_global_id(0);
    if (i >= n) return;
    int coord[8];
    int rem = i;
    for (int d = rank - 1; d >= 0; d--) {
        coord[d] = rem % meta[d];
        rem /= meta[d];
    }
    if (!linear) {
        int off = 0;
        for (int d = 0; d < rank; d++) off += lo[meta[2 * rank + d] + coord[d]] * meta[rank + d];
        y[i] = x[off];
        return;
    }
    float acc = 0.0f;
    for (int corner = 0; corner < (1 << rank); corner++) {
        float wt = 1.0f;
        int off = 0;
        for (int d = 0; d < rank; d++) {
            const int t = meta[2 * rank + d] + coord[d];
            const bool high = (corner >> d) & 1;
            wt *= high ? w[t] : 1.0f - w[t];
            off += (high ? hi[t] : lo[t]) * meta[rank + d];
        }
        if (wt != 0.0f) acc += wt * x[off];
    }
    y[i] = acc;
}
