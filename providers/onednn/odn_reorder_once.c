/* Reorders of constants (weights), run once while a plan is built. They
 * share one scratchpad the plan keeps until it is built (oneDNN's user
 * scratchpad mode): in library mode a reorder's scratchpad goes with the
 * primitive, so each Winograd weight transform (which stages an alpha^2/r^2
 * times larger plain copy) faulted in megabytes of freshly zeroed pages,
 * most of ResNet-50's session creation. */
#include <stdlib.h>

#include "odn.h"
#include "odn_wino_weights.h"

/* Grows the plan's build-time scratch to at least nbytes. */
static void *scratch_at_least(odn_plan *p, size_t nbytes) {
    if (nbytes <= p->once_scratch_size) return p->once_scratch;
    size_t rounded = (nbytes + 4095) / 4096 * 4096;
    if (rounded < nbytes) return NULL;
    void *b = aligned_alloc(64, rounded);
    if (!b) return NULL;
    free(p->once_scratch);
    p->once_scratch = b;
    p->once_scratch_size = rounded;
    return b;
}

void odn_reorder_once_done(odn_plan *p) {
    free(p->once_scratch);
    p->once_scratch = NULL;
    p->once_scratch_size = 0;
}

tsr_status *odn_reorder_once(odn_plan *p, dnnl_memory_t src, const dnnl_memory_desc_t *src_md, dnnl_memory_t dst,
                             const dnnl_memory_desc_t *dst_md, const tsr_node *n) {
    void *from = NULL, *to = NULL;
    if (dst_md->format_kind == dnnl_format_kind_wino && dnnl_memory_get_data_handle(src, &from) == dnnl_success &&
        dnnl_memory_get_data_handle(dst, &to) == dnnl_success && from && to &&
        odn_wino_weights(src_md, from, dst_md, to))
        return NULL;
    dnnl_primitive_attr_t attr;
    if (dnnl_primitive_attr_create(&attr) != dnnl_success)
        return odn_node_error(n, TSR_ERR_NO_MEMORY, "weights reorder attributes");
    dnnl_primitive_desc_t pd = NULL;
    dnnl_status_t st = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    if (st == dnnl_success) st = dnnl_reorder_primitive_desc_create(&pd, src_md, p->engine, dst_md, p->engine, attr);
    dnnl_primitive_attr_destroy(attr);
    if (st != dnnl_success) return odn_dnnl_error(n, "weights reorder setup", st);
    const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    size_t sbytes = smd ? dnnl_memory_desc_get_size(smd) : 0;
    dnnl_memory_t scratch = NULL;
    if (sbytes) {
        void *buf = scratch_at_least(p, sbytes);
        if (!buf) {
            dnnl_primitive_desc_destroy(pd);
            return odn_node_error(n, TSR_ERR_NO_MEMORY, "weights reorder scratchpad of %zu bytes", sbytes);
        }
        st = dnnl_memory_create(&scratch, smd, p->engine, buf);
        if (st != dnnl_success) {
            dnnl_primitive_desc_destroy(pd);
            return odn_dnnl_error(n, "weights reorder scratchpad", st);
        }
    }
    dnnl_primitive_t prim;
    st = dnnl_primitive_create(&prim, pd);
    dnnl_primitive_desc_destroy(pd);
    if (st == dnnl_success) {
        dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratch}};
        st = dnnl_primitive_execute(prim, p->stream, scratch ? 3 : 2, args);
        if (st == dnnl_success) st = dnnl_stream_wait(p->stream);
        dnnl_primitive_destroy(prim);
    }
    if (scratch) dnnl_memory_destroy(scratch);
    return st == dnnl_success ? NULL : odn_dnnl_error(n, "weights reorder", st);
}
