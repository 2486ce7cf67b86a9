/*
 * Complex FFT of any length, in double.
 *
 * Power-of-two lengths use an iterative radix-2 transform. Other lengths
 * use Bluestein's identity jk = (j^2 + k^2 - (k-j)^2) / 2, which turns the
 * DFT into a convolution with the chirp e^(-pi i k^2 / n), computed as a
 * power-of-two FFT of length m >= 2n - 1. Every twiddle and chirp is
 * evaluated directly with cos/sin of an exactly reduced angle (k^2 mod 2n),
 * so errors do not accumulate with the index.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "ref_signal.h"

struct ref_fft {
    size_t n;              /* the transform length */
    size_t m;              /* the radix-2 length: n itself, or Bluestein's padded length */
    double *tw_re, *tw_im; /* m/2 twiddles e^(-2 pi i k / m) */
    /* Bluestein only (NULL when n is a power of two): */
    double *chirp_re, *chirp_im; /* n values e^(-pi i k^2 / n) */
    double *filt_re, *filt_im;   /* m: FFT of the conjugate chirp, wrapped */
    double *work_re, *work_im;   /* m */
};

static bool is_pow2(size_t n) { return n && (n & (n - 1)) == 0; }

static void radix2(const ref_fft *f, double *re, double *im) {
    size_t m = f->m;
    for (size_t i = 1, j = 0; i < m; i++) { /* bit-reversal permutation */
        size_t bit = m >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j |= bit;
        if (i < j) {
            double t = re[i];
            re[i] = re[j], re[j] = t;
            t = im[i];
            im[i] = im[j], im[j] = t;
        }
    }
    for (size_t len = 2; len <= m; len <<= 1) {
        size_t half = len / 2, step = m / len;
        for (size_t i = 0; i < m; i += len) {
            for (size_t j = 0; j < half; j++) {
                double wr = f->tw_re[j * step], wi = f->tw_im[j * step];
                double *ar = &re[i + j], *ai = &im[i + j];
                double *br = &re[i + j + half], *bi = &im[i + j + half];
                double vr = *br * wr - *bi * wi, vi = *br * wi + *bi * wr;
                *br = *ar - vr, *bi = *ai - vi;
                *ar += vr, *ai += vi;
            }
        }
    }
}

/* Forward radix-2 of length m, run inverse through conj(FFT(conj(x))). */
static void radix2_dir(const ref_fft *f, double *re, double *im, bool inverse) {
    if (inverse)
        for (size_t i = 0; i < f->m; i++) im[i] = -im[i];
    radix2(f, re, im);
    if (inverse)
        for (size_t i = 0; i < f->m; i++) im[i] = -im[i];
}

void ref_fft_free(ref_fft *f) {
    if (!f) return;
    free(f->tw_re);
    free(f->tw_im);
    free(f->chirp_re);
    free(f->chirp_im);
    free(f->filt_re);
    free(f->filt_im);
    free(f->work_re);
    free(f->work_im);
    free(f);
}

static double *zeros(size_t n) { return calloc(n ? n : 1, sizeof(double)); }

ref_fft *ref_fft_new(size_t n) {
    if (n == 0 || n > (size_t)REF_SIGNAL_MAX_LENGTH) return NULL;
    ref_fft *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->n = n;
    f->m = n;
    if (!is_pow2(n)) {
        f->m = 1;
        while (f->m < 2 * n - 1) f->m <<= 1;
    }
    size_t m = f->m;
    f->tw_re = zeros(m / 2);
    f->tw_im = zeros(m / 2);
    if (!f->tw_re || !f->tw_im) goto fail;
    for (size_t k = 0; k < m / 2; k++) {
        double a = -2.0 * REF_SIGNAL_PI * (double)k / (double)m;
        f->tw_re[k] = cos(a);
        f->tw_im[k] = sin(a);
    }
    if (m == n) return f;

    f->chirp_re = zeros(n);
    f->chirp_im = zeros(n);
    f->filt_re = zeros(m);
    f->filt_im = zeros(m);
    f->work_re = zeros(m);
    f->work_im = zeros(m);
    if (!f->chirp_re || !f->chirp_im || !f->filt_re || !f->filt_im || !f->work_re || !f->work_im) goto fail;
    for (size_t k = 0; k < n; k++) {
        /* k^2 mod 2n keeps the angle small; n <= 2^24 so k*k fits. */
        uint64_t q = ((uint64_t)k * k) % (2 * (uint64_t)n);
        double a = -REF_SIGNAL_PI * (double)q / (double)n;
        f->chirp_re[k] = cos(a);
        f->chirp_im[k] = sin(a);
    }
    /* The convolution filter b[j] = conj(chirp[|j|]), indices taken mod m. */
    f->filt_re[0] = f->chirp_re[0];
    f->filt_im[0] = -f->chirp_im[0];
    for (size_t k = 1; k < n; k++) {
        f->filt_re[k] = f->filt_re[m - k] = f->chirp_re[k];
        f->filt_im[k] = f->filt_im[m - k] = -f->chirp_im[k];
    }
    radix2(f, f->filt_re, f->filt_im);
    return f;
fail:
    ref_fft_free(f);
    return NULL;
}

static void bluestein(ref_fft *f, double *re, double *im) {
    size_t n = f->n, m = f->m;
    double *wr = f->work_re, *wi = f->work_im;
    for (size_t k = 0; k < m; k++) wr[k] = wi[k] = 0.0;
    for (size_t k = 0; k < n; k++) {
        wr[k] = re[k] * f->chirp_re[k] - im[k] * f->chirp_im[k];
        wi[k] = re[k] * f->chirp_im[k] + im[k] * f->chirp_re[k];
    }
    radix2(f, wr, wi);
    for (size_t k = 0; k < m; k++) {
        double r = wr[k] * f->filt_re[k] - wi[k] * f->filt_im[k];
        double i = wr[k] * f->filt_im[k] + wi[k] * f->filt_re[k];
        wr[k] = r, wi[k] = i;
    }
    radix2_dir(f, wr, wi, true);
    double scale = 1.0 / (double)m;
    for (size_t k = 0; k < n; k++) {
        double r = wr[k] * scale, i = wi[k] * scale;
        re[k] = r * f->chirp_re[k] - i * f->chirp_im[k];
        im[k] = r * f->chirp_im[k] + i * f->chirp_re[k];
    }
}

void ref_fft_run(ref_fft *f, double *re, double *im, bool inverse) {
    if (f->m == f->n) {
        radix2_dir(f, re, im, inverse);
        return;
    }
    if (inverse)
        for (size_t k = 0; k < f->n; k++) im[k] = -im[k];
    bluestein(f, re, im);
    if (inverse)
        for (size_t k = 0; k < f->n; k++) im[k] = -im[k];
}
