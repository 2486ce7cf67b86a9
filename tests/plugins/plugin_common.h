/* Shared bits of the test plugins in tests/plugins/: each plugin is its own
 * .so built from one .c file that includes this header, and, like any real
 * plugin, sees only abi/ (tessera/provider.h). Everything here is static. */
#ifndef TESSERA_TEST_PLUGIN_COMMON_H
#define TESSERA_TEST_PLUGIN_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/provider.h"

#if defined(__GNUC__)
#define TP_UNUSED __attribute__((unused))
#else
#define TP_UNUSED
#endif

static const tsr_host_api *host;

static TP_UNUSED tsr_status *tp_error(int32_t code, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return host->status_new(code, msg);
}

/* The usual entry: ABI 1, the given table. */
static TP_UNUSED tsr_status *tp_entry(tsr_provider_entry_args *args, const tsr_provider *table) {
    if (args->host_abi_min > TSR_PROVIDER_ABI_VERSION || args->host_abi_max < 1)
        return args->host->status_new(TSR_ERR_ABI, "test plugin implements ABI 1 only");
    host = args->host;
    args->abi_version = 1;
    args->provider = table;
    return NULL;
}

/* --- instances ----------------------------------------------------------- */

typedef struct tp_state {
    float scale; /* what plugin_options multiplies by; 1 elsewhere */
} tp_state;

/* An instance that takes no options. */
static TP_UNUSED tsr_status *tp_create(const tsr_provider_config *config, void **state) {
    if (config->option_count)
        return tp_error(TSR_ERR_INVALID_ARGUMENT, "this test provider has no option '%s'", config->option_keys[0]);
    tp_state *s = calloc(1, sizeof *s);
    if (!s) return host->status_new(TSR_ERR_NO_MEMORY, "out of memory");
    s->scale = 1.0f;
    *state = s;
    return NULL;
}

static TP_UNUSED void tp_destroy(void *state) { free(state); }

static TP_UNUSED size_t tp_device_count(void *state) {
    (void)state;
    return 1;
}

static TP_UNUSED tsr_status *tp_device_info(void *state, size_t index, tsr_device_info *info) {
    (void)state;
    if (index != 0) return host->status_new(TSR_ERR_INVALID_ARGUMENT, "no such device");
    info->name = "test CPU";
    info->vendor = "Tessera tests";
    if (TSR_HAS_MEMBER(info, tsr_device_info, details)) info->details = NULL;
    info->kind = TSR_DEVICE_CPU;
    info->memory_kind = TSR_MEMORY_HOST;
    info->memory_bytes = 0;
    return NULL;
}

/* --- claiming ------------------------------------------------------------ */

/* Whether the node's "domain.op_type" (or plain op_type for ai.onnx) is one
 * of the NULL-terminated `ops`. */
static TP_UNUSED bool tp_op_in(const tsr_node *node, const char *const *ops) {
    const char *op = host->node_op_type(node);
    const char *domain = host->node_domain(node);
    char full[256];
    snprintf(full, sizeof full, "%s%s%s", domain, domain[0] ? "." : "", op);
    for (size_t i = 0; ops[i]; i++)
        if (strcmp(ops[i], full) == 0) return true;
    return false;
}

/* Claims every node in `ops` as a piece of one node; declines the rest. */
static TP_UNUSED tsr_status *tp_claim_ops(const tsr_graph *graph, tsr_claim_sink *sink, const char *const *ops,
                                          const char *who) {
    size_t n = host->graph_node_count(graph);
    for (size_t i = 0; i < n; i++) {
        const tsr_node *node = host->graph_node(graph, i);
        if (tp_op_in(node, ops)) {
            tsr_status *s = host->claim_piece(sink, &node, 1, -1.0);
            if (s) return s;
        } else {
            char why[256];
            snprintf(why, sizeof why, "%s runs only %s%s", who, ops[0], ops[1] ? " and others" : "");
            host->decline_node(sink, node, TSR_DECLINE_OP, why);
        }
    }
    return NULL;
}

/* --- one-node pieces over float tensors ---------------------------------- */

typedef enum tp_kind { TP_RELU, TP_ADD, TP_DOUBLE } tp_kind;

typedef struct tp_piece {
    tp_kind kind;
    float scale;
    int in[2]; /* node input i -> piece input index */
    int out;   /* node output 0 -> piece output index, -1 when nobody reads it */
    char name[128];
} tp_piece;

static TP_UNUSED int tp_index(const tsr_graph *piece, const tsr_value_info *v, bool output) {
    size_t n = output ? host->graph_output_count(piece) : host->graph_input_count(piece);
    for (size_t i = 0; v && i < n; i++)
        if ((output ? host->graph_output(piece, i) : host->graph_input(piece, i)) == v) return (int)i;
    return -1;
}

static TP_UNUSED tsr_status *tp_compile(void *state, const tsr_graph *piece, void **piece_state) {
    if (host->graph_node_count(piece) != 1) return host->status_new(TSR_ERR_NOT_SUPPORTED, "test pieces hold one node");
    const tsr_node *node = host->graph_node(piece, 0);
    const char *op = host->node_op_type(node);
    tp_piece *p = calloc(1, sizeof *p);
    if (!p) return host->status_new(TSR_ERR_NO_MEMORY, "out of memory");
    p->kind = strcmp(op, "Relu") == 0 ? TP_RELU : strcmp(op, "Add") == 0 ? TP_ADD : TP_DOUBLE;
    p->scale = state ? ((tp_state *)state)->scale : 1.0f;
    size_t nin = host->node_input_count(node);
    if (nin < 1 || nin > 2 || (p->kind == TP_ADD) != (nin == 2)) {
        free(p);
        return tp_error(TSR_ERR_NOT_SUPPORTED, "%s with %zu inputs", op, nin);
    }
    p->in[0] = tp_index(piece, host->node_input(node, 0), false);
    p->in[1] = nin > 1 ? tp_index(piece, host->node_input(node, 1), false) : -1;
    p->out = tp_index(piece, host->node_output(node, 0), true);
    snprintf(p->name, sizeof p->name, "%s", host->node_name(node));
    *piece_state = p;
    return NULL;
}

static TP_UNUSED void tp_release(void *piece_state) { free(piece_state); }

static TP_UNUSED size_t tp_count(const tsr_tensor *t) {
    size_t n = 1;
    for (int32_t d = 0; d < t->rank; d++) n *= (size_t)t->dims[d];
    return n;
}

/* Relu (times the instance's scale), Add of two same-shaped tensors, or
 * doubling, over float tensors. */
static TP_UNUSED tsr_status *tp_run(void *piece_state, tsr_run_context *ctx) {
    const tp_piece *p = piece_state;
    const tsr_tensor *a = p->in[0] >= 0 ? host->run_input(ctx, (size_t)p->in[0]) : NULL;
    const tsr_tensor *b = p->in[1] >= 0 ? host->run_input(ctx, (size_t)p->in[1]) : NULL;
    if (!a || a->elem_type != TSR_FLOAT || (p->kind == TP_ADD && (!b || b->elem_type != TSR_FLOAT)))
        return tp_error(TSR_ERR_NOT_SUPPORTED, "node '%s': float inputs only", p->name);
    size_t n = tp_count(a);
    if (p->kind == TP_ADD && tp_count(b) != n)
        return tp_error(TSR_ERR_NOT_SUPPORTED, "node '%s': Add needs equal shapes", p->name);
    tsr_tensor *out;
    tsr_status *s =
        host->run_alloc_output(ctx, p->out >= 0 ? (size_t)p->out : (size_t)-1, TSR_FLOAT, a->rank, a->dims, &out);
    if (s) return s;
    const float *x = a->data;
    const float *y = b ? b->data : NULL;
    float *z = out->data;
    for (size_t i = 0; i < n; i++) {
        switch (p->kind) {
        case TP_RELU: z[i] = (x[i] > 0 ? x[i] : 0.0f) * p->scale; break;
        case TP_ADD: z[i] = x[i] + y[i]; break;
        case TP_DOUBLE: z[i] = 2.0f * x[i]; break;
        }
    }
    return NULL;
}

#endif
