/* erf over float arrays (odn_erf.c), for the Erf step of the oneDNN
 * provider: 8 lanes on AVX2+FMA, libm's erff elsewhere. */
#ifndef TESSERA_ODN_ERF_H
#define TESSERA_ODN_ERF_H
#include <stdint.h>

/* y[i] = erf(x[i]) for i < count (in place allowed): within 1.4 ulp of
 * the exact value on AVX2 (checked against double erf by check/erf.c);
 * NaN stays NaN, +-inf gives +-1, -0 gives -0. */
void odn_erf(const float *x, float *y, int64_t count);

#endif
