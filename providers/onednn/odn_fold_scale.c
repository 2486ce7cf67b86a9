/* A squeeze-excitation scale folded into the 1x1 convolution after it:
 * Conv(x * s, W) = Conv(x, W * s) when s has one value per input channel of
 * the convolution (and one image). EfficientNet and MobileNetV3 put such a
 * Mul before every block's projection; it reads and writes the whole
 * activation (C x H x W), while scaling the weights touches M x C values, a
 * few percent of that on the early, large maps. The scaled weights are
 * written each run, in oneDNN's layout, from the reordered constant weights
 * and a map from each of their positions to its input channel. */
#include <stdlib.h>
#include <string.h>

#include "odn.h"

typedef struct scale_ctx {
    const int32_t *channel; /* per weight position: its input channel */
    size_t count;
    dnnl_memory_t scales; /* [1,C,1,1] plain; also the step's third argument */
} scale_ctx;

static tsr_status *run_scaled(const void *ctx, dnnl_memory_t w, dnnl_memory_t out) {
    const scale_ctx *l = ctx;
    void *pw = NULL, *po = NULL, *ps = NULL;
    dnnl_memory_get_data_handle(w, &pw);
    dnnl_memory_get_data_handle(out, &po);
    dnnl_memory_get_data_handle(l->scales, &ps);
    const float *wv = pw, *s = ps;
    float *o = po;
    const int32_t *ch = l->channel;
    for (size_t i = 0; i < l->count; i++) o[i] = wv[i] * s[ch[i]];
    return NULL;
}

bool odn_fold_scale_fits(odn_plan *p, const odn_value *a, const odn_value *y, const int64_t *dims, const int64_t *db) {
    const tsr_node *next = odn_plan_sole_consumer(p, y);
    if (!next || strcmp(odn_host->node_op_type(next), "Conv") != 0 || odn_host->node_input_count(next) < 2 ||
        odn_plan_value(p, odn_host->node_input(next, 0)) != y || y->output_index >= 0)
        return false;
    for (size_t i = 1; i < odn_host->node_input_count(next); i++)
        if (odn_plan_value(p, odn_host->node_input(next, i)) == y) return false;
    const odn_value *w = odn_plan_value(p, odn_host->node_input(next, 1));
    if (!w || !w->constant || w->rank != 4 || w->dims[2] != 1 || w->dims[3] != 1 || w->dims[1] != dims[1] ||
        odn_attr_int(next, "group", 1) != 1)
        return false;
    /* one image, one scale per channel; worth it where the map outweighs
     * the weights */
    return a->rank == 4 && dims[0] == 1 && db[0] == 1 && db[1] == dims[1] && db[2] == 1 && db[3] == 1 &&
        dims[2] * dims[3] > w->dims[0];
}

/* channel[i]: the input channel of weight position i in layout w_md. A
 * plain [M,C,1,1] tensor of channel numbers reordered like the weights
 * (padding positions read channel 0; their weights are 0); the tensors
 * that make it live only for the call. */
static tsr_status *channel_map(odn_plan *p, const tsr_node *n, const dnnl_memory_desc_t *w_md, int64_t m, int64_t c,
                               size_t count, int32_t *channel) {
    float *plain = malloc((size_t)(m * c) * sizeof(float)), *placed = calloc(count, sizeof(float));
    dnnl_memory_desc_t plain_md;
    dnnl_dims_t wd = {m, c, 1, 1};
    dnnl_memory_t from = NULL, to = NULL;
    tsr_status *s = !plain || !placed ? odn_node_error(n, TSR_ERR_NO_MEMORY, "scaled weights") : NULL;
    dnnl_status_t st = dnnl_success;
    if (!s) {
        for (int64_t o = 0; o < m; o++)
            for (int64_t i = 0; i < c; i++) plain[o * c + i] = (float)i;
        st = dnnl_memory_desc_init_by_tag(&plain_md, 4, wd, dnnl_f32, dnnl_oihw);
        if (st == dnnl_success) st = dnnl_memory_create(&from, &plain_md, p->engine, plain);
        if (st == dnnl_success) st = dnnl_memory_create(&to, w_md, p->engine, placed);
        if (st != dnnl_success) s = odn_dnnl_error(n, "weights layout", st);
    }
    if (!s) s = odn_reorder_once(p, from, &plain_md, to, w_md, n);
    for (size_t i = 0; !s && i < count; i++) {
        int32_t k = (int32_t)placed[i];
        channel[i] = k >= 0 && k < c ? k : 0;
    }
    if (from) dnnl_memory_destroy(from);
    if (to) dnnl_memory_destroy(to);
    free(plain);
    free(placed);
    return s;
}

tsr_status *odn_fold_scale_weights(odn_plan *p, const tsr_node *n, odn_value *scale, dnnl_memory_t w_mem,
                                   const dnnl_memory_desc_t *w_md, int64_t m, int64_t c, dnnl_memory_t *out) {
    size_t count = dnnl_memory_desc_get_size(w_md) / sizeof(float);
    int32_t *channel = odn_plan_alloc(p, count * sizeof(int32_t));
    scale_ctx *l = odn_plan_alloc(p, sizeof *l);
    float *scaled = odn_plan_alloc(p, count * sizeof(float));
    if (!channel || !l || !scaled) return odn_node_error(n, TSR_ERR_NO_MEMORY, "scaled weights");
    tsr_status *s = channel_map(p, n, w_md, m, c, count, channel);
    if (s) return s;
    dnnl_memory_t scales, wout;
    s = odn_plan_plain_mem(p, scale, n, &scales);
    if (!s) s = odn_plan_new_mem(p, w_md, scaled, n, &wout);
    if (s) return s;
    *l = (scale_ctx){channel, count, scales};
    s = odn_plan_add_loop_with(p, run_scaled, l, w_mem, wout, scales, n);
    if (!s) *out = wout;
    return s;
}
