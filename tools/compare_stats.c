/*
 * How far one result is from the baseline: maximum absolute and relative
 * error, how many components are over tolerance, and the worst of them.
 *
 * The tolerance rule is compare.c's (|a-b| <= atol + rtol*|baseline|, NaN
 * equal to NaN, an infinity equal only to itself; integers exactly), so
 * `compare` and `test` never disagree on what "over tolerance" means.
 */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "compare_tool.h"

/* How far over its allowance a pair is: <= 1 within tolerance, INFINITY for
 * a NaN/Inf mismatch. */
static double excess(double base, double got, cmp_tolerance tol, bool *nonfinite) {
    *nonfinite = false;
    if (isnan(base) || isnan(got)) {
        *nonfinite = !(isnan(base) && isnan(got));
        return *nonfinite ? INFINITY : 0.0;
    }
    if (isinf(base) || isinf(got)) {
        *nonfinite = base != got;
        return *nonfinite ? INFINITY : 0.0;
    }
    double diff = fabs(got - base), allowed = tol.atol + tol.rtol * fabs(base);
    if (diff == 0) return 0.0;
    return allowed > 0 ? diff / allowed : INFINITY;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
set_unlike(cmpx_stats *out, const char *fmt, ...) {
    va_list ap;
    out->comparable = false;
    va_start(ap, fmt);
    vsnprintf(out->why, sizeof out->why, fmt, ap);
    va_end(ap);
}

static void measure_tensors(const tsr_tensor *base, const tsr_tensor *got, cmp_tolerance tol, cmpx_stats *out) {
    if (base->elem_type != got->elem_type) {
        set_unlike(out, "type %s, baseline %s", tsr_elem_type_name(got->elem_type),
                   tsr_elem_type_name(base->elem_type));
        return;
    }
    bool same_shape = base->rank == got->rank;
    for (int32_t i = 0; same_shape && i < base->rank; i++) same_shape = base->dims[i] == got->dims[i];
    if (!same_shape) {
        char g[128], b[128];
        tio_format_shape(g, sizeof g, got->rank, got->dims);
        tio_format_shape(b, sizeof b, base->rank, base->dims);
        set_unlike(out, "shape %s, baseline %s", g, b);
        return;
    }
    if (base->memory_kind != TSR_MEMORY_HOST || got->memory_kind != TSR_MEMORY_HOST) {
        set_unlike(out, "a value is not in host memory");
        return;
    }
    size_t n = tio_element_count(base->rank, base->dims);
    if (n && (!base->data || !got->data)) {
        set_unlike(out, "a value has no data");
        return;
    }
    if (base->elem_type == TSR_STRING) {
        for (size_t i = 0; i < n; i++) {
            const tsr_string *a = &((const tsr_string *)base->data)[i];
            const tsr_string *b = &((const tsr_string *)got->data)[i];
            bool same = a->size == b->size && (!a->size || memcmp(a->data, b->data, a->size) == 0);
            if (!same && !out->mismatches++) {
                out->has_worst = true;
                out->worst_index = i;
            }
        }
        out->count = n;
    } else {
        double worst = -1;
        n = tio_component_count(base);
        out->count = n;
        for (size_t i = 0; i < n; i++) {
            double a, b;
            if (!tio_element_as_double(base, i, &a) || !tio_element_as_double(got, i, &b)) {
                set_unlike(out, "cannot compare element type %s", tsr_elem_type_name(base->elem_type));
                return;
            }
            bool nonfinite;
            double e = excess(a, b, tol, &nonfinite);
            if (e > 1.0) {
                out->mismatches++;
                if (nonfinite) out->nonfinite_mismatches++;
            }
            if (isfinite(a) && isfinite(b)) {
                double d = fabs(a - b);
                if (d > out->max_abs) out->max_abs = d;
                if (a != 0 && d / fabs(a) > out->max_rel) out->max_rel = d / fabs(a);
            }
            if (e > worst) {
                worst = e;
                out->has_worst = out->numeric = true;
                out->worst_index = i;
                out->baseline_number = a;
                out->number = b;
            }
        }
    }
    if (out->has_worst) {
        /* Complex types count components; format the element holding it. */
        size_t el = tio_is_complex_type(base->elem_type) ? out->worst_index / 2 : out->worst_index;
        tio_format_element(out->baseline_value, sizeof out->baseline_value, base, el);
        tio_format_element(out->value, sizeof out->value, got, el);
    }
}

void cmpx_measure(const tsr_value *baseline, const tsr_value *got, cmp_tolerance tol, cmpx_stats *out) {
    memset(out, 0, sizeof *out);
    out->comparable = true;
    if (!baseline || !got) {
        set_unlike(out, "%s", baseline ? "no value" : "no baseline value");
        return;
    }
    int32_t bk = tsr_value_get_kind(baseline), gk = tsr_value_get_kind(got);
    if (bk == TSR_VALUE_TENSOR && gk == TSR_VALUE_TENSOR) {
        tsr_tensor b = {.struct_size = sizeof b}, g = {.struct_size = sizeof g};
        tsr_status *st = tsr_value_tensor(baseline, &b);
        if (!st) st = tsr_value_tensor(got, &g);
        if (st) {
            set_unlike(out, "%s", tsr_status_message(st));
            tsr_status_free(st);
            return;
        }
        measure_tensors(&b, &g, tol, out);
        return;
    }
    /* Sequences, maps and optionals: only whether they match, with the
     * first difference as the reason. */
    char reason[256];
    out->count = 1;
    if (!cmp_values(got, baseline, tol, reason, sizeof reason)) {
        out->mismatches = 1;
        snprintf(out->why, sizeof out->why, "%s", reason);
    }
}

bool cmpx_agrees(const cmpx_stats *s) { return s->comparable && s->mismatches == 0; }

void cmpx_stats_merge(cmpx_stats *acc, const cmpx_stats *s) {
    if (!s->comparable && acc->comparable) {
        acc->comparable = false;
        memcpy(acc->why, s->why, sizeof acc->why);
    }
    acc->count += s->count;
    acc->mismatches += s->mismatches;
    acc->nonfinite_mismatches += s->nonfinite_mismatches;
    if (s->max_abs > acc->max_abs) acc->max_abs = s->max_abs;
    if (s->max_rel > acc->max_rel) acc->max_rel = s->max_rel;
}

void cmpx_json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

void cmpx_json_number(FILE *f, double v) {
    if (isfinite(v)) fprintf(f, "%.9g", v);
    else fputs("null", f);
}
