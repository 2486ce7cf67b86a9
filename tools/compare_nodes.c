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
 *
 * Inside a control-flow body a node runs once per run of its body (per
 * iteration), so it is judged run by run: its first run whose outputs are
 * over tolerance, against what it read in that run. What a body node reads
 * is a value of its own body in the same run, a body input (a Loop's or
 * Scan's carried value: the loop's input in the first iteration, the
 * body's matching output of the previous iteration after that; a scanned
 * slice or SequenceMap item: judged by the whole input), or a value of an
 * enclosing graph in the run that holds this one.
 */
#include <stdlib.h>
#include <string.h>

#include "compare_tool.h"

/* A place where names resolve: the main graph or one body. */
typedef struct scope {
    size_t holder;         /* the site of the node holding the body, or SIZE_MAX */
    const cmpx_body *body; /* NULL: the main graph */
    const char *prefix;
    size_t depth;
} scope;

typedef enum ref_kind { REF_SAME, REF_OBSERVED, REF_UNOBSERVED } ref_kind;

/* What a name read in a given run was. */
typedef struct value_ref {
    ref_kind kind;
    const cmpx_stats *stats; /* REF_OBSERVED */
    const tsr_value *base;   /* the baseline's value, where it exists as a whole */
    const char *graph_name;  /* REF_SAME: the main graph's input or initializer read */
} value_ref;

typedef struct walker {
    const cmpx_sites *sites;
    const cmpx_observed *obs;
} walker;

/* Carried values passed from iteration to iteration are followed back at
 * most this many times (a value a loop only passes on). */
#define MAX_HOPS 64

static scope site_scope(const cmpx_sites *s, size_t site) {
    const cmpx_site *x = &s->items[site];
    return (scope){x->parent, x->body, x->prefix, x->depth};
}

/* Linear lookups: a few thousand names at most, each looked up a handful of
 * times, is cheap next to running the model. */
static size_t observed_index(const cmpx_observed *obs, const char *prefix, const char *name) {
    size_t plen = strlen(prefix);
    for (size_t i = 0; *name && i < obs->count; i++)
        if (strncmp(obs->names[i], prefix, plen) == 0 && strcmp(obs->names[i] + plen, name) == 0) return i;
    return SIZE_MAX;
}

/* 0: no node of the graph makes it; 1: a Constant node (the same in both
 * runs, like an initializer: exporters write weights that way); 2: another
 * node. */
static int made_in(const cmpx_node *nodes, size_t count, const char *name) {
    for (size_t i = 0; *name && i < count; i++)
        for (size_t k = 0; k < nodes[i].output_count; k++)
            if (strcmp(nodes[i].outputs[k], name) == 0)
                return strcmp(nodes[i].op_type, "Constant") == 0 && !*nodes[i].domain ? 1 : 2;
    return 0;
}

static size_t index_in(char *const *list, size_t count, const char *name) {
    for (size_t i = 0; i < count; i++)
        if (strcmp(list[i], name) == 0) return i;
    return SIZE_MAX;
}

static value_ref resolve(const walker *w, scope sc, const char *name, const size_t *chain, int hops);

/* A value the holding node takes from the enclosing graph, read by the
 * body as a whole input (slice or item): judged by the whole value. */
static value_ref whole_input(const walker *w, scope up, const cmpx_node *h, size_t i, const size_t *chain, int hops) {
    value_ref r = i < h->input_count ? resolve(w, up, h->inputs[i], chain, hops + 1)
                                     : (value_ref){REF_UNOBSERVED, NULL, NULL, NULL};
    r.base = NULL; /* the body saw a part of it */
    r.graph_name = NULL;
    return r;
}

/* Body input `j` of the body in `sc`, in the run `chain`. */
static value_ref body_input(const walker *w, scope sc, size_t j, const size_t *chain, int hops) {
    const cmpx_site *hs = &w->sites->items[sc.holder];
    const cmpx_node *h = hs->node;
    const cmpx_body *b = sc.body;
    scope up = {hs->parent, hs->body, hs->prefix, hs->depth};
    size_t last = chain[sc.depth - 1];
    size_t prev[CMPX_MAX_DEPTH];
    memcpy(prev, chain, sc.depth * sizeof *prev);
    prev[sc.depth - 1] = last ? last - 1 : 0;
    value_ref same = {REF_SAME, NULL, NULL, NULL}, unknown = {REF_UNOBSERVED, NULL, NULL, NULL};
    if (hops > MAX_HOPS) return unknown;
    if (strcmp(h->op_type, "Loop") == 0) {
        /* inputs: iteration number, condition, carried values; outputs:
         * condition, carried values, scan outputs */
        if (j == 0) return same;
        if (last == 0) return j < h->input_count ? resolve(w, up, h->inputs[j], chain, hops + 1) : same;
        return j - 1 < b->output_count ? resolve(w, sc, b->outputs[j - 1], prev, hops + 1) : unknown;
    }
    if (strcmp(h->op_type, "Scan") == 0) {
        size_t n_scan = h->num_scan_inputs > 0 ? (size_t)h->num_scan_inputs : 0;
        if (h->input_count != b->input_count || n_scan > b->input_count)
            return unknown; /* opset 8 (batched, sequence_lens first) or malformed */
        if (j >= b->input_count - n_scan) return whole_input(w, up, h, j, chain, hops);
        if (last == 0) return resolve(w, up, h->inputs[j], chain, hops + 1);
        return j < b->output_count ? resolve(w, sc, b->outputs[j], prev, hops + 1) : unknown;
    }
    if (strcmp(h->op_type, "SequenceMap") == 0) return whole_input(w, up, h, j, chain, hops);
    return unknown;
}

/* What `name`, read in scope `sc` during the run `chain` (sc.depth
 * entries), was. */
static value_ref resolve(const walker *w, scope sc, const char *name, const size_t *chain, int hops) {
    value_ref same = {REF_SAME, NULL, NULL, NULL}, unknown = {REF_UNOBSERVED, NULL, NULL, NULL};
    if (!*name) return same;
    size_t oi = observed_index(w->obs, sc.prefix, name);
    if (oi != SIZE_MAX) {
        const cmpx_series *s = &w->obs->series[oi];
        size_t it = s->depth == sc.depth ? cmpx_series_find(s, chain) : SIZE_MAX;
        if (it == SIZE_MAX) return unknown;
        return (value_ref){REF_OBSERVED, &s->stats[it], s->base[it], NULL};
    }
    const cmpx_model *m = w->sites->model;
    int made = sc.body ? made_in(sc.body->nodes, sc.body->node_count, name) : made_in(m->nodes, m->node_count, name);
    if (made) return made == 1 ? same : unknown;
    if (!sc.body) { /* a graph input or an initializer */
        same.graph_name = name;
        return same;
    }
    if (index_in(sc.body->initializers, sc.body->initializer_count, name) != SIZE_MAX) return same;
    size_t j = index_in(sc.body->inputs, sc.body->input_count, name);
    if (j != SIZE_MAX) return body_input(w, sc, j, chain, hops);
    /* a value of an enclosing graph, in the run that holds this one */
    if (hops > MAX_HOPS) return unknown;
    return resolve(w, site_scope(w->sites, sc.holder), name, chain, hops + 1);
}

const tsr_value *cmpx_baseline_input(const cmpx_sites *sites, const cmpx_observed *obs, size_t site,
                                     const size_t *chain, const char *name, const char **graph_name) {
    walker w = {sites, obs};
    value_ref r = resolve(&w, site_scope(sites, site), name, chain, 0);
    *graph_name = r.kind == REF_SAME ? r.graph_name : NULL;
    return r.kind == REF_OBSERVED ? r.base : NULL;
}

/* --- judging a node, run by run ------------------------------------------- */
typedef struct node_verdict {
    bool seen, divergent, inputs_differed, inputs_unobserved;
    double inputs_max_abs;
    cmpx_stats stats;
    const char *worst_output;
} node_verdict;

/* Its outputs' figures in the run `chain`; outs[k] is output k's series
 * (SIZE_MAX: not observed). */
static void judge_outputs(const walker *w, const size_t *outs, size_t count, const size_t *chain, node_verdict *v) {
    memset(v, 0, sizeof *v);
    v->stats.comparable = true;
    size_t worst = 0;
    bool worst_bad = false;
    for (size_t k = 0; k < count; k++) {
        if (outs[k] == SIZE_MAX) continue;
        const cmpx_series *ser = &w->obs->series[outs[k]];
        size_t it = cmpx_series_find(ser, chain);
        if (it == SIZE_MAX) continue;
        const cmpx_stats *s = &ser->stats[it];
        const char *name = w->obs->names[outs[k]];
        if (!v->worst_output) v->worst_output = name;
        if (!cmpx_agrees(s) && (!worst_bad || s->mismatches > worst)) {
            v->worst_output = name;
            worst = s->mismatches;
            worst_bad = true;
        }
        v->seen = true;
        cmpx_stats_merge(&v->stats, s);
    }
    v->divergent = v->seen && !cmpx_agrees(&v->stats);
}

static void judge_inputs(const walker *w, size_t site, const size_t *chain, node_verdict *v) {
    const cmpx_node *n = w->sites->items[site].node;
    scope sc = site_scope(w->sites, site);
    for (size_t k = 0; k < n->input_count; k++) {
        value_ref r = resolve(w, sc, n->inputs[k], chain, 0);
        if (r.kind == REF_OBSERVED) {
            if (!cmpx_agrees(r.stats)) v->inputs_differed = true;
            if (r.stats->max_abs > v->inputs_max_abs) v->inputs_max_abs = r.stats->max_abs;
        } else if (r.kind == REF_UNOBSERVED) {
            v->inputs_unobserved = true;
        }
    }
}

static void report(cmpx_divergence *out, size_t i, const size_t *chain, size_t depth, const node_verdict *v) {
    out->found = true;
    out->node = i;
    memset(out->chain, 0, sizeof out->chain);
    memcpy(out->chain, chain, depth * sizeof *chain);
    out->output = v->worst_output;
    out->stats = v->stats;
    out->inputs_differed = v->inputs_differed;
    out->inputs_unobserved = v->inputs_unobserved;
    out->inputs_max_abs = v->inputs_max_abs;
}

/* The runs of site `i` (its first observed output's items), or NULL. */
static const cmpx_series *runs_of(const walker *w, size_t i, size_t *outs) {
    const cmpx_site *site = &w->sites->items[i];
    const cmpx_series *runs = NULL;
    for (size_t k = 0; k < site->node->output_count; k++) {
        outs[k] = observed_index(w->obs, site->prefix, site->node->outputs[k]);
        if (outs[k] != SIZE_MAX && w->obs->series[outs[k]].depth != site->depth) outs[k] = SIZE_MAX;
        if (!runs && outs[k] != SIZE_MAX) runs = &w->obs->series[outs[k]];
    }
    return runs;
}

void cmpx_find_divergence(const cmpx_sites *sites, const cmpx_observed *obs, cmpx_divergence *out) {
    memset(out, 0, sizeof *out);
    walker w = {sites, obs};
    bool have_introducer = false;
    size_t most_outputs = 0;
    for (size_t i = 0; i < sites->count; i++)
        if (sites->items[i].node->output_count > most_outputs) most_outputs = sites->items[i].node->output_count;
    /* per site: some node inside its bodies diverged (sites come after their bodies) */
    bool *body_diverged = calloc(sites->count + 1, sizeof *body_diverged);
    size_t *outs = calloc(most_outputs + 1, sizeof *outs);
    if (!body_diverged || !outs) {
        free(body_diverged);
        free(outs);
        return; /* out of memory: nothing found */
    }
    for (size_t i = 0; i < sites->count; i++) {
        const cmpx_site *site = &sites->items[i];
        const cmpx_series *runs = runs_of(&w, i, outs);
        if (!runs || !runs->count) continue;
        out->compared++;
        /* The first run over tolerance decides; earlier runs may still be
         * where differences start. */
        node_verdict v = {0};
        const size_t *at = NULL;
        for (size_t r = 0; r < runs->count; r++) {
            const size_t *chain = &runs->chains[r * runs->depth];
            node_verdict rv;
            judge_outputs(&w, outs, site->node->output_count, chain, &rv);
            if (!rv.seen) continue;
            bool differs = rv.stats.max_abs > 0 || rv.stats.mismatches > 0;
            /* inputs matter for where differences start and for a run over
             * tolerance; a long loop's other runs are not judged */
            if (!rv.divergent && (!differs || out->has_earliest)) continue;
            judge_inputs(&w, i, chain, &rv);
            if (differs && !out->has_earliest && !rv.inputs_differed && !rv.inputs_unobserved &&
                rv.inputs_max_abs == 0) {
                out->has_earliest = true;
                out->earliest = i;
                memcpy(out->earliest_chain, chain, runs->depth * sizeof *chain);
                out->earliest_max_abs = rv.stats.max_abs;
            }
            if (rv.divergent) {
                v = rv;
                at = chain;
                break;
            }
        }
        if (!at) continue;
        out->divergent++;
        /* a node holding a body whose node diverged passes that on */
        bool from_body = body_diverged[i];
        for (size_t p = site->parent; p != SIZE_MAX; p = sites->items[p].parent) body_diverged[p] = true;
        bool introduces = !v.inputs_differed && !v.inputs_unobserved && !from_body;
        if (introduces) {
            if (out->listed_count < CMPX_LISTED) out->listed[out->listed_count++] = i;
            out->introducing++;
        }
        if (introduces && !have_introducer) {
            have_introducer = true;
            report(out, i, at, runs->depth, &v);
        } else if (!out->found) {
            report(out, i, at, runs->depth, &v); /* kept unless an introducer turns up */
        }
    }
    free(body_diverged);
    free(outs);
}
