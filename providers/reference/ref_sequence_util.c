/*
 * What the sequence family's kernels share (ref_sequence.h): reaching
 * values that are not plain tensors through the host API's value slots
 * (run_input_value and friends), making them from tensors, reading
 * position inputs, and the claim-time check that the host has those slots.
 */
#include <stdio.h>
#include <string.h>

#include "ref_sequence.h"

static bool has_value_api(const tsr_host_api *h) { return TSR_HAS_MEMBER(h, tsr_host_api, val_free); }

/* Node input i as a value of any kind; NULL when omitted. */
const tsr_value *ref_sequence_in_value(ref_ctx *c, size_t i) {
    if (i >= c->n_in || c->in_map[i] < 0) return NULL;
    return c->host->run_input_value(c->run, (size_t)c->in_map[i]);
}

tsr_status *ref_sequence_need_kind(ref_ctx *c, size_t i, int32_t kind, const tsr_value **out) {
    const tsr_value *v = ref_sequence_in_value(c, i);
    if (!v || c->host->val_kind(v) != kind)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input %zu must be a %s", i,
                       kind == TSR_VALUE_SEQUENCE       ? "sequence"
                           : kind == TSR_VALUE_OPTIONAL ? "optional"
                                                        : "tensor");
    *out = v;
    return NULL;
}

/* Hands `v` over as node output i (dropped when the model does not use it). */
tsr_status *ref_sequence_set_out(ref_ctx *c, size_t i, tsr_value *v) {
    if (!ref_out_wanted(c, i)) {
        c->host->val_free(v);
        return NULL;
    }
    return c->host->run_set_output_value(c->run, (size_t)c->out_map[i], v);
}

/* A host copy of a tensor as a new value. */
tsr_status *ref_sequence_tensor_value(ref_ctx *c, const tsr_tensor *t, tsr_value **out) {
    if (t->memory_kind != TSR_MEMORY_HOST) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "tensor is not in host memory");
    TSR_TRY(c->host->val_new_tensor(t->elem_type, t->rank, t->dims, out));
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
tsr_status *ref_sequence_out_copy(ref_ctx *c, size_t i, const tsr_tensor *t) {
    tsr_tensor *y;
    TSR_TRY(ref_out(c, i, t->elem_type, t->rank, t->dims, &y));
    if (t->elem_type == TSR_STRING) {
        const tsr_string *s = t->data;
        for (size_t k = 0; k < t->nbytes / sizeof(tsr_string); k++)
            TSR_TRY(c->host->tensor_set_string(y, k, s[k].data, s[k].size));
    } else if (t->nbytes) {
        memcpy(y->data, t->data, t->nbytes);
    }
    return NULL;
}

/* A position input (scalar int32/int64), normalised into [0, limit]. */
tsr_status *ref_sequence_position(ref_ctx *c, size_t i, int64_t len, bool inclusive_end, int64_t dflt, int64_t *out) {
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

/* Declines when the host predates value slots. */
int ref_sequence_check_values(const tsr_host_api *h, const tsr_node *n, char *why, size_t size) {
    (void)n;
    if (has_value_api(h)) return 0;
    snprintf(why, size, "the host has no value API (sequences, optionals)");
    return TSR_DECLINE_OTHER;
}
