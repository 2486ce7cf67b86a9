/* Shape and type rules for ops whose outputs are fixed by their attributes,
 * constant inputs or input ranks: window functions, DFT, STFT,
 * MelWeightMatrix, MaxUnpool, Col2Im, AffineGrid, DynamicQuantizeLinear,
 * NonMaxSuppression, Unique, Multinomial, the losses, the string ops,
 * TfIdfVectorizer and ImageDecoder. What depends on data (how many
 * boxes survive, how many values are unique) stays an unknown dim; the rank
 * and element type are what the next op needs (issue 16). */
#include <string.h>

#include "shape_infer_internal.h"

/* Hann/Hamming/BlackmanWindow: a 1-D window of `size` (a scalar input)
 * elements of output_datatype (default float). */
static tsr_status *rule_window(shape_ctx *c, const ir_node *n) {
    shape_dims out;
    int64_t size[1];
    size_t count = 0;
    out.rank = 1;
    out.dims[0] = shape_in_ints(c, n, 0, size, 1, &count, NULL) && count == 1 && size[0] >= 0 ? shape_known(size[0])
                                                                                              : shape_unknown();
    return shape_set_out_ex(c, n, 0, (int32_t)shape_attr_int(n, "output_datatype", TSR_FLOAT), &out,
                            SHAPE_ELEM_CERTAIN);
}

/* y like x in uint8, scale a float scalar, zero point a uint8 scalar. */
static tsr_status *rule_dynamic_quantize(shape_ctx *c, const ir_node *n) {
    shape_dims x, scalar;
    shape_in_shape(c, n, 0, &x);
    scalar.rank = 0;
    TSR_TRY(shape_set_out_ex(c, n, 0, TSR_UINT8, x.rank >= 0 ? &x : NULL, SHAPE_ELEM_CERTAIN));
    TSR_TRY(shape_set_out_ex(c, n, 1, TSR_FLOAT, &scalar, SHAPE_ELEM_CERTAIN));
    return shape_set_out_ex(c, n, 2, TSR_UINT8, &scalar, SHAPE_ELEM_CERTAIN);
}

/* [selected, 3] int64: batch index, class index, box index. */
static tsr_status *rule_nms(shape_ctx *c, const ir_node *n) {
    shape_dims out;
    out.rank = 2;
    out.dims[0] = shape_unknown();
    out.dims[1] = shape_known(3);
    return shape_set_out_ex(c, n, 0, TSR_INT64, &out, SHAPE_ELEM_CERTAIN);
}

/* Unique: Y 1-D (no axis) or the input with the axis' length unknown;
 * indices, inverse_indices and counts 1-D int64. */
static tsr_status *rule_unique(shape_ctx *c, const ir_node *n) {
    shape_dims x, y, v;
    shape_in_shape(c, n, 0, &x);
    const ir_attr *axis_attr = shape_attr(n, "axis");
    v.rank = 1;
    v.dims[0] = shape_unknown();
    if (!axis_attr) {
        y = v;
    } else if (x.rank >= 0) {
        int32_t a;
        if (!shape_axis(axis_attr->i, x.rank, &a))
            return shape_err(n, "axis %lld out of range for rank %d", (long long)axis_attr->i, (int)x.rank);
        y = x;
        y.dims[a] = shape_unknown();
    } else {
        y.rank = -1;
    }
    TSR_TRY(shape_set_out(c, n, 0, shape_in_elem(c, n, 0), y.rank >= 0 ? &y : NULL));
    for (size_t i = 1; i < 4; i++) TSR_TRY(shape_set_out_ex(c, n, i, TSR_INT64, &v, SHAPE_ELEM_CERTAIN));
    return NULL;
}

/* Multinomial: [batch, sample_size] of dtype (default int32). */
static tsr_status *rule_multinomial(shape_ctx *c, const ir_node *n) {
    shape_dims x, out;
    shape_in_shape(c, n, 0, &x);
    if (x.rank >= 0 && x.rank != 2) return shape_err(n, "input has rank %d, not 2", (int)x.rank);
    out.rank = 2;
    out.dims[0] = x.rank == 2 ? x.dims[0] : shape_unknown();
    out.dims[1] = shape_known(shape_attr_int(n, "sample_size", 1));
    return shape_set_out_ex(c, n, 0, (int32_t)shape_attr_int(n, "dtype", TSR_INT32), &out, SHAPE_ELEM_CERTAIN);
}

/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: with reduction
 * "none" the target's shape [N, d1, ...], else a scalar; the second output
 * of SoftmaxCrossEntropyLoss (log_prob) is shaped like the scores. */
static tsr_status *rule_loss(shape_ctx *c, const ir_node *n) {
    shape_dims out;
    const char *reduction = shape_attr_str(n, "reduction", "mean");
    int32_t elem = shape_in_elem(c, n, 0);
    if (reduction[0] == 'n') shape_in_shape(c, n, 1, &out);
    else out.rank = 0;
    TSR_TRY(shape_set_out(c, n, 0, elem, out.rank >= 0 ? &out : NULL));
    if (n->n_outputs < 2) return NULL;
    shape_dims scores;
    shape_in_shape(c, n, 0, &scores);
    return shape_set_out(c, n, 1, elem, scores.rank >= 0 ? &scores : NULL);
}

/* RegexFullMatch: a bool per string. */
static tsr_status *rule_regex_match(shape_ctx *c, const ir_node *n) {
    shape_dims x;
    shape_in_shape(c, n, 0, &x);
    return shape_set_out_ex(c, n, 0, TSR_BOOL, x.rank >= 0 ? &x : NULL, SHAPE_ELEM_CERTAIN);
}

/* StringConcat: the two inputs broadcast, strings. */
static tsr_status *rule_string_concat(shape_ctx *c, const ir_node *n) {
    shape_dims a, b, out;
    shape_in_shape(c, n, 0, &a);
    shape_in_shape(c, n, 1, &b);
    if (a.rank < 0 || b.rank < 0) return shape_set_out_ex(c, n, 0, TSR_STRING, NULL, SHAPE_ELEM_CERTAIN);
    TSR_TRY(shape_broadcast(c, n, &a, &b, &out));
    return shape_set_out_ex(c, n, 0, TSR_STRING, &out, SHAPE_ELEM_CERTAIN);
}

/* A scalar (or 1-element) integer input, or -1. */
static int64_t scalar_in(shape_ctx *c, const ir_node *n, size_t i) {
    int64_t v[1];
    size_t count = 0;
    return shape_has_in(n, i) && shape_in_ints(c, n, i, v, 1, &count, NULL) && count == 1 ? v[0] : -1;
}

/* DFT: the input with its last (real or complex) dim 2, the transformed
 * axis dft_length long (one-sided: floor(n/2) + 1; the IRFFT, one-sided
 * and inverse, gives a real signal, last dim 1). The axis is an attribute
 * (default 1) before opset 20, then input 2 (default -2). */
static tsr_status *rule_dft(shape_ctx *c, const ir_node *n) {
    shape_dims x;
    shape_in_shape(c, n, 0, &x);
    int32_t elem = shape_in_elem(c, n, 0);
    if (x.rank < 2) return shape_set_out(c, n, 0, elem, NULL);
    int64_t axis = shape_opset(n) >= 20 ? (shape_has_in(n, 2) ? scalar_in(c, n, 2) : -2) : shape_attr_int(n, "axis", 1);
    int32_t a;
    if (shape_opset(n) >= 20 && shape_has_in(n, 2) && axis == -1)
        return shape_set_out(c, n, 0, elem, NULL); /* not constant */
    if (!shape_axis(axis, x.rank, &a) || a == x.rank - 1)
        return shape_err(n, "axis %lld is not a signal axis", (long long)axis);
    /* onesided with inverse is the IRFFT: a real signal of dft_length
     * (default 2 * (n - 1)) from the n one-sided bins */
    bool inverse = shape_attr_int(n, "inverse", 0) != 0, onesided = shape_attr_int(n, "onesided", 0) != 0;
    bool irfft = inverse && onesided;
    int64_t len = -1;
    if (shape_has_in(n, 1)) len = scalar_in(c, n, 1);
    else if (shape_is_known(x.dims[a]) && (!irfft || x.dims[a].value >= 1))
        len = irfft ? 2 * (x.dims[a].value - 1) : x.dims[a].value;
    x.dims[a] = len < 0 ? shape_unknown() : shape_known(onesided && !inverse ? len / 2 + 1 : len);
    x.dims[x.rank - 1] = shape_known(irfft ? 1 : 2);
    return shape_set_out(c, n, 0, elem, &x);
}

/* STFT: signal [batch, length, 1|2] -> [batch, frames, bins, 2], frames =
 * (length - frame_length) / frame_step + 1, bins frame_length (one-sided:
 * floor(frame_length/2) + 1); frame_length from input 3 or the window. */
static tsr_status *rule_stft(shape_ctx *c, const ir_node *n) {
    shape_dims x, w, out;
    shape_in_shape(c, n, 0, &x);
    shape_in_shape(c, n, 2, &w);
    int64_t step = scalar_in(c, n, 1), flen = shape_has_in(n, 3) ? scalar_in(c, n, 3) : -1;
    if (flen < 0 && w.rank == 1 && shape_is_known(w.dims[0])) flen = w.dims[0].value;
    bool onesided = shape_attr_int(n, "onesided", 1) != 0;
    out.rank = 4;
    out.dims[0] = x.rank == 3 ? x.dims[0] : shape_unknown();
    out.dims[1] = x.rank == 3 && shape_is_known(x.dims[1]) && step > 0 && flen > 0 && x.dims[1].value >= flen
        ? shape_known((x.dims[1].value - flen) / step + 1)
        : shape_unknown();
    out.dims[2] = flen > 0 ? shape_known(onesided ? flen / 2 + 1 : flen) : shape_unknown();
    out.dims[3] = shape_known(2);
    return shape_set_out(c, n, 0, shape_in_elem(c, n, 0), &out);
}

/* MelWeightMatrix: [floor(dft_length/2) + 1, num_mel_bins]. */
static tsr_status *rule_mel(shape_ctx *c, const ir_node *n) {
    shape_dims out;
    int64_t bins = scalar_in(c, n, 0), dft = scalar_in(c, n, 1);
    out.rank = 2;
    out.dims[0] = dft >= 0 ? shape_known(dft / 2 + 1) : shape_unknown();
    out.dims[1] = bins >= 0 ? shape_known(bins) : shape_unknown();
    return shape_set_out_ex(c, n, 0, (int32_t)shape_attr_int(n, "output_datatype", TSR_FLOAT), &out,
                            SHAPE_ELEM_CERTAIN);
}

/* MaxUnpool: output_shape (input 2) when given, else per spatial dim
 * (in - 1) * stride - pad_begin - pad_end + kernel. */
static tsr_status *rule_max_unpool(shape_ctx *c, const ir_node *n) {
    shape_dims x;
    shape_in_shape(c, n, 0, &x);
    int32_t elem = shape_in_elem(c, n, 0);
    int64_t given[IR_MAX_RANK];
    size_t count = 0;
    if (shape_has_in(n, 2)) {
        shape_dims out;
        if (!shape_in_ints(c, n, 2, given, IR_MAX_RANK, &count, NULL)) return shape_set_out(c, n, 0, elem, NULL);
        out.rank = (int32_t)count;
        for (size_t i = 0; i < count; i++) out.dims[i] = given[i] >= 0 ? shape_known(given[i]) : shape_unknown();
        return shape_set_out(c, n, 0, elem, &out);
    }
    size_t nk = 0, ns = 0, np = 0;
    const int64_t *k = shape_attr_ints(n, "kernel_shape", &nk), *st = shape_attr_ints(n, "strides", &ns),
                  *pads = shape_attr_ints(n, "pads", &np);
    if (x.rank < 3 || !k || nk != (size_t)(x.rank - 2) || (st && ns != nk) || (pads && np != 2 * nk))
        return shape_set_out(c, n, 0, elem, x.rank >= 0 ? &x : NULL);
    for (size_t i = 0; i < nk; i++) {
        shape_dim *d = &x.dims[i + 2];
        if (!shape_is_known(*d)) continue;
        /* attributes are any int64 a file holds: in 128 bits, and a size
         * past int64 is left unknown (the kernel refuses it when it runs) */
        __int128 v = (__int128)(d->value - 1) * (st ? st[i] : 1) - (pads ? (__int128)pads[i] + pads[i + nk] : 0) + k[i];
        *d = v >= 0 && v <= INT64_MAX ? shape_known((int64_t)v) : shape_unknown();
    }
    return shape_set_out(c, n, 0, elem, &x);
}

/* Col2Im: [N, C * prod(block_shape), L] -> [N, C, image_shape...]. */
static tsr_status *rule_col2im(shape_ctx *c, const ir_node *n) {
    shape_dims x, out;
    shape_in_shape(c, n, 0, &x);
    int32_t elem = shape_in_elem(c, n, 0);
    int64_t image[IR_MAX_RANK], block[IR_MAX_RANK];
    size_t ni = 0, nb = 0;
    if (!shape_in_ints(c, n, 1, image, IR_MAX_RANK - 2, &ni, NULL) ||
        !shape_in_ints(c, n, 2, block, IR_MAX_RANK, &nb, NULL) || ni != nb || ni == 0)
        return shape_set_out(c, n, 0, elem, NULL);
    int64_t prod = 1;
    for (size_t i = 0; i < nb; i++) prod = block[i] > 0 && prod <= INT64_MAX / block[i] ? prod * block[i] : -1;
    out.rank = (int32_t)ni + 2;
    out.dims[0] = x.rank == 3 ? x.dims[0] : shape_unknown();
    out.dims[1] =
        x.rank == 3 && shape_is_known(x.dims[1]) && prod > 0 ? shape_known(x.dims[1].value / prod) : shape_unknown();
    for (size_t i = 0; i < ni; i++) out.dims[i + 2] = image[i] >= 0 ? shape_known(image[i]) : shape_unknown();
    return shape_set_out(c, n, 0, elem, &out);
}

/* AffineGrid: size [N, C, H, W] -> [N, H, W, 2]; [N, C, D, H, W] ->
 * [N, D, H, W, 3]. */
static tsr_status *rule_affine_grid(shape_ctx *c, const ir_node *n) {
    shape_dims out;
    int32_t elem = shape_in_elem(c, n, 0);
    int64_t size[5];
    size_t count = 0;
    if (!shape_in_ints(c, n, 1, size, 5, &count, NULL) || (count != 4 && count != 5))
        return shape_set_out(c, n, 0, elem, NULL);
    out.rank = (int32_t)count;
    out.dims[0] = shape_known(size[0]);
    for (size_t i = 2; i < count; i++) out.dims[i - 1] = shape_known(size[i]);
    out.dims[count - 1] = shape_known((int64_t)count - 2);
    return shape_set_out(c, n, 0, elem, &out);
}

/* StringNormalizer: [C] or [1, C] strings; stop words may drop some, so
 * the length along C is unknown. */
static tsr_status *rule_string_normalizer(shape_ctx *c, const ir_node *n) {
    shape_dims x;
    shape_in_shape(c, n, 0, &x);
    if (x.rank >= 1) x.dims[x.rank - 1] = shape_unknown();
    return shape_set_out_ex(c, n, 0, TSR_STRING, x.rank >= 0 ? &x : NULL, SHAPE_ELEM_CERTAIN);
}

/* StringSplit: Y the input with one more dim of unknown length (the most
 * pieces in any element), Z the piece counts, int64, shaped as the input. */
static tsr_status *rule_string_split(shape_ctx *c, const ir_node *n) {
    shape_dims x, y;
    shape_in_shape(c, n, 0, &x);
    if (x.rank >= 0 && x.rank < IR_MAX_RANK) {
        y = x;
        y.dims[y.rank++] = shape_unknown();
    }
    bool ok = x.rank >= 0 && x.rank < IR_MAX_RANK;
    TSR_TRY(shape_set_out_ex(c, n, 0, TSR_STRING, ok ? &y : NULL, SHAPE_ELEM_CERTAIN));
    return shape_set_out_ex(c, n, 1, TSR_INT64, x.rank >= 0 ? &x : NULL, SHAPE_ELEM_CERTAIN);
}

/* TfIdfVectorizer: float counts, [max(ngram_indexes) + 1] for a [C] input
 * and [N, max + 1] for [N, C]. */
static tsr_status *rule_tfidf(shape_ctx *c, const ir_node *n) {
    shape_dims x, out;
    shape_in_shape(c, n, 0, &x);
    size_t count = 0;
    const int64_t *idx = shape_attr_ints(n, "ngram_indexes", &count);
    int64_t most = -1;
    for (size_t i = 0; idx && i < count; i++)
        if (idx[i] > most) most = idx[i];
    if (x.rank < 1 || x.rank > 2) return shape_set_out_ex(c, n, 0, TSR_FLOAT, NULL, SHAPE_ELEM_CERTAIN);
    out.rank = x.rank;
    out.dims[0] = x.dims[0];
    out.dims[x.rank - 1] = most >= 0 && most < INT64_MAX ? shape_known(most + 1) : shape_unknown();
    return shape_set_out_ex(c, n, 0, TSR_FLOAT, &out, SHAPE_ELEM_CERTAIN);
}

/* ImageDecoder: a uint8 image [H, W, C], channels last; C is 1 for
 * Grayscale and 3 for RGB and BGR (an image that can't be decoded is
 * [0, 0, C]). */
static tsr_status *rule_image_decoder(shape_ctx *c, const ir_node *n) {
    shape_dims out;
    const char *fmt = shape_attr_str(n, "pixel_format", "RGB");
    shape_dims_rank(&out, 3);
    if (!strcmp(fmt, "Grayscale")) out.dims[2] = shape_known(1);
    else if (!strcmp(fmt, "RGB") || !strcmp(fmt, "BGR")) out.dims[2] = shape_known(3);
    return shape_set_out_ex(c, n, 0, TSR_UINT8, &out, SHAPE_ELEM_CERTAIN);
}

/* Det: [..., M, M] -> [...]. */
static tsr_status *rule_det(shape_ctx *c, const ir_node *n) {
    shape_dims x;
    shape_in_shape(c, n, 0, &x);
    if (x.rank >= 0 && x.rank < 2) return shape_err(n, "input has rank %d, below 2", (int)x.rank);
    if (x.rank >= 2) x.rank -= 2;
    return shape_set_out(c, n, 0, shape_in_elem(c, n, 0), x.rank >= 0 ? &x : NULL);
}

const shape_op shape_ops_misc[] = {
    {"Det", 11, rule_det},
    {"StringNormalizer", 10, rule_string_normalizer},
    {"StringSplit", 20, rule_string_split},
    {"DFT", 17, rule_dft},
    {"STFT", 17, rule_stft},
    {"MelWeightMatrix", 17, rule_mel},
    {"MaxUnpool", 9, rule_max_unpool},
    {"Col2Im", 18, rule_col2im},
    {"AffineGrid", 20, rule_affine_grid},
    {"HannWindow", 17, rule_window},
    {"HammingWindow", 17, rule_window},
    {"BlackmanWindow", 17, rule_window},
    {"DynamicQuantizeLinear", 11, rule_dynamic_quantize},
    {"NonMaxSuppression", 10, rule_nms},
    {"Unique", 11, rule_unique},
    {"Multinomial", 7, rule_multinomial},
    {"NegativeLogLikelihoodLoss", 12, rule_loss},
    {"SoftmaxCrossEntropyLoss", 12, rule_loss},
    {"RegexFullMatch", 20, rule_regex_match},
    {"StringConcat", 20, rule_string_concat},
    {"TfIdfVectorizer", 9, rule_tfidf},
    {"ImageDecoder", 20, rule_image_decoder},
};
const size_t shape_ops_misc_count = sizeof shape_ops_misc / sizeof shape_ops_misc[0];
