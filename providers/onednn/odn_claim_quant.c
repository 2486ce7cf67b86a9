/* Which MatMulInteger, QLinearMatMul, ConvInteger and QLinearConv nodes
 * the oneDNN provider takes. The int8 matmul takes zero points and scales
 * per tensor (they may be run-time inputs: the plan passes them as oneDNN
 * runtime zero points) or, for 2-D operands, per row of A and per column
 * of B, which a C loop applies after a matmul without zero points
 * (odn_build_quant.c). */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "odn_quant.h"

static const tsr_value_info *input(const tsr_node *n, size_t k) { return odn_input(n, k); }

static bool is_8bit(int32_t t) { return t == TSR_UINT8 || t == TSR_INT8; }

/* Known shape of `v` into rank/dims; false when anything is unknown. */
static bool known(const tsr_value_info *v, int32_t *rank, int64_t *dims) {
    *rank = odn_host->value_rank(v);
    if (*rank < 0 || *rank > ODN_MAX_RANK) return false;
    for (int32_t d = 0; d < *rank; d++) {
        dims[d] = odn_host->value_dim(v, d);
        if (dims[d] < 0) return false;
    }
    return true;
}

/* Like known(), but A's dims other than its last (the depth) may be
 * symbolic: -1 in dims. */
static bool known_but_rows(const tsr_value_info *v, int32_t *rank, int64_t *dims) {
    *rank = odn_host->value_rank(v);
    if (*rank < 1 || *rank > ODN_MAX_RANK) return false;
    for (int32_t d = 0; d < *rank; d++) {
        dims[d] = odn_host->value_dim(v, d);
        if (dims[d] < 0 && d == *rank - 1) return false;
        if (dims[d] < 0) dims[d] = -1;
    }
    return true;
}

/* Like known(), but dims other than 1 (the channels) may be symbolic: -1
 * in dims. */
static bool known_but_batch_spatial(const tsr_value_info *v, int32_t *rank, int64_t *dims) {
    *rank = odn_host->value_rank(v);
    if (*rank < 2 || *rank > ODN_MAX_RANK) return false;
    for (int32_t d = 0; d < *rank; d++) {
        dims[d] = odn_host->value_dim(v, d);
        if (dims[d] < 0 && d == 1) return false;
        if (dims[d] < 0) dims[d] = -1;
    }
    return true;
}

/* 0 when input k is absent (when `optional`) or one value of type `type`
 * (any type when 0) for the whole tensor. */
static int per_tensor(const tsr_node *n, size_t k, const char *name, int32_t type, bool optional, char *why,
                      size_t size) {
    const tsr_value_info *v = input(n, k);
    if (!v) return optional ? 0 : odn_decline(why, size, TSR_DECLINE_OTHER, "%s missing", name);
    int32_t r;
    int64_t d[ODN_MAX_RANK];
    if (!known(v, &r, d) || odn_numel(r, d) != 1)
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "%s is not one value per tensor (per-row/column not mapped)",
                           name);
    if (type && odn_host->value_elem_type(v) != type)
        return odn_decline(why, size, TSR_DECLINE_TYPE, "%s of element type %d", name,
                           (int)odn_host->value_elem_type(v));
    return 0;
}

/* 0 when input k is absent (when `optional`), one value, or (when `per`
 * > 0) a 1-D tensor of `per` values (one per row of A, column of B or
 * output channel: `what`), of type `type` (any when 0). */
static int per_side(const tsr_node *n, size_t k, const char *name, int32_t type, int64_t per, bool optional,
                    const char *what, char *why, size_t size) {
    const tsr_value_info *v = input(n, k);
    if (!v) return optional ? 0 : odn_decline(why, size, TSR_DECLINE_OTHER, "%s missing", name);
    int32_t r;
    int64_t d[ODN_MAX_RANK];
    if (!known(v, &r, d) || !(odn_numel(r, d) == 1 || (per > 0 && r == 1 && d[0] == per)))
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "%s is neither one value nor a 1-D tensor of one per %s%s",
                           name, what, per > 0 ? "" : " (per row/column mapped for 2-D operands only)");
    if (type && odn_host->value_elem_type(v) != type)
        return odn_decline(why, size, TSR_DECLINE_TYPE, "%s of element type %d", name,
                           (int)odn_host->value_elem_type(v));
    return 0;
}

/* Whether oneDNN has an int8 matmul for src type `src` (u8 or s8) with s8
 * weights, s32 output and runtime zero points on this CPU; probed once. */
static bool int8_matmul_available(dnnl_data_type_t src) {
    static atomic_int cache[2]; /* 0 unknown, 1 yes, 2 no */
    atomic_int *c = &cache[src == dnnl_u8];
    int known_state = atomic_load(c);
    if (known_state) return known_state == 1;
    bool ok = false;
    dnnl_engine_t eng = NULL;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_memory_desc_t a, b, y;
    dnnl_dims_t da = {2, 4}, db = {4, 3}, dy = {2, 3};
    const int32_t rt = DNNL_RUNTIME_S32_VAL;
    dnnl_matmul_desc_t d;
    dnnl_primitive_desc_t pd = NULL;
    if (dnnl_engine_create(&eng, dnnl_cpu, 0) == dnnl_success && dnnl_primitive_attr_create(&attr) == dnnl_success &&
        dnnl_memory_desc_init_by_tag(&a, 2, da, src, dnnl_ab) == dnnl_success &&
        dnnl_memory_desc_init_by_tag(&b, 2, db, dnnl_s8, dnnl_ab) == dnnl_success &&
        dnnl_memory_desc_init_by_tag(&y, 2, dy, dnnl_s32, dnnl_ab) == dnnl_success &&
        dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_SRC, 1, 0, &rt) == dnnl_success &&
        dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_WEIGHTS, 1, 0, &rt) == dnnl_success &&
        dnnl_matmul_desc_init(&d, &a, &b, NULL, &y) == dnnl_success &&
        dnnl_primitive_desc_create(&pd, &d, attr, eng, NULL) == dnnl_success)
        ok = true;
    if (pd) dnnl_primitive_desc_destroy(pd);
    if (attr) dnnl_primitive_attr_destroy(attr);
    if (eng) dnnl_engine_destroy(eng);
    atomic_store(c, ok ? 1 : 2);
    return ok;
}

int odn_quant_check(const tsr_node *n, char *why, size_t size) {
    const char *op = odn_host->node_op_type(n);
    bool qlinear = strcmp(op, "QLinearMatMul") == 0;
    if (!qlinear && strcmp(op, "MatMulInteger") != 0)
        return odn_decline(why, size, TSR_DECLINE_OP, "%s: int8 not mapped", op);
    if (!odn_int8_exact()) return odn_intgemm_check(n, why, size);
    size_t ia = 0, ib = qlinear ? 3 : 1, iza = 2, izb = qlinear ? 5 : 3;
    const tsr_value_info *a = input(n, ia), *b = input(n, ib);
    if (!a || !b) return odn_decline(why, size, TSR_DECLINE_OTHER, "operand missing");
    int32_t ta = odn_host->value_elem_type(a), tb = odn_host->value_elem_type(b);
    if (!is_8bit(ta) || !is_8bit(tb))
        return odn_decline(why, size, TSR_DECLINE_TYPE, "operands of types %d, %d (uint8/int8 mapped)", (int)ta,
                           (int)tb);
    int32_t ra, rb;
    int64_t da[ODN_MAX_RANK], db[ODN_MAX_RANK];
    /* A's leading dims may be symbolic (the plan is then built at the first
     * run, for the rows that arrive: a dynamically quantized transformer's
     * [batch, seq, K] activations); its depth and all of B must be known */
    if (!known_but_rows(a, &ra, da) || !known(b, &rb, db))
        return odn_decline(why, size, TSR_DECLINE_SHAPE,
                           "operand shapes unknown before run time (other than A's rows)");
    if (ra < 2 || rb < 2) return odn_decline(why, size, TSR_DECLINE_SHAPE, "1-D operand (not mapped)");
    if (da[ra - 1] != db[rb - 2]) return odn_decline(why, size, TSR_DECLINE_SHAPE, "inner dimensions differ");
    int32_t r = ra > rb ? ra : rb;
    for (int32_t i = 2; i < r; i++) {
        int64_t x = i < ra ? da[ra - 1 - i] : 1, y = i < rb ? db[rb - 1 - i] : 1;
        if (x < 0 && y != 1)
            return odn_decline(why, size, TSR_DECLINE_SHAPE, "symbolic batch dim of A against B's %lld", (long long)y);
        if (x >= 0 && x != y && x != 1 && y != 1)
            return odn_decline(why, size, TSR_DECLINE_SHAPE, "batch dims do not broadcast");
    }
    for (int32_t i = 0; i < ra; i++)
        if (da[i] == 0) return odn_decline(why, size, TSR_DECLINE_SHAPE, "empty tensor");
    for (int32_t i = 0; i < rb; i++)
        if (db[i] == 0) return odn_decline(why, size, TSR_DECLINE_SHAPE, "empty tensor");
    /* |a - za| * |b - zb| <= 255 * 255: past this depth an int32 sum could
     * overflow, where ONNX wraps and oneDNN saturates */
    if (da[ra - 1] > INT32_MAX / (255 * 255))
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "inner dimension %lld could overflow int32",
                           (long long)da[ra - 1]);
    /* per row of A / column of B: 2-D operands only (ONNX defines them so) */
    int64_t rows = ra == 2 && rb == 2 && da[0] >= 0 ? da[0] : 0, cols = ra == 2 && rb == 2 ? db[1] : 0;
    int e = per_side(n, iza, "a_zero_point", ta, rows, !qlinear, "row of A", why, size);
    if (!e) e = per_side(n, izb, "b_zero_point", tb, cols, !qlinear, "column of B", why, size);
    if (e) return e;
    const tsr_value_info *y = odn_host->node_output_count(n) ? odn_host->node_output(n, 0) : NULL;
    if (!y) return odn_decline(why, size, TSR_DECLINE_OTHER, "no output");
    int32_t ty = odn_host->value_elem_type(y);
    if (qlinear) {
        int32_t ts = odn_host->value_elem_type(input(n, 1) ? input(n, 1) : a);
        if (ts != TSR_FLOAT && ts != TSR_FLOAT16)
            return odn_decline(why, size, TSR_DECLINE_TYPE, "a_scale of type %d (float32/float16 mapped)", (int)ts);
        e = per_side(n, 1, "a_scale", ts, rows, false, "row of A", why, size);
        if (!e) e = per_side(n, 4, "b_scale", ts, cols, false, "column of B", why, size);
        if (!e) e = per_tensor(n, 6, "y_scale", ts, false, why, size);
        if (!e) e = per_tensor(n, 7, "y_zero_point", 0, false, why, size);
        if (e) return e;
        if (!is_8bit(ty) || odn_host->value_elem_type(input(n, 7)) != ty)
            return odn_decline(why, size, TSR_DECLINE_TYPE, "output type %d (uint8/int8 mapped)", (int)ty);
    } else if (ty != TSR_INT32) {
        return odn_decline(why, size, TSR_DECLINE_TYPE, "output type %d is not int32", (int)ty);
    }
    if (!int8_matmul_available(ta == TSR_UINT8 ? dnnl_u8 : dnnl_s8))
        return odn_decline(why, size, TSR_DECLINE_OTHER,
                           "oneDNN has no int8 matmul with runtime zero points on this CPU");
    return 0;
}

/* Whether oneDNN creates a small int8 convolution of `groups` groups over
 * `channels` channels with the attributes `attr`. */
static bool probe_conv(dnnl_engine_t eng, dnnl_primitive_attr_t attr, dnnl_data_type_t src, int64_t groups,
                       int64_t channels) {
    dnnl_memory_desc_t x, w, y;
    dnnl_dims_t dx = {1, channels, 3, 3}, dy = {1, channels, 4, 4}, one = {1, 1}, zero = {0, 0}, pad = {1, 1};
    dnnl_dims_t dw = {groups, channels / groups, channels / groups, 2, 2}; /* g, oc/g, ic/g, kh, kw */
    int wr = groups > 1 ? 5 : 4;
    const int64_t *wd = groups > 1 ? dw : dw + 1;
    dnnl_convolution_desc_t d;
    dnnl_primitive_desc_t pd = NULL;
    bool ok = dnnl_memory_desc_init_by_tag(&x, 4, dx, src, dnnl_format_tag_any) == dnnl_success &&
        dnnl_memory_desc_init_by_tag(&w, wr, wd, dnnl_s8, dnnl_format_tag_any) == dnnl_success &&
        dnnl_memory_desc_init_by_tag(&y, 4, dy, dnnl_s32, dnnl_format_tag_any) == dnnl_success &&
        dnnl_dilated_convolution_forward_desc_init(&d, dnnl_forward_inference, dnnl_convolution_direct, &x, &w, NULL,
                                                   &y, one, zero, pad, pad) == dnnl_success &&
        dnnl_primitive_desc_create(&pd, &d, attr, eng, NULL) == dnnl_success;
    if (pd) dnnl_primitive_desc_destroy(pd);
    return ok;
}

/* Whether oneDNN has an int8 convolution for src type `src` with s8
 * weights, s32 output and a runtime source zero point; probed once. With
 * `grouped`, both a two-group and a depthwise one (the kernels differ). */
static bool int8_conv_available(dnnl_data_type_t src, bool grouped) {
    static atomic_int cache[2][2]; /* 0 unknown, 1 yes, 2 no */
    atomic_int *c = &cache[src == dnnl_u8][grouped];
    int known_state = atomic_load(c);
    if (known_state) return known_state == 1;
    bool ok = false;
    dnnl_engine_t eng = NULL;
    dnnl_primitive_attr_t attr = NULL;
    const int32_t rt = DNNL_RUNTIME_S32_VAL;
    if (dnnl_engine_create(&eng, dnnl_cpu, 0) == dnnl_success && dnnl_primitive_attr_create(&attr) == dnnl_success &&
        dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_SRC, 1, 0, &rt) == dnnl_success)
        ok = grouped ? probe_conv(eng, attr, src, 2, 4) && probe_conv(eng, attr, src, 16, 16)
                     : probe_conv(eng, attr, src, 1, 2);
    if (attr) dnnl_primitive_attr_destroy(attr);
    if (eng) dnnl_engine_destroy(eng);
    atomic_store(c, ok ? 1 : 2);
    return ok;
}

/* ConvInteger and QLinearConv: any group count dividing both channel
 * counts (depthwise included), explicit (or VALID) padding, 1-3 spatial
 * dims; a weight zero point and scale per tensor or per output channel
 * (the C loop after the convolution applies them, odn_build_qconv.c). */
int odn_qconv_check(const tsr_node *n, char *why, size_t size) {
    bool qlinear = strcmp(odn_host->node_op_type(n), "QLinearConv") == 0;
    size_t iw = qlinear ? 3 : 1, izw = qlinear ? 5 : 3;
    const tsr_value_info *x = input(n, 0), *w = input(n, iw);
    /* without VNNI oneDNN's int8 sums would saturate: ConvInteger and
     * QLinearConv then run as a float convolution of constant weights
     * (odn_build_convint.c), whose sums must stay exact (odn_qlin_passes) */
    bool exact = odn_int8_exact();
    if (!exact &&
        (!w || !odn_host->value_constant(w) || (input(n, izw) && !odn_host->value_constant(input(n, izw))) ||
         (qlinear &&
          !odn_qlin_passes(odn_host->value_constant(w), input(n, izw) ? odn_host->value_constant(input(n, izw)) : NULL,
                           true))))
        return odn_decline(why, size, TSR_DECLINE_TYPE,
                           "%s: the CPU lacks VNNI (oneDNN's int8 sums would saturate; only constant weights run, in "
                           "float, where their sums stay exact)",
                           odn_host->node_op_type(n));
    if (!x || !w) return odn_decline(why, size, TSR_DECLINE_OTHER, "operand missing");
    int32_t tx = odn_host->value_elem_type(x), tw = odn_host->value_elem_type(w);
    if (!is_8bit(tx) || !is_8bit(tw))
        return odn_decline(why, size, TSR_DECLINE_TYPE, "operands of types %d, %d (uint8/int8 mapped)", (int)tx,
                           (int)tw);
    int32_t rx, rw;
    int64_t dx[ODN_MAX_RANK], dw[ODN_MAX_RANK];
    /* the batch and spatial dims of x may be symbolic (a dynamically
     * quantized CNN exported with dynamic axes): the plan is built at the
     * first run; its channels and all of w must be known */
    if (!known_but_batch_spatial(x, &rx, dx) || !known(w, &rw, dw))
        return odn_decline(why, size, TSR_DECLINE_SHAPE,
                           "shapes unknown before run time (other than x's batch and spatial dims)");
    if (rx < 3 || rx > 5 || rw != rx)
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "rank %d input (1-3 spatial dims mapped)", (int)rx);
    int64_t group = odn_attr_int(n, "group", 1);
    if (group < 1 || group > dx[1] || dx[1] % group != 0 || dw[0] % group != 0)
        return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE,
                           "group %lld does not divide %lld input and %lld output channels", (long long)group,
                           (long long)dx[1], (long long)dw[0]);
    if (dw[1] * group != dx[1])
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "weight channels differ from input channels per group");
    if (!odn_attr_string_is(n, "auto_pad", "NOTSET", true) && !odn_attr_string_is(n, "auto_pad", "VALID", false))
        return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "auto_pad SAME_* not mapped for int8");
    int32_t sp = rx - 2;
    size_t c;
    const char *lists[] = {"strides", "dilations", "kernel_shape"};
    for (int i = 0; i < 3; i++) {
        const int64_t *a = odn_attr_ints(n, lists[i], &c);
        if (a && c != (size_t)sp) return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "%s of wrong length", lists[i]);
        for (size_t k = 0; a && k < c; k++)
            if (a[k] < 1 || (i == 2 && a[k] != dw[2 + k]))
                return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "%s value %lld", lists[i], (long long)a[k]);
    }
    const int64_t *pads = odn_attr_ints(n, "pads", &c);
    if (pads && c != (size_t)(2 * sp)) return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "pads of wrong length");
    for (size_t k = 0; pads && k < c; k++)
        if (pads[k] < 0) return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "negative pad");
    for (int32_t i = 0; i < rx; i++)
        if (dx[i] == 0 || dw[i] == 0) return odn_decline(why, size, TSR_DECLINE_SHAPE, "empty tensor");
    int64_t depth = odn_numel(rw - 1, dw + 1);
    if (depth > INT32_MAX / (255 * 255))
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "window of %lld values could overflow int32",
                           (long long)depth);
    int e = per_tensor(n, 2, "x_zero_point", tx, true, why, size);
    if (!e) e = per_side(n, izw, "w_zero_point", tw, dw[0], true, "output channel", why, size);
    if (e) return e;
    const tsr_value_info *y = odn_host->node_output_count(n) ? odn_host->node_output(n, 0) : NULL;
    if (!y) return odn_decline(why, size, TSR_DECLINE_OTHER, "no output");
    int32_t ty = odn_host->value_elem_type(y);
    if (qlinear) {
        int32_t ts = odn_host->value_elem_type(input(n, 1) ? input(n, 1) : x);
        if (ts != TSR_FLOAT && ts != TSR_FLOAT16)
            return odn_decline(why, size, TSR_DECLINE_TYPE, "x_scale of type %d (float32/float16 mapped)", (int)ts);
        e = per_tensor(n, 1, "x_scale", ts, false, why, size);
        if (!e) e = per_side(n, 4, "w_scale", ts, dw[0], false, "output channel", why, size);
        if (!e) e = per_tensor(n, 6, "y_scale", ts, false, why, size);
        if (!e) e = per_tensor(n, 7, "y_zero_point", ty, false, why, size);
        if (!e && input(n, 8)) {
            int32_t rb;
            int64_t db[ODN_MAX_RANK];
            if (!known(input(n, 8), &rb, db) || rb != 1 || db[0] != dw[0] ||
                odn_host->value_elem_type(input(n, 8)) != TSR_INT32)
                e = odn_decline(why, size, TSR_DECLINE_SHAPE, "B is not int32 with one value per output channel");
        }
        if (e) return e;
        if (!is_8bit(ty))
            return odn_decline(why, size, TSR_DECLINE_TYPE, "output type %d (uint8/int8 mapped)", (int)ty);
    } else if (ty != TSR_INT32) {
        return odn_decline(why, size, TSR_DECLINE_TYPE, "output type %d is not int32", (int)ty);
    }
    if (exact && !int8_conv_available(tx == TSR_UINT8 ? dnnl_u8 : dnnl_s8, group > 1))
        return odn_decline(why, size, TSR_DECLINE_OTHER,
                           "oneDNN has no int8 convolution with a runtime zero point on this CPU");
    return 0;
}
