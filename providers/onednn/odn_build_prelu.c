/* PRelu: y = x < 0 ? slope * x : x, the slope broadcast one way onto x.
 *
 * A constant one-value slope is the eltwise relu with that alpha
 * (odn_eltwise_of), so it runs, and fuses as a post-op, like LeakyRelu.
 * Any other slope runs as oneDNN's prelu primitive in the layout x already
 * has (a convolution's blocked output: oneDNN then wants the weights in its
 * own layout, reordered once when the slope is a constant), else on the
 * plain layout. oneDNN 2.6 has JIT kernels (jit_uni) for per-channel and
 * same-shape slopes; a slope broadcast along other axes ([5] over
 * [2,3,4,5], [4,1] over [N,C,4,W]) leaves it only its reference kernel, and
 * runs as a C loop over plain memories instead.
 *
 * oneDNN's prelu writes x * w where x <= 0 (relu's alpha likewise): NaN
 * stays NaN as in ONNX; only zeros can differ, in sign (-0 * -1) or where
 * the slope is infinite or NaN (0 * inf).
 *
 * A per-channel PRelu after a convolution is not a prelu post-op: oneDNN
 * 2.6's AVX2 convolutions have none (jit:avx2 with one is ref:any for
 * nChw8c, NHWC and NCHW alike), so it is a step of its own in the
 * convolution's layout. */
#include <string.h>

#include "odn.h"

typedef struct prelu_loop {
    int32_t rank;
    int64_t dims[ODN_MAX_RANK];
    int64_t ss[ODN_MAX_RANK]; /* the slope's element strides, 0 where broadcast */
    dnnl_memory_t s;
} prelu_loop;

static tsr_status *run_prelu_loop(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const prelu_loop *l = ctx;
    void *px = NULL, *ps = NULL, *py = NULL;
    dnnl_memory_get_data_handle(src, &px);
    dnnl_memory_get_data_handle(l->s, &ps);
    dnnl_memory_get_data_handle(dst, &py);
    int32_t r = l->rank;
    int64_t inner = r ? l->dims[r - 1] : 1, rows = 1, sl = r ? l->ss[r - 1] : 0;
    for (int32_t d = 0; d + 1 < r; d++) rows *= l->dims[d];
    const float *x = px, *s = ps;
    float *y = py;
#pragma omp parallel for if (rows * inner > 32768) schedule(static)
    for (int64_t i = 0; i < rows; i++) {
        int64_t os = 0, rem = i;
        for (int32_t d = r - 2; d >= 0; d--) {
            os += rem % l->dims[d] * l->ss[d];
            rem /= l->dims[d];
        }
        const float *xr = x + i * inner, *sr = s + os;
        float *yr = y + i * inner;
        for (int64_t k = 0; k < inner; k++) yr[k] = xr[k] < 0 ? sr[k * sl] * xr[k] : xr[k];
    }
    return NULL;
}

static tsr_status *build_loop(odn_plan *p, const tsr_node *n, odn_value *x, odn_value *s, odn_value *y,
                              const int64_t *ds) {
    prelu_loop *l = odn_plan_alloc(p, sizeof *l);
    if (!l) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    l->rank = x->rank;
    memcpy(l->dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    int64_t stride = 1;
    for (int32_t d = x->rank - 1; d >= 0; d--) {
        l->ss[d] = ds[d] == x->dims[d] && ds[d] != 1 ? stride : 0;
        stride *= ds[d];
    }
    dnnl_memory_t mx, ms;
    tsr_status *st = odn_plan_plain_mem(p, x, n, &mx);
    if (!st) st = odn_plan_plain_mem(p, s, n, &ms);
    if (!st) st = odn_plan_define(p, y, x->rank, x->dims, NULL, n);
    if (st) return st;
    l->s = ms;
    return odn_plan_add_loop_with(p, run_prelu_loop, l, mx, y->mem, ms, n);
}

/* oneDNN's prelu on data laid out as `md` with weights of dims ds: plain
 * weights first, then the layout oneDNN picks for them; NULL when it has
 * only its reference kernel. */
static dnnl_primitive_desc_t prelu_pd(odn_plan *p, const dnnl_memory_desc_t *md, int32_t rank, const int64_t *ds) {
    dnnl_memory_desc_t w[2];
    if (odn_plain_md(&w[0], rank, ds) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&w[1], rank, ds, dnnl_f32, dnnl_format_tag_any) != dnnl_success)
        return NULL;
    for (int i = 0; i < 2; i++) {
        dnnl_prelu_desc_t d;
        dnnl_primitive_desc_t pd = NULL;
        if (dnnl_prelu_forward_desc_init(&d, dnnl_forward_inference, md, &w[i]) == dnnl_success &&
            odn_pd_create(p, &d, NULL, &pd) == dnnl_success)
            return pd;
    }
    return NULL;
}

tsr_status *odn_build_prelu(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_eltwise el[2];
    if (odn_eltwise_of(n, el) > 0) return odn_build_eltwise(p, index);
    odn_value *x = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *s = odn_plan_value(p, odn_host->node_input(n, 1));
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!x || !s || !y || !x->produced || !s->produced || !x->mem || !s->mem)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: PRelu inputs");
    int32_t rank = x->rank;
    if (s->rank > rank) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "slope of higher rank than X");
    int64_t ds[ODN_MAX_RANK];
    for (int32_t i = 0; i < rank; i++) {
        ds[i] = i < rank - s->rank ? 1 : s->dims[i - (rank - s->rank)];
        if (ds[i] != 1 && ds[i] != x->dims[i])
            return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "slope does not broadcast onto X");
    }
    if (rank < 1) return build_loop(p, n, x, s, y, ds);
    /* x's own layout (one descriptor serves src and dst, so a piece output
     * is plain), then plain */
    dnnl_memory_t src = x->mem;
    dnnl_memory_desc_t md = x->md;
    tsr_status *st = NULL;
    dnnl_primitive_desc_t pd = NULL;
    if (y->output_index < 0) pd = prelu_pd(p, &md, rank, ds);
    if (!pd) {
        dnnl_memory_desc_t plain;
        if (odn_plain_md(&plain, rank, x->dims) != dnnl_success)
            return odn_node_error(n, TSR_ERR_PROVIDER, "internal: PRelu layout");
        if (!dnnl_memory_desc_equal(&plain, &x->md) || y->output_index >= 0) pd = prelu_pd(p, &plain, rank, ds);
        if (!pd) return build_loop(p, n, x, s, y, ds);
        st = odn_plan_plain_mem(p, x, n, &src);
        md = plain;
    }
    /* the slope seen at x's rank, then in the kernel's weights layout (a
     * constant's reorder runs now, once) */
    dnnl_memory_t w_mem = NULL;
    odn_value wv = *s;
    if (!st) st = odn_plan_plain_view(p, s, rank, ds, NULL, n, &wv.mem, &wv.md);
    if (!st) st = odn_plan_mem_as(p, &wv, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), n, &w_mem);
    if (!st) st = odn_plan_define(p, y, rank, x->dims, &md, n);
    if (!st) {
        dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, w_mem}, {DNNL_ARG_DST, y->mem}};
        st = odn_plan_add_primitive(p, pd, n, args, 3);
    }
    dnnl_primitive_desc_destroy(pd);
    return st;
}
