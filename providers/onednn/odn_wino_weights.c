/* Weights of a 3x3 convolution into the layouts of oneDNN 2.6's Winograd
 * kernels, F(2x2, 3x3) (aaOBiOo, aaOio) and F(4x4, 3x3) (OBaaIBOIio):
 * U = G g G^T per (output, input) channel pair, written in the kernel's
 * blocked order. oneDNN's own reorder (wino_reorder) is a scalar loop over
 * one (input channel, 16 outputs) block at a time that stages the whole
 * transformed tensor in a scratchpad; it took 35 ns per weight on
 * 512-channel layers, 300 of ResNet-50's 400 ms of session creation. Here
 * a block of 16 output channels is transformed at once and written straight
 * to its place, with oneDNN's sums in oneDNN's order (the same values up to
 * floating-point contraction; check/wino_weights.c compares the two). */
#include "odn_wino_weights.h"

#include <string.h>

enum { R = 3, AMAX = 6, OB = 16 };

/* G as oneDNN writes it: F(2, 3) and the scaled F(4, 3) */
static const float G2[4][R] = {{1.0f, 0.0f, 0.0f}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0.0f, 0.0f, 1.0f}};
static const float G4[6][R] = {{1.13777777777778f, 0.f, 0.f},
                               {-0.688403361344538f, -0.430252100840336f, -0.26890756302521f},
                               {-0.688403361344538f, 0.430252100840336f, -0.26890756302521f},
                               {0.119514472455649f, 0.179271708683473f, 0.26890756302521f},
                               {0.119514472455649f, -0.179271708683473f, 0.26890756302521f},
                               {0.f, 0.f, 1.f}};

typedef struct layout {
    int alpha;
    const float (*G)[R];
    bool blocked_outer; /* OBaaIBOIio: output-channel chunks outermost */
    dnnl_dim_t oc, ic, icb, ic2, oc2;
} layout;

static bool plain_oihw(const dnnl_memory_desc_t *md) {
    if (md->ndims != 4 || md->data_type != dnnl_f32 || md->format_kind != dnnl_blocked ||
        md->format_desc.blocking.inner_nblks != 0 || md->offset0 != 0)
        return false;
    const dnnl_dim_t *s = md->format_desc.blocking.strides, *d = md->dims;
    return d[2] == R && d[3] == R && s[3] == 1 && s[2] == R && s[1] == R * R && s[0] == d[1] * R * R;
}

static bool layout_of(const dnnl_memory_desc_t *src_md, const dnnl_memory_desc_t *dst_md, layout *l) {
    if (dst_md->format_kind != dnnl_format_kind_wino || dst_md->data_type != dnnl_f32 || !plain_oihw(src_md))
        return false;
    const dnnl_wino_desc_t *wd = &dst_md->format_desc.wino_desc;
    *l = (layout){.oc = wd->oc, .ic = wd->ic, .icb = wd->ic_block, .ic2 = 1, .oc2 = 1};
    switch (wd->wino_format) {
    case dnnl_wino_wei_aaOio: l->alpha = 4, l->G = G2; break;
    case dnnl_wino_wei_aaOBiOo: l->alpha = 4, l->G = G2, l->oc2 = wd->oc2_block; break;
    case dnnl_wino_wei_OBaaIBOIio:
        l->alpha = 6, l->G = G4, l->blocked_outer = true, l->oc2 = wd->oc2_block, l->ic2 = wd->ic2_block;
        break;
    default: return false;
    }
    return wd->r == R && wd->alpha == l->alpha && wd->oc_block == OB && l->icb > 0 && l->oc2 > 0 && l->ic2 > 0 &&
        l->oc == src_md->dims[0] && l->ic == src_md->dims[1] && l->oc % (OB * l->oc2) == 0 &&
        l->ic % (l->icb * l->ic2) == 0;
}

/* where the 16 output channels of block ob meet input channel c at (a, b) */
static dnnl_dim_t offset(const layout *l, int a, int b, dnnl_dim_t ob, dnnl_dim_t c) {
    dnnl_dim_t A = l->alpha, occ = ob / l->oc2, ob2 = ob % l->oc2, i = c % l->icb;
    if (!l->blocked_outer) {
        dnnl_dim_t nb_ic = l->ic / l->icb, ib = c / l->icb;
        return (a * A + b) * l->oc * l->ic + ((occ * nb_ic + ib) * l->oc2 * l->icb + i * l->oc2 + ob2) * OB;
    }
    dnnl_dim_t ic_chunks = l->ic / (l->icb * l->ic2), icc = c / (l->icb * l->ic2), ib2 = c / l->icb % l->ic2;
    return (((((occ * A + a) * A + b) * ic_chunks + icc) * l->oc2 + ob2) * l->ic2 + ib2) * l->icb * OB + i * OB;
}

/* U[i][j][o] for the 16 output channels o from g (their first weight of
 * one input channel; output channels oc_stride apart) */
static void transform_block(const layout *l, const float *g, dnnl_dim_t oc_stride, float U[AMAX][AMAX][OB]) {
    float w[OB][R][R];
    for (int o = 0; o < OB; o++) memcpy(w[o], g + o * oc_stride, sizeof w[o]);
    float W[R][AMAX][OB]; /* g G^T */
    for (int ih = 0; ih < R; ih++)
        for (int j = 0; j < l->alpha; j++)
            for (int o = 0; o < OB; o++) {
                float acc = 0.0f;
                for (int iw = 0; iw < R; iw++) acc += w[o][ih][iw] * l->G[j][iw];
                W[ih][j][o] = acc;
            }
    for (int i = 0; i < l->alpha; i++)
        for (int j = 0; j < l->alpha; j++)
            for (int o = 0; o < OB; o++) {
                float acc = 0.0f;
                for (int k = 0; k < R; k++) acc += l->G[i][k] * W[k][j][o];
                U[i][j][o] = acc;
            }
}

bool odn_wino_weights(const dnnl_memory_desc_t *src_md, const float *src, const dnnl_memory_desc_t *dst_md,
                      float *dst) {
    layout l;
    if (!layout_of(src_md, dst_md, &l)) return false;
    const dnnl_dim_t oc_stride = l.ic * R * R;
    float U[AMAX][AMAX][OB];
    for (dnnl_dim_t ob = 0; ob < l.oc / OB; ob++)
        for (dnnl_dim_t c = 0; c < l.ic; c++) {
            transform_block(&l, src + ob * OB * oc_stride + c * R * R, oc_stride, U);
            for (int a = 0; a < l.alpha; a++)
                for (int b = 0; b < l.alpha; b++) memcpy(dst + offset(&l, a, b, ob, c), U[a][b], sizeof U[a][b]);
        }
    size_t used = (size_t)(l.alpha * l.alpha * l.oc * l.ic) * sizeof(float), size = dnnl_memory_desc_get_size(dst_md);
    if (size > used) memset((char *)dst + used, 0, size - used);
    return true;
}
