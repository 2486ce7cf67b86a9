/*
 * Placement by estimated time. Every provider is surveyed for what it would
 * claim of the whole graph (with its cost estimate); then a local search
 * moves single nodes and whole claimed sets between providers while the
 * total estimate falls. The total is compute time plus one copy per value
 * and per memory it must reach, so a node is moved off the list order's
 * provider only when that pays for the copies it causes or saves.
 *
 * Under the order policy the same machinery only keeps cheap nodes next to
 * their neighbours (ping-pong avoidance): compute is not weighed, and only
 * a move that strictly reduces the bytes copied is made.
 */
#include "placement.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "status.h"

/* A copy between host and a device: fixed latency plus bandwidth. Rough
 * figures for PCIe-class links; on PoCL a copy is a memcpy and cheaper,
 * which only makes the policy more conservative about moving. */
#define COPY_LATENCY_S 20e-6
#define COPY_BYTES_PER_S 8e9
/* When a provider gives no estimate: the same rate for all, so the order of
 * the list and the copies decide. */
#define DEFAULT_FLOPS_PER_S 5e9
#define DEFAULT_NODE_S 2e-6
/* Bytes assumed for a value whose shape is not known statically. */
#define UNKNOWN_VALUE_BYTES 65536.0
#define MAX_SWEEPS 32

typedef struct group {
    size_t prov;
    size_t n;
    size_t *nodes; /* node indices */
} group;

typedef struct placer {
    ir_graph *g;
    size_t n_nodes, n_provs;
    const placement_policy *pol;
    int *domain;    /* per provider: 0 host, p + 1 for a device provider's own memory */
    bool *can;      /* n_nodes x n_provs: the survey's claims */
    double *cost;   /* n_nodes x n_provs: seconds, from the claim or the default */
    group *groups;  /* the survey's claims of more than one node */
    size_t n_groups;
    /* consumers of each value: CSR over value indices */
    size_t *cons_start, *cons;
    size_t *a;      /* current provider per node */
    unsigned *stamp; /* per value: last evaluation that counted it */
    unsigned tick;
    /* scratch, n_nodes (+1) each: providers before a trial move; the run of
     * each node, the nodes run by run and where each run starts */
    size_t *saved, *comp, *order, *starts;
} placer;

static double bytes_of(const ir_value *v) {
    double b = cost_value_bytes(v);
    return b < 0 ? UNKNOWN_VALUE_BYTES : b;
}

static double copy_time(double bytes) { return COPY_LATENCY_S + bytes / COPY_BYTES_PER_S; }

/* The memory a value lives in when its consumers need it. */
static int source_domain(const placer *pl, const ir_value *v) {
    if (v->producer && v->producer->graph == pl->g) return pl->domain[pl->a[v->producer->index]];
    return 0; /* graph input, initializer, outer value: host */
}

/* The copies value v costs under the current assignment: one per memory
 * other than its own that a consumer (or the graph's output) needs.
 * Constants are copied once per session and cost nothing per run. */
static double value_copies(const placer *pl, const ir_value *v, bool bytes_only) {
    if (!v->producer && v->constant) return 0.0;
    /* Counting bytes is the order policy's "stay with your neighbours": only
     * copies between nodes count, not the graph's own inputs and outputs,
     * so a lone node is never moved off the provider the list gave it. */
    if (bytes_only && (!v->producer || v->producer->graph != pl->g)) return 0.0;
    int src = source_domain(pl, v);
    /* Few distinct memories: a small seen-list suffices. */
    int seen[8];
    size_t n_seen = 0;
    double total = 0.0;
    double b = bytes_of(v);
    for (size_t k = pl->cons_start[v->index]; k <= pl->cons_start[v->index + 1] && n_seen < 8;
         k++) {
        int d;
        if (k == pl->cons_start[v->index + 1]) {
            if (!v->is_graph_output || bytes_only) break;
            d = 0;
        } else {
            d = pl->domain[pl->a[pl->cons[k]]];
        }
        if (d == src) continue;
        bool dup = false;
        for (size_t s = 0; s < n_seen; s++) dup |= seen[s] == d;
        if (dup) continue;
        seen[n_seen++] = d;
        total += bytes_only ? b : copy_time(b);
    }
    return total;
}

/* Change of the objective if the nodes in `set` all went to provider p. */
static double move_delta(placer *pl, const size_t *set, size_t n, size_t p, bool copies_only) {
    double before = 0.0, after = 0.0;
    if (!copies_only)
        for (size_t i = 0; i < n; i++) {
            before += pl->cost[set[i] * pl->n_provs + pl->a[set[i]]];
            after += pl->cost[set[i] * pl->n_provs + p];
        }
    size_t *old = pl->saved;
    /* Touched values: inputs and outputs of the set, each counted once. */
    for (int pass = 0; pass < 2; pass++) {
        pl->tick++;
        if (pass == 1)
            for (size_t i = 0; i < n; i++) {
                old[i] = pl->a[set[i]];
                pl->a[set[i]] = p;
            }
        double sum = 0.0;
        for (size_t i = 0; i < n; i++) {
            const ir_node *node = pl->g->nodes[set[i]];
            for (int side = 0; side < 2; side++) {
                size_t m = side ? node->n_outputs : node->n_inputs;
                for (size_t k = 0; k < m; k++) {
                    const ir_value *v = side ? node->outputs[k] : node->inputs[k];
                    if (!v || v->index >= pl->g->n_values || pl->g->values[v->index] != v) continue;
                    if (pl->stamp[v->index] == pl->tick) continue;
                    pl->stamp[v->index] = pl->tick;
                    sum += value_copies(pl, v, copies_only);
                }
            }
        }
        if (pass == 0) before += sum;
        else after += sum;
    }
    for (size_t i = 0; i < n; i++) pl->a[set[i]] = old[i];
    return after - before;
}

static bool all_can(const placer *pl, const size_t *set, size_t n, size_t p) {
    for (size_t i = 0; i < n; i++)
        if (!pl->can[set[i] * pl->n_provs + p]) return false;
    return true;
}

static bool all_on(const placer *pl, const size_t *set, size_t n, size_t p) {
    for (size_t i = 0; i < n; i++)
        if (pl->a[set[i]] != p) return false;
    return true;
}

static tsr_status *survey(placer *pl, provider_inst *const *provs, const bool *allowed,
                          partition *out) {
    ir_graph *g = pl->g;
    ir_node **pending = malloc(sizeof *pending * (g->n_nodes + 1));
    if (!pending) return TSR_NO_MEMORY();
    tsr_status *s = NULL;
    for (size_t p = 0; p < pl->n_provs && !s; p++) {
        size_t np = 0;
        for (size_t i = 0; i < g->n_nodes; i++)
            if (allowed[i * pl->n_provs + p]) pending[np++] = g->nodes[i];
        if (!np) continue;
        struct tsr_graph offer = {g, np, pending, g->n_inputs, g->inputs, g->n_outputs, g->outputs, 0};
        const provider_inst *pv = provs[p];
        struct tsr_claim_sink sink = {&offer, NULL, 0, NULL, 0, NULL, pv->n_devices};
        s = pv->plugin->vt->claim(pv->state, (const tsr_graph *)&offer, &sink);
        if (s) s = tsr_error_wrap(s, "provider '%s' failed while claiming", pv->name);
        for (size_t c = 0; c < sink.n_claims && !s; c++) {
            const claim_entry *ce = &sink.claims[c];
            /* A piece's estimate is split over its nodes in proportion to
             * the default estimates (set before the survey), so the matrix
             * product in a fused piece carries its weight, not the Add. */
            bool known = ce->cost >= 0 && isfinite(ce->cost);
            double weight = 0.0;
            for (size_t k = 0; k < ce->n; k++) weight += pl->cost[ce->nodes[k]->index * pl->n_provs + p];
            for (size_t k = 0; k < ce->n; k++) {
                size_t i = ce->nodes[k]->index;
                pl->can[i * pl->n_provs + p] = true;
                if (known && weight > 0)
                    pl->cost[i * pl->n_provs + p] *= ce->cost / weight;
            }
            if (ce->n < 2) continue;
            group *ng = realloc(pl->groups, sizeof *ng * (pl->n_groups + 1));
            size_t *nodes = malloc(sizeof *nodes * ce->n);
            if (!ng || !nodes) {
                if (ng) pl->groups = ng;
                free(nodes);
                s = TSR_NO_MEMORY();
                break;
            }
            pl->groups = ng;
            for (size_t k = 0; k < ce->n; k++) nodes[k] = ce->nodes[k]->index;
            ng[pl->n_groups++] = (group){p, ce->n, nodes};
        }
        /* The reasons are kept now: a node chosen for another provider is
         * not offered to this one again. */
        if (!s) s = partition_keep_declines(out, &sink, p);
        claim_sink_clear(&sink);
    }
    free(pending);
    return s;
}

static tsr_status *build_consumers(placer *pl) {
    const ir_graph *g = pl->g;
    size_t nv = g->n_values;
    pl->cons_start = calloc(nv + 2, sizeof(size_t));
    if (!pl->cons_start) return TSR_NO_MEMORY();
    size_t total = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t k = 0; k < g->nodes[i]->n_inputs; k++) {
            const ir_value *v = g->nodes[i]->inputs[k];
            if (v && v->index < nv && g->values[v->index] == v) {
                pl->cons_start[v->index + 1]++;
                total++;
            }
        }
    for (size_t v = 0; v < nv; v++) pl->cons_start[v + 1] += pl->cons_start[v];
    pl->cons = malloc(sizeof(size_t) * (total + 1));
    size_t *fill = malloc(sizeof(size_t) * (nv + 1));
    if (!pl->cons || !fill) {
        free(fill);
        return TSR_NO_MEMORY();
    }
    memcpy(fill, pl->cons_start, sizeof(size_t) * (nv + 1));
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t k = 0; k < g->nodes[i]->n_inputs; k++) {
            const ir_value *v = g->nodes[i]->inputs[k];
            if (v && v->index < nv && g->values[v->index] == v) pl->cons[fill[v->index]++] = i;
        }
    free(fill);
    return NULL;
}

/* Connected runs of nodes on the same provider (only cheap ones when
 * `cheap_only`): moved together, so a Shape -> Gather -> Unsqueeze chain
 * between device pieces can follow them, and a whole chain can leave a
 * device when its copies cost more than it saves. */
static void same_provider_runs(placer *pl, bool cheap_only, size_t *order, size_t *starts,
                               size_t *n_runs) {
    size_t n = pl->n_nodes;
    size_t *comp = pl->comp;
    for (size_t i = 0; i < n; i++) comp[i] = SIZE_MAX;
    size_t runs = 0, filled = 0;
    for (size_t root = 0; root < n; root++) {
        if (comp[root] != SIZE_MAX || (cheap_only && !cost_node_is_cheap(pl->g->nodes[root])))
            continue;
        starts[runs] = filled;
        comp[root] = runs;
        order[filled++] = root;
        for (size_t q = starts[runs]; q < filled; q++) {
            const ir_node *node = pl->g->nodes[order[q]];
            /* neighbours: producers of inputs, consumers of outputs */
            for (size_t k = 0; k < node->n_inputs; k++) {
                const ir_value *v = node->inputs[k];
                if (!v || !v->producer || v->producer->graph != pl->g) continue;
                size_t j = v->producer->index;
                if (comp[j] == SIZE_MAX && pl->a[j] == pl->a[root] &&
                    (!cheap_only || cost_node_is_cheap(pl->g->nodes[j]))) {
                    comp[j] = runs;
                    order[filled++] = j;
                }
            }
            for (size_t k = 0; k < node->n_outputs; k++) {
                const ir_value *v = node->outputs[k];
                if (!v || v->index >= pl->g->n_values || pl->g->values[v->index] != v) continue;
                for (size_t c = pl->cons_start[v->index]; c < pl->cons_start[v->index + 1]; c++) {
                    size_t j = pl->cons[c];
                    if (comp[j] == SIZE_MAX && pl->a[j] == pl->a[root] &&
                        (!cheap_only || cost_node_is_cheap(pl->g->nodes[j]))) {
                        comp[j] = runs;
                        order[filled++] = j;
                    }
                }
            }
        }
        runs++;
    }
    starts[runs] = filled;
    *n_runs = runs;
}

/* Moves `set` to the provider (in list order) that lowers the objective
 * most; true when it moved. */
static bool try_move(placer *pl, const size_t *set, size_t n, bool copies_only) {
    size_t best = SIZE_MAX;
    double best_d = copies_only ? -0.5 : -1e-9; /* bytes, or seconds */
    for (size_t p = 0; p < pl->n_provs; p++) {
        if (all_on(pl, set, n, p) || !all_can(pl, set, n, p)) continue;
        double d = move_delta(pl, set, n, p, copies_only);
        if (d < best_d) {
            best_d = d;
            best = p;
        }
    }
    if (best == SIZE_MAX) return false;
    for (size_t i = 0; i < n; i++) pl->a[set[i]] = best;
    return true;
}

static void improve(placer *pl) {
    bool cost = pl->pol->kind == PLACE_COST;
    size_t n = pl->n_nodes;
    size_t *order = pl->order, *starts = pl->starts;
    for (int sweep = 0; sweep < MAX_SWEEPS; sweep++) {
        bool moved = false;
        if (cost) {
            for (size_t gi = 0; gi < pl->n_groups; gi++) {
                const group *gr = &pl->groups[gi];
                if (all_on(pl, gr->nodes, gr->n, gr->prov) ||
                    !all_can(pl, gr->nodes, gr->n, gr->prov))
                    continue;
                if (move_delta(pl, gr->nodes, gr->n, gr->prov, false) < -1e-9) {
                    for (size_t i = 0; i < gr->n; i++) pl->a[gr->nodes[i]] = gr->prov;
                    moved = true;
                }
            }
            for (size_t i = 0; i < n; i++) moved |= try_move(pl, &i, 1, false);
        }
        size_t runs = 0;
        same_provider_runs(pl, !cost, order, starts, &runs);
        for (size_t r = 0; r < runs; r++)
            moved |= try_move(pl, order + starts[r], starts[r + 1] - starts[r], !cost);
        if (!moved) break;
    }
}

bool placement_needed(provider_inst *const *provs, size_t n_provs, const placement_policy *pol) {
    if (pol->kind == PLACE_COST || pol->fallback < n_provs) return true;
    if (pol->kind == PLACE_FIRST) return false;
    for (size_t p = 0; p < n_provs; p++)
        if (provs[p]->memory_kind == TSR_MEMORY_DEVICE) return true;
    return false;
}

static void placer_free(placer *pl) {
    for (size_t i = 0; i < pl->n_groups; i++) free(pl->groups[i].nodes);
    free(pl->groups);
    free(pl->domain);
    free(pl->can);
    free(pl->cost);
    free(pl->cons_start);
    free(pl->cons);
    free(pl->a);
    free(pl->stamp);
    free(pl->saved);
    free(pl->comp);
    free(pl->order);
    free(pl->starts);
}

tsr_status *placement_choose(ir_graph *g, provider_inst *const *provs, size_t n_provs,
                             const bool *allowed, const placement_policy *pol, size_t *choice,
                             size_t *n_moved, partition *out) {
    size_t n = g->n_nodes;
    *n_moved = 0;
    for (size_t i = 0; i < n; i++) choice[i] = SIZE_MAX;
    if (!n || !n_provs) return NULL;
    placer pl = {.g = g, .n_nodes = n, .n_provs = n_provs, .pol = pol};
    pl.domain = malloc(sizeof(int) * n_provs);
    pl.can = calloc(n * n_provs, 1);
    pl.cost = malloc(sizeof(double) * n * n_provs);
    pl.a = malloc(sizeof(size_t) * n);
    pl.stamp = calloc(g->n_values + 1, sizeof(unsigned));
    pl.saved = malloc(sizeof(size_t) * n);
    pl.comp = malloc(sizeof(size_t) * n);
    pl.order = malloc(sizeof(size_t) * n);
    pl.starts = malloc(sizeof(size_t) * (n + 1));
    size_t *first = malloc(sizeof(size_t) * n);
    tsr_status *s = NULL;
    if (!pl.domain || !pl.can || !pl.cost || !pl.a || !pl.stamp || !pl.saved || !pl.comp ||
        !pl.order || !pl.starts || !first) {
        s = TSR_NO_MEMORY();
        goto out;
    }
    for (size_t p = 0; p < n_provs; p++)
        pl.domain[p] = provs[p]->memory_kind == TSR_MEMORY_DEVICE ? (int)p + 1 : 0;
    for (size_t i = 0; i < n; i++) {
        double f = cost_node_flops(g->nodes[i]);
        double dflt = DEFAULT_NODE_S + (f > 0 ? f / DEFAULT_FLOPS_PER_S : 0.0);
        for (size_t p = 0; p < n_provs; p++) pl.cost[i * n_provs + p] = dflt;
    }
    if ((s = survey(&pl, provs, allowed, out)) || (s = build_consumers(&pl))) goto out;
    /* The fallback runs only what nobody else can. */
    for (size_t i = 0; i < n && pol->fallback < n_provs; i++) {
        bool other = false;
        for (size_t p = 0; p < n_provs; p++)
            other |= p != pol->fallback && pl.can[i * n_provs + p];
        if (other) pl.can[i * n_provs + pol->fallback] = false;
    }
    /* Start from list order (under the cost policy: the cheapest provider,
     * the earlier one on a tie). */
    for (size_t i = 0; i < n; i++) {
        first[i] = SIZE_MAX;
        for (size_t p = 0; p < n_provs && first[i] == SIZE_MAX; p++)
            if (pl.can[i * n_provs + p]) first[i] = p;
        pl.a[i] = first[i];
        if (pol->kind == PLACE_COST)
            for (size_t p = 0; p < n_provs; p++)
                if (pl.can[i * n_provs + p] &&
                    pl.cost[i * n_provs + p] < pl.cost[i * n_provs + pl.a[i]] - 1e-12)
                    pl.a[i] = p;
    }
    /* A node nobody can run (a function op still to be expanded, or an
     * error) leaves every choice to list order: the claims that follow
     * expand it or report it, and the next round places the bodies. */
    bool unplaced = false;
    for (size_t i = 0; i < n; i++) unplaced |= pl.a[i] == SIZE_MAX;
    if (unplaced) goto out;
    improve(&pl);
    for (size_t i = 0; i < n; i++) {
        choice[i] = pl.a[i];
        if (pl.a[i] != first[i]) (*n_moved)++;
    }
out:
    free(first);
    placer_free(&pl);
    return s;
}
