/*
 * ai.onnx.ml LabelEncoder: maps each element of X through a key -> value
 * table, writing a default where X holds no key.
 *
 * Opset 1 maps strings to their index in classes_strings (or indices back to
 * strings). From opset 2 the keys and values are attribute lists
 * (keys_strings / keys_int64s / keys_floats, values_* likewise) and from
 * opset 4 they may also be tensors of any type (keys_tensor, values_tensor,
 * default_tensor). Keys are compared as strings, integers or doubles
 * according to X's type; NaN keys match NaN. Where a key is listed twice,
 * its last value wins (as in the ONNX reference).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref_ml.h"

typedef enum key_kind { KEY_STRING, KEY_INT, KEY_FLOAT } key_kind;

typedef struct key {
    tsr_string s;
    int64_t i;
    double f;
    size_t value; /* index into the values */
} key;

/* Where the values (and the default) come from. */
typedef struct values {
    int32_t type; /* output element type */
    size_t count;
    const int64_t *ints;
    const float *floats;
    const tsr_attr *strings;
    const tsr_tensor *tensor;
    /* The default, as whichever field fits `type`. */
    int64_t def_i;
    double def_f;
    tsr_string def_s;
} values;

static key_kind kind_of(int32_t t) { return t == TSR_STRING ? KEY_STRING : ref_is_float(t) ? KEY_FLOAT : KEY_INT; }

static int cmp_key(key_kind k, const key *a, const key *b) {
    switch (k) {
    case KEY_STRING: {
        size_t n = a->s.size < b->s.size ? a->s.size : b->s.size;
        int r = n ? memcmp(a->s.data, b->s.data, n) : 0;
        if (r) return r;
        return a->s.size < b->s.size ? -1 : a->s.size > b->s.size;
    }
    case KEY_INT: return a->i < b->i ? -1 : a->i > b->i;
    default: {
        /* NaN sorts last and equals NaN, so a NaN key can be found. */
        bool na = isnan(a->f), nb = isnan(b->f);
        if (na || nb) return na - nb;
        return a->f < b->f ? -1 : a->f > b->f;
    }
    }
}

/* qsort has no context argument; the kind being sorted is thread-local. */
static _Thread_local key_kind sort_kind;

static int sort_cmp(const void *a, const void *b) {
    const key *x = a, *y = b;
    int r = cmp_key(sort_kind, x, y);
    if (r) return r;
    return x->value < y->value ? -1 : x->value > y->value;
}

/* The value index for k, or -1: the last of equal keys (upper bound - 1). */
static int64_t find(key_kind kind, const key *keys, size_t n, const key *k) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_key(kind, &keys[mid], k) <= 0) lo = mid + 1;
        else hi = mid;
    }
    if (!lo || cmp_key(kind, &keys[lo - 1], k) != 0) return -1;
    return (int64_t)keys[lo - 1].value;
}

/* Key i of a tensor or an attribute list into *k. */
static void tensor_key(const tsr_tensor *t, size_t i, key_kind kind, key *k) {
    memset(k, 0, sizeof *k);
    if (kind == KEY_STRING) k->s = ((const tsr_string *)t->data)[i];
    else if (kind == KEY_INT) k->i = ref_load_i64(t->elem_type, t->data, i);
    else k->f = ref_load(t->elem_type, t->data, i);
}

/* Reads the keys (opset >= 2) into a sorted array. */
static tsr_status *load_keys(ref_ctx *c, key_kind want, key **out, size_t *count) {
    const tsr_attr *ks = c->host->node_attr_find(c->node, "keys_strings");
    const int64_t *ki;
    const float *kf;
    size_t n_i = ref_attr_ints(c, "keys_int64s", &ki);
    size_t n_f = ref_attr_floats(c, "keys_floats", &kf);
    const tsr_tensor *kt = ref_opset(c) >= 4 ? ref_attr_tensor(c, "keys_tensor") : NULL;
    size_t n;
    key_kind have;
    if (ks) n = c->host->attr_list_size(ks), have = KEY_STRING;
    else if (n_i) n = n_i, have = KEY_INT;
    else if (n_f) n = n_f, have = KEY_FLOAT;
    else if (kt) n = (size_t)ref_numel(kt), have = kind_of(kt->elem_type);
    else return ref_err(c, TSR_ERR_INVALID_MODEL, "no keys_* attribute");
    if (have != want) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X's type does not match the keys' type");
    key *keys = calloc(n ? n : 1, sizeof *keys);
    if (!keys) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (ks) {
            size_t len;
            const char *s = c->host->attr_strings_at(ks, i, &len);
            keys[i].s = (tsr_string){s ? s : "", s ? len : 0};
        } else if (n_i) {
            keys[i].i = ki[i];
        } else if (n_f) {
            keys[i].f = kf[i];
        } else {
            tensor_key(kt, i, have, &keys[i]);
        }
        keys[i].value = i;
    }
    sort_kind = have;
    qsort(keys, n, sizeof *keys, sort_cmp);
    *out = keys;
    *count = n;
    return NULL;
}

/* The default for v's output type: default_tensor, default_string/_int64/_float,
 * or the operator's fallback ("_Unused", -1, -0.0). */
static void set_default(ref_ctx *c, values *v) {
    const tsr_tensor *d = ref_opset(c) >= 4 ? ref_attr_tensor(c, "default_tensor") : NULL;
    bool use_tensor = v->tensor && d && ref_numel(d) >= 1 && (d->elem_type == TSR_STRING) == (v->type == TSR_STRING);
    v->def_s = (tsr_string){"_Unused", 7};
    v->def_i = -1;
    v->def_f = -0.0;
    if (use_tensor) {
        if (v->type == TSR_STRING) v->def_s = ((const tsr_string *)d->data)[0];
        else if (ref_is_float(v->type)) v->def_f = ref_load(d->elem_type, d->data, 0);
        else v->def_i = ref_load_i64(d->elem_type, d->data, 0);
        return;
    }
    if (v->tensor) return;
    if (v->type == TSR_STRING) {
        const tsr_attr *a = c->host->node_attr_find(c->node, "default_string");
        if (a) v->def_s.data = c->host->attr_string(a, &v->def_s.size);
    } else if (v->type == TSR_FLOAT) {
        v->def_f = ref_attr_float(c, "default_float", -0.0f);
    } else {
        v->def_i = ref_attr_int(c, "default_int64", -1);
    }
}

static tsr_status *load_values(ref_ctx *c, values *v) {
    memset(v, 0, sizeof *v);
    v->strings = c->host->node_attr_find(c->node, "values_strings");
    size_t n_i = ref_attr_ints(c, "values_int64s", &v->ints);
    size_t n_f = ref_attr_floats(c, "values_floats", &v->floats);
    v->tensor = ref_opset(c) >= 4 ? ref_attr_tensor(c, "values_tensor") : NULL;
    if (v->strings) v->type = TSR_STRING, v->count = c->host->attr_list_size(v->strings);
    else if (n_i) v->type = TSR_INT64, v->count = n_i;
    else if (n_f) v->type = TSR_FLOAT, v->count = n_f;
    else if (v->tensor) v->type = v->tensor->elem_type, v->count = (size_t)ref_numel(v->tensor);
    else return ref_err(c, TSR_ERR_INVALID_MODEL, "no values_* attribute");
    if (v->type != TSR_STRING && !ref_is_int(v->type) && !ref_is_float(v->type))
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "values of type %d", (int)v->type);
    v->ints = n_i ? v->ints : NULL;
    v->floats = n_f && !n_i ? v->floats : NULL;
    set_default(c, v);
    return NULL;
}

/* Writes value idx (or the default when idx < 0) to Y[o]. */
static tsr_status *put(ref_ctx *c, const values *v, tsr_tensor *Y, size_t o, int64_t idx) {
    size_t i = (size_t)idx;
    if (v->type == TSR_STRING) {
        tsr_string s = v->def_s;
        if (idx >= 0 && v->strings) {
            s.data = c->host->attr_strings_at(v->strings, i, &s.size);
            if (!s.data) s = (tsr_string){"", 0};
        } else if (idx >= 0) {
            s = ((const tsr_string *)v->tensor->data)[i];
        }
        return c->host->tensor_set_string(Y, o, s.data, s.size);
    }
    if (idx < 0) {
        if (ref_is_float(v->type)) ref_store(v->type, Y->data, o, v->def_f);
        else ref_store_i64(v->type, Y->data, o, v->def_i);
    } else if (v->ints) {
        ref_store_i64(v->type, Y->data, o, v->ints[i]);
    } else if (v->floats) {
        ref_store(v->type, Y->data, o, v->floats[i]);
    } else if (ref_is_float(v->type)) {
        ref_store(v->type, Y->data, o, ref_load(v->tensor->elem_type, v->tensor->data, i));
    } else {
        ref_store_i64(v->type, Y->data, o, ref_load_i64(v->tensor->elem_type, v->tensor->data, i));
    }
    return NULL;
}

/* Opset 1: classes_strings, mapping strings to indices or indices back. */
static tsr_status *label_encoder_v1(ref_ctx *c, const tsr_tensor *X) {
    const tsr_attr *cl = c->host->node_attr_find(c->node, "classes_strings");
    size_t n_cls = cl ? c->host->attr_list_size(cl) : 0, n = (size_t)ref_numel(X);
    tsr_tensor *Y;
    tsr_status *st;
    if (X->elem_type == TSR_STRING) {
        if ((st = ref_out(c, 0, TSR_INT64, X->rank, X->dims, &Y))) return st;
        int64_t def = ref_attr_int(c, "default_int64", -1), *y = Y->data;
        const tsr_string *xs = X->data;
        for (size_t i = 0; i < n; i++) {
            y[i] = def;
            for (size_t k = 0; k < n_cls; k++) {
                size_t len;
                const char *s = c->host->attr_strings_at(cl, k, &len);
                if (len == xs[i].size && (!len || memcmp(s, xs[i].data, len) == 0)) {
                    y[i] = (int64_t)k;
                    break;
                }
            }
        }
        return NULL;
    }
    if (X->elem_type != TSR_INT64) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X must be string or int64");
    if ((st = ref_out(c, 0, TSR_STRING, X->rank, X->dims, &Y))) return st;
    const tsr_attr *da = c->host->node_attr_find(c->node, "default_string");
    size_t def_len = 7;
    const char *def = da ? c->host->attr_string(da, &def_len) : "_Unused";
    const int64_t *x = X->data;
    for (size_t i = 0; i < n; i++) {
        size_t len = def_len;
        const char *s = def;
        if (x[i] >= 0 && (uint64_t)x[i] < n_cls) s = c->host->attr_strings_at(cl, (size_t)x[i], &len);
        if ((st = c->host->tensor_set_string(Y, i, s ? s : "", s ? len : 0))) return st;
    }
    return NULL;
}

tsr_status *ref_ml_label_encoder(ref_ctx *c) {
    const tsr_tensor *X = ref_in(c, 0);
    if (!X) return ref_err(c, TSR_ERR_INVALID_MODEL, "input X is missing");
    if (X->elem_type != TSR_STRING && !ref_is_int(X->elem_type) && !ref_is_float(X->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X has unsupported type %d", (int)X->elem_type);
    if (ref_opset(c) < 2) return label_encoder_v1(c, X);

    key_kind kind = kind_of(X->elem_type);
    values v;
    key *keys = NULL;
    size_t n_keys = 0;
    tsr_status *st = load_values(c, &v);
    if (!st) st = load_keys(c, kind, &keys, &n_keys);
    if (!st && n_keys != v.count) st = ref_err(c, TSR_ERR_INVALID_MODEL, "%zu keys but %zu values", n_keys, v.count);
    tsr_tensor *Y;
    if (!st) st = ref_out(c, 0, v.type, X->rank, X->dims, &Y);
    size_t n = st ? 0 : (size_t)ref_numel(X);
    for (size_t i = 0; i < n && !st; i++) {
        key k;
        tensor_key(X, i, kind, &k);
        st = put(c, &v, Y, i, find(kind, keys, n_keys, &k));
    }
    free(keys);
    return st;
}
