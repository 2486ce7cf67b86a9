/*
 * Conv and ConvTranspose for the reference provider, any number of spatial
 * dimensions.
 *
 * Conv is im2col + GEMM: for each image and group, a slab of the unfolded
 * input (one row per input channel and kernel tap, one column per output
 * position) is built and multiplied by the group's weights. The slab covers
 * a band of output rows at a time so its memory stays bounded. A 1x1 kernel
 * with unit stride and no padding needs no unfolding: the input already is
 * the column matrix.
 *
 * ConvTranspose is the adjoint: GEMM of the transposed weights with the
 * input gives one column per input position, which col2im scatters (adds)
 * into the output.
 *
 * float, float16 and bfloat16 compute in float with double sums; double in
 * double. ConvTranspose keeps its columns and their overlapping sums in
 * double up to the bias, so each output is rounded once: in float they
 * were rounded after the GEMM and after every overlapping add, hundreds of
 * ULPs off where the adds cancel.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_nn.h"

/* Elements of unfolded input kept at once (4 MiB of floats). */
#define NN_COL_BUDGET ((int64_t)1 << 20)
/* ConvTranspose's columns (doubles): a band stays in cache (1 MiB) from the
 * GEMM that writes it to col2im that reads it; a band of 8 MiB made it
 * 1.3x slower than float columns were. */
#define NN_COLT_BUDGET ((int64_t)1 << 17)

typedef struct conv_geom {
    int nsp; /* spatial dimensions */
    int64_t batch, cin, cout, group;
    int64_t cg, mg; /* input and output channels per group */
    int64_t in[REF_MAX_RANK], out[REF_MAX_RANK], k[REF_MAX_RANK];
    int64_t s[REF_MAX_RANK], d[REF_MAX_RANK], pb[REF_MAX_RANK], pe[REF_MAX_RANK];
    int64_t insz, outsz, ksz; /* products of in, out, k */
} conv_geom;

/* Splits kernel tap index kr into per-axis positions. */
static void decode_tap(const conv_geom *g, int64_t kr, int64_t *kpos) {
    for (int d = g->nsp - 1; d >= 0; d--) {
        kpos[d] = kr % g->k[d];
        kr /= g->k[d];
    }
}

/*
 * The position in `to` (of extent to_dims) of outer row q of `from` (of
 * extent from_dims, all axes but the last) displaced by tap kpos; false
 * when it falls outside. fwd: to = from*s - pb + kpos*d (Conv, from = out);
 * ConvTranspose uses the same map from its input to its output.
 * When false, *skip is how many rows from q on fall outside as well: with
 * huge pads most rows do, and going through them one by one was slow.
 */
static bool map_row(const conv_geom *g, int64_t q, const int64_t *from_dims, const int64_t *to_dims,
                    const int64_t *kpos, int64_t *base, int64_t *skip) {
    int nsp = g->nsp;
    int64_t b = 0, mul = to_dims[nsp - 1], inner = 1, rest = q;
    bool inside = true;
    for (int d = nsp - 2; d >= 0; d--) {
        int64_t o = rest % from_dims[d];
        rest /= from_dims[d];
        int64_t off = kpos[d] * g->d[d] - g->pb[d], i = o * g->s[d] + off;
        if (i < 0 || i >= to_dims[d]) {
            /* this axis stays outside up to its first valid position, or
             * to its end; the outermost such axis gives the longest run */
            int64_t first = (-off + g->s[d] - 1) / g->s[d];
            int64_t units = i < 0 && first < from_dims[d] ? first - o : from_dims[d] - o;
            *skip = units * inner - q % inner;
            inside = false;
        } else {
            b += i * mul;
        }
        mul *= to_dims[d];
        inner *= from_dims[d];
    }
    *base = b;
    return inside;
}

/* SUF: name suffix; T: the working type; GEMM: its C += A B; ACC and
 * GEMM_ACC: the type ConvTranspose's columns are summed in and the GEMM
 * that makes them (double, so each output is rounded once to T: after the
 * GEMM, the overlapping columns and the bias). */
#define NN_DEFINE_CONV(SUF, T, GEMM, ACC, GEMM_ACC)                                                                    \
    /* Unfolds output rows [q0, q1) of one group's input x (cg channels). */                                           \
    static void im2col_##SUF(const conv_geom *g, const T *x, int64_t q0, int64_t q1, T *col) {                         \
        int nsp = g->nsp;                                                                                              \
        int64_t ol = g->out[nsp - 1], il = g->in[nsp - 1], sl = g->s[nsp - 1];                                         \
        int64_t ncols = (q1 - q0) * ol;                                                                                \
        int64_t kpos[REF_MAX_RANK];                                                                                    \
        for (int64_t r = 0; r < g->cg * g->ksz; r++) {                                                                 \
            decode_tap(g, r % g->ksz, kpos);                                                                           \
            const T *xc = x + (r / g->ksz) * g->insz;                                                                  \
            T *crow = col + r * ncols;                                                                                 \
            int64_t off = kpos[nsp - 1] * g->d[nsp - 1] - g->pb[nsp - 1], lo, hi;                                      \
            ref_nn_inside_range(ol, sl, off, il, &lo, &hi);                                                            \
            for (int64_t q = q0; q < q1; q++) {                                                                        \
                T *dst = crow + (q - q0) * ol;                                                                         \
                int64_t base, skip;                                                                                    \
                if (!map_row(g, q, g->out, g->in, kpos, &base, &skip)) {                                               \
                    if (skip > q1 - q) skip = q1 - q;                                                                  \
                    memset(dst, 0, (size_t)(skip * ol) * sizeof *dst);                                                 \
                    q += skip - 1;                                                                                     \
                    continue;                                                                                          \
                }                                                                                                      \
                base += off; /* input index of output o is base + o*sl */                                              \
                for (int64_t o = 0; o < lo; o++) dst[o] = 0;                                                           \
                if (sl == 1) {                                                                                         \
                    if (hi > lo) memcpy(dst + lo, xc + base + lo, (size_t)(hi - lo) * sizeof *dst);                    \
                } else {                                                                                               \
                    for (int64_t o = lo; o < hi; o++) dst[o] = xc[base + o * sl];                                      \
                }                                                                                                      \
                for (int64_t o = hi; o < ol; o++) dst[o] = 0;                                                          \
            }                                                                                                          \
        }                                                                                                              \
    }                                                                                                                  \
                                                                                                                       \
    /* Adds columns for input rows [q0, q1) into one group's output sums y. */                                         \
    static void col2im_##SUF(const conv_geom *g, const ACC *col, int64_t q0, int64_t q1, ACC *y) {                     \
        int nsp = g->nsp;                                                                                              \
        int64_t ol = g->out[nsp - 1], il = g->in[nsp - 1], sl = g->s[nsp - 1];                                         \
        int64_t ncols = (q1 - q0) * il;                                                                                \
        int64_t kpos[REF_MAX_RANK];                                                                                    \
        for (int64_t r = 0; r < g->mg * g->ksz; r++) {                                                                 \
            decode_tap(g, r % g->ksz, kpos);                                                                           \
            ACC *ym = y + (r / g->ksz) * g->outsz;                                                                     \
            const ACC *crow = col + r * ncols;                                                                         \
            int64_t off = kpos[nsp - 1] * g->d[nsp - 1] - g->pb[nsp - 1], lo, hi;                                      \
            ref_nn_inside_range(il, sl, off, ol, &lo, &hi);                                                            \
            for (int64_t q = q0; q < q1; q++) {                                                                        \
                int64_t base, skip;                                                                                    \
                if (!map_row(g, q, g->in, g->out, kpos, &base, &skip)) {                                               \
                    q += skip - 1;                                                                                     \
                    continue;                                                                                          \
                }                                                                                                      \
                const ACC *src = crow + (q - q0) * il;                                                                 \
                base += off; /* output index of input i is base + i*sl */                                              \
                for (int64_t i = lo; i < hi; i++) ym[base + i * sl] += src[i];                                         \
            }                                                                                                          \
        }                                                                                                              \
    }                                                                                                                  \
                                                                                                                       \
    static tsr_status *conv_run_##SUF(ref_ctx *c, const conv_geom *g, const T *x, const T *w, const T *bias, T *y) {   \
        int nsp = g->nsp;                                                                                              \
        int64_t kk = g->cg * g->ksz;                                                                                   \
        bool pointwise = true;                                                                                         \
        for (int d = 0; d < nsp; d++)                                                                                  \
            if (g->k[d] != 1 || g->s[d] != 1 || g->pb[d] != 0 || g->pe[d] != 0) pointwise = false;                     \
        int64_t ol = g->out[nsp - 1];                                                                                  \
        int64_t rows = g->outsz / (ol ? ol : 1); /* outer output rows */                                               \
        int64_t band = NN_COL_BUDGET / (kk * ol > 0 ? kk * ol : 1);                                                    \
        if (band < 1) band = 1;                                                                                        \
        if (band > rows) band = rows;                                                                                  \
        T *col = NULL;                                                                                                 \
        if (!pointwise && g->outsz > 0) {                                                                              \
            col = malloc((size_t)(kk * band * ol) * sizeof *col);                                                      \
            if (!col) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory for the unfolded input");                    \
        }                                                                                                              \
        tsr_status *st = NULL;                                                                                         \
        for (int64_t n = 0; n < g->batch && !st; n++)                                                                  \
            for (int64_t gi = 0; gi < g->group && !st; gi++) {                                                         \
                const T *xg = x + (n * g->cin + gi * g->cg) * g->insz;                                                 \
                const T *wg = w + gi * g->mg * kk;                                                                     \
                T *yg = y + (n * g->cout + gi * g->mg) * g->outsz;                                                     \
                for (int64_t m = 0; m < g->mg; m++) {                                                                  \
                    T b0 = bias ? bias[gi * g->mg + m] : (T)0;                                                         \
                    for (int64_t j = 0; j < g->outsz; j++) yg[m * g->outsz + j] = b0;                                  \
                }                                                                                                      \
                if (g->outsz == 0) continue;                                                                           \
                if (pointwise) {                                                                                       \
                    st = GEMM(c, g->mg, g->outsz, kk, wg, kk, xg, g->insz, yg, g->outsz);                              \
                    continue;                                                                                          \
                }                                                                                                      \
                for (int64_t q0 = 0; q0 < rows && !st; q0 += band) {                                                   \
                    int64_t q1 = q0 + band < rows ? q0 + band : rows;                                                  \
                    int64_t ncols = (q1 - q0) * ol;                                                                    \
                    if (ref_work(c, g->mg * kk * ncols)) st = ref_stopped(c);                                          \
                    else im2col_##SUF(g, xg, q0, q1, col);                                                             \
                    if (!st) st = GEMM(c, g->mg, ncols, kk, wg, kk, col, ncols, yg + q0 * ol, g->outsz);               \
                }                                                                                                      \
            }                                                                                                          \
        free(col);                                                                                                     \
        return st;                                                                                                     \
    }                                                                                                                  \
                                                                                                                       \
    static tsr_status *convt_run_##SUF(ref_ctx *c, const conv_geom *g, const T *x, const T *w, const T *bias, T *y) {  \
        int nsp = g->nsp;                                                                                              \
        int64_t kk = g->mg * g->ksz; /* rows of the column matrix */                                                   \
        int64_t il = g->in[nsp - 1];                                                                                   \
        int64_t rows = g->insz / (il ? il : 1);                                                                        \
        int64_t band = NN_COLT_BUDGET / (kk * il > 0 ? kk * il : 1);                                                   \
        if (band < 1) band = 1;                                                                                        \
        if (band > rows) band = rows;                                                                                  \
        /* W is [cin, mg, k...]: per group a cg x kk matrix, needed as kk x cg. */                                     \
        T *wt = malloc((size_t)(g->cin * kk + 1) * sizeof *wt);                                                        \
        ACC *col = malloc((size_t)(kk * band * il + 1) * sizeof *col);                                                 \
        ACC *acc = malloc((size_t)(g->mg * g->outsz + 1) * sizeof *acc);                                               \
        if (!wt || !col || !acc) {                                                                                     \
            free(wt);                                                                                                  \
            free(col);                                                                                                 \
            free(acc);                                                                                                 \
            return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory for ConvTranspose columns");                           \
        }                                                                                                              \
        for (int64_t gi = 0; gi < g->group; gi++)                                                                      \
            for (int64_t ci = 0; ci < g->cg; ci++)                                                                     \
                for (int64_t r = 0; r < kk; r++) wt[gi * kk * g->cg + r * g->cg + ci] = w[(gi * g->cg + ci) * kk + r]; \
        tsr_status *st = NULL;                                                                                         \
        for (int64_t n = 0; n < g->batch && !st; n++)                                                                  \
            for (int64_t gi = 0; gi < g->group && !st; gi++) {                                                         \
                const T *xg = x + (n * g->cin + gi * g->cg) * g->insz;                                                 \
                T *yg = y + (n * g->cout + gi * g->mg) * g->outsz;                                                     \
                memset(acc, 0, (size_t)(g->mg * g->outsz) * sizeof *acc);                                              \
                for (int64_t q0 = 0; q0 < rows && !st; q0 += band) {                                                   \
                    int64_t q1 = q0 + band < rows ? q0 + band : rows;                                                  \
                    int64_t ncols = (q1 - q0) * il;                                                                    \
                    memset(col, 0, (size_t)(kk * ncols) * sizeof *col);                                                \
                    st =                                                                                               \
                        GEMM_ACC(c, kk, ncols, g->cg, wt + gi * kk * g->cg, g->cg, xg + q0 * il, g->insz, col, ncols); \
                    if (!st && ref_work(c, g->cg * kk * ncols)) st = ref_stopped(c);                                   \
                    if (!st) col2im_##SUF(g, col, q0, q1, acc);                                                        \
                }                                                                                                      \
                for (int64_t m = 0; m < g->mg; m++) {                                                                  \
                    ACC b0 = bias ? (ACC)bias[gi * g->mg + m] : (ACC)0;                                                \
                    for (int64_t j = 0; j < g->outsz; j++) yg[m * g->outsz + j] = (T)(acc[m * g->outsz + j] + b0);     \
                }                                                                                                      \
            }                                                                                                          \
        free(wt);                                                                                                      \
        free(col);                                                                                                     \
        free(acc);                                                                                                     \
        return st;                                                                                                     \
    }

NN_DEFINE_CONV(f32, float, ref_nn_sgemm_run, double, ref_nn_sgemm_run_d)
NN_DEFINE_CONV(f64, double, ref_nn_dgemm_run, double, ref_nn_dgemm_run)

/* Bound on kernel sizes, strides, dilations, pads, output_padding and
 * group: far beyond any real model, and small enough that the extents and
 * offsets computed from them (with dims < 2^56) cannot overflow int64. */
#define NN_MAX_ATTR ((int64_t)1 << 31)
/* Longest output axis accepted (as core's IR_MAX_ELEMENTS). */
#define NN_MAX_OUT ((int64_t)1 << 56)

/* Reads an INTS attribute of exactly `n` entries, each in [lo, NN_MAX_ATTR],
 * into out, or fills `dflt`. */
static tsr_status *ints_attr(ref_ctx *c, const char *name, size_t n, int64_t lo, int64_t dflt, int64_t *out) {
    const int64_t *v;
    size_t cnt = ref_attr_ints(c, name, &v);
    if (cnt == 0) {
        for (size_t i = 0; i < n; i++) out[i] = dflt;
        return NULL;
    }
    if (cnt != n)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "attribute %s has %zu values, expected %zu", name, cnt, n);
    for (size_t i = 0; i < n; i++)
        if (v[i] < lo || v[i] > NN_MAX_ATTR)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "attribute %s value %lld is out of range", name,
                           (long long)v[i]);
    memcpy(out, v, n * sizeof *out);
    return NULL;
}

typedef enum { PAD_NOTSET, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID } pad_mode;

static tsr_status *read_auto_pad(ref_ctx *c, pad_mode *mode) {
    const char *s = ref_attr_str(c, "auto_pad", "NOTSET");
    if (!strcmp(s, "NOTSET") || !*s) *mode = PAD_NOTSET;
    else if (!strcmp(s, "SAME_UPPER")) *mode = PAD_SAME_UPPER;
    else if (!strcmp(s, "SAME_LOWER")) *mode = PAD_SAME_LOWER;
    else if (!strcmp(s, "VALID")) *mode = PAD_VALID;
    else return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "unknown auto_pad '%s'", s);
    return NULL;
}

/* Shapes and attributes common to Conv and ConvTranspose (everything but
 * the output size and pads, which differ). */
static tsr_status *read_geom(ref_ctx *c, const tsr_tensor *X, const tsr_tensor *W, bool transposed, conv_geom *g) {
    if (X->rank < 3 || W->rank != X->rank)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X must have rank >= 3 and W the same rank (got %d and %d)",
                       (int)X->rank, (int)W->rank);
    g->nsp = X->rank - 2;
    g->batch = X->dims[0];
    g->cin = X->dims[1];
    g->group = ref_attr_int(c, "group", 1);
    if (g->group < 1 || g->group > NN_MAX_ATTR || g->cin % g->group)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "group %lld does not divide %lld channels", (long long)g->group,
                       (long long)g->cin);
    g->cg = g->cin / g->group;
    if (transposed) {
        if (W->dims[0] != g->cin)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "W has %lld input channels, X %lld", (long long)W->dims[0],
                           (long long)g->cin);
        g->mg = W->dims[1];
        g->cout = g->mg * g->group;
    } else {
        if (W->dims[1] != g->cg)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "W has %lld channels per group, X has %lld",
                           (long long)W->dims[1], (long long)g->cg);
        g->cout = W->dims[0];
        if (g->cout % g->group)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "group %lld does not divide %lld output channels",
                           (long long)g->group, (long long)g->cout);
        g->mg = g->cout / g->group;
    }
    size_t nsp = (size_t)g->nsp;
    tsr_status *st;
    if ((st = ints_attr(c, "kernel_shape", nsp, 0, 0, g->k)) || (st = ints_attr(c, "strides", nsp, 1, 1, g->s)) ||
        (st = ints_attr(c, "dilations", nsp, 1, 1, g->d)))
        return st;
    g->ksz = 1;
    g->insz = 1;
    for (int d = 0; d < g->nsp; d++) {
        /* kernel_shape is optional: the weights say it too. */
        if (g->k[d] == 0) g->k[d] = W->dims[2 + d];
        if (g->k[d] != W->dims[2 + d]) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "kernel_shape disagrees with W");
        if (g->k[d] > NN_MAX_ATTR)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "kernel size %lld on axis %d is out of range",
                           (long long)g->k[d], d);
        g->in[d] = X->dims[2 + d];
        /* an empty X or W may still have huge dims whose product overflows */
        if (__builtin_mul_overflow(g->ksz, g->k[d], &g->ksz) || __builtin_mul_overflow(g->insz, g->in[d], &g->insz))
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X or W has too many elements");
    }
    int64_t pads[2 * REF_MAX_RANK];
    if ((st = ints_attr(c, "pads", 2 * nsp, -NN_MAX_ATTR, 0, pads))) return st;
    for (int d = 0; d < g->nsp; d++) {
        g->pb[d] = pads[d];
        g->pe[d] = pads[g->nsp + d];
    }
    return NULL;
}

/* Bias B, if present, must be a vector of the output channels. */
static tsr_status *check_bias(ref_ctx *c, const tsr_tensor *B, int64_t cout) {
    if (B && (int64_t)ref_numel(B) != cout)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "B has %lld values for %lld channels", (long long)ref_numel(B),
                       (long long)cout);
    return NULL;
}

/* Converts inputs, runs the float or double core, stores the output. */
static tsr_status *run_typed(ref_ctx *c, const conv_geom *g, const tsr_tensor *X, const tsr_tensor *W,
                             const tsr_tensor *B, bool transposed) {
    int64_t od[REF_MAX_RANK];
    od[0] = g->batch;
    od[1] = g->cout;
    for (int d = 0; d < g->nsp; d++) od[2 + d] = g->out[d];
    tsr_tensor *Y;
    tsr_status *st = ref_out(c, 0, X->elem_type, X->rank, od, &Y);
    if (st) return st;
    size_t ytotal = (size_t)ref_numel(Y);
    if (ytotal == 0) return NULL;
    if (X->elem_type == TSR_DOUBLE) {
        const double *x, *w, *b = NULL;
        double *xo = NULL, *wo = NULL, *bo = NULL;
        if (!(st = ref_nn_f64_view(c, X, &x, &xo)) && !(st = ref_nn_f64_view(c, W, &w, &wo)) &&
            !(B && (st = ref_nn_f64_view(c, B, &b, &bo))))
            st = transposed ? convt_run_f64(c, g, x, w, b, Y->data) : conv_run_f64(c, g, x, w, b, Y->data);
        free(xo);
        free(wo);
        free(bo);
        return st;
    }
    const float *x, *w, *b = NULL;
    float *xo = NULL, *wo = NULL, *bo = NULL, *yo = NULL;
    float *y = Y->data;
    if (Y->elem_type != TSR_FLOAT) {
        y = yo = malloc(ytotal * sizeof *yo);
        if (!y) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    }
    if (!(st = ref_nn_f32_view(c, X, &x, &xo)) && !(st = ref_nn_f32_view(c, W, &w, &wo)) &&
        !(B && (st = ref_nn_f32_view(c, B, &b, &bo))))
        st = transposed ? convt_run_f32(c, g, x, w, b, y) : conv_run_f32(c, g, x, w, b, y);
    if (!st && yo) ref_nn_f32_store(Y, yo, ytotal);
    free(xo);
    free(wo);
    free(bo);
    free(yo);
    return st;
}

tsr_status *ref_nn_conv(ref_ctx *c) {
    const tsr_tensor *X = ref_in(c, 0), *W = ref_in(c, 1), *B = ref_in(c, 2);
    if (!X || !W) return ref_err(c, TSR_ERR_INVALID_MODEL, "Conv needs inputs X and W");
    conv_geom g;
    pad_mode mode;
    tsr_status *st;
    if ((st = read_geom(c, X, W, false, &g)) || (st = read_auto_pad(c, &mode)) || (st = check_bias(c, B, g.cout)))
        return st;
    g.outsz = 1;
    for (int d = 0; d < g.nsp; d++) {
        int64_t ext = (g.k[d] - 1) * g.d[d] + 1; /* dilated kernel extent */
        int64_t in = g.in[d];
        if (mode == PAD_SAME_UPPER || mode == PAD_SAME_LOWER) {
            g.out[d] = (in + g.s[d] - 1) / g.s[d];
            int64_t total = (g.out[d] - 1) * g.s[d] + ext - in;
            if (total < 0) total = 0;
            /* The odd pixel goes at the end for SAME_UPPER, the start for LOWER. */
            g.pb[d] = mode == PAD_SAME_UPPER ? total / 2 : total - total / 2;
            g.pe[d] = total - g.pb[d];
        } else {
            if (mode == PAD_VALID) g.pb[d] = g.pe[d] = 0;
            int64_t span = in + g.pb[d] + g.pe[d] - ext;
            g.out[d] = span < 0 ? 0 : span / g.s[d] + 1;
        }
        if (__builtin_mul_overflow(g.outsz, g.out[d], &g.outsz))
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "the output has too many elements");
    }
    return run_typed(c, &g, X, W, B, false);
}

tsr_status *ref_nn_conv_transpose(ref_ctx *c) {
    const tsr_tensor *X = ref_in(c, 0), *W = ref_in(c, 1), *B = ref_in(c, 2);
    if (!X || !W) return ref_err(c, TSR_ERR_INVALID_MODEL, "ConvTranspose needs inputs X and W");
    conv_geom g;
    pad_mode mode;
    tsr_status *st;
    if ((st = read_geom(c, X, W, true, &g)) || (st = read_auto_pad(c, &mode)) || (st = check_bias(c, B, g.cout)))
        return st;
    int nsp = g.nsp;
    int64_t opad[REF_MAX_RANK];
    if ((st = ints_attr(c, "output_padding", (size_t)nsp, 0, 0, opad))) return st;
    /* output_shape may list the spatial sizes, or (as some exporters
     * write it) the whole shape. */
    const int64_t *oshape;
    size_t on = ref_attr_ints(c, "output_shape", &oshape);
    if (on == (size_t)nsp + 2) {
        oshape += 2;
        on -= 2;
    }
    if (on != 0 && on != (size_t)nsp)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "output_shape has %zu values for %d axes", on, nsp);
    g.outsz = 1;
    for (int d = 0; d < nsp; d++) {
        int64_t ext = (g.k[d] - 1) * g.d[d] + 1;
        /* stride times input length may pass int64; no real output is
         * anywhere near 2^56 elements long */
        __int128 wide = (__int128)g.s[d] * (g.in[d] - 1) + opad[d] + ext;
        int64_t osh = on ? oshape[d] : 0;
        if (wide > NN_MAX_OUT || (__int128)g.in[d] * g.s[d] > NN_MAX_OUT || osh < 0 || osh > NN_MAX_OUT)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                           "ConvTranspose output on axis %d would have more than 2^56 elements "
                           "(or output_shape is negative)",
                           d);
        int64_t full = (int64_t)wide; /* output with no padding */
        if (on || mode == PAD_SAME_UPPER || mode == PAD_SAME_LOWER) {
            g.out[d] = on ? osh : g.in[d] * g.s[d];
            int64_t total = full - g.out[d];
            /* Half the padding, rounded toward minus infinity: an output
             * larger than `full` (negative padding) grows at the end. */
            int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
            /* As the spec says: SAME_UPPER puts the odd unit of padding at
             * the end, anything else at the start. */
            if (mode == PAD_SAME_UPPER) {
                g.pb[d] = half;
                g.pe[d] = total - half;
            } else {
                g.pb[d] = total - half;
                g.pe[d] = half;
            }
        } else {
            if (mode == PAD_VALID) g.pb[d] = g.pe[d] = 0;
            g.out[d] = full - g.pb[d] - g.pe[d];
        }
        if (g.out[d] < 0)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "output size %lld on axis %d", (long long)g.out[d], d);
        if (__builtin_mul_overflow(g.outsz, g.out[d], &g.outsz))
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "the output has too many elements");
    }
    return run_typed(c, &g, X, W, B, true);
}

int ref_nn_check_conv(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size) {
    const tsr_value_info *x = host->node_input_count(node) > 0 ? host->node_input(node, 0) : NULL;
    int32_t t = x ? host->value_elem_type(x) : 0;
    if (t != 0 && !ref_is_float(t)) {
        snprintf(why, why_size, "%s of element type %d is not implemented", host->node_op_type(node), (int)t);
        return TSR_DECLINE_TYPE;
    }
    int32_t r = x ? host->value_rank(x) : -1;
    if (r >= 0 && r < 3) {
        snprintf(why, why_size, "%s needs an input of rank >= 3", host->node_op_type(node));
        return TSR_DECLINE_SHAPE;
    }
    return 0;
}
