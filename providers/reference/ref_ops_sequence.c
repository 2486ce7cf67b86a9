/* Sequences and optionals: SequenceEmpty/Construct/At/Insert/Erase/Length,
 * SplitToSequence, ConcatFromSequence, Optional, OptionalHasElement,
 * OptionalGetElement. Values that are not plain tensors reach kernels
 * through the host API's value slots (run_input_value and friends). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"

#define TRY(x)                              \
    do {                                    \
        tsr_status *try_s_ = (x);           \
        if (try_s_) return try_s_;          \
    } while (0)

static bool has_value_api(const tsr_host_api *h) {
    return TSR_HAS_MEMBER(h, tsr_host_api, val_free);
}

/* Node input i as a value of any kind; NULL when omitted. */
static const tsr_value *in_value(ref_ctx *c, size_t i) {
    if (i >= c->n_in || c->in_map[i] < 0) return NULL;
    return c->host->run_input_value(c->run, (size_t)c->in_map[i]);
}

static tsr_status *need_kind(ref_ctx *c, size_t i, int32_t kind, const tsr_value **out) {
    const tsr_value *v = in_value(c, i);
    if (!v || c->host->val_kind(v) != kind)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input %zu must be a %s", i,
                       kind == TSR_VALUE_SEQUENCE ? "sequence" : kind == TSR_VALUE_OPTIONAL ? "optional" : "tensor");
    *out = v;
    return NULL;
}

/* Hands `v` over as node output i (dropped when the model does not use it). */
static tsr_status *set_out(ref_ctx *c, size_t i, tsr_value *v) {
    if (!ref_out_wanted(c, i)) {
        c->host->val_free(v);
        return NULL;
    }
    return c->host->run_set_output_value(c->run, (size_t)c->out_map[i], v);
}

/* A host copy of a tensor as a new value. */
static tsr_status *tensor_value(ref_ctx *c, const tsr_tensor *t, tsr_value **out) {
    if (t->memory_kind != TSR_MEMORY_HOST) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "tensor is not in host memory");
    TRY(c->host->val_new_tensor(t->elem_type, t->rank, t->dims, out));
    tsr_tensor *d = c->host->val_tensor(*out);
    if (t->elem_type == TSR_STRING) {
        const tsr_string *s = t->data;
        for (size_t k = 0; k < t->nbytes / sizeof(tsr_string); k++) {
            tsr_status *st = c->host->tensor_set_string(d, k, s[k].data, s[k].size);
            if (st) {
                c->host->val_free(*out);
                return st;
            }
        }
    } else if (t->nbytes) {
        memcpy(d->data, t->data, t->nbytes < d->nbytes ? t->nbytes : d->nbytes);
    }
    return NULL;
}

/* Copies tensor t into node output i. */
static tsr_status *out_copy(ref_ctx *c, size_t i, const tsr_tensor *t) {
    tsr_tensor *y;
    TRY(ref_out(c, i, t->elem_type, t->rank, t->dims, &y));
    if (t->elem_type == TSR_STRING) {
        const tsr_string *s = t->data;
        for (size_t k = 0; k < t->nbytes / sizeof(tsr_string); k++)
            TRY(c->host->tensor_set_string(y, k, s[k].data, s[k].size));
    } else if (t->nbytes) {
        memcpy(y->data, t->data, t->nbytes);
    }
    return NULL;
}

/* A position input (scalar int32/int64), normalised into [0, limit]. */
static tsr_status *position(ref_ctx *c, size_t i, int64_t len, bool inclusive_end, int64_t dflt, int64_t *out) {
    const tsr_tensor *p = ref_in(c, i);
    if (!p) {
        *out = dflt;
        return NULL;
    }
    if (ref_numel(p) != 1 || !ref_is_int(p->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "position must be one integer");
    int64_t v = ref_load_i64(p->elem_type, p->data, 0);
    if (v < 0) v += len;
    if (v < 0 || v > len || (!inclusive_end && v == len))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "position %lld is out of range for a sequence of %lld",
                       (long long)ref_load_i64(p->elem_type, p->data, 0), (long long)len);
    *out = v;
    return NULL;
}

static tsr_status *ref_sequence_sequence_empty(ref_ctx *c) {
    tsr_value *s;
    TRY(c->host->val_new_sequence((int32_t)ref_attr_int(c, "dtype", TSR_FLOAT), &s));
    return set_out(c, 0, s);
}

/* Clone of `seq` with item `skip` left out (skip < 0: none). */
static tsr_status *clone_without(ref_ctx *c, const tsr_value *seq, int64_t skip, tsr_value **out) {
    TRY(c->host->val_new_sequence(c->host->val_elem_type(seq), out));
    size_t n = c->host->val_count(seq);
    for (size_t k = 0; k < n; k++) {
        if ((int64_t)k == skip) continue;
        tsr_value *item;
        tsr_status *st = c->host->val_clone(c->host->val_item(seq, k), &item);
        if (!st) st = c->host->val_append(*out, item);
        if (st) {
            c->host->val_free(*out);
            return st;
        }
    }
    return NULL;
}

static tsr_status *ref_sequence_sequence_construct(ref_ctx *c) {
    const tsr_tensor *first = ref_in(c, 0);
    tsr_value *s;
    TRY(c->host->val_new_sequence(first ? first->elem_type : 0, &s));
    for (size_t i = 0; i < c->n_in; i++) {
        const tsr_tensor *t = ref_in(c, i);
        tsr_value *item;
        tsr_status *st = !t ? ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input %zu must be a tensor", i)
                            : t->elem_type != first->elem_type
                                  ? ref_err(c, TSR_ERR_INVALID_ARGUMENT, "all inputs must have one element type")
                                  : tensor_value(c, t, &item);
        if (!st) st = c->host->val_append(s, item);
        if (st) {
            c->host->val_free(s);
            return st;
        }
    }
    return set_out(c, 0, s);
}

static tsr_status *ref_sequence_sequence_at(ref_ctx *c) {
    const tsr_value *seq = NULL;
    int64_t at;
    TRY(need_kind(c, 0, TSR_VALUE_SEQUENCE, &seq));
    TRY(position(c, 1, (int64_t)c->host->val_count(seq), false, 0, &at));
    if (!ref_in(c, 1)) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "position is required");
    const tsr_value *item = c->host->val_item(seq, (size_t)at);
    const tsr_tensor *t = c->host->val_tensor(item);
    if (t) return out_copy(c, 0, t);
    tsr_value *copy;
    TRY(c->host->val_clone(item, &copy));
    return set_out(c, 0, copy);
}

static tsr_status *ref_sequence_sequence_insert(ref_ctx *c) {
    const tsr_value *seq = NULL;
    TRY(need_kind(c, 0, TSR_VALUE_SEQUENCE, &seq));
    const tsr_tensor *t = ref_in(c, 1);
    if (!t) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "the tensor to insert is required");
    int64_t len = (int64_t)c->host->val_count(seq), at;
    TRY(position(c, 2, len, true, len, &at));
    tsr_value *out, *item;
    TRY(c->host->val_new_sequence(c->host->val_elem_type(seq) ? c->host->val_elem_type(seq) : t->elem_type, &out));
    tsr_status *st = NULL;
    for (int64_t k = 0; k <= len && !st; k++) {
        if (k == at) {
            st = tensor_value(c, t, &item);
            if (!st) st = c->host->val_append(out, item);
        }
        if (k < len && !st) {
            st = c->host->val_clone(c->host->val_item(seq, (size_t)k), &item);
            if (!st) st = c->host->val_append(out, item);
        }
    }
    if (st) {
        c->host->val_free(out);
        return st;
    }
    return set_out(c, 0, out);
}

static tsr_status *ref_sequence_sequence_erase(ref_ctx *c) {
    const tsr_value *seq = NULL;
    TRY(need_kind(c, 0, TSR_VALUE_SEQUENCE, &seq));
    int64_t len = (int64_t)c->host->val_count(seq), at;
    if (len == 0) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "cannot erase from an empty sequence");
    TRY(position(c, 1, len, false, len - 1, &at));
    tsr_value *out;
    TRY(clone_without(c, seq, at, &out));
    return set_out(c, 0, out);
}

static tsr_status *ref_sequence_sequence_length(ref_ctx *c) {
    const tsr_value *seq = NULL;
    TRY(need_kind(c, 0, TSR_VALUE_SEQUENCE, &seq));
    tsr_tensor *y;
    TRY(ref_out(c, 0, TSR_INT64, 0, NULL, &y));
    *(int64_t *)y->data = (int64_t)c->host->val_count(seq);
    return NULL;
}

/* Copies rows [start, start+len) along `axis` of x into a new value. */
static tsr_status *slice_value(ref_ctx *c, const tsr_tensor *x, int32_t axis, int64_t start, int64_t len,
                               bool keep_axis, tsr_value **out) {
    int64_t dims[REF_MAX_RANK];
    int32_t r = 0;
    size_t outer = 1, inner = 1;
    for (int32_t d = 0; d < x->rank; d++) {
        if (d < axis) outer *= (size_t)x->dims[d];
        if (d > axis) inner *= (size_t)x->dims[d];
        if (d == axis && !keep_axis) continue;
        dims[r++] = d == axis ? len : x->dims[d];
    }
    TRY(c->host->val_new_tensor(x->elem_type, r, dims, out));
    tsr_tensor *y = c->host->val_tensor(*out);
    size_t es = ref_elem_size(x->elem_type), n_axis = (size_t)x->dims[axis], block = inner * (size_t)len;
    for (size_t o = 0; o < outer; o++) {
        size_t src = (o * n_axis + (size_t)start) * inner, dst = o * block;
        if (x->elem_type == TSR_STRING) {
            const tsr_string *s = x->data;
            for (size_t k = 0; k < block; k++) {
                tsr_status *st = c->host->tensor_set_string(y, dst + k, s[src + k].data, s[src + k].size);
                if (st) {
                    c->host->val_free(*out);
                    return st;
                }
            }
        } else if (block) {
            memcpy((char *)y->data + dst * es, (const char *)x->data + src * es, block * es);
        }
    }
    return NULL;
}

static tsr_status *ref_sequence_split_to_sequence(ref_ctx *c) {
    const tsr_tensor *x = ref_in(c, 0), *split = ref_in(c, 1);
    int64_t axis;
    if (!x || x->rank < 1 || !ref_axis(ref_attr_int(c, "axis", 0), x->rank, &axis))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input must be a tensor of rank >= 1 with a valid axis");
    if (!ref_elem_size(x->elem_type)) return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d", (int)x->elem_type);
    int64_t dim = x->dims[axis];
    int64_t *sizes = NULL;
    size_t n = 0;
    bool keep = true;
    if (!split) {
        keep = ref_attr_int(c, "keepdims", 1) != 0;
        n = (size_t)dim;
        sizes = malloc(sizeof *sizes * (n + 1));
        if (!sizes) return c->host->status_new(TSR_ERR_NO_MEMORY, "out of memory");
        for (size_t k = 0; k < n; k++) sizes[k] = 1;
    } else if (split->rank == 0) {
        int64_t chunk = ref_load_i64(split->elem_type, split->data, 0);
        if (chunk <= 0) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "split must be positive");
        n = (size_t)((dim + chunk - 1) / chunk);
        sizes = malloc(sizeof *sizes * (n + 1));
        if (!sizes) return c->host->status_new(TSR_ERR_NO_MEMORY, "out of memory");
        for (size_t k = 0; k < n; k++) sizes[k] = (int64_t)k + 1 < (int64_t)n ? chunk : dim - chunk * (int64_t)k;
    } else {
        TRY(ref_tensor_i64(c, split, &sizes, &n));
        int64_t sum = 0;
        for (size_t k = 0; k < n; k++) {
            if (sizes[k] < 0 || sizes[k] > dim) sum = -1;
            if (sum >= 0) sum += sizes[k];
        }
        if (sum != dim) {
            free(sizes);
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "split sizes do not add up to dimension %lld", (long long)dim);
        }
    }
    tsr_value *seq = NULL;
    tsr_status *st = c->host->val_new_sequence(x->elem_type, &seq);
    int64_t start = 0;
    for (size_t k = 0; k < n && !st; k++) {
        tsr_value *item;
        st = slice_value(c, x, (int32_t)axis, start, sizes[k], keep, &item);
        if (!st) st = c->host->val_append(seq, item);
        start += sizes[k];
    }
    free(sizes);
    if (st) {
        if (seq) c->host->val_free(seq);
        return st;
    }
    return set_out(c, 0, seq);
}

static tsr_status *ref_sequence_concat_from_sequence(ref_ctx *c) {
    const tsr_value *seq = NULL;
    TRY(need_kind(c, 0, TSR_VALUE_SEQUENCE, &seq));
    size_t n = c->host->val_count(seq);
    if (n == 0) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "cannot concatenate an empty sequence");
    bool new_axis = ref_attr_int(c, "new_axis", 0) != 0;
    const tsr_tensor *f = c->host->val_tensor(c->host->val_item(seq, 0));
    if (!f) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "items must be tensors");
    int64_t axis;
    if (!ref_axis(ref_attr_int(c, "axis", 0), f->rank + (new_axis ? 1 : 0), &axis))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis is out of range");
    size_t es = ref_elem_size(f->elem_type);
    if (!es) return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d", (int)f->elem_type);
    int64_t dims[REF_MAX_RANK];
    int32_t r = f->rank + (new_axis ? 1 : 0);
    int64_t total = 0;
    for (size_t k = 0; k < n; k++) {
        const tsr_tensor *t = c->host->val_tensor(c->host->val_item(seq, k));
        if (!t || t->rank != f->rank || t->elem_type != f->elem_type)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "item %zu differs in rank or type", k);
        for (int32_t d = 0; d < f->rank; d++)
            if ((new_axis || d != axis) && t->dims[d] != f->dims[d])
                return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "item %zu differs in dimension %d", k, (int)d);
        total += new_axis ? 1 : t->dims[axis];
    }
    for (int32_t d = 0, src = 0; d < r; d++) dims[d] = d == axis ? total : f->dims[src++];
    if (!new_axis) {
        for (int32_t d = 0; d < r; d++) dims[d] = f->dims[d];
        dims[axis] = total;
    }
    tsr_tensor *y;
    TRY(ref_out(c, 0, f->elem_type, r, dims, &y));
    size_t outer = 1, tail = 1;
    for (int32_t d = 0; d < axis; d++) outer *= (size_t)dims[d];
    for (int32_t d = (int32_t)axis + 1; d < r; d++) tail *= (size_t)dims[d];
    size_t row = (size_t)total * tail, off = 0;
    for (size_t k = 0; k < n; k++) {
        const tsr_tensor *t = c->host->val_tensor(c->host->val_item(seq, k));
        size_t len = new_axis ? 1 : (size_t)t->dims[axis], block = len * tail;
        for (size_t o = 0; o < outer; o++) {
            size_t dst = o * row + off, src = o * block;
            if (t->elem_type == TSR_STRING) {
                const tsr_string *s = t->data;
                for (size_t e = 0; e < block; e++)
                    TRY(c->host->tensor_set_string(y, dst + e, s[src + e].data, s[src + e].size));
            } else if (block) {
                memcpy((char *)y->data + dst * es, (const char *)t->data + src * es, block * es);
            }
        }
        off += block;
    }
    return NULL;
}

static tsr_status *ref_sequence_optional(ref_ctx *c) {
    const tsr_value *v = in_value(c, 0);
    tsr_value *contents = NULL, *opt;
    if (v) TRY(c->host->val_clone(v, &contents));
    /* An empty optional's element type would come from the `type`
     * attribute, a TYPE_PROTO the loader does not keep: it stays unknown. */
    TRY(c->host->val_new_optional(contents, 0, &opt));
    return set_out(c, 0, opt);
}

static tsr_status *ref_sequence_optional_has_element(ref_ctx *c) {
    const tsr_value *v = in_value(c, 0);
    bool has = v && (c->host->val_kind(v) != TSR_VALUE_OPTIONAL || c->host->val_count(v) > 0);
    tsr_tensor *y;
    TRY(ref_out(c, 0, TSR_BOOL, 0, NULL, &y));
    *(uint8_t *)y->data = has;
    return NULL;
}

static tsr_status *ref_sequence_optional_get_element(ref_ctx *c) {
    const tsr_value *v = in_value(c, 0);
    if (!v) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input is required");
    if (c->host->val_kind(v) == TSR_VALUE_OPTIONAL) {
        if (c->host->val_count(v) == 0) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "the optional is empty");
        v = c->host->val_item(v, 0);
    }
    const tsr_tensor *t = c->host->val_tensor(v);
    if (t) return out_copy(c, 0, t);
    tsr_value *copy;
    TRY(c->host->val_clone(v, &copy));
    return set_out(c, 0, copy);
}

/* Declines when the host predates value slots. */
static int check_values(const tsr_host_api *h, const tsr_node *n, char *why, size_t size) {
    (void)n;
    if (has_value_api(h)) return 0;
    snprintf(why, size, "the host has no value API (sequences, optionals)");
    return TSR_DECLINE_OTHER;
}

const ref_op ref_ops_sequence[] = {
    {"", "SequenceEmpty", 11, ref_sequence_sequence_empty, check_values},
    {"", "SequenceConstruct", 11, ref_sequence_sequence_construct, check_values},
    {"", "SequenceAt", 11, ref_sequence_sequence_at, check_values},
    {"", "SequenceInsert", 11, ref_sequence_sequence_insert, check_values},
    {"", "SequenceErase", 11, ref_sequence_sequence_erase, check_values},
    {"", "SequenceLength", 11, ref_sequence_sequence_length, check_values},
    {"", "SplitToSequence", 11, ref_sequence_split_to_sequence, check_values},
    {"", "ConcatFromSequence", 11, ref_sequence_concat_from_sequence, check_values},
    {"", "Optional", 15, ref_sequence_optional, check_values},
    {"", "OptionalHasElement", 15, ref_sequence_optional_has_element, check_values},
    {"", "OptionalGetElement", 15, ref_sequence_optional_get_element, check_values},
    {NULL, NULL, 0, NULL, NULL},
};
