/* The exec interface the ops use (ocl_exec.h): a step's inputs, its outputs
 * (host-allocated piece outputs, private device buffers, or views of another
 * buffer) and small reads back to the host. Nothing here calls the piece
 * driver or an op. */
#include "ocl_exec.h"
#include "ocl_fuse.h" /* ocl_step: the names of a step's inputs and outputs */

size_t ocl_exec_input_count(const ocl_exec *x) { return x->step->n_in; }
ocl_state *ocl_exec_state(const ocl_exec *x) { return x->st; }
const char *ocl_exec_node_name(const ocl_exec *x) { return ocl_host->node_name(x->step->node); }

const ocl_tensor *ocl_exec_input(const ocl_exec *x, size_t index) {
    if (index >= x->step->n_in || !x->step->in_names[index]) return NULL;
    size_t slot = x->in_slot[index];
    return slot != SIZE_MAX && x->vals[slot].present ? &x->vals[slot].t : NULL;
}

bool ocl_dims_count(int32_t rank, const int64_t *dims, size_t *count) {
    size_t c = 1;
    for (int32_t i = 0; i < rank; i++) {
        if (dims[i] < 0) return false;
        if (dims[i] && c > SIZE_MAX / (size_t)dims[i]) return false;
        c *= (size_t)dims[i];
    }
    *count = c;
    return true;
}

size_t ocl_elem_size(int32_t t) {
    switch (t) {
    case TSR_FLOAT:
    case TSR_INT32:
    case TSR_UINT32: return 4;
    case TSR_INT64:
    case TSR_UINT64:
    case TSR_DOUBLE: return 8;
    case TSR_INT16:
    case TSR_UINT16:
    case TSR_FLOAT16:
    case TSR_BFLOAT16: return 2;
    case TSR_INT8:
    case TSR_UINT8:
    case TSR_BOOL: return 1;
    default: return 0;
    }
}

bool ocl_tensor_fill(ocl_tensor *t, int32_t elem_type, int32_t rank, const int64_t *dims) {
    size_t es = ocl_elem_size(elem_type);
    if (rank < 0 || rank > OCL_MAX_RANK || !es) return false;
    t->elem_type = elem_type;
    t->rank = rank;
    for (int32_t i = 0; i < rank; i++) t->dims[i] = dims[i];
    if (!ocl_dims_count(rank, dims, &t->count) || t->count > SIZE_MAX / es) return false;
    t->nbytes = t->count * es;
    return true;
}

/* The slot of step output `index` (the scratch slot "" for an omitted one),
 * not yet produced this run. */
static tsr_status *output_slot(ocl_exec *x, size_t index, ocl_slot **out) {
    /* an omitted optional output (NULL name) has the slot "" */
    size_t slot = index < x->step->n_out ? x->out_slot[index] : x->scratch;
    if (slot == SIZE_MAX || x->vals[slot].present)
        return ocl_error(TSR_ERR_PROVIDER, "opencl: node '%s': output %zu has no slot", ocl_exec_node_name(x), index);
    *out = &x->vals[slot];
    return NULL;
}

tsr_status *ocl_exec_output(ocl_exec *x, size_t index, int32_t elem_type, int32_t rank, const int64_t *dims,
                            ocl_tensor **out) {
    ocl_slot *v = NULL;
    tsr_status *s = output_slot(x, index, &v);
    if (s) return s;
    if (!ocl_tensor_fill(&v->t, elem_type, rank, dims))
        return ocl_error(TSR_ERR_INVALID_ARGUMENT, "opencl: node '%s': output %zu has an invalid shape or type",
                         ocl_exec_node_name(x), index);
    size_t gi = v->out_index;
    if (gi != SIZE_MAX) {
        tsr_tensor *ht;
        s = ocl_host->run_alloc_output(x->ctx, gi, elem_type, rank, dims, &ht);
        if (s) return s;
        v->t.mem = (cl_mem)ht->data;
        v->owned = false;
    } else {
        /* an intermediate of the piece, on the device until the piece run
         * ends: the run's working_bytes limit counts it (host of ABI 1
         * before run_charge: not counted) */
        if (TSR_HAS_MEMBER(ocl_host, tsr_host_api, run_charge) && ocl_host->run_charge &&
            (s = ocl_host->run_charge(x->ctx, v->t.nbytes, "an OpenCL intermediate")))
            return s;
        cl_int err;
        v->t.mem = clCreateBuffer(x->st->context, CL_MEM_READ_WRITE, v->t.nbytes ? v->t.nbytes : 4, NULL, &err);
        if (!v->t.mem) return ocl_cl_error(err, "clCreateBuffer");
        v->owned = true;
    }
    v->present = true;
    *out = &v->t;
    return NULL;
}

tsr_status *ocl_exec_output_view(ocl_exec *x, size_t index, const ocl_tensor *base, int32_t rank, const int64_t *dims) {
    ocl_slot *v = NULL;
    tsr_status *s = output_slot(x, index, &v);
    if (s) return s;
    if (v->out_index != SIZE_MAX) {
        /* The host allocated this output: ABI 1 has no way to hand it
         * `base`'s buffer, so the bytes move, on the device. */
        ocl_tensor *y;
        if ((s = ocl_exec_output(x, index, base->elem_type, rank, dims, &y))) return s;
        return ocl_device_copy(x->st, base->mem, y->mem, base->nbytes);
    }
    ocl_tensor t;
    if (!ocl_tensor_fill(&t, base->elem_type, rank, dims) || t.nbytes != base->nbytes)
        return ocl_error(TSR_ERR_INVALID_ARGUMENT, "opencl: node '%s': view of %zu bytes as a shape of another size",
                         ocl_exec_node_name(x), base->nbytes);
    /* Same buffer, new shape. The view holds its own reference, so the base
     * stays alive however long the view is read, whoever frees it first. */
    cl_int err = clRetainMemObject(base->mem);
    if (err != CL_SUCCESS) return ocl_cl_error(err, "clRetainMemObject");
    t.mem = base->mem;
    v->t = t;
    v->owned = true;
    v->present = true;
    x->st->views++;
    return NULL;
}

tsr_status *ocl_exec_read_ints(ocl_exec *x, size_t index, int64_t *vals, size_t max, size_t *n) {
    const ocl_tensor *t = ocl_exec_input(x, index);
    if (!t || (t->elem_type != TSR_INT64 && t->elem_type != TSR_INT32) || t->count > max || t->count > 64)
        return ocl_error(TSR_ERR_INVALID_ARGUMENT, "opencl: node '%s': input %zu must be a short int64 or int32 list",
                         ocl_exec_node_name(x), index);
    *n = t->count;
    if (!t->count) return NULL;
    if (t->elem_type == TSR_INT64) return ocl_read(x->st, t->mem, 0, t->nbytes, vals);
    int32_t tmp[64];
    tsr_status *s = ocl_read(x->st, t->mem, 0, t->nbytes, tmp);
    for (size_t i = 0; i < t->count && !s; i++) vals[i] = tmp[i];
    return s;
}
