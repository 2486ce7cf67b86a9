/* Which nodes the oneDNN provider takes: the claim checks the op table
 * (odn_ops.c) names, one per op. Every decline says why; nothing is
 * claimed that the builders cannot compute to the reference's tolerance. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "odn_ops.h"
#include "odn_quant.h"

static bool is(const char *op, const char *name) { return strcmp(op, name) == 0; }

/* Input k's rank, or -1 when absent or unknown. */
static int32_t in_rank(const tsr_node *n, size_t k) {
    const tsr_value_info *v = odn_input(n, k);
    return v ? odn_host->value_rank(v) : -1;
}

static bool present(const tsr_node *n, size_t k) { return odn_input(n, k) != NULL; }

static bool output_used(const tsr_node *n, size_t k) {
    return k < odn_host->node_output_count(n) && odn_host->node_output(n, k) != NULL;
}

/* Known dims of input k into dims; false when rank or any dim is unknown. */
static bool known_dims(const tsr_node *n, size_t k, int32_t *rank, int64_t *dims) {
    const tsr_value_info *v = present(n, k) ? odn_host->node_input(n, k) : NULL;
    if (!v) return false;
    *rank = odn_host->value_rank(v);
    if (*rank < 0 || *rank > ODN_MAX_RANK) return false;
    for (int32_t d = 0; d < *rank; d++) {
        dims[d] = odn_host->value_dim(v, d);
        if (dims[d] < 0) return false;
    }
    return true;
}

static int check_conv(const tsr_node *n, char *why, size_t size) {
    int32_t r = in_rank(n, 0);
    if (r < 3 || r > 5)
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "Conv on rank %d input: oneDNN does 1-3 spatial dims", (int)r);
    if (in_rank(n, 1) != r) return odn_decline(why, size, TSR_DECLINE_SHAPE, "weight rank differs from input rank");
    if (present(n, 2) && in_rank(n, 2) != 1) return odn_decline(why, size, TSR_DECLINE_SHAPE, "bias is not 1-D");
    int64_t group = odn_attr_int(n, "group", 1);
    if (group < 1) return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "group %lld < 1", (long long)group);
    size_t c;
    const int64_t *a;
    const char *lists[] = {"strides", "dilations", "kernel_shape"};
    for (int i = 0; i < 3; i++) {
        a = odn_attr_ints(n, lists[i], &c);
        if (a && c != (size_t)(r - 2))
            return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "%s has %zu values for %d spatial dims", lists[i], c,
                               (int)r - 2);
        for (size_t k = 0; a && k < c; k++)
            if (a[k] < 1)
                return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "%s value %lld < 1", lists[i], (long long)a[k]);
    }
    a = odn_attr_ints(n, "pads", &c);
    if (a && c != (size_t)(2 * (r - 2))) return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "pads has %zu values", c);
    for (size_t k = 0; a && k < c; k++)
        if (a[k] < 0) return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "negative pad");
    if (!odn_attr_string_is(n, "auto_pad", "NOTSET", true) && !odn_attr_string_is(n, "auto_pad", "VALID", false) &&
        !odn_attr_string_is(n, "auto_pad", "SAME_UPPER", false) &&
        !odn_attr_string_is(n, "auto_pad", "SAME_LOWER", false))
        return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "unknown auto_pad");
    return 0;
}

static int check_pool(const tsr_node *n, const char *op, char *why, size_t size) {
    int32_t r = in_rank(n, 0);
    if (r < 3 || r > 5)
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "pooling on rank %d input: oneDNN does 1-3 spatial dims",
                           (int)r);
    if (is(op, "GlobalAveragePool") || is(op, "GlobalMaxPool")) return 0;
    if (is(op, "MaxPool") && output_used(n, 1))
        return odn_decline(why, size, TSR_DECLINE_OTHER, "MaxPool Indices output is not computed by oneDNN");
    size_t c;
    const int64_t *k = odn_attr_ints(n, "kernel_shape", &c);
    if (!k || c != (size_t)(r - 2))
        return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "kernel_shape missing or of wrong length");
    for (size_t i = 0; i < c; i++)
        if (k[i] < 1) return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "kernel_shape value < 1");
    const char *lists[] = {"strides", "dilations"};
    for (int i = 0; i < 2; i++) {
        const int64_t *a = odn_attr_ints(n, lists[i], &c);
        if (a && c != (size_t)(r - 2))
            return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "%s of wrong length", lists[i]);
        for (size_t j = 0; a && j < c; j++)
            if (a[j] < 1) return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "%s value < 1", lists[i]);
    }
    const int64_t *pads = odn_attr_ints(n, "pads", &c);
    if (pads && c != (size_t)(2 * (r - 2)))
        return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "pads of wrong length");
    for (size_t j = 0; pads && j < c; j++) {
        if (pads[j] < 0) return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "negative pad");
        /* oneDNN wants each pad smaller than the (dilated) window */
        if (pads[j] >= k[j % (size_t)(r - 2)])
            return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "pad not smaller than the kernel");
    }
    if (!odn_attr_string_is(n, "auto_pad", "NOTSET", true) && !odn_attr_string_is(n, "auto_pad", "VALID", false) &&
        !odn_attr_string_is(n, "auto_pad", "SAME_UPPER", false) &&
        !odn_attr_string_is(n, "auto_pad", "SAME_LOWER", false))
        return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "unknown auto_pad");
    if (is(op, "AveragePool") && odn_attr_int(n, "ceil_mode", 0) && odn_attr_int(n, "count_include_pad", 0))
        return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE,
                           "ceil_mode with count_include_pad counts windows oneDNN does not");
    if (is(op, "AveragePool") && odn_attr_int(n, "count_include_pad", 0) &&
        !odn_attr_string_is(n, "auto_pad", "NOTSET", true))
        return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "auto_pad with count_include_pad");
    return 0;
}

static int check_gemm(const tsr_node *n, char *why, size_t size) {
    if (in_rank(n, 0) != 2 || in_rank(n, 1) != 2)
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "Gemm inputs must be 2-D with known rank");
    if (present(n, 2)) {
        int32_t cr = in_rank(n, 2);
        if (cr < 0 || cr > 2) return odn_decline(why, size, TSR_DECLINE_SHAPE, "C of rank %d", (int)cr);
        if (odn_attr_float(n, "beta", 1.0f) != 1.0f && !odn_host->value_constant(odn_host->node_input(n, 2)))
            return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "beta != 1 needs a constant C");
    }
    return 0;
}

static int check_matmul(const tsr_node *n, char *why, size_t size) {
    int32_t ra = in_rank(n, 0), rb = in_rank(n, 1);
    if (ra < 1 || rb < 1) return odn_decline(why, size, TSR_DECLINE_SHAPE, "MatMul operand of unknown rank or scalar");
    if (ra > ODN_MAX_RANK || rb > ODN_MAX_RANK)
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "rank above %d", ODN_MAX_RANK);
    int32_t r = ra > rb ? ra : rb;
    int64_t da[ODN_MAX_RANK], db[ODN_MAX_RANK];
    if (r > 2 && known_dims(n, 0, &ra, da) && known_dims(n, 1, &rb, db)) {
        for (int32_t i = 2; i < r; i++) {
            int64_t x = i < ra ? da[ra - 1 - i] : 1, y = i < rb ? db[rb - 1 - i] : 1;
            if (x != y && x != 1 && y != 1)
                return odn_decline(why, size, TSR_DECLINE_SHAPE, "batch dims do not broadcast");
        }
    }
    return 0;
}

/* One axis of a shape as the claim sees it: a known size, or a symbol
 * (NULL when the dimension is unknown and unnamed). */
typedef struct claim_dim {
    int64_t size; /* -1 when unknown */
    const char *symbol;
} claim_dim;

static bool shape_of(const tsr_node *n, size_t k, int32_t *rank, claim_dim *dims) {
    const tsr_value_info *v = present(n, k) ? odn_host->node_input(n, k) : NULL;
    if (!v) return false;
    *rank = odn_host->value_rank(v);
    if (*rank < 0 || *rank > ODN_MAX_RANK) return false;
    for (int32_t d = 0; d < *rank; d++) {
        dims[d].size = odn_host->value_dim(v, d);
        dims[d].symbol = dims[d].size < 0 ? odn_host->value_dim_symbol(v, d) : NULL;
    }
    return true;
}

static int check_binary(const tsr_node *n, const char *op, char *why, size_t size) {
    if (odn_host->node_input_count(n) != 2 || !present(n, 0) || !present(n, 1))
        return odn_decline(why, size, TSR_DECLINE_OTHER, "%s with other than two inputs", op);
    if ((is(op, "Max") || is(op, "Min")) && odn_host->node_opset(n) < 8)
        return odn_decline(why, size, TSR_DECLINE_OPSET, "%s before opset 8 does not broadcast", op);
    if (odn_host->node_opset(n) < 7)
        return odn_decline(why, size, TSR_DECLINE_OPSET, "legacy broadcast attribute (opset < 7)");
    int32_t ra, rb;
    claim_dim da[ODN_MAX_RANK], db[ODN_MAX_RANK];
    if (!shape_of(n, 0, &ra, da) || !shape_of(n, 1, &rb, db))
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "operand ranks unknown before run time");
    /* Any broadcast of float operands runs: as a oneDNN binary where it has
     * a JIT kernel for the run-time shapes, else as a C loop
     * (odn_binary_loop.c), so symbolic dims only need to broadcast. */
    for (int32_t i = 0; i < (ra > rb ? ra : rb); i++) {
        claim_dim one = {1, NULL};
        claim_dim x = i < ra ? da[ra - 1 - i] : one, y = i < rb ? db[rb - 1 - i] : one;
        if (x.size == 0 || y.size == 0) return odn_decline(why, size, TSR_DECLINE_SHAPE, "empty tensor");
        if (x.size >= 0 && y.size >= 0 && x.size != y.size && x.size != 1 && y.size != 1)
            return odn_decline(why, size, TSR_DECLINE_SHAPE, "shapes do not broadcast");
    }
    return 0;
}

/* Whether the C loop (odn_resize_loop.c) computes this Resize/Upsample
 * whatever the run-time sizes: a mapping it has, constant scales or sizes
 * of 4 values leaving N and C alone. */
static bool resize_loop_takes(const tsr_node *n, int32_t rank) {
    char why[160];
    bool upsample = is(odn_host->node_op_type(n), "Upsample");
    if ((!upsample && odn_host->node_opset(n) < 11) || odn_resize_loop_check(n, rank, why, sizeof why)) return false;
    /* sizes name N and C too: they must be the input's (known by now, or
     * the check fails); scales must leave them at 1 */
    int64_t in[4], out[4];
    double scales[4];
    for (int d = 0; d < 4; d++) {
        int64_t v = odn_host->value_dim(odn_host->node_input(n, 0), d);
        in[d] = v > 0 ? v : 7;
    }
    return odn_resize_shape(n, in, out, scales) && out[0] == in[0] && out[1] == in[1];
}

/* Resize with constant scales (no sizes) whose every value is an integer >= 1. */
static bool integral_scales(const tsr_node *n) {
    if (odn_host->node_input_count(n) < 3 || !present(n, 2) || (odn_host->node_input_count(n) > 3 && present(n, 3)))
        return false;
    const tsr_tensor *t = odn_host->value_constant(odn_host->node_input(n, 2));
    if (!t || t->elem_type != TSR_FLOAT || t->rank != 1) return false;
    for (int64_t i = 0; i < t->dims[0]; i++) {
        float f = ((const float *)t->data)[i];
        if (!(f >= 1.0f) || f != floorf(f)) return false;
    }
    return true;
}

/* Resize whose sizes are computed at run time (torch's
 * F.interpolate(x, size=skip.shape[2:]) on dynamic shapes: Shape -> Slice
 * -> Concat on the reference provider). The sizes are a value input the
 * plan reads when it is built (and is keyed by), so the check here is the
 * attributes': a 4-D input and a mapping the C loop computes whatever sizes
 * arrive (N and C included); oneDNN's resampling runs instead where its
 * check holds for the run-time sizes (odn_build_resize). Float scales
 * computed at run time are declined (value inputs are int64). */
static int check_runtime_sizes(const tsr_node *n, int32_t rk, char *why, size_t size) {
    const tsr_value_info *z = odn_host->node_input(n, 3);
    if (odn_host->node_opset(n) < 11) return odn_decline(why, size, TSR_DECLINE_OPSET, "Resize before opset 11");
    if (odn_host->value_elem_type(z) != TSR_INT64 || odn_host->value_rank(z) != 1 || odn_host->value_dim(z, 0) != rk)
        return odn_decline(why, size, TSR_DECLINE_OTHER,
                           "sizes computed at run time is not a 1-D int64 of the input's rank");
    if (present(n, 2)) {
        const tsr_value_info *sv = odn_host->node_input(n, 2);
        const tsr_tensor *t = odn_host->value_constant(sv);
        bool empty =
            t ? odn_numel(t->rank, t->dims) == 0 : odn_host->value_rank(sv) == 1 && odn_host->value_dim(sv, 0) == 0;
        if (!empty) return odn_decline(why, size, TSR_DECLINE_OTHER, "both scales and sizes given");
    }
    if (rk != 4)
        return odn_decline(why, size, TSR_DECLINE_SHAPE,
                           "sizes computed at run time on a rank %d input (only 4-D: the C loop's)", (int)rk);
    return odn_resize_loop_check(n, rk, why, size);
}

/* Resize or Upsample whose float scales are computed at run time (torch's
 * F.interpolate(x, size=...) at opset 9-10: Shape -> Cast -> Div ->
 * Concat): a float32 value input the plan reads when it is built (the
 * provider leaves the nodes computing it to others, odn_provider.c), mapped
 * by the C loop on a 4-D input whatever the values. */
static int check_runtime_scales(const tsr_node *n, int32_t rk, size_t k, char *why, size_t size) {
    const tsr_value_info *sv = odn_host->node_input(n, k);
    if (odn_host->value_elem_type(sv) != TSR_FLOAT || odn_host->value_rank(sv) != 1 ||
        (odn_host->value_dim(sv, 0) >= 0 && odn_host->value_dim(sv, 0) != rk))
        return odn_decline(why, size, TSR_DECLINE_OTHER,
                           "scales computed at run time is not a 1-D float32 of the input's rank");
    if (rk != 4)
        return odn_decline(why, size, TSR_DECLINE_SHAPE,
                           "scales computed at run time on a rank %d input (only 4-D: the C loop's)", (int)rk);
    if (is(odn_host->node_op_type(n), "Resize") && k == 2 && present(n, 3))
        return odn_decline(why, size, TSR_DECLINE_OTHER, "both scales and sizes given");
    return odn_resize_loop_check(n, rk, why, size);
}

/* Whether input k of Resize/Upsample n holds scales computed at run time. */
static bool runtime_scales(const tsr_node *n, size_t *k) {
    bool upsample = is(odn_host->node_op_type(n), "Upsample");
    *k = upsample || odn_host->node_opset(n) < 11 ? 1 : 2;
    if (!present(n, *k)) return false;
    const tsr_value_info *sv = odn_host->node_input(n, *k);
    return !odn_host->value_constant(sv) && !(odn_host->value_rank(sv) == 1 && odn_host->value_dim(sv, 0) == 0);
}

static int check_clip(const tsr_node *n, char *why, size_t size) {
    float lo = -FLT_MAX, hi = FLT_MAX;
    if (odn_host->node_opset(n) < 11) {
        lo = odn_attr_float(n, "min", lo);
        hi = odn_attr_float(n, "max", hi);
    } else {
        for (size_t k = 1; k <= 2; k++) {
            if (!present(n, k)) continue;
            const tsr_tensor *t = odn_host->value_constant(odn_host->node_input(n, k));
            if (!t) return odn_decline(why, size, TSR_DECLINE_OTHER, "Clip bounds must be constants");
            if (!odn_tensor_scalar(t, k == 1 ? &lo : &hi))
                return odn_decline(why, size, TSR_DECLINE_TYPE, "Clip bound is not a float scalar");
        }
    }
    if (lo > hi) return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "Clip min above max");
    return 0;
}

/* Which operands check_types skips: those read when the plan is built
 * (shape, axes, roi, scales, sizes, pads, starts...), not computed on. */
typedef enum build_time_inputs {
    BUILD_TIME_NONE,   /* every operand is data */
    BUILD_TIME_SECOND, /* input 1: Reshape's shape, Reduce*'s axes */
    BUILD_TIME_REST,   /* inputs 1 on: Resize, Upsample, Split, Pad, Slice */
} build_time_inputs;

/* float32, or float16 computed in float32 (odn_f16.c); one of them for
 * every float operand and output of the node */
static int check_types(const tsr_node *n, build_time_inputs skip, char *why, size_t size) {
    const char *op = odn_host->node_op_type(n);
    int32_t ft = 0; /* the node's float type, from its first float operand */
    for (size_t k = 0; k < odn_host->node_input_count(n); k++) {
        const tsr_value_info *v = odn_host->node_input(n, k);
        if (!v || (k == 1 && skip == BUILD_TIME_SECOND) || (k >= 1 && skip == BUILD_TIME_REST)) continue;
        int32_t t = odn_host->value_elem_type(v);
        if (t != TSR_FLOAT && t != TSR_FLOAT16)
            return odn_decline(why, size, TSR_DECLINE_TYPE, "input %zu is not float32 or float16 (type %d)", k, (int)t);
        if (ft && t != ft) return odn_decline(why, size, TSR_DECLINE_TYPE, "input %zu mixes float16 and float32", k);
        ft = t;
        if (k == 0 && odn_host->value_rank(v) < 0)
            return odn_decline(why, size, TSR_DECLINE_SHAPE, "input rank unknown");
        if (odn_host->value_rank(v) > ODN_MAX_RANK)
            return odn_decline(why, size, TSR_DECLINE_SHAPE, "rank above %d", ODN_MAX_RANK);
        for (int32_t d = 0; d < odn_host->value_rank(v); d++)
            if (odn_host->value_dim(v, d) == 0) return odn_decline(why, size, TSR_DECLINE_SHAPE, "empty tensor");
    }
    for (size_t k = 0; k < odn_host->node_output_count(n); k++) {
        const tsr_value_info *v = odn_host->node_output(n, k);
        if (v && odn_host->value_elem_type(v) != (ft ? ft : TSR_FLOAT))
            return odn_decline(why, size, TSR_DECLINE_TYPE, "%s output %zu is not %s like its inputs", op, k,
                               ft == TSR_FLOAT16 ? "float16" : "float32");
    }
    return 0;
}

static int not_mapped(const tsr_node *n, char *why, size_t size) {
    return odn_decline(why, size, TSR_DECLINE_OP, "%s is not mapped to oneDNN", odn_host->node_op_type(n));
}

int odn_claim_check(const tsr_node *n, char *why, size_t size) {
    /* the com.microsoft QOperator ops have rows of their own (odn_qop.c) */
    bool ms = odn_qop_is_ms(odn_host->node_op_type(n));
    if (ms && strcmp(odn_host->node_domain(n), "com.microsoft") == 0) return odn_qop_check(n, why, size);
    if (odn_host->node_domain(n)[0] && strcmp(odn_host->node_domain(n), "ai.onnx") != 0)
        return odn_decline(why, size, TSR_DECLINE_OP, "domain '%s' not handled", odn_host->node_domain(n));
    const odn_op *op = ms ? NULL : odn_op_find(odn_host->node_op_type(n));
    return op ? op->check(n, why, size) : not_mapped(n, why, size);
}

/* The checks of the op table's float rows (odn_ops.c). Each starts with
 * the operand types, so a node of other types is declined for that first. */

int odn_claim_conv(const tsr_node *n, char *why, size_t size) {
    int r = check_types(n, BUILD_TIME_NONE, why, size);
    return r ? r : check_conv(n, why, size);
}

int odn_claim_deconv(const tsr_node *n, char *why, size_t size) {
    int r = check_types(n, BUILD_TIME_NONE, why, size);
    if (r) return r;
    size_t c;
    const int64_t *op_pad = odn_attr_ints(n, "output_padding", &c);
    int32_t sp = in_rank(n, 0) - 2;
    if (op_pad && c != (size_t)sp)
        return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "output_padding of wrong length");
    for (size_t k = 0; op_pad && k < c; k++)
        if (op_pad[k] < 0) return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "negative output_padding");
    /* output_shape and auto_pad SAME_* set the pads (odn_deconv_pads):
     * they must not be negative at the start */
    const tsr_value_info *wv = present(n, 1) ? odn_host->node_input(n, 1) : NULL;
    size_t cs = 0, cd = 0;
    const int64_t *sa = odn_attr_ints(n, "strides", &cs), *da = odn_attr_ints(n, "dilations", &cd);
    for (int32_t i = 0; sp > 0 && wv && i < sp; i++) {
        int64_t k = odn_host->value_rank(wv) == sp + 2 ? odn_host->value_dim(wv, 2 + i) : -1;
        int64_t in = odn_host->value_dim(odn_host->node_input(n, 0), 2 + i), b0 = 0, e0 = 0, len = 0;
        int64_t st = cs == (size_t)sp ? sa[i] : 1, dl = cd == (size_t)sp ? da[i] : 1, opv = op_pad ? op_pad[i] : 0;
        if (k < 1 || st < 1 || dl < 1 || !odn_deconv_pads(n, sp, i, in, st, dl, k, opv, &b0, &e0, &len))
            return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE,
                               "pads from output_shape or auto_pad not mapped (axis %d)", (int)i);
        if (odn_host->node_attr_find(n, "output_shape") && in < 0)
            return odn_decline(why, size, TSR_DECLINE_SHAPE,
                               "output_shape with an input length unknown before run time");
    }
    return check_conv(n, why, size);
}

/* bfloat16 MatMul/Gemm have their own check and builder (odn_build_bf16.c) */
static bool bf16_in(const tsr_node *n) {
    return present(n, 0) && odn_host->value_elem_type(odn_host->node_input(n, 0)) == TSR_BFLOAT16;
}

int odn_claim_matmul(const tsr_node *n, char *why, size_t size) {
    if (bf16_in(n)) return odn_bf16_check(n, why, size);
    int r = check_types(n, BUILD_TIME_NONE, why, size);
    return r ? r : check_matmul(n, why, size);
}

int odn_claim_gemm(const tsr_node *n, char *why, size_t size) {
    if (bf16_in(n)) return odn_bf16_check(n, why, size);
    int r = check_types(n, BUILD_TIME_NONE, why, size);
    return r ? r : check_gemm(n, why, size);
}

int odn_claim_pool(const tsr_node *n, char *why, size_t size) {
    /* a MaxPool of 8-bit data, as QOperator models keep it (odn_build_pool_values takes y's type) */
    bool q8 = is(odn_host->node_op_type(n), "MaxPool") && odn_qop_q8_view(n) &&
        (odn_host->node_output_count(n) < 2 || !odn_host->node_output(n, 1));
    int r = q8 ? 0 : check_types(n, BUILD_TIME_NONE, why, size);
    return r ? r : check_pool(n, odn_host->node_op_type(n), why, size);
}

int odn_claim_binary(const tsr_node *n, char *why, size_t size) {
    int r = check_types(n, BUILD_TIME_NONE, why, size);
    return r ? r : check_binary(n, odn_host->node_op_type(n), why, size);
}

/* Sum, Mean, Max, Min: every input present, of known rank, all
 * broadcasting together as check_binary's pairs do (odn_build_variadic.c
 * chains binary steps, or C loops for any broadcast; two-input Max and
 * Min stay binary ops, fusing as those do). Before opset 8 the
 * shapes must be equal, which broadcasting covers. */
int odn_claim_variadic(const tsr_node *n, char *why, size_t size) {
    size_t count = odn_host->node_input_count(n);
    const char *op = odn_host->node_op_type(n);
    if (count == 2 && (is(op, "Max") || is(op, "Min"))) return odn_claim_binary(n, why, size);
    int r = check_types(n, BUILD_TIME_NONE, why, size);
    if (r) return r;
    if (count < 1 || count > ODN_MAX_ARGS)
        return odn_decline(why, size, TSR_DECLINE_OTHER, "%zu inputs (1 to %d taken)", count, ODN_MAX_ARGS);
    int64_t out[ODN_MAX_RANK];
    int32_t rank = 0;
    for (size_t k = 0; k < count; k++) {
        int32_t rk;
        claim_dim dk[ODN_MAX_RANK];
        if (!shape_of(n, k, &rk, dk))
            return odn_decline(why, size, TSR_DECLINE_SHAPE, "input %zu missing or of rank unknown or above %d", k,
                               ODN_MAX_RANK);
        for (int32_t i = 0; i < rk; i++) {
            int64_t x = dk[rk - 1 - i].size, *o = &out[i];
            if (x == 0) return odn_decline(why, size, TSR_DECLINE_SHAPE, "empty tensor");
            if (i >= rank || *o == 1 || (*o < 0 && x > 1)) *o = x;
            else if (x > 1 && *o > 1 && x != *o)
                return odn_decline(why, size, TSR_DECLINE_SHAPE, "input %zu does not broadcast", k);
        }
        if (rk > rank) rank = rk;
    }
    return 0;
}

/* A unary op is ours only where odn_eltwise_of maps this node (Pow needs
 * a constant scalar exponent, Clip constant float bounds). */
int odn_claim_eltwise(const tsr_node *n, char *why, size_t size) {
    odn_eltwise el[2];
    if (odn_eltwise_of(n, el) <= 0) return not_mapped(n, why, size);
    return check_types(n, BUILD_TIME_NONE, why, size);
}

/* PRelu: the slope must broadcast onto X one way (opset >= 7), each dim 1
 * or X's; a slope dim that is not 1 must be known, and X's there too. A
 * constant one-value slope is an eltwise relu with that alpha
 * (odn_eltwise_of); other slopes run as oneDNN's prelu or a C loop
 * (odn_build_prelu.c). */
int odn_claim_prelu(const tsr_node *n, char *why, size_t size) {
    int r = check_types(n, BUILD_TIME_NONE, why, size);
    if (r) return r;
    if (odn_host->node_opset(n) < 7)
        return odn_decline(why, size, TSR_DECLINE_OPSET, "PRelu before opset 7 (slope not broadcast one way)");
    if (odn_host->node_input_count(n) != 2 || !present(n, 0) || !present(n, 1))
        return odn_decline(why, size, TSR_DECLINE_OTHER, "PRelu with other than two inputs");
    int32_t rx, rs;
    claim_dim dx[ODN_MAX_RANK], ds[ODN_MAX_RANK];
    if (!shape_of(n, 0, &rx, dx) || !shape_of(n, 1, &rs, ds))
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "X or slope rank unknown before run time");
    if (rs > rx) return odn_decline(why, size, TSR_DECLINE_SHAPE, "slope of rank %d above X's %d", (int)rs, (int)rx);
    for (int32_t i = 0; i < rs; i++) {
        claim_dim x = dx[rx - rs + i], s = ds[i];
        if (s.size == 1) continue;
        if (s.size < 0 || x.size < 0)
            return odn_decline(why, size, TSR_DECLINE_SHAPE, "slope dim %d or X's unknown before run time", (int)i);
        if (s.size != x.size) return odn_decline(why, size, TSR_DECLINE_SHAPE, "slope does not broadcast onto X");
    }
    return 0;
}

int odn_claim_clip(const tsr_node *n, char *why, size_t size) {
    int r = odn_claim_eltwise(n, why, size);
    return r ? r : check_clip(n, why, size);
}

int odn_claim_reshape(const tsr_node *n, char *why, size_t size) {
    /* a bool mask's Reshape (DistilBERT's mask.view(bs, 1, 1, k)) keeps the
     * mask's Expand and the attention it feeds in one piece */
    const tsr_value_info *x = odn_input(n, 0), *y = odn_host->node_output(n, 0);
    bool mask = x && y && odn_host->value_elem_type(x) == TSR_BOOL && odn_host->value_elem_type(y) == TSR_BOOL &&
        odn_host->value_rank(x) >= 0 && odn_host->value_rank(x) <= ODN_MAX_RANK;
    int r = odn_qop_q8_view(n) || mask ? 0 : check_types(n, BUILD_TIME_SECOND, why, size); /* 8-bit: odn_qop.c */
    if (r) return r;
    const tsr_value_info *shape = present(n, 1) ? odn_host->node_input(n, 1) : NULL;
    const tsr_tensor *t = shape ? odn_host->value_constant(shape) : NULL;
    if (t) {
        if (t->elem_type != TSR_INT64 || t->rank != 1 || t->dims[0] > ODN_MAX_RANK)
            return odn_decline(why, size, TSR_DECLINE_OTHER, "shape is not a 1-D int64 of at most %d values",
                               ODN_MAX_RANK);
        return 0;
    }
    /* a shape computed at run time (Shape -> Gather -> Concat on
     * another provider: no claimed op makes int64) is a piece input the
     * plan reads when it is built, and is built again for other values */
    int64_t len = shape && odn_host->value_rank(shape) == 1 ? odn_host->value_dim(shape, 0) : -1;
    if (!shape || odn_host->value_elem_type(shape) != TSR_INT64 || len < 0 || len > ODN_MAX_RANK)
        return odn_decline(why, size, TSR_DECLINE_OTHER, "shape is not a 1-D int64 of known length at most %d",
                           ODN_MAX_RANK);
    return 0;
}

int odn_claim_ranked(const tsr_node *n, char *why, size_t size) {
    const char *op = odn_host->node_op_type(n);
    if (is(op, "Flatten") && odn_qop_q8_view(n)) return 0; /* 8-bit: odn_qop.c */
    int r = check_types(n, BUILD_TIME_NONE, why, size);
    if (r) return r;
    if (in_rank(n, 0) < (is(op, "Identity") || is(op, "Erf") ? 0 : 1))
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "input rank unknown or 0");
    return 0;
}

int odn_claim_reduce(const tsr_node *n, char *why, size_t size) {
    int r = check_types(n, BUILD_TIME_SECOND, why, size);
    if (r) return r;
    int32_t rk = in_rank(n, 0);
    bool axes[ODN_MAX_RANK];
    if (rk < 1) return odn_decline(why, size, TSR_DECLINE_SHAPE, "input rank unknown or 0");
    if (!odn_reduce_axes(n, rk, axes)) return odn_decline(why, size, TSR_DECLINE_OTHER, "axes not a constant in range");
    if (odn_attr_int(n, "noop_with_empty_axes", 0))
        return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "noop_with_empty_axes");
    return 0;
}

int odn_claim_pad(const tsr_node *n, char *why, size_t size) {
    int r = check_types(n, BUILD_TIME_REST, why, size);
    return r ? r : odn_pad_check(n, why, size); /* odn_build_pad.c */
}

int odn_claim_slice(const tsr_node *n, char *why, size_t size) {
    const tsr_value_info *x = odn_input(n, 0), *y = odn_host->node_output(n, 0);
    bool bytes = x && y && odn_slice_byte_type(odn_host->value_elem_type(x)) &&
        odn_host->value_elem_type(y) == odn_host->value_elem_type(x);
    int r = bytes ? 0 : check_types(n, BUILD_TIME_REST, why, size);
    return r ? r : odn_slice_check(n, why, size); /* odn_build_slice.c */
}

int odn_claim_instnorm(const tsr_node *n, char *why, size_t size) {
    int r = check_types(n, BUILD_TIME_NONE, why, size);
    if (r) return r;
    int32_t rk = in_rank(n, 0);
    if (rk < 3 || rk > ODN_MAX_RANK)
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "InstanceNormalization on rank %d input", (int)rk);
    int64_t ch = odn_host->value_dim(odn_host->node_input(n, 0), 1);
    if (ch <= 0) return odn_decline(why, size, TSR_DECLINE_SHAPE, "channel count unknown before run time");
    for (size_t k = 1; k <= 2; k++) {
        const tsr_value_info *v = present(n, k) ? odn_host->node_input(n, k) : NULL;
        if (!v || odn_host->value_rank(v) != 1 || odn_host->value_dim(v, 0) != ch)
            return odn_decline(why, size, TSR_DECLINE_SHAPE, "scale or B is not one value per channel");
    }
    return 0;
}

int odn_claim_lrn(const tsr_node *n, char *why, size_t size) {
    int r = check_types(n, BUILD_TIME_NONE, why, size);
    if (r) return r;
    int32_t rk = in_rank(n, 0);
    int64_t lsize = odn_attr_int(n, "size", 0);
    if (rk < 3 || rk > 5)
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "LRN on rank %d input: oneDNN does 1-3 spatial dims", (int)rk);
    if (lsize < 1) return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "size missing or < 1");
    /* an even size (ONNX puts its extra channel after the centre) is
     * built as an asymmetrically padded pool (odn_build_lrn.c) */
    return 0;
}

int odn_claim_resize(const tsr_node *n, char *why, size_t size) {
    int r = check_types(n, BUILD_TIME_REST, why, size);
    if (r) return r;
    int32_t rk = in_rank(n, 0);
    int64_t dx[ODN_MAX_RANK], out[ODN_MAX_RANK];
    bool linear;
    if (rk < 1 || rk > ODN_MAX_RANK)
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "input rank unknown or above %d", ODN_MAX_RANK);
    if (present(n, 3) && !odn_host->value_constant(odn_host->node_input(n, 3)))
        return check_runtime_sizes(n, rk, why, size);
    size_t ks;
    if (runtime_scales(n, &ks)) return check_runtime_scales(n, rk, ks, why, size);
    /* the batch dim may be left to run time (the check does not depend
     * on it); the others decide the mapping */
    for (int32_t d = 0; d < rk; d++) {
        dx[d] = odn_host->value_dim(odn_host->node_input(n, 0), d);
        /* an unknown spatial size is fine when the factor is an integer:
         * then no output falls between two inputs, whatever the size
         * (checked as size 1, which a tie would show for too) */
        if (d >= 2 && dx[d] < 0 && integral_scales(n)) dx[d] = 1;
        if (d > 0 && dx[d] < 0)
            return odn_decline(why, size, TSR_DECLINE_SHAPE, "input dim %d unknown before run time", (int)d);
    }
    dx[0] = dx[0] > 0 ? dx[0] : 1;
    r = odn_resize_check(n, rk, dx, out, &linear, why, size);
    return r && resize_loop_takes(n, rk) ? 0 : r;
}

int odn_claim_upsample(const tsr_node *n, char *why, size_t size) {
    int r = check_types(n, BUILD_TIME_REST, why, size);
    if (r) return r;
    /* integer factors: the mapping holds whatever the run-time sizes */
    int32_t rk = in_rank(n, 0);
    int64_t dx[ODN_MAX_RANK], out[ODN_MAX_RANK];
    if (rk < 1 || rk > ODN_MAX_RANK)
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "input rank unknown or above %d", ODN_MAX_RANK);
    size_t ks;
    if (odn_host->node_opset(n) >= 9 && runtime_scales(n, &ks)) return check_runtime_scales(n, rk, ks, why, size);
    for (int32_t d = 0; d < rk; d++) dx[d] = 1;
    r = odn_upsample_check(n, rk, dx, out, why, size);
    return r && resize_loop_takes(n, rk) ? 0 : r;
}

int odn_claim_split(const tsr_node *n, char *why, size_t size) {
    int r = check_types(n, BUILD_TIME_REST, why, size);
    if (r) return r;
    int32_t rk = in_rank(n, 0);
    int64_t axis = odn_attr_int(n, "axis", 0);
    int64_t dim = rk > 0 && axis >= -rk && axis < rk
        ? odn_host->value_dim(odn_host->node_input(n, 0), (int32_t)(axis < 0 ? axis + rk : axis))
        : -1;
    return odn_split_check(n, rk, dim, why, size);
}

int odn_claim_concat(const tsr_node *n, char *why, size_t size) {
    int r = check_types(n, BUILD_TIME_NONE, why, size);
    if (r) return r;
    size_t count = odn_host->node_input_count(n);
    if (count < 1 || count > ODN_MAX_ARGS - 1)
        return odn_decline(why, size, TSR_DECLINE_OTHER, "%zu inputs (1..%d handled)", count, ODN_MAX_ARGS - 1);
    int32_t rk = in_rank(n, 0);
    if (rk < 1) return odn_decline(why, size, TSR_DECLINE_SHAPE, "input rank unknown or 0");
    for (size_t k = 0; k < count; k++)
        if (!present(n, k) || in_rank(n, k) != rk)
            return odn_decline(why, size, TSR_DECLINE_SHAPE, "inputs of different or unknown rank");
    int64_t axis = odn_attr_int(n, "axis", 0);
    if (!odn_host->node_attr_find(n, "axis") || axis < -rk || axis >= rk)
        return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "axis missing or out of range");
    return 0;
}

int odn_claim_batchnorm(const tsr_node *n, char *why, size_t size) {
    int r = check_types(n, BUILD_TIME_NONE, why, size);
    if (r) return r;
    if (odn_attr_int(n, "training_mode", 0)) return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "training_mode");
    if (odn_attr_int(n, "spatial", 1) != 1) return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "spatial=0");
    for (size_t k = 1; k < odn_host->node_output_count(n); k++)
        if (output_used(n, k)) return odn_decline(why, size, TSR_DECLINE_OTHER, "running statistics outputs");
    int32_t rk = in_rank(n, 0);
    if (rk < 2 || rk > 5) return odn_decline(why, size, TSR_DECLINE_SHAPE, "rank %d", (int)rk);
    for (size_t k = 1; k < 5; k++)
        if (in_rank(n, k) != 1) return odn_decline(why, size, TSR_DECLINE_SHAPE, "statistics input %zu is not 1-D", k);
    return 0;
}

int odn_claim_softmax(const tsr_node *n, char *why, size_t size) {
    int r = check_types(n, BUILD_TIME_NONE, why, size);
    if (r) return r;
    int32_t rk = in_rank(n, 0);
    int64_t axis = odn_attr_int(n, "axis", odn_host->node_opset(n) >= 13 ? -1 : 1);
    if (rk < 1 || axis < -rk || axis >= rk) return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "axis out of range");
    return 0;
}

int odn_claim_layernorm(const tsr_node *n, char *why, size_t size) {
    int r = check_types(n, BUILD_TIME_NONE, why, size);
    if (r) return r;
    for (size_t k = 1; k < 3; k++)
        if (output_used(n, k)) return odn_decline(why, size, TSR_DECLINE_OTHER, "Mean/InvStdDev outputs");
    if (odn_attr_int(n, "stash_type", 1) != 1)
        return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "stash_type other than float");
    int32_t rx, rs, rb;
    int64_t dx[ODN_MAX_RANK], ds[ODN_MAX_RANK], db[ODN_MAX_RANK];
    claim_dim cx[ODN_MAX_RANK];
    if (!shape_of(n, 0, &rx, cx) || !known_dims(n, 1, &rs, ds))
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "input rank or Scale shape unknown before run time");
    int64_t axis = odn_attr_int(n, "axis", -1);
    if (axis < -rx || axis >= rx) return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "axis out of range");
    if (axis < 0) axis += rx;
    /* the leading (e.g. batch, sequence) dims may wait for run time */
    for (int32_t d = 0; d < rx; d++) {
        dx[d] = cx[d].size;
        if (d >= axis && dx[d] < 0)
            return odn_decline(why, size, TSR_DECLINE_SHAPE, "normalized dim %d unknown before run time", (int)d);
    }
    /* oneDNN takes scale and shift per normalized element, so they must
     * span the normalized dims exactly */
    int64_t want = odn_numel(rx - (int32_t)axis, dx + axis);
    if (odn_numel(rs, ds) != want) return odn_decline(why, size, TSR_DECLINE_SHAPE, "Scale broadcasts");
    if (present(n, 2) && (!known_dims(n, 2, &rb, db) || odn_numel(rb, db) != want))
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "B broadcasts");
    return 0;
}
