/*
 * HannWindow, HammingWindow and BlackmanWindow (opset 17): `size` samples
 * of a generalised cosine window a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N),
 * with N = size when periodic (the default, for spectral analysis) and
 * size - 1 when symmetric. The result is stored as output_datatype.
 */
#include <math.h>

#include "ref_signal.h"

typedef struct cosine_window {
    double a0, a1, a2;
} cosine_window;

static tsr_status *run_window(ref_ctx *c, cosine_window w) {
    int64_t size;
    tsr_status *st = ref_signal_int_scalar(c, ref_in(c, 0), "size", &size);
    if (st) return st;
    if (size < 0 || size > REF_SIGNAL_MAX_LENGTH)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "size %lld is outside [0, %lld]", (long long)size,
                       (long long)REF_SIGNAL_MAX_LENGTH);
    int64_t type = ref_attr_int(c, "output_datatype", TSR_FLOAT);
    if (!ref_signal_output_type_ok(type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "output_datatype %lld is not supported", (long long)type);
    bool periodic = ref_attr_int(c, "periodic", 1) != 0;
    tsr_tensor *Y;
    if ((st = ref_out(c, 0, (int32_t)type, 1, &size, &Y))) return st;
    double N = (double)(periodic ? size : size - 1);
    for (int64_t n = 0; n < size; n++) {
        /* A symmetric window of one sample has N = 0: it is the window's
         * peak, 1, as torch returns (the formula would divide 0 by 0). */
        double v = 1.0;
        if (N > 0) {
            double x = 2.0 * REF_SIGNAL_PI * (double)n / N;
            v = w.a0 - w.a1 * cos(x) + w.a2 * cos(2.0 * x);
        }
        ref_store(Y->elem_type, Y->data, (size_t)n, v);
    }
    return NULL;
}

tsr_status *ref_signal_hann(ref_ctx *c) { return run_window(c, (cosine_window){0.5, 0.5, 0.0}); }

/* a0 = 25/46, the value that cancels the first side lobe (not the rounded 0.54). */
tsr_status *ref_signal_hamming(ref_ctx *c) { return run_window(c, (cosine_window){25.0 / 46.0, 21.0 / 46.0, 0.0}); }

tsr_status *ref_signal_blackman(ref_ctx *c) { return run_window(c, (cosine_window){0.42, 0.5, 0.08}); }
