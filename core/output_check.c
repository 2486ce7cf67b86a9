/* A piece's outputs checked against what shape and type inference says of
 * them, before any later piece reads them: a provider that hands back an
 * int64 tensor for a float value, or a [3] for a [4,32], would otherwise
 * flow on into a wrong result with exit status 0. */
#include "output_check.h"

#include <stdio.h>

#include "status.h"

static tsr_status *mismatch(const provider_inst *prov, const ir_node *n, const ir_value *v, const char *what) {
    return tsr_error(TSR_ERR_PROVIDER, "provider '%s' running node '%s' (%s) produced '%s' with %s", prov->name,
                     n->name, n->op_type, v->name, what);
}

tsr_status *output_check(const provider_inst *prov, const ir_node *n, const ir_value *v, const rt_tensor *t) {
    const ir_type *want = &v->type;
    if (t->value || want->kind != IR_TYPE_TENSOR) return NULL; /* sequences, maps: their kinds are checked on use */
    const tsr_tensor *got = &t->view;
    char what[160];
    if (want->elem_type && got->elem_type != want->elem_type) {
        snprintf(what, sizeof what, "element type %s; inference says %s", tsr_elem_type_name(got->elem_type),
                 tsr_elem_type_name(want->elem_type));
        return mismatch(prov, n, v, what);
    }
    if (want->rank < 0) return NULL;
    if (got->rank != want->rank) {
        snprintf(what, sizeof what, "rank %d; inference says %d", (int)got->rank, (int)want->rank);
        return mismatch(prov, n, v, what);
    }
    /* A dim the model declares is not held against the run: exporters write
     * stale output shapes, and ONNX Runtime only warns about them. */
    for (int32_t d = 0; d < want->rank; d++) {
        int64_t w = want->dims[d].value;
        if (w >= 0 && got->dims[d] != w && ir_input_declared_dim(v, d) < 0) {
            snprintf(what, sizeof what, "dimension %d of %lld; inference says %lld", (int)d, (long long)got->dims[d],
                     (long long)w);
            return mismatch(prov, n, v, what);
        }
    }
    return NULL;
}
