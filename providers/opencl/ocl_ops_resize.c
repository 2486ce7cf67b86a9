/* Resize: nearest and linear, with the coordinate arithmetic done on the
 * host in double precision and handed to the kernel as per-axis tables. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ocl_op.h"

#define RESIZE_MAX_RANK 4 /* linear blends 2^rank corners */

enum { CT_HALF_PIXEL, CT_PYTORCH_HALF_PIXEL, CT_ALIGN_CORNERS, CT_ASYMMETRIC, CT_HALF_PIXEL_SYMMETRIC };
enum { NM_ROUND_PREFER_FLOOR, NM_ROUND_PREFER_CEIL, NM_FLOOR, NM_CEIL };

typedef struct resize_state {
    cl_kernel k;
    int linear, ct, nm;
    float scales[RESIZE_MAX_RANK];
    int64_t sizes[RESIZE_MAX_RANK];
    int n_scales, n_sizes;
} resize_state;

static int pick(const tsr_node *n, const char *attr, const char *const *names, int count, int dflt) {
    const tsr_attr *a = ocl_host->node_attr_find(n, attr);
    if (!a) return dflt;
    for (int i = 0; i < count; i++)
        if (ocl_attr_string_is(n, attr, names[i], false)) return i;
    return -1;
}

static const char *const modes[] = {"nearest", "linear"};
static const char *const cts[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                  "half_pixel_symmetric"};
static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};

/* A constant float input; -1 when absent or not constant. */
static int const_floats(const tsr_node *n, size_t i, float *out, int max) {
    if (!ocl_input_present(n, i)) return -1;
    const tsr_tensor *t = ocl_host->value_constant(ocl_host->node_input(n, i));
    if (!t || t->elem_type != TSR_FLOAT || t->memory_kind != TSR_MEMORY_HOST) return -1;
    size_t c = t->nbytes / sizeof(float);
    if (c > (size_t)max) return -1;
    memcpy(out, t->data, c * sizeof(float));
    return (int)c;
}

static const char *resize_check(const tsr_node *n, int32_t *reason, char *buf, size_t size) {
    (void)buf;
    (void)size;
    if (ocl_input_type(n, 0) != TSR_FLOAT || ocl_output_type(n, 0) != TSR_FLOAT) {
        *reason = TSR_DECLINE_TYPE;
        return "only float32 tensors";
    }
    if (ocl_host->node_opset(n) < 11) {
        *reason = TSR_DECLINE_OPSET;
        return "Resize before opset 11 not supported";
    }
    int32_t r = ocl_host->value_rank(ocl_host->node_input(n, 0));
    if (r < 1 || r > RESIZE_MAX_RANK) {
        *reason = TSR_DECLINE_SHAPE;
        return "rank 1 to 4 only";
    }
    *reason = TSR_DECLINE_ATTRIBUTE;
    if (pick(n, "mode", modes, 2, 0) < 0) return "only nearest and linear modes";
    if (pick(n, "coordinate_transformation_mode", cts, 5, 0) < 0) return "tf_crop_and_resize not supported";
    if (pick(n, "nearest_mode", nms, 4, 0) < 0) return "unknown nearest_mode";
    if (ocl_attr_int(n, "antialias", 0) != 0) return "antialias not supported";
    if (ocl_host->node_attr_find(n, "axes")) return "axes not supported";
    if (!ocl_attr_string_is(n, "keep_aspect_ratio_policy", "stretch", true))
        return "keep_aspect_ratio_policy other than stretch not supported";
    *reason = TSR_DECLINE_OTHER;
    if (!ocl_input_present(n, 2) && !ocl_input_present(n, 3)) return "needs scales or sizes";
    return NULL;
}

static void resize_free(void *p) {
    resize_state *s = p;
    if (!s) return;
    if (s->k) clReleaseKernel(s->k);
    free(s);
}

static tsr_status *resize_prepare(ocl_state *st, const tsr_node *n, void **out) {
    resize_state *s = calloc(1, sizeof *s);
    if (!s) return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
    tsr_status *e = ocl_kernel_create(st, "resize", "", "resize_nd", &s->k);
    if (e) {
        free(s);
        return e;
    }
    s->linear = pick(n, "mode", modes, 2, 0);
    s->ct = pick(n, "coordinate_transformation_mode", cts, 5, 0);
    s->nm = pick(n, "nearest_mode", nms, 4, 0);
    s->n_scales = const_floats(n, 2, s->scales, RESIZE_MAX_RANK);
    s->n_sizes = ocl_input_const_ints(n, 3, s->sizes, RESIZE_MAX_RANK);
    *out = s;
    return NULL;
}

static double source_coord(const resize_state *s, double xo, double scale, int64_t in_len, int64_t out_len) {
    switch (s->ct) {
    case CT_ASYMMETRIC: return xo / scale;
    case CT_ALIGN_CORNERS: {
        /* the spec divides by the unrounded resized length, in_len * scale */
        double resized = (double)in_len * scale;
        return out_len == 1 || resized == 1.0 ? 0.0 : xo * (double)(in_len - 1) / (resized - 1.0);
    }
    case CT_PYTORCH_HALF_PIXEL: return out_len > 1 ? (xo + 0.5) / scale - 0.5 : 0.0;
    case CT_HALF_PIXEL_SYMMETRIC: {
        double adj = (double)out_len / (scale * (double)in_len);
        double center = (double)in_len / 2.0;
        return center * (1.0 - adj) + (xo + 0.5) / scale - 0.5;
    }
    default: return (xo + 0.5) / scale - 0.5;
    }
}

static int64_t nearest(const resize_state *s, double x) {
    switch (s->nm) {
    case NM_FLOOR: return (int64_t)floor(x);
    case NM_CEIL: return (int64_t)ceil(x);
    case NM_ROUND_PREFER_CEIL: return (int64_t)floor(x + 0.5);
    default: return x == floor(x) + 0.5 ? (int64_t)floor(x) : (int64_t)floor(x + 0.5);
    }
}

/* Scales and sizes that are not constants are read back from the device. */
static tsr_status *read_params(ocl_exec *x, resize_state *s) {
    const ocl_tensor *sc = ocl_exec_input(x, 2);
    if (s->n_scales < 0 && sc) {
        if (sc->elem_type != TSR_FLOAT || sc->count > RESIZE_MAX_RANK)
            return ocl_error(TSR_ERR_INVALID_ARGUMENT, "scales must be at most 4 floats");
        tsr_status *e = ocl_read(ocl_exec_state(x), sc->mem, 0, sc->nbytes, s->scales);
        if (e) return e;
        s->n_scales = (int)sc->count;
    }
    if (s->n_sizes < 0 && ocl_exec_input(x, 3)) {
        size_t n;
        tsr_status *e = ocl_exec_read_ints(x, 3, s->sizes, RESIZE_MAX_RANK, &n);
        if (e) return e;
        s->n_sizes = (int)n;
    }
    return NULL;
}

static tsr_status *resize_run(ocl_exec *x, void *state) {
    resize_state *s = state;
    resize_state run = *s; /* the prepared constants, or this run's values */
    tsr_status *pe = read_params(x, &run);
    if (pe) return pe;
    s = &run;
    const ocl_tensor *in = ocl_exec_input(x, 0);
    if (!in || in->rank < 1 || in->rank > RESIZE_MAX_RANK)
        return ocl_error(TSR_ERR_INVALID_ARGUMENT, "input rank must be 1 to 4");
    int32_t rank = in->rank;
    double scale[RESIZE_MAX_RANK];
    int64_t odims[RESIZE_MAX_RANK];
    if (s->n_sizes > 0) {
        if (s->n_sizes != rank)
            return ocl_error(TSR_ERR_INVALID_ARGUMENT, "sizes has %d values for rank %d", s->n_sizes, (int)rank);
        for (int32_t d = 0; d < rank; d++) {
            if (s->sizes[d] < 0 || s->sizes[d] > ((int64_t)1 << 24))
                return ocl_error(TSR_ERR_INVALID_ARGUMENT, "size %lld out of range", (long long)s->sizes[d]);
            odims[d] = s->sizes[d];
            scale[d] = in->dims[d] ? (double)(float)((double)odims[d] / (double)in->dims[d]) : 1.0;
        }
    } else {
        if (s->n_scales != rank)
            return ocl_error(TSR_ERR_INVALID_ARGUMENT, "scales has %d values for rank %d", s->n_scales, (int)rank);
        for (int32_t d = 0; d < rank; d++) {
            double o = floor((double)in->dims[d] * (double)s->scales[d]);
            if (!(s->scales[d] > 0) || o > (double)((int64_t)1 << 24))
                return ocl_error(TSR_ERR_INVALID_ARGUMENT, "scale %g out of range", (double)s->scales[d]);
            odims[d] = (int64_t)o;
            scale[d] = s->scales[d];
        }
    }
    ocl_tensor *y;
    tsr_status *e = ocl_exec_output(x, 0, TSR_FLOAT, rank, odims, &y);
    if (e || !y->count) return e;
    if (!in->count) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "cannot resize an empty input");
    if (y->count > INT32_MAX || in->count > INT32_MAX) return ocl_error(TSR_ERR_NOT_SUPPORTED, "tensor too large");
    size_t total = 0;
    for (int32_t d = 0; d < rank; d++) total += (size_t)odims[d];
    int32_t *lo = malloc(total * sizeof *lo), *hi = malloc(total * sizeof *hi);
    float *w = malloc(total * sizeof *w);
    int32_t meta[3 * RESIZE_MAX_RANK];
    if (!lo || !hi || !w) {
        free(lo), free(hi), free(w);
        return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
    }
    size_t off = 0;
    int64_t stride = 1;
    for (int32_t d = rank - 1; d >= 0; d--) {
        meta[rank + d] = (int32_t)stride;
        stride *= in->dims[d];
    }
    for (int32_t d = 0; d < rank; d++) {
        int64_t len = in->dims[d];
        meta[d] = (int32_t)odims[d];
        meta[2 * rank + d] = (int32_t)off;
        for (int64_t c = 0; c < odims[d]; c++, off++) {
            double xs = source_coord(s, (double)c, scale[d], len, odims[d]);
            if (s->linear) {
                if (xs < 0) xs = 0;
                if (xs > (double)(len - 1)) xs = (double)(len - 1);
                int64_t i0 = (int64_t)floor(xs);
                lo[off] = (int32_t)i0;
                hi[off] = (int32_t)(i0 + 1 < len ? i0 + 1 : len - 1);
                w[off] = (float)(xs - (double)i0);
            } else {
                int64_t i0 = nearest(s, xs);
                if (i0 < 0) i0 = 0;
                if (i0 >= len) i0 = len - 1;
                lo[off] = hi[off] = (int32_t)i0;
                w[off] = 0.0f;
            }
        }
    }
    ocl_state *st = ocl_exec_state(x);
    cl_int err;
    cl_mem bl = clCreateBuffer(st->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, total * 4, lo, &err);
    cl_mem bh = bl ? clCreateBuffer(st->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, total * 4, hi, &err) : NULL;
    cl_mem bw = bh ? clCreateBuffer(st->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, total * 4, w, &err) : NULL;
    cl_mem mb = NULL;
    free(lo), free(hi), free(w);
    if (!bw) e = ocl_cl_error(err, "clCreateBuffer(resize tables)");
    if (!e) e = ocl_meta_buffer(st, meta, 3 * (size_t)rank, &mb);
    if (!e) {
        int n = (int)y->count, linear = s->linear;
        err = clSetKernelArg(s->k, 0, sizeof(cl_mem), &in->mem);
        err |= clSetKernelArg(s->k, 1, sizeof(cl_mem), &y->mem);
        err |= clSetKernelArg(s->k, 2, sizeof(int), &n);
        err |= clSetKernelArg(s->k, 3, sizeof(int), &rank);
        err |= clSetKernelArg(s->k, 4, sizeof(int), &linear);
        err |= clSetKernelArg(s->k, 5, sizeof(cl_mem), &mb);
        err |= clSetKernelArg(s->k, 6, sizeof(cl_mem), &bl);
        err |= clSetKernelArg(s->k, 7, sizeof(cl_mem), &bh);
        err |= clSetKernelArg(s->k, 8, sizeof(cl_mem), &bw);
        e = err == CL_SUCCESS ? ocl_launch_1d(st, s->k, y->count, "resize_nd")
                              : ocl_cl_error(err, "clSetKernelArg(resize_nd)");
    }
    if (mb) clReleaseMemObject(mb);
    if (bw) clReleaseMemObject(bw);
    if (bh) clReleaseMemObject(bh);
    if (bl) clReleaseMemObject(bl);
    return e;
}

const ocl_op ocl_ops_resize[] = {
    {"Resize", resize_check, resize_prepare, resize_run, resize_free},
    {NULL, NULL, NULL, NULL, NULL},
};
