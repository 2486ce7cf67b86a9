/* Sum, Mean, Max and Min of any number of inputs (numpy broadcasting), so
 * the residual and FPN merges that older exporters write as Sum stay inside
 * the oneDNN piece instead of cutting it. One input is an identity; more
 * are a chain of binary steps, the first writing the output and the rest
 * accumulating into it in place. Sum and Mean use oneDNN's binary add in
 * the layout of a full-shape input (blocked after a Conv) where it has a
 * JIT kernel for every operand; Max, Min and any other broadcast run as the
 * C loop of odn_binary_loop.c over plain memories, which propagates NaN as
 * ONNX (and the reference provider) do, while oneDNN's max/min, vmaxps,
 * drop a NaN in their first operand. Mean then scales by 1/N. */
#include <string.h>

#include "odn.h"

typedef struct variadic {
    const tsr_node *n;
    size_t count;
    odn_value *in[ODN_MAX_ARGS];
    int64_t d[ODN_MAX_ARGS][ODN_MAX_RANK]; /* each input's dims padded to rank */
    int32_t rank;
    int64_t dims[ODN_MAX_RANK];
    dnnl_alg_kind_t alg;
    odn_value *y;
} variadic;

/* The inputs' dims padded on the left to the output rank and the output
 * dims, as check_binary's pairs broadcast (1 against 0 gives 0). */
static tsr_status *broadcast(variadic *v) {
    v->rank = 0;
    for (size_t k = 0; k < v->count; k++)
        if (v->in[k]->rank > v->rank) v->rank = v->in[k]->rank;
    for (int32_t i = 0; i < v->rank; i++) v->dims[i] = 1;
    for (size_t k = 0; k < v->count; k++) {
        int32_t pad = v->rank - v->in[k]->rank;
        for (int32_t i = 0; i < v->rank; i++) {
            int64_t x = i < pad ? 1 : v->in[k]->dims[i - pad];
            v->d[k][i] = x;
            if (x != 1 && v->dims[i] != 1 && x != v->dims[i])
                return odn_node_error(v->n, TSR_ERR_INVALID_ARGUMENT, "input %zu does not broadcast", k);
            if (v->dims[i] == 1) v->dims[i] = x;
        }
    }
    return NULL;
}

static bool is_full(const variadic *v, size_t k) {
    return v->in[k]->rank == v->rank && memcmp(v->d[k], v->dims, sizeof(int64_t) * (size_t)v->rank) == 0;
}

/* Operand k's layout for a step in layout `l`: `l` where it has the full
 * shape (reordered into it if it comes in another), else plain (a
 * broadcast operand: a per-channel bias, a scalar). */
static bool operand_md(const variadic *v, size_t k, const dnnl_memory_desc_t *l, dnnl_memory_desc_t *md) {
    if (is_full(v, k)) {
        *md = *l;
        return true;
    }
    return odn_plain_md(md, v->rank, v->d[k]) == dnnl_success;
}

static dnnl_primitive_desc_t add_pd(odn_plan *p, const dnnl_memory_desc_t *l, const dnnl_memory_desc_t *md1) {
    dnnl_binary_desc_t d;
    dnnl_primitive_desc_t pd = NULL;
    if (dnnl_binary_desc_init(&d, dnnl_binary_add, l, md1, l) != dnnl_success ||
        odn_pd_create(p, &d, NULL, &pd) != dnnl_success)
        return NULL;
    return pd;
}

/* Whether oneDNN has a JIT add for every operand against layout `l`. */
static bool adds_are_fast(odn_plan *p, const variadic *v, size_t first, const dnnl_memory_desc_t *l) {
    for (size_t k = 0; k < v->count; k++) {
        dnnl_memory_desc_t md;
        dnnl_primitive_desc_t pd = k == first || !operand_md(v, k, l, &md) ? NULL : add_pd(p, l, &md);
        if (k != first && !pd) return false;
        if (pd) dnnl_primitive_desc_destroy(pd);
    }
    return true;
}

/* One add step: y = src0 + operand k, src0 laid out as `l`. */
static tsr_status *add_step(odn_plan *p, variadic *v, size_t k, const dnnl_memory_desc_t *l, dnnl_memory_t src0) {
    dnnl_memory_desc_t md;
    dnnl_memory_t m1 = v->in[k]->mem;
    tsr_status *s = NULL;
    if (!operand_md(v, k, l, &md)) return odn_node_error(v->n, TSR_ERR_PROVIDER, "internal: operand layout");
    if (!is_full(v, k)) s = odn_plan_plain_view(p, v->in[k], v->rank, v->d[k], NULL, v->n, &m1, &md);
    else if (!dnnl_memory_desc_equal(&v->in[k]->md, l)) s = odn_plan_mem_as(p, v->in[k], l, v->n, &m1);
    dnnl_primitive_desc_t pd = s ? NULL : add_pd(p, l, &md);
    if (!s && !pd) s = odn_node_error(v->n, TSR_ERR_NOT_SUPPORTED, "oneDNN has no fast add for these shapes");
    if (s) return s;
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC_0, src0}, {DNNL_ARG_SRC_1, m1}, {DNNL_ARG_DST, v->y->mem}};
    s = odn_plan_add_primitive(p, pd, v->n, args, 3);
    dnnl_primitive_desc_destroy(pd);
    return s;
}

/* Sum or Mean as oneDNN adds in the layout of full input `first` (plain
 * when the output leaves the piece); *done false when oneDNN lacks a fast
 * kernel for some operand, nothing added then. */
static tsr_status *chain_adds(odn_plan *p, variadic *v, bool *done) {
    size_t first = 0;
    while (first < v->count && !is_full(v, first)) first++;
    *done = false;
    if (first == v->count) return NULL;
    dnnl_memory_desc_t l = v->in[first]->md;
    if (v->y->output_index >= 0 && odn_plain_md(&l, v->rank, v->dims) != dnnl_success) return NULL;
    if (!adds_are_fast(p, v, first, &l)) return NULL;
    dnnl_memory_t m0 = v->in[first]->mem;
    tsr_status *s = dnnl_memory_desc_equal(&v->in[first]->md, &l) ? NULL
                                                                     : odn_plan_plain_mem(p, v->in[first], v->n, &m0);
    if (!s) s = odn_plan_define(p, v->y, v->rank, v->dims, &l, v->n);
    if (!s && !dnnl_memory_desc_equal(&v->y->md, &l))
        s = odn_node_error(v->n, TSR_ERR_PROVIDER, "internal: output layout");
    bool started = false;
    for (size_t k = 0; !s && k < v->count; k++) {
        if (k == first) continue;
        s = add_step(p, v, k, &l, started ? v->y->mem : m0);
        started = true;
    }
    *done = !s;
    return s;
}

/* Any op, any broadcast: C loops over plain memories. */
static tsr_status *chain_loops(odn_plan *p, variadic *v) {
    dnnl_memory_t m0, m1;
    tsr_status *s = odn_plan_plain_mem(p, v->in[0], v->n, &m0);
    if (!s) s = odn_plan_plain_mem(p, v->in[1], v->n, &m1);
    if (!s) s = odn_plan_define(p, v->y, v->rank, v->dims, NULL, v->n);
    if (!s) s = odn_binary_loop_step(p, v->n, v->alg, m0, m1, v->y->mem, v->rank, v->dims, v->d[0], v->d[1]);
    for (size_t k = 2; !s && k < v->count; k++) {
        s = odn_plan_plain_mem(p, v->in[k], v->n, &m1);
        if (!s)
            s = odn_binary_loop_step(p, v->n, v->alg, v->y->mem, m1, v->y->mem, v->rank, v->dims, v->dims, v->d[k]);
    }
    return s;
}

/* Mean's 1/N, in place in whatever layout the chain left. */
static tsr_status *scale_mean(odn_plan *p, variadic *v, bool plain) {
    odn_eltwise el = {dnnl_eltwise_linear, 1.0f / (float)v->count, 0.0f};
    if (plain && odn_eltwise_loop_known(el.alg))
        return odn_eltwise_loop(p, v->n, &el, odn_numel(v->rank, v->dims), v->y->mem, v->y->mem);
    return odn_eltwise_step(p, v->n, &el, &v->y->md, v->y->mem, v->y->mem);
}

static tsr_status *gather(odn_plan *p, variadic *v) {
    const char *op = odn_host->node_op_type(v->n);
    v->count = odn_host->node_input_count(v->n);
    v->alg = strcmp(op, "Max") == 0 ? dnnl_binary_max : strcmp(op, "Min") == 0 ? dnnl_binary_min : dnnl_binary_add;
    v->y = odn_plan_value(p, odn_host->node_output(v->n, 0));
    if (v->count < 2 || v->count > ODN_MAX_ARGS || !v->y)
        return odn_node_error(v->n, TSR_ERR_PROVIDER, "internal: variadic inputs");
    for (size_t k = 0; k < v->count; k++) {
        v->in[k] = odn_plan_value(p, odn_host->node_input(v->n, k));
        if (!v->in[k] || !v->in[k]->produced || !v->in[k]->mem)
            return odn_node_error(v->n, TSR_ERR_PROVIDER, "internal: variadic input %zu", k);
    }
    return broadcast(v);
}

tsr_status *odn_build_variadic(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    const char *op = odn_host->node_op_type(n);
    size_t count = odn_host->node_input_count(n);
    if (count == 1) return odn_build_reshape(p, index);
    /* two-input Max/Min keep the binary builder's fusions */
    if (count == 2 && (strcmp(op, "Max") == 0 || strcmp(op, "Min") == 0)) return odn_build_binary(p, index);
    variadic *v = odn_plan_alloc(p, sizeof *v);
    if (!v) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    v->n = n;
    tsr_status *s = gather(p, v);
    if (s) return s;
    if (odn_numel(v->rank, v->dims) == 0) return odn_plan_define(p, v->y, v->rank, v->dims, NULL, n);
    bool done = false;
    if (v->alg == dnnl_binary_add) s = chain_adds(p, v, &done);
    if (!s && !done) s = chain_loops(p, v);
    if (!s && strcmp(op, "Mean") == 0) s = scale_mean(p, v, !done);
    return s;
}
