/*
 * The score transforms ai.onnx.ml's tree and linear models apply last:
 * SOFTMAX, LOGISTIC, SOFTMAX_ZERO (softmax over the non-zero scores, zeros
 * staying zero) and PROBIT (the standard normal quantile of the score).
 */
#include <math.h>

#include "ref_ml.h"

/* Inverse of erf on (-1, 1): Winitzki's closed-form estimate, then Newton
 * steps on erf itself to reach double precision. */
static double erf_inverse(double y) {
    if (y <= -1.0) return -INFINITY;
    if (y >= 1.0) return INFINITY;
    const double a = 0.147, pi = 3.14159265358979323846;
    double w = log((1.0 - y) * (1.0 + y)), t = 2.0 / (pi * a) + w / 2.0;
    double x = sqrt(sqrt(t * t - w / a) - t);
    if (y < 0) x = -x;
    for (int i = 0; i < 3; i++) {
        double d = 2.0 / sqrt(pi) * exp(-x * x);
        if (d == 0.0) break;
        x -= (erf(x) - y) / d;
    }
    return x;
}

static void softmax(double *v, size_t n, bool skip_zeros) {
    double mx = -INFINITY, sum = 0.0;
    for (size_t i = 0; i < n; i++)
        if (v[i] > mx) mx = v[i];
    for (size_t i = 0; i < n; i++) {
        v[i] = skip_zeros && v[i] == 0.0 ? 0.0 : exp(v[i] - mx);
        sum += v[i];
    }
    if (sum > 0.0)
        for (size_t i = 0; i < n; i++) v[i] /= sum;
}

void ref_ml_post_transform(int64_t transform, double *row, size_t n) {
    switch (transform) {
    case 1: softmax(row, n, false); break;
    case 2:
        for (size_t i = 0; i < n; i++) row[i] = 1.0 / (1.0 + exp(-row[i]));
        break;
    case 3: softmax(row, n, true); break;
    case 4:
        for (size_t i = 0; i < n; i++) row[i] = sqrt(2.0) * erf_inverse(2.0 * row[i] - 1.0);
        break;
    default: break;
    }
}
