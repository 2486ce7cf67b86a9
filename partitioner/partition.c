/* The partitioner: claims in provider order, convexity so pieces never form
 * cycles, and a report of who declined what. */
#include "partition.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_log.h"
#include "index_heap.h"
#include "partition_expand.h"
#include "placement.h"
#include "status.h"

/* allowed[i * n_provs + p]: node i may go to provider p. */
static bool *allowed_matrix(const ir_graph *g, size_t n_provs, const exclusion *e, size_t n) {
    bool *m = malloc(g->n_nodes * n_provs + 1);
    if (!m) return NULL;
    memset(m, 1, g->n_nodes * n_provs + 1);
    for (size_t i = 0; i < n; i++) {
        const ir_node *node = e[i].node;
        if (e[i].prov_index < n_provs && node->index < g->n_nodes && g->nodes[node->index] == node)
            m[node->index * n_provs + e[i].prov_index] = false;
    }
    return m;
}

placement_policy placement_default(void) { return (placement_policy){PLACE_ORDER, SIZE_MAX}; }

/* The span of node positions a set occupies: every path that leaves the
 * set and comes back runs between its first and last node (nodes are in
 * topological order), so the sweeps below look only there — a claim costs
 * its span, not the graph (6,250 16-node claims of a 100,000-node chain
 * swept the whole graph each). */
static void set_span(ir_node *const *nodes, size_t n, size_t *lo, size_t *hi) {
    *lo = SIZE_MAX;
    *hi = 0;
    for (size_t k = 0; k < n; k++) {
        if (nodes[k]->index < *lo) *lo = nodes[k]->index;
        if (nodes[k]->index > *hi) *hi = nodes[k]->index;
    }
}

/* Whether a path leaves the set and comes back: then merging it into one
 * piece would make the piece graph cyclic. `in_set` is indexed by node
 * index; `reached` is zero scratch of the graph's size, left zero. */
static bool set_is_convex(const ir_graph *g, const bool *in_set, size_t lo, size_t hi, bool *reached) {
    bool convex = true;
    /* Nodes are in topological order, so one forward sweep propagates
     * "reachable from the set through an outside node". */
    for (size_t i = lo; i <= hi && convex; i++) {
        const ir_node *n = g->nodes[i];
        bool from_outside_path = false, from_set = false;
        for (size_t k = 0; k < n->n_inputs; k++) {
            const ir_value *v = n->inputs[k];
            if (!v || !v->producer || v->producer->graph != g) continue;
            size_t p = v->producer->index;
            if (in_set[p]) from_set = true;
            else if (reached[p]) from_outside_path = true;
        }
        if (in_set[i]) {
            if (from_outside_path) convex = false;
        } else {
            reached[i] = from_set || from_outside_path;
        }
    }
    memset(reached + lo, 0, hi - lo + 1);
    return convex;
}

static tsr_status *add_piece(partition *p, graph_readers *readers, ir_node *const *nodes, size_t n, size_t prov,
                             double cost) {
    piece *np = realloc(p->pieces, sizeof *np * (p->n_pieces + 1));
    if (!np) return TSR_NO_MEMORY();
    p->pieces = np;
    piece *pc = &np[p->n_pieces];
    memset(pc, 0, sizeof *pc);
    TSR_TRY(graph_view_nodes_counted(readers, nodes, n, &pc->view));
    pc->view->compiled_piece = true;
    pc->prov_index = prov;
    pc->cost = cost;
    p->n_pieces++;
    return NULL;
}

/* Splits a claimed set that is not convex at the outside node a path
 * re-enters it through: the set's nodes downstream of that node (R) become
 * a piece of their own — split again if needed — and the rest one piece.
 * The rest is convex: a path leaving it and coming back would have made
 * its re-entry node part of R. in_set marks the set on entry and is
 * cleared for the nodes placed. */
static tsr_status *add_convex_pieces(partition *out, ir_graph *g, graph_readers *readers, ir_node *const *nodes,
                                     size_t n, bool *in_set, bool *reached, bool *in_r, size_t prov, double cost,
                                     const char *prov_name) {
    if (n == 1) {
        in_set[nodes[0]->index] = false;
        return add_piece(out, readers, nodes, 1, prov, cost);
    }
    ir_node **cur = malloc(sizeof *cur * (n + 1));
    ir_node **rest = malloc(sizeof *rest * (n + 1));
    tsr_status *s = NULL;
    if (!cur || !rest) {
        s = TSR_NO_MEMORY();
        goto out;
    }
    memcpy(cur, nodes, sizeof *cur * n);
    size_t m = n;
    while (m && !s) {
        size_t lo, hi;
        set_span(cur, m, &lo, &hi);
        if (m == 1 || set_is_convex(g, in_set, lo, hi, reached)) {
            s = add_piece(out, readers, cur, m, prov, m == n ? cost : -1.0);
            break;
        }
        const ir_node *offender = NULL;
        for (size_t i = lo; i <= hi; i++) {
            const ir_node *nd = g->nodes[i];
            bool from_set = false, back = false;
            const ir_node *via = NULL;
            for (size_t k = 0; k < nd->n_inputs; k++) {
                const ir_value *v = nd->inputs[k];
                if (!v || !v->producer || v->producer->graph != g) continue;
                size_t p = v->producer->index;
                if (in_set[p]) {
                    from_set = true;
                    if (in_r[p]) back = true;
                } else if (reached[p]) {
                    back = true;
                    via = v->producer;
                }
            }
            if (in_set[i]) {
                in_r[i] = back;
                if (back && via && !offender) offender = via;
            } else {
                reached[i] = from_set || back;
            }
        }
        size_t n_rest = 0, n_r = 0;
        for (size_t k = 0; k < m; k++) {
            if (in_r[cur[k]->index]) cur[n_r++] = cur[k];
            else rest[n_rest++] = cur[k];
        }
        memset(reached + lo, 0, hi - lo + 1);
        memset(in_r + lo, 0, hi - lo + 1);
        char msg[512];
        snprintf(msg, sizeof msg,
                 "claim of %zu nodes starting at '%s' would form a cycle through '%s' (%s), "
                 "which it does not hold; split there into %zu and %zu nodes",
                 m, (n_rest ? rest[0] : cur[0])->name, offender ? offender->name : "?",
                 offender ? offender->op_type : "?", n_rest, n_r);
        host_log(TSR_LOG_WARNING, prov_name, msg);
        for (size_t k = 0; k < n_rest; k++) in_set[rest[k]->index] = false;
        if (!n_rest || !n_r) { /* cannot happen (see above); stay safe */
            for (size_t k = 0; k < n_rest && !s; k++) s = add_piece(out, readers, &rest[k], 1, prov, -1.0);
            for (size_t k = 0; k < n_r && !s; k++) s = add_piece(out, readers, &cur[k], 1, prov, -1.0);
            break;
        }
        s = add_piece(out, readers, rest, n_rest, prov, -1.0);
        m = n_r;
    }
out:
    for (size_t k = 0; k < n; k++) in_set[nodes[k]->index] = false;
    free(cur);
    free(rest);
    return s;
}

/* Orders pieces so each runs after the pieces it reads from: always the
 * first piece (in claim order) whose producers have all been taken, found
 * with a heap over the ready ones, O(edges log pieces). */
static tsr_status *order_pieces(partition *p, const ir_graph *g) {
    size_t n = p->n_pieces;
    size_t *owner = malloc(sizeof(size_t) * (g->n_nodes + 1));
    size_t *indeg = calloc(n + 1, sizeof(size_t));
    size_t *first = malloc(sizeof(size_t) * (n + 1)); /* dependents of each piece: CSR */
    size_t *heap = malloc(sizeof(size_t) * (n + 1));
    piece *sorted = malloc(sizeof(piece) * (n + 1));
    size_t *dep = NULL, n_edges = 0;
    tsr_status *s = NULL;
    if (!owner || !indeg || !first || !heap || !sorted) {
        s = TSR_NO_MEMORY();
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < p->pieces[i].view->n_nodes; k++) owner[p->pieces[i].view->nodes[k]->index] = i;
    /* edges producer piece -> reader piece, once per input value */
    for (size_t i = 0; i < n; i++) n_edges += p->pieces[i].view->n_inputs;
    if (!(dep = malloc(sizeof(size_t) * (n_edges + 1)))) {
        s = TSR_NO_MEMORY();
        goto out;
    }
    memset(first, 0, sizeof(size_t) * (n + 1));
    for (size_t i = 0; i < n; i++) {
        const struct tsr_graph *v = p->pieces[i].view;
        for (size_t k = 0; k < v->n_inputs; k++) {
            const ir_value *iv = v->inputs[k];
            if (iv->producer && iv->producer->graph == g) first[owner[iv->producer->index]]++;
        }
    }
    size_t acc = 0;
    for (size_t i = 0; i <= n; i++) {
        size_t c = i < n ? first[i] : 0;
        first[i] = acc;
        acc += c;
    }
    size_t *fill = indeg; /* reused as fill cursors, then cleared */
    for (size_t i = 0; i < n; i++) {
        const struct tsr_graph *v = p->pieces[i].view;
        for (size_t k = 0; k < v->n_inputs; k++) {
            const ir_value *iv = v->inputs[k];
            if (!iv->producer || iv->producer->graph != g) continue;
            size_t from = owner[iv->producer->index];
            dep[first[from] + fill[from]++] = i;
        }
    }
    memset(indeg, 0, sizeof(size_t) * (n + 1));
    for (size_t e = 0; e < acc; e++) indeg[dep[e]]++;
    size_t n_heap = 0, taken = 0;
    for (size_t i = 0; i < n; i++)
        if (!indeg[i]) index_heap_push(heap, &n_heap, i);
    while (n_heap) {
        size_t pick = index_heap_pop(heap, &n_heap);
        sorted[taken++] = p->pieces[pick];
        for (size_t e = first[pick]; e < first[pick + 1]; e++)
            if (--indeg[dep[e]] == 0) index_heap_push(heap, &n_heap, dep[e]);
    }
    if (taken < n) {
        s = tsr_error(TSR_ERR_RUNTIME, "pieces form a cycle");
        goto out;
    }
    if (n) memcpy(p->pieces, sorted, sizeof(piece) * n); /* no pieces: a graph of folded Constants */
out:
    free(owner);
    free(indeg);
    free(first);
    free(heap);
    free(dep);
    free(sorted);
    return s;
}

static tsr_status *no_provider_error(const partition *p, const ir_graph *g, const bool *assigned,
                                     provider_inst *const *provs) {
    size_t cap = 4096, len = 0;
    char *msg = malloc(cap);
    if (!msg) return TSR_NO_MEMORY();
    msg[0] = 0;
    size_t shown = 0;
    for (size_t i = 0; i < g->n_nodes && shown < 8; i++) {
        if (assigned[i]) continue;
        const ir_node *n = g->nodes[i];
        char line[1024];
        int w = snprintf(line, sizeof line, "%snode '%s' (%s%s%s opset %lld):", shown ? "; " : "", n->name, n->domain,
                         n->domain[0] ? "." : "", n->op_type, (long long)n->opset);
        bool first = true;
        for (size_t d = 0; d < p->n_declines && w < (int)sizeof line - 2; d++) {
            if (p->declines[d].node != n) continue;
            w += snprintf(line + w, sizeof line - (size_t)w, "%s %s: %s", first ? "" : ",",
                          provs[p->declines[d].prov_index]->name, p->declines[d].text);
            first = false;
        }
        if (w >= (int)sizeof line) w = (int)sizeof line - 1;
        if (len + (size_t)w + 1 < cap) {
            memcpy(msg + len, line, (size_t)w + 1);
            len += (size_t)w;
        }
        shown++;
    }
    tsr_status *s = tsr_error(TSR_ERR_NOT_SUPPORTED, "no provider can run %s", msg);
    free(msg);
    return s;
}

/* One pass of claims over g: every provider in order sees the nodes still
 * unassigned. Pieces and declines go to `out`; assigned[i] tells whether
 * node i was claimed. */
static tsr_status *claim_round(ir_graph *g, provider_inst *const *provs, size_t n_provs, const bool *allowed,
                               partition *out, bool *assigned) {
    bool *in_set = calloc(g->n_nodes + 1, 1);
    bool *reached = calloc(g->n_nodes + 1, 1), *in_r = calloc(g->n_nodes + 1, 1); /* zero between claims */
    ir_node **pending = malloc(sizeof(ir_node *) * (g->n_nodes + 1));
    graph_readers *readers = NULL;
    tsr_status *s = NULL;
    if (!in_set || !reached || !in_r || !pending) {
        s = TSR_NO_MEMORY();
        goto done;
    }
    if ((s = graph_readers_new(g, &readers))) goto done;
    for (size_t pi = 0; pi < n_provs && !s; pi++) {
        size_t np = 0;
        for (size_t i = 0; i < g->n_nodes; i++)
            if (!assigned[i] && allowed[i * n_provs + pi]) pending[np++] = g->nodes[i];
        if (np == 0) continue;
        struct tsr_graph offer = graph_view_offer(g, pending, np);
        const provider_inst *pv = provs[pi];
        struct tsr_claim_sink sink = {&offer, NULL, 0, NULL, 0, NULL, pv->n_devices};
        s = pv->plugin->vt->claim(pv->state, (const tsr_graph *)&offer, &sink);
        if (s) {
            s = tsr_error_wrap(s, "provider '%s' failed while claiming", pv->name);
            claim_sink_clear(&sink);
            break;
        }
        for (size_t c = 0; c < sink.n_claims && !s; c++) {
            claim_entry *ce = &sink.claims[c];
            bool ok = true;
            for (size_t k = 0; k < ce->n; k++)
                if (assigned[ce->nodes[k]->index] || !allowed[ce->nodes[k]->index * n_provs + pi]) ok = false;
            if (!ok) continue;
            for (size_t k = 0; k < ce->n; k++) in_set[ce->nodes[k]->index] = true;
            size_t first = out->n_pieces;
            s = add_convex_pieces(out, g, readers, ce->nodes, ce->n, in_set, reached, in_r, pi, ce->cost, pv->name);
            for (size_t k = first; !s && k < out->n_pieces; k++) out->pieces[k].view->device = ce->device;
            for (size_t k = 0; k < ce->n && !s; k++) assigned[ce->nodes[k]->index] = true;
        }
        if (!s) s = partition_keep_declines(out, &sink, pi);
        claim_sink_clear(&sink);
    }
done:
    graph_readers_free(readers);
    free(reached);
    free(in_r);
    free(in_set);
    free(pending);
    return s;
}

/* Claims with placement: the policy's choices first (each node offered
 * only to its chosen provider), then list order for whatever a chosen
 * provider did not claim after all (its claims depend on what it is
 * offered, e.g. a fusion). */
static tsr_status *place_and_claim(ir_graph *g, provider_inst *const *provs, size_t n_provs, const exclusion *excl,
                                   size_t n_excl, const placement_policy *pol, partition *out, bool *assigned) {
    bool *allowed = allowed_matrix(g, n_provs, excl, n_excl);
    if (!allowed) return TSR_NO_MEMORY();
    tsr_status *s = NULL;
    if (placement_needed(provs, n_provs, pol)) {
        size_t *choice = malloc(sizeof(size_t) * (g->n_nodes + 1));
        bool *chosen = malloc(g->n_nodes * n_provs + 1);
        size_t moved = 0;
        if (!choice || !chosen) s = TSR_NO_MEMORY();
        if (!s) s = placement_choose(g, provs, n_provs, allowed, pol, choice, &moved, out);
        if (!s) {
            memcpy(chosen, allowed, g->n_nodes * n_provs);
            for (size_t i = 0; i < g->n_nodes; i++)
                if (choice[i] != SIZE_MAX)
                    for (size_t p = 0; p < n_provs; p++) chosen[i * n_provs + p] = p == choice[i];
            out->n_moved = moved;
            s = claim_round(g, provs, n_provs, chosen, out, assigned);
        }
        free(choice);
        free(chosen);
    }
    if (!s) {
        /* The fallback (last in the list) gets only what nobody else claims:
         * in list order that holds by itself. */
        s = claim_round(g, provs, n_provs, allowed, out, assigned);
    }
    free(allowed);
    return s;
}

/* Says which nodes ended on the fallback provider, as ONNX Runtime's users
 * wish it said about its CPU fallback. */
static void log_fallback(const partition *p, const ir_graph *g, provider_inst *const *provs, size_t n_provs) {
    size_t fb = p->policy.fallback;
    if (fb >= n_provs) return;
    size_t count = 0;
    char ops[512] = "";
    size_t len = 0;
    for (size_t i = 0; i < p->n_pieces; i++) {
        if (p->pieces[i].prov_index != fb) continue;
        for (size_t k = 0; k < p->pieces[i].view->n_nodes; k++) {
            const ir_node *n = p->pieces[i].view->nodes[k];
            if (count++ < 8 && len < sizeof ops - 1) {
                int w = snprintf(ops + len, sizeof ops - len, "%s'%s' (%s)", len ? ", " : "", n->name, n->op_type);
                if (w > 0) len += (size_t)w < sizeof ops - len ? (size_t)w : sizeof ops - len - 1;
            }
        }
    }
    if (!count) return;
    char msg[768];
    snprintf(msg, sizeof msg, "%zu of %zu node(s) run on the fallback provider: %s%s", count, g->n_nodes, ops,
             count > 8 ? ", ..." : "");
    host_log(TSR_LOG_WARNING, provs[fb]->name, msg);
}

tsr_status *partition_graph(ir_graph *g, provider_inst *const *provs, size_t n_provs, const exclusion *excl,
                            size_t n_excl, partition *out) {
    placement_policy pol = placement_default();
    return partition_graph_policy(g, provs, n_provs, excl, n_excl, &pol, out);
}

tsr_status *partition_graph_policy(ir_graph *g, provider_inst *const *provs, size_t n_provs, const exclusion *excl,
                                   size_t n_excl, const placement_policy *policy, partition *out) {
    memset(out, 0, sizeof *out);
    out->policy = *policy;
    expansion *log = NULL;
    size_t n_log = 0;
    tsr_status *s = NULL;
    /* A local copy: exclusions of nodes about to be expanded (and freed) are
     * dropped, so a body node that reuses a freed node's address is not
     * excluded by mistake. */
    exclusion *ex = n_excl ? malloc(sizeof *ex * n_excl) : NULL;
    if (n_excl && !ex) return TSR_NO_MEMORY();
    if (n_excl) memcpy(ex, excl, sizeof *ex * n_excl);
    excl = ex;
    /* Each round offers the graph whole; function ops nobody claimed are
     * replaced by their bodies and the next round offers those. A body that
     * keeps producing function ops nobody claims (a function calling itself)
     * ends after function_depth rounds, or when the nodes made reach the
     * function_nodes limit (both the model's, from the session). */
    int max_rounds = g->model ? g->model->limits.function_depth : IR_DEFAULT_FUNCTION_DEPTH;
    for (int round = 0;; round++) {
        bool *assigned = calloc(g->n_nodes + 1, 1);
        if (!assigned) {
            s = TSR_NO_MEMORY();
            break;
        }
        s = place_and_claim(g, provs, n_provs, excl, n_excl, policy, out, assigned);
        size_t n_unassigned = 0;
        for (size_t i = 0; i < g->n_nodes; i++) n_unassigned += !assigned[i];
        if (!s && n_unassigned == 0) {
            free(assigned);
            s = order_pieces(out, g);
            break;
        }
        size_t n_expanded = 0;
        bool too_deep = round >= max_rounds;
        if (!s && too_deep) s = partition_depth_error(g, assigned, max_rounds);
        if (!s && !too_deep) {
            size_t kept = 0;
            for (size_t i = 0; i < n_excl; i++)
                if (assigned[ex[i].node->index]) ex[kept++] = ex[i];
            n_excl = kept;
            s = partition_expand_unclaimed(g, assigned, &log, &n_log, &n_expanded);
        }
        if (!s && n_expanded == 0) s = no_provider_error(out, g, assigned, provs);
        free(assigned);
        if (s) break;
        /* The graph changed: start over with fresh claims and types. */
        partition_free(out);
        out->policy = *policy;
        s = ir_infer_shapes(g);
        if (s) {
            s = tsr_error_wrap(s, "after expanding function ops");
            break;
        }
    }
    if (!s) s = partition_collect_expansions(g, log, n_log, out);
    if (!s) log_fallback(out, g, provs, n_provs);
    for (size_t i = 0; i < n_log; i++) expansion_clear(&log[i]);
    free(log);
    free(ex);
    if (s) partition_free(out);
    return s;
}

void folded_node_clear(folded_node *f) {
    free(f->node);
    free(f->op);
    free(f->body);
    for (size_t i = 0; i < f->n_outputs; i++) free(f->outputs[i]);
    free(f->outputs);
    memset(f, 0, sizeof *f);
}

void partition_free(partition *p) {
    for (size_t i = 0; i < p->n_pieces; i++) graph_view_free(p->pieces[i].view);
    for (size_t i = 0; i < p->n_declines; i++) free(p->declines[i].text);
    for (size_t i = 0; i < p->n_expanded; i++) expansion_clear(&p->expanded[i]);
    for (size_t i = 0; i < p->n_folded; i++) folded_node_clear(&p->folded[i]);
    free(p->folded);
    free(p->pieces);
    free(p->declines);
    free(p->decline_index);
    free(p->expanded);
    memset(p, 0, sizeof *p);
}
