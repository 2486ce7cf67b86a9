/* Pad (constant, edge, reflect) for any element of 1, 2, 4 or 8 bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl_op.h"

#define MAX_PADS (2 * OCL_MAX_RANK)

typedef struct pad_state {
    ocl_state *st;
    cl_kernel k[4];
    int mode;
    int64_t pads[MAX_PADS];
    int n_pads;       /* from the attribute (opset < 11); -1: input 1 */
    float attr_value; /* opset < 11 */
} pad_state;

static void pad_free(void *p) {
    pad_state *s = p;
    if (!s) return;
    for (int i = 0; i < 4; i++)
        if (s->k[i]) clReleaseKernel(s->k[i]);
    free(s);
}

static int mode_of(const tsr_node *n) {
    if (ocl_attr_string_is(n, "mode", "constant", true)) return 0;
    if (ocl_attr_string_is(n, "mode", "edge", false)) return 1;
    if (ocl_attr_string_is(n, "mode", "reflect", false)) return 2;
    return -1;
}

static const char *pad_check(const tsr_node *n, int32_t *reason, char *buf, size_t size) {
    (void)buf;
    (void)size;
    if (!ocl_elem_size(ocl_input_type(n, 0)) || ocl_output_type(n, 0) != ocl_input_type(n, 0)) {
        *reason = TSR_DECLINE_TYPE;
        return "element type not supported";
    }
    if (mode_of(n) < 0) {
        *reason = TSR_DECLINE_ATTRIBUTE;
        return "only constant, edge and reflect modes";
    }
    if (ocl_input_present(n, 3)) {
        *reason = TSR_DECLINE_OTHER;
        return "axes input not supported";
    }
    /* negative pads (cropping) have no kernel: decline where they show now
     * rather than fail the run */
    int64_t attr[MAX_PADS];
    const int64_t *pads = NULL;
    size_t np = 0;
    if (ocl_host->node_opset(n) < 11) {
        int k = ocl_attr_ints(n, "pads", attr, MAX_PADS);
        pads = attr;
        np = k > 0 ? (size_t)k : 0;
    } else if (ocl_input_present(n, 1)) {
        const tsr_tensor *t = ocl_host->value_constant(ocl_host->node_input(n, 1));
        if (t && t->elem_type == TSR_INT64 && t->rank == 1) {
            pads = t->data;
            np = (size_t)t->dims[0];
        }
    }
    for (size_t i = 0; pads && i < np; i++)
        if (pads[i] < 0) {
            *reason = TSR_DECLINE_ATTRIBUTE;
            return "negative pads (cropping)";
        }
    return NULL;
}

static tsr_status *pad_prepare(ocl_state *st, const tsr_node *n, void **out) {
    pad_state *s = calloc(1, sizeof *s);
    if (!s) return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
    s->st = st;
    s->mode = mode_of(n);
    s->n_pads = ocl_host->node_opset(n) < 11 ? ocl_attr_ints(n, "pads", s->pads, MAX_PADS) : -1;
    s->attr_value = ocl_attr_float(n, "value", 0.0f);
    *out = s;
    return NULL;
}

static tsr_status *pad_run(ocl_exec *x, void *state) {
    pad_state *s = state;
    const ocl_tensor *in = ocl_exec_input(x, 0);
    if (!in) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "missing input");
    int64_t pads[MAX_PADS];
    size_t np = 0;
    tsr_status *e = NULL;
    if (s->n_pads >= 0) {
        np = (size_t)s->n_pads;
        memcpy(pads, s->pads, sizeof(int64_t) * np);
    } else {
        e = ocl_exec_read_ints(x, 1, pads, MAX_PADS, &np);
        if (e) return e;
    }
    if (np != 2 * (size_t)in->rank)
        return ocl_error(TSR_ERR_INVALID_ARGUMENT, "pads has %zu values for rank %d", np, (int)in->rank);
    /* the constant's bits, as wide as the element */
    uint64_t value = 0;
    size_t es = ocl_elem_size(in->elem_type);
    const ocl_tensor *cv = ocl_exec_input(x, 2);
    if (s->n_pads >= 0) {
        if (in->elem_type == TSR_FLOAT) memcpy(&value, &s->attr_value, sizeof(float));
    } else if (cv && cv->count) {
        if (cv->elem_type != in->elem_type)
            return ocl_error(TSR_ERR_INVALID_ARGUMENT, "constant_value type differs from data");
        tsr_status *e = ocl_read(ocl_exec_state(x), cv->mem, 0, es, &value);
        if (e) return e;
    }
    int32_t rank = in->rank, meta[3 * OCL_MAX_RANK + 1];
    int64_t dims[OCL_MAX_RANK];
    for (int32_t d = 0; d < rank; d++) {
        dims[d] = in->dims[d] + pads[d] + pads[d + rank];
        if (dims[d] < 0) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "pads shrink axis %d below 0", (int)d);
        if (pads[d] < 0 || pads[d + rank] < 0) return ocl_error(TSR_ERR_NOT_SUPPORTED, "negative pads not supported");
        if (s->mode != 0 && in->dims[d] == 0 && dims[d] > 0)
            return ocl_error(TSR_ERR_INVALID_ARGUMENT, "cannot edge/reflect-pad an empty axis");
        meta[d] = (int32_t)dims[d];
        meta[rank + d] = (int32_t)in->dims[d];
        meta[2 * rank + d] = (int32_t)pads[d];
    }
    ocl_tensor *y;
    if ((e = ocl_exec_output(x, 0, in->elem_type, rank, dims, &y)) || !y->count) return e;
    if (y->count > INT32_MAX || in->count > INT32_MAX) return ocl_error(TSR_ERR_NOT_SUPPORTED, "tensor too large");
    int slot = es == 1 ? 0 : es == 2 ? 1 : es == 4 ? 2 : 3;
    static const char *types[4] = {"uchar", "ushort", "uint", "ulong"};
    if (!s->k[slot]) {
        char opts[32];
        snprintf(opts, sizeof opts, "-DT=%s", types[slot]);
        if ((e = ocl_kernel_create(s->st, "tensor", opts, "pad_nd", &s->k[slot]))) return e;
    }
    cl_kernel k = s->k[slot];
    cl_mem mb;
    if ((e = ocl_meta_buffer(ocl_exec_state(x), meta, 3 * (size_t)rank, &mb))) return e;
    int n = (int)y->count, mode = s->mode;
    /* T is the element's width; the value's low bytes hold it (little endian) */
    cl_int err = clSetKernelArg(k, 0, sizeof(cl_mem), &in->mem);
    err |= clSetKernelArg(k, 1, sizeof(cl_mem), &y->mem);
    err |= clSetKernelArg(k, 2, sizeof(int), &n);
    err |= clSetKernelArg(k, 3, sizeof(int), &rank);
    err |= clSetKernelArg(k, 4, sizeof(int), &mode);
    err |= clSetKernelArg(k, 5, es, &value);
    err |= clSetKernelArg(k, 6, sizeof(cl_mem), &mb);
    e = err == CL_SUCCESS ? ocl_launch_1d(ocl_exec_state(x), k, y->count, "pad_nd")
                          : ocl_cl_error(err, "clSetKernelArg(pad_nd)");
    clReleaseMemObject(mb);
    return e;
}

const ocl_op ocl_ops_pad[] = {
    {"Pad", pad_check, pad_prepare, pad_run, pad_free},
    {NULL, NULL, NULL, NULL, NULL},
};
