/*
 * Reference kernels for shape and data-movement operators: Reshape,
 * Transpose, Concat, Split, Slice, Gather*, Scatter*, Pad, Tile, Expand, ...
 *
 * Almost every operator here only moves elements, so they share one engine
 * (view_run): the output is walked in row-major order and, per output axis,
 * a table gives the source element offset contributed by each index along
 * that axis (or MISSING for "write the fill value", as Pad needs). Transpose,
 * Slice, Expand, Tile, Pad, CenterCropPad, Gather, Compress, DepthToSpace and
 * SpaceToDepth are all just different tables. Elements are moved by mv_copy, which is the only
 * place that knows about strings (copied through the host, which owns their
 * bytes) and about the packed sub-byte types.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"

/* An offset-table entry meaning "no source element: write the fill value". */
#define MISSING INT64_MIN

#define TRY(expr)                          \
    do {                                   \
        tsr_status *try_st_ = (expr);      \
        if (try_st_) return try_st_;       \
    } while (0)

/* ------------------------------------------------------------------------ */
/* Elements                                                                  */

/* Bits per element; 0 for types this file cannot move. Strings count as
 * their descriptor, but are never copied bytewise (see mv_copy). */
static unsigned type_bits(int32_t t) {
    switch (t) {
    case TSR_UINT4: case TSR_INT4: case TSR_FLOAT4E2M1: return 4;
    case TSR_UINT2: case TSR_INT2: return 2;
    default: return (unsigned)ref_elem_size(t) * 8;
    }
}

static uint8_t get_bits(const void *data, uint64_t i, unsigned bits) {
    unsigned per = 8 / bits;
    const uint8_t *b = data;
    return (uint8_t)((b[i / per] >> ((i % per) * bits)) & ((1u << bits) - 1));
}

static void put_bits(void *data, uint64_t i, unsigned bits, uint8_t v) {
    unsigned per = 8 / bits, shift = (unsigned)(i % per) * bits;
    uint8_t *b = (uint8_t *)data + i / per;
    uint8_t mask = (uint8_t)(((1u << bits) - 1) << shift);
    *b = (uint8_t)((*b & ~mask) | ((unsigned)(v << shift) & mask));
}

/* Copies n consecutive elements src[si..] to dst[di..]; both of dst's type. */
static tsr_status *mv_copy(ref_ctx *c, tsr_tensor *dst, uint64_t di, const tsr_tensor *src,
                           uint64_t si, uint64_t n) {
    int32_t t = dst->elem_type;
    if (n == 0) return NULL;
    if (t == TSR_STRING) {
        /* The host owns string bytes; it copies them into the output. */
        const tsr_string *s = (const tsr_string *)src->data + si;
        for (uint64_t k = 0; k < n; k++) {
            tsr_status *st =
                c->host->tensor_set_string(dst, (size_t)(di + k), s[k].data, s[k].size);
            if (st) return st;
        }
        return NULL;
    }
    unsigned bits = type_bits(t);
    if (bits < 8) {
        for (uint64_t k = 0; k < n; k++)
            put_bits(dst->data, di + k, bits, get_bits(src->data, si + k, bits));
        return NULL;
    }
    size_t es = bits / 8;
    memcpy((char *)dst->data + di * es, (const char *)src->data + si * es, (size_t)n * es);
    return NULL;
}

/* Writes element 0 of `val` into dst[di..di+n). */
static tsr_status *mv_fill(ref_ctx *c, tsr_tensor *dst, uint64_t di, const tsr_tensor *val,
                           uint64_t n) {
    for (uint64_t k = 0; k < n; k++) TRY(mv_copy(c, dst, di + k, val, 0, 1));
    return NULL;
}

/* A one-element tensor on the stack, for fill values that come from an
 * attribute or default to zero rather than from an input. */
typedef struct scalar {
    tsr_tensor t;
    union {
        unsigned char bytes[16];
        tsr_string s;
        double d;
        int64_t i;
    } u;
} scalar;

/* Zero of type t: all-zero bits are 0 for every numeric type and an empty
 * string for strings. */
static const tsr_tensor *scalar_zero(scalar *s, int32_t t) {
    memset(s, 0, sizeof *s);
    s->t.struct_size = sizeof s->t;
    s->t.elem_type = t;
    s->t.data = &s->u;
    s->t.nbytes = sizeof s->u;
    s->t.memory_kind = TSR_MEMORY_HOST;
    return &s->t;
}

/* Allocates output i; packed outputs are zeroed so the padding bits of a
 * last partial byte are deterministic (put_bits only touches its own). */
static tsr_status *out_new(ref_ctx *c, size_t i, int32_t t, int32_t rank, const int64_t *dims,
                           tsr_tensor **out) {
    TRY(ref_out(c, i, t, rank, dims, out));
    if (t != TSR_STRING && type_bits(t) < 8 && (*out)->nbytes) memset((*out)->data, 0, (*out)->nbytes);
    return NULL;
}

/* Input i, which must be present and of a type mv_copy can move. */
static tsr_status *need_in(ref_ctx *c, size_t i, const tsr_tensor **out) {
    const tsr_tensor *t = ref_in(c, i);
    *out = t; /* set on every path, so callers' compilers see it initialised */
    if (!t) return ref_err(c, TSR_ERR_INVALID_MODEL, "input %zu is missing", i);
    if (type_bits(t->elem_type) == 0)
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d is not supported",
                       (int)t->elem_type);
    if (t->rank > REF_MAX_RANK)
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "rank %d is above %d", (int)t->rank,
                       REF_MAX_RANK);
    return NULL;
}

static uint64_t dims_count(int32_t rank, const int64_t *dims) {
    uint64_t n = 1;
    for (int32_t i = 0; i < rank; i++) n *= (uint64_t)dims[i];
    return n;
}

/* Product of dims[from..to). */
static int64_t dims_prod(const int64_t *dims, int32_t from, int32_t to) {
    int64_t n = 1;
    for (int32_t i = from; i < to; i++) n *= dims[i];
    return n;
}

static tsr_status *copy_all(ref_ctx *c, tsr_tensor *dst, const tsr_tensor *src) {
    return mv_copy(c, dst, 0, src, 0, ref_numel(src));
}

/* An integer list that was an attribute before opset `input_opset` and an
 * input from then on. *have says whether it was given; the caller frees *out. */
static tsr_status *ints_arg(ref_ctx *c, const char *attr, size_t input, int64_t input_opset,
                            int64_t **out, size_t *n, bool *have) {
    *out = NULL;
    *n = 0;
    *have = false;
    if (ref_opset(c) < input_opset) {
        if (!ref_attr_has(c, attr)) return NULL;
        const int64_t *a;
        size_t k = ref_attr_ints(c, attr, &a);
        *out = malloc(sizeof(int64_t) * (k ? k : 1));
        if (!*out) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
        if (k) memcpy(*out, a, sizeof(int64_t) * k);
        *n = k;
        *have = true;
        return NULL;
    }
    const tsr_tensor *t = ref_in(c, input);
    if (!t) return NULL;
    *have = true;
    return ref_tensor_i64(c, t, out, n);
}

/* Normalises a list of axes against `rank` in place; refuses repeats. */
static tsr_status *norm_axes(ref_ctx *c, int64_t *axes, size_t n, int32_t rank) {
    for (size_t i = 0; i < n; i++) {
        if (!ref_axis(axes[i], rank, &axes[i]) || rank == 0)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
                           (long long)axes[i], (int)rank);
        for (size_t j = 0; j < i; j++)
            if (axes[j] == axes[i])
                return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is repeated",
                               (long long)axes[i]);
    }
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* The view engine                                                           */

typedef struct view {
    int32_t rank;
    int64_t dims[REF_MAX_RANK];
    int64_t *off[REF_MAX_RANK]; /* off[a][i]: source offset for index i on axis a */
    int64_t *mem;
} view;

/* Allocates the offset tables. Call only for a non-empty output: every dim
 * is then at least 1 and their sum is at most the element count. */
static tsr_status *view_init(ref_ctx *c, view *v, int32_t rank, const int64_t *dims) {
    size_t total = 0;
    if (rank > REF_MAX_RANK)
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "rank %d is too large", (int)rank);
    v->rank = rank;
    for (int32_t a = 0; a < rank; a++) {
        v->dims[a] = dims[a];
        total += (size_t)dims[a];
    }
    v->mem = malloc(sizeof(int64_t) * (total ? total : 1));
    if (!v->mem) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    size_t pos = 0;
    for (int32_t a = 0; a < rank; a++) {
        v->off[a] = v->mem + pos;
        pos += (size_t)dims[a];
    }
    return NULL;
}

/* Fills axis a's table with base + i * stride. */
static void view_linear(view *v, int32_t a, int64_t base, int64_t stride) {
    for (int64_t i = 0; i < v->dims[a]; i++) v->off[a][i] = base + i * stride;
}

/* dst (contiguous, v's element count) = src gathered through v. `fill` may be
 * NULL when no table holds MISSING. */
static tsr_status *view_run(ref_ctx *c, const view *v, tsr_tensor *dst, const tsr_tensor *src,
                            const tsr_tensor *fill) {
    int32_t r = v->rank;
    if (r == 0) return mv_copy(c, dst, 0, src, 0, 1);
    int64_t inner = v->dims[r - 1];
    const int64_t *last = v->off[r - 1];
    /* When the innermost axis reads consecutive elements, copy whole rows. */
    bool rows = true;
    for (int64_t k = 0; k < inner && rows; k++)
        if (last[k] == MISSING || last[k] != last[0] + k) rows = false;
    int64_t idx[REF_MAX_RANK];
    memset(idx, 0, sizeof idx);
    uint64_t total = dims_count(r, v->dims);
    for (uint64_t d = 0; d < total; d += (uint64_t)inner) {
        int64_t base = 0;
        bool miss = false;
        for (int32_t a = 0; a < r - 1; a++) {
            int64_t o = v->off[a][idx[a]];
            if (o == MISSING) {
                miss = true;
                break;
            }
            base += o;
        }
        if (miss) {
            TRY(mv_fill(c, dst, d, fill, (uint64_t)inner));
        } else if (rows) {
            TRY(mv_copy(c, dst, d, src, (uint64_t)(base + last[0]), (uint64_t)inner));
        } else {
            /* runs of consecutive source elements as one copy each (a Tile
             * along the last axis repeats the whole row: two runs, not one
             * call per element) */
            for (int64_t k = 0; k < inner;) {
                if (last[k] == MISSING) {
                    TRY(mv_copy(c, dst, d + (uint64_t)k, fill, 0, 1));
                    k++;
                    continue;
                }
                int64_t run = 1;
                while (k + run < inner && last[k + run] != MISSING && last[k + run] == last[k] + run) run++;
                TRY(mv_copy(c, dst, d + (uint64_t)k, src, (uint64_t)(base + last[k]), (uint64_t)run));
                k += run;
            }
        }
        for (int32_t a = r - 2; a >= 0; a--) {
            if (++idx[a] < v->dims[a]) break;
            idx[a] = 0;
        }
    }
    return NULL;
}

static tsr_status *view_run_free(ref_ctx *c, view *v, tsr_tensor *dst, const tsr_tensor *src,
                                 const tsr_tensor *fill) {
    tsr_status *st = view_run(c, v, dst, src, fill);
    free(v->mem);
    return st;
}

/* dst = src read as the row-major shape vdims, with its axes reordered by
 * perm (output axis a is source axis perm[a]). */
static tsr_status *permute(ref_ctx *c, tsr_tensor *dst, const tsr_tensor *src, int32_t rank,
                           const int64_t *vdims, const int64_t *perm) {
    int64_t str[REF_MAX_RANK], od[REF_MAX_RANK] = {0};
    ref_strides(rank, vdims, str);
    for (int32_t a = 0; a < rank; a++) od[a] = vdims[perm[a]];
    if (dims_count(rank, od) == 0) return NULL;
    view v;
    TRY(view_init(c, &v, rank, od));
    for (int32_t a = 0; a < rank; a++) view_linear(&v, a, 0, str[perm[a]]);
    return view_run_free(c, &v, dst, src, NULL);
}

/* ------------------------------------------------------------------------ */
/* Reshaping without moving: Identity, Reshape, Flatten, Squeeze, Unsqueeze  */

static tsr_status *ref_tensor_identity(ref_ctx *c) {
    const tsr_tensor *x;
    tsr_tensor *y;
    /* Since opsets 14/16 Identity also passes sequences and optionals on. */
    if (!ref_in(c, 0) && c->n_in && c->in_map[0] >= 0 &&
        TSR_HAS_MEMBER(c->host, tsr_host_api, val_free)) {
        const tsr_value *v = c->host->run_input_value(c->run, (size_t)c->in_map[0]);
        tsr_value *copy;
        if (!v) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input is required");
        TRY(c->host->val_clone(v, &copy));
        if (!ref_out_wanted(c, 0)) {
            c->host->val_free(copy);
            return NULL;
        }
        return c->host->run_set_output_value(c->run, (size_t)c->out_map[0], copy);
    }
    TRY(need_in(c, 0, &x));
    TRY(out_new(c, 0, x->elem_type, x->rank, x->dims, &y));
    return copy_all(c, y, x);
}

/* Output 0 = x's elements under a new shape. */
static tsr_status *reshaped(ref_ctx *c, const tsr_tensor *x, int32_t rank, const int64_t *dims) {
    tsr_tensor *y;
    if (dims_count(rank, dims) != ref_numel(x))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "cannot reshape %llu elements to %llu",
                       (unsigned long long)ref_numel(x),
                       (unsigned long long)dims_count(rank, dims));
    TRY(out_new(c, 0, x->elem_type, rank, dims, &y));
    return copy_all(c, y, x);
}

static tsr_status *ref_tensor_reshape(ref_ctx *c) {
    const tsr_tensor *x;
    int64_t *shape = NULL, dims[REF_MAX_RANK];
    size_t n = 0;
    bool have;
    TRY(need_in(c, 0, &x));
    /* Before opset 5 the shape was an attribute. */
    TRY(ints_arg(c, "shape", 1, 5, &shape, &n, &have));
    tsr_status *st = NULL;
    if (!have) {
        st = ref_err(c, TSR_ERR_INVALID_MODEL, "no shape given");
        goto done;
    }
    if (n > REF_MAX_RANK) {
        st = ref_err(c, TSR_ERR_NOT_SUPPORTED, "rank %zu is above %d", n, REF_MAX_RANK);
        goto done;
    }
    bool allowzero = ref_attr_int(c, "allowzero", 0) != 0;
    int64_t known = 1;
    long infer = -1;
    for (size_t i = 0; i < n; i++) {
        int64_t d = shape[i];
        if (d == 0 && !allowzero) {
            /* 0 copies the input's dimension at the same position. */
            if ((int32_t)i >= x->rank) {
                st = ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                             "shape[%zu] is 0 but the input has rank %d", i, (int)x->rank);
                goto done;
            }
            d = x->dims[i];
        } else if (d == -1) {
            if (infer >= 0) {
                st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "more than one -1 in the shape");
                goto done;
            }
            infer = (long)i;
            continue;
        } else if (d < 0) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "shape[%zu] is %lld", i, (long long)d);
            goto done;
        }
        dims[i] = d;
        if (__builtin_mul_overflow(known, d, &known)) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "shape overflows");
            goto done;
        }
    }
    if (infer >= 0) {
        uint64_t total = ref_numel(x);
        if (known == 0 || total % (uint64_t)known != 0) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                         "cannot infer the -1 dimension of %llu elements",
                         (unsigned long long)total);
            goto done;
        }
        dims[infer] = (int64_t)(total / (uint64_t)known);
    }
    st = reshaped(c, x, (int32_t)n, dims);
done:
    free(shape);
    return st;
}

static tsr_status *ref_tensor_flatten(ref_ctx *c) {
    const tsr_tensor *x;
    TRY(need_in(c, 0, &x));
    int64_t axis = ref_attr_int(c, "axis", 1);
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis > x->rank)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
                       (long long)ref_attr_int(c, "axis", 1), (int)x->rank);
    int64_t dims[2] = {dims_prod(x->dims, 0, (int32_t)axis),
                       dims_prod(x->dims, (int32_t)axis, x->rank)};
    return reshaped(c, x, 2, dims);
}

static tsr_status *ref_tensor_squeeze(ref_ctx *c) {
    const tsr_tensor *x;
    int64_t *axes, dims[REF_MAX_RANK];
    size_t n;
    bool have;
    TRY(need_in(c, 0, &x));
    TRY(ints_arg(c, "axes", 1, 13, &axes, &n, &have));
    bool drop[REF_MAX_RANK] = {false};
    tsr_status *st = norm_axes(c, axes, n, x->rank);
    if (st) goto done;
    /* An empty axes list means "every axis of size 1", like no list. */
    if (have && n > 0) {
        for (size_t i = 0; i < n; i++) {
            if (x->dims[axes[i]] != 1) {
                st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "cannot squeeze axis %lld of size %lld",
                             (long long)axes[i], (long long)x->dims[axes[i]]);
                goto done;
            }
            drop[axes[i]] = true;
        }
    } else {
        /* No axes: drop every axis of size 1. */
        for (int32_t a = 0; a < x->rank; a++) drop[a] = x->dims[a] == 1;
    }
    int32_t r = 0;
    for (int32_t a = 0; a < x->rank; a++)
        if (!drop[a]) dims[r++] = x->dims[a];
    st = reshaped(c, x, r, dims);
done:
    free(axes);
    return st;
}

static tsr_status *ref_tensor_unsqueeze(ref_ctx *c) {
    const tsr_tensor *x;
    int64_t *axes, dims[REF_MAX_RANK];
    size_t n;
    bool have;
    TRY(need_in(c, 0, &x));
    TRY(ints_arg(c, "axes", 1, 13, &axes, &n, &have));
    tsr_status *st = NULL;
    bool add[REF_MAX_RANK] = {false};
    if (!have) {
        st = ref_err(c, TSR_ERR_INVALID_MODEL, "no axes given");
        goto done;
    }
    if ((size_t)x->rank + n > REF_MAX_RANK) {
        st = ref_err(c, TSR_ERR_NOT_SUPPORTED, "rank %zu is above %d", (size_t)x->rank + n,
                     REF_MAX_RANK);
        goto done;
    }
    int32_t r = x->rank + (int32_t)n;
    /* Axes index the output, so they normalise against its rank. */
    st = norm_axes(c, axes, n, r);
    if (st) goto done;
    for (size_t i = 0; i < n; i++) add[axes[i]] = true;
    for (int32_t a = 0, j = 0; a < r; a++) dims[a] = add[a] ? 1 : x->dims[j++];
    st = reshaped(c, x, r, dims);
done:
    free(axes);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Shape, Size                                                               */

static tsr_status *ref_tensor_shape(ref_ctx *c) {
    const tsr_tensor *x = ref_in(c, 0);
    tsr_tensor *y;
    if (!x) return ref_err(c, TSR_ERR_INVALID_MODEL, "input 0 is missing");
    /* start/end (opset 15) pick a range of axes, clamped like Python slices. */
    int64_t r = x->rank;
    int64_t start = ref_attr_int(c, "start", 0), end = ref_attr_int(c, "end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = start < 0 ? 0 : start > r ? r : start;
    end = end < 0 ? 0 : end > r ? r : end;
    int64_t len = end > start ? end - start : 0;
    TRY(out_new(c, 0, TSR_INT64, 1, &len, &y));
    for (int64_t i = 0; i < len; i++) ((int64_t *)y->data)[i] = x->dims[start + i];
    return NULL;
}

static tsr_status *ref_tensor_size(ref_ctx *c) {
    const tsr_tensor *x = ref_in(c, 0);
    tsr_tensor *y;
    if (!x) return ref_err(c, TSR_ERR_INVALID_MODEL, "input 0 is missing");
    TRY(out_new(c, 0, TSR_INT64, 0, NULL, &y));
    *(int64_t *)y->data = (int64_t)ref_numel(x);
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Transpose, DepthToSpace, SpaceToDepth                                     */

static tsr_status *ref_tensor_transpose(ref_ctx *c) {
    const tsr_tensor *x;
    tsr_tensor *y;
    int64_t perm[REF_MAX_RANK], dims[REF_MAX_RANK];
    TRY(need_in(c, 0, &x));
    const int64_t *p;
    size_t n = ref_attr_ints(c, "perm", &p);
    if (!p) {
        /* Default: reverse the axes. */
        n = (size_t)x->rank;
        for (size_t a = 0; a < n; a++) perm[a] = x->rank - 1 - (int64_t)a;
    } else {
        if (n != (size_t)x->rank)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "perm has %zu entries for rank %d", n,
                           (int)x->rank);
        bool seen[REF_MAX_RANK] = {false};
        for (size_t a = 0; a < n; a++) {
            int64_t v = p[a];
            if (v < 0) v += x->rank; /* tolerated, as numpy does */
            if (v < 0 || v >= x->rank || seen[v])
                return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "perm is not a permutation");
            seen[v] = true;
            perm[a] = v;
        }
    }
    for (size_t a = 0; a < n; a++) dims[a] = x->dims[perm[a]];
    TRY(out_new(c, 0, x->elem_type, x->rank, dims, &y));
    return permute(c, y, x, x->rank, x->dims, perm);
}

static tsr_status *ref_tensor_depth_to_space(ref_ctx *c) {
    const tsr_tensor *x;
    tsr_tensor *y;
    TRY(need_in(c, 0, &x));
    int64_t b = ref_attr_int(c, "blocksize", 0);
    const char *mode = ref_attr_str(c, "mode", "DCR");
    if (x->rank != 4) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input must have rank 4");
    if (b <= 0 || x->dims[1] % (b * b) != 0)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "channels %lld not divisible by blocksize^2",
                       (long long)x->dims[1]);
    int64_t n = x->dims[0], cc = x->dims[1] / (b * b), h = x->dims[2], w = x->dims[3];
    int64_t od[4] = {n, cc, h * b, w * b};
    TRY(out_new(c, 0, x->elem_type, 4, od, &y));
    if (strcmp(mode, "CRD") == 0) {
        int64_t vd[6] = {n, cc, b, b, h, w}, perm[6] = {0, 1, 4, 2, 5, 3};
        return permute(c, y, x, 6, vd, perm);
    }
    if (strcmp(mode, "DCR") != 0)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "unknown mode '%s'", mode);
    int64_t vd[6] = {n, b, b, cc, h, w}, perm[6] = {0, 3, 4, 1, 5, 2};
    return permute(c, y, x, 6, vd, perm);
}

static tsr_status *ref_tensor_space_to_depth(ref_ctx *c) {
    const tsr_tensor *x;
    tsr_tensor *y;
    TRY(need_in(c, 0, &x));
    int64_t b = ref_attr_int(c, "blocksize", 0);
    if (x->rank != 4) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input must have rank 4");
    if (b <= 0 || x->dims[2] % b != 0 || x->dims[3] % b != 0)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "height and width must divide by blocksize");
    int64_t n = x->dims[0], cc = x->dims[1], h = x->dims[2] / b, w = x->dims[3] / b;
    int64_t od[4] = {n, cc * b * b, h, w};
    int64_t vd[6] = {n, cc, h, b, w, b}, perm[6] = {0, 3, 5, 1, 2, 4};
    TRY(out_new(c, 0, x->elem_type, 4, od, &y));
    return permute(c, y, x, 6, vd, perm);
}

/* ------------------------------------------------------------------------ */
/* Concat, Split                                                             */

static tsr_status *ref_tensor_concat(ref_ctx *c) {
    const tsr_tensor *x0;
    tsr_tensor *y;
    int64_t dims[REF_MAX_RANK], axis;
    TRY(need_in(c, 0, &x0));
    /* Opset 1 defaulted the axis to 1; later opsets require it. */
    int64_t a = ref_attr_int(c, "axis", 1);
    if (!ref_axis(a, x0->rank, &axis) || x0->rank == 0)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
                       (long long)a, (int)x0->rank);
    memcpy(dims, x0->dims, sizeof(int64_t) * (size_t)x0->rank);
    dims[axis] = 0;
    for (size_t i = 0; i < c->n_in; i++) {
        const tsr_tensor *x;
        TRY(need_in(c, i, &x));
        if (x->elem_type != x0->elem_type || x->rank != x0->rank)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input %zu differs in type or rank", i);
        for (int32_t d = 0; d < x->rank; d++)
            if (d != axis && x->dims[d] != x0->dims[d])
                return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                               "input %zu has dim %lld on axis %d, input 0 has %lld", i,
                               (long long)x->dims[d], (int)d, (long long)x0->dims[d]);
        dims[axis] += x->dims[axis];
    }
    TRY(out_new(c, 0, x0->elem_type, x0->rank, dims, &y));
    int64_t outer = dims_prod(dims, 0, (int32_t)axis);
    int64_t inner = dims_prod(dims, (int32_t)axis + 1, x0->rank);
    int64_t out_block = dims[axis] * inner, at = 0;
    /* Each input contributes one contiguous block per outer index. */
    for (size_t i = 0; i < c->n_in; i++) {
        const tsr_tensor *x = ref_in(c, i);
        int64_t block = x->dims[axis] * inner;
        for (int64_t o = 0; o < outer; o++)
            TRY(mv_copy(c, y, (uint64_t)(o * out_block + at), x, (uint64_t)(o * block),
                        (uint64_t)block));
        at += block;
    }
    return NULL;
}

/* Output i = x[..., start:start+len, ...] along axis. */
static tsr_status *slice_axis_out(ref_ctx *c, size_t i, const tsr_tensor *x, int64_t axis,
                                  int64_t start, int64_t len) {
    int64_t dims[REF_MAX_RANK];
    tsr_tensor *y;
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    dims[axis] = len;
    TRY(out_new(c, i, x->elem_type, x->rank, dims, &y));
    int64_t outer = dims_prod(dims, 0, (int32_t)axis);
    int64_t inner = dims_prod(dims, (int32_t)axis + 1, x->rank);
    for (int64_t o = 0; o < outer; o++)
        TRY(mv_copy(c, y, (uint64_t)(o * len * inner), x,
                    (uint64_t)((o * x->dims[axis] + start) * inner), (uint64_t)(len * inner)));
    return NULL;
}

static tsr_status *ref_tensor_split(ref_ctx *c) {
    const tsr_tensor *x;
    int64_t axis, *split = NULL;
    size_t n = 0;
    bool have = false;
    tsr_status *st = NULL;
    TRY(need_in(c, 0, &x));
    int64_t a = ref_attr_int(c, "axis", 0);
    if (!ref_axis(a, x->rank, &axis) || x->rank == 0)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
                       (long long)a, (int)x->rank);
    /* `split` was an input in opset 1, an attribute in 2..12, an input again
     * from 13. */
    if (ref_opset(c) < 2 && ref_in(c, 1)) {
        TRY(ref_tensor_i64(c, ref_in(c, 1), &split, &n));
        have = true;
    } else {
        TRY(ints_arg(c, "split", 1, 13, &split, &n, &have));
    }
    int64_t dim = x->dims[axis], outs = (int64_t)c->n_out;
    if (have && n > 0) {
        int64_t sum = 0;
        if ((int64_t)n != outs) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "split has %zu entries for %lld outputs", n,
                         (long long)outs);
            goto done;
        }
        for (size_t i = 0; i < n; i++) {
            if (split[i] < 0) {
                st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "split[%zu] is negative", i);
                goto done;
            }
            /* past the axis length the sum is wrong anyway; stop before it
             * can overflow */
            if (split[i] > dim - sum) {
                st = ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                             "split entries sum past the axis length %lld (split[%zu] = %lld)",
                             (long long)dim, i, (long long)split[i]);
                goto done;
            }
            sum += split[i];
        }
        if (sum != dim) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "split sums to %lld, the axis has %lld",
                         (long long)sum, (long long)dim);
            goto done;
        }
        int64_t at = 0;
        for (size_t i = 0; i < n && !st; i++) {
            st = slice_axis_out(c, i, x, axis, at, split[i]);
            at += split[i];
        }
        goto done;
    }
    /* No split list: equal parts. Opset 18 names the count (num_outputs)
     * and lets the last part be smaller; earlier opsets need exact parts. */
    if (ref_attr_has(c, "num_outputs")) {
        int64_t k = ref_attr_int(c, "num_outputs", 0);
        if (k != outs) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "num_outputs is %lld but the node has %lld",
                         (long long)k, (long long)outs);
            goto done;
        }
    }
    if (outs <= 0) goto done;
    int64_t chunk = (dim + outs - 1) / outs;
    if (ref_opset(c) < 18 && dim % outs != 0) {
        st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis of %lld does not split into %lld parts",
                     (long long)dim, (long long)outs);
        goto done;
    }
    for (int64_t i = 0, at = 0; i < outs && !st; i++) {
        int64_t len = dim - at < chunk ? dim - at : chunk;
        if (len < 0) len = 0;
        st = slice_axis_out(c, (size_t)i, x, axis, at, len);
        at += len;
    }
done:
    free(split);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Slice                                                                     */

static tsr_status *ref_tensor_slice(ref_ctx *c) {
    const tsr_tensor *x;
    tsr_tensor *y;
    int64_t *starts = NULL, *ends = NULL, *axes = NULL, *steps = NULL;
    size_t ns = 0, ne = 0, na = 0, nst = 0;
    bool hs, he, ha, hst = false;
    tsr_status *st;
    TRY(need_in(c, 0, &x));
    /* Opset 1 took starts/ends/axes as attributes; 10 made them inputs and
     * added steps. */
    st = ints_arg(c, "starts", 1, 10, &starts, &ns, &hs);
    if (!st) st = ints_arg(c, "ends", 2, 10, &ends, &ne, &he);
    if (!st) st = ints_arg(c, "axes", 3, 10, &axes, &na, &ha);
    if (!st && ref_opset(c) >= 10) st = ints_arg(c, "steps", 4, 10, &steps, &nst, &hst);
    if (st) goto done;
    int32_t r = x->rank;
    if (!hs || !he || ns != ne || (ha && na != ns) || (hst && nst != ns)) {
        st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "starts, ends, axes and steps differ in length");
        goto done;
    }
    if (!ha) {
        if (ns > (size_t)r) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%zu starts for rank %d", ns, (int)r);
            goto done;
        }
        free(axes);
        axes = malloc(sizeof(int64_t) * (ns ? ns : 1));
        if (!axes) {
            st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
            goto done;
        }
        for (size_t i = 0; i < ns; i++) axes[i] = (int64_t)i;
    }
    if ((st = norm_axes(c, axes, ns, r))) goto done;
    int64_t first[REF_MAX_RANK], step[REF_MAX_RANK], dims[REF_MAX_RANK];
    for (int32_t a = 0; a < r; a++) {
        first[a] = 0;
        step[a] = 1;
        dims[a] = x->dims[a];
    }
    for (size_t i = 0; i < ns; i++) {
        int64_t a = axes[i], d = x->dims[a], s = starts[i], e = ends[i];
        int64_t k = hst ? steps[i] : 1, len;
        if (k == INT64_MIN) k = -INT64_MAX; /* so -k exists; the length is the same */
        if (k == 0) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "step is 0");
            goto done;
        }
        if (s < 0) s += d;
        if (e < 0) e += d;
        /* Clamp as Python slicing does: a forward slice lives in [0, d], a
         * backward one in [-1, d-1] (where -1 means "before the first"). */
        if (k > 0) {
            s = s < 0 ? 0 : s > d ? d : s;
            e = e < 0 ? 0 : e > d ? d : e;
            len = e > s ? (e - s - 1) / k + 1 : 0;
        } else {
            s = s < 0 ? -1 : s > d - 1 ? d - 1 : s;
            e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
            len = s > e ? (s - e - 1) / -k + 1 : 0;
        }
        first[a] = s;
        step[a] = k;
        dims[a] = len;
    }
    if ((st = out_new(c, 0, x->elem_type, r, dims, &y))) goto done;
    if (dims_count(r, dims) == 0) goto done;
    int64_t str[REF_MAX_RANK];
    ref_strides(r, x->dims, str);
    view v;
    if ((st = view_init(c, &v, r, dims))) goto done;
    for (int32_t a = 0; a < r; a++) view_linear(&v, a, first[a] * str[a], step[a] * str[a]);
    st = view_run_free(c, &v, y, x, NULL);
done:
    free(starts);
    free(ends);
    free(axes);
    free(steps);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Expand, Tile                                                              */

static tsr_status *ref_tensor_expand(ref_ctx *c) {
    const tsr_tensor *x;
    tsr_tensor *y;
    int64_t *shape, dims[REF_MAX_RANK], str[REF_MAX_RANK];
    size_t n;
    int32_t r;
    TRY(need_in(c, 0, &x));
    TRY(ref_tensor_i64(c, ref_in(c, 1), &shape, &n));
    tsr_status *st = NULL;
    for (size_t i = 0; i < n; i++) {
        if (shape[i] < 0) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "shape[%zu] is negative", i);
            goto done;
        }
    }
    /* Broadcasting is two-way: a 1 in `shape` keeps the input's dim. */
    if (n > REF_MAX_RANK || !ref_broadcast_shape(x->rank, x->dims, (int32_t)n, shape, &r, dims)) {
        st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "shape does not broadcast with the input");
        goto done;
    }
    if ((st = out_new(c, 0, x->elem_type, r, dims, &y))) goto done;
    if (dims_count(r, dims) == 0) goto done;
    ref_strides(x->rank, x->dims, str);
    view v;
    if ((st = view_init(c, &v, r, dims))) goto done;
    for (int32_t a = 0; a < r; a++) {
        int32_t ia = a - (r - x->rank);
        view_linear(&v, a, 0, ia < 0 || x->dims[ia] == 1 ? 0 : str[ia]);
    }
    st = view_run_free(c, &v, y, x, NULL);
done:
    free(shape);
    return st;
}

static tsr_status *ref_tensor_tile(ref_ctx *c) {
    const tsr_tensor *x;
    tsr_tensor *y;
    int64_t *rep, dims[REF_MAX_RANK], str[REF_MAX_RANK];
    size_t n;
    TRY(need_in(c, 0, &x));
    TRY(ref_tensor_i64(c, ref_in(c, 1), &rep, &n));
    tsr_status *st = NULL;
    int32_t r = x->rank;
    if (n != (size_t)r) {
        st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "repeats has %zu entries for rank %d", n, (int)r);
        goto done;
    }
    for (int32_t a = 0; a < r; a++) {
        if (rep[a] < 0 || __builtin_mul_overflow(x->dims[a], rep[a], &dims[a])) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "repeats[%d] is invalid", (int)a);
            goto done;
        }
    }
    if ((st = out_new(c, 0, x->elem_type, r, dims, &y))) goto done;
    if (dims_count(r, dims) == 0) goto done;
    ref_strides(r, x->dims, str);
    view v;
    if ((st = view_init(c, &v, r, dims))) goto done;
    for (int32_t a = 0; a < r; a++)
        for (int64_t i = 0; i < dims[a]; i++) v.off[a][i] = (i % x->dims[a]) * str[a];
    st = view_run_free(c, &v, y, x, NULL);
done:
    free(rep);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Pad                                                                       */

static tsr_status *ref_tensor_pad(ref_ctx *c) {
    const tsr_tensor *x, *fill;
    tsr_tensor *y;
    int64_t *pads = NULL, *axes = NULL;
    size_t np = 0, na = 0;
    bool have, have_axes = false;
    scalar padval; /* zero unless the `value` attribute (opset < 11) says otherwise */
    tsr_status *st = NULL;
    TRY(need_in(c, 0, &x));
    int32_t r = x->rank;
    int64_t opset = ref_opset(c);
    const char *mode = ref_attr_str(c, "mode", "constant");
    fill = scalar_zero(&padval, x->elem_type);
    if (opset < 11) {
        /* Opset 1 called the attribute `paddings`, opset 2 `pads`. */
        TRY(ints_arg(c, opset < 2 ? "paddings" : "pads", 1, 11, &pads, &np, &have));
        if (ref_attr_has(c, "value") && x->elem_type != TSR_STRING) {
            if (!ref_is_float(x->elem_type) && !ref_is_int(x->elem_type) &&
                x->elem_type != TSR_BOOL) {
                st = ref_err(c, TSR_ERR_NOT_SUPPORTED, "a pad value for type %d",
                             (int)x->elem_type);
                goto done;
            }
            ref_store(x->elem_type, &padval.u, 0, ref_attr_float(c, "value", 0.0f));
        }
    } else {
        TRY(ints_arg(c, "pads", 1, 11, &pads, &np, &have));
        const tsr_tensor *v = ref_in(c, 2);
        if (v && ref_numel(v) > 0) {
            if (v->elem_type != x->elem_type) {
                st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "constant_value differs in type");
                goto done;
            }
            fill = v;
        }
        if (opset >= 18 && ref_in(c, 3)) {
            st = ref_tensor_i64(c, ref_in(c, 3), &axes, &na);
            if (st) goto done;
            have_axes = true;
            if ((st = norm_axes(c, axes, na, r))) goto done;
        }
    }
    if (!have) {
        st = ref_err(c, TSR_ERR_INVALID_MODEL, "no pads given");
        goto done;
    }
    size_t nax = have_axes ? na : (size_t)r;
    if (np != 2 * nax) {
        st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%zu pads for %zu axes", np, nax);
        goto done;
    }
    int64_t before[REF_MAX_RANK] = {0}, after[REF_MAX_RANK] = {0};
    for (size_t i = 0; i < nax; i++) {
        int64_t a = have_axes ? axes[i] : (int64_t)i;
        before[a] = pads[i];
        after[a] = pads[nax + i];
    }
    int m = strcmp(mode, "constant") == 0 ? 0 : strcmp(mode, "reflect") == 0 ? 1
          : strcmp(mode, "edge") == 0     ? 2 : strcmp(mode, "wrap") == 0   ? 3 : -1;
    if (m < 0) {
        st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "unknown mode '%s'", mode);
        goto done;
    }
    /* Negative pads crop first; the positive ones then pad what is left
     * (reflect and wrap see the cropped tensor, as the ONNX reference does). */
    int64_t dims[REF_MAX_RANK], crop[REF_MAX_RANK], kept[REF_MAX_RANK], str[REF_MAX_RANK];
    for (int32_t a = 0; a < r; a++) {
        crop[a] = before[a] < 0 ? -before[a] : 0;
        kept[a] = x->dims[a] - crop[a] - (after[a] < 0 ? -after[a] : 0);
        if (kept[a] < 0) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "pads crop more than axis %d holds", (int)a);
            goto done;
        }
        dims[a] = kept[a] + (before[a] > 0 ? before[a] : 0) + (after[a] > 0 ? after[a] : 0);
        if (m != 0 && kept[a] == 0 && dims[a] > 0) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "mode '%s' cannot pad an empty axis", mode);
            goto done;
        }
    }
    if ((st = out_new(c, 0, x->elem_type, r, dims, &y))) goto done;
    if (dims_count(r, dims) == 0) goto done;
    ref_strides(r, x->dims, str);
    view v;
    if ((st = view_init(c, &v, r, dims))) goto done;
    for (int32_t a = 0; a < r; a++) {
        int64_t k = kept[a], pb = before[a] > 0 ? before[a] : 0;
        for (int64_t i = 0; i < dims[a]; i++) {
            int64_t j = i - pb; /* index into the cropped axis */
            if (j < 0 || j >= k) {
                if (m == 0) {
                    v.off[a][i] = MISSING;
                    continue;
                } else if (m == 1) { /* reflect, not repeating the edge */
                    int64_t p = 2 * (k - 1);
                    if (p == 0) {
                        j = 0;
                    } else {
                        j %= p;
                        if (j < 0) j += p;
                        if (j >= k) j = p - j;
                    }
                } else if (m == 2) { /* edge */
                    j = j < 0 ? 0 : k - 1;
                } else { /* wrap */
                    j %= k;
                    if (j < 0) j += k;
                }
            }
            v.off[a][i] = (j + crop[a]) * str[a];
        }
    }
    st = view_run_free(c, &v, y, x, fill);
done:
    free(pads);
    free(axes);
    return st;
}

/* CenterCropPad: each listed axis is cropped or zero-padded to the target
 * size around its centre; the odd element goes to the end, as the ONNX
 * reference does (start offset is the floor of half the difference). */
static tsr_status *ref_tensor_center_crop_pad(ref_ctx *c) {
    const tsr_tensor *x;
    tsr_tensor *y;
    int64_t *shape, dims[REF_MAX_RANK], shift[REF_MAX_RANK] = {0}, str[REF_MAX_RANK];
    size_t n;
    scalar zero;
    TRY(need_in(c, 0, &x));
    TRY(ref_tensor_i64(c, ref_in(c, 1), &shape, &n));
    int32_t r = x->rank;
    const int64_t *attr_axes;
    size_t na = ref_attr_ints(c, "axes", &attr_axes);
    int64_t axes[REF_MAX_RANK];
    tsr_status *st = NULL;
    if (!attr_axes) na = (size_t)r;
    if (na != n || na > (size_t)r) {
        st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "shape has %zu entries for %zu axes", n, na);
        goto done;
    }
    for (size_t i = 0; i < na; i++) axes[i] = attr_axes ? attr_axes[i] : (int64_t)i;
    if ((st = norm_axes(c, axes, na, r))) goto done;
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)r);
    for (size_t i = 0; i < na; i++) {
        int64_t a = axes[i], d = x->dims[a], want = shape[i];
        if (want < 0) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "shape[%zu] is negative", i);
            goto done;
        }
        /* Output index o reads input index o + shift (crop: +, pad: -). */
        shift[a] = want < d ? (d - want) / 2 : -((want - d) / 2);
        dims[a] = want;
    }
    if ((st = out_new(c, 0, x->elem_type, r, dims, &y))) goto done;
    if (dims_count(r, dims) == 0) goto done;
    ref_strides(r, x->dims, str);
    view v;
    if ((st = view_init(c, &v, r, dims))) goto done;
    for (int32_t a = 0; a < r; a++) {
        for (int64_t o = 0; o < dims[a]; o++) {
            int64_t j = o + shift[a];
            v.off[a][o] = j < 0 || j >= x->dims[a] ? MISSING : j * str[a];
        }
    }
    st = view_run_free(c, &v, y, x, scalar_zero(&zero, x->elem_type));
done:
    free(shape);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Gather, GatherElements, GatherND                                          */

/* Wraps a possibly negative index into [0, dim); false when out of range. */
static bool wrap_index(int64_t i, int64_t dim, int64_t *out) {
    if (i < 0) i += dim;
    if (i < 0 || i >= dim) return false;
    *out = i;
    return true;
}

static tsr_status *ref_tensor_gather(ref_ctx *c) {
    const tsr_tensor *x, *ind;
    tsr_tensor *y;
    int64_t *idx, axis, dims[REF_MAX_RANK];
    size_t n;
    TRY(need_in(c, 0, &x));
    TRY(need_in(c, 1, &ind));
    int64_t a = ref_attr_int(c, "axis", 0);
    if (x->rank == 0 || !ref_axis(a, x->rank, &axis))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
                       (long long)a, (int)x->rank);
    int32_t r = x->rank - 1 + ind->rank;
    if (r > REF_MAX_RANK) return ref_err(c, TSR_ERR_NOT_SUPPORTED, "output rank is too large");
    TRY(ref_tensor_i64(c, ind, &idx, &n));
    tsr_status *st = NULL;
    int64_t dim = x->dims[axis];
    for (size_t i = 0; i < n; i++) {
        if (!wrap_index(idx[i], dim, &idx[i])) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "index %lld is out of range for axis of %lld",
                         (long long)idx[i], (long long)dim);
            goto done;
        }
    }
    /* Output shape: data[:axis] + indices + data[axis+1:]. */
    int32_t k = 0;
    for (int32_t i = 0; i < axis; i++) dims[k++] = x->dims[i];
    for (int32_t i = 0; i < ind->rank; i++) dims[k++] = ind->dims[i];
    for (int32_t i = (int32_t)axis + 1; i < x->rank; i++) dims[k++] = x->dims[i];
    if ((st = out_new(c, 0, x->elem_type, r, dims, &y))) goto done;
    /* As a 3-axis view: outer x index x inner. */
    int64_t vd[3] = {dims_prod(x->dims, 0, (int32_t)axis), (int64_t)n,
                     dims_prod(x->dims, (int32_t)axis + 1, x->rank)};
    if (dims_count(3, vd) == 0) goto done;
    size_t es = x->elem_type == TSR_STRING ? 0 : ref_elem_size(x->elem_type);
    if (es) {
        /* plain types: whole rows of the inner block at a time (an audio
         * model's framing gathers 40,000 single samples a run) */
        const char *src = x->data;
        char *dst = y->data;
        size_t row = (size_t)vd[2] * es;
        for (int64_t o = 0; o < vd[0]; o++)
            for (size_t i = 0; i < n; i++) {
                const char *from = src + ((size_t)o * (size_t)dim + (size_t)idx[i]) * row;
                char *to = dst + ((size_t)o * n + i) * row;
                if (es == 4 && vd[2] == 1) memcpy(to, from, 4);
                else memcpy(to, from, row);
            }
        goto done;
    }
    view v;
    if ((st = view_init(c, &v, 3, vd))) goto done;
    view_linear(&v, 0, 0, dim * vd[2]);
    for (size_t i = 0; i < n; i++) v.off[1][i] = idx[i] * vd[2];
    view_linear(&v, 2, 0, 1);
    st = view_run_free(c, &v, y, x, NULL);
done:
    free(idx);
    return st;
}

/* ai.onnx.ml ArrayFeatureExtractor: x[..., indices] with the indices
 * flattened; a 1-D x gives a [1, n] result, as the ONNX reference does. */
static tsr_status *ref_tensor_array_feature_extractor(ref_ctx *c) {
    const tsr_tensor *x, *ind;
    tsr_tensor *y;
    int64_t *idx, dims[REF_MAX_RANK];
    size_t n;
    TRY(need_in(c, 0, &x));
    TRY(need_in(c, 1, &ind));
    if (x->rank < 1) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input must have rank >= 1");
    TRY(ref_tensor_i64(c, ind, &idx, &n));
    tsr_status *st = NULL;
    int64_t last = x->dims[x->rank - 1], outer = dims_prod(x->dims, 0, x->rank - 1);
    for (size_t i = 0; i < n; i++) {
        if (idx[i] < 0 || idx[i] >= last) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "index %lld is out of range for axis of %lld",
                         (long long)idx[i], (long long)last);
            goto done;
        }
    }
    int32_t r = x->rank < 2 ? 2 : x->rank;
    if (x->rank < 2) dims[0] = 1;
    else memcpy(dims, x->dims, sizeof(int64_t) * (size_t)(r - 1));
    dims[r - 1] = (int64_t)n;
    if ((st = out_new(c, 0, x->elem_type, r, dims, &y))) goto done;
    for (int64_t o = 0; o < outer && !st; o++)
        for (size_t i = 0; i < n && !st; i++)
            st = mv_copy(c, y, (uint64_t)o * n + i, x, (uint64_t)(o * last + idx[i]), 1);
done:
    free(idx);
    return st;
}

static tsr_status *ref_tensor_gather_elements(ref_ctx *c) {
    const tsr_tensor *x, *ind;
    tsr_tensor *y;
    int64_t *idx, axis, str[REF_MAX_RANK], pos[REF_MAX_RANK] = {0};
    size_t n;
    TRY(need_in(c, 0, &x));
    TRY(need_in(c, 1, &ind));
    int64_t a = ref_attr_int(c, "axis", 0);
    if (x->rank == 0 || !ref_axis(a, x->rank, &axis))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
                       (long long)a, (int)x->rank);
    if (ind->rank != x->rank)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "indices must have the data's rank");
    TRY(ref_tensor_i64(c, ind, &idx, &n));
    tsr_status *st = out_new(c, 0, x->elem_type, ind->rank, ind->dims, &y);
    if (st) goto done;
    ref_strides(x->rank, x->dims, str);
    for (size_t i = 0; i < n; i++) {
        int64_t off = 0, j;
        if (!wrap_index(idx[i], x->dims[axis], &j)) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "index %lld is out of range for axis of %lld",
                         (long long)idx[i], (long long)x->dims[axis]);
            goto done;
        }
        for (int32_t d = 0; d < x->rank; d++) {
            int64_t p = d == axis ? j : pos[d];
            if (p >= x->dims[d]) {
                st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "indices are larger than the data");
                goto done;
            }
            off += p * str[d];
        }
        if ((st = mv_copy(c, y, i, x, (uint64_t)off, 1))) goto done;
        for (int32_t d = ind->rank - 1; d >= 0; d--) {
            if (++pos[d] < ind->dims[d]) break;
            pos[d] = 0;
        }
    }
done:
    free(idx);
    return st;
}

/* Shared by GatherND and ScatterND: the data offset each index tuple of
 * `ind` (last axis k) selects, as tuple count *nt, slice size *slice. Batch
 * dims (GatherND) make the first b axes of data and indices correspond. */
static tsr_status *nd_offsets(ref_ctx *c, const tsr_tensor *x, const tsr_tensor *ind, int64_t b,
                              int64_t **offs, int64_t *nt, int64_t *slice) {
    int64_t *idx, str[REF_MAX_RANK];
    size_t n;
    *offs = NULL;
    *nt = *slice = 0;
    if (ind->rank < 1) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "indices must have rank >= 1");
    int64_t k = ind->dims[ind->rank - 1];
    if (b < 0 || b >= ind->rank || b >= x->rank || k < 0 || b + k > x->rank)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "indices do not fit the data's rank");
    for (int64_t d = 0; d < b; d++)
        if (ind->dims[d] != x->dims[d])
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "batch dims differ");
    TRY(ref_tensor_i64(c, ind, &idx, &n));
    ref_strides(x->rank, x->dims, str);
    int64_t tuples = dims_prod(ind->dims, 0, ind->rank - 1);
    int64_t per_batch = dims_prod(ind->dims, (int32_t)b, ind->rank - 1);
    int64_t batch_size = dims_prod(x->dims, (int32_t)b, x->rank);
    *slice = dims_prod(x->dims, (int32_t)(b + k), x->rank);
    *nt = tuples;
    int64_t *o = malloc(sizeof(int64_t) * (size_t)(tuples ? tuples : 1));
    if (!o) {
        free(idx);
        return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    }
    for (int64_t t = 0; t < tuples; t++) {
        int64_t off = (per_batch ? t / per_batch : 0) * batch_size;
        for (int64_t j = 0; j < k; j++) {
            int64_t d = x->dims[b + j], v;
            if (!wrap_index(idx[t * k + j], d, &v)) {
                int64_t bad = idx[t * k + j];
                free(idx);
                free(o);
                return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                               "index %lld is out of range for axis of %lld", (long long)bad,
                               (long long)d);
            }
            off += v * str[b + j];
        }
        o[t] = off;
    }
    free(idx);
    *offs = o;
    return NULL;
}

static tsr_status *ref_tensor_gather_nd(ref_ctx *c) {
    const tsr_tensor *x, *ind;
    tsr_tensor *y;
    int64_t *offs, nt, slice, dims[REF_MAX_RANK];
    TRY(need_in(c, 0, &x));
    TRY(need_in(c, 1, &ind));
    int64_t b = ref_attr_int(c, "batch_dims", 0);
    TRY(nd_offsets(c, x, ind, b, &offs, &nt, &slice));
    /* Output shape: indices.shape[:-1] + data.shape[b+k:]. */
    int64_t k = ind->dims[ind->rank - 1];
    int32_t r = 0;
    for (int32_t i = 0; i < ind->rank - 1; i++) dims[r++] = ind->dims[i];
    tsr_status *st = NULL;
    if (r + x->rank - (b + k) > REF_MAX_RANK) {
        st = ref_err(c, TSR_ERR_NOT_SUPPORTED, "output rank is too large");
        goto done;
    }
    for (int32_t i = (int32_t)(b + k); i < x->rank; i++) dims[r++] = x->dims[i];
    if ((st = out_new(c, 0, x->elem_type, r, dims, &y))) goto done;
    for (int64_t t = 0; t < nt && !st; t++)
        st = mv_copy(c, y, (uint64_t)(t * slice), x, (uint64_t)offs[t], (uint64_t)slice);
done:
    free(offs);
    return st;
}

/* ------------------------------------------------------------------------ */
/* ScatterElements (and the older Scatter), ScatterND                        */

enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

static tsr_status *reduction_of(ref_ctx *c, int32_t t, int *red) {
    const char *s = ref_attr_str(c, "reduction", "none");
    *red = strcmp(s, "none") == 0 ? RED_NONE
         : strcmp(s, "add") == 0  ? RED_ADD
         : strcmp(s, "mul") == 0  ? RED_MUL
         : strcmp(s, "max") == 0  ? RED_MAX
         : strcmp(s, "min") == 0  ? RED_MIN : -1;
    if (*red < 0) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "unknown reduction '%s'", s);
    if (*red != RED_NONE && !ref_is_float(t) && !ref_is_int(t) && t != TSR_BOOL)
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "reduction '%s' on element type %d", s, (int)t);
    return NULL;
}

/* dst[di] = dst[di] (red) src[si]; RED_NONE copies. */
static tsr_status *combine(ref_ctx *c, int red, tsr_tensor *dst, uint64_t di,
                           const tsr_tensor *src, uint64_t si) {
    int32_t t = dst->elem_type;
    if (red == RED_NONE) return mv_copy(c, dst, di, src, si, 1);
    if (ref_is_float(t)) {
        double a = ref_load(t, dst->data, (size_t)di), b = ref_load(t, src->data, (size_t)si);
        double v = red == RED_ADD ? a + b : red == RED_MUL ? a * b
                 : red == RED_MAX ? (b > a ? b : a) : (b < a ? b : a);
        ref_store(t, dst->data, (size_t)di, v);
        return NULL;
    }
    /* Integers: wrap on overflow (unsigned arithmetic), compare by signedness. */
    uint64_t a = (uint64_t)ref_load_i64(t, dst->data, (size_t)di);
    uint64_t b = (uint64_t)ref_load_i64(t, src->data, (size_t)si), v;
    bool b_gt_a = t == TSR_UINT64 ? b > a : (int64_t)b > (int64_t)a;
    switch (red) {
    case RED_ADD: v = a + b; break;
    case RED_MUL: v = a * b; break;
    case RED_MAX: v = b_gt_a ? b : a; break;
    default: v = b_gt_a ? a : b; break;
    }
    ref_store_i64(t, dst->data, (size_t)di, (int64_t)v);
    return NULL;
}

static tsr_status *ref_tensor_scatter_elements(ref_ctx *c) {
    const tsr_tensor *x, *ind, *upd;
    tsr_tensor *y;
    int64_t *idx, axis, str[REF_MAX_RANK], pos[REF_MAX_RANK] = {0};
    size_t n;
    int red;
    TRY(need_in(c, 0, &x));
    TRY(need_in(c, 1, &ind));
    TRY(need_in(c, 2, &upd));
    int64_t a = ref_attr_int(c, "axis", 0);
    if (x->rank == 0 || !ref_axis(a, x->rank, &axis))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
                       (long long)a, (int)x->rank);
    if (ind->rank != x->rank || upd->rank != x->rank || upd->elem_type != x->elem_type ||
        dims_count(ind->rank, ind->dims) != ref_numel(upd))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                       "indices and updates must match each other and the data's rank");
    for (int32_t d = 0; d < ind->rank; d++)
        if (ind->dims[d] != upd->dims[d])
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "indices and updates differ in shape");
    TRY(reduction_of(c, x->elem_type, &red));
    TRY(out_new(c, 0, x->elem_type, x->rank, x->dims, &y));
    TRY(copy_all(c, y, x));
    TRY(ref_tensor_i64(c, ind, &idx, &n));
    tsr_status *st = NULL;
    ref_strides(x->rank, x->dims, str);
    for (size_t i = 0; i < n && !st; i++) {
        int64_t off = 0, j;
        if (!wrap_index(idx[i], x->dims[axis], &j)) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "index %lld is out of range for axis of %lld",
                         (long long)idx[i], (long long)x->dims[axis]);
            break;
        }
        for (int32_t d = 0; d < x->rank; d++) {
            int64_t p = d == axis ? j : pos[d];
            if (p >= x->dims[d]) {
                st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "indices are larger than the data");
                break;
            }
            off += p * str[d];
        }
        if (!st) st = combine(c, red, y, (uint64_t)off, upd, i);
        for (int32_t d = ind->rank - 1; d >= 0; d--) {
            if (++pos[d] < ind->dims[d]) break;
            pos[d] = 0;
        }
    }
    free(idx);
    return st;
}

static tsr_status *ref_tensor_scatter_nd(ref_ctx *c) {
    const tsr_tensor *x, *ind, *upd;
    tsr_tensor *y;
    int64_t *offs, nt, slice;
    int red;
    TRY(need_in(c, 0, &x));
    TRY(need_in(c, 1, &ind));
    TRY(need_in(c, 2, &upd));
    if (upd->elem_type != x->elem_type)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "updates differ in type from the data");
    TRY(reduction_of(c, x->elem_type, &red));
    TRY(nd_offsets(c, x, ind, 0, &offs, &nt, &slice));
    tsr_status *st = NULL;
    if (ref_numel(upd) != (uint64_t)(nt * slice)) {
        st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "updates hold %llu elements, expected %lld",
                     (unsigned long long)ref_numel(upd), (long long)(nt * slice));
        goto done;
    }
    if ((st = out_new(c, 0, x->elem_type, x->rank, x->dims, &y))) goto done;
    if ((st = copy_all(c, y, x))) goto done;
    for (int64_t t = 0; t < nt && !st; t++)
        for (int64_t i = 0; i < slice && !st; i++)
            st = combine(c, red, y, (uint64_t)(offs[t] + i), upd, (uint64_t)(t * slice + i));
done:
    free(offs);
    return st;
}

/* TensorScatter (opset 24), a KV-cache update: present = past with, per
 * batch entry b, update's sequence rows written from write_indices[b] on
 * along `axis` (wrapping around in "circular" mode). */
static tsr_status *ref_tensor_tensor_scatter(ref_ctx *c) {
    const tsr_tensor *x, *upd, *wt = ref_in(c, 2);
    tsr_tensor *y;
    int64_t axis, *wi = NULL;
    size_t nw = 0;
    TRY(need_in(c, 0, &x));
    TRY(need_in(c, 1, &upd));
    int64_t a = ref_attr_int(c, "axis", -2);
    const char *mode = ref_attr_str(c, "mode", "linear");
    bool circular = strcmp(mode, "circular") == 0;
    if (!circular && strcmp(mode, "linear") != 0)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "unknown mode '%s'", mode);
    /* Axis 0 is the batch, so the sequence axis comes after it. */
    if (x->rank < 2 || !ref_axis(a, x->rank, &axis) || axis == 0)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is invalid for rank %d",
                       (long long)a, (int)x->rank);
    if (upd->elem_type != x->elem_type || upd->rank != x->rank)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "update differs in type or rank");
    for (int32_t d = 0; d < x->rank; d++)
        if (d != axis ? upd->dims[d] != x->dims[d] : upd->dims[d] > x->dims[d])
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "update's shape does not fit the cache");
    if (wt) {
        TRY(ref_tensor_i64(c, wt, &wi, &nw));
        if (nw != (size_t)x->dims[0]) {
            free(wi);
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "write_indices has %zu entries for batch %lld",
                           nw, (long long)x->dims[0]);
        }
    }
    tsr_status *st = out_new(c, 0, x->elem_type, x->rank, x->dims, &y);
    if (!st) st = copy_all(c, y, x);
    int64_t max_seq = x->dims[axis], seq = upd->dims[axis];
    int64_t outer = dims_prod(x->dims, 0, (int32_t)axis);
    int64_t per_batch = dims_prod(x->dims, 1, (int32_t)axis);
    int64_t inner = dims_prod(x->dims, (int32_t)axis + 1, x->rank);
    for (int64_t o = 0; o < outer && !st; o++) {
        int64_t start = wi ? wi[o / per_batch] : 0;
        for (int64_t s = 0; s < seq && !st; s++) {
            int64_t at = start + s;
            if (circular) {
                at %= max_seq;
                if (at < 0) at += max_seq;
            }
            if (at < 0 || at >= max_seq) {
                st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "write index %lld is out of range",
                             (long long)at);
                break;
            }
            st = mv_copy(c, y, (uint64_t)((o * max_seq + at) * inner), upd,
                         (uint64_t)((o * seq + s) * inner), (uint64_t)inner);
        }
    }
    free(wi);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Constant, ConstantOfShape, EyeLike, Range, OneHot                         */

static tsr_status *ref_tensor_constant(ref_ctx *c) {
    const tsr_host_api *h = c->host;
    tsr_tensor *y;
    const tsr_tensor *v = ref_attr_tensor(c, "value");
    if (v) {
        TRY(out_new(c, 0, v->elem_type, v->rank, v->dims, &y));
        return copy_all(c, y, v);
    }
    if (ref_attr_has(c, "value_float")) {
        TRY(out_new(c, 0, TSR_FLOAT, 0, NULL, &y));
        *(float *)y->data = ref_attr_float(c, "value_float", 0.0f);
        return NULL;
    }
    if (ref_attr_has(c, "value_int")) {
        TRY(out_new(c, 0, TSR_INT64, 0, NULL, &y));
        *(int64_t *)y->data = ref_attr_int(c, "value_int", 0);
        return NULL;
    }
    if (ref_attr_has(c, "value_floats")) {
        const float *f;
        int64_t n = (int64_t)ref_attr_floats(c, "value_floats", &f);
        TRY(out_new(c, 0, TSR_FLOAT, 1, &n, &y));
        if (n) memcpy(y->data, f, sizeof(float) * (size_t)n);
        return NULL;
    }
    if (ref_attr_has(c, "value_ints")) {
        const int64_t *p;
        int64_t n = (int64_t)ref_attr_ints(c, "value_ints", &p);
        TRY(out_new(c, 0, TSR_INT64, 1, &n, &y));
        if (n) memcpy(y->data, p, sizeof(int64_t) * (size_t)n);
        return NULL;
    }
    /* Strings go through the host accessors directly: ref.h has no helper
     * that keeps their length (they may hold NUL bytes) or lists them. */
    const tsr_attr *a = h->node_attr_find(c->node, "value_string");
    if (a) {
        size_t size;
        const char *s = h->attr_string(a, &size);
        TRY(out_new(c, 0, TSR_STRING, 0, NULL, &y));
        return h->tensor_set_string(y, 0, s, size);
    }
    a = h->node_attr_find(c->node, "value_strings");
    if (a) {
        int64_t n = (int64_t)h->attr_list_size(a);
        TRY(out_new(c, 0, TSR_STRING, 1, &n, &y));
        for (int64_t i = 0; i < n; i++) {
            size_t size;
            const char *s = h->attr_strings_at(a, (size_t)i, &size);
            TRY(h->tensor_set_string(y, (size_t)i, s, size));
        }
        return NULL;
    }
    if (ref_attr_has(c, "sparse_value"))
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "sparse_value is not supported");
    return ref_err(c, TSR_ERR_INVALID_MODEL, "no value attribute");
}

static tsr_status *ref_tensor_constant_of_shape(ref_ctx *c) {
    tsr_tensor *y;
    int64_t *shape;
    size_t n;
    scalar zero;
    /* The default value is a float 0. */
    const tsr_tensor *v = ref_attr_tensor(c, "value");
    if (!v) v = scalar_zero(&zero, TSR_FLOAT);
    if (ref_numel(v) != 1) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "value must hold one element");
    if (type_bits(v->elem_type) == 0)
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d", (int)v->elem_type);
    TRY(ref_tensor_i64(c, ref_in(c, 0), &shape, &n));
    tsr_status *st = NULL;
    if (n > REF_MAX_RANK) {
        st = ref_err(c, TSR_ERR_NOT_SUPPORTED, "rank %zu is above %d", n, REF_MAX_RANK);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        if (shape[i] < 0) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "shape[%zu] is negative", i);
            goto done;
        }
    }
    if ((st = out_new(c, 0, v->elem_type, (int32_t)n, shape, &y))) goto done;
    st = mv_fill(c, y, 0, v, ref_numel(y));
done:
    free(shape);
    return st;
}

static tsr_status *ref_tensor_eye_like(ref_ctx *c) {
    const tsr_tensor *x;
    tsr_tensor *y;
    TRY(need_in(c, 0, &x));
    int32_t t = (int32_t)ref_attr_int(c, "dtype", x->elem_type);
    int64_t k = ref_attr_int(c, "k", 0);
    if (x->rank != 2) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input must have rank 2");
    if (!ref_is_float(t) && !ref_is_int(t) && t != TSR_BOOL)
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d", (int)t);
    TRY(out_new(c, 0, t, 2, x->dims, &y));
    if (y->nbytes) memset(y->data, 0, y->nbytes);
    int64_t rows = x->dims[0], cols = x->dims[1];
    for (int64_t i = 0; i < rows; i++) {
        /* j = i + k, compared without overflowing for extreme k. */
        if (k >= cols || k < -i) continue; /* not -k: k may be INT64_MIN */
        int64_t j = i + k;
        if (j >= 0 && j < cols) ref_store(t, y->data, (size_t)(i * cols + j), 1.0);
    }
    return NULL;
}

static tsr_status *ref_tensor_range(ref_ctx *c) {
    const tsr_tensor *in[3];
    tsr_tensor *y;
    for (size_t i = 0; i < 3; i++) {
        TRY(need_in(c, i, &in[i]));
        if (ref_numel(in[i]) != 1)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input %zu must be a scalar", i);
    }
    int32_t t = in[0]->elem_type;
    if (in[1]->elem_type != t || in[2]->elem_type != t)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "inputs differ in type");
    int64_t n;
    if (ref_is_int(t)) {
        /* Exact integer arithmetic: doubles lose int64 precision. */
        int64_t s = ref_load_i64(t, in[0]->data, 0), l = ref_load_i64(t, in[1]->data, 0);
        int64_t d = ref_load_i64(t, in[2]->data, 0), span;
        if (d == 0) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "delta is 0");
        if (__builtin_sub_overflow(l, s, &span))
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "range is too large");
        if ((span > 0) != (d > 0) || span == 0) {
            n = 0;
        } else {
            /* Magnitudes as unsigned, so INT64_MIN has one too. */
            uint64_t us = span > 0 ? (uint64_t)span : 0 - (uint64_t)span;
            uint64_t ud = d > 0 ? (uint64_t)d : 0 - (uint64_t)d;
            n = (int64_t)((us - 1) / ud + 1);
        }
        TRY(out_new(c, 0, t, 1, &n, &y));
        for (int64_t i = 0; i < n; i++)
            ref_store_i64(t, y->data, (size_t)i, (int64_t)((uint64_t)s + (uint64_t)i * (uint64_t)d));
        return NULL;
    }
    if (!ref_is_float(t)) return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d", (int)t);
    double s = ref_load(t, in[0]->data, 0), l = ref_load(t, in[1]->data, 0);
    double d = ref_load(t, in[2]->data, 0);
    if (d == 0 || !isfinite(s) || !isfinite(l) || !isfinite(d))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "delta is 0 or an input is not finite");
    double cnt = ceil((l - s) / d);
    if (cnt > 9.0e15) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "range is too large");
    n = cnt > 0 ? (int64_t)cnt : 0;
    TRY(out_new(c, 0, t, 1, &n, &y));
    for (int64_t i = 0; i < n; i++) ref_store(t, y->data, (size_t)i, s + (double)i * d);
    return NULL;
}

static tsr_status *ref_tensor_one_hot(ref_ctx *c) {
    const tsr_tensor *ind, *dep, *val;
    tsr_tensor *y;
    int64_t axis, dims[REF_MAX_RANK];
    TRY(need_in(c, 0, &ind));
    TRY(need_in(c, 1, &dep));
    TRY(need_in(c, 2, &val));
    if (ref_numel(dep) != 1 || ref_numel(val) != 2)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "depth must be a scalar, values a pair");
    if (!ref_is_int(dep->elem_type) && !ref_is_float(dep->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "depth must be numeric");
    if (!ref_is_int(ind->elem_type) && !ref_is_float(ind->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "indices must be numeric");
    int64_t depth = ref_load_i64(dep->elem_type, dep->data, 0);
    if (depth < 0) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "depth is negative");
    int32_t r = ind->rank + 1;
    if (r > REF_MAX_RANK) return ref_err(c, TSR_ERR_NOT_SUPPORTED, "output rank is too large");
    int64_t a = ref_attr_int(c, "axis", -1);
    if (!ref_axis(a, r, &axis))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
                       (long long)a, (int)r);
    for (int32_t i = 0, j = 0; i < r; i++) dims[i] = i == axis ? depth : ind->dims[j++];
    TRY(out_new(c, 0, val->elem_type, r, dims, &y));
    int64_t outer = dims_prod(ind->dims, 0, (int32_t)axis);
    int64_t inner = dims_prod(ind->dims, (int32_t)axis, ind->rank);
    /* no indices: a huge depth must not be looped over for nothing */
    if (outer == 0 || inner == 0) return NULL;
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t d = 0; d < depth; d++) {
            for (int64_t i = 0; i < inner; i++) {
                size_t at = (size_t)(o * inner + i);
                int64_t v = ref_load_i64(ind->elem_type, ind->data, at);
                if (v < 0) v += depth; /* negative indices count from the end */
                TRY(mv_copy(c, y, (uint64_t)((o * depth + d) * inner + i), val, v == d ? 1 : 0, 1));
            }
        }
    }
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Trilu, CumSum, NonZero, Compress, ReverseSequence                         */

static tsr_status *ref_tensor_trilu(ref_ctx *c) {
    const tsr_tensor *x, *kt = ref_in(c, 1);
    tsr_tensor *y;
    scalar zero;
    TRY(need_in(c, 0, &x));
    if (x->rank < 2) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input must have rank >= 2");
    int64_t k = 0;
    if (kt) {
        if (ref_numel(kt) != 1 || !ref_is_int(kt->elem_type))
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "k must be an integer scalar");
        k = ref_load_i64(kt->elem_type, kt->data, 0);
    }
    bool upper = ref_attr_int(c, "upper", 1) != 0;
    const tsr_tensor *z = scalar_zero(&zero, x->elem_type);
    TRY(out_new(c, 0, x->elem_type, x->rank, x->dims, &y));
    int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1];
    int64_t mats = dims_prod(x->dims, 0, x->rank - 2);
    for (int64_t m = 0; m < mats; m++) {
        for (int64_t i = 0; i < rows; i++) {
            for (int64_t j = 0; j < cols; j++) {
                /* j - i is small, so comparing it with k cannot overflow. */
                bool keep = upper ? j - i >= k : j - i <= k;
                uint64_t at = (uint64_t)((m * rows + i) * cols + j);
                TRY(keep ? mv_copy(c, y, at, x, at, 1) : mv_copy(c, y, at, z, 0, 1));
            }
        }
    }
    return NULL;
}

/* CumSum and CumProd: running sum or product along an axis. */
static tsr_status *cumulate(ref_ctx *c, bool product) {
    const tsr_tensor *x, *at;
    tsr_tensor *y;
    int64_t axis;
    TRY(need_in(c, 0, &x));
    TRY(need_in(c, 1, &at));
    int32_t t = x->elem_type;
    if (!ref_is_float(t) && !ref_is_int(t))
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d", (int)t);
    if (ref_numel(at) != 1 || !ref_is_int(at->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis must be an integer scalar");
    int64_t a = ref_load_i64(at->elem_type, at->data, 0);
    if (x->rank == 0 || !ref_axis(a, x->rank, &axis))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
                       (long long)a, (int)x->rank);
    bool exclusive = ref_attr_int(c, "exclusive", 0) != 0;
    bool reverse = ref_attr_int(c, "reverse", 0) != 0;
    TRY(out_new(c, 0, t, x->rank, x->dims, &y));
    int64_t n = x->dims[axis];
    int64_t outer = dims_prod(x->dims, 0, (int32_t)axis);
    int64_t inner = dims_prod(x->dims, (int32_t)axis + 1, x->rank);
    bool fl = ref_is_float(t);
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t i = 0; i < inner; i++) {
            /* The identity of the operation starts an exclusive scan. */
            double accf = product ? 1 : 0;
            uint64_t acci = product; /* unsigned: integer results wrap instead of overflowing */
            for (int64_t s = 0; s < n; s++) {
                int64_t kk = reverse ? n - 1 - s : s;
                size_t p = (size_t)((o * n + kk) * inner + i);
                if (exclusive) {
                    if (fl) ref_store(t, y->data, p, accf);
                    else ref_store_i64(t, y->data, p, (int64_t)acci);
                }
                if (fl) {
                    double v = ref_load(t, x->data, p);
                    accf = product ? accf * v : accf + v;
                } else {
                    uint64_t v = (uint64_t)ref_load_i64(t, x->data, p);
                    acci = product ? acci * v : acci + v;
                }
                if (!exclusive) {
                    if (fl) ref_store(t, y->data, p, accf);
                    else ref_store_i64(t, y->data, p, (int64_t)acci);
                }
            }
        }
    }
    return NULL;
}

static tsr_status *ref_tensor_cumsum(ref_ctx *c) { return cumulate(c, false); }
static tsr_status *ref_tensor_cumprod(ref_ctx *c) { return cumulate(c, true); }

/* Whether element i of x is not zero (not empty, for strings). */
static bool is_nonzero(const tsr_tensor *x, uint64_t i) {
    int32_t t = x->elem_type;
    if (t == TSR_STRING) return ((const tsr_string *)x->data)[i].size != 0;
    if (ref_is_float(t)) return ref_load(t, x->data, (size_t)i) != 0.0;
    if (ref_is_int(t) || t == TSR_BOOL) return ref_load_i64(t, x->data, (size_t)i) != 0;
    unsigned bits = type_bits(t);
    if (bits < 8) return get_bits(x->data, i, bits) != 0;
    /* Other types (complex, 8-bit floats): any set bit, ignoring a lone sign. */
    size_t es = bits / 8;
    const uint8_t *p = (const uint8_t *)x->data + i * es;
    for (size_t b = 0; b < es; b++)
        if (p[b] & (b + 1 == es && t != TSR_COMPLEX64 && t != TSR_COMPLEX128 ? 0x7f : 0xff))
            return true;
    return false;
}

static tsr_status *ref_tensor_nonzero(ref_ctx *c) {
    const tsr_tensor *x;
    tsr_tensor *y;
    TRY(need_in(c, 0, &x));
    uint64_t total = ref_numel(x);
    int64_t nnz = 0, pos[REF_MAX_RANK] = {0};
    for (uint64_t i = 0; i < total; i++) nnz += is_nonzero(x, i);
    /* A scalar reads as rank 1, as numpy's nonzero does. */
    int64_t dims[2] = {x->rank ? x->rank : 1, nnz};
    TRY(out_new(c, 0, TSR_INT64, 2, dims, &y));
    int64_t *out = y->data, col = 0;
    for (uint64_t i = 0; i < total; i++) {
        if (is_nonzero(x, i)) {
            if (x->rank == 0) out[col] = 0;
            for (int32_t d = 0; d < x->rank; d++) out[d * nnz + col] = pos[d];
            col++;
        }
        for (int32_t d = x->rank - 1; d >= 0; d--) {
            if (++pos[d] < x->dims[d]) break;
            pos[d] = 0;
        }
    }
    return NULL;
}

static tsr_status *ref_tensor_compress(ref_ctx *c) {
    const tsr_tensor *x, *cond;
    tsr_tensor *y;
    TRY(need_in(c, 0, &x));
    TRY(need_in(c, 1, &cond));
    if (cond->rank != 1)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "condition must have rank 1");
    bool flat = !ref_attr_has(c, "axis");
    int64_t axis = 0, dims[REF_MAX_RANK], str[REF_MAX_RANK];
    int32_t r = flat ? 1 : x->rank;
    if (flat) {
        dims[0] = (int64_t)ref_numel(x);
        str[0] = 1;
    } else {
        int64_t a = ref_attr_int(c, "axis", 0);
        if (x->rank == 0 || !ref_axis(a, x->rank, &axis))
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
                           (long long)a, (int)x->rank);
        memcpy(dims, x->dims, sizeof(int64_t) * (size_t)r);
        ref_strides(r, x->dims, str);
    }
    /* A shorter condition drops the slices past its end. */
    int64_t dim = dims[axis], len = cond->dims[0], kept = 0;
    for (int64_t i = 0; i < len; i++) {
        if (ref_load_i64(cond->elem_type, cond->data, (size_t)i) == 0) continue;
        if (i >= dim)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "condition selects index %lld of %lld",
                           (long long)i, (long long)dim);
        kept++;
    }
    dims[axis] = kept;
    TRY(out_new(c, 0, x->elem_type, r, dims, &y));
    if (dims_count(r, dims) == 0) return NULL;
    view v;
    TRY(view_init(c, &v, r, dims));
    for (int32_t d = 0; d < r; d++) {
        if (d != axis) {
            view_linear(&v, d, 0, str[d]);
            continue;
        }
        for (int64_t i = 0, k = 0; i < len && i < dim; i++)
            if (ref_load_i64(cond->elem_type, cond->data, (size_t)i) != 0) v.off[d][k++] = i * str[d];
    }
    return view_run_free(c, &v, y, x, NULL);
}

static tsr_status *ref_tensor_reverse_sequence(ref_ctx *c) {
    const tsr_tensor *x, *lt;
    tsr_tensor *y;
    int64_t *lens, str[REF_MAX_RANK], pos[REF_MAX_RANK] = {0};
    size_t n;
    TRY(need_in(c, 0, &x));
    TRY(need_in(c, 1, &lt));
    int64_t ba = ref_attr_int(c, "batch_axis", 1), ta = ref_attr_int(c, "time_axis", 0);
    if (x->rank < 2 || (ba != 0 && ba != 1) || (ta != 0 && ta != 1) || ba == ta)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "batch_axis and time_axis must be 0 and 1");
    TRY(ref_tensor_i64(c, lt, &lens, &n));
    tsr_status *st = NULL;
    if (n != (size_t)x->dims[ba]) {
        st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "sequence_lens has %zu entries for batch %lld",
                     n, (long long)x->dims[ba]);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        if (lens[i] < 0 || lens[i] > x->dims[ta]) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "sequence_lens[%zu] is out of range", i);
            goto done;
        }
    }
    if ((st = out_new(c, 0, x->elem_type, x->rank, x->dims, &y))) goto done;
    ref_strides(x->rank, x->dims, str);
    uint64_t total = ref_numel(x);
    for (uint64_t i = 0; i < total && !st; i++) {
        /* Within a sequence's length, time t reads from len-1-t. */
        int64_t t = pos[ta], len = lens[pos[ba]];
        int64_t src = (int64_t)i + (t < len ? (len - 1 - 2 * t) * str[ta] : 0);
        st = mv_copy(c, y, i, x, (uint64_t)src, 1);
        for (int32_t d = x->rank - 1; d >= 0; d--) {
            if (++pos[d] < x->dims[d]) break;
            pos[d] = 0;
        }
    }
done:
    free(lens);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Unique                                                                    */

/* Orders element i of a against element j of b (same type): numbers by
 * value, strings bytewise. */
static int elem_cmp(const tsr_tensor *a, uint64_t i, const tsr_tensor *b, uint64_t j) {
    int32_t t = a->elem_type;
    if (t == TSR_STRING) {
        const tsr_string *x = (const tsr_string *)a->data + i, *y = (const tsr_string *)b->data + j;
        size_t m = x->size < y->size ? x->size : y->size;
        int r = m ? memcmp(x->data, y->data, m) : 0;
        return r ? r : (x->size > y->size) - (x->size < y->size);
    }
    if (ref_is_float(t)) {
        double x = ref_load(t, a->data, (size_t)i), y = ref_load(t, b->data, (size_t)j);
        return (x > y) - (x < y);
    }
    if (t == TSR_UINT64) {
        uint64_t x = ((const uint64_t *)a->data)[i], y = ((const uint64_t *)b->data)[j];
        return (x > y) - (x < y);
    }
    if (ref_is_int(t) || t == TSR_BOOL) {
        int64_t x = ref_load_i64(t, a->data, (size_t)i), y = ref_load_i64(t, b->data, (size_t)j);
        return (x > y) - (x < y);
    }
    /* Other types: raw bits give a consistent order for equality grouping. */
    unsigned bits = type_bits(t);
    if (bits < 8) {
        uint8_t x = get_bits(a->data, i, bits), y = get_bits(b->data, j, bits);
        return (x > y) - (x < y);
    }
    size_t es = bits / 8;
    return memcmp((const char *)a->data + i * es, (const char *)b->data + j * es, es);
}

/* The slices Unique compares: `count` slices along an axis, each made of
 * `outer` runs of `inner` elements `stride` apart. */
typedef struct slices {
    const tsr_tensor *x;
    int64_t count, outer, inner, stride;
} slices;

static int slice_cmp(const slices *s, int64_t p, int64_t q) {
    for (int64_t o = 0; o < s->outer; o++) {
        for (int64_t i = 0; i < s->inner; i++) {
            int64_t base = o * s->stride + i;
            int r = elem_cmp(s->x, (uint64_t)(base + p * s->inner), s->x,
                             (uint64_t)(base + q * s->inner));
            if (r) return r;
        }
    }
    return 0;
}

/* Stable merge sort of slice numbers, so equal slices keep input order and
 * the first of each run is the first occurrence. */
static void slice_sort(const slices *s, int64_t *v, int64_t *tmp, int64_t n) {
    if (n < 2) return;
    int64_t h = n / 2;
    slice_sort(s, v, tmp, h);
    slice_sort(s, v + h, tmp, n - h);
    int64_t i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = slice_cmp(s, v[j], v[i]) < 0 ? v[j++] : v[i++];
    while (i < h) tmp[k++] = v[i++];
    while (j < n) tmp[k++] = v[j++];
    memcpy(v, tmp, sizeof(int64_t) * (size_t)n);
}

static tsr_status *ref_tensor_unique(ref_ctx *c) {
    const tsr_tensor *x;
    tsr_tensor *y, *o_idx, *o_inv, *o_cnt;
    int64_t axis = 0, dims[REF_MAX_RANK];
    TRY(need_in(c, 0, &x));
    bool flat = !ref_attr_has(c, "axis");
    bool sorted = ref_attr_int(c, "sorted", 1) != 0;
    slices s = {x, 0, 1, 1, 0};
    if (flat) {
        s.count = (int64_t)ref_numel(x);
    } else {
        int64_t a = ref_attr_int(c, "axis", 0);
        if (x->rank == 0 || !ref_axis(a, x->rank, &axis))
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
                           (long long)a, (int)x->rank);
        s.count = x->dims[axis];
        s.outer = dims_prod(x->dims, 0, (int32_t)axis);
        s.inner = dims_prod(x->dims, (int32_t)axis + 1, x->rank);
        s.stride = s.count * s.inner;
    }
    int64_t n = s.count;
    /* order: slices sorted (stably); group: each slice's unique number in
     * order of first occurrence; first: first occurrence of each unique. */
    int64_t *order = malloc(sizeof(int64_t) * (size_t)(3 * n + 1));
    int64_t *buf = malloc(sizeof(int64_t) * (size_t)(3 * n + 1));
    if (!order || !buf) {
        free(order);
        free(buf);
        return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    }
    int64_t *tmp = buf, *group = order + n, *first = order + 2 * n;
    int64_t *counts = buf + n, *rank_of = buf + 2 * n;
    for (int64_t i = 0; i < n; i++) order[i] = i;
    slice_sort(&s, order, tmp, n);
    /* Runs of equal slices in sorted order; the first of a run is the
     * earliest occurrence thanks to the stable sort. */
    int64_t u = 0;
    for (int64_t k = 0; k < n; k++) {
        if (k == 0 || slice_cmp(&s, order[k - 1], order[k]) != 0) first[u++] = order[k];
        group[order[k]] = u - 1; /* run number, in sorted order */
    }
    /* Output position of each run: sorted order, or by first occurrence. */
    if (sorted) {
        for (int64_t g = 0; g < u; g++) rank_of[g] = g;
    } else {
        /* Walk the input; a run's position is when it first appears. */
        int64_t next = 0;
        for (int64_t g = 0; g < u; g++) rank_of[g] = -1;
        for (int64_t i = 0; i < n; i++)
            if (rank_of[group[i]] < 0) rank_of[group[i]] = next++;
    }
    tsr_status *st = NULL;
    int64_t *pos_first = tmp; /* reuse: output position -> first occurrence */
    for (int64_t g = 0; g < u; g++) pos_first[rank_of[g]] = first[g];
    for (int64_t p = 0; p < u; p++) counts[p] = 0;
    for (int64_t i = 0; i < n; i++) counts[rank_of[group[i]]]++;
    int32_t r = flat ? 1 : x->rank;
    if (flat) dims[0] = u;
    else {
        memcpy(dims, x->dims, sizeof(int64_t) * (size_t)r);
        dims[axis] = u;
    }
    if ((st = out_new(c, 0, x->elem_type, r, dims, &y))) goto done;
    for (int64_t p = 0; p < u && !st; p++)
        for (int64_t o = 0; o < s.outer && !st; o++)
            st = mv_copy(c, y, (uint64_t)((o * u + p) * s.inner), x,
                         (uint64_t)(o * s.stride + pos_first[p] * s.inner), (uint64_t)s.inner);
    if (st) goto done;
    if ((st = out_new(c, 1, TSR_INT64, 1, &u, &o_idx))) goto done;
    if ((st = out_new(c, 2, TSR_INT64, 1, &n, &o_inv))) goto done;
    if ((st = out_new(c, 3, TSR_INT64, 1, &u, &o_cnt))) goto done;
    for (int64_t p = 0; p < u; p++) {
        ((int64_t *)o_idx->data)[p] = pos_first[p];
        ((int64_t *)o_cnt->data)[p] = counts[p];
    }
    for (int64_t i = 0; i < n; i++) ((int64_t *)o_inv->data)[i] = rank_of[group[i]];
done:
    free(order);
    free(buf);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Claim-time checks: decline, with a reason the user sees, what a kernel
 * would refuse at run time anyway. Unknown types (0) are accepted. */

static int32_t in_type(const tsr_host_api *h, const tsr_node *n, size_t i) {
    const tsr_value_info *v = i < h->node_input_count(n) ? h->node_input(n, i) : NULL;
    return v ? h->value_elem_type(v) : 0;
}

/* Input 0 holds elements this file can move. */
static int check_movable(const tsr_host_api *h, const tsr_node *n, char *why, size_t size) {
    int32_t t = in_type(h, n, 0);
    if (t != 0 && type_bits(t) == 0) {
        snprintf(why, size, "element type %d is not supported", (int)t);
        return TSR_DECLINE_TYPE;
    }
    return 0;
}

/* Input 0 is a number (CumSum, CumProd, Range compute with it). */
static int check_numeric(const tsr_host_api *h, const tsr_node *n, char *why, size_t size) {
    int32_t t = in_type(h, n, 0);
    if (t != 0 && !ref_is_float(t) && !ref_is_int(t)) {
        snprintf(why, size, "element type %d is not numeric", (int)t);
        return TSR_DECLINE_TYPE;
    }
    return 0;
}

/* A reduction needs numbers; plain scatter moves anything. */
static int check_scatter(const tsr_host_api *h, const tsr_node *n, char *why, size_t size) {
    const tsr_attr *a = h->node_attr_find(n, "reduction");
    int32_t t = in_type(h, n, 0);
    size_t len = 0;
    const char *red = a ? h->attr_string(a, &len) : NULL;
    if (red && !(len == 4 && memcmp(red, "none", 4) == 0) && t != 0 && !ref_is_float(t) &&
        !ref_is_int(t) && t != TSR_BOOL) {
        snprintf(why, size, "reduction on element type %d", (int)t);
        return TSR_DECLINE_TYPE;
    }
    return check_movable(h, n, why, size);
}

static int check_constant(const tsr_host_api *h, const tsr_node *n, char *why, size_t size) {
    if (h->node_attr_find(n, "sparse_value")) {
        snprintf(why, size, "sparse_value is not supported");
        return TSR_DECLINE_ATTRIBUTE;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */

const ref_op ref_ops_tensor[] = {
    {"", "Identity", 1, ref_tensor_identity, check_movable},
    {"", "Reshape", 1, ref_tensor_reshape, check_movable},
    {"", "Flatten", 1, ref_tensor_flatten, check_movable},
    {"", "Squeeze", 1, ref_tensor_squeeze, check_movable},
    {"", "Unsqueeze", 1, ref_tensor_unsqueeze, check_movable},
    {"", "Shape", 1, ref_tensor_shape, NULL},
    {"", "Size", 1, ref_tensor_size, NULL},
    {"", "Transpose", 1, ref_tensor_transpose, check_movable},
    {"", "DepthToSpace", 1, ref_tensor_depth_to_space, check_movable},
    {"", "SpaceToDepth", 1, ref_tensor_space_to_depth, check_movable},
    {"", "Concat", 1, ref_tensor_concat, check_movable},
    {"", "Split", 1, ref_tensor_split, check_movable},
    {"", "Slice", 1, ref_tensor_slice, check_movable},
    {"", "Expand", 8, ref_tensor_expand, check_movable},
    {"", "Tile", 1, ref_tensor_tile, check_movable},
    {"", "Pad", 1, ref_tensor_pad, check_movable},
    {"", "Gather", 1, ref_tensor_gather, check_movable},
    {"", "GatherElements", 11, ref_tensor_gather_elements, check_movable},
    {"", "GatherND", 11, ref_tensor_gather_nd, check_movable},
    {"", "Scatter", 9, ref_tensor_scatter_elements, check_scatter},
    {"", "ScatterElements", 11, ref_tensor_scatter_elements, check_scatter},
    {"", "ScatterND", 11, ref_tensor_scatter_nd, check_scatter},
    {"", "Constant", 1, ref_tensor_constant, check_constant},
    {"", "ConstantOfShape", 9, ref_tensor_constant_of_shape, NULL},
    {"", "EyeLike", 9, ref_tensor_eye_like, check_movable},
    {"", "Range", 11, ref_tensor_range, check_numeric},
    {"", "OneHot", 9, ref_tensor_one_hot, check_movable},
    {"", "Trilu", 14, ref_tensor_trilu, check_movable},
    {"", "CumSum", 11, ref_tensor_cumsum, check_numeric},
    {"", "CumProd", 26, ref_tensor_cumprod, check_numeric},
    {"", "CenterCropPad", 18, ref_tensor_center_crop_pad, check_movable},
    {"", "TensorScatter", 24, ref_tensor_tensor_scatter, check_movable},
    {"", "Unique", 11, ref_tensor_unique, check_movable},
    {"", "NonZero", 9, ref_tensor_nonzero, check_movable},
    {"", "Compress", 9, ref_tensor_compress, check_movable},
    {"", "ReverseSequence", 10, ref_tensor_reverse_sequence, check_movable},
    {"ai.onnx.ml", "ArrayFeatureExtractor", 1, ref_tensor_array_feature_extractor, check_movable},
    {NULL, NULL, 0, NULL, NULL},
};
