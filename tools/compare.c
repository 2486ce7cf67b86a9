/*
 * Comparing an output with its expected value, as the ONNX backend tests
 * define it: same element type, same shape, then |got - expected| <=
 * atol + rtol * |expected| for floating types (decoded to double first, so
 * float16, bfloat16 and the 8-bit floats get the same rule), NaN equal to
 * NaN, an infinity equal only to the same infinity; integers, bools and
 * strings exactly.
 *
 * The reason for a mismatch names the first differing element (flat index
 * and coordinates), both values, and how many differ in all: the first one
 * tells where to look, the count tells whether it is one rounding slip or a
 * wrong kernel.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "cli.h"

/* "12 [0,2,0]": the flat index and its coordinates. */
static void format_index(char *buf, size_t size, const tsr_tensor *t, size_t flat) {
    size_t n = (size_t)snprintf(buf, size, "%zu", flat);
    if (t->rank <= 1 || n >= size) return;
    int64_t coord[64];
    int32_t rank = t->rank < 64 ? t->rank : 64;
    size_t rest = flat;
    for (int32_t i = rank - 1; i >= 0; i--) {
        size_t d = t->dims[i] > 0 ? (size_t)t->dims[i] : 1;
        coord[i] = (int64_t)(rest % d);
        rest /= d;
    }
    n += (size_t)snprintf(buf + n, size - n, " [");
    for (int32_t i = 0; i < rank && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%" PRId64, i ? "," : "", coord[i]);
    if (n < size) snprintf(buf + n, size - n, "]");
}

static bool floats_match(double got, double want, cmp_tolerance tol) {
    if (isnan(got) || isnan(want)) return isnan(got) && isnan(want);
    if (isinf(got) || isinf(want)) return got == want;
    return fabs(got - want) <= tol.atol + tol.rtol * fabs(want);
}

static bool compare_floats(const tsr_tensor *got, const tsr_tensor *want, cmp_tolerance tol, char *reason,
                           size_t size) {
    size_t n = tio_component_count(want), bad = 0, first = 0;
    double first_got = 0, first_want = 0, max_diff = 0;
    for (size_t i = 0; i < n; i++) {
        double g, w;
        tio_element_as_double(got, i, &g);
        tio_element_as_double(want, i, &w);
        if (floats_match(g, w, tol)) continue;
        if (!bad++) {
            first = i;
            first_got = g;
            first_want = w;
        }
        double d = fabs(g - w);
        if (isfinite(d) && d > max_diff) max_diff = d;
    }
    if (!bad) return true;
    bool complex = tio_is_complex_type(want->elem_type);
    char where[160];
    format_index(where, sizeof where, want, complex ? first / 2 : first);
    snprintf(reason, size,
             "element %s%s: got %.9g, expected %.9g (allowed %.3g); %zu of %zu differ, "
             "max |diff| %.3g",
             where, complex ? (first % 2 ? " imag" : " real") : "", first_got, first_want,
             tol.atol + tol.rtol * fabs(first_want), bad, n, max_diff);
    return false;
}

static bool compare_exact(const tsr_tensor *got, const tsr_tensor *want, char *reason, size_t size) {
    size_t n = tio_element_count(want->rank, want->dims), bad = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        bool same;
        if (want->elem_type == TSR_STRING) {
            const tsr_string *g = &((const tsr_string *)got->data)[i];
            const tsr_string *w = &((const tsr_string *)want->data)[i];
            same = g->size == w->size && (g->size == 0 || memcmp(g->data, w->data, g->size) == 0);
        } else {
            uint64_t g, w;
            tio_element_as_int(got, i, NULL, &g);
            tio_element_as_int(want, i, NULL, &w);
            same = g == w;
        }
        if (!same && !bad++) first = i;
    }
    if (!bad) return true;
    char where[160], g[96], w[96];
    format_index(where, sizeof where, want, first);
    tio_format_element(g, sizeof g, got, first);
    tio_format_element(w, sizeof w, want, first);
    snprintf(reason, size, "element %s: got %s, expected %s; %zu of %zu differ", where, g, w, bad, n);
    return false;
}

bool cmp_tensors(const tsr_tensor *got, const tsr_tensor *want, cmp_tolerance tol, char *reason, size_t size) {
    if (got->elem_type != want->elem_type) {
        snprintf(reason, size, "type %s, expected %s", tsr_elem_type_name(got->elem_type),
                 tsr_elem_type_name(want->elem_type));
        return false;
    }
    bool same_shape = got->rank == want->rank;
    for (int32_t i = 0; same_shape && i < want->rank; i++) same_shape = got->dims[i] == want->dims[i];
    if (!same_shape) {
        char g[256], w[256];
        tio_format_shape(g, sizeof g, got->rank, got->dims);
        tio_format_shape(w, sizeof w, want->rank, want->dims);
        snprintf(reason, size, "shape %s, expected %s", g, w);
        return false;
    }
    if (got->memory_kind != TSR_MEMORY_HOST) {
        snprintf(reason, size, "output is not in host memory (memory kind %d)", got->memory_kind);
        return false;
    }
    if (tio_element_count(want->rank, want->dims) == 0) return true;
    if (!got->data || !want->data) {
        snprintf(reason, size, "%s has no data", got->data ? "expected value" : "output");
        return false;
    }
    if (tio_is_float_type(want->elem_type)) return compare_floats(got, want, tol, reason, size);
    if (want->elem_type == TSR_STRING || tio_is_signed_int_type(want->elem_type) ||
        tio_is_unsigned_int_type(want->elem_type))
        return compare_exact(got, want, reason, size);
    snprintf(reason, size, "cannot compare element type %s", tsr_elem_type_name(want->elem_type));
    return false;
}

bool cmp_values(const tsr_value *got, const tsr_value *want, cmp_tolerance tol, char *reason, size_t size) {
    int32_t gk = tsr_value_get_kind(got), wk = tsr_value_get_kind(want);
    /* An optional holding a tensor matches that tensor: test data stores
     * some optional outputs as plain tensors. */
    if (gk == TSR_VALUE_OPTIONAL && wk != TSR_VALUE_OPTIONAL && tsr_value_count(got) == 1)
        return cmp_values(tsr_value_item(got, 0), want, tol, reason, size);
    if (wk == TSR_VALUE_OPTIONAL && gk != TSR_VALUE_OPTIONAL && tsr_value_count(want) == 1)
        return cmp_values(got, tsr_value_item(want, 0), tol, reason, size);
    if (gk != wk) {
        snprintf(reason, size, "value kind %d, expected %d", (int)gk, (int)wk);
        return false;
    }
    if (gk == TSR_VALUE_TENSOR) {
        tsr_tensor g = {.struct_size = sizeof g}, w = {.struct_size = sizeof w};
        tsr_status *st = tsr_value_tensor(got, &g);
        if (!st) st = tsr_value_tensor(want, &w);
        if (st) {
            snprintf(reason, size, "%s", tsr_status_message(st));
            tsr_status_free(st);
            return false;
        }
        return cmp_tensors(&g, &w, tol, reason, size);
    }
    size_t n = tsr_value_count(got);
    if (n != tsr_value_count(want)) {
        snprintf(reason, size, "%zu items, expected %zu", n, tsr_value_count(want));
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        char inner[512];
        if (!cmp_values(tsr_value_item(got, i), tsr_value_item(want, i), tol, inner, sizeof inner)) {
            snprintf(reason, size, "item %zu: %s", i, inner);
            return false;
        }
    }
    return true;
}
