/* 3x3 stride-1 convolutions as the AVX2 Winograd F(4x4, 3x3) kernel
 * (odn_wino_f43.h) on CPUs where oneDNN 2.6 has no Winograd kernel (it has
 * them for AVX-512 only): the direct kernel does 2.25-4x the arithmetic on
 * the layers that dominate ResNet, U-Net, YOLO and VAE decoders, and ONNX
 * Runtime's MLAS runs them direct too.
 *
 * The step reads the input in the 8-channel layout oneDNN's AVX2 kernels
 * write (nChw8c, or NHWC where the producer left it so) and writes the same
 * family, so no reorder appears next to it. The convolution's fused
 * post-ops are taken when the kernel can apply them: a residual sum
 * (scale 1) accumulated into the residual's buffer as oneDNN's sum post-op
 * does, then ReLU in the kernel or other activations as oneDNN eltwise
 * steps in place; anything else (binary post-ops, scaled sums) leaves the
 * convolution to oneDNN. The transformed weights (4x the filter) live in
 * the piece's constant cache like every reordered weight, so the host's
 * copy is released as for any other convolution. */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "odn.h"
#include "odn_wino_f43.h"

/* The plan's scratch, shared by its Winograd steps (steps run one at a
 * time) and grown to the largest one's need as they are built. */
struct odn_wino_scratch {
    void *buf;
    size_t bytes;
};

/* A dilated convolution is d x d undilated ones (odn_conv_wino_f43_wanted):
 * up to dilation 4 here, as segmentation backbones and ASPP heads use. */
enum { WINO_MAX_DIL = 4 };

/* One sub-grid: its shape, and where its first input and output elements
 * lie (floats from the tensors' starts). */
typedef struct wino_grid {
    odn_wino_shape shape;
    int64_t x_off, y_off;
} wino_grid;

typedef struct wino_step {
    int grids;
    wino_grid grid[WINO_MAX_DIL * WINO_MAX_DIL];
    odn_wino_strides xs, ys; /* a grid's: the tensors' row and pixel strides times the dilation */
    const float *packed;
    const float *bias; /* NULL: none */
    bool accumulate, relu;
    int threads;
    const struct odn_wino_scratch *scratch;
} wino_step;

typedef struct wino_fill {
    const float *w; /* [M][C][3][3] */
    int64_t c, m;
} wino_fill;

static const char wino_tag = 0; /* the constant cache's key2 for an unfolded filter */

static tsr_status *wino_run(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const wino_step *w = ctx;
    void *px = NULL, *py = NULL;
    dnnl_memory_get_data_handle(src, &px);
    dnnl_memory_get_data_handle(dst, &py);
    if (!px || !py || !w->scratch->buf)
        return odn_host->status_new(TSR_ERR_PROVIDER, "onednn: Winograd convolution without buffers");
    for (int i = 0; i < w->grids; i++) {
        const wino_grid *g = &w->grid[i];
        odn_wino_f43_run(&g->shape, (const float *)px + g->x_off, &w->xs, w->packed, w->bias, (float *)py + g->y_off,
                         &w->ys, w->accumulate, w->relu, w->scratch->buf, w->threads);
    }
    return NULL;
}

void *odn_wino_scratch_buf(const struct odn_wino_scratch *s) { return s->buf; }

static void wino_fill_run(const void *ctx, void *buf) {
    const wino_fill *f = ctx;
    odn_wino_f43_pack_weights(f->w, f->c, f->m, buf);
}

/* The strides of a [N, C, H, W] tensor laid out as `md` when that is
 * nChw8c or NHWC; false otherwise. */
static bool strides_of(const dnnl_memory_desc_t *md, const dnnl_dims_t d, odn_wino_strides *s, bool *nhwc) {
    dnnl_memory_desc_t blocked, channels_last;
    if (dnnl_memory_desc_init_by_tag(&blocked, 4, d, dnnl_f32, dnnl_nChw8c) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&channels_last, 4, d, dnnl_f32, dnnl_acdb) != dnnl_success)
        return false;
    if (dnnl_memory_desc_equal(md, &blocked)) {
        *s = (odn_wino_strides){.img = d[1] * d[2] * d[3], .cb = d[2] * d[3] * 8, .row = d[3] * 8, .pix = 8};
        if (nhwc) *nhwc = false;
        return true;
    }
    if (dnnl_memory_desc_equal(md, &channels_last)) {
        *s = (odn_wino_strides){.img = d[1] * d[2] * d[3], .cb = 8, .row = d[3] * d[1], .pix = d[1]};
        if (nhwc) *nhwc = true;
        return true;
    }
    return false;
}

/* The post-ops the kernel applies: an optional leading sum of scale 1, then
 * eltwise ops of scale 1 (one ReLU in the kernel, else oneDNN steps). */
static bool post_ops_fit(const_dnnl_post_ops_t po, bool *accumulate, bool *relu, odn_eltwise *tail, int *tail_count) {
    int len = dnnl_post_ops_len(po), i = 0;
    *accumulate = *relu = false;
    *tail_count = 0;
    if (len > 0 && dnnl_post_ops_get_kind(po, 0) == dnnl_sum) {
        float scale = 0.0f;
        if (dnnl_post_ops_get_params_sum(po, 0, &scale) != dnnl_success || scale != 1.0f) return false;
        *accumulate = true;
        i = 1;
    }
    if (len - i > ODN_WINO_TAIL_MAX) return false;
    for (; i < len; i++) {
        odn_eltwise *e = &tail[*tail_count];
        float scale = 0.0f;
        if (dnnl_post_ops_get_kind(po, i) != dnnl_eltwise ||
            dnnl_post_ops_get_params_eltwise(po, i, &scale, &e->alg, &e->alpha, &e->beta) != dnnl_success ||
            scale != 1.0f)
            return false;
        ++*tail_count;
    }
    if (*tail_count == 1 && tail[0].alg == dnnl_eltwise_relu && tail[0].alpha == 0.0f) {
        *relu = true;
        *tail_count = 0;
    }
    return true;
}

/* Whether the kernel is worth it here: oneDNN has no Winograd on this CPU
 * (its AVX2 blocks are 8 channels), the layer is wide enough that 36 GEMMs
 * of C x M beat the direct kernel (measured down to 8 channels; 16 kept as
 * the floor), and it has tiles enough to amortise streaming a transformed
 * filter 4x the size of the original: ResNet's last stage (512 channels on
 * 7x7, 4 tiles) gained 1.2x at 1 thread for 28 MiB more per layer, its
 * weights then streamed from memory each run. */
static bool worth_it(const wino_grid *g, int grids) {
    int64_t tiles = 0;
    for (int i = 0; i < grids; i++) {
        const odn_wino_shape *s = &g[i].shape;
        if (s->oh < 2 || s->ow < 2) return false;
        tiles += s->n * ((s->oh + 3) / 4) * ((s->ow + 3) / 4);
    }
    const odn_wino_shape *s = &g[0].shape;
    return odn_block() == 8 && s->c >= 16 && s->m >= 16 && !(tiles < 8 && s->c * s->m >= 512 * 512);
}

/* The convolution as d x d undilated ones: the input rows and columns of
 * residue (a, b) mod d feed only the outputs of that residue, through a
 * 3x3 window padded by pt / d and pl / d, so each residue is a sub-grid
 * the kernel runs with the row and pixel strides times d. False when one
 * does not fit: padding not a multiple of d, or a sub-grid of outputs
 * beyond the kernel's padding. */
static bool split_grids(const odn_wino_shape *whole, int64_t d, wino_grid *g, int *count) {
    int k = 0;
    if (d < 1 || d > WINO_MAX_DIL || whole->pt % d || whole->pl % d) return false;
    for (int64_t a = 0; a < d; a++)
        for (int64_t b = 0; b < d; b++) {
            odn_wino_shape s = *whole;
            s.oh = (whole->oh - a + d - 1) / d;
            s.ow = (whole->ow - b + d - 1) / d;
            if (s.oh <= 0 || s.ow <= 0) continue; /* no output of this residue */
            s.h = (whole->h - a + d - 1) / d;
            s.w = (whole->w - b + d - 1) / d;
            s.pt = whole->pt / d;
            s.pl = whole->pl / d;
            if (!odn_wino_f43_supported(&s)) return false;
            g[k++] = (wino_grid){.shape = s, .x_off = a, .y_off = b}; /* residues until the strides are known */
        }
    *count = k;
    return k > 0;
}

static bool grids_of(const odn_value *x, const odn_value *w, const int64_t *dilation, const int64_t *pad_l,
                     const int64_t *out, wino_grid *g, int *count) {
    odn_wino_shape s = {.n = x->dims[0],
                        .c = x->dims[1],
                        .h = x->dims[2],
                        .w = x->dims[3],
                        .m = w->dims[0],
                        .oh = out[2],
                        .ow = out[3],
                        .pt = pad_l[0],
                        .pl = pad_l[1]};
    return dilation[0] == dilation[1] && split_grids(&s, dilation[0] + 1, g, count);
}

bool odn_conv_wino_f43_wanted(odn_plan *p, const odn_value *x, const odn_value *w, int64_t group,
                              const int64_t *strides, const int64_t *dilation, const int64_t *pad_l,
                              const int64_t *out) {
    if (!p->winograd || x->rank != 4 || w->rank != 4 || group != 1 || w->dims[2] != 3 || w->dims[3] != 3) return false;
    if (strides[0] != 1 || strides[1] != 1) return false;
    if (!w->constant || w->constant->elem_type != TSR_FLOAT || x->dims[1] != w->dims[1]) return false;
    wino_grid g[WINO_MAX_DIL * WINO_MAX_DIL];
    int count = 0;
    return grids_of(x, w, dilation, pad_l, out, g, &count) && worth_it(g, count);
}

/* The transformed filter from the constant cache, or a new entry filled
 * now or after the plan is built (odn_release_consts.c). */
static tsr_status *packed_filter(odn_plan *p, const tsr_node *n, odn_value *w, const float *w_data, const void *key2,
                                 const float **out) {
    int64_t c = w->dims[1], m = w->dims[0];
    size_t floats = odn_wino_f43_weights_floats(c, m);
    int64_t fd[1] = {(int64_t)floats};
    dnnl_memory_desc_t src_md, md;
    if (!floats || odn_plain_md(&md, 1, fd) != dnnl_success || odn_plain_md(&src_md, 4, w->dims) != dnnl_success)
        return odn_node_error(n, TSR_ERR_NO_MEMORY, "Winograd weights of %lld x %lld", (long long)m, (long long)c);
    const void *key1 = w->constant->data, *k2 = key2 ? key2 : &wino_tag;
    float *buf = odn_const_cache_find(p->consts, key1, k2, &src_md, &md);
    if (!buf && odn_const_cache_released(p->consts, key1)) return odn_const_released_error(n);
    if (!buf) {
        buf = odn_const_cache_add(p->consts, key1, k2, &src_md, &md, floats * sizeof(float));
        if (!buf) return odn_node_error(n, TSR_ERR_NO_MEMORY, "Winograd weights of %zu bytes", floats * sizeof(float));
        wino_fill *f = odn_plan_alloc(p, sizeof *f);
        if (!f) return odn_node_error(n, TSR_ERR_NO_MEMORY, "Winograd weights");
        *f = (wino_fill){.w = w_data, .c = c, .m = m};
        if (odn_fill_deferred(p)) {
            tsr_status *s = odn_fill_add_fn(p, key1, n, wino_fill_run, f, buf);
            if (s) return s;
        } else {
            wino_fill_run(f, buf);
            odn_const_cache_ready(p->consts, buf);
        }
    }
    /* not `fixed`: a plan for other shapes (a map under 2x2) may take
     * oneDNN's kernel, which reorders the host's bytes */
    odn_const_read_cached(p, w, false);
    *out = buf;
    return NULL;
}

tsr_status *odn_wino_scratch_grow(odn_plan *p, const tsr_node *n, size_t bytes, const struct odn_wino_scratch **out) {
    if (!p->wino_scratch) {
        p->wino_scratch = odn_plan_alloc(p, sizeof *p->wino_scratch);
        if (!p->wino_scratch) return odn_node_error(n, TSR_ERR_NO_MEMORY, "Winograd scratch");
        *p->wino_scratch = (struct odn_wino_scratch){0};
    }
    if (p->wino_scratch->bytes < bytes) {
        void *buf = odn_plan_alloc(p, bytes);
        if (!buf) return odn_node_error(n, TSR_ERR_NO_MEMORY, "Winograd scratch of %zu bytes", bytes);
        p->wino_scratch->buf = buf;
        p->wino_scratch->bytes = bytes;
    }
    *out = p->wino_scratch;
    return NULL;
}

tsr_status *odn_build_conv_wino_f43(odn_plan *p, const tsr_node *n, odn_value *x, odn_value *w, const float *w_data,
                                    const void *key2, const float *bias, odn_value *last, odn_value *sum_into,
                                    const int64_t *out, const int64_t *dilation, const int64_t *pad_l,
                                    const_dnnl_post_ops_t po, int nargs, bool *handled) {
    *handled = false;
    odn_eltwise tail[ODN_WINO_TAIL_MAX];
    int tail_count = 0;
    bool accumulate = false, relu = false;
    /* binary post-ops carry arguments; a piece output is plain NCHW */
    if (nargs != 3 || last->output_index >= 0 || !post_ops_fit(po, &accumulate, &relu, tail, &tail_count) ||
        accumulate != (sum_into != NULL) || sum_into == x)
        return NULL;
    wino_step *st = odn_plan_alloc(p, sizeof *st);
    if (!st) return odn_node_error(n, TSR_ERR_NO_MEMORY, "Winograd convolution");
    *st = (wino_step){.accumulate = accumulate, .relu = relu, .threads = omp_get_max_threads()};
    if (!grids_of(x, w, dilation, pad_l, out, st->grid, &st->grids))
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: Winograd sub-grids");
    /* the input as it lies when that is NHWC, else nChw8c; the output in the
     * same family, or the residual's layout when summing into it */
    bool nhwc = false;
    odn_wino_strides as_is;
    dnnl_dims_t xd = {x->dims[0], x->dims[1], x->dims[2], x->dims[3]}, yd = {out[0], out[1], out[2], out[3]};
    strides_of(&x->md, xd, &as_is, &nhwc); /* sets nhwc only when x lies so */
    dnnl_memory_desc_t x_md, y_md;
    if (dnnl_memory_desc_init_by_tag(&x_md, 4, xd, dnnl_f32, nhwc ? dnnl_acdb : dnnl_nChw8c) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&y_md, 4, yd, dnnl_f32, nhwc ? dnnl_acdb : dnnl_nChw8c) != dnnl_success)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: Winograd layouts");
    if (sum_into) y_md = sum_into->md;
    if (!strides_of(&x_md, xd, &st->xs, NULL) || !strides_of(&y_md, yd, &st->ys, NULL)) return NULL;
    int64_t d = dilation[0] + 1;
    for (int i = 0; i < st->grids; i++) {
        wino_grid *g = &st->grid[i];
        int64_t a = g->x_off, b = g->y_off;
        g->x_off = a * st->xs.row + b * st->xs.pix;
        g->y_off = a * st->ys.row + b * st->ys.pix;
    }
    st->xs.row *= d, st->xs.pix *= d;
    st->ys.row *= d, st->ys.pix *= d;
    if (tail_count && !odn_conv_wino_tail_fast(p, tail, tail_count, &y_md)) return NULL;

    /* from here on the convolution is ours */
    *handled = true;
    if (bias) {
        float *b = odn_plan_alloc(p, sizeof(float) * (size_t)w->dims[0]);
        if (!b) return odn_node_error(n, TSR_ERR_NO_MEMORY, "Winograd bias");
        memcpy(b, bias, sizeof(float) * (size_t)w->dims[0]);
        st->bias = b;
    }
    tsr_status *s = packed_filter(p, n, w, w_data, key2, &st->packed);
    size_t scratch = 0;
    for (int i = 0; i < st->grids; i++) {
        size_t b = odn_wino_f43_scratch_bytes(&st->grid[i].shape, st->threads);
        scratch = b > scratch ? b : scratch;
    }
    if (!s) s = odn_wino_scratch_grow(p, n, scratch, &st->scratch);
    dnnl_memory_t xm = NULL;
    if (!s) s = odn_plan_mem_as(p, x, &x_md, n, &xm);
    if (!s && sum_into) {
        /* the result accumulates into the residual's buffer */
        last->rank = 4;
        memcpy(last->dims, out, sizeof(int64_t) * 4);
        last->md = sum_into->md;
        last->mem = sum_into->mem;
        last->produced = true;
    } else if (!s) {
        s = odn_plan_define(p, last, 4, out, &y_md, n);
    }
    if (!s) s = odn_plan_add_loop(p, wino_run, st, xm, last->mem, n);
    if (!s) snprintf(p->steps[p->step_count - 1].impl, sizeof p->steps[0].impl, "winograd_f43:avx2");
    for (int i = 0; !s && i < tail_count; i++) s = odn_eltwise_step(p, n, &tail[i], &last->md, last->mem, last->mem);
    return s;
}
