/*
 * AffineGrid (opset 20): the sampling grid GridSample reads, from a batch
 * of 2-D (N, 2, 3) or 3-D (N, 3, 4) affine matrices and the target size
 * (N, C, H, W) or (N, C, D, H, W).
 *
 * Base positions are evenly spaced in [-1, 1]: pixel centres at
 * -1 + (2i + 1) / size, or with align_corners the corner pixels' centres
 * at -1 and 1 (-1 + 2i / (size - 1)). Each output point is theta times
 * (x, y[, z], 1), x being the innermost (width) position.
 */
#include <stdlib.h>

#include "ref_image.h"

/* Normalized base coordinate of pixel i along an axis of `size` pixels. */
static double base_coord(int64_t i, int64_t size, bool align) {
    if (align) return size > 1 ? -1.0 + 2.0 * (double)i / (double)(size - 1) : -1.0;
    return -1.0 + (2.0 * (double)i + 1.0) / (double)size;
}

tsr_status *ref_image_affine_grid(ref_ctx *c) {
    const tsr_tensor *T = ref_in(c, 0), *S = ref_in(c, 1);
    if (!T || !S) return ref_err(c, TSR_ERR_INVALID_MODEL, "AffineGrid needs inputs theta and size");
    bool align = ref_attr_int(c, "align_corners", 0) != 0;
    int64_t *size = NULL;
    size_t ns = 0;
    tsr_status *st = ref_tensor_i64(c, S, &size, &ns);
    if (st) return st;
    double *theta = NULL, *out = NULL;
    if (ns != 4 && ns != 5) {
        st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "size must have 4 or 5 values, got %zu", ns);
        goto done;
    }
    size_t nd = ns - 2; /* spatial axes: 2 or 3 */
    int64_t N = size[0];
    if (T->rank != 3 || T->dims[0] != N || T->dims[1] != (int64_t)nd || T->dims[2] != (int64_t)nd + 1) {
        st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "theta must have shape (%lld, %zu, %zu) for size of %zu values",
                     (long long)N, nd, nd + 1, ns);
        goto done;
    }
    int64_t odims[5], points;
    odims[0] = N;
    for (size_t d = 0; d < nd; d++) odims[1 + d] = size[2 + d];
    odims[1 + nd] = (int64_t)nd;
    if (!ref_image_numel(odims, nd + 2, REF_IMAGE_MAX_ELEMS, &points)) {
        st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "size values are negative or too large");
        goto done;
    }
    tsr_tensor *Y;
    if ((st = ref_out(c, 0, T->elem_type, (int32_t)nd + 2, odims, &Y)) || points == 0) goto done;
    if ((st = ref_image_f64(c, T, "theta", &theta))) goto done;
    out = malloc((size_t)points * sizeof *out);
    if (!out) {
        st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    /* Spatial sizes innermost first: W, H[, D]. */
    int64_t w = size[ns - 1], h = size[ns - 2], dd = nd == 3 ? size[2] : 1;
    size_t k = 0;
    for (int64_t n = 0; n < N; n++) {
        const double *th = theta + (size_t)n * nd * (nd + 1);
        for (int64_t iz = 0; iz < dd; iz++)
            for (int64_t iy = 0; iy < h; iy++)
                for (int64_t ix = 0; ix < w; ix++) {
                    double p[4] = {base_coord(ix, w, align), base_coord(iy, h, align), 0, 0};
                    if (nd == 3) p[2] = base_coord(iz, dd, align);
                    p[nd] = 1.0;
                    for (size_t row = 0; row < nd; row++) {
                        double acc = 0;
                        for (size_t col = 0; col <= nd; col++) acc += th[row * (nd + 1) + col] * p[col];
                        out[k++] = acc;
                    }
                }
    }
    ref_image_store_f64(Y, out, (size_t)points);
done:
    free(size);
    free(theta);
    free(out);
    return st;
}
