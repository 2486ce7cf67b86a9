/*
 * CausalConvWithState (opset 27): a depthwise 1-D convolution that only
 * looks back. Each channel's sequence is prefixed with the k - 1 values of
 * past_state (zeros when absent) and convolved without padding, so output
 * position t sees inputs t - k + 1 .. t. present_state is the last k - 1
 * values of that prefixed sequence, ready for the next call. An optional
 * fused SiLU ("silu" or its alias "swish") follows the bias.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref_attn.h"

tsr_status *ref_attn_causal_conv(ref_ctx *c) {
    const tsr_tensor *X = ref_in(c, 0), *W = ref_in(c, 1), *Bi = ref_in(c, 2), *P = ref_in(c, 3);
    tsr_status *st;
    if ((st = ref_attn_want(c, X, "input", 3)) || (st = ref_attn_want(c, W, "weight", 3)) ||
        (Bi && (st = ref_attn_want(c, Bi, "bias", 1))) || (P && (st = ref_attn_want(c, P, "past_state", 3))))
        return st;
    const char *act = ref_attr_str(c, "activation", "none");
    bool silu = strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0;
    if (!silu && strcmp(act, "none") != 0)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "activation '%s' is not one of 'none', 'silu', 'swish'", act);
    int64_t B = X->dims[0], C = X->dims[1], L = X->dims[2], K = W->dims[2];
    if (W->dims[0] != C || W->dims[1] != 1 || K < 1)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "weight shape [%lld, %lld, %lld] is not (channels=%lld, 1, k >= 1)",
                       (long long)W->dims[0], (long long)W->dims[1], (long long)K, (long long)C);
    if (Bi && Bi->dims[0] != C)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "bias has %lld values for %lld channels", (long long)Bi->dims[0],
                       (long long)C);
    if (P && (P->dims[0] != B || P->dims[1] != C || P->dims[2] != K - 1))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                       "past_state shape [%lld, %lld, %lld] is not (%lld, %lld, k - 1 = %lld)", (long long)P->dims[0],
                       (long long)P->dims[1], (long long)P->dims[2], (long long)B, (long long)C, (long long)(K - 1));

    int64_t sdims[3] = {B, C, K - 1};
    tsr_tensor *Y, *Ps;
    if ((st = ref_out(c, 0, X->elem_type, 3, X->dims, &Y)) || (st = ref_out(c, 1, X->elem_type, 3, sdims, &Ps)))
        return st;
    double *x = NULL, *w = NULL, *bias = NULL, *past = NULL, *seq = NULL;
    size_t padded = (size_t)(L + K - 1);
    if ((st = ref_attn_f64(c, X, "input", &x)) || (st = ref_attn_f64(c, W, "weight", &w)) ||
        (Bi && (st = ref_attn_f64(c, Bi, "bias", &bias))) || (P && (st = ref_attn_f64(c, P, "past_state", &past))) ||
        (st = ref_attn_zeros(c, padded, "a padded channel", &seq)))
        goto done;
    for (int64_t b = 0; b < B; b++)
        for (int64_t ch = 0; ch < C; ch++) {
            size_t bc = (size_t)(b * C + ch);
            /* seq = past (or zeros) followed by this channel's input */
            for (int64_t i = 0; i < K - 1; i++) seq[i] = past ? past[bc * (size_t)(K - 1) + (size_t)i] : 0.0;
            memcpy(seq + K - 1, x + bc * (size_t)L, (size_t)L * sizeof *seq);
            const double *wk = w + (size_t)ch * (size_t)K;
            for (int64_t t = 0; t < L; t++) {
                double acc = bias ? bias[ch] : 0.0;
                for (int64_t k = 0; k < K; k++) acc += wk[k] * seq[t + k];
                if (silu) {
                    acc = ref_attn_round(X->elem_type, acc); /* the activation reads T */
                    acc = acc / (1.0 + exp(-acc));
                }
                seq[t] = acc; /* seq[t] is no longer read: later outputs start past it */
            }
            ref_put_f64(Y, bc * (size_t)L, (size_t)L, seq);
            ref_put_f64(Ps, bc * (size_t)(K - 1), (size_t)(K - 1), seq + L);
        }
done:
    free(x);
    free(w);
    free(bias);
    free(past);
    free(seq);
    return st;
}
