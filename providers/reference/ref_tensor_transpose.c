/*
 * Transpose, DepthToSpace and SpaceToDepth: axis permutations of the input
 * read as some row-major shape (ref_tensor_permute, ref_tensor_permute.c).
 */
#include <string.h>

#include "ref_tensor.h"

tsr_status *ref_tensor_transpose(ref_ctx *c) {
    const tsr_tensor *x;
    tsr_tensor *y;
    int64_t perm[REF_MAX_RANK], dims[REF_MAX_RANK];
    TSR_TRY(ref_tensor_need_in(c, 0, &x));
    const int64_t *p;
    size_t n = ref_attr_ints(c, "perm", &p);
    if (!p) {
        /* Default: reverse the axes. */
        n = (size_t)x->rank;
        for (size_t a = 0; a < n; a++) perm[a] = x->rank - 1 - (int64_t)a;
    } else {
        if (n != (size_t)x->rank)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "perm has %zu entries for rank %d", n, (int)x->rank);
        bool seen[REF_MAX_RANK] = {false};
        for (size_t a = 0; a < n; a++) {
            int64_t v = p[a];
            if (v < 0) v += x->rank; /* tolerated, as numpy does */
            if (v < 0 || v >= x->rank || seen[v])
                return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "perm is not a permutation");
            seen[v] = true;
            perm[a] = v;
        }
    }
    for (size_t a = 0; a < n; a++) dims[a] = x->dims[perm[a]];
    TSR_TRY(ref_tensor_out_new(c, 0, x->elem_type, x->rank, dims, &y));
    return ref_tensor_permute(c, y, x, x->rank, x->dims, perm);
}

tsr_status *ref_tensor_depth_to_space(ref_ctx *c) {
    const tsr_tensor *x;
    tsr_tensor *y;
    TSR_TRY(ref_tensor_need_in(c, 0, &x));
    int64_t b = ref_attr_int(c, "blocksize", 0);
    const char *mode = ref_attr_str(c, "mode", "DCR");
    if (x->rank != 4) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input must have rank 4");
    if (b <= 0 || x->dims[1] % (b * b) != 0)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "channels %lld not divisible by blocksize^2",
                       (long long)x->dims[1]);
    int64_t n = x->dims[0], cc = x->dims[1] / (b * b), h = x->dims[2], w = x->dims[3];
    int64_t od[4] = {n, cc, h * b, w * b};
    TSR_TRY(ref_tensor_out_new(c, 0, x->elem_type, 4, od, &y));
    if (strcmp(mode, "CRD") == 0) {
        int64_t vd[6] = {n, cc, b, b, h, w}, perm[6] = {0, 1, 4, 2, 5, 3};
        return ref_tensor_permute(c, y, x, 6, vd, perm);
    }
    if (strcmp(mode, "DCR") != 0) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "unknown mode '%s'", mode);
    int64_t vd[6] = {n, b, b, cc, h, w}, perm[6] = {0, 3, 4, 1, 5, 2};
    return ref_tensor_permute(c, y, x, 6, vd, perm);
}

tsr_status *ref_tensor_space_to_depth(ref_ctx *c) {
    const tsr_tensor *x;
    tsr_tensor *y;
    TSR_TRY(ref_tensor_need_in(c, 0, &x));
    int64_t b = ref_attr_int(c, "blocksize", 0);
    if (x->rank != 4) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input must have rank 4");
    if (b <= 0 || x->dims[2] % b != 0 || x->dims[3] % b != 0)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "height and width must divide by blocksize");
    int64_t n = x->dims[0], cc = x->dims[1], h = x->dims[2] / b, w = x->dims[3] / b;
    int64_t od[4] = {n, cc * b * b, h, w};
    int64_t vd[6] = {n, cc, h, b, w, b}, perm[6] = {0, 3, 5, 1, 2, 4};
    TSR_TRY(ref_tensor_out_new(c, 0, x->elem_type, 4, od, &y));
    return ref_tensor_permute(c, y, x, 6, vd, perm);
}
