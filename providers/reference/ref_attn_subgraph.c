/*
 * Runs a small graph attribute (FlexAttention's score_mod and prob_mod)
 * inside a kernel, node by node, with the reference provider's own kernels.
 *
 * A kernel only meets the host through ref_ctx.host and ref_ctx.run, so the
 * runner hands each body node a copy of the host API whose run_* slots read
 * and write the runner's own value slots instead of a piece's: the body's
 * input, its constants (initializers and Constant outputs, which the host
 * answers through value_constant) and every node output. Everything else
 * (attributes, names, opsets) still goes to the real host.
 *
 * Bodies that read non-constant values of the enclosing graph, or produce
 * strings, sequences or packed sub-byte tensors, are refused with a reason.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_attn.h"

/* An allocation the runner owns: a tensor with its dims and data. */
typedef struct sg_tensor {
    tsr_tensor t;
    int64_t dims[REF_MAX_RANK];
    struct sg_tensor *next; /* all allocations, for freeing */
} sg_tensor;

typedef struct sg_runner {
    tsr_host_api host;           /* the real host, run_* slots replaced */
    size_t n;                    /* value slots */
    const tsr_value_info **vals; /* the value of each slot */
    const tsr_tensor **tensors;  /* its tensor once known (borrowed or in `owned`) */
    sg_tensor *owned;
} sg_runner;

#define RUNNER(ctx) ((sg_runner *)(void *)(ctx))

static size_t sg_count(const tsr_run_context *ctx) { return RUNNER(ctx)->n; }

static const tsr_tensor *sg_input(const tsr_run_context *ctx, size_t i) {
    const sg_runner *r = RUNNER(ctx);
    return i < r->n ? r->tensors[i] : NULL;
}

static tsr_status *sg_alloc(tsr_run_context *ctx, size_t i, int32_t elem_type, int32_t rank, const int64_t *dims,
                            tsr_tensor **out) {
    sg_runner *r = RUNNER(ctx);
    const tsr_host_api *h = &r->host;
    size_t es = ref_elem_size(elem_type), n = 1;
    if (es == 0 || elem_type == TSR_STRING)
        return h->status_new(TSR_ERR_NOT_SUPPORTED, "a modifier graph may only make numeric and bool tensors");
    if (rank < 0 || rank > REF_MAX_RANK)
        return h->status_new(TSR_ERR_INVALID_ARGUMENT, "a modifier graph value has a bad rank");
    for (int32_t d = 0; d < rank; d++)
        if (dims[d] < 0 || !ref_attn_mul(n, (size_t)dims[d], &n))
            return h->status_new(TSR_ERR_INVALID_ARGUMENT, "a modifier graph value has a bad or too large shape");
    if (!ref_attn_mul(n, es, &n)) return h->status_new(TSR_ERR_INVALID_ARGUMENT, "a modifier graph value is too large");
    if (i != (size_t)-1 && (i >= r->n || r->tensors[i]))
        return h->status_new(TSR_ERR_RUNTIME, "a modifier graph output is written twice");
    sg_tensor *s = calloc(1, sizeof *s);
    void *data = s ? calloc(n ? n : 1, 1) : NULL;
    if (!data) {
        free(s);
        return h->status_new(TSR_ERR_NO_MEMORY, "out of memory running a modifier graph");
    }
    if (rank) memcpy(s->dims, dims, (size_t)rank * sizeof *dims);
    s->t = (tsr_tensor){sizeof(tsr_tensor), elem_type, rank, s->dims, data, n, TSR_MEMORY_HOST, 0};
    s->next = r->owned;
    r->owned = s;
    if (i != (size_t)-1) /* else scratch for an output the body drops */
        r->tensors[i] = &s->t;
    *out = &s->t;
    return NULL;
}

static tsr_status *sg_set_string(tsr_tensor *t, size_t i, const char *data, size_t size) {
    (void)t, (void)i, (void)data, (void)size;
    return NULL; /* unreachable: string tensors are refused at allocation */
}

static const tsr_value *sg_input_value(const tsr_run_context *ctx, size_t i) {
    (void)ctx, (void)i;
    return NULL; /* only plain tensors flow through a modifier graph */
}

static tsr_status *sg_set_value(tsr_run_context *ctx, size_t i, tsr_value *value) {
    (void)i;
    RUNNER(ctx)->host.val_free(value);
    return RUNNER(ctx)->host.status_new(TSR_ERR_NOT_SUPPORTED, "a modifier graph may not make sequences or optionals");
}

/* The slot of value v, added when new; SIZE_MAX when the table is full. */
static size_t slot_of(sg_runner *r, size_t cap, const tsr_value_info *v) {
    for (size_t i = 0; i < r->n; i++)
        if (r->vals[i] == v) return i;
    if (r->n == cap) return SIZE_MAX;
    r->vals[r->n] = v;
    r->tensors[r->n] = r->host.value_constant(v);
    return r->n++;
}

static void runner_free(sg_runner *r) {
    while (r->owned) {
        sg_tensor *s = r->owned;
        r->owned = s->next;
        free(s->t.data);
        free(s);
    }
    free(r->vals);
    free(r->tensors);
}

/* Runs body node `node` with slots for its inputs and outputs. */
static tsr_status *run_node(ref_ctx *c, sg_runner *r, size_t cap, const tsr_node *node, const char *attr) {
    const tsr_host_api *h = c->host;
    const char *op_type = h->node_op_type(node), *domain = h->node_domain(node);
    const ref_op *op = ref_find_op(domain, op_type, h->node_opset(node));
    if (!op)
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "%s: no reference kernel for %s%s%s", attr, domain,
                       domain[0] ? "." : "", op_type);
    char why[256] = "";
    if (op->check && op->check(h, node, why, sizeof why))
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "%s: %s node: %s", attr, op_type, why);
    size_t n_in = h->node_input_count(node), n_out = h->node_output_count(node);
    /* One array: the input map, then the output map. */
    int *in_map = malloc((n_in + n_out + 1) * sizeof *in_map);
    if (!in_map) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory running %s", attr);
    int *out_map = in_map + n_in;
    tsr_status *st = NULL;
    for (size_t i = 0; i < n_in + n_out && !st; i++) {
        const tsr_value_info *v = i < n_in ? h->node_input(node, i) : h->node_output(node, i - n_in);
        size_t s = v ? slot_of(r, cap, v) : SIZE_MAX;
        in_map[i] = v ? (int)s : -1;
        if (v && s == SIZE_MAX) st = ref_err(c, TSR_ERR_RUNTIME, "%s: too many values", attr);
        else if (v && i < n_in && !r->tensors[s])
            st = ref_err(c, TSR_ERR_NOT_SUPPORTED,
                         "%s: %s reads '%s', which is neither the graph's input, a constant "
                         "nor made before it (outer-scope values are not supported)",
                         attr, op_type, h->value_name(v));
    }
    if (!st) {
        ref_ctx sub = {&r->host, node, (tsr_run_context *)(void *)r, in_map, out_map, n_in, n_out, c->threads, 0};
        st = op->run(&sub);
    }
    free(in_map);
    return st;
}

tsr_status *ref_attn_subgraph(ref_ctx *c, const char *attr, const tsr_tensor *in, size_t want, double **out) {
    const tsr_host_api *h = c->host;
    *out = NULL;
    const tsr_attr *a = h->node_attr_find(c->node, attr);
    const tsr_graph *g = a && h->attr_type(a) == TSR_ATTR_GRAPH ? h->attr_graph(a) : NULL;
    if (!g) return ref_err(c, TSR_ERR_INVALID_MODEL, "attribute %s is not a graph", attr);
    if (h->graph_input_count(g) != 1 || h->graph_output_count(g) != 1)
        return ref_err(c, TSR_ERR_INVALID_MODEL, "%s must have one input and one output", attr);
    if (!TSR_HAS_MEMBER(h, tsr_host_api, val_free))
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "the host is too old to run %s", attr);

    size_t nodes = h->graph_node_count(g), cap = 2;
    for (size_t i = 0; i < nodes; i++) {
        const tsr_node *node = h->graph_node(g, i);
        cap += h->node_input_count(node) + h->node_output_count(node);
    }
    sg_runner r = {0};
    /* a host older than this plugin fills fewer slots; the rest stay NULL */
    memcpy(&r.host, h, h->struct_size < sizeof r.host ? h->struct_size : sizeof r.host);
    r.host.run_input_count = sg_count;
    r.host.run_output_count = sg_count;
    r.host.run_input = sg_input;
    r.host.run_alloc_output = sg_alloc;
    r.host.tensor_set_string = sg_set_string;
    r.host.run_input_value = sg_input_value;
    r.host.run_set_output_value = sg_set_value;
    /* it would read the runner as the host's run context: a body's kernels
     * (small score functions) do not stop early */
    r.host.run_should_stop = NULL;
    r.vals = calloc(cap, sizeof *r.vals);
    r.tensors = calloc(cap, sizeof *r.tensors);
    tsr_status *st = NULL;
    if (!r.vals || !r.tensors) {
        st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory running %s", attr);
        goto done;
    }
    size_t s_in = slot_of(&r, cap, h->graph_input(g, 0));
    r.tensors[s_in] = in;
    for (size_t i = 0; i < nodes && !st; i++) st = run_node(c, &r, cap, h->graph_node(g, i), attr);
    if (st) goto done;
    size_t s_out = slot_of(&r, cap, h->graph_output(g, 0));
    const tsr_tensor *res = s_out < r.n ? r.tensors[s_out] : NULL;
    if (!res) {
        st = ref_err(c, TSR_ERR_INVALID_MODEL, "%s does not compute its output", attr);
        goto done;
    }
    bool same = res->rank == in->rank && ref_is_float(res->elem_type);
    for (int32_t d = 0; same && d < in->rank; d++) same = res->dims[d] == in->dims[d];
    if (!same || (want && ref_numel(res) != want)) {
        st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s must return a float tensor of its input's shape", attr);
        goto done;
    }
    st = ref_attn_f64(c, res, attr, out);
done:
    runner_free(&r);
    return st;
}
