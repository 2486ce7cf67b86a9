/* Observing values inside control-flow bodies (observe_all): every node
 * output of every body is kept as a piece boundary, and a run can hand back
 * a body value asked for by path ("loop0/body/if0/then_branch/r") as a
 * sequence with one item per time its body ran, nested one level per
 * enclosing body, so that each item says in which iteration it was made
 * (tessera.h, "Values inside control-flow bodies"). Comparing providers node
 * by node needs this where the heavy work sits in a Loop or If body. */
#include <stdlib.h>
#include <string.h>

#include "control_flow.h"
#include "run_budget.h"
#include "session.h"
#include "status.h"

/* Bodies nest at most as deep as the loader lets graphs nest. */
#define BODY_MAX_DEPTH 256

static void observe_graph(ir_graph *g, int depth) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        ir_node *n = g->nodes[i];
        for (size_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k]) n->outputs[k]->observed = true;
        for (size_t a = 0; a < n->n_attrs && depth < BODY_MAX_DEPTH; a++) {
            if (n->attrs[a].g) observe_graph(n->attrs[a].g, depth + 1);
            for (size_t k = 0; n->attrs[a].graphs && k < n->attrs[a].count; k++)
                if (n->attrs[a].graphs[k]) observe_graph(n->attrs[a].graphs[k], depth + 1);
        }
    }
}

void session_observe_every_value(ir_graph *g) { observe_graph(g, 0); }

/* --- finding a body value by path ----------------------------------------- */
/* Adds the body prefix path[0..len) as level `depth` of w. */
static bool add_prefix(body_want *w, const char *path, size_t len) {
    char **grown = realloc(w->prefixes, (w->depth + 1) * sizeof *grown);
    if (!grown) return false;
    w->prefixes = grown;
    if (!(grown[w->depth] = strndup(path, len))) return false;
    w->depth++;
    return true;
}

/* `rest` is what follows the prefix path[0..rest-path) of a body of `plan`'s
 * graph: a value made by one of its nodes, or a path into a nested body. */
static bool find_value(const tsr_session *s, const graph_plan *plan, const char *path, const char *rest, int depth,
                       body_want *w, bool *oom) {
    const ir_value *v = depth ? ir_graph_find(plan->g, rest) : NULL;
    if (v && v->observed && v->producer && v->producer->graph == plan->g) {
        w->value = v;
        return true;
    }
    if (depth >= BODY_MAX_DEPTH) return false;
    const partition *part = &plan->part;
    for (size_t p = 0; p < part->n_pieces; p++) {
        const piece *pc = &part->pieces[p];
        if (s->provs[pc->prov_index]->plugin != control_flow_plugin() || !pc->compiled) continue;
        const cf_piece *cp = pc->compiled;
        size_t len = strlen(cp->node->name);
        if (strncmp(rest, cp->node->name, len) != 0 || rest[len] != '/') continue;
        const char *after = rest + len + 1;
        bool is_if = strcmp(cp->node->op_type, "If") == 0;
        for (size_t b = 0; b < cp->n_plans; b++) {
            const char *attr = is_if ? (b ? "else_branch" : "then_branch") : "body";
            size_t alen = strlen(attr);
            if (strncmp(after, attr, alen) != 0 || after[alen] != '/') continue;
            size_t level = w->depth;
            if (!add_prefix(w, path, (size_t)(after + alen + 1 - path))) {
                *oom = true;
                return false;
            }
            if (find_value(s, &cp->plans[b], path, after + alen + 1, depth + 1, w, oom)) return true;
            if (*oom) return false;
            while (w->depth > level) free(w->prefixes[--w->depth]);
        }
    }
    return false;
}

void body_want_free(body_want *w) {
    for (size_t i = 0; w && i < w->depth; i++) free(w->prefixes[i]);
    if (w) free(w->prefixes);
}

tsr_status *session_body_want(const tsr_session *s, const char *path, rt_tensor *slot, body_want *out) {
    memset(out, 0, sizeof *out);
    bool oom = false;
    if (!find_value(s, &s->main, path, path, 0, out, &oom)) {
        body_want_free(out);
        memset(out, 0, sizeof *out);
        return oom ? TSR_NO_MEMORY() : NULL;
    }
    /* The outermost sequence exists before the run: a body that never runs
     * gives an empty one. */
    int32_t et = out->value->type.kind == IR_TYPE_TENSOR ? out->value->type.elem_type : 0;
    tsr_value *seq;
    tsr_status *st = value_new_sequence(et, &seq);
    if (!st) st = rt_tensor_take_value(slot, seq);
    if (st) {
        body_want_free(out);
        memset(out, 0, sizeof *out);
    }
    return st;
}

/* --- collecting items while the run goes ------------------------------------ */
/* The innermost open sequence at nesting level `level` (0: the outermost)
 * of w's result: the last item at each level above. */
static tsr_value *open_level(tsr_value *top, size_t level) {
    tsr_value *v = top;
    for (size_t i = 0; v && i < level; i++) v = v->kind == TSR_VALUE_SEQUENCE && v->n ? v->items[v->n - 1] : NULL;
    return v && v->kind == TSR_VALUE_SEQUENCE ? v : NULL;
}

void session_body_begin(void *user, const char *path) {
    run_observer *ro = user;
    for (size_t w = 0; w < ro->n_wanted && ro->any_body_wanted && !ro->error; w++) {
        const body_want *bw = &ro->bodies[w];
        /* A run of an enclosing body (not the value's own) opens a level. */
        for (size_t j = 0; bw->value && j + 1 < bw->depth; j++) {
            if (strcmp(bw->prefixes[j], path) != 0) continue;
            tsr_value *parent = open_level(ro->got[w].value, j), *seq = NULL;
            int32_t et = ro->got[w].value->elem_type;
            ro->error = parent ? value_new_sequence(et, &seq)
                               : tsr_error(TSR_ERR_RUNTIME, "body '%s' ran outside its enclosing body", path);
            if (!ro->error) ro->error = value_append(parent, seq);
            break;
        }
    }
}

/* A copy of `src` in host memory, as a value, and its bytes. */
static tsr_status *host_copy(const rt_tensor *src, run_budget *budget, tsr_value **out, uint64_t *bytes) {
    rt_tensor tmp;
    memset(&tmp, 0, sizeof tmp);
    TSR_TRY(run_budget_copy(&tmp, src, NULL, 0, budget, "a copy of an observed body value"));
    *bytes = run_budget_slot_bytes(&tmp);
    tsr_status *st = NULL;
    if (tmp.value) {
        *out = tmp.value;
        tmp.value = NULL;
    } else if (tmp.host && tmp.host->view.data == tmp.view.data) {
        st = value_wrap_tensor(tmp.host, out);
        tmp.host = NULL;
    } else {
        ir_tensor *t;
        st = ir_tensor_clone(&tmp.view, &t);
        if (!st) st = value_wrap_tensor(t, out);
    }
    rt_tensor_release(&tmp); /* its charge goes back; the caller charges the value */
    return st;
}

void session_body_piece_done(run_observer *ro, const struct tsr_graph *v, const rt_tensor *slots) {
    for (size_t w = 0; w < ro->n_wanted && !ro->error; w++) {
        const body_want *bw = &ro->bodies[w];
        if (!bw->value) continue;
        for (size_t k = 0; k < v->n_outputs && !ro->error; k++) {
            if (v->outputs[k] != bw->value) continue;
            tsr_value *seq = open_level(ro->got[w].value, bw->depth - 1), *item = NULL;
            uint64_t bytes = 0;
            if (!seq) {
                ro->error =
                    tsr_error(TSR_ERR_RUNTIME, "body value '%s' made outside its enclosing body", bw->value->name);
                break;
            }
            ro->error = host_copy(&slots[v->outputs[k]->index], ro->budget, &item, &bytes);
            if (!ro->error) ro->error = value_append(seq, item);
            if (!ro->error)
                ro->error = run_budget_charge(&ro->got[w], ro->budget, bytes, "a copy of an observed body value");
        }
    }
}
