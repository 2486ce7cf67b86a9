/* Resize as oneDNN resampling, for the attribute combinations where the two
 * compute the same thing.
 *
 * oneDNN maps output index y of an axis to the input coordinate
 * s = (y + 0.5) * IN / OUT - 0.5 (ONNX's half_pixel with scale OUT/IN);
 * nearest takes roundf(s) (ties away from zero), linear the two neighbours
 * clamped to the edge, as ONNX does without antialias. So we take:
 *  - opset >= 11 (Resize-10 maps asymmetrically), modes nearest and linear,
 *    no antialias, keep_aspect_ratio_policy stretch;
 *  - coordinate_transformation_mode half_pixel, pytorch_half_pixel (the same
 *    while the output axis is longer than 1) and half_pixel_symmetric (the
 *    same when OUT = IN * scale);
 *  - scales or sizes that are constants, or sizes that are a value input
 *    (int64 computed at run time, read when the plan is built: torch's
 *    F.interpolate(size=skip.shape[2:])), never resizing N or C, and whose
 *    scale is OUT/IN: ONNX maps with the scale it was given, oneDNN with
 *    OUT/IN, so scales giving a fractional size are declined;
 *  - for nearest, no output index whose coordinate is exactly halfway
 *    between two inputs (round_prefer_floor goes down there, oneDNN up),
 *    except with round_prefer_ceil where the tie is computed exactly on
 *    both sides (OUT/IN a dyadic fraction). floor and ceil are declined.
 * Everything else is declined naming the attribute. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "odn.h"

/* The constant input k when it is present with elements; *absent is set
 * when the input is missing or empty (ONNX's way of leaving it out). */
static const tsr_tensor *const_input(const tsr_node *n, size_t k, bool *absent, bool *dynamic) {
    const tsr_value_info *v = odn_input(n, k);
    *absent = *dynamic = false;
    if (!v) {
        *absent = true;
        return NULL;
    }
    const tsr_tensor *t = odn_host->value_constant(v);
    if (!t) {
        /* a declared empty tensor is as good as absent */
        int32_t r = odn_host->value_rank(v);
        if (r == 1 && odn_host->value_dim(v, 0) == 0) *absent = true;
        else *dynamic = true;
        return NULL;
    }
    int64_t count = 1;
    for (int32_t d = 0; d < t->rank; d++) count *= t->dims[d];
    if (count == 0) *absent = true;
    return count ? t : NULL;
}

static int64_t gcd64(int64_t a, int64_t b) {
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* True when some output index of an axis maps exactly halfway between two
 * inputs: (y + 0.5) * in / out - 0.5 = k + 0.5, i.e. (2y + 1) * in is a
 * multiple of 2 * out. Sets *at to the first such y. */
static bool has_tie(int64_t in, int64_t out, int64_t *at) {
    for (int64_t y = 0; y < out; y++)
        if (((2 * y + 1) * in) % (2 * out) == 0) {
            *at = y;
            return true;
        }
    return false;
}

/* odn_resize_check with, when rt_sizes is not NULL, those rt_count values
 * as the sizes (a value input's data while the plan is built). */
static int resize_check(const tsr_node *n, int32_t rank, const int64_t *in_dims, const int64_t *rt_sizes,
                        int64_t rt_count, int64_t *out_dims, bool *linear, char *why, size_t size) {
    if (odn_host->node_opset(n) < 11)
        return odn_decline(why, size, TSR_DECLINE_OPSET, "Resize before opset 11 maps coordinates asymmetrically");
    bool nearest = odn_attr_string_is(n, "mode", "nearest", true);
    *linear = odn_attr_string_is(n, "mode", "linear", false);
    if (!nearest && !*linear)
        return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "mode other than nearest or linear (oneDNN has no cubic)");
    if (*linear && odn_attr_int(n, "antialias", 0) != 0)
        return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "antialias");
    bool pytorch = odn_attr_string_is(n, "coordinate_transformation_mode", "pytorch_half_pixel", false);
    bool symmetric = odn_attr_string_is(n, "coordinate_transformation_mode", "half_pixel_symmetric", false);
    /* asymmetric with floor (what exporters write for nearest upsampling,
     * Upsample's own mapping): floor(y / k) for an integer factor k, which
     * is what oneDNN's roundf((y + 0.5) / k - 0.5) gives too */
    bool asym_floor = nearest && odn_attr_string_is(n, "coordinate_transformation_mode", "asymmetric", false) &&
        odn_attr_string_is(n, "nearest_mode", "floor", false);
    if (!odn_attr_string_is(n, "coordinate_transformation_mode", "half_pixel", true) && !pytorch && !symmetric &&
        !asym_floor)
        return odn_decline(
            why, size, TSR_DECLINE_ATTRIBUTE,
            "coordinate_transformation_mode other than half_pixel, pytorch_half_pixel or half_pixel_symmetric "
            "(or asymmetric nearest with floor)");
    bool prefer_ceil = odn_attr_string_is(n, "nearest_mode", "round_prefer_ceil", false);
    if (nearest && !asym_floor && !prefer_ceil && !odn_attr_string_is(n, "nearest_mode", "round_prefer_floor", true))
        return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "nearest_mode floor or ceil (oneDNN rounds to nearest)");
    if (rank < 3 || rank > 5)
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "rank %d: oneDNN resamples 1-3 spatial dims", (int)rank);

    /* axes (opset 18): scales and sizes then cover only those axes */
    int64_t axes[ODN_MAX_RANK] = {0};
    size_t naxes = 0;
    const int64_t *av = odn_attr_ints(n, "axes", &naxes);
    if (naxes > (size_t)rank)
        return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "axes has %zu values for rank %d", naxes, (int)rank);
    for (size_t i = 0; i < naxes; i++) {
        axes[i] = av[i] < 0 ? av[i] + rank : av[i];
        if (axes[i] < 0 || axes[i] >= rank)
            return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "axes value %lld out of range", (long long)av[i]);
    }
    if (!av) {
        naxes = (size_t)rank;
        for (int32_t d = 0; d < rank; d++) axes[d] = d;
    }

    bool s_absent, s_dyn, z_absent, z_dyn;
    const tsr_tensor *S = const_input(n, 2, &s_absent, &s_dyn), *Z = const_input(n, 3, &z_absent, &z_dyn);
    const float *sv = NULL;
    const int64_t *zv = NULL;
    if (rt_sizes) {
        if (S || s_dyn) return odn_decline(why, size, TSR_DECLINE_OTHER, "not exactly one of scales and sizes");
        if (rt_count != (int64_t)naxes)
            return odn_decline(why, size, TSR_DECLINE_OTHER, "sizes is not %zu int64 values", naxes);
        zv = rt_sizes;
    } else {
        if (s_dyn || z_dyn)
            return odn_decline(why, size, TSR_DECLINE_OTHER, "%s not a constant", s_dyn ? "scales" : "sizes");
        if (!S == !Z) return odn_decline(why, size, TSR_DECLINE_OTHER, "not exactly one of scales and sizes");
        const tsr_tensor *T = S ? S : Z;
        if (T->rank != 1 || T->dims[0] != (int64_t)naxes || T->elem_type != (S ? TSR_FLOAT : TSR_INT64) ||
            T->nbytes < naxes * (S ? sizeof(float) : sizeof(int64_t)))
            return odn_decline(why, size, TSR_DECLINE_OTHER, "%s is not %zu %s values", S ? "scales" : "sizes", naxes,
                               S ? "float" : "int64");
        sv = S ? S->data : NULL;
        zv = Z ? Z->data : NULL;
    }
    if (zv && !odn_attr_string_is(n, "keep_aspect_ratio_policy", "stretch", true))
        return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "keep_aspect_ratio_policy other than stretch");

    double scale[ODN_MAX_RANK];
    for (int32_t d = 0; d < rank; d++) {
        out_dims[d] = in_dims[d];
        scale[d] = 1.0;
    }
    for (size_t i = 0; i < naxes; i++) {
        int64_t a = axes[i], in = in_dims[a];
        if (sv) {
            float f = sv[i];
            if (!(f > 0) || !isfinite(f))
                return odn_decline(why, size, TSR_DECLINE_OTHER, "scales value %g not positive", (double)f);
            /* the output size as ONNX Runtime and the reference take it */
            out_dims[a] = (int64_t)floorf((float)in * f);
            scale[a] = f;
        } else {
            out_dims[a] = zv[i];
            scale[a] = in ? (double)out_dims[a] / (double)in : 1.0;
        }
    }
    for (int32_t d = 0; d < rank; d++) {
        int64_t in = in_dims[d], out = out_dims[d];
        if (in < 1 || out < 1)
            return odn_decline(why, size, TSR_DECLINE_SHAPE, "empty input or output on axis %d", (int)d);
        if (d < 2) {
            if (out != in || scale[d] != 1.0)
                return odn_decline(why, size, TSR_DECLINE_SHAPE, "resizes axis %d (batch or channel)", (int)d);
            continue;
        }
        /* ONNX's coordinate uses the scale it was given; oneDNN's uses
         * out/in: equal up to float rounding of the scale */
        if (fabs(scale[d] * (double)in - (double)out) > 1e-6 * (double)out)
            return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE,
                               "scales gives axis %d a fractional size %g (oneDNN maps by out/in)", (int)d,
                               scale[d] * (double)in);
        if (pytorch && out == 1)
            return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "pytorch_half_pixel to a length-1 axis");
        if (asym_floor) {
            if (out % in != 0)
                return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE,
                                   "asymmetric nearest by a factor %g that is not an integer", scale[d]);
            continue; /* no ties */
        }
        int64_t tie;
        if (nearest && has_tie(in, out, &tie)) {
            int64_t q = in / gcd64(in, out);
            bool dyadic = (q & (q - 1)) == 0 && scale[d] == (double)out / (double)in;
            if (!prefer_ceil || !dyadic)
                return odn_decline(
                    why, size, TSR_DECLINE_ATTRIBUTE,
                    "nearest_mode %s: output %lld of axis %d falls halfway between two inputs, where oneDNN rounds up",
                    prefer_ceil ? "round_prefer_ceil with an inexact scale" : "round_prefer_floor", (long long)tie,
                    (int)d);
        }
    }
    return 0;
}

int odn_resize_check(const tsr_node *n, int32_t rank, const int64_t *in_dims, int64_t *out_dims, bool *linear,
                     char *why, size_t size) {
    return resize_check(n, rank, in_dims, NULL, 0, out_dims, linear, why, size);
}

int odn_upsample_check(const tsr_node *n, int32_t rank, const int64_t *in_dims, int64_t *out_dims, char *why,
                       size_t size) {
    if (!odn_attr_string_is(n, "mode", "nearest", true))
        return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE,
                           "Upsample mode other than nearest (it maps linear asymmetrically)");
    if (rank < 3 || rank > 5)
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "rank %d: oneDNN resamples 1-3 spatial dims", (int)rank);
    const float *scales = NULL;
    size_t count = 0;
    float attr[ODN_MAX_RANK];
    if (odn_host->node_opset(n) >= 9) {
        bool absent, dynamic;
        const tsr_tensor *t = const_input(n, 1, &absent, &dynamic);
        if (!t || t->elem_type != TSR_FLOAT || t->rank != 1)
            return odn_decline(why, size, TSR_DECLINE_OTHER, "scales not a constant float vector");
        scales = t->data;
        count = (size_t)t->dims[0];
    } else {
        size_t c = 0;
        const tsr_attr *a = odn_host->node_attr_find(n, "scales");
        if (!a || odn_host->attr_type(a) != TSR_ATTR_FLOATS || (c = odn_host->attr_list_size(a)) > ODN_MAX_RANK)
            return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "scales attribute missing");
        memcpy(attr, odn_host->attr_floats(a), c * sizeof(float));
        scales = attr;
        count = c;
    }
    if (count != (size_t)rank)
        return odn_decline(why, size, TSR_DECLINE_OTHER, "scales has %zu values for rank %d", count, (int)rank);
    for (int32_t d = 0; d < rank; d++) {
        float f = scales[d];
        if (!(f >= 1.0f) || f != floorf(f) || f > 1024.0f || (d < 2 && f != 1.0f))
            return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE,
                               "scale %g on axis %d is not an integer upsampling of a spatial axis", (double)f, (int)d);
        out_dims[d] = in_dims[d] * (int64_t)f;
    }
    return 0;
}

tsr_status *odn_build_resize(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *x = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!x || !y || !x->produced || !x->mem) return odn_node_error(n, TSR_ERR_PROVIDER, "internal: Resize inputs");
    int64_t out_dims[ODN_MAX_RANK];
    bool linear;
    char why[256];
    bool upsample = strcmp(odn_host->node_op_type(n), "Upsample") == 0;
    linear = false;
    /* sizes computed at run time: a value input, read now (the plan is
     * keyed by its data, so other sizes build another plan) */
    const tsr_value_info *zi = !upsample && odn_host->node_input_count(n) > 3 ? odn_host->node_input(n, 3) : NULL;
    const int64_t *rt_sizes = NULL;
    int64_t rt_count = 0;
    /* scales computed at run time (a float32 value input): the C loop, which
     * maps any scales (oneDNN's resampling is checked exact for constant
     * ones only) */
    size_t ks = upsample ? 1 : odn_host->node_opset(n) >= 11 ? 2 : 1;
    const tsr_value_info *si = odn_input(n, ks);
    if (si && odn_is_scales_input(p->piece, si)) return odn_resize_loop(p, n, x, y);
    if (zi && !odn_host->value_constant(zi)) {
        odn_value *zval = odn_plan_value(p, zi);
        rt_sizes = odn_plan_i64(p, zi, &rt_count);
        if (!rt_sizes || !zval || zval->rank != 1)
            return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "sizes must be a 1-D int64, constant or a piece input");
    }
    if (upsample ? odn_upsample_check(n, x->rank, x->dims, out_dims, why, sizeof why)
                 : resize_check(n, x->rank, x->dims, rt_sizes, rt_count, out_dims, &linear, why, sizeof why)) {
        if (odn_resize_loop_check(n, x->rank, why, sizeof why) == 0) return odn_resize_loop(p, n, x, y);
        return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "%s", why);
    }
    dnnl_memory_t src = x->mem;
    const dnnl_memory_desc_t *src_md = &x->md;
    dnnl_memory_desc_t dst_md;
    dnnl_dims_t dd;
    for (int32_t i = 0; i < x->rank; i++) dd[i] = out_dims[i];
    dnnl_status_t st;
    if (y->output_index >= 0) {
        /* src and dst in one layout family: plain */
        tsr_status *s = odn_plan_plain_mem(p, x, n, &src);
        if (s) return s;
        dnnl_memory_get_memory_desc(src, &src_md);
        st = odn_plain_md(&dst_md, x->rank, out_dims);
    } else {
        st = dnnl_memory_desc_init_by_tag(&dst_md, x->rank, dd, dnnl_f32, dnnl_format_tag_any);
    }
    if (st != dnnl_success) return odn_dnnl_error(n, "resampling layout", st);
    dnnl_resampling_desc_t d;
    st = dnnl_resampling_forward_desc_init(
        &d, dnnl_forward_inference, linear ? dnnl_resampling_linear : dnnl_resampling_nearest, NULL, src_md, &dst_md);
    if (st != dnnl_success) return odn_dnnl_error(n, "resampling setup", st);
    dnnl_exec_arg_t args[ODN_MAX_ARGS] = {{DNNL_ARG_SRC, src}};
    return odn_build_finish(p, n, &d, NULL, y, x->rank, out_dims, args, 1);
}
