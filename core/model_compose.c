/* Chains of models made one (model_compose.h): onnx.compose.merge_models's
 * rules applied stage after stage to the IR right after loading, so shape
 * inference, placement and fusion see one graph and a provider may fuse
 * across the seam between a pre-processing graph and the model.
 *
 * Everything that can refuse the chain (connections, types, opsets,
 * metadata, functions, name clashes) is checked before anything moves, so a
 * refused chain leaves every model whole for the caller's cleanup. */
#include "model_compose.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"
#include "tessera/tessera.h"

void compose_spec_clear(compose_spec *s) {
    for (size_t i = 0; i < s->n_paths; i++) free(s->paths[i]);
    free(s->paths);
    for (size_t i = 0; i < s->n_prefixes; i++) free(s->prefixes[i]);
    free(s->prefixes);
    for (size_t i = 0; i < s->n_links; i++) {
        free(s->links[i].output);
        free(s->links[i].input);
    }
    free(s->links);
    memset(s, 0, sizeof *s);
}

/* out (an earlier stage's output) replaces in (the stage's input). */
typedef struct link_pair {
    ir_value *out;
    ir_value *in;
} link_pair;

typedef struct composer {
    ir_model **m;
    const char *const *labels;
    size_t n;
    const compose_spec *spec;
    link_pair *pairs; /* stage by stage */
    size_t n_pairs;
    size_t *first;      /* stage k's pairs: [first[k], first[k + 1]) */
    ir_value **ins;     /* every pair's `in`, sorted by address */
    ir_value **outs;    /* stage k's pairs' `out`s, [first[k], first[k + 1]), sorted by address */
    size_t *link_stage; /* the stage each of spec's links is for */
} composer;

static const char *label(const composer *c, size_t k) { return c->labels && c->labels[k] ? c->labels[k] : "?"; }

static const char *prefix_of(const composer *c, size_t k) {
    const compose_spec *s = c->spec;
    return s && k < s->n_prefixes && s->prefixes[k] && s->prefixes[k][0] ? s->prefixes[k] : NULL;
}

static const char *domain_name(const char *d) { return d && *d ? d : "ai.onnx"; }

/* "a, b, c" (cut short with "...") for messages listing what there is. */
static void list_names(char *buf, size_t size, ir_value *const *v, size_t n) {
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < n && used + 1 < size; i++) {
        int w = snprintf(buf + used, size - used, "%s'%s'", i ? ", " : "", v[i]->name);
        if (w < 0 || (size_t)w >= size - used) {
            if (size > 4) strcpy(buf + size - 4, "...");
            return;
        }
        used += (size_t)w;
    }
    if (!n) snprintf(buf, size, "none");
}

static ir_value *find_in(ir_value *const *v, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i]->name, name) == 0) return v[i];
    return NULL;
}

/* --- connections ------------------------------------------------------------ */

static const char *kind_name(int32_t kind) {
    switch (kind) {
    case IR_TYPE_TENSOR: return "a tensor";
    case IR_TYPE_SEQUENCE: return "a sequence";
    case IR_TYPE_OPTIONAL: return "an optional";
    case IR_TYPE_MAP: return "a map";
    case IR_TYPE_SPARSE_TENSOR: return "a sparse tensor";
    default: return "unknown";
    }
}

/* What both declare must agree: the input's declaration goes with it, so a
 * mismatch found later would name a value the user never connected. */
static tsr_status *check_pair(const composer *c, size_t k, const link_pair *p) {
    const ir_type *a = &p->out->type, *b = &p->in->type;
    char why[200] = "";
    if (a->kind && b->kind && a->kind != b->kind) {
        snprintf(why, sizeof why, "%s against %s", kind_name(a->kind), kind_name(b->kind));
    } else if (a->kind == IR_TYPE_TENSOR && b->kind == IR_TYPE_TENSOR) {
        if (a->elem_type && b->elem_type && a->elem_type != b->elem_type)
            snprintf(why, sizeof why, "element type %s against %s", tsr_elem_type_name(a->elem_type),
                     tsr_elem_type_name(b->elem_type));
        else if (a->rank >= 0 && b->rank >= 0 && a->rank != b->rank)
            snprintf(why, sizeof why, "rank %d against %d", (int)a->rank, (int)b->rank);
        for (int32_t d = 0; !why[0] && a->rank == b->rank && d < a->rank && a->dims && b->dims; d++)
            if (a->dims[d].value >= 0 && b->dims[d].value >= 0 && a->dims[d].value != b->dims[d].value)
                snprintf(why, sizeof why, "dim %d is %lld against %lld", (int)d, (long long)a->dims[d].value,
                         (long long)b->dims[d].value);
    }
    if (!why[0]) return NULL;
    return tsr_error(TSR_ERR_INVALID_MODEL, "stage %zu '%s': output '%s' cannot feed its input '%s': %s", k,
                     label(c, k), p->out->name, p->in->name, why);
}

/* `named`: from a --connect, which may name an input twice; by position
 * each input comes once. */
static tsr_status *add_pair(composer *c, size_t k, ir_value *out, ir_value *in, bool named) {
    for (size_t i = c->first[k]; named && i < c->n_pairs; i++)
        if (c->pairs[i].in == in)
            return tsr_error(TSR_ERR_INVALID_ARGUMENT, "stage %zu '%s': input '%s' is connected twice", k, label(c, k),
                             in->name);
    c->pairs[c->n_pairs++] = (link_pair){out, in};
    return NULL;
}

static tsr_status *link_named(composer *c, size_t k, const compose_link *l) {
    ir_graph *g = c->m[k]->graph;
    char have[400];
    ir_value *in = find_in(g->inputs, g->n_inputs, l->input);
    if (!in) {
        list_names(have, sizeof have, g->inputs, g->n_inputs);
        return tsr_error(TSR_ERR_INVALID_ARGUMENT,
                         "connect %s=%s: stage %zu '%s' has no graph input '%s' (its inputs: %s)", l->output, l->input,
                         k, label(c, k), l->input, have);
    }
    /* the nearest earlier stage with an output of that name */
    for (size_t j = k; j-- > 0;) {
        const ir_graph *e = c->m[j]->graph;
        ir_value *out = find_in(e->outputs, e->n_outputs, l->output);
        if (out) return add_pair(c, k, out, in, true);
    }
    const ir_graph *prev = c->m[k - 1]->graph;
    list_names(have, sizeof have, prev->outputs, prev->n_outputs);
    return tsr_error(TSR_ERR_INVALID_ARGUMENT,
                     "connect %s=%s: no stage before stage %zu '%s' has a graph output '%s' "
                     "(stage %zu '%s' has: %s)",
                     l->output, l->input, k, label(c, k), l->output, k - 1, label(c, k - 1), have);
}

/* Without links: stage k-1's outputs feed stage k's inputs in order, not
 * counting inputs with an initializer (optional overrides, not data). */
static tsr_status *link_by_position(composer *c, size_t k) {
    const ir_graph *prev = c->m[k - 1]->graph, *g = c->m[k]->graph;
    size_t o = 0;
    for (size_t i = 0; i < g->n_inputs && o < prev->n_outputs; i++)
        if (!g->inputs[i]->constant) TSR_TRY(add_pair(c, k, prev->outputs[o++], g->inputs[i], false));
    return NULL;
}

static int cmp_ptr(const void *a, const void *b) {
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return x < y ? -1 : x > y;
}

static bool is_linked_in(const composer *c, const ir_value *v) {
    return c->n_pairs && bsearch(&v, c->ins, c->n_pairs, sizeof *c->ins, cmp_ptr);
}

static int cmp_pair_in(const void *a, const void *b) {
    uintptr_t x = (uintptr_t)((const link_pair *)a)->in, y = (uintptr_t)((const link_pair *)b)->in;
    return x < y ? -1 : x > y;
}

/* The output feeding stage k's input v, or NULL when v is not connected. */
static ir_value *feeder(const composer *c, size_t k, const ir_value *v) {
    if (!v) return NULL;
    link_pair key = {NULL, (ir_value *)v};
    const link_pair *p =
        bsearch(&key, c->pairs + c->first[k], c->first[k + 1] - c->first[k], sizeof *c->pairs, cmp_pair_in);
    return p ? p->out : NULL;
}

/* A link for stage 0 is for the one later stage that has an input so
 * named: `tessera run a.onnx b.onnx c.onnx --connect OUT=IN`. */
static tsr_status *link_stage(const composer *c, const compose_link *l, size_t *stage) {
    *stage = l->stage;
    if (l->stage >= c->n)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "connect %s=%s is for stage %zu, but the chain has stages 0 to %zu",
                         l->output, l->input, l->stage, c->n - 1);
    if (l->stage) return NULL;
    for (size_t k = 1; k < c->n; k++) {
        const ir_graph *g = c->m[k]->graph;
        if (!find_in(g->inputs, g->n_inputs, l->input)) continue;
        if (*stage)
            return tsr_error(TSR_ERR_INVALID_ARGUMENT,
                             "connect %s=%s: stages %zu '%s' and %zu '%s' both have an input '%s'; "
                             "name the stage (K:%s=%s)",
                             l->output, l->input, *stage, label(c, *stage), k, label(c, k), l->input, l->output,
                             l->input);
        *stage = k;
    }
    if (*stage) return NULL;
    if (c->n == 2) {
        *stage = 1; /* the one candidate: link_named says what it has */
        return NULL;
    }
    char have[600];
    size_t used = 0;
    have[0] = 0;
    for (size_t k = 1; k < c->n && used + 1 < sizeof have; k++) {
        const ir_graph *g = c->m[k]->graph;
        char names[200];
        list_names(names, sizeof names, g->inputs, g->n_inputs);
        int w = snprintf(have + used, sizeof have - used, "%sstage %zu: %s", k > 1 ? "; " : "", k, names);
        if (w < 0) break;
        used += (size_t)w;
    }
    return tsr_error(TSR_ERR_INVALID_ARGUMENT, "connect %s=%s: no stage after stage 0 has a graph input '%s' (%s)",
                     l->output, l->input, l->input, have);
}

static tsr_status *resolve_links(composer *c) {
    const compose_spec *s = c->spec;
    size_t n_links = s ? s->n_links : 0;
    if (!(c->link_stage = calloc(n_links + 1, sizeof *c->link_stage))) return TSR_NO_MEMORY();
    for (size_t i = 0; i < n_links; i++) TSR_TRY(link_stage(c, &s->links[i], &c->link_stage[i]));
    size_t cap = 1;
    for (size_t k = 1; k < c->n; k++) cap += c->m[k]->graph->n_inputs;
    c->pairs = calloc(cap, sizeof *c->pairs);
    c->first = calloc(c->n + 1, sizeof *c->first);
    c->ins = calloc(cap, sizeof *c->ins);
    c->outs = calloc(cap, sizeof *c->outs);
    if (!c->pairs || !c->first || !c->ins || !c->outs) return TSR_NO_MEMORY();
    for (size_t k = 1; k < c->n; k++) {
        c->first[k] = c->n_pairs;
        bool named = false;
        for (size_t i = 0; i < n_links; i++) {
            if (c->link_stage[i] != k) continue;
            named = true;
            TSR_TRY(link_named(c, k, &s->links[i]));
        }
        if (!named) TSR_TRY(link_by_position(c, k));
        for (size_t i = c->first[k]; i < c->n_pairs; i++) TSR_TRY(check_pair(c, k, &c->pairs[i]));
    }
    c->first[c->n] = c->n_pairs;
    /* each stage's pairs by input, for finding them while merging */
    for (size_t k = 1; k < c->n; k++)
        qsort(c->pairs + c->first[k], c->first[k + 1] - c->first[k], sizeof *c->pairs, cmp_pair_in);
    /* An output that is an earlier stage's connected input passed through
     * (a graph output naming its graph input) goes with that input, which
     * is freed when its stage merges: the output feeding it stands in, as
     * in that stage. Earlier stages are settled first, so one step does. */
    for (size_t k = 2; k < c->n; k++)
        for (size_t i = c->first[k]; i < c->first[k + 1]; i++) {
            ir_value *o = c->pairs[i].out, *f = NULL;
            for (size_t j = k; o->is_graph_input && !f && j-- > 1;) f = feeder(c, j, o);
            if (f) c->pairs[i].out = f;
        }
    for (size_t i = 0; i < c->n_pairs; i++) {
        c->ins[i] = c->pairs[i].in;
        c->outs[i] = c->pairs[i].out;
    }
    qsort(c->ins, c->n_pairs, sizeof *c->ins, cmp_ptr);
    for (size_t k = 1; k < c->n; k++)
        qsort(c->outs + c->first[k], c->first[k + 1] - c->first[k], sizeof *c->outs, cmp_ptr);
    return NULL;
}

/* --- opsets, metadata ------------------------------------------------------- */

/* A (key, value) of some stage: an opset import (domain, version) or a
 * metadata_props entry. United by sorting, so many entries stay n log n. */
typedef struct keyed {
    const char *key;
    const char *text;  /* metadata: the value */
    int64_t number;    /* opsets: the version */
    size_t stage, pos; /* where it came from: the order kept */
    bool first;        /* the first of its key: the one kept */
} keyed;

static int cmp_keyed(const void *a, const void *b) {
    const keyed *x = a, *y = b;
    int r = strcmp(x->key, y->key);
    if (r) return r;
    if (x->stage != y->stage) return x->stage < y->stage ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int cmp_keyed_order(const void *a, const void *b) {
    const keyed *x = a, *y = b;
    if (x->stage != y->stage) return x->stage < y->stage ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Sorts e by key and marks the first of each key; true when an entry's
 * value differs from its key's first (*conflict: the first such, *was: its
 * key's first). With `keep_max` (numbers only) differing numbers are no
 * conflict: the first of each key gets the largest. Then e is back in
 * stage order. */
static bool unite(keyed *e, size_t n, bool numbers, bool keep_max, keyed *conflict, keyed *was) {
    qsort(e, n, sizeof *e, cmp_keyed);
    bool found = false;
    for (size_t i = 0, head = 0; i < n; i++) {
        if (i == 0 || strcmp(e[i].key, e[head].key) != 0) head = i;
        e[i].first = i == head;
        bool differs = numbers ? e[i].number != e[head].number : strcmp(e[i].text, e[head].text) != 0;
        if (differs && keep_max) {
            if (e[i].number > e[head].number) e[head].number = e[i].number;
        } else if (differs && !found) {
            *conflict = e[i];
            *was = e[head];
            found = true;
        }
    }
    qsort(e, n, sizeof *e, cmp_keyed_order);
    return found;
}

/* One version per domain, the newest any stage imports. onnx.compose
 * refuses two versions, since a model holds one; here each node keeps the
 * version of its own file (ir_node.opset, set by the loader), which every
 * reader asks, so a node of an older stage keeps its meaning. Writing the
 * merged model as one file rewrites or refuses such nodes
 * (ir_model_settle_opsets). */
static tsr_status *unite_opsets(composer *c) {
    size_t total = 0;
    for (size_t k = 0; k < c->n; k++) total += c->m[k]->n_opsets;
    keyed *e = calloc(total + 1, sizeof *e);
    ir_opset *ops = calloc(total + 1, sizeof *ops);
    if (!e || !ops) {
        free(e);
        free(ops);
        return TSR_NO_MEMORY();
    }
    size_t n = 0;
    for (size_t k = 0; k < c->n; k++)
        for (size_t i = 0; i < c->m[k]->n_opsets; i++)
            e[n++] = (keyed){c->m[k]->opsets[i].domain, NULL, c->m[k]->opsets[i].version, k, i, false};
    keyed unused, unused_was;
    (void)unite(e, n, true, true, &unused, &unused_was);
    tsr_status *st = NULL;
    size_t m = 0;
    for (size_t i = 0; i < n && !st; i++) {
        if (!e[i].first) continue;
        if (!(ops[m].domain = strdup(e[i].key))) st = TSR_NO_MEMORY();
        else ops[m++].version = e[i].number;
    }
    free(e);
    if (st) {
        for (size_t i = 0; i < m; i++) free(ops[i].domain);
        free(ops);
        return st;
    }
    ir_model *m0 = c->m[0];
    for (size_t i = 0; i < m0->n_opsets; i++) free(m0->opsets[i].domain);
    free(m0->opsets);
    m0->opsets = ops;
    m0->n_opsets = m;
    return NULL;
}

/* metadata_props united; one key with two values is refused (onnx.compose). */
static tsr_status *unite_metadata(composer *c) {
    size_t total = 0;
    for (size_t k = 0; k < c->n; k++) total += c->m[k]->n_metadata;
    if (total == c->m[0]->n_metadata) return NULL;
    keyed *e = calloc(total, sizeof *e);
    ir_metadata *md = calloc(total, sizeof *md);
    if (!e || !md) {
        free(e);
        free(md);
        return TSR_NO_MEMORY();
    }
    size_t n = 0;
    for (size_t k = 0; k < c->n; k++)
        for (size_t i = 0; i < c->m[k]->n_metadata; i++)
            e[n++] = (keyed){c->m[k]->metadata[i].key, c->m[k]->metadata[i].value, 0, k, i, false};
    keyed bad, was;
    tsr_status *st = NULL;
    if (unite(e, n, false, false, &bad, &was))
        st =
            tsr_error(TSR_ERR_INVALID_MODEL, "stage %zu '%s': metadata_props '%s' is '%s', but stage %zu '%s' has '%s'",
                      bad.stage, label(c, bad.stage), bad.key, bad.text, was.stage, label(c, was.stage), was.text);
    size_t m = 0;
    for (size_t i = 0; i < n && !st; i++) {
        if (!e[i].first) continue;
        md[m].key = strdup(e[i].key);
        md[m].value = strdup(e[i].text);
        m++;
        if (!md[m - 1].key || !md[m - 1].value) st = TSR_NO_MEMORY();
    }
    free(e);
    ir_model *m0 = c->m[0];
    if (st) {
        for (size_t i = 0; i < m; i++) free(md[i].key), free(md[i].value);
        free(md);
        return st;
    }
    for (size_t i = 0; i < m0->n_metadata; i++) free(m0->metadata[i].key), free(m0->metadata[i].value);
    free(m0->metadata);
    m0->metadata = md;
    m0->n_metadata = m;
    return NULL;
}

/* --- prefixes ---------------------------------------------------------------- */

static char *prefixed(const char *prefix, const char *name) {
    size_t a = strlen(prefix), b = strlen(name);
    char *s = malloc(a + b + 1);
    if (!s) return NULL;
    memcpy(s, prefix, a);
    memcpy(s + a, name, b + 1);
    return s;
}

static size_t subgraph_count(const ir_attr *a) { return a->g ? 1 : (a->graphs ? a->count : 0); }
static ir_graph *subgraph_at(const ir_attr *a, size_t i) { return a->g ? a->g : a->graphs[i]; }

/* Gives g's own values and nodes `prefix` (when not NULL), and every
 * placeholder the name of the outer value it stands for; then the same in
 * its subgraphs, which come after their enclosing graph so each
 * placeholder's outer value already has its final name. */
static tsr_status *rename_tree(ir_graph *g, const char *prefix) {
    bool changed = false;
    for (size_t i = 0; i < g->n_values; i++) {
        ir_value *v = g->values[i];
        char *name = NULL;
        if (v->is_outer) {
            if (!v->outer || strcmp(v->name, v->outer->name) == 0) continue;
            name = strdup(v->outer->name);
        } else if (prefix) {
            name = prefixed(prefix, v->name);
        } else {
            continue;
        }
        if (!name) return TSR_NO_MEMORY();
        free(v->name);
        v->name = name;
        changed = true;
    }
    for (size_t i = 0; prefix && i < g->n_nodes; i++) {
        ir_node *n = g->nodes[i];
        if (!n->name || !n->name[0]) continue; /* as add_prefix: empty stays empty */
        char *name = prefixed(prefix, n->name);
        if (!name) return TSR_NO_MEMORY();
        free(n->name);
        n->name = name;
    }
    if (changed) TSR_TRY(ir_graph_reindex(g));
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t a = 0; a < g->nodes[i]->n_attrs; a++) {
            const ir_attr *at = &g->nodes[i]->attrs[a];
            for (size_t s = 0; s < subgraph_count(at); s++)
                if (subgraph_at(at, s)) TSR_TRY(rename_tree(subgraph_at(at, s), prefix));
        }
    return NULL;
}

/* Calls to a renamed model-local function follow it, in g and below. */
static tsr_status *rename_calls(ir_graph *g, const ir_function *f, const char *old_name) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        ir_node *n = g->nodes[i];
        if (strcmp(n->op_type, old_name) == 0 && strcmp(n->domain, f->domain) == 0) {
            char *op = strdup(f->name);
            if (!op) return TSR_NO_MEMORY();
            free(n->op_type);
            n->op_type = op;
        }
        for (size_t a = 0; a < n->n_attrs; a++)
            for (size_t s = 0; s < subgraph_count(&n->attrs[a]); s++)
                if (subgraph_at(&n->attrs[a], s)) TSR_TRY(rename_calls(subgraph_at(&n->attrs[a], s), f, old_name));
    }
    return NULL;
}

/* onnx.compose.add_prefix: values, nodes and model-local functions (and the
 * ops that call them, in the graph and in other functions). */
static tsr_status *prefix_stage(ir_model *m, const char *prefix) {
    TSR_TRY(rename_tree(m->graph, prefix));
    for (size_t i = 0; i < m->n_functions; i++) {
        ir_function *f = m->functions[i];
        char *old_name = f->name;
        if (!(f->name = prefixed(prefix, old_name))) {
            f->name = old_name;
            return TSR_NO_MEMORY();
        }
        tsr_status *st = rename_calls(m->graph, f, old_name);
        for (size_t j = 0; !st && j < m->n_functions; j++)
            if (m->functions[j]->body) st = rename_calls(m->functions[j]->body, f, old_name);
        free(old_name);
        if (st) return st;
    }
    return NULL;
}

/* --- clashes ----------------------------------------------------------------- */

typedef struct named {
    const ir_value *v;
    size_t stage;
    bool top; /* in the stage's main graph, not a subgraph */
} named;

typedef struct name_list {
    named *items;
    size_t n, cap;
} name_list;

static bool push_name(name_list *l, const ir_value *v, size_t stage, bool top) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        named *p = realloc(l->items, sizeof *p * cap);
        if (!p) return false;
        l->items = p;
        l->cap = cap;
    }
    l->items[l->n++] = (named){v, stage, top};
    return true;
}

/* Values a stage defines: placeholders only repeat an outer name, and a
 * connected input goes away in favour of the output feeding it. */
static bool collect_names(const composer *c, name_list *l, const ir_graph *g, size_t stage, bool top) {
    for (size_t i = 0; i < g->n_values; i++) {
        const ir_value *v = g->values[i];
        if (v->is_outer || (top && is_linked_in(c, v))) continue;
        if (!push_name(l, v, stage, top)) return false;
    }
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t a = 0; a < g->nodes[i]->n_attrs; a++) {
            const ir_attr *at = &g->nodes[i]->attrs[a];
            for (size_t s = 0; s < subgraph_count(at); s++)
                if (subgraph_at(at, s) && !collect_names(c, l, subgraph_at(at, s), stage, false)) return false;
        }
    return true;
}

static int cmp_named(const void *a, const void *b) {
    const named *x = a, *y = b;
    int r = strcmp(x->v->name, y->v->name);
    if (r) return r;
    return x->stage < y->stage ? -1 : x->stage > y->stage;
}

static void describe(char *buf, size_t size, const named *e) {
    const ir_value *v = e->v;
    if (!e->top) snprintf(buf, size, "a value inside a subgraph");
    else if (v->is_graph_input) snprintf(buf, size, "a graph input");
    else if (v->producer) snprintf(buf, size, "the output of node '%s' (%s)", v->producer->name, v->producer->op_type);
    else if (v->constant) snprintf(buf, size, "an initializer");
    else snprintf(buf, size, "a value");
}

/* A name of one stage's main graph used anywhere in another stage (a
 * subgraph may not shadow an outer name) would make two values one. Two
 * stages' subgraphs may share names, as sibling subgraphs do. */
static tsr_status *find_clash(const composer *c) {
    name_list l = {0};
    tsr_status *st = NULL;
    for (size_t k = 0; k < c->n && !st; k++)
        if (!collect_names(c, &l, c->m[k]->graph, k, true)) st = TSR_NO_MEMORY();
    if (!st) qsort(l.items, l.n, sizeof *l.items, cmp_named);
    for (size_t i = 0; i < l.n && !st;) {
        size_t end = i + 1;
        while (end < l.n && strcmp(l.items[end].v->name, l.items[i].v->name) == 0) end++;
        const named *top = NULL, *other = NULL;
        for (size_t j = i; j < end && !top; j++)
            if (l.items[j].top) top = &l.items[j];
        for (size_t j = i; top && j < end && !other; j++)
            if (l.items[j].stage != top->stage) other = &l.items[j];
        if (other) {
            const named *a = top->stage < other->stage ? top : other;
            const named *b = a == top ? other : top;
            char da[200], db[200];
            describe(da, sizeof da, a);
            describe(db, sizeof db, b);
            st = tsr_error(TSR_ERR_INVALID_MODEL,
                           "name clash: '%s' is %s in stage %zu '%s' and %s in stage %zu '%s'; give "
                           "the stages prefixes (--prefix, tsr_session_options_set_stage_prefix)",
                           a->v->name, da, a->stage, label(c, a->stage), db, b->stage, label(c, b->stage));
        }
        i = end;
    }
    free(l.items);
    return st;
}

typedef struct fn_entry {
    const ir_function *f;
    size_t stage;
} fn_entry;

static int cmp_fn(const void *a, const void *b) {
    const ir_function *x = ((const fn_entry *)a)->f, *y = ((const fn_entry *)b)->f;
    int r = strcmp(x->domain, y->domain);
    if (!r) r = strcmp(x->name, y->name);
    if (!r) r = strcmp(x->overload ? x->overload : "", y->overload ? y->overload : "");
    return r;
}

/* Two stages defining one function (domain, name, overload): which one a
 * node calls would be ambiguous. */
static tsr_status *check_functions(const composer *c) {
    size_t total = 0;
    for (size_t k = 0; k < c->n; k++) total += c->m[k]->n_functions;
    if (total < 2) return NULL;
    fn_entry *e = calloc(total, sizeof *e);
    if (!e) return TSR_NO_MEMORY();
    size_t n = 0;
    for (size_t k = 0; k < c->n; k++)
        for (size_t i = 0; i < c->m[k]->n_functions; i++) e[n++] = (fn_entry){c->m[k]->functions[i], k};
    qsort(e, n, sizeof *e, cmp_fn);
    tsr_status *st = NULL;
    for (size_t i = 1; i < n && !st; i++)
        if (cmp_fn(&e[i - 1], &e[i]) == 0)
            st = tsr_error(TSR_ERR_INVALID_MODEL,
                           "model-local function '%s' of domain '%s' is defined by stage %zu '%s' and "
                           "by stage %zu '%s'; give the stages prefixes (--prefix)",
                           e[i].f->name, domain_name(e[i].f->domain), e[i - 1].stage, label(c, e[i - 1].stage),
                           e[i].stage, label(c, e[i].stage));
    free(e);
    return st;
}

/* --- merging ------------------------------------------------------------------ */

static void set_model(ir_graph *g, ir_model *m) {
    g->model = m;
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t a = 0; a < g->nodes[i]->n_attrs; a++) {
            const ir_attr *at = &g->nodes[i]->attrs[a];
            for (size_t s = 0; s < subgraph_count(at); s++)
                if (subgraph_at(at, s)) set_model(subgraph_at(at, s), m);
        }
}

static bool feeds_stage(const composer *c, size_t k, const ir_value *out) {
    size_t n = c->first[k + 1] - c->first[k];
    return n && bsearch(&out, c->outs + c->first[k], n, sizeof *c->outs, cmp_ptr);
}

/* Room for everything the later stages bring, so that moving them cannot
 * fail halfway with a value owned by two graphs. */
static tsr_status *reserve(composer *c) {
    ir_model *m0 = c->m[0];
    ir_graph *g0 = m0->graph;
    size_t values = 0, nodes = 0, inputs = 0, outputs = 0, functions = 0;
    for (size_t k = 0; k < c->n; k++) {
        const ir_graph *g = c->m[k]->graph;
        values += g->n_values;
        nodes += g->n_nodes;
        inputs += g->n_inputs;
        outputs += g->n_outputs;
        functions += c->m[k]->n_functions;
    }
    void *p;
    if (!(p = realloc(g0->values, sizeof(ir_value *) * (values + 1)))) return TSR_NO_MEMORY();
    g0->values = p;
    if (!(p = realloc(g0->nodes, sizeof(ir_node *) * (nodes + 1)))) return TSR_NO_MEMORY();
    g0->nodes = p;
    if (!(p = realloc(g0->inputs, sizeof(ir_value *) * (inputs + 1)))) return TSR_NO_MEMORY();
    g0->inputs = p;
    if (!(p = realloc(g0->outputs, sizeof(ir_value *) * (outputs + 1)))) return TSR_NO_MEMORY();
    g0->outputs = p;
    if (!(p = realloc(m0->functions, sizeof(ir_function *) * (functions + 1)))) return TSR_NO_MEMORY();
    m0->functions = p;
    return NULL;
}

/* Stage k's reads of a connected input read the output feeding it, in its
 * nodes, its graph outputs and (through placeholders) its subgraphs. */
static tsr_status *connect_stage(const composer *c, size_t k) {
    ir_graph *g = c->m[k]->graph;
    for (size_t i = 0; i < g->n_nodes; i++) {
        ir_node *n = g->nodes[i];
        for (size_t j = 0; j < n->n_inputs; j++) {
            ir_value *out = feeder(c, k, n->inputs[j]);
            if (out) n->inputs[j] = out;
        }
    }
    for (size_t i = 0; i < g->n_outputs; i++) {
        ir_value *out = feeder(c, k, g->outputs[i]);
        if (out) g->outputs[i] = out;
    }
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t a = 0; a < g->nodes[i]->n_attrs; a++) {
            const ir_attr *at = &g->nodes[i]->attrs[a];
            for (size_t s = 0; s < subgraph_count(at); s++) {
                ir_graph *sg = subgraph_at(at, s);
                if (!sg) continue;
                for (size_t v = 0; v < sg->n_values; v++) {
                    ir_value *p = sg->values[v];
                    ir_value *out = p->is_outer ? feeder(c, k, p->outer) : NULL;
                    if (out) p->outer = out;
                }
                TSR_TRY(rename_tree(sg, NULL)); /* placeholders take the new names */
            }
        }
    return NULL;
}

/* Moves stage k's graph into stage 0's, then frees what is left of it: the
 * connected inputs, and the shell. Cannot fail: reserve() made the room. */
static void move_stage(composer *c, size_t k) {
    ir_model *m0 = c->m[0], *mk = c->m[k];
    ir_graph *g0 = m0->graph, *g = mk->graph;
    /* outputs: the chain's so far that stage k does not read, then its own */
    size_t w = 0;
    for (size_t i = 0; i < g0->n_outputs; i++) {
        ir_value *o = g0->outputs[i];
        if (feeds_stage(c, k, o)) o->is_graph_output = false;
        else g0->outputs[w++] = o;
    }
    g0->n_outputs = w;
    for (size_t i = 0; i < g->n_outputs; i++) {
        g->outputs[i]->is_graph_output = true;
        g0->outputs[g0->n_outputs++] = g->outputs[i];
    }
    for (size_t i = 0; i < g->n_inputs; i++)
        if (!is_linked_in(c, g->inputs[i])) g0->inputs[g0->n_inputs++] = g->inputs[i];
    size_t kept = 0;
    for (size_t i = 0; i < g->n_values; i++) {
        ir_value *v = g->values[i];
        if (is_linked_in(c, v)) g->values[kept++] = v; /* freed with g */
        else g0->values[g0->n_values++] = v;
    }
    g->n_values = kept;
    for (size_t i = 0; i < g->n_nodes; i++) {
        ir_node *n = g->nodes[i];
        n->graph = g0;
        n->index = g0->n_nodes;
        g0->nodes[g0->n_nodes++] = n;
        for (size_t a = 0; a < n->n_attrs; a++)
            for (size_t s = 0; s < subgraph_count(&n->attrs[a]); s++) {
                ir_graph *sg = subgraph_at(&n->attrs[a], s);
                if (!sg) continue;
                if (sg->parent == g) sg->parent = g0;
                set_model(sg, m0);
            }
    }
    g->n_nodes = g->n_inputs = g->n_outputs = 0;
    for (size_t i = 0; i < mk->n_functions; i++) {
        ir_function *f = mk->functions[i];
        if (f->body) set_model(f->body, m0);
        m0->functions[m0->n_functions++] = f;
    }
    mk->n_functions = 0;
    ir_model_free(mk);
    c->m[k] = NULL;
}

/* onnx.compose's header: graph names joined by '_', the largest ir_version
 * (onnx.compose wants them equal; any reader of the newest reads all). */
static tsr_status *merged_header(composer *c) {
    ir_model *m0 = c->m[0];
    size_t len = 1;
    int64_t ir_version = 0;
    for (size_t k = 0; k < c->n; k++) {
        len += strlen(c->m[k]->graph->name ? c->m[k]->graph->name : "") + 1;
        if (c->m[k]->ir_version > ir_version) ir_version = c->m[k]->ir_version;
    }
    char *name = malloc(len), *producer = strdup("tessera compose"), *version = strdup(tsr_version());
    char *domain = strdup(""), *doc = strdup("");
    if (!name || !producer || !version || !domain || !doc) {
        free(name), free(producer), free(version), free(domain), free(doc);
        return TSR_NO_MEMORY();
    }
    name[0] = 0;
    for (size_t k = 0; k < c->n; k++) {
        if (k) strcat(name, "_");
        strcat(name, c->m[k]->graph->name ? c->m[k]->graph->name : "");
    }
    free(m0->graph->name);
    m0->graph->name = name;
    free(m0->producer_name);
    m0->producer_name = producer;
    free(m0->producer_version);
    m0->producer_version = version;
    free(m0->domain);
    m0->domain = domain;
    free(m0->doc_string);
    m0->doc_string = doc;
    m0->ir_version = ir_version;
    m0->model_version = 1;
    return NULL;
}

tsr_status *ir_model_compose(ir_model **models, const char *const *labels, size_t n, const compose_spec *spec,
                             ir_model **out) {
    composer c = {.m = models, .labels = labels, .n = n, .spec = spec};
    tsr_status *st = n && out ? NULL : tsr_error(TSR_ERR_INVALID_ARGUMENT, "no models to compose");
    for (size_t k = 0; k < n && !st; k++)
        if (!models[k] || !models[k]->graph)
            st = tsr_error(TSR_ERR_INVALID_ARGUMENT, "stage %zu '%s' has no graph", k, label(&c, k));
    /* first what can refuse the chain, while every model is still whole */
    if (!st) st = resolve_links(&c); /* by the names in the files: before prefixes */
    if (!st) st = unite_opsets(&c);
    if (!st) st = unite_metadata(&c);
    for (size_t k = 0; k < n && !st; k++)
        if (prefix_of(&c, k)) st = prefix_stage(models[k], prefix_of(&c, k));
    if (!st) st = check_functions(&c);
    if (!st) st = find_clash(&c);
    if (!st) st = reserve(&c);
    if (!st) st = merged_header(&c);
    for (size_t k = 1; k < n && !st; k++) {
        st = connect_stage(&c, k);
        if (!st) move_stage(&c, k);
    }
    if (!st) st = ir_graph_reindex(models[0]->graph);
    if (!st) st = ir_graph_check(models[0]->graph);
    free(c.pairs);
    free(c.first);
    free(c.ins);
    free(c.outs);
    free(c.link_stage);
    if (!st) {
        *out = models[0];
        models[0] = NULL;
        return NULL;
    }
    for (size_t k = 0; k < n; k++) {
        ir_model_free(models[k]);
        models[k] = NULL;
    }
    return st;
}
