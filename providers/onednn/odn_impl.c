/* Which oneDNN implementation a primitive runs, and the rule that a
 * reference implementation ("ref:any", "ref_fused", "gemm:ref"...) is never
 * accepted: oneDNN falls back to one silently when its JIT kernels do not
 * cover a layout, shape or post-op, and it is then slower than Tessera's own
 * reference provider. A builder that meets one tries another formulation,
 * and a plan that still needs one fails to build (so the piece goes to
 * another provider) instead of running it. */
#include <stdio.h>
#include <string.h>

#include "odn.h"

const char *odn_impl_name(const_dnnl_primitive_desc_t pd) {
    const char *impl = NULL;
    if (!pd || dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success || !impl) return "?";
    return impl;
}

bool odn_impl_is_ref(const char *impl) {
    /* "ref:any", "ref_int8:any", "gemm:ref", and "bnorm_ref:any" (oneDNN
     * 2.6's batch normalization over any 3-D layout) */
    return strncmp(impl, "ref", 3) == 0 || strstr(impl, ":ref") != NULL || strstr(impl, "_ref") != NULL ||
        strcmp(impl, "?") == 0;
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

void odn_md_text(const dnnl_memory_desc_t *md, char *buf, size_t size) {
    size_t len = 0;
    buf[0] = 0;
    if (!md || md->ndims <= 0) {
        snprintf(buf, size, "none");
        return;
    }
    for (int i = 0; i < md->ndims && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%lld", i ? "x" : "", (long long)md->dims[i]);
    if (md->format_kind != dnnl_blocked || len >= size) return;
    const dnnl_blocking_desc_t *b = &md->format_desc.blocking;
    len += (size_t)snprintf(buf + len, size - len, " strides ");
    for (int i = 0; i < md->ndims && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%lld", i ? ":" : "", (long long)b->strides[i]);
    if (b->inner_nblks && len < size) snprintf(buf + len, size - len, " blocked by %lld", (long long)b->inner_blks[0]);
}
