/* One-value constants that claims and pattern matchers read (Pow's
 * exponent, Clip's bounds, Gelu's sqrt(2), a LayerNorm's eps), stored as
 * float32 or float16: onnxconverter-common's float16 conversion writes
 * every constant of the model as float16, so a matcher reading float32
 * alone, or comparing at float32 precision, declined the whole float16
 * model (Pow on the reference provider, Gelu and LayerNorm unfused). */
#include <math.h>

#include "odn.h"

bool odn_tensor_scalar(const tsr_tensor *t, float *out) {
    if (!t || !t->data || t->rank < 0 || t->rank > ODN_MAX_RANK || odn_numel(t->rank, t->dims) != 1) return false;
    if (t->elem_type == TSR_FLOAT && t->nbytes >= sizeof(float)) {
        *out = *(const float *)t->data;
        return true;
    }
    if (t->elem_type == TSR_FLOAT16 && t->nbytes >= sizeof(uint16_t)) {
        odn_f16_to_f32((const uint16_t *)t->data, out, 1);
        return true;
    }
    return false;
}

odn_scalar odn_value_scalar(odn_plan *p, const tsr_value_info *vi) {
    odn_scalar s = {NAN, false, false};
    odn_value *v = vi ? odn_plan_value(p, vi) : NULL;
    /* a promoted float16 constant is float32 data in the plan (odn_f16.c),
     * still float16 in the model */
    if (!v || !v->constant || !odn_tensor_scalar(v->constant, &s.value)) return s;
    s.ok = true;
    s.half = v->f16 || v->constant->elem_type == TSR_FLOAT16;
    return s;
}

/* Half the spacing of float16 values around h (a float16 value): the
 * distance within which a number rounds to h. */
static double f16_half_ulp(double h) {
    int e;
    frexp(fabs(h), &e);             /* |h| in [2^(e-1), 2^e) */
    if (h == 0 || e < -13) e = -13; /* subnormals: spacing 2^-24 */
    return ldexp(1.0, e - 12);
}

bool odn_scalar_near(odn_scalar s, double want, double rel32) {
    if (!s.ok || !isfinite(s.value) || !isfinite(want)) return false;
    double a = s.value, d = fabs(a - want);
    if (!s.half) return d <= rel32 * fabs(want);
    /* `want` rounds to a at float16 (ties either way). The slack covers a
     * constant rounded to float32 first, then to float16. */
    return (a < 0) == (want < 0) && d <= f16_half_ulp(a) + 0x1p-22 * fabs(want);
}
