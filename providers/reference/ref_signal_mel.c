/*
 * MelWeightMatrix (opset 17): a [dft_length / 2 + 1, num_mel_bins] matrix
 * of triangular filters that maps a onesided spectrum onto mel bands.
 *
 * Band edges are num_mel_bins + 2 points spaced evenly on the mel scale
 * (mel = 2595 log10(1 + hz / 700)) from lower_edge_hertz, with the step
 * (high - low) / (num_mel_bins + 2) that the ONNX reference uses, each
 * mapped to spectrum row floor((dft_length + 1) * hz / sample_rate). Band i
 * rises from edge i to edge i + 1 and falls to edge i + 2.
 */
#include <math.h>
#include <stdlib.h>

#include "ref_signal.h"

typedef struct mel_args {
    int64_t mel_bins, dft_length, sample_rate;
    double lower_hz, upper_hz;
} mel_args;

static tsr_status *read_args(ref_ctx *c, mel_args *a) {
    tsr_status *st;
    if ((st = ref_signal_int_scalar(c, ref_in(c, 0), "num_mel_bins", &a->mel_bins)) ||
        (st = ref_signal_int_scalar(c, ref_in(c, 1), "dft_length", &a->dft_length)) ||
        (st = ref_signal_int_scalar(c, ref_in(c, 2), "sample_rate", &a->sample_rate)) ||
        (st = ref_signal_real_scalar(c, ref_in(c, 3), "lower_edge_hertz", &a->lower_hz)) ||
        (st = ref_signal_real_scalar(c, ref_in(c, 4), "upper_edge_hertz", &a->upper_hz)))
        return st;
    if (a->mel_bins < 0 || a->mel_bins > REF_SIGNAL_MAX_LENGTH)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "num_mel_bins %lld is outside [0, %lld]", (long long)a->mel_bins,
                       (long long)REF_SIGNAL_MAX_LENGTH);
    if (a->dft_length < 1 || a->dft_length > REF_SIGNAL_MAX_LENGTH)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "dft_length %lld is outside [1, %lld]", (long long)a->dft_length,
                       (long long)REF_SIGNAL_MAX_LENGTH);
    if (a->sample_rate < 1)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "sample_rate %lld is not positive", (long long)a->sample_rate);
    if (!(a->lower_hz >= 0) || !(a->upper_hz >= a->lower_hz) || isinf(a->upper_hz))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "edges [%g, %g] Hz are not a finite range from 0 up", a->lower_hz,
                       a->upper_hz);
    int64_t rows = a->dft_length / 2 + 1;
    if (a->mel_bins > 0 && rows > REF_SIGNAL_MAX_ELEMS / a->mel_bins)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "output would have more than %lld elements",
                       (long long)REF_SIGNAL_MAX_ELEMS);
    return NULL;
}

#define EDGE_LIMIT 4503599627370496.0 /* 2^52 */

static double hz_to_mel(double hz) { return 2595.0 * log10(1.0 + hz / 700.0); }
static double mel_to_hz(double mel) { return 700.0 * (pow(10.0, mel / 2595.0) - 1.0); }

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

tsr_status *ref_signal_mel(ref_ctx *c) {
    mel_args a = {0};
    tsr_status *st = read_args(c, &a);
    if (st) return st;
    int64_t type = ref_attr_int(c, "output_datatype", TSR_FLOAT);
    if (!ref_signal_output_type_ok(type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "output_datatype %lld is not supported", (long long)type);
    int64_t rows = a.dft_length / 2 + 1, cols = a.mel_bins;
    int64_t dims[2] = {rows, cols};
    tsr_tensor *Y;
    if ((st = ref_out(c, 0, (int32_t)type, 2, dims, &Y))) return st;
    if (cols == 0) return NULL;

    double *m = calloc((size_t)(rows * cols), sizeof *m);
    int64_t *edge = malloc(sizeof(int64_t) * (size_t)(cols + 2));
    if (!m || !edge) {
        free(m);
        free(edge);
        return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    }
    double low = hz_to_mel(a.lower_hz), high = hz_to_mel(a.upper_hz);
    double step = (high - low) / (double)(cols + 2);
    for (int64_t i = 0; i < cols + 2; i++) {
        double hz = mel_to_hz((double)i * step + low);
        double row = floor((double)(a.dft_length + 1) * hz / (double)a.sample_rate);
        /* Far-out edges only matter through their distance to the others,
         * which any value beyond 2^52 already makes enormous. */
        edge[i] = (int64_t)fmin(fmax(row, -EDGE_LIMIT), EDGE_LIMIT);
    }
    for (int64_t i = 0; i < cols; i++) {
        int64_t left = edge[i], center = edge[i + 1], right = edge[i + 2];
        /* Rows outside the spectrum (edges above the Nyquist frequency) are
         * skipped rather than indexed. */
        if (center == left) {
            if (center >= 0 && center < rows) m[center * cols + i] = 1.0;
        } else {
            for (int64_t j = max64(left, 0); j <= min64(center, rows - 1); j++)
                m[j * cols + i] = (double)(j - left) / (double)(center - left);
        }
        for (int64_t j = max64(center, 0); j < min64(right, rows); j++)
            m[j * cols + i] = (double)(right - j) / (double)(right - center);
    }
    for (int64_t k = 0; k < rows * cols; k++) ref_store(Y->elem_type, Y->data, (size_t)k, m[k]);
    free(m);
    free(edge);
    return NULL;
}
