/*
 * value_types: after the type inference a session runs at creation, does
 * every value of a model have a known element type?
 *
 * For each model it does what session creation does before partitioning
 * (session_finish in runtime/session.c: load, Gradient expansion, Einsum
 * lowering, ir_infer_shapes with the model's own declared inputs, so
 * symbolic dims stay symbolic), then lists each value whose element type is still
 * unknown: graph inputs and node outputs of the main graph and of every
 * control-flow body (If/Loop/Scan/SequenceMap, at any depth), naming the
 * node and op that produce it. A provider's claim often depends on the
 * element type (a fast provider declines a node whose input type it cannot
 * see), so an unknown type quietly sends work to the reference provider.
 *
 * "Known" follows the value's kind: a tensor (or sparse tensor) needs its
 * element type; a sequence or optional needs the type it holds to be known;
 * a map needs its key type and its value type.
 *
 * usage: value_types [--allow FILE] [--by-op] [--undeclared] PATH...
 *   PATH   a model (.onnx) or a folder searched for *.onnx at any depth.
 *          A model is named by its path from PATH's parent folder without
 *          "/model.onnx" or ".onnx": node/test_abs, zoo/gpt2.
 *   --allow FILE  lines "MODEL VALUE reason...": unknown types that are
 *          documented as such ('*' as VALUE: the model may fail to load or
 *          infer). '#' starts a comment line. An entry whose model was
 *          checked but which matched nothing is stale and fails the run.
 *   --by-op  also print the count of unknown values per producing op.
 *   --undeclared  forget the types the model declares for node outputs
 *          (graph outputs, value_info) before inferring, so every type must
 *          come from the rules: a single-op case declares its output, which
 *          would hide a missing rule, while exported models often declare
 *          nothing in between. Each inferred type is then compared with
 *          the dropped declaration: a kind, element type, rank or fixed
 *          dim that differ is a MISMATCH (allowed as VALUE!mismatch).
 * Exit status: 0 when every unknown is allowed, 1 otherwise, 2 on usage.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gradient.h"
#include "ir.h"
#include "tessera/tessera.h"

typedef struct allow_entry {
    char *model;
    char *value;
    bool checked; /* its model was among those checked */
    bool used;    /* it matched something */
} allow_entry;

typedef struct op_count {
    char *op; /* "domain:Op" or "Op" */
    size_t count;
} op_count;

typedef struct checker {
    allow_entry *allow;
    size_t n_allow;
    op_count *ops;
    size_t n_ops;
    size_t models, values, unknown, allowed, errors, mismatches;
    bool undeclared; /* --undeclared */
    struct saved_type {
        const ir_value *v;
        ir_type type;
    } * saved; /* --undeclared: the declarations dropped */
    size_t n_saved;
} checker;

static void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fprintf(stderr, "value_types: out of memory\n");
        exit(2);
    }
    return q;
}

static char *xstrdup(const char *s) {
    char *p = xrealloc(NULL, strlen(s) + 1);
    strcpy(p, s);
    return p;
}

/* ------------------------------------------------------------------------ */
/* The allow list                                                            */

static void read_allow(checker *k, const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "value_types: cannot open %s\n", path);
        exit(2);
    }
    char line[4096];
    size_t lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '#' || *p == '\n' || !*p) continue;
        char model[1024], value[1024];
        /* every entry must say why: MODEL VALUE and at least one word more */
        int used = 0;
        if (sscanf(p, "%1023s %1023s %n", model, value, &used) != 2 || !p[used] || p[used] == '\n') {
            fprintf(stderr, "value_types: %s:%zu: want \"MODEL VALUE reason\"\n", path, lineno);
            exit(2);
        }
        k->allow = xrealloc(k->allow, (k->n_allow + 1) * sizeof *k->allow);
        k->allow[k->n_allow++] = (allow_entry){xstrdup(model), xstrdup(value), false, false};
    }
    fclose(f);
}

static void mark_checked(checker *k, const char *model) {
    for (size_t i = 0; i < k->n_allow; i++)
        if (!strcmp(k->allow[i].model, model)) k->allow[i].checked = true;
}

static bool allowed(checker *k, const char *model, const char *value) {
    for (size_t i = 0; i < k->n_allow; i++) {
        allow_entry *a = &k->allow[i];
        if (!strcmp(a->model, model) && (!strcmp(a->value, value) || !strcmp(a->value, "*"))) {
            a->used = true;
            return true;
        }
    }
    return false;
}

/* ------------------------------------------------------------------------ */
/* Types                                                                     */

static bool type_known(const ir_type *t, int depth) {
    if (!t || depth > IR_MAX_GRAPH_DEPTH) return false;
    switch (t->kind) {
    case IR_TYPE_TENSOR:
    case IR_TYPE_SPARSE_TENSOR: return t->elem_type != 0;
    case IR_TYPE_SEQUENCE:
    case IR_TYPE_OPTIONAL: return type_known(t->elem, depth + 1);
    case IR_TYPE_MAP: return t->key_type != 0 && type_known(t->elem, depth + 1);
    default: return false;
    }
}

static void count_op(checker *k, const ir_node *n) {
    char name[512];
    snprintf(name, sizeof name, "%s%s%s", n->domain && n->domain[0] ? n->domain : "",
             n->domain && n->domain[0] ? ":" : "", n->op_type);
    for (size_t i = 0; i < k->n_ops; i++)
        if (!strcmp(k->ops[i].op, name)) {
            k->ops[i].count++;
            return;
        }
    k->ops = xrealloc(k->ops, (k->n_ops + 1) * sizeof *k->ops);
    k->ops[k->n_ops++] = (op_count){xstrdup(name), 1};
}

static void report(checker *k, const char *model, const char *where, const ir_value *v, const ir_node *n) {
    k->unknown++;
    bool ok = allowed(k, model, v->name);
    if (ok) k->allowed++;
    if (n) count_op(k, n);
    printf("%s %s: '%s'%s%s", ok ? "allowed" : "UNKNOWN", model, v->name, where[0] ? " in " : "", where);
    if (n)
        printf(", output %zu of node '%s' (%s%s%s, opset %lld)\n", v->producer_output,
               n->name && n->name[0] ? n->name : "", n->domain && n->domain[0] ? n->domain : "",
               n->domain && n->domain[0] ? ":" : "", n->op_type, (long long)n->opset);
    else printf(", a graph input\n");
}

/* Every graph input and node output of g and its bodies. `where` names the
 * body by the path of nodes and attributes leading to it ("" for the main
 * graph), as the session's reports do. */
static void check_graph(checker *k, const char *model, const ir_graph *g, const char *where) {
    for (size_t i = 0; i < g->n_inputs; i++) {
        const ir_value *v = g->inputs[i];
        if (!v || v->constant) continue; /* an initializer has its tensor's type */
        k->values++;
        if (!type_known(&v->type, 0)) report(k, model, where, v, NULL);
    }
    for (size_t j = 0; j < g->n_nodes; j++) {
        const ir_node *n = g->nodes[j];
        for (size_t o = 0; o < n->n_outputs; o++) {
            const ir_value *v = n->outputs[o];
            if (!v) continue; /* an omitted optional output */
            k->values++;
            if (!type_known(&v->type, 0)) report(k, model, where, v, n);
        }
        for (size_t a = 0; a < n->n_attrs; a++) {
            const ir_attr *at = &n->attrs[a];
            size_t count = at->g ? 1 : (at->graphs ? at->count : 0);
            for (size_t b = 0; b < count; b++) {
                char sub[2048];
                snprintf(sub, sizeof sub, "%s%s%s/%s", where, where[0] ? "/" : "",
                         n->name && n->name[0] ? n->name : n->op_type, at->name);
                check_graph(k, model, at->g ? at->g : at->graphs[b], sub);
            }
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Models                                                                    */

/* Forgets the declared type of every node output (graph outputs and
 * value_info), here and in bodies, so that only the rules can give them;
 * the declarations go to k->saved, to be compared with what the rules say. */
static void drop_declared(checker *k, ir_graph *g) {
    for (size_t j = 0; j < g->n_nodes; j++) {
        const ir_node *n = g->nodes[j];
        for (size_t o = 0; o < n->n_outputs; o++) {
            ir_value *v = n->outputs[o];
            if (!v) continue;
            if (v->type.kind != IR_TYPE_UNKNOWN) {
                k->saved = xrealloc(k->saved, (k->n_saved + 1) * sizeof *k->saved);
                k->saved[k->n_saved].v = v;
                k->saved[k->n_saved].type = v->type; /* moved: v's is reset below */
                k->n_saved++;
            }
            memset(&v->type, 0, sizeof v->type);
            v->type.rank = -1;
        }
        for (size_t a = 0; a < n->n_attrs; a++) {
            const ir_attr *at = &n->attrs[a];
            size_t count = at->g ? 1 : (at->graphs ? at->count : 0);
            for (size_t b = 0; b < count; b++) drop_declared(k, at->g ? at->g : at->graphs[b]);
        }
    }
}

/* Where an inferred type contradicts the declared one: a kind, element type,
 * rank or fixed dim that differ (what either leaves open is no
 * contradiction). Writes the first difference into why. */
static bool types_differ(const ir_type *decl, const ir_type *inf, char *why, size_t size, int depth) {
    if (!decl || !inf || decl->kind == IR_TYPE_UNKNOWN || inf->kind == IR_TYPE_UNKNOWN || depth > 64) return false;
    if (decl->kind != inf->kind) {
        snprintf(why, size, "kind %d, declared %d", (int)inf->kind, (int)decl->kind);
        return true;
    }
    if (decl->kind == IR_TYPE_TENSOR || decl->kind == IR_TYPE_SPARSE_TENSOR) {
        if (decl->elem_type && inf->elem_type && decl->elem_type != inf->elem_type) {
            snprintf(why, size, "element type %s, declared %s", tsr_elem_type_name(inf->elem_type),
                     tsr_elem_type_name(decl->elem_type));
            return true;
        }
        if (decl->rank < 0 || inf->rank < 0) return false;
        if (decl->rank != inf->rank) {
            snprintf(why, size, "rank %d, declared %d", (int)inf->rank, (int)decl->rank);
            return true;
        }
        for (int32_t d = 0; d < decl->rank; d++)
            if (decl->dims[d].value >= 0 && inf->dims[d].value >= 0 && decl->dims[d].value != inf->dims[d].value) {
                snprintf(why, size, "dim %d is %lld, declared %lld", (int)d, (long long)inf->dims[d].value,
                         (long long)decl->dims[d].value);
                return true;
            }
        return false;
    }
    if (decl->kind == IR_TYPE_MAP && decl->key_type && inf->key_type && decl->key_type != inf->key_type) {
        snprintf(why, size, "map key %d, declared %d", (int)inf->key_type, (int)decl->key_type);
        return true;
    }
    return types_differ(decl->elem, inf->elem, why, size, depth + 1);
}

static void compare_saved(checker *k, const char *model) {
    for (size_t i = 0; i < k->n_saved; i++) {
        const ir_value *v = k->saved[i].v;
        char why[256];
        if (types_differ(&k->saved[i].type, &v->type, why, sizeof why, 0)) {
            char key[1100];
            snprintf(key, sizeof key, "%s!mismatch", v->name);
            bool ok = allowed(k, model, key);
            if (!ok) k->mismatches++;
            const ir_node *n = v->producer;
            printf("%s %s: '%s' from %s%s%s: inferred %s\n", ok ? "allowed-mismatch" : "MISMATCH", model, v->name,
                   n && n->domain && n->domain[0] ? n->domain : "", n && n->domain && n->domain[0] ? ":" : "",
                   n ? n->op_type : "?", why);
        }
        ir_type_clear(&k->saved[i].type);
    }
    k->n_saved = 0;
}

static void check_model(checker *k, const char *path, const char *model) {
    k->models++;
    mark_checked(k, model);
    ir_model *m = NULL;
    /* session_finish's steps up to and including shape inference */
    tsr_status *st = ir_model_load_file(path, &m);
    if (!st && k->undeclared) drop_declared(k, m->graph);
    if (!st) st = gradient_expand(m->graph);
    if (!st) st = ir_graph_lower_einsum(m->graph);
    if (!st) st = ir_infer_shapes(m->graph);
    if (st) {
        bool ok = allowed(k, model, "*");
        if (!ok) k->errors++;
        printf("%s %s: %s\n", ok ? "allowed-error" : "ERROR", model, tsr_status_message(st));
        tsr_status_free(st);
    } else {
        check_graph(k, model, m->graph, "");
    }
    compare_saved(k, model);
    ir_model_free(m);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool ends_with(const char *s, const char *tail) {
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && !strcmp(s + n - t, tail);
}

/* Walks `path` (a folder) in name order; `label` is its name in reports. */
static void walk(checker *k, const char *path, const char *label, int depth) {
    if (depth > 16) return;
    DIR *d = opendir(path);
    if (!d) return;
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        names = xrealloc(names, (n + 1) * sizeof *names);
        names[n++] = xstrdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        size_t plen = strlen(path) + strlen(names[i]) + 2, llen = strlen(label) + strlen(names[i]) + 2;
        char *p = xrealloc(NULL, plen), *l = xrealloc(NULL, llen);
        snprintf(p, plen, "%s/%s", path, names[i]);
        snprintf(l, llen, "%s/%s", label, names[i]);
        struct stat sb;
        bool found = stat(p, &sb) == 0;
        if (found && S_ISDIR(sb.st_mode)) {
            walk(k, p, l, depth + 1);
        } else if (found && S_ISREG(sb.st_mode) && ends_with(names[i], ".onnx")) {
            /* node/test_abs/model.onnx -> node/test_abs; zoo/gpt2.onnx -> zoo/gpt2 */
            if (!strcmp(names[i], "model.onnx")) l[strlen(label)] = 0;
            else l[strlen(l) - 5] = 0;
            check_model(k, p, l);
        }
        free(p);
        free(l);
        free(names[i]);
    }
    free(names);
}

static int cmp_ops(const void *a, const void *b) {
    const op_count *x = a, *y = b;
    if (x->count != y->count) return x->count < y->count ? 1 : -1;
    return strcmp(x->op, y->op);
}

int main(int argc, char **argv) {
    checker k = {0};
    bool by_op = false;
    int first = 1;
    for (; first < argc && argv[first][0] == '-'; first++) {
        if (!strcmp(argv[first], "--allow") && first + 1 < argc) read_allow(&k, argv[++first]);
        else if (!strcmp(argv[first], "--by-op")) by_op = true;
        else if (!strcmp(argv[first], "--undeclared")) k.undeclared = true;
        else break;
    }
    if (first >= argc) {
        fprintf(stderr, "usage: value_types [--allow FILE] [--by-op] [--undeclared] PATH...\n");
        return 2;
    }
    for (int i = first; i < argc; i++) {
        char *path = xstrdup(argv[i]);
        size_t len = strlen(path);
        while (len > 1 && path[len - 1] == '/') path[--len] = 0;
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        struct stat sb;
        if (stat(path, &sb) != 0) {
            fprintf(stderr, "value_types: %s not found\n", path);
            return 2;
        }
        if (S_ISDIR(sb.st_mode)) {
            walk(&k, path, base, 0);
        } else {
            char *label = xstrdup(base);
            if (ends_with(label, ".onnx")) label[strlen(label) - 5] = 0;
            check_model(&k, path, label);
            free(label);
        }
        free(path);
    }
    size_t stale = 0;
    for (size_t i = 0; i < k.n_allow; i++)
        if (k.allow[i].checked && !k.allow[i].used) {
            printf("STALE allow entry %s %s: its type is known now (remove the entry)\n", k.allow[i].model,
                   k.allow[i].value);
            stale++;
        }
    if (by_op && k.n_ops) {
        qsort(k.ops, k.n_ops, sizeof *k.ops, cmp_ops);
        printf("unknown values by producing op:\n");
        for (size_t i = 0; i < k.n_ops; i++) printf("  %6zu %s\n", k.ops[i].count, k.ops[i].op);
    }
    printf("value_types: %zu models, %zu values, %zu with an unknown element type (%zu allowed), "
           "%zu models not inferred, %zu stale allow entries",
           k.models, k.values, k.unknown, k.allowed, k.errors, stale);
    if (k.undeclared) printf(", %zu inferred types contradicting the declared ones", k.mismatches);
    printf("\n");
    bool fail = k.unknown > k.allowed || k.errors || stale || k.mismatches || k.models == 0;
    for (size_t i = 0; i < k.n_allow; i++) {
        free(k.allow[i].model);
        free(k.allow[i].value);
    }
    free(k.allow);
    for (size_t i = 0; i < k.n_ops; i++) free(k.ops[i].op);
    free(k.ops);
    free(k.saved);
    return fail ? 1 : 0;
}
