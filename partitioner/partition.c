/* The partitioner: claims in provider order, convexity so pieces never form
 * cycles, and a report of who declined what. */
#include "partition.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partition_expand.h"
#include "status.h"


static bool excluded(const exclusion *e, size_t n, const ir_node *node, size_t prov) {
    for (size_t i = 0; i < n; i++)
        if (e[i].node == node && e[i].prov_index == prov) return true;
    return false;
}

/* Whether a path leaves the set and comes back: then merging it into one
 * piece would make the piece graph cyclic. `in_set` is indexed by node index. */
static bool set_is_convex(const ir_graph *g, const bool *in_set) {
    bool *reached = calloc(g->n_nodes + 1, 1);
    if (!reached) return false;
    bool convex = true;
    /* Nodes are in topological order, so one forward sweep propagates
     * "reachable from the set through an outside node". */
    for (size_t i = 0; i < g->n_nodes && convex; i++) {
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
    free(reached);
    return convex;
}

static tsr_status *add_piece(partition *p, ir_graph *g, ir_node *const *nodes, size_t n,
                             size_t prov, double cost) {
    piece *np = realloc(p->pieces, sizeof *np * (p->n_pieces + 1));
    if (!np) return TSR_NO_MEMORY();
    p->pieces = np;
    piece *pc = &np[p->n_pieces];
    memset(pc, 0, sizeof *pc);
    TSR_TRY(host_graph_view_nodes(g, nodes, n, &pc->view));
    pc->prov_index = prov;
    pc->cost = cost;
    p->n_pieces++;
    return NULL;
}

/* Orders pieces so each runs after the pieces it reads from. */
static tsr_status *order_pieces(partition *p, const ir_graph *g) {
    size_t n = p->n_pieces;
    size_t *owner = malloc(sizeof(size_t) * (g->n_nodes + 1));
    size_t *indeg = calloc(n + 1, sizeof(size_t));
    bool *done = calloc(n + 1, 1);
    piece *sorted = malloc(sizeof(piece) * (n + 1));
    tsr_status *s = NULL;
    if (!owner || !indeg || !done || !sorted) {
        s = TSR_NO_MEMORY();
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < p->pieces[i].view->n_nodes; k++)
            owner[p->pieces[i].view->nodes[k]->index] = i;
    /* Repeatedly take the first piece none of whose inputs come from a piece
     * not yet taken: O(pieces^2 * inputs), fine for the graphs we meet. */
    size_t taken = 0;
    while (taken < n) {
        size_t pick = n;
        for (size_t i = 0; i < n && pick == n; i++) {
            if (done[i]) continue;
            bool ready = true;
            const struct tsr_graph *v = p->pieces[i].view;
            for (size_t k = 0; k < v->n_inputs && ready; k++) {
                const ir_value *iv = v->inputs[k];
                if (iv->producer && iv->producer->graph == g && !done[owner[iv->producer->index]])
                    ready = false;
            }
            if (ready) pick = i;
        }
        if (pick == n) {
            s = tsr_error(TSR_ERR_RUNTIME, "pieces form a cycle");
            goto out;
        }
        done[pick] = true;
        sorted[taken++] = p->pieces[pick];
    }
    memcpy(p->pieces, sorted, sizeof(piece) * n);
out:
    free(owner);
    free(indeg);
    free(done);
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
        int w = snprintf(line, sizeof line, "%snode '%s' (%s%s%s opset %lld):", shown ? "; " : "",
                         n->name, n->domain, n->domain[0] ? "." : "", n->op_type,
                         (long long)n->opset);
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
static tsr_status *claim_round(ir_graph *g, provider_inst *const *provs, size_t n_provs,
                               const exclusion *excl, size_t n_excl, partition *out,
                               bool *assigned) {
    bool *in_set = calloc(g->n_nodes + 1, 1);
    ir_node **pending = malloc(sizeof(ir_node *) * (g->n_nodes + 1));
    tsr_status *s = NULL;
    if (!in_set || !pending) {
        s = TSR_NO_MEMORY();
        goto done;
    }
    for (size_t pi = 0; pi < n_provs && !s; pi++) {
        size_t np = 0;
        for (size_t i = 0; i < g->n_nodes; i++)
            if (!assigned[i]) pending[np++] = g->nodes[i];
        if (np == 0) break;
        struct tsr_graph offer = {g, np, pending, g->n_inputs, g->inputs, g->n_outputs, g->outputs};
        struct tsr_claim_sink sink = {&offer, NULL, 0, NULL, 0, NULL, 0};
        const provider_inst *pv = provs[pi];
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
                if (assigned[ce->nodes[k]->index] || excluded(excl, n_excl, ce->nodes[k], pi))
                    ok = false;
            if (!ok) continue;
            for (size_t k = 0; k < ce->n; k++) in_set[ce->nodes[k]->index] = true;
            bool convex = ce->n == 1 || set_is_convex(g, in_set);
            if (convex) {
                s = add_piece(out, g, ce->nodes, ce->n, pi, ce->cost);
            } else {
                char msg[256];
                snprintf(msg, sizeof msg,
                         "claim of %zu nodes starting at '%s' would form a cycle; split into "
                         "single nodes",
                         ce->n, ce->nodes[0]->name);
                host_log(TSR_LOG_WARNING, pv->name, msg);
                for (size_t k = 0; k < ce->n && !s; k++)
                    s = add_piece(out, g, &ce->nodes[k], 1, pi, -1.0);
            }
            for (size_t k = 0; k < ce->n; k++) {
                in_set[ce->nodes[k]->index] = false;
                if (!s) assigned[ce->nodes[k]->index] = true;
            }
        }
        for (size_t d = 0; d < sink.n_declines && !s; d++) {
            declined *nd = realloc(out->declines, sizeof *nd * (out->n_declines + 1));
            if (!nd) {
                s = TSR_NO_MEMORY();
                break;
            }
            out->declines = nd;
            nd[out->n_declines++] = (declined){sink.declines[d].node, pi, sink.declines[d].reason,
                                               sink.declines[d].text};
            sink.declines[d].text = NULL;
        }
        claim_sink_clear(&sink);
    }
done:
    free(in_set);
    free(pending);
    return s;
}

tsr_status *partition_graph(ir_graph *g, provider_inst *const *provs, size_t n_provs,
                            const exclusion *excl, size_t n_excl, partition *out) {
    memset(out, 0, sizeof *out);
    expansion *log = NULL;
    size_t n_log = 0;
    size_t n_nodes_before = g->n_nodes;
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
     * ends after IR_MAX_GRAPH_DEPTH rounds or PARTITION_MAX_EXPANDED_NODES
     * new nodes. */
    for (int round = 0;; round++) {
        bool *assigned = calloc(g->n_nodes + 1, 1);
        if (!assigned) {
            s = TSR_NO_MEMORY();
            break;
        }
        s = claim_round(g, provs, n_provs, excl, n_excl, out, assigned);
        size_t n_unassigned = 0;
        for (size_t i = 0; i < g->n_nodes; i++) n_unassigned += !assigned[i];
        if (!s && n_unassigned == 0) {
            free(assigned);
            s = order_pieces(out, g);
            break;
        }
        size_t n_expanded = 0;
        size_t grown = g->n_nodes > n_nodes_before ? g->n_nodes - n_nodes_before : 0;
        bool too_deep = round >= IR_MAX_GRAPH_DEPTH || grown > PARTITION_MAX_EXPANDED_NODES;
        if (!s && !too_deep) {
            size_t kept = 0;
            for (size_t i = 0; i < n_excl; i++)
                if (assigned[ex[i].node->index]) ex[kept++] = ex[i];
            n_excl = kept;
            s = partition_expand_unclaimed(g, assigned, &log, &n_log, &n_expanded);
        }
        if (!s && n_expanded == 0) {
            s = no_provider_error(out, g, assigned, provs);
            if (too_deep)
                s = tsr_error_wrap(s,
                                   "function expansion stopped after %d rounds and %zu new nodes "
                                   "(a function that calls itself?)",
                                   round, grown);
        }
        free(assigned);
        if (s) break;
        /* The graph changed: start over with fresh claims and types. */
        partition_free(out);
        s = ir_infer_shapes(g);
        if (s) {
            s = tsr_error_wrap(s, "after expanding function ops");
            break;
        }
    }
    if (!s) s = partition_collect_expansions(g, log, n_log, out);
    for (size_t i = 0; i < n_log; i++) expansion_clear(&log[i]);
    free(log);
    free(ex);
    if (s) partition_free(out);
    return s;
}

void partition_free(partition *p) {
    for (size_t i = 0; i < p->n_pieces; i++) host_graph_view_free(p->pieces[i].view);
    for (size_t i = 0; i < p->n_declines; i++) free(p->declines[i].text);
    for (size_t i = 0; i < p->n_expanded; i++) expansion_clear(&p->expanded[i]);
    free(p->pieces);
    free(p->declines);
    free(p->expanded);
    memset(p, 0, sizeof *p);
}
