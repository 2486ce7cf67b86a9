/*
 * The nodes `compare --per-node` walks: the main graph's and, inside them,
 * the nodes of If, Loop, Scan and SequenceMap bodies, each named by path as
 * the library names it ("loop0/body/if0/then_branch/relu";
 * tsr_session_node_find), so a difference that starts inside a body is
 * pinned on the body node, not on the control-flow node holding it.
 *
 * A body's nodes come before the node holding it: the node's outputs are
 * made by its body, so when both differ the body node is the earlier cause.
 */
#include <stdlib.h>
#include <string.h>

#include "compare_tool.h"

bool cmpx_is_control_flow(const cmpx_node *n) {
    return !*n->domain &&
        (strcmp(n->op_type, "If") == 0 || strcmp(n->op_type, "Loop") == 0 || strcmp(n->op_type, "Scan") == 0 ||
         strcmp(n->op_type, "SequenceMap") == 0);
}

static bool push_site(cmpx_sites *s, const cmpx_site *site) {
    cmpx_site *grown = realloc(s->items, (s->count + 1) * sizeof *grown);
    if (!grown) return false;
    s->items = grown;
    s->items[s->count++] = *site;
    return true;
}

static bool add_graph(cmpx_sites *s, const cmpx_node *nodes, size_t count, const char *prefix, const cmpx_body *body,
                      size_t depth);

/* Node `i` of a graph: its bodies' nodes, then itself. */
static bool add_node(cmpx_sites *s, const cmpx_node *n, size_t i, const char *prefix, const cmpx_body *body,
                     size_t depth) {
    size_t first = s->count;
    for (size_t b = 0; cmpx_is_control_flow(n) && depth < CMPX_MAX_DEPTH && b < n->body_count; b++) {
        const cmpx_body *bd = &n->bodies[b];
        size_t len = strlen(prefix) + strlen(n->name) + strlen(bd->attribute) + 3;
        char *inner = malloc(len);
        if (!inner) return false;
        snprintf(inner, len, "%s%s/%s/", prefix, n->name, bd->attribute);
        bool ok = add_graph(s, bd->nodes, bd->node_count, inner, bd, depth + 1);
        free(inner);
        if (!ok) return false;
    }
    cmpx_site site = {n, strdup(prefix), i, SIZE_MAX, body, depth};
    if (!site.prefix || !push_site(s, &site)) {
        free(site.prefix);
        return false;
    }
    /* the direct children learn their parent now that it has an index */
    for (size_t k = first; k + 1 < s->count; k++)
        if (s->items[k].depth == depth + 1 && s->items[k].parent == SIZE_MAX) s->items[k].parent = s->count - 1;
    return true;
}

static bool add_graph(cmpx_sites *s, const cmpx_node *nodes, size_t count, const char *prefix, const cmpx_body *body,
                      size_t depth) {
    for (size_t i = 0; i < count; i++)
        if (!add_node(s, &nodes[i], i, prefix, body, depth)) return false;
    return true;
}

bool cmpx_sites_build(const cmpx_model *m, cmpx_sites *out) {
    memset(out, 0, sizeof *out);
    out->model = m;
    if (add_graph(out, m->nodes, m->node_count, "", NULL, 0)) return true;
    cmpx_sites_free(out);
    return false;
}

void cmpx_sites_free(cmpx_sites *s) {
    for (size_t i = 0; i < s->count; i++) free(s->items[i].prefix);
    free(s->items);
    memset(s, 0, sizeof *s);
}

void cmpx_site_label(const cmpx_sites *s, size_t i, char *buf, size_t size) {
    const cmpx_site *site = &s->items[i];
    const cmpx_node *n = site->node;
    if (*n->name) snprintf(buf, size, "%s%s", site->prefix, n->name);
    else
        snprintf(buf, size, "%s#%zu %s (-> %s)", site->prefix, site->index, n->op_type,
                 n->output_count ? n->outputs[0] : "nothing");
}

void cmpx_chain_text(const cmpx_sites *s, size_t site, const size_t *chain, size_t depth, char *buf, size_t size) {
    /* The levels, innermost first, named by the node that holds each body;
     * an If branch runs once per run of its If, so it adds nothing. */
    size_t used = 0;
    buf[0] = 0;
    size_t level = depth;
    for (size_t p = s->items[site].parent; p != SIZE_MAX && level > 0; p = s->items[p].parent) {
        level--;
        const cmpx_node *holder = s->items[p].node;
        if (strcmp(holder->op_type, "If") == 0) continue;
        char label[512];
        cmpx_site_label(s, p, label, sizeof label);
        int n = snprintf(buf + used, size - used, "%s%s %zu of %s", used ? ", " : "",
                         strcmp(holder->op_type, "SequenceMap") == 0 ? "item" : "iteration", chain[level], label);
        if (n < 0 || (size_t)n >= size - used) break;
        used += (size_t)n;
    }
}
