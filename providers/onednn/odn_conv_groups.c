/* Grouped convolutions whose groups hold fewer channels than a vector
 * register: oneDNN 2.6's direct kernels want channels per group in
 * multiples of the SIMD width (8 floats on AVX2, 16 on AVX-512), and
 * otherwise it runs im2col + GEMM ("gemm:jit"), group by group: a
 * ResNeXt's 3x3 convolution of 32 groups of 4 channels ran at 2.5 GFLOP/s,
 * two of them a third of the model's time. Merging f neighbouring groups
 * into one, their weights block-diagonal (zeros across the merged groups),
 * computes the same sums (the added terms are exact zeros) with f times the
 * multiplies, on the direct kernel. */
#include <string.h>

#include "odn.h"

/* The smallest f dividing `group`, at most 8, that makes both channel
 * counts per group multiples of blk; 0 when none. */
static int64_t merge_factor(int64_t group, int64_t cin_g, int64_t cout_g, int64_t blk) {
    for (int64_t f = 2; f <= 8 && f <= group; f++)
        if (group % f == 0 && (f * cin_g) % blk == 0 && (f * cout_g) % blk == 0) return f;
    return 0;
}

bool odn_conv_merge_groups(odn_plan *p, int64_t group, int64_t m, int64_t cin_g, int64_t taps, const float *w,
                           int64_t *merged_group, float **merged) {
    int64_t blk = odn_block(), cout_g = group > 0 ? m / group : 0;
    /* depthwise (one channel in per group) has kernels of its own */
    if (group < 2 || cin_g < 2 || !w || (cin_g % blk == 0 && cout_g % blk == 0)) return false;
    int64_t f = merge_factor(group, cin_g, cout_g, blk);
    if (!f) return false;
    int64_t wide = f * cin_g; /* input channels per merged group */
    float *nw = odn_plan_alloc(p, (size_t)(m * wide * taps) * sizeof(float));
    if (!nw) return false;
    memset(nw, 0, (size_t)(m * wide * taps) * sizeof(float));
    for (int64_t o = 0; o < m; o++) {
        int64_t slot = (o / cout_g) % f; /* which of the merged groups o belongs to */
        memcpy(nw + (o * wide + slot * cin_g) * taps, w + o * cin_g * taps, (size_t)(cin_g * taps) * sizeof(float));
    }
    *merged_group = group / f;
    *merged = nw;
    return true;
}
