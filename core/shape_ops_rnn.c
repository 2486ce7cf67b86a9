/* Shape and type rules for recurrent and spatial-sampling ops: RNN, GRU,
 * LSTM, GridSample, RoiAlign, CenterCropPad, CumProd, RotaryEmbedding,
 * Attention, TensorScatter, LinearAttention, CausalConvWithState.
 * Without them a piece holding one left its outputs' type and rank unknown,
 * and the next heavy op (a MatMul after an LSTM) was declined by oneDNN for
 * an "input of type 0" (issue 16). Rules only derive; a contradiction with
 * what the model declares is reported by shape_set_out. */
#include <string.h>

#include "shape_infer_internal.h"

/* RNN, GRU, LSTM: X [seq, batch, input] (layout 0) or [batch, seq, input]
 * (layout 1); W [num_directions, k*hidden, input] gives the directions and,
 * with hidden_size, the hidden width. Y [seq, dirs, batch, hidden] (layout 1:
 * [batch, seq, dirs, hidden]); Y_h and Y_c [dirs, batch, hidden] (layout 1:
 * [batch, dirs, hidden]). */
static tsr_status *rule_recurrent(shape_ctx *c, const ir_node *n) {
    shape_dims x, w;
    shape_in_shape(c, n, 0, &x);
    shape_in_shape(c, n, 1, &w);
    int32_t elem = shape_in_elem(c, n, 0);
    int64_t layout = shape_attr_int(n, "layout", 0);
    if (layout != 0 && layout != 1) return shape_err(n, "layout %lld is neither 0 nor 1", (long long)layout);
    if (x.rank >= 0 && x.rank != 3) return shape_err(n, "X has rank %d, not 3", (int)x.rank);
    if (w.rank >= 0 && w.rank != 3) return shape_err(n, "W has rank %d, not 3", (int)w.rank);
    const char *direction = shape_attr_str(n, "direction", "forward");
    shape_dim dirs = shape_known(0 == strcmp(direction, "bidirectional") ? 2 : 1);
    if (w.rank == 3 && shape_is_known(w.dims[0]) && w.dims[0].value != dirs.value)
        return shape_err(n, "W has %lld directions, direction '%s' needs %lld", (long long)w.dims[0].value, direction,
                         (long long)dirs.value);
    int64_t hs = shape_attr_int(n, "hidden_size", -1);
    shape_dim hidden = shape_unknown();
    if (hs > 0) hidden = shape_known(hs);
    else if (w.rank == 3 && shape_is_known(w.dims[1])) {
        int64_t gates = !strcmp(n->op_type, "LSTM") ? 4 : !strcmp(n->op_type, "GRU") ? 3 : 1;
        if (w.dims[1].value % gates == 0) hidden = shape_known(w.dims[1].value / gates);
    }
    shape_dim seq = shape_unknown(), batch = shape_unknown();
    if (x.rank == 3) {
        seq = x.dims[layout ? 1 : 0];
        batch = x.dims[layout ? 0 : 1];
    }
    shape_dims y, h;
    y.rank = 4;
    h.rank = 3;
    if (layout == 0) {
        y.dims[0] = seq, y.dims[1] = dirs, y.dims[2] = batch, y.dims[3] = hidden;
        h.dims[0] = dirs, h.dims[1] = batch, h.dims[2] = hidden;
    } else {
        y.dims[0] = batch, y.dims[1] = seq, y.dims[2] = dirs, y.dims[3] = hidden;
        h.dims[0] = batch, h.dims[1] = dirs, h.dims[2] = hidden;
    }
    TSR_TRY(shape_set_out(c, n, 0, elem, &y));
    TSR_TRY(shape_set_out(c, n, 1, elem, &h));
    return n->n_outputs > 2 ? shape_set_out(c, n, 2, elem, &h) : NULL;
}

/* GridSample: X [N, C, D1..Dr], grid [N, H1..Hr, r] -> [N, C, H1..Hr]. */
static tsr_status *rule_grid_sample(shape_ctx *c, const ir_node *n) {
    shape_dims x, g, y;
    shape_in_shape(c, n, 0, &x);
    shape_in_shape(c, n, 1, &g);
    if (x.rank >= 0 && x.rank < 3) return shape_err(n, "X has rank %d, below 3", (int)x.rank);
    int32_t rank = x.rank >= 0 ? x.rank : g.rank;
    if (rank < 0 || (g.rank >= 0 && g.rank != rank)) return shape_set_out(c, n, 0, shape_in_elem(c, n, 0), NULL);
    shape_dims_rank(&y, rank);
    if (x.rank >= 0) y.dims[0] = x.dims[0], y.dims[1] = x.dims[1];
    if (g.rank >= 0) {
        if (x.rank < 0) y.dims[0] = g.dims[0];
        for (int32_t i = 1; i + 1 < rank; i++) y.dims[i + 1] = g.dims[i];
    }
    return shape_set_out(c, n, 0, shape_in_elem(c, n, 0), &y);
}

/* RoiAlign: X [N, C, H, W], rois [num_rois, 4] -> [num_rois, C, oh, ow]. */
static tsr_status *rule_roi_align(shape_ctx *c, const ir_node *n) {
    shape_dims x, r, y;
    shape_in_shape(c, n, 0, &x);
    shape_in_shape(c, n, 1, &r);
    if (x.rank >= 0 && x.rank != 4) return shape_err(n, "X has rank %d, not 4", (int)x.rank);
    shape_dims_rank(&y, 4);
    if (r.rank == 2) y.dims[0] = r.dims[0];
    if (x.rank == 4) y.dims[1] = x.dims[1];
    int64_t oh = shape_attr_int(n, "output_height", 1), ow = shape_attr_int(n, "output_width", 1);
    if (oh < 1 || ow < 1) return shape_err(n, "output size %lldx%lld", (long long)oh, (long long)ow);
    y.dims[2] = shape_known(oh);
    y.dims[3] = shape_known(ow);
    return shape_set_out(c, n, 0, shape_in_elem(c, n, 0), &y);
}

/* CenterCropPad: the input with the dims of `axes` (all when absent) set to
 * shape's values, when shape is known. */
static tsr_status *rule_center_crop_pad(shape_ctx *c, const ir_node *n) {
    shape_dims x;
    shape_in_shape(c, n, 0, &x);
    int32_t elem = shape_in_elem(c, n, 0);
    int64_t want[IR_MAX_RANK];
    size_t count = 0;
    if (x.rank < 0 || !shape_in_ints(c, n, 1, want, IR_MAX_RANK, &count, NULL)) {
        if (x.rank >= 0) shape_dims_rank(&x, x.rank);
        return shape_set_out(c, n, 0, elem, x.rank >= 0 ? &x : NULL);
    }
    size_t n_axes = 0;
    const int64_t *axes = shape_attr_ints(n, "axes", &n_axes);
    if (!axes && count != (size_t)x.rank) return shape_err(n, "shape has %zu values for rank %d", count, (int)x.rank);
    if (axes && n_axes != count) return shape_err(n, "shape has %zu values for %zu axes", count, n_axes);
    for (size_t i = 0; i < count; i++) {
        int32_t a = (int32_t)i;
        if (axes && !shape_axis(axes[i], x.rank, &a)) return shape_err(n, "axis %lld out of range", (long long)axes[i]);
        if (want[i] < 0) return shape_err(n, "shape value %lld is negative", (long long)want[i]);
        x.dims[a] = shape_known(want[i]);
    }
    return shape_set_out(c, n, 0, elem, &x);
}

static tsr_status *rule_same(shape_ctx *c, const ir_node *n) { return shape_same_as_in(c, n, 0, 0); }

static shape_dim dim_add(shape_dim a, shape_dim b) {
    int64_t sum;
    return shape_is_known(a) && shape_is_known(b) && !__builtin_add_overflow(a.value, b.value, &sum) ? shape_known(sum)
                                                                                                     : shape_unknown();
}

static shape_dim dim_div(shape_dim a, int64_t k) {
    return shape_is_known(a) && k > 0 && a.value % k == 0 ? shape_known(a.value / k) : shape_unknown();
}

static void shape4(shape_dims *s, shape_dim a, shape_dim b, shape_dim c, shape_dim d) {
    s->rank = 4;
    s->dims[0] = a, s->dims[1] = b, s->dims[2] = c, s->dims[3] = d;
}

/* Attention (opset 23): Q, K, V as [B, heads, S, head_size], or as
 * [B, S, heads * head_size] with q_num_heads/kv_num_heads. Y is Q's layout
 * with V's head size; present_key/present_value are [B, kv_heads,
 * past + S_kv, head_size] and qk_matmul_output [B, q_heads, S_q, past + S_kv]. */
static tsr_status *rule_attention(shape_ctx *c, const ir_node *n) {
    shape_dims q, k, v, past;
    shape_in_shape(c, n, 0, &q);
    shape_in_shape(c, n, 1, &k);
    shape_in_shape(c, n, 2, &v);
    bool has_past = shape_has_in(n, 4);
    if (has_past) shape_in_shape(c, n, 4, &past);
    int32_t qt = shape_in_elem(c, n, 0), kt = shape_in_elem(c, n, 1);
    int64_t hq = shape_attr_int(n, "q_num_heads", 0), hkv = shape_attr_int(n, "kv_num_heads", 0);
    shape_dim u = shape_unknown(), b = q.rank >= 3 ? q.dims[0] : u, sq, heads_q, heads_kv, dh, dv, skv;
    if (q.rank == 4) {
        heads_q = q.dims[1], sq = q.dims[2], dh = q.dims[3];
        heads_kv = k.rank == 4 ? k.dims[1] : u;
        skv = k.rank == 4 ? k.dims[2] : u;
        dv = v.rank == 4 ? v.dims[3] : u;
    } else if (q.rank == 3) {
        sq = q.dims[1];
        heads_q = hq > 0 ? shape_known(hq) : u;
        heads_kv = hkv > 0 ? shape_known(hkv) : u;
        dh = hq > 0 ? dim_div(q.dims[2], hq) : u;
        skv = k.rank == 3 ? k.dims[1] : u;
        dv = v.rank == 3 && hkv > 0 ? dim_div(v.dims[2], hkv) : u;
    } else {
        for (size_t i = 0; i < n->n_outputs; i++) TSR_TRY(shape_set_out(c, n, i, i ? kt : qt, NULL));
        return NULL;
    }
    shape_dim total = has_past ? (past.rank == 4 ? dim_add(past.dims[2], skv) : u) : skv;
    shape_dims y, pk, pv, qk;
    if (q.rank == 4) {
        shape4(&y, b, heads_q, sq, dv);
    } else {
        y.rank = 3;
        y.dims[0] = b, y.dims[1] = sq;
        /* shape_dim_mul: a product past int64 is unknown (fuzz_session found
         * 2^63-1 heads times 4) */
        y.dims[2] = shape_is_known(heads_q) && shape_is_known(dv) ? shape_dim_mul(heads_q, dv)
            : hq > 0 && hq == hkv && v.rank == 3                  ? v.dims[2]
                                                                  : u;
    }
    shape4(&pk, b, heads_kv, total, dh);
    shape4(&pv, b, heads_kv, total, dv);
    shape4(&qk, b, heads_q, sq, total);
    TSR_TRY(shape_set_out(c, n, 0, qt, &y));
    TSR_TRY(shape_set_out(c, n, 1, kt, &pk));
    TSR_TRY(shape_set_out(c, n, 2, kt, &pv));
    return shape_set_out(c, n, 3, kt, &qk);
}

/* The first of a and b that is known (or named). */
static shape_dim dim_either(shape_dim a, shape_dim b) {
    shape_dim out;
    return shape_dim_unify(a, b, &out) ? out : a;
}

/* LinearAttention (opset 27): query [B, T, Hq * dk], key [B, T, Hkv * dk],
 * value [B, T, Hkv * dv], past_state [B, Hkv, dk, dv]. The output is
 * [B, T, Hq * dv] of the query's type; present_state [B, Hkv, dk, dv] of
 * past_state's type, or the query's without one (the schema's S: the state
 * is cast back to past_state's dtype, else the query's). */
static tsr_status *rule_linear_attention(shape_ctx *c, const ir_node *n) {
    shape_dims q, k, v, past, y, state;
    shape_in_shape(c, n, 0, &q);
    shape_in_shape(c, n, 1, &k);
    shape_in_shape(c, n, 2, &v);
    shape_in_shape(c, n, 3, &past);
    int32_t qt = shape_in_elem(c, n, 0), st = shape_has_in(n, 3) ? shape_in_elem(c, n, 3) : qt;
    int64_t hq = shape_attr_int(n, "q_num_heads", 0), hkv = shape_attr_int(n, "kv_num_heads", 0);
    shape_dim u = shape_unknown();
    shape_dim b = q.rank == 3 ? q.dims[0] : k.rank == 3 ? k.dims[0] : v.rank == 3 ? v.dims[0] : u;
    shape_dim t = q.rank == 3 ? q.dims[1] : k.rank == 3 ? k.dims[1] : v.rank == 3 ? v.dims[1] : u;
    shape_dim dk = k.rank == 3 && hkv > 0 ? dim_div(k.dims[2], hkv) : u;
    if (!shape_is_known(dk) && q.rank == 3 && hq > 0) dk = dim_div(q.dims[2], hq);
    shape_dim dv = v.rank == 3 && hkv > 0 ? dim_div(v.dims[2], hkv) : u;
    if (past.rank == 4) {
        b = dim_either(b, past.dims[0]);
        dk = dim_either(dk, past.dims[2]);
        dv = dim_either(dv, past.dims[3]);
    }
    y.rank = 3;
    y.dims[0] = b, y.dims[1] = t;
    y.dims[2] = hq > 0 && shape_is_known(dv) ? shape_dim_mul(shape_known(hq), dv) : u;
    shape4(&state, b, hkv > 0 ? shape_known(hkv) : u, dk, dv);
    TSR_TRY(shape_set_out(c, n, 0, qt, &y));
    return shape_set_out(c, n, 1, st, &state);
}

/* CausalConvWithState (opset 27): input [B, C, L], weight [C, 1, k],
 * past_state [B, C, k - 1]. The output is like the input; present_state
 * [B, C, k - 1] of the input's type. */
static tsr_status *rule_causal_conv_with_state(shape_ctx *c, const ir_node *n) {
    shape_dims x, w, past, state;
    shape_in_shape(c, n, 0, &x);
    shape_in_shape(c, n, 1, &w);
    shape_in_shape(c, n, 3, &past);
    int32_t elem = shape_in_elem(c, n, 0);
    shape_dim u = shape_unknown();
    state.rank = 3;
    state.dims[0] = x.rank == 3 ? x.dims[0] : u;
    state.dims[1] = x.rank == 3 ? x.dims[1] : u;
    state.dims[2] =
        w.rank == 3 && shape_is_known(w.dims[2]) && w.dims[2].value >= 1 ? shape_known(w.dims[2].value - 1) : u;
    if (w.rank == 3) state.dims[1] = dim_either(state.dims[1], w.dims[0]);
    if (past.rank == 3)
        for (int32_t d = 0; d < 3; d++) state.dims[d] = dim_either(state.dims[d], past.dims[d]);
    TSR_TRY(shape_set_out(c, n, 0, elem, x.rank >= 0 ? &x : NULL));
    return shape_set_out(c, n, 1, elem, &state);
}

const shape_op shape_ops_rnn[] = {
    {"RNN", 1, rule_recurrent},
    {"GRU", 1, rule_recurrent},
    {"LSTM", 1, rule_recurrent},
    {"GridSample", 16, rule_grid_sample},
    {"RoiAlign", 10, rule_roi_align},
    {"CenterCropPad", 18, rule_center_crop_pad},
    {"CumProd", 26, rule_same},
    {"RotaryEmbedding", 23, rule_same},
    {"Attention", 23, rule_attention},
    {"TensorScatter", 24, rule_same},
    {"LinearAttention", 27, rule_linear_attention},
    {"CausalConvWithState", 27, rule_causal_conv_with_state},
};
const size_t shape_ops_rnn_count = sizeof shape_ops_rnn / sizeof shape_ops_rnn[0];
