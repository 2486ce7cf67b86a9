/*
 * Element access and rounding for the quantization kernels. The float8,
 * float4 and packed-integer codecs are Cast's (ref_math_cast.c), so a
 * QuantizeLinear to float8 and a Cast to float8 give the same bits.
 */
#include <math.h>
#include <string.h>

#include "ref_math.h"
#include "ref_quant.h"

int rq_packed_bits(int32_t t) {
    switch (t) {
    case TSR_INT4:
    case TSR_UINT4:
    case TSR_FLOAT4E2M1: return 4;
    case TSR_INT2:
    case TSR_UINT2: return 2;
    default: return 0;
    }
}

bool rq_is_quant_type(int32_t t) {
    switch (t) {
    case TSR_UINT8:
    case TSR_INT8:
    case TSR_UINT16:
    case TSR_INT16:
    case TSR_UINT4:
    case TSR_INT4:
    case TSR_UINT2:
    case TSR_INT2:
    case TSR_FLOAT8E4M3FN:
    case TSR_FLOAT8E4M3FNUZ:
    case TSR_FLOAT8E5M2:
    case TSR_FLOAT8E5M2FNUZ:
    case TSR_FLOAT4E2M1: return true;
    default: return false;
    }
}

bool rq_is_float_out_type(int32_t t) {
    return t == TSR_FLOAT || t == TSR_FLOAT16 || t == TSR_BFLOAT16 || t == TSR_DOUBLE;
}

bool rq_is_scale_type(int32_t t) { return rq_is_float_out_type(t) || t == TSR_FLOAT8E8M0; }

bool rq_loadable(int32_t t) {
    return rq_is_quant_type(t) || rq_is_scale_type(t) || t == TSR_INT32 || t == TSR_UINT32 || t == TSR_INT64 ||
        t == TSR_BOOL;
}

const char *rq_type_name(int32_t t) {
    switch (t) {
    case TSR_FLOAT: return "float";
    case TSR_UINT8: return "uint8";
    case TSR_INT8: return "int8";
    case TSR_UINT16: return "uint16";
    case TSR_INT16: return "int16";
    case TSR_INT32: return "int32";
    case TSR_INT64: return "int64";
    case TSR_STRING: return "string";
    case TSR_BOOL: return "bool";
    case TSR_FLOAT16: return "float16";
    case TSR_DOUBLE: return "double";
    case TSR_UINT32: return "uint32";
    case TSR_UINT64: return "uint64";
    case TSR_BFLOAT16: return "bfloat16";
    case TSR_FLOAT8E4M3FN: return "float8e4m3fn";
    case TSR_FLOAT8E4M3FNUZ: return "float8e4m3fnuz";
    case TSR_FLOAT8E5M2: return "float8e5m2";
    case TSR_FLOAT8E5M2FNUZ: return "float8e5m2fnuz";
    case TSR_UINT4: return "uint4";
    case TSR_INT4: return "int4";
    case TSR_FLOAT4E2M1: return "float4e2m1";
    case TSR_FLOAT8E8M0: return "float8e8m0";
    case TSR_UINT2: return "uint2";
    case TSR_INT2: return "int2";
    default: return "an unknown type";
    }
}

double rq_load(int32_t t, const void *data, size_t i) {
    const f8fmt *f = ref_f8_format(t);
    if (f) return ref_f8_decode(f, ((const uint8_t *)data)[i]);
    uint8_t b;
    switch (t) {
    case TSR_FLOAT8E8M0: return ref_e8m0_decode(((const uint8_t *)data)[i]);
    case TSR_FLOAT4E2M1: return ref_f4_decode(ref_sub_get(data, i, 4));
    case TSR_UINT4: return ref_sub_get(data, i, 4);
    case TSR_UINT2: return ref_sub_get(data, i, 2);
    case TSR_INT4: b = ref_sub_get(data, i, 4); return (b & 8) ? (double)b - 16 : (double)b;
    case TSR_INT2: b = ref_sub_get(data, i, 2); return (b & 2) ? (double)b - 4 : (double)b;
    default: return ref_load(t, data, i);
    }
}

/* d rounded to float with round-to-odd: float has more than twice the
 * bits of float16 and bfloat16, so rounding this float once more to
 * nearest even gives the correctly rounded result of d itself. */
static float to_float_odd(double d) {
    float f = (float)d;
    if (d != d || isinf(f) || (double)f == d) return f;
    if (fabs((double)f) > fabs(d)) f = nextafterf(f, 0.0f);
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    bits |= 1;
    memcpy(&f, &bits, sizeof f);
    return f;
}

double rq_round_to(int32_t t, double v) {
    switch (t) {
    case TSR_FLOAT16: return ref_half_to_float(ref_float_to_half(to_float_odd(v)));
    case TSR_BFLOAT16: return ref_bf16_to_float(ref_float_to_bf16(to_float_odd(v)));
    case TSR_FLOAT:
    case TSR_FLOAT8E8M0: return (double)(float)v;
    default: return v;
    }
}

void rq_store_float(int32_t t, void *data, size_t i, double v) {
    switch (t) {
    case TSR_FLOAT16: ((uint16_t *)data)[i] = ref_float_to_half(to_float_odd(v)); break;
    case TSR_BFLOAT16: ((uint16_t *)data)[i] = ref_float_to_bf16(to_float_odd(v)); break;
    case TSR_DOUBLE: ((double *)data)[i] = v; break;
    default: ((float *)data)[i] = (float)v; break;
    }
}

static bool int_range(int32_t t, double *lo, double *hi) {
    switch (t) {
    case TSR_UINT8:
        *lo = 0;
        *hi = 255;
        return true;
    case TSR_INT8:
        *lo = -128;
        *hi = 127;
        return true;
    case TSR_UINT16:
        *lo = 0;
        *hi = 65535;
        return true;
    case TSR_INT16:
        *lo = -32768;
        *hi = 32767;
        return true;
    case TSR_UINT4:
        *lo = 0;
        *hi = 15;
        return true;
    case TSR_INT4:
        *lo = -8;
        *hi = 7;
        return true;
    case TSR_UINT2:
        *lo = 0;
        *hi = 3;
        return true;
    case TSR_INT2:
        *lo = -2;
        *hi = 1;
        return true;
    default: return false;
    }
}

void rq_quant_store(int32_t t, void *data, size_t i, double q, double zp, bool saturate) {
    double lo, hi;
    if (int_range(t, &lo, &hi)) {
        /* Round before adding the zero point: ties go to the even
         * quotient, whatever the zero point's parity. */
        double r = q != q ? 0.0 : nearbyint(q);
        r += zp;
        if (r < lo) r = lo;
        if (r > hi) r = hi;
        int64_t v = (int64_t)r;
        int bits = rq_packed_bits(t);
        if (bits) ref_sub_set(data, i, bits, (uint8_t)((uint64_t)v & ((1u << bits) - 1)));
        else ref_store_i64(t, data, i, v);
        return;
    }
    const f8fmt *f = ref_f8_format(t);
    if (f) {
        /* A zero point of 0 is left out so that -0 keeps its sign. */
        ((uint8_t *)data)[i] = ref_f8_encode(f, zp != 0 ? q + zp : q, saturate);
        return;
    }
    if (t == TSR_FLOAT4E2M1) ref_sub_set(data, i, 4, ref_f4_encode(q + zp));
}

bool rq_mul_size(uint64_t a, uint64_t b, uint64_t *out) {
    if (a != 0 && b > RQ_MAX_ELEMS / a) return false;
    *out = a * b;
    return *out <= RQ_MAX_ELEMS;
}

tsr_status *rq_check_tensor(ref_ctx *c, const tsr_tensor *t, const char *what) {
    if (!t) return ref_err(c, TSR_ERR_INVALID_MODEL, "input %s is required", what);
    if (!rq_loadable(t->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input %s has element type %s (%d)", what,
                       rq_type_name(t->elem_type), (int)t->elem_type);
    if (t->memory_kind != TSR_MEMORY_HOST)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input %s is not in host memory", what);
    if (t->rank < 0 || t->rank > REF_MAX_RANK)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input %s has rank %d", what, (int)t->rank);
    uint64_t n = 1;
    for (int32_t d = 0; d < t->rank; d++) {
        if (t->dims[d] < 0 || !rq_mul_size(n, (uint64_t)t->dims[d], &n))
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input %s has an invalid or huge shape", what);
    }
    int bits = rq_packed_bits(t->elem_type);
    uint64_t need = bits ? (n * (uint64_t)bits + 7) / 8 : n * ref_elem_size(t->elem_type);
    if (t->nbytes < need || (need && !t->data))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input %s holds %zu bytes, its shape needs %llu", what, t->nbytes,
                       (unsigned long long)need);
    return NULL;
}

void rq_clear_packed(tsr_tensor *t) {
    if (rq_packed_bits(t->elem_type) && t->data && t->nbytes) memset(t->data, 0, t->nbytes);
}
