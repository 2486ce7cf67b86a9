/* The ONNX textual syntax, enough of it for function bodies (see onnx_text.h). */
#include "onnx_text.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"

/* Bounds that keep a malformed or hostile text from asking for absurd memory. */
#define OTX_MAX_TOKEN 1024
#define OTX_MAX_LIST 65536

typedef enum tok_kind { T_END, T_IDENT, T_INT, T_FLOAT, T_STRING, T_PUNCT, T_ARROW } tok_kind;

typedef struct token {
    tok_kind kind;
    char text[OTX_MAX_TOKEN];
    char punct;
    int64_t i;
    double f;
    int line, col;
} token;

typedef struct parser {
    const char *src, *p;
    const char *what;
    int line;
    const char *line_start;
    token tok;
    tsr_status *err;
    ir_function *fn; /* the function being read (for its opset imports) */
    ir_graph *scope; /* the graph whose nodes are being read: the body or a graph attribute */
} parser;

static bool fail(parser *ps, const char *fmt, const char *arg) {
    if (ps->err) return false;
    char msg[2 * OTX_MAX_TOKEN];
    snprintf(msg, sizeof msg, fmt, arg ? arg : "");
    ps->err = tsr_error(TSR_ERR_INVALID_MODEL, "%s: line %d, column %d: %s", ps->what, ps->tok.line, ps->tok.col, msg);
    return false;
}

static const char *tok_desc(const token *t) {
    switch (t->kind) {
    case T_END: return "end of text";
    case T_ARROW: return "'=>'";
    default: return t->text;
    }
}

static void skip_space(parser *ps) {
    for (;;) {
        char c = *ps->p;
        if (c == '\n') {
            ps->line++;
            ps->line_start = ++ps->p;
        } else if (c == ' ' || c == '\t' || c == '\r') {
            ps->p++;
        } else if (c == '#') {
            while (*ps->p && *ps->p != '\n') ps->p++;
        } else {
            return;
        }
    }
}

static bool lex_number(parser *ps) {
    token *t = &ps->tok;
    const char *s = ps->p;
    const char *e = s;
    bool is_float = false;
    if (*e == '-' || *e == '+') e++;
    while (isdigit((unsigned char)*e)) e++;
    if (*e == '.') {
        is_float = true;
        e++;
        while (isdigit((unsigned char)*e)) e++;
    }
    if ((*e == 'e' || *e == 'E') &&
        (isdigit((unsigned char)e[1]) || ((e[1] == '-' || e[1] == '+') && isdigit((unsigned char)e[2])))) {
        is_float = true;
        e += 2;
        while (isdigit((unsigned char)*e)) e++;
    }
    size_t n = (size_t)(e - s);
    if (n >= sizeof t->text) return fail(ps, "number too long", NULL);
    memcpy(t->text, s, n);
    t->text[n] = 0;
    errno = 0;
    char *end;
    if (is_float) {
        t->kind = T_FLOAT;
        t->f = strtod(t->text, &end);
    } else {
        t->kind = T_INT;
        t->i = strtoll(t->text, &end, 10);
        t->f = (double)t->i;
    }
    if (*end || errno == ERANGE) return fail(ps, "bad number '%s'", t->text);
    ps->p = e;
    return true;
}

static bool lex_string(parser *ps) {
    token *t = &ps->tok;
    const char *s = ps->p + 1;
    size_t n = 0;
    while (*s && *s != '"' && *s != '\n') {
        char c = *s++;
        if (c == '\\' && *s) c = *s++;
        if (n + 1 >= sizeof t->text) return fail(ps, "string too long", NULL);
        t->text[n++] = c;
    }
    if (*s != '"') return fail(ps, "unterminated string", NULL);
    t->text[n] = 0;
    t->kind = T_STRING;
    ps->p = s + 1;
    return true;
}

/* Reads the next token into ps->tok. */
static bool next(parser *ps) {
    if (ps->err) return false;
    skip_space(ps);
    token *t = &ps->tok;
    t->line = ps->line;
    t->col = (int)(ps->p - ps->line_start) + 1;
    char c = *ps->p;
    if (!c) {
        t->kind = T_END;
        t->text[0] = 0;
        return true;
    }
    if (isalpha((unsigned char)c) || c == '_') {
        const char *s = ps->p;
        while (isalnum((unsigned char)*ps->p) || *ps->p == '_') ps->p++;
        size_t n = (size_t)(ps->p - s);
        if (n >= sizeof t->text) return fail(ps, "name too long", NULL);
        memcpy(t->text, s, n);
        t->text[n] = 0;
        t->kind = T_IDENT;
        return true;
    }
    if (isdigit((unsigned char)c) ||
        ((c == '-' || c == '+' || c == '.') && (isdigit((unsigned char)ps->p[1]) || ps->p[1] == '.')))
        return lex_number(ps);
    if (c == '"') return lex_string(ps);
    if (c == '=' && ps->p[1] == '>') {
        t->kind = T_ARROW;
        ps->p += 2;
        return true;
    }
    if (strchr("<>(){}[],:=@.-", c)) {
        t->kind = T_PUNCT;
        t->punct = c;
        t->text[0] = c;
        t->text[1] = 0;
        ps->p++;
        return true;
    }
    t->text[0] = c;
    t->text[1] = 0;
    return fail(ps, "unexpected character '%s'", t->text);
}

static bool is_punct(const parser *ps, char c) { return ps->tok.kind == T_PUNCT && ps->tok.punct == c; }

static bool expect(parser *ps, char c) {
    if (!is_punct(ps, c)) {
        char msg[64];
        snprintf(msg, sizeof msg, "expected '%c', found '%%s'", c);
        return fail(ps, msg, tok_desc(&ps->tok));
    }
    return next(ps);
}

static bool take_ident(parser *ps, char **out) {
    if (ps->tok.kind != T_IDENT) return fail(ps, "expected a name, found '%s'", tok_desc(&ps->tok));
    *out = strdup(ps->tok.text);
    if (!*out) {
        ps->err = TSR_NO_MEMORY();
        return false;
    }
    return next(ps);
}

static bool grow(parser *ps, void **arr, size_t elem, size_t n) {
    if (n >= OTX_MAX_LIST) return fail(ps, "list too long", NULL);
    void *g = realloc(*arr, elem * (n + 1));
    if (!g) {
        ps->err = TSR_NO_MEMORY();
        return false;
    }
    *arr = g;
    return true;
}

/* --- attribute values -------------------------------------------------------- */

static const struct {
    const char *name;
    int32_t type;
} attr_types[] = {{"int", TSR_ATTR_INT},       {"float", TSR_ATTR_FLOAT},   {"string", TSR_ATTR_STRING},
                  {"ints", TSR_ATTR_INTS},     {"floats", TSR_ATTR_FLOATS}, {"strings", TSR_ATTR_STRINGS},
                  {"tensor", TSR_ATTR_TENSOR}, {"graph", TSR_ATTR_GRAPH}};

static const struct {
    const char *name;
    int32_t elem;
} elem_types[] = {{"float", TSR_FLOAT}, {"double", TSR_DOUBLE}, {"int64", TSR_INT64}, {"int32", TSR_INT32},
                  {"bool", TSR_BOOL},   {"uint8", TSR_UINT8},   {"int8", TSR_INT8}};

static int32_t elem_by_name(const char *s) {
    for (size_t i = 0; i < sizeof elem_types / sizeof elem_types[0]; i++)
        if (strcmp(elem_types[i].name, s) == 0) return elem_types[i].elem;
    return 0;
}

static bool store_number(parser *ps, ir_tensor *t, size_t k, const token *v) {
    bool integral = v->kind == T_INT;
    switch (t->elem_type) {
    case TSR_FLOAT: ((float *)t->data)[k] = (float)v->f; return true;
    case TSR_DOUBLE: ((double *)t->data)[k] = v->f; return true;
    default: break;
    }
    if (!integral) return fail(ps, "'%s' is not an integer", v->text);
    switch (t->elem_type) {
    case TSR_INT64: ((int64_t *)t->data)[k] = v->i; return true;
    case TSR_INT32: ((int32_t *)t->data)[k] = (int32_t)v->i; return true;
    case TSR_BOOL:
    case TSR_UINT8: ((uint8_t *)t->data)[k] = (uint8_t)v->i; return true;
    case TSR_INT8: ((int8_t *)t->data)[k] = (int8_t)v->i; return true;
    default: return fail(ps, "unsupported tensor element type", NULL);
    }
}

/* A number token, also taking inf / nan / -inf spelled as names. */
static bool take_number(parser *ps, token *out) {
    bool neg = false;
    if (is_punct(ps, '-')) {
        neg = true;
        if (!next(ps)) return false;
    }
    *out = ps->tok;
    if (ps->tok.kind == T_IDENT && (!strcmp(ps->tok.text, "inf") || !strcmp(ps->tok.text, "nan"))) {
        out->kind = T_FLOAT;
        out->f = ps->tok.text[0] == 'i' ? INFINITY : NAN;
    } else if (ps->tok.kind != T_INT && ps->tok.kind != T_FLOAT) {
        return fail(ps, "expected a number, found '%s'", tok_desc(&ps->tok));
    }
    if (neg) {
        out->f = -out->f;
        out->i = -out->i;
    }
    return next(ps);
}

/* `float[2, 3] {1, 2, ...}` or `int64 {5}` (a scalar). */
static bool parse_tensor(parser *ps, ir_attr *a) {
    int32_t elem = elem_by_name(ps->tok.text);
    if (!elem) return fail(ps, "unknown tensor element type '%s'", ps->tok.text);
    if (!next(ps)) return false;
    int64_t dims[IR_MAX_RANK];
    int32_t rank = 0;
    if (is_punct(ps, '[')) {
        if (!next(ps)) return false;
        while (!is_punct(ps, ']')) {
            if (rank > 0 && !expect(ps, ',')) return false;
            if (ps->tok.kind != T_INT || ps->tok.i < 0)
                return fail(ps, "expected a dimension, found '%s'", tok_desc(&ps->tok));
            if (rank >= IR_MAX_RANK) return fail(ps, "too many dimensions", NULL);
            dims[rank++] = ps->tok.i;
            if (!next(ps)) return false;
        }
        if (!next(ps)) return false;
    }
    uint64_t count;
    if (!ir_dims_count(rank, dims, &count) || count > OTX_MAX_LIST) return fail(ps, "tensor too large", NULL);
    tsr_status *st = ir_tensor_new(elem, rank, dims, &a->t);
    if (st) {
        ps->err = st;
        return false;
    }
    a->type = TSR_ATTR_TENSOR;
    if (!expect(ps, '{')) return false;
    size_t k = 0;
    while (!is_punct(ps, '}')) {
        if (k > 0 && !expect(ps, ',')) return false;
        token v;
        if (!take_number(ps, &v)) return false;
        if (k >= count) return fail(ps, "more values than the tensor's shape holds", NULL);
        if (!store_number(ps, a->t, k++, &v)) return false;
    }
    if (k != count) return fail(ps, "fewer values than the tensor's shape holds", NULL);
    return next(ps);
}

static bool push_list_value(parser *ps, ir_attr *a, const token *v) {
    if (v->kind == T_STRING) {
        if (a->type != TSR_ATTR_STRINGS) return fail(ps, "list mixes strings and numbers", NULL);
        if (!grow(ps, (void **)&a->strings, sizeof(char *), a->count) ||
            !grow(ps, (void **)&a->string_lens, sizeof(size_t), a->count))
            return false;
        a->strings[a->count] = strdup(v->text);
        if (!a->strings[a->count]) {
            ps->err = TSR_NO_MEMORY();
            return false;
        }
        a->string_lens[a->count++] = strlen(v->text);
        return true;
    }
    if (a->type == TSR_ATTR_STRINGS) return fail(ps, "list mixes strings and numbers", NULL);
    if (!grow(ps, (void **)&a->ints, sizeof(int64_t), a->count) ||
        !grow(ps, (void **)&a->floats, sizeof(float), a->count))
        return false;
    if (v->kind == T_FLOAT && a->type == TSR_ATTR_INTS) return fail(ps, "'%s' is not an integer", v->text);
    a->ints[a->count] = v->i;
    a->floats[a->count++] = (float)v->f;
    return true;
}

/* After the list is read, keep the one representation its type needs. */
static void settle_list(ir_attr *a) {
    if (a->type == TSR_ATTR_INTS) {
        free(a->floats);
        a->floats = NULL;
    } else if (a->type == TSR_ATTR_FLOATS) {
        free(a->ints);
        a->ints = NULL;
    }
}

static bool parse_list(parser *ps, ir_attr *a, int32_t declared) {
    if (!next(ps)) return false;
    bool any_float = false, any_string = false;
    a->type = declared ? declared : TSR_ATTR_INTS;
    if (ps->tok.kind == T_STRING) a->type = TSR_ATTR_STRINGS;
    while (!is_punct(ps, ']')) {
        if (a->count > 0 && !expect(ps, ',')) return false;
        token v;
        if (ps->tok.kind == T_STRING) {
            v = ps->tok;
            any_string = true;
            if (!next(ps)) return false;
        } else if (!take_number(ps, &v)) {
            return false;
        }
        if (v.kind == T_FLOAT) {
            any_float = true;
            if (!declared) a->type = TSR_ATTR_FLOATS;
        }
        if (!push_list_value(ps, a, &v)) return false;
    }
    if (!declared && any_float && !any_string) a->type = TSR_ATTR_FLOATS;
    if (declared && declared != a->type)
        if (!(declared == TSR_ATTR_FLOATS && !any_string))
            return fail(ps, "list does not match its declared type", NULL);
    settle_list(a);
    return next(ps);
}

static bool parse_graph_literal(parser *ps, ir_attr *a);

/* The value after '=' (or a reference '@name'); `declared` is 0 when the
 * text gave no type. */
static bool parse_attr_value(parser *ps, ir_attr *a, int32_t declared) {
    if (is_punct(ps, '@')) {
        if (!next(ps)) return false;
        if (!declared) return fail(ps, "attribute reference '@%s' needs a declared type", ps->tok.text);
        a->type = declared;
        return take_ident(ps, &a->ref_attr_name);
    }
    if (declared == TSR_ATTR_GRAPH) return parse_graph_literal(ps, a);
    if (is_punct(ps, '[')) return parse_list(ps, a, declared);
    if (ps->tok.kind == T_STRING) {
        a->type = TSR_ATTR_STRING;
        a->s = strdup(ps->tok.text);
        if (!a->s) {
            ps->err = TSR_NO_MEMORY();
            return false;
        }
        a->s_len = strlen(a->s);
    } else if (ps->tok.kind == T_IDENT && elem_by_name(ps->tok.text)) {
        return parse_tensor(ps, a);
    } else if (is_punct(ps, '{')) {
        return fail(ps,
                    "graph-valued attributes are not supported in this form; write "
                    "'name: graph = G (inputs) => (outputs) { ... }'",
                    NULL);
    } else {
        token v;
        if (!take_number(ps, &v)) return false;
        bool as_float = declared ? declared == TSR_ATTR_FLOAT : v.kind == T_FLOAT;
        if (!as_float && v.kind == T_FLOAT) return fail(ps, "'%s' is not an integer", v.text);
        a->type = as_float ? TSR_ATTR_FLOAT : TSR_ATTR_INT;
        a->f = (float)v.f;
        a->i = v.i;
        if (declared && declared != a->type) return fail(ps, "value does not match its declared type", NULL);
        return true;
    }
    if (declared && declared != a->type) return fail(ps, "value does not match its declared type", NULL);
    return next(ps);
}

/* `name [: type] = value`; with allow_bare, just `name` (a function
 * attribute without a default: returned with type TSR_ATTR_UNDEFINED). */
static bool parse_attr(parser *ps, ir_attr *a, bool allow_bare) {
    if (!take_ident(ps, &a->name)) return false;
    int32_t declared = 0;
    if (is_punct(ps, ':')) {
        if (!next(ps)) return false;
        for (size_t i = 0; i < sizeof attr_types / sizeof attr_types[0]; i++)
            if (ps->tok.kind == T_IDENT && strcmp(ps->tok.text, attr_types[i].name) == 0) declared = attr_types[i].type;
        if (!declared) return fail(ps, "unknown attribute type '%s'", tok_desc(&ps->tok));
        if (!next(ps)) return false;
    }
    if (!is_punct(ps, '=')) {
        if (allow_bare) return true; /* type stays TSR_ATTR_UNDEFINED: no default */
        return fail(ps, "expected '=' after attribute '%s'", a->name);
    }
    if (!next(ps)) return false;
    return parse_attr_value(ps, a, declared);
}

/* --- the function ------------------------------------------------------------ */

static bool parse_opsets(parser *ps, ir_function *f) {
    if (!expect(ps, '[')) return false;
    while (!is_punct(ps, ']')) {
        if (f->n_opsets > 0 && !expect(ps, ',')) return false;
        if (ps->tok.kind != T_STRING) return fail(ps, "expected a domain string, found '%s'", tok_desc(&ps->tok));
        if (!grow(ps, (void **)&f->opsets, sizeof(ir_opset), f->n_opsets)) return false;
        ir_opset *o = &f->opsets[f->n_opsets];
        const char *d = strcmp(ps->tok.text, "ai.onnx") == 0 ? "" : ps->tok.text;
        o->domain = strdup(d);
        if (!o->domain) {
            ps->err = TSR_NO_MEMORY();
            return false;
        }
        f->n_opsets++;
        if (!next(ps) || !expect(ps, ':')) return false;
        if (ps->tok.kind != T_INT || ps->tok.i < 1)
            return fail(ps, "expected an opset version, found '%s'", tok_desc(&ps->tok));
        o->version = ps->tok.i;
        if (!next(ps)) return false;
    }
    return next(ps);
}

static bool parse_header(parser *ps, ir_function *f) {
    if (!next(ps)) return false;
    bool first = true;
    while (!is_punct(ps, '>')) {
        if (!first && !expect(ps, ',')) return false;
        first = false;
        if (ps->tok.kind != T_IDENT) return fail(ps, "expected a header key, found '%s'", tok_desc(&ps->tok));
        char key[OTX_MAX_TOKEN];
        snprintf(key, sizeof key, "%s", ps->tok.text);
        if (!next(ps) || !expect(ps, ':')) return false;
        if (strcmp(key, "opset_import") == 0) {
            if (!parse_opsets(ps, f)) return false;
        } else if (strcmp(key, "domain") == 0) {
            if (ps->tok.kind != T_STRING) return fail(ps, "expected a domain string, found '%s'", tok_desc(&ps->tok));
            free(f->domain);
            f->domain = strdup(strcmp(ps->tok.text, "ai.onnx") == 0 ? "" : ps->tok.text);
            if (!f->domain) {
                ps->err = TSR_NO_MEMORY();
                return false;
            }
            if (!next(ps)) return false;
        } else {
            return fail(ps, "unknown header key '%s'", key);
        }
    }
    return next(ps);
}

static bool parse_fn_attrs(parser *ps, ir_function *f) {
    if (!next(ps)) return false;
    while (!is_punct(ps, '>')) {
        if ((f->n_attr_names || f->n_attr_defaults) && !expect(ps, ',')) return false;
        ir_attr a;
        memset(&a, 0, sizeof a);
        bool ok = parse_attr(ps, &a, true);
        if (ok && a.ref_attr_name) ok = fail(ps, "a default cannot be a reference", NULL);
        if (ok && a.type == TSR_ATTR_UNDEFINED) {
            ok = grow(ps, (void **)&f->attr_names, sizeof(char *), f->n_attr_names);
            if (ok) {
                f->attr_names[f->n_attr_names++] = a.name;
                a.name = NULL;
            }
        } else if (ok) {
            ok = grow(ps, (void **)&f->attr_defaults, sizeof(ir_attr), f->n_attr_defaults);
            if (ok) {
                f->attr_defaults[f->n_attr_defaults++] = a;
                memset(&a, 0, sizeof a);
            }
        }
        ir_attr_clear(&a);
        if (!ok) return false;
    }
    return next(ps);
}

/* The value a node input names: one of the graph's own, else (in a graph
 * attribute) one of an enclosing graph's, which must be made before the node
 * that holds the attribute (that node is the last one read in its graph);
 * else a new value, which check_graph later requires some earlier node to make. */
static bool input_value(parser *ps, ir_graph *g, const char *name, ir_value **out) {
    if ((*out = ir_graph_find(g, name)) != NULL) return true;
    for (ir_graph *anc = g->parent; anc; anc = anc->parent) {
        ir_value *o = ir_graph_find(anc, name);
        if (!o) continue;
        bool made = o->is_graph_input || o->is_outer || (o->producer && o->producer != anc->nodes[anc->n_nodes - 1]);
        if (!made) return fail(ps, "'%s' is read before anything makes it", name);
        if ((*out = ir_graph_resolve(g, name)) == NULL) {
            ps->err = TSR_NO_MEMORY();
            return false;
        }
        return true;
    }
    tsr_status *st = ir_graph_value(g, name, out);
    if (st) ps->err = st;
    return !st;
}

/* `( a, b )` into values of the body; empty or "" entries become NULL when
 * allow_empty (node inputs, which may also name values of enclosing graphs). */
static bool parse_value_list(parser *ps, ir_graph *body, ir_value ***out, size_t *n, bool allow_empty) {
    if (!expect(ps, '(')) return false;
    bool expect_item = true;
    while (!is_punct(ps, ')') || (expect_item && *n > 0 && allow_empty)) {
        if (!expect_item) {
            if (!expect(ps, ',')) return false;
            expect_item = true;
            continue;
        }
        ir_value *v = NULL;
        bool empty = is_punct(ps, ',') || is_punct(ps, ')') || (ps->tok.kind == T_STRING && ps->tok.text[0] == 0);
        if (empty && !allow_empty) return fail(ps, "expected a name, found '%s'", tok_desc(&ps->tok));
        if (!empty) {
            if (ps->tok.kind != T_IDENT) return fail(ps, "expected a name, found '%s'", tok_desc(&ps->tok));
            if (allow_empty) {
                if (!input_value(ps, body, ps->tok.text, &v)) return false;
            } else {
                tsr_status *st = ir_graph_value(body, ps->tok.text, &v);
                if (st) {
                    ps->err = st;
                    return false;
                }
            }
        }
        if (!empty || ps->tok.kind == T_STRING)
            if (!next(ps)) return false;
        if (!grow(ps, (void **)out, sizeof(ir_value *), *n)) return false;
        (*out)[(*n)++] = v;
        expect_item = false;
    }
    return next(ps);
}

static int64_t opset_of(const ir_function *f, const char *domain) {
    for (size_t i = 0; i < f->n_opsets; i++)
        if (strcmp(f->opsets[i].domain, domain) == 0) return f->opsets[i].version;
    return 0;
}

static bool parse_node(parser *ps) {
    ir_graph *body = ps->scope;
    ir_node *n;
    tsr_status *st = ir_graph_add_node(body, &n);
    if (st) {
        ps->err = st;
        return false;
    }
    n->name = strdup("");
    if (!n->name) {
        ps->err = TSR_NO_MEMORY();
        return false;
    }
    /* Outputs first: `a, b = Op ...`. */
    for (;;) {
        if (ps->tok.kind != T_IDENT) return fail(ps, "expected an output name, found '%s'", tok_desc(&ps->tok));
        /* ONNX names are unique across nested graphs: no shadowing. */
        for (const ir_graph *anc = body->parent; anc; anc = anc->parent)
            if (ir_graph_find(anc, ps->tok.text))
                return fail(ps, "'%s' is already a value of an enclosing graph", ps->tok.text);
        ir_value *v;
        if ((st = ir_graph_value(body, ps->tok.text, &v)) != NULL) {
            ps->err = st;
            return false;
        }
        if (v->producer || v->is_outer) return fail(ps, "'%s' is produced twice", ps->tok.text);
        if (!grow(ps, (void **)&n->outputs, sizeof(ir_value *), n->n_outputs)) return false;
        v->producer = n;
        v->producer_output = n->n_outputs;
        n->outputs[n->n_outputs++] = v;
        if (!next(ps)) return false;
        if (!is_punct(ps, ',')) break;
        if (!next(ps)) return false;
    }
    if (!expect(ps, '=')) return false;
    if (is_punct(ps, '@')) {
        /* `outs = @g (ins)`: a call of the caller's graph attribute g, which
         * function_expand.c splices in with its inputs and outputs bound. */
        if (!next(ps)) return false;
        if (ps->tok.kind != T_IDENT) return fail(ps, "expected a graph attribute name, found '%s'", tok_desc(&ps->tok));
        size_t len = strlen(ps->tok.text) + 2;
        if (!(n->op_type = malloc(len)) || !(n->domain = strdup(""))) {
            ps->err = TSR_NO_MEMORY();
            return false;
        }
        snprintf(n->op_type, len, "@%s", ps->tok.text);
        if (!next(ps)) return false;
        return parse_value_list(ps, body, &n->inputs, &n->n_inputs, true);
    }
    /* [domain.]Op: the last dotted part is the op. */
    char qual[OTX_MAX_TOKEN] = "";
    for (;;) {
        if (ps->tok.kind != T_IDENT) return fail(ps, "expected an op name, found '%s'", tok_desc(&ps->tok));
        if (strlen(qual) + strlen(ps->tok.text) + 2 > sizeof qual) return fail(ps, "op name too long", NULL);
        if (qual[0]) strcat(qual, ".");
        strcat(qual, ps->tok.text);
        if (!next(ps)) return false;
        if (!is_punct(ps, '.')) break;
        if (!next(ps)) return false;
    }
    char *dot = strrchr(qual, '.');
    n->op_type = strdup(dot ? dot + 1 : qual);
    if (dot) *dot = 0;
    const char *domain = !dot || strcmp(qual, "ai.onnx") == 0 ? "" : qual;
    n->domain = strdup(domain);
    if (!n->op_type || !n->domain) {
        ps->err = TSR_NO_MEMORY();
        return false;
    }
    n->opset = opset_of(ps->fn, n->domain);
    if (is_punct(ps, '<')) {
        if (!next(ps)) return false;
        while (!is_punct(ps, '>')) {
            if (n->n_attrs > 0 && !expect(ps, ',')) return false;
            if (!grow(ps, (void **)&n->attrs, sizeof(ir_attr), n->n_attrs)) return false;
            ir_attr *a = &n->attrs[n->n_attrs++];
            memset(a, 0, sizeof *a);
            if (!parse_attr(ps, a, false)) return false;
        }
        if (!next(ps)) return false;
    }
    return parse_value_list(ps, body, &n->inputs, &n->n_inputs, true);
}

/* Every node input must be an input of its graph, made by an earlier node,
 * or (in a graph attribute) a value of an enclosing graph, which
 * input_value checked when it was read. */
static bool check_graph(parser *ps, ir_graph *b) {
    for (size_t i = 0; i < b->n_inputs; i++) b->inputs[i]->is_graph_input = true;
    for (size_t i = 0; i < b->n_nodes; i++) {
        const ir_node *n = b->nodes[i];
        for (size_t k = 0; k < n->n_attrs; k++)
            if (n->attrs[k].g && !check_graph(ps, n->attrs[k].g)) return false;
        for (size_t k = 0; k < n->n_inputs; k++) {
            const ir_value *v = n->inputs[k];
            if (!v || v->is_graph_input || v->is_outer) continue;
            if (!v->producer || v->producer->index >= i) {
                char msg[OTX_MAX_TOKEN + 64];
                snprintf(msg, sizeof msg, "node %zu (%s) reads '%s' before anything makes it", i, n->op_type, v->name);
                return fail(ps, "%s", msg);
            }
        }
    }
    for (size_t i = 0; i < b->n_outputs; i++) {
        ir_value *v = b->outputs[i];
        v->is_graph_output = true;
        /* A graph attribute may pass an input through (a Loop's condition). */
        if (!v->producer && !(b->parent && v->is_graph_input))
            return fail(ps, "output '%s' is made by no node", v->name);
    }
    return true;
}

/* `[name] (in1, in2) => (out1) { nodes }`: a graph attribute of a body node.
 * Its inputs are untyped (shape inference gives them the types the op
 * binds); its nodes may read values of the enclosing graphs. */
static bool parse_graph_literal(parser *ps, ir_attr *a) {
    char name[OTX_MAX_TOKEN] = "graph";
    if (ps->tok.kind == T_IDENT) {
        snprintf(name, sizeof name, "%s", ps->tok.text);
        if (!next(ps)) return false;
    }
    if (!ps->scope) return fail(ps, "a graph attribute outside a function body", NULL);
    if (ps->scope->depth + 1 >= IR_DEFAULT_GRAPH_DEPTH) return fail(ps, "graphs nested too deeply", NULL);
    a->type = TSR_ATTR_GRAPH;
    ir_graph *g = a->g = ir_graph_new(NULL, ps->scope, name);
    if (!g) {
        ps->err = TSR_NO_MEMORY();
        return false;
    }
    if (!parse_value_list(ps, g, &g->inputs, &g->n_inputs, false)) return false;
    for (size_t i = 0; i < g->n_inputs; i++) {
        if (g->inputs[i]->is_graph_input) return fail(ps, "input '%s' listed twice", g->inputs[i]->name);
        for (const ir_graph *anc = g->parent; anc; anc = anc->parent)
            if (ir_graph_find(anc, g->inputs[i]->name))
                return fail(ps, "'%s' is already a value of an enclosing graph", g->inputs[i]->name);
        g->inputs[i]->is_graph_input = true;
    }
    if (ps->tok.kind != T_ARROW) return fail(ps, "expected '=>', found '%s'", tok_desc(&ps->tok));
    if (!next(ps)) return false;
    if (!parse_value_list(ps, g, &g->outputs, &g->n_outputs, false)) return false;
    if (!expect(ps, '{')) return false;
    ir_graph *outer = ps->scope;
    ps->scope = g;
    while (!is_punct(ps, '}')) {
        if (ps->tok.kind == T_END) return fail(ps, "missing '}' at the end of a graph", NULL);
        if (!parse_node(ps)) return false;
    }
    ps->scope = outer;
    return next(ps);
}

static bool parse_function(parser *ps, ir_function *f) {
    if (!next(ps)) return false;
    if (is_punct(ps, '<') && !parse_header(ps, f)) return false;
    if (!take_ident(ps, &f->name)) return false;
    if (is_punct(ps, '<') && !parse_fn_attrs(ps, f)) return false;
    f->body = ir_graph_new(NULL, NULL, f->name);
    if (!f->body) {
        ps->err = TSR_NO_MEMORY();
        return false;
    }
    ps->fn = f;
    ps->scope = f->body;
    if (!parse_value_list(ps, f->body, &f->body->inputs, &f->body->n_inputs, false)) return false;
    if (ps->tok.kind != T_ARROW) return fail(ps, "expected '=>', found '%s'", tok_desc(&ps->tok));
    if (!next(ps)) return false;
    if (!parse_value_list(ps, f->body, &f->body->outputs, &f->body->n_outputs, false)) return false;
    for (size_t i = 0; i < f->body->n_inputs; i++)
        if (f->body->inputs[i]->is_graph_input) return fail(ps, "input '%s' listed twice", f->body->inputs[i]->name);
        else f->body->inputs[i]->is_graph_input = true;
    if (!expect(ps, '{')) return false;
    while (!is_punct(ps, '}')) {
        if (ps->tok.kind == T_END) return fail(ps, "missing '}' at the end of the body", NULL);
        if (!parse_node(ps)) return false;
    }
    if (!next(ps)) return false;
    if (ps->tok.kind != T_END) return fail(ps, "unexpected '%s' after the function", tok_desc(&ps->tok));
    return check_graph(ps, f->body);
}

tsr_status *onnx_text_parse_function(const char *text, const char *what, ir_function **out) {
    *out = NULL;
    if (!text) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "no function text");
    ir_function *f = calloc(1, sizeof *f);
    if (!f) return TSR_NO_MEMORY();
    f->domain = strdup("");
    parser ps = {text, text, what ? what : "function", 1, text, {0}, NULL, NULL, NULL};
    if (!f->domain) ps.err = TSR_NO_MEMORY();
    else parse_function(&ps, f);
    if (ps.err) {
        ir_function_free(f);
        return ps.err;
    }
    *out = f;
    return NULL;
}
