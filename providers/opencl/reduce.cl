/* Reductions over any set of axes. meta (4 * rank ints): output dims (the
 * kept shape, reduced axes as 1), input strides of kept axes (0 on reduced
 * ones), the reduced dims (1 on kept ones), input strides of reduced axes. */

enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_SUMSQ, R_L1, R_L2, R_LOGSUM, R_LOGSUMEXP };

inline int reduce_offset(int i, int rank, __constant int *dims, __constant int *strides) {
    int off = 0;
    for (int d = rank - 1; d >= 0; d--) {
        const int c = i % dims[d];
        i /= dims[d];
        off += c * strides[d];
    }
    return off;
}

__kernel void reduce(__global const float *x, __global float *y, const int n_out, const int rank,
                     const int n_red, const int op, __constant int *meta) {
    const int i = get_global_id(0);
    if (i >= n_out) return;
    const int base = reduce_offset(i, rank, meta, meta + rank);
    __constant int *rdims = meta + 2 * rank, *rstrides = meta + 3 * rank;
    float acc = op == R_MAX || op == R_LOGSUMEXP ? -INFINITY : op == R_MIN ? INFINITY
              : op == R_PROD ? 1.0f : 0.0f;
    for (int r = 0; r < n_red; r++) {
        const float v = x[base + reduce_offset(r, rank, rdims, rstrides)];
        switch (op) {
        case R_MAX: case R_LOGSUMEXP: acc = fmax(acc, v); break;
        case R_MIN: acc = fmin(acc, v); break;
        case R_PROD: acc *= v; break;
        case R_SUMSQ: case R_L2: acc += v * v; break;
        case R_L1: acc += fabs(v); break;
        default: acc += v; break;
        }
    }
    if (op == R_LOGSUMEXP && n_red > 0) {
        /* second pass, shifted by the maximum for range */
        const float m = acc;
        float sum = 0.0f;
        for (int r = 0; r < n_red; r++)
            sum += exp(x[base + reduce_offset(r, rank, rdims, rstrides)] - m);
        acc = isinf(m) ? m : m + log(sum);
    }
    if (op == R_MEAN) acc = acc / (float)n_red;
    if (op == R_L2) acc = sqrt(acc);
    if (op == R_LOGSUM) acc = log(acc);
    y[i] = acc;
}
