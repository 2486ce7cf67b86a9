/*
 * `compare --oracle`: how close a result is to the float64 oracle's (the
 * reference provider with precision=double, see docs/compare.md). Besides
 * the tolerance figures of compare_stats.c it gives the mean absolute error
 * and the distance in units in the last place (ULP) of the value's own type,
 * as percentiles: p50 says how a typical element fares, max how the worst
 * one does, independently of the values' magnitude.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare_tool.h"

/* Bits of a float as an integer that orders like the value (-0 == +0). */
static int64_t ordered(int32_t type, const void *data, size_t i) {
    switch (type) {
    case TSR_FLOAT: {
        int32_t b;
        memcpy(&b, (const char *)data + 4 * i, 4);
        return b < 0 ? (int64_t)INT32_MIN - b : b;
    }
    case TSR_DOUBLE: {
        int64_t b;
        memcpy(&b, (const char *)data + 8 * i, 8);
        /* halve: the distance of two doubles then fits an int64 difference */
        return b < 0 ? -((b & INT64_MAX) >> 1) : b >> 1;
    }
    case TSR_FLOAT16:
    case TSR_BFLOAT16: {
        int16_t b;
        memcpy(&b, (const char *)data + 2 * i, 2);
        return b < 0 ? (int64_t)INT16_MIN - b : b;
    }
    default: return 0;
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void cmpx_accuracy_measure(const tsr_value *oracle, const tsr_value *got, cmpx_accuracy *out) {
    memset(out, 0, sizeof *out);
    if (!oracle || !got || tsr_value_get_kind(oracle) != TSR_VALUE_TENSOR ||
        tsr_value_get_kind(got) != TSR_VALUE_TENSOR)
        return;
    tsr_tensor a = {.struct_size = sizeof a}, b = {.struct_size = sizeof b};
    tsr_status *st = tsr_value_tensor(oracle, &a);
    if (!st) st = tsr_value_tensor(got, &b);
    if (st) {
        tsr_status_free(st);
        return;
    }
    int32_t t = a.elem_type;
    if (t != b.elem_type || a.rank != b.rank ||
        (t != TSR_FLOAT && t != TSR_DOUBLE && t != TSR_FLOAT16 && t != TSR_BFLOAT16) ||
        a.memory_kind != TSR_MEMORY_HOST || b.memory_kind != TSR_MEMORY_HOST)
        return;
    for (int32_t d = 0; d < a.rank; d++)
        if (a.dims[d] != b.dims[d]) return;
    size_t n = tio_element_count(a.rank, a.dims);
    if (n && (!a.data || !b.data)) return;
    double *ulps = malloc((n + 1) * sizeof *ulps);
    if (!ulps) return;
    double sum_abs = 0;
    size_t finite = 0;
    for (size_t i = 0; i < n; i++) {
        double x, y;
        if (!tio_element_as_double(&a, i, &x) || !tio_element_as_double(&b, i, &y)) break;
        if (!isfinite(x) || !isfinite(y)) continue;
        double d = fabs(x - y);
        sum_abs += d;
        if (d > out->max_abs) out->max_abs = d;
        if (x != 0 && d / fabs(x) > out->max_rel) out->max_rel = d / fabs(x);
        int64_t u = ordered(t, a.data, i) - ordered(t, b.data, i);
        /* halved for doubles (see ordered): odd distances round down */
        ulps[finite++] = (double)(u < 0 ? -u : u) * (t == TSR_DOUBLE ? 2.0 : 1.0);
    }
    out->valid = true;
    out->count = finite;
    out->mean_abs = finite ? sum_abs / (double)finite : 0;
    if (finite) {
        qsort(ulps, finite, sizeof *ulps, cmp_double);
        out->ulp_p50 = ulps[(size_t)(0.50 * (double)(finite - 1))];
        out->ulp_p99 = ulps[(size_t)(0.99 * (double)(finite - 1))];
        out->ulp_max = ulps[finite - 1];
    }
    free(ulps);
}

void cmpx_print_accuracy_text(const cmpx_accuracy *acc) {
    if (!acc->valid) {
        printf("no float figures");
        return;
    }
    printf("vs oracle: max_abs %.3g  max_rel %.3g  mean_abs %.3g  ulp p50 %.0f p99 %.0f max %.0f", acc->max_abs,
           acc->max_rel, acc->mean_abs, acc->ulp_p50, acc->ulp_p99, acc->ulp_max);
}

void cmpx_print_accuracy_json(const cmpx_accuracy *acc) {
    if (!acc->valid) {
        printf("null");
        return;
    }
    printf("{\"max_abs\": ");
    cmpx_json_number(stdout, acc->max_abs);
    printf(", \"max_rel\": ");
    cmpx_json_number(stdout, acc->max_rel);
    printf(", \"mean_abs\": ");
    cmpx_json_number(stdout, acc->mean_abs);
    printf(", \"ulp_p50\": %.0f, \"ulp_p99\": %.0f, \"ulp_max\": %.0f, \"count\": %zu}", acc->ulp_p50, acc->ulp_p99,
           acc->ulp_max, acc->count);
}
