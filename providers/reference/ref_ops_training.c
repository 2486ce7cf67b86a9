/*
 * Optimizer steps of the ai.onnx.preview.training domain: Adagrad, Adam and
 * Momentum (standard and Nesterov).
 *
 * Each node updates n tensors at once. Its inputs are the learning rate R
 * and the update count T (both scalars), then n tensors per state kind in
 * blocks: X1..Xn, G1..Gn, then the optimizer's own state (H for Adagrad,
 * V and H for Adam, V for Momentum). Outputs come in the same blocks: the
 * new X1..Xn, then the new state tensors. Every tensor of a group must
 * have the shape of its X. Arithmetic is done in double and rounded once on
 * store.
 *
 * Gradient (the fourth operator of the domain) is not here: it needs the
 * graph that computes its `y` from its `xs`, and a kernel sees only its own
 * node; see the provider's notes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"

#define TRAINING_DOMAIN "ai.onnx.preview.training"

typedef enum optimizer { OPT_ADAGRAD, OPT_ADAM, OPT_MOMENTUM, OPT_NESTEROV } optimizer;

typedef struct step_params {
    optimizer kind;
    double r, t;
    double alpha, beta, epsilon, decay, norm, norm_post;
} step_params;

/* One element's update. s[0] (and s[1] for Adam) is the state in and out;
 * returns the new x. */
static double step_one(const step_params *p, double x, double g, double *s) {
    double gr = p->norm * x + g; /* gradient plus that of the L2 term */
    switch (p->kind) {
    case OPT_ADAGRAD: {
        double r = p->r / (1.0 + p->t * p->decay);
        s[0] += gr * gr;
        return x - r * gr / (sqrt(s[0]) + p->epsilon);
    }
    case OPT_ADAM: {
        s[0] = p->alpha * s[0] + (1.0 - p->alpha) * gr;
        s[1] = p->beta * s[1] + (1.0 - p->beta) * gr * gr;
        /* Bias correction of both moments, from the second step on. */
        double r = p->t > 0 ? p->r * sqrt(1.0 - pow(p->beta, p->t)) / (1.0 - pow(p->alpha, p->t)) : p->r;
        double xn = x - r * (s[0] / (sqrt(s[1]) + p->epsilon));
        return (1.0 - p->norm_post) * xn;
    }
    case OPT_MOMENTUM:
    case OPT_NESTEROV: {
        /* The gradient's coefficient is 1 on the first step. */
        double b = p->t > 0 ? p->beta : 1.0;
        s[0] = p->alpha * s[0] + b * gr;
        if (p->kind == OPT_MOMENTUM) return x - p->r * s[0];
        return x - p->r * (gr + p->alpha * s[0]);
    }
    }
    return x;
}

static bool same_shape(const tsr_tensor *a, const tsr_tensor *b) {
    if (a->rank != b->rank) return false;
    for (int32_t i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

static tsr_status *scalar_input(ref_ctx *c, size_t i, const char *what, double *out) {
    const tsr_tensor *t = ref_in(c, i);
    if (!t) return ref_err(c, TSR_ERR_INVALID_MODEL, "input %s is missing", what);
    if (ref_numel(t) != 1)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s must be a scalar, it has %llu elements", what,
                       (unsigned long long)ref_numel(t));
    if (!ref_is_float(t->elem_type) && !ref_is_int(t->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s has element type %d", what, (int)t->elem_type);
    *out = ref_load(t->elem_type, t->data, 0);
    return NULL;
}

static tsr_status *optimizer_run(ref_ctx *c, step_params *p, size_t n_state) {
    size_t per_group = 2 + n_state; /* X, G, state */
    if (c->n_in < 2 + per_group || (c->n_in - 2) % per_group != 0)
        return ref_err(c, TSR_ERR_INVALID_MODEL, "%zu inputs; expected R, T and %zu tensors per optimized tensor",
                       c->n_in, per_group);
    size_t groups = (c->n_in - 2) / per_group;
    if (c->n_out > groups * (1 + n_state))
        return ref_err(c, TSR_ERR_INVALID_MODEL, "%zu outputs for %zu optimized tensors", c->n_out, groups);
    tsr_status *st = scalar_input(c, 0, "R", &p->r);
    if (st || (st = scalar_input(c, 1, "T", &p->t))) return st;

    for (size_t k = 0; k < groups; k++) {
        const tsr_tensor *in[4] = {NULL, NULL, NULL, NULL}; /* X, G, states */
        for (size_t j = 0; j < per_group; j++) {
            in[j] = ref_in(c, 2 + j * groups + k);
            if (!in[j]) return ref_err(c, TSR_ERR_INVALID_MODEL, "input %zu is missing", 2 + j * groups + k);
            if (!ref_is_float(in[j]->elem_type))
                return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input %zu has element type %d, not a float type",
                               2 + j * groups + k, (int)in[j]->elem_type);
            if (!same_shape(in[j], in[0]))
                return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input %zu differs in shape from the tensor it updates",
                               2 + j * groups + k);
        }
        /* Outputs: new X, then each new state, all shaped like X. */
        tsr_tensor *out[3];
        for (size_t j = 0; j < 1 + n_state; j++) {
            const tsr_tensor *like = in[j == 0 ? 0 : j + 1];
            if ((st = ref_out(c, j * groups + k, like->elem_type, like->rank, like->dims, &out[j]))) return st;
        }
        size_t count = (size_t)ref_numel(in[0]);
        for (size_t e = 0; e < count; e++) {
            double x = ref_load(in[0]->elem_type, in[0]->data, e);
            double g = ref_load(in[1]->elem_type, in[1]->data, e);
            double s[2] = {0, 0};
            for (size_t j = 0; j < n_state; j++) s[j] = ref_load(in[2 + j]->elem_type, in[2 + j]->data, e);
            double xn = step_one(p, x, g, s);
            ref_store(out[0]->elem_type, out[0]->data, e, xn);
            for (size_t j = 0; j < n_state; j++) ref_store(out[1 + j]->elem_type, out[1 + j]->data, e, s[j]);
        }
    }
    return NULL;
}

static tsr_status *ref_training_adagrad(ref_ctx *c) {
    step_params p = {.kind = OPT_ADAGRAD};
    p.decay = ref_attr_float(c, "decay_factor", 0.0f);
    p.epsilon = ref_attr_float(c, "epsilon", 1e-6f);
    p.norm = ref_attr_float(c, "norm_coefficient", 0.0f);
    return optimizer_run(c, &p, 1);
}

static tsr_status *ref_training_adam(ref_ctx *c) {
    step_params p = {.kind = OPT_ADAM};
    p.alpha = ref_attr_float(c, "alpha", 0.9f);
    p.beta = ref_attr_float(c, "beta", 0.999f);
    p.epsilon = ref_attr_float(c, "epsilon", 1e-6f);
    p.norm = ref_attr_float(c, "norm_coefficient", 0.0f);
    p.norm_post = ref_attr_float(c, "norm_coefficient_post", 0.0f);
    return optimizer_run(c, &p, 2);
}

static tsr_status *ref_training_momentum(ref_ctx *c) {
    static const char *const required[] = {"alpha", "beta", "mode", "norm_coefficient"};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (!ref_attr_has(c, required[i]))
            return ref_err(c, TSR_ERR_INVALID_MODEL, "attribute '%s' is required", required[i]);
    const char *mode = ref_attr_str(c, "mode", "standard");
    step_params p;
    memset(&p, 0, sizeof p);
    if (strcmp(mode, "standard") == 0) p.kind = OPT_MOMENTUM;
    else if (strcmp(mode, "nesterov") == 0) p.kind = OPT_NESTEROV;
    else return ref_err(c, TSR_ERR_INVALID_MODEL, "mode '%s' is not 'standard' or 'nesterov'", mode);
    p.alpha = ref_attr_float(c, "alpha", 0.0f);
    p.beta = ref_attr_float(c, "beta", 0.0f);
    p.norm = ref_attr_float(c, "norm_coefficient", 0.0f);
    return optimizer_run(c, &p, 1);
}

const ref_op ref_ops_training[] = {{TRAINING_DOMAIN, "Adagrad", 1, ref_training_adagrad, NULL},
                                   {TRAINING_DOMAIN, "Adam", 1, ref_training_adam, NULL},
                                   {TRAINING_DOMAIN, "Momentum", 1, ref_training_momentum, NULL},
                                   {NULL, NULL, 0, NULL, NULL}};
