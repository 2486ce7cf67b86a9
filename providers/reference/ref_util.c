/* Helpers every reference kernel uses: inputs, outputs, attributes, element
 * conversion and broadcasting — all through the host API. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"

const tsr_tensor *ref_in(ref_ctx *c, size_t i) {
    if (i >= c->n_in || c->in_map[i] < 0) return NULL;
    return c->host->run_input(c->run, (size_t)c->in_map[i]);
}

bool ref_out_wanted(ref_ctx *c, size_t i) { return i < c->n_out && c->out_map[i] >= 0; }

tsr_status *ref_out(ref_ctx *c, size_t i, int32_t elem_type, int32_t rank, const int64_t *dims, tsr_tensor **out) {
    if (!ref_out_wanted(c, i)) {
        /* The model drops this output: hand the kernel scratch memory the
         * provider frees after the run (see ref_provider.c). */
        return c->host->run_alloc_output(c->run, (size_t)-1, elem_type, rank, dims, out);
    }
    return c->host->run_alloc_output(c->run, (size_t)c->out_map[i], elem_type, rank, dims, out);
}

tsr_status *ref_err(ref_ctx *c, int32_t code, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char full[700];
    snprintf(full, sizeof full, "%s '%s': %s", c->host->node_op_type(c->node), c->host->node_name(c->node), msg);
    return c->host->status_new(code, full);
}

int64_t ref_opset(ref_ctx *c) { return c->host->node_opset(c->node); }
const char *ref_op_type(ref_ctx *c) { return c->host->node_op_type(c->node); }

/* The attribute readers are provider_util.h's, under the names the kernels
 * use; the ctx supplies the host table and the node. */
bool ref_attr_has(ref_ctx *c, const char *name) { return tsr_util_attr_has(c->host, c->node, name); }

int64_t ref_attr_int(ref_ctx *c, const char *name, int64_t dflt) {
    return tsr_util_attr_int(c->host, c->node, name, dflt);
}

float ref_attr_float(ref_ctx *c, const char *name, float dflt) {
    return tsr_util_attr_float(c->host, c->node, name, dflt);
}

const char *ref_attr_str(ref_ctx *c, const char *name, const char *dflt) {
    return tsr_util_attr_string(c->host, c->node, name, dflt, NULL);
}

size_t ref_attr_ints(ref_ctx *c, const char *name, const int64_t **out) {
    size_t n;
    *out = tsr_util_attr_ints(c->host, c->node, name, &n);
    return n;
}

size_t ref_attr_floats(ref_ctx *c, const char *name, const float **out) {
    size_t n;
    *out = tsr_util_attr_floats(c->host, c->node, name, &n);
    return n;
}

const tsr_tensor *ref_attr_tensor(ref_ctx *c, const char *name) { return tsr_util_attr_tensor(c->host, c->node, name); }

size_t ref_elem_size(int32_t t) {
    switch (t) {
    case TSR_BOOL:
    case TSR_UINT8:
    case TSR_INT8:
    case TSR_FLOAT8E4M3FN:
    case TSR_FLOAT8E4M3FNUZ:
    case TSR_FLOAT8E5M2:
    case TSR_FLOAT8E5M2FNUZ:
    case TSR_FLOAT8E8M0: return 1;
    case TSR_UINT16:
    case TSR_INT16:
    case TSR_FLOAT16:
    case TSR_BFLOAT16: return 2;
    case TSR_FLOAT:
    case TSR_INT32:
    case TSR_UINT32: return 4;
    case TSR_DOUBLE:
    case TSR_INT64:
    case TSR_UINT64:
    case TSR_COMPLEX64: return 8;
    case TSR_COMPLEX128: return 16;
    case TSR_STRING: return sizeof(tsr_string);
    default: return 0;
    }
}

bool ref_is_float(int32_t t) { return t == TSR_FLOAT || t == TSR_DOUBLE || t == TSR_FLOAT16 || t == TSR_BFLOAT16; }

bool ref_is_int(int32_t t) {
    switch (t) {
    case TSR_UINT8:
    case TSR_INT8:
    case TSR_UINT16:
    case TSR_INT16:
    case TSR_INT32:
    case TSR_INT64:
    case TSR_UINT32:
    case TSR_UINT64: return true;
    default: return false;
    }
}

bool ref_is_signed(int32_t t) {
    return t == TSR_INT8 || t == TSR_INT16 || t == TSR_INT32 || t == TSR_INT64 || ref_is_float(t);
}

uint64_t ref_numel(const tsr_tensor *t) {
    uint64_t n = 1;
    for (int32_t i = 0; i < t->rank; i++) n *= (uint64_t)t->dims[i];
    return n;
}

float ref_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);
    } else if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal: renormalise */
            int e = -1;
            do {
                e++;
                man <<= 1;
            } while (!(man & 0x400));
            bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
        }
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t ref_float_to_half(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    uint32_t absx = x & 0x7fffffffu;
    if (absx > 0x7f800000u) return (uint16_t)(sign | 0x7e00);  /* NaN */
    if (absx >= 0x477ff000u) return (uint16_t)(sign | 0x7c00); /* rounds to inf */
    if (absx < 0x38800000u) {                                  /* subnormal or zero in half */
        float a;
        memcpy(&a, &absx, 4);
        /* a * 2^24 rounds to nearest even in the float unit */
        float scaled = a * 16777216.0f;
        uint32_t m = (uint32_t)nearbyintf(scaled);
        return (uint16_t)(sign | m);
    }
    uint32_t mant = absx & 0x7fffff;
    uint32_t exp = (absx >> 23) - 127 + 15;
    uint32_t h = (exp << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++;
    return (uint16_t)(sign | h);
}

float ref_bf16_to_float(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t ref_float_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40);
    uint32_t lsb = (x >> 16) & 1;
    x += 0x7fff + lsb;
    return (uint16_t)(x >> 16);
}

double ref_load(int32_t t, const void *data, size_t i) {
    switch (t) {
    case TSR_FLOAT: return ((const float *)data)[i];
    case TSR_DOUBLE: return ((const double *)data)[i];
    case TSR_FLOAT16: return ref_half_to_float(((const uint16_t *)data)[i]);
    case TSR_BFLOAT16: return ref_bf16_to_float(((const uint16_t *)data)[i]);
    case TSR_INT8: return ((const int8_t *)data)[i];
    case TSR_UINT8: return ((const uint8_t *)data)[i];
    case TSR_INT16: return ((const int16_t *)data)[i];
    case TSR_UINT16: return ((const uint16_t *)data)[i];
    case TSR_INT32: return ((const int32_t *)data)[i];
    case TSR_UINT32: return ((const uint32_t *)data)[i];
    case TSR_INT64: return (double)((const int64_t *)data)[i];
    case TSR_UINT64: return (double)((const uint64_t *)data)[i];
    case TSR_BOOL: return ((const uint8_t *)data)[i] ? 1.0 : 0.0;
    default: return 0.0;
    }
}

int64_t ref_load_i64(int32_t t, const void *data, size_t i) {
    switch (t) {
    case TSR_INT8: return ((const int8_t *)data)[i];
    case TSR_UINT8: return ((const uint8_t *)data)[i];
    case TSR_INT16: return ((const int16_t *)data)[i];
    case TSR_UINT16: return ((const uint16_t *)data)[i];
    case TSR_INT32: return ((const int32_t *)data)[i];
    case TSR_UINT32: return ((const uint32_t *)data)[i];
    case TSR_INT64: return ((const int64_t *)data)[i];
    case TSR_UINT64: return (int64_t)((const uint64_t *)data)[i];
    case TSR_BOOL: return ((const uint8_t *)data)[i] ? 1 : 0;
    default: {
        /* a float out of int64's range (or NaN) would be undefined to
         * convert: saturate, as ref_store does */
        double v = ref_load(t, data, i);
        if (isnan(v)) return 0;
        return v >= 9223372036854775807.0 ? INT64_MAX : v <= -9223372036854775808.0 ? INT64_MIN : (int64_t)v;
    }
    }
}

void ref_store(int32_t t, void *data, size_t i, double v) {
    switch (t) {
    case TSR_FLOAT: ((float *)data)[i] = (float)v; break;
    case TSR_DOUBLE: ((double *)data)[i] = v; break;
    case TSR_FLOAT16: ((uint16_t *)data)[i] = ref_float_to_half((float)v); break;
    case TSR_BFLOAT16: ((uint16_t *)data)[i] = ref_float_to_bf16((float)v); break;
    case TSR_BOOL: ((uint8_t *)data)[i] = v != 0.0; break;
    default:
        /* out of int64's range the C conversion is undefined: saturate */
        if (isnan(v)) v = 0;
        ref_store_i64(t, data, i,
                      v >= 9223372036854775807.0        ? INT64_MAX
                          : v <= -9223372036854775808.0 ? INT64_MIN
                                                        : (int64_t)v);
        break;
    }
}

int ref_check_float(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size) {
    const tsr_value_info *x = tsr_util_node_input(host, node, 0);
    int32_t t = x ? host->value_elem_type(x) : 0;
    if (t != 0 && !ref_is_float(t)) {
        snprintf(why, why_size, "%s of element type %d is not implemented", host->node_op_type(node), (int)t);
        return TSR_DECLINE_TYPE;
    }
    return 0;
}

void ref_put_f64(tsr_tensor *t, size_t off, size_t n, const double *src) {
    if (t->elem_type == TSR_FLOAT) {
        float *f = (float *)t->data + off;
        for (size_t i = 0; i < n; i++) f[i] = (float)src[i];
    } else if (t->elem_type == TSR_DOUBLE) {
        if (n) memcpy((double *)t->data + off, src, n * sizeof *src);
    } else {
        for (size_t i = 0; i < n; i++) ref_store(t->elem_type, t->data, off + i, src[i]);
    }
}

void ref_store_i64(int32_t t, void *data, size_t i, int64_t v) {
    switch (t) {
    case TSR_INT8: ((int8_t *)data)[i] = (int8_t)v; break;
    case TSR_UINT8: ((uint8_t *)data)[i] = (uint8_t)v; break;
    case TSR_INT16: ((int16_t *)data)[i] = (int16_t)v; break;
    case TSR_UINT16: ((uint16_t *)data)[i] = (uint16_t)v; break;
    case TSR_INT32: ((int32_t *)data)[i] = (int32_t)v; break;
    case TSR_UINT32: ((uint32_t *)data)[i] = (uint32_t)v; break;
    case TSR_INT64: ((int64_t *)data)[i] = v; break;
    case TSR_UINT64: ((uint64_t *)data)[i] = (uint64_t)v; break;
    case TSR_BOOL: ((uint8_t *)data)[i] = v != 0; break;
    default: ref_store(t, data, i, (double)v); break;
    }
}

bool ref_broadcast_shape(int32_t ra, const int64_t *da, int32_t rb, const int64_t *db, int32_t *rout, int64_t *dout) {
    int32_t r = ra > rb ? ra : rb;
    if (r > REF_MAX_RANK) return false;
    for (int32_t i = 0; i < r; i++) {
        int64_t a = i < r - ra ? 1 : da[i - (r - ra)];
        int64_t b = i < r - rb ? 1 : db[i - (r - rb)];
        if (a != b && a != 1 && b != 1) return false;
        dout[i] = a == 1 ? b : a;
    }
    *rout = r;
    return true;
}

void ref_broadcast_strides(int32_t rank_in, const int64_t *dims_in, int32_t rank_out, const int64_t *dims_out,
                           int64_t *strides_out) {
    int64_t s = 1;
    for (int32_t i = rank_out - 1; i >= 0; i--) {
        int32_t j = i - (rank_out - rank_in);
        if (j < 0) {
            strides_out[i] = 0;
        } else {
            strides_out[i] = (dims_in[j] == 1 && dims_out[i] != 1) ? 0 : s;
            s *= dims_in[j];
        }
    }
}

void ref_strides(int32_t rank, const int64_t *dims, int64_t *strides) {
    int64_t s = 1;
    for (int32_t i = rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= dims[i];
    }
}

tsr_status *ref_tensor_i64(ref_ctx *c, const tsr_tensor *t, int64_t **out, size_t *n) {
    if (!t) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "missing integer input");
    if (!ref_is_int(t->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "expected an integer tensor, got type %d", (int)t->elem_type);
    size_t cnt = (size_t)ref_numel(t);
    int64_t *v = malloc(sizeof(int64_t) * (cnt ? cnt : 1));
    if (!v) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < cnt; i++) v[i] = ref_load_i64(t->elem_type, t->data, i);
    *out = v;
    *n = cnt;
    return NULL;
}

bool ref_axis(int64_t axis, int32_t rank, int64_t *out) {
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= (rank > 0 ? rank : 1)) return false;
    *out = axis;
    return true;
}

tsr_status *ref_tensor_f64(ref_ctx *c, const tsr_tensor *t, double **out) {
    size_t n = (size_t)ref_numel(t);
    *out = NULL;
    if (n > SIZE_MAX / sizeof(double))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "tensor of %zu elements is too large", n);
    double *buf = malloc((n ? n : 1) * sizeof *buf);
    *out = buf;
    if (!buf) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory converting an input to double");
    /* float and double are most of the traffic; skip ref_load's switch. */
    if (t->elem_type == TSR_FLOAT) {
        const float *f = t->data;
        for (size_t i = 0; i < n; i++) buf[i] = f[i];
    } else if (t->elem_type == TSR_DOUBLE) {
        if (n) memcpy(buf, t->data, n * sizeof *buf);
    } else {
        for (size_t i = 0; i < n; i++) buf[i] = ref_load(t->elem_type, t->data, i);
    }
    return NULL;
}
