/* Resize (and Upsample) of a 4-D plain float tensor as a C loop, for the
 * coordinate mappings oneDNN's resampling does not have: asymmetric,
 * align_corners, tf_half_pixel_for_nn, nearest with floor/ceil or ties,
 * fractional factors. ONNX's formulas (Operators.md, Resize): each output
 * coordinate maps to an input coordinate by the transformation mode; linear
 * reads the two neighbours clamped to the edge, nearest rounds by
 * nearest_mode. Per-axis index and weight tables are made once at build;
 * the run is then a gather with at most four reads per output. */
#include <math.h>
#include <string.h>

#include "odn.h"

typedef struct axis_map {
    int64_t *i0, *i1; /* input indices per output index */
    float *w;         /* weight of i1 (linear); 0 for nearest */
} axis_map;

typedef struct resize_loop {
    int64_t planes, ih, iw, oh, ow; /* planes: output N * C */
    axis_map ym, xm;
    /* N and C resized too (only by sizes known at run time: the claim keeps
     * constant scales and sizes from doing so): output plane (n, c) blends
     * input planes nm/cm pick; ic, oc the channel counts */
    bool mapped;
    int64_t ic, oc;
    axis_map nm, cm;
} resize_loop;

typedef enum { MAP_HALF_PIXEL, MAP_PYTORCH, MAP_ALIGN, MAP_ASYM, MAP_TF_NN } coord_mode;

/* ONNX's length_resized is in * scale, unrounded (out / in * in with sizes). */
static double source_coord(coord_mode m, int64_t x, int64_t in, double scale) {
    double out = (double)in * scale;
    switch (m) {
    case MAP_PYTORCH: return out > 1 ? ((double)x + 0.5) / scale - 0.5 : 0.0;
    case MAP_ALIGN: return out > 1 ? (double)x * (double)(in - 1) / (out - 1) : 0.0;
    case MAP_ASYM: return (double)x / scale;
    case MAP_TF_NN: return ((double)x + 0.5) / scale;
    default: return ((double)x + 0.5) / scale - 0.5;
    }
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

typedef enum { ROUND_PREFER_FLOOR, ROUND_PREFER_CEIL, ROUND_FLOOR, ROUND_CEIL } round_mode;

static int64_t round_nearest(round_mode r, double v) {
    switch (r) {
    case ROUND_FLOOR: return (int64_t)floor(v);
    case ROUND_CEIL: return (int64_t)ceil(v);
    case ROUND_PREFER_CEIL: return (int64_t)floor(v + 0.5);
    default: return v == floor(v) + 0.5 ? (int64_t)floor(v) : (int64_t)floor(v + 0.5);
    }
}

static bool make_map(odn_plan *p, axis_map *m, coord_mode cm, round_mode rm, bool linear, int64_t in, int64_t out,
                     double scale) {
    m->i0 = odn_plan_alloc(p, (size_t)out * sizeof(int64_t));
    m->i1 = odn_plan_alloc(p, (size_t)out * sizeof(int64_t));
    m->w = odn_plan_alloc(p, (size_t)out * sizeof(float));
    if (!m->i0 || !m->i1 || !m->w) return false;
    for (int64_t o = 0; o < out; o++) {
        double s = source_coord(cm, o, in, scale);
        if (linear) {
            s = s < 0 ? 0 : s > (double)(in - 1) ? (double)(in - 1) : s;
            int64_t lo = (int64_t)floor(s);
            m->i0[o] = lo;
            m->i1[o] = lo + 1 < in ? lo + 1 : in - 1;
            m->w[o] = (float)(s - (double)lo);
        } else {
            m->i0[o] = m->i1[o] = clamp64(round_nearest(rm, s), 0, in - 1);
            m->w[o] = 0.0f;
        }
    }
    return true;
}

static tsr_status *run_resize(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const resize_loop *l = ctx;
    void *px = NULL, *py = NULL;
    dnnl_memory_get_data_handle(src, &px);
    dnnl_memory_get_data_handle(dst, &py);
    const float *x = px;
    float *y = py;
    int64_t rows = l->planes * l->oh;
    if (l->mapped) {
#pragma omp parallel for if (rows * l->ow > 32768) schedule(static)
        for (int64_t r = 0; r < rows; r++) {
            int64_t plane = r / l->oh, oy = r % l->oh, on = plane / l->oc, oc = plane % l->oc;
            const int64_t ns[2] = {l->nm.i0[on], l->nm.i1[on]}, cs[2] = {l->cm.i0[oc], l->cm.i1[oc]};
            const float *a[4], *b[4];
            for (int k = 0; k < 4; k++) {
                int64_t ip = ns[k >> 1] * l->ic + cs[k & 1];
                a[k] = x + (ip * l->ih + l->ym.i0[oy]) * l->iw;
                b[k] = x + (ip * l->ih + l->ym.i1[oy]) * l->iw;
            }
            float wy = l->ym.w[oy], wn = l->nm.w[on], wc = l->cm.w[oc];
            float *out = y + r * l->ow;
            for (int64_t ox = 0; ox < l->ow; ox++) {
                int64_t c0 = l->xm.i0[ox], c1 = l->xm.i1[ox];
                float wx = l->xm.w[ox], v[4];
                for (int k = 0; k < 4; k++) {
                    float top = a[k][c0] + wx * (a[k][c1] - a[k][c0]), bottom = b[k][c0] + wx * (b[k][c1] - b[k][c0]);
                    v[k] = top + wy * (bottom - top);
                }
                float n0 = v[0] + wc * (v[1] - v[0]), n1 = v[2] + wc * (v[3] - v[2]);
                out[ox] = n0 + wn * (n1 - n0);
            }
        }
        return NULL;
    }
#pragma omp parallel for if (rows * l->ow > 32768) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        int64_t plane = r / l->oh, oy = r % l->oh;
        const float *a = x + (plane * l->ih + l->ym.i0[oy]) * l->iw, *b = x + (plane * l->ih + l->ym.i1[oy]) * l->iw;
        float wy = l->ym.w[oy];
        float *out = y + r * l->ow;
        for (int64_t ox = 0; ox < l->ow; ox++) {
            int64_t c0 = l->xm.i0[ox], c1 = l->xm.i1[ox];
            float wx = l->xm.w[ox];
            float top = a[c0] + wx * (a[c1] - a[c0]), bottom = b[c0] + wx * (b[c1] - b[c0]);
            out[ox] = top + wy * (bottom - top);
        }
    }
    return NULL;
}

static coord_mode coord_mode_of(const tsr_node *n, bool upsample) {
    if (upsample || odn_host->node_opset(n) < 11) return MAP_ASYM;
    if (odn_attr_string_is(n, "coordinate_transformation_mode", "pytorch_half_pixel", false)) return MAP_PYTORCH;
    if (odn_attr_string_is(n, "coordinate_transformation_mode", "align_corners", false)) return MAP_ALIGN;
    if (odn_attr_string_is(n, "coordinate_transformation_mode", "asymmetric", false)) return MAP_ASYM;
    if (odn_attr_string_is(n, "coordinate_transformation_mode", "tf_half_pixel_for_nn", false)) return MAP_TF_NN;
    return MAP_HALF_PIXEL;
}

static round_mode round_mode_of(const tsr_node *n, bool upsample) {
    if (upsample || odn_host->node_opset(n) < 11) return ROUND_FLOOR;
    if (odn_attr_string_is(n, "nearest_mode", "round_prefer_ceil", false)) return ROUND_PREFER_CEIL;
    if (odn_attr_string_is(n, "nearest_mode", "floor", false)) return ROUND_FLOOR;
    if (odn_attr_string_is(n, "nearest_mode", "ceil", false)) return ROUND_CEIL;
    return ROUND_PREFER_FLOOR;
}

int odn_resize_loop_check(const tsr_node *n, int32_t rank, char *why, size_t size) {
    bool upsample = strcmp(odn_host->node_op_type(n), "Upsample") == 0;
    bool nearest = odn_attr_string_is(n, "mode", "nearest", true);
    bool linear = odn_attr_string_is(n, "mode", "linear", false) ||
        (upsample && odn_attr_string_is(n, "mode", "bilinear", false));
    if (!nearest && !linear) return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "mode other than nearest or linear");
    if (odn_attr_int(n, "antialias", 0) != 0) return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "antialias");
    if (odn_attr_string_is(n, "coordinate_transformation_mode", "half_pixel_symmetric", false) ||
        odn_attr_string_is(n, "coordinate_transformation_mode", "tf_crop_and_resize", false))
        return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "coordinate_transformation_mode not computed here");
    if (odn_attr_ints(n, "axes", &(size_t){0}) || !odn_attr_string_is(n, "keep_aspect_ratio_policy", "stretch", true))
        return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "axes or keep_aspect_ratio_policy");
    if (rank != 4)
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "rank %d (the C loop does 2 spatial dims)", (int)rank);
    return 0;
}

/* The constant float or int64 vector at input k, with its count. */
static const tsr_tensor *const_vector(const tsr_node *n, size_t k, int32_t type) {
    if (k >= odn_host->node_input_count(n) || !odn_host->node_input(n, k)) return NULL;
    const tsr_tensor *t = odn_host->value_constant(odn_host->node_input(n, k));
    if (!t || t->elem_type != type || t->rank != 1 || t->dims[0] == 0) return NULL;
    return t;
}

/* Output dims and per-axis scales of Resize (any opset) or Upsample on a
 * rank-4 input, from the constant scales (output floor(in * scale)) or
 * sizes (scale out / in), or the Upsample-7 attribute. */
bool odn_resize_shape(const tsr_node *n, const int64_t *in, int64_t *out, double *scales) {
    bool upsample = strcmp(odn_host->node_op_type(n), "Upsample") == 0;
    int64_t opset = odn_host->node_opset(n);
    const float *sc = NULL;
    size_t count = 0;
    if (upsample && opset < 9) {
        const tsr_attr *a = odn_host->node_attr_find(n, "scales");
        if (!a || odn_host->attr_type(a) != TSR_ATTR_FLOATS) return false;
        sc = odn_host->attr_floats(a);
        count = odn_host->attr_list_size(a);
    } else {
        const tsr_tensor *S = const_vector(n, upsample || opset < 11 ? 1 : 2, TSR_FLOAT);
        const tsr_tensor *Z = upsample || opset < 11 ? NULL : const_vector(n, 3, TSR_INT64);
        if (Z && !S) {
            if (Z->dims[0] != 4) return false;
            for (int d = 0; d < 4; d++) {
                out[d] = ((const int64_t *)Z->data)[d];
                if (out[d] < 1 || in[d] < 1) return false;
                scales[d] = (double)out[d] / (double)in[d];
            }
            return true;
        }
        if (!S || Z) return false;
        sc = S->data;
        count = (size_t)S->dims[0];
    }
    if (count != 4) return false;
    for (int d = 0; d < 4; d++) {
        if (!(sc[d] > 0) || !isfinite(sc[d])) return false;
        out[d] = (int64_t)floorf((float)in[d] * sc[d]);
        scales[d] = sc[d];
        if (out[d] < 1 || out[d] > ((int64_t)1 << 31)) return false;
    }
    return true;
}

/* Output dims and scales of Resize n whose sizes are a value input (int64
 * computed at run time, read while the plan is built): true with *found
 * set when they are, false when they are malformed. */
static bool runtime_shape(odn_plan *p, const tsr_node *n, const int64_t *in, int64_t *out, double *scales,
                          bool *found) {
    *found = false;
    /* scales computed at run time (float32 value input): out = floor(in *
     * scale) in float, as for constant scales */
    bool upsample = strcmp(odn_host->node_op_type(n), "Upsample") == 0;
    size_t ks = upsample ? 1 : odn_host->node_opset(n) >= 11 ? 2 : 1;
    const tsr_value_info *svi = odn_input(n, ks);
    if (svi && !odn_host->value_constant(svi) && odn_host->value_elem_type(svi) == TSR_FLOAT &&
        !(odn_host->value_rank(svi) == 1 && odn_host->value_dim(svi, 0) == 0)) {
        *found = true;
        int64_t count;
        const float *sc = odn_plan_f32(p, svi, &count);
        if (!sc || count != 4) return false;
        for (int d = 0; d < 4; d++) {
            if (!(sc[d] > 0) || !isfinite(sc[d])) return false;
            float o = floorf((float)in[d] * sc[d]);
            if (!(o >= 1.0f) || o > (float)((int64_t)1 << 31)) return false;
            out[d] = (int64_t)o;
            scales[d] = sc[d];
        }
        return true;
    }
    if (upsample) return true;
    if (strcmp(odn_host->node_op_type(n), "Resize") != 0 || odn_host->node_opset(n) < 11 ||
        odn_host->node_input_count(n) < 4)
        return true;
    const tsr_value_info *zi = odn_host->node_input(n, 3);
    if (!zi || odn_host->value_constant(zi)) return true;
    *found = true;
    /* scales must be absent: missing, empty, or declared empty */
    const tsr_value_info *si = odn_host->node_input(n, 2);
    bool declared_empty = si && odn_host->value_rank(si) == 1 && odn_host->value_dim(si, 0) == 0;
    if (si && !declared_empty && (!odn_host->value_constant(si) || const_vector(n, 2, TSR_FLOAT))) return false;
    int64_t count;
    const int64_t *sz = odn_plan_i64(p, zi, &count);
    odn_value *zv = odn_plan_value(p, zi);
    if (!sz || !zv || zv->rank != 1 || count != 4) return false;
    for (int d = 0; d < 4; d++) {
        out[d] = sz[d];
        if (out[d] < 1 || in[d] < 1 || out[d] > ((int64_t)1 << 31)) return false;
        scales[d] = (double)out[d] / (double)in[d];
    }
    return true;
}

tsr_status *odn_resize_loop(odn_plan *p, const tsr_node *n, odn_value *x, odn_value *y) {
    bool upsample = strcmp(odn_host->node_op_type(n), "Upsample") == 0;
    int64_t out_dims[4];
    double scales[4];
    bool rt = false;
    if (x->rank != 4 || !runtime_shape(p, n, x->dims, out_dims, scales, &rt) ||
        (!rt && !odn_resize_shape(n, x->dims, out_dims, scales)))
        return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "scales or sizes not constant or not 4 positive values");
    bool linear = !odn_attr_string_is(n, "mode", "nearest", true);
    /* constant scales and sizes are claimed only leaving N and C alone */
    bool mapped = out_dims[0] != x->dims[0] || out_dims[1] != x->dims[1];
    if (mapped && !rt)
        return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "resizes other than the two spatial axes of a 4-D tensor");
    if (out_dims[0] > INT64_MAX / out_dims[1] / out_dims[2] / out_dims[3])
        return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "output size overflows");
    resize_loop *l = odn_plan_alloc(p, sizeof *l);
    if (!l) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    *l = (resize_loop){.planes = out_dims[0] * out_dims[1],
                       .ih = x->dims[2],
                       .iw = x->dims[3],
                       .oh = out_dims[2],
                       .ow = out_dims[3],
                       .mapped = mapped,
                       .ic = x->dims[1],
                       .oc = out_dims[1]};
    coord_mode cm = coord_mode_of(n, upsample);
    round_mode rm = round_mode_of(n, upsample);
    if (!make_map(p, &l->ym, cm, rm, linear, l->ih, l->oh, scales[2]) ||
        !make_map(p, &l->xm, cm, rm, linear, l->iw, l->ow, scales[3]) ||
        (mapped &&
         (!make_map(p, &l->nm, cm, rm, linear, x->dims[0], out_dims[0], scales[0]) ||
          !make_map(p, &l->cm, cm, rm, linear, x->dims[1], out_dims[1], scales[1]))))
        return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    dnnl_memory_t src, dst;
    tsr_status *s = odn_plan_plain_mem(p, x, n, &src);
    if (!s) s = odn_plan_define(p, y, 4, out_dims, NULL, n);
    if (!s) s = odn_plan_plain_mem(p, y, n, &dst);
    return s ? s : odn_plan_add_loop(p, run_resize, l, src, dst, n);
}
