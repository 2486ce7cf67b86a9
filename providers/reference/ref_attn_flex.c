/*
 * ai.onnx.preview FlexAttention: attention whose scores and probabilities
 * pass through optional user graphs.
 *
 *   scores = (Q * sqrt(scale)) (K * sqrt(scale))^T     in Q's type
 *   scores = score_mod(scores)                         in the softmax type
 *   probs  = softmax(scores),  probs = prob_mod(probs)
 *   Y      = probs V                                   stored in V's type
 *
 * Inputs are rank 4; query head h reads key/value head h / (Hq / Hkv). The
 * softmax type is softmax_precision, else float (double for double inputs).
 * Values are rounded to those types at the same steps as the definition,
 * so float16 inputs give its results rather than more precise ones.
 *
 * Without modifier graphs the rows are independent and are done one at a
 * time; with them the graphs see the whole (B, Hq, L, S) tensor, which is
 * then the working set. Unlike Attention, a row of only -inf scores is NaN
 * (the definition does not guard it).
 */
#include <math.h>
#include <stdlib.h>

#include "ref_attn.h"

typedef struct flex_args {
    int64_t B, Hq, Hkv, L, S, E, Ev;
    int32_t in_type, soft_type;
    double sqrt_scale;
    bool score_mod, prob_mod;
} flex_args;

static tsr_status *read_args(ref_ctx *c, flex_args *a) {
    const tsr_tensor *Q = ref_in(c, 0), *K = ref_in(c, 1), *V = ref_in(c, 2);
    tsr_status *st;
    if ((st = ref_attn_want(c, Q, "Q", 4)) || (st = ref_attn_want(c, K, "K", 4)) || (st = ref_attn_want(c, V, "V", 4)))
        return st;
    *a = (flex_args){Q->dims[0], Q->dims[1],   K->dims[1], Q->dims[2], K->dims[2], Q->dims[3],
                     V->dims[3], Q->elem_type, 0,          0,          false,      false};
    if (K->dims[0] != a->B || V->dims[0] != a->B || V->dims[1] != a->Hkv || V->dims[2] != a->S || K->dims[3] != a->E)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                       "K and V must match Q's batch and head size and each other's heads and "
                       "sequence length");
    if (K->elem_type != a->in_type || V->elem_type != a->in_type)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "Q, K and V must share one element type");
    if (a->Hkv <= 0 || a->Hq % a->Hkv)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%lld query heads are not a multiple of %lld key/value heads",
                       (long long)a->Hq, (long long)a->Hkv);
    int64_t sp = ref_attr_int(c, "softmax_precision", 0);
    if (sp == 0) a->soft_type = a->in_type == TSR_DOUBLE ? TSR_DOUBLE : TSR_FLOAT;
    else if (sp == TSR_FLOAT || sp == TSR_FLOAT16 || sp == TSR_BFLOAT16 || sp == TSR_DOUBLE) a->soft_type = (int32_t)sp;
    else
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "softmax_precision %lld is not float, float16, bfloat16 or double",
                       (long long)sp);
    /* The definition takes the root in float, then converts to Q's type. */
    float scale = ref_attr_has(c, "scale") ? ref_attr_float(c, "scale", 1.0f)
                                           : (float)(1.0 / sqrt(a->E > 0 ? (double)a->E : 1.0));
    a->sqrt_scale = ref_attn_round(a->in_type, sqrtf(scale));
    a->score_mod = ref_attr_has(c, "score_mod");
    a->prob_mod = ref_attr_has(c, "prob_mod");
    return NULL;
}

/* Runs graph attribute `attr` over the (B, Hq, L, S) values in buf. */
static tsr_status *apply_mod(ref_ctx *c, const flex_args *a, const char *attr, double *buf, size_t n) {
    size_t es = ref_elem_size(a->soft_type);
    void *data = malloc(n ? n * es : 1); /* n * es fits: buf holds n doubles */
    if (!data) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory for %s's input", attr);
    int64_t dims[4] = {a->B, a->Hq, a->L, a->S};
    tsr_tensor in = {sizeof(tsr_tensor), a->soft_type, 4, dims, data, n * es, TSR_MEMORY_HOST, 0};
    ref_put_f64(&in, 0, n, buf);
    double *res = NULL;
    tsr_status *st = ref_attn_subgraph(c, attr, &in, n, &res);
    free(data);
    if (st) return st;
    for (size_t i = 0; i < n; i++) buf[i] = ref_attn_round(a->soft_type, res[i]);
    free(res);
    return NULL;
}

/* Row r = (b, h, i) of the scores, in the softmax type. Q and K are
 * already multiplied by sqrt(scale) and rounded to their type. */
static void score_row(const flex_args *a, const double *q, const double *k, size_t r, double *out) {
    int64_t i = (int64_t)r % a->L, bh = (int64_t)r / a->L;
    int64_t b = bh / a->Hq, h = bh % a->Hq, kvh = h / (a->Hq / a->Hkv);
    const double *qi = q + ((bh * a->L) + i) * a->E;
    const double *kh = k + (b * a->Hkv + kvh) * a->S * a->E;
    for (int64_t j = 0; j < a->S; j++) {
        double s = 0;
        for (int64_t d = 0; d < a->E; d++) s += qi[d] * kh[j * a->E + d];
        out[j] = ref_attn_round(a->soft_type, ref_attn_round(a->in_type, s));
    }
}

tsr_status *ref_attn_flex(ref_ctx *c) {
    flex_args a;
    tsr_status *st = read_args(c, &a);
    if (st) return st;
    const tsr_tensor *Q = ref_in(c, 0), *K = ref_in(c, 1), *V = ref_in(c, 2);
    int64_t ydims[4] = {a.B, a.Hq, a.L, a.Ev};
    tsr_tensor *Y;
    if ((st = ref_out(c, 0, V->elem_type, 4, ydims, &Y))) return st;
    size_t rows = (size_t)(a.B * a.Hq * a.L), chunk = a.score_mod || a.prob_mod ? rows : 1, n;
    if (!ref_attn_mul(chunk, (size_t)a.S, &n))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "the score tensor is too large");
    double *q = NULL, *k = NULL, *v = NULL, *p = NULL, *y = NULL;
    if ((st = ref_attn_f64(c, Q, "Q", &q)) || (st = ref_attn_f64(c, K, "K", &k)) ||
        (st = ref_attn_f64(c, V, "V", &v)) || (st = ref_attn_zeros(c, n, "the scores", &p)) ||
        (st = ref_attn_zeros(c, (size_t)a.Ev, "an output row", &y)))
        goto done;
    for (size_t i = 0, nq = (size_t)ref_numel(Q); i < nq; i++) q[i] = ref_attn_round(a.in_type, q[i] * a.sqrt_scale);
    for (size_t i = 0, nk = (size_t)ref_numel(K); i < nk; i++) k[i] = ref_attn_round(a.in_type, k[i] * a.sqrt_scale);
    for (size_t i = 0, nv = (size_t)ref_numel(V); i < nv; i++) v[i] = ref_attn_round(a.soft_type, v[i]);
    size_t S = (size_t)a.S;
    for (size_t r0 = 0; r0 < rows; r0 += chunk) {
        for (size_t r = r0; r < r0 + chunk; r++) score_row(&a, q, k, r, p + (r - r0) * S);
        if (a.score_mod && (st = apply_mod(c, &a, "score_mod", p, n))) goto done;
        for (size_t r = 0; r < chunk; r++) {
            ref_attn_softmax(p + r * S, S, false);
            for (size_t j = 0; j < S; j++) p[r * S + j] = ref_attn_round(a.soft_type, p[r * S + j]);
        }
        if (a.prob_mod && (st = apply_mod(c, &a, "prob_mod", p, n))) goto done;
        for (size_t r = r0; r < r0 + chunk; r++) {
            int64_t bh = (int64_t)r / a.L, b = bh / a.Hq, h = bh % a.Hq;
            const double *vh = v + (b * a.Hkv + h / (a.Hq / a.Hkv)) * a.S * a.Ev;
            const double *pr = p + (r - r0) * S;
            for (int64_t d = 0; d < a.Ev; d++) y[d] = 0;
            for (size_t j = 0; j < S; j++)
                for (int64_t d = 0; d < a.Ev; d++) y[d] += pr[j] * vh[(int64_t)j * a.Ev + d];
            for (int64_t d = 0; d < a.Ev; d++) y[d] = ref_attn_round(a.soft_type, y[d]);
            ref_put_f64(Y, r * (size_t)a.Ev, (size_t)a.Ev, y);
        }
    }
done:
    free(q);
    free(k);
    free(v);
    free(p);
    free(y);
    return st;
}
