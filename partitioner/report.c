/* The assignment report: which provider runs which nodes, and who declined
 * what and why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partition.h"
#include "report_buf.h"
#include "report_copies.h"
#include "status.h"

const char *partition_piece_impl(const piece *pc, const provider_inst *prov) {
    const tsr_provider *vt = prov->plugin->vt;
    if (!pc->compiled || !TSR_HAS_MEMBER(vt, tsr_provider, piece_describe) || !vt->piece_describe) return NULL;
    const char *d = vt->piece_describe(pc->compiled);
    return d && d[0] ? d : NULL;
}

/* Each piece's implementations as its provider names them, each distinct
 * one once with its count: "piece 0 onednn: convolution
 * brgconv:avx512_core x12, binary jit:uni x3". */
static void impls_text(report_buf *b, const partition *p, provider_inst *const *provs) {
    bool any = false;
    for (size_t i = 0; i < p->n_pieces; i++) {
        const char *d = partition_piece_impl(&p->pieces[i], provs[p->pieces[i].prov_index]);
        if (!d) continue;
        if (!any) report_buf_printf(b, "implementations:\n");
        any = true;
        report_buf_printf(b, "  piece %zu %s:", i, provs[p->pieces[i].prov_index]->name);
        size_t n = 1;
        for (const char *c = d; *c; c++) n += *c == ';';
        const char **at = malloc(n * sizeof *at);
        size_t *len = malloc(n * sizeof *len);
        if (!at || !len) {
            b->failed = true;
            free(at);
            free(len);
            return;
        }
        size_t k = 0;
        for (const char *e = d;; k++) {
            const char *semi = strchr(e, ';');
            at[k] = e;
            len[k] = semi ? (size_t)(semi - e) : strlen(e);
            if (!semi) break;
            e = semi + 1;
        }
        for (size_t x = 0, shown = 0; x <= k; x++) {
            size_t count = 0, first = x;
            for (size_t y = 0; y <= k; y++)
                if (len[y] == len[x] && strncmp(at[y], at[x], len[x]) == 0) {
                    if (y < first) first = y;
                    count++;
                }
            if (first != x) continue; /* shown with its first appearance */
            report_buf_printf(b, "%s %.*s x%zu", shown++ ? "," : "", (int)len[x], at[x], count);
        }
        report_buf_printf(b, "\n");
        free(at);
        free(len);
    }
}

/* Where pieces on different memories meet: the copies each run makes
 * (constants are copied to a device once per session). */
static void copies_text(report_buf *b, const partition *p, provider_inst *const *provs) {
    report_copy *c = NULL;
    size_t n = 0;
    if (!report_copies(p, provs, &c, &n)) {
        b->failed = true;
        return;
    }
    if (!n) report_buf_printf(b, "copies: none\n");
    else report_buf_printf(b, "copies:\n");
    for (size_t i = 0; i < n; i++) {
        const report_copy *k = &c[i];
        if (k->to_piece != REPORT_HOST)
            report_buf_printf(b, "  piece %-4zu %-28s %s -> %s%s\n", k->to_piece, k->value->name,
                              k->from ? k->from->name : "host", k->to ? k->to->name : "host",
                              k->once_per_session ? " (constant: once per session)" : "");
        else
            report_buf_printf(b, "  piece %-4zu %-28s %s -> host (graph output)\n", k->from_piece, k->value->name,
                              k->from ? k->from->name : "host");
    }
    free(c);
}

/* The ops of a piece, each once, cut to fit `size`. */
static void piece_ops(const piece *pc, char *ops, size_t size) {
    size_t ol = 0;
    ops[0] = 0;
    for (size_t k = 0; k < pc->view->n_nodes; k++) {
        const char *op = pc->view->nodes[k]->op_type;
        bool seen = false;
        for (size_t j = 0; j < k; j++) seen = seen || strcmp(pc->view->nodes[j]->op_type, op) == 0;
        if (seen) continue;
        int w = snprintf(ops + ol, size - ol, "%s%s", ol ? "," : "", op);
        if (w < 0 || (size_t)w >= size - ol) {
            strcpy(ops + size - 4, "...");
            break;
        }
        ol += (size_t)w;
    }
}

/* The rows of p's pieces; a control-flow piece's bodies follow it, their
 * rows indented and their nodes named by path ("loop_0/body/add_3"). */
static void text_rows(report_buf *b, const partition *p, provider_inst *const *provs, size_t *per_prov,
                      report_bodies_fn bodies, const char *path, int depth) {
    for (size_t i = 0; i < p->n_pieces; i++) {
        const piece *pc = &p->pieces[i];
        char ops[41];
        piece_ops(pc, ops, sizeof ops);
        if (per_prov && depth == 0) per_prov[pc->prov_index] += pc->view->n_nodes;
        char device[32] = "";
        if (provs[pc->prov_index]->n_devices > 1)
            snprintf(device, sizeof device, "  (device %d)", (int)pc->view->device);
        report_buf_printf(b, "%*s%-*zu %-12s %5zu  %-40s %s%s%s%s\n", 2 * depth, "",
                          5 - 2 * depth > 1 ? 5 - 2 * depth : 1, i, provs[pc->prov_index]->name, pc->view->n_nodes, ops,
                          path, pc->view->nodes[0]->name, device,
                          pc->prov_index == p->policy.fallback ? "  (fallback)" : "");
        report_body body[REPORT_MAX_BODIES];
        size_t nb = bodies && depth < 16 ? bodies(pc, provs[pc->prov_index], body, REPORT_MAX_BODIES) : 0;
        for (size_t k = 0; k < nb; k++) {
            char sub[512];
            snprintf(sub, sizeof sub, "%s%s/%s/", path, pc->view->nodes[0]->name, body[k].attr);
            report_buf_printf(b, "%*s%.*s: %zu node%s in %zu piece%s\n", 2 * depth + 2, "", (int)strlen(sub) - 1, sub,
                              body[k].g->n_nodes, body[k].g->n_nodes == 1 ? "" : "s", body[k].part->n_pieces,
                              body[k].part->n_pieces == 1 ? "" : "s");
            text_rows(b, body[k].part, provs, per_prov, bodies, sub, depth + 1);
        }
    }
}

/* "folded at load: 40 nodes (Cast 12, Shape 3, ...)": the ops of the first
 * few kinds, counted; each node is in the JSON report. */
static void folded_text(report_buf *b, const partition *p) {
    enum { KINDS = 8 };
    const char *kinds[KINDS];
    size_t n_kinds = 0, shown = 0;
    for (size_t i = 0; i < p->n_folded && n_kinds < KINDS; i++) {
        size_t k = 0;
        while (k < n_kinds && strcmp(kinds[k], p->folded[i].op) != 0) k++;
        if (k == n_kinds) kinds[n_kinds++] = p->folded[i].op;
    }
    if (!p->n_folded) return;
    report_buf_printf(b, "folded at load: %zu node%s computed once when the session was made (", p->n_folded,
                      p->n_folded == 1 ? "" : "s");
    for (size_t k = 0; k < n_kinds; k++) {
        size_t count = 0;
        for (size_t i = 0; i < p->n_folded; i++) count += strcmp(kinds[k], p->folded[i].op) == 0;
        report_buf_printf(b, "%s%s %zu", k ? ", " : "", kinds[k], count);
        shown += count;
    }
    if (shown < p->n_folded) report_buf_printf(b, ", %zu more", p->n_folded - shown);
    report_buf_printf(b, ")\n");
}

char *partition_text(const partition *p, const ir_graph *g, provider_inst *const *provs, size_t n_provs,
                     report_bodies_fn bodies) {
    report_buf b = {0};
    report_buf_printf(&b, "%-5s %-12s %5s  %-40s %s\n", "piece", "provider", "nodes", "ops", "first node");
    size_t *per_prov = calloc(n_provs + 1, sizeof *per_prov);
    text_rows(&b, p, provs, per_prov, bodies, "", 0);
    report_buf_printf(&b, "total: %zu nodes in %zu pieces", g->n_nodes, p->n_pieces);
    for (size_t i = 0; per_prov && i < n_provs; i++)
        report_buf_printf(&b, "%s %s %zu", i ? "," : ";", provs[i]->name, per_prov[i]);
    report_buf_printf(&b, "\n");
    free(per_prov);
    folded_text(&b, p);
    report_buf_printf(&b, "placement: %s",
                      p->policy.kind == PLACE_COST        ? "by estimated cost"
                          : p->policy.kind == PLACE_FIRST ? "first claim in list order"
                                                          : "list order");
    if (p->n_moved)
        report_buf_printf(&b, "; %zu node(s) placed off list order %s", p->n_moved,
                          p->policy.kind == PLACE_COST ? "(cheaper with copies counted)"
                                                       : "(kept by their neighbours to save copies)");
    if (p->policy.fallback < n_provs) report_buf_printf(&b, "; fallback %s", provs[p->policy.fallback]->name);
    report_buf_printf(&b, "\n");
    copies_text(&b, p, provs);
    impls_text(&b, p, provs);
    if (p->n_expanded) report_buf_printf(&b, "expanded:\n");
    for (size_t i = 0; i < p->n_expanded; i++) {
        const expansion *e = &p->expanded[i];
        if (e->op[0])
            report_buf_printf(&b, "  %s%s%s '%s' expanded: %zu node%s", e->domain, e->domain[0] ? "." : "", e->op,
                              e->node, e->body_nodes, e->body_nodes == 1 ? "" : "s");
        else
            report_buf_printf(&b, "  '%s' expanded earlier: %zu node%s", e->node, e->body_nodes,
                              e->body_nodes == 1 ? "" : "s");
        if (e->origin) report_buf_printf(&b, " (inside '%s')", e->origin);
        else if (e->total_nodes != e->body_nodes && e->op[0])
            report_buf_printf(&b, " (%zu after nested expansion)", e->total_nodes);
        report_buf_printf(&b, "\n");
    }
    if (p->n_declines) report_buf_printf(&b, "declined:\n");
    for (size_t i = 0; i < p->n_declines; i++) {
        const declined *d = &p->declines[i];
        report_buf_printf(&b, "  %-12s %s '%s': %s\n", provs[d->prov_index]->name, d->node->op_type, d->node->name,
                          d->text);
    }
    return report_buf_finish(&b);
}
