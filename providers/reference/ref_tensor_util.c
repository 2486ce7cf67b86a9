/*
 * What the tensor family's kernels share (ref_tensor.h): moving elements of
 * any type, strings and packed sub-byte types included, the view engine
 * that every pure data-movement kernel is a table for, and the claim-time
 * checks the table in ref_ops_tensor.c names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_tensor.h"

/* ------------------------------------------------------------------------ */
/* Elements                                                                  */

/* Copies n consecutive elements src[si..] to dst[di..]; both of dst's type. */
tsr_status *ref_tensor_mv_copy(ref_ctx *c, tsr_tensor *dst, uint64_t di, const tsr_tensor *src, uint64_t si,
                               uint64_t n) {
    int32_t t = dst->elem_type;
    if (n == 0) return NULL;
    if (t == TSR_STRING) {
        /* The host owns string bytes; it copies them into the output. */
        const tsr_string *s = (const tsr_string *)src->data + si;
        for (uint64_t k = 0; k < n; k++) {
            tsr_status *st = c->host->tensor_set_string(dst, (size_t)(di + k), s[k].data, s[k].size);
            if (st) return st;
        }
        return NULL;
    }
    unsigned bits = ref_tensor_type_bits(t);
    if (bits < 8) {
        for (uint64_t k = 0; k < n; k++)
            ref_tensor_put_bits(dst->data, di + k, bits, ref_tensor_get_bits(src->data, si + k, bits));
        return NULL;
    }
    size_t es = bits / 8;
    memcpy((char *)dst->data + di * es, (const char *)src->data + si * es, (size_t)n * es);
    return NULL;
}

/* n copies of the es-byte element at p from d on: typed stores for the
 * common sizes (memcpy of a constant size is one store; it keeps an
 * unaligned source legal), doubling copies for the others. */
static void fill_bytes(char *d, const char *p, size_t es, uint64_t n) {
    switch (es) {
    case 1: memset(d, *(const unsigned char *)p, (size_t)n); return;
    case 2: {
        uint16_t v;
        memcpy(&v, p, 2);
        for (uint64_t k = 0; k < n; k++) memcpy(d + k * 2, &v, 2);
        return;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, p, 4);
        for (uint64_t k = 0; k < n; k++) memcpy(d + k * 4, &v, 4);
        return;
    }
    case 8: {
        uint64_t v;
        memcpy(&v, p, 8);
        for (uint64_t k = 0; k < n; k++) memcpy(d + k * 8, &v, 8);
        return;
    }
    default: {
        if (n == 0) return;
        memcpy(d, p, es);
        size_t done = es, total = (size_t)n * es;
        while (done < total) {
            size_t m = done < total - done ? done : total - done;
            memcpy(d + done, d, m);
            done += m;
        }
    }
    }
}

/* Writes src[si] into dst[di..di+n); both of dst's type. */
static tsr_status *fill_from(ref_ctx *c, tsr_tensor *dst, uint64_t di, const tsr_tensor *src, uint64_t si, uint64_t n) {
    int32_t t = dst->elem_type;
    unsigned bits = t == TSR_STRING ? 0 : ref_tensor_type_bits(t);
    if (bits < 8) {
        /* strings (the host copies their bytes) and packed sub-byte types */
        for (uint64_t k = 0; k < n; k++) TSR_TRY(ref_tensor_mv_copy(c, dst, di + k, src, si, 1));
        return NULL;
    }
    size_t es = bits / 8;
    fill_bytes((char *)dst->data + di * es, (const char *)src->data + si * es, es, n);
    return NULL;
}

/* Writes element 0 of `val` into dst[di..di+n). */
tsr_status *ref_tensor_mv_fill(ref_ctx *c, tsr_tensor *dst, uint64_t di, const tsr_tensor *val, uint64_t n) {
    return fill_from(c, dst, di, val, 0, n);
}

/* Zero of type t: all-zero bits are 0 for every numeric type and an empty
 * string for strings. */
const tsr_tensor *ref_tensor_scalar_zero(scalar *s, int32_t t) {
    memset(s, 0, sizeof *s);
    s->t.struct_size = sizeof s->t;
    s->t.elem_type = t;
    s->t.data = &s->u;
    s->t.nbytes = sizeof s->u;
    s->t.memory_kind = TSR_MEMORY_HOST;
    return &s->t;
}

/* Allocates output i; packed outputs are zeroed so the padding bits of a
 * last partial byte are deterministic (ref_tensor_put_bits only touches its own). */
tsr_status *ref_tensor_out_new(ref_ctx *c, size_t i, int32_t t, int32_t rank, const int64_t *dims, tsr_tensor **out) {
    TSR_TRY(ref_out(c, i, t, rank, dims, out));
    if (t != TSR_STRING && ref_tensor_type_bits(t) < 8 && (*out)->nbytes) memset((*out)->data, 0, (*out)->nbytes);
    return NULL;
}

/* Input i, which must be present and of a type ref_tensor_mv_copy can move. */
tsr_status *ref_tensor_need_in(ref_ctx *c, size_t i, const tsr_tensor **out) {
    const tsr_tensor *t = ref_in(c, i);
    *out = t; /* set on every path, so callers' compilers see it initialised */
    if (!t) return ref_err(c, TSR_ERR_INVALID_MODEL, "input %zu is missing", i);
    if (ref_tensor_type_bits(t->elem_type) == 0)
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d is not supported", (int)t->elem_type);
    if (t->rank > REF_MAX_RANK)
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "rank %d is above %d", (int)t->rank, REF_MAX_RANK);
    return NULL;
}

tsr_status *ref_tensor_copy_all(ref_ctx *c, tsr_tensor *dst, const tsr_tensor *src) {
    return ref_tensor_mv_copy(c, dst, 0, src, 0, ref_numel(src));
}

/* An integer list that was an attribute before opset `input_opset` and an
 * input from then on. *have says whether it was given; the caller frees *out. */
tsr_status *ref_tensor_ints_arg(ref_ctx *c, const char *attr, size_t input, int64_t input_opset, int64_t **out,
                                size_t *n, bool *have) {
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
tsr_status *ref_tensor_norm_axes(ref_ctx *c, int64_t *axes, size_t n, int32_t rank) {
    for (size_t i = 0; i < n; i++) {
        if (!ref_axis(axes[i], rank, &axes[i]) || rank == 0)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is out of range for rank %d", (long long)axes[i],
                           (int)rank);
        for (size_t j = 0; j < i; j++)
            if (axes[j] == axes[i])
                return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is repeated", (long long)axes[i]);
    }
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* The view engine                                                           */

/* Allocates the offset tables. Call only for a non-empty output: every dim
 * is then at least 1 and their sum is at most the element count. */
tsr_status *ref_tensor_view_init(ref_ctx *c, view *v, int32_t rank, const int64_t *dims) {
    size_t total = 0;
    if (rank > REF_MAX_RANK) return ref_err(c, TSR_ERR_NOT_SUPPORTED, "rank %d is too large", (int)rank);
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
void ref_tensor_view_linear(view *v, int32_t a, int64_t base, int64_t stride) {
    for (int64_t i = 0; i < v->dims[a]; i++) v->off[a][i] = base + i * stride;
}

/* dst (contiguous, v's element count) = src gathered through v. `fill` may be
 * NULL when no table holds MISSING. */
static tsr_status *view_run(ref_ctx *c, const view *v, tsr_tensor *dst, const tsr_tensor *src, const tsr_tensor *fill) {
    int32_t r = v->rank;
    if (r == 0) return ref_tensor_mv_copy(c, dst, 0, src, 0, 1);
    int64_t inner = v->dims[r - 1];
    const int64_t *last = v->off[r - 1];
    /* When the innermost axis reads consecutive elements, copy whole rows;
     * when it reads one element throughout (a broadcast of the last axis,
     * Expand of [.., 1]), fill each row with it. */
    bool rows = true, same = inner > 1;
    for (int64_t k = 0; k < inner && rows; k++)
        if (last[k] == MISSING || last[k] != last[0] + k) rows = false;
    for (int64_t k = 0; k < inner && same; k++)
        if (last[k] == MISSING || last[k] != last[0]) same = false;
    int64_t idx[REF_MAX_RANK];
    memset(idx, 0, sizeof idx);
    uint64_t total = ref_tensor_dims_count(r, v->dims);
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
            TSR_TRY(ref_tensor_mv_fill(c, dst, d, fill, (uint64_t)inner));
        } else if (rows) {
            TSR_TRY(ref_tensor_mv_copy(c, dst, d, src, (uint64_t)(base + last[0]), (uint64_t)inner));
        } else if (same) {
            TSR_TRY(fill_from(c, dst, d, src, (uint64_t)(base + last[0]), (uint64_t)inner));
        } else {
            /* runs of consecutive source elements as one copy each (a Tile
             * along the last axis repeats the whole row: two runs, not one
             * call per element) */
            for (int64_t k = 0; k < inner;) {
                if (last[k] == MISSING) {
                    TSR_TRY(ref_tensor_mv_copy(c, dst, d + (uint64_t)k, fill, 0, 1));
                    k++;
                    continue;
                }
                int64_t run = 1;
                while (k + run < inner && last[k + run] != MISSING && last[k + run] == last[k] + run) run++;
                TSR_TRY(ref_tensor_mv_copy(c, dst, d + (uint64_t)k, src, (uint64_t)(base + last[k]), (uint64_t)run));
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

tsr_status *ref_tensor_view_run_free(ref_ctx *c, view *v, tsr_tensor *dst, const tsr_tensor *src,
                                     const tsr_tensor *fill) {
    tsr_status *st = view_run(c, v, dst, src, fill);
    free(v->mem);
    return st;
}

/* Shared by GatherND and ScatterND: the data offset each index tuple of
 * `ind` (last axis k) selects, as tuple count *nt, slice size *slice. Batch
 * dims (GatherND) make the first b axes of data and indices correspond. */
tsr_status *ref_tensor_nd_offsets(ref_ctx *c, const tsr_tensor *x, const tsr_tensor *ind, int64_t b, int64_t **offs,
                                  int64_t *nt, int64_t *slice) {
    int64_t *idx, str[REF_MAX_RANK];
    size_t n;
    *offs = NULL;
    *nt = *slice = 0;
    if (ind->rank < 1) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "indices must have rank >= 1");
    int64_t k = ind->dims[ind->rank - 1];
    if (b < 0 || b >= ind->rank || b >= x->rank || k < 0 || b + k > x->rank)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "indices do not fit the data's rank");
    for (int64_t d = 0; d < b; d++)
        if (ind->dims[d] != x->dims[d]) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "batch dims differ");
    TSR_TRY(ref_tensor_i64(c, ind, &idx, &n));
    ref_strides(x->rank, x->dims, str);
    int64_t tuples = ref_tensor_dims_prod(ind->dims, 0, ind->rank - 1);
    int64_t per_batch = ref_tensor_dims_prod(ind->dims, (int32_t)b, ind->rank - 1);
    int64_t batch_size = ref_tensor_dims_prod(x->dims, (int32_t)b, x->rank);
    *slice = ref_tensor_dims_prod(x->dims, (int32_t)(b + k), x->rank);
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
            if (!ref_tensor_wrap_index(idx[t * k + j], d, &v)) {
                int64_t bad = idx[t * k + j];
                free(idx);
                free(o);
                return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "index %lld is out of range for axis of %lld",
                               (long long)bad, (long long)d);
            }
            off += v * str[b + j];
        }
        o[t] = off;
    }
    free(idx);
    *offs = o;
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Claim-time checks: decline, with a reason the user sees, what a kernel
 * would refuse at run time anyway. Unknown types (0) are accepted. */

static int32_t in_type(const tsr_host_api *h, const tsr_node *n, size_t i) {
    const tsr_value_info *v = i < h->node_input_count(n) ? h->node_input(n, i) : NULL;
    return v ? h->value_elem_type(v) : 0;
}

/* Input 0 holds elements this family can move. */
int ref_tensor_check_movable(const tsr_host_api *h, const tsr_node *n, char *why, size_t size) {
    int32_t t = in_type(h, n, 0);
    if (t != 0 && ref_tensor_type_bits(t) == 0) {
        snprintf(why, size, "element type %d is not supported", (int)t);
        return TSR_DECLINE_TYPE;
    }
    return 0;
}

/* Input 0 is a number (CumSum, CumProd, Range compute with it). */
int ref_tensor_check_numeric(const tsr_host_api *h, const tsr_node *n, char *why, size_t size) {
    int32_t t = in_type(h, n, 0);
    if (t != 0 && !ref_is_float(t) && !ref_is_int(t)) {
        snprintf(why, size, "element type %d is not numeric", (int)t);
        return TSR_DECLINE_TYPE;
    }
    return 0;
}

/* A reduction needs numbers; plain scatter moves anything. */
int ref_tensor_check_scatter(const tsr_host_api *h, const tsr_node *n, char *why, size_t size) {
    const tsr_attr *a = h->node_attr_find(n, "reduction");
    int32_t t = in_type(h, n, 0);
    size_t len = 0;
    const char *red = a ? h->attr_string(a, &len) : NULL;
    if (red && !(len == 4 && memcmp(red, "none", 4) == 0) && t != 0 && !ref_is_float(t) && !ref_is_int(t) &&
        t != TSR_BOOL) {
        snprintf(why, size, "reduction on element type %d", (int)t);
        return TSR_DECLINE_TYPE;
    }
    return ref_tensor_check_movable(h, n, why, size);
}

int ref_tensor_check_constant(const tsr_host_api *h, const tsr_node *n, char *why, size_t size) {
    if (h->node_attr_find(n, "sparse_value")) {
        snprintf(why, size, "sparse_value is not supported");
        return TSR_DECLINE_ATTRIBUTE;
    }
    return 0;
}
