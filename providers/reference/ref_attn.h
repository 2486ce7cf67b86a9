/*
 * Private to the attention family of reference kernels (ref_ops_attention.c
 * and ref_attn_*.c): Attention, FlexAttention, LinearAttention,
 * CausalConvWithState, RMSNormalization and RotaryEmbedding.
 *
 * All of them compute in double, whatever the element type, and round on
 * store. Where an operator's definition rounds an intermediate to a
 * narrower type (FlexAttention's scores, CausalConvWithState's SiLU input)
 * they round it there too, so float16 results match the definition's.
 */
#ifndef TESSERA_REF_ATTN_H
#define TESSERA_REF_ATTN_H

#include "ref.h"

/* --- kernels ------------------------------------------------------------ */
tsr_status *ref_attn_sdpa(ref_ctx *c);        /* Attention (opset 23+) */
tsr_status *ref_attn_flex(ref_ctx *c);        /* ai.onnx.preview FlexAttention */
tsr_status *ref_attn_linear(ref_ctx *c);      /* LinearAttention */
tsr_status *ref_attn_causal_conv(ref_ctx *c); /* CausalConvWithState */
tsr_status *ref_attn_rms_norm(ref_ctx *c);    /* RMSNormalization */
tsr_status *ref_attn_rotary(ref_ctx *c);      /* RotaryEmbedding */

/* --- helpers (ref_attn_util.c) ------------------------------------------ */
/* a * b into *out; false on size_t overflow. */
bool ref_attn_mul(size_t a, size_t b, size_t *out);
/* A zeroed buffer of n doubles (at least one), or an error naming the node
 * and `what` when n overflows or memory runs out. */
tsr_status *ref_attn_zeros(ref_ctx *c, size_t n, const char *what, double **out);
/* A double copy of numeric tensor t (`what` names it in errors); the caller
 * frees *out. */
tsr_status *ref_attn_f64(ref_ctx *c, const tsr_tensor *t, const char *what, double **out);
/* v rounded to element type t (a float type), as storing and reloading
 * it would. */
double ref_attn_round(int32_t t, double v);
/* An error unless t is a float tensor of rank `rank` (any rank when < 0). */
tsr_status *ref_attn_want(ref_ctx *c, const tsr_tensor *t, const char *what, int32_t rank);

/* Softmax of x[0..n) in place, as numpy computes it: the maximum (NaN if
 * any is NaN) is subtracted first. With `masked_rows_zero`, a row whose
 * maximum is -inf becomes all zeros instead of NaN. */
void ref_attn_softmax(double *x, size_t n, bool masked_rows_zero);

/* --- Attention's additive bias (ref_attn_bias.c) ------------------------ */
/* What is added to a row of scores before the softmax: attn_mask (bool or
 * float, broadcast right-aligned to (batch, q_heads, q_len, mask_len) and
 * padded with "masked" up to kv_len), the causal and sliding-window
 * constraints, and the nonpad_kv_seqlen padding. */
typedef struct ref_attn_bias {
    const tsr_tensor *mask; /* NULL when absent */
    int64_t mask_len;       /* the mask's last extent (<= kv_len) */
    int64_t mask_str[3];    /* element strides of (batch, head, query) in the mask; 0 broadcasts */
    bool causal;
    int64_t left, right;   /* window sizes; -1 is unbounded */
    const int64_t *nonpad; /* per-batch valid key count, or NULL */
    int64_t past;          /* past_key's length: the causal offset without nonpad */
    int64_t q_len, kv_len;
} ref_attn_bias;

/* Fills in the mask's layout and checks that it broadcasts. */
tsr_status *ref_attn_bias_mask(ref_ctx *c, ref_attn_bias *bias, int64_t batch, int64_t heads);
/* The bias row of query `q` of head `h` in batch `b`: kv_len values, 0 or
 * -inf or the float mask's value; *all_masked says whether every key is
 * disallowed (the row's maximum is -inf). */
void ref_attn_bias_row(const ref_attn_bias *bias, int64_t b, int64_t h, int64_t q, double *row, bool *all_masked);

/* Runs the single-input, single-output graph attribute `attr` of the node
 * on `in` with the reference provider's own kernels (ref_attn_subgraph.c).
 * The output must be a float tensor of `in`'s shape (`want` elements);
 * *out receives it as doubles, and the caller frees it. */
tsr_status *ref_attn_subgraph(ref_ctx *c, const char *attr, const tsr_tensor *in, size_t want, double **out);

#endif
