/* What plugins call: accessors over the IR (through opaque handles), claim
 * collection and output allocation. */
#include "host_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "onnx_writer.h"
#include "run_budget.h"
#include "status.h"
#include "tessera/tessera.h"

/* The log level of the session this thread is working for (set by
 * host_log_enter for the span of a session call); threads outside any,
 * such as a provider's worker threads, log warnings and errors. */
static _Thread_local int32_t thread_log_level = -1;

int32_t host_log_enter(int32_t level) {
    int32_t outer = thread_log_level;
    thread_log_level = level;
    return outer;
}

void host_log_leave(int32_t outer) { thread_log_level = outer; }

/* The tag of the run this thread is working for (tsr_run_options_set_tag),
 * or NULL. */
static _Thread_local const char *thread_log_tag;

const char *host_log_tag_enter(const char *tag) {
    const char *outer = thread_log_tag;
    thread_log_tag = tag;
    return outer;
}

/* The application's sink for the session call this thread is in. */
static _Thread_local host_logger thread_logger;

host_logger host_logger_enter(host_logger logger) {
    host_logger outer = thread_logger;
    thread_logger = logger;
    return outer;
}

void host_log(int32_t level, const char *who, const char *message) {
    static const char *const names[] = {"error", "warning", "info", "debug"};
    if (level > (thread_log_level >= 0 ? thread_log_level : TSR_LOG_WARNING)) return;
    if (level < 0 || level > 3) level = 3;
    const char *tag = thread_log_tag;
    if (thread_logger.fn) {
        if (!tag) {
            thread_logger.fn(thread_logger.user, level, who ? who : "core", message ? message : "");
            return;
        }
        char line[4096];
        snprintf(line, sizeof line, "[%s] %s", tag, message ? message : "");
        thread_logger.fn(thread_logger.user, level, who ? who : "core", line);
        return;
    }
    fprintf(stderr, "tessera %s%s%s: %s%s%s%s\n", names[level], who ? " " : "", who ? who : "", tag ? "[" : "",
            tag ? tag : "", tag ? "] " : "", message);
}

/* --- statuses and memory -------------------------------------------------- */
static tsr_status *h_status_new(int32_t code, const char *message) {
    return tsr_error(code, "%s", message ? message : "(no message)");
}
static void h_status_free(tsr_status *s) { tsr_status_free(s); }
static const char *h_status_message(const tsr_status *s) { return tsr_status_message(s); }
static int32_t h_status_code(const tsr_status *s) { return (int32_t)tsr_status_code(s); }
static void *h_alloc(size_t n) { return malloc(n ? n : 1); }
static void h_free(void *p) { free(p); }

/* --- graph views ---------------------------------------------------------- */
#define G(x) ((const struct tsr_graph *)(x))
static size_t h_graph_node_count(const tsr_graph *g) { return G(g)->n_nodes; }
static const tsr_node *h_graph_node(const tsr_graph *g, size_t i) {
    return i < G(g)->n_nodes ? (const tsr_node *)G(g)->nodes[i] : NULL;
}
static size_t h_graph_input_count(const tsr_graph *g) { return G(g)->n_inputs; }
static const tsr_value_info *h_graph_input(const tsr_graph *g, size_t i) {
    return i < G(g)->n_inputs ? (const tsr_value_info *)G(g)->inputs[i] : NULL;
}
static size_t h_graph_output_count(const tsr_graph *g) { return G(g)->n_outputs; }
static const tsr_value_info *h_graph_output(const tsr_graph *g, size_t i) {
    return i < G(g)->n_outputs ? (const tsr_value_info *)G(g)->outputs[i] : NULL;
}
static tsr_status *h_graph_to_onnx(const tsr_graph *g, void **bytes, size_t *size) {
    return onnx_write_view(G(g), bytes, size);
}

/* --- nodes ---------------------------------------------------------------- */
#define N(x) ((const ir_node *)(x))
static const char *h_node_name(const tsr_node *n) { return N(n)->name ? N(n)->name : ""; }
static const char *h_node_op_type(const tsr_node *n) { return N(n)->op_type; }
static const char *h_node_domain(const tsr_node *n) { return N(n)->domain ? N(n)->domain : ""; }
static int64_t h_node_opset(const tsr_node *n) { return N(n)->opset; }
static size_t h_node_input_count(const tsr_node *n) { return N(n)->n_inputs; }
static const tsr_value_info *h_node_input(const tsr_node *n, size_t i) {
    return i < N(n)->n_inputs ? (const tsr_value_info *)N(n)->inputs[i] : NULL;
}
static size_t h_node_output_count(const tsr_node *n) { return N(n)->n_outputs; }
static const tsr_value_info *h_node_output(const tsr_node *n, size_t i) {
    return i < N(n)->n_outputs ? (const tsr_value_info *)N(n)->outputs[i] : NULL;
}
static size_t h_node_attr_count(const tsr_node *n) { return N(n)->n_attrs; }
static const tsr_attr *h_node_attr(const tsr_node *n, size_t i) {
    return i < N(n)->n_attrs ? (const tsr_attr *)&N(n)->attrs[i] : NULL;
}
static const tsr_attr *h_node_attr_find(const tsr_node *n, const char *name) {
    return (const tsr_attr *)ir_node_attr(N(n), name);
}

/* --- values --------------------------------------------------------------- */
#define V(x) ((const ir_value *)(x))
/* Outer-scope placeholders answer with the value they stand for. */
static const ir_value *v_real(const tsr_value_info *v) {
    const ir_value *r = V(v);
    while (r && r->is_outer && r->outer) r = r->outer;
    return r;
}
static const char *h_value_name(const tsr_value_info *v) { return V(v)->name; }
static int32_t h_value_elem_type(const tsr_value_info *v) {
    const ir_value *r = v_real(v);
    return r->type.kind == IR_TYPE_TENSOR ? r->type.elem_type : 0;
}
static int32_t h_value_rank(const tsr_value_info *v) {
    const ir_value *r = v_real(v);
    return r->type.kind == IR_TYPE_TENSOR ? r->type.rank : -1;
}
static int64_t h_value_dim(const tsr_value_info *v, int32_t axis) {
    const ir_value *r = v_real(v);
    if (r->type.kind != IR_TYPE_TENSOR || axis < 0 || axis >= r->type.rank) return TSR_DIM_UNKNOWN;
    return r->type.dims[axis].value;
}
static const char *h_value_dim_symbol(const tsr_value_info *v, int32_t axis) {
    const ir_value *r = v_real(v);
    if (r->type.kind != IR_TYPE_TENSOR || axis < 0 || axis >= r->type.rank) return NULL;
    return r->type.dims[axis].symbol;
}
static const tsr_tensor *h_value_constant(const tsr_value_info *v) {
    const ir_value *r = v_real(v);
    return r->constant ? &r->constant->view : NULL;
}

/* --- attributes ----------------------------------------------------------- */
#define A(x) ((const ir_attr *)(x))
static const char *h_attr_name(const tsr_attr *a) { return A(a)->name; }
static int32_t h_attr_type(const tsr_attr *a) { return A(a)->type; }
static int64_t h_attr_int(const tsr_attr *a) { return A(a)->i; }
static float h_attr_float(const tsr_attr *a) { return A(a)->f; }
static const char *h_attr_string(const tsr_attr *a, size_t *size) {
    if (size) *size = A(a)->s ? A(a)->s_len : 0;
    return A(a)->s ? A(a)->s : "";
}
static size_t h_attr_list_size(const tsr_attr *a) { return A(a)->count; }
static const int64_t *h_attr_ints(const tsr_attr *a) { return A(a)->ints; }
static const float *h_attr_floats(const tsr_attr *a) { return A(a)->floats; }
static const char *h_attr_strings_at(const tsr_attr *a, size_t i, size_t *size) {
    if (!A(a)->strings || i >= A(a)->count) {
        if (size) *size = 0;
        return NULL;
    }
    if (size) *size = A(a)->string_lens ? A(a)->string_lens[i] : strlen(A(a)->strings[i]);
    return A(a)->strings[i];
}
static const tsr_tensor *h_attr_tensor(const tsr_attr *a) {
    return A(a)->t ? &A(a)->t->view : NULL;
}
static const tsr_tensor *h_attr_tensors_at(const tsr_attr *a, size_t i) {
    return A(a)->tensors && i < A(a)->count && A(a)->tensors[i] ? &A(a)->tensors[i]->view : NULL;
}
static const tsr_graph *whole_view(ir_graph *g) {
    if (!g) return NULL;
    if (!g->view && host_graph_view_whole(g, &g->view)) return NULL;
    return (const tsr_graph *)g->view;
}
static const tsr_graph *h_attr_graph(const tsr_attr *a) { return whole_view(A(a)->g); }
static const tsr_graph *h_attr_graphs_at(const tsr_attr *a, size_t i) {
    return A(a)->graphs && i < A(a)->count ? whole_view(A(a)->graphs[i]) : NULL;
}

/* --- claims --------------------------------------------------------------- */
static tsr_status *h_claim_piece_on(tsr_claim_sink *sink, const tsr_node *const *nodes, size_t count,
                                    double cost, int32_t device) {
    if (device < 0 || (size_t)device >= (sink->n_devices ? sink->n_devices : 1))
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "a claim on device %d; the provider has %zu", (int)device,
                         sink->n_devices ? sink->n_devices : 1);
    if (count > sink->offered->n_nodes) /* before sizing anything by it */
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "a claim of %zu nodes, but only %zu were offered", count,
                         sink->offered->n_nodes);
    size_t *part = malloc(sizeof *part * (count + 1)), parts = 0;
    if (!part) return TSR_NO_MEMORY();
    tsr_status *st = claim_check(sink, nodes, count, part, &parts);
    /* one piece per connected part, the estimate shared by node count */
    for (size_t k = 0; !st && k < parts; k++) {
        size_t m = 0;
        for (size_t i = 0; i < count; i++) m += part[i] == k;
        claim_entry *c = realloc(sink->claims, sizeof *c * (sink->n_claims + 1));
        ir_node **copy = c ? malloc(sizeof *copy * m) : NULL;
        if (c) sink->claims = c;
        if (!copy) {
            st = TSR_NO_MEMORY();
            break;
        }
        for (size_t i = 0, j = 0; i < count; i++)
            if (part[i] == k) copy[j++] = (ir_node *)N(nodes[i]);
        double share = cost >= 0 ? cost * (double)m / (double)count : cost;
        c[sink->n_claims++] = (claim_entry){copy, m, share, device};
    }
    free(part);
    return st;
}

static tsr_status *h_claim_piece(tsr_claim_sink *sink, const tsr_node *const *nodes, size_t count,
                                 double cost) {
    return h_claim_piece_on(sink, nodes, count, cost, 0);
}

static int32_t h_graph_device(const tsr_graph *g) { return g ? G(g)->device : 0; }
static int32_t h_run_should_stop(const tsr_run_context *c) {
    return c && run_budget_stopped(((const struct tsr_run_context *)c)->budget);
}

static tsr_status *h_run_charge(tsr_run_context *c, uint64_t bytes, const char *what) {
    struct tsr_run_context *ctx = (struct tsr_run_context *)c;
    if (!ctx || !bytes || !ctx->budget) return NULL;
    TSR_TRY(run_budget_reserve(ctx->budget, bytes, what && *what ? what : "a provider's own memory"));
    ctx->charged += bytes;
    return NULL;
}

static void h_decline_node(tsr_claim_sink *sink, const tsr_node *node, int32_t reason,
                           const char *text) {
    if (!claim_offered(sink, node)) return;
    decline_entry *d = realloc(sink->declines, sizeof *d * (sink->n_declines + 1));
    if (!d) return;
    sink->declines = d;
    d[sink->n_declines++] =
        (decline_entry){(ir_node *)N(node), reason, strdup(text ? text : "(no reason given)")};
}

void claim_sink_clear(struct tsr_claim_sink *s) {
    for (size_t i = 0; i < s->n_claims; i++) free(s->claims[i].nodes);
    for (size_t i = 0; i < s->n_declines; i++) free(s->declines[i].text);
    free(s->claims);
    free(s->declines);
    free(s->offered_sorted);
    s->claims = NULL;
    s->declines = NULL;
    s->offered_sorted = NULL;
    s->n_claims = s->n_declines = 0;
}

/* --- running -------------------------------------------------------------- */
#define R(x) ((struct tsr_run_context *)(x))
static size_t h_run_input_count(const tsr_run_context *c) { return R(c)->n_inputs; }
static const tsr_tensor *h_run_input(const tsr_run_context *c, size_t i) {
    return i < R(c)->n_inputs ? R(c)->inputs[i] : NULL;
}
static size_t h_run_output_count(const tsr_run_context *c) { return R(c)->n_outputs; }

static const tsr_value *h_run_input_value(const tsr_run_context *cx, size_t i) {
    struct tsr_run_context *c = (struct tsr_run_context *)R(cx);
    if (i >= c->n_inputs) return NULL;
    if (c->in_values && c->in_values[i]) return c->in_values[i];
    if (!c->inputs[i]) return NULL;
    if (!c->wrappers && !(c->wrappers = calloc(c->n_inputs, sizeof *c->wrappers))) return NULL;
    if (!c->wrappers[i] && value_borrow_tensor(c->inputs[i], &c->wrappers[i])) return NULL;
    return c->wrappers[i];
}

static tsr_status *h_run_set_output_value(tsr_run_context *cx, size_t index, tsr_value *v) {
    struct tsr_run_context *c = R(cx);
    if (!v) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "run_set_output_value: NULL value");
    if (index >= c->n_outputs || rt_present(&c->outputs[index])) {
        value_free(v);
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "output %zu is out of range or already set", index);
    }
    rt_tensor *slot = &c->outputs[index];
    TSR_TRY(rt_tensor_take_value(slot, v));
    /* Built by the kernel already: counted now, so what follows sees it. */
    tsr_status *st = run_budget_charge(slot, c->budget, run_budget_slot_bytes(slot), "an output value");
    if (st) rt_tensor_release(slot);
    return st;
}

static int32_t h_val_kind(const tsr_value *v) { return tsr_value_get_kind(v); }
static size_t h_val_count(const tsr_value *v) { return tsr_value_count(v); }
static const tsr_value *h_val_item(const tsr_value *v, size_t i) { return tsr_value_item(v, i); }
static int32_t h_val_elem_type(const tsr_value *v) { return tsr_value_elem_type(v); }
static tsr_tensor *h_val_tensor(const tsr_value *v) { return (tsr_tensor *)value_tensor_view(v); }
static tsr_status *h_val_new_tensor(int32_t et, int32_t rank, const int64_t *dims, tsr_value **out) {
    return tsr_value_create_tensor(et, rank, dims, out);
}
static tsr_status *h_val_new_sequence(int32_t et, tsr_value **out) {
    return tsr_value_create_sequence(et, out);
}
static tsr_status *h_val_new_optional(tsr_value *contents, int32_t et, tsr_value **out) {
    return tsr_value_create_optional(contents, et, out);
}
static tsr_status *h_val_append(tsr_value *seq, tsr_value *item) { return value_append(seq, item); }
static tsr_status *h_val_clone(const tsr_value *v, tsr_value **out) { return value_clone(v, out); }
static void h_val_free(tsr_value *v) { value_free(v); }

static double h_node_flops(const tsr_node *n) { return n ? cost_node_flops(N(n)) : -1.0; }

static tsr_status *h_run_alloc_output(tsr_run_context *cx, size_t index, int32_t elem_type,
                                      int32_t rank, const int64_t *dims, tsr_tensor **out) {
    struct tsr_run_context *c = R(cx);
    rt_tensor *slot;
    bool device = c->prov && c->prov->memory_kind == TSR_MEMORY_DEVICE;
    if (index == (size_t)-1) {
        rt_tensor **s = realloc(c->scratch, sizeof *s * (c->n_scratch + 1));
        if (!s) return TSR_NO_MEMORY();
        c->scratch = s;
        if (!(slot = calloc(1, sizeof *slot))) return TSR_NO_MEMORY();
        s[c->n_scratch++] = slot;
    } else if (index >= c->n_outputs) {
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "output index %zu out of range (%zu outputs)",
                         index, c->n_outputs);
    } else {
        slot = &c->outputs[index];
        if (rt_present(slot))
            return tsr_error(TSR_ERR_INVALID_ARGUMENT, "output %zu allocated twice", index);
    }
    if (rank < 0 || rank > IR_MAX_RANK || (rank > 0 && !dims))
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "output rank %d is invalid", (int)rank);
    uint64_t count;
    size_t bytes;
    if (!ir_dims_count(rank, dims, &count) || !ir_elem_bytes(elem_type, count, &bytes))
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "output shape is negative or too large");
    if (c->max_tensor_bytes && bytes > c->max_tensor_bytes)
        return tsr_error(TSR_ERR_NO_MEMORY, "an output of %zu bytes exceeds the session's tensor_bytes limit (%llu)",
                         bytes, (unsigned long long)c->max_tensor_bytes);
    TSR_TRY(run_budget_reserve(c->budget, bytes, index == (size_t)-1 ? "scratch" : "an output"));
    tsr_status *s = device && elem_type != TSR_STRING
                        ? rt_tensor_alloc_device(slot, c->prov, c->device, elem_type, rank, dims)
                        : rt_tensor_alloc_host(slot, elem_type, rank, dims);
    if (s) {
        run_budget_unreserve(c->budget, bytes);
        return s;
    }
    run_budget_assign(slot, c->budget, bytes);
    *out = &slot->view;
    return NULL;
}

void run_context_end(struct tsr_run_context *ctx) {
    if (ctx->charged) run_budget_unreserve(ctx->budget, ctx->charged);
    ctx->charged = 0;
    for (size_t i = 0; i < ctx->n_scratch; i++) {
        rt_tensor_release(ctx->scratch[i]);
        free(ctx->scratch[i]);
    }
    free(ctx->scratch);
    ctx->scratch = NULL;
    ctx->n_scratch = 0;
    if (ctx->wrappers)
        for (size_t i = 0; i < ctx->n_inputs; i++) value_free(ctx->wrappers[i]);
    free(ctx->wrappers);
    ctx->wrappers = NULL;
}

static tsr_status *h_tensor_set_string(tsr_tensor *t, size_t index, const char *data,
                                       size_t size) {
    if (!t || t->elem_type != TSR_STRING || t->memory_kind != TSR_MEMORY_HOST)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "tensor_set_string on a non-string tensor");
    if (index >= t->nbytes / sizeof(tsr_string))
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "string index %zu out of range", index);
    char *copy = malloc(size + 1);
    if (!copy) return TSR_NO_MEMORY();
    if (size) memcpy(copy, data, size);
    copy[size] = 0;
    tsr_string *s = (tsr_string *)t->data + index;
    free((void *)s->data);
    s->data = copy;
    s->size = size;
    return NULL;
}

static const tsr_host_api host_table = {
    .struct_size = sizeof(tsr_host_api),
    .abi_version = TSR_PROVIDER_ABI_VERSION,
    .status_new = h_status_new,
    .status_free = h_status_free,
    .status_message = h_status_message,
    .status_code = h_status_code,
    .log = host_log,
    .alloc = h_alloc,
    .free = h_free,
    .graph_node_count = h_graph_node_count,
    .graph_node = h_graph_node,
    .graph_input_count = h_graph_input_count,
    .graph_input = h_graph_input,
    .graph_output_count = h_graph_output_count,
    .graph_output = h_graph_output,
    .graph_to_onnx = h_graph_to_onnx,
    .node_name = h_node_name,
    .node_op_type = h_node_op_type,
    .node_domain = h_node_domain,
    .node_opset = h_node_opset,
    .node_input_count = h_node_input_count,
    .node_input = h_node_input,
    .node_output_count = h_node_output_count,
    .node_output = h_node_output,
    .node_attr_count = h_node_attr_count,
    .node_attr = h_node_attr,
    .node_attr_find = h_node_attr_find,
    .value_name = h_value_name,
    .value_elem_type = h_value_elem_type,
    .value_rank = h_value_rank,
    .value_dim = h_value_dim,
    .value_dim_symbol = h_value_dim_symbol,
    .value_constant = h_value_constant,
    .attr_name = h_attr_name,
    .attr_type = h_attr_type,
    .attr_int = h_attr_int,
    .attr_float = h_attr_float,
    .attr_string = h_attr_string,
    .attr_list_size = h_attr_list_size,
    .attr_ints = h_attr_ints,
    .attr_floats = h_attr_floats,
    .attr_strings_at = h_attr_strings_at,
    .attr_tensor = h_attr_tensor,
    .attr_tensors_at = h_attr_tensors_at,
    .attr_graph = h_attr_graph,
    .attr_graphs_at = h_attr_graphs_at,
    .claim_piece = h_claim_piece,
    .decline_node = h_decline_node,
    .run_input_count = h_run_input_count,
    .run_input = h_run_input,
    .run_output_count = h_run_output_count,
    .run_alloc_output = h_run_alloc_output,
    .tensor_set_string = h_tensor_set_string,
    .run_input_value = h_run_input_value,
    .run_set_output_value = h_run_set_output_value,
    .val_kind = h_val_kind,
    .val_count = h_val_count,
    .val_item = h_val_item,
    .val_elem_type = h_val_elem_type,
    .val_tensor = h_val_tensor,
    .val_new_tensor = h_val_new_tensor,
    .val_new_sequence = h_val_new_sequence,
    .val_new_optional = h_val_new_optional,
    .val_append = h_val_append,
    .val_clone = h_val_clone,
    .val_free = h_val_free,
    .node_flops = h_node_flops,
    .claim_piece_on = h_claim_piece_on,
    .graph_device = h_graph_device,
    .run_should_stop = h_run_should_stop,
    .run_charge = h_run_charge,
};

const tsr_host_api *host_api_table(void) { return &host_table; }
