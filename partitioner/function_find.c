/* Function-op expansion: which function defines a node's op (a model-local
 * function, or a built-in body chosen by opset and the node's attributes,
 * inputs and input ranks). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "function_expand.h"
#include "onnx_text.h"
#include "status.h"

/* The value `when=NAME:VALUE` compares, as text in buf: a string
 * attribute, an int attribute in decimal (the function's default counting
 * for both), or a made-up one (function_synth_attr: __type_X, __dim_X_A).
 * NULL when unknown. */
static const char *when_value(const ir_node *n, const ir_function *f, const char *name, char *buf, size_t cap) {
    const ir_attr *a = ir_node_attr(n, name);
    for (size_t i = 0; !a && f && i < f->n_attr_defaults; i++)
        if (strcmp(f->attr_defaults[i].name, name) == 0) a = &f->attr_defaults[i];
    if (a && a->type == TSR_ATTR_STRING) return a->s;
    if (a && a->type == TSR_ATTR_INT) {
        snprintf(buf, cap, "%lld", (long long)a->i);
        return buf;
    }
    int64_t x;
    if (a || !function_synth_attr(n, f, name, &x)) return NULL;
    snprintf(buf, cap, "%lld", (long long)x);
    return buf;
}

/* Whether each formal input named in `list` (comma-separated) is given to
 * n (want_given) or omitted (!want_given). */
static bool inputs_match(const ir_function *f, const ir_node *n, const char *list, bool want_given) {
    for (const char *p = list; p && *p;) {
        size_t len = strcspn(p, ",");
        bool given = false;
        for (size_t k = 0; k < f->body->n_inputs && k < n->n_inputs; k++) {
            const char *name = f->body->inputs[k]->name;
            if (strlen(name) == len && strncmp(name, p, len) == 0) given = n->inputs[k] != NULL;
        }
        if (given != want_given) return false;
        p += len + (p[len] == ',');
    }
    return true;
}

/* Whether n gives (want_given) or lacks each attribute named in `list`. */
static bool attrs_match(const ir_node *n, const char *list, bool want_given) {
    for (const char *p = list; p && *p;) {
        size_t len = strcspn(p, ",");
        bool given = false;
        for (size_t k = 0; k < n->n_attrs; k++)
            if (strlen(n->attrs[k].name) == len && strncmp(n->attrs[k].name, p, len) == 0) given = true;
        if (given != want_given) return false;
        p += len + (p[len] == ',');
    }
    return true;
}

/* Whether formal input `name` of f has rank `rank` where n uses it. */
static bool rank_matches(const ir_function *f, const ir_node *n, const char *name, int32_t rank) {
    if (!name) return true;
    for (size_t k = 0; k < f->body->n_inputs && k < n->n_inputs; k++)
        if (strcmp(f->body->inputs[k]->name, name) == 0) return n->inputs[k] && n->inputs[k]->type.rank == rank;
    return false;
}

static bool text_applies(const function_text *t, const ir_node *n) {
    if (strcmp(t->domain, n->domain) != 0 || strcmp(t->op_type, n->op_type) != 0) return false;
    if (n->opset < t->since || (t->until && n->opset > t->until)) return false;
    return true;
}

bool function_text_conditions_hold(const function_text *t, const ir_node *n, const ir_function *f) {
    if (t->when_attr) {
        char buf[32];
        const char *v = when_value(n, f, t->when_attr, buf, sizeof buf);
        /* when=A:!V: A is known and is not V. */
        bool negate = t->when_value[0] == '!';
        if (!v || (strcmp(v, t->when_value + negate) == 0) == negate) return false;
    }
    return inputs_match(f, n, t->has_inputs, true) && inputs_match(f, n, t->lacks_inputs, false) &&
        attrs_match(n, t->has_attrs, true) && attrs_match(n, t->lacks_attrs, false) &&
        rank_matches(f, n, t->rank_input, t->rank);
}

/* The model-local function for op_type in domain, as an index; n_functions when none. */
static size_t local_function(const ir_model *m, const char *domain, const char *op_type) {
    for (size_t i = 0; m && i < m->n_functions; i++) {
        const ir_function *f = m->functions[i];
        if (strcmp(f->name, op_type) == 0 && strcmp(f->domain ? f->domain : "", domain) == 0) return i;
    }
    return m ? m->n_functions : 0;
}

enum { CALLS_OK = 0, CALLS_CYCLE = 1, CALLS_TOO_DEEP = 2 };

/* Depth-first over the model functions that f's body calls: CALLS_CYCLE when
 * a call leads back to a function still being visited (state 1),
 * CALLS_TOO_DEEP when calls chain deeper than the function_depth limit
 * (which also bounds this recursion: a chain of 100,000 functions must not
 * exhaust the stack). */
static int reaches_cycle(const ir_model *m, size_t f, unsigned char *state, int depth) {
    if (depth > m->limits.function_depth) return CALLS_TOO_DEEP;
    state[f] = 1;
    const ir_graph *b = m->functions[f]->body;
    for (size_t i = 0; b && i < b->n_nodes; i++) {
        size_t c = local_function(m, b->nodes[i]->domain, b->nodes[i]->op_type);
        if (c == m->n_functions || state[c] == 2) continue;
        if (state[c] == 1) return CALLS_CYCLE;
        int r = reaches_cycle(m, c, state, depth + 1);
        if (r != CALLS_OK) return r;
    }
    state[f] = 2;
    return CALLS_OK;
}

tsr_status *function_find(const ir_node *n, ir_function **out, bool *owned) {
    *out = NULL;
    *owned = false;
    const ir_model *m = n->graph ? n->graph->model : NULL;
    size_t li = local_function(m, n->domain, n->op_type);
    if (m && li < m->n_functions) {
        /* Recursion would expand forever: refuse it before expanding anything. */
        unsigned char *state = calloc(m->n_functions + 1, 1);
        if (!state) return TSR_NO_MEMORY();
        int calls = reaches_cycle(m, li, state, 1);
        free(state);
        if (calls == CALLS_CYCLE)
            return tsr_error(TSR_ERR_INVALID_MODEL, "node '%s': function %s%s%s calls itself", n->name, n->domain,
                             n->domain[0] ? "." : "", n->op_type);
        if (calls == CALLS_TOO_DEEP)
            return tsr_error(TSR_ERR_INVALID_MODEL,
                             "node '%s': function %s%s%s calls functions more than %d levels "
                             "deep, over the function_depth limit (%d)",
                             n->name, n->domain, n->domain[0] ? "." : "", n->op_type, (int)m->limits.function_depth,
                             (int)m->limits.function_depth);
        *out = m->functions[li];
        return NULL;
    }
    for (size_t i = 0; i < function_text_count; i++) {
        const function_text *t = &function_texts[i];
        if (!text_applies(t, n)) continue;
        ir_function *f;
        TSR_TRY(onnx_text_parse_function(t->text, t->file, &f));
        if (!function_text_conditions_hold(t, n, f)) {
            ir_function_free(f);
            continue;
        }
        *out = f;
        *owned = true;
        return NULL;
    }
    return NULL;
}
