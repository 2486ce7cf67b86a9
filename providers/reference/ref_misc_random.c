/*
 * Random generators: RandomUniform, RandomNormal, RandomUniformLike,
 * RandomNormalLike, Bernoulli and Multinomial.
 *
 * A node with a `seed` draws from MT19937 seeded with it, sampling the way
 * numpy's legacy RandomState does, and starts afresh on every run: the same
 * seeded node gives the same tensor each time, equal to what the ONNX
 * reference implementation (np.random.RandomState(int(seed))) gives. The
 * arithmetic after the draw (scaling, shifting) is rounded to the output
 * type step by step, as numpy does it in that type. A node without a seed
 * (or with a NaN one) is seeded from the clock and a process-wide counter.
 *
 * Seeds outside [0, 2^32), which RandomState refuses, are truncated and
 * taken modulo 2^32 rather than refused: a seed only needs to be
 * reproducible.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ref_misc.h"
#include "ref_misc_rng.h"

static atomic_uint_fast64_t unseeded_runs;

/* A 64-bit mix (the splitmix64 finaliser) so that nearby clock readings and
 * counter values give unrelated seeds. */
static uint64_t mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static tsr_status *seed_rng(ref_ctx *c, misc_rng *r) {
    if (ref_attr_has(c, "seed")) {
        double s = ref_attr_float(c, "seed", 0.0f);
        if (isinf(s)) return ref_err(c, TSR_ERR_INVALID_MODEL, "seed must be finite");
        if (!isnan(s)) {
            double m = fmod(trunc(s), 4294967296.0);
            misc_rng_seed(r, (uint32_t)(m < 0 ? m + 4294967296.0 : m));
            return NULL;
        }
    }
    struct timespec ts = {0, 0};
    timespec_get(&ts, TIME_UTC);
    uint64_t n = atomic_fetch_add(&unseeded_runs, 1);
    uint64_t x = mix64((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) ^ mix64(n);
    misc_rng_seed(r, (uint32_t)(mix64(x) >> 32));
    return NULL;
}

/* v as the nearest value of float type t. */
static double round_to(int32_t t, double v) {
    switch (t) {
    case TSR_FLOAT: return (float)v;
    case TSR_FLOAT16: return ref_half_to_float(ref_float_to_half((float)v));
    case TSR_BFLOAT16: return ref_bf16_to_float(ref_float_to_bf16((float)v));
    default: return v;
    }
}

typedef enum random_dist { DIST_UNIFORM, DIST_NORMAL } random_dist;

/* Fills Y: uniform in [low, high) (a = low, b = high) or normal (a = mean,
 * b = scale). */
static tsr_status *fill(ref_ctx *c, tsr_tensor *Y, random_dist dist, double a, double b) {
    misc_rng rng;
    tsr_status *st = seed_rng(c, &rng);
    if (st) return st;
    int32_t t = Y->elem_type;
    double scale = round_to(t, dist == DIST_UNIFORM ? b - a : b), shift = round_to(t, a);
    size_t n = (size_t)ref_numel(Y);
    for (size_t i = 0; i < n; i++) {
        double v = dist == DIST_UNIFORM ? misc_rng_double(&rng) : misc_rng_gauss(&rng);
        v = round_to(t, round_to(t, round_to(t, v) * scale) + shift);
        ref_store(t, Y->data, i, v);
    }
    return NULL;
}

/* The output type (dtype, or for the *Like operators the input's type when
 * dtype is absent) must be a float type. */
static tsr_status *float_dtype(ref_ctx *c, int64_t dtype) {
    if (dtype != (int32_t)dtype || !ref_is_float((int32_t)dtype))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                       "output element type %lld is not float16, float, double or bfloat16", (long long)dtype);
    return NULL;
}

/* RandomUniform and RandomNormal: the shape comes from the attribute. */
static tsr_status *random_shaped(ref_ctx *c, random_dist dist) {
    const int64_t *shape;
    size_t rank = ref_attr_ints(c, "shape", &shape);
    if (!ref_attr_has(c, "shape")) return ref_err(c, TSR_ERR_INVALID_MODEL, "attribute 'shape' is required");
    if (rank > REF_MAX_RANK)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "shape has rank %zu, above %d", rank, REF_MAX_RANK);
    uint64_t count = 1;
    for (size_t i = 0; i < rank; i++) {
        if (shape[i] < 0)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "shape[%zu] = %lld is negative", i, (long long)shape[i]);
        if (shape[i] != 0 && count > (uint64_t)INT64_MAX / (uint64_t)shape[i])
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "shape is too large");
        count *= (uint64_t)shape[i];
    }
    int64_t dtype = ref_attr_int(c, "dtype", TSR_FLOAT);
    tsr_status *st = float_dtype(c, dtype);
    tsr_tensor *Y;
    if (st || (st = ref_out(c, 0, (int32_t)dtype, (int32_t)rank, shape, &Y))) return st;
    if (dist == DIST_UNIFORM) return fill(c, Y, dist, ref_attr_float(c, "low", 0.0f), ref_attr_float(c, "high", 1.0f));
    return fill(c, Y, dist, ref_attr_float(c, "mean", 0.0f), ref_attr_float(c, "scale", 1.0f));
}

/* RandomUniformLike and RandomNormalLike: the shape (and by default the
 * type) of the input. */
static tsr_status *random_like(ref_ctx *c, random_dist dist) {
    const tsr_tensor *X = ref_in(c, 0);
    if (!X) return ref_err(c, TSR_ERR_INVALID_MODEL, "input is missing");
    int64_t dtype = ref_attr_int(c, "dtype", X->elem_type);
    tsr_status *st = float_dtype(c, dtype);
    tsr_tensor *Y;
    if (st || (st = ref_out(c, 0, (int32_t)dtype, X->rank, X->dims, &Y))) return st;
    if (dist == DIST_UNIFORM) return fill(c, Y, dist, ref_attr_float(c, "low", 0.0f), ref_attr_float(c, "high", 1.0f));
    return fill(c, Y, dist, ref_attr_float(c, "mean", 0.0f), ref_attr_float(c, "scale", 1.0f));
}

tsr_status *ref_misc_random_uniform(ref_ctx *c) { return random_shaped(c, DIST_UNIFORM); }
tsr_status *ref_misc_random_normal(ref_ctx *c) { return random_shaped(c, DIST_NORMAL); }
tsr_status *ref_misc_random_uniform_like(ref_ctx *c) { return random_like(c, DIST_UNIFORM); }
tsr_status *ref_misc_random_normal_like(ref_ctx *c) { return random_like(c, DIST_NORMAL); }

static bool bernoulli_output_type(int64_t t) {
    return t == (int32_t)t && (ref_is_float((int32_t)t) || ref_is_int((int32_t)t) || t == TSR_BOOL);
}

tsr_status *ref_misc_bernoulli(ref_ctx *c) {
    const tsr_tensor *X = ref_in(c, 0);
    if (!X) return ref_err(c, TSR_ERR_INVALID_MODEL, "input is missing");
    if (!ref_is_float(X->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input has element type %d, not a float type", (int)X->elem_type);
    int64_t dtype = ref_attr_int(c, "dtype", X->elem_type);
    if (!bernoulli_output_type(dtype))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "dtype %lld is not a numeric or bool type", (long long)dtype);
    size_t n = (size_t)ref_numel(X);
    for (size_t i = 0; i < n; i++) {
        double p = ref_load(X->elem_type, X->data, i);
        if (!(p >= 0.0 && p <= 1.0))
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "probability %g at element %zu is outside [0, 1]", p, i);
    }
    misc_rng rng;
    tsr_tensor *Y;
    tsr_status *st = seed_rng(c, &rng);
    if (st || (st = ref_out(c, 0, (int32_t)dtype, X->rank, X->dims, &Y))) return st;
    for (size_t i = 0; i < n; i++)
        ref_store_i64(Y->elem_type, Y->data, i, misc_rng_bernoulli(&rng, ref_load(X->elem_type, X->data, i)));
    return NULL;
}

/* Multinomial: input (batch, classes) holds unnormalised log-probabilities;
 * each row gives sample_size independent class draws, by inverting the
 * row's cumulative distribution with one uniform draw each. */
tsr_status *ref_misc_multinomial(ref_ctx *c) {
    const tsr_tensor *X = ref_in(c, 0);
    if (!X) return ref_err(c, TSR_ERR_INVALID_MODEL, "input is missing");
    if (!ref_is_float(X->elem_type) || X->rank != 2)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input must be a float tensor of shape (batch_size, class_size)");
    int64_t dtype = ref_attr_int(c, "dtype", TSR_INT32);
    int64_t samples = ref_attr_int(c, "sample_size", 1);
    if (dtype != TSR_INT32 && dtype != TSR_INT64)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "dtype %lld is not int32 or int64", (long long)dtype);
    if (samples < 0) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "sample_size %lld is negative", (long long)samples);
    int64_t batch = X->dims[0], classes = X->dims[1];
    if (batch > 0 && samples > INT64_MAX / batch)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "sample_size is too large");
    int64_t dims[2] = {batch, samples};
    misc_rng rng;
    tsr_tensor *Y;
    tsr_status *st = seed_rng(c, &rng);
    if (st || (st = ref_out(c, 0, (int32_t)dtype, 2, dims, &Y))) return st;
    if (batch == 0 || samples == 0) return NULL;
    if (classes == 0) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "there are no classes to draw from");
    double *cum = malloc((size_t)classes * sizeof *cum);
    if (!cum) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    for (int64_t b = 0; b < batch; b++) {
        const size_t row = (size_t)(b * classes);
        double mx = -INFINITY, total = 0;
        for (int64_t k = 0; k < classes; k++) {
            double v = ref_load(X->elem_type, X->data, row + (size_t)k);
            mx = v > mx ? v : mx;
        }
        for (int64_t k = 0; k < classes; k++) {
            total += exp(ref_load(X->elem_type, X->data, row + (size_t)k) - mx);
            cum[k] = total;
        }
        if (!(total > 0) || !isfinite(total)) {
            free(cum);
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "row %lld does not give a probability distribution",
                           (long long)b);
        }
        for (int64_t s = 0; s < samples; s++) {
            double u = misc_rng_double(&rng) * total;
            int64_t k = 0;
            while (k < classes - 1 && !(u < cum[k])) k++;
            /* Rounding may leave u past the last increase: take the last
             * class that has any probability. */
            while (k > 0 && cum[k] == cum[k - 1]) k--;
            ref_store_i64(Y->elem_type, Y->data, (size_t)(b * samples + s), k);
        }
    }
    free(cum);
    return NULL;
}

/* Declines a dtype attribute the operator cannot produce. */
int ref_misc_random_check(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size) {
    const tsr_attr *a = host->node_attr_find(node, "dtype");
    if (!a) return 0;
    int64_t t = host->attr_int(a);
    const char *op = host->node_op_type(node);
    bool ok;
    if (strcmp(op, "Bernoulli") == 0) ok = bernoulli_output_type(t);
    else if (strcmp(op, "Multinomial") == 0) ok = t == TSR_INT32 || t == TSR_INT64;
    else ok = t == (int32_t)t && ref_is_float((int32_t)t);
    if (!ok) {
        snprintf(why, why_size, "%s with dtype %lld is not implemented", op, (long long)t);
        return TSR_DECLINE_ATTRIBUTE;
    }
    return 0;
}
