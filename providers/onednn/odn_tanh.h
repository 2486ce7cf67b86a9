/* tanh over float arrays (odn_tanh.c), for the provider's Tanh step: 8
 * lanes on AVX2+FMA, libm's tanhf elsewhere. */
#ifndef TESSERA_ODN_TANH_H
#define TESSERA_ODN_TANH_H
#include <stdint.h>

/* y[i] = tanh(x[i]) for i < count (in place allowed): within 2.5 ulp of
 * the exact value on AVX2 (checked against double tanh by check/tanh.c);
 * NaN stays NaN, +-inf and every |x| >= 9.1 give +-1 exactly, -0 gives -0. */
void odn_tanh(const float *x, float *y, int64_t count);

#endif
