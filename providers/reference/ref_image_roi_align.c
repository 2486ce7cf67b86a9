/*
 * RoiAlign (opsets 10, 16, 22): pools each region of interest of a
 * (N, C, H, W) feature map into an output_height x output_width grid of
 * bins. Every bin averages (or takes the max over) a sampling_ratio^2 grid
 * of bilinearly interpolated points; sampling_ratio 0 picks
 * ceil(bin size) points per axis.
 *
 * coordinate_transformation_mode: 'half_pixel' (the default from opset 16)
 * shifts ROI corners by -0.5 pixel; 'output_half_pixel' (opset 10's only
 * behaviour) does not, and then forces malformed ROIs to at least 1x1.
 *
 * Sampling points more than one pixel outside the map contribute zero;
 * points inside are clamped to the edge, as in the Mask R-CNN code every
 * runtime follows. In max mode the operator takes the largest *weighted
 * corner* value of each point (not the interpolated value): that is what
 * ONNX's reference and ONNX Runtime compute, and what the tests expect.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref_image.h"

/* One sampling point: four source offsets in the H*W plane and weights. */
typedef struct roi_point {
    int64_t pos[4];
    double w[4];
} roi_point;

static roi_point sample_point(double y, double x, int64_t height, int64_t width) {
    roi_point p;
    memset(&p, 0, sizeof p);
    if (y < -1.0 || y > (double)height || x < -1.0 || x > (double)width) return p; /* all weights zero */
    if (y < 0) y = 0;
    if (x < 0) x = 0;
    int64_t y_lo = (int64_t)y, x_lo = (int64_t)x, y_hi, x_hi;
    if (y_lo >= height - 1) {
        y_hi = y_lo = height - 1;
        y = (double)y_lo;
    } else {
        y_hi = y_lo + 1;
    }
    if (x_lo >= width - 1) {
        x_hi = x_lo = width - 1;
        x = (double)x_lo;
    } else {
        x_hi = x_lo + 1;
    }
    double ly = y - (double)y_lo, lx = x - (double)x_lo, hy = 1.0 - ly, hx = 1.0 - lx;
    p.pos[0] = y_lo * width + x_lo;
    p.pos[1] = y_lo * width + x_hi;
    p.pos[2] = y_hi * width + x_lo;
    p.pos[3] = y_hi * width + x_hi;
    p.w[0] = hy * hx;
    p.w[1] = hy * lx;
    p.w[2] = ly * hx;
    p.w[3] = ly * lx;
    return p;
}

/* Points per bin along one axis; bounded so that a huge ROI cannot make
 * one bin take practically forever. */
#define ROI_MAX_GRID 4096
#define ROI_MAX_WORK 1073741824.0 /* sample reads over all ROIs */

tsr_status *ref_image_roi_align(ref_ctx *c) {
    const tsr_tensor *X = ref_in(c, 0), *R = ref_in(c, 1), *B = ref_in(c, 2);
    if (!X || !R || !B) return ref_err(c, TSR_ERR_INVALID_MODEL, "RoiAlign needs inputs X, rois, batch_indices");
    if (X->rank != 4)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X must be 4-D (N, C, H, W), got rank %d", (int)X->rank);
    if (R->rank != 2 || R->dims[1] != 4)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "rois must have shape (num_rois, 4)");
    if (B->rank != 1 || B->dims[0] != R->dims[0])
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "batch_indices must have shape (%lld,) to match rois",
                       (long long)R->dims[0]);
    int64_t oh = ref_attr_int(c, "output_height", 1), ow = ref_attr_int(c, "output_width", 1);
    int64_t sampling = ref_attr_int(c, "sampling_ratio", 0);
    double scale = ref_attr_float(c, "spatial_scale", 1.0f);
    const char *mode = ref_attr_str(c, "mode", "avg");
    const char *ctm =
        ref_attr_str(c, "coordinate_transformation_mode", ref_opset(c) >= 16 ? "half_pixel" : "output_half_pixel");
    if (oh < 1 || ow < 1 || oh > REF_IMAGE_MAX_ELEMS || ow > REF_IMAGE_MAX_ELEMS)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "output_height and output_width must be >= 1");
    if (sampling < 0 || sampling > ROI_MAX_GRID)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "sampling_ratio %lld is out of range", (long long)sampling);
    bool max_mode = !strcmp(mode, "max");
    if (!max_mode && strcmp(mode, "avg"))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "mode '%s' is not avg or max", mode);
    bool half_pixel = !strcmp(ctm, "half_pixel");
    if (!half_pixel && strcmp(ctm, "output_half_pixel"))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                       "coordinate_transformation_mode '%s' is not half_pixel or "
                       "output_half_pixel",
                       ctm);

    int64_t N = X->dims[0], C = X->dims[1], H = X->dims[2], W = X->dims[3];
    int64_t nr = R->dims[0];
    int64_t ydims[4] = {nr, C, oh, ow}, total;
    if (!ref_image_numel(ydims, 4, INT64_MAX / 16, &total))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "output is too large");
    tsr_tensor *Y;
    tsr_status *st = ref_out(c, 0, X->elem_type, 4, ydims, &Y);
    if (st || total == 0) return st;
    if (H == 0 || W == 0) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X has an empty spatial dimension");

    double *x = NULL, *rois = NULL, *y = NULL;
    int64_t *bi = NULL;
    double *acc = NULL;
    size_t nb = 0;
    if ((st = ref_image_f64(c, X, "X", &x)) || (st = ref_image_f64(c, R, "rois", &rois)) ||
        (st = ref_tensor_i64(c, B, &bi, &nb)))
        goto done;
    y = malloc((size_t)total * sizeof *y);
    acc = malloc((size_t)C * sizeof *acc);
    if (!y || !acc) {
        st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    double offset = half_pixel ? 0.5 : 0.0;
    double work = 0.0;
    for (int64_t r = 0; r < nr; r++) {
        if (bi[r] < 0 || bi[r] >= N) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "batch_indices[%lld] = %lld is outside [0, %lld)", (long long)r,
                         (long long)bi[r], (long long)N);
            goto done;
        }
        const double *roi = rois + r * 4;
        double x0 = roi[0] * scale - offset, y0 = roi[1] * scale - offset;
        double rw = roi[2] * scale - offset - x0, rh = roi[3] * scale - offset - y0;
        if (!half_pixel) {
            rw = rw > 1.0 ? rw : 1.0;
            rh = rh > 1.0 ? rh : 1.0;
        }
        if (!isfinite(x0) || !isfinite(y0) || !isfinite(rw) || !isfinite(rh)) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "ROI %lld has non-finite coordinates", (long long)r);
            goto done;
        }
        double bh = rh / (double)oh, bw = rw / (double)ow;
        double gh_f = sampling > 0 ? (double)sampling : ceil(bh);
        double gw_f = sampling > 0 ? (double)sampling : ceil(bw);
        if (!(gh_f <= ROI_MAX_GRID && gw_f <= ROI_MAX_GRID)) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "ROI %lld needs a %g x %g sampling grid per bin, more than %d",
                         (long long)r, gh_f, gw_f, ROI_MAX_GRID);
            goto done;
        }
        /* The work of the ROIs, bounded: a 4096 x 4096 grid in each of
         * many bins is valid per bin but runs for minutes (found by
         * fuzzing); a real detector's 1,000 ROIs of 7x7 bins of 2x2 points
         * over 256 channels read 50M samples. */
        work += (double)oh * (double)ow * (gh_f > 1 ? gh_f : 1) * (gw_f > 1 ? gw_f : 1) * (double)(C > 1 ? C : 1);
        if (work > ROI_MAX_WORK) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                         "the ROIs up to %lld need more than 2^30 samples (%g x %g bins of %g x %g samples over "
                         "%lld channels for this one)",
                         (long long)r, (double)oh, (double)ow, gh_f, gw_f, (long long)C);
            goto done;
        }
        /* A negative-size ROI samples nothing (the grid rounds to 0). */
        int64_t gh = gh_f > 0 ? (int64_t)gh_f : 0, gw = gw_f > 0 ? (int64_t)gw_f : 0;
        int64_t count = gh * gw > 1 ? gh * gw : 1;
        /* Each sampling point is computed once and read by every channel. */
        for (int64_t ph = 0; ph < oh; ph++)
            for (int64_t pw = 0; pw < ow; pw++) {
                /* up to 2^30 samples in all: look at cancellation per bin */
                if (ref_should_stop(c)) {
                    st = ref_stopped(c);
                    goto done;
                }
                for (int64_t ch = 0; ch < C; ch++) acc[ch] = 0.0;
                for (int64_t iy = 0; iy < gh; iy++) {
                    double yy = y0 + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
                    for (int64_t ix = 0; ix < gw; ix++) {
                        double xx = x0 + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
                        roi_point p = sample_point(yy, xx, H, W);
                        bool first = iy == 0 && ix == 0;
                        for (int64_t ch = 0; ch < C; ch++) {
                            const double *plane = x + (size_t)((bi[r] * C + ch) * H * W);
                            if (max_mode) {
                                double v = p.w[0] * plane[p.pos[0]];
                                for (int q = 1; q < 4; q++) {
                                    double u = p.w[q] * plane[p.pos[q]];
                                    v = u > v ? u : v;
                                }
                                acc[ch] = first || v > acc[ch] ? v : acc[ch];
                            } else {
                                for (int q = 0; q < 4; q++) acc[ch] += p.w[q] * plane[p.pos[q]];
                            }
                        }
                    }
                }
                for (int64_t ch = 0; ch < C; ch++)
                    y[(size_t)(((r * C + ch) * oh + ph) * ow + pw)] = max_mode ? acc[ch] : acc[ch] / (double)count;
            }
    }
    ref_image_store_f64(Y, y, (size_t)total);
done:
    free(x);
    free(rois);
    free(y);
    free(bi);
    free(acc);
    return st;
}
