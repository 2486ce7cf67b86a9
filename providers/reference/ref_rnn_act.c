/*
 * The activation functions recurrent operators accept in their
 * `activations` attribute, with the alpha/beta defaults of the ONNX
 * operators of the same name.
 */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "ref_rnn.h"

typedef struct act_info {
    const char *name;
    rnn_act_kind kind;
    bool uses_alpha, uses_beta;
    double alpha, beta;
} act_info;

static const act_info act_table[] = {
    {"Relu", RNN_ACT_RELU, false, false, 0.0, 0.0},
    {"Tanh", RNN_ACT_TANH, false, false, 0.0, 0.0},
    {"Sigmoid", RNN_ACT_SIGMOID, false, false, 0.0, 0.0},
    {"Affine", RNN_ACT_AFFINE, true, true, 1.0, 0.0},
    {"LeakyRelu", RNN_ACT_LEAKY_RELU, true, false, 0.01, 0.0},
    {"ThresholdedRelu", RNN_ACT_THRESHOLDED_RELU, true, false, 1.0, 0.0},
    {"ScaledTanh", RNN_ACT_SCALED_TANH, true, true, 1.0, 1.0},
    {"HardSigmoid", RNN_ACT_HARD_SIGMOID, true, true, 0.2, 0.5},
    {"Elu", RNN_ACT_ELU, true, false, 1.0, 0.0},
    {"Softsign", RNN_ACT_SOFTSIGN, false, false, 0.0, 0.0},
    {"Softplus", RNN_ACT_SOFTPLUS, false, false, 0.0, 0.0},
};

#define ACT_COUNT (sizeof act_table / sizeof act_table[0])

/* Exporters differ in case ("Tanh", "tanh"); ONNX Runtime accepts both. */
static bool same_name(const char *known, const char *name, size_t len) {
    if (strlen(known) != len) return false;
    for (size_t i = 0; i < len; i++)
        if (tolower((unsigned char)known[i]) != tolower((unsigned char)name[i])) return false;
    return true;
}

bool ref_rnn_act_lookup(const char *name, size_t len, rnn_act_kind *kind) {
    if (!name) return false;
    for (size_t i = 0; i < ACT_COUNT; i++) {
        if (same_name(act_table[i].name, name, len)) {
            *kind = act_table[i].kind;
            return true;
        }
    }
    return false;
}

void ref_rnn_act_params(rnn_act_kind kind, bool *uses_alpha, bool *uses_beta, double *alpha, double *beta) {
    for (size_t i = 0; i < ACT_COUNT; i++) {
        if (act_table[i].kind != kind) continue;
        *uses_alpha = act_table[i].uses_alpha;
        *uses_beta = act_table[i].uses_beta;
        *alpha = act_table[i].alpha;
        *beta = act_table[i].beta;
        return;
    }
    *uses_alpha = *uses_beta = false;
    *alpha = *beta = 0.0;
}

/* 1 / (1 + e^-x), without overflowing e^-x for large negative x. */
static double sigmoid(double x) {
    if (x >= 0) return 1.0 / (1.0 + exp(-x));
    double e = exp(x);
    return e / (1.0 + e);
}

double ref_rnn_act_apply(const rnn_act *a, double x) {
    switch (a->kind) {
    case RNN_ACT_RELU: return x > 0 ? x : 0.0;
    case RNN_ACT_TANH: return tanh(x);
    case RNN_ACT_SIGMOID: return sigmoid(x);
    case RNN_ACT_AFFINE: return a->alpha * x + a->beta;
    case RNN_ACT_LEAKY_RELU: return x >= 0 ? x : a->alpha * x;
    case RNN_ACT_THRESHOLDED_RELU: return x > a->alpha ? x : 0.0;
    case RNN_ACT_SCALED_TANH: return a->alpha * tanh(a->beta * x);
    case RNN_ACT_HARD_SIGMOID: {
        double v = a->alpha * x + a->beta;
        return v < 0 ? 0.0 : (v > 1 ? 1.0 : v);
    }
    case RNN_ACT_ELU: return x >= 0 ? x : a->alpha * expm1(x);
    case RNN_ACT_SOFTSIGN: return x / (1.0 + fabs(x));
    /* log(1 + e^x) = max(x, 0) + log1p(e^-|x|), finite for any x. */
    case RNN_ACT_SOFTPLUS: return (x > 0 ? x : 0.0) + log1p(exp(-fabs(x)));
    }
    return x;
}
