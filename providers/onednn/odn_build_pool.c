/* MaxPool, AveragePool and their global forms as oneDNN pooling. */
#include <math.h>
#include <string.h>

#include "odn_quant.h"

/* Window geometry for spatial dim i: pads, output size. ceil_mode grows the
 * right pad so the last partial window exists, as ONNX counts it. */
typedef struct pool_geom {
    dnnl_dims_t strides, kernel, dilation, pad_l, pad_r;
} pool_geom;

static tsr_status *geometry(const tsr_node *n, const odn_value *x, bool global, pool_geom *g, int64_t *out_dims) {
    int32_t sp = x->rank - 2;
    size_t c_k = 0, c_s = 0, c_d = 0, c_p = 0;
    const int64_t *k = global ? NULL : odn_attr_ints(n, "kernel_shape", &c_k);
    const int64_t *s = global ? NULL : odn_attr_ints(n, "strides", &c_s);
    const int64_t *d = global ? NULL : odn_attr_ints(n, "dilations", &c_d);
    const int64_t *pads = global ? NULL : odn_attr_ints(n, "pads", &c_p);
    bool ceil_mode = !global && odn_attr_int(n, "ceil_mode", 0) != 0;
    bool same_upper = !global && odn_attr_string_is(n, "auto_pad", "SAME_UPPER", false);
    bool same_lower = !global && odn_attr_string_is(n, "auto_pad", "SAME_LOWER", false);
    bool valid = !global && odn_attr_string_is(n, "auto_pad", "VALID", false);
    out_dims[0] = x->dims[0];
    out_dims[1] = x->dims[1];
    for (int32_t i = 0; i < sp; i++) {
        int64_t in = x->dims[2 + i];
        int64_t ker = global ? in : (k && (size_t)i < c_k ? k[i] : 1);
        int64_t str = s && (size_t)i < c_s ? s[i] : 1;
        int64_t dil = d && (size_t)i < c_d ? d[i] : 1;
        int64_t pl = pads && c_p == (size_t)(2 * sp) ? pads[i] : 0,
                pr = pads && c_p == (size_t)(2 * sp) ? pads[sp + i] : 0;
        if (ker < 1 || str < 1 || dil < 1 || ker > (INT64_C(1) << 31) || dil > (INT64_C(1) << 31))
            return odn_node_error(n, TSR_ERR_INVALID_MODEL, "bad window");
        int64_t span = (ker - 1) * dil + 1, out;
        if (valid) {
            pl = pr = 0;
            out = in >= span ? (in - span) / str + 1 : 0;
        } else if (same_upper || same_lower) {
            out = (in + str - 1) / str;
            int64_t total = (out - 1) * str + span - in;
            if (total < 0) total = 0;
            pl = same_upper ? total / 2 : total - total / 2;
            pr = total - pl;
        } else {
            int64_t room = in + pl + pr - span;
            if (room < 0) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "window larger than the padded input");
            out = (ceil_mode ? (room + str - 1) / str : room / str) + 1;
            /* a window starting in the right padding is dropped */
            if (ceil_mode && (out - 1) * str >= in + pl) out--;
            int64_t need = (out - 1) * str + span - in - pl;
            if (need > pr) pr = need;
        }
        if (out < 1) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "empty output");
        out_dims[2 + i] = out;
        g->strides[i] = str;
        g->kernel[i] = ker;
        g->dilation[i] = dil - 1; /* oneDNN counts the gaps */
        g->pad_l[i] = pl;
        g->pad_r[i] = pr;
    }
    return NULL;
}

/* Pooling of a plain f32 tensor with few channels, one plane at a time.
 * oneDNN 2.6's JIT kernels on AVX2 want 8-channel blocks: C=1 (RAFT's
 * correlation pyramid, [2852,1,46,62]) padded to 8 moved 8x the bytes
 * through two reorders per level, 10-15x slower than ONNX Runtime. The
 * window rules are oneDNN's: pad_r already holds ceil_mode's extra, and
 * count_include_pad divides by the whole window. */
typedef struct plane_pool {
    int64_t planes, in[3], out[3], ker[3], str[3], dil[3], pad[3];
    dnnl_alg_kind_t alg;
} plane_pool;

/* [lo, hi) of the taps k with 0 <= o*str - pad + k*dil < in. */
static void taps(int64_t o, int64_t in, int64_t ker, int64_t str, int64_t dil, int64_t pad, int64_t *lo, int64_t *hi) {
    int64_t start = o * str - pad, a = 0, b = ker;
    while (a < ker && start + a * dil < 0) a++;
    while (b > a && start + (b - 1) * dil >= in) b--;
    *lo = a;
    *hi = b;
}

#define MAX_ROWS 64 /* window rows gathered per output row; more: one output at a time */

static tsr_status *run_plane_pool(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const plane_pool *q = ctx;
    void *xh = NULL, *yh = NULL;
    dnnl_memory_get_data_handle(src, &xh);
    dnnl_memory_get_data_handle(dst, &yh);
    const float *x = xh;
    float *y = yh;
    const int64_t OD = q->out[0], OH = q->out[1], OW = q->out[2], IH = q->in[1], IW = q->in[2];
    const int64_t KW = q->ker[2], SW = q->str[2], DW = q->dil[2], PW = q->pad[2];
    const int64_t rows = q->planes * OD * OH, in_plane = q->in[0] * IH * IW;
    const bool is_max = q->alg == dnnl_pooling_max, incl = q->alg == dnnl_pooling_avg_include_padding;
    const float whole = (float)(q->ker[0] * q->ker[1] * KW);
    /* outputs [lo, hi) of a row have every W tap inside the input */
    int64_t lo = 0, hi = 0;
    while (lo < OW && lo * SW - PW < 0) lo++;
    hi = OW;
    while (hi > lo && (hi - 1) * SW - PW + (KW - 1) * DW >= IW) hi--;
#pragma omp parallel for if (rows * OW > 4096) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const int64_t oh = r % OH, od = (r / OH) % OD, pl = r / (OH * OD);
        int64_t d0, d1, h0, h1;
        taps(od, q->in[0], q->ker[0], q->str[0], q->dil[0], q->pad[0], &d0, &d1);
        taps(oh, IH, q->ker[1], q->str[1], q->dil[1], q->pad[1], &h0, &h1);
        const int64_t id0 = od * q->str[0] - q->pad[0], ih0 = oh * q->str[1] - q->pad[1];
        /* offsets of the input rows under this output row's windows, at W = -PW */
        int64_t row[MAX_ROWS];
        int nr = 0;
        const int64_t want = (d1 - d0) * (h1 - h0);
        const bool fast = want <= MAX_ROWS;
        for (int64_t kd = d0; kd < d1 && fast; kd++)
            for (int64_t kh = h0; kh < h1; kh++)
                row[nr++] = pl * in_plane + ((id0 + kd * q->dil[0]) * IH + ih0 + kh * q->dil[1]) * IW - PW;
        float *yr = y + r * OW;
        if (fast) {
            /* inner outputs a row at a time, in yr: the same sums in the
             * same order as one output at a time, 4x faster */
            for (int64_t ow = lo; ow < hi; ow++) yr[ow] = is_max ? -INFINITY : 0.0f;
            for (int i = 0; i < nr; i++)
                for (int64_t kw = 0; kw < KW; kw++) {
                    const float *xr = x + row[i] + lo * SW + kw * DW; /* inside x from lo on */
                    if (is_max)
                        for (int64_t j = 0; j < hi - lo; j++)
                            yr[lo + j] = xr[j * SW] > yr[lo + j] ? xr[j * SW] : yr[lo + j];
                    else
                        for (int64_t j = 0; j < hi - lo; j++) yr[lo + j] += xr[j * SW];
                }
            const float div = incl ? whole : (float)(want * KW);
            if (!is_max)
                for (int64_t ow = lo; ow < hi; ow++) yr[ow] /= div;
        }
        for (int64_t ow = 0; ow < OW; ow++) {
            if (fast && ow >= lo && ow < hi) {
                ow = hi - 1; /* done above */
                continue;
            }
            int64_t w0 = 0, w1 = KW;
            if (ow < lo || ow >= hi) taps(ow, IW, KW, SW, DW, PW, &w0, &w1);
            float acc = is_max ? -INFINITY : 0.0f;
            const int64_t at = ow * SW - PW; /* W of tap 0, maybe negative */
            for (int64_t kd = d0; kd < d1; kd++)
                for (int64_t kh = h0; kh < h1; kh++) {
                    const int64_t off = pl * in_plane + ((id0 + kd * q->dil[0]) * IH + ih0 + kh * q->dil[1]) * IW + at;
                    for (int64_t kw = w0; kw < w1; kw++) {
                        const float v = x[off + kw * DW];
                        acc = !is_max ? acc + v : v > acc ? v : acc;
                    }
                }
            if (incl) acc /= whole;
            else if (!is_max) acc /= (float)(want * (w1 - w0));
            yr[ow] = acc;
        }
    }
    return NULL;
}

/* The plane loop for x (plain f32 after a reorder if need be) into y. */
static tsr_status *build_plane_pool(odn_plan *p, const tsr_node *n, odn_value *x, odn_value *y, dnnl_alg_kind_t alg,
                                    const pool_geom *g, const int64_t *out_dims) {
    plane_pool *q = odn_plan_alloc(p, sizeof *q);
    if (!q) return odn_node_error(n, TSR_ERR_NO_MEMORY, "pool plan");
    const int32_t sp = x->rank - 2, lead = 3 - sp; /* spatial dims right-aligned in 3 */
    q->planes = x->dims[0] * x->dims[1];
    q->alg = alg;
    for (int32_t i = 0; i < 3; i++) {
        int32_t k = i - lead;
        q->in[i] = k >= 0 ? x->dims[2 + k] : 1;
        q->out[i] = k >= 0 ? out_dims[2 + k] : 1;
        q->ker[i] = k >= 0 ? g->kernel[k] : 1;
        q->str[i] = k >= 0 ? g->strides[k] : 1;
        q->dil[i] = k >= 0 ? g->dilation[k] + 1 : 1;
        q->pad[i] = k >= 0 ? g->pad_l[k] : 0;
    }
    dnnl_memory_t src, dst;
    tsr_status *s = odn_plan_plain_mem(p, x, n, &src);
    if (!s) s = odn_plan_define(p, y, x->rank, out_dims, NULL, n);
    if (!s) s = odn_plan_plain_mem(p, y, n, &dst);
    return s ? s : odn_plan_add_loop(p, run_plane_pool, q, src, dst, n);
}

tsr_status *odn_build_pool(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    return odn_build_pool_values(p, n, odn_plan_value(p, odn_host->node_input(n, 0)),
                                 odn_plan_value(p, odn_host->node_output(n, 0)));
}

/* A pooling primitive from src_md to dst_md, NULL when oneDNN has none but
 * its reference kernel. */
static dnnl_primitive_desc_t pool_pd(odn_plan *p, dnnl_alg_kind_t alg, const dnnl_memory_desc_t *src_md,
                                     const dnnl_memory_desc_t *dst_md, const pool_geom *g) {
    dnnl_pooling_v2_desc_t d;
    dnnl_primitive_desc_t pd = NULL;
    if (dnnl_pooling_v2_forward_desc_init(&d, dnnl_forward_inference, alg, src_md, dst_md, g->strides, g->kernel,
                                          g->dilation, g->pad_l, g->pad_r) != dnnl_success ||
        odn_pd_create(p, &d, NULL, &pd) != dnnl_success)
        return NULL;
    return pd;
}

/* The same with src and dst both in layout `tag`. */
static dnnl_primitive_desc_t pool_pd_tag(odn_plan *p, dnnl_alg_kind_t alg, const odn_value *x, const int64_t *out_dims,
                                         dnnl_data_type_t dt, dnnl_format_tag_t tag, const pool_geom *g) {
    dnnl_memory_desc_t src_md, dst_md;
    dnnl_dims_t xd, yd;
    for (int32_t i = 0; i < x->rank; i++) {
        xd[i] = x->dims[i];
        yd[i] = out_dims[i];
    }
    if (tag == dnnl_format_tag_undef ||
        dnnl_memory_desc_init_by_tag(&src_md, x->rank, xd, x->md.data_type, tag) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&dst_md, x->rank, yd, dt, tag) != dnnl_success)
        return NULL;
    return pool_pd(p, alg, &src_md, &dst_md, g);
}

static bool is_jit(const_dnnl_primitive_desc_t pd) { return pd && strncmp(odn_impl_name(pd), "jit", 3) == 0; }

/* Keeps the first JIT kernel among the candidates (else the first found). */
static void consider(dnnl_primitive_desc_t *best, dnnl_primitive_desc_t alt) {
    if (!alt) return;
    if (!*best || (!is_jit(*best) && is_jit(alt))) {
        if (*best) dnnl_primitive_desc_destroy(*best);
        *best = alt;
    } else {
        dnnl_primitive_desc_destroy(alt);
    }
}

tsr_status *odn_build_pool_values(odn_plan *p, const tsr_node *n, odn_value *x, odn_value *y) {
    const char *op = odn_host->node_op_type(n);
    if (!x || !y || !x->produced) return odn_node_error(n, TSR_ERR_PROVIDER, "internal: pool inputs");
    if (x->rank < 3 || x->rank > 5) return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "rank %d", (int)x->rank);
    bool global = strncmp(op, "Global", 6) == 0;
    bool is_max = strstr(op, "Max") != NULL;
    pool_geom g;
    int64_t out_dims[ODN_MAX_RANK];
    tsr_status *s = geometry(n, x, global, &g, out_dims);
    if (s) return s;
    dnnl_alg_kind_t alg = is_max                  ? dnnl_pooling_max
        : odn_attr_int(n, "count_include_pad", 0) ? dnnl_pooling_avg_include_padding
                                                  : dnnl_pooling_avg_exclude_padding;
    dnnl_dims_t dd;
    for (int32_t i = 0; i < x->rank; i++) dd[i] = out_dims[i];
    /* f32, or the integers of a QDQ MaxPool (odn_fuse_qdq.c) */
    dnnl_data_type_t dt = odn_dnnl_type(y->elem_type) == dnnl_data_type_undef ? dnnl_f32 : odn_dnnl_type(y->elem_type);
    if (x->dims[1] < odn_block() && dt == dnnl_f32 && x->md.data_type == dnnl_f32)
        return build_plane_pool(p, n, x, y, alg, &g, out_dims);
    dnnl_memory_desc_t dst_any, y_plain;
    dnnl_status_t st = dnnl_memory_desc_init_by_tag(&dst_any, x->rank, dd, dt, dnnl_format_tag_any);
    if (st == dnnl_success) st = odn_plain_md_typed(&y_plain, x->rank, out_dims, dt);
    if (st != dnnl_success) return odn_dnnl_error(n, "pool layout", st);
    /* In x's layout (the dst then in the same one), else plain. oneDNN 2.6
     * pools a plain layout (a piece input, or a value that is also a piece
     * output) with its "simple_nchw" kernel on AVX2, 10-15x slower than
     * its JIT one on the blocked layout even with the reorders (3x3 stride
     * 2 pad 1, 64 channels 64x64, one thread: 4.2 -> 0.31 ms, ONNX Runtime
     * 0.31-0.36): without a JIT kernel, pool in the blocked layout (faster
     * than channels-last here), then channels-last, reordering x into it
     * and the result into a piece output. */
    dnnl_primitive_desc_t pd = pool_pd(p, alg, &x->md, &dst_any, &g);
    const int32_t r = x->rank;
    const dnnl_format_tag_t plain_tag = r == 3 ? dnnl_abc : r == 4 ? dnnl_abcd : dnnl_abcde;
    const dnnl_format_tag_t last_tag = r == 3 ? dnnl_acb : r == 4 ? dnnl_acdb : dnnl_acdeb;
    const dnnl_format_tag_t tags[3] = {plain_tag, odn_blocked_tag(r), last_tag};
    for (int k = 0; k < 3 && !is_jit(pd); k++) consider(&pd, pool_pd_tag(p, alg, x, out_dims, dt, tags[k], &g));
    if (!pd) {
        if (global && dt == dnnl_f32) {
            /* a global pooling is a reduction over the spatial dims */
            bool reduce[ODN_MAX_RANK] = {false, false, true, true, true};
            dnnl_memory_t src, dst;
            s = odn_plan_plain_mem(p, x, n, &src);
            if (!s) s = odn_plan_define(p, y, x->rank, out_dims, NULL, n);
            if (!s) s = odn_plan_plain_mem(p, y, n, &dst);
            return s ? s
                     : odn_reduce_loop(p, n, is_max ? dnnl_reduction_max : dnnl_reduction_mean, 0, x->rank, x->dims,
                                       reduce, src, dst);
        }
        return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "no fast pooling kernel for this shape");
    }
    /* x in the kernel's layout (a plain copy shared with other readers) */
    const dnnl_memory_desc_t *src_md = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    const dnnl_memory_desc_t *dst_md = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    dnnl_memory_desc_t x_plain;
    dnnl_memory_t src = NULL;
    st = odn_plain_md_typed(&x_plain, x->rank, x->dims, x->md.data_type);
    if (st != dnnl_success) s = odn_dnnl_error(n, "pool layout", st);
    else if (dnnl_memory_desc_equal(src_md, &x_plain)) s = odn_plan_plain_mem(p, x, n, &src);
    else s = odn_plan_mem_as(p, x, src_md, n, &src);
    dnnl_exec_arg_t args[ODN_MAX_ARGS] = {{DNNL_ARG_SRC, src}};
    if (!s && y->output_index >= 0 && !dnnl_memory_desc_equal(dst_md, &y_plain)) {
        /* a piece output: pooled in the kernel's layout, then reordered */
        odn_value temp = {.info = y->info, .input_index = -1, .output_index = -1, .elem_type = y->elem_type};
        s = odn_plan_define(p, y, x->rank, out_dims, NULL, n);
        if (!s) s = odn_plan_define(p, &temp, x->rank, out_dims, dst_md, n);
        if (!s) {
            args[1] = (dnnl_exec_arg_t){DNNL_ARG_DST, temp.mem};
            s = odn_plan_add_primitive(p, pd, n, args, 2);
        }
        if (!s) s = odn_plan_add_reorder(p, temp.mem, &temp.md, y->mem, &y->md, n);
    } else if (!s) {
        s = odn_build_finish_pd(p, n, pd, y, x->rank, out_dims, args, 1);
    }
    dnnl_primitive_desc_destroy(pd);
    return s;
}
