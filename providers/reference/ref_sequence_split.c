/*
 * SplitToSequence and ConcatFromSequence: between one tensor and a sequence
 * of its slices along an axis.
 */
#include <stdlib.h>
#include <string.h>

#include "ref_sequence.h"

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
    TSR_TRY(c->host->val_new_tensor(x->elem_type, r, dims, out));
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

tsr_status *ref_sequence_split_to_sequence(ref_ctx *c) {
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
        TSR_TRY(ref_tensor_i64(c, split, &sizes, &n));
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
    return ref_sequence_set_out(c, 0, seq);
}

tsr_status *ref_sequence_concat_from_sequence(ref_ctx *c) {
    const tsr_value *seq = NULL;
    TSR_TRY(ref_sequence_need_kind(c, 0, TSR_VALUE_SEQUENCE, &seq));
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
    TSR_TRY(ref_out(c, 0, f->elem_type, r, dims, &y));
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
                    TSR_TRY(c->host->tensor_set_string(y, dst + e, s[src + e].data, s[src + e].size));
            } else if (block) {
                memcpy((char *)y->data + dst * es, (const char *)t->data + src * es, block * es);
            }
        }
        off += block;
    }
    return NULL;
}
