/* Building a plan: registering the piece's values, then turning its nodes
 * into steps in order (odn_build_node), placing the intermediates; and
 * whether a plan was built for a run's inputs. Kept apart from odn_plan.c,
 * whose helpers the builders call, so the builders and the driver that
 * calls them do not call each other. */
#include <stdlib.h>
#include <string.h>

#include "odn.h"
#include "odn_quant.h"

static tsr_status *no_memory(void) { return odn_host->status_new(TSR_ERR_NO_MEMORY, "onednn: out of memory"); }

/* Copies value input `v` (piece input `index`, tensor `t`) into the plan:
 * its data decides what the plan computes (a Reshape's target shape). */
static tsr_status *value_input(odn_plan *p, odn_value *v, size_t index, const tsr_tensor *t, int32_t type) {
    const char *name = odn_host->value_name(v->info);
    if (!t)
        return odn_node_error(NULL, TSR_ERR_NOT_SUPPORTED,
                              "input '%s' is a value known only at run time: the plan is built then", name);
    int64_t count = odn_numel(v->rank, v->dims);
    size_t es = type == TSR_INT64 ? sizeof(int64_t) : sizeof(float);
    if (t->elem_type != type || count < 0 || count > ODN_MAX_VALUE_ELEMS)
        return odn_node_error(NULL, TSR_ERR_NOT_SUPPORTED,
                              "input '%s' (a run-time value the plan is built for) is not %s of at most %d elements",
                              name, type == TSR_INT64 ? "int64" : "float32", ODN_MAX_VALUE_ELEMS);
    if (count > 0 && (!t->data || t->nbytes < (size_t)count * es))
        return odn_node_error(NULL, TSR_ERR_INVALID_ARGUMENT, "input '%s' holds fewer bytes than its shape", name);
    if (t->memory_kind != TSR_MEMORY_HOST)
        return odn_node_error(NULL, TSR_ERR_NOT_SUPPORTED, "input '%s' (a run-time value) is not in host memory", name);
    void *copy = odn_plan_alloc(p, (size_t)count * es);
    if (!copy) return no_memory();
    if (count > 0) memcpy(copy, t->data, (size_t)count * es);
    if (type == TSR_INT64) {
        v->i64 = copy;
        v->i64_count = count;
    } else {
        v->f32 = copy;
        v->f32_count = count;
    }
    p->input_values[index] = copy;
    p->input_value_bytes[index] = (size_t)count * es;
    p->input_value_types[index] = type;
    return NULL;
}

/* Registers every value the piece touches and counts its readers. */
static tsr_status *collect_values(odn_plan *p, const tsr_tensor *const *inputs) {
    const tsr_graph *g = p->piece;
    size_t n_in = odn_host->graph_input_count(g), n_out = odn_host->graph_output_count(g);
    p->input_mems = calloc(n_in + 1, sizeof(dnnl_memory_t));
    p->output_mems = calloc(n_out + 1, sizeof(dnnl_memory_t));
    p->input_dims = calloc(n_in * ODN_MAX_RANK + 1, sizeof(int64_t));
    p->input_ranks = calloc(n_in + 1, sizeof(int32_t));
    p->input_values = calloc(n_in + 1, sizeof(void *));
    p->input_value_bytes = calloc(n_in + 1, sizeof(size_t));
    p->input_value_types = calloc(n_in + 1, sizeof(int32_t));
    if (!p->input_mems || !p->output_mems || !p->input_dims || !p->input_ranks || !p->input_values ||
        !p->input_value_bytes || !p->input_value_types)
        return no_memory();
    for (size_t i = 0; i < n_in; i++) {
        const tsr_value_info *vi = odn_host->graph_input(g, i);
        odn_value *v = odn_plan_add_value(p, vi);
        if (!v) return no_memory();
        v->input_index = (int)i;
        v->constant = odn_host->value_constant(vi);
        const tsr_tensor *t = v->constant ? v->constant : inputs ? inputs[i] : NULL;
        int32_t rank = t ? t->rank : odn_host->value_rank(vi);
        if (rank < 0 || rank > ODN_MAX_RANK)
            return odn_node_error(NULL, TSR_ERR_NOT_SUPPORTED, "input '%s' has unknown or too high rank",
                                  odn_host->value_name(vi));
        v->rank = rank;
        for (int32_t d = 0; d < rank; d++) {
            v->dims[d] = t ? t->dims[d] : odn_host->value_dim(vi, d);
            if (v->dims[d] < 0)
                return odn_node_error(NULL, TSR_ERR_NOT_SUPPORTED, "input '%s' has a dimension known only at run time",
                                      odn_host->value_name(vi));
        }
        p->input_ranks[i] = rank;
        memcpy(p->input_dims + i * ODN_MAX_RANK, v->dims, sizeof(int64_t) * (size_t)rank);
        int32_t type = t ? t->elem_type : odn_host->value_elem_type(vi);
        v->elem_type = type;
        v->produced = true;
        if (odn_is_value_input(vi) || odn_is_scales_input(g, vi)) {
            tsr_status *s = value_input(p, v, i, t, odn_is_value_input(vi) ? TSR_INT64 : TSR_FLOAT);
            if (s) return s;
            continue;
        }
        if (odn_f16_promoted(p, vi, type)) { /* float32 inside, float16 at the boundary */
            tsr_status *s = odn_f16_input(p, v, i, t);
            if (s) return s;
            continue;
        }
        /* int64 shape, axes or sizes inputs are read directly at build time;
         * float, 8-bit, int32, f16 and bf16 ones get memories */
        dnnl_data_type_t dt = odn_dnnl_type(type);
        if (dt == dnnl_data_type_undef) continue;
        int64_t numel = odn_numel(rank, v->dims);
        if (numel < 0 || (t && t->data && t->nbytes < (uint64_t)numel * dnnl_data_type_size(dt)))
            return odn_node_error(NULL, TSR_ERR_INVALID_MODEL, "input '%s' holds fewer bytes than its shape",
                                  odn_host->value_name(vi));
        dnnl_status_t st = odn_plain_md_typed(&v->md, rank, v->dims, dt);
        if (st != dnnl_success) return odn_dnnl_error(NULL, "input layout", st);
        tsr_status *s = odn_plan_new_mem(p, &v->md, v->constant ? v->constant->data : DNNL_MEMORY_NONE, NULL, &v->mem);
        if (s) return s;
        if (!v->constant) p->input_mems[i] = v->mem;
    }
    for (size_t i = 0; i < p->node_count; i++) {
        const tsr_node *n = p->nodes[i];
        for (size_t k = 0; k < odn_host->node_output_count(n); k++) {
            const tsr_value_info *vi = odn_host->node_output(n, k);
            odn_value *v = vi ? odn_plan_add_value(p, vi) : NULL;
            if (vi && !v) return no_memory();
            if (v) v->producer = (int)i;
        }
    }
    for (size_t i = 0; i < n_out; i++) {
        odn_value *v = odn_plan_value(p, odn_host->graph_output(g, i));
        if (!v) return odn_node_error(NULL, TSR_ERR_PROVIDER, "piece output is no node's output");
        v->output_index = (int)i;
    }
    for (size_t i = 0; i < p->node_count; i++) {
        const tsr_node *n = p->nodes[i];
        for (size_t k = 0; k < odn_host->node_input_count(n); k++) {
            odn_value *v = odn_plan_value(p, odn_host->node_input(n, k));
            if (v && v->reader < 0) v->reader = (int)i;
            if (v) v->consumers++;
        }
    }
    return NULL;
}

/* Made once per piece: odn_int8_exact_plan reads the weights, whose bytes a
 * first plan may have released. */
static bool int8_choice(odn_plan *p, const odn_options *opt) {
    int chosen = odn_const_cache_int8_choice(p->consts);
    if (chosen >= 0) return chosen;
    bool int8 = opt->int8_saturation || odn_int8_exact_plan(p);
    odn_const_cache_set_int8_choice(p->consts, int8);
    return int8;
}

/* `fuse` false: every node its own primitive; else fusion everywhere but
 * at the nodes `alone` marks (may be NULL). On failure *failed_at is the
 * index of the node whose build failed, or -1. */
static tsr_status *plan_build(dnnl_engine_t engine, dnnl_stream_t stream, const odn_options *opt,
                              odn_const_cache *consts, const tsr_graph *piece, const tsr_tensor *const *inputs,
                              bool fuse, const bool *alone, int *failed_at, odn_plan **out) {
    *failed_at = -1;
    odn_plan *p = calloc(1, sizeof *p);
    if (!p) return no_memory();
    p->fuse = fuse;
    p->engine = engine;
    p->stream = stream;
    p->winograd = opt->winograd;
    p->packed_gemm = opt->packed_gemm;
    p->attention = opt->attention;
    p->consts = consts;
    p->release_consts = inputs == NULL; /* the one plan of a piece whose shapes are all known */
    p->piece = piece;
    p->node_count = odn_host->graph_node_count(piece);
    p->nodes = calloc(p->node_count + 1, sizeof *p->nodes);
    p->done = calloc(p->node_count + 1, sizeof *p->done);
    tsr_status *s = (!p->nodes || !p->done) ? no_memory() : NULL;
    for (size_t i = 0; !s && i < p->node_count; i++) {
        p->nodes[i] = odn_host->graph_node(piece, i);
        if (!odn_index_put(&p->node_index, p->nodes[i], i)) s = no_memory();
    }
    if (!s) s = collect_values(p, inputs);
    if (!s) s = odn_f16_check(p);
    if (!s) p->int8_primitives = int8_choice(p, opt);
    for (size_t i = 0; !s && i < p->node_count; i++) {
        if (p->done[i]) continue;
        p->fuse = fuse && !(alone && alone[i]);
        s = odn_build_node(p, i);
        if (s) *failed_at = (int)i;
    }
    for (size_t i = 0; !s && i < odn_host->graph_output_count(piece); i++) {
        odn_value *v = odn_plan_value(p, odn_host->graph_output(piece, i));
        if (!v->produced)
            s = odn_node_error(NULL, TSR_ERR_PROVIDER, "piece output '%s' never computed",
                               odn_host->value_name(v->info));
        else if (v->f16) s = odn_f16_output(p, v, &p->output_mems[i]);
        else p->output_mems[i] = v->mem;
    }
    if (!s) s = odn_arena_place(p);
    if (!s) s = odn_fills_run(p);
    odn_fills_free(p);
    odn_reorder_once_done(p);
    if (s) {
        odn_plan_free(p);
        return s;
    }
    *out = p;
    return NULL;
}

/* Plans a build fails at, at most, before every node goes unfused. */
#define ALONE_RETRIES 8

/* A post-op can turn a primitive oneDNN has a JIT kernel for into one it
 * has only a reference kernel for (a broadcast binary post-op, say): a plan
 * that fails so is built again with the node that failed built without
 * fusion (a BERT's embedding sum at batch 4, whose position term broadcasts
 * over the batch, once cost every attention, GELU and LayerNorm of the
 * 391-node piece their fusion); after ALONE_RETRIES such nodes, with each
 * node its own primitive. */
tsr_status *odn_plan_build(dnnl_engine_t engine, dnnl_stream_t stream, const odn_options *opt, odn_const_cache *consts,
                           const tsr_graph *piece, const tsr_tensor *const *inputs, odn_plan **out) {
    bool *alone = calloc(odn_host->graph_node_count(piece) + 1, sizeof *alone);
    if (!alone) return no_memory();
    int failed_at;
    tsr_status *s = plan_build(engine, stream, opt, consts, piece, inputs, true, alone, &failed_at, out);
    for (int retry = 0; s && retry < ALONE_RETRIES && odn_host->status_code(s) == TSR_ERR_NOT_SUPPORTED &&
         failed_at >= 0 && !alone[failed_at];
         retry++) {
        alone[failed_at] = true;
        odn_host->status_free(s);
        s = plan_build(engine, stream, opt, consts, piece, inputs, true, alone, &failed_at, out);
    }
    free(alone);
    if (!s || odn_host->status_code(s) != TSR_ERR_NOT_SUPPORTED) return s;
    tsr_status *unfused = plan_build(engine, stream, opt, consts, piece, inputs, false, NULL, &failed_at, out);
    if (unfused) {
        odn_host->status_free(s);
        return unfused;
    }
    odn_host->status_free(s);
    return NULL;
}

bool odn_plan_matches(const odn_plan *p, const tsr_tensor *const *inputs, size_t count) {
    for (size_t i = 0; i < count; i++) {
        if (!inputs[i]) return false;
        if (inputs[i]->rank != p->input_ranks[i]) return false;
        for (int32_t d = 0; d < inputs[i]->rank; d++)
            if (inputs[i]->dims[d] != p->input_dims[i * ODN_MAX_RANK + (size_t)d]) return false;
        /* a value input: the same data (same shape, so the same count) */
        const void *want = p->input_values[i];
        size_t bytes = p->input_value_bytes[i];
        if (want &&
            (inputs[i]->elem_type != p->input_value_types[i] ||
             (bytes && (!inputs[i]->data || inputs[i]->nbytes < bytes || memcmp(inputs[i]->data, want, bytes) != 0))))
            return false;
    }
    return true;
}
