/* QLinearSigmoid, QLinearLeakyRelu (a 256-entry table built each run) and QLinearConcat (odn_qop.c has the formulas and the claim checks). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "odn_ops.h"
#include "odn_qop.h"

#if ODN_QOP_X86
#include <immintrin.h>
#endif

/* --- table ops: QLinearSigmoid, QLinearLeakyRelu, QLinearConcat --------- */

/* MlasComputeLogisticF32KernelFma3 on one value, as ref_quant_ms.c. */
static float mlas_logistic(float x) {
    if (x < -18.0f) x = -18.0f;
    if (x > 18.0f) x = 18.0f;
    float x2 = x * x;
    float p = fmaf(x2, 4.37031012579801e-11f, 1.15627324459942e-07f);
    p = fmaf(x2, p, 6.08574864600143e-05f);
    p = fmaf(x2, p, 8.51377133304701e-03f);
    p = fmaf(x2, p, 2.48287947061529e-01f);
    float q = fmaf(x2, 6.10247389755681e-13f, 5.76102136993427e-09f);
    q = fmaf(x2, q, 6.29106785017040e-06f);
    q = fmaf(x2, q, 1.70198817374094e-03f);
    q = fmaf(x2, q, 1.16817656904453e-01f);
    q = fmaf(x2, q, 9.93151921023180e-01f);
    p = x * p;
    float v = p / q + 0.5f;
    return v < 0.0f ? 0.0f : v;
}

enum { TABLE_IDENTITY, TABLE_SIGMOID, TABLE_LEAKY };

/* QlinearBuildLookupTable: entry b is f(xs * (x - zx)) quantized as
 * round(v / ys) + zy saturated. */
static void build_table(int32_t t, float xs, int32_t zx, float ys, int32_t zy, int fn, float alpha, uint8_t *table) {
    for (int i = 0; i < 256; i++) {
        int32_t x = t == TSR_INT8 ? (int32_t)(int8_t)(uint8_t)i : i;
        float v = xs * (float)(x - zx);
        if (fn == TABLE_SIGMOID) v = mlas_logistic(v);
        else if (fn == TABLE_LEAKY) v = v >= 0.0f ? v : alpha * v;
        odn_qop_put(t, table, (size_t)i, v / ys, zy);
    }
}

typedef struct qtable {
    int fn;
    float alpha;
    int32_t type;
    int64_t count;
    odn_qop_param p[4]; /* xs, zx, ys, zy */
} qtable;

static tsr_status *run_table(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const qtable *c = ctx;
    const uint8_t *x = odn_q_handle(src);
    uint8_t *y = odn_q_handle(dst);
    if (!x || !y) return odn_host->status_new(TSR_ERR_PROVIDER, "onednn: table op without buffers");
    uint8_t table[256];
    build_table(c->type, odn_qop_scale(&c->p[0]), odn_qop_zp(&c->p[1]), odn_qop_scale(&c->p[2]), odn_qop_zp(&c->p[3]),
                c->fn, c->alpha, table);
    int64_t count = c->count;
#pragma omp parallel for if (count > 262144) schedule(static)
    for (int64_t i = 0; i < count; i++) y[i] = table[x[i]];
    return NULL;
}

tsr_status *odn_qop_build_table(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *vx, *vy = odn_plan_value(p, odn_host->node_output(n, 0));
    dnnl_memory_t mx;
    tsr_status *s = odn_qop_data_in(p, n, 0, &vx, &mx);
    if (s) return s;
    if (!vy) return odn_node_error(n, TSR_ERR_PROVIDER, "internal: output");
    qtable *c = odn_plan_alloc(p, sizeof *c);
    if (!c) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    memset(c, 0, sizeof *c);
    bool sig = strcmp(odn_host->node_op_type(n), "QLinearSigmoid") == 0;
    c->fn = sig ? TABLE_SIGMOID : TABLE_LEAKY;
    c->alpha = odn_attr_float(n, "alpha", 0.01f);
    c->type = vx->elem_type;
    c->count = odn_numel(vx->rank, vx->dims);
    dnnl_memory_t reads[16];
    size_t nreads = 0;
    for (int k = 0; k < 4 && !s; k++) s = odn_qop_param_in(p, n, (size_t)k + 1, &c->p[k], reads, &nreads);
    if (!s) s = odn_plan_define(p, vy, vx->rank, vx->dims, NULL, n);
    if (s) return s;
    return odn_plan_add_loop_reading(p, run_table, c, mx, vy->mem, reads, nreads, n);
}

#define QCAT_MAX 64
typedef struct qconcat {
    int32_t type;
    size_t count;
    int64_t outer, out_pitch;
    odn_qop_param ys, zy;
    dnnl_memory_t x[QCAT_MAX];
    odn_qop_param xs[QCAT_MAX], zx[QCAT_MAX];
    int64_t pitch[QCAT_MAX];
} qconcat;

static tsr_status *run_concat(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    (void)src;
    const qconcat *c = ctx;
    uint8_t *y = odn_q_handle(dst);
    if (!y) return odn_host->status_new(TSR_ERR_PROVIDER, "onednn: QLinearConcat without buffers");
    float ys = odn_qop_scale(&c->ys);
    int32_t zy = odn_qop_zp(&c->zy);
    int64_t offset = 0;
    for (size_t k = 0; k < c->count; k++) {
        const uint8_t *x = odn_q_handle(c->x[k]);
        if (!x) return odn_host->status_new(TSR_ERR_PROVIDER, "onednn: QLinearConcat input without buffer");
        float xs = odn_qop_scale(&c->xs[k]);
        int32_t zx = odn_qop_zp(&c->zx[k]);
        bool copy = xs == ys && zx == zy;
        uint8_t table[256];
        if (!copy) build_table(c->type, xs, zx, ys, zy, TABLE_IDENTITY, 0.0f, table);
        int64_t pitch = c->pitch[k];
        for (int64_t o = 0; o < c->outer; o++) {
            uint8_t *d = y + o * c->out_pitch + offset;
            const uint8_t *s = x + o * pitch;
            if (copy) memcpy(d, s, (size_t)pitch);
            else
                for (int64_t j = 0; j < pitch; j++) d[j] = table[s[j]];
        }
        offset += pitch;
    }
    return NULL;
}

tsr_status *odn_qop_build_concat(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    size_t count = (odn_host->node_input_count(n) - 2) / 3;
    odn_value *vy = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!vy || count > QCAT_MAX) return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "QLinearConcat of %zu inputs", count);
    qconcat *c = odn_plan_alloc(p, sizeof *c);
    if (!c) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    memset(c, 0, sizeof *c);
    c->count = count;
    dnnl_memory_t reads[16];
    size_t nreads = 0;
    tsr_status *s = odn_qop_param_in(p, n, 0, &c->ys, reads, &nreads);
    if (!s) s = odn_qop_param_in(p, n, 1, &c->zy, reads, &nreads);
    odn_value *x0 = NULL;
    int64_t axis = 0, dims[ODN_MAX_RANK];
    for (size_t k = 0; k < count && !s; k++) {
        odn_value *vx;
        s = odn_qop_data_in(p, n, 2 + 3 * k, &vx, &c->x[k]);
        if (s) break;
        if (!x0) {
            x0 = vx;
            c->type = vx->elem_type;
            axis = odn_attr_int(n, "axis", 0);
            if (axis < 0) axis += vx->rank;
            if (axis < 0 || axis >= vx->rank) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "axis out of range");
            memcpy(dims, vx->dims, sizeof dims);
            dims[axis] = 0;
        }
        if (vx->rank != x0->rank || vx->elem_type != c->type)
            return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "inputs differ in rank or type");
        for (int32_t d = 0; d < vx->rank; d++)
            if (d != axis && vx->dims[d] != x0->dims[d])
                return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "input %zu differs in dimension %d", k, (int)d);
        dims[axis] += vx->dims[axis];
        c->pitch[k] = odn_numel(vx->rank - (int32_t)axis, vx->dims + axis);
        odn_value *cv = odn_plan_value(p, odn_input(n, 2 + 3 * k));
        if (cv && !cv->constant && nreads < 12) reads[nreads++] = c->x[k];
        else if (cv && !cv->constant) s = odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "too many run-time inputs");
        if (!s) s = odn_qop_param_in(p, n, 3 + 3 * k, &c->xs[k], reads, &nreads);
        if (!s) s = odn_qop_param_in(p, n, 4 + 3 * k, &c->zx[k], reads, &nreads);
    }
    if (s) return s;
    if (!x0) return odn_node_error(n, TSR_ERR_INVALID_MODEL, "no inputs");
    c->outer = odn_numel((int32_t)axis, dims);
    c->out_pitch = odn_numel(x0->rank - (int32_t)axis, dims + axis);
    s = odn_plan_define(p, vy, x0->rank, dims, NULL, n);
    if (s) return s;
    return odn_plan_add_loop_reading(p, run_concat, c, c->x[0], vy->mem, reads, nreads, n);
}
