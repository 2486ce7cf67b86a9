/* Shape and data-movement ops: Reshape/Flatten/Squeeze/Unsqueeze/Identity
 * (views: no kernel; a device-side copy only at a piece's edge), Transpose,
 * Slice, Concat, Gather, Pad. They move bytes, so they take any element type
 * of 1, 2, 4 or 8 bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl_op.h"

#define MAX_LIST 64

typedef struct tensor_state {
    ocl_state *st;
    cl_kernel k[4]; /* by element size: 1, 2, 4, 8 bytes */
    const char *kernel;
    int64_t axis;
    int64_t ints[MAX_LIST]; /* perm, axes, or constant indices */
    int n_ints;             /* -1: none */
    bool allowzero;
    int opset;
    int pad_mode; /* 0 constant, 1 edge, 2 reflect */
} tensor_state;

static void tensor_free(void *p) {
    tensor_state *s = p;
    if (!s) return;
    for (int i = 0; i < 4; i++)
        if (s->k[i]) clReleaseKernel(s->k[i]);
    free(s);
}

static int size_slot(size_t es) { return es == 1 ? 0 : es == 2 ? 1 : es == 4 ? 2 : es == 8 ? 3 : -1; }

/* The kernel for this element size, built on first use. */
static tsr_status *kernel_for(tensor_state *s, size_t es, cl_kernel *out) {
    static const char *types[4] = {"uchar", "ushort", "uint", "ulong"};
    int slot = size_slot(es);
    if (slot < 0) return ocl_error(TSR_ERR_NOT_SUPPORTED, "element size %zu", es);
    if (!s->k[slot]) {
        char opts[32];
        snprintf(opts, sizeof opts, "-DT=%s", types[slot]);
        tsr_status *e = ocl_kernel_create(s->st, "tensor", opts, s->kernel, &s->k[slot]);
        if (e) return e;
    }
    *out = s->k[slot];
    return NULL;
}

static bool fits_int(int64_t v) { return v >= 0 && v <= INT32_MAX; }

/* Inputs and outputs of one movable type (the first input's). */
static const char *check_movable(const tsr_node *n, int32_t *reason) {
    int32_t t = ocl_input_type(n, 0);
    if (!ocl_elem_size(t)) {
        *reason = TSR_DECLINE_TYPE;
        return "element type not supported (strings, packed or unknown)";
    }
    for (size_t i = 0; i < ocl_host->node_output_count(n); i++)
        if (ocl_output_present(n, i) && ocl_output_type(n, i) != t) {
            *reason = TSR_DECLINE_TYPE;
            return "output type differs from input";
        }
    return NULL;
}

static tsr_status *state_new(ocl_state *st, const tsr_node *n, const char *kernel, tensor_state **out) {
    tensor_state *s = calloc(1, sizeof *s);
    if (!s) return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
    s->st = st;
    s->kernel = kernel;
    s->n_ints = -1;
    s->opset = (int)ocl_host->node_opset(n);
    *out = s;
    return NULL;
}

/* A list from a constant input or an attribute; -1 when neither. */
static int list_from(const tsr_node *n, size_t input, const char *attr, int64_t *out) {
    int len = ocl_input_present(n, input) ? ocl_input_const_ints(n, input, out, MAX_LIST) : -1;
    if (len < 0 && attr) len = ocl_attr_ints(n, attr, out, MAX_LIST);
    return len;
}

/* Same list at run time: the prepared constant, else read from the device. */
static tsr_status *run_list(ocl_exec *x, const tensor_state *s, size_t input, int64_t *out, int *n) {
    if (s->n_ints >= 0) {
        memcpy(out, s->ints, sizeof(int64_t) * (size_t)s->n_ints);
        *n = s->n_ints;
        return NULL;
    }
    if (!ocl_exec_input(x, input)) {
        *n = -1;
        return NULL;
    }
    size_t got;
    tsr_status *e = ocl_exec_read_ints(x, input, out, MAX_LIST, &got);
    *n = (int)got;
    return e;
}

/* The input seen with a new shape: a view inside the piece (ocl_piece.c). */
static tsr_status *view_as(ocl_exec *x, const ocl_tensor *in, int32_t rank, const int64_t *dims) {
    size_t count;
    if (!ocl_dims_count(rank, dims, &count) || count != in->count)
        return ocl_error(TSR_ERR_INVALID_ARGUMENT, "new shape has %zu elements, input has %zu", count, in->count);
    return ocl_exec_output_view(x, 0, in, rank, dims);
}

/* --- Reshape / Flatten / Squeeze / Unsqueeze / Identity ----------------------- */

static const char *view_check(const tsr_node *n, int32_t *reason, char *buf, size_t size) {
    (void)buf;
    (void)size;
    return check_movable(n, reason);
}

static tsr_status *view_prepare(ocl_state *st, const tsr_node *n, void **out) {
    tensor_state *s = NULL;
    tsr_status *e = state_new(st, n, NULL, &s);
    if (e) return e;
    const char *op = ocl_host->node_op_type(n);
    if (!strcmp(op, "Reshape")) {
        s->n_ints = list_from(n, 1, NULL, s->ints);
        s->allowzero = ocl_attr_int(n, "allowzero", 0) != 0;
    } else if (!strcmp(op, "Flatten")) {
        s->axis = ocl_attr_int(n, "axis", 1);
    } else {
        s->n_ints = list_from(n, 1, "axes", s->ints);
    }
    *out = s;
    return NULL;
}

static tsr_status *reshape_run(ocl_exec *x, void *state) {
    tensor_state *s = state;
    const ocl_tensor *in = ocl_exec_input(x, 0);
    if (!in) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "missing input");
    int64_t shape[MAX_LIST];
    int n;
    tsr_status *e = run_list(x, s, 1, shape, &n);
    if (e) return e;
    if (n < 0 || n > OCL_MAX_RANK) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "bad shape input");
    int infer = -1;
    size_t known = 1;
    for (int i = 0; i < n; i++) {
        if (shape[i] == 0 && !s->allowzero) {
            if (i >= in->rank) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "shape[%d] = 0 copies a missing dim", i);
            shape[i] = in->dims[i];
        }
        if (shape[i] == -1) {
            if (infer >= 0) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "two -1 in shape");
            infer = i;
            continue;
        }
        if (shape[i] < 0) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "negative dim in shape");
        if (shape[i] && known > SIZE_MAX / (size_t)shape[i])
            return ocl_error(TSR_ERR_INVALID_ARGUMENT, "shape too large");
        known *= (size_t)shape[i];
    }
    if (infer >= 0) {
        if (!known || in->count % known) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "cannot infer -1 in shape");
        shape[infer] = (int64_t)(in->count / known);
    }
    return view_as(x, in, n, shape);
}

static tsr_status *identity_run(ocl_exec *x, void *state) {
    (void)state;
    const ocl_tensor *in = ocl_exec_input(x, 0);
    if (!in) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "missing input");
    return view_as(x, in, in->rank, in->dims);
}

static tsr_status *flatten_run(ocl_exec *x, void *state) {
    tensor_state *s = state;
    const ocl_tensor *in = ocl_exec_input(x, 0);
    if (!in) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "missing input");
    int64_t axis = s->axis < 0 ? s->axis + in->rank : s->axis;
    if (axis < 0 || axis > in->rank) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "axis out of range");
    int64_t dims[2] = {1, 1};
    for (int32_t d = 0; d < in->rank; d++) dims[d < axis ? 0 : 1] *= in->dims[d];
    return view_as(x, in, 2, dims);
}

static tsr_status *squeeze_run(ocl_exec *x, void *state) {
    tensor_state *s = state;
    const ocl_tensor *in = ocl_exec_input(x, 0);
    if (!in) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "missing input");
    int64_t axes[MAX_LIST];
    int n;
    tsr_status *e = run_list(x, s, 1, axes, &n);
    if (e) return e;
    bool drop[OCL_MAX_RANK] = {false};
    for (int i = 0; i < n; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + in->rank : axes[i];
        if (a < 0 || a >= in->rank || in->dims[a] != 1)
            return ocl_error(TSR_ERR_INVALID_ARGUMENT, "cannot squeeze axis %lld", (long long)axes[i]);
        drop[a] = true;
    }
    int64_t dims[OCL_MAX_RANK];
    int32_t r = 0;
    for (int32_t d = 0; d < in->rank; d++)
        if (n < 0 ? in->dims[d] != 1 : !drop[d]) dims[r++] = in->dims[d];
    return view_as(x, in, r, dims);
}

static tsr_status *unsqueeze_run(ocl_exec *x, void *state) {
    tensor_state *s = state;
    const ocl_tensor *in = ocl_exec_input(x, 0);
    if (!in) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "missing input");
    int64_t axes[MAX_LIST];
    int n;
    tsr_status *e = run_list(x, s, 1, axes, &n);
    if (e) return e;
    int32_t r = in->rank + (n > 0 ? n : 0);
    if (n < 0 || r > OCL_MAX_RANK) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "bad axes");
    bool ins[OCL_MAX_RANK] = {false};
    for (int i = 0; i < n; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
        if (a < 0 || a >= r || ins[a]) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "bad axis %lld", (long long)axes[i]);
        ins[a] = true;
    }
    int64_t dims[OCL_MAX_RANK];
    for (int32_t d = 0, k = 0; d < r; d++) dims[d] = ins[d] ? 1 : in->dims[k++];
    return view_as(x, in, r, dims);
}

/* --- Transpose ------------------------------------------------------------------ */

static tsr_status *gather_launch(ocl_exec *x, tensor_state *s, const ocl_tensor *in, const ocl_tensor *y, int base,
                                 const int32_t *meta) {
    cl_kernel k = NULL;
    tsr_status *e = kernel_for(s, ocl_elem_size(in->elem_type), &k);
    if (e || !y->count) return e;
    if (!fits_int((int64_t)in->count) || !fits_int((int64_t)y->count))
        return ocl_error(TSR_ERR_NOT_SUPPORTED, "tensor too large");
    cl_mem mb;
    if ((e = ocl_meta_buffer(ocl_exec_state(x), meta, 2 * (size_t)y->rank, &mb))) return e;
    int n = (int)y->count, rank = y->rank;
    cl_int err = clSetKernelArg(k, 0, sizeof(cl_mem), &in->mem);
    err |= clSetKernelArg(k, 1, sizeof(cl_mem), &y->mem);
    err |= clSetKernelArg(k, 2, sizeof(int), &n);
    err |= clSetKernelArg(k, 3, sizeof(int), &rank);
    err |= clSetKernelArg(k, 4, sizeof(int), &base);
    err |= clSetKernelArg(k, 5, sizeof(cl_mem), &mb);
    e = err == CL_SUCCESS ? ocl_launch_1d(ocl_exec_state(x), k, y->count, "strided_gather")
                          : ocl_cl_error(err, "clSetKernelArg(strided_gather)");
    clReleaseMemObject(mb);
    return e;
}

static void strides_of(const ocl_tensor *t, int64_t *st) {
    int64_t s = 1;
    for (int32_t d = t->rank - 1; d >= 0; d--) {
        st[d] = s;
        s *= t->dims[d];
    }
}

static tsr_status *transpose_prepare(ocl_state *st, const tsr_node *n, void **out) {
    tensor_state *s = NULL;
    tsr_status *e = state_new(st, n, "strided_gather", &s);
    if (e) return e;
    s->n_ints = ocl_attr_ints(n, "perm", s->ints, MAX_LIST);
    *out = s;
    return NULL;
}

static tsr_status *transpose_run(ocl_exec *x, void *state) {
    tensor_state *s = state;
    const ocl_tensor *in = ocl_exec_input(x, 0);
    if (!in) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "missing input");
    int64_t perm[OCL_MAX_RANK];
    bool seen[OCL_MAX_RANK] = {false};
    if (s->n_ints >= 0 && s->n_ints != in->rank)
        return ocl_error(TSR_ERR_INVALID_ARGUMENT, "perm has %d entries for rank %d", s->n_ints, (int)in->rank);
    for (int32_t d = 0; d < in->rank; d++) {
        perm[d] = s->n_ints >= 0 ? s->ints[d] : in->rank - 1 - d;
        if (perm[d] < 0) perm[d] += in->rank;
        if (perm[d] < 0 || perm[d] >= in->rank || seen[perm[d]])
            return ocl_error(TSR_ERR_INVALID_ARGUMENT, "perm is not a permutation");
        seen[perm[d]] = true;
    }
    int64_t dims[OCL_MAX_RANK], st[OCL_MAX_RANK];
    strides_of(in, st);
    int32_t meta[2 * OCL_MAX_RANK];
    for (int32_t d = 0; d < in->rank; d++) {
        dims[d] = in->dims[perm[d]];
        meta[d] = (int32_t)dims[d];
        meta[in->rank + d] = (int32_t)st[perm[d]];
    }
    ocl_tensor *y;
    tsr_status *e = ocl_exec_output(x, 0, in->elem_type, in->rank, dims, &y);
    if (e) return e;
    return gather_launch(x, s, in, y, 0, meta);
}

/* --- Slice ---------------------------------------------------------------- */

static tsr_status *slice_prepare(ocl_state *st, const tsr_node *n, void **out) {
    tensor_state *s = NULL;
    tsr_status *e = state_new(st, n, "strided_gather", &s);
    if (e) return e;
    *out = s;
    return NULL;
}

static const char *slice_check(const tsr_node *n, int32_t *reason, char *buf, size_t size) {
    (void)buf;
    (void)size;
    const char *why = check_movable(n, reason);
    if (why) return why;
    if (ocl_host->node_opset(n) < 10) {
        *reason = TSR_DECLINE_OPSET;
        return "Slice before opset 10 (attributes) not supported";
    }
    return NULL;
}

static tsr_status *slice_run(ocl_exec *x, void *state) {
    tensor_state *s = state;
    const ocl_tensor *in = ocl_exec_input(x, 0);
    if (!in) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "missing input");
    int64_t starts[MAX_LIST], ends[MAX_LIST], axes[MAX_LIST], steps[MAX_LIST];
    int ns, ne, na = -1, nst = -1;
    size_t got;
    tsr_status *e = ocl_exec_read_ints(x, 1, starts, MAX_LIST, &got);
    ns = (int)got;
    if (!e) e = ocl_exec_read_ints(x, 2, ends, MAX_LIST, &got);
    ne = (int)got;
    if (!e && ocl_exec_input(x, 3)) {
        e = ocl_exec_read_ints(x, 3, axes, MAX_LIST, &got);
        na = (int)got;
    }
    if (!e && ocl_exec_input(x, 4)) {
        e = ocl_exec_read_ints(x, 4, steps, MAX_LIST, &got);
        nst = (int)got;
    }
    if (e) return e;
    if (ns != ne || (na >= 0 && na != ns) || (nst >= 0 && nst != ns))
        return ocl_error(TSR_ERR_INVALID_ARGUMENT, "starts/ends/axes/steps lengths differ");
    int64_t st[OCL_MAX_RANK], start[OCL_MAX_RANK], step[OCL_MAX_RANK], dims[OCL_MAX_RANK];
    bool seen[OCL_MAX_RANK] = {false};
    strides_of(in, st);
    for (int32_t d = 0; d < in->rank; d++) start[d] = 0, step[d] = 1, dims[d] = in->dims[d];
    for (int i = 0; i < ns; i++) {
        int64_t a = na >= 0 ? axes[i] : i;
        if (a < 0) a += in->rank;
        if (a < 0 || a >= in->rank || seen[a]) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "bad axes");
        seen[a] = true;
        int64_t len = in->dims[a], sp = nst >= 0 ? steps[i] : 1, b = starts[i], en = ends[i];
        if (sp == 0) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "step 0");
        if (b < 0) b += len;
        if (en < 0) en += len;
        if (sp > 0) {
            b = b < 0 ? 0 : b > len ? len : b;
            en = en < 0 ? 0 : en > len ? len : en;
            dims[a] = en > b ? (en - b + sp - 1) / sp : 0;
        } else {
            b = b < 0 ? -1 : b > len - 1 ? len - 1 : b;
            en = en < -1 ? -1 : en > len - 1 ? len - 1 : en;
            dims[a] = b > en ? (b - en + (-sp) - 1) / (-sp) : 0;
        }
        start[a] = b;
        step[a] = sp;
    }
    int64_t base = 0;
    int32_t meta[2 * OCL_MAX_RANK];
    for (int32_t d = 0; d < in->rank; d++) {
        if (dims[d]) base += start[d] * st[d];
        meta[d] = (int32_t)dims[d];
        meta[in->rank + d] = (int32_t)(st[d] * step[d]);
    }
    ocl_tensor *y;
    e = ocl_exec_output(x, 0, in->elem_type, in->rank, dims, &y);
    if (e) return e;
    return gather_launch(x, s, in, y, (int)base, meta);
}

/* --- Concat ------------------------------------------------------------------ */

static const char *concat_check(const tsr_node *n, int32_t *reason, char *buf, size_t size) {
    (void)buf;
    (void)size;
    const char *why = check_movable(n, reason);
    if (why) return why;
    for (size_t i = 1; i < ocl_host->node_input_count(n); i++)
        if (ocl_input_type(n, i) != ocl_input_type(n, 0)) {
            *reason = TSR_DECLINE_TYPE;
            return "inputs of different types";
        }
    return NULL;
}

static tsr_status *concat_prepare(ocl_state *st, const tsr_node *n, void **out) {
    tensor_state *s = NULL;
    tsr_status *e = state_new(st, n, "concat_copy", &s);
    if (e) return e;
    s->axis = ocl_attr_int(n, "axis", 0);
    *out = s;
    return NULL;
}

static tsr_status *concat_run(ocl_exec *x, void *state) {
    tensor_state *s = state;
    size_t ni = ocl_exec_input_count(x);
    const ocl_tensor *first = ocl_exec_input(x, 0);
    if (!first) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "missing input");
    int64_t axis = s->axis < 0 ? s->axis + first->rank : s->axis;
    if (axis < 0 || axis >= first->rank) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "axis out of range");
    int64_t dims[OCL_MAX_RANK];
    for (int32_t d = 0; d < first->rank; d++) dims[d] = first->dims[d];
    dims[axis] = 0;
    for (size_t i = 0; i < ni; i++) {
        const ocl_tensor *t = ocl_exec_input(x, i);
        if (!t || t->rank != first->rank || t->elem_type != first->elem_type)
            return ocl_error(TSR_ERR_INVALID_ARGUMENT, "input %zu has another rank or type", i);
        for (int32_t d = 0; d < t->rank; d++)
            if (d != axis && t->dims[d] != first->dims[d])
                return ocl_error(TSR_ERR_INVALID_ARGUMENT, "input %zu differs off the axis", i);
        dims[axis] += t->dims[axis];
    }
    ocl_tensor *y;
    tsr_status *e = ocl_exec_output(x, 0, first->elem_type, first->rank, dims, &y);
    if (e || !y->count) return e;
    if (!fits_int((int64_t)y->count)) return ocl_error(TSR_ERR_NOT_SUPPORTED, "tensor too large");
    cl_kernel k = NULL;
    if ((e = kernel_for(s, ocl_elem_size(first->elem_type), &k))) return e;
    int inner = 1, len_out = (int)dims[axis], off = 0;
    for (int32_t d = (int32_t)axis + 1; d < first->rank; d++) inner *= (int)dims[d];
    for (size_t i = 0; i < ni && !e; i++) {
        const ocl_tensor *t = ocl_exec_input(x, i);
        int n = (int)t->count, len_in = (int)t->dims[axis];
        if (n) {
            cl_int err = clSetKernelArg(k, 0, sizeof(cl_mem), &t->mem);
            err |= clSetKernelArg(k, 1, sizeof(cl_mem), &y->mem);
            err |= clSetKernelArg(k, 2, sizeof(int), &n);
            err |= clSetKernelArg(k, 3, sizeof(int), &len_in);
            err |= clSetKernelArg(k, 4, sizeof(int), &inner);
            err |= clSetKernelArg(k, 5, sizeof(int), &len_out);
            err |= clSetKernelArg(k, 6, sizeof(int), &off);
            e = err == CL_SUCCESS ? ocl_launch_1d(ocl_exec_state(x), k, t->count, "concat_copy")
                                  : ocl_cl_error(err, "clSetKernelArg(concat_copy)");
        }
        off += len_in;
    }
    return e;
}

/* --- Gather (constant indices) ------------------------------------------------------- */

static const char *gather_check(const tsr_node *n, int32_t *reason, char *buf, size_t size) {
    (void)buf;
    (void)size;
    const char *why = check_movable(n, reason);
    if (why) return why;
    int64_t tmp[MAX_LIST];
    if (ocl_input_const_ints(n, 1, tmp, MAX_LIST) < 0) {
        *reason = TSR_DECLINE_OTHER;
        return "indices must be a constant of at most 64 int32/int64 values";
    }
    return NULL;
}

static tsr_status *gather_prepare(ocl_state *st, const tsr_node *n, void **out) {
    tensor_state *s = NULL;
    tsr_status *e = state_new(st, n, "gather_axis", &s);
    if (e) return e;
    s->axis = ocl_attr_int(n, "axis", 0);
    s->n_ints = ocl_input_const_ints(n, 1, s->ints, MAX_LIST);
    *out = s;
    return NULL;
}

static tsr_status *gather_run(ocl_exec *x, void *state) {
    tensor_state *s = state;
    const ocl_tensor *in = ocl_exec_input(x, 0), *ind = ocl_exec_input(x, 1);
    if (!in || !ind || (size_t)s->n_ints != ind->count) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "indices changed");
    int64_t axis = s->axis < 0 ? s->axis + in->rank : s->axis;
    if (axis < 0 || axis >= in->rank) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "axis out of range");
    int32_t rank = in->rank - 1 + ind->rank;
    if (rank > OCL_MAX_RANK) return ocl_error(TSR_ERR_NOT_SUPPORTED, "output rank too high");
    int64_t len = in->dims[axis];
    int32_t idx[MAX_LIST];
    for (int i = 0; i < s->n_ints; i++) {
        int64_t v = s->ints[i] < 0 ? s->ints[i] + len : s->ints[i];
        if (v < 0 || v >= len)
            return ocl_error(TSR_ERR_INVALID_ARGUMENT, "index %lld out of range [-%lld, %lld)", (long long)s->ints[i],
                             (long long)len, (long long)len);
        idx[i] = (int32_t)v;
    }
    int64_t dims[OCL_MAX_RANK];
    int32_t r = 0;
    for (int32_t d = 0; d < axis; d++) dims[r++] = in->dims[d];
    for (int32_t d = 0; d < ind->rank; d++) dims[r++] = ind->dims[d];
    for (int32_t d = (int32_t)axis + 1; d < in->rank; d++) dims[r++] = in->dims[d];
    ocl_tensor *y;
    tsr_status *e = ocl_exec_output(x, 0, in->elem_type, rank, dims, &y);
    if (e || !y->count) return e;
    if (!fits_int((int64_t)in->count) || !fits_int((int64_t)y->count))
        return ocl_error(TSR_ERR_NOT_SUPPORTED, "tensor too large");
    cl_kernel k = NULL;
    if ((e = kernel_for(s, ocl_elem_size(in->elem_type), &k))) return e;
    cl_mem ib;
    if ((e = ocl_meta_buffer(ocl_exec_state(x), idx, (size_t)s->n_ints, &ib))) return e;
    int n = (int)y->count, n_idx = s->n_ints, al = (int)len, inner = 1;
    for (int32_t d = (int32_t)axis + 1; d < in->rank; d++) inner *= (int)in->dims[d];
    cl_int err = clSetKernelArg(k, 0, sizeof(cl_mem), &in->mem);
    err |= clSetKernelArg(k, 1, sizeof(cl_mem), &ib);
    err |= clSetKernelArg(k, 2, sizeof(cl_mem), &y->mem);
    err |= clSetKernelArg(k, 3, sizeof(int), &n);
    err |= clSetKernelArg(k, 4, sizeof(int), &n_idx);
    err |= clSetKernelArg(k, 5, sizeof(int), &al);
    err |= clSetKernelArg(k, 6, sizeof(int), &inner);
    e = err == CL_SUCCESS ? ocl_launch_1d(ocl_exec_state(x), k, y->count, "gather_axis")
                          : ocl_cl_error(err, "clSetKernelArg(gather_axis)");
    clReleaseMemObject(ib);
    return e;
}

static tsr_status *transpose_like_prepare(ocl_state *st, const tsr_node *n, void **out) {
    return transpose_prepare(st, n, out);
}

const ocl_op ocl_ops_tensor[] = {
    {"Reshape", view_check, view_prepare, reshape_run, tensor_free},
    {"Flatten", view_check, view_prepare, flatten_run, tensor_free},
    {"Squeeze", view_check, view_prepare, squeeze_run, tensor_free},
    {"Unsqueeze", view_check, view_prepare, unsqueeze_run, tensor_free},
    /* float Identity inside an elementwise chain fuses instead (ocl_group.c) */
    {"Identity", view_check, view_prepare, identity_run, tensor_free},
    {"Transpose", view_check, transpose_like_prepare, transpose_run, tensor_free},
    {"Slice", slice_check, slice_prepare, slice_run, tensor_free},
    {"Concat", concat_check, concat_prepare, concat_run, tensor_free},
    {"Gather", gather_check, gather_prepare, gather_run, tensor_free},
    {NULL, NULL, NULL, NULL, NULL},
};
