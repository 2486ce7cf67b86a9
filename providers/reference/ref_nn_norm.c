/*
 * Normalisations for the reference provider: BatchNormalization (inference
 * and, from opset 14, training mode), LayerNormalization,
 * InstanceNormalization, GroupNormalization and LRN.
 *
 * Everything computes in double, a slice of X at a time (so the working set
 * stays in cache): statistics come out at least as precise as the
 * stash_type asks for, and the inputs may each have their own element type
 * (BatchNormalization-15 allows it).
 * Variances are the biased (population) ones, as the operators define them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_nn.h"

/* Frees up to four double buffers (any may be NULL). */
static void free4(double *a, double *b, double *c, double *d) {
    free(a);
    free(b);
    free(c);
    free(d);
}

/* Mean and biased variance of n values spaced `stride` apart, in `groups`
 * runs of n each starting `gstride` apart (a channel across the batch). */
static void moments(const double *x, int64_t groups, int64_t gstride, int64_t n, double *mean, double *var) {
    double s = 0;
    for (int64_t g = 0; g < groups; g++)
        for (int64_t i = 0; i < n; i++) s += x[g * gstride + i];
    int64_t cnt = groups * n;
    double m = cnt ? s / (double)cnt : 0.0;
    double v = 0;
    for (int64_t g = 0; g < groups; g++)
        for (int64_t i = 0; i < n; i++) {
            double e = x[g * gstride + i] - m;
            v += e * e;
        }
    *mean = m;
    *var = cnt ? v / (double)cnt : 0.0;
}

/* --- BatchNormalization ---------------------------------------------------- */

tsr_status *ref_nn_batchnorm(ref_ctx *c) {
    const tsr_tensor *X = ref_in(c, 0), *S = ref_in(c, 1), *B = ref_in(c, 2);
    const tsr_tensor *Mn = ref_in(c, 3), *V = ref_in(c, 4);
    if (!X || !S || !B || !Mn || !V) return ref_err(c, TSR_ERR_INVALID_MODEL, "BatchNormalization needs five inputs");
    if (X->rank < 2) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X must have rank >= 2");
    int64_t n = X->dims[0], ch = X->dims[1], sp = 1;
    for (int32_t d = 2; d < X->rank; d++) sp *= X->dims[d];
    /* Parameters are per channel, or (spatial = 0 before opset 9) per
     * channel and position. */
    int64_t pn = (int64_t)ref_numel(S);
    bool per_pos = pn == ch * sp && sp != 1;
    if (!per_pos && pn != ch)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "scale has %lld values for %lld channels", (long long)pn,
                       (long long)ch);
    if ((int64_t)ref_numel(B) != pn || (int64_t)ref_numel(Mn) != pn || (int64_t)ref_numel(V) != pn)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "scale, B, mean and var differ in size");
    double eps = ref_attr_float(c, "epsilon", 1e-5f);
    double mom = ref_attr_float(c, "momentum", 0.9f);
    bool training = ref_opset(c) >= 14 && ref_attr_int(c, "training_mode", 0) != 0;
    if (training && per_pos) return ref_err(c, TSR_ERR_NOT_SUPPORTED, "training mode with per-position parameters");

    tsr_tensor *Y;
    tsr_status *st = ref_out(c, 0, X->elem_type, X->rank, X->dims, &Y);
    if (st) return st;
    double *s = NULL, *b = NULL, *m = NULL, *v = NULL, *buf = NULL, *bm = NULL, *bv = NULL;
    if ((st = ref_tensor_f64(c, S, &s)) || (st = ref_tensor_f64(c, B, &b)) || (st = ref_tensor_f64(c, Mn, &m)) ||
        (st = ref_tensor_f64(c, V, &v)))
        goto done;
    buf = malloc((size_t)(sp ? sp : 1) * sizeof *buf);
    bm = calloc((size_t)(ch ? ch : 1), sizeof *bm);
    bv = calloc((size_t)(ch ? ch : 1), sizeof *bv);
    if (!buf || !bm || !bv) {
        st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    /* Training mode: each channel's mean and biased variance over the batch
     * and positions, in two passes over X. */
    int64_t cnt = n * sp;
    if (training && cnt > 0) {
        for (int pass = 0; pass < 2; pass++)
            for (int64_t i = 0; i < n; i++)
                for (int64_t k = 0; k < ch; k++) {
                    ref_nn_get_f64(X, (size_t)((i * ch + k) * sp), (size_t)sp, buf);
                    double acc = 0;
                    for (int64_t j = 0; j < sp; j++) {
                        double e = pass ? buf[j] - bm[k] : buf[j];
                        acc += pass ? e * e : e;
                    }
                    *(pass ? &bv[k] : &bm[k]) += acc;
                    if (i == n - 1) *(pass ? &bv[k] : &bm[k]) /= (double)cnt;
                }
    }
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < ch; k++) {
            size_t off = (size_t)((i * ch + k) * sp);
            ref_nn_get_f64(X, off, (size_t)sp, buf);
            if (per_pos) {
                for (int64_t j = 0; j < sp; j++) {
                    int64_t q = k * sp + j;
                    buf[j] = (buf[j] - m[q]) / sqrt(v[q] + eps) * s[q] + b[q];
                }
            } else {
                double mean = training ? bm[k] : m[k], var = training ? bv[k] : v[k];
                double a = s[k] / sqrt(var + eps), o = b[k] - mean * a;
                for (int64_t j = 0; j < sp; j++) buf[j] = buf[j] * a + o;
            }
            ref_put_f64(Y, off, (size_t)sp, buf);
        }

    /* Other outputs. Opset 14+: running mean and variance, updated with
     * momentum in training mode. Older opsets (mean, var, saved_mean,
     * saved_var) only made sense while training; an inference run passes
     * the statistics it used through. */
    for (size_t o = 1; o < 5 && o < c->n_out; o++) {
        if (!ref_out_wanted(c, o)) continue;
        const tsr_tensor *src = (o % 2) ? Mn : V;
        tsr_tensor *T;
        if ((st = ref_out(c, o, src->elem_type, src->rank, src->dims, &T))) goto done;
        const double *run = (o % 2) ? m : v, *batch = (o % 2) ? bm : bv;
        for (int64_t k = 0; k < pn; k++) {
            double val = training ? run[k] * mom + batch[k] * (1.0 - mom) : run[k];
            ref_store(T->elem_type, T->data, (size_t)k, val);
        }
    }
done:
    free4(s, b, m, v);
    free(buf);
    free(bm);
    free(bv);
    return st;
}

/* --- LayerNormalization ---------------------------------------------------- */

/* The element type node output i was declared with, or `dflt`. */
static int32_t declared_type(ref_ctx *c, size_t i, int32_t dflt) {
    if (i >= c->n_out) return dflt;
    const tsr_value_info *v = c->host->node_output(c->node, i);
    int32_t t = v ? c->host->value_elem_type(v) : 0;
    return t ? t : dflt;
}

/* p (shape rank pr) broadcast over the trailing `n` elements of shape
 * dims[rank-nr..], expanded into out. */
static void expand_trailing(const double *p, const tsr_tensor *P, int32_t nr, const int64_t *ndims, int64_t n,
                            double *out) {
    int64_t str[REF_MAX_RANK], idx[REF_MAX_RANK] = {0};
    ref_broadcast_strides(P->rank, P->dims, nr, ndims, str);
    for (int64_t j = 0; j < n; j++) {
        int64_t off = 0;
        for (int32_t d = 0; d < nr; d++) off += idx[d] * str[d];
        out[j] = p[off];
        for (int32_t d = nr - 1; d >= 0; d--) {
            if (++idx[d] < ndims[d]) break;
            idx[d] = 0;
        }
    }
}

tsr_status *ref_nn_layernorm(ref_ctx *c) {
    const tsr_tensor *X = ref_in(c, 0), *S = ref_in(c, 1), *B = ref_in(c, 2);
    if (!X || !S) return ref_err(c, TSR_ERR_INVALID_MODEL, "LayerNormalization needs X and Scale");
    int64_t axis;
    if (!ref_axis(ref_attr_int(c, "axis", -1), X->rank, &axis))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis out of range for rank %d", (int)X->rank);
    double eps = ref_attr_float(c, "epsilon", 1e-5f);
    int64_t outer = 1, inner = 1;
    for (int32_t d = 0; d < X->rank; d++) *(d < axis ? &outer : &inner) *= X->dims[d];
    int32_t nr = X->rank - (int32_t)axis;
    const int64_t *ndims = X->dims + axis;
    int32_t r;
    int64_t bd[REF_MAX_RANK];
    if (!ref_broadcast_shape(S->rank, S->dims, nr, ndims, &r, bd) || r != nr ||
        (B && (!ref_broadcast_shape(B->rank, B->dims, nr, ndims, &r, bd) || r != nr)))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "Scale or B does not broadcast to the normalised shape");
    for (int32_t d = 0; d < nr; d++)
        if (bd[d] != ndims[d])
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "Scale or B does not broadcast to the normalised shape");

    int64_t sd[REF_MAX_RANK];
    for (int32_t d = 0; d < X->rank; d++) sd[d] = d < axis ? X->dims[d] : 1;
    tsr_tensor *Y, *Mo = NULL, *Io = NULL;
    tsr_status *st = ref_out(c, 0, X->elem_type, X->rank, X->dims, &Y);
    if (st) return st;
    if (ref_out_wanted(c, 1) && (st = ref_out(c, 1, declared_type(c, 1, TSR_FLOAT), X->rank, sd, &Mo))) return st;
    if (ref_out_wanted(c, 2) && (st = ref_out(c, 2, declared_type(c, 2, TSR_FLOAT), X->rank, sd, &Io))) return st;
    double *x = NULL, *s = NULL, *b = NULL, *se = NULL;
    double *be = malloc((size_t)(inner ? inner : 1) * sizeof *be);
    se = malloc((size_t)(inner ? inner : 1) * sizeof *se);
    x = malloc((size_t)(inner ? inner : 1) * sizeof *x); /* one row */
    if (!be || !se || !x) {
        st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    if ((st = ref_tensor_f64(c, S, &s)) || (B && (st = ref_tensor_f64(c, B, &b)))) goto done;
    expand_trailing(s, S, nr, ndims, inner, se);
    if (b) expand_trailing(b, B, nr, ndims, inner, be);
    else memset(be, 0, (size_t)inner * sizeof *be);
    for (int64_t i = 0; i < outer; i++) {
        ref_nn_get_f64(X, (size_t)(i * inner), (size_t)inner, x);
        double mean, var;
        moments(x, 1, 0, inner, &mean, &var);
        double inv = 1.0 / sqrt(var + eps);
        for (int64_t j = 0; j < inner; j++) x[j] = (x[j] - mean) * inv * se[j] + be[j];
        ref_put_f64(Y, (size_t)(i * inner), (size_t)inner, x);
        if (Mo) ref_store(Mo->elem_type, Mo->data, (size_t)i, mean);
        if (Io) ref_store(Io->elem_type, Io->data, (size_t)i, inv);
    }
done:
    free4(x, s, b, se);
    free(be);
    return st;
}

/* --- InstanceNormalization and GroupNormalization -------------------------- */

/* Normalises `groups` runs of `run` values each (per sample), then applies
 * a per-channel affine, each group spanning run / sp channels of sp values. */
static tsr_status *group_norm(ref_ctx *c, const tsr_tensor *X, const tsr_tensor *S, const tsr_tensor *B, int64_t groups,
                              bool per_group_affine) {
    if (X->rank < 2) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X must have rank >= 2");
    int64_t n = X->dims[0], ch = X->dims[1], sp = 1;
    for (int32_t d = 2; d < X->rank; d++) sp *= X->dims[d];
    if (groups < 1 || ch % groups)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%lld groups do not divide %lld channels", (long long)groups,
                       (long long)ch);
    int64_t want = per_group_affine ? groups : ch;
    if ((int64_t)ref_numel(S) != want || (int64_t)ref_numel(B) != want)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "scale and bias must have %lld values", (long long)want);
    double eps = ref_attr_float(c, "epsilon", 1e-5f);
    tsr_tensor *Y;
    tsr_status *st = ref_out(c, 0, X->elem_type, X->rank, X->dims, &Y);
    if (st) return st;
    int64_t cpg = ch / groups, run = cpg * sp;
    double *s = NULL, *b = NULL;
    double *xs = malloc((size_t)(run ? run : 1) * sizeof *xs); /* one group of one sample */
    if (!xs) {
        st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    if ((st = ref_tensor_f64(c, S, &s)) || (st = ref_tensor_f64(c, B, &b))) goto done;
    for (int64_t i = 0; i < n; i++)
        for (int64_t g = 0; g < groups; g++) {
            size_t off = (size_t)((i * ch + g * cpg) * sp);
            ref_nn_get_f64(X, off, (size_t)run, xs);
            double mean, var;
            moments(xs, 1, 0, run, &mean, &var);
            double inv = 1.0 / sqrt(var + eps);
            for (int64_t k = 0; k < cpg; k++) {
                int64_t p = per_group_affine ? g : g * cpg + k;
                for (int64_t j = 0; j < sp; j++) xs[k * sp + j] = (xs[k * sp + j] - mean) * inv * s[p] + b[p];
            }
            ref_put_f64(Y, off, (size_t)run, xs);
        }
done:
    free(xs);
    free(s);
    free(b);
    return st;
}

tsr_status *ref_nn_instancenorm(ref_ctx *c) {
    const tsr_tensor *X = ref_in(c, 0), *S = ref_in(c, 1), *B = ref_in(c, 2);
    if (!X || !S || !B) return ref_err(c, TSR_ERR_INVALID_MODEL, "InstanceNormalization needs three inputs");
    if (X->rank < 2) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X must have rank >= 2");
    return group_norm(c, X, S, B, X->dims[1], false);
}

tsr_status *ref_nn_groupnorm(ref_ctx *c) {
    const tsr_tensor *X = ref_in(c, 0), *S = ref_in(c, 1), *B = ref_in(c, 2);
    if (!X || !S || !B) return ref_err(c, TSR_ERR_INVALID_MODEL, "GroupNormalization needs three inputs");
    if (!ref_attr_has(c, "num_groups")) return ref_err(c, TSR_ERR_INVALID_MODEL, "num_groups is required");
    if (X->rank < 2) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X must have rank >= 2");
    int64_t groups = ref_attr_int(c, "num_groups", 1);
    /* Opset 18 scaled per group, opset 21 per channel; the sizes tell. */
    bool per_group = (int64_t)ref_numel(S) != X->dims[1];
    return group_norm(c, X, S, B, groups, per_group);
}

/* --- LRN ------------------------------------------------------------------- */

tsr_status *ref_nn_lrn(ref_ctx *c) {
    const tsr_tensor *X = ref_in(c, 0);
    if (!X) return ref_err(c, TSR_ERR_INVALID_MODEL, "LRN needs an input");
    if (X->rank < 2) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X must have rank >= 2");
    int64_t size = ref_attr_int(c, "size", 0);
    if (size < 1) return ref_err(c, TSR_ERR_INVALID_MODEL, "size must be >= 1");
    double alpha = ref_attr_float(c, "alpha", 1e-4f), beta = ref_attr_float(c, "beta", 0.75f);
    double bias = ref_attr_float(c, "bias", 1.0f);
    int64_t n = X->dims[0], ch = X->dims[1], sp = 1;
    for (int32_t d = 2; d < X->rank; d++) sp *= X->dims[d];
    tsr_tensor *Y;
    tsr_status *st = ref_out(c, 0, X->elem_type, X->rank, X->dims, &Y);
    if (st) return st;
    size_t total = (size_t)ref_numel(X);
    double *x = NULL, *y = malloc((total ? total : 1) * sizeof *y);
    if (!y) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    if ((st = ref_tensor_f64(c, X, &x))) {
        free(y);
        return st;
    }
    /* The window is channels [k - floor((size-1)/2), k + ceil((size-1)/2)]. */
    int64_t before = (size - 1) / 2, after = size - 1 - before;
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < ch; k++) {
            int64_t lo = k - before < 0 ? 0 : k - before;
            int64_t hi = k + after >= ch ? ch - 1 : k + after;
            for (int64_t j = 0; j < sp; j++) {
                double sq = 0;
                for (int64_t q = lo; q <= hi; q++) {
                    double v = x[(i * ch + q) * sp + j];
                    sq += v * v;
                }
                int64_t at = (i * ch + k) * sp + j;
                y[at] = x[at] / pow(bias + alpha / (double)size * sq, beta);
            }
        }
    ref_nn_f64_store(Y, y, total);
    free(x);
    free(y);
    return NULL;
}
