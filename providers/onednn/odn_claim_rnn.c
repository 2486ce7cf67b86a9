/* Which LSTM, GRU and RNN nodes the oneDNN provider takes (built by
 * odn_build_rnn.c): constant weights, the default activations (RNN: Tanh,
 * Relu or Sigmoid, the same in both directions), no clip, no input_forget,
 * layout 0 or 1. Per-batch sequence lengths (constant or fed at run time)
 * take the step-by-step path of odn_rnn_seqlens.c. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "odn_rnn.h"
#include "odn_sgemm.h"

static bool present(const tsr_node *n, size_t k) {
    return k < odn_host->node_input_count(n) && odn_host->node_input(n, k) != NULL;
}

static bool same_name(const char *a, const char *b) {
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return false;
    return *a == *b;
}

/* Activation k of the node's list, NUL-terminated in buf. */
static const char *act_name(const tsr_attr *act, size_t k, char *buf, size_t size) {
    size_t len = 0;
    const char *s = odn_host->attr_strings_at(act, k, &len);
    if (!s) len = 0;
    if (len >= size) len = size - 1;
    memcpy(buf, s ? s : "", len);
    buf[len] = 0;
    return buf;
}

int odn_rnn_cell_of(const char *op, bool lbr) {
    if (strcmp(op, "LSTM") == 0) return ODN_RNN_LSTM;
    if (strcmp(op, "GRU") == 0) return lbr ? ODN_RNN_LBR_GRU : ODN_RNN_GRU;
    if (strcmp(op, "RNN") == 0) return ODN_RNN_VANILLA;
    return -1;
}

int odn_rnn_gates(int cell) { return cell == ODN_RNN_LSTM ? 4 : cell == ODN_RNN_VANILLA ? 1 : 3; }

/* The activation of an RNN node (oneDNN's eltwise algorithm), or 0 when it
 * is not one oneDNN's vanilla_rnn computes. */
static dnnl_alg_kind_t rnn_activation(const char *name) {
    if (same_name(name, "Tanh")) return dnnl_eltwise_tanh;
    if (same_name(name, "Relu")) return dnnl_eltwise_relu;
    if (same_name(name, "Sigmoid")) return dnnl_eltwise_logistic;
    return (dnnl_alg_kind_t)0;
}

int odn_rnn_attrs(const tsr_node *n, odn_rnn_attrs_t *a, char *why, size_t size) {
    const char *op = odn_host->node_op_type(n);
    memset(a, 0, sizeof *a);
    int64_t lbr = odn_attr_int(n, "linear_before_reset", 0);
    if (lbr != 0 && lbr != 1)
        return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "linear_before_reset %lld", (long long)lbr);
    a->cell = odn_rnn_cell_of(op, lbr == 1);
    if (a->cell < 0) return odn_decline(why, size, TSR_DECLINE_OP, "%s is not a recurrent op", op);
    a->gates = odn_rnn_gates(a->cell);
    a->layout = odn_attr_int(n, "layout", 0);
    if (a->layout != 0 && a->layout != 1)
        return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "layout %lld", (long long)a->layout);
    a->dirs = 1;
    if (odn_attr_string_is(n, "direction", "reverse", false)) a->direction = dnnl_unidirectional_right2left;
    else if (odn_attr_string_is(n, "direction", "bidirectional", false)) {
        a->direction = dnnl_bidirectional_concat;
        a->dirs = 2;
    } else if (odn_attr_string_is(n, "direction", "forward", true)) a->direction = dnnl_unidirectional_left2right;
    else return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "unknown direction");
    if (odn_host->node_attr_find(n, "clip"))
        return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "clip is not mapped to oneDNN");
    if (odn_attr_int(n, "input_forget", 0) != 0)
        return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "input_forget is not mapped to oneDNN");
    if (odn_host->node_attr_find(n, "activation_alpha") || odn_host->node_attr_find(n, "activation_beta"))
        return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE,
                           "activation_alpha/activation_beta are not mapped to oneDNN");
    /* activations: the defaults only (RNN: one of three, the same for every direction) */
    static const char *lstm_def[] = {"Sigmoid", "Tanh", "Tanh"}, *gru_def[] = {"Sigmoid", "Tanh"};
    const tsr_attr *act = odn_host->node_attr_find(n, "activations");
    size_t count = act && odn_host->attr_type(act) == TSR_ATTR_STRINGS ? odn_host->attr_list_size(act) : 0;
    char name[32];
    a->activation = dnnl_eltwise_tanh;
    if (act && a->cell == ODN_RNN_VANILLA) {
        if (count != (size_t)a->dirs)
            return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "%zu activations for %d directions", count, a->dirs);
        a->activation = rnn_activation(act_name(act, 0, name, sizeof name));
        if (!a->activation)
            return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "activation %s is not mapped to oneDNN",
                               act_name(act, 0, name, sizeof name));
        for (size_t k = 1; k < count; k++)
            if (rnn_activation(act_name(act, k, name, sizeof name)) != a->activation)
                return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "different activations per direction");
    } else if (act) {
        size_t per = a->cell == ODN_RNN_LSTM ? 3 : 2;
        const char **def = a->cell == ODN_RNN_LSTM ? lstm_def : gru_def;
        if (count != per * (size_t)a->dirs)
            return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "%zu activations", count);
        for (size_t k = 0; k < count; k++)
            if (!same_name(act_name(act, k, name, sizeof name), def[k % per]))
                return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE,
                                   "activation %s (only the defaults are mapped to oneDNN)",
                                   act_name(act, k, name, sizeof name));
    }
    return 0;
}

/* A constant float32 tensor of `rank` dims with the given dims (-1: any). */
static bool const_f32(const tsr_tensor *t, int32_t rank, const int64_t *dims) {
    if (!t || t->elem_type != TSR_FLOAT || t->rank != rank) return false;
    for (int32_t d = 0; d < rank; d++)
        if (dims[d] >= 0 && t->dims[d] != dims[d]) return false;
    return odn_numel(rank, t->dims) >= 0 && t->nbytes >= (uint64_t)odn_numel(rank, t->dims) * sizeof(float);
}

int odn_rnn_operands(const tsr_node *n, const odn_rnn_attrs_t *a, odn_rnn_consts *c, char *why, size_t size) {
    memset(c, 0, sizeof *c);
    const char *op = odn_host->node_op_type(n);
    size_t nin = odn_host->node_input_count(n);
    if (!present(n, 0) || !present(n, 1) || !present(n, 2))
        return odn_decline(why, size, TSR_DECLINE_OTHER, "%s without X, W or R", op);
    c->w = odn_host->value_constant(odn_host->node_input(n, 1));
    c->r = odn_host->value_constant(odn_host->node_input(n, 2));
    if (!c->w || !c->r)
        return odn_decline(why, size, TSR_DECLINE_OTHER, "W and R must be constants (weights are converted once)");
    int64_t wd[3] = {a->dirs, -1, -1};
    if (!const_f32(c->w, 3, wd))
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "W is not a float32 [%d, gates*hidden, input] tensor",
                           a->dirs);
    if (c->w->dims[1] % a->gates || c->w->dims[1] == 0)
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "W rows not a multiple of %d gates", a->gates);
    c->hidden = c->w->dims[1] / a->gates;
    c->input = c->w->dims[2];
    int64_t hs = odn_attr_int(n, "hidden_size", c->hidden);
    if (hs != c->hidden)
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "hidden_size %lld disagrees with W", (long long)hs);
    int64_t rd[3] = {a->dirs, a->gates * c->hidden, c->hidden};
    if (!const_f32(c->r, 3, rd))
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "R is not a float32 [%d, %lld, %lld] tensor", a->dirs,
                           (long long)rd[1], (long long)rd[2]);
    if (nin > 3 && present(n, 3)) {
        c->b = odn_host->value_constant(odn_host->node_input(n, 3));
        int64_t bd[2] = {a->dirs, 2 * a->gates * c->hidden};
        if (!c->b) return odn_decline(why, size, TSR_DECLINE_OTHER, "B must be a constant");
        if (!const_f32(c->b, 2, bd))
            return odn_decline(why, size, TSR_DECLINE_SHAPE, "B is not a float32 [%d, %lld] tensor", a->dirs,
                               (long long)bd[1]);
    }
    if (a->cell == ODN_RNN_LSTM && nin > 7 && present(n, 7)) {
        c->p = odn_host->value_constant(odn_host->node_input(n, 7));
        int64_t pd[2] = {a->dirs, 3 * c->hidden};
        if (!c->p) return odn_decline(why, size, TSR_DECLINE_OTHER, "P must be a constant");
        if (!const_f32(c->p, 2, pd))
            return odn_decline(why, size, TSR_DECLINE_SHAPE, "P is not a float32 [%d, %lld] tensor", a->dirs,
                               (long long)pd[1]);
    }
    if (nin > 4 && present(n, 4)) c->seq = odn_host->value_constant(odn_host->node_input(n, 4));
    return 0;
}

bool odn_rnn_seq_full(const tsr_tensor *seq, int64_t steps, int64_t batch) {
    if (!seq || seq->rank != 1 || seq->dims[0] != batch) return false;
    for (int64_t b = 0; b < batch; b++) {
        int64_t v;
        if (seq->elem_type == TSR_INT32 && seq->nbytes >= (uint64_t)(b + 1) * 4) v = ((const int32_t *)seq->data)[b];
        else if (seq->elem_type == TSR_INT64 && seq->nbytes >= (uint64_t)(b + 1) * 8)
            v = ((const int64_t *)seq->data)[b];
        else return false;
        if (v != steps) return false;
    }
    return true;
}

static bool float_or_unknown(int32_t type) { return type == TSR_FLOAT || type == 0; }

int odn_rnn_check(const tsr_node *n, char *why, size_t size) {
    odn_rnn_attrs_t a;
    int r = odn_rnn_attrs(n, &a, why, size);
    if (r) return r;
    odn_rnn_consts c;
    r = odn_rnn_operands(n, &a, &c, why, size);
    if (r) return r;
    const char *op = odn_host->node_op_type(n);
    const tsr_value_info *x = odn_host->node_input(n, 0);
    /* inside If/Loop bodies types and shapes may be unknown until run
     * time (0 and -1): the builder checks them then */
    if (!float_or_unknown(odn_host->value_elem_type(x)))
        return odn_decline(why, size, TSR_DECLINE_TYPE, "X is not float32");
    int32_t xr = odn_host->value_rank(x);
    if (xr >= 0 && xr != 3) return odn_decline(why, size, TSR_DECLINE_SHAPE, "X of rank other than 3");
    int64_t xi = xr == 3 ? odn_host->value_dim(x, 2) : -1;
    if (xi >= 0 && xi != c.input) return odn_decline(why, size, TSR_DECLINE_SHAPE, "X's input size differs from W's");
    int64_t steps = xr == 3 ? odn_host->value_dim(x, a.layout ? 1 : 0) : -1;
    int64_t batch = xr == 3 ? odn_host->value_dim(x, a.layout ? 0 : 1) : -1;
    if (steps == 0 || batch == 0) return odn_decline(why, size, TSR_DECLINE_SHAPE, "empty sequence or batch");
    if (present(n, 4)) {
        /* lengths other than the sequence length everywhere run step by
         * step (odn_rnn_seqlens.c), read at run time */
        const tsr_value_info *sl = odn_host->node_input(n, 4);
        int32_t st = odn_host->value_elem_type(sl), sr = odn_host->value_rank(sl);
        if (st != TSR_INT32 && st != TSR_INT64 && st != 0)
            return odn_decline(why, size, TSR_DECLINE_TYPE, "sequence_lens is not int32 or int64");
        if (sr >= 0 && sr != 1) return odn_decline(why, size, TSR_DECLINE_SHAPE, "sequence_lens of rank other than 1");
        /* that path's products are the packed GEMM of odn_sgemm.c */
        if (!odn_sgemm_supported() && !odn_rnn_seq_full(c.seq, steps, batch))
            return odn_decline(why, size, TSR_DECLINE_OTHER, "per-row sequence_lens need AVX2 and FMA");
    }
    for (size_t k = 5; k < 7 && k < odn_host->node_input_count(n); k++) {
        if (!present(n, k)) continue;
        if (k == 6 && a.cell != ODN_RNN_LSTM) break;
        const tsr_value_info *v = odn_host->node_input(n, k);
        int32_t vr = odn_host->value_rank(v);
        if (!float_or_unknown(odn_host->value_elem_type(v)) || (vr >= 0 && vr != 3))
            return odn_decline(why, size, TSR_DECLINE_TYPE, "%s is not a float32 3-D tensor",
                               k == 5 ? "initial_h" : "initial_c");
    }
    size_t max_out = a.cell == ODN_RNN_LSTM ? 3 : 2;
    for (size_t k = 0; k < odn_host->node_output_count(n); k++) {
        const tsr_value_info *v = odn_host->node_output(n, k);
        if (!v) continue;
        if (k >= max_out) return odn_decline(why, size, TSR_DECLINE_OTHER, "%s output %zu", op, k);
        if (!float_or_unknown(odn_host->value_elem_type(v)))
            return odn_decline(why, size, TSR_DECLINE_TYPE, "%s output %zu is not float32", op, k);
    }
    /* ask oneDNN now whether it has a kernel for this cell (small sizes
     * stand for the ones known only at run time) */
    char err[160];
    if (!odn_rnn_probe(&a, &c, c.p != NULL, err, sizeof err))
        return odn_decline(why, size, TSR_DECLINE_OTHER, "%s", err);
    return 0;
}
