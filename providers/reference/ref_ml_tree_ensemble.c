/*
 * ai.onnx.ml TreeEnsemble (opset 5): Y[n, t] aggregates, over every tree,
 * the weights of the leaves that row n of X reaches and that target t.
 *
 * Interior nodes are the nodes_* tuples; each compares feature
 * nodes_featureids[i] with nodes_splits[i] (or, for BRANCH_MEMBER, with a
 * set taken from membership_values, NaN-delimited, in node order) and goes
 * to its true or false branch, which is another node or, when
 * nodes_trueleafs / nodes_falseleafs says so, a leaf_* entry. A tree that is
 * a single leaf is a node whose two branches name the same leaf, so it
 * needs no special case.
 *
 * Every index in the attributes is checked once before any row is walked,
 * and a walk longer than the node count (a cycle in a malformed model) is
 * an error rather than a hang.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_ml.h"

enum { LEQ, LT, GTE, GT, EQ, NEQ, MEMBER };
enum { AVERAGE, SUM, MIN, MAX };

typedef struct te_node {
    int64_t feature;
    double split;
    int mode;
    bool missing_true; /* a NaN feature takes the true branch */
    int64_t next[2];   /* [0]: false branch, [1]: true branch */
    bool leaf[2];
    size_t set_off, set_len; /* BRANCH_MEMBER: its sorted set in members */
} te_node;

typedef struct ensemble {
    te_node *nodes;
    size_t n_nodes;
    double *leaf_w;
    const int64_t *leaf_t;
    size_t n_leaves;
    const int64_t *roots;
    size_t n_roots;
    double *members;
    int64_t n_targets, agg, post;
} ensemble;

static void ensemble_free(ensemble *e) {
    free(e->nodes);
    free(e->leaf_w);
    free(e->members);
}

static int dbl_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A tensor attribute as doubles (*n of them, in a new array). */
static tsr_status *attr_doubles(ref_ctx *c, const char *name, bool required, double **out, size_t *n) {
    const tsr_tensor *t = ref_attr_tensor(c, name);
    *out = NULL;
    *n = 0;
    if (!t) return required ? ref_err(c, TSR_ERR_INVALID_MODEL, "%s is missing", name) : NULL;
    if (!ref_is_float(t->elem_type) && !ref_is_int(t->elem_type))
        return ref_err(c, TSR_ERR_INVALID_MODEL, "%s has non-numeric type %d", name, (int)t->elem_type);
    size_t k = (size_t)ref_numel(t);
    double *v = malloc((k ? k : 1) * sizeof *v);
    if (!v) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < k; i++) v[i] = ref_load(t->elem_type, t->data, i);
    *out = v;
    *n = k;
    return NULL;
}

/* Gives each BRANCH_MEMBER node, in node order, the next NaN-delimited set
 * of membership_values, sorted for bsearch. */
static tsr_status *assign_sets(ref_ctx *c, ensemble *e, size_t n_members) {
    size_t at = 0;
    for (size_t i = 0; i < e->n_nodes; i++) {
        te_node *nd = &e->nodes[i];
        if (nd->mode != MEMBER) continue;
        if (at >= n_members)
            return ref_err(c, TSR_ERR_INVALID_MODEL, "membership_values has fewer sets than BRANCH_MEMBER nodes");
        size_t end = at;
        while (end < n_members && !isnan(e->members[end])) end++;
        nd->set_off = at;
        nd->set_len = end - at;
        qsort(e->members + at, nd->set_len, sizeof *e->members, dbl_cmp);
        at = end + 1;
    }
    return NULL;
}

/* Reads and checks every attribute. */
static tsr_status *ensemble_load(ref_ctx *c, ensemble *e) {
    memset(e, 0, sizeof *e);
    const int64_t *feat, *tid, *fid, *tleaf, *fleaf, *miss;
    size_t n = ref_attr_ints(c, "nodes_featureids", &feat);
    size_t n_miss = ref_attr_ints(c, "nodes_missing_value_tracks_true", &miss);
    if (ref_attr_ints(c, "nodes_truenodeids", &tid) != n || ref_attr_ints(c, "nodes_falsenodeids", &fid) != n ||
        ref_attr_ints(c, "nodes_trueleafs", &tleaf) != n || ref_attr_ints(c, "nodes_falseleafs", &fleaf) != n ||
        (n_miss && n_miss != n))
        return ref_err(c, TSR_ERR_INVALID_MODEL, "the nodes_* attributes differ in length");
    e->n_leaves = ref_attr_ints(c, "leaf_targetids", &e->leaf_t);
    e->n_roots = ref_attr_ints(c, "tree_roots", &e->roots);
    e->n_targets = ref_attr_int(c, "n_targets", 1);
    e->agg = ref_attr_int(c, "aggregate_function", SUM);
    e->post = ref_attr_int(c, "post_transform", 0);
    if (e->n_targets < 1 || e->n_targets > INT32_MAX)
        return ref_err(c, TSR_ERR_INVALID_MODEL, "n_targets %lld is out of range", (long long)e->n_targets);
    if (e->agg < AVERAGE || e->agg > MAX || e->post < 0 || e->post > 4)
        return ref_err(c, TSR_ERR_INVALID_MODEL, "aggregate_function or post_transform unknown");

    double *splits = NULL, *modes = NULL;
    size_t n_splits, n_modes, n_w, n_members;
    tsr_status *st = attr_doubles(c, "nodes_splits", true, &splits, &n_splits);
    if (!st) st = attr_doubles(c, "nodes_modes", true, &modes, &n_modes);
    if (!st) st = attr_doubles(c, "leaf_weights", true, &e->leaf_w, &n_w);
    if (!st) st = attr_doubles(c, "membership_values", false, &e->members, &n_members);
    if (!st && (n_splits != n || n_modes != n))
        st = ref_err(c, TSR_ERR_INVALID_MODEL, "nodes_splits or nodes_modes has the wrong length");
    if (!st && n_w != e->n_leaves)
        st = ref_err(c, TSR_ERR_INVALID_MODEL, "leaf_weights and leaf_targetids differ in length");
    if (!st && !(e->nodes = calloc(n ? n : 1, sizeof *e->nodes))) st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    e->n_nodes = st ? 0 : n;
    for (size_t i = 0; i < e->n_nodes && !st; i++) {
        te_node *nd = &e->nodes[i];
        nd->feature = feat[i];
        nd->split = splits[i];
        nd->mode = modes[i] >= LEQ && modes[i] <= MEMBER ? (int)modes[i] : -1;
        nd->missing_true = n_miss && miss[i];
        nd->next[0] = fid[i], nd->next[1] = tid[i];
        nd->leaf[0] = fleaf[i] != 0, nd->leaf[1] = tleaf[i] != 0;
        if (nd->mode < 0 || nd->feature < 0)
            st = ref_err(c, TSR_ERR_INVALID_MODEL, "node %zu has a bad mode or feature", i);
        for (int b = 0; b < 2 && !st; b++) {
            size_t limit = nd->leaf[b] ? e->n_leaves : e->n_nodes;
            if (nd->next[b] < 0 || (uint64_t)nd->next[b] >= limit)
                st = ref_err(c, TSR_ERR_INVALID_MODEL, "node %zu's %s branch %lld is out of range", i,
                             b ? "true" : "false", (long long)nd->next[b]);
        }
    }
    for (size_t i = 0; i < e->n_leaves && !st; i++)
        if (e->leaf_t[i] < 0 || e->leaf_t[i] >= e->n_targets)
            st = ref_err(c, TSR_ERR_INVALID_MODEL, "leaf %zu targets %lld, past n_targets", i, (long long)e->leaf_t[i]);
    for (size_t i = 0; i < e->n_roots && !st; i++)
        if (e->roots[i] < 0 || (uint64_t)e->roots[i] >= e->n_nodes)
            st = ref_err(c, TSR_ERR_INVALID_MODEL, "tree root %lld is out of range", (long long)e->roots[i]);
    if (!st) st = assign_sets(c, e, n_members);
    free(splits);
    free(modes);
    return st;
}

static bool goes_true(const ensemble *e, const te_node *nd, double x) {
    if (isnan(x) && nd->missing_true) return true;
    switch (nd->mode) {
    case LEQ: return x <= nd->split;
    case LT: return x < nd->split;
    case GTE: return x >= nd->split;
    case GT: return x > nd->split;
    case EQ: return x == nd->split;
    case NEQ: return x != nd->split;
    default: return nd->set_len && bsearch(&x, e->members + nd->set_off, nd->set_len, sizeof x, dbl_cmp) != NULL;
    }
}

/* The leaf that features x[0..n_feat) reach from `root`, or -1 on a cycle
 * (-2 when a node reads a feature X does not have). */
static int64_t walk(const ensemble *e, const double *x, int64_t n_feat, int64_t root) {
    int64_t at = root;
    for (size_t steps = 0; steps <= e->n_nodes; steps++) {
        const te_node *nd = &e->nodes[at];
        if (nd->feature >= n_feat) return -2;
        int b = goes_true(e, nd, x[nd->feature]);
        if (nd->leaf[b]) return nd->next[b];
        at = nd->next[b];
    }
    return -1;
}

int ref_ml_check_tree_ensemble(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size) {
    const tsr_attr *a = host->node_attr_find(node, "aggregate_function");
    const tsr_attr *p = host->node_attr_find(node, "post_transform");
    int64_t agg = a ? host->attr_int(a) : SUM, post = p ? host->attr_int(p) : 0;
    if (agg < AVERAGE || agg > MAX || post < 0 || post > 4) {
        snprintf(why, why_size, "aggregate_function %lld or post_transform %lld is unknown", (long long)agg,
                 (long long)post);
        return TSR_DECLINE_ATTRIBUTE;
    }
    return 0;
}

tsr_status *ref_ml_tree_ensemble(ref_ctx *c) {
    const tsr_tensor *X = ref_in(c, 0);
    if (!X) return ref_err(c, TSR_ERR_INVALID_MODEL, "input X is missing");
    if (!ref_is_float(X->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X must be a float tensor (type %d)", (int)X->elem_type);
    if (X->rank != 1 && X->rank != 2) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X must have shape [N, F]");
    int64_t rows = X->rank == 2 ? X->dims[0] : 1, n_feat = X->dims[X->rank - 1];

    ensemble e;
    double *acc = NULL, *x = NULL;
    tsr_status *st = ensemble_load(c, &e);
    if (st) goto done;
    int64_t T = e.n_targets, dims[2] = {rows, T};
    if (rows && (uint64_t)T > SIZE_MAX / 8 / (uint64_t)rows) {
        st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "Y would be too large");
        goto done;
    }
    tsr_tensor *Y;
    if ((st = ref_out(c, 0, X->elem_type, 2, dims, &Y))) goto done;
    acc = malloc((size_t)T * sizeof *acc);
    x = malloc((size_t)(n_feat ? n_feat : 1) * sizeof *x);
    if (!acc || !x) {
        st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    /* MIN and MAX start from the type's extreme, as the ONNX reference does. */
    double start = e.agg == MIN ? (X->elem_type == TSR_DOUBLE ? DBL_MAX : FLT_MAX)
        : e.agg == MAX          ? (X->elem_type == TSR_DOUBLE ? -DBL_MAX : -FLT_MAX)
                                : 0.0;
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t f = 0; f < n_feat; f++) x[f] = ref_load(X->elem_type, X->data, (size_t)(r * n_feat + f));
        for (int64_t t = 0; t < T; t++) acc[t] = start;
        for (size_t k = 0; k < e.n_roots; k++) {
            int64_t leaf = walk(&e, x, n_feat, e.roots[k]);
            if (leaf < 0) {
                st = leaf == -1 ? ref_err(c, TSR_ERR_INVALID_MODEL, "tree %zu has a cycle", k)
                                : ref_err(c, TSR_ERR_INVALID_ARGUMENT, "tree %zu reads a feature past X's %lld", k,
                                          (long long)n_feat);
                goto done;
            }
            double w = e.leaf_w[leaf];
            double *a = &acc[e.leaf_t[leaf]];
            if (e.agg == SUM) *a += w;
            else if (e.agg == AVERAGE) *a += w / (double)e.n_roots;
            else if (e.agg == MIN) *a = w < *a ? w : *a;
            else *a = w > *a ? w : *a;
        }
        ref_ml_post_transform(e.post, acc, (size_t)T);
        for (int64_t t = 0; t < T; t++) ref_store(X->elem_type, Y->data, (size_t)(r * T + t), acc[t]);
    }
done:
    free(acc);
    free(x);
    ensemble_free(&e);
    return st;
}
