/* Scaled-dot-product attention as one step (odn_attention.c): for each
 * matrix of a stack,
 *
 *     S = Q K            (tq x d by d x tk)
 *     S = mods(S)        (scale, additive bias/mask, select by a bool mask)
 *     P = softmax(S)     (over each row of tk)
 *     O = P V            (tq x tk by tk x dv)
 *
 * which is what MatMul -> [Div|Mul] -> [Add|Where]... -> Softmax -> MatMul
 * computes in an exported transformer. Built from oneDNN primitives it is
 * two batched matmuls (oneDNN 2.6's AVX2 `gemm:jit`, which repacks both
 * operands on every call) and a softmax that each write and read the whole
 * tq x tk score matrix; here the scores of a block of query rows stay in
 * the cache between the two products, and K and V are packed once per
 * matrix for odn_sgemm.c's kernel. AVX2+FMA only (odn_sgemm_supported). */
#ifndef TESSERA_ODN_ATTENTION_H
#define TESSERA_ODN_ATTENTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ODN_ATT_MAX_BATCH 4 /* batch dims of the stack (B, heads, ...) */
#define ODN_ATT_MAX_MODS 4  /* score modifiers between the products */

/* A tensor of the stack: element (b0..bn-1, r, c) of `batch` dims then a
 * matrix at data + sum(b_i * bstride[i]) + r * rs + c * cs (element
 * strides, each >= 0; 0 along a dim the operand broadcasts over). */
typedef struct odn_att_operand {
    const void *data;
    int64_t bstride[ODN_ATT_MAX_BATCH];
    int64_t rs, cs;
} odn_att_operand;

typedef enum odn_att_mod_kind {
    ODN_ATT_MUL,    /* s = s * value */
    ODN_ATT_DIV,    /* s = s / value (ONNX's Div: a division, not a multiply by the reciprocal) */
    ODN_ATT_ADD,    /* s = s + t[b.., i, j] (float) */
    ODN_ATT_SELECT, /* s = (t[b.., i, j] != 0) == fill_if_true ? value : s (t: uint8 bools) */
} odn_att_mod_kind;

typedef struct odn_att_mod {
    odn_att_mod_kind kind;
    float value;       /* MUL, DIV: the scalar; SELECT: the fill */
    bool fill_if_true; /* SELECT: Where(cond, fill, s) when true, Where(cond, s, fill) when false */
    odn_att_operand t; /* ADD, SELECT: indexed by (batch.., query row i, key column j) */
} odn_att_mod;

typedef struct odn_attention {
    int32_t nb;                      /* batch dims, 0..ODN_ATT_MAX_BATCH */
    int64_t batch[ODN_ATT_MAX_BATCH]; /* their sizes */
    int64_t tq, tk, d, dv;
    /* q: tq x d; k: d x tk as the first MatMul's second operand is (its
     * strides say whether that is a transposed K); v: tk x dv; o: tq x dv
     * (written) */
    odn_att_operand q, k, v, o;
    int nmods;
    odn_att_mod mods[ODN_ATT_MAX_MODS];
} odn_attention;

/* Whether the kernel takes `a` on this CPU: AVX2+FMA, every size >= 1,
 * strides >= 0, an output that does not broadcast, nb and nmods in range,
 * scratch under 1 GiB (for one thread). The data pointers are not read:
 * a plan describes its operands before their buffers are bound. */
bool odn_attention_supported(const odn_attention *a);

/* Bytes of scratch odn_attention_run needs for `threads` threads; 0 when
 * unsupported. */
size_t odn_attention_scratch_bytes(const odn_attention *a, int threads);

/* Computes o. Runs on up to `threads` of the caller's OpenMP threads;
 * `scratch` holds odn_attention_scratch_bytes(a, threads) bytes, 64-byte
 * aligned; does nothing when a data pointer is NULL or `a` is not
 * supported. Results equal the unfused operators' to float rounding: the
 * products in float32, e^x within 2 ulp (odn_vexp.h), a row whose scores
 * are all -inf gives NaN as softmax does. */
void odn_attention_run(const odn_attention *a, void *scratch, int threads);

#endif
