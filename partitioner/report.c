/* The assignment report: which provider runs which nodes, and who declined
 * what and why. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partition.h"
#include "session.h"
#include "status.h"

typedef struct sbuf {
    char *p;
    size_t len, cap;
    bool failed;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) {
    if (b->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) { b->failed = true; return; }
        if (b->p && b->len + (size_t)n < b->cap) { b->len += (size_t)n; return; }
        size_t cap = (b->cap + (size_t)n + 1) * 2;
        char *np = realloc(b->p, cap);
        if (!np) { b->failed = true; return; }
        b->p = np;
        b->cap = cap;
    }
}

/* The provider whose memory holds a value when piece `reader` needs it:
 * its producing piece's, or NULL for the host (inputs, initializers). */
static const provider_inst *holder(const partition *p, provider_inst *const *provs,
                                   const ir_value *v) {
    if (!v->producer) return NULL;
    for (size_t i = 0; i < p->n_pieces; i++) {
        const struct tsr_graph *w = p->pieces[i].view;
        for (size_t k = 0; k < w->n_outputs; k++)
            if (w->outputs[k] == v) {
                const provider_inst *pi = provs[p->pieces[i].prov_index];
                return pi->memory_kind == TSR_MEMORY_DEVICE ? pi : NULL;
            }
    }
    return NULL;
}

/* Where pieces on different memories meet: the copies each run makes
 * (constants are copied to a device once per session). */
static void copies_text(sbuf *b, const partition *p, provider_inst *const *provs) {
    size_t n = 0;
    for (size_t i = 0; i < p->n_pieces; i++) {
        const struct tsr_graph *v = p->pieces[i].view;
        const provider_inst *to = provs[p->pieces[i].prov_index];
        const provider_inst *to_mem = to->memory_kind == TSR_MEMORY_DEVICE ? to : NULL;
        for (size_t k = 0; k < v->n_inputs; k++) {
            const ir_value *iv = v->inputs[k];
            const provider_inst *from = holder(p, provs, iv);
            if (from == to_mem) continue;
            if (!n++) sb_printf(b, "copies:\n");
            sb_printf(b, "  piece %-4zu %-28s %s -> %s%s\n", i, iv->name, from ? from->name : "host",
                      to_mem ? to_mem->name : "host",
                      iv->constant && !iv->producer ? " (constant: once per session)" : "");
        }
    }
    for (size_t i = 0; i < p->n_pieces; i++) {
        const struct tsr_graph *v = p->pieces[i].view;
        const provider_inst *pv = provs[p->pieces[i].prov_index];
        if (pv->memory_kind != TSR_MEMORY_DEVICE) continue;
        for (size_t k = 0; k < v->n_outputs; k++)
            if (v->outputs[k]->is_graph_output) {
                if (!n++) sb_printf(b, "copies:\n");
                sb_printf(b, "  piece %-4zu %-28s %s -> host (graph output)\n", i, v->outputs[k]->name,
                          pv->name);
            }
    }
    if (!n) sb_printf(b, "copies: none\n");
}

char *partition_text(const partition *p, const ir_graph *g, provider_inst *const *provs,
                     size_t n_provs) {
    (void)n_provs;
    sbuf b = {0};
    sb_printf(&b, "%-5s %-12s %5s  %-40s %s\n", "piece", "provider", "nodes", "ops", "first node");
    size_t *per_prov = calloc(n_provs + 1, sizeof *per_prov);
    for (size_t i = 0; i < p->n_pieces; i++) {
        const piece *pc = &p->pieces[i];
        char ops[41] = "";
        size_t ol = 0;
        for (size_t k = 0; k < pc->view->n_nodes; k++) {
            const char *op = pc->view->nodes[k]->op_type;
            bool seen = false;
            for (size_t j = 0; j < k; j++) seen = seen || strcmp(pc->view->nodes[j]->op_type, op) == 0;
            if (seen) continue;
            int w = snprintf(ops + ol, sizeof ops - ol, "%s%s", ol ? "," : "", op);
            if (w < 0 || (size_t)w >= sizeof ops - ol) { strcpy(ops + sizeof ops - 4, "..."); break; }
            ol += (size_t)w;
        }
        if (per_prov) per_prov[pc->prov_index] += pc->view->n_nodes;
        sb_printf(&b, "%-5zu %-12s %5zu  %-40s %s%s\n", i, provs[pc->prov_index]->name,
                  pc->view->n_nodes, ops, pc->view->nodes[0]->name,
                  pc->prov_index == p->policy.fallback ? "  (fallback)" : "");
    }
    sb_printf(&b, "total: %zu nodes in %zu pieces", g->n_nodes, p->n_pieces);
    for (size_t i = 0; per_prov && i < n_provs; i++)
        sb_printf(&b, "%s %s %zu", i ? "," : ";", provs[i]->name, per_prov[i]);
    sb_printf(&b, "\n");
    free(per_prov);
    sb_printf(&b, "placement: %s", p->policy.kind == PLACE_COST    ? "by estimated cost"
                                   : p->policy.kind == PLACE_FIRST ? "first claim in list order"
                                                                   : "list order");
    if (p->n_moved)
        sb_printf(&b, "; %zu node(s) placed off list order %s", p->n_moved,
                  p->policy.kind == PLACE_COST ? "(cheaper with copies counted)"
                                               : "(kept by their neighbours to save copies)");
    if (p->policy.fallback < n_provs)
        sb_printf(&b, "; fallback %s", provs[p->policy.fallback]->name);
    sb_printf(&b, "\n");
    copies_text(&b, p, provs);
    if (p->n_expanded) sb_printf(&b, "expanded:\n");
    for (size_t i = 0; i < p->n_expanded; i++) {
        const expansion *e = &p->expanded[i];
        if (e->op[0])
            sb_printf(&b, "  %s%s%s '%s' expanded: %zu node%s", e->domain, e->domain[0] ? "." : "",
                      e->op, e->node, e->body_nodes, e->body_nodes == 1 ? "" : "s");
        else
            sb_printf(&b, "  '%s' expanded earlier: %zu node%s", e->node, e->body_nodes,
                      e->body_nodes == 1 ? "" : "s");
        if (e->origin) sb_printf(&b, " (inside '%s')", e->origin);
        else if (e->total_nodes != e->body_nodes && e->op[0])
            sb_printf(&b, " (%zu after nested expansion)", e->total_nodes);
        sb_printf(&b, "\n");
    }
    if (p->n_declines) sb_printf(&b, "declined:\n");
    for (size_t i = 0; i < p->n_declines; i++) {
        const declined *d = &p->declines[i];
        sb_printf(&b, "  %-12s %s '%s': %s\n", provs[d->prov_index]->name, d->node->op_type,
                  d->node->name, d->text);
    }
    if (b.failed) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

tsr_status *tsr_session_assignment_text(const tsr_session *s, char **out) {
    if (!s || !out) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "session and out are required");
    char *t = partition_text(&s->main.part, s->model->graph, s->provs, s->n_provs);
    if (!t) return TSR_NO_MEMORY();
    *out = t;
    return NULL;
}
