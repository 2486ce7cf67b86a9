/* ReduceSum/Mean/Max/Min/Prod/SumSquare/L1/L2/LogSum/LogSumExp on float32. */
#include <stdlib.h>
#include <string.h>

#include "ocl_op.h"

#define MAX_AXES OCL_MAX_RANK

static const char *const reduce_names[] = {"ReduceSum",    "ReduceMean",      "ReduceMax", "ReduceMin",
                                           "ReduceProd",   "ReduceSumSquare", "ReduceL1",  "ReduceL2",
                                           "ReduceLogSum", "ReduceLogSumExp"};

typedef struct reduce_state {
    cl_kernel k;
    int op;
    bool keepdims, noop_empty;
    int64_t axes[MAX_AXES];
    int n_axes; /* from the attribute or constant input 1; <= 0: all axes */
} reduce_state;

static int op_index(const char *op) {
    for (int i = 0; i < (int)(sizeof reduce_names / sizeof reduce_names[0]); i++)
        if (!strcmp(reduce_names[i], op)) return i;
    return -1;
}

static const char *reduce_check(const tsr_node *n, int32_t *reason, char *buf, size_t size) {
    (void)buf;
    (void)size;
    if (ocl_input_type(n, 0) != TSR_FLOAT || ocl_output_type(n, 0) != TSR_FLOAT) {
        *reason = TSR_DECLINE_TYPE;
        return "only float32 tensors";
    }
    int64_t tmp[MAX_AXES + 1];
    if (ocl_input_present(n, 1) && ocl_input_const_ints(n, 1, tmp, MAX_AXES) < 0) {
        *reason = TSR_DECLINE_OTHER;
        return "axes must be a constant";
    }
    return NULL;
}

static void reduce_free(void *p) {
    reduce_state *s = p;
    if (!s) return;
    if (s->k) clReleaseKernel(s->k);
    free(s);
}

static tsr_status *reduce_prepare(ocl_state *st, const tsr_node *n, void **out) {
    reduce_state *s = calloc(1, sizeof *s);
    if (!s) return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
    tsr_status *e = ocl_kernel_create(st, "reduce", "", "reduce", &s->k);
    if (e) {
        free(s);
        return e;
    }
    s->op = op_index(ocl_host->node_op_type(n));
    s->keepdims = ocl_attr_int(n, "keepdims", 1) != 0;
    s->noop_empty = ocl_attr_int(n, "noop_with_empty_axes", 0) != 0;
    s->n_axes = ocl_input_present(n, 1) ? ocl_input_const_ints(n, 1, s->axes, MAX_AXES)
                                        : ocl_attr_ints(n, "axes", s->axes, MAX_AXES);
    *out = s;
    return NULL;
}

static tsr_status *reduce_run(ocl_exec *x, void *state) {
    reduce_state *s = state;
    const ocl_tensor *in = ocl_exec_input(x, 0);
    if (!in) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "missing input");
    bool red[OCL_MAX_RANK] = {false};
    if (s->n_axes <= 0) {
        if (s->noop_empty) {
            for (int32_t d = 0; d < in->rank; d++) red[d] = false;
        } else {
            for (int32_t d = 0; d < in->rank; d++) red[d] = true;
        }
    }
    for (int i = 0; i < s->n_axes; i++) {
        int64_t a = s->axes[i] < 0 ? s->axes[i] + in->rank : s->axes[i];
        if (a < 0 || a >= in->rank)
            return ocl_error(TSR_ERR_INVALID_ARGUMENT, "axis %lld out of range", (long long)s->axes[i]);
        red[a] = true;
    }
    int32_t rank = in->rank;
    int32_t meta[4 * OCL_MAX_RANK + 1];
    int64_t odims[OCL_MAX_RANK], stride = 1;
    int32_t orank = 0;
    size_t n_red = 1;
    for (int32_t d = rank - 1; d >= 0; d--) {
        meta[d] = red[d] ? 1 : (int32_t)in->dims[d];
        meta[rank + d] = red[d] ? 0 : (int32_t)stride;
        meta[2 * rank + d] = red[d] ? (int32_t)in->dims[d] : 1;
        meta[3 * rank + d] = red[d] ? (int32_t)stride : 0;
        if (red[d]) n_red *= (size_t)in->dims[d];
        stride *= in->dims[d];
    }
    for (int32_t d = 0; d < rank; d++)
        if (!red[d] || s->keepdims) odims[orank++] = red[d] ? 1 : in->dims[d];
    ocl_tensor *y;
    tsr_status *e = ocl_exec_output(x, 0, TSR_FLOAT, orank, odims, &y);
    if (e || !y->count) return e;
    if (in->count > INT32_MAX) return ocl_error(TSR_ERR_NOT_SUPPORTED, "tensor too large");
    cl_mem mb;
    if ((e = ocl_meta_buffer(ocl_exec_state(x), meta, 4 * (size_t)rank, &mb))) return e;
    int n_out = (int)y->count, nr = (int)n_red, op = s->op;
    cl_int err = clSetKernelArg(s->k, 0, sizeof(cl_mem), &in->mem);
    err |= clSetKernelArg(s->k, 1, sizeof(cl_mem), &y->mem);
    err |= clSetKernelArg(s->k, 2, sizeof(int), &n_out);
    err |= clSetKernelArg(s->k, 3, sizeof(int), &rank);
    err |= clSetKernelArg(s->k, 4, sizeof(int), &nr);
    err |= clSetKernelArg(s->k, 5, sizeof(int), &op);
    err |= clSetKernelArg(s->k, 6, sizeof(cl_mem), &mb);
    e = err == CL_SUCCESS ? ocl_launch_1d(ocl_exec_state(x), s->k, y->count, "reduce")
                          : ocl_cl_error(err, "clSetKernelArg(reduce)");
    clReleaseMemObject(mb);
    return e;
}

const ocl_op ocl_ops_reduce[] = {
    {"ReduceSum", reduce_check, reduce_prepare, reduce_run, reduce_free},
    {"ReduceMean", reduce_check, reduce_prepare, reduce_run, reduce_free},
    {"ReduceMax", reduce_check, reduce_prepare, reduce_run, reduce_free},
    {"ReduceMin", reduce_check, reduce_prepare, reduce_run, reduce_free},
    {"ReduceProd", reduce_check, reduce_prepare, reduce_run, reduce_free},
    {"ReduceSumSquare", reduce_check, reduce_prepare, reduce_run, reduce_free},
    {"ReduceL1", reduce_check, reduce_prepare, reduce_run, reduce_free},
    {"ReduceL2", reduce_check, reduce_prepare, reduce_run, reduce_free},
    {"ReduceLogSum", reduce_check, reduce_prepare, reduce_run, reduce_free},
    {"ReduceLogSumExp", reduce_check, reduce_prepare, reduce_run, reduce_free},
    {NULL, NULL, NULL, NULL, NULL},
};
