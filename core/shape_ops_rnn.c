/* Shape and type rules for recurrent and spatial-sampling ops: RNN, GRU,
 * LSTM, GridSample, RoiAlign, CenterCropPad, CumProd, RotaryEmbedding.
 * Without them a piece holding one left its outputs' type and rank unknown,
 * and the next heavy op (a MatMul after an LSTM) was declined by oneDNN for
 * an "input of type 0" (issue 16). Rules only derive; a contradiction with
 * what the model declares is reported by si_set_out. */
#include <string.h>

#include "shape_infer_internal.h"

/* RNN, GRU, LSTM: X [seq, batch, input] (layout 0) or [batch, seq, input]
 * (layout 1); W [num_directions, k*hidden, input] gives the directions and,
 * with hidden_size, the hidden width. Y [seq, dirs, batch, hidden] (layout 1:
 * [batch, seq, dirs, hidden]); Y_h and Y_c [dirs, batch, hidden] (layout 1:
 * [batch, dirs, hidden]). */
static tsr_status *rule_recurrent(si_ctx *c, const ir_node *n) {
    si_shape x, w;
    si_in_shape(c, n, 0, &x);
    si_in_shape(c, n, 1, &w);
    int32_t elem = si_in_elem(c, n, 0);
    int64_t layout = si_attr_int(n, "layout", 0);
    if (layout != 0 && layout != 1) return si_err(n, "layout %lld is neither 0 nor 1", (long long)layout);
    if (x.rank >= 0 && x.rank != 3) return si_err(n, "X has rank %d, not 3", (int)x.rank);
    if (w.rank >= 0 && w.rank != 3) return si_err(n, "W has rank %d, not 3", (int)w.rank);
    const char *direction = si_attr_str(n, "direction", "forward");
    si_dim dirs = si_known(0 == strcmp(direction, "bidirectional") ? 2 : 1);
    if (w.rank == 3 && si_is_known(w.dims[0]) && w.dims[0].value != dirs.value)
        return si_err(n, "W has %lld directions, direction '%s' needs %lld", (long long)w.dims[0].value,
                      direction, (long long)dirs.value);
    int64_t hs = si_attr_int(n, "hidden_size", -1);
    si_dim hidden = si_unknown();
    if (hs > 0) hidden = si_known(hs);
    else if (w.rank == 3 && si_is_known(w.dims[1])) {
        int64_t gates = !strcmp(n->op_type, "LSTM") ? 4 : !strcmp(n->op_type, "GRU") ? 3 : 1;
        if (w.dims[1].value % gates == 0) hidden = si_known(w.dims[1].value / gates);
    }
    si_dim seq = si_unknown(), batch = si_unknown();
    if (x.rank == 3) {
        seq = x.dims[layout ? 1 : 0];
        batch = x.dims[layout ? 0 : 1];
    }
    si_shape y, h;
    y.rank = 4;
    h.rank = 3;
    if (layout == 0) {
        y.dims[0] = seq, y.dims[1] = dirs, y.dims[2] = batch, y.dims[3] = hidden;
        h.dims[0] = dirs, h.dims[1] = batch, h.dims[2] = hidden;
    } else {
        y.dims[0] = batch, y.dims[1] = seq, y.dims[2] = dirs, y.dims[3] = hidden;
        h.dims[0] = batch, h.dims[1] = dirs, h.dims[2] = hidden;
    }
    TSR_TRY(si_set_out(c, n, 0, elem, &y));
    TSR_TRY(si_set_out(c, n, 1, elem, &h));
    return n->n_outputs > 2 ? si_set_out(c, n, 2, elem, &h) : NULL;
}

/* GridSample: X [N, C, D1..Dr], grid [N, H1..Hr, r] -> [N, C, H1..Hr]. */
static tsr_status *rule_grid_sample(si_ctx *c, const ir_node *n) {
    si_shape x, g, y;
    si_in_shape(c, n, 0, &x);
    si_in_shape(c, n, 1, &g);
    if (x.rank >= 0 && x.rank < 3) return si_err(n, "X has rank %d, below 3", (int)x.rank);
    int32_t rank = x.rank >= 0 ? x.rank : g.rank;
    if (rank < 0 || (g.rank >= 0 && g.rank != rank)) return si_set_out(c, n, 0, si_in_elem(c, n, 0), NULL);
    si_shape_rank(&y, rank);
    if (x.rank >= 0) y.dims[0] = x.dims[0], y.dims[1] = x.dims[1];
    if (g.rank >= 0) {
        if (x.rank < 0) y.dims[0] = g.dims[0];
        for (int32_t i = 1; i + 1 < rank; i++) y.dims[i + 1] = g.dims[i];
    }
    return si_set_out(c, n, 0, si_in_elem(c, n, 0), &y);
}

/* RoiAlign: X [N, C, H, W], rois [num_rois, 4] -> [num_rois, C, oh, ow]. */
static tsr_status *rule_roi_align(si_ctx *c, const ir_node *n) {
    si_shape x, r, y;
    si_in_shape(c, n, 0, &x);
    si_in_shape(c, n, 1, &r);
    if (x.rank >= 0 && x.rank != 4) return si_err(n, "X has rank %d, not 4", (int)x.rank);
    si_shape_rank(&y, 4);
    if (r.rank == 2) y.dims[0] = r.dims[0];
    if (x.rank == 4) y.dims[1] = x.dims[1];
    int64_t oh = si_attr_int(n, "output_height", 1), ow = si_attr_int(n, "output_width", 1);
    if (oh < 1 || ow < 1) return si_err(n, "output size %lldx%lld", (long long)oh, (long long)ow);
    y.dims[2] = si_known(oh);
    y.dims[3] = si_known(ow);
    return si_set_out(c, n, 0, si_in_elem(c, n, 0), &y);
}

/* CenterCropPad: the input with the dims of `axes` (all when absent) set to
 * shape's values, when shape is known. */
static tsr_status *rule_center_crop_pad(si_ctx *c, const ir_node *n) {
    si_shape x;
    si_in_shape(c, n, 0, &x);
    int32_t elem = si_in_elem(c, n, 0);
    int64_t want[IR_MAX_RANK];
    size_t count = 0;
    if (x.rank < 0 || !si_in_ints(c, n, 1, want, IR_MAX_RANK, &count, NULL)) {
        if (x.rank >= 0) si_shape_rank(&x, x.rank);
        return si_set_out(c, n, 0, elem, x.rank >= 0 ? &x : NULL);
    }
    size_t n_axes = 0;
    const int64_t *axes = si_attr_ints(n, "axes", &n_axes);
    if (!axes && count != (size_t)x.rank)
        return si_err(n, "shape has %zu values for rank %d", count, (int)x.rank);
    if (axes && n_axes != count) return si_err(n, "shape has %zu values for %zu axes", count, n_axes);
    for (size_t i = 0; i < count; i++) {
        int32_t a = (int32_t)i;
        if (axes && !si_axis(axes[i], x.rank, &a)) return si_err(n, "axis %lld out of range", (long long)axes[i]);
        if (want[i] < 0) return si_err(n, "shape value %lld is negative", (long long)want[i]);
        x.dims[a] = si_known(want[i]);
    }
    return si_set_out(c, n, 0, elem, &x);
}

static tsr_status *rule_same(si_ctx *c, const ir_node *n) { return si_same_as_in(c, n, 0, 0); }

const si_op si_ops_rnn[] = {
    {"RNN", 1, rule_recurrent},
    {"GRU", 1, rule_recurrent},
    {"LSTM", 1, rule_recurrent},
    {"GridSample", 16, rule_grid_sample},
    {"RoiAlign", 10, rule_roi_align},
    {"CenterCropPad", 18, rule_center_crop_pad},
    {"CumProd", 26, rule_same},
    {"RotaryEmbedding", 23, rule_same},
};
const size_t si_ops_rnn_count = sizeof si_ops_rnn / sizeof si_ops_rnn[0];
