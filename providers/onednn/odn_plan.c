/* A compiled piece: its values, their dnnl memories, and the steps that
 * compute them. Here the helpers builders add those with, and freeing and
 * running a plan; odn_plan_build.c builds one (once per set of input
 * shapes) by calling the builders. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <oneapi/dnnl/dnnl_debug.h>

#include "odn.h"

int64_t odn_numel(int32_t rank, const int64_t *dims) {
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++) {
        if (dims[i] < 0) return -1;
        if (dims[i] != 0 && n > INT64_MAX / dims[i]) return -1;
        n *= dims[i];
    }
    return n;
}

dnnl_data_type_t odn_dnnl_type(int32_t tsr_type) {
    switch (tsr_type) {
    case TSR_FLOAT: return dnnl_f32;
    case TSR_UINT8: return dnnl_u8;
    case TSR_INT8: return dnnl_s8;
    case TSR_INT32: return dnnl_s32;
    case TSR_FLOAT16: return dnnl_f16;
    case TSR_BFLOAT16: return dnnl_bf16;
    default: return dnnl_data_type_undef;
    }
}

static int32_t tsr_type_of(dnnl_data_type_t dt) {
    switch (dt) {
    case dnnl_u8: return TSR_UINT8;
    case dnnl_s8: return TSR_INT8;
    case dnnl_s32: return TSR_INT32;
    case dnnl_f16: return TSR_FLOAT16;
    case dnnl_bf16: return TSR_BFLOAT16;
    default: return TSR_FLOAT;
    }
}

/* The dnnl type a value is held in: its own, or f32 when unknown. */
/* A bool value (a mask Slice or Expand makes) is held as bytes. */
static dnnl_data_type_t value_dt(const odn_value *v) {
    dnnl_data_type_t dt = v->elem_type == TSR_BOOL ? dnnl_u8 : odn_dnnl_type(v->elem_type);
    return dt == dnnl_data_type_undef ? dnnl_f32 : dt;
}

dnnl_status_t odn_plain_md(dnnl_memory_desc_t *md, int32_t rank, const int64_t *dims) {
    return odn_plain_md_typed(md, rank, dims, dnnl_f32);
}

dnnl_status_t odn_plain_md_typed(dnnl_memory_desc_t *md, int32_t rank, const int64_t *dims, dnnl_data_type_t dt) {
    dnnl_dims_t d, strides;
    /* oneDNN has no rank 0: a scalar is a one-element vector. */
    if (rank == 0) {
        d[0] = 1;
        strides[0] = 1;
        return dnnl_memory_desc_init_by_strides(md, 1, d, dt, strides);
    }
    int64_t s = 1;
    for (int32_t i = rank - 1; i >= 0; i--) {
        d[i] = dims[i];
        strides[i] = s;
        s *= dims[i] > 0 ? dims[i] : 1;
    }
    return dnnl_memory_desc_init_by_strides(md, rank, d, dt, strides);
}

static bool grow(void **arr, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return true;
    size_t n = *cap ? *cap * 2 : 16;
    while (n < need) n *= 2;
    void *g = realloc(*arr, n * elem);
    if (!g) return false;
    *arr = g;
    *cap = n;
    return true;
}

static tsr_status *no_memory(void) { return odn_host->status_new(TSR_ERR_NO_MEMORY, "onednn: out of memory"); }

void *odn_plan_alloc(odn_plan *p, size_t nbytes) {
    if (!grow((void **)&p->buffers, &p->buffer_cap, p->buffer_count + 1, sizeof(void *))) return NULL;
    /* 64-byte alignment: oneDNN's kernels load whole cache lines */
    size_t rounded = (nbytes + 63) / 64 * 64;
    if (rounded < nbytes) return NULL;
    void *b = aligned_alloc(64, rounded ? rounded : 64);
    if (b) p->buffers[p->buffer_count++] = b;
    return b;
}

tsr_status *odn_plan_new_mem(odn_plan *p, const dnnl_memory_desc_t *md, void *handle, const tsr_node *n,
                             dnnl_memory_t *out) {
    if (!grow((void **)&p->mems, &p->mem_cap, p->mem_count + 1, sizeof(dnnl_memory_t))) return no_memory();
    dnnl_status_t st = dnnl_memory_create(out, md, p->engine, handle);
    if (st != dnnl_success) return odn_dnnl_error(n, "memory creation", st);
    p->mems[p->mem_count++] = *out;
    return NULL;
}

/* A memory for an intermediate: its buffer comes from the arena once the
 * plan is complete. */
static tsr_status *new_arena_mem(odn_plan *p, const dnnl_memory_desc_t *md, const tsr_node *n, dnnl_memory_t *out) {
    if (!grow((void **)&p->arena_mems, &p->arena_cap, p->arena_count + 1, sizeof(dnnl_memory_t))) return no_memory();
    tsr_status *s = odn_plan_new_mem(p, md, DNNL_MEMORY_NONE, n, out);
    if (!s) p->arena_mems[p->arena_count++] = *out;
    return s;
}

tsr_status *odn_plan_arena_mem(odn_plan *p, const dnnl_memory_desc_t *md, const tsr_node *n, dnnl_memory_t *out) {
    return new_arena_mem(p, md, n, out);
}

odn_value *odn_plan_value(odn_plan *p, const tsr_value_info *vi) {
    size_t i;
    return vi && odn_index_get(&p->value_index, vi, &i) ? &p->values[i] : NULL;
}

odn_value *odn_plan_add_value(odn_plan *p, const tsr_value_info *vi) {
    odn_value *v = odn_plan_value(p, vi);
    if (v) return v;
    if (!grow((void **)&p->values, &p->value_cap, p->value_count + 1, sizeof(odn_value))) return NULL;
    if (vi && !odn_index_put(&p->value_index, vi, p->value_count)) return NULL;
    v = &p->values[p->value_count++];
    memset(v, 0, sizeof *v);
    v->info = vi;
    v->producer = -1;
    v->reader = -1;
    v->elem_type = vi ? odn_host->value_elem_type(vi) : 0;
    if (odn_f16_promoted(p, vi, v->elem_type)) { /* float16 computed in float32: odn_f16.c */
        v->f16 = true;
        v->elem_type = TSR_FLOAT;
    }
    v->input_index = -1;
    v->output_index = -1;
    return v;
}

int odn_plan_node_index(const odn_plan *p, const tsr_node *n) {
    size_t i;
    return odn_index_get(&p->node_index, n, &i) ? (int)i : -1;
}

const tsr_node *odn_plan_sole_consumer(const odn_plan *p, const odn_value *v) {
    if (v->output_index >= 0 || v->consumers != 1 || v->reader < 0) return NULL;
    return p->done[v->reader] ? NULL : p->nodes[v->reader];
}

/* A reorder of every run must have a fast kernel (one done once, on
 * constant weights, may use oneDNN's reference reorder: odn_reorder_once). */
static tsr_status *reorder_prim(odn_plan *p, const dnnl_memory_desc_t *from, const dnnl_memory_desc_t *to,
                                const tsr_node *n, dnnl_primitive_t *prim, char *impl, size_t impl_size) {
    dnnl_primitive_desc_t pd;
    dnnl_status_t st = dnnl_reorder_primitive_desc_create(&pd, from, p->engine, to, p->engine, NULL);
    if (st != dnnl_success) return odn_dnnl_error(n, "reorder setup", st);
    const char *name = odn_impl_name(pd);
    if (odn_impl_is_ref(name)) {
        tsr_status *s = odn_node_error(n, TSR_ERR_NOT_SUPPORTED,
                                       "oneDNN has only its reference implementation (%s) for a reorder", name);
        dnnl_primitive_desc_destroy(pd);
        return s;
    }
    snprintf(impl, impl_size, "reorder %s", name);
    st = dnnl_primitive_create(prim, pd);
    dnnl_primitive_desc_destroy(pd);
    if (st != dnnl_success) return odn_dnnl_error(n, "reorder creation", st);
    return NULL;
}

static tsr_status *add_step(odn_plan *p, const odn_step *s) {
    if (!grow((void **)&p->steps, &p->step_cap, p->step_count + 1, sizeof(odn_step))) return no_memory();
    odn_step *at = &p->steps[p->step_count++];
    *at = *s;
    /* a C loop is named after the op it computes: "loop Softmax" */
    if (!at->prim && !at->impl[0])
        snprintf(at->impl, sizeof at->impl, "loop %s", at->node ? odn_host->node_op_type(at->node) : "");
    return NULL;
}

/* Reorders src into dst: now, when the source is constant (weights are
 * reordered once), or as a step of every run. */
static tsr_status *reorder(odn_plan *p, dnnl_memory_t src, const dnnl_memory_desc_t *src_md, dnnl_memory_t dst,
                           const dnnl_memory_desc_t *dst_md, bool now, const tsr_node *n) {
    if (now) return odn_reorder_once(p, src, src_md, dst, dst_md, n);
    dnnl_primitive_t prim;
    odn_step step = {.nargs = 2, .node = n};
    tsr_status *s = reorder_prim(p, src_md, dst_md, n, &prim, step.impl, sizeof step.impl);
    if (s) return s;
    step.prim = prim;
    step.args[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, src};
    step.args[1] = (dnnl_exec_arg_t){DNNL_ARG_DST, dst};
    s = add_step(p, &step);
    if (s) dnnl_primitive_destroy(prim);
    return s;
}

tsr_status *odn_plan_reorder_now(odn_plan *p, dnnl_memory_t src, const dnnl_memory_desc_t *src_md, dnnl_memory_t dst,
                                 const dnnl_memory_desc_t *dst_md, const tsr_node *n) {
    return reorder(p, src, src_md, dst, dst_md, true, n);
}

tsr_status *odn_plan_add_reorder(odn_plan *p, dnnl_memory_t src, const dnnl_memory_desc_t *src_md, dnnl_memory_t dst,
                                 const dnnl_memory_desc_t *dst_md, const tsr_node *n) {
    return reorder(p, src, src_md, dst, dst_md, false, n);
}

tsr_status *odn_plan_mem_as(odn_plan *p, odn_value *v, const dnnl_memory_desc_t *md, const tsr_node *n,
                            dnnl_memory_t *out) {
    if (dnnl_memory_desc_equal(&v->md, md)) {
        *out = v->mem;
        return NULL;
    }
    dnnl_memory_t m;
    /* a constant's reorder runs now, so its target needs real memory now */
    tsr_status *s = v->constant ? odn_plan_new_mem(p, md, DNNL_MEMORY_ALLOCATE, n, &m) : new_arena_mem(p, md, n, &m);
    if (!s) s = reorder(p, v->mem, &v->md, m, md, v->constant != NULL, n);
    if (s) return s;
    *out = m;
    return NULL;
}

tsr_status *odn_plan_plain_mem(odn_plan *p, odn_value *v, const tsr_node *n, dnnl_memory_t *out) {
    dnnl_memory_desc_t plain;
    dnnl_status_t st = odn_plain_md_typed(&plain, v->rank, v->dims, value_dt(v));
    if (st != dnnl_success) return odn_dnnl_error(n, "plain layout", st);
    if (dnnl_memory_desc_equal(&v->md, &plain)) {
        *out = v->mem;
        return NULL;
    }
    if (!v->plain_mem) {
        tsr_status *s = odn_plan_mem_as(p, v, &plain, n, &v->plain_mem);
        if (s) return s;
    }
    *out = v->plain_mem;
    return NULL;
}

tsr_status *odn_plan_view(odn_plan *p, dnnl_memory_t base, const dnnl_memory_desc_t *md, const tsr_node *n,
                          dnnl_memory_t *out) {
    if (!grow((void **)&p->view_mems, &p->view_cap, p->view_count + 1, sizeof(dnnl_memory_t)) ||
        !grow((void **)&p->view_bases, &p->view_cap2, p->view_count + 1, sizeof(dnnl_memory_t)))
        return no_memory();
    void *handle = NULL;
    dnnl_memory_get_data_handle(base, &handle);
    tsr_status *s = odn_plan_new_mem(p, md, handle, n, out);
    if (s) return s;
    p->view_mems[p->view_count] = *out;
    p->view_bases[p->view_count++] = base;
    return NULL;
}

tsr_status *odn_plan_plain_view(odn_plan *p, odn_value *v, int32_t rank, const int64_t *dims, const int64_t *strides,
                                const tsr_node *n, dnnl_memory_t *out, dnnl_memory_desc_t *md_out) {
    dnnl_memory_t base = NULL;
    tsr_status *s = odn_plan_plain_mem(p, v, n, &base);
    if (s) return s;
    dnnl_memory_desc_t md;
    dnnl_status_t st;
    if (strides) {
        dnnl_dims_t d, str;
        for (int32_t i = 0; i < rank; i++) {
            d[i] = dims[i];
            str[i] = strides[i];
        }
        st = dnnl_memory_desc_init_by_strides(&md, rank, d, value_dt(v), str);
    } else {
        st = odn_plain_md_typed(&md, rank, dims, value_dt(v));
    }
    if (st != dnnl_success) return odn_dnnl_error(n, "view layout", st);
    if (md_out) *md_out = md;
    if (dnnl_memory_desc_equal(&md, &v->md) && base == v->mem) {
        *out = base;
        return NULL;
    }
    return odn_plan_view(p, base, &md, n, out);
}

tsr_status *odn_plan_define(odn_plan *p, odn_value *v, int32_t rank, const int64_t *dims, const dnnl_memory_desc_t *md,
                            const tsr_node *n) {
    if (rank > ODN_MAX_RANK) return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "rank %d output", (int)rank);
    v->rank = rank;
    memcpy(v->dims, dims, sizeof(int64_t) * (size_t)rank);
    if (odn_numel(rank, dims) < 0) return odn_node_error(n, TSR_ERR_INVALID_MODEL, "output size overflows");
    dnnl_memory_desc_t plain;
    /* the value's own element type: int8 and bf16 ops define non-f32 values */
    dnnl_status_t st = odn_plain_md_typed(&plain, rank, dims, value_dt(v));
    if (st != dnnl_success) return odn_dnnl_error(n, "plain layout", st);
    if (!md || v->output_index >= 0) {
        if (md && !dnnl_memory_desc_equal(md, &plain))
            return odn_node_error(n, TSR_ERR_PROVIDER, "internal: piece output given a blocked layout");
        v->md = plain;
    } else {
        v->md = *md;
    }
    v->produced = true;
    /* a piece output's memory takes the output tensor's buffer at run time
     * (a float16 one's is converted into it: odn_f16_output) */
    if (v->output_index >= 0 && !v->f16) return odn_plan_new_mem(p, &v->md, DNNL_MEMORY_NONE, n, &v->mem);
    return new_arena_mem(p, &v->md, n, &v->mem);
}

tsr_status *odn_plan_add_primitive(odn_plan *p, const_dnnl_primitive_desc_t pd, const tsr_node *n,
                                   const dnnl_exec_arg_t *args, int nargs) {
    odn_step step = {.nargs = nargs, .node = n};
    if (nargs > ODN_MAX_ARGS) return odn_node_error(n, TSR_ERR_PROVIDER, "internal: too many arguments");
    const char *impl = odn_impl_name(pd);
    dnnl_primitive_kind_t kind = dnnl_undefined_primitive;
    dnnl_primitive_desc_query(pd, dnnl_query_primitive_kind, 0, &kind);
    if (odn_impl_is_ref(impl) && !odn_rnn_impl_ok(pd)) {
        char src[160];
        odn_md_text(dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0), src, sizeof src);
        return odn_node_error(n, TSR_ERR_NOT_SUPPORTED,
                              "oneDNN has only its reference implementation (%s) for this %s (source %s)", impl,
                              dnnl_prim_kind2str(kind), src);
    }
    /* oneDNN 2.6 divides by zero creating some primitives over empty
     * tensors (a matmul of 0 rows: SIGFPE in dnnl_primitive_create, a
     * detector's box head when nothing was detected). An empty destination
     * needs no computing; an empty input to a non-empty one is declined. */
    const dnnl_memory_desc_t *dst = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    if (dst && dst->ndims > 0 && dnnl_memory_desc_get_size(dst) == 0) return NULL;
    static const dnnl_query_t inputs[] = {dnnl_query_src_md, dnnl_query_weights_md};
    for (size_t q = 0; q < sizeof inputs / sizeof *inputs; q++)
        for (int i = 0; i < 3; i++) {
            const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(pd, inputs[q], i);
            if (md && md->ndims > 0 && dnnl_memory_desc_get_size(md) == 0)
                return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "an empty input to a non-empty %s",
                                      dnnl_prim_kind2str(kind));
        }
    snprintf(step.impl, sizeof step.impl, "%s %s", dnnl_prim_kind2str(kind), impl);
    memcpy(step.args, args, sizeof(dnnl_exec_arg_t) * (size_t)nargs);
    dnnl_status_t st = dnnl_primitive_create(&step.prim, pd);
    if (st != dnnl_success) return odn_dnnl_error(n, "primitive creation", st);
    tsr_status *s = add_step(p, &step);
    if (s) dnnl_primitive_destroy(step.prim);
    return s;
}

tsr_status *odn_plan_add_loop(odn_plan *p, odn_loop_fn fn, const void *ctx, dnnl_memory_t src, dnnl_memory_t dst,
                              const tsr_node *n) {
    return odn_plan_add_loop_with(p, fn, ctx, src, dst, NULL, n);
}

tsr_status *odn_plan_add_loop_args(odn_plan *p, odn_loop_fn fn, const void *ctx, const dnnl_exec_arg_t *args, int nargs,
                                   const tsr_node *n) {
    if (nargs < 2 || nargs > ODN_MAX_ARGS) return odn_node_error(n, TSR_ERR_PROVIDER, "internal: loop arguments");
    odn_step step = {.loop = fn, .loop_ctx = ctx, .nargs = nargs, .node = n};
    memcpy(step.args, args, sizeof(dnnl_exec_arg_t) * (size_t)nargs);
    return add_step(p, &step);
}

tsr_status *odn_plan_add_loop_with(odn_plan *p, odn_loop_fn fn, const void *ctx, dnnl_memory_t src, dnnl_memory_t dst,
                                   dnnl_memory_t also_read, const tsr_node *n) {
    odn_step step = {.loop = fn, .loop_ctx = ctx, .nargs = also_read ? 3 : 2, .node = n};
    step.args[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, src};
    step.args[1] = (dnnl_exec_arg_t){DNNL_ARG_DST, dst};
    if (also_read) step.args[2] = (dnnl_exec_arg_t){DNNL_ARG_SRC_1, also_read};
    return add_step(p, &step);
}

tsr_status *odn_plan_add_loop_reading(odn_plan *p, odn_loop_fn fn, const void *ctx, dnnl_memory_t src,
                                      dnnl_memory_t dst, const dnnl_memory_t *reads, size_t nreads, const tsr_node *n) {
    odn_step step = {.loop = fn, .loop_ctx = ctx, .nargs = 2, .node = n};
    step.args[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, src};
    step.args[1] = (dnnl_exec_arg_t){DNNL_ARG_DST, dst};
    for (size_t i = 0; i < nreads; i++) {
        if (!reads[i]) continue;
        if (step.nargs >= ODN_MAX_ARGS) return odn_node_error(n, TSR_ERR_PROVIDER, "internal: too many loop arguments");
        step.args[step.nargs] = (dnnl_exec_arg_t){DNNL_ARG_MULTIPLE_SRC + step.nargs, reads[i]};
        step.nargs++;
    }
    return add_step(p, &step);
}

void odn_plan_free(odn_plan *p) {
    if (!p) return;
    for (size_t i = 0; i < p->step_count; i++)
        if (p->steps[i].prim) dnnl_primitive_destroy(p->steps[i].prim);
    for (size_t i = 0; i < p->mem_count; i++) dnnl_memory_destroy(p->mems[i]);
    for (size_t i = 0; i < p->buffer_count; i++) free(p->buffers[i]);
    odn_reorder_once_done(p);
    odn_fills_free(p);
    odn_index_free(&p->value_index);
    odn_index_free(&p->node_index);
    free(p->steps);
    free(p->mems);
    free(p->view_mems);
    free(p->arena_mems);
    free(p->view_bases);
    free(p->buffers);
    free(p->values);
    free(p->nodes);
    free(p->done);
    free(p->input_mems);
    free(p->output_mems);
    free(p->input_dims);
    free(p->input_ranks);
    free(p->input_values);
    free(p->input_value_bytes);
    free(p->input_value_types);
    free(p);
}

bool odn_is_value_input(const tsr_value_info *vi) {
    return vi && !odn_host->value_constant(vi) && odn_host->value_elem_type(vi) == TSR_INT64;
}

/* Input k of n is where n reads scales: Resize's 2 (opset 11 on) or 1
 * (opset 10), Upsample's 1. */
static bool scales_slot(const tsr_node *n, size_t k) {
    const char *op = odn_host->node_op_type(n);
    if (strcmp(op, "Upsample") == 0) return k == 1;
    if (strcmp(op, "Resize") == 0) return k == (odn_host->node_opset(n) >= 11 ? 2u : 1u);
    return false;
}

bool odn_is_scales_input(const tsr_graph *piece, const tsr_value_info *vi) {
    if (!piece || !vi || odn_host->value_constant(vi) || odn_host->value_elem_type(vi) != TSR_FLOAT ||
        odn_host->value_rank(vi) != 1)
        return false;
    bool read = false;
    for (size_t i = 0; i < odn_host->graph_node_count(piece); i++) {
        const tsr_node *n = odn_host->graph_node(piece, i);
        for (size_t k = 0; k < odn_host->node_input_count(n); k++) {
            if (odn_host->node_input(n, k) != vi) continue;
            if (!scales_slot(n, k)) return false;
            read = true;
        }
    }
    return read;
}

const int64_t *odn_plan_i64(odn_plan *p, const tsr_value_info *vi, int64_t *count) {
    *count = 0;
    const tsr_tensor *t = vi ? odn_host->value_constant(vi) : NULL;
    if (t) {
        if (t->elem_type != TSR_INT64) return NULL;
        int64_t c = odn_numel(t->rank, t->dims);
        if (c < 0 || (c > 0 && (!t->data || t->nbytes < (size_t)c * sizeof(int64_t)))) return NULL;
        *count = c;
        return t->data;
    }
    odn_value *v = odn_plan_value(p, vi);
    if (!v || !v->i64) return NULL;
    *count = v->i64_count;
    return v->i64;
}

const float *odn_plan_f32(odn_plan *p, const tsr_value_info *vi, int64_t *count) {
    *count = 0;
    const tsr_tensor *t = vi ? odn_host->value_constant(vi) : NULL;
    if (t) {
        if (t->elem_type != TSR_FLOAT) return NULL;
        int64_t c = odn_numel(t->rank, t->dims);
        if (c < 0 || (c > 0 && (!t->data || t->nbytes < (size_t)c * sizeof(float)))) return NULL;
        *count = c;
        return t->data;
    }
    odn_value *v = odn_plan_value(p, vi);
    if (!v || !v->f32) return NULL;
    *count = v->f32_count;
    return v->f32;
}

tsr_status *odn_plan_run(odn_plan *p, tsr_run_context *ctx) {
    size_t n_in = odn_host->run_input_count(ctx), n_out = odn_host->run_output_count(ctx);
    /* the intermediates of the piece live in the plan's arena for the whole
     * run: the run's working_bytes limit counts them (a host of ABI 1 before
     * run_charge does not) */
    if (p->arena_bytes && TSR_HAS_MEMBER(odn_host, tsr_host_api, run_charge) && odn_host->run_charge) {
        tsr_status *cs = odn_host->run_charge(ctx, p->arena_bytes, "the oneDNN piece's intermediates");
        if (cs) return cs;
    }
    for (size_t i = 0; i < n_in; i++) {
        if (!p->input_mems[i]) continue;
        const tsr_tensor *t = odn_host->run_input(ctx, i);
        dnnl_status_t st = dnnl_memory_set_data_handle_v2(p->input_mems[i], t->data, p->stream);
        if (st != dnnl_success) return odn_dnnl_error(NULL, "binding an input", st);
    }
    for (size_t i = 0; i < n_out; i++) {
        odn_value *v = odn_plan_value(p, odn_host->graph_output(p->piece, i));
        const dnnl_memory_desc_t *omd; /* v's own, or float16 around a promoted v */
        dnnl_memory_get_memory_desc(p->output_mems[i], &omd);
        tsr_tensor *t;
        int32_t type = v->elem_type == TSR_BOOL && omd->data_type == dnnl_u8 ? TSR_BOOL : tsr_type_of(omd->data_type);
        tsr_status *s = odn_host->run_alloc_output(ctx, i, type, v->rank, v->dims, &t);
        if (s) return s;
        dnnl_status_t st = dnnl_memory_set_data_handle_v2(p->output_mems[i], t->data, p->stream);
        if (st != dnnl_success) return odn_dnnl_error(NULL, "binding an output", st);
    }
    for (size_t i = 0; i < p->view_count; i++) {
        void *handle = NULL;
        dnnl_memory_get_data_handle(p->view_bases[i], &handle);
        dnnl_status_t st = dnnl_memory_set_data_handle_v2(p->view_mems[i], handle, p->stream);
        if (st != dnnl_success) return odn_dnnl_error(NULL, "binding a view", st);
    }
    for (size_t i = 0; i < p->step_count; i++) {
        const odn_step *s = &p->steps[i];
        if (s->prim) {
            dnnl_status_t st = dnnl_primitive_execute(s->prim, p->stream, s->nargs, s->args);
            if (st != dnnl_success) return odn_dnnl_error(s->node, "execution", st);
        } else {
            dnnl_status_t st = dnnl_stream_wait(p->stream);
            if (st != dnnl_success) return odn_dnnl_error(s->node, "execution", st);
            tsr_status *e = s->loop(s->loop_ctx, s->args[0].memory, s->args[1].memory);
            if (e) return e;
        }
    }
    dnnl_status_t st = dnnl_stream_wait(p->stream);
    return st == dnnl_success ? NULL : odn_dnnl_error(NULL, "execution", st);
}
