/*
 * Attention's additive bias, one query row at a time, so no
 * (batch, heads, q_len, kv_len) tensor is ever built.
 *
 * The bias is the sum of: attn_mask (a bool mask counts 0 where true and
 * -inf where false; a float mask counts its value; keys beyond the mask's
 * length count -inf), the causal constraint (key j is visible from query i
 * iff j <= i + offset), the sliding window (opset 25) and the
 * nonpad_kv_seqlen padding (key j is visible iff j < nonpad[b]). The causal
 * offset is nonpad[b] - q_len for an external cache (nonpad without past),
 * else past_key's length, so a continued sequence stays aligned
 * bottom-right. Everything is added, not selected, as the operator's
 * definition does: a +inf float mask meeting a -inf constraint gives NaN.
 */
#include <math.h>

#include "ref_attn.h"

tsr_status *ref_attn_bias_mask(ref_ctx *c, ref_attn_bias *bias, int64_t batch, int64_t heads) {
    const tsr_tensor *m = bias->mask;
    bias->mask_len = 0;
    bias->mask_str[0] = bias->mask_str[1] = bias->mask_str[2] = 0;
    if (!m) return NULL;
    if (m->elem_type != TSR_BOOL && !ref_is_float(m->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "attn_mask has element type %d; it must be bool or a float type",
                       (int)m->elem_type);
    if (m->rank < 1 || m->rank > 4)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "attn_mask must have rank 1 to 4, not %d", (int)m->rank);
    bias->mask_len = m->dims[m->rank - 1];
    if (bias->mask_len > bias->kv_len)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "attn_mask covers %lld keys, more than the %lld there are",
                       (long long)bias->mask_len, (long long)bias->kv_len);
    const int64_t want[3] = {batch, heads, bias->q_len};
    int64_t stride = bias->mask_len;
    for (int32_t a = 2, d = m->rank - 2; a >= 0; a--, d--) {
        if (d < 0) continue; /* missing leading axes broadcast */
        if (m->dims[d] != want[a] && m->dims[d] != 1)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "attn_mask axis %d has extent %lld where %lld or 1 is wanted",
                           (int)d, (long long)m->dims[d], (long long)want[a]);
        bias->mask_str[a] = m->dims[d] == 1 ? 0 : stride;
        stride *= m->dims[d];
    }
    return NULL;
}

/* Whether key j is inside query i's window (offset-aligned like causal). */
static bool in_window(const ref_attn_bias *bias, int64_t diff) {
    return (bias->left < 0 || diff <= bias->left) && (bias->right < 0 || -diff <= bias->right);
}

void ref_attn_bias_row(const ref_attn_bias *bias, int64_t b, int64_t h, int64_t q, double *row, bool *all_masked) {
    const tsr_tensor *m = bias->mask;
    int64_t offset = bias->nonpad && !bias->past ? bias->nonpad[b] - bias->q_len : bias->past;
    int64_t mbase = b * bias->mask_str[0] + h * bias->mask_str[1] + q * bias->mask_str[2];
    bool windowed = bias->left >= 0 || bias->right >= 0;
    double max = -INFINITY;
    for (int64_t j = 0; j < bias->kv_len; j++) {
        double v = 0;
        if (m) {
            if (j >= bias->mask_len) v = -INFINITY;
            else if (m->elem_type == TSR_BOOL) v = ((const uint8_t *)m->data)[mbase + j] ? 0.0 : -INFINITY;
            else v = ref_load(m->elem_type, m->data, (size_t)(mbase + j));
        }
        if (bias->causal && j > q + offset) v += -INFINITY;
        if (windowed && !in_window(bias, q + offset - j)) v += -INFINITY;
        if (bias->nonpad && j >= bias->nonpad[b]) v += -INFINITY;
        row[j] = v;
        if (isnan(v) || isnan(max)) max = NAN;
        else if (v > max) max = v;
    }
    *all_masked = max == -INFINITY;
}
