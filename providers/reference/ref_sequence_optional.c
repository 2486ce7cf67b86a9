/*
 * Optional, OptionalHasElement and OptionalGetElement.
 */

#include "ref_sequence.h"

tsr_status *ref_sequence_optional(ref_ctx *c) {
    const tsr_value *v = ref_sequence_in_value(c, 0);
    tsr_value *contents = NULL, *opt;
    if (v) TSR_TRY(c->host->val_clone(v, &contents));
    /* An empty optional's element type would come from the `type`
     * attribute, a TYPE_PROTO the loader does not keep: it stays unknown. */
    TSR_TRY(c->host->val_new_optional(contents, 0, &opt));
    return ref_sequence_set_out(c, 0, opt);
}

tsr_status *ref_sequence_optional_has_element(ref_ctx *c) {
    const tsr_value *v = ref_sequence_in_value(c, 0);
    bool has = v && (c->host->val_kind(v) != TSR_VALUE_OPTIONAL || c->host->val_count(v) > 0);
    tsr_tensor *y;
    TSR_TRY(ref_out(c, 0, TSR_BOOL, 0, NULL, &y));
    *(uint8_t *)y->data = has;
    return NULL;
}

tsr_status *ref_sequence_optional_get_element(ref_ctx *c) {
    const tsr_value *v = ref_sequence_in_value(c, 0);
    if (!v) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input is required");
    if (c->host->val_kind(v) == TSR_VALUE_OPTIONAL) {
        if (c->host->val_count(v) == 0) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "the optional is empty");
        v = c->host->val_item(v, 0);
    }
    const tsr_tensor *t = c->host->val_tensor(v);
    if (t) return ref_sequence_out_copy(c, 0, t);
    tsr_value *copy;
    TSR_TRY(c->host->val_clone(v, &copy));
    return ref_sequence_set_out(c, 0, copy);
}
