/* Building a graph's plan: partition, compile with fallback, liveness. */
#include "graph_plan.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_view.h"
#include "host_log.h"
#include "piece_cache.h"
#include "status.h"

static void release_compiled(partition *part, provider_inst *const *provs) {
    for (size_t p = 0; p < part->n_pieces; p++) {
        piece *pc = &part->pieces[p];
        if (pc->compiled) provs[pc->prov_index]->plugin->vt->release(pc->compiled);
        pc->compiled = NULL;
    }
}

/* Partitions and compiles; a piece that fails to compile is handed to the
 * next provider willing to claim it. */
/* The pinned provider of node n, or SIZE_MAX. A name rule beats an op rule. */
static size_t pinned_to(const ir_node *n, const pin_rule *pins, size_t n_pins) {
    size_t by_op = SIZE_MAX;
    for (size_t i = 0; i < n_pins; i++) {
        const char *x = pins[i].node_or_op;
        if (pins[i].by_name) {
            if ((n->name && strcmp(n->name, x) == 0) || (n->origin && strcmp(n->origin, x) == 0))
                return pins[i].prov_index;
        } else if (strcmp(n->op_type, x) == 0) {
            by_op = pins[i].prov_index;
        }
    }
    return by_op;
}

/* Pins become exclusions: a pinned node is barred from every other provider. */
static tsr_status *pin_exclusions(const ir_graph *g, size_t n_provs, const pin_rule *pins, size_t n_pins,
                                  exclusion **excl, size_t *n_excl) {
    for (size_t i = 0; n_pins && i < g->n_nodes; i++) {
        size_t to = pinned_to(g->nodes[i], pins, n_pins);
        if (to == SIZE_MAX) continue;
        exclusion *e = realloc(*excl, sizeof *e * (*n_excl + n_provs));
        if (!e) return TSR_NO_MEMORY();
        *excl = e;
        for (size_t p = 0; p < n_provs; p++)
            if (p != to) e[(*n_excl)++] = (exclusion){g->nodes[i], p};
    }
    return NULL;
}

static int cmp_ptr(const void *a, const void *b) {
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return x < y ? -1 : x > y;
}

/* Function expansion inside partition_graph frees nodes: drop exclusions of
 * nodes no longer in g (compared by address only, never dereferenced). */
static tsr_status *drop_stale(const ir_graph *g, exclusion *excl, size_t *n_excl) {
    if (!*n_excl) return NULL;
    ir_node **sorted = malloc(sizeof *sorted * (g->n_nodes + 1));
    if (!sorted) return TSR_NO_MEMORY();
    if (g->n_nodes) memcpy(sorted, g->nodes, sizeof *sorted * g->n_nodes);
    qsort(sorted, g->n_nodes, sizeof *sorted, cmp_ptr);
    size_t kept = 0;
    for (size_t i = 0; i < *n_excl; i++) {
        ir_node *key = excl[i].node;
        if (bsearch(&key, sorted, g->n_nodes, sizeof *sorted, cmp_ptr)) excl[kept++] = excl[i];
    }
    *n_excl = kept;
    free(sorted);
    return NULL;
}

/* Whether some node of the partition runs on another provider than its pin
 * (a pinned function op expanded into body nodes the pins did not cover). */
static bool pins_broken(const partition *part, const pin_rule *pins, size_t n_pins) {
    for (size_t p = 0; n_pins && p < part->n_pieces; p++)
        for (size_t k = 0; k < part->pieces[p].view->n_nodes; k++) {
            size_t to = pinned_to(part->pieces[p].view->nodes[k], pins, n_pins);
            if (to != SIZE_MAX && to != part->pieces[p].prov_index) return true;
        }
    return false;
}

static tsr_status *partition_and_compile(ir_graph *g, provider_inst *const *provs, size_t n_provs,
                                         const plan_rules *rules, partition *part) {
    const pin_rule *pins = rules->pins;
    size_t n_pins = rules->n_pins;
    exclusion *excl = NULL;
    size_t n_excl = 0;
    tsr_status *st = pin_exclusions(g, n_provs, pins, n_pins, &excl, &n_excl);
    if (st) return st;
    bool repinned = false;
    for (;;) {
        st = drop_stale(g, excl, &n_excl);
        if (!st) st = partition_graph_policy(g, provs, n_provs, excl, n_excl, &rules->policy, part);
        if (st) break;
        if (!repinned && pins_broken(part, pins, n_pins)) {
            /* The graph now holds the bodies: pin them too and start over. */
            repinned = true;
            partition_free(part);
            if ((st = drop_stale(g, excl, &n_excl))) break;
            if ((st = pin_exclusions(g, n_provs, pins, n_pins, &excl, &n_excl))) break;
            continue;
        }
        size_t failed = SIZE_MAX;
        for (size_t p = 0; p < part->n_pieces && failed == SIZE_MAX; p++) {
            piece *pc = &part->pieces[p];
            provider_inst *pv = provs[pc->prov_index];
            tsr_status *cs = piece_cache_compile(pv, pc->view, rules->cache_dir, &pc->compiled);
            if (!cs) continue;
            char msg[1024];
            snprintf(msg, sizeof msg,
                     "piece of %zu node(s) starting at '%s' (%s) failed to compile: %s; "
                     "offering it to the next provider",
                     pc->view->n_nodes, pc->view->nodes[0]->name, pc->view->nodes[0]->op_type, tsr_status_message(cs));
            host_log(TSR_LOG_WARNING, pv->name, msg);
            tsr_status_free(cs);
            pc->compiled = NULL;
            failed = p;
        }
        if (failed == SIZE_MAX) break;
        piece *fp = &part->pieces[failed];
        if (g->model && g->model->constants_released) {
            /* compiling again would read weights a compiled piece handed back */
            st = tsr_error(TSR_ERR_PROVIDER,
                           "piece of %zu node(s) starting at '%s' (%s) failed to compile after another piece's "
                           "provider released weights it holds in its own form; name the providers without it "
                           "(see the warning above)",
                           fp->view->n_nodes, fp->view->nodes[0]->name, fp->view->nodes[0]->op_type);
            break;
        }
        exclusion *ne = realloc(excl, sizeof *ne * (n_excl + fp->view->n_nodes));
        if (!ne) {
            st = TSR_NO_MEMORY();
            break;
        }
        excl = ne;
        for (size_t k = 0; k < fp->view->n_nodes; k++) excl[n_excl++] = (exclusion){fp->view->nodes[k], fp->prov_index};
        release_compiled(part, provs);
        partition_free(part);
    }
    if (st) {
        release_compiled(part, provs);
        partition_free(part);
    }
    free(excl);
    return st;
}

tsr_status *graph_plan_build(ir_graph *g, provider_inst *const *provs, size_t n_provs, const plan_rules *rules,
                             graph_plan *out) {
    memset(out, 0, sizeof *out);
    out->g = g;
    out->max_tensor_bytes = rules ? rules->max_tensor_bytes : 0;
    TSR_TRY(partition_and_compile(g, provs, n_provs, rules, &out->part));
    out->last_use = malloc(sizeof(size_t) * (g->n_values + 1));
    if (!out->last_use) {
        graph_plan_free(out, provs);
        return TSR_NO_MEMORY();
    }
    for (size_t i = 0; i < g->n_values; i++) out->last_use[i] = SIZE_MAX;
    for (size_t p = 0; p < out->part.n_pieces; p++) {
        const struct tsr_graph *v = out->part.pieces[p].view;
        for (size_t k = 0; k < v->n_inputs; k++) out->last_use[v->inputs[k]->index] = p;
    }
    return NULL;
}

void graph_plan_free(graph_plan *p, provider_inst *const *provs) {
    for (size_t i = 0; i < p->n_consts; i++) {
        rt_tensor_release(&p->consts[i]->copy);
        free(p->consts[i]);
    }
    free(p->consts);
    p->consts = NULL;
    p->n_consts = 0;
    release_compiled(&p->part, provs);
    partition_free(&p->part);
    free(p->last_use);
    p->last_use = NULL;
}
