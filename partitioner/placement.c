/*
 * Placement by estimated time. Every provider is surveyed for what it would
 * claim of the whole graph (with its cost estimate); then a local search
 * moves single nodes and whole claimed sets between providers while the
 * total estimate falls. The total is compute time plus one copy per value
 * and per memory it must reach plus one piece boundary per value and per
 * other piece that reads it (pieces as the survey's claims would make
 * them), so a node is moved off the list order's provider only when that
 * pays for the copies and boundaries it causes or saves. The search runs
 * from two starts (the cheapest provider per node, and list order) and
 * keeps the lower total, list order's unless the other is clearly lower:
 * the result is never estimated slower than the list.
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
/* A value read by another piece than the one that made it, in the same
 * memory or not: one more piece to dispatch, its output allocated and
 * handed over, and the producer no longer fuses the reader (a scale Mul
 * folded into a matrix product's output stage). A chain of tiny nodes
 * alternating oneDNN and reference pieces measured 0.4 us more per
 * boundary than one oneDNN piece, [64,768] ones 3.4 us. Without this, two
 * host providers meet for free, and a scalar Mul that costs a microsecond
 * less on the reference provider splits a oneDNN piece in two. */
#define BOUNDARY_S 2e-6
/* Providers' estimates are rough figures per node (oneDNN's 2 us a node
 * against reference's 1 us, where both take well under a microsecond on a
 * tiny tensor): under the cost policy a move is made only when the total
 * falls by more than this, so no node leaves the list's provider for a
 * difference below what the estimates can tell apart. */
#define MIN_GAIN_S 1e-6
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
    int *domain;   /* per provider: 0 host, p + 1 for a device provider's own memory */
    bool *can;     /* n_nodes x n_provs: the survey's claims */
    double *cost;  /* n_nodes x n_provs: seconds, from the claim or the default */
    group *groups; /* the survey's claims of more than one node */
    size_t n_groups;
    size_t *claim; /* n_nodes x n_provs: which survey claim of the provider
                     * holds the node (SIZE_MAX: none), i.e. its piece */
    /* consumers of each value: CSR over value indices */
    size_t *cons_start, *cons;
    size_t *a;       /* current provider per node */
    unsigned *stamp; /* per value: last evaluation that counted it */
    unsigned tick;
    /* scratch, n_nodes (+1) each: providers before a trial move; the run of
     * each node, the nodes run by run and where each run starts */
    size_t *saved, *comp, *order, *starts;
} placer;

/* Under the cost policy symbolic dims count as cost.c's guess, as they do
 * in the providers' estimates; the order policy keeps its flat figure. */
static double bytes_of(const placer *pl, const ir_value *v) {
    double b = cost_value_bytes(v, pl->pol->kind == PLACE_COST);
    return b < 0 ? UNKNOWN_VALUE_BYTES : b;
}

static double copy_time(double bytes) { return COPY_LATENCY_S + bytes / COPY_BYTES_PER_S; }

/* Adds (x, y) to a small set of pairs; false when it was there (or the set
 * is full, so a value read in more than 8 memories or pieces counts 8). */
static bool add_new(size_t (*set)[2], size_t *n, size_t x, size_t y) {
    for (size_t i = 0; i < *n; i++)
        if (set[i][0] == x && set[i][1] == y) return false;
    if (*n == 8) return false;
    set[*n][0] = x;
    set[*n][1] = y;
    (*n)++;
    return true;
}

/* The piece node i would be in on its current provider. */
static size_t piece_of(const placer *pl, size_t i) { return pl->claim[i * pl->n_provs + pl->a[i]]; }

/* The memory a value lives in when its consumers need it. */
static int source_domain(const placer *pl, const ir_value *v) {
    if (v->producer && v->producer->graph == pl->g) return pl->domain[pl->a[v->producer->index]];
    return 0; /* graph input, initializer, outer value: host */
}

/* What value v costs under the current assignment: one copy per memory
 * other than its own that a consumer (or the graph's output) needs, and
 * (cost policy) one boundary per piece other than its producer's that
 * reads it. Constants are copied once per session and cost nothing per
 * run. */
static double value_copies(const placer *pl, const ir_value *v, bool bytes_only) {
    if (!v->producer && v->constant) return 0.0;
    bool inside = v->producer && v->producer->graph == pl->g;
    /* Counting bytes is the order policy's "stay with your neighbours": only
     * copies between nodes count, not the graph's own inputs and outputs,
     * so a lone node is never moved off the provider the list gave it. */
    if (bytes_only && !inside) return 0.0;
    int src = source_domain(pl, v);
    /* A graph input is read by every piece that needs it whatever the
     * placement: only values made here have boundaries to weigh. */
    size_t maker = inside ? pl->a[v->producer->index] : SIZE_MAX;
    size_t maker_piece = inside ? piece_of(pl, v->producer->index) : SIZE_MAX;
    /* Few distinct memories and pieces: small seen-lists suffice. */
    size_t seen[8][2], seen_p[8][2];
    size_t n_seen = 0, n_seen_p = 0;
    double total = 0.0;
    double b = bytes_of(pl, v);
    for (size_t k = pl->cons_start[v->index]; k <= pl->cons_start[v->index + 1]; k++) {
        int d;
        if (k == pl->cons_start[v->index + 1]) {
            if (!v->is_graph_output || bytes_only) break;
            d = 0;
        } else {
            size_t reader = pl->a[pl->cons[k]], piece = piece_of(pl, pl->cons[k]);
            d = pl->domain[reader];
            if (!bytes_only && maker != SIZE_MAX && (reader != maker || piece != maker_piece) &&
                add_new(seen_p, &n_seen_p, reader, piece))
                total += BOUNDARY_S;
        }
        if (d == src || !add_new(seen, &n_seen, (size_t)d, 0)) continue;
        total += bytes_only ? b : copy_time(b);
    }
    return total;
}

/* The objective of the current assignment: compute plus copies and
 * boundaries, each value counted once. */
static double total_estimate(const placer *pl) {
    double t = 0.0;
    for (size_t i = 0; i < pl->n_nodes; i++) t += pl->cost[i * pl->n_provs + pl->a[i]];
    for (size_t v = 0; v < pl->g->n_values; v++)
        if (pl->g->values[v] && pl->g->values[v]->index == v) t += value_copies(pl, pl->g->values[v], false);
    return t;
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

static tsr_status *survey(placer *pl, provider_inst *const *provs, const bool *allowed, partition *out) {
    ir_graph *g = pl->g;
    ir_node **pending = malloc(sizeof *pending * (g->n_nodes + 1));
    if (!pending) return TSR_NO_MEMORY();
    tsr_status *s = NULL;
    for (size_t p = 0; p < pl->n_provs && !s; p++) {
        size_t np = 0;
        for (size_t i = 0; i < g->n_nodes; i++)
            if (allowed[i * pl->n_provs + p]) pending[np++] = g->nodes[i];
        if (!np) continue;
        struct tsr_graph offer = graph_view_offer(g, pending, np);
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
                pl->claim[i * pl->n_provs + p] = c;
                if (known && weight > 0) pl->cost[i * pl->n_provs + p] *= ce->cost / weight;
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
static void same_provider_runs(placer *pl, bool cheap_only, size_t *order, size_t *starts, size_t *n_runs) {
    size_t n = pl->n_nodes;
    size_t *comp = pl->comp;
    for (size_t i = 0; i < n; i++) comp[i] = SIZE_MAX;
    size_t runs = 0, filled = 0;
    for (size_t root = 0; root < n; root++) {
        if (comp[root] != SIZE_MAX || (cheap_only && !cost_node_is_cheap(pl->g->nodes[root]))) continue;
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
    double best_d = copies_only ? -0.5 : -MIN_GAIN_S; /* bytes, or seconds */
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
                if (all_on(pl, gr->nodes, gr->n, gr->prov) || !all_can(pl, gr->nodes, gr->n, gr->prov)) continue;
                if (move_delta(pl, gr->nodes, gr->n, gr->prov, false) < -MIN_GAIN_S) {
                    for (size_t i = 0; i < gr->n; i++) pl->a[gr->nodes[i]] = gr->prov;
                    moved = true;
                }
            }
            for (size_t i = 0; i < n; i++) moved |= try_move(pl, &i, 1, false);
        }
        size_t runs = 0;
        same_provider_runs(pl, !cost, order, starts, &runs);
        for (size_t r = 0; r < runs; r++) moved |= try_move(pl, order + starts[r], starts[r + 1] - starts[r], !cost);
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
    free(pl->claim);
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

tsr_status *placement_choose(ir_graph *g, provider_inst *const *provs, size_t n_provs, const bool *allowed,
                             const placement_policy *pol, size_t *choice, size_t *n_moved, partition *out) {
    size_t n = g->n_nodes;
    *n_moved = 0;
    for (size_t i = 0; i < n; i++) choice[i] = SIZE_MAX;
    if (!n || !n_provs) return NULL;
    placer pl = {.g = g, .n_nodes = n, .n_provs = n_provs, .pol = pol};
    pl.domain = malloc(sizeof(int) * n_provs);
    pl.can = calloc(n * n_provs, 1);
    pl.claim = malloc(sizeof(size_t) * n * n_provs);
    pl.cost = malloc(sizeof(double) * n * n_provs);
    pl.a = malloc(sizeof(size_t) * n);
    pl.stamp = calloc(g->n_values + 1, sizeof(unsigned));
    pl.saved = malloc(sizeof(size_t) * n);
    pl.comp = malloc(sizeof(size_t) * n);
    pl.order = malloc(sizeof(size_t) * n);
    pl.starts = malloc(sizeof(size_t) * (n + 1));
    size_t *first = malloc(sizeof(size_t) * n);
    size_t *greedy = malloc(sizeof(size_t) * n);
    tsr_status *s = NULL;
    if (!pl.domain || !pl.can || !pl.claim || !pl.cost || !pl.a || !pl.stamp || !pl.saved || !pl.comp || !pl.order ||
        !pl.starts || !first || !greedy) {
        s = TSR_NO_MEMORY();
        goto out;
    }
    for (size_t p = 0; p < n_provs; p++) pl.domain[p] = provs[p]->memory_kind == TSR_MEMORY_DEVICE ? (int)p + 1 : 0;
    for (size_t i = 0; i < n; i++) {
        double f = cost_node_flops(g->nodes[i]);
        double dflt = DEFAULT_NODE_S + (f > 0 ? f / DEFAULT_FLOPS_PER_S : 0.0);
        for (size_t p = 0; p < n_provs; p++) {
            pl.cost[i * n_provs + p] = dflt;
            pl.claim[i * n_provs + p] = SIZE_MAX;
        }
    }
    if ((s = survey(&pl, provs, allowed, out)) || (s = build_consumers(&pl))) goto out;
    /* The fallback runs only what nobody else can. */
    for (size_t i = 0; i < n && pol->fallback < n_provs; i++) {
        bool other = false;
        for (size_t p = 0; p < n_provs; p++) other |= p != pol->fallback && pl.can[i * n_provs + p];
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
                if (pl.can[i * n_provs + p] && pl.cost[i * n_provs + p] < pl.cost[i * n_provs + pl.a[i]] - 1e-12)
                    pl.a[i] = p;
    }
    /* A node nobody can run (a function op still to be expanded, or an
     * error) leaves every choice to list order: the claims that follow
     * expand it or report it, and the next round places the bodies. */
    bool unplaced = false;
    for (size_t i = 0; i < n; i++) unplaced |= pl.a[i] == SIZE_MAX;
    if (unplaced) goto out;
    improve(&pl);
    if (pol->kind == PLACE_COST) {
        /* From the cheapest provider per node the search can settle in a
         * local minimum that list order, improved, beats (a chain of
         * nodes that are each a little cheaper elsewhere but cost
         * boundaries together): run it from list order too and keep the lower total,
         * list order's unless the other is lower by more than a move's
         * minimum gain. */
        double from_greedy = total_estimate(&pl);
        memcpy(greedy, pl.a, sizeof(size_t) * n);
        memcpy(pl.a, first, sizeof(size_t) * n);
        improve(&pl);
        if (from_greedy < total_estimate(&pl) - MIN_GAIN_S) memcpy(pl.a, greedy, sizeof(size_t) * n);
    }
    for (size_t i = 0; i < n; i++) {
        choice[i] = pl.a[i];
        if (pl.a[i] != first[i]) (*n_moved)++;
    }
out:
    free(first);
    free(greedy);
    placer_free(&pl);
    return s;
}
