/* LSTM, GRU and RNN on oneDNN's RNN primitive (odn_claim_rnn.c,
 * odn_build_rnn.c): shared between the claim check and the builder. */
#ifndef TESSERA_ODN_RNN_H
#define TESSERA_ODN_RNN_H

#include "odn.h"

enum { ODN_RNN_LSTM, ODN_RNN_GRU, ODN_RNN_LBR_GRU, ODN_RNN_VANILLA };

typedef struct odn_rnn_attrs_t {
    int cell;  /* ODN_RNN_* */
    int gates; /* 4, 3 or 1 */
    int64_t layout;
    int dirs;
    dnnl_rnn_direction_t direction;
    dnnl_alg_kind_t activation; /* vanilla RNN only */
} odn_rnn_attrs_t;

typedef struct odn_rnn_consts {
    const tsr_tensor *w, *r, *b, *p, *seq; /* b, p, seq may be NULL */
    int64_t hidden, input;
} odn_rnn_consts;

/* ODN_RNN_* of an op type (lbr: GRU's linear_before_reset=1), or -1. */
int odn_rnn_cell_of(const char *op, bool lbr);
int odn_rnn_gates(int cell);
/* The node's attributes; 0, or a tsr_decline_reason with `why`. */
int odn_rnn_attrs(const tsr_node *n, odn_rnn_attrs_t *a, char *why, size_t size);
/* The constant operands, checked against `a`; 0 or a decline reason. */
int odn_rnn_operands(const tsr_node *n, const odn_rnn_attrs_t *a, odn_rnn_consts *c, char *why, size_t size);
/* True when constant sequence_lens `seq` holds `steps` for each of `batch`. */
bool odn_rnn_seq_full(const tsr_tensor *seq, int64_t steps, int64_t batch);
/* True when oneDNN has a kernel for the cell (at small sizes); else err. */
bool odn_rnn_probe(const odn_rnn_attrs_t *a, const odn_rnn_consts *c, bool peephole, char *err, size_t size);

#endif
