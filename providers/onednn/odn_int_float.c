/* The steps MatMulInteger and ConvInteger share where they run in float on
 * a CPU without VNNI (odn_build_intgemm.c, odn_build_convint.c): the 8-bit
 * operand widened to float less its zero point, the int32 result rounded
 * back from the float one, and the quantize_dynamic Cast to float that
 * reads the result directly. */
#include <math.h>
#include <string.h>

#include "odn_quant.h"

typedef struct int_float {
    size_t count;
    int32_t type, zp_type;
    dnnl_memory_t zp; /* NULL: zero point 0 */
} int_float;

/* dst = float(src) - zp, the zero point read at run time (DynamicQuantizeLinear's). */
static tsr_status *widen_run(const void *vctx, dnnl_memory_t src_mem, dnnl_memory_t dst_mem) {
    const int_float *c = vctx;
    const void *src = odn_q_handle(src_mem);
    float *dst = odn_q_handle(dst_mem);
    if (!src || !dst) return odn_host->status_new(TSR_ERR_PROVIDER, "onednn: int8 operand without buffers");
    float zp = (float)odn_q_value(c->zp, c->zp_type, 0);
    ptrdiff_t count = (ptrdiff_t)c->count;
    if (c->type == TSR_UINT8) {
        const uint8_t *x = src;
#pragma omp parallel for simd if (count > 65536) schedule(static)
        for (ptrdiff_t i = 0; i < count; i++) dst[i] = (float)x[i] - zp;
    } else {
        const int8_t *x = src;
#pragma omp parallel for simd if (count > 65536) schedule(static)
        for (ptrdiff_t i = 0; i < count; i++) dst[i] = (float)x[i] - zp;
    }
    return NULL;
}

/* The int32 result from the float one (exact while below 2^24). */
static tsr_status *narrow_run(const void *vctx, dnnl_memory_t src_mem, dnnl_memory_t dst_mem) {
    const int_float *c = vctx;
    const float *src = odn_q_handle(src_mem);
    int32_t *dst = odn_q_handle(dst_mem);
    if (!src || !dst) return odn_host->status_new(TSR_ERR_PROVIDER, "onednn: int32 result without buffers");
    for (size_t i = 0; i < c->count; i++) dst[i] = (int32_t)lrintf(src[i]);
    return NULL;
}

tsr_status *odn_int_widen_step(odn_plan *p, const tsr_node *n, dnnl_memory_t src, int32_t type, size_t count,
                               dnnl_memory_t dst) {
    int_float *c = odn_plan_alloc(p, sizeof *c);
    if (!c) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    *c = (int_float){.count = count, .type = type};
    tsr_status *s = odn_q_input(p, n, 2, &c->zp, &c->zp_type);
    return s ? s : odn_plan_add_loop_reading(p, widen_run, c, src, dst, &c->zp, 1, n);
}

tsr_status *odn_int_narrow_step(odn_plan *p, const tsr_node *n, size_t count, dnnl_memory_t src, dnnl_memory_t dst) {
    int_float *c = odn_plan_alloc(p, sizeof *c);
    if (!c) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    *c = (int_float){.count = count};
    return odn_plan_add_loop(p, narrow_run, c, src, dst, n);
}

odn_value *odn_int_float_reader(odn_plan *p, const odn_value *y, const tsr_node **cast) {
    const tsr_node *c = odn_plan_sole_consumer(p, y);
    *cast = NULL;
    if (!c || strcmp(odn_host->node_op_type(c), "Cast") != 0 || odn_attr_int(c, "to", 0) != TSR_FLOAT) return NULL;
    *cast = c;
    return odn_plan_value(p, odn_host->node_output(c, 0));
}
