/*
 * STFT (opset 17). signal [batch, length, 1 or 2] is cut into frames of
 * frame_length samples, frame_step apart (the last partial frame dropped,
 * as torch.stft does without centring); each frame, multiplied by the
 * window, gets a DFT of frame_length. Output [batch, frames, bins, 2], with
 * bins = frame_length / 2 + 1 when onesided (the default).
 */
#include <stdlib.h>

#include "ref_signal.h"

typedef struct stft_shape {
    int64_t batch, length, comp;
    int64_t step, frame, frames, bins;
} stft_shape;

static tsr_status *frame_length(ref_ctx *c, const tsr_tensor *S, const tsr_tensor *W, int64_t *out) {
    const tsr_tensor *L = ref_in(c, 3);
    if (W && (W->rank != 1 || !ref_is_float(W->elem_type)))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "window must be a 1-D float tensor");
    if (L) {
        tsr_status *st = ref_signal_int_scalar(c, L, "frame_length", out);
        if (st) return st;
        if (W && W->dims[0] != *out)
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "window has %lld values but frame_length is %lld",
                           (long long)W->dims[0], (long long)*out);
    } else {
        *out = W ? W->dims[0] : S->dims[1];
    }
    if (*out < 1 || *out > REF_SIGNAL_MAX_LENGTH)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "frame_length %lld is outside [1, %lld]", (long long)*out,
                       (long long)REF_SIGNAL_MAX_LENGTH);
    if (*out > S->dims[1])
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "frame_length %lld is longer than the signal (%lld samples)",
                       (long long)*out, (long long)S->dims[1]);
    return NULL;
}

static tsr_status *check_inputs(ref_ctx *c, stft_shape *s) {
    const tsr_tensor *S = ref_in(c, 0), *W = ref_in(c, 2);
    if (!S) return ref_err(c, TSR_ERR_INVALID_MODEL, "signal is required");
    if (!ref_is_float(S->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "signal element type %d is not a float type", (int)S->elem_type);
    if (S->rank != 3 || (S->dims[2] != 1 && S->dims[2] != 2))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "signal must be [batch, length, 1 or 2] (real or complex)");
    s->batch = S->dims[0];
    s->length = S->dims[1];
    s->comp = S->dims[2];
    tsr_status *st = ref_signal_int_scalar(c, ref_in(c, 1), "frame_step", &s->step);
    if (st) return st;
    if (s->step < 1) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "frame_step %lld is not positive", (long long)s->step);
    if ((st = frame_length(c, S, W, &s->frame))) return st;
    s->frames = 1 + (s->length - s->frame) / s->step;
    s->bins = ref_attr_int(c, "onesided", 1) ? s->frame / 2 + 1 : s->frame;
    int64_t total;
    if (__builtin_mul_overflow(s->batch, s->frames, &total) || __builtin_mul_overflow(total, s->bins * 2, &total) ||
        total > REF_SIGNAL_MAX_ELEMS)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "output would have more than %lld elements",
                       (long long)REF_SIGNAL_MAX_ELEMS);
    return NULL;
}

tsr_status *ref_signal_stft(ref_ctx *c) {
    stft_shape s = {0};
    tsr_status *st = check_inputs(c, &s);
    if (st) return st;
    const tsr_tensor *S = ref_in(c, 0), *W = ref_in(c, 2);
    int64_t dims[4] = {s.batch, s.frames, s.bins, 2};
    tsr_tensor *Y;
    if ((st = ref_out(c, 0, S->elem_type, 4, dims, &Y))) return st;
    if (s.batch == 0) return NULL;

    ref_fft *f = ref_fft_new((size_t)s.frame);
    double *re = malloc(sizeof(double) * (size_t)s.frame);
    double *im = malloc(sizeof(double) * (size_t)s.frame);
    double *win = malloc(sizeof(double) * (size_t)s.frame);
    if (!f || !re || !im || !win) {
        st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory for frames of %lld samples", (long long)s.frame);
        goto done;
    }
    for (int64_t j = 0; j < s.frame; j++) win[j] = W ? ref_load(W->elem_type, W->data, (size_t)j) : 1.0;
    for (int64_t b = 0; b < s.batch; b++) {
        for (int64_t fr = 0; fr < s.frames; fr++) {
            int64_t start = b * s.length + fr * s.step;
            for (int64_t j = 0; j < s.frame; j++) {
                size_t at = (size_t)((start + j) * s.comp);
                re[j] = ref_load(S->elem_type, S->data, at) * win[j];
                im[j] = s.comp == 2 ? ref_load(S->elem_type, S->data, at + 1) * win[j] : 0.0;
            }
            ref_fft_run(f, re, im, false);
            for (int64_t k = 0; k < s.bins; k++) {
                size_t at = (size_t)(((b * s.frames + fr) * s.bins + k) * 2);
                ref_store(Y->elem_type, Y->data, at, re[k]);
                ref_store(Y->elem_type, Y->data, at + 1, im[k]);
            }
        }
    }
done:
    ref_fft_free(f);
    free(re);
    free(im);
    free(win);
    return st;
}
