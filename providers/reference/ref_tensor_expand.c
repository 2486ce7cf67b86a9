/*
 * Expand, Tile, Pad and CenterCropPad: outputs larger than (or cropped from)
 * their input, each a table of the view engine with MISSING for the fill.
 */
#include <stdlib.h>
#include <string.h>

#include "ref_tensor.h"

tsr_status *ref_tensor_expand(ref_ctx *c) {
    const tsr_tensor *x;
    tsr_tensor *y;
    int64_t *shape, dims[REF_MAX_RANK], str[REF_MAX_RANK];
    size_t n;
    int32_t r;
    TSR_TRY(ref_tensor_need_in(c, 0, &x));
    TSR_TRY(ref_tensor_i64(c, ref_in(c, 1), &shape, &n));
    tsr_status *st = NULL;
    for (size_t i = 0; i < n; i++) {
        if (shape[i] < 0) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "shape[%zu] is negative", i);
            goto done;
        }
    }
    /* Broadcasting is two-way: a 1 in `shape` keeps the input's dim. */
    if (n > REF_MAX_RANK || !ref_broadcast_shape(x->rank, x->dims, (int32_t)n, shape, &r, dims)) {
        st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "shape does not broadcast with the input");
        goto done;
    }
    if ((st = ref_tensor_out_new(c, 0, x->elem_type, r, dims, &y))) goto done;
    if (ref_tensor_dims_count(r, dims) == 0) goto done;
    ref_strides(x->rank, x->dims, str);
    view v;
    if ((st = ref_tensor_view_init(c, &v, r, dims))) goto done;
    for (int32_t a = 0; a < r; a++) {
        int32_t ia = a - (r - x->rank);
        ref_tensor_view_linear(&v, a, 0, ia < 0 || x->dims[ia] == 1 ? 0 : str[ia]);
    }
    st = ref_tensor_view_run_free(c, &v, y, x, NULL);
done:
    free(shape);
    return st;
}

tsr_status *ref_tensor_tile(ref_ctx *c) {
    const tsr_tensor *x;
    tsr_tensor *y;
    int64_t *rep, dims[REF_MAX_RANK], str[REF_MAX_RANK];
    size_t n;
    TSR_TRY(ref_tensor_need_in(c, 0, &x));
    TSR_TRY(ref_tensor_i64(c, ref_in(c, 1), &rep, &n));
    tsr_status *st = NULL;
    int32_t r = x->rank;
    if (n != (size_t)r) {
        st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "repeats has %zu entries for rank %d", n, (int)r);
        goto done;
    }
    for (int32_t a = 0; a < r; a++) {
        if (rep[a] < 0 || __builtin_mul_overflow(x->dims[a], rep[a], &dims[a])) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "repeats[%d] is invalid", (int)a);
            goto done;
        }
    }
    if ((st = ref_tensor_out_new(c, 0, x->elem_type, r, dims, &y))) goto done;
    if (ref_tensor_dims_count(r, dims) == 0) goto done;
    ref_strides(r, x->dims, str);
    view v;
    if ((st = ref_tensor_view_init(c, &v, r, dims))) goto done;
    for (int32_t a = 0; a < r; a++)
        for (int64_t i = 0; i < dims[a]; i++) v.off[a][i] = (i % x->dims[a]) * str[a];
    st = ref_tensor_view_run_free(c, &v, y, x, NULL);
done:
    free(rep);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Pad                                                                       */

tsr_status *ref_tensor_pad(ref_ctx *c) {
    const tsr_tensor *x, *fill;
    tsr_tensor *y;
    int64_t *pads = NULL, *axes = NULL;
    size_t np = 0, na = 0;
    bool have, have_axes = false;
    scalar padval; /* zero unless the `value` attribute (opset < 11) says otherwise */
    tsr_status *st = NULL;
    TSR_TRY(ref_tensor_need_in(c, 0, &x));
    int32_t r = x->rank;
    int64_t opset = ref_opset(c);
    const char *mode = ref_attr_str(c, "mode", "constant");
    fill = ref_tensor_scalar_zero(&padval, x->elem_type);
    if (opset < 11) {
        /* Opset 1 called the attribute `paddings`, opset 2 `pads`. */
        TSR_TRY(ref_tensor_ints_arg(c, opset < 2 ? "paddings" : "pads", 1, 11, &pads, &np, &have));
        if (ref_attr_has(c, "value") && x->elem_type != TSR_STRING) {
            if (!ref_is_float(x->elem_type) && !ref_is_int(x->elem_type) && x->elem_type != TSR_BOOL) {
                st = ref_err(c, TSR_ERR_NOT_SUPPORTED, "a pad value for type %d", (int)x->elem_type);
                goto done;
            }
            ref_store(x->elem_type, &padval.u, 0, ref_attr_float(c, "value", 0.0f));
        }
    } else {
        TSR_TRY(ref_tensor_ints_arg(c, "pads", 1, 11, &pads, &np, &have));
        const tsr_tensor *v = ref_in(c, 2);
        if (v && ref_numel(v) > 0) {
            if (v->elem_type != x->elem_type) {
                st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "constant_value differs in type");
                goto done;
            }
            fill = v;
        }
        if (opset >= 18 && ref_in(c, 3)) {
            st = ref_tensor_i64(c, ref_in(c, 3), &axes, &na);
            if (st) goto done;
            have_axes = true;
            if ((st = ref_tensor_norm_axes(c, axes, na, r))) goto done;
        }
    }
    if (!have) {
        st = ref_err(c, TSR_ERR_INVALID_MODEL, "no pads given");
        goto done;
    }
    size_t nax = have_axes ? na : (size_t)r;
    if (np != 2 * nax) {
        st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%zu pads for %zu axes", np, nax);
        goto done;
    }
    int64_t before[REF_MAX_RANK] = {0}, after[REF_MAX_RANK] = {0};
    for (size_t i = 0; i < nax; i++) {
        int64_t a = have_axes ? axes[i] : (int64_t)i;
        before[a] = pads[i];
        after[a] = pads[nax + i];
    }
    int m = strcmp(mode, "constant") == 0 ? 0
        : strcmp(mode, "reflect") == 0    ? 1
        : strcmp(mode, "edge") == 0       ? 2
        : strcmp(mode, "wrap") == 0       ? 3
                                          : -1;
    if (m < 0) {
        st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "unknown mode '%s'", mode);
        goto done;
    }
    /* Negative pads crop first; the positive ones then pad what is left
     * (reflect and wrap see the cropped tensor, as the ONNX reference does). */
    int64_t dims[REF_MAX_RANK], crop[REF_MAX_RANK], kept[REF_MAX_RANK], str[REF_MAX_RANK];
    for (int32_t a = 0; a < r; a++) {
        crop[a] = before[a] < 0 ? -before[a] : 0;
        kept[a] = x->dims[a] - crop[a] - (after[a] < 0 ? -after[a] : 0);
        if (kept[a] < 0) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "pads crop more than axis %d holds", (int)a);
            goto done;
        }
        dims[a] = kept[a] + (before[a] > 0 ? before[a] : 0) + (after[a] > 0 ? after[a] : 0);
        if (m != 0 && kept[a] == 0 && dims[a] > 0) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "mode '%s' cannot pad an empty axis", mode);
            goto done;
        }
    }
    if ((st = ref_tensor_out_new(c, 0, x->elem_type, r, dims, &y))) goto done;
    if (ref_tensor_dims_count(r, dims) == 0) goto done;
    ref_strides(r, x->dims, str);
    view v;
    if ((st = ref_tensor_view_init(c, &v, r, dims))) goto done;
    for (int32_t a = 0; a < r; a++) {
        int64_t k = kept[a], pb = before[a] > 0 ? before[a] : 0;
        for (int64_t i = 0; i < dims[a]; i++) {
            int64_t j = i - pb; /* index into the cropped axis */
            if (j < 0 || j >= k) {
                if (m == 0) {
                    v.off[a][i] = MISSING;
                    continue;
                } else if (m == 1) { /* reflect, not repeating the edge */
                    int64_t p = 2 * (k - 1);
                    if (p == 0) {
                        j = 0;
                    } else {
                        j %= p;
                        if (j < 0) j += p;
                        if (j >= k) j = p - j;
                    }
                } else if (m == 2) { /* edge */
                    j = j < 0 ? 0 : k - 1;
                } else { /* wrap */
                    j %= k;
                    if (j < 0) j += k;
                }
            }
            v.off[a][i] = (j + crop[a]) * str[a];
        }
    }
    st = ref_tensor_view_run_free(c, &v, y, x, fill);
done:
    free(pads);
    free(axes);
    return st;
}

/* CenterCropPad: each listed axis is cropped or zero-padded to the target
 * size around its centre; the odd element goes to the end, as the ONNX
 * reference does (start offset is the floor of half the difference). */
tsr_status *ref_tensor_center_crop_pad(ref_ctx *c) {
    const tsr_tensor *x;
    tsr_tensor *y;
    int64_t *shape, dims[REF_MAX_RANK], shift[REF_MAX_RANK] = {0}, str[REF_MAX_RANK];
    size_t n;
    scalar zero;
    TSR_TRY(ref_tensor_need_in(c, 0, &x));
    TSR_TRY(ref_tensor_i64(c, ref_in(c, 1), &shape, &n));
    int32_t r = x->rank;
    const int64_t *attr_axes;
    size_t na = ref_attr_ints(c, "axes", &attr_axes);
    int64_t axes[REF_MAX_RANK];
    tsr_status *st = NULL;
    if (!attr_axes) na = (size_t)r;
    if (na != n || na > (size_t)r) {
        st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "shape has %zu entries for %zu axes", n, na);
        goto done;
    }
    for (size_t i = 0; i < na; i++) axes[i] = attr_axes ? attr_axes[i] : (int64_t)i;
    if ((st = ref_tensor_norm_axes(c, axes, na, r))) goto done;
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)r);
    for (size_t i = 0; i < na; i++) {
        int64_t a = axes[i], d = x->dims[a], want = shape[i];
        if (want < 0) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "shape[%zu] is negative", i);
            goto done;
        }
        /* Output index o reads input index o + shift (crop: +, pad: -). */
        shift[a] = want < d ? (d - want) / 2 : -((want - d) / 2);
        dims[a] = want;
    }
    if ((st = ref_tensor_out_new(c, 0, x->elem_type, r, dims, &y))) goto done;
    if (ref_tensor_dims_count(r, dims) == 0) goto done;
    ref_strides(r, x->dims, str);
    view v;
    if ((st = ref_tensor_view_init(c, &v, r, dims))) goto done;
    for (int32_t a = 0; a < r; a++) {
        for (int64_t o = 0; o < dims[a]; o++) {
            int64_t j = o + shift[a];
            v.off[a][o] = j < 0 || j >= x->dims[a] ? MISSING : j * str[a];
        }
    }
    st = ref_tensor_view_run_free(c, &v, y, x, ref_tensor_scalar_zero(&zero, x->elem_type));
done:
    free(shape);
    return st;
}
