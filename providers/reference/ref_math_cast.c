/*
 * Reference kernels: Cast and CastLike between every ONNX element type we
 * can hold: the IEEE floats, bfloat16, the four float8 types and
 * float8e8m0, the packed 4- and 2-bit integers, float4e2m1, bool and
 * string.
 *
 * Every element goes through a `num` that keeps integers exact (a double
 * would lose int64 precision) and floats as double. Rules follow ONNX's
 * reference implementation (numpy astype): float to integer truncates
 * toward zero, integer narrowing wraps, floats round to nearest even; the
 * float8 types saturate unless saturate=0; 4- and 2-bit integers wrap;
 * numbers print as numpy prints them (shortest round-trip digits).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"
#include "ref_math.h"

enum { NK_F, NK_I, NK_U };
typedef struct num {
    int kind;
    double d;
    int64_t i;
    uint64_t u;
} num;

static double num_d(num v) { return v.kind == NK_F ? v.d : v.kind == NK_I ? (double)v.i : (double)v.u; }
static float num_f(num v) { return v.kind == NK_F ? (float)v.d : v.kind == NK_I ? (float)v.i : (float)v.u; }

/* double -> float rounding to odd: a following float -> float16/bfloat16
 * rounding to nearest even then equals one direct rounding (float keeps
 * enough extra bits), so a double never rounds twice. */
static float num_f_odd(num v) {
    if (v.kind != NK_F) return num_f(v);
    double d = v.d;
    float f = (float)d;
    if (d != d || isinf(f) || (double)f == d) return f;
    if (fabs((double)f) > fabs(d)) f = nextafterf(f, 0.0f);
    uint32_t bits;
    memcpy(&bits, &f, 4);
    bits |= 1;
    memcpy(&f, &bits, 4);
    return f;
}
/* Integer value: floats truncate toward zero. */
static uint64_t num_bits(num v) {
    return v.kind == NK_F ? (v.d < 0 ? (uint64_t)m_d2i(v.d) : m_d2u(v.d)) : v.kind == NK_I ? (uint64_t)v.i : v.u;
}

/* ------------------------------------------------------------------------ */
/* float8 (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ)                                  */

typedef struct f8fmt {
    int mbits, bias;
    bool fnuz;    /* no negative zero, no infinity, 0x80 is the only NaN */
    bool has_inf; /* E5M2 */
    double maxval;
    uint8_t maxcode;
} f8fmt;

const f8fmt *ref_f8_format(int32_t t) {
    static const f8fmt e4m3fn = {3, 7, false, false, 448.0, 0x7e};
    static const f8fmt e4m3fnuz = {3, 8, true, false, 240.0, 0x7f};
    static const f8fmt e5m2 = {2, 15, false, true, 57344.0, 0x7b};
    static const f8fmt e5m2fnuz = {2, 16, true, false, 57344.0, 0x7f};
    switch (t) {
    case TSR_FLOAT8E4M3FN: return &e4m3fn;
    case TSR_FLOAT8E4M3FNUZ: return &e4m3fnuz;
    case TSR_FLOAT8E5M2: return &e5m2;
    case TSR_FLOAT8E5M2FNUZ: return &e5m2fnuz;
    default: return NULL;
    }
}

double ref_f8_decode(const f8fmt *f, uint8_t v) {
    int ebits = 7 - f->mbits;
    bool neg = (v & 0x80) != 0;
    int e = (v >> f->mbits) & ((1 << ebits) - 1);
    int m = v & ((1 << f->mbits) - 1);
    if (f->fnuz) {
        if (v == 0x80) return NAN;
    } else if (f->has_inf) {
        if (e == (1 << ebits) - 1) return m ? NAN : (neg ? -INFINITY : INFINITY);
    } else if ((v & 0x7f) == 0x7f) {
        return NAN;
    }
    double r = e == 0 ? ldexp(m, 1 - f->bias - f->mbits) : ldexp(1.0 + ldexp(m, -f->mbits), e - f->bias);
    return neg ? -r : r;
}

uint8_t ref_f8_encode(const f8fmt *f, double x, bool saturate) {
    uint8_t sign = signbit(x) ? 0x80 : 0;
    /* E5M2 has IEEE-style NaNs; 0x7e is the quiet one numpy/ml_dtypes give. */
    uint8_t nan = f->fnuz ? 0x80 : (uint8_t)(sign | (f->has_inf ? 0x7e : 0x7f));
    if (x != x) return nan;
    double a = fabs(x);
    if (isinf(a)) {
        if (f->has_inf) return saturate ? (uint8_t)(sign | f->maxcode) : (uint8_t)(sign | 0x7c);
        return saturate ? (uint8_t)(sign | f->maxcode) : nan;
    }
    int emin = 1 - f->bias;
    int e;
    (void)frexp(a, &e);
    e -= 1; /* a = 1.m * 2^e */
    if (e < emin) e = emin;
    /* Dividing by a power of two is exact, so nearbyint rounds the true
     * value to nearest even at the target's precision. */
    double q = nearbyint(ldexp(a, f->mbits - e));
    double r = ldexp(q, e - f->mbits);
    if (r > f->maxval) {
        if (saturate) return (uint8_t)(sign | f->maxcode);
        return f->has_inf ? (uint8_t)(sign | 0x7c) : nan;
    }
    if (r == 0) return f->fnuz ? 0 : sign;
    (void)frexp(r, &e);
    e -= 1;
    uint8_t code;
    if (e < emin) {
        code = (uint8_t)ldexp(r, f->mbits - emin); /* subnormal */
    } else {
        int m = (int)ldexp(r / ldexp(1.0, e) - 1.0, f->mbits);
        code = (uint8_t)(((e + f->bias) << f->mbits) | m);
    }
    return (uint8_t)(sign | code);
}

/* float8e8m0: an exponent only, 2^(v-127); 0xff is NaN. */
double ref_e8m0_decode(uint8_t v) {
    if (v == 0xff) return NAN;
    return ldexp(1.0, (int)v - 127);
}

static uint8_t e8m0_encode(float x, bool saturate, int round_mode) {
    uint32_t bits;
    memcpy(&bits, &x, 4);
    uint32_t e = (bits >> 23) & 0xff, m = bits & 0x7fffff;
    if (e == 0xff) {
        if (m) return 0xff;            /* NaN */
        return saturate ? 0xfe : 0xff; /* infinity */
    }
    bool up = false;
    if (round_mode == 0) up = m != 0;                   /* "up" */
    else if (round_mode == 2) up = (m & 0x400000) != 0; /* "nearest" */
    if (up) {
        if (e == 0xfe) return saturate ? 0xfe : 0xff;
        e++;
    }
    return (uint8_t)e;
}

/* ------------------------------------------------------------------------ */
/* float4e2m1: sign, 2 exponent bits (bias 1), 1 mantissa bit.                */

double ref_f4_decode(uint8_t v) {
    static const double mag[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
    double r = mag[v & 7];
    return (v & 8) ? -r : r;
}

uint8_t ref_f4_encode(double x) {
    /* Saturates (there is no infinity); NaN becomes 0x8 as ONNX's reference
     * data has it. */
    if (x != x) return 0x8;
    uint8_t sign = signbit(x) ? 8 : 0;
    double a = fabs(x);
    uint8_t code;
    if (a > 5.0) code = 7;
    else if (a >= 3.5) code = 6;
    else if (a > 2.5) code = 5;
    else if (a >= 1.75) code = 4;
    else if (a > 1.25) code = 3;
    else if (a >= 0.75) code = 2;
    else if (a > 0.25) code = 1;
    else code = 0;
    return (uint8_t)(sign | code);
}

/* ------------------------------------------------------------------------ */
/* Packed sub-byte types                                                      */

static int sub_bits(int32_t t) {
    switch (t) {
    case TSR_INT4:
    case TSR_UINT4:
    case TSR_FLOAT4E2M1: return 4;
    case TSR_INT2:
    case TSR_UINT2: return 2;
    default: return 0;
    }
}

uint8_t ref_sub_get(const void *data, size_t i, int bits) {
    const uint8_t *p = data;
    int per = 8 / bits;
    return (uint8_t)((p[i / (size_t)per] >> ((i % (size_t)per) * (size_t)bits)) & ((1u << bits) - 1));
}

void ref_sub_set(void *data, size_t i, int bits, uint8_t v) {
    uint8_t *p = data;
    int per = 8 / bits;
    unsigned sh = (unsigned)((i % (size_t)per) * (size_t)bits);
    uint8_t mask = (uint8_t)(((1u << bits) - 1) << sh);
    p[i / (size_t)per] = (uint8_t)((p[i / (size_t)per] & ~mask) | ((v << sh) & mask));
}

/* ------------------------------------------------------------------------ */
/* Strings                                                                    */

/* Shortest digits that read back as the same value of type t, printed as
 * numpy prints a scalar: positional between 1e-4 and 1e16, else d.ddde+XX. */
static bool same_value(int32_t t, double a, double b) {
    if (t == TSR_FLOAT) return (float)a == (float)b;
    if (t == TSR_FLOAT16) return ref_float_to_half((float)a) == ref_float_to_half((float)b);
    if (t == TSR_BFLOAT16) return ref_float_to_bf16((float)a) == ref_float_to_bf16((float)b);
    return a == b;
}

static int format_float(char *out, size_t size, double v, int32_t t) {
    if (v != v) return snprintf(out, size, "nan");
    if (isinf(v)) return snprintf(out, size, v > 0 ? "inf" : "-inf");
    if (v == 0) return snprintf(out, size, signbit(v) ? "-0.0" : "0.0");
    char buf[64];
    int p;
    for (p = 0; p < 17; p++) {
        snprintf(buf, sizeof buf, "%.*e", p, v);
        if (same_value(t, strtod(buf, NULL), v)) break;
    }
    /* buf: [-]d.ddde[+-]XX; take the digits and the exponent apart. */
    char digits[32];
    size_t nd = 0;
    const char *s = buf;
    bool neg = false;
    if (*s == '-') {
        neg = true;
        s++;
    }
    while (*s && *s != 'e') {
        if (*s != '.' && nd < sizeof digits - 1) digits[nd++] = *s;
        s++;
    }
    digits[nd] = 0;
    int exp10 = *s == 'e' ? atoi(s + 1) : 0;
    while (nd > 1 && digits[nd - 1] == '0') digits[--nd] = 0;
    double a = fabs(v);
    size_t k = 0;
    char res[96];
    if (neg) res[k++] = '-';
    if (a < 1e-4 || a >= 1e16) {
        res[k++] = digits[0];
        if (nd > 1) {
            res[k++] = '.';
            for (size_t i = 1; i < nd; i++) res[k++] = digits[i];
        }
        k += (size_t)snprintf(res + k, sizeof res - k, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
    } else if (exp10 >= 0) {
        for (int i = 0; i <= exp10; i++) res[k++] = (size_t)i < nd ? digits[i] : '0';
        res[k++] = '.';
        if ((size_t)exp10 + 1 < nd)
            for (size_t i = (size_t)exp10 + 1; i < nd; i++) res[k++] = digits[i];
        else res[k++] = '0';
        res[k] = 0;
    } else {
        res[k++] = '0';
        res[k++] = '.';
        for (int i = 0; i < -exp10 - 1; i++) res[k++] = '0';
        for (size_t i = 0; i < nd; i++) res[k++] = digits[i];
        res[k] = 0;
    }
    return snprintf(out, size, "%s", res);
}

static bool parse_string(const tsr_string *s, num *out) {
    char buf[128];
    size_t n = s->size < sizeof buf - 1 ? s->size : sizeof buf - 1;
    if (n) memcpy(buf, s->data, n); /* an empty string may have no data */
    buf[n] = 0;
    char *end;
    errno = 0;
    long long iv = strtoll(buf, &end, 10);
    if (end != buf && errno == 0) {
        while (*end == ' ' || *end == '\t' || *end == '\n') end++;
        if (*end == 0) {
            out->kind = NK_I;
            out->i = iv;
            return true;
        }
    }
    double d = strtod(buf, &end);
    if (end == buf) return false;
    while (*end == ' ' || *end == '\t' || *end == '\n') end++;
    if (*end) return false;
    out->kind = NK_F;
    out->d = d;
    return true;
}

/* ------------------------------------------------------------------------ */
/* The conversion                                                             */

static num load_num(int32_t t, const void *data, size_t i) {
    num v = {NK_F, 0, 0, 0};
    const f8fmt *f = ref_f8_format(t);
    if (f) {
        v.d = ref_f8_decode(f, ((const uint8_t *)data)[i]);
        return v;
    }
    switch (t) {
    case TSR_FLOAT:
    case TSR_DOUBLE:
    case TSR_FLOAT16:
    case TSR_BFLOAT16: v.d = m_ldd(t, data, i); return v;
    case TSR_FLOAT8E8M0: v.d = ref_e8m0_decode(((const uint8_t *)data)[i]); return v;
    case TSR_FLOAT4E2M1: v.d = ref_f4_decode(ref_sub_get(data, i, 4)); return v;
    case TSR_INT4: {
        uint8_t b = ref_sub_get(data, i, 4);
        v.kind = NK_I;
        v.i = (b & 8) ? (int64_t)b - 16 : b;
        return v;
    }
    case TSR_INT2: {
        uint8_t b = ref_sub_get(data, i, 2);
        v.kind = NK_I;
        v.i = (b & 2) ? (int64_t)b - 4 : b;
        return v;
    }
    case TSR_UINT4:
        v.kind = NK_I;
        v.i = ref_sub_get(data, i, 4);
        return v;
    case TSR_UINT2:
        v.kind = NK_I;
        v.i = ref_sub_get(data, i, 2);
        return v;
    case TSR_UINT64:
        v.kind = NK_U;
        v.u = ((const uint64_t *)data)[i];
        return v;
    default:
        v.kind = NK_I;
        v.i = m_ldi(t, data, i);
        return v;
    }
}

typedef struct cast_opts {
    bool saturate;
    int round_mode; /* e8m0: 0 up, 1 down, 2 nearest */
} cast_opts;

static void store_num(int32_t t, void *data, size_t i, num v, const cast_opts *o) {
    const f8fmt *f = ref_f8_format(t);
    if (f) {
        ((uint8_t *)data)[i] = ref_f8_encode(f, num_d(v), o->saturate);
        return;
    }
    switch (t) {
    case TSR_FLOAT: ((float *)data)[i] = num_f(v); return;
    case TSR_DOUBLE: ((double *)data)[i] = num_d(v); return;
    case TSR_FLOAT16: ((uint16_t *)data)[i] = ref_float_to_half(num_f_odd(v)); return;
    case TSR_BFLOAT16: ((uint16_t *)data)[i] = ref_float_to_bf16(num_f_odd(v)); return;
    case TSR_BOOL: ((uint8_t *)data)[i] = v.kind == NK_F ? v.d != 0 : v.kind == NK_I ? v.i != 0 : v.u != 0; return;
    case TSR_FLOAT8E8M0: ((uint8_t *)data)[i] = e8m0_encode(num_f(v), o->saturate, o->round_mode); return;
    case TSR_FLOAT4E2M1: ref_sub_set(data, i, 4, ref_f4_encode(num_d(v))); return;
    case TSR_INT4:
    case TSR_UINT4: ref_sub_set(data, i, 4, (uint8_t)(num_bits(v) & 0xf)); return;
    case TSR_INT2:
    case TSR_UINT2: ref_sub_set(data, i, 2, (uint8_t)(num_bits(v) & 0x3)); return;
    default: m_stu(t, data, i, num_bits(v)); return;
    }
}

static bool castable(int32_t t) {
    switch (t) {
    case TSR_FLOAT:
    case TSR_UINT8:
    case TSR_INT8:
    case TSR_UINT16:
    case TSR_INT16:
    case TSR_INT32:
    case TSR_INT64:
    case TSR_STRING:
    case TSR_BOOL:
    case TSR_FLOAT16:
    case TSR_DOUBLE:
    case TSR_UINT32:
    case TSR_UINT64:
    case TSR_BFLOAT16:
    case TSR_FLOAT8E4M3FN:
    case TSR_FLOAT8E4M3FNUZ:
    case TSR_FLOAT8E5M2:
    case TSR_FLOAT8E5M2FNUZ:
    case TSR_UINT4:
    case TSR_INT4:
    case TSR_FLOAT4E2M1:
    case TSR_FLOAT8E8M0:
    case TSR_UINT2:
    case TSR_INT2: return true;
    default: return false;
    }
}

static tsr_status *cast_to(ref_ctx *c, int32_t to) {
    const tsr_tensor *x = ref_in(c, 0);
    if (!x) return ref_err(c, TSR_ERR_INVALID_MODEL, "input 0 is required");
    int32_t from = x->elem_type;
    if (!castable(from) || !castable(to))
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "cast from type %d to type %d is not supported", (int)from, (int)to);
    cast_opts o = {true, 0};
    /* saturate exists from opset 19 and matters only for float8 targets. */
    if (ref_opset(c) >= 19) o.saturate = ref_attr_int(c, "saturate", 1) != 0;
    const char *rm = ref_attr_str(c, "round_mode", "up");
    if (strcmp(rm, "down") == 0) o.round_mode = 1;
    else if (strcmp(rm, "nearest") == 0) o.round_mode = 2;
    else if (strcmp(rm, "up") != 0)
        return ref_err(c, TSR_ERR_INVALID_MODEL, "round_mode must be up, down or nearest, not '%s'", rm);
    tsr_tensor *out;
    tsr_status *st = ref_out(c, 0, to, x->rank, x->dims, &out);
    if (st) return st;
    uint64_t n = ref_numel(x);
    if (n == 0) return NULL;
    if (sub_bits(to) && out->data) memset(out->data, 0, out->nbytes);

    if (from == to && from != TSR_STRING && sub_bits(from) == 0) {
        memcpy(out->data, x->data, (size_t)n * ref_elem_size(from));
        return NULL;
    }
    /* float32 <-> common types without the per-element num detour. */
    if (from == TSR_FLOAT && to == TSR_FLOAT16) {
        const float *a = x->data;
        uint16_t *b = out->data;
        for (uint64_t i = 0; i < n; i++) b[i] = ref_float_to_half(a[i]);
        return NULL;
    }
    if (from == TSR_FLOAT16 && to == TSR_FLOAT) {
        const uint16_t *a = x->data;
        float *b = out->data;
        for (uint64_t i = 0; i < n; i++) b[i] = ref_half_to_float(a[i]);
        return NULL;
    }
    if (from == TSR_FLOAT && to == TSR_DOUBLE) {
        const float *a = x->data;
        double *b = out->data;
        for (uint64_t i = 0; i < n; i++) b[i] = a[i];
        return NULL;
    }
    if (from == TSR_DOUBLE && to == TSR_FLOAT) {
        const double *a = x->data;
        float *b = out->data;
        for (uint64_t i = 0; i < n; i++) b[i] = (float)a[i];
        return NULL;
    }
    if (from == TSR_INT64 && to == TSR_FLOAT) {
        const int64_t *a = x->data;
        float *b = out->data;
        for (uint64_t i = 0; i < n; i++) b[i] = (float)a[i];
        return NULL;
    }

    if (to == TSR_STRING) {
        const tsr_host_api *h = c->host;
        for (uint64_t i = 0; i < n; i++) {
            char buf[96];
            int len;
            if (from == TSR_BOOL) {
                len = snprintf(buf, sizeof buf, "%s", ((const uint8_t *)x->data)[i] ? "True" : "False");
            } else {
                num v = load_num(from, x->data, (size_t)i);
                if (v.kind == NK_I) len = snprintf(buf, sizeof buf, "%lld", (long long)v.i);
                else if (v.kind == NK_U) len = snprintf(buf, sizeof buf, "%llu", (unsigned long long)v.u);
                else
                    len = format_float(
                        buf, sizeof buf, v.d,
                        (from == TSR_DOUBLE || from == TSR_FLOAT || from == TSR_FLOAT16 || from == TSR_BFLOAT16)
                            ? from
                            : TSR_FLOAT);
            }
            if (len < 0) len = 0;
            st = h->tensor_set_string(out, (size_t)i, buf, (size_t)len);
            if (st) return st;
        }
        return NULL;
    }
    if (from == TSR_STRING) {
        const tsr_string *s = x->data;
        for (uint64_t i = 0; i < n; i++) {
            num v = {NK_F, 0, 0, 0};
            if (!parse_string(&s[i], &v)) {
                int len = (int)(s[i].size > 40 ? 40 : s[i].size);
                return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "cannot parse '%.*s' as a number", len, s[i].data);
            }
            if (v.kind == NK_I &&
                (to == TSR_FLOAT || to == TSR_DOUBLE || to == TSR_FLOAT16 || to == TSR_BFLOAT16 || ref_f8_format(to))) {
                v.kind = NK_F;
                v.d = (double)v.i;
            }
            store_num(to, out->data, (size_t)i, v, &o);
        }
        return NULL;
    }
    for (uint64_t i = 0; i < n; i++) store_num(to, out->data, (size_t)i, load_num(from, x->data, (size_t)i), &o);
    return NULL;
}

/* Cast before opset 6 named the target type with a string ("FLOAT"). */
static int32_t type_from_name(const char *s, size_t n) {
    static const char *const names[] = {"UNDEFINED", "FLOAT",  "UINT8", "INT8",    "UINT16", "INT16",  "INT32",
                                        "INT64",     "STRING", "BOOL",  "FLOAT16", "DOUBLE", "UINT32", "UINT64"};
    for (size_t t = 1; t < sizeof names / sizeof names[0]; t++)
        if (strlen(names[t]) == n && strncmp(names[t], s, n) == 0) return (int32_t)t;
    return TSR_UNDEFINED;
}

/* The `to` attribute as an element type, whichever form it has; 0 when
 * absent or unknown. ref.h has no attribute-type helper, hence the host. */
static int32_t cast_target(const tsr_host_api *h, const tsr_node *node) {
    const tsr_attr *a = h->node_attr_find(node, "to");
    if (!a) return TSR_UNDEFINED;
    if (h->attr_type(a) == TSR_ATTR_STRING) {
        size_t n = 0;
        const char *s = h->attr_string(a, &n);
        return s ? type_from_name(s, n) : TSR_UNDEFINED;
    }
    return (int32_t)h->attr_int(a);
}

tsr_status *ref_math_cast(ref_ctx *c) {
    int32_t to = cast_target(c->host, c->node);
    if (to == TSR_UNDEFINED) return ref_err(c, TSR_ERR_INVALID_MODEL, "attribute 'to' is missing or names no type");
    return cast_to(c, to);
}

tsr_status *ref_math_castlike(ref_ctx *c) {
    const tsr_tensor *like = ref_in(c, 1);
    if (!like) return ref_err(c, TSR_ERR_INVALID_MODEL, "input 1 (target_type) is required");
    return cast_to(c, like->elem_type);
}

/* BitCast (opset 26): the same bytes read as another type of the same
 * width; the shape does not change. */
tsr_status *ref_math_bitcast(ref_ctx *c) {
    const tsr_tensor *x = ref_in(c, 0);
    if (!x) return ref_err(c, TSR_ERR_INVALID_MODEL, "input 0 is required");
    int32_t to = (int32_t)ref_attr_int(c, "to", 0);
    size_t es = ref_elem_size(x->elem_type);
    if (es == 0 || x->elem_type == TSR_STRING || to == TSR_STRING || ref_elem_size(to) != es)
        return ref_err(c, TSR_ERR_NOT_SUPPORTED,
                       "BitCast from type %d to type %d: both must be fixed-size types of one width", (int)x->elem_type,
                       (int)to);
    tsr_tensor *out;
    tsr_status *st = ref_out(c, 0, to, x->rank, x->dims, &out);
    if (st) return st;
    size_t n = (size_t)ref_numel(x) * es;
    if (n) memcpy(out->data, x->data, n);
    return NULL;
}

int ref_math_cast_check(const tsr_host_api *h, const tsr_node *node, char *why, size_t why_size) {
    int32_t to = 0;
    const char *op = h->node_op_type(node);
    if (strcmp(op, "Cast") == 0 || strcmp(op, "BitCast") == 0) {
        to = cast_target(h, node);
        if (to == TSR_UNDEFINED) {
            snprintf(why, why_size, "%s without a usable 'to' attribute", op);
            return TSR_DECLINE_ATTRIBUTE;
        }
    } else if (h->node_input_count(node) > 1 && h->node_input(node, 1)) {
        to = h->value_elem_type(h->node_input(node, 1));
    }
    if (to != TSR_UNDEFINED && !castable(to)) {
        snprintf(why, why_size, "%s to element type %d is not implemented", op, (int)to);
        return TSR_DECLINE_TYPE;
    }
    const tsr_value_info *in = tsr_util_node_input(h, node, 0);
    int32_t from = in ? h->value_elem_type(in) : 0;
    if (from != TSR_UNDEFINED && !castable(from)) {
        snprintf(why, why_size, "%s from element type %d is not implemented", op, (int)from);
        return TSR_DECLINE_TYPE;
    }
    if (strcmp(op, "BitCast") == 0 && from != TSR_UNDEFINED &&
        (from == TSR_STRING || to == TSR_STRING || ref_elem_size(from) == 0 ||
         ref_elem_size(from) != ref_elem_size(to))) {
        snprintf(why, why_size, "BitCast from element type %d to %d changes the width", (int)from, (int)to);
        return TSR_DECLINE_TYPE;
    }
    return 0;
}
