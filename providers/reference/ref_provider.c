/* The reference provider's plugin entry: it claims every node it has a
 * kernel for as a piece of one node and runs it with naive C. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"

static const tsr_host_api *host;

typedef struct ref_state {
    int threads;
    /* exclude_ops (alias decline): op types to decline, so that the core
     * expands function ops into their bodies; a comma-separated list with
     * a leading and trailing comma so ",Op," finds an entry. */
    char *excluded_ops;
} ref_state;

static bool op_excluded(const ref_state *s, const char *op_type) {
    size_t n = strlen(op_type);
    if (!s->excluded_ops || n == 0) return false;
    for (const char *p = strstr(s->excluded_ops, op_type); p; p = strstr(p + 1, op_type))
        if (p[-1] == ',' && p[n] == ',') return true;
    return false;
}

static tsr_status *set_excluded_ops(ref_state *s, const char *list) {
    size_t n = strlen(list);
    char *copy = malloc(n + 3);
    if (!copy) return host->status_new(TSR_ERR_NO_MEMORY, "out of memory");
    copy[0] = ',';
    memcpy(copy + 1, list, n);
    copy[n + 1] = ',';
    copy[n + 2] = 0;
    for (char *p = copy; *p; p++)
        if (*p == ' ') *p = ','; /* "A, B" reads as "A,B" */
    free(s->excluded_ops);
    s->excluded_ops = copy;
    return NULL;
}

typedef struct ref_piece {
    const tsr_node *node;
    const ref_op *op;
    int threads;
    size_t n_in, n_out;
    int *in_map;
    int *out_map;
} ref_piece;

static void ref_destroy(void *state) {
    ref_state *s = state;
    if (!s) return;
    free(s->excluded_ops);
    free(s);
}

static tsr_status *ref_create(const tsr_provider_config *config, void **state) {
    ref_state *s = calloc(1, sizeof *s);
    if (!s) return host->status_new(TSR_ERR_NO_MEMORY, "out of memory");
    s->threads = config->intra_op_threads;
    for (size_t i = 0; i < config->option_count; i++) {
        const char *key = config->option_keys[i];
        tsr_status *st = NULL;
        if (strcmp(key, "exclude_ops") == 0 || strcmp(key, "decline") == 0) {
            st = set_excluded_ops(s, config->option_values[i]);
        } else {
            char msg[256];
            snprintf(msg, sizeof msg,
                     "reference provider has no option '%s' (it has exclude_ops=OP1,OP2)", key);
            st = host->status_new(TSR_ERR_INVALID_ARGUMENT, msg);
        }
        if (st) {
            ref_destroy(s);
            return st;
        }
    }
    *state = s;
    return NULL;
}

static size_t ref_device_count(void *state) {
    (void)state;
    return 1;
}

static tsr_status *ref_device_info(void *state, size_t index, tsr_device_info *info) {
    (void)state;
    if (index != 0) return host->status_new(TSR_ERR_INVALID_ARGUMENT, "no such device");
    info->name = "host CPU";
    info->vendor = "Tessera";
    if (TSR_HAS_MEMBER(info, tsr_device_info, details)) info->details = "naive C kernels";
    info->kind = TSR_DEVICE_CPU;
    info->memory_kind = TSR_MEMORY_HOST;
    info->memory_bytes = 0;
    return NULL;
}

/* Seconds one run of `node` takes here: naive single-threaded loops in
 * double or float, about 1 GFLOP/s on a current core, and a little
 * overhead per node. Negative (unknown) with a host too old to estimate. */
static double claim_cost(const tsr_node *node) {
    if (!TSR_HAS_MEMBER(host, tsr_host_api, node_flops)) return -1.0;
    double flops = host->node_flops(node);
    return flops < 0 ? -1.0 : 1e-6 + flops / 1e9;
}

static tsr_status *ref_claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink) {
    const ref_state *st = state;
    size_t n = host->graph_node_count(graph);
    for (size_t i = 0; i < n; i++) {
        const tsr_node *node = host->graph_node(graph, i);
        const char *op_type = host->node_op_type(node);
        const char *domain = host->node_domain(node);
        int64_t opset = host->node_opset(node);
        const ref_op *op = ref_find_op(domain, op_type, opset);
        char why[256];
        if (op_excluded(st, op_type)) {
            host->decline_node(sink, node, TSR_DECLINE_OP, "excluded by option");
            continue;
        }
        if (!op) {
            snprintf(why, sizeof why, "no kernel for %s%s%s opset %lld", domain,
                     domain[0] ? "." : "", op_type, (long long)opset);
            host->decline_node(sink, node, TSR_DECLINE_OP, why);
            continue;
        }
        if (op->check) {
            why[0] = 0;
            int reason = op->check(host, node, why, sizeof why);
            if (reason) {
                host->decline_node(sink, node, reason, why);
                continue;
            }
        }
        tsr_status *s = host->claim_piece(sink, &node, 1, claim_cost(node));
        if (s) return s;
    }
    return NULL;
}

typedef struct value_pos {
    const tsr_value_info *v;
    int index;
} value_pos;

static int value_pos_cmp(const void *a, const void *b) {
    uintptr_t x = (uintptr_t)((const value_pos *)a)->v, y = (uintptr_t)((const value_pos *)b)->v;
    return (x > y) - (x < y);
}

/* map[i] = position of the node's i-th input (or output) among the piece's,
 * -1 when absent; by a sorted copy of the piece's list, so a Concat of
 * 100,000 inputs costs n log n, not n^2. False when out of memory. */
static bool map_positions(const tsr_graph *piece, const tsr_node *node, bool output, size_t count, int *map) {
    size_t n = output ? host->graph_output_count(piece) : host->graph_input_count(piece);
    value_pos *sorted = malloc(sizeof *sorted * (n + 1));
    if (!sorted) return false;
    for (size_t i = 0; i < n; i++)
        sorted[i] = (value_pos){output ? host->graph_output(piece, i) : host->graph_input(piece, i), (int)i};
    qsort(sorted, n, sizeof *sorted, value_pos_cmp);
    for (size_t i = 0; i < count; i++) {
        value_pos key = {output ? host->node_output(node, i) : host->node_input(node, i), -1};
        const value_pos *hit = key.v ? bsearch(&key, sorted, n, sizeof *sorted, value_pos_cmp) : NULL;
        map[i] = hit ? hit->index : -1;
    }
    free(sorted);
    return true;
}

static void ref_release(void *piece_state) {
    ref_piece *p = piece_state;
    if (!p) return;
    free(p->in_map);
    free(p->out_map);
    free(p);
}

static tsr_status *ref_compile(void *state, const tsr_graph *piece, void **piece_state) {
    ref_state *s = state;
    if (host->graph_node_count(piece) != 1)
        return host->status_new(TSR_ERR_NOT_SUPPORTED, "reference pieces hold one node");
    ref_piece *p = calloc(1, sizeof *p);
    if (!p) return host->status_new(TSR_ERR_NO_MEMORY, "out of memory");
    p->node = host->graph_node(piece, 0);
    p->op = ref_find_op(host->node_domain(p->node), host->node_op_type(p->node),
                        host->node_opset(p->node));
    p->threads = s->threads;
    p->n_in = host->node_input_count(p->node);
    p->n_out = host->node_output_count(p->node);
    p->in_map = malloc(sizeof(int) * (p->n_in + 1));
    p->out_map = malloc(sizeof(int) * (p->n_out + 1));
    if (!p->op || !p->in_map || !p->out_map) {
        bool no_kernel = !p->op; /* read before ref_release frees p */
        ref_release(p);
        return host->status_new(no_kernel ? TSR_ERR_NOT_SUPPORTED : TSR_ERR_NO_MEMORY,
                                no_kernel ? "no kernel for this node" : "out of memory");
    }
    if (!map_positions(piece, p->node, false, p->n_in, p->in_map) ||
        !map_positions(piece, p->node, true, p->n_out, p->out_map)) {
        ref_release(p);
        return host->status_new(TSR_ERR_NO_MEMORY, "out of memory");
    }
    *piece_state = p;
    return NULL;
}

static tsr_status *ref_run(void *piece_state, tsr_run_context *run) {
    ref_piece *p = piece_state;
    ref_ctx c = {host, p->node, run, p->in_map, p->out_map, p->n_in, p->n_out, p->threads};
    return p->op->run(&c);
}

static const tsr_provider ref_provider = {
    .struct_size = sizeof(tsr_provider),
    .name = "reference",
    .vendor = "Tessera",
    .version = "0.1.0",
    .create = ref_create,
    .destroy = ref_destroy,
    .device_count = ref_device_count,
    .device_info = ref_device_info,
    .claim = ref_claim,
    .compile = ref_compile,
    .run = ref_run,
    .release = ref_release,
};

TSR_EXPORT tsr_status *tessera_provider_entry(tsr_provider_entry_args *args) {
    if (args->host_abi_min > TSR_PROVIDER_ABI_VERSION || args->host_abi_max < 1) {
        return args->host->status_new(TSR_ERR_ABI, "reference provider implements ABI 1 only");
    }
    host = args->host;
    args->abi_version = TSR_PROVIDER_ABI_VERSION;
    args->provider = &ref_provider;
    return NULL;
}
