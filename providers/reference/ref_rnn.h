/*
 * Private to the recurrent kernels (RNN, GRU, LSTM): ref_ops_rnn.c and
 * ref_rnn_*.c. One driver (ref_rnn_run.c) walks directions, batch rows and
 * time steps; a cell function (ref_rnn_cells.c) computes one step of one
 * batch row. Everything is computed in double.
 */
#ifndef TESSERA_REF_RNN_H
#define TESSERA_REF_RNN_H

#include "ref.h"

typedef enum rnn_cell_kind { RNN_CELL_SIMPLE, RNN_CELL_GRU, RNN_CELL_LSTM } rnn_cell_kind;

typedef enum rnn_act_kind {
    RNN_ACT_RELU,
    RNN_ACT_TANH,
    RNN_ACT_SIGMOID,
    RNN_ACT_AFFINE,
    RNN_ACT_LEAKY_RELU,
    RNN_ACT_THRESHOLDED_RELU,
    RNN_ACT_SCALED_TANH,
    RNN_ACT_HARD_SIGMOID,
    RNN_ACT_ELU,
    RNN_ACT_SOFTSIGN,
    RNN_ACT_SOFTPLUS
} rnn_act_kind;

typedef struct rnn_act {
    rnn_act_kind kind;
    double alpha, beta;
} rnn_act;

/* Activations per direction: f (RNN); f, g (GRU); f, g, h (LSTM). */
#define RNN_MAX_ACTS 3
#define RNN_MAX_DIRS 2

/* Looks up an activation by its ONNX name (case-insensitive). */
bool ref_rnn_act_lookup(const char *name, size_t len, rnn_act_kind *kind);
/* Whether the activation takes alpha / beta, and their defaults. */
void ref_rnn_act_params(rnn_act_kind kind, bool *uses_alpha, bool *uses_beta, double *alpha, double *beta);
double ref_rnn_act_apply(const rnn_act *a, double x);

/* The node's attributes, validated. */
typedef struct rnn_attrs {
    int dirs;            /* 1 or 2 */
    bool reverse;        /* direction = "reverse" (dirs == 1) */
    int layout;          /* 0: [seq, batch, ...]; 1: [batch, seq, ...] */
    int64_t hidden_size; /* -1 when absent */
    double clip;         /* 0 when absent */
    bool linear_before_reset;
    bool input_forget;
    rnn_act act[RNN_MAX_DIRS][RNN_MAX_ACTS];
} rnn_attrs;

/* Reads and checks the attributes of an RNN/GRU/LSTM node. Returns 0, or a
 * tsr_decline_reason with a sentence in `why`. */
int ref_rnn_parse_attrs(const tsr_host_api *host, const tsr_node *node, rnn_cell_kind kind, rnn_attrs *out, char *why,
                        size_t why_size);

/* One direction's parameters, converted to double. */
typedef struct rnn_weights {
    const double *W;  /* [gates*hidden, input] */
    const double *R;  /* [gates*hidden, hidden] */
    const double *Wb; /* [gates*hidden] */
    const double *Rb; /* [gates*hidden] */
    const double *P;  /* [3*hidden] LSTM peepholes (i, o, f) */
    const rnn_act *act;
} rnn_weights;

typedef struct rnn_cell_cfg {
    int64_t input, hidden;
    double clip; /* 0: no clipping */
    bool linear_before_reset;
    bool input_forget;
} rnn_cell_cfg;

/* One time step of one batch row: reads x[input], updates h[hidden] and,
 * for LSTM, c[hidden] in place. `scratch` holds ref_rnn_cell_scratch() doubles. */
typedef void (*rnn_step_fn)(const rnn_cell_cfg *cfg, const rnn_weights *w, const double *x, double *h, double *c,
                            double *scratch);

void ref_rnn_step_simple(const rnn_cell_cfg *cfg, const rnn_weights *w, const double *x, double *h, double *c,
                         double *scratch);
void ref_rnn_step_gru(const rnn_cell_cfg *cfg, const rnn_weights *w, const double *x, double *h, double *c,
                      double *scratch);
void ref_rnn_step_lstm(const rnn_cell_cfg *cfg, const rnn_weights *w, const double *x, double *h, double *c,
                       double *scratch);

int ref_rnn_gate_count(rnn_cell_kind kind);
int ref_rnn_act_count(rnn_cell_kind kind);
size_t ref_rnn_cell_scratch(rnn_cell_kind kind, int64_t hidden);

/* Runs an RNN, GRU or LSTM node. */
tsr_status *ref_rnn_run(ref_ctx *c, rnn_cell_kind kind);

#endif
