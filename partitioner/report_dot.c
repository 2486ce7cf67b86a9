/* The assignment as a Graphviz graph: nodes filled with their provider's
 * colour inside one cluster per piece, data edges between nodes, copies
 * between memories as dashed red edges labelled with tensor and bytes, graph
 * inputs and outputs as host boxes, and a legend. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partition.h"
#include "report_buf.h"
#include "report_copies.h"

/* Fill colours (ColorBrewer Set3), one per provider in session order. */
static const char *const palette[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
                                      "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};
#define N_PALETTE (sizeof palette / sizeof palette[0])

static const char *colour(size_t prov_index) { return palette[prov_index % N_PALETTE]; }

/* Appends `s` inside a DOT quoted string: '"' and '\\' escaped (so a name
 * never reads as a label escape such as \N), newlines as \n, other control
 * bytes and invalid UTF-8 as '?', which Graphviz would otherwise reject.
 * Graphviz's lexer reads backslash-quote as an escaped quote even after
 * another backslash, so a name ending in '\\' gets a space after it: its
 * escaped backslash never meets the closing quote. */
static void dot_text(report_buf *b, const char *s) {
    for (const char *q = s ? s : ""; *q && !b->failed;) {
        unsigned char ch = (unsigned char)*q;
        size_t n = report_buf_utf8_seq(q);
        if (ch == '"') report_buf_printf(b, "\\\"");
        else if (ch == '\\') report_buf_printf(b, q[1] ? "\\\\" : "\\\\ ");
        else if (ch == '\n') report_buf_printf(b, "\\n");
        else if (ch < 0x20 || ch == 0x7f || n == 0) report_buf_printf(b, "?");
        else report_buf_printf(b, "%.*s", (int)n, q);
        q += n ? n : 1;
    }
}

static void dot_bytes(report_buf *b, const report_copy *c) {
    if (!c->bytes_known) report_buf_printf(b, "? bytes");
    else if (c->bytes >= (1u << 20)) report_buf_printf(b, "%.1f MiB", (double)c->bytes / (1u << 20));
    else if (c->bytes >= 1024) report_buf_printf(b, "%.1f KiB", (double)c->bytes / 1024);
    else report_buf_printf(b, "%" PRIu64 " B", c->bytes);
}

/* The copy that brings v into piece `to`, or NULL when it is read in place. */
static const report_copy *copy_into(const report_copy *c, size_t n, const ir_value *v, size_t to) {
    for (size_t i = 0; i < n; i++)
        if (c[i].value == v && c[i].to_piece == to) return &c[i];
    return NULL;
}

/* Host boxes: graph inputs the caller feeds, and initializers only where
 * they are copied (drawing every weight would bury the graph). */
static bool host_box(const ir_value *v, const report_copy *c, size_t n) {
    if (v->producer || v->is_outer) return false;
    if (v->is_graph_input && !v->constant) return true;
    for (size_t i = 0; i < n; i++)
        if (c[i].value == v) return true;
    return false;
}

static void dot_node(report_buf *b, const char *prefix, const ir_node *n, size_t prov_index) {
    report_buf_printf(b, "    \"%sn%zu\" [label=\"", prefix, n->index);
    if (n->name[0]) {
        dot_text(b, n->name);
        report_buf_printf(b, "\\n");
    }
    if (n->domain[0]) {
        dot_text(b, n->domain);
        report_buf_printf(b, ".");
    }
    dot_text(b, n->op_type);
    report_buf_printf(b, "\", fillcolor=\"%s\"];\n", colour(prov_index));
}

static void dot_pieces(report_buf *b, const partition *p, provider_inst *const *provs, report_bodies_fn bodies,
                       const char *prefix, unsigned *next_body, int depth);

/* A control-flow piece's bodies, as clusters inside its own: their pieces,
 * and the edges between their nodes (what crosses into a body from outside
 * is the control-flow node's input). */
static void dot_bodies(report_buf *b, const piece *pc, provider_inst *const *provs, report_bodies_fn bodies,
                       unsigned *next_body, int depth) {
    report_body body[REPORT_MAX_BODIES];
    size_t nb = bodies && depth < 16 ? bodies(pc, provs[pc->prov_index], body, REPORT_MAX_BODIES) : 0;
    for (size_t k = 0; k < nb; k++) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "b%u_", (*next_body)++);
        report_buf_printf(b, "  subgraph \"cluster_%s\" {\n    label=\"", prefix);
        dot_text(b, pc->view->nodes[0]->name);
        report_buf_printf(b, "/");
        dot_text(b, body[k].attr);
        report_buf_printf(b, "\"; style=\"rounded\"; color=\"#303030\";\n");
        dot_pieces(b, body[k].part, provs, bodies, prefix, next_body, depth + 1);
        const partition *bp = body[k].part;
        for (size_t i = 0; i < bp->n_pieces; i++)
            for (size_t q = 0; q < bp->pieces[i].view->n_nodes; q++) {
                const ir_node *n = bp->pieces[i].view->nodes[q];
                for (size_t j = 0; j < n->n_inputs; j++) {
                    const ir_value *iv = n->inputs[j];
                    if (!iv || !iv->producer || iv->producer->graph != body[k].g) continue;
                    report_buf_printf(b, "    \"%sn%zu\" -> \"%sn%zu\" [tooltip=\"", prefix, iv->producer->index,
                                      prefix, n->index);
                    dot_text(b, iv->name);
                    report_buf_printf(b, "\"];\n");
                }
            }
        report_buf_printf(b, "  }\n");
    }
}

static void dot_pieces(report_buf *b, const partition *p, provider_inst *const *provs, report_bodies_fn bodies,
                       const char *prefix, unsigned *next_body, int depth) {
    for (size_t i = 0; i < p->n_pieces; i++) {
        const piece *pc = &p->pieces[i];
        report_buf_printf(b, "  subgraph \"cluster_%sp%zu\" {\n    label=\"piece %zu: ", prefix, i, i);
        dot_text(b, provs[pc->prov_index]->name);
        report_buf_printf(b, "\"; style=\"rounded,dashed\"; color=\"#606060\";\n");
        for (size_t k = 0; k < pc->view->n_nodes; k++) dot_node(b, prefix, pc->view->nodes[k], pc->prov_index);
        dot_bodies(b, pc, provs, bodies, next_body, depth);
        report_buf_printf(b, "  }\n");
    }
}

/* One edge into node `to` (of piece `to_piece`) for value v coming from
 * `from_id`: plain when read in place, dashed red when copied; the first
 * edge of each copy carries its label. */
static void dot_edge(report_buf *b, const char *from_id, const char *to_id, const ir_value *v, const report_copy *copy,
                     bool *labelled) {
    report_buf_printf(b, "  \"%s\" -> \"%s\" [tooltip=\"", from_id, to_id);
    dot_text(b, v->name);
    report_buf_printf(b, "\"");
    if (copy) {
        report_buf_printf(b, ", style=dashed, color=red, fontcolor=red");
        if (!*labelled) {
            report_buf_printf(b, ", label=\"");
            dot_text(b, v->name);
            report_buf_printf(b, "\\n");
            dot_bytes(b, copy);
            if (copy->once_per_session) report_buf_printf(b, "\\nonce per session");
            report_buf_printf(b, "\"");
            *labelled = true;
        }
    }
    report_buf_printf(b, "];\n");
}

/* The DOT id an edge carrying `v` starts from: its producing node in `g`,
 * or its host box; false when neither is drawn. */
static bool edge_source(const ir_value *v, const ir_graph *g, const report_copy *c, size_t n_copies, char *id,
                        size_t size) {
    if (v->producer && v->producer->graph == g) snprintf(id, size, "n%zu", v->producer->index);
    else if (host_box(v, c, n_copies)) snprintf(id, size, "v%zu", v->index);
    else return false;
    return true;
}

static void dot_edges(report_buf *b, const partition *p, const ir_graph *g, const report_copy *c, size_t n_copies) {
    /* A copy is labelled once however many nodes of its piece read it. */
    bool *labelled = calloc(n_copies + 1, sizeof *labelled);
    if (!labelled) {
        b->failed = true;
        return;
    }
    for (size_t i = 0; i < p->n_pieces; i++) {
        const struct tsr_graph *v = p->pieces[i].view;
        for (size_t k = 0; k < v->n_nodes; k++) {
            const ir_node *n = v->nodes[k];
            char to_id[32], from_id[32];
            snprintf(to_id, sizeof to_id, "n%zu", n->index);
            for (size_t j = 0; j < n->n_inputs; j++) {
                const ir_value *iv = n->inputs[j];
                if (!iv) continue;
                /* The same value read twice by one node: one edge. */
                bool again = false;
                for (size_t q = 0; q < j; q++) again = again || n->inputs[q] == iv;
                if (again || !edge_source(iv, g, c, n_copies, from_id, sizeof from_id)) continue;
                const report_copy *copy = copy_into(c, n_copies, iv, i);
                dot_edge(b, from_id, to_id, iv, copy, copy ? &labelled[copy - c] : NULL);
            }
        }
    }
    for (size_t o = 0; o < g->n_outputs; o++) {
        const ir_value *ov = g->outputs[o];
        char from_id[32], to_id[32];
        snprintf(to_id, sizeof to_id, "o%zu", o);
        if (!edge_source(ov, g, c, n_copies, from_id, sizeof from_id)) continue;
        const report_copy *copy = copy_into(c, n_copies, ov, REPORT_HOST);
        dot_edge(b, from_id, to_id, ov, copy, copy ? &labelled[copy - c] : NULL);
    }
    free(labelled);
}

static void dot_host_boxes(report_buf *b, const ir_graph *g, const report_copy *c, size_t n) {
    for (size_t i = 0; i < g->n_values; i++) {
        const ir_value *v = g->values[i];
        if (!host_box(v, c, n)) continue;
        report_buf_printf(b, "  \"v%zu\" [shape=box, style=\"\", label=\"%s\\n", v->index,
                          v->constant ? "initializer" : "input");
        dot_text(b, v->name);
        report_buf_printf(b, "\"];\n");
    }
    for (size_t o = 0; o < g->n_outputs; o++) {
        report_buf_printf(b, "  \"o%zu\" [shape=box, style=\"\", label=\"output\\n", o);
        dot_text(b, g->outputs[o]->name);
        report_buf_printf(b, "\"];\n");
    }
}

static void dot_legend(report_buf *b, provider_inst *const *provs, size_t n_provs) {
    report_buf_printf(b, "  subgraph \"cluster_legend\" {\n    label=\"providers\"; color=\"#a0a0a0\";\n");
    for (size_t i = 0; i < n_provs; i++) {
        report_buf_printf(b, "    \"legend%zu\" [label=\"", i);
        dot_text(b, provs[i]->name);
        report_buf_printf(b, "%s\", fillcolor=\"%s\"];\n",
                          provs[i]->memory_kind == TSR_MEMORY_DEVICE ? "\\n(device memory)" : "", colour(i));
    }
    report_buf_printf(b,
                      "    \"legend_copy_a\" [label=\"\", shape=point, style=\"\"];\n"
                      "    \"legend_copy_b\" [label=\"\", shape=point, style=\"\"];\n"
                      "    \"legend_copy_a\" -> \"legend_copy_b\" [style=dashed, color=red, fontcolor=red,"
                      " label=\"copy between memories\"];\n"
                      "  }\n");
}

char *partition_dot(const partition *p, const ir_graph *g, provider_inst *const *provs, size_t n_provs,
                    report_bodies_fn bodies) {
    report_copy *copies = NULL;
    size_t n_copies = 0;
    if (!report_copies(p, provs, &copies, &n_copies)) return NULL;
    report_buf b = {0};
    report_buf_printf(&b, "digraph \"");
    dot_text(&b, g->name && g->name[0] ? g->name : "model");
    report_buf_printf(&b,
                      "\" {\n  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fontsize=10];\n"
                      "  edge [fontsize=9];\n");
    dot_legend(&b, provs, n_provs);
    unsigned next_body = 0;
    dot_pieces(&b, p, provs, bodies, "", &next_body, 0);
    dot_host_boxes(&b, g, copies, n_copies);
    dot_edges(&b, p, g, copies, n_copies);
    report_buf_printf(&b, "}\n");
    free(copies);
    return report_buf_finish(&b);
}
