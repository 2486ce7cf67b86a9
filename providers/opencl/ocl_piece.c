/* Compiling and running pieces: each node (or fused group) becomes a step;
 * values passed between steps of one piece stay in private device buffers,
 * and only the piece's outputs go through the host's allocator.
 *
 * Buffer lifetimes within a run: a value's slot is `owned` when it holds a
 * reference this run must drop (a private buffer it created, or a view's
 * retained reference to its base's buffer); piece inputs and host-allocated
 * outputs are the host's. Every owned reference is dropped when the run
 * ends, after the last step was enqueued; OpenCL keeps a buffer alive until
 * the commands using it have finished, so nothing waits here. */
#include <stdlib.h>
#include <string.h>

#include "ocl_fuse.h"
#include "ocl_piece.h"

typedef struct piece_value {
    const char *name;
    ocl_tensor t;
    bool present;
    bool owned; /* holds a reference this run releases (see above) */
} piece_value;

struct ocl_exec {
    ocl_state *st;
    const ocl_step *step;
    tsr_run_context *ctx;
    const tsr_graph *graph;
    piece_value *vals;
    size_t n_vals;
};

typedef struct ocl_piece {
    ocl_state *st;
    const tsr_graph *graph;
    ocl_step *steps;
    size_t n_steps;
} ocl_piece;

/* --- the exec interface the ops use --------------------------------------- */

static piece_value *value_find(ocl_exec *x, const char *name) {
    for (size_t i = 0; i < x->n_vals; i++)
        if (strcmp(x->vals[i].name, name) == 0) return &x->vals[i];
    return NULL;
}

size_t ocl_exec_input_count(const ocl_exec *x) { return x->step->n_in; }
ocl_state *ocl_exec_state(const ocl_exec *x) { return x->st; }
const char *ocl_exec_node_name(const ocl_exec *x) { return ocl_host->node_name(x->step->node); }

const ocl_tensor *ocl_exec_input(const ocl_exec *x, size_t index) {
    if (index >= x->step->n_in || !x->step->in_names[index]) return NULL;
    piece_value *v = value_find((ocl_exec *)x, x->step->in_names[index]);
    return v && v->present ? &v->t : NULL;
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
    case TSR_FLOAT: case TSR_INT32: case TSR_UINT32: return 4;
    case TSR_INT64: case TSR_UINT64: case TSR_DOUBLE: return 8;
    case TSR_INT16: case TSR_UINT16: case TSR_FLOAT16: case TSR_BFLOAT16: return 2;
    case TSR_INT8: case TSR_UINT8: case TSR_BOOL: return 1;
    default: return 0;
    }
}

static bool fill_tensor(ocl_tensor *t, int32_t elem_type, int32_t rank, const int64_t *dims) {
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
static tsr_status *output_slot(ocl_exec *x, size_t index, const char **name, piece_value **out) {
    const char *nm = index < x->step->n_out ? x->step->out_names[index] : NULL;
    if (!nm) nm = ""; /* an omitted optional output: a private scratch buffer */
    piece_value *v = value_find(x, nm);
    if (!v || v->present)
        return ocl_error(TSR_ERR_PROVIDER, "opencl: node '%s': output %zu has no slot",
                         ocl_exec_node_name(x), index);
    *name = nm;
    *out = v;
    return NULL;
}

/* Index of `name` among the piece's outputs, or SIZE_MAX when it stays inside. */
static size_t piece_output_index(const ocl_exec *x, const char *name) {
    size_t no = ocl_host->graph_output_count(x->graph);
    for (size_t k = 0; k < no && name[0]; k++)
        if (strcmp(ocl_host->value_name(ocl_host->graph_output(x->graph, k)), name) == 0) return k;
    return SIZE_MAX;
}

tsr_status *ocl_exec_output(ocl_exec *x, size_t index, int32_t elem_type, int32_t rank,
                            const int64_t *dims, ocl_tensor **out) {
    const char *name;
    piece_value *v;
    tsr_status *s = output_slot(x, index, &name, &v);
    if (s) return s;
    if (!fill_tensor(&v->t, elem_type, rank, dims))
        return ocl_error(TSR_ERR_INVALID_ARGUMENT,
                         "opencl: node '%s': output %zu has an invalid shape or type",
                         ocl_exec_node_name(x), index);
    size_t gi = piece_output_index(x, name);
    if (gi != SIZE_MAX) {
        tsr_tensor *ht;
        s = ocl_host->run_alloc_output(x->ctx, gi, elem_type, rank, dims, &ht);
        if (s) return s;
        v->t.mem = (cl_mem)ht->data;
        v->owned = false;
    } else {
        cl_int err;
        v->t.mem = clCreateBuffer(x->st->context, CL_MEM_READ_WRITE, v->t.nbytes ? v->t.nbytes : 4,
                                  NULL, &err);
        if (!v->t.mem) return ocl_cl_error(err, "clCreateBuffer");
        v->owned = true;
    }
    v->present = true;
    *out = &v->t;
    return NULL;
}

tsr_status *ocl_exec_output_view(ocl_exec *x, size_t index, const ocl_tensor *base, int32_t rank,
                                 const int64_t *dims) {
    const char *name;
    piece_value *v;
    tsr_status *s = output_slot(x, index, &name, &v);
    if (s) return s;
    if (piece_output_index(x, name) != SIZE_MAX) {
        /* The host allocated this output: ABI 1 has no way to hand it
         * `base`'s buffer, so the bytes move, on the device. */
        ocl_tensor *y;
        if ((s = ocl_exec_output(x, index, base->elem_type, rank, dims, &y))) return s;
        return ocl_device_copy(x->st, base->mem, y->mem, base->nbytes);
    }
    ocl_tensor t;
    if (!fill_tensor(&t, base->elem_type, rank, dims) || t.nbytes != base->nbytes)
        return ocl_error(TSR_ERR_INVALID_ARGUMENT,
                         "opencl: node '%s': view of %zu bytes as a shape of another size",
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
    if (!t || (t->elem_type != TSR_INT64 && t->elem_type != TSR_INT32) || t->count > max ||
        t->count > 64)
        return ocl_error(TSR_ERR_INVALID_ARGUMENT,
                         "opencl: node '%s': input %zu must be a short int64 or int32 list",
                         ocl_exec_node_name(x), index);
    *n = t->count;
    if (!t->count) return NULL;
    if (t->elem_type == TSR_INT64) return ocl_read(x->st, t->mem, 0, t->nbytes, vals);
    int32_t tmp[64];
    tsr_status *s = ocl_read(x->st, t->mem, 0, t->nbytes, tmp);
    for (size_t i = 0; i < t->count && !s; i++) vals[i] = tmp[i];
    return s;
}

/* --- compile / run / release -------------------------------------------- */

void ocl_piece_release(void *ps) {
    ocl_piece *p = ps;
    if (!p) return;
    ocl_consts_drop(p->st, p);
    for (size_t i = 0; i < p->n_steps; i++) ocl_step_free(&p->steps[i]);
    free(p->steps);
    free(p);
}

tsr_status *ocl_piece_compile(void *state, const tsr_graph *graph, void **out) {
    ocl_state *st = state;
    if (!st->have_device) return ocl_error(TSR_ERR_PROVIDER, "opencl: no device");
    ocl_piece *p = calloc(1, sizeof *p);
    if (!p) return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
    p->st = st;
    p->graph = graph;
    tsr_status *s = ocl_fuse_steps(st, graph, &p->steps, &p->n_steps);
    /* The host uploads constant inputs from this memory, which lives until
     * release: those writes need not block (ocl_transfer.c). */
    size_t ni = ocl_host->graph_input_count(graph);
    for (size_t i = 0; i < ni && !s; i++) {
        const tsr_tensor *c = ocl_host->value_constant(ocl_host->graph_input(graph, i));
        if (c && c->memory_kind == TSR_MEMORY_HOST) s = ocl_consts_add(st, p, c->data, c->nbytes);
    }
    if (s) {
        ocl_piece_release(p);
        return s;
    }
    *out = p;
    return NULL;
}

static tsr_status *add_value(piece_value **vals, size_t *n, size_t *cap, const char *name) {
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*vals)[i].name, name) == 0) return NULL;
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        piece_value *g = realloc(*vals, sizeof *g * nc);
        if (!g) return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
        *vals = g;
        *cap = nc;
    }
    memset(&(*vals)[*n], 0, sizeof **vals);
    (*vals)[(*n)++].name = name;
    return NULL;
}

tsr_status *ocl_piece_run(void *ps, tsr_run_context *ctx) {
    ocl_piece *p = ps;
    piece_value *vals = NULL;
    size_t n = 0, cap = 0;
    tsr_status *s = NULL;
    size_t ni = ocl_host->graph_input_count(p->graph);
    for (size_t i = 0; i < ni && !s; i++) {
        const char *name = ocl_host->value_name(ocl_host->graph_input(p->graph, i));
        if ((s = add_value(&vals, &n, &cap, name))) break;
        const tsr_tensor *t = ocl_host->run_input(ctx, i);
        if (!t) continue;
        if (t->memory_kind != TSR_MEMORY_DEVICE) {
            s = ocl_error(TSR_ERR_PROVIDER, "opencl: input '%s' is not in device memory", name);
            break;
        }
        piece_value *v = &vals[n - 1];
        if (!fill_tensor(&v->t, t->elem_type, t->rank, t->dims)) {
            s = ocl_error(TSR_ERR_INVALID_ARGUMENT, "opencl: input '%s' has an unsupported type or rank", name);
            break;
        }
        v->t.mem = (cl_mem)t->data;
        v->present = true;
    }
    for (size_t k = 0; k < p->n_steps && !s; k++)
        for (size_t o = 0; o < p->steps[k].n_out && !s; o++)
            s = add_value(&vals, &n, &cap, p->steps[k].out_names[o] ? p->steps[k].out_names[o] : "");
    for (size_t k = 0; k < p->n_steps && !s; k++) {
        ocl_exec x = {p->st, &p->steps[k], ctx, p->graph, vals, n};
        /* The scratch slot for omitted outputs is reusable per step. */
        piece_value *scratch = value_find(&x, "");
        if (scratch && scratch->present) {
            if (scratch->owned) clReleaseMemObject(scratch->t.mem);
            scratch->present = scratch->owned = false;
        }
        ocl_state *st = p->st;
        uint64_t k0 = st->kernels, c0 = st->copies, v0 = st->views;
        size_t slot = ocl_stats_begin(st, ocl_host->node_op_type(p->steps[k].node));
        s = p->steps[k].op->run(&x, p->steps[k].op_state);
        ocl_stats_end(st, slot, st->kernels - k0, st->copies - c0, st->views - v0);
        if (s) {
            tsr_status *w = ocl_error(ocl_host->status_code(s), "opencl: node '%s' (%s): %s",
                                      ocl_host->node_name(p->steps[k].node),
                                      ocl_host->node_op_type(p->steps[k].node),
                                      ocl_host->status_message(s));
            ocl_host->status_free(s);
            s = w;
        }
    }
    for (size_t i = 0; i < n; i++)
        if (vals[i].owned && vals[i].t.mem) clReleaseMemObject(vals[i].t.mem);
    free(vals);
    p->st->runs++;
    ocl_profile_collect(p->st);
    return s;
}
