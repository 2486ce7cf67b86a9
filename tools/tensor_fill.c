/*
 * Making tensor contents: the deterministic inputs `tessera run`, `bench`
 * and `compare` make up for inputs not given, and constants (--fill).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* splitmix64: tiny, good enough, and the same on every platform, so a
 * generated input is reproducible across machines. */
static uint64_t next_random(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1). */
static double random_unit(uint64_t *state) { return (double)(next_random(state) >> 11) * 0x1p-52 - 1.0; }

/* Round-to-nearest-even float -> IEEE half. */
static uint16_t float_to_half(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    int32_t e = (int32_t)((x >> 23) & 0xff) - 127 + 15;
    uint32_t m = x & 0x7fffff;
    if (((x >> 23) & 0xff) == 0xff) return sign | 0x7c00 | (m ? 0x200 : 0);
    if (e >= 31) return sign | 0x7c00;
    if (e <= 0) {
        if (e < -10) return sign;
        m |= 0x800000;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t h = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1))) h++;
        return sign | (uint16_t)h;
    }
    uint32_t h = ((uint32_t)e << 10) | (m >> 13), rem = m & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++; /* may carry into the exponent: right */
    return sign | (uint16_t)h;
}

static uint16_t float_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

/*
 * An integer element, as ../shared/bench/benchlib.py makes them: indices in
 * [0, n) for an input that indexes an axis of n (0 when n is unknown), 1 for
 * a mask, else 1..4 (never 0: a divisor, a count or a size stays valid).
 * `max` is the largest value the type holds.
 */
static uint64_t generated_int(uint64_t r, tio_int_hint hint, int64_t max) {
    if (hint.index_bound >= 0) {
        int64_t n = hint.index_bound > max ? max : hint.index_bound;
        return n > 1 ? r % (uint64_t)n : 0;
    }
    return hint.mask ? 1 : 1 + r % 4;
}

/*
 * What the inputs look like: floats uniform in [-1, 1) (small enough that
 * exp/pow don't overflow), integers as generated_int says, bools alternating
 * false/true (all true for a mask), strings "s0", "s1", .... The 8-bit and
 * 4-bit floats get codes whose magnitude is below 1 in every variant and
 * never a NaN pattern.
 */
tsr_status *tio_fill_generated(tsr_value *value, uint64_t seed, tio_int_hint hint) {
    tsr_tensor t = {.struct_size = sizeof t};
    tsr_status *st = tsr_value_tensor(value, &t);
    if (st) return st;
    size_t n = tio_element_count(t.rank, t.dims);
    uint64_t state = seed;
    uint8_t *b = t.data;
    if (t.elem_type == TSR_STRING) {
        for (size_t i = 0; i < n; i++) {
            char s[32];
            int len = snprintf(s, sizeof s, "s%zu", i);
            if ((st = tsr_value_set_string(value, i, s, (size_t)len))) return st;
        }
        return NULL;
    }
    if (n == 0 || !b) return NULL;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = next_random(&state);
        switch (t.elem_type) {
        case TSR_FLOAT: ((float *)b)[i] = (float)random_unit(&state); break;
        case TSR_DOUBLE: ((double *)b)[i] = random_unit(&state); break;
        case TSR_COMPLEX64:
            ((float *)b)[2 * i] = (float)random_unit(&state);
            ((float *)b)[2 * i + 1] = (float)random_unit(&state);
            break;
        case TSR_COMPLEX128:
            ((double *)b)[2 * i] = random_unit(&state);
            ((double *)b)[2 * i + 1] = random_unit(&state);
            break;
        case TSR_FLOAT16: ((uint16_t *)b)[i] = float_to_half((float)random_unit(&state)); break;
        case TSR_BFLOAT16: ((uint16_t *)b)[i] = float_to_bf16((float)random_unit(&state)); break;
        case TSR_FLOAT8E4M3FN:
        case TSR_FLOAT8E4M3FNUZ:
        case TSR_FLOAT8E5M2:
        case TSR_FLOAT8E5M2FNUZ: {
            /* Below 0x38 the exponent field is under every variant's bias;
             * a zero magnitude stays unsigned (0x80 is NaN in fnuz). */
            uint8_t mag = (uint8_t)(r % 0x38);
            b[i] = (uint8_t)(mag | ((mag && (r >> 32) & 1) ? 0x80 : 0));
            break;
        }
        case TSR_FLOAT8E8M0: b[i] = (uint8_t)(127 - r % 8); break;
        case TSR_FLOAT4E2M1: /* codes 0..2: 0, 0.5, 1; a sign bit */
        case TSR_INT4:
        case TSR_UINT4: {
            unsigned v = t.elem_type == TSR_FLOAT4E2M1 ? (unsigned)(r % 3) | (unsigned)((r >> 32) & 8)
                                                       : (unsigned)generated_int(r, hint, 7);
            b[i / 2] = (uint8_t)((b[i / 2] & ~(0xfu << (4 * (i % 2)))) | (v << (4 * (i % 2))));
            break;
        }
        case TSR_INT2:
        case TSR_UINT2: {
            unsigned v = (unsigned)(r % 2);
            b[i / 4] = (uint8_t)((b[i / 4] & ~(0x3u << (2 * (i % 4)))) | (v << (2 * (i % 4))));
            break;
        }
        case TSR_BOOL: b[i] = (uint8_t)(hint.mask ? 1 : (i & 1)); break;
        case TSR_INT8:
        case TSR_UINT8: b[i] = (uint8_t)generated_int(r, hint, 127); break;
        case TSR_INT16:
        case TSR_UINT16: ((uint16_t *)b)[i] = (uint16_t)generated_int(r, hint, 32767); break;
        case TSR_INT32:
        case TSR_UINT32: ((uint32_t *)b)[i] = (uint32_t)generated_int(r, hint, INT32_MAX); break;
        case TSR_INT64:
        case TSR_UINT64: ((uint64_t *)b)[i] = generated_int(r, hint, INT64_MAX); break;
        default: return NULL; /* unknown: leave the zeros */
        }
    }
    return NULL;
}

/* Stores x as element i of a numeric or bool tensor; false when it does not
 * fit the type (message in why). */
static bool store_constant(const tsr_tensor *t, size_t i, double x, char *why, size_t why_size) {
    void *d = t->data;
    int32_t et = t->elem_type;
    if (tio_is_signed_int_type(et) || tio_is_unsigned_int_type(et)) {
        if (et == TSR_BOOL) {
            ((uint8_t *)d)[i] = x != 0;
            return true;
        }
        double lo = 0, hi = 0;
        switch (et) {
        case TSR_INT8:
            lo = INT8_MIN;
            hi = INT8_MAX;
            break;
        case TSR_INT16:
            lo = INT16_MIN;
            hi = INT16_MAX;
            break;
        case TSR_INT32:
            lo = INT32_MIN;
            hi = INT32_MAX;
            break;
        case TSR_INT64:
            lo = -0x1p63;
            hi = 0x1p63 - 1024;
            break;
        case TSR_UINT8: hi = UINT8_MAX; break;
        case TSR_UINT16: hi = UINT16_MAX; break;
        case TSR_UINT32: hi = UINT32_MAX; break;
        case TSR_UINT64: hi = 0x1p64 - 2048; break;
        default:
            cli_format(why, why_size, "element type %s cannot be filled with a constant", tsr_elem_type_name(et));
            return false;
        }
        if (x != floor(x) || x < lo || x > hi) {
            cli_format(why, why_size, "%g does not fit %s", x, tsr_elem_type_name(et));
            return false;
        }
        switch (et) {
        case TSR_INT8: ((int8_t *)d)[i] = (int8_t)x; break;
        case TSR_INT16: ((int16_t *)d)[i] = (int16_t)x; break;
        case TSR_INT32: ((int32_t *)d)[i] = (int32_t)x; break;
        case TSR_INT64: ((int64_t *)d)[i] = (int64_t)x; break;
        case TSR_UINT8: ((uint8_t *)d)[i] = (uint8_t)x; break;
        case TSR_UINT16: ((uint16_t *)d)[i] = (uint16_t)x; break;
        case TSR_UINT32: ((uint32_t *)d)[i] = (uint32_t)x; break;
        default: ((uint64_t *)d)[i] = (uint64_t)x; break;
        }
        return true;
    }
    /* double -> float out of range is undefined; float16 would round to inf */
    double fmax = et == TSR_FLOAT16 ? 65504.0 : et == TSR_DOUBLE || et == TSR_COMPLEX128 ? INFINITY : FLT_MAX;
    if (fabs(x) > fmax) {
        cli_format(why, why_size, "%g does not fit %s", x, tsr_elem_type_name(et));
        return false;
    }
    switch (et) {
    case TSR_FLOAT: ((float *)d)[i] = (float)x; return true;
    case TSR_DOUBLE: ((double *)d)[i] = x; return true;
    case TSR_FLOAT16: ((uint16_t *)d)[i] = float_to_half((float)x); return true;
    case TSR_BFLOAT16: ((uint16_t *)d)[i] = float_to_bf16((float)x); return true;
    case TSR_COMPLEX64:
        ((float *)d)[2 * i] = (float)x;
        ((float *)d)[2 * i + 1] = 0;
        return true;
    case TSR_COMPLEX128:
        ((double *)d)[2 * i] = x;
        ((double *)d)[2 * i + 1] = 0;
        return true;
    default:
        cli_format(why, why_size, "element type %s cannot be filled with a constant", tsr_elem_type_name(et));
        return false;
    }
}

bool tio_fill_constant(tsr_value *value, double x, char *why, size_t why_size) {
    tsr_tensor t = {.struct_size = sizeof t};
    tsr_status *st = tsr_value_tensor(value, &t);
    if (st) {
        cli_format(why, why_size, "%s", tsr_status_message(st));
        tsr_status_free(st);
        return false;
    }
    size_t n = tio_element_count(t.rank, t.dims);
    if (n == 0) { /* still check that the type takes the value */
        uint64_t scratch[2];
        tsr_tensor probe = {.struct_size = sizeof probe, .elem_type = t.elem_type, .data = scratch};
        return store_constant(&probe, 0, x, why, why_size);
    }
    for (size_t i = 0; i < n; i++)
        if (!store_constant(&t, i, x, why, why_size)) return false;
    return true;
}
