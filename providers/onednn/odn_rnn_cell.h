/* The gate math of one batch row of an LSTM, GRU or RNN step, for the
 * step loop of odn_rnn_seqlens.c (odn_rnn_cell.c). Each takes the row's
 * input projection `px` (X_t W^T plus biases, gates in ONNX's order) and
 * the step's product `g` (H_{t-1} R^T, same order), updates the state in
 * place and writes the new h to `y` when not NULL. AVX2 and FMA only
 * (odn_sgemm_supported). */
#ifndef TESSERA_ODN_RNN_CELL_H
#define TESSERA_ODN_RNN_CELL_H

#include <stdint.h>

enum { ODN_CELL_TANH, ODN_CELL_RELU, ODN_CELL_SIGMOID };

/* LSTM (gates i, o, f, c); peep: P's i, o, f [3H] or NULL. */
void odn_cell_lstm(int64_t hidden, const float *px, const float *g, const float *peep, float *h, float *c, float *y);
/* GRU with linear_before_reset=1: g's h gate already holds R_h h + Rb_h. */
void odn_cell_gru_lbr(int64_t hidden, const float *px, const float *g, float *h, float *y);
/* GRU with linear_before_reset=0, first half: z into g's z gate, r * h
 * into rh (the operand of the h gate's own product). */
void odn_cell_gru_zr(int64_t hidden, const float *px, float *g, const float *h, float *rh);
/* ... second half: gh = (r * h) R_h^T; z from odn_cell_gru_zr in g. */
void odn_cell_gru_h(int64_t hidden, const float *px, const float *g, const float *gh, float *h, float *y);
/* RNN: h = act(px + g), act an ODN_CELL_*. */
void odn_cell_rnn(int64_t hidden, const float *px, const float *g, int act, float *h, float *y);

#endif
