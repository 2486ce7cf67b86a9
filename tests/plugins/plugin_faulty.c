/* A deliberately faulty provider, for `tessera compare` tests: it claims one
 * float binary op type (option `op`: Add, Sub, Mul or Div; default Mul),
 * computes it with numpy broadcasting, then adds option `delta` (default
 * 1e-3) to every element — small enough to pass a loose glance, well over
 * compare's default tolerance, so the node it ran must be the one named. */
#include <stdint.h>

#include "plugin_common.h"

#define FAULTY_MAX_RANK 8

typedef enum binop { OP_ADD, OP_SUB, OP_MUL, OP_DIV } binop;

static const char *const op_names[] = {"Add", "Sub", "Mul", "Div"};

typedef struct faulty_state {
    binop op;
    float delta;
} faulty_state;

typedef struct faulty_piece {
    binop op;
    float delta;
    int in[2], out;
    char name[128];
} faulty_piece;

static bool parse_op(const char *s, binop *out) {
    for (size_t i = 0; i < sizeof op_names / sizeof op_names[0]; i++)
        if (strcmp(s, op_names[i]) == 0) {
            *out = (binop)i;
            return true;
        }
    return false;
}

static tsr_status *create(const tsr_provider_config *config, void **state) {
    faulty_state st = {OP_MUL, 1e-3f};
    for (size_t i = 0; i < config->option_count; i++) {
        const char *key = config->option_keys[i], *val = config->option_values[i];
        if (strcmp(key, "op") == 0) {
            if (!parse_op(val, &st.op))
                return tp_error(TSR_ERR_INVALID_ARGUMENT, "faulty: option 'op' must be Add, Sub, Mul or Div, not '%s'",
                                val);
        } else if (strcmp(key, "delta") == 0) {
            char *end = NULL;
            st.delta = strtof(val, &end);
            if (!*val || !end || *end)
                return tp_error(TSR_ERR_INVALID_ARGUMENT, "faulty: option 'delta' needs a number, got '%s'", val);
        } else {
            return tp_error(TSR_ERR_INVALID_ARGUMENT, "faulty provider has no option '%s' (it knows: op, delta)", key);
        }
    }
    faulty_state *s = malloc(sizeof *s);
    if (!s) return host->status_new(TSR_ERR_NO_MEMORY, "out of memory");
    *s = st;
    *state = s;
    return NULL;
}

static bool float_or_unknown(const tsr_value_info *v) {
    int32_t t = v ? host->value_elem_type(v) : -1;
    return t == TSR_FLOAT || t == 0;
}

static tsr_status *claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink) {
    const faulty_state *st = state;
    size_t n = host->graph_node_count(graph);
    for (size_t i = 0; i < n; i++) {
        const tsr_node *node = host->graph_node(graph, i);
        bool op_ok = host->node_domain(node)[0] == 0 && strcmp(host->node_op_type(node), op_names[st->op]) == 0;
        bool types_ok = host->node_input_count(node) == 2 && float_or_unknown(host->node_input(node, 0)) &&
            float_or_unknown(host->node_input(node, 1));
        if (op_ok && types_ok) {
            tsr_status *s = host->claim_piece(sink, &node, 1, -1.0);
            if (s) return s;
        } else {
            char why[128];
            snprintf(why, sizeof why, "faulty runs only float %s", op_names[st->op]);
            host->decline_node(sink, node, op_ok ? TSR_DECLINE_TYPE : TSR_DECLINE_OP, why);
        }
    }
    return NULL;
}

static tsr_status *compile(void *state, const tsr_graph *piece, void **piece_state) {
    const faulty_state *st = state;
    if (host->graph_node_count(piece) != 1)
        return host->status_new(TSR_ERR_NOT_SUPPORTED, "faulty pieces hold one node");
    const tsr_node *node = host->graph_node(piece, 0);
    if (host->node_input_count(node) != 2)
        return tp_error(TSR_ERR_NOT_SUPPORTED, "node '%s': two inputs expected", host->node_name(node));
    faulty_piece *p = calloc(1, sizeof *p);
    if (!p) return host->status_new(TSR_ERR_NO_MEMORY, "out of memory");
    p->op = st->op;
    p->delta = st->delta;
    p->in[0] = tp_index(piece, host->node_input(node, 0), false);
    p->in[1] = tp_index(piece, host->node_input(node, 1), false);
    p->out = tp_index(piece, host->node_output(node, 0), true);
    snprintf(p->name, sizeof p->name, "%s", host->node_name(node));
    *piece_state = p;
    return NULL;
}

/* Output shape by numpy broadcasting, and each input's element strides
 * over it (0 along broadcast axes). False when the shapes do not broadcast
 * or the element count overflows. */
static bool broadcast(const tsr_tensor *a, const tsr_tensor *b, int32_t *rank, int64_t *dims, size_t sa[], size_t sb[],
                      size_t *count) {
    if (a->rank > FAULTY_MAX_RANK || b->rank > FAULTY_MAX_RANK || a->rank < 0 || b->rank < 0) return false;
    int32_t r = a->rank > b->rank ? a->rank : b->rank;
    size_t stride_a = 1, stride_b = 1, n = 1;
    for (int32_t k = r - 1; k >= 0; k--) {
        int32_t ka = k - (r - a->rank), kb = k - (r - b->rank);
        int64_t da = ka >= 0 ? a->dims[ka] : 1, db = kb >= 0 ? b->dims[kb] : 1;
        if (da < 0 || db < 0 || (da != db && da != 1 && db != 1)) return false;
        int64_t d = da == 1 ? db : da;
        dims[k] = d;
        sa[k] = da == 1 ? 0 : stride_a;
        sb[k] = db == 1 ? 0 : stride_b;
        stride_a *= (size_t)da;
        stride_b *= (size_t)db;
        if (d != 0 && n > SIZE_MAX / (size_t)d) return false;
        n *= (size_t)d;
    }
    *rank = r;
    *count = n;
    return true;
}

static float apply(binop op, float x, float y) {
    switch (op) {
    case OP_ADD: return x + y;
    case OP_SUB: return x - y;
    case OP_MUL: return x * y;
    case OP_DIV: return x / y;
    }
    return 0.0f;
}

static tsr_status *run(void *piece_state, tsr_run_context *ctx) {
    const faulty_piece *p = piece_state;
    const tsr_tensor *a = p->in[0] >= 0 ? host->run_input(ctx, (size_t)p->in[0]) : NULL;
    const tsr_tensor *b = p->in[1] >= 0 ? host->run_input(ctx, (size_t)p->in[1]) : NULL;
    if (!a || !b || a->elem_type != TSR_FLOAT || b->elem_type != TSR_FLOAT)
        return tp_error(TSR_ERR_NOT_SUPPORTED, "node '%s': float inputs only", p->name);
    int32_t rank;
    int64_t dims[FAULTY_MAX_RANK];
    size_t sa[FAULTY_MAX_RANK], sb[FAULTY_MAX_RANK], n;
    if (!broadcast(a, b, &rank, dims, sa, sb, &n))
        return tp_error(TSR_ERR_INVALID_ARGUMENT, "node '%s': shapes do not broadcast", p->name);
    tsr_tensor *out;
    tsr_status *s = host->run_alloc_output(ctx, p->out >= 0 ? (size_t)p->out : (size_t)-1, TSR_FLOAT, rank, dims, &out);
    if (s) return s;
    const float *x = a->data, *y = b->data;
    float *z = out->data;
    size_t coord[FAULTY_MAX_RANK] = {0}, ia = 0, ib = 0;
    for (size_t i = 0; i < n; i++) {
        z[i] = apply(p->op, x[ia], y[ib]) + p->delta;
        /* Next coordinate, odometer style, moving both input offsets. */
        for (int32_t k = rank - 1; k >= 0; k--) {
            ia += sa[k];
            ib += sb[k];
            if (++coord[k] < (size_t)dims[k]) break;
            ia -= sa[k] * (size_t)dims[k];
            ib -= sb[k] * (size_t)dims[k];
            coord[k] = 0;
        }
    }
    return NULL;
}

static const tsr_provider table = {
    .struct_size = sizeof(tsr_provider),
    .name = "faulty",
    .vendor = "Tessera tests",
    .version = "0",
    .create = create,
    .destroy = tp_destroy,
    .device_count = tp_device_count,
    .device_info = tp_device_info,
    .claim = claim,
    .compile = compile,
    .run = run,
    .release = tp_release,
};

TSR_EXPORT tsr_status *tessera_provider_entry(tsr_provider_entry_args *args) { return tp_entry(args, &table); }
