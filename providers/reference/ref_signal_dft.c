/*
 * DFT (opsets 17 and 20). X is [..., n, ..., 1 or 2]: the last axis holds a
 * real value or a (real, imaginary) pair, and the transform runs along
 * `axis` (an attribute before opset 20, an optional input from 20, default
 * 1 and -2), zero-padded or truncated to dft_length.
 *
 * onesided: a forward transform keeps bins [0, n/2]; an inverse one reads
 * those bins as the half of a Hermitian spectrum and returns the real signal
 * of length dft_length (default 2 * (bins - 1)), as numpy's irfft does.
 * Inverse transforms divide by dft_length.
 */
#include <stdlib.h>

#include "ref_signal.h"

typedef struct dft_plan {
    int64_t outer, inner;   /* elements before `axis`, and between it and the last */
    int64_t n_in, n_out;    /* lengths along `axis` */
    int64_t comp, out_comp; /* 1 (real) or 2 (complex) */
    int64_t len;            /* transform length */
    bool inverse, onesided;
} dft_plan;

static bool mul_ok(int64_t a, int64_t b, int64_t *out) { return !__builtin_mul_overflow(a, b, out); }

static tsr_status *read_axis(ref_ctx *c, int32_t rank, int64_t *axis) {
    int64_t a;
    if (ref_opset(c) >= 20) {
        a = -2;
        const tsr_tensor *A = ref_in(c, 2);
        if (A) {
            tsr_status *st = ref_signal_int_scalar(c, A, "axis", &a);
            if (st) return st;
        }
    } else {
        a = ref_attr_int(c, "axis", 1);
    }
    /* The last axis holds the (real, imaginary) pair: it cannot be transformed. */
    int64_t n = a < 0 ? a + rank : a;
    if (n < 0 || n > rank - 2)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld is outside [%d, -2] and [0, %d]", (long long)a,
                       -(int)rank, (int)rank - 2);
    *axis = n;
    return NULL;
}

static tsr_status *make_plan(ref_ctx *c, const tsr_tensor *X, int64_t axis, dft_plan *p) {
    int32_t r = X->rank;
    p->inverse = ref_attr_int(c, "inverse", 0) != 0;
    p->onesided = ref_attr_int(c, "onesided", 0) != 0;
    p->comp = X->dims[r - 1];
    p->n_in = X->dims[axis];
    p->outer = p->inner = 1;
    for (int32_t d = 0; d < r - 1; d++)
        if (d != axis && !mul_ok(d < axis ? p->outer : p->inner, X->dims[d], d < axis ? &p->outer : &p->inner))
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input shape is too large");
    bool irfft = p->inverse && p->onesided;
    const tsr_tensor *L = ref_in(c, 1);
    if (L) {
        tsr_status *st = ref_signal_int_scalar(c, L, "dft_length", &p->len);
        if (st) return st;
    } else {
        p->len = irfft ? 2 * (p->n_in - 1) : p->n_in;
    }
    if (!L && p->len < 1)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "axis %lld has %lld values: too few for a default dft_length",
                       (long long)axis, (long long)p->n_in);
    if (p->len < 1 || p->len > REF_SIGNAL_MAX_LENGTH)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "dft_length %lld is outside [1, %lld]", (long long)p->len,
                       (long long)REF_SIGNAL_MAX_LENGTH);
    p->n_out = (p->onesided && !p->inverse) ? p->len / 2 + 1 : p->len;
    p->out_comp = irfft ? 1 : 2;
    int64_t total;
    if (!mul_ok(p->outer, p->inner, &total) || !mul_ok(total, p->n_out * p->out_comp, &total) ||
        total > REF_SIGNAL_MAX_ELEMS)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "output would have more than %lld elements",
                       (long long)REF_SIGNAL_MAX_ELEMS);
    return NULL;
}

/* Loads line (o, i) into re/im, zero-padded to p->len; for irfft, the
 * half spectrum is mirrored into the full Hermitian one. */
static void load_line(const dft_plan *p, const tsr_tensor *X, int64_t o, int64_t i, double *re, double *im) {
    for (int64_t k = 0; k < p->len; k++) re[k] = im[k] = 0.0;
    int64_t n = p->n_in;
    if (p->inverse && p->onesided && n > p->len / 2 + 1) n = p->len / 2 + 1;
    if (n > p->len) n = p->len;
    for (int64_t j = 0; j < n; j++) {
        size_t at = (size_t)(((o * p->n_in + j) * p->inner + i) * p->comp);
        re[j] = ref_load(X->elem_type, X->data, at);
        im[j] = p->comp == 2 ? ref_load(X->elem_type, X->data, at + 1) : 0.0;
    }
    if (p->inverse && p->onesided) {
        for (int64_t k = 1; k < n; k++) {
            if (p->len - k == k) continue; /* the Nyquist bin is its own mirror */
            re[p->len - k] = re[k];
            im[p->len - k] = -im[k];
        }
    }
}

tsr_status *ref_signal_dft(ref_ctx *c) {
    const tsr_tensor *X = ref_in(c, 0);
    if (!X) return ref_err(c, TSR_ERR_INVALID_MODEL, "input is required");
    if (!ref_is_float(X->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "element type %d is not a float type", (int)X->elem_type);
    if (X->rank < 2 || X->rank > REF_MAX_RANK || (X->dims[X->rank - 1] != 1 && X->dims[X->rank - 1] != 2))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input must be [..., signal, 1 or 2] (real or complex)");
    int64_t axis = 0;
    dft_plan p = {0};
    tsr_status *st = read_axis(c, X->rank, &axis);
    if (st || (st = make_plan(c, X, axis, &p))) return st;

    int64_t dims[REF_MAX_RANK];
    for (int32_t d = 0; d < X->rank; d++) dims[d] = X->dims[d];
    dims[axis] = p.n_out;
    dims[X->rank - 1] = p.out_comp;
    tsr_tensor *Y;
    if ((st = ref_out(c, 0, X->elem_type, X->rank, dims, &Y))) return st;
    if (p.outer * p.inner == 0) return NULL;

    ref_fft *f = ref_fft_new((size_t)p.len);
    double *re = malloc(sizeof(double) * (size_t)p.len);
    double *im = malloc(sizeof(double) * (size_t)p.len);
    if (!f || !re || !im) {
        st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory for a length-%lld transform", (long long)p.len);
        goto done;
    }
    double scale = p.inverse ? 1.0 / (double)p.len : 1.0;
    for (int64_t o = 0; o < p.outer; o++) {
        for (int64_t i = 0; i < p.inner; i++) {
            load_line(&p, X, o, i, re, im);
            ref_fft_run(f, re, im, p.inverse);
            for (int64_t k = 0; k < p.n_out; k++) {
                size_t at = (size_t)(((o * p.n_out + k) * p.inner + i) * p.out_comp);
                ref_store(Y->elem_type, Y->data, at, re[k] * scale);
                if (p.out_comp == 2) ref_store(Y->elem_type, Y->data, at + 1, im[k] * scale);
            }
        }
    }
done:
    ref_fft_free(f);
    free(re);
    free(im);
    return st;
}
