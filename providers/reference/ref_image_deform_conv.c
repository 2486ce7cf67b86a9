/*
 * DeformConv (opsets 19, 22), N-D: a grouped convolution whose kernel
 * taps are moved by learned, per-output-position offsets and optionally
 * scaled by a mask. A moved tap reads X by N-linear interpolation, with
 * zeros outside the input (the padding included).
 *
 * For each batch item and output position the kernel gathers a column of
 * C * prod(kernel) sampled values (im2col with deformations); each output
 * channel is then a dot product of its weights with its group's part.
 */
#include <stdlib.h>
#include <string.h>

#include "ref_image.h"

/* Limits on attribute values and sizes, so that position and size
 * arithmetic stays inside int64 (a zero-sized batch lets X's other dims be
 * anything), and on the axes (a sample reads 2^axes corners). */
#define DC_MAX_PARAM ((int64_t)1 << 31)
#define DC_MAX_KERNEL ((int64_t)1 << 24)
#define DC_MAX_SPATIAL ((int64_t)1 << 36)
#define DC_MAX_AXES 8

typedef struct dc_shape {
    size_t nd;             /* spatial axes */
    int64_t N, C, OC, K;   /* batch, in/out channels, kernel points */
    int64_t group, ogroup; /* channel groups, offset groups */
    int64_t in_sp, out_sp; /* spatial element counts */
    int64_t in[REF_MAX_RANK], out[REF_MAX_RANK], k[REF_MAX_RANK];
    int64_t dil[REF_MAX_RANK], str[REF_MAX_RANK], pads[2 * REF_MAX_RANK];
} dc_shape;

static bool dims_are(const tsr_tensor *t, int32_t rank, const int64_t *want) {
    if (t->rank != rank) return false;
    for (int32_t i = 0; i < rank; i++)
        if (t->dims[i] != want[i]) return false;
    return true;
}

/* Reads attributes and checks every input's shape. */
static tsr_status *dc_shapes(ref_ctx *c, dc_shape *s) {
    const tsr_tensor *X = ref_in(c, 0), *W = ref_in(c, 1), *O = ref_in(c, 2);
    const tsr_tensor *B = ref_in(c, 3), *M = ref_in(c, 4);
    if (!X || !W || !O) return ref_err(c, TSR_ERR_INVALID_MODEL, "DeformConv needs inputs X, W and offset");
    if (X->rank < 3 || W->rank != X->rank)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X must have rank >= 3 and W the same rank (got %d and %d)",
                       (int)X->rank, (int)W->rank);
    memset(s, 0, sizeof *s);
    s->nd = (size_t)X->rank - 2;
    if (s->nd > DC_MAX_AXES) return ref_err(c, TSR_ERR_NOT_SUPPORTED, "more than %d spatial axes", DC_MAX_AXES);
    s->N = X->dims[0];
    s->C = X->dims[1];
    s->OC = W->dims[0];
    s->group = ref_attr_int(c, "group", 1);
    s->ogroup = ref_attr_int(c, "offset_group", 1);
    if (s->group < 1 || s->ogroup < 1 || s->group > DC_MAX_PARAM || s->ogroup > DC_MAX_PARAM)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "group and offset_group must be >= 1");
    if (s->C % s->group || s->OC % s->group || W->dims[1] != s->C / s->group)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                       "channels do not split into %lld groups: X has %lld, W is (%lld, %lld, ...)",
                       (long long)s->group, (long long)s->C, (long long)s->OC, (long long)W->dims[1]);
    if (s->C % s->ogroup)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%lld channels do not split into %lld offset groups",
                       (long long)s->C, (long long)s->ogroup);
    const int64_t *ks;
    size_t nks = ref_attr_ints(c, "kernel_shape", &ks);
    if (ks && (nks != s->nd || memcmp(ks, W->dims + 2, s->nd * sizeof *ks) != 0))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "kernel_shape does not match W's shape");
    tsr_status *st;
    if ((st = ref_image_ints_attr(c, "dilations", s->nd, 1, 1, s->dil)) ||
        (st = ref_image_ints_attr(c, "strides", s->nd, 1, 1, s->str)) ||
        (st = ref_image_ints_attr(c, "pads", 2 * s->nd, 0, 0, s->pads)))
        return st;
    s->K = 1;
    s->in_sp = 1;
    s->out_sp = 1;
    for (size_t d = 0; d < s->nd; d++) {
        s->in[d] = X->dims[2 + d];
        s->k[d] = W->dims[2 + d];
        if (s->dil[d] > DC_MAX_PARAM || s->str[d] > DC_MAX_PARAM || s->pads[d] > DC_MAX_PARAM ||
            s->pads[s->nd + d] > DC_MAX_PARAM || s->k[d] < 1 || s->k[d] > DC_MAX_KERNEL || s->in[d] > DC_MAX_SPATIAL)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %zu: kernel, dilation, stride or pads out of range", d);
        int64_t room = s->in[d] + s->pads[d] + s->pads[s->nd + d] - (s->dil[d] * (s->k[d] - 1) + 1);
        if (room < 0)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %zu: the dilated kernel is larger than the padded input",
                           d);
        s->out[d] = room / s->str[d] + 1;
        int64_t in_d = s->in[d] ? s->in[d] : 1;
        if (s->K > DC_MAX_KERNEL / s->k[d] || s->in_sp > DC_MAX_SPATIAL / in_d ||
            s->out_sp > DC_MAX_SPATIAL / s->out[d])
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "kernel or spatial size is too large");
        s->K *= s->k[d];
        s->in_sp *= s->in[d];
        s->out_sp *= s->out[d];
    }
    if (s->C > INT64_MAX / s->K) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "too many channels");
    int64_t want[REF_MAX_RANK];
    want[0] = s->N;
    want[1] = s->ogroup * s->K * (int64_t)s->nd;
    memcpy(want + 2, s->out, s->nd * sizeof *want);
    if (!dims_are(O, X->rank, want))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                       "offset must have shape (N, offset_group * prod(kernel) * %zu, output "
                       "dims...) = (%lld, %lld, ...)",
                       s->nd, (long long)want[0], (long long)want[1]);
    want[1] = s->ogroup * s->K;
    if (M && !dims_are(M, X->rank, want))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                       "mask must have shape (N, offset_group * prod(kernel), output dims...) = "
                       "(%lld, %lld, ...)",
                       (long long)want[0], (long long)want[1]);
    if (B && (B->rank != 1 || B->dims[0] != s->OC))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "B must have shape (%lld,)", (long long)s->OC);
    return NULL;
}

/* Unravels kernel point kk into per-axis tap indices. */
static void kernel_point(const dc_shape *s, int64_t kk, int64_t *tap) {
    for (size_t d = s->nd; d-- > 0;) {
        tap[d] = kk % s->k[d];
        kk /= s->k[d];
    }
}

tsr_status *ref_image_deform_conv(ref_ctx *c) {
    dc_shape s;
    tsr_status *st = dc_shapes(c, &s);
    if (st) return st;
    const tsr_tensor *X = ref_in(c, 0), *W = ref_in(c, 1), *O = ref_in(c, 2);
    const tsr_tensor *B = ref_in(c, 3), *M = ref_in(c, 4);
    int64_t ydims[REF_MAX_RANK];
    ydims[0] = s.N;
    ydims[1] = s.OC;
    memcpy(ydims + 2, s.out, s.nd * sizeof *ydims);
    int64_t count;
    if (!ref_image_numel(ydims, s.nd + 2, INT64_MAX / 16, &count))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "the output is too large to index");
    tsr_tensor *Y;
    if ((st = ref_out(c, 0, X->elem_type, X->rank, ydims, &Y))) return st;
    size_t total = (size_t)count;
    if (total == 0) return NULL;
    double *x = NULL, *w = NULL, *off = NULL, *b = NULL, *m = NULL, *col = NULL, *y = NULL;
    if ((st = ref_image_f64(c, X, "X", &x)) || (st = ref_image_f64(c, W, "W", &w)) ||
        (st = ref_image_f64(c, O, "offset", &off)) || (B && (st = ref_image_f64(c, B, "B", &b))) ||
        (M && (st = ref_image_f64(c, M, "mask", &m))))
        goto done;
    col = malloc((size_t)(s.C * s.K > 0 ? s.C * s.K : 1) * sizeof *col);
    y = malloc(total * sizeof *y);
    if (!col || !y) {
        st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    int64_t icpg = s.C / s.group, ocpg = s.OC / s.group, icpog = s.C / s.ogroup;
    for (int64_t n = 0; n < s.N; n++) {
        int64_t opos[REF_MAX_RANK] = {0};
        for (int64_t o = 0; o < s.out_sp; o++) {
            if (ref_work(c, s.K * (icpog * s.ogroup + s.OC * icpg))) {
                st = ref_stopped(c);
                goto done;
            }
            /* The column: every input channel's sample at every kernel point. */
            for (int64_t g = 0; g < s.ogroup; g++)
                for (int64_t kk = 0; kk < s.K; kk++) {
                    int64_t tap[REF_MAX_RANK];
                    double pos[REF_MAX_RANK];
                    kernel_point(&s, kk, tap);
                    for (size_t d = 0; d < s.nd; d++) {
                        int64_t ch = (n * s.ogroup + g) * s.K * (int64_t)s.nd + kk * (int64_t)s.nd + (int64_t)d;
                        pos[d] = (double)(opos[d] * s.str[d] - s.pads[d] + tap[d] * s.dil[d]) + off[ch * s.out_sp + o];
                    }
                    double scale = m ? m[((n * s.ogroup + g) * s.K + kk) * s.out_sp + o] : 1.0;
                    for (int64_t ic = g * icpog; ic < (g + 1) * icpog; ic++) {
                        const double *plane = x + (n * s.C + ic) * s.in_sp;
                        col[ic * s.K + kk] = scale * ref_image_sample_linear_zero(plane, s.nd, s.in, pos);
                    }
                }
            for (int64_t oc = 0; oc < s.OC; oc++) {
                int64_t grp = oc / ocpg;
                const double *wr = w + oc * icpg * s.K;
                const double *cg = col + grp * icpg * s.K;
                double acc = b ? b[oc] : 0.0;
                for (int64_t i = 0; i < icpg * s.K; i++) acc += wr[i] * cg[i];
                y[(n * s.OC + oc) * s.out_sp + o] = acc;
            }
            for (size_t d = s.nd; d-- > 0;) {
                if (++opos[d] < s.out[d]) break;
                opos[d] = 0;
            }
        }
    }
    ref_image_store_f64(Y, y, total);
done:
    free(x);
    free(w);
    free(off);
    free(b);
    free(m);
    free(col);
    free(y);
    return st;
}
