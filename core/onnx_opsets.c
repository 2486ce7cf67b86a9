/* Which opset versions a written ONNX file imports (onnx_opsets.h). */
#include "onnx_opsets.h"

#include <stdlib.h>
#include <string.h>

#include "opset_compat.h"
#include "status.h"
#include "tessera/tessera.h"

typedef struct span {
    const char *domain;
    int64_t version; /* m's import, 0 when none; then the version written */
    int64_t lo, hi;  /* the nodes' versions; 0 when no node */
} span;

typedef struct spans {
    span *s;
    size_t n, cap;
} spans;

static span *span_of(spans *l, const char *domain) {
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->s[i].domain, domain) == 0) return &l->s[i];
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        span *grown = realloc(l->s, cap * sizeof *grown);
        if (!grown) return NULL;
        l->s = grown;
        l->cap = cap;
    }
    l->s[l->n] = (span){domain, 0, 0, 0};
    return &l->s[l->n++];
}

static bool gather(spans *l, ir_node *const *nodes, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const ir_node *nd = nodes[i];
        if (nd->opset > 0) {
            span *s = span_of(l, nd->domain ? nd->domain : "");
            if (!s) return false;
            if (!s->lo || nd->opset < s->lo) s->lo = nd->opset;
            if (nd->opset > s->hi) s->hi = nd->opset;
        }
        for (size_t a = 0; a < nd->n_attrs; a++) {
            const ir_attr *at = &nd->attrs[a];
            if (at->g && !gather(l, at->g->nodes, at->g->n_nodes)) return false;
            for (size_t k = 0; at->graphs && k < at->count; k++)
                if (at->graphs[k] && !gather(l, at->graphs[k]->nodes, at->graphs[k]->n_nodes)) return false;
        }
    }
    return true;
}

static int64_t written(const spans *l, const char *domain) {
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->s[i].domain, domain) == 0) return l->s[i].version;
    return 0;
}

/* Every node older than its domain's written version means the same there. */
static tsr_status *check(const ir_model *m, const spans *l, ir_node *const *nodes, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const ir_node *nd = nodes[i];
        int64_t to = written(l, nd->domain ? nd->domain : "");
        if (nd->opset > 0 && nd->opset < to) {
            opset_change c;
            bool found;
            tsr_status *st = opset_next_change(m, nd, nd->opset, to, &c, &found);
            if (!st && found) st = tsr_error(TSR_ERR_NOT_SUPPORTED, "at opset %lld %s", (long long)c.since, c.what);
            if (st) {
                tsr_status *e = tsr_error(TSR_ERR_NOT_SUPPORTED,
                                          "node '%s' (%s, opset %lld) cannot be written in one ONNX file "
                                          "with nodes of opset %lld of %s: %s",
                                          nd->name, nd->op_type, (long long)nd->opset, (long long)to,
                                          nd->domain && *nd->domain ? nd->domain : "ai.onnx", tsr_status_message(st));
                tsr_status_free(st);
                return e;
            }
        }
        for (size_t a = 0; a < nd->n_attrs; a++) {
            const ir_attr *at = &nd->attrs[a];
            if (at->g) TSR_TRY(check(m, l, at->g->nodes, at->g->n_nodes));
            for (size_t k = 0; at->graphs && k < at->count; k++)
                if (at->graphs[k]) TSR_TRY(check(m, l, at->graphs[k]->nodes, at->graphs[k]->n_nodes));
        }
    }
    return NULL;
}

tsr_status *onnx_opsets_for(const ir_model *m, ir_node *const *nodes, size_t n_nodes, bool whole, ir_opset **out,
                            size_t *n_out) {
    spans l = {0};
    tsr_status *st = NULL;
    for (size_t i = 0; m && i < m->n_opsets && !st; i++) {
        span *s = span_of(&l, m->opsets[i].domain ? m->opsets[i].domain : "");
        if (!s) st = TSR_NO_MEMORY();
        else if (!s->version) s->version = m->opsets[i].version;
    }
    if (!st && !gather(&l, nodes, n_nodes)) st = TSR_NO_MEMORY();
    for (size_t i = 0; i < l.n && !st; i++) {
        span *s = &l.s[i];
        if (!s->hi) continue;
        if (!whole && s->lo == s->hi) s->version = s->hi;
        else if (s->hi > s->version) s->version = s->hi;
    }
    if (!st) st = check(m, &l, nodes, n_nodes);
    ir_opset *ops = st ? NULL : calloc(l.n + 1, sizeof *ops);
    if (!st && !ops) st = TSR_NO_MEMORY();
    for (size_t i = 0; !st && i < l.n; i++) ops[i] = (ir_opset){(char *)l.s[i].domain, l.s[i].version};
    free(l.s);
    if (st) return st;
    *out = ops;
    *n_out = l.n;
    return NULL;
}
