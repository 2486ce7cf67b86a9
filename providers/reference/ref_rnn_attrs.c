/*
 * Attributes of RNN, GRU and LSTM, read and checked once so that the
 * claim-time check and the kernel agree on what a node means.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ref_rnn.h"

static const tsr_attr *find_typed(const tsr_host_api *host, const tsr_node *node, const char *name, int32_t type) {
    const tsr_attr *a = host->node_attr_find(node, name);
    return a && host->attr_type(a) == type ? a : NULL;
}

static int64_t int_attr(const tsr_host_api *host, const tsr_node *node, const char *name, int64_t dflt) {
    const tsr_attr *a = find_typed(host, node, name, TSR_ATTR_INT);
    return a ? host->attr_int(a) : dflt;
}

static int parse_direction(const tsr_host_api *host, const tsr_node *node, rnn_attrs *out, char *why, size_t why_size) {
    const tsr_attr *a = find_typed(host, node, "direction", TSR_ATTR_STRING);
    size_t n = 7;
    const char *s = a ? host->attr_string(a, &n) : "forward";
    if (n == 7 && memcmp(s, "forward", 7) == 0) {
        out->dirs = 1;
    } else if (n == 7 && memcmp(s, "reverse", 7) == 0) {
        out->dirs = 1;
        out->reverse = true;
    } else if (n == 13 && memcmp(s, "bidirectional", 13) == 0) {
        out->dirs = 2;
    } else {
        snprintf(why, why_size, "direction '%.*s' is not forward, reverse or bidirectional", (int)(n > 40 ? 40 : n), s);
        return TSR_DECLINE_ATTRIBUTE;
    }
    return 0;
}

/* The `activations` list (n per direction, or n shared by both), with
 * activation_alpha / activation_beta consumed in list order by the
 * functions that take them, as ONNX Runtime reads them. */
static int parse_activations(const tsr_host_api *host, const tsr_node *node, rnn_cell_kind kind, rnn_attrs *out,
                             char *why, size_t why_size) {
    static const rnn_act_kind defaults[3][RNN_MAX_ACTS] = {
        {RNN_ACT_TANH, RNN_ACT_TANH, RNN_ACT_TANH},
        {RNN_ACT_SIGMOID, RNN_ACT_TANH, RNN_ACT_TANH},
        {RNN_ACT_SIGMOID, RNN_ACT_TANH, RNN_ACT_TANH},
    };
    int per_dir = ref_rnn_act_count(kind);
    rnn_act list[RNN_MAX_DIRS * RNN_MAX_ACTS];
    size_t count = (size_t)per_dir;
    const tsr_attr *names = find_typed(host, node, "activations", TSR_ATTR_STRINGS);
    if (names) {
        count = host->attr_list_size(names);
        if (count != (size_t)per_dir && count != (size_t)(per_dir * out->dirs)) {
            snprintf(why, why_size, "activations lists %zu functions; expected %d per direction", count, per_dir);
            return TSR_DECLINE_ATTRIBUTE;
        }
    }
    const tsr_attr *alphas = find_typed(host, node, "activation_alpha", TSR_ATTR_FLOATS);
    const tsr_attr *betas = find_typed(host, node, "activation_beta", TSR_ATTR_FLOATS);
    size_t n_alpha = alphas ? host->attr_list_size(alphas) : 0;
    size_t n_beta = betas ? host->attr_list_size(betas) : 0;
    const float *av = alphas ? host->attr_floats(alphas) : NULL;
    const float *bv = betas ? host->attr_floats(betas) : NULL;
    size_t ia = 0, ib = 0;
    for (size_t i = 0; i < count; i++) {
        rnn_act_kind k = defaults[kind][i % (size_t)per_dir];
        if (names) {
            size_t len;
            const char *s = host->attr_strings_at(names, i, &len);
            if (!ref_rnn_act_lookup(s, len, &k)) {
                snprintf(why, why_size, "activation '%.*s' is not implemented", (int)(len > 40 ? 40 : len), s ? s : "");
                return TSR_DECLINE_ATTRIBUTE;
            }
        }
        bool ua, ub;
        double alpha, beta;
        ref_rnn_act_params(k, &ua, &ub, &alpha, &beta);
        if (ua && av && ia < n_alpha) alpha = av[ia++];
        if (ub && bv && ib < n_beta) beta = bv[ib++];
        list[i] = (rnn_act){k, alpha, beta};
    }
    for (int d = 0; d < out->dirs; d++)
        for (int j = 0; j < per_dir; j++)
            out->act[d][j] = list[count == (size_t)per_dir ? (size_t)j : (size_t)(d * per_dir + j)];
    return 0;
}

int ref_rnn_parse_attrs(const tsr_host_api *host, const tsr_node *node, rnn_cell_kind kind, rnn_attrs *out, char *why,
                        size_t why_size) {
    memset(out, 0, sizeof *out);
    int r = parse_direction(host, node, out, why, why_size);
    if (r) return r;
    /* `layout` appeared in opset 14; earlier nodes are sequence-major. */
    int64_t layout = host->node_opset(node) >= 14 ? int_attr(host, node, "layout", 0) : 0;
    if (layout != 0 && layout != 1) {
        snprintf(why, why_size, "layout %lld is not 0 or 1", (long long)layout);
        return TSR_DECLINE_ATTRIBUTE;
    }
    out->layout = (int)layout;
    out->hidden_size = int_attr(host, node, "hidden_size", -1);
    if (host->node_attr_find(node, "hidden_size") && out->hidden_size <= 0) {
        snprintf(why, why_size, "hidden_size %lld is not positive", (long long)out->hidden_size);
        return TSR_DECLINE_ATTRIBUTE;
    }
    const tsr_attr *clip = find_typed(host, node, "clip", TSR_ATTR_FLOAT);
    if (clip) {
        out->clip = host->attr_float(clip);
        if (!(out->clip > 0)) {
            snprintf(why, why_size, "clip %g is not a positive threshold", out->clip);
            return TSR_DECLINE_ATTRIBUTE;
        }
    }
    if (kind == RNN_CELL_GRU) out->linear_before_reset = int_attr(host, node, "linear_before_reset", 0) != 0;
    if (kind == RNN_CELL_LSTM) out->input_forget = int_attr(host, node, "input_forget", 0) != 0;
    return parse_activations(host, node, kind, out, why, why_size);
}
