/*
 * ConvInteger and QLinearConv: a direct convolution, any number of spatial
 * axes, of the input and filter with their zero points taken off. Padding
 * is zero after that subtraction, i.e. the padded input equals its zero
 * point, as the operators define it.
 *
 * Values are doubles: 8-bit products and their sums stay exact integers.
 */
#include <stdlib.h>
#include <string.h>

#include "ref_quant.h"

/* Bounds for attribute values, so that extents and offsets cannot
 * overflow int64 arithmetic. */
#define QC_MAX_ATTR ((int64_t)1 << 31)

typedef struct qconv_geom {
    int nsp;                                 /* spatial axes */
    int64_t batch, cin, cout, group, cg, mg; /* cg, mg: channels per group */
    int64_t in[REF_MAX_RANK], out[REF_MAX_RANK], k[REF_MAX_RANK];
    int64_t s[REF_MAX_RANK], d[REF_MAX_RANK], pb[REF_MAX_RANK];
    uint64_t insz, outsz, ksz; /* products of in, out, k */
} qconv_geom;

/* An ints attribute with `n` values each in [lo, QC_MAX_ATTR], or `dflt`
 * everywhere when absent. */
static tsr_status *read_ints(ref_ctx *c, const char *name, size_t n, int64_t lo, int64_t dflt, int64_t *out) {
    const int64_t *v;
    size_t cnt = ref_attr_ints(c, name, &v);
    if (!v) {
        for (size_t i = 0; i < n; i++) out[i] = dflt;
        return NULL;
    }
    if (cnt != n)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "attribute %s has %zu values, expected %zu", name, cnt, n);
    for (size_t i = 0; i < n; i++) {
        if (v[i] < lo || v[i] > QC_MAX_ATTR)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "attribute %s value %lld is out of range", name,
                           (long long)v[i]);
        out[i] = v[i];
    }
    return NULL;
}

static tsr_status *qconv_geometry(ref_ctx *c, const tsr_tensor *x, const tsr_tensor *w, qconv_geom *g) {
    if (x->rank < 3 || w->rank != x->rank)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "x (rank %d) and w (rank %d) must have one rank of at least 3",
                       (int)x->rank, (int)w->rank);
    memset(g, 0, sizeof *g);
    int nsp = g->nsp = x->rank - 2;
    g->batch = x->dims[0];
    g->cin = x->dims[1];
    g->cout = w->dims[0];
    g->group = ref_attr_int(c, "group", 1);
    if (g->group < 1 || g->group > QC_MAX_ATTR)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "group %lld is out of range", (long long)g->group);
    if (g->cin % g->group != 0 || g->cout % g->group != 0)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "group %lld does not divide %lld input and %lld output channels",
                       (long long)g->group, (long long)g->cin, (long long)g->cout);
    g->cg = g->cin / g->group;
    g->mg = g->cout / g->group;
    if (w->dims[1] != g->cg)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "w has %lld input channels per group, x has %lld",
                       (long long)w->dims[1], (long long)g->cg);
    int64_t kshape[REF_MAX_RANK], pads[2 * REF_MAX_RANK];
    tsr_status *st = read_ints(c, "kernel_shape", (size_t)nsp, 0, 0, kshape);
    if (!st) st = read_ints(c, "strides", (size_t)nsp, 1, 1, g->s);
    if (!st) st = read_ints(c, "dilations", (size_t)nsp, 1, 1, g->d);
    if (!st) st = read_ints(c, "pads", 2 * (size_t)nsp, 0, 0, pads);
    if (st) return st;
    const char *auto_pad = ref_attr_str(c, "auto_pad", "NOTSET");
    bool same_upper = strcmp(auto_pad, "SAME_UPPER") == 0;
    bool same_lower = strcmp(auto_pad, "SAME_LOWER") == 0;
    bool valid = strcmp(auto_pad, "VALID") == 0;
    if (!same_upper && !same_lower && !valid && strcmp(auto_pad, "NOTSET") != 0)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "unknown auto_pad '%s'", auto_pad);
    bool have_kshape = ref_attr_has(c, "kernel_shape");
    g->insz = g->outsz = g->ksz = 1;
    for (int i = 0; i < nsp; i++) {
        int64_t in = x->dims[i + 2], k = w->dims[i + 2];
        if (have_kshape && kshape[i] != k)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                           "kernel_shape %lld differs from w's extent %lld on spatial axis %d", (long long)kshape[i],
                           (long long)k, i);
        if (k < 1) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "w has an empty spatial axis %d", i);
        if (k > QC_MAX_ATTR) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "kernel too large");
        int64_t ext = (k - 1) * g->d[i] + 1, pb = pads[i], pe = pads[i + nsp], out;
        if (same_upper || same_lower) {
            out = (in + g->s[i] - 1) / g->s[i];
            int64_t total = (out > 0 ? out - 1 : 0) * g->s[i] + ext - in;
            if (total < 0) total = 0;
            pb = same_upper ? total / 2 : total - total / 2;
        } else {
            if (valid) pb = pe = 0;
            int64_t span = in + pb + pe - ext;
            if (span < 0)
                return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                               "kernel extent %lld exceeds the padded input %lld on spatial "
                               "axis %d",
                               (long long)ext, (long long)(in + pb + pe), i);
            out = span / g->s[i] + 1;
        }
        g->in[i] = in;
        g->k[i] = k;
        g->pb[i] = pb;
        g->out[i] = out;
        g->insz *= (uint64_t)in;
        g->ksz *= (uint64_t)k;
        if (!rq_mul_size(g->outsz, (uint64_t)out, &g->outsz))
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "output too large");
    }
    uint64_t total;
    if (!rq_mul_size((uint64_t)g->batch, (uint64_t)g->cout, &total) || !rq_mul_size(total, g->outsz, &total))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "output too large");
    return NULL;
}

/* x or w less its zero point: a scalar, or (per_channel) one value per
 * slice of the first axis. */
static tsr_status *centered(ref_ctx *c, const tsr_tensor *t, const tsr_tensor *zp, bool per_channel, const char *what,
                            double **out) {
    uint64_t n = ref_numel(t), zn = zp ? ref_numel(zp) : 0;
    uint64_t slices = t->rank > 0 ? (uint64_t)t->dims[0] : 1;
    bool per_slice = zn > 1;
    if (zp && zn != 1 && !(per_channel && zp->rank == 1 && zn == slices))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s has %llu elements; expected 1%s", what, (unsigned long long)zn,
                       per_channel ? " or one per output channel" : "");
    double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
    if (!v) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    uint64_t per = slices ? n / slices : 0;
    for (uint64_t i = 0; i < n; i++) {
        double z = zp ? rq_load(zp->elem_type, zp->data, per_slice ? (size_t)(i / per) : 0) : 0.0;
        v[i] = rq_load(t->elem_type, t->data, (size_t)i) - z;
    }
    *out = v;
    return NULL;
}

/* The taps of axis d that land inside the input for output position o:
 * [*lo, *hi], empty when *lo > *hi. Only these are visited, so a window
 * mostly in padding costs what it reads (a pad of 65536 made every output
 * walk 2^17 taps in padding: seconds a run). */
static void valid_taps(const qconv_geom *g, int d, int64_t o, int64_t *lo, int64_t *hi) {
    int64_t base = o * g->s[d] - g->pb[d], dil = g->d[d];
    int64_t a = base >= 0 ? 0 : (-base + dil - 1) / dil;
    int64_t b = g->in[d] - 1 - base < 0 ? -1 : (g->in[d] - 1 - base) / dil;
    *lo = a;
    *hi = b < g->k[d] - 1 ? b : g->k[d] - 1;
}

/* y[b][m][o] = sum over the group's channels ch and taps t of
 * x[b][ch][o * stride - pad + t * dilation] * w[m][ch][t]. */
static tsr_status *qconv_compute(ref_ctx *c, const qconv_geom *g, const double *x, const double *w, double *y) {
    int nsp = g->nsp;
    uint64_t kstride[REF_MAX_RANK], istride[REF_MAX_RANK];
    for (int d = nsp - 1; d >= 0; d--) {
        kstride[d] = d == nsp - 1 ? 1 : kstride[d + 1] * (uint64_t)g->k[d + 1];
        istride[d] = d == nsp - 1 ? 1 : istride[d + 1] * (uint64_t)g->in[d + 1];
    }
    for (int64_t b = 0; b < g->batch; b++) {
        for (int64_t m = 0; m < g->cout; m++) {
            const double *xg = x + ((uint64_t)b * (uint64_t)g->cin + (uint64_t)(m / g->mg * g->cg)) * g->insz;
            const double *wm = w + (uint64_t)m * (uint64_t)g->cg * g->ksz;
            double *ym = y + ((uint64_t)b * (uint64_t)g->cout + (uint64_t)m) * g->outsz;
            int64_t o[REF_MAX_RANK] = {0};
            for (uint64_t p = 0; p < g->outsz; p++) {
                if (ref_work(c, (int64_t)(g->cg * g->ksz))) return ref_stopped(c);
                double acc = 0.0;
                int64_t lo[REF_MAX_RANK], hi[REF_MAX_RANK], t[REF_MAX_RANK];
                bool any = true;
                for (int d = 0; d < nsp; d++) {
                    valid_taps(g, d, o[d], &lo[d], &hi[d]);
                    any = any && lo[d] <= hi[d];
                    t[d] = lo[d];
                }
                while (any) {
                    uint64_t tap = 0, off = 0;
                    for (int d = 0; d < nsp; d++) {
                        tap += (uint64_t)t[d] * kstride[d];
                        off += (uint64_t)(o[d] * g->s[d] - g->pb[d] + t[d] * g->d[d]) * istride[d];
                    }
                    for (int64_t ch = 0; ch < g->cg; ch++)
                        acc += xg[(uint64_t)ch * g->insz + off] * wm[(uint64_t)ch * g->ksz + tap];
                    int d = nsp - 1;
                    while (d >= 0 && ++t[d] > hi[d]) {
                        t[d] = lo[d];
                        d--;
                    }
                    any = d >= 0;
                }
                ym[p] = acc;
                for (int d = nsp - 1; d >= 0; d--) {
                    if (++o[d] < g->out[d]) break;
                    o[d] = 0;
                }
            }
        }
    }
    return NULL;
}

static bool is_8bit_int(int32_t t) { return t == TSR_INT8 || t == TSR_UINT8; }

/* The convolution of x less x_zp with w less w_zp, as a malloc'd array of
 * batch * cout * outsz doubles. */
static tsr_status *centered_conv(ref_ctx *c, const tsr_tensor *x, const tsr_tensor *xz, const tsr_tensor *w,
                                 const tsr_tensor *wz, qconv_geom *g, double **out) {
    tsr_status *st = qconv_geometry(c, x, w, g);
    if (st) return st;
    double *xv = NULL, *wv = NULL, *yv = NULL;
    st = centered(c, x, xz, false, "x_zero_point", &xv);
    if (!st) st = centered(c, w, wz, true, "w_zero_point", &wv);
    if (!st) {
        uint64_t n = (uint64_t)g->batch * (uint64_t)g->cout * g->outsz;
        yv = malloc(sizeof(double) * (size_t)(n ? n : 1));
        if (!yv) st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    }
    if (!st) st = qconv_compute(c, g, xv, wv, yv);
    free(xv);
    free(wv);
    if (st) {
        free(yv);
        yv = NULL;
    }
    *out = yv;
    return st;
}

/* Input i exists, is readable and (when typed) is an 8-bit integer. */
static tsr_status *check_8bit(ref_ctx *c, size_t i, const char *name, bool optional) {
    const tsr_tensor *t = ref_in(c, i);
    if (!t && optional) return NULL;
    tsr_status *st = rq_check_tensor(c, t, name);
    if (st) return st;
    if (!is_8bit_int(t->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s has element type %s; expected int8 or uint8", name,
                       rq_type_name(t->elem_type));
    return NULL;
}

static void out_dims(const qconv_geom *g, int64_t *dims) {
    dims[0] = g->batch;
    dims[1] = g->cout;
    for (int d = 0; d < g->nsp; d++) dims[d + 2] = g->out[d];
}

tsr_status *ref_quant_conv_integer(ref_ctx *c) {
    static const char *const names[] = {"x", "w", "x_zero_point", "w_zero_point"};
    tsr_status *st = NULL;
    for (size_t i = 0; !st && i < 4; i++) st = check_8bit(c, i, names[i], i >= 2);
    if (st) return st;
    const tsr_tensor *x = ref_in(c, 0), *w = ref_in(c, 1), *xz = ref_in(c, 2), *wz = ref_in(c, 3);
    if ((xz && xz->elem_type != x->elem_type) || (wz && wz->elem_type != w->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "a zero point's type differs from its input's");
    /* the output first: its size is checked against the session's limits
     * before the work and the double accumulator are spent */
    qconv_geom g;
    double *acc;
    int64_t dims[REF_MAX_RANK];
    tsr_tensor *y;
    if ((st = qconv_geometry(c, x, w, &g))) return st;
    out_dims(&g, dims);
    if ((st = ref_out(c, 0, TSR_INT32, x->rank, dims, &y))) return st;
    if ((st = centered_conv(c, x, xz, w, wz, &g, &acc))) return st;
    uint64_t n = (uint64_t)g.batch * (uint64_t)g.cout * g.outsz;
    /* int32 accumulation may wrap; keep the low 32 bits of the exact sum. */
    for (uint64_t i = 0; i < n; i++) ((int32_t *)y->data)[i] = (int32_t)(uint32_t)(int64_t)acc[i];
    free(acc);
    return NULL;
}

/* Input i exists, is readable and is a float scale. */
static tsr_status *check_scale(ref_ctx *c, size_t i, const char *name) {
    const tsr_tensor *t = ref_in(c, i);
    tsr_status *st = rq_check_tensor(c, t, name);
    if (!st && !rq_is_float_out_type(t->elem_type))
        st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s has element type %s", name, rq_type_name(t->elem_type));
    return st;
}

tsr_status *ref_quant_qlinear_conv(ref_ctx *c) {
    tsr_status *st = check_8bit(c, 0, "x", false);
    if (!st) st = check_8bit(c, 3, "w", false);
    if (!st) st = check_8bit(c, 2, "x_zero_point", true);
    if (!st) st = check_8bit(c, 5, "w_zero_point", true);
    if (!st) st = check_8bit(c, 7, "y_zero_point", true);
    if (!st) st = check_scale(c, 1, "x_scale");
    if (!st) st = check_scale(c, 4, "w_scale");
    if (!st) st = check_scale(c, 6, "y_scale");
    if (!st && ref_in(c, 8)) {
        st = rq_check_tensor(c, ref_in(c, 8), "B");
        if (!st && ref_in(c, 8)->elem_type != TSR_INT32)
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "B has element type %s; expected int32",
                         rq_type_name(ref_in(c, 8)->elem_type));
    }
    if (st) return st;
    const tsr_tensor *x = ref_in(c, 0), *xs = ref_in(c, 1), *xz = ref_in(c, 2);
    const tsr_tensor *w = ref_in(c, 3), *ws = ref_in(c, 4), *wz = ref_in(c, 5);
    const tsr_tensor *ys = ref_in(c, 6), *yz = ref_in(c, 7), *bias = ref_in(c, 8);
    if ((xz && xz->elem_type != x->elem_type) || (wz && wz->elem_type != w->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "a zero point's type differs from its input's");
    if (ref_numel(xs) != 1 || ref_numel(ys) != 1 || (yz && ref_numel(yz) != 1))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "x_scale, y_scale and y_zero_point must each hold one value");
    uint64_t cout = w->rank > 0 ? (uint64_t)w->dims[0] : 0, wsn = ref_numel(ws);
    if (wsn != 1 && !(ws->rank == 1 && wsn == cout))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                       "w_scale has %llu elements; expected 1 or one per output channel (%llu)",
                       (unsigned long long)wsn, (unsigned long long)cout);
    if (bias && (bias->rank != 1 || (uint64_t)bias->dims[0] != cout))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "B must be 1-D with %llu elements", (unsigned long long)cout);
    int32_t out_type = yz ? yz->elem_type : x->elem_type;

    qconv_geom g;
    double *acc;
    int64_t dims[REF_MAX_RANK];
    tsr_tensor *y;
    if ((st = qconv_geometry(c, x, w, &g))) return st;
    out_dims(&g, dims);
    if ((st = ref_out(c, 0, out_type, x->rank, dims, &y))) return st;
    if ((st = centered_conv(c, x, xz, w, wz, &g, &acc))) return st;
    /* The rescale factor rounds in the scales' precision, as
     * x_scale * w_scale / y_scale does in the operator's definition. */
    int32_t sprec = xs->elem_type;
    double sx = rq_load(xs->elem_type, xs->data, 0), sy = rq_load(ys->elem_type, ys->data, 0);
    double zy = yz ? rq_load(yz->elem_type, yz->data, 0) : 0.0;
    uint64_t per_m = g.outsz;
    uint64_t n = (uint64_t)g.batch * (uint64_t)g.cout * per_m;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t m = (i / per_m) % (uint64_t)g.cout;
        double sw = rq_load(ws->elem_type, ws->data, wsn == 1 ? 0 : (size_t)m);
        double mul = rq_round_to(sprec, rq_round_to(sprec, sx * sw) / sy);
        double v = acc[i] + (bias ? rq_load(TSR_INT32, bias->data, (size_t)m) : 0.0);
        rq_quant_store(out_type, y->data, (size_t)i, v * mul, zy, true);
    }
    free(acc);
    return NULL;
}
