/*
 * The reference provider's axis permutation (ref_tensor_permute), which
 * Transpose, DepthToSpace and SpaceToDepth are: a direct strided copy for
 * elements of 1, 2, 4 or 8 bytes, the view engine for the rest (strings,
 * packed sub-byte types, 16-byte complex). The view engine moves each
 * element through a function call and an offset table per axis, ~13 ns an
 * element; a pixel shuffle of 8M floats took 100 ms that way.
 */
#include <string.h>

#include "ref_tensor.h"

/* The output's axes with the source stride of each (in elements), axes of
 * size 1 dropped and each run of axes that stay adjacent in the source
 * merged into one; at least two axes (leading ones of size 1 added). */
typedef struct walk {
    int32_t rank;
    int64_t dims[REF_MAX_RANK + 2];
    int64_t str[REF_MAX_RANK + 2];
} walk;

static void simplify(int32_t rank, const int64_t *od, const int64_t *os, walk *w) {
    int32_t r = 0;
    for (int32_t a = 0; a < rank; a++) {
        if (od[a] == 1) continue;
        if (r > 0 && w->str[r - 1] == os[a] * od[a]) {
            w->dims[r - 1] *= od[a];
            w->str[r - 1] = os[a];
            continue;
        }
        w->dims[r] = od[a];
        w->str[r++] = os[a];
    }
    int32_t pad = r < 2 ? 2 - r : 0;
    memmove(w->dims + pad, w->dims, sizeof(int64_t) * (size_t)r);
    memmove(w->str + pad, w->str, sizeof(int64_t) * (size_t)r);
    for (int32_t a = 0; a < pad; a++) {
        w->dims[a] = 1;
        w->str[a] = 0;
    }
    w->rank = r + pad;
}

/* dst[i][k] = src[i * s0 + k * s1] for an n0 x n1 block of es-byte
 * elements, in tiles of TILE x TILE so that both the rows written and the
 * source lines read stay in cache (a transpose's source axis of large
 * stride otherwise touches a new line per element); memcpy of a constant
 * size is one load and store, and keeps the copy legal for any alignment
 * and type. */
#define TILE 16
#define DEFINE_BLOCK(ES)                                                                                     \
    static void block##ES(char *d, const char *s, int64_t n0, int64_t s0, int64_t n1, int64_t s1) {          \
        for (int64_t i0 = 0; i0 < n0; i0 += TILE) {                                                          \
            int64_t i1 = i0 + TILE < n0 ? i0 + TILE : n0;                                                    \
            for (int64_t k0 = 0; k0 < n1; k0 += TILE) {                                                      \
                int64_t k1 = k0 + TILE < n1 ? k0 + TILE : n1;                                                \
                for (int64_t i = i0; i < i1; i++)                                                            \
                    for (int64_t k = k0; k < k1; k++)                                                        \
                        memcpy(d + (i * n1 + k) * ES, s + (i * s0 + k * s1) * ES, ES);                       \
            }                                                                                                \
        }                                                                                                    \
    }
DEFINE_BLOCK(1)
DEFINE_BLOCK(2)
DEFINE_BLOCK(4)
DEFINE_BLOCK(8)

typedef void (*block_fn)(char *d, const char *s, int64_t n0, int64_t s0, int64_t n1, int64_t s1);

/* Rows of at least this many bytes read contiguously are copied by memcpy. */
#define ROW_BYTES 64

static void block_rows(char *d, const char *s, size_t es, int64_t n0, int64_t s0, int64_t n1) {
    size_t bytes = (size_t)n1 * es;
    for (int64_t i = 0; i < n0; i++, d += bytes) memcpy(d, s + (size_t)(i * s0) * es, bytes);
}

/* dst (contiguous) = src gathered along w: the two innermost axes as one
 * block per index of the outer ones, whose source offset is kept
 * incrementally. */
static void strided_copy(char *dst, const char *src, size_t es, const walk *w) {
    int32_t r = w->rank, outer_rank = r - 2;
    int64_t n0 = w->dims[r - 2], s0 = w->str[r - 2], n1 = w->dims[r - 1], s1 = w->str[r - 1];
    block_fn fn = es == 1 ? block1 : es == 2 ? block2 : es == 4 ? block4 : block8;
    bool rows = s1 == 1 && (size_t)n1 * es >= ROW_BYTES;
    uint64_t outer = ref_tensor_dims_count(outer_rank, w->dims);
    size_t block_bytes = (size_t)(n0 * n1) * es;
    int64_t idx[REF_MAX_RANK + 2] = {0}, off = 0;
    for (uint64_t o = 0; o < outer; o++, dst += block_bytes) {
        const char *s = src + (size_t)off * es;
        if (rows) block_rows(dst, s, es, n0, s0, n1);
        else fn(dst, s, n0, s0, n1, s1);
        for (int32_t a = outer_rank - 1; a >= 0; a--) {
            off += w->str[a];
            if (++idx[a] < w->dims[a]) break;
            off -= w->str[a] * w->dims[a];
            idx[a] = 0;
        }
    }
}

/* The view engine's table for the same permutation. */
static tsr_status *permute_by_view(ref_ctx *c, tsr_tensor *dst, const tsr_tensor *src, int32_t rank,
                                   const int64_t *od, const int64_t *os) {
    view v;
    TSR_TRY(ref_tensor_view_init(c, &v, rank, od));
    for (int32_t a = 0; a < rank; a++) ref_tensor_view_linear(&v, a, 0, os[a]);
    return ref_tensor_view_run_free(c, &v, dst, src, NULL);
}

/* dst = src read as the row-major shape vdims, with its axes reordered by
 * perm (output axis a is source axis perm[a]). */
tsr_status *ref_tensor_permute(ref_ctx *c, tsr_tensor *dst, const tsr_tensor *src, int32_t rank, const int64_t *vdims,
                               const int64_t *perm) {
    int64_t str[REF_MAX_RANK], od[REF_MAX_RANK] = {0}, os[REF_MAX_RANK] = {0};
    if (rank > REF_MAX_RANK) return ref_err(c, TSR_ERR_NOT_SUPPORTED, "rank %d is too large", (int)rank);
    ref_strides(rank, vdims, str);
    for (int32_t a = 0; a < rank; a++) {
        od[a] = vdims[perm[a]];
        os[a] = str[perm[a]];
    }
    if (ref_tensor_dims_count(rank, od) == 0) return NULL;
    int32_t t = dst->elem_type;
    unsigned bits = t == TSR_STRING ? 0 : ref_tensor_type_bits(t);
    if (bits != 8 && bits != 16 && bits != 32 && bits != 64) return permute_by_view(c, dst, src, rank, od, os);
    walk w;
    simplify(rank, od, os, &w);
    strided_copy(dst->data, src->data, bits / 8, &w);
    return NULL;
}
