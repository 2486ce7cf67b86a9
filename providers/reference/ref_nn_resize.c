/*
 * Resize (opsets 10, 11, 13, 18, 19) and Upsample (opsets 1, 7, 9) for the
 * reference provider.
 *
 * Interpolation is separable: for every axis and every output index we work
 * out the input indices that contribute and their weights (the "taps"),
 * following the ONNX reference implementation step for step — coordinate
 * transform, the (0, 1] ratio convention, edge clamping, exclude_outside,
 * antialias filters — and each output element is the weighted sum over the
 * product of its axes' taps. Math is in double on a double copy of X.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_nn.h"

typedef enum { MODE_NEAREST, MODE_LINEAR, MODE_CUBIC } rs_mode;
typedef enum {
    CT_HALF_PIXEL,
    CT_HALF_PIXEL_SYMMETRIC,
    CT_PYTORCH_HALF_PIXEL,
    CT_ALIGN_CORNERS,
    CT_ASYMMETRIC,
    CT_TF_HALF_PIXEL_FOR_NN,
    CT_TF_CROP_AND_RESIZE
} rs_coord;
typedef enum {
    NR_ROUND_PREFER_FLOOR,
    NR_ROUND_PREFER_CEIL,
    NR_FLOOR,
    NR_CEIL,
    NR_SIMPLE /* before opset 11: floor when upsampling, ceil when downsampling */
} rs_nearest;

typedef struct rs_params {
    rs_mode mode;
    rs_coord coord;
    rs_nearest nearest;
    double cubic_a;
    bool exclude_outside;
    bool antialias;
    double extrapolation;
} rs_params;

/* The taps of one axis: for output index o, cnt[o] pairs (idx, w) at
 * [o * maxt, ...), or extrap[o] when the point lies outside the crop. */
typedef struct rs_taps {
    int64_t maxt;
    int64_t *idx;
    double *w;
    int *cnt;
    bool *extrap;
} rs_taps;

static void taps_free(rs_taps *t) {
    free(t->idx);
    free(t->w);
    free(t->cnt);
    free(t->extrap);
}

/* Keys cubic kernel at distance x, for the antialiased (stretched) filter. */
static double cubic_kernel(double x, double a) {
    x = fabs(x);
    if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
    if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    return 0.0;
}

/* Fills the taps of one axis. scale is the factor the coordinate transform
 * uses (which need not be out/in when scales were given). */
static tsr_status *axis_taps(ref_ctx *c, const rs_params *p, int64_t in, int64_t out, double scale, double roi_start,
                             double roi_end, rs_taps *t) {
    double s_aa = scale < 1.0 ? scale : 1.0; /* antialias stretches only when shrinking */
    int64_t lo_i = 0, hi_i = 0;              /* tap offsets relative to the base */
    if (p->mode == MODE_NEAREST) {
        t->maxt = 1;
    } else if (!p->antialias) {
        t->maxt = p->mode == MODE_LINEAR ? 2 : 4;
        lo_i = p->mode == MODE_LINEAR ? 0 : -1;
        hi_i = lo_i + t->maxt;
    } else if (p->mode == MODE_LINEAR) {
        lo_i = (int64_t)floor(-1.0 / s_aa) + 1;
        hi_i = lo_i + 2 - 2 * lo_i;
        t->maxt = hi_i - lo_i;
    } else {
        lo_i = (int64_t)floor(-2.0 / s_aa) + 1;
        hi_i = 2 - lo_i;
        t->maxt = hi_i - lo_i;
    }
    size_t no = (size_t)(out ? out : 1);
    t->idx = malloc(no * (size_t)t->maxt * sizeof *t->idx);
    t->w = malloc(no * (size_t)t->maxt * sizeof *t->w);
    t->cnt = malloc(no * sizeof *t->cnt);
    t->extrap = malloc(no * sizeof *t->extrap);
    if (!t->idx || !t->w || !t->cnt || !t->extrap) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");

    /* The reference's "output width" is scale * in, not the rounded size. */
    double ow = scale * (double)in;
    /* An axis left alone maps each index to itself. Only the transforms
     * with a half-pixel offset (tf_half_pixel_for_nn with nearest_mode ceil
     * would shift by one) or a crop box could say otherwise, and ONNX
     * Runtime, like the frameworks these modes come from, leaves such axes
     * untouched. */
    if (in == out && scale == 1.0 && p->coord != CT_TF_CROP_AND_RESIZE) {
        for (int64_t o = 0; o < out; o++) {
            t->idx[o * t->maxt] = o;
            t->w[o * t->maxt] = 1.0;
            t->cnt[o] = 1;
            t->extrap[o] = false;
        }
        return NULL;
    }
    for (int64_t o = 0; o < out; o++) {
        double x = (double)o, xo;
        t->extrap[o] = false;
        t->cnt[o] = 0;
        switch (p->coord) {
        case CT_ALIGN_CORNERS: xo = ow == 1 ? 0.0 : x * (double)(in - 1) / (ow - 1); break;
        case CT_ASYMMETRIC: xo = x / scale; break;
        case CT_TF_HALF_PIXEL_FOR_NN: xo = (x + 0.5) / scale; break;
        case CT_TF_CROP_AND_RESIZE:
            if (ow == 1) xo = (roi_end - roi_start) * (double)(in - 1) / 2;
            else xo = x * (roi_end - roi_start) * (double)(in - 1) / (ow - 1);
            xo += roi_start * (double)(in - 1);
            if (xo < 0 || xo > (double)(in - 1)) {
                t->extrap[o] = true;
                continue;
            }
            break;
        case CT_PYTORCH_HALF_PIXEL: xo = ow == 1 ? -0.5 : (x + 0.5) / scale - 0.5; break;
        case CT_HALF_PIXEL_SYMMETRIC: {
            double adj = (double)out / ow, center = (double)in / 2;
            xo = center * (1 - adj) + (x + 0.5) / scale - 0.5;
            break;
        }
        case CT_HALF_PIXEL:
        default: xo = (x + 0.5) / scale - 0.5; break;
        }
        int64_t *ti = t->idx + o * t->maxt;
        double *tw = t->w + o * t->maxt;
        if (p->mode == MODE_NEAREST) {
            double fl = floor(xo), fr = xo - fl;
            int64_t i;
            switch (p->nearest) {
            case NR_SIMPLE: i = scale < 1.0 ? (int64_t)ceil(xo) : (int64_t)xo; break;
            case NR_FLOOR: i = (int64_t)fl; break;
            case NR_CEIL: i = (int64_t)ceil(xo); break;
            case NR_ROUND_PREFER_CEIL: i = (int64_t)fl + (fr >= 0.5); break;
            case NR_ROUND_PREFER_FLOOR:
            default: i = (int64_t)fl + (fr > 0.5); break;
            }
            ti[0] = i < 0 ? 0 : i >= in ? in - 1 : i;
            tw[0] = 1.0;
            t->cnt[o] = 1;
            continue;
        }
        /* The reference keeps the ratio in (0, 1]: an integral coordinate
         * is the right end of the interval that starts one to its left. */
        double base = floor(xo);
        if (base == xo) base -= 1;
        double r = xo - base;
        double sum = 0;
        int64_t n = 0;
        for (int64_t k = lo_i; k < hi_i; k++, n++) {
            double w;
            if (p->mode == MODE_LINEAR)
                w = p->antialias ? fmax(0.0, 1 - fabs(((double)k - r) * s_aa)) : (k == 0 ? 1 - r : r);
            else if (p->antialias) w = cubic_kernel(s_aa * ((double)k - r), p->cubic_a);
            else w = cubic_kernel((double)k - r, p->cubic_a);
            int64_t i = (int64_t)base + k;
            if (p->exclude_outside && (i < 0 || i >= in)) w = 0;
            ti[n] = i < 0 ? 0 : i >= in ? in - 1 : i;
            tw[n] = w;
            sum += w;
        }
        /* Antialias filters are normalised; exclude_outside renormalises
         * what is left. Plain linear and cubic weights already sum to 1. */
        if ((p->antialias || p->exclude_outside) && sum != 0)
            for (int64_t k = 0; k < n; k++) tw[k] /= sum;
        /* Drop zero weights: they are most taps on unscaled axes. */
        int m = 0;
        for (int64_t k = 0; k < n; k++)
            if (tw[k] != 0) {
                ti[m] = ti[k];
                tw[m] = tw[k];
                m++;
            }
        if (m == 0) { /* all weights zero: keep one tap so the sum is 0 */
            tw[0] = 0;
            m = 1;
        }
        t->cnt[o] = m;
    }
    return NULL;
}

/* Resamples X to out_dims with per-axis scales and crop boxes. */
static tsr_status *resample(ref_ctx *c, const rs_params *p, const tsr_tensor *X, const int64_t *out_dims,
                            const double *scales, const double *roi) {
    int32_t rank = X->rank;
    tsr_tensor *Y;
    tsr_status *st = ref_out(c, 0, X->elem_type, rank, out_dims, &Y);
    if (st) return st;
    size_t total = (size_t)ref_numel(Y);
    if (total == 0) return NULL;
    if (ref_numel(X) == 0) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "cannot resize an empty tensor");
    rs_taps taps[REF_MAX_RANK];
    memset(taps, 0, sizeof taps);
    double *x = NULL, *y = NULL;
    for (int32_t d = 0; d < rank; d++) {
        double rs = roi ? roi[d] : 0.0, re = roi ? roi[rank + d] : 1.0;
        if ((st = axis_taps(c, p, X->dims[d], out_dims[d], scales[d], rs, re, &taps[d]))) goto done;
    }
    if ((st = ref_tensor_f64(c, X, &x))) goto done;
    y = malloc(total * sizeof *y);
    if (!y) {
        st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    int64_t istr[REF_MAX_RANK], o[REF_MAX_RANK] = {0}, t[REF_MAX_RANK];
    ref_strides(rank, X->dims, istr);
    for (size_t j = 0; j < total; j++) {
        bool ex = false;
        for (int32_t d = 0; d < rank; d++) ex = ex || taps[d].extrap[o[d]];
        double acc = 0;
        if (ex) {
            acc = p->extrapolation;
        } else {
            for (int32_t d = 0; d < rank; d++) t[d] = 0;
            for (;;) {
                double w = 1;
                int64_t off = 0;
                for (int32_t d = 0; d < rank; d++) {
                    int64_t k = o[d] * taps[d].maxt + t[d];
                    w *= taps[d].w[k];
                    off += taps[d].idx[k] * istr[d];
                }
                acc += w * x[off];
                int32_t d = rank - 1;
                while (d >= 0 && ++t[d] >= taps[d].cnt[o[d]]) {
                    t[d] = 0;
                    d--;
                }
                if (d < 0) break;
            }
        }
        y[j] = acc;
        for (int32_t d = rank - 1; d >= 0; d--) {
            if (++o[d] < out_dims[d]) break;
            o[d] = 0;
        }
    }
    /* Integer outputs truncate, as the reference's astype does. */
    ref_nn_f64_store(Y, y, total);
done:
    for (int32_t d = 0; d < rank; d++) taps_free(&taps[d]);
    free(x);
    free(y);
    return st;
}

static tsr_status *parse_mode(ref_ctx *c, rs_params *p, const char *m) {
    if (!strcmp(m, "nearest")) p->mode = MODE_NEAREST;
    else if (!strcmp(m, "linear") || !strcmp(m, "bilinear") || !strcmp(m, "trilinear")) p->mode = MODE_LINEAR;
    else if (!strcmp(m, "cubic") || !strcmp(m, "bicubic")) p->mode = MODE_CUBIC;
    else return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "unknown mode '%s'", m);
    return NULL;
}

/* Reads a float tensor of n values as doubles into out (n known). */
static void load_doubles(const tsr_tensor *t, size_t n, double *out) {
    for (size_t i = 0; i < n; i++) out[i] = ref_load(t->elem_type, t->data, i);
}

/* A size worked out in floating point, or -1 when it is no valid size
 * (negative, NaN, or past int64: a hostile scale made 3e19, found by
 * fuzzing); converting such a value to int64 is undefined. */
static int64_t size_of(double v) { return v >= 0.0 && v < 9.2e18 ? (int64_t)v : -1; }

/* floor(in * scale), with the product taken in float as ONNX Runtime does,
 * so that e.g. 10 * 0.7f gives 7 rather than the 6.99999988 of double. */
static int64_t scaled_size(int64_t in, double scale) { return size_of(floorf((float)in * (float)scale)); }

/* The pre-opset-11 behaviour shared by Resize-10 and Upsample: asymmetric
 * coordinates, output size floor(in * scale). */
static tsr_status *resize_legacy(ref_ctx *c, const tsr_tensor *X, const double *scales, const char *mode) {
    rs_params p = {.coord = CT_ASYMMETRIC, .nearest = NR_SIMPLE, .cubic_a = -0.75};
    tsr_status *st = parse_mode(c, &p, mode);
    if (st) return st;
    if (p.mode == MODE_CUBIC) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "cubic mode needs opset 11");
    int64_t od[REF_MAX_RANK];
    for (int32_t d = 0; d < X->rank; d++) {
        if (!(scales[d] > 0)) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "scales must be positive");
        od[d] = scaled_size(X->dims[d], scales[d]);
        if (od[d] < 0)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "scale %g makes dimension %d too large", scales[d], (int)d);
    }
    return resample(c, &p, X, od, scales, NULL);
}

tsr_status *ref_nn_upsample(ref_ctx *c) {
    const tsr_tensor *X = ref_in(c, 0);
    if (!X) return ref_err(c, TSR_ERR_INVALID_MODEL, "Upsample needs an input");
    if (X->rank > REF_MAX_RANK) return ref_err(c, TSR_ERR_NOT_SUPPORTED, "rank too large");
    double scales[REF_MAX_RANK];
    int64_t opset = ref_opset(c);
    if (opset < 7) {
        /* Upsample-1: NCHW with height_scale and width_scale. */
        if (X->rank != 4) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "Upsample-1 needs a 4-D input");
        scales[0] = scales[1] = 1.0;
        scales[2] = ref_attr_float(c, "height_scale", 1.0f);
        scales[3] = ref_attr_float(c, "width_scale", 1.0f);
    } else if (opset < 9) {
        const float *f;
        size_t n = ref_attr_floats(c, "scales", &f);
        if (n != (size_t)X->rank)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "scales has %zu values for rank %d", n, (int)X->rank);
        for (size_t i = 0; i < n; i++) scales[i] = f[i];
    } else {
        const tsr_tensor *S = ref_in(c, 1);
        if (!S || ref_numel(S) != (uint64_t)X->rank)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "scales must have one value per axis");
        load_doubles(S, (size_t)X->rank, scales);
    }
    return resize_legacy(c, X, scales, ref_attr_str(c, "mode", "nearest"));
}

tsr_status *ref_nn_resize(ref_ctx *c) {
    const tsr_tensor *X = ref_in(c, 0);
    if (!X) return ref_err(c, TSR_ERR_INVALID_MODEL, "Resize needs an input");
    int32_t rank = X->rank;
    if (rank > REF_MAX_RANK) return ref_err(c, TSR_ERR_NOT_SUPPORTED, "rank too large");
    int64_t opset = ref_opset(c);
    double scales[REF_MAX_RANK];
    tsr_status *st;
    if (opset < 11) {
        const tsr_tensor *S = ref_in(c, 1);
        if (!S || ref_numel(S) != (uint64_t)rank)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "scales must have one value per axis");
        load_doubles(S, (size_t)rank, scales);
        return resize_legacy(c, X, scales, ref_attr_str(c, "mode", "nearest"));
    }

    rs_params p;
    memset(&p, 0, sizeof p);
    if ((st = parse_mode(c, &p, ref_attr_str(c, "mode", "nearest")))) return st;
    const char *ct = ref_attr_str(c, "coordinate_transformation_mode", "half_pixel");
    static const struct {
        const char *name;
        rs_coord v;
    } coords[] = {
        {"half_pixel", CT_HALF_PIXEL},
        {"half_pixel_symmetric", CT_HALF_PIXEL_SYMMETRIC},
        {"pytorch_half_pixel", CT_PYTORCH_HALF_PIXEL},
        {"align_corners", CT_ALIGN_CORNERS},
        {"asymmetric", CT_ASYMMETRIC},
        {"tf_half_pixel_for_nn", CT_TF_HALF_PIXEL_FOR_NN},
        {"tf_crop_and_resize", CT_TF_CROP_AND_RESIZE},
    };
    size_t ci = 0;
    while (ci < sizeof coords / sizeof coords[0] && strcmp(coords[ci].name, ct)) ci++;
    if (ci == sizeof coords / sizeof coords[0])
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "unknown coordinate_transformation_mode '%s'", ct);
    p.coord = coords[ci].v;
    const char *nm = ref_attr_str(c, "nearest_mode", "round_prefer_floor");
    if (!strcmp(nm, "round_prefer_floor")) p.nearest = NR_ROUND_PREFER_FLOOR;
    else if (!strcmp(nm, "round_prefer_ceil")) p.nearest = NR_ROUND_PREFER_CEIL;
    else if (!strcmp(nm, "floor")) p.nearest = NR_FLOOR;
    else if (!strcmp(nm, "ceil")) p.nearest = NR_CEIL;
    else return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "unknown nearest_mode '%s'", nm);
    p.cubic_a = ref_attr_float(c, "cubic_coeff_a", -0.75f);
    p.exclude_outside = ref_attr_int(c, "exclude_outside", 0) != 0;
    p.extrapolation = ref_attr_float(c, "extrapolation_value", 0.0f);
    p.antialias = ref_attr_int(c, "antialias", 0) != 0 && p.mode != MODE_NEAREST;

    /* axes (opset 18): scales, sizes and roi then cover only those axes. */
    int64_t axes[REF_MAX_RANK];
    const int64_t *av;
    size_t naxes = ref_attr_ints(c, "axes", &av);
    if (naxes == 0) {
        naxes = (size_t)rank;
        for (int32_t d = 0; d < rank; d++) axes[d] = d;
    } else {
        if (naxes > (size_t)rank) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "too many axes");
        for (size_t i = 0; i < naxes; i++)
            if (!ref_axis(av[i], rank, &axes[i]))
                return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld out of range", (long long)av[i]);
    }

    const tsr_tensor *R = ref_in(c, 1), *S = ref_in(c, 2), *Z = ref_in(c, 3);
    if (S && ref_numel(S) == 0) S = NULL;
    if (Z && ref_numel(Z) == 0) Z = NULL;
    if (!S == !Z) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "exactly one of scales and sizes is needed");

    double roi[2 * REF_MAX_RANK];
    bool have_roi = false;
    if (p.coord == CT_TF_CROP_AND_RESIZE) {
        for (int32_t d = 0; d < rank; d++) {
            roi[d] = 0.0;
            roi[rank + d] = 1.0;
        }
        if (R && ref_numel(R) > 0) {
            if (ref_numel(R) != 2 * naxes)
                return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "roi has %llu values for %zu axes",
                               (unsigned long long)ref_numel(R), naxes);
            for (size_t i = 0; i < naxes; i++) {
                roi[axes[i]] = ref_load(R->elem_type, R->data, i);
                roi[rank + axes[i]] = ref_load(R->elem_type, R->data, naxes + i);
            }
        }
        have_roi = true;
    }

    int64_t od[REF_MAX_RANK];
    for (int32_t d = 0; d < rank; d++) {
        od[d] = X->dims[d];
        scales[d] = 1.0;
    }
    if (S) {
        if (ref_numel(S) != naxes)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "scales has %llu values for %zu axes",
                           (unsigned long long)ref_numel(S), naxes);
        for (size_t i = 0; i < naxes; i++) {
            double s = ref_load(S->elem_type, S->data, i);
            if (!(s > 0)) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "scales must be positive");
            scales[axes[i]] = s;
            od[axes[i]] = scaled_size(X->dims[axes[i]], s);
            if (od[axes[i]] < 0)
                return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "scale %g makes axis %lld too large", s,
                               (long long)axes[i]);
        }
    } else {
        if (ref_numel(Z) != naxes)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "sizes has %llu values for %zu axes",
                           (unsigned long long)ref_numel(Z), naxes);
        for (size_t i = 0; i < naxes; i++) {
            int64_t in = X->dims[axes[i]];
            od[axes[i]] = ref_load_i64(Z->elem_type, Z->data, i);
            if (od[axes[i]] < 0) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "negative size");
            scales[axes[i]] = in ? (double)od[axes[i]] / (double)in : 1.0;
        }
        const char *kp = ref_attr_str(c, "keep_aspect_ratio_policy", "stretch");
        bool not_larger = !strcmp(kp, "not_larger"), not_smaller = !strcmp(kp, "not_smaller");
        if (!not_larger && !not_smaller && strcmp(kp, "stretch"))
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "unknown keep_aspect_ratio_policy '%s'", kp);
        if (not_larger || not_smaller) {
            /* One scale for all the axes, the smallest or largest asked
             * for; sizes round half up. */
            double s = scales[axes[0]];
            for (size_t i = 1; i < naxes; i++) {
                double v = scales[axes[i]];
                s = not_larger ? fmin(s, v) : fmax(s, v);
            }
            for (size_t i = 0; i < naxes; i++) {
                scales[axes[i]] = s;
                od[axes[i]] = size_of(s * (double)X->dims[axes[i]] + 0.5);
                if (od[axes[i]] < 0)
                    return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "the kept aspect ratio makes axis %lld too large",
                                   (long long)axes[i]);
            }
        }
    }
    return resample(c, &p, X, od, scales, have_roi ? roi : NULL);
}

/* Resize and Upsample take any numeric type (computed in double). */
int ref_nn_check_numeric(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size) {
    const tsr_value_info *x = host->node_input_count(node) > 0 ? host->node_input(node, 0) : NULL;
    int32_t t = x ? host->value_elem_type(x) : 0;
    if (t != 0 && !ref_is_float(t) && !ref_is_int(t)) {
        snprintf(why, why_size, "%s of element type %d is not implemented", host->node_op_type(node), (int)t);
        return TSR_DECLINE_TYPE;
    }
    return 0;
}
