/*
 * Operators that fit no other family: LpNormalization and
 * MeanVarianceNormalization here, TopK (ref_misc_topk.c) and the random
 * generators (ref_misc_random.c) beside; this file holds their table.
 *
 * The normalisations compute in double and round once on store.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_misc.h"

/* --- LpNormalization --------------------------------------------------------- */

/* Each vector along `axis` divided by its L1 or L2 norm; a zero vector stays
 * zero (as the ONNX reference does) rather than becoming NaN. */
static tsr_status *ref_misc_lp_normalization(ref_ctx *c) {
    const tsr_tensor *X = ref_in(c, 0);
    if (!X) return ref_err(c, TSR_ERR_INVALID_MODEL, "input is missing");
    if (!ref_is_float(X->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "element type %d is not a float type", (int)X->elem_type);
    int64_t axis, p = ref_attr_int(c, "p", 2);
    if (p != 1 && p != 2)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "p = %lld; only 1 and 2 are defined", (long long)p);
    if (X->rank < 1 || !ref_axis(ref_attr_int(c, "axis", -1), X->rank, &axis))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
                       (long long)ref_attr_int(c, "axis", -1), (int)X->rank);
    tsr_tensor *Y;
    tsr_status *st = ref_out(c, 0, X->elem_type, X->rank, X->dims, &Y);
    if (st) return st;
    int64_t outer = 1, inner = 1, n = X->dims[axis];
    for (int32_t d = 0; d < X->rank; d++) {
        if (d < axis) outer *= X->dims[d];
        else if (d > axis) inner *= X->dims[d];
    }
    int32_t t = X->elem_type;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            size_t base = (size_t)(o * n * inner + i);
            double norm = 0;
            for (int64_t j = 0; j < n; j++) {
                double v = ref_load(t, X->data, base + (size_t)(j * inner));
                norm += p == 1 ? fabs(v) : v * v;
            }
            if (p == 2) norm = sqrt(norm);
            for (int64_t j = 0; j < n; j++) {
                size_t at = base + (size_t)(j * inner);
                ref_store(t, Y->data, at, norm == 0 ? 0.0 : ref_load(t, X->data, at) / norm);
            }
        }
    return NULL;
}

/* --- MeanVarianceNormalization ----------------------------------------------- */

/* Y = (X - mean) / (sqrt(variance) + 1e-9), the statistics taken over
 * `axes` (default 0, 2, 3: per channel of an NCHW tensor). The epsilon is
 * the one in the operator's function body; it keeps a constant slice at 0. */
static tsr_status *ref_misc_mean_variance_normalization(ref_ctx *c) {
    const tsr_tensor *X = ref_in(c, 0);
    if (!X) return ref_err(c, TSR_ERR_INVALID_MODEL, "input is missing");
    if (!ref_is_float(X->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "element type %d is not a float type", (int)X->elem_type);
    if (X->rank > REF_MAX_RANK)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "rank %d is above %d", (int)X->rank, REF_MAX_RANK);
    static const int64_t default_axes[] = {0, 2, 3};
    const int64_t *axes;
    size_t n_axes = ref_attr_ints(c, "axes", &axes);
    if (!ref_attr_has(c, "axes")) {
        axes = default_axes;
        n_axes = 3;
    }
    bool reduced[REF_MAX_RANK] = {false};
    for (size_t i = 0; i < n_axes; i++) {
        int64_t a;
        if (X->rank == 0 || !ref_axis(axes[i], X->rank, &a))
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is out of range for rank %d", (long long)axes[i],
                           (int)X->rank);
        reduced[a] = true;
    }
    tsr_tensor *Y;
    tsr_status *st = ref_out(c, 0, X->elem_type, X->rank, X->dims, &Y);
    if (st) return st;
    size_t total = (size_t)ref_numel(X);
    if (total == 0) return NULL;
    /* Each element belongs to the group named by its kept coordinates;
     * gstride[d] is axis d's step in that numbering (0 for reduced axes). */
    int64_t gstride[REF_MAX_RANK];
    uint64_t groups = 1;
    for (int32_t d = X->rank - 1; d >= 0; d--) {
        gstride[d] = reduced[d] ? 0 : (int64_t)groups;
        if (!reduced[d]) groups *= (uint64_t)X->dims[d];
    }
    double per_group = (double)total / (double)groups;
    double *mean = calloc((size_t)groups, sizeof *mean);
    double *m2 = calloc((size_t)groups, sizeof *m2);
    if (!mean || !m2) {
        free(mean);
        free(m2);
        return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    }
    int32_t t = X->elem_type;
    for (int pass = 0; pass < 3; pass++) {
        int64_t idx[REF_MAX_RANK] = {0};
        size_t g = 0; /* the group of element e, kept up to date with idx */
        for (size_t e = 0; e < total; e++) {
            double v = ref_load(t, X->data, e);
            if (pass == 0) {
                mean[g] += v;
            } else if (pass == 1) {
                m2[g] += (v - mean[g]) * (v - mean[g]);
            } else {
                double sd = sqrt(m2[g] / per_group);
                ref_store(t, Y->data, e, (v - mean[g]) / (sd + 1e-9));
            }
            for (int32_t d = X->rank - 1; d >= 0; d--) {
                g += (size_t)gstride[d];
                if (++idx[d] < X->dims[d]) break;
                g -= (size_t)(gstride[d] * X->dims[d]);
                idx[d] = 0;
            }
        }
        if (pass == 0)
            for (uint64_t k = 0; k < groups; k++) mean[k] /= per_group;
    }
    free(mean);
    free(m2);
    return NULL;
}

static int check_float_input(const tsr_host_api *h, const tsr_node *node, char *why, size_t why_size) {
    const tsr_value_info *x = tsr_util_node_input(h, node, 0);
    int32_t t = x ? h->value_elem_type(x) : 0;
    if (t != 0 && !ref_is_float(t)) {
        snprintf(why, why_size, "%s on element type %d is not implemented", h->node_op_type(node), (int)t);
        return TSR_DECLINE_TYPE;
    }
    return 0;
}

const ref_op ref_ops_misc[] = {
    {"", "TopK", 1, ref_misc_topk, ref_misc_topk_check},
    {"", "LpNormalization", 1, ref_misc_lp_normalization, check_float_input},
    {"", "MeanVarianceNormalization", 1, ref_misc_mean_variance_normalization, check_float_input},
    {"", "RandomUniform", 1, ref_misc_random_uniform, ref_misc_random_check},
    {"", "RandomNormal", 1, ref_misc_random_normal, ref_misc_random_check},
    {"", "RandomUniformLike", 1, ref_misc_random_uniform_like, ref_misc_random_check},
    {"", "RandomNormalLike", 1, ref_misc_random_normal_like, ref_misc_random_check},
    {"", "Bernoulli", 15, ref_misc_bernoulli, ref_misc_random_check},
    {"", "Multinomial", 7, ref_misc_multinomial, ref_misc_random_check},
    {NULL, NULL, 0, NULL, NULL}};
