/*
 * LinearAttention (opset 27): the recurrent form of linear attention. Per
 * key/value head a d_k x d_v state S is carried over the tokens:
 *   gated rules:  S *= exp(g_t)            (g per head or per key dimension)
 *   delta rules:  v_t = beta_t * (v_t - S^T k_t)
 *   always:       S += k_t (outer) v_t,   o_t = scale * q_t^T S
 * and each of the q_num_heads / kv_num_heads query heads of a group reads
 * its key/value head's state. Tokens are taken one at a time, exactly as
 * the definition reads; the chunk_size attribute is a tuning hint only.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref_attn.h"

typedef struct la_dims {
    int64_t B, T, Hq, Hkv, dk, dv;
} la_dims;

/* Checks a rank-3 (B, T, last) input, `last` among the allowed extents. */
static tsr_status *want_packed(ref_ctx *c, const tsr_tensor *t, const char *what, const la_dims *d, int64_t last_a,
                               int64_t last_b) {
    tsr_status *st = ref_attn_want(c, t, what, 3);
    if (st) return st;
    if (t->dims[0] != d->B || t->dims[1] != d->T || (t->dims[2] != last_a && t->dims[2] != last_b))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s shape [%lld, %lld, %lld] does not match (%lld, %lld, %lld%s)",
                       what, (long long)t->dims[0], (long long)t->dims[1], (long long)t->dims[2], (long long)d->B,
                       (long long)d->T, (long long)last_a, last_a != last_b ? " or its per-head form" : "");
    return NULL;
}

tsr_status *ref_attn_linear(ref_ctx *c) {
    const tsr_tensor *Q = ref_in(c, 0), *K = ref_in(c, 1), *V = ref_in(c, 2);
    const tsr_tensor *P = ref_in(c, 3), *G = ref_in(c, 4), *Bt = ref_in(c, 5);
    tsr_status *st;
    if ((st = ref_attn_want(c, Q, "query", 3)) || (st = ref_attn_want(c, K, "key", 3)) ||
        (st = ref_attn_want(c, V, "value", 3)))
        return st;
    const char *rule = ref_attr_str(c, "update_rule", "gated_delta");
    bool gated = strcmp(rule, "gated") == 0 || strcmp(rule, "gated_delta") == 0;
    bool delta = strcmp(rule, "delta") == 0 || strcmp(rule, "gated_delta") == 0;
    if (!gated && !delta && strcmp(rule, "linear") != 0)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "update_rule '%s' is not one of linear, gated, delta, gated_delta",
                       rule);
    if (gated != (G != NULL) || delta != (Bt != NULL))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "update_rule '%s' %s decay and %s beta", rule,
                       gated ? "needs" : "takes no", delta ? "needs" : "takes no");
    la_dims d = {Q->dims[0], Q->dims[1], ref_attr_int(c, "q_num_heads", 0), ref_attr_int(c, "kv_num_heads", 0), 0, 0};
    if (d.Hq <= 0 || d.Hkv <= 0 || d.Hq % d.Hkv)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                       "q_num_heads (%lld) must be a positive multiple of kv_num_heads (%lld)", (long long)d.Hq,
                       (long long)d.Hkv);
    if (Q->dims[2] % d.Hq || V->dims[2] % d.Hkv)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                       "query's last dimension must divide by q_num_heads and value's by "
                       "kv_num_heads");
    d.dk = Q->dims[2] / d.Hq;
    d.dv = V->dims[2] / d.Hkv;
    if ((st = want_packed(c, K, "key", &d, d.Hkv * d.dk, d.Hkv * d.dk)) ||
        (st = want_packed(c, V, "value", &d, d.Hkv * d.dv, d.Hkv * d.dv)) ||
        (G && (st = want_packed(c, G, "decay", &d, d.Hkv * d.dk, d.Hkv))) ||
        (Bt && (st = want_packed(c, Bt, "beta", &d, d.Hkv, 1))))
        return st;
    if (P) {
        if ((st = ref_attn_want(c, P, "past_state", 4))) return st;
        if (P->dims[0] != d.B || P->dims[1] != d.Hkv || P->dims[2] != d.dk || P->dims[3] != d.dv)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "past_state shape does not match (%lld, %lld, %lld, %lld)",
                           (long long)d.B, (long long)d.Hkv, (long long)d.dk, (long long)d.dv);
    }
    double scale = ref_attr_float(c, "scale", 0.0f);
    if (scale == 0.0) scale = d.dk > 0 ? 1.0 / sqrt((double)d.dk) : 1.0;

    /* The state's type S is past_state's; without it, the type the model
     * declares for present_state, else query's. */
    int32_t s_type = P ? P->elem_type : Q->elem_type;
    const tsr_value_info *pv = !P && c->n_out > 1 ? c->host->node_output(c->node, 1) : NULL;
    if (pv && ref_is_float(c->host->value_elem_type(pv))) s_type = c->host->value_elem_type(pv);
    int64_t odims[3] = {d.B, d.T, d.Hq * d.dv}, sdims[4] = {d.B, d.Hkv, d.dk, d.dv};
    tsr_tensor *Y, *Ps;
    if ((st = ref_out(c, 0, Q->elem_type, 3, odims, &Y)) || (st = ref_out(c, 1, s_type, 4, sdims, &Ps))) return st;
    double *q = NULL, *k = NULL, *v = NULL, *past = NULL, *g = NULL, *beta = NULL;
    double *S = NULL, *vt = NULL, *o = NULL;
    size_t ss = (size_t)(d.dk * d.dv);
    if ((st = ref_attn_f64(c, Q, "query", &q)) || (st = ref_attn_f64(c, K, "key", &k)) ||
        (st = ref_attn_f64(c, V, "value", &v)) || (P && (st = ref_attn_f64(c, P, "past_state", &past))) ||
        (G && (st = ref_attn_f64(c, G, "decay", &g))) || (Bt && (st = ref_attn_f64(c, Bt, "beta", &beta))) ||
        (st = ref_attn_zeros(c, ss, "the state", &S)) || (st = ref_attn_zeros(c, (size_t)d.dv, "a value row", &vt)) ||
        (st = ref_attn_zeros(c, (size_t)d.dv, "an output row", &o)))
        goto done;
    int64_t group = d.Hq / d.Hkv;
    /* (B, T, H_kv) is per head even when d_k = 1 makes both forms alike */
    bool g_per_dim = G && G->dims[2] != d.Hkv;
    int64_t g_last = G ? G->dims[2] : 0, b_last = Bt ? Bt->dims[2] : 0;
    for (int64_t b = 0; b < d.B; b++)
        for (int64_t h = 0; h < d.Hkv; h++) {
            size_t soff = (size_t)((b * d.Hkv + h) * d.dk * d.dv);
            if (past) memcpy(S, past + soff, ss * sizeof *S);
            else memset(S, 0, ss * sizeof *S);
            for (int64_t t = 0; t < d.T; t++) {
                int64_t bt = b * d.T + t;
                const double *kt = k + bt * d.Hkv * d.dk + h * d.dk;
                const double *vin = v + bt * d.Hkv * d.dv + h * d.dv;
                if (g) {
                    const double *gt = g + bt * g_last + (g_per_dim ? h * d.dk : h);
                    for (int64_t i = 0; i < d.dk; i++) {
                        double f = exp(gt[g_per_dim ? i : 0]);
                        for (int64_t j = 0; j < d.dv; j++) S[i * d.dv + j] *= f;
                    }
                }
                for (int64_t j = 0; j < d.dv; j++) vt[j] = vin[j];
                if (beta) {
                    double bv = beta[bt * b_last + (b_last == 1 ? 0 : h)];
                    for (int64_t j = 0; j < d.dv; j++) {
                        double got = 0;
                        for (int64_t i = 0; i < d.dk; i++) got += S[i * d.dv + j] * kt[i];
                        vt[j] = bv * (vt[j] - got);
                    }
                }
                for (int64_t i = 0; i < d.dk; i++)
                    for (int64_t j = 0; j < d.dv; j++) S[i * d.dv + j] += kt[i] * vt[j];
                for (int64_t hq = h * group; hq < (h + 1) * group; hq++) {
                    const double *qt = q + bt * d.Hq * d.dk + hq * d.dk;
                    for (int64_t j = 0; j < d.dv; j++) o[j] = 0;
                    for (int64_t i = 0; i < d.dk; i++)
                        for (int64_t j = 0; j < d.dv; j++) o[j] += qt[i] * S[i * d.dv + j];
                    for (int64_t j = 0; j < d.dv; j++) o[j] *= scale;
                    ref_put_f64(Y, (size_t)(bt * d.Hq * d.dv + hq * d.dv), (size_t)d.dv, o);
                }
            }
            ref_put_f64(Ps, soff, ss, S);
        }
done:
    free(q);
    free(k);
    free(v);
    free(past);
    free(g);
    free(beta);
    free(S);
    free(vt);
    free(o);
    return st;
}
