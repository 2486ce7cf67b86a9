/* The 8-lane tanh (odn_tanh.c) against libm's double tanh: every 61st
 * float of [-12, 12] (36 M, all binades, subnormals included), every float
 * within 20000 ulp of the split between its two forms (0.625), of 9.1
 * (where it reaches 1) and of 43.6 (exp's underflow), each within 2.5 ulp;
 * NaN, +-inf, -0, tiny and huge values exactly; tails of 1 to 17 elements
 * from unaligned addresses and in place the same as a full run.
 * `onednn_tanh all` checks every float of [-12, 12] (minutes). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../odn_tanh.h"

static float from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* |got - want| in units of float's spacing at want */
static double ulps(float got, double want) {
    int e;
    frexp(want, &e);
    double ulp = ldexp(1.0, e - 24);
    if (ulp < 0x1p-149) ulp = 0x1p-149;
    return fabs((double)got - want) / ulp;
}

static double worst = 0;
static float worst_x = 0;

/* tanh of count floats from bit pattern `first` on, every `step`th */
static void sweep(uint32_t first, uint32_t last, uint32_t step) {
    enum { B = 4096 };
    float x[B], y[B];
    for (uint64_t b = first; b <= last;) {
        int k = 0;
        for (; k < B && b <= last; k++, b += step) x[k] = from_bits((uint32_t)b);
        odn_tanh(x, y, k);
        for (int j = 0; j < k; j++) {
            double e = ulps(y[j], tanh((double)x[j]));
            if (e > worst) worst = e, worst_x = x[j];
        }
    }
}

static int specials(void) {
    const float x[] = {NAN, INFINITY, -INFINITY, -0.0f, 1e-30f, -1e-40f, -3e38f, 10.0f};
    const float want[] = {NAN, 1.0f, -1.0f, -0.0f, 1e-30f, -1e-40f, -1.0f, 1.0f};
    float y[8];
    odn_tanh(x, y, 8);
    int bad = 0;
    for (int i = 0; i < 8; i++) {
        bool same = isnan(want[i]) ? isnan(y[i]) : y[i] == want[i] && signbit(y[i]) == signbit(want[i]);
        if (!same) printf("FAIL tanh(%g) = %g, want %g\n", x[i], y[i], want[i]), bad++;
    }
    return bad;
}

static int tails(void) {
    float x[40], full[40], part[40];
    for (int i = 0; i < 40; i++) x[i] = (float)(i - 20) * 0.29f;
    odn_tanh(x, full, 40);
    int bad = 0;
    for (int off = 0; off < 3; off++)
        for (int n = 1; n <= 17; n++) {
            for (int i = 0; i < 40; i++) part[i] = -7.0f;
            odn_tanh(x + off, part + off, n);
            for (int i = 0; i < 40; i++) {
                float want = i >= off && i < off + n ? full[i] : -7.0f;
                if (part[i] != want) bad++;
            }
            memcpy(part, x, sizeof x);
            odn_tanh(part + off, part + off, n); /* in place */
            for (int i = off; i < off + n; i++)
                if (part[i] != full[i]) bad++;
        }
    if (bad) printf("FAIL: %d tail elements differ from a full run\n", bad);
    return bad;
}

int main(int argc, char **argv) {
    bool all = argc > 1 && strcmp(argv[1], "all") == 0;
    uint32_t top = 0x41400000u, step = all ? 1 : 61;
    sweep(0, top, step);
    sweep(0x80000000u, 0x80000000u | top, step);
    const float edges[] = {0.625f, -0.625f, 9.1f, -9.1f, 43.6f, -43.6f};
    for (int i = 0; i < 6; i++) {
        uint32_t u;
        memcpy(&u, &edges[i], sizeof u);
        sweep(u - 20000, u + 20000, 1);
    }
    int bad = specials() + tails();
    printf("worst %.3f ulp at %.9g\n", worst, worst_x);
    if (worst > 2.5) printf("FAIL: above 2.5 ulp\n"), bad++;
    return bad ? 1 : 0;
}
