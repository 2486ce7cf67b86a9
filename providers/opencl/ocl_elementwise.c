/* Elementwise ops as generated OpenCL C: one node, or a chain of them, is one
 * kernel that loads each outside input once (with broadcasting), keeps the
 * intermediates in registers and stores one result. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl_fuse.h"

#define EW_MAX_INPUTS 8
#define EW_MAX_NODES 32
#define EW_OMITTED INT32_MAX

typedef enum ew_arity { EW_UNARY, EW_BINARY, EW_VARIADIC, EW_CLIP } ew_arity;

typedef struct ew_kind {
    const char *op_type;
    ew_arity arity;
    const char *fmt; /* %1$s: a, %2$s: b, %3$s/%4$s/%5$s: alpha, beta, gamma */
} ew_kind;

static const ew_kind kinds[] = {
    {"Relu", EW_UNARY, "fmax(%1$s, 0.0f)"},
    {"Sigmoid", EW_UNARY, "(1.0f / (1.0f + exp(-(%1$s))))"},
    {"Tanh", EW_UNARY, "tanh(%1$s)"},
    {"Exp", EW_UNARY, "exp(%1$s)"},
    {"Log", EW_UNARY, "log(%1$s)"},
    {"Sqrt", EW_UNARY, "sqrt(%1$s)"},
    {"Neg", EW_UNARY, "(-(%1$s))"},
    {"Abs", EW_UNARY, "fabs(%1$s)"},
    {"Erf", EW_UNARY, "erf(%1$s)"},
    {"Reciprocal", EW_UNARY, "(1.0f / (%1$s))"},
    {"Floor", EW_UNARY, "floor(%1$s)"},
    {"Ceil", EW_UNARY, "ceil(%1$s)"},
    {"Round", EW_UNARY, "rint(%1$s)"},
    {"Sin", EW_UNARY, "sin(%1$s)"},
    {"Cos", EW_UNARY, "cos(%1$s)"},
    {"Tan", EW_UNARY, "tan(%1$s)"},
    {"Atan", EW_UNARY, "atan(%1$s)"},
    {"Sign", EW_UNARY, "ew_sign(%1$s)"},
    {"Softplus", EW_UNARY, "ew_softplus(%1$s)"},
    {"Softsign", EW_UNARY, "((%1$s) / (1.0f + fabs(%1$s)))"},
    {"Identity", EW_UNARY, "(%1$s)"},
    {"LeakyRelu", EW_UNARY, "ew_leaky(%1$s, %3$s)"},
    {"Elu", EW_UNARY, "ew_elu(%1$s, %3$s)"},
    {"Selu", EW_UNARY, "ew_selu(%1$s, %3$s, %5$s)"},
    {"HardSigmoid", EW_UNARY, "ew_hardsigmoid(%1$s, %3$s, %4$s)"},
    {"HardSwish", EW_UNARY, "((%1$s) * ew_hardsigmoid(%1$s, 0x1.555556p-3f, 0.5f))"},
    {"ThresholdedRelu", EW_UNARY, "((%1$s) > %3$s ? (%1$s) : 0.0f)"},
    {"Clip", EW_CLIP, "fmin(fmax(%1$s, %3$s), %4$s)"},
    {"Add", EW_BINARY, "((%1$s) + (%2$s))"},
    {"Sub", EW_BINARY, "((%1$s) - (%2$s))"},
    {"Mul", EW_BINARY, "((%1$s) * (%2$s))"},
    {"Div", EW_BINARY, "((%1$s) / (%2$s))"},
    {"Pow", EW_BINARY, "ew_pow(%1$s, %2$s)"},
    {"PRelu", EW_BINARY, "((%1$s) < 0.0f ? (%1$s) * (%2$s) : (%1$s))"},
    {"Max", EW_VARIADIC, "fmax(%1$s, %2$s)"},
    {"Min", EW_VARIADIC, "fmin(%1$s, %2$s)"},
    {"Sum", EW_VARIADIC, "((%1$s) + (%2$s))"},
};

static const ew_kind *kind_of(const tsr_node *n) {
    if (ocl_host->node_domain(n)[0]) return NULL;
    const char *op = ocl_host->node_op_type(n);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(kinds[i].op_type, op) == 0) return &kinds[i];
    return NULL;
}

/* A float as an OpenCL C literal, infinities included. */
static void float_literal(float v, char *buf, size_t size) {
    if (isinf(v)) snprintf(buf, size, "%sINFINITY", v < 0 ? "-" : "");
    else if (isnan(v)) snprintf(buf, size, "NAN");
    else snprintf(buf, size, "%af", (double)v);
}

/* The attribute parameters of a node, with ONNX's defaults. */
static void params_of(const tsr_node *n, char p[3][48]) {
    const char *op = ocl_host->node_op_type(n);
    float a = 0, b = 0, g = 0;
    if (!strcmp(op, "LeakyRelu")) a = ocl_attr_float(n, "alpha", 0.01f);
    else if (!strcmp(op, "Elu")) a = ocl_attr_float(n, "alpha", 1.0f);
    else if (!strcmp(op, "ThresholdedRelu")) a = ocl_attr_float(n, "alpha", 1.0f);
    else if (!strcmp(op, "Selu")) {
        a = ocl_attr_float(n, "alpha", 1.67326319217681884765625f);
        g = ocl_attr_float(n, "gamma", 1.05070102214813232421875f);
    } else if (!strcmp(op, "HardSigmoid")) {
        a = ocl_attr_float(n, "alpha", 0.2f);
        b = ocl_attr_float(n, "beta", 0.5f);
    } else if (!strcmp(op, "Clip")) {
        /* Before opset 11 the bounds are attributes. */
        a = ocl_attr_float(n, "min", -INFINITY);
        b = ocl_attr_float(n, "max", INFINITY);
    }
    float_literal(a, p[0], sizeof p[0]);
    float_literal(b, p[1], sizeof p[1]);
    float_literal(g, p[2], sizeof p[2]);
}

bool ocl_ew_is_elementwise(const tsr_node *n) {
    const ew_kind *k = kind_of(n);
    if (!k || ocl_host->node_output_count(n) != 1) return false;
    size_t ni = ocl_host->node_input_count(n);
    if (k->arity == EW_UNARY && ni != 1) return false;
    if (k->arity == EW_BINARY && ni != 2) return false;
    if (k->arity == EW_VARIADIC && (ni < 1 || ni > EW_MAX_INPUTS)) return false;
    if (k->arity == EW_CLIP && (ni < 1 || ni > 3)) return false;
    /* Before opset 7, binary ops broadcast by `axis`/`broadcast` attributes
     * and PRelu's slope by channel, not by numpy's rules. */
    if (k->arity == EW_BINARY && ocl_host->node_opset(n) < 7) return false;
    for (size_t i = 0; i < ni; i++) {
        if (!ocl_input_present(n, i)) {
            if (k->arity != EW_CLIP || i == 0) return false;
            continue;
        }
        if (ocl_input_type(n, i) != TSR_FLOAT) return false;
    }
    return ocl_output_type(n, 0) == TSR_FLOAT;
}

/* A scalar constant input as a literal; false when not a constant scalar. */
static bool const_scalar(const tsr_node *n, size_t i, char *buf, size_t size) {
    const tsr_value_info *v = ocl_host->node_input(n, i);
    const tsr_tensor *t = v ? ocl_host->value_constant(v) : NULL;
    if (!t || t->elem_type != TSR_FLOAT || t->nbytes != sizeof(float) || t->memory_kind != TSR_MEMORY_HOST)
        return false;
    float_literal(*(const float *)t->data, buf, size);
    return true;
}

bool ocl_ew_is_epilogue(const tsr_node *n) {
    if (!ocl_ew_is_elementwise(n)) return false;
    char tmp[64];
    size_t ni = ocl_host->node_input_count(n);
    for (size_t i = 1; i < ni; i++)
        if (ocl_input_present(n, i) && !const_scalar(n, i, tmp, sizeof tmp)) return false;
    return true;
}

static void format_node(const ew_kind *k, const char *a, const char *b, char p[3][48], char *buf, size_t size) {
    snprintf(buf, size, k->fmt, a, b, p[0], p[1], p[2]);
}

bool ocl_ew_epilogue_expr(const tsr_node *n, const char *var, char *buf, size_t size) {
    const ew_kind *k = kind_of(n);
    if (!k || !ocl_ew_is_epilogue(n)) return false;
    char p[3][48];
    params_of(n, p);
    char b[64] = "0.0f";
    size_t ni = ocl_host->node_input_count(n);
    if (k->arity == EW_CLIP) {
        if (ni > 1 && ocl_input_present(n, 1)) const_scalar(n, 1, p[0], sizeof p[0]);
        if (ni > 2 && ocl_input_present(n, 2)) const_scalar(n, 2, p[1], sizeof p[1]);
    } else if (ni == 2) {
        const_scalar(n, 1, b, sizeof b);
    } else if (ni > 2) {
        return false;
    }
    format_node(k, var, b, p, buf, size);
    return true;
}

/* --- groups --------------------------------------------------------------- */

typedef struct ew_term {
    const ew_kind *kind;
    char params[3][48];
    size_t n_args;
    int args[EW_MAX_INPUTS]; /* >= 0: outside input; < 0: -(node + 1) */
} ew_term;

typedef struct ew_group {
    ocl_state *st;
    size_t n_inputs;
    cl_kernel kernel;       /* built for `kernel_mask`, `kernel_scalar` */
    uint32_t kernel_mask;   /* bit i: input i has the output's shape */
    uint32_t kernel_scalar; /* bit i: input i is one element, read once */
    int32_t kernel_rank;
    size_t n_terms;
    /* as many as the group has nodes: room for EW_MAX_NODES in every group
     * made 100,000 one-node pieces take 600 MiB */
    ew_term terms[];
} ew_group;

static void group_free(void *p) {
    ew_group *g = p;
    if (!g) return;
    if (g->kernel) clReleaseKernel(g->kernel);
    free(g);
}

/* Appends to a growing source buffer; false when it overflows. */
static bool emit(char *buf, size_t size, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
#include <stdarg.h>
static bool emit(char *buf, size_t size, size_t *len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *len, size - *len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= size - *len) return false;
    *len += (size_t)n;
    return true;
}

static tsr_status *build_kernel(ew_group *g, uint32_t mask, uint32_t scalar, int32_t rank) {
    size_t size = 16384, len = 0;
    char *src = malloc(size);
    if (!src) return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
    bool ok = emit(src, size, &len,
                   "__kernel void ew_fused(__global float *out, int n, "
                   "__constant int *meta");
    for (size_t i = 0; i < g->n_inputs; i++) ok = ok && emit(src, size, &len, ", __global const float *in%zu", i);
    ok = ok && emit(src, size, &len, ") {\n  int i = get_global_id(0);\n  if (i >= n) return;\n");
    for (size_t i = 0; i < g->n_inputs; i++) {
        if (mask & (1u << i)) ok = ok && emit(src, size, &len, "  float x%zu = in%zu[i];\n", i, i);
        else if (scalar & (1u << i)) /* no per-element offset arithmetic */
            ok = ok && emit(src, size, &len, "  float x%zu = in%zu[0];\n", i, i);
        else
            ok =
                ok && emit(src, size, &len, "  float x%zu = in%zu[ew_offset(i, %d, meta, %zu)];\n", i, i, (int)rank, i);
    }
    for (size_t t = 0; t < g->n_terms && ok; t++) {
        const ew_term *tm = &g->terms[t];
        char names[EW_MAX_INPUTS][16], expr[1024];
        for (size_t a = 0; a < tm->n_args; a++) {
            if (tm->args[a] == EW_OMITTED) names[a][0] = 0;
            else if (tm->args[a] >= 0) snprintf(names[a], sizeof names[a], "x%d", tm->args[a]);
            else snprintf(names[a], sizeof names[a], "t%d", -tm->args[a] - 1);
        }
        if (tm->kind->arity == EW_CLIP) {
            /* min/max inputs replace the attribute bounds when present */
            char p[3][48];
            memcpy(p, tm->params, sizeof p);
            for (size_t a = 1; a < tm->n_args && a < 3; a++)
                if (names[a][0]) snprintf(p[a - 1], sizeof p[a - 1], "%.15s", names[a]);
            format_node(tm->kind, names[0], "", p, expr, sizeof expr);
        } else if (tm->kind->arity == EW_VARIADIC) {
            char acc[1024];
            snprintf(acc, sizeof acc, "%s", names[0]);
            for (size_t a = 1; a < tm->n_args; a++) {
                format_node(tm->kind, acc, names[a], (char(*)[48])tm->params, expr, sizeof expr);
                snprintf(acc, sizeof acc, "%s", expr);
            }
            snprintf(expr, sizeof expr, "%s", acc);
        } else {
            format_node(tm->kind, names[0], tm->n_args > 1 ? names[1] : "", (char(*)[48])tm->params, expr, sizeof expr);
        }
        ok = emit(src, size, &len, "  float t%zu = %s;\n", t, expr);
    }
    ok = ok && emit(src, size, &len, "  out[i] = t%zu;\n}\n", g->n_terms - 1);
    if (!ok) {
        free(src);
        return ocl_error(TSR_ERR_NOT_SUPPORTED, "opencl: elementwise chain too long");
    }
    const char *name = "elementwise";
    cl_program prog;
    tsr_status *s = ocl_program_get(g->st, NULL, &name, 1, src, "", &prog);
    free(src);
    if (s) return s;
    cl_kernel k;
    if ((s = ocl_kernel_from(g->st, prog, "ew_fused", &k))) return s;
    if (g->kernel) clReleaseKernel(g->kernel);
    g->kernel = k;
    g->kernel_mask = mask;
    g->kernel_scalar = scalar;
    g->kernel_rank = rank;
    return NULL;
}

/* Broadcasts the inputs' shapes (numpy rules) into the output shape. */
static tsr_status *broadcast(ocl_exec *x, size_t n_in, int32_t *rank, int64_t *dims) {
    int32_t r = 0;
    for (size_t i = 0; i < n_in; i++) {
        const ocl_tensor *t = ocl_exec_input(x, i);
        if (t && t->rank > r) r = t->rank;
    }
    for (int32_t d = 0; d < r; d++) dims[d] = 1;
    for (size_t i = 0; i < n_in; i++) {
        const ocl_tensor *t = ocl_exec_input(x, i);
        if (!t) continue;
        for (int32_t d = 0; d < t->rank; d++) {
            int64_t v = t->dims[d], *o = &dims[r - t->rank + d];
            if (v == *o || v == 1) continue;
            if (*o != 1)
                return ocl_error(TSR_ERR_INVALID_ARGUMENT, "input %zu (dim %lld) does not broadcast against %lld", i,
                                 (long long)v, (long long)*o);
            *o = v;
        }
    }
    *rank = r;
    return NULL;
}

static tsr_status *group_run(ocl_exec *x, void *state) {
    ew_group *g = state;
    size_t n_in = ocl_exec_input_count(x);
    int32_t rank = 0;
    int64_t dims[OCL_MAX_RANK];
    tsr_status *s = broadcast(x, n_in, &rank, dims);
    if (s) return s;
    ocl_tensor *out;
    if ((s = ocl_exec_output(x, 0, TSR_FLOAT, rank, dims, &out))) return s;
    if (!out->count) return NULL;
    if (out->count > INT32_MAX) return ocl_error(TSR_ERR_NOT_SUPPORTED, "tensor too large");
    uint32_t mask = 0, scalar = 0;
    /* meta: out dims, then each input's strides (0 where broadcast) */
    int32_t meta[OCL_MAX_RANK * (EW_MAX_INPUTS + 1)];
    for (int32_t d = 0; d < rank; d++) meta[d] = (int32_t)dims[d];
    for (size_t i = 0; i < n_in; i++) {
        const ocl_tensor *t = ocl_exec_input(x, i);
        int32_t *st = &meta[(i + 1) * (size_t)rank];
        for (int32_t d = 0; d < rank; d++) st[d] = 0;
        if (!t) continue;
        if (t->count == out->count) mask |= 1u << i;
        else if (t->count == 1) scalar |= 1u << i;
        int64_t stride = 1;
        for (int32_t d = t->rank - 1; d >= 0; d--) {
            st[rank - t->rank + d] = t->dims[d] == 1 ? 0 : (int32_t)stride;
            stride *= t->dims[d];
        }
    }
    if (!g->kernel || g->kernel_mask != mask || g->kernel_scalar != scalar || g->kernel_rank != rank)
        if ((s = build_kernel(g, mask, scalar, rank))) return s;
    cl_mem metab = NULL;
    size_t meta_n = (size_t)rank * (n_in + 1);
    if ((s = ocl_meta_buffer(ocl_exec_state(x), meta, meta_n ? meta_n : 1, &metab))) return s;
    int n = (int)out->count;
    cl_int err = clSetKernelArg(g->kernel, 0, sizeof(cl_mem), &out->mem);
    err |= clSetKernelArg(g->kernel, 1, sizeof n, &n);
    err |= clSetKernelArg(g->kernel, 2, sizeof(cl_mem), &metab);
    for (size_t i = 0; i < n_in; i++) {
        const ocl_tensor *t = ocl_exec_input(x, i);
        /* An omitted Clip bound is never read; any buffer will do. */
        cl_mem m = t ? t->mem : out->mem;
        err |= clSetKernelArg(g->kernel, (cl_uint)(3 + i), sizeof(cl_mem), &m);
    }
    if (err != CL_SUCCESS) s = ocl_cl_error(err, "clSetKernelArg(ew_fused)");
    if (!s) s = ocl_launch_1d(ocl_exec_state(x), g->kernel, out->count, "ew_fused");
    clReleaseMemObject(metab);
    return s;
}

static const ocl_op ew_group_op = {"(elementwise)", NULL, NULL, group_run, group_free};

tsr_status *ocl_ew_group_step(ocl_state *st, const tsr_node *const *nodes, size_t count, ocl_step *step) {
    if (count == 0 || count > EW_MAX_NODES)
        return ocl_error(TSR_ERR_NOT_SUPPORTED, "opencl: elementwise group of %zu nodes", count);
    ew_group *g = calloc(1, sizeof *g + count * sizeof g->terms[0]);
    const char **in_names = calloc(EW_MAX_INPUTS, sizeof *in_names);
    const char **out_names = calloc(1, sizeof *out_names);
    if (!g || !in_names || !out_names) {
        free(g);
        free(in_names);
        free(out_names);
        return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
    }
    g->st = st;
    tsr_status *s = NULL;
    for (size_t k = 0; k < count && !s; k++) {
        const tsr_node *n = nodes[k];
        ew_term *tm = &g->terms[g->n_terms++];
        tm->kind = kind_of(n);
        params_of(n, tm->params);
        tm->n_args = ocl_host->node_input_count(n);
        for (size_t a = 0; a < tm->n_args && !s; a++) {
            const tsr_value_info *v = ocl_host->node_input(n, a);
            if (!v) {
                tm->args[a] = EW_OMITTED; /* Clip keeps its default bound */
                continue;
            }
            const char *name = ocl_host->value_name(v);
            int found = 0;
            /* produced by an earlier node of the group? */
            for (size_t j = 0; j < k && !found; j++)
                if (!strcmp(ocl_host->value_name(ocl_host->node_output(nodes[j], 0)), name)) {
                    tm->args[a] = -(int)j - 1;
                    found = 1;
                }
            for (size_t j = 0; j < g->n_inputs && !found; j++)
                if (!strcmp(in_names[j], name)) {
                    tm->args[a] = (int)j;
                    found = 1;
                }
            if (found) continue;
            if (g->n_inputs == EW_MAX_INPUTS) {
                s = ocl_error(TSR_ERR_NOT_SUPPORTED, "opencl: too many inputs to fuse");
                break;
            }
            in_names[g->n_inputs] = name;
            tm->args[a] = (int)g->n_inputs++;
        }
    }
    if (s) {
        group_free(g);
        free(in_names);
        free(out_names);
        return s;
    }
    out_names[0] = ocl_host->value_name(ocl_host->node_output(nodes[count - 1], 0));
    step->op = &ew_group_op;
    step->op_state = g;
    step->node = nodes[0];
    step->n_in = g->n_inputs;
    step->in_names = in_names;
    step->n_out = 1;
    step->out_names = out_names;
    return NULL;
}
