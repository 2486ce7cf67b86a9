/*
 * One time step of the three recurrent cells, for one batch row, following
 * the equations in the ONNX operator documentation. Gate rows in W, R and
 * B come in the ONNX order: RNN (i); GRU (z, r, h); LSTM (i, o, f, c).
 * `clip`, when set, bounds every activation's input to [-clip, clip].
 */
#include <string.h>

#include "ref_rnn.h"

int ref_rnn_gate_count(rnn_cell_kind kind) { return kind == RNN_CELL_LSTM ? 4 : kind == RNN_CELL_GRU ? 3 : 1; }

int ref_rnn_act_count(rnn_cell_kind kind) { return kind == RNN_CELL_LSTM ? 3 : kind == RNN_CELL_GRU ? 2 : 1; }

size_t ref_rnn_cell_scratch(rnn_cell_kind kind, int64_t hidden) {
    /* Gate pre-activations (gates * hidden) plus one hidden-sized vector. */
    return (size_t)(ref_rnn_gate_count(kind) + 1) * (size_t)hidden;
}

static double clip_to(double v, double clip) {
    if (clip > 0) {
        if (v > clip) return clip;
        if (v < -clip) return -clip;
    }
    return v;
}

static double act(const rnn_weights *w, int which, double v, double clip) {
    return ref_rnn_act_apply(&w->act[which], clip_to(v, clip));
}

/* out[r] += M[r,:] . v for rows [0, rows). */
static void affine(const double *M, int64_t rows, int64_t cols, const double *v, double *out) {
    for (int64_t r = 0; r < rows; r++) {
        const double *m = M + r * cols;
        double s = 0;
        for (int64_t k = 0; k < cols; k++) s += m[k] * v[k];
        out[r] += s;
    }
}

/* gates = W x + Wb (+ R h + Rb when with_recurrent), over `rows` gate rows
 * starting at gate row `first`. */
static void gate_inputs(const rnn_cell_cfg *cfg, const rnn_weights *w, int64_t first, int64_t rows, const double *x,
                        const double *h, bool with_recurrent, double *gates) {
    for (int64_t r = 0; r < rows; r++) gates[r] = w->Wb[first + r] + (with_recurrent ? w->Rb[first + r] : 0.0);
    affine(w->W + first * cfg->input, rows, cfg->input, x, gates);
    if (with_recurrent) affine(w->R + first * cfg->hidden, rows, cfg->hidden, h, gates);
}

void ref_rnn_step_simple(const rnn_cell_cfg *cfg, const rnn_weights *w, const double *x, double *h, double *c,
                         double *scratch) {
    (void)c;
    int64_t H = cfg->hidden;
    gate_inputs(cfg, w, 0, H, x, h, true, scratch);
    for (int64_t j = 0; j < H; j++) h[j] = act(w, 0, scratch[j], cfg->clip);
}

void ref_rnn_step_gru(const rnn_cell_cfg *cfg, const rnn_weights *w, const double *x, double *h, double *c,
                      double *scratch) {
    (void)c;
    int64_t H = cfg->hidden;
    double *z = scratch, *r = scratch + H, *hh = scratch + 2 * H, *tmp = scratch + 3 * H;
    gate_inputs(cfg, w, 0, 2 * H, x, h, true, scratch); /* z and r */
    for (int64_t j = 0; j < 2 * H; j++) scratch[j] = act(w, 0, scratch[j], cfg->clip);
    /* Candidate: W_h x + Wb_h, then the recurrent part, which either resets
     * h before the product (default) or after it (linear_before_reset). */
    gate_inputs(cfg, w, 2 * H, H, x, h, false, hh);
    const double *Rh = w->R + 2 * H * H, *Rbh = w->Rb + 2 * H;
    if (cfg->linear_before_reset) {
        for (int64_t j = 0; j < H; j++) tmp[j] = Rbh[j];
        affine(Rh, H, H, h, tmp);
        for (int64_t j = 0; j < H; j++) hh[j] += r[j] * tmp[j];
    } else {
        for (int64_t j = 0; j < H; j++) tmp[j] = r[j] * h[j];
        for (int64_t j = 0; j < H; j++) hh[j] += Rbh[j];
        affine(Rh, H, H, tmp, hh);
    }
    for (int64_t j = 0; j < H; j++) {
        double cand = act(w, 1, hh[j], cfg->clip);
        h[j] = (1.0 - z[j]) * cand + z[j] * h[j];
    }
}

void ref_rnn_step_lstm(const rnn_cell_cfg *cfg, const rnn_weights *w, const double *x, double *h, double *c,
                       double *scratch) {
    int64_t H = cfg->hidden;
    double *gi = scratch, *go = scratch + H, *gf = scratch + 2 * H, *gc = scratch + 3 * H;
    gate_inputs(cfg, w, 0, 4 * H, x, h, true, scratch);
    const double *Pi = w->P, *Po = w->P + H, *Pf = w->P + 2 * H;
    for (int64_t j = 0; j < H; j++) {
        double i = act(w, 0, gi[j] + Pi[j] * c[j], cfg->clip);
        /* input_forget couples the gates: what is let in is forgotten. */
        double f = cfg->input_forget ? 1.0 - i : act(w, 0, gf[j] + Pf[j] * c[j], cfg->clip);
        double cand = act(w, 1, gc[j], cfg->clip);
        double cell = f * c[j] + i * cand;
        double o = act(w, 0, go[j] + Po[j] * cell, cfg->clip);
        c[j] = cell;
        h[j] = o * ref_rnn_act_apply(&w->act[2], cell);
    }
}
