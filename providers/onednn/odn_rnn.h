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

/* The descriptors of one RNN primitive (odn_build_rnn.c). */
typedef struct odn_rnn_mds {
    dnnl_memory_desc_t src_layer, src_iter, src_iter_c, wl, wi, wp, bias, dst_layer, dst_iter, dst_iter_c;
} odn_rnn_mds;

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
/* The primitive descriptor for `steps` x `batch` (m: the states filled
 * in, or zero for absent; the rest is filled here), or an error. */
tsr_status *odn_rnn_create_pd(odn_plan *p, const tsr_node *n, const odn_rnn_attrs_t *a, const odn_rnn_consts *c,
                              int64_t steps, int64_t batch, odn_rnn_mds *m, dnnl_primitive_desc_t *pd);
/* The converted weights of directions dir .. dir + a->dirs - 1 for `pd`:
 * out[0] weights_layer, [1] weights_iter, [2] bias, [3] peepholes or NULL. */
tsr_status *odn_rnn_weights(odn_plan *p, const tsr_node *n, const odn_rnn_attrs_t *a, const odn_rnn_consts *c, int dir,
                            const_dnnl_primitive_desc_t pd, const odn_rnn_mds *m, dnnl_memory_t out[4]);
/* A node with per-batch sequence_lens (odn_rnn_seqlens.c). */
tsr_status *odn_build_rnn_seqlens(odn_plan *p, const tsr_node *n, const odn_rnn_attrs_t *a, const odn_rnn_consts *c,
                                  int64_t steps, int64_t batch);
/* True when a node whose rows all run `steps` steps is faster as our own
 * recurrence (odn_build_rnn_seqlens) than as the primitive (odn_rnn_route.c). */
bool odn_rnn_loop_wins(const odn_rnn_attrs_t *a, const odn_rnn_consts *c, int64_t steps, int64_t batch);

#endif
