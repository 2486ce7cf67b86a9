/* float16 pieces, computed in float32 as ONNX Runtime's CPU provider does
 * for most float16 ops: a float16 value of the model is a float32 value of
 * the plan. Constants are converted once, when the plan is built (into the
 * piece's constant cache, so every plan of the piece shares them); a
 * float16 piece input gets a float16 boundary memory, bound to the input
 * tensor, and a first step converting it into the float32 value; a
 * float16 piece output is computed in float32 and rounded (to nearest
 * even) into its float16 boundary memory by a last step. Every builder
 * runs unchanged in float32 between. The steps are C loops (oneDNN 2.6's
 * f16<->f32 reorder is its generic "simple:any" kernel, one element at a
 * time in software), on F16C's vcvtph2ps/vcvtps2ph where the CPU has them. */
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ODN_HAVE_F16C_PATH 1
#endif

#include "odn.h"

/* --- conversions ------------------------------------------------------------ */
static float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13); /* infinity, NaN (payload kept) */
    } else if (exp == 0) {
        float f = (float)man * 0x1p-24f; /* zero or subnormal: exact */
        return sign ? -f : f;
    } else {
        bits = sign | ((exp + 112u) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static uint16_t float_to_half(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu)); /* NaN, quieted */
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);                        /* >= 65520: rounds to infinity */
    if (ax < 0x38800000u) {
        /* below 2^-14: a subnormal (or zero) counted in units of 2^-24;
         * adding 0.5 makes the float addition round at that unit, to
         * nearest even */
        float a, t;
        memcpy(&a, &ax, sizeof a);
        t = a + 0.5f;
        uint32_t tb;
        memcpy(&tb, &t, sizeof tb);
        return (uint16_t)(sign | (tb - 0x3f000000u));
    }
    ax += 0xfffu + ((ax >> 13) & 1u); /* round to nearest even at bit 13 */
    return (uint16_t)(sign | ((ax - (112u << 23)) >> 13));
}

#ifdef ODN_HAVE_F16C_PATH
/* F16C (every AVX2 CPU has it); oneDNN's ISA query also honours
 * ONEDNN_MAX_CPU_ISA. */
static bool have_f16c(void) {
    static int known = -1;
    if (known < 0) {
        unsigned isa = (unsigned)dnnl_get_effective_cpu_isa(), want = (unsigned)dnnl_cpu_isa_avx2;
        known = (isa & want) == want;
    }
    return known == 1;
}

__attribute__((target("avx,f16c"))) static void to_f32_f16c(const uint16_t *src, float *dst, int64_t count) {
    int64_t i = 0;
    for (; i + 8 <= count; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(src + i))));
    for (; i < count; i++) dst[i] = half_to_float(src[i]);
}

__attribute__((target("avx,f16c"))) static void to_f16_f16c(const float *src, uint16_t *dst, int64_t count) {
    int64_t i = 0;
    for (; i + 8 <= count; i += 8)
        _mm_storeu_si128((__m128i *)(void *)(dst + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    for (; i < count; i++) dst[i] = float_to_half(src[i]);
}
#endif

#define CHUNK 16384 /* elements a thread converts at a time */

void odn_f16_to_f32(const uint16_t *src, float *dst, int64_t count) {
    int64_t chunks = (count + CHUNK - 1) / CHUNK;
#pragma omp parallel for if (chunks > 4) schedule(static)
    for (int64_t c = 0; c < chunks; c++) {
        int64_t at = c * CHUNK, len = count - at < CHUNK ? count - at : CHUNK;
#ifdef ODN_HAVE_F16C_PATH
        if (have_f16c()) {
            to_f32_f16c(src + at, dst + at, len);
            continue;
        }
#endif
        for (int64_t i = at; i < at + len; i++) dst[i] = half_to_float(src[i]);
    }
}

void odn_f32_to_f16(const float *src, uint16_t *dst, int64_t count) {
    int64_t chunks = (count + CHUNK - 1) / CHUNK;
#pragma omp parallel for if (chunks > 4) schedule(static)
    for (int64_t c = 0; c < chunks; c++) {
        int64_t at = c * CHUNK, len = count - at < CHUNK ? count - at : CHUNK;
#ifdef ODN_HAVE_F16C_PATH
        if (have_f16c()) {
            to_f16_f16c(src + at, dst + at, len);
            continue;
        }
#endif
        for (int64_t i = at; i < at + len; i++) dst[i] = float_to_half(src[i]);
    }
}

/* --- which values ------------------------------------------------------------ */
static bool reads_float16_as_such(const char *op) {
    /* their float16 operands are scales, used in their own type */
    static const char *const ops[] = {"MatMulInteger", "QLinearMatMul",  "ConvInteger",
                                      "QLinearConv",   "QuantizeLinear", "DequantizeLinear"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(op, ops[i]) == 0) return true;
    return false;
}

bool odn_f16_promoted(const odn_plan *p, const tsr_value_info *vi, int32_t type) {
    if (!vi || type != TSR_FLOAT16) return false;
    for (size_t i = 0; i < p->node_count; i++) {
        const tsr_node *n = p->nodes[i];
        if (!reads_float16_as_such(odn_host->node_op_type(n))) continue;
        for (size_t k = 0; k < odn_host->node_input_count(n); k++)
            if (odn_host->node_input(n, k) == vi) return false;
    }
    return true;
}

tsr_status *odn_f16_check(const odn_plan *p) {
    for (size_t i = 0; i < p->node_count; i++) {
        const tsr_node *n = p->nodes[i];
        if (reads_float16_as_such(odn_host->node_op_type(n))) continue;
        for (size_t k = 0; k < odn_host->node_input_count(n); k++) {
            const tsr_value_info *vi = odn_host->node_input(n, k);
            if (vi && odn_host->value_elem_type(vi) == TSR_FLOAT16 && !odn_f16_promoted(p, vi, TSR_FLOAT16))
                return odn_node_error(n, TSR_ERR_NOT_SUPPORTED,
                                      "float16 input '%s' is also a quantization op's scale: not mapped",
                                      odn_host->value_name(vi));
        }
    }
    return NULL;
}

/* --- boundary steps ------------------------------------------------------------ */
typedef struct f16_loop {
    int64_t count;
} f16_loop;

static tsr_status *run_to_f32(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    void *ps = NULL, *pd = NULL;
    dnnl_memory_get_data_handle(src, &ps);
    dnnl_memory_get_data_handle(dst, &pd);
    odn_f16_to_f32(ps, pd, ((const f16_loop *)ctx)->count);
    return NULL;
}

static tsr_status *run_to_f16(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    void *ps = NULL, *pd = NULL;
    dnnl_memory_get_data_handle(src, &ps);
    dnnl_memory_get_data_handle(dst, &pd);
    odn_f32_to_f16(ps, pd, ((const f16_loop *)ctx)->count);
    return NULL;
}

static tsr_status *no_memory(void) { return odn_host->status_new(TSR_ERR_NO_MEMORY, "onednn: out of memory"); }

/* marks a constant cache entry as float16 data converted to float32 */
static const char converted_from_f16 = 0;

tsr_status *odn_f16_input(odn_plan *p, odn_value *v, size_t index, const tsr_tensor *t) {
    const char *name = odn_host->value_name(v->info);
    int64_t count = odn_numel(v->rank, v->dims);
    if (count < 0 || (t && t->data && t->nbytes < (uint64_t)count * sizeof(uint16_t)))
        return odn_node_error(NULL, TSR_ERR_INVALID_MODEL, "input '%s' holds fewer bytes than its shape", name);
    v->f16 = true;
    v->elem_type = TSR_FLOAT;
    dnnl_memory_desc_t half_md;
    dnnl_status_t st = odn_plain_md_typed(&v->md, v->rank, v->dims, dnnl_f32);
    if (st == dnnl_success) st = odn_plain_md_typed(&half_md, v->rank, v->dims, dnnl_f16);
    if (st != dnnl_success) return odn_dnnl_error(NULL, "input layout", st);
    if (v->constant) {
        /* converted once into the piece's constant cache: the float32 copy
         * outlives this plan, so builders may key their own reorders of it
         * by its address as they do a float32 constant's */
        const tsr_tensor *c = v->constant;
        if (!c->data && count > 0)
            return odn_node_error(NULL, TSR_ERR_INVALID_MODEL, "constant '%s' has no data", name);
        float *data = odn_const_cache_find(p->consts, c->data, &converted_from_f16, &half_md, &v->md);
        if (!data) {
            data = odn_const_cache_add(p->consts, c->data, &converted_from_f16, &half_md, &v->md,
                                       (size_t)(count ? count : 1) * sizeof(float));
            if (!data) return no_memory();
            odn_f16_to_f32(c->data, data, count);
            odn_const_cache_ready(p->consts, data);
        }
        tsr_tensor *f = odn_plan_alloc(p, sizeof *f);
        if (!f) return no_memory();
        *f = *c;
        f->elem_type = TSR_FLOAT;
        f->data = data;
        f->nbytes = (size_t)count * sizeof(float);
        v->constant = f;
        return odn_plan_new_mem(p, &v->md, data, NULL, &v->mem);
    }
    /* a run-time input: its tensor is bound to the float16 memory, and the
     * first steps convert it */
    f16_loop *ctx = odn_plan_alloc(p, sizeof *ctx);
    if (!ctx) return no_memory();
    ctx->count = count;
    dnnl_memory_t half;
    tsr_status *s = odn_plan_new_mem(p, &half_md, DNNL_MEMORY_NONE, NULL, &half);
    if (!s) s = odn_plan_arena_mem(p, &v->md, NULL, &v->mem);
    if (!s) s = odn_plan_add_loop(p, run_to_f32, ctx, half, v->mem, NULL);
    if (!s) p->input_mems[index] = half;
    return s;
}

tsr_status *odn_f16_output(odn_plan *p, odn_value *v, dnnl_memory_t *out) {
    dnnl_memory_t src;
    tsr_status *s = odn_plan_plain_mem(p, v, NULL, &src); /* plain float32 already, as an output */
    if (s) return s;
    dnnl_memory_desc_t half_md;
    dnnl_status_t st = odn_plain_md_typed(&half_md, v->rank, v->dims, dnnl_f16);
    if (st != dnnl_success) return odn_dnnl_error(NULL, "output layout", st);
    f16_loop *ctx = odn_plan_alloc(p, sizeof *ctx);
    if (!ctx) return no_memory();
    ctx->count = odn_numel(v->rank, v->dims);
    s = odn_plan_new_mem(p, &half_md, DNNL_MEMORY_NONE, NULL, out);
    return s ? s : odn_plan_add_loop(p, run_to_f16, ctx, src, *out, NULL);
}
