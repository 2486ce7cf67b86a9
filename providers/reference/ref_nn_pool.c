/*
 * Pooling for the reference provider: MaxPool (with Indices), AveragePool,
 * LpPool and their Global forms, any number of spatial dimensions.
 *
 * All of them compute in double, one (batch, channel) plane at a time, which
 * is exact for the integer types MaxPool accepts and more than precise
 * enough for the float ones. A window is the product, per axis, of the kernel taps
 * that land inside the input; padding never contributes a value.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_nn.h"

typedef enum { POOL_MAX, POOL_AVG, POOL_LP } pool_kind;

typedef struct pool_geom {
    int nsp;
    int64_t planes; /* batch * channels */
    int64_t in[REF_MAX_RANK], out[REF_MAX_RANK], k[REF_MAX_RANK];
    int64_t s[REF_MAX_RANK], d[REF_MAX_RANK], pb[REF_MAX_RANK], pe[REF_MAX_RANK];
    int64_t insz, outsz;
} pool_geom;

/* Taps between two looks at whether the run was cancelled: a window that
 * covers a whole large input for every output is within every limit. */
#define POOL_TAPS_PER_CHECK ((int64_t)1 << 20)

/*
 * Pools one plane. For MaxPool, idx (when not NULL) receives the flat index
 * of each maximum within the plane, row-major, or column-major over the
 * spatial axes when col_major (storage_order 1). False when the run was
 * cancelled part way.
 */
static bool pool_plane(ref_ctx *c, const pool_geom *g, pool_kind kind, bool include_pad, double p, const double *x,
                       double *y, int64_t *idx, bool col_major) {
    int64_t taps = 0;
    int nsp = g->nsp;
    int64_t o[REF_MAX_RANK] = {0}, lo[REF_MAX_RANK], hi[REF_MAX_RANK], t[REF_MAX_RANK];
    int64_t istr[REF_MAX_RANK], cstr[REF_MAX_RANK];
    istr[nsp - 1] = 1;
    for (int d = nsp - 2; d >= 0; d--) istr[d] = istr[d + 1] * g->in[d + 1];
    cstr[0] = 1;
    for (int d = 1; d < nsp; d++) cstr[d] = cstr[d - 1] * g->in[d - 1];
    for (int64_t j = 0; j < g->outsz; j++) {
        int64_t count = 1, padcount = 1;
        bool empty = false;
        for (int d = 0; d < nsp; d++) {
            int64_t start = o[d] * g->s[d] - g->pb[d];
            ref_nn_inside_range(g->k[d], g->d[d], start, g->in[d], &lo[d], &hi[d]);
            if (hi[d] <= lo[d]) empty = true;
            count *= hi[d] - lo[d];
            if (include_pad) {
                /* count_include_pad counts taps on the padding too, but not
                 * those past it (ceil_mode can put a window there). */
                int64_t plo, phi;
                ref_nn_inside_range(g->k[d], g->d[d], start + g->pb[d], g->in[d] + g->pb[d] + g->pe[d], &plo, &phi);
                padcount *= phi - plo;
            }
        }
        double acc = kind == POOL_MAX ? -INFINITY : 0.0;
        int64_t best = -1;
        if (!empty) {
            for (int d = 0; d < nsp; d++) t[d] = lo[d];
            for (;;) {
                int64_t off = 0;
                for (int d = 0; d < nsp; d++) off += (o[d] * g->s[d] - g->pb[d] + t[d] * g->d[d]) * istr[d];
                double v = x[off];
                if (kind == POOL_MAX) {
                    if (v > acc || best < 0) {
                        acc = v;
                        best = off;
                    }
                } else if (kind == POOL_AVG) {
                    acc += v;
                } else {
                    acc += pow(fabs(v), p);
                }
                int d = nsp - 1;
                while (d >= 0 && ++t[d] >= hi[d]) {
                    t[d] = lo[d];
                    d--;
                }
                if (d < 0) break;
            }
        }
        taps += count;
        if (taps > POOL_TAPS_PER_CHECK) {
            taps = 0;
            if (ref_should_stop(c)) return false;
        }
        int64_t divisor = include_pad ? padcount : count;
        if (kind == POOL_AVG) acc = divisor > 0 ? acc / (double)divisor : 0.0;
        else if (kind == POOL_LP) acc = pow(acc, 1.0 / p);
        else if (empty) acc = -DBL_MAX; /* a window wholly on padding: the lowest value */
        y[j] = acc;
        if (idx) {
            int64_t b = best < 0 ? 0 : best;
            if (col_major) {
                int64_t r = b, cm = 0;
                for (int d = nsp - 1; d >= 0; d--) {
                    cm += (r % g->in[d]) * cstr[d];
                    r /= g->in[d];
                }
                b = cm;
            }
            idx[j] = b;
        }
        for (int d = nsp - 1; d >= 0; d--) {
            if (++o[d] < g->out[d]) break;
            o[d] = 0;
        }
    }
    return true;
}

/* Bound on kernel sizes, strides, dilations and pads: far beyond any real
 * model, and small enough that window extents and offsets (with dims
 * < 2^56) cannot overflow int64. */
#define POOL_MAX_ATTR ((int64_t)1 << 31)

/* An INTS attribute of exactly `n` entries, each in [-POOL_MAX_ATTR,
 * POOL_MAX_ATTR] (read_geom checks the lower bounds), or `dflt`. */
static tsr_status *ints_attr(ref_ctx *c, const char *name, size_t n, int64_t dflt, int64_t *out) {
    const int64_t *v;
    size_t cnt = ref_attr_ints(c, name, &v);
    if (cnt == 0) {
        for (size_t i = 0; i < n; i++) out[i] = dflt;
        return NULL;
    }
    if (cnt != n)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "attribute %s has %zu values, expected %zu", name, cnt, n);
    for (size_t i = 0; i < n; i++)
        if (v[i] < -POOL_MAX_ATTR || v[i] > POOL_MAX_ATTR)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "attribute %s value %lld is out of range", name,
                           (long long)v[i]);
    memcpy(out, v, n * sizeof *out);
    return NULL;
}

/* Reads kernel, strides, dilations, pads, auto_pad and ceil_mode and works
 * out the output size. */
static tsr_status *read_geom(ref_ctx *c, const tsr_tensor *X, pool_geom *g) {
    if (X->rank < 3) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input must have rank >= 3, not %d", (int)X->rank);
    int nsp = g->nsp = X->rank - 2;
    g->planes = X->dims[0] * X->dims[1];
    int64_t pads[2 * REF_MAX_RANK];
    tsr_status *st;
    if (!ref_attr_has(c, "kernel_shape")) return ref_err(c, TSR_ERR_INVALID_MODEL, "kernel_shape is required");
    if ((st = ints_attr(c, "kernel_shape", (size_t)nsp, 1, g->k)) ||
        (st = ints_attr(c, "strides", (size_t)nsp, 1, g->s)) ||
        (st = ints_attr(c, "dilations", (size_t)nsp, 1, g->d)) || (st = ints_attr(c, "pads", 2 * (size_t)nsp, 0, pads)))
        return st;
    bool ceil_mode = ref_attr_int(c, "ceil_mode", 0) != 0;
    const char *ap = ref_attr_str(c, "auto_pad", "NOTSET");
    bool same_upper = !strcmp(ap, "SAME_UPPER"), same_lower = !strcmp(ap, "SAME_LOWER");
    bool valid = !strcmp(ap, "VALID");
    if (!same_upper && !same_lower && !valid && strcmp(ap, "NOTSET") && *ap)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "unknown auto_pad '%s'", ap);
    g->insz = g->outsz = 1;
    for (int d = 0; d < nsp; d++) {
        if (g->k[d] < 1 || g->s[d] < 1 || g->d[d] < 1)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "kernel_shape, strides and dilations must be >= 1");
        int64_t in = g->in[d] = X->dims[2 + d];
        int64_t ext = (g->k[d] - 1) * g->d[d] + 1;
        g->pb[d] = pads[d];
        g->pe[d] = pads[nsp + d];
        if (same_upper || same_lower) {
            g->out[d] = (in + g->s[d] - 1) / g->s[d];
            int64_t total = (g->out[d] - 1) * g->s[d] + ext - in;
            if (total < 0) total = 0;
            g->pb[d] = same_upper ? total / 2 : total - total / 2;
            g->pe[d] = total - g->pb[d];
        } else {
            if (valid) g->pb[d] = g->pe[d] = 0;
            int64_t span = in + g->pb[d] + g->pe[d] - ext;
            if (span < 0) {
                g->out[d] = 0;
            } else {
                g->out[d] = (ceil_mode ? (span + g->s[d] - 1) / g->s[d] : span / g->s[d]) + 1;
                /* ceil_mode may not start a window on the end padding
                 * (PyTorch's rule, which the ONNX reference follows). */
                if (ceil_mode && (g->out[d] - 1) * g->s[d] >= in + g->pb[d]) g->out[d]--;
            }
        }
        /* an empty X may still have huge dims whose product overflows */
        if (__builtin_mul_overflow(g->insz, in, &g->insz) || __builtin_mul_overflow(g->outsz, g->out[d], &g->outsz))
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "the input or output has too many elements");
    }
    return NULL;
}

/* The whole spatial extent as the window: the Global* operators. */
static tsr_status *global_geom(ref_ctx *c, const tsr_tensor *X, pool_geom *g) {
    if (X->rank < 3) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input must have rank >= 3, not %d", (int)X->rank);
    g->nsp = X->rank - 2;
    g->planes = X->dims[0] * X->dims[1];
    g->insz = 1;
    g->outsz = 1;
    for (int d = 0; d < g->nsp; d++) {
        g->in[d] = g->k[d] = X->dims[2 + d];
        g->out[d] = 1;
        g->s[d] = g->d[d] = 1;
        g->pb[d] = g->pe[d] = 0;
        g->insz *= g->in[d];
    }
    return NULL;
}

static tsr_status *pool_run(ref_ctx *c, bool global, pool_kind kind) {
    const tsr_tensor *X = ref_in(c, 0);
    if (!X) return ref_err(c, TSR_ERR_INVALID_MODEL, "missing input X");
    pool_geom g;
    tsr_status *st = global ? global_geom(c, X, &g) : read_geom(c, X, &g);
    if (st) return st;
    bool include_pad = kind == POOL_AVG && ref_attr_int(c, "count_include_pad", 0) != 0;
    double p = 2.0;
    if (kind == POOL_LP) {
        /* LpPool-1 had p as a float; later versions as an int. */
        p = ref_opset(c) < 2 ? ref_attr_float(c, "p", 2.0f) : (double)ref_attr_int(c, "p", 2);
        if (!(p > 0)) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "p must be positive");
    }
    int64_t od[REF_MAX_RANK];
    od[0] = X->dims[0];
    od[1] = X->dims[1];
    for (int d = 0; d < g.nsp; d++) od[2 + d] = g.out[d];
    tsr_tensor *Y, *I = NULL;
    if ((st = ref_out(c, 0, X->elem_type, X->rank, od, &Y))) return st;
    bool want_idx = kind == POOL_MAX && ref_out_wanted(c, 1);
    if (want_idx && (st = ref_out(c, 1, TSR_INT64, X->rank, od, &I))) return st;
    size_t ytotal = (size_t)(g.planes * g.outsz);
    if (ytotal == 0) return NULL;
    bool col_major = ref_attr_int(c, "storage_order", 0) != 0;
    double *x = malloc((size_t)(g.insz ? g.insz : 1) * sizeof *x);
    double *y = malloc((size_t)g.outsz * sizeof *y);
    if (!x || !y) {
        free(x);
        free(y);
        return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    }
    int64_t *idx = I ? I->data : NULL;
    for (int64_t pl = 0; pl < g.planes; pl++) {
        ref_nn_get_f64(X, (size_t)(pl * g.insz), (size_t)g.insz, x);
        if (!pool_plane(c, &g, kind, include_pad, p, x, y, idx ? idx + pl * g.outsz : NULL, col_major)) {
            free(x);
            free(y);
            return ref_stopped(c);
        }
        ref_put_f64(Y, (size_t)(pl * g.outsz), (size_t)g.outsz, y);
        /* Indices count from the start of the whole tensor. */
        if (idx)
            for (int64_t j = 0; j < g.outsz; j++) idx[pl * g.outsz + j] += pl * g.insz;
    }
    free(x);
    free(y);
    return NULL;
}

tsr_status *ref_nn_maxpool(ref_ctx *c) { return pool_run(c, false, POOL_MAX); }
tsr_status *ref_nn_avgpool(ref_ctx *c) { return pool_run(c, false, POOL_AVG); }
tsr_status *ref_nn_lppool(ref_ctx *c) { return pool_run(c, false, POOL_LP); }
tsr_status *ref_nn_global_maxpool(ref_ctx *c) { return pool_run(c, true, POOL_MAX); }
tsr_status *ref_nn_global_avgpool(ref_ctx *c) { return pool_run(c, true, POOL_AVG); }
tsr_status *ref_nn_global_lppool(ref_ctx *c) { return pool_run(c, true, POOL_LP); }

int ref_nn_check_pool(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size) {
    const char *op = host->node_op_type(node);
    const tsr_value_info *x = host->node_input_count(node) > 0 ? host->node_input(node, 0) : NULL;
    int32_t t = x ? host->value_elem_type(x) : 0;
    bool ok = t == 0 || ref_is_float(t) || (!strcmp(op, "MaxPool") && (t == TSR_INT8 || t == TSR_UINT8));
    if (!ok) {
        snprintf(why, why_size, "%s of element type %d is not implemented", op, (int)t);
        return TSR_DECLINE_TYPE;
    }
    int32_t r = x ? host->value_rank(x) : -1;
    if (r >= 0 && r < 3) {
        snprintf(why, why_size, "%s needs an input of rank >= 3", op);
        return TSR_DECLINE_SHAPE;
    }
    return 0;
}
