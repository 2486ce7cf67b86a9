/*
 * The com.microsoft QOperator ops that ONNX Runtime's quantize_static
 * (QuantFormat.QOperator) writes between its QLinearConvs and
 * QLinearMatMuls: QLinearAdd, QLinearMul, QLinearSigmoid,
 * QLinearLeakyRelu, QLinearGlobalAveragePool, QLinearAveragePool (a kernel
 * covering the whole image), QLinearConcat, and (odn_qop_gemm.c) QGemm and
 * MatMulIntegerToFloat. On the reference provider alone they cut a
 * quantized ResNet into a piece per residual block, and their scalar loops
 * took a third of its run.
 *
 * Each is a C loop over plain 8-bit memories computing exactly what the
 * reference provider's ref_quant_ms.c computes (ONNX Runtime's MLAS
 * kernels, step for step in float; see there for every formula), with
 * AVX2 kernels for the element-wise ones and the pools:
 *
 *   QLinearAdd   rA = sa/sc, rB = sb/sc, fixed = zc - (rA*za + rB*zb);
 *                y = round(fma(a, rA, fma(b, rB, fixed))) saturated; a side
 *                constant along the innermost run is folded into fixed
 *                first (fixed + q*rQ, then fma(p, rP, that)).
 *   QLinearMul   y = round(float((a-za)*(b-zb)) * (sa*sb/sc) + zc).
 *   tables       the 256-entry table of the op, built each run.
 *   pools        int32 sums less zx*n, times xs/(ys*n), round, + zy.
 *
 * Rounding is half to even (vroundps / nearbyint), NaN becomes 0, and the
 * result saturates to the 8-bit type. -std=c11 keeps GCC from contracting
 * the separate float multiplies and adds into FMAs.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "odn_ops.h"
#include "odn_qop.h"

#if ODN_QOP_X86
#include <immintrin.h>
#endif

/* --- shared helpers ----------------------------------------------------- */

bool odn_qop_avx2(void) {
#if ODN_QOP_X86
    static int have = -1;
    if (have < 0) {
        __builtin_cpu_init();
        have = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }
    return have > 0;
#else
    return false;
#endif
}

float odn_qop_scale(const odn_qop_param *q) { return q->mem ? (float)odn_q_value(q->mem, q->type, 0) : 1.0f; }
int32_t odn_qop_zp(const odn_qop_param *q) { return q->mem ? (int32_t)odn_q_value(q->mem, q->type, 0) : 0; }

tsr_status *odn_qop_param_in(odn_plan *p, const tsr_node *n, size_t k, odn_qop_param *q, dnnl_memory_t *reads,
                             size_t *count) {
    tsr_status *s = odn_q_input(p, n, k, &q->mem, &q->type);
    if (s || !q->mem) return s;
    odn_value *v = odn_plan_value(p, odn_host->node_input(n, k));
    if (v && odn_numel(v->rank, v->dims) != 1)
        return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "input %zu is not one value", k);
    if (v && !v->constant && reads && *count < 12) reads[(*count)++] = q->mem;
    else if (v && !v->constant) return odn_node_error(n, TSR_ERR_PROVIDER, "internal: too many run-time parameters");
    return NULL;
}

tsr_status *odn_qop_data_in(odn_plan *p, const tsr_node *n, size_t k, odn_value **v, dnnl_memory_t *m) {
    *v = odn_plan_value(p, odn_input(n, k));
    if (!*v || !(*v)->produced || !(*v)->mem)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: input %zu not ready", k);
    return odn_plan_plain_mem(p, *v, n, m);
}

/* --- claim checks ------------------------------------------------------- */

static bool is_q8(int32_t t) { return t == TSR_UINT8 || t == TSR_INT8; }

static int32_t in_type(const tsr_node *n, size_t k) {
    const tsr_value_info *v = odn_input(n, k);
    return v ? odn_host->value_elem_type(v) : 0;
}

/* Data input k: 8-bit (of type `want` when non-zero), rank known, not empty. */
static int want_data(const tsr_node *n, size_t k, int32_t want, char *why, size_t size) {
    const tsr_value_info *v = odn_input(n, k);
    if (!v) return odn_decline(why, size, TSR_DECLINE_OTHER, "input %zu missing", k);
    int32_t t = odn_host->value_elem_type(v);
    if (!is_q8(t) || (want && t != want))
        return odn_decline(why, size, TSR_DECLINE_TYPE, "input %zu of type %d (uint8, int8 alike mapped)", k, (int)t);
    int32_t r = odn_host->value_rank(v);
    if (r < 0) return odn_decline(why, size, TSR_DECLINE_SHAPE, "input %zu rank unknown", k);
    if (r > ODN_MAX_RANK) return odn_decline(why, size, TSR_DECLINE_SHAPE, "rank above %d", ODN_MAX_RANK);
    for (int32_t d = 0; d < r; d++)
        if (odn_host->value_dim(v, d) == 0) return odn_decline(why, size, TSR_DECLINE_SHAPE, "empty tensor");
    return 0;
}

/* Scale (float) or zero point (`zt`) input k: one value; absent only when
 * not `required`. */
static int want_param(const tsr_node *n, size_t k, bool scale, int32_t zt, bool required, char *why, size_t size) {
    const tsr_value_info *v = odn_input(n, k);
    if (!v) return required ? odn_decline(why, size, TSR_DECLINE_OTHER, "input %zu missing", k) : 0;
    int32_t t = odn_host->value_elem_type(v);
    if (scale ? t != TSR_FLOAT : t != zt)
        return odn_decline(why, size, TSR_DECLINE_TYPE, "input %zu of type %d (%s)", k, (int)t,
                           scale ? "float scales mapped" : "zero point of the data's type mapped");
    int32_t r = odn_host->value_rank(v);
    int64_t cnt = r < 0 ? -1 : 1;
    for (int32_t d = 0; d < r && cnt >= 0; d++) {
        int64_t e = odn_host->value_dim(v, d);
        cnt = e < 0 ? -1 : cnt * e;
    }
    if (cnt != 1)
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "input %zu is not known to be one value (per-tensor mapped)",
                           k);
    return 0;
}

static int want_out(const tsr_node *n, int32_t t, char *why, size_t size) {
    const tsr_value_info *y = odn_host->node_output_count(n) ? odn_host->node_output(n, 0) : NULL;
    if (!y || odn_host->value_elem_type(y) != t)
        return odn_decline(why, size, TSR_DECLINE_TYPE, "output type differs from the input's");
    return 0;
}

static int check_binary(const tsr_node *n, char *why, size_t size) {
    if (odn_host->node_input_count(n) < 7) return odn_decline(why, size, TSR_DECLINE_OTHER, "C_scale missing");
    int32_t t = in_type(n, 0);
    int r = want_data(n, 0, 0, why, size);
    if (!r) r = want_data(n, 3, t, why, size);
    if (!r) r = want_param(n, 1, true, t, true, why, size);
    if (!r) r = want_param(n, 2, false, t, false, why, size);
    if (!r) r = want_param(n, 4, true, t, true, why, size);
    if (!r) r = want_param(n, 5, false, t, false, why, size);
    if (!r) r = want_param(n, 6, true, t, true, why, size);
    if (!r) r = want_param(n, 7, false, t, false, why, size);
    return r ? r : want_out(n, t, why, size);
}

static int check_unary(const tsr_node *n, char *why, size_t size) {
    int32_t t = in_type(n, 0);
    int r = want_data(n, 0, 0, why, size);
    if (!r) r = want_param(n, 1, true, t, true, why, size);
    if (!r) r = want_param(n, 2, false, t, false, why, size);
    if (!r) r = want_param(n, 3, true, t, true, why, size);
    if (!r) r = want_param(n, 4, false, t, false, why, size);
    return r ? r : want_out(n, t, why, size);
}

static int check_gap(const tsr_node *n, char *why, size_t size) {
    int r = check_unary(n, why, size);
    if (r) return r;
    if (odn_host->value_rank(odn_input(n, 0)) < 3) return odn_decline(why, size, TSR_DECLINE_SHAPE, "rank below 3");
    return 0;
}

/* QLinearAveragePool whose kernel is the whole unpadded image (known
 * statically): ORT runs it as the global pool, and so do we. */
static int check_avgpool(const tsr_node *n, char *why, size_t size) {
    int r = check_gap(n, why, size);
    if (r) return r;
    const tsr_value_info *x = odn_input(n, 0);
    int32_t rank = odn_host->value_rank(x);
    bool cl = odn_attr_int(n, "channels_last", 0) != 0;
    size_t nk = 0, np = 0;
    const int64_t *k = odn_attr_ints(n, "kernel_shape", &nk), *pads = odn_attr_ints(n, "pads", &np);
    if (odn_attr_int(n, "ceil_mode", 0) != 0 || odn_host->node_attr_find(n, "dilations") || !k ||
        nk != (size_t)(rank - 2) ||
        (!odn_attr_string_is(n, "auto_pad", "NOTSET", true) && !odn_attr_string_is(n, "auto_pad", "VALID", false)))
        return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "only a kernel covering the whole image is mapped");
    for (size_t i = 0; pads && i < np; i++)
        if (pads[i] != 0) return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "padded QLinearAveragePool");
    for (size_t d = 0; d < nk; d++) {
        int64_t in = odn_host->value_dim(x, (int32_t)(cl ? 1 + d : 2 + d));
        if (in < 0 || k[d] != in)
            return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE,
                               "kernel not known to cover the whole image (only that case is mapped)");
    }
    return 0;
}

static int check_concat(const tsr_node *n, char *why, size_t size) {
    size_t count = odn_host->node_input_count(n);
    if (count < 5 || (count - 2) % 3 != 0)
        return odn_decline(why, size, TSR_DECLINE_OTHER, "inputs are not Y_scale, Y_zero_point and triples");
    if (!odn_host->node_attr_find(n, "axis")) return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "axis missing");
    const tsr_value_info *zy = odn_input(n, 1);
    int32_t t = zy ? odn_host->value_elem_type(zy) : 0;
    if (!is_q8(t)) return odn_decline(why, size, TSR_DECLINE_TYPE, "Y_zero_point is not 8-bit");
    int r = want_param(n, 0, true, t, true, why, size);
    if (!r) r = want_param(n, 1, false, t, true, why, size);
    size_t runtime = 0; /* inputs that are not constants: the step names each (at most 12) */
    for (size_t j = 0; j < 2; j++)
        if (odn_input(n, j) && !odn_host->value_constant(odn_input(n, j))) runtime++;
    for (size_t i = 2; !r && i < count; i += 3) {
        r = want_data(n, i, t, why, size);
        if (!r) r = want_param(n, i + 1, true, t, true, why, size);
        if (!r) r = want_param(n, i + 2, false, t, false, why, size);
        for (size_t j = i; j < i + 3; j++)
            if (odn_input(n, j) && !odn_host->value_constant(odn_input(n, j))) runtime++;
    }
    if (!r && runtime > 12) return odn_decline(why, size, TSR_DECLINE_OTHER, "more than 12 run-time inputs");
    return r ? r : want_out(n, t, why, size);
}

static const char *const ms_ops[] = {"MatMulIntegerToFloat", "QGemm",         "QLinearAdd",
                                     "QLinearAveragePool",   "QLinearConcat", "QLinearGlobalAveragePool",
                                     "QLinearLeakyRelu",     "QLinearMul",    "QLinearSigmoid"};

bool odn_qop_is_ms(const char *op) {
    for (size_t i = 0; i < sizeof ms_ops / sizeof *ms_ops; i++)
        if (strcmp(op, ms_ops[i]) == 0) return true;
    return false;
}

int odn_qop_check(const tsr_node *n, char *why, size_t size) {
    const char *op = odn_host->node_op_type(n);
    if (strcmp(odn_host->node_domain(n), "com.microsoft") != 0)
        return odn_decline(why, size, TSR_DECLINE_OP, "%s outside com.microsoft", op);
    if (!strcmp(op, "QLinearAdd") || !strcmp(op, "QLinearMul")) return check_binary(n, why, size);
    if (!strcmp(op, "QLinearSigmoid") || !strcmp(op, "QLinearLeakyRelu")) return check_unary(n, why, size);
    if (!strcmp(op, "QLinearGlobalAveragePool")) return check_gap(n, why, size);
    if (!strcmp(op, "QLinearAveragePool")) return check_avgpool(n, why, size);
    if (!strcmp(op, "QLinearConcat")) return check_concat(n, why, size);
    return odn_qop_gemm_check(n, why, size);
}

/* --- Reshape and Flatten of 8-bit data ---------------------------------- */

/* The QOperator model's Reshape/Flatten between its pool and its QGemm or
 * QLinearMatMul: a view of the 8-bit buffer, as odn_build_reshape makes of
 * float ones (whose layouts it takes as float32). */
bool odn_qop_q8_view(const tsr_node *n) {
    const tsr_value_info *x = odn_input(n, 0);
    const tsr_value_info *y = odn_host->node_output_count(n) ? odn_host->node_output(n, 0) : NULL;
    if (!x || !y || !is_q8(odn_host->value_elem_type(x)) ||
        odn_host->value_elem_type(y) != odn_host->value_elem_type(x))
        return false;
    int32_t r = odn_host->value_rank(x);
    if (r < 1 || r > ODN_MAX_RANK) return false;
    for (int32_t d = 0; d < r; d++)
        if (odn_host->value_dim(x, d) == 0) return false;
    return true;
}

static tsr_status *run_copy(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const int64_t *bytes = ctx;
    const void *x = odn_q_handle(src);
    void *y = odn_q_handle(dst);
    if (!x || !y) return odn_host->status_new(TSR_ERR_PROVIDER, "onednn: copy without buffers");
    if (x != y) memmove(y, x, (size_t)*bytes);
    return NULL;
}

static tsr_status *build_q8_view(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *x = odn_plan_value(p, odn_input(n, 0)), *y = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!x || !y || !x->produced || !x->mem) return odn_node_error(n, TSR_ERR_PROVIDER, "internal: reshape inputs");
    int64_t dims[ODN_MAX_RANK], total = odn_numel(x->rank, x->dims);
    int32_t rank;
    if (strcmp(odn_host->node_op_type(n), "Flatten") == 0) {
        int64_t axis = odn_attr_int(n, "axis", 1);
        if (axis < -x->rank || axis > x->rank) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "axis out of range");
        if (axis < 0) axis += x->rank;
        dims[0] = odn_numel((int32_t)axis, x->dims);
        dims[1] = odn_numel(x->rank - (int32_t)axis, x->dims + axis);
        rank = 2;
    } else {
        int64_t count;
        const int64_t *want = odn_plan_i64(p, odn_input(n, 1), &count);
        if (!want || count > ODN_MAX_RANK)
            return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "shape must be a 1-D int64 of at most %d values",
                                  ODN_MAX_RANK);
        bool allowzero = odn_attr_int(n, "allowzero", 0) != 0;
        rank = (int32_t)count;
        int infer = -1;
        int64_t known = 1;
        for (int32_t i = 0; i < rank; i++) {
            dims[i] = want[i] == 0 && !allowzero ? (i < x->rank ? x->dims[i] : -2) : want[i];
            if (dims[i] == -1 && infer < 0) {
                infer = i;
                continue;
            }
            if (dims[i] < 0 || (dims[i] && known > INT64_MAX / dims[i]))
                return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "shape value %lld at %d", (long long)want[i],
                                      (int)i);
            known *= dims[i];
        }
        if (infer >= 0) {
            if (known == 0 || total % known)
                return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "cannot infer the -1 dim");
            dims[infer] = total / known;
        }
    }
    if (odn_numel(rank, dims) != total) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "element counts differ");
    dnnl_memory_t view;
    dnnl_memory_desc_t md;
    tsr_status *s = odn_plan_plain_view(p, x, rank, dims, NULL, n, &view, &md);
    if (s) return s;
    if (y->output_index >= 0) {
        int64_t *bytes = odn_plan_alloc(p, sizeof *bytes);
        if (!bytes) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
        *bytes = total;
        s = odn_plan_define(p, y, rank, dims, NULL, n);
        return s ? s : odn_plan_add_loop(p, run_copy, bytes, view, y->mem, n);
    }
    y->rank = rank;
    memcpy(y->dims, dims, sizeof(int64_t) * (size_t)rank);
    y->md = md;
    y->mem = view;
    y->is_view = true;
    y->produced = true;
    return NULL;
}

tsr_status *odn_build_reshape_any(odn_plan *p, size_t index) {
    odn_value *x = odn_plan_value(p, odn_input(p->nodes[index], 0));
    return x && is_q8(x->elem_type) ? build_q8_view(p, index) : odn_build_reshape(p, index);
}

/* --- the builder of every com.microsoft row ----------------------------- */

tsr_status *odn_build_qop(odn_plan *p, size_t index) {
    const char *op = odn_host->node_op_type(p->nodes[index]);
    if (!strcmp(op, "QLinearAdd") || !strcmp(op, "QLinearMul")) return odn_qop_build_binary(p, index);
    if (!strcmp(op, "QLinearSigmoid") || !strcmp(op, "QLinearLeakyRelu")) return odn_qop_build_table(p, index);
    if (!strcmp(op, "QLinearGlobalAveragePool") || !strcmp(op, "QLinearAveragePool"))
        return odn_qop_build_pool(p, index);
    if (!strcmp(op, "QLinearConcat")) return odn_qop_build_concat(p, index);
    return odn_qop_build_gemm(p, index);
}
