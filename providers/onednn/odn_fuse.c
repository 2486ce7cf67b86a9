/* Absorbing the nodes after a primitive as its post-ops: unary ops become
 * eltwise post-ops and a binary op with an operand already computed becomes
 * a binary post-op, so e.g. Conv+Add(residual)+Relu is one primitive. */
#include <string.h>

#include "odn.h"

/* Pads `other`'s dims with leading 1s to `rank`; false when they do not
 * broadcast onto `dims` without growing them. */
static bool broadcast_onto(const odn_value *other, int32_t rank, const int64_t *dims, int64_t *padded) {
    if (other->rank > rank) return false;
    int32_t lead = rank - other->rank;
    for (int32_t i = 0; i < rank; i++) {
        padded[i] = i < lead ? 1 : other->dims[i - lead];
        if (padded[i] != dims[i] && padded[i] != 1) return false;
    }
    return true;
}

static bool reads(const tsr_node *m, const odn_value *v) {
    for (size_t k = 0; k < odn_host->node_input_count(m); k++)
        if (odn_host->node_input(m, k) == v->info) return true;
    return false;
}

/* True when `other`'s buffer may be overwritten by node `n`'s result: an
 * internal tensor of its own whose readers other than `n` have all run,
 * and not an input of the primitive (`prim`, done already) whose result
 * accumulates into it: conv(x) + x would overwrite x while the
 * convolution still reads its neighbourhood. */
static bool can_overwrite(const odn_plan *p, const odn_value *other, const tsr_node *n, const tsr_node *prim) {
    if (other->input_index >= 0 || other->output_index >= 0 || other->constant || other->is_view) return false;
    if (prim && reads(prim, other)) return false;
    for (size_t i = 0; i < p->view_count; i++)
        if (p->view_bases[i] == other->mem) return false;
    for (size_t i = 0; i < p->node_count; i++) {
        const tsr_node *m = p->nodes[i];
        if (m != n && !p->done[i] && reads(m, other)) return false;
    }
    return true;
}

static tsr_status *absorb_binary(odn_plan *p, odn_value *cur, const tsr_node *prim, const tsr_node *n, int32_t rank,
                                 const int64_t *dims, dnnl_post_ops_t po, dnnl_exec_arg_t *args, int *nargs,
                                 bool *absorbed) {
    *absorbed = false;
    /* a variadic Max/Min of 1 or 3+ inputs is its own builder's */
    if (p->fuse_no_binary || odn_host->node_input_count(n) != 2) return NULL;
    const char *op = odn_host->node_op_type(n);
    /* a float max/min post-op (vmaxps) drops a NaN of the value it is
     * applied to: odn_build_binary runs them as the C loop */
    bool floats = cur->elem_type == 0 || cur->elem_type == TSR_FLOAT;
    if ((strcmp(op, "Max") == 0 || strcmp(op, "Min") == 0) && floats) return NULL;
    odn_value *a = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *b = odn_plan_value(p, odn_host->node_input(n, 1));
    if (!a || !b || a == b) return NULL;
    bool cur_first = a == cur;
    odn_value *other = cur_first ? b : a;
    bool commutes = strcmp(op, "Sub") != 0 && strcmp(op, "Div") != 0;
    if (!cur_first && !commutes) return NULL;
    if (!other->produced || !other->mem || *nargs + 1 > ODN_MAX_ARGS) return NULL;
    int64_t padded[ODN_MAX_RANK];
    if (!broadcast_onto(other, rank, dims, padded)) return NULL;
    dnnl_memory_t mem;
    dnnl_memory_desc_t md;
    tsr_status *s;
    bool same_shape = other->rank == rank && memcmp(padded, dims, sizeof(int64_t) * (size_t)rank) == 0;
    if (p->fuse_no_broadcast_binary && memcmp(padded, dims, sizeof(int64_t) * (size_t)rank) != 0) return NULL;
    if (same_shape && p->prefer_sum && !p->sum_into && strcmp(op, "Add") == 0 && can_overwrite(p, other, n, prim)) {
        dnnl_status_t st = dnnl_post_ops_append_sum(po, 1.0f);
        if (st != dnnl_success) return odn_dnnl_error(n, "sum post-op", st);
        p->sum_into = other;
        *absorbed = true;
        return NULL;
    }
    if (p->fuse_collapse_2d) {
        /* an operand fits the [rows, last] frame when its leading dims are
         * all 1 or all the output's */
        int64_t lead = 1, rows = 1;
        for (int32_t i = 0; i + 1 < rank; i++) {
            lead *= padded[i];
            rows *= dims[i];
        }
        if (lead != 1 && lead != rows) return NULL;
        int64_t two[2] = {lead, padded[rank - 1]};
        s = odn_plan_plain_view(p, other, 2, two, NULL, n, &mem, &md);
        if (s) return s;
    } else if (same_shape) {
        /* same shape: take it in whatever layout it has (a residual in the
         * producer's blocked layout) */
        md = other->md;
        mem = other->mem;
    } else {
        s = odn_plan_plain_view(p, other, rank, padded, NULL, n, &mem, &md);
        if (s) return s;
    }
    int idx = dnnl_post_ops_len(po);
    dnnl_status_t st = dnnl_post_ops_append_binary(po, odn_binary_alg(op), &md);
    if (st != dnnl_success) return odn_dnnl_error(n, "binary post-op", st);
    args[(*nargs)++] = (dnnl_exec_arg_t){DNNL_ARG_ATTR_MULTIPLE_POST_OP(idx) | DNNL_ARG_SRC_1, mem};
    *absorbed = true;
    return NULL;
}

static bool is_identity(const tsr_node *n) {
    const char *dom = odn_host->node_domain(n);
    return strcmp(odn_host->node_op_type(n), "Identity") == 0 && (!dom[0] || strcmp(dom, "ai.onnx") == 0);
}

tsr_status *odn_fuse_post_ops(odn_plan *p, odn_value *v, int32_t rank, const int64_t *dims, dnnl_post_ops_t po,
                              dnnl_exec_arg_t *args, int *nargs, odn_value **last) {
    odn_value *cur = v;
    const tsr_node *prim = p->building;
    p->sum_into = NULL;
    for (; p->fuse;) {
        odn_value *gelu_out;
        bool gelu_erf = odn_fuse_gelu(p, cur, &gelu_out);
        if (gelu_erf || odn_fuse_gelu_tanh(p, cur, &gelu_out)) {
            dnnl_status_t st = dnnl_post_ops_append_eltwise(
                po, 1.0f, gelu_erf ? dnnl_eltwise_gelu_erf : dnnl_eltwise_gelu_tanh, 0.0f, 0.0f);
            if (st != dnnl_success) return odn_dnnl_error(NULL, "gelu post-op", st);
            gelu_out->rank = rank;
            memcpy(gelu_out->dims, dims, sizeof(int64_t) * (size_t)rank);
            cur = gelu_out;
            continue;
        }
        odn_eltwise gated;
        odn_value *gated_out;
        if (odn_fuse_gated_act(p, cur, &gated, &gated_out)) {
            dnnl_status_t st = dnnl_post_ops_append_eltwise(po, 1.0f, gated.alg, gated.alpha, gated.beta);
            if (st != dnnl_success) return odn_dnnl_error(NULL, "gated activation post-op", st);
            gated_out->rank = rank;
            memcpy(gated_out->dims, dims, sizeof(int64_t) * (size_t)rank);
            cur = gated_out;
            continue;
        }
        const tsr_node *n = odn_plan_sole_consumer(p, cur);
        if (!n) break;
        odn_value *out = odn_plan_value(p, odn_host->node_output(n, 0));
        if (!out || out == cur) break;
        odn_eltwise el[2];
        int count = odn_eltwise_of(n, el);
        /* Log and Exp run as C loops (odn_build_eltwise.c), never as
         * oneDNN's */
        if (count > 0 && (el[0].alg == dnnl_eltwise_log || el[0].alg == dnnl_eltwise_exp)) break;
        bool absorbed = false;
        if (is_identity(n)) {
            /* nothing to compute: the primitive writes the Identity's output
             * (often the piece output) directly, saving a copy per run */
            absorbed = true;
        } else if (count > 0) {
            for (int i = 0; i < count; i++) {
                dnnl_status_t st = dnnl_post_ops_append_eltwise(po, 1.0f, el[i].alg, el[i].alpha, el[i].beta);
                if (st != dnnl_success) return odn_dnnl_error(n, "eltwise post-op", st);
            }
            absorbed = true;
        } else if (odn_binary_alg(odn_host->node_op_type(n))) {
            tsr_status *s = absorb_binary(p, cur, prim, n, rank, dims, po, args, nargs, &absorbed);
            if (s) return s;
        }
        if (!absorbed) break;
        p->done[odn_plan_node_index(p, n)] = true;
        /* the absorbed node's output has the same shape; record it now so
         * later fusions see its dims */
        out->rank = rank;
        memcpy(out->dims, dims, sizeof(int64_t) * (size_t)rank);
        cur = out;
    }
    *last = cur;
    p->prefer_sum = false;
    p->fuse_collapse_2d = false;
    p->fuse_no_binary = false;
    p->fuse_no_broadcast_binary = false;
    return NULL;
}

tsr_status *odn_post_ops_new(const tsr_node *n, dnnl_post_ops_t *po, dnnl_primitive_attr_t *attr) {
    if (dnnl_post_ops_create(po) != dnnl_success) return odn_node_error(n, TSR_ERR_NO_MEMORY, "post-ops");
    if (dnnl_primitive_attr_create(attr) != dnnl_success) {
        dnnl_post_ops_destroy(*po);
        return odn_node_error(n, TSR_ERR_NO_MEMORY, "attributes");
    }
    return NULL;
}
