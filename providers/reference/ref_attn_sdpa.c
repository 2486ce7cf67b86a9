/*
 * Attention (opsets 23, 24, 25): scaled dot-product attention.
 *
 *   present_key/value = concat(past, new) along the sequence
 *   s = scale * Q K^T,  s = softcap * tanh(s / softcap) when softcap > 0
 *   Y = softmax(s + bias) V          (bias: see ref_attn_bias.c)
 *
 * Q, K, V are all 4-D (batch, heads, seq, head_size) or all 3-D (batch, seq,
 * heads * head_size) with q_num_heads and kv_num_heads. With fewer key/value
 * heads than query heads (GQA/MQA) query head h uses key/value head
 * h / (q_heads / kv_heads). A query row whose keys are all masked gives 0.
 * The optional 4th output is, by qk_matmul_output_mode: 0 the scaled QK^T,
 * 1 that after softcap, 2 after adding the bias, 3 the probabilities.
 *
 * Rows are computed one at a time in double: memory is the inputs in double
 * plus a few rows, never a (q_len x kv_len) matrix per head.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref_attn.h"

/* Element (b, h, s, d) of a 3-D or 4-D attention tensor sits at
 * b*sb + h*sh + s*ss + d. */
typedef struct bhsd {
    int64_t B, H, S, D;
    int64_t sb, sh, ss;
} bhsd;

/* The layout of t (rank 4, or rank 3 with `heads` heads). */
static tsr_status *layout(ref_ctx *c, const tsr_tensor *t, const char *what, int64_t heads, bhsd *o) {
    if (t->rank == 4) {
        *o = (bhsd){t->dims[0], t->dims[1], t->dims[2], t->dims[3], 0, 0, 0};
        o->ss = o->D, o->sh = o->S * o->D, o->sb = o->H * o->S * o->D;
        return NULL;
    }
    if (heads <= 0 || t->dims[2] % heads)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s's hidden size %lld does not split into %lld heads", what,
                       (long long)t->dims[2], (long long)heads);
    *o = (bhsd){t->dims[0], heads, t->dims[1], t->dims[2] / heads, 0, 0, 0};
    o->sh = o->D, o->ss = heads * o->D, o->sb = o->S * heads * o->D;
    return NULL;
}

/* The settings of one Attention node. */
typedef struct sdpa_args {
    bhsd q, k, v;        /* k, v: the new tokens */
    int64_t past, total; /* past length; past + new */
    double scale, softcap;
    int64_t mode; /* qk_matmul_output_mode */
    ref_attn_bias bias;
} sdpa_args;

static tsr_status *read_args(ref_ctx *c, sdpa_args *a) {
    const tsr_tensor *Q = ref_in(c, 0), *K = ref_in(c, 1), *V = ref_in(c, 2);
    const tsr_tensor *PK = ref_in(c, 4), *PV = ref_in(c, 5);
    tsr_status *st;
    if ((st = ref_attn_want(c, Q, "Q", -1)) || (st = ref_attn_want(c, K, "K", -1)) ||
        (st = ref_attn_want(c, V, "V", -1)))
        return st;
    if ((Q->rank != 3 && Q->rank != 4) || K->rank != Q->rank || V->rank != Q->rank)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "Q, K and V must all have rank 3 or all rank 4 (got %d, %d, %d)",
                       (int)Q->rank, (int)K->rank, (int)V->rank);
    bool heads_given = ref_attr_has(c, "q_num_heads") || ref_attr_has(c, "kv_num_heads");
    if (Q->rank == 4 && heads_given && ref_opset(c) >= 25)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "q_num_heads and kv_num_heads must not be given with 4-D inputs");
    int64_t qh = ref_attr_int(c, "q_num_heads", 0), kvh = ref_attr_int(c, "kv_num_heads", 0);
    if (Q->rank == 3 && (qh <= 0 || kvh <= 0))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "3-D inputs need positive q_num_heads and kv_num_heads attributes");
    if ((st = layout(c, Q, "Q", qh, &a->q)) || (st = layout(c, K, "K", kvh, &a->k)) ||
        (st = layout(c, V, "V", kvh, &a->v)))
        return st;
    if (a->k.B != a->q.B || a->v.B != a->q.B || a->v.H != a->k.H || a->v.S != a->k.S)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                       "K and V must share batch, heads and sequence length with each other "
                       "and batch with Q");
    if (a->k.D != a->q.D)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "Q's head size %lld differs from K's %lld", (long long)a->q.D,
                       (long long)a->k.D);
    if (a->k.H <= 0 || a->q.H % a->k.H)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%lld query heads are not a multiple of %lld key/value heads",
                       (long long)a->q.H, (long long)a->k.H);
    if (!PK != !PV) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "past_key and past_value come together");
    a->past = 0;
    if (PK) {
        if ((st = ref_attn_want(c, PK, "past_key", 4)) || (st = ref_attn_want(c, PV, "past_value", 4))) return st;
        if (PK->dims[0] != a->q.B || PK->dims[1] != a->k.H || PK->dims[3] != a->k.D || PV->dims[0] != a->q.B ||
            PV->dims[1] != a->k.H || PV->dims[2] != PK->dims[2] || PV->dims[3] != a->v.D)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                           "past_key/past_value shapes do not match (batch %lld, %lld heads, "
                           "head sizes %lld and %lld)",
                           (long long)a->q.B, (long long)a->k.H, (long long)a->k.D, (long long)a->v.D);
        a->past = PK->dims[2];
    }
    a->total = a->past + a->k.S;

    a->scale =
        ref_attr_has(c, "scale") ? ref_attr_float(c, "scale", 1.0f) : (a->q.D > 0 ? 1.0 / sqrt((double)a->q.D) : 1.0);
    a->softcap = ref_attr_float(c, "softcap", 0.0f);
    a->mode = ref_attr_int(c, "qk_matmul_output_mode", 0);
    if (a->mode < 0 || a->mode > 3)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "qk_matmul_output_mode %lld is not 0 to 3", (long long)a->mode);
    ref_attn_bias *bias = &a->bias;
    memset(bias, 0, sizeof *bias);
    bias->mask = ref_in(c, 3);
    bias->causal = ref_attr_int(c, "is_causal", 0) != 0;
    bias->left = ref_attr_int(c, "left_window_size", -1);
    bias->right = ref_attr_int(c, "right_window_size", -1);
    if (bias->left < -1 || bias->right < -1)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "left_window_size and right_window_size must be -1 or >= 0");
    bias->past = a->past;
    bias->q_len = a->q.S;
    bias->kv_len = a->total;
    return ref_attn_bias_mask(c, bias, a->q.B, a->q.H);
}

/* present = concat(past, new) as a (B, H, total, D) double buffer, also
 * stored to output `out` when the model wants it. */
static tsr_status *concat_cache(ref_ctx *c, const sdpa_args *a, const bhsd *nl, const tsr_tensor *past,
                                const tsr_tensor *fresh, size_t out, double **buf) {
    size_t n;
    tsr_status *st;
    if (!ref_attn_mul((size_t)(nl->B * nl->H), (size_t)a->total, &n) || !ref_attn_mul(n, (size_t)nl->D, &n))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "the key/value cache is too large");
    double *p = NULL, *f = NULL;
    if ((st = ref_attn_zeros(c, n, "the key/value cache", buf)) ||
        (past && (st = ref_attn_f64(c, past, "a past cache", &p))) || (st = ref_attn_f64(c, fresh, "K or V", &f)))
        goto done;
    int64_t D = nl->D;
    for (int64_t b = 0; b < nl->B; b++)
        for (int64_t h = 0; h < nl->H; h++) {
            double *dst = *buf + (b * nl->H + h) * a->total * D;
            if (p) memcpy(dst, p + (b * nl->H + h) * a->past * D, (size_t)(a->past * D) * sizeof *dst);
            for (int64_t s = 0; s < nl->S; s++)
                memcpy(dst + (a->past + s) * D, f + b * nl->sb + h * nl->sh + s * nl->ss, (size_t)D * sizeof *dst);
        }
    if (ref_out_wanted(c, out)) {
        int64_t dims[4] = {nl->B, nl->H, a->total, D};
        tsr_tensor *T;
        if ((st = ref_out(c, out, past ? past->elem_type : fresh->elem_type, 4, dims, &T))) goto done;
        ref_put_f64(T, 0, n, *buf);
    }
done:
    free(p);
    free(f);
    return st;
}

tsr_status *ref_attn_sdpa(ref_ctx *c) {
    sdpa_args a;
    tsr_status *st = read_args(c, &a);
    if (st) return st;
    const tsr_tensor *Q = ref_in(c, 0), *NP = ref_in(c, 6);
    int64_t *nonpad = NULL;
    size_t n_nonpad = 0;
    double *q = NULL, *k = NULL, *v = NULL, *bias = NULL, *qk = NULL, *x = NULL, *y = NULL;
    if (NP) {
        if (a.past || ref_in(c, 4))
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "nonpad_kv_seqlen cannot be combined with past_key/past_value");
        if ((st = ref_tensor_i64(c, NP, &nonpad, &n_nonpad))) return st;
        if (NP->rank != 1 || (int64_t)n_nonpad != a.q.B) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "nonpad_kv_seqlen must have shape (%lld)", (long long)a.q.B);
            goto done;
        }
        /* Beyond +-(kv_len + q_len + 1) every key is visible (or none is)
         * already; clamping keeps offset arithmetic from overflowing. */
        int64_t lim = a.total + a.q.S + 1;
        for (size_t i = 0; i < n_nonpad; i++) nonpad[i] = nonpad[i] > lim ? lim : nonpad[i] < -lim ? -lim : nonpad[i];
        a.bias.nonpad = nonpad;
    }

    /* Outputs: Y, present_key, present_value, qk_matmul_output. */
    bhsd yl = {a.q.B, a.q.H, a.q.S, a.v.D, 0, 0, 0};
    int64_t ydims[4] = {a.q.B, a.q.H, a.q.S, a.v.D};
    if (Q->rank == 3) {
        ydims[1] = a.q.S, ydims[2] = a.q.H * a.v.D;
        yl.sh = a.v.D, yl.ss = a.q.H * a.v.D, yl.sb = a.q.S * a.q.H * a.v.D;
    } else {
        yl.ss = a.v.D, yl.sh = a.q.S * a.v.D, yl.sb = a.q.H * a.q.S * a.v.D;
    }
    tsr_tensor *Y, *QK = NULL;
    if ((st = ref_out(c, 0, Q->elem_type, Q->rank, ydims, &Y))) goto done;
    if (ref_out_wanted(c, 3)) {
        int64_t qdims[4] = {a.q.B, a.q.H, a.q.S, a.total};
        if ((st = ref_out(c, 3, Q->elem_type, 4, qdims, &QK))) goto done;
    }
    size_t row = (size_t)a.total;
    if ((st = ref_attn_f64(c, Q, "Q", &q)) || (st = concat_cache(c, &a, &a.k, ref_in(c, 4), ref_in(c, 1), 1, &k)) ||
        (st = concat_cache(c, &a, &a.v, ref_in(c, 5), ref_in(c, 2), 2, &v)) ||
        (st = ref_attn_zeros(c, row, "a bias row", &bias)) || (st = ref_attn_zeros(c, row, "a score row", &qk)) ||
        (st = ref_attn_zeros(c, row, "a probability row", &x)) ||
        (st = ref_attn_zeros(c, (size_t)a.v.D, "an output row", &y)))
        goto done;

    int64_t group = a.q.H / a.k.H, D = a.q.D, Dv = a.v.D, T = a.total;
    for (int64_t b = 0; b < a.q.B; b++)
        for (int64_t h = 0; h < a.q.H; h++) {
            const double *kh = k + (b * a.k.H + h / group) * T * D;
            const double *vh = v + (b * a.k.H + h / group) * T * Dv;
            for (int64_t i = 0; i < a.q.S; i++) {
                if (ref_work(c, T * (D + Dv))) {
                    st = ref_stopped(c);
                    goto done;
                }
                const double *qi = q + b * a.q.sb + h * a.q.sh + i * a.q.ss;
                bool all_masked;
                ref_attn_bias_row(&a.bias, b, h, i, bias, &all_masked);
                for (int64_t j = 0; j < T; j++) {
                    double s = 0;
                    for (int64_t d = 0; d < D; d++) s += qi[d] * kh[j * D + d];
                    qk[j] = s * a.scale;
                }
                size_t qk_off = (size_t)(((b * a.q.H + h) * a.q.S + i) * T);
                if (QK && a.mode == 0) ref_put_f64(QK, qk_off, row, qk);
                for (int64_t j = 0; j < T; j++) {
                    if (a.softcap > 0) qk[j] = a.softcap * tanh(qk[j] / a.softcap);
                    x[j] = qk[j] + bias[j];
                }
                if (QK && a.mode == 1) ref_put_f64(QK, qk_off, row, qk);
                if (QK && a.mode == 2) ref_put_f64(QK, qk_off, row, x);
                if (all_masked) memset(x, 0, row * sizeof *x);
                else ref_attn_softmax(x, row, true);
                if (QK && a.mode == 3) ref_put_f64(QK, qk_off, row, x);
                for (int64_t d = 0; d < Dv; d++) y[d] = 0;
                for (int64_t j = 0; j < T; j++)
                    for (int64_t d = 0; d < Dv; d++) y[d] += x[j] * vh[j * Dv + d];
                ref_put_f64(Y, (size_t)(b * yl.sb + h * yl.sh + i * yl.ss), (size_t)Dv, y);
            }
        }
done:
    free(nonpad);
    free(q);
    free(k);
    free(v);
    free(bias);
    free(qk);
    free(x);
    free(y);
    return st;
}
