/* Explicit zero padding in front of a convolution. oneDNN 2.6's AVX2 direct
 * kernel refuses some padded convolutions, dilated ones in particular (a
 * 3x3 at dilation 6 with pads 6, DeepLab's ASPP; a k=3 Conv1d at dilation
 * 4 with pads 4, a TCN block), and leaves them to its im2col "gemm:jit":
 * the same shapes with pads 0 get "jit:avx2". odn_build_conv.c then pads
 * the input into a larger buffer in the kernel's own layout (plain or
 * channel-blocked) and convolves that with pads 0; the copy costs a pass
 * over the input, far less than the im2col kernel's penalty (dilation 6,
 * 128 -> 64 channels at 32x32: 3.15 ms on gemm:jit against ONNX Runtime's
 * 1.94). */
#include <string.h>

#include "odn.h"

typedef struct conv_pad {
    int64_t outer; /* images times channel blocks */
    int64_t h, w, hp, wp, top, left, blk;
} conv_pad;

static tsr_status *run_conv_pad(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const conv_pad *c = ctx;
    void *xs = NULL, *ys = NULL;
    dnnl_memory_get_data_handle(src, &xs);
    dnnl_memory_get_data_handle(dst, &ys);
    const float *x = xs;
    float *y = ys;
    size_t row_in = (size_t)(c->w * c->blk), row_out = (size_t)(c->wp * c->blk);
    size_t left = (size_t)(c->left * c->blk), right = row_out - left - row_in;
    for (int64_t i = 0; i < c->outer; i++) {
        const float *xi = x + (size_t)i * (size_t)c->h * row_in;
        float *yi = y + (size_t)i * (size_t)c->hp * row_out;
        for (int64_t r = 0; r < c->hp; r++) {
            float *yr = yi + (size_t)r * row_out;
            int64_t from = r - c->top;
            if (from < 0 || from >= c->h) {
                memset(yr, 0, row_out * sizeof *yr);
                continue;
            }
            memset(yr, 0, left * sizeof *yr);
            memcpy(yr + left, xi + (size_t)from * row_in, row_in * sizeof *yr);
            memset(yr + left + row_in, 0, right * sizeof *yr);
        }
    }
    return NULL;
}

bool odn_conv_pad_tag(const dnnl_memory_desc_t *padded, dnnl_format_tag_t *tag) {
    static const dnnl_format_tag_t tags[] = {dnnl_abcd, dnnl_aBcd8b, dnnl_aBcd16b};
    if (padded->ndims != 4 || padded->data_type != dnnl_f32 || padded->offset0 != 0) return false;
    for (size_t t = 0; t < sizeof tags / sizeof *tags; t++) {
        dnnl_memory_desc_t md;
        if (dnnl_memory_desc_init_by_tag(&md, 4, padded->dims, dnnl_f32, tags[t]) == dnnl_success &&
            dnnl_memory_desc_equal(&md, padded)) {
            *tag = tags[t];
            return true;
        }
    }
    return false;
}

tsr_status *odn_conv_pad_src(odn_plan *p, const tsr_node *n, dnnl_memory_t x, const dnnl_memory_desc_t *padded,
                             dnnl_format_tag_t tag, const int64_t pads[4], dnnl_memory_t *out) {
    conv_pad *c = odn_plan_alloc(p, sizeof *c);
    if (!c) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    int64_t blk = tag == dnnl_aBcd16b ? 16 : tag == dnnl_aBcd8b ? 8 : 1;
    *c = (conv_pad){.outer = padded->dims[0] * (padded->padded_dims[1] / blk),
                    .h = padded->dims[2] - pads[0] - pads[2],
                    .w = padded->dims[3] - pads[1] - pads[3],
                    .hp = padded->dims[2],
                    .wp = padded->dims[3],
                    .top = pads[0],
                    .left = pads[1],
                    .blk = blk};
    tsr_status *s = odn_plan_arena_mem(p, padded, n, out);
    return s ? s : odn_plan_add_loop(p, run_conv_pad, c, x, *out, n);
}
