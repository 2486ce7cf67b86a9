/*
 * Helpers shared by the neural-network kernels (ref_ops_nn.c, ref_nn_*.c):
 * float/double working buffers for the float family of element types, and
 * the GEMM loop that Conv, ConvTranspose, MatMul and Gemm all run on.
 *
 * The kernels compute in float for float, float16 and bfloat16 and in double
 * for double, so a float tensor is used in place and only the 16-bit types
 * pay for a conversion; the float GEMM's sums run in double
 * (ref_nn_sgemm_wide, ref_nn_wide.c).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ref_nn.h"

/* Used only here (the kernels call ref_nn_sgemm_run, ref_nn_dgemm_run). */
void ref_nn_dgemm(int64_t m, int64_t n, int64_t k, const double *a, int64_t lda, const double *b, int64_t ldb,
                  double *c, int64_t ldc);

/* Reads t as floats: *view points at t's own data when it already holds
 * floats, else at *owned, a converted copy the caller frees. */
tsr_status *ref_nn_f32_view(ref_ctx *c, const tsr_tensor *t, const float **view, float **owned) {
    *owned = NULL;
    if (t->elem_type == TSR_FLOAT) {
        *view = (const float *)t->data;
        return NULL;
    }
    size_t n = (size_t)ref_numel(t);
    float *buf = malloc((n ? n : 1) * sizeof *buf);
    if (!buf) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory converting an input to float");
    if (t->elem_type == TSR_FLOAT16) {
        const uint16_t *h = t->data;
        for (size_t i = 0; i < n; i++) buf[i] = ref_half_to_float(h[i]);
    } else if (t->elem_type == TSR_BFLOAT16) {
        const uint16_t *h = t->data;
        for (size_t i = 0; i < n; i++) buf[i] = ref_bf16_to_float(h[i]);
    } else {
        for (size_t i = 0; i < n; i++) buf[i] = (float)ref_load(t->elem_type, t->data, i);
    }
    *owned = buf;
    *view = buf;
    return NULL;
}

/* Like ref_nn_f32_view, for double. */
tsr_status *ref_nn_f64_view(ref_ctx *c, const tsr_tensor *t, const double **view, double **owned) {
    *owned = NULL;
    if (t->elem_type == TSR_DOUBLE) {
        *view = (const double *)t->data;
        return NULL;
    }
    tsr_status *st = ref_tensor_f64(c, t, owned);
    *view = *owned;
    return st;
}

/* Writes n floats into t, converting to t's element type. */
void ref_nn_f32_store(tsr_tensor *t, const float *src, size_t n) {
    if (t->elem_type == TSR_FLOAT) {
        if (n && (const void *)src != t->data) memcpy(t->data, src, n * sizeof *src);
    } else if (t->elem_type == TSR_FLOAT16) {
        uint16_t *h = t->data;
        for (size_t i = 0; i < n; i++) h[i] = ref_float_to_half(src[i]);
    } else if (t->elem_type == TSR_BFLOAT16) {
        uint16_t *h = t->data;
        for (size_t i = 0; i < n; i++) h[i] = ref_float_to_bf16(src[i]);
    } else {
        for (size_t i = 0; i < n; i++) ref_store(t->elem_type, t->data, i, src[i]);
    }
}

/* Writes n doubles into t, converting to t's element type. */
void ref_nn_f64_store(tsr_tensor *t, const double *src, size_t n) {
    if (t->elem_type == TSR_DOUBLE) {
        if (n && (const void *)src != t->data) memcpy(t->data, src, n * sizeof *src);
    } else if (t->elem_type == TSR_FLOAT) {
        float *f = t->data;
        for (size_t i = 0; i < n; i++) f[i] = (float)src[i];
    } else {
        for (size_t i = 0; i < n; i++) ref_store(t->elem_type, t->data, i, src[i]);
    }
}

/* Elements [off, off + n) of a numeric tensor as doubles. Kernels that
 * work slice by slice use this instead of a copy of the whole tensor, so
 * their working set stays in cache. */
void ref_nn_get_f64(const tsr_tensor *t, size_t off, size_t n, double *dst) {
    if (t->elem_type == TSR_FLOAT) {
        const float *f = (const float *)t->data + off;
        for (size_t i = 0; i < n; i++) dst[i] = f[i];
    } else if (t->elem_type == TSR_DOUBLE) {
        if (n) memcpy(dst, (const double *)t->data + off, n * sizeof *dst);
    } else {
        for (size_t i = 0; i < n; i++) dst[i] = ref_load(t->elem_type, t->data, off + i);
    }
}

/*
 * C[m x n] += A[m x k] * B[k x n], all row-major with leading dimensions.
 *
 * A register-blocked kernel updates a 4 x W block of C (W = two vectors of
 * 32 bytes: 8 doubles): per step of k it reads one W-wide
 * slice of a row of B and four values of A, and does 4W multiply-adds into
 * accumulators held in vector registers; each C element's sum runs over k
 * in order within a block of KC, and blocks are added in order. The column
 * strip of B (KC x W) stays in L1 while the
 * kernel walks down all rows of A. gcc/clang vector extensions say "vector"
 * directly instead of hoping the auto-vectoriser keeps the accumulators in
 * registers (gcc -O2 does not).
 */
/* NN_GEMM_KC and NN_CLONES: ref_nn.h. */

/* Unaligned vector load and add-store through memcpy (one instruction
 * each); macros, since passing vectors to functions would tie the baseline
 * build to an AVX calling convention. */
#define NN_VLD(v, p) memcpy(&(v), (p), sizeof(v))
#define NN_VADDST(p, acc)                                                                                              \
    do {                                                                                                               \
        __typeof__(acc) t_;                                                                                            \
        memcpy(&t_, (p), sizeof t_);                                                                                   \
        t_ += (acc);                                                                                                   \
        memcpy((p), &t_, sizeof t_);                                                                                   \
    } while (0)

/* Every lane of v (four: the one instance, double in 32 bytes) set to x:
 * one broadcast load. (z + x, a vector of zeros plus x, costs a scalar add
 * on the adders the kernel is bound by, and only turns -0 into +0, which
 * no sum here can tell: the sums start at +0.) */
#define NN_VSPLAT(v, x)                                                                                                \
    do {                                                                                                               \
        _Static_assert(sizeof(v) == 4 * sizeof(x), "four lanes");                                                      \
        __typeof__(x) s_ = (x);                                                                                        \
        (v) = (__typeof__(v)){s_, s_, s_, s_};                                                                         \
    } while (0)

#define NN_DEFINE_GEMM(NAME, T, V)                                                                                     \
    enum { NAME##_L = (int)(sizeof(V) / sizeof(T)), NAME##_W = 2 * NAME##_L };                                         \
    NN_CLONES static void NAME##_4xw(int64_t kb, const T *restrict a, int64_t lda, const T *restrict b, int64_t ldb,   \
                                     T *restrict c, int64_t ldc) {                                                     \
        V z = {0};                                                                                                     \
        V c00 = z, c01 = z, c10 = z, c11 = z, c20 = z, c21 = z, c30 = z, c31 = z;                                      \
        for (int64_t p = 0; p < kb; p++) {                                                                             \
            const T *bp = b + p * ldb;                                                                                 \
            V b0, b1;                                                                                                  \
            NN_VLD(b0, bp);                                                                                            \
            NN_VLD(b1, bp + NAME##_L);                                                                                 \
            V a0, a1, a2, a3;                                                                                          \
            NN_VSPLAT(a0, a[p]);                                                                                       \
            NN_VSPLAT(a1, a[lda + p]);                                                                                 \
            NN_VSPLAT(a2, a[2 * lda + p]);                                                                             \
            NN_VSPLAT(a3, a[3 * lda + p]);                                                                             \
            c00 += a0 * b0;                                                                                            \
            c01 += a0 * b1;                                                                                            \
            c10 += a1 * b0;                                                                                            \
            c11 += a1 * b1;                                                                                            \
            c20 += a2 * b0;                                                                                            \
            c21 += a2 * b1;                                                                                            \
            c30 += a3 * b0;                                                                                            \
            c31 += a3 * b1;                                                                                            \
        }                                                                                                              \
        T *r0 = c, *r1 = c + ldc, *r2 = c + 2 * ldc, *r3 = c + 3 * ldc;                                                \
        NN_VADDST(r0, c00);                                                                                            \
        NN_VADDST(r0 + NAME##_L, c01);                                                                                 \
        NN_VADDST(r1, c10);                                                                                            \
        NN_VADDST(r1 + NAME##_L, c11);                                                                                 \
        NN_VADDST(r2, c20);                                                                                            \
        NN_VADDST(r2 + NAME##_L, c21);                                                                                 \
        NN_VADDST(r3, c30);                                                                                            \
        NN_VADDST(r3 + NAME##_L, c31);                                                                                 \
    }                                                                                                                  \
    NN_CLONES static void NAME##_1xw(int64_t kb, const T *restrict a, const T *restrict b, int64_t ldb,                \
                                     T *restrict c) {                                                                  \
        V z = {0};                                                                                                     \
        V c00 = z, c01 = z;                                                                                            \
        for (int64_t p = 0; p < kb; p++) {                                                                             \
            const T *bp = b + p * ldb;                                                                                 \
            V b0, b1;                                                                                                  \
            NN_VLD(b0, bp);                                                                                            \
            NN_VLD(b1, bp + NAME##_L);                                                                                 \
            V a0;                                                                                                      \
            NN_VSPLAT(a0, a[p]);                                                                                       \
            c00 += a0 * b0;                                                                                            \
            c01 += a0 * b1;                                                                                            \
        }                                                                                                              \
        NN_VADDST(c, c00);                                                                                             \
        NN_VADDST(c + NAME##_L, c01);                                                                                  \
    }                                                                                                                  \
    void NAME(int64_t m, int64_t n, int64_t k, const T *a, int64_t lda, const T *b, int64_t ldb, T *c, int64_t ldc) {  \
        int64_t nw = n - n % NAME##_W;                                                                                 \
        /* The KC x W strip of B, packed contiguous when several row blocks \
         * read it: rows of B ldb apart map to few L1 sets (ldb = 256 \
         * doubles: two) and would be fetched from L2 again for every \
         * 4 rows. The arithmetic is the same either way. */                                          \
        T pack[NN_GEMM_KC * NAME##_W];                                                                                 \
        bool packed = m >= 8;                                                                                          \
        for (int64_t k0 = 0; k0 < k; k0 += NN_GEMM_KC) {                                                               \
            int64_t kb = k - k0 < NN_GEMM_KC ? k - k0 : NN_GEMM_KC;                                                    \
            for (int64_t j = 0; j < nw; j += NAME##_W) {                                                               \
                const T *bs = b + k0 * ldb + j;                                                                        \
                int64_t lds = ldb;                                                                                     \
                if (packed) {                                                                                          \
                    for (int64_t p = 0; p < kb; p++) memcpy(pack + p * NAME##_W, bs + p * ldb, sizeof(T) * NAME##_W);  \
                    bs = pack;                                                                                         \
                    lds = NAME##_W;                                                                                    \
                }                                                                                                      \
                int64_t i = 0;                                                                                         \
                for (; i + 4 <= m; i += 4) NAME##_4xw(kb, a + i * lda + k0, lda, bs, lds, c + i * ldc + j, ldc);       \
                for (; i < m; i++) NAME##_1xw(kb, a + i * lda + k0, bs, lds, c + i * ldc + j);                         \
            }                                                                                                          \
            /* The last n % W columns, plainly. */                                                                     \
            for (int64_t i = 0; i < m && nw < n; i++)                                                                  \
                for (int64_t p = 0; p < kb; p++) {                                                                     \
                    T av = a[i * lda + k0 + p];                                                                        \
                    const T *bp = b + (k0 + p) * ldb;                                                                  \
                    for (int64_t j = nw; j < n; j++) c[i * ldc + j] += av * bp[j];                                     \
                }                                                                                                      \
        }                                                                                                              \
    }

/* The double GEMM; float runs on ref_nn_sgemm_wide (ref_nn_wide.c), whose
 * kernels are these with float operands and double sums: a float
 * instance of this macro would accumulate in float. */
typedef double nn_vf64 __attribute__((vector_size(32)));
NN_DEFINE_GEMM(ref_nn_dgemm, double, nn_vf64)

/*
 * The GEMMs on `threads` threads: C is cut into bands of columns (or, when
 * it is too narrow, of rows) and each thread runs the serial GEMM on its
 * own band. Every element's sum is computed exactly as in the serial code,
 * so results do not depend on the thread count. Small products, and
 * threads <= 1 (the provider's default), stay on the calling thread; if a
 * thread cannot be started its band runs on the calling thread too.
 */
#define NN_MT_MAX 64
#define NN_MT_MIN_WORK ((int64_t)1 << 20) /* multiply-adds worth a thread */

/* The element types of a GEMM: float, double, or float operands with a
 * double C (ConvTranspose's columns, summed before one rounding). */
enum nn_gemm_kind { NN_GEMM_S, NN_GEMM_D, NN_GEMM_SD };

typedef struct nn_gemm_job {
    enum nn_gemm_kind kind;
    int64_t m, n, k, lda, ldb, ldc;
    const void *a, *b;
    void *c;
} nn_gemm_job;

static void *nn_gemm_job_run(void *arg) {
    const nn_gemm_job *j = arg;
    if (j->kind == NN_GEMM_D) ref_nn_dgemm(j->m, j->n, j->k, j->a, j->lda, j->b, j->ldb, j->c, j->ldc);
    else if (j->kind == NN_GEMM_SD) ref_nn_sgemm_wide_d(j->m, j->n, j->k, j->a, j->lda, j->b, j->ldb, j->c, j->ldc);
    else ref_nn_sgemm_wide(j->m, j->n, j->k, j->a, j->lda, j->b, j->ldb, j->c, j->ldc);
    return NULL;
}

static void nn_gemm_mt(enum nn_gemm_kind kind, int threads, int64_t m, int64_t n, int64_t k, const void *a, int64_t lda,
                       const void *b, int64_t ldb, void *c, int64_t ldc) {
    size_t es = kind == NN_GEMM_D ? sizeof(double) : sizeof(float);
    size_t esc = kind == NN_GEMM_S ? sizeof(float) : sizeof(double);
    int64_t work = m * n * k;
    int t = threads < NN_MT_MAX ? threads : NN_MT_MAX;
    if (t > work / NN_MT_MIN_WORK) t = (int)(work / NN_MT_MIN_WORK);
    /* Column bands are multiples of 16 so each keeps whole vector strips;
     * row bands multiples of 4 for the 4-row kernel. */
    bool by_cols = n / 16 >= t;
    if (!by_cols && m / 4 < t) t = (int)(m / 4 > n / 16 ? m / 4 : n / 16);
    if (t <= 1) {
        nn_gemm_job j = {kind, m, n, k, lda, ldb, ldc, a, b, c};
        nn_gemm_job_run(&j);
        return;
    }
    by_cols = n / 16 >= t;
    nn_gemm_job jobs[NN_MT_MAX];
    pthread_t tid[NN_MT_MAX];
    bool started[NN_MT_MAX];
    int64_t units = by_cols ? n / 16 : m / 4, done = 0;
    for (int i = 0; i < t; i++) {
        int64_t take = units / t + (i < units % t);
        int64_t lo = done * (by_cols ? 16 : 4);
        int64_t hi = i == t - 1 ? (by_cols ? n : m) : (done + take) * (by_cols ? 16 : 4);
        done += take;
        nn_gemm_job *j = &jobs[i];
        *j = (nn_gemm_job){kind, m, n, k, lda, ldb, ldc, a, b, c};
        if (by_cols) {
            j->n = hi - lo;
            j->b = (const char *)b + (size_t)lo * es;
            j->c = (char *)c + (size_t)lo * esc;
        } else {
            j->m = hi - lo;
            j->a = (const char *)a + (size_t)(lo * lda) * es;
            j->c = (char *)c + (size_t)(lo * ldc) * esc;
        }
        /* The calling thread takes the last band itself. */
        started[i] = i < t - 1 && pthread_create(&tid[i], NULL, nn_gemm_job_run, j) == 0;
    }
    for (int i = 0; i < t; i++)
        if (!started[i]) nn_gemm_job_run(&jobs[i]);
    for (int i = 0; i < t; i++)
        if (started[i]) pthread_join(tid[i], NULL);
}

/* The GEMM in bands of rows, each about REF_WORK_PER_CHECK multiply-adds,
 * with a look at the host's stop flag between bands: a MatMul or Conv of
 * hours (valid, within every size limit) ends at the run's deadline or on
 * cancellation instead of running on. Every element is summed exactly as in
 * one call, so banding changes no result. */
static tsr_status *nn_gemm_run(ref_ctx *ctx, enum nn_gemm_kind kind, int64_t m, int64_t n, int64_t k, const void *a,
                               int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc) {
    size_t es = kind == NN_GEMM_D ? sizeof(double) : sizeof(float);
    size_t esc = kind == NN_GEMM_S ? sizeof(float) : sizeof(double);
    int64_t per_row = n * k > 0 ? n * k : 1;
    int64_t band = REF_WORK_PER_CHECK / per_row;
    band = band < 4 ? 4 : band / 4 * 4; /* whole strips of the 4-row kernel */
    for (int64_t i0 = 0; i0 < m; i0 += band) {
        int64_t rows = m - i0 < band ? m - i0 : band;
        if (i0 && ref_work(ctx, REF_WORK_PER_CHECK)) return ref_stopped(ctx);
        nn_gemm_mt(kind, ctx->threads, rows, n, k, (const char *)a + (size_t)(i0 * lda) * es, lda, b, ldb,
                   (char *)c + (size_t)(i0 * ldc) * esc, ldc);
    }
    return NULL;
}

tsr_status *ref_nn_sgemm_run(ref_ctx *ctx, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
                             int64_t ldb, float *c, int64_t ldc) {
    return nn_gemm_run(ctx, NN_GEMM_S, m, n, k, a, lda, b, ldb, c, ldc);
}

tsr_status *ref_nn_sgemm_run_d(ref_ctx *ctx, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                               const float *b, int64_t ldb, double *c, int64_t ldc) {
    return nn_gemm_run(ctx, NN_GEMM_SD, m, n, k, a, lda, b, ldb, c, ldc);
}

tsr_status *ref_nn_dgemm_run(ref_ctx *ctx, int64_t m, int64_t n, int64_t k, const double *a, int64_t lda,
                             const double *b, int64_t ldb, double *c, int64_t ldc) {
    return nn_gemm_run(ctx, NN_GEMM_D, m, n, k, a, lda, b, ldb, c, ldc);
}
