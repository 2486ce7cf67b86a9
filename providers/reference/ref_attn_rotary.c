/*
 * RotaryEmbedding (opset 23): rotates the first rotary_embedding_dim values
 * of every head vector by the angle of its token's position, as pairs
 * (x1, x2) -> (x1 cos - x2 sin, x1 sin + x2 cos). The pairs are the two
 * halves of the rotated part, or neighbours when `interleaved`.
 *
 * Input is (batch, heads, seq, head_size), or (batch, seq, heads * head_size)
 * with the num_heads attribute. cos/sin caches are (max_position, dim / 2)
 * indexed by position_ids (batch, seq), or (batch, seq, dim / 2) without
 * position_ids; a batch or sequence extent of 1 broadcasts.
 */
#include <stdlib.h>

#include "ref_attn.h"

/* Where the caches hold the angle of token (b, s): a row of `half` values. */
typedef struct rope_rows {
    const tsr_tensor *pos; /* position_ids or NULL */
    int64_t n_pos_rows;    /* cache rows, with position_ids */
    int64_t pb, ps;        /* strides of (b, s) in pos, or in the cache rows without it */
} rope_rows;

static tsr_status *cache_row(ref_ctx *c, const rope_rows *r, int64_t b, int64_t s, size_t *row) {
    if (!r->pos) {
        *row = (size_t)(b * r->pb + s * r->ps);
        return NULL;
    }
    int64_t p = ref_load_i64(r->pos->elem_type, r->pos->data, (size_t)(b * r->pb + s * r->ps));
    if (p < 0 || p >= r->n_pos_rows)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "position id %lld is outside the cache's %lld positions",
                       (long long)p, (long long)r->n_pos_rows);
    *row = (size_t)p;
    return NULL;
}

/* Stride of an axis of extent `have` read as extent `want`: broadcasts 1. */
static bool axis_stride(int64_t have, int64_t want, int64_t stride, int64_t *out) {
    if (have != want && have != 1) return false;
    *out = have == 1 ? 0 : stride;
    return true;
}

tsr_status *ref_attn_rotary(ref_ctx *c) {
    const tsr_tensor *X = ref_in(c, 0), *C = ref_in(c, 1), *S = ref_in(c, 2), *P = ref_in(c, 3);
    tsr_status *st;
    if ((st = ref_attn_want(c, X, "input", -1)) || (st = ref_attn_want(c, C, "cos_cache", -1)) ||
        (st = ref_attn_want(c, S, "sin_cache", -1)))
        return st;
    if (X->rank != 3 && X->rank != 4)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input must have rank 3 or 4, not %d", (int)X->rank);
    /* Element (b, s, h, d) of the input sits at b*xb + s*xs + h*xh + d. */
    int64_t B = X->dims[0], Sq, H, D, xb, xs, xh;
    if (X->rank == 4) {
        H = X->dims[1], Sq = X->dims[2], D = X->dims[3];
        xh = Sq * D, xs = D, xb = H * Sq * D;
    } else {
        H = ref_attr_int(c, "num_heads", 0);
        Sq = X->dims[1];
        if (H <= 0 || X->dims[2] % H)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                           "num_heads %lld must be positive and divide the hidden size %lld", (long long)H,
                           (long long)X->dims[2]);
        D = X->dims[2] / H;
        xh = D, xs = X->dims[2], xb = Sq * X->dims[2];
    }
    int64_t dim = ref_attr_int(c, "rotary_embedding_dim", 0);
    if (dim == 0) dim = D;
    if (dim < 0 || dim > D || dim % 2)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                       "rotary_embedding_dim %lld must be even and at most the head size %lld", (long long)dim,
                       (long long)D);
    int64_t half = dim / 2;
    bool interleaved = ref_attr_int(c, "interleaved", 0) != 0;

    rope_rows rows = {P, 0, 0, 0};
    int32_t cache_rank = P ? 2 : 3;
    if (C->rank != cache_rank || S->rank != cache_rank)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "cos_cache and sin_cache must have rank %d %s", (int)cache_rank,
                       P ? "with position_ids" : "without position_ids");
    for (int32_t d = 0; d < cache_rank; d++)
        if (C->dims[d] != S->dims[d])
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "cos_cache and sin_cache differ in shape");
    if (C->dims[cache_rank - 1] != half)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                       "the caches' last dimension %lld is not rotary_embedding_dim / 2 = %lld",
                       (long long)C->dims[cache_rank - 1], (long long)half);
    const int64_t *lead = C->dims; /* (batch, seq) of the caches or of position_ids */
    int64_t lead_stride = half;
    if (P) {
        if (!ref_is_int(P->elem_type) || P->rank != 2)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "position_ids must be an integer tensor of rank 2");
        rows.n_pos_rows = C->dims[0];
        lead = P->dims;
        lead_stride = 1;
    }
    if (!axis_stride(lead[0], B, lead[1] * lead_stride, &rows.pb) || !axis_stride(lead[1], Sq, lead_stride, &rows.ps))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s shape [%lld, %lld] does not match batch %lld and sequence %lld",
                       P ? "position_ids" : "the caches'", (long long)lead[0], (long long)lead[1], (long long)B,
                       (long long)Sq);
    if (!P) { /* rows are counted in cache rows of `half` values */
        rows.pb /= half ? half : 1;
        rows.ps /= half ? half : 1;
    }

    tsr_tensor *Y;
    if ((st = ref_out(c, 0, X->elem_type, X->rank, X->dims, &Y))) return st;
    double *x = NULL, *cs = NULL, *sn = NULL, *v = NULL;
    if ((st = ref_attn_f64(c, X, "input", &x)) || (st = ref_attn_f64(c, C, "cos_cache", &cs)) ||
        (st = ref_attn_f64(c, S, "sin_cache", &sn)) || (st = ref_attn_zeros(c, (size_t)D, "a head vector", &v)))
        goto done;
    for (int64_t b = 0; b < B; b++)
        for (int64_t s = 0; s < Sq; s++) {
            size_t row = 0;
            if ((st = cache_row(c, &rows, b, s, &row))) goto done;
            const double *cr = cs + row * (size_t)half, *sr = sn + row * (size_t)half;
            for (int64_t h = 0; h < H; h++) {
                size_t off = (size_t)(b * xb + s * xs + h * xh);
                const double *xi = x + off;
                for (int64_t d = dim; d < D; d++) v[d] = xi[d];
                for (int64_t i = 0; i < half; i++) {
                    int64_t i1 = interleaved ? 2 * i : i, i2 = interleaved ? 2 * i + 1 : i + half;
                    v[i1] = cr[i] * xi[i1] - sr[i] * xi[i2];
                    v[i2] = sr[i] * xi[i1] + cr[i] * xi[i2];
                }
                ref_put_f64(Y, off, (size_t)D, v);
            }
        }
done:
    free(x);
    free(cs);
    free(sn);
    free(v);
    return st;
}
