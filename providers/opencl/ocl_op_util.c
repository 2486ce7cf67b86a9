/* Reading node attributes, types and constant inputs for claims and
 * compiles. */
#include <string.h>

#include "ocl_op.h"

/* The readers are provider_util.h's, bound to ocl_host. */
int64_t ocl_attr_int(const tsr_node *n, const char *name, int64_t dflt) {
    return tsr_util_attr_int(ocl_host, n, name, dflt);
}

float ocl_attr_float(const tsr_node *n, const char *name, float dflt) {
    return tsr_util_attr_float(ocl_host, n, name, dflt);
}

int ocl_attr_ints(const tsr_node *n, const char *name, int64_t *out, int max) {
    if (!tsr_util_attr_typed(ocl_host, n, name, TSR_ATTR_INTS)) return -1;
    size_t len;
    const int64_t *v = tsr_util_attr_ints(ocl_host, n, name, &len);
    if (len > (size_t)max) return -1;
    for (size_t i = 0; i < len; i++) out[i] = v[i];
    return (int)len;
}

bool ocl_attr_string_is(const tsr_node *n, const char *name, const char *value, bool dflt) {
    return tsr_util_attr_string_is(ocl_host, n, name, value, dflt) != 0;
}

bool ocl_input_present(const tsr_node *n, size_t i) { return tsr_util_node_input(ocl_host, n, i) != NULL; }

bool ocl_output_present(const tsr_node *n, size_t i) { return tsr_util_node_output(ocl_host, n, i) != NULL; }

int32_t ocl_input_type(const tsr_node *n, size_t i) {
    return ocl_input_present(n, i) ? ocl_host->value_elem_type(ocl_host->node_input(n, i)) : 0;
}

int32_t ocl_output_type(const tsr_node *n, size_t i) {
    return ocl_output_present(n, i) ? ocl_host->value_elem_type(ocl_host->node_output(n, i)) : 0;
}

int ocl_input_const_ints(const tsr_node *n, size_t i, int64_t *out, int max) {
    if (!ocl_input_present(n, i)) return -1;
    const tsr_tensor *t = ocl_host->value_constant(ocl_host->node_input(n, i));
    if (!t || t->memory_kind != TSR_MEMORY_HOST) return -1;
    if (t->elem_type == TSR_INT64) {
        size_t c = t->nbytes / 8;
        if (c > (size_t)max) return -1;
        for (size_t k = 0; k < c; k++) out[k] = ((const int64_t *)t->data)[k];
        return (int)c;
    }
    if (t->elem_type == TSR_INT32) {
        size_t c = t->nbytes / 4;
        if (c > (size_t)max) return -1;
        for (size_t k = 0; k < c; k++) out[k] = ((const int32_t *)t->data)[k];
        return (int)c;
    }
    return -1;
}

const char *ocl_check_float(const tsr_node *n, int32_t *reason) {
    size_t ni = ocl_host->node_input_count(n), no = ocl_host->node_output_count(n);
    for (size_t i = 0; i < ni; i++)
        if (ocl_input_present(n, i) && ocl_input_type(n, i) != TSR_FLOAT) {
            *reason = TSR_DECLINE_TYPE;
            return "only float32 tensors";
        }
    for (size_t i = 0; i < no; i++)
        if (ocl_output_present(n, i) && ocl_output_type(n, i) != TSR_FLOAT) {
            *reason = TSR_DECLINE_TYPE;
            return "only float32 tensors";
        }
    return NULL;
}

const ocl_op *ocl_op_find(const char *op_type) {
    const ocl_op *tables[] = {ocl_ops_linalg, ocl_ops_nn, ocl_ops_tensor, ocl_ops_reduce, ocl_ops_pad, ocl_ops_resize};
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        for (const ocl_op *o = tables[t]; o->op_type; o++)
            if (strcmp(o->op_type, op_type) == 0) return o;
    return NULL;
}
