/* The reference provider's plugin entry: it claims every node it has a
 * kernel for as a piece of one node and runs it with naive C. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"
#include "ref_oracle.h"

static const tsr_host_api *host;

typedef struct ref_state {
    int threads;
    /* exclude_ops (alias decline): op types to decline, so that the core
     * expands function ops into their bodies; a comma-separated list with
     * a leading and trailing comma so ",Op," finds an entry. */
    char *excluded_ops;
    /* precision=double: the float64 oracle (ref_oracle.c). */
    bool precise;
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
    ref_oracle *oracle; /* precision=double: the piece runs through it instead */
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
        } else if (strcmp(key, "precision") == 0) {
            const char *v = config->option_values[i];
            if (strcmp(v, "double") == 0 || strcmp(v, "float64") == 0) {
                s->precise = true;
            } else if (strcmp(v, "float") == 0 || strcmp(v, "native") == 0) {
                s->precise = false;
            } else {
                char msg[256];
                snprintf(msg, sizeof msg, "reference provider: precision must be 'native' or 'double', not '%s'", v);
                st = host->status_new(TSR_ERR_INVALID_ARGUMENT, msg);
            }
        } else {
            char msg[256];
            snprintf(msg, sizeof msg,
                     "reference provider has no option '%s' (it has exclude_ops=OP1,OP2 and "
                     "precision=native|double)",
                     key);
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

/* precision=double: claims the run of oracle nodes gathered so far as one
 * set. Runs end wherever a node is declined or claimed alone: a run of
 * consecutive nodes (in topological order) cannot reach itself through a
 * node outside it, so the set never closes a cycle. */
static tsr_status *flush_run(tsr_claim_sink *sink, const tsr_node **run, size_t *count, double *cost) {
    tsr_status *s = *count ? host->claim_piece(sink, run, *count, *cost) : NULL;
    *count = 0;
    *cost = 0;
    return s;
}

static tsr_status *ref_claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink) {
    const ref_state *st = state;
    size_t n = host->graph_node_count(graph);
    /* precision=double claims the nodes it can keep in float64 together,
     * so values stay wide between them (the host splits a set into
     * connected pieces). */
    const tsr_node **together = st->precise ? malloc((n + 1) * sizeof *together) : NULL;
    size_t n_together = 0;
    double together_cost = 0;
    if (st->precise && !together) return host->status_new(TSR_ERR_NO_MEMORY, "out of memory");
    tsr_status *s = NULL;
    for (size_t i = 0; i < n && !s; i++) {
        const tsr_node *node = host->graph_node(graph, i);
        const char *op_type = host->node_op_type(node);
        const char *domain = host->node_domain(node);
        int64_t opset = host->node_opset(node);
        const ref_op *op = ref_find_op(domain, op_type, opset);
        char why[256];
        int reason = 0;
        why[0] = 0;
        if (op_excluded(st, op_type)) {
            reason = TSR_DECLINE_OP;
            snprintf(why, sizeof why, "excluded by option");
        } else if (!op) {
            reason = TSR_DECLINE_OP;
            snprintf(why, sizeof why, "no kernel for %s%s%s opset %lld", domain, domain[0] ? "." : "", op_type,
                     (long long)opset);
        } else if (op->check) {
            reason = op->check(host, node, why, sizeof why);
        }
        if (reason) {
            host->decline_node(sink, node, reason, why);
            if (together) s = flush_run(sink, together, &n_together, &together_cost);
            continue;
        }
        if (together && ref_oracle_node_ok(host, node)) {
            together[n_together++] = node;
            double cost = claim_cost(node);
            together_cost = together_cost < 0 || cost < 0 ? -1.0 : together_cost + cost;
            continue;
        }
        if (together) s = flush_run(sink, together, &n_together, &together_cost);
        if (!s) s = host->claim_piece(sink, &node, 1, claim_cost(node));
    }
    if (!s && together) s = flush_run(sink, together, &n_together, &together_cost);
    free(together);
    return s;
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
    ref_oracle_free(p->oracle);
    free(p);
}

static tsr_status *ref_compile(void *state, const tsr_graph *piece, void **piece_state) {
    ref_state *s = state;
    size_t count = host->graph_node_count(piece);
    /* precision=double: a run of nodes, or one node whose values are all
     * plain tensors, runs through the oracle; others as usual */
    if (s->precise && count > 0 && (count > 1 || ref_oracle_node_ok(host, host->graph_node(piece, 0)))) {
        ref_piece *p = calloc(1, sizeof *p);
        if (!p) return host->status_new(TSR_ERR_NO_MEMORY, "out of memory");
        tsr_status *st = ref_oracle_compile(host, piece, s->threads, &p->oracle);
        if (st) {
            free(p);
            return st;
        }
        *piece_state = p;
        return NULL;
    }
    if (count != 1) return host->status_new(TSR_ERR_NOT_SUPPORTED, "reference pieces hold one node");
    ref_piece *p = calloc(1, sizeof *p);
    if (!p) return host->status_new(TSR_ERR_NO_MEMORY, "out of memory");
    p->node = host->graph_node(piece, 0);
    p->op = ref_find_op(host->node_domain(p->node), host->node_op_type(p->node), host->node_opset(p->node));
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
    if (p->oracle) return ref_oracle_run(p->oracle, run);
    ref_ctx c = {host, p->node, run, p->in_map, p->out_map, p->n_in, p->n_out, p->threads, 0};
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
