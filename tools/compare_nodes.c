/*
 * Finding the node where two runs part ways.
 *
 * Divergence spreads: once one node's output is off, every node downstream
 * of it is off too, so "the nodes over tolerance" is a long list whose first
 * member in topological order is usually, but not always, the culprit. A
 * node *introduces* a divergence when its outputs are over tolerance while
 * every input it reads was either a graph input, initializer or Constant output (identical
 * in both runs) or an observed value within tolerance. The first such node
 * is the answer; when there is none (the culprit's inputs could not be
 * observed) the first divergent node is reported with that caveat.
 */
#include <string.h>

#include "compare_tool.h"

/* Linear lookups: a few thousand names at most, each looked up a handful of
 * times, is cheap next to running the model. */
static const cmpx_stats *observed(const cmpx_observed *obs, const char *name) {
    for (size_t i = 0; *name && i < obs->count; i++)
        if (strcmp(obs->names[i], name) == 0) return &obs->stats[i];
    return NULL;
}

/* A Constant node's output is the same in both runs, like an initializer
 * (exporters write weights that way), so it is not "unobserved". */
static bool made_by_a_node(const cmpx_model *m, const char *name) {
    for (size_t i = 0; *name && i < m->node_count; i++)
        for (size_t k = 0; k < m->nodes[i].output_count; k++)
            if (!(strcmp(m->nodes[i].op_type, "Constant") == 0 && !*m->nodes[i].domain) &&
                strcmp(m->nodes[i].outputs[k], name) == 0)
                return true;
    return false;
}

void cmpx_node_label(const cmpx_model *m, size_t i, char *buf, size_t size) {
    const cmpx_node *n = &m->nodes[i];
    if (*n->name)
        snprintf(buf, size, "%s", n->name);
    else
        snprintf(buf, size, "#%zu %s (-> %s)", i, n->op_type,
                 n->output_count ? n->outputs[0] : "nothing");
}

typedef struct node_verdict {
    bool seen, divergent, inputs_differed, inputs_unobserved;
    double inputs_max_abs;
    cmpx_stats stats;
    const char *worst_output;
} node_verdict;

static void judge_node(const cmpx_model *m, const cmpx_observed *obs, size_t i, node_verdict *v) {
    const cmpx_node *n = &m->nodes[i];
    memset(v, 0, sizeof *v);
    v->stats.comparable = true;
    size_t worst = 0;
    bool worst_bad = false;
    for (size_t k = 0; k < n->output_count; k++) {
        const cmpx_stats *s = observed(obs, n->outputs[k]);
        if (!s) continue;
        if (!v->worst_output) v->worst_output = n->outputs[k];
        if (!cmpx_agrees(s) && (!worst_bad || s->mismatches > worst)) {
            v->worst_output = n->outputs[k];
            worst = s->mismatches;
            worst_bad = true;
        }
        v->seen = true;
        cmpx_stats_merge(&v->stats, s);
    }
    if (!v->seen) return;
    v->divergent = !cmpx_agrees(&v->stats);
    for (size_t k = 0; k < n->input_count; k++) {
        const char *in = n->inputs[k];
        const cmpx_stats *s = observed(obs, in);
        if (s) {
            if (!cmpx_agrees(s)) v->inputs_differed = true;
            if (s->max_abs > v->inputs_max_abs) v->inputs_max_abs = s->max_abs;
        } else if (made_by_a_node(m, in)) {
            v->inputs_unobserved = true;
        }
    }
}

static void report(cmpx_divergence *out, size_t i, const node_verdict *v) {
    out->found = true;
    out->node = i;
    out->output = v->worst_output;
    out->stats = v->stats;
    out->inputs_differed = v->inputs_differed;
    out->inputs_unobserved = v->inputs_unobserved;
    out->inputs_max_abs = v->inputs_max_abs;
}

void cmpx_find_divergence(const cmpx_model *m, const cmpx_observed *obs, cmpx_divergence *out) {
    memset(out, 0, sizeof *out);
    bool have_introducer = false;
    for (size_t i = 0; i < m->node_count; i++) {
        node_verdict v;
        judge_node(m, obs, i, &v);
        if (!v.seen) continue;
        out->compared++;
        bool differs = v.stats.max_abs > 0 || v.stats.mismatches > 0;
        if (differs && !out->has_earliest && !v.inputs_differed && !v.inputs_unobserved &&
            v.inputs_max_abs == 0) {
            out->has_earliest = true;
            out->earliest = i;
            out->earliest_max_abs = v.stats.max_abs;
        }
        if (!v.divergent) continue;
        out->divergent++;
        bool introduces = !v.inputs_differed && !v.inputs_unobserved;
        if (introduces) {
            if (out->listed_count < CMPX_LISTED) out->listed[out->listed_count++] = i;
            out->introducing++;
        }
        if (introduces && !have_introducer) {
            have_introducer = true;
            report(out, i, &v);
        } else if (!out->found) {
            report(out, i, &v); /* kept unless an introducer turns up */
        }
    }
}
