/* Reading node attributes with ONNX defaults, and error statuses that name
 * the node. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "odn.h"

/* The readers are provider_util.h's, bound to odn_host. */
int64_t odn_attr_int(const tsr_node *n, const char *name, int64_t dflt) {
    return tsr_util_attr_int(odn_host, n, name, dflt);
}

float odn_attr_float(const tsr_node *n, const char *name, float dflt) {
    return tsr_util_attr_float(odn_host, n, name, dflt);
}

const int64_t *odn_attr_ints(const tsr_node *n, const char *name, size_t *count) {
    return tsr_util_attr_ints(odn_host, n, name, count);
}

bool odn_attr_string_is(const tsr_node *n, const char *name, const char *want, bool dflt) {
    return tsr_util_attr_string_is(odn_host, n, name, want, dflt) != 0;
}

tsr_status *odn_node_error(const tsr_node *n, int32_t code, const char *fmt, ...) {
    char text[384], msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (n)
        snprintf(msg, sizeof msg, "onednn: node '%s' (%s): %s", odn_host->node_name(n), odn_host->node_op_type(n),
                 text);
    else snprintf(msg, sizeof msg, "onednn: %s", text);
    return odn_host->status_new(code, msg);
}

static const char *dnnl_status_text(dnnl_status_t st) {
    switch (st) {
    case dnnl_out_of_memory: return "out of memory";
    case dnnl_invalid_arguments: return "invalid arguments";
    case dnnl_unimplemented: return "no implementation for these shapes";
    case dnnl_iterator_ends: return "iterator ends";
    case dnnl_runtime_error: return "runtime error";
    case dnnl_not_required: return "not required";
    default: return "error";
    }
}

tsr_status *odn_dnnl_error(const tsr_node *n, const char *what, dnnl_status_t st) {
    return odn_node_error(n, st == dnnl_out_of_memory ? TSR_ERR_NO_MEMORY : TSR_ERR_PROVIDER, "oneDNN %s failed: %s",
                          what, dnnl_status_text(st));
}

int odn_decline(char *why, size_t size, int reason, const char *fmt, ...) {
    if (!why || !size) return reason;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, size, fmt, ap);
    va_end(ap);
    return reason;
}

int64_t odn_const_ints(const tsr_node *n, size_t k, int64_t *v, int64_t max) {
    const tsr_value_info *vi = tsr_util_node_input(odn_host, n, k);
    const tsr_tensor *t = vi ? odn_host->value_constant(vi) : NULL;
    if (!t || t->rank != 1 || t->dims[0] < 0 || t->dims[0] > max) return -1;
    size_t es = t->elem_type == TSR_INT64 ? 8 : t->elem_type == TSR_INT32 ? 4 : 0;
    if (!es || t->nbytes != (size_t)t->dims[0] * es) return -1;
    for (int64_t i = 0; i < t->dims[0]; i++)
        v[i] = es == 8 ? ((const int64_t *)t->data)[i] : ((const int32_t *)t->data)[i];
    return t->dims[0];
}
