/* Which oneDNN implementation a primitive runs, and the rule that a
 * reference implementation ("ref:any", "ref_fused", "gemm:ref"...) is never
 * accepted: oneDNN falls back to one silently when its JIT kernels do not
 * cover a layout, shape or post-op, and it is then slower than Tessera's own
 * reference provider. A builder that meets one tries another formulation,
 * and a plan that still needs one fails to build (so the piece goes to
 * another provider) instead of running it. */
#include <string.h>

#include "odn.h"

const char *odn_impl_name(const_dnnl_primitive_desc_t pd) {
    const char *impl = NULL;
    if (!pd || dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success || !impl)
        return "?";
    return impl;
}

bool odn_impl_is_ref(const char *impl) {
    return strncmp(impl, "ref", 3) == 0 || strstr(impl, ":ref") != NULL || strcmp(impl, "?") == 0;
}

dnnl_status_t odn_pd_create(odn_plan *p, const void *desc, const_dnnl_primitive_attr_t attr,
                            dnnl_primitive_desc_t *pd) {
    dnnl_status_t st = dnnl_primitive_desc_create(pd, desc, attr, p->engine, NULL);
    if (st != dnnl_success) return st;
    if (odn_impl_is_ref(odn_impl_name(*pd))) {
        dnnl_primitive_desc_destroy(*pd);
        *pd = NULL;
        return dnnl_unimplemented;
    }
    return dnnl_success;
}
