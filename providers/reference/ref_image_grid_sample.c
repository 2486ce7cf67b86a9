/*
 * GridSample (opset 16: 2-D, modes bilinear/nearest/bicubic; opset 20 and
 * later: N-D, modes linear/nearest/cubic — both spellings are accepted at
 * every opset).
 *
 * Each output position reads one normalized coordinate per spatial axis
 * (innermost axis first, as the grid stores x before y). Along every axis
 * the coordinate becomes a few "taps": (source index or -1 for a zero
 * pixel, weight). The value is the sum over the tensor product of the
 * axes' taps, so all channels of a position share one tap table.
 *
 * Corner cases follow the ONNX reference implementation: coordinates
 * outside the border are first clamped (border) or reflected (reflection),
 * and then each integer tap index is again clamped or reflected, so cubic
 * taps near an edge read mirrored pixels. The one exception is cubic with
 * border padding, where only the taps are clamped, as PyTorch (whose
 * exported models use it) and ONNX Runtime compute it; the ONNX tests have
 * no such case.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_image.h"

enum gs_mode { GS_LINEAR, GS_NEAREST, GS_CUBIC };
enum gs_pad { GS_ZEROS, GS_BORDER, GS_REFLECTION };

/* Most taps along one axis (cubic), and most entries in the tap table of
 * one output position (taps^axes). */
#define GS_MAX_TAPS 4
#define GS_MAX_TABLE 4096

typedef struct gs_tap {
    int64_t index; /* -1: the tap reads a zero */
    double weight;
} gs_tap;

typedef struct gs_axis {
    int64_t size;
    double lo, hi; /* the border: [-0.5, size-0.5], or [0, size-1] with align_corners */
} gs_axis;

static bool parse_mode(const char *s, enum gs_mode *m) {
    if (!strcmp(s, "linear") || !strcmp(s, "bilinear")) *m = GS_LINEAR;
    else if (!strcmp(s, "nearest")) *m = GS_NEAREST;
    else if (!strcmp(s, "cubic") || !strcmp(s, "bicubic")) *m = GS_CUBIC;
    else return false;
    return true;
}

static bool parse_pad(const char *s, enum gs_pad *p) {
    if (!strcmp(s, "zeros")) *p = GS_ZEROS;
    else if (!strcmp(s, "border")) *p = GS_BORDER;
    else if (!strcmp(s, "reflection")) *p = GS_REFLECTION;
    else return false;
    return true;
}

/* Claim-time check of the two string attributes. */
int ref_image_check_grid_sample(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size) {
    const tsr_attr *a = host->node_attr_find(node, "mode");
    char buf[32];
    size_t n;
    if (a) {
        const char *s = host->attr_string(a, &n);
        enum gs_mode m;
        snprintf(buf, sizeof buf, "%.*s", (int)(n < 31 ? n : 31), s);
        if (!parse_mode(buf, &m)) {
            snprintf(why, why_size, "GridSample mode '%s' is not one of linear, nearest, cubic", buf);
            return TSR_DECLINE_ATTRIBUTE;
        }
    }
    a = host->node_attr_find(node, "padding_mode");
    if (a) {
        const char *s = host->attr_string(a, &n);
        enum gs_pad p;
        snprintf(buf, sizeof buf, "%.*s", (int)(n < 31 ? n : 31), s);
        if (!parse_pad(buf, &p)) {
            snprintf(why, why_size, "GridSample padding_mode '%s' is not one of zeros, border, reflection", buf);
            return TSR_DECLINE_ATTRIBUTE;
        }
    }
    const tsr_value_info *x = tsr_util_node_input(host, node, 0);
    int32_t t = x ? host->value_elem_type(x) : 0;
    if (t != 0 && !ref_is_float(t) && !ref_is_int(t) && t != TSR_BOOL) {
        snprintf(why, why_size, "GridSample of element type %d is not implemented", (int)t);
        return TSR_DECLINE_TYPE;
    }
    return 0;
}

/* Folds x back into [lo, hi] by mirroring at the borders, as often as it
 * takes. */
static double reflect(double x, double lo, double hi) {
    double range = hi - lo;
    if (!(range > 0)) return lo;
    if (x >= lo && x <= hi) return x;
    double dx = x < lo ? lo - x : x - hi;
    double flips = floor(dx / range), r = dx - flips * range;
    bool even = fmod(flips, 2.0) == 0.0;
    if (x < lo) return even ? lo + r : hi - r;
    return even ? hi - r : lo + r;
}

/* The source index an integer tap position reads, or -1 for zero. */
static int64_t pixel_index(double i, const gs_axis *ax, enum gs_pad pad) {
    double last = (double)(ax->size - 1);
    if (pad == GS_ZEROS) return (i >= 0 && i <= last) ? (int64_t)i : -1;
    if (pad == GS_REFLECTION) i = trunc(reflect(i, ax->lo, ax->hi));
    /* Border, and a guard for reflection's rounding at the edges. */
    if (i < 0) i = 0;
    if (i > last) i = last;
    return (int64_t)i;
}

/* Keys' cubic convolution weights (a = -0.75) for a point t in [0, 1)
 * past the second of four samples. */
static void cubic_weights(double t, double w[4]) {
    const double a = -0.75;
    double t1 = t + 1, t2 = 1 - t, t3 = 2 - t;
    w[0] = ((a * t1 - 5 * a) * t1 + 8 * a) * t1 - 4 * a;
    w[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
    w[2] = ((a + 2) * t2 - (a + 3)) * t2 * t2 + 1;
    w[3] = ((a * t3 - 5 * a) * t3 + 8 * a) * t3 - 4 * a;
}

/* Fills taps for one axis from the already-denormalized coordinate x;
 * returns the tap count. */
static int axis_taps(double x, const gs_axis *ax, enum gs_mode mode, enum gs_pad pad, gs_tap *taps) {
    int n = mode == GS_NEAREST ? 1 : mode == GS_LINEAR ? 2 : 4;
    if (isnan(x)) {
        for (int k = 0; k < n; k++) taps[k] = (gs_tap){-1, 0.0};
        return n;
    }
    if (mode == GS_NEAREST) x = nearbyint(x); /* halfway rounds to even, as the spec asks */
    if (mode == GS_CUBIC && pad == GS_BORDER) {
        /* Cubic with border padding clamps each tap, never the coordinate
         * (PyTorch's grid_sample, which ONNX Runtime matches): a point just
         * outside the border still blends in the pixels inside it. Beyond
         * -1 or size every tap reads the edge pixel, so clamping there
         * changes nothing and keeps the index arithmetic small. */
        x = x < -1.0 ? -1.0 : x > (double)ax->size ? (double)ax->size : x;
    } else if (x < ax->lo || x > ax->hi) {
        if (pad == GS_BORDER) x = x < 0 ? 0 : (double)(ax->size - 1);
        else if (pad == GS_REFLECTION) x = reflect(x, ax->lo, ax->hi);
    }
    /* With zero padding a far-away point reads only zeros; stop here so
     * that the index arithmetic below stays small. */
    if (!(x > -4.0 && x < (double)ax->size + 4.0)) {
        for (int k = 0; k < n; k++) taps[k] = (gs_tap){-1, 0.0};
        return n;
    }
    if (mode == GS_NEAREST) {
        taps[0] = (gs_tap){pixel_index(trunc(x), ax, pad), 1.0};
        return 1;
    }
    double x0 = floor(x), t = x - x0;
    if (mode == GS_LINEAR) {
        taps[0] = (gs_tap){pixel_index(x0, ax, pad), 1.0 - t};
        taps[1] = (gs_tap){pixel_index(x0 + 1, ax, pad), t};
        return 2;
    }
    double w[4];
    cubic_weights(t, w);
    for (int k = 0; k < 4; k++) taps[k] = (gs_tap){pixel_index(x0 - 1 + k, ax, pad), w[k]};
    return 4;
}

/* Normalized coordinate -> pixel coordinate. In nearest mode float grids
 * compute in float, as the ONNX reference does, so that ties land on the
 * pixel it picks; linear and cubic weights are continuous in the
 * coordinate, so they take it in double: a float coordinate is one more
 * rounding before the weights, and most outputs of a random grid came out
 * 1 ULP or more off the exact result. */
static double denormalize(double g, int64_t size, bool align, bool as_float) {
    if (as_float) {
        float gf = (float)g, s = (float)size;
        return align ? (double)((gf + 1.0f) / 2.0f * (s - 1.0f)) : (double)(((gf + 1.0f) * s - 1.0f) / 2.0f);
    }
    return align ? (g + 1.0) / 2.0 * (double)(size - 1) : ((g + 1.0) * (double)size - 1.0) / 2.0;
}

/* Linear taps along one axis with zeros or border padding, exactly as
 * axis_taps and pixel_index compute them (the float path's copy of their
 * linear case): index -1 reads a zero. */
static inline void linear_taps(double x, const gs_axis *ax, bool border, int64_t idx[2], double w[2]) {
    idx[0] = idx[1] = -1;
    w[0] = w[1] = 0.0;
    if (isnan(x)) return;
    if (border && (x < ax->lo || x > ax->hi)) x = x < 0 ? 0 : (double)(ax->size - 1);
    if (!(x > -4.0 && x < (double)ax->size + 4.0)) return;
    double x0 = floor(x), t = x - x0, last = (double)(ax->size - 1);
    for (int k = 0; k < 2; k++) {
        double i = x0 + k;
        if (border) idx[k] = (int64_t)(i < 0 ? 0 : i > last ? last : i);
        else idx[k] = (i >= 0 && i <= last) ? (int64_t)i : -1;
    }
    w[0] = 1.0 - t;
    w[1] = t;
}

/* Output pixels per block of the float path's tap table. */
#define GS_BLOCK 512

/* float X and grid, two spatial axes, linear mode, zeros or border
 * padding: the generic path's arithmetic exactly (weights in double from
 * the double coordinate, each product wW * wH, the sum in double in the
 * table's order skipping zero reads and zero weights, one rounding to
 * float) without its conversions of X and Y to double and its per-pixel
 * table expansion: for a block of output pixels the taps that count
 * (offset, weight), then every channel plane gathers through them. */
static tsr_status *grid_sample_linear_f32(ref_ctx *c, const tsr_tensor *X, const tsr_tensor *G, tsr_tensor *Y,
                                          const gs_axis *axes, bool align, bool border) {
    int64_t N = X->dims[0], C = X->dims[1], H = axes[0].size, W = axes[1].size;
    int64_t out_sp = G->dims[1] * G->dims[2], in_sp = H * W;
    int64_t(*off)[4] = malloc(GS_BLOCK * sizeof *off);
    double(*wt)[4] = malloc(GS_BLOCK * sizeof *wt);
    uint8_t *cnt = malloc(GS_BLOCK);
    tsr_status *st = NULL;
    if (!off || !wt || !cnt) {
        st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    const float *xs = X->data, *gs = G->data;
    float *ys = Y->data;
    for (int64_t n = 0; n < N; n++) {
        for (int64_t o0 = 0; o0 < out_sp; o0 += GS_BLOCK) {
            int64_t nb = out_sp - o0 < GS_BLOCK ? out_sp - o0 : GS_BLOCK;
            for (int64_t j = 0; j < nb; j++) {
                const float *gp = gs + (size_t)((n * out_sp + o0 + j) * 2);
                int64_t ih[2], iw[2];
                double wh[2], ww[2];
                linear_taps(denormalize(gp[1], H, align, false), &axes[0], border, ih, wh);
                linear_taps(denormalize(gp[0], W, align, false), &axes[1], border, iw, ww);
                int k = 0;
                for (int a = 0; a < 2; a++) {
                    for (int b = 0; b < 2; b++) {
                        double w = ww[b] * wh[a];
                        if (ih[a] < 0 || iw[b] < 0 || w == 0.0) continue;
                        off[j][k] = ih[a] * W + iw[b];
                        wt[j][k] = w;
                        k++;
                    }
                }
                cnt[j] = (uint8_t)k;
            }
            for (int64_t ch = 0; ch < C; ch++) {
                const float *xc = xs + (size_t)((n * C + ch) * in_sp);
                float *yc = ys + (size_t)((n * C + ch) * out_sp + o0);
                for (int64_t j = 0; j < nb; j++) {
                    double acc = 0.0;
                    for (int k = 0; k < cnt[j]; k++) acc += wt[j][k] * (double)xc[off[j][k]];
                    yc[j] = (float)acc;
                }
            }
        }
    }
done:
    free(off);
    free(wt);
    free(cnt);
    return st;
}

tsr_status *ref_image_grid_sample(ref_ctx *c) {
    const tsr_tensor *X = ref_in(c, 0), *G = ref_in(c, 1);
    if (!X || !G) return ref_err(c, TSR_ERR_INVALID_MODEL, "GridSample needs inputs X and grid");
    enum gs_mode mode;
    enum gs_pad pad;
    const char *ms = ref_attr_str(c, "mode", ref_opset(c) >= 20 ? "linear" : "bilinear");
    const char *ps = ref_attr_str(c, "padding_mode", "zeros");
    if (!parse_mode(ms, &mode)) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "unknown mode '%s'", ms);
    if (!parse_pad(ps, &pad)) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "unknown padding_mode '%s'", ps);
    bool align = ref_attr_int(c, "align_corners", 0) != 0;

    if (X->rank < 3) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X must have rank >= 3, got %d", (int)X->rank);
    size_t r = (size_t)X->rank - 2;
    if (G->rank != X->rank || G->dims[0] != X->dims[0] || G->dims[G->rank - 1] != (int64_t)r)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                       "grid must have rank %d and shape (%lld, output dims..., %zu) for X of "
                       "rank %d",
                       (int)X->rank, (long long)X->dims[0], r, (int)X->rank);
    if (!ref_is_float(G->elem_type)) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "grid must be a float tensor");
    int taps_per_axis = mode == GS_NEAREST ? 1 : mode == GS_LINEAR ? 2 : 4;
    size_t table = 1;
    for (size_t d = 0; d < r; d++) {
        table *= (size_t)taps_per_axis;
        if (table > GS_MAX_TABLE)
            return ref_err(c, TSR_ERR_NOT_SUPPORTED, "%zu spatial axes are too many for this mode", r);
    }

    int64_t N = X->dims[0], C = X->dims[1];
    int64_t ydims[REF_MAX_RANK];
    ydims[0] = N;
    ydims[1] = C;
    for (size_t d = 0; d < r; d++) ydims[2 + d] = G->dims[1 + d];
    /* An empty batch lets the other dims be anything: check the products. */
    int64_t in_sp, out_sp, total;
    if (!ref_image_numel(X->dims + 2, r, INT64_MAX / 16, &in_sp) ||
        !ref_image_numel(G->dims + 1, r, INT64_MAX / 16, &out_sp) ||
        !ref_image_numel(ydims, r + 2, INT64_MAX / 16, &total))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X or grid has a size too large to index");
    tsr_tensor *Y;
    tsr_status *st = ref_out(c, 0, X->elem_type, X->rank, ydims, &Y);
    if (st || total == 0) return st;
    if (in_sp == 0) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X has an empty spatial dimension");

    gs_axis axes[REF_MAX_RANK];
    for (size_t d = 0; d < r; d++) {
        int64_t s = X->dims[2 + d];
        axes[d] = (gs_axis){s, align ? 0.0 : -0.5, align ? (double)(s - 1) : (double)s - 0.5};
    }
    if (X->elem_type == TSR_FLOAT && G->elem_type == TSR_FLOAT && r == 2 && mode == GS_LINEAR && pad != GS_REFLECTION)
        return grid_sample_linear_f32(c, X, G, Y, axes, align, pad == GS_BORDER);
    double *x = NULL, *g = NULL, *y = NULL;
    int64_t *t_off = NULL;
    double *t_w = NULL;
    if ((st = ref_image_f64(c, X, "X", &x)) || (st = ref_image_f64(c, G, "grid", &g))) goto done;
    y = malloc((size_t)total * sizeof *y);
    t_off = malloc(table * sizeof *t_off);
    t_w = malloc(table * sizeof *t_w);
    if (!y || !t_off || !t_w) {
        st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    bool as_float = G->elem_type != TSR_DOUBLE && mode == GS_NEAREST;
    for (int64_t n = 0; n < N; n++) {
        for (int64_t o = 0; o < out_sp; o++) {
            const double *gp = g + (size_t)((n * out_sp + o) * (int64_t)r);
            gs_tap taps[REF_MAX_RANK][GS_MAX_TAPS];
            for (size_t d = 0; d < r; d++) {
                double px = denormalize(gp[r - 1 - d], axes[d].size, align, as_float);
                axis_taps(px, &axes[d], mode, pad, taps[d]);
            }
            /* Expand the per-axis taps into the table (offset, weight);
             * offset -1 marks a zero read. */
            for (size_t e = 0; e < table; e++) {
                size_t rest = e;
                int64_t off = 0, stride = 1;
                double w = 1.0;
                bool zero = false;
                for (size_t d = r; d-- > 0;) {
                    const gs_tap *tp = &taps[d][rest % (size_t)taps_per_axis];
                    rest /= (size_t)taps_per_axis;
                    w *= tp->weight;
                    if (tp->index < 0) zero = true;
                    else off += tp->index * stride;
                    stride *= axes[d].size;
                }
                t_off[e] = zero ? -1 : off;
                t_w[e] = w;
            }
            for (int64_t ch = 0; ch < C; ch++) {
                const double *xc = x + (size_t)((n * C + ch) * in_sp);
                double acc = 0.0;
                for (size_t e = 0; e < table; e++)
                    if (t_off[e] >= 0 && t_w[e] != 0.0) acc += t_w[e] * xc[t_off[e]];
                y[(size_t)((n * C + ch) * out_sp + o)] = acc;
            }
        }
    }
    ref_image_store_f64(Y, y, (size_t)total);
done:
    free(x);
    free(g);
    free(y);
    free(t_off);
    free(t_w);
    return st;
}
