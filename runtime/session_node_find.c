/* tsr_session_node_find: a node of the main graph by name, or one inside a
 * control-flow body by its path, "NODE/ATTRIBUTE/BODY_NODE" (bodies nest:
 * "loop0/body/if0/then_branch/relu"), as the reports and profiles name it.
 * The core plans each body when the session is made, so the provider and
 * piece of a body node are known without running. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "control_flow.h"
#include "session.h"
#include "status.h"

typedef struct found {
    const ir_node *node;
    const graph_plan *plan;
    size_t piece;
} found;

/* Bodies nest at most as deep as the loader lets graphs nest; this bounds
 * the walk whatever the path says. */
#define FIND_MAX_DEPTH 256

static bool find_in(const tsr_session *s, const graph_plan *plan, const char *path, int depth, found *out) {
    const partition *part = &plan->part;
    for (size_t p = 0; p < part->n_pieces; p++) {
        const struct tsr_graph *v = part->pieces[p].view;
        for (size_t k = 0; k < v->n_nodes; k++) {
            const ir_node *n = v->nodes[k];
            if (strcmp(n->name, path) == 0 || (n->origin && strcmp(n->origin, path) == 0)) {
                *out = (found){n, plan, p};
                return true;
            }
        }
    }
    if (depth >= FIND_MAX_DEPTH) return false;
    for (size_t p = 0; p < part->n_pieces; p++) {
        const piece *pc = &part->pieces[p];
        if (s->provs[pc->prov_index]->plugin != control_flow_plugin() || !pc->compiled) continue;
        const cf_piece *cp = pc->compiled;
        size_t len = strlen(cp->node->name);
        if (strncmp(path, cp->node->name, len) != 0 || path[len] != '/') continue;
        const char *rest = path + len + 1;
        bool is_if = strcmp(cp->node->op_type, "If") == 0;
        for (size_t b = 0; b < cp->n_plans; b++) {
            const char *attr = is_if ? (b ? "else_branch" : "then_branch") : "body";
            size_t alen = strlen(attr);
            if (strncmp(rest, attr, alen) == 0 && rest[alen] == '/' &&
                find_in(s, &cp->plans[b], rest + alen + 1, depth + 1, out))
                return true;
        }
    }
    return false;
}

/* Index of the node's output and input names, kept by the session (they
 * live as long as it), or SIZE_MAX when out of memory. */
static size_t keep_names(tsr_session *s, const ir_node *n) {
    for (size_t i = 0; i < s->n_found; i++)
        if (s->found_nodes[i] == n) return i;
    const char **outs = session_value_names(n->outputs, n->n_outputs);
    const char **ins = session_value_names(n->inputs, n->n_inputs);
    const ir_node **nodes = realloc(s->found_nodes, (s->n_found + 1) * sizeof *nodes);
    if (nodes) s->found_nodes = nodes;
    const char ***out_lists = realloc(s->found_outputs, (s->n_found + 1) * sizeof *out_lists);
    if (out_lists) s->found_outputs = out_lists;
    const char ***in_lists = realloc(s->found_inputs, (s->n_found + 1) * sizeof *in_lists);
    if (in_lists) s->found_inputs = in_lists;
    if (!outs || !ins || !nodes || !out_lists || !in_lists) {
        free(outs);
        free(ins);
        return SIZE_MAX;
    }
    s->found_nodes[s->n_found] = n;
    s->found_outputs[s->n_found] = outs;
    s->found_inputs[s->n_found] = ins;
    return s->n_found++;
}

tsr_status *tsr_session_node_find(const tsr_session *cs, const char *path, tsr_node_info *out) {
    tsr_session *s = (tsr_session *)cs; /* keeps the output lists it hands out */
    if (!s || !path || !out) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "session, path and out are required");
    if (out->struct_size < offsetof(tsr_node_info, outputs) + sizeof out->outputs)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "tsr_node_info.struct_size not set");
    pthread_mutex_lock(&s->lock);
    found f;
    tsr_status *st = NULL;
    if (!find_in(s, &s->main, path, 0, &f)) {
        st = tsr_error(TSR_ERR_INVALID_ARGUMENT,
                       "no node '%s' in the model or its control-flow bodies (a body node is "
                       "NODE/then_branch|else_branch|body/NAME)",
                       path);
    } else {
        size_t k = keep_names(s, f.node);
        if (k == SIZE_MAX) {
            st = TSR_NO_MEMORY();
        } else {
            session_node_info_fill(f.node, s->found_outputs[k], s->found_inputs[k], out);
            out->provider = s->provs[f.plan->part.pieces[f.piece].prov_index]->name;
            out->piece = f.piece;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return st;
}
