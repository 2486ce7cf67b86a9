/*
 * The reference provider's recurrent operators: the table ref_registry.c
 * picks up. The work is in ref_rnn_run.c (driver) and ref_rnn_cells.c.
 */
#include "ref_rnn.h"

static tsr_status *ref_rnn_rnn(ref_ctx *c) { return ref_rnn_run(c, RNN_CELL_SIMPLE); }
static tsr_status *ref_rnn_gru(ref_ctx *c) { return ref_rnn_run(c, RNN_CELL_GRU); }
static tsr_status *ref_rnn_lstm(ref_ctx *c) { return ref_rnn_run(c, RNN_CELL_LSTM); }

/* Declines at claim time what the kernel would refuse at run time: a
 * non-float X, or attributes it cannot honour. */
static int check(const tsr_host_api *host, const tsr_node *node, rnn_cell_kind kind, char *why, size_t why_size) {
    int r = ref_check_float(host, node, why, why_size);
    if (r) return r;
    rnn_attrs a;
    return ref_rnn_parse_attrs(host, node, kind, &a, why, why_size);
}

static int check_rnn(const tsr_host_api *host, const tsr_node *node, char *why, size_t n) {
    return check(host, node, RNN_CELL_SIMPLE, why, n);
}
static int check_gru(const tsr_host_api *host, const tsr_node *node, char *why, size_t n) {
    return check(host, node, RNN_CELL_GRU, why, n);
}
static int check_lstm(const tsr_host_api *host, const tsr_node *node, char *why, size_t n) {
    return check(host, node, RNN_CELL_LSTM, why, n);
}

/* Opset 1's forms differ only in attributes these kernels ignore
 * (output_sequence: Y is always produced) or read (layout from 14). */
const ref_op ref_ops_rnn[] = {
    {"", "RNN", 1, ref_rnn_rnn, check_rnn},
    {"", "GRU", 1, ref_rnn_gru, check_gru},
    {"", "LSTM", 1, ref_rnn_lstm, check_lstm},
    {NULL, NULL, 0, NULL, NULL},
};
