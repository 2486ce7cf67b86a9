/* Data movement, for any element of 1, 2, 4 or 8 bytes: the including
 * build defines T as uchar, ushort, uint or ulong. */

/* y[i] = x[base + sum(coord_d * stride_d)]: Transpose, Slice, Expand.
 * meta: the output's dims, then the input strides per output axis. */
__kernel void strided_gather(__global const T *x, __global T *y, const int n, const int rank,
                             const int base, __constant int *meta) {
    int i = get_global_id(0);
    if (i >= n) return;
    int rem = i, off = base;
    for (int d = rank - 1; d >= 0; d--) {
        const int c = rem % meta[d];
        rem /= meta[d];
        off += c * meta[rank + d];
    }
    y[i] = x[off];
}

/* One Concat input viewed as [outer, len_in, inner] into [outer, len_out, inner]. */
__kernel void concat_copy(__global const T *x, __global T *y, const int n, const int len_in,
                          const int inner, const int len_out, const int axis_off) {
    const int i = get_global_id(0);
    if (i >= n) return;
    const int in = i % inner, a = (i / inner) % len_in, o = i / (inner * len_in);
    y[(o * len_out + axis_off + a) * inner + in] = x[i];
}

/* Gather along an axis with indices already checked and made non-negative. */
__kernel void gather_axis(__global const T *x, __global const int *idx, __global T *y,
                          const int n, const int n_idx, const int axis_len, const int inner) {
    const int i = get_global_id(0);
    if (i >= n) return;
    const int in = i % inner, j = (i / inner) % n_idx, o = i / (inner * n_idx);
    y[i] = x[(o * axis_len + idx[j]) * inner + in];
}

/* Constant/edge/reflect padding; meta: out dims, in dims, pads_begin. */
__kernel void pad_nd(__global const T *x, __global T *y, const int n, const int rank,
                     const int mode, const T value, __constant int *meta) {
    const int i = get_global_id(0);
    if (i >= n) return;
    int rem = i, off = 0, stride = 1;
    bool outside = false;
    for (int d = rank - 1; d >= 0; d--) {
        const int od = meta[d], id = meta[rank + d], pb = meta[2 * rank + d];
        int c = rem % od - pb;
        rem /= od;
        if (c < 0 || c >= id) {
            if (mode == 0) {
                outside = true;
            } else if (mode == 1) {
                c = c < 0 ? 0 : id - 1;
            } else {
                /* reflect, repeated for pads wider than the axis */
                const int period = id > 1 ? 2 * (id - 1) : 1;
                c = c % period;
                if (c < 0) c += period;
                if (c >= id) c = period - c;
            }
        }
        off += c * stride;
        stride *= id;
    }
    y[i] = outside ? value : x[off];
}
