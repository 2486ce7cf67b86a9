/* Scalar inputs and output types shared by the signal kernels. */
#include <stdio.h>

#include "ref_signal.h"

tsr_status *ref_signal_int_scalar(ref_ctx *c, const tsr_tensor *t, const char *name, int64_t *out) {
    if (!t) return ref_err(c, TSR_ERR_INVALID_MODEL, "input '%s' is required", name);
    if (!ref_is_int(t->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s must be an integer, not element type %d", name,
                       (int)t->elem_type);
    if (t->rank > 1 || ref_numel(t) != 1)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s must be a scalar (has %llu elements)", name,
                       (unsigned long long)ref_numel(t));
    *out = ref_load_i64(t->elem_type, t->data, 0);
    return NULL;
}

tsr_status *ref_signal_real_scalar(ref_ctx *c, const tsr_tensor *t, const char *name, double *out) {
    if (!t) return ref_err(c, TSR_ERR_INVALID_MODEL, "input '%s' is required", name);
    if (!ref_is_float(t->elem_type) && !ref_is_int(t->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s must be numeric, not element type %d", name, (int)t->elem_type);
    if (t->rank > 1 || ref_numel(t) != 1)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s must be a scalar (has %llu elements)", name,
                       (unsigned long long)ref_numel(t));
    *out = ref_load(t->elem_type, t->data, 0);
    return NULL;
}

bool ref_signal_output_type_ok(int64_t t) {
    return t >= INT32_MIN && t <= INT32_MAX && (ref_is_float((int32_t)t) || ref_is_int((int32_t)t));
}

int ref_signal_check_output_type(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size) {
    const tsr_attr *a = host->node_attr_find(node, "output_datatype");
    int64_t t = a ? host->attr_int(a) : TSR_FLOAT;
    if (!ref_signal_output_type_ok(t)) {
        snprintf(why, why_size, "output_datatype %lld is not a float or integer type", (long long)t);
        return TSR_DECLINE_ATTRIBUTE;
    }
    return 0;
}
