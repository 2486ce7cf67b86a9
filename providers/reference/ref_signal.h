/*
 * Private to the signal-processing kernels (ref_ops_signal.c and
 * ref_signal_*.c): DFT, STFT, the window generators and MelWeightMatrix.
 * Transforms run in double whatever the element type, so float results are
 * correctly rounded rather than carrying float FFT error.
 */
#ifndef TESSERA_REF_SIGNAL_H
#define TESSERA_REF_SIGNAL_H

#include "ref.h"

/* Sizes read from tensors (dft_length, window size, mel bins, ...) are data:
 * an absurd one must fail cleanly rather than allocate without bound. */
#define REF_SIGNAL_MAX_LENGTH ((int64_t)1 << 24)
#define REF_SIGNAL_MAX_ELEMS ((int64_t)1 << 31)

#define REF_SIGNAL_PI 3.14159265358979323846

/* A complex DFT of one length n: radix-2 when n is a power of two, else
 * Bluestein's chirp-z algorithm over a power-of-two convolution. */
typedef struct ref_fft ref_fft;

/* NULL when out of memory; n must be in [1, REF_SIGNAL_MAX_LENGTH]. */
ref_fft *ref_fft_new(size_t n);
void ref_fft_free(ref_fft *f);
/* Transforms re/im (n values each) in place: X[k] = sum_j x[j] e^(-+2 pi i jk/n),
 * the sign + when `inverse`. Unnormalised: the caller divides by n. The
 * plan holds work buffers, so one plan serves one caller at a time. */
void ref_fft_run(ref_fft *f, double *re, double *im, bool inverse);

/* A one-element integer tensor (rank 0 or 1) as int64; `name` for errors. */
tsr_status *ref_signal_int_scalar(ref_ctx *c, const tsr_tensor *t, const char *name, int64_t *out);
/* A one-element numeric tensor as double. */
tsr_status *ref_signal_real_scalar(ref_ctx *c, const tsr_tensor *t, const char *name, double *out);
/* Whether `t` can be an output_datatype (a float or integer type). */
bool ref_signal_output_type_ok(int64_t t);
/* Claim-time check of an `output_datatype` attribute (default float). */
int ref_signal_check_output_type(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size);

tsr_status *ref_signal_dft(ref_ctx *c);
tsr_status *ref_signal_stft(ref_ctx *c);
tsr_status *ref_signal_hann(ref_ctx *c);
tsr_status *ref_signal_hamming(ref_ctx *c);
tsr_status *ref_signal_blackman(ref_ctx *c);
tsr_status *ref_signal_mel(ref_ctx *c);

#endif
