/* The fused attention kernel (odn_attention.c) against a double-precision
 * reference computed here from the operands' strides alone: scores in
 * double rounded to float, the modifiers in float as the ONNX operators
 * compute them one by one, softmax and the second product in double.
 * Shapes at and around the kernel's 6-row tiles, 16-column panels,
 * 48-row blocks and 256-column chunks of K; 0 to 2 batch dims with broadcast operands; transposed and
 * head-interleaved Q/K/V/O; every modifier alone and combined; masks of
 * -inf and -3.4e38, fully masked rows (NaN, as Softmax gives); 1, 2 and 3
 * threads giving the same bits; scratch of exactly the bytes asked for;
 * O's padding untouched; supported() refusing bad shapes.
 *   onednn_attention              the checks (exit 77 without AVX2/FMA)
 *   onednn_attention bench B H TQ TK D THREADS RUNS
 *       Q, O [B,H,TQ,D], K [B,H,D,TK], V [B,H,TK,D], scores divided by
 *       sqrt(D) plus a [B,1,1,TK] mask; best and median ms of RUNS and
 *       GFLOP/s (4 B H TQ TK D flops). */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../odn_attention.h"
#include "../odn_sgemm.h"

#define SENTINEL 12345.5f
#define GUARD_BYTES 256
#define BIG 3.4e38f

static float uniform(unsigned *state) {
    *state = *state * 1103515245u + 12345u;
    return (float)((*state >> 8) & 0xFFFF) / 32768.0f - 1.0f;
}

/* 64-byte aligned, or NULL. */
static void *aligned(size_t bytes) { return aligned_alloc(64, (bytes + 63) / 64 * 64 + 64); }

/* Storage orders of an operand's dims (batch dims 0..nb-1, row nb, column
 * nb+1), outermost first. */
enum { PLAIN, TRANS, HEADS, HEADS_T };

/* A tensor of the stack laid out in its own storage: dims in `keep` (bit
 * per dim) are full size, the others size 1 (broadcast, stride 0). */
typedef struct layout {
    int order;
    unsigned keep;
    int64_t pad; /* extra elements per innermost run */
} layout;

#define ALL 0x3Fu
#define ROWCOL(nb) (3u << (nb))

typedef struct acase {
    const char *name;
    int nb;
    int64_t batch[ODN_ATT_MAX_BATCH];
    int64_t tq, tk, d, dv;
    layout q, k, v, o;
    int nmods;
    struct mod_spec {
        odn_att_mod_kind kind;
        float value;
        bool when;
        layout t;
        int gen;
    } mods[ODN_ATT_MAX_MODS];
} acase;

/* Values of a modifier's operand, by (query row, key column). */
enum {
    GEN_BIAS,
    GEN_MASK_INF,
    GEN_MASK_BIG,
    GEN_CAUSAL_INF,
    GEN_CAUSAL_BIG,
    GEN_DEADROW_INF,
    GEN_BOOL,
    GEN_BOOL_DEADROW
};

static void dims_of(const acase *c, int64_t rows, int64_t cols, int64_t *dims) {
    for (int i = 0; i < c->nb; i++) dims[i] = c->batch[i];
    dims[c->nb] = rows;
    dims[c->nb + 1] = cols;
}

static void order_of(int order, int nb, int *ord) {
    int n = 0;
    for (int i = 0; i < nb - (order >= HEADS); i++) ord[n++] = i;
    if (order == PLAIN || order == HEADS) ord[n++] = nb;
    else ord[n++] = nb + 1;
    if (order >= HEADS) ord[n++] = nb - 1;
    ord[n++] = order == PLAIN || order == HEADS ? nb + 1 : nb;
}

/* Strides of each dim (0 where broadcast) and the elements of storage. */
static size_t strides_of(const acase *c, const layout *l, int64_t rows, int64_t cols, int64_t *stride) {
    int64_t dims[ODN_ATT_MAX_BATCH + 2];
    int ord[ODN_ATT_MAX_BATCH + 2], n = c->nb + 2;
    dims_of(c, rows, cols, dims);
    order_of(l->order, c->nb, ord);
    int64_t acc = 1;
    for (int x = n - 1; x >= 0; x--) {
        int dim = ord[x];
        int64_t size = (l->keep >> dim) & 1 ? dims[dim] : 1;
        stride[dim] = size == 1 ? 0 : acc;
        acc *= size + (x == n - 1 ? l->pad : 0);
    }
    return (size_t)acc;
}

static odn_att_operand operand_of(const acase *c, const layout *l, int64_t rows, int64_t cols, const void *data,
                                  size_t *elements) {
    int64_t st[ODN_ATT_MAX_BATCH + 2];
    odn_att_operand op = {data, {0}, 0, 0};
    *elements = strides_of(c, l, rows, cols, st);
    for (int i = 0; i < c->nb; i++) op.bstride[i] = st[i];
    op.rs = st[c->nb];
    op.cs = st[c->nb + 1];
    return op;
}

static int64_t nbatch_of(const acase *c) {
    int64_t n = 1;
    for (int i = 0; i < c->nb; i++) n *= c->batch[i];
    return n;
}

static int64_t offset_of(const acase *c, const odn_att_operand *op, int64_t b, int64_t r, int64_t col) {
    int64_t off = r * op->rs + col * op->cs;
    for (int i = c->nb - 1; i >= 0; i--) {
        off += b % c->batch[i] * op->bstride[i];
        b /= c->batch[i];
    }
    return off;
}

/* Whether column j of row i is masked by generator g. */
static bool masked(int g, int64_t i, int64_t j) {
    switch (g) {
    case GEN_CAUSAL_INF:
    case GEN_CAUSAL_BIG: return j > i;
    case GEN_DEADROW_INF:
    case GEN_BOOL_DEADROW: return i == 2 || j % 3 == 1;
    case GEN_BOOL: return j % 4 == 3;
    default: return j % 3 == 1;
    }
}

/* Fills a modifier's operand; (i, j) from each element's coordinates. */
static void fill_mod(const acase *c, const struct mod_spec *ms, const odn_att_operand *op, void *data, size_t n,
                     unsigned *seed) {
    for (size_t e = 0; e < n; e++) {
        if (ms->kind == ODN_ATT_SELECT) ((uint8_t *)data)[e] = 0x5A;
        else ((float *)data)[e] = 2.0f * uniform(seed);
    }
    if (ms->gen == GEN_BIAS) return;
    for (int64_t b = 0; b < nbatch_of(c); b++)
        for (int64_t i = 0; i < c->tq; i++)
            for (int64_t j = 0; j < c->tk; j++) {
                int64_t at = offset_of(c, op, b, i, j);
                bool m = masked(ms->gen, op->rs ? i : 0, op->cs ? j : 0);
                if (ms->kind == ODN_ATT_SELECT)
                    ((uint8_t *)data)[at] = m == ms->when ? (uint8_t)(1 + (j % 3) * 127) : 0;
                else {
                    float fill = ms->gen == GEN_MASK_BIG || ms->gen == GEN_CAUSAL_BIG ? -BIG : -INFINITY;
                    ((float *)data)[at] = m ? fill : 0.0f;
                }
            }
}

typedef struct operands {
    odn_attention a;
    float *q, *k, *v, *o;
    void *t[ODN_ATT_MAX_MODS];
    size_t on;
} operands;

static float *random_floats(size_t n, float scale, unsigned *seed) {
    float *p = aligned(sizeof(float) * n);
    for (size_t i = 0; p && i < n; i++) p[i] = scale * uniform(seed);
    return p;
}

static bool build(const acase *c, operands *x) {
    unsigned seed = (unsigned)(c->tq * 7 + c->tk * 131 + c->d * 17 + c->dv * 3 + c->nmods);
    size_t n;
    memset(x, 0, sizeof *x);
    odn_attention *a = &x->a;
    a->nb = c->nb;
    memcpy(a->batch, c->batch, sizeof a->batch);
    a->tq = c->tq, a->tk = c->tk, a->d = c->d, a->dv = c->dv;
    a->q = operand_of(c, &c->q, c->tq, c->d, NULL, &n);
    a->q.data = x->q = random_floats(n, 2.0f / sqrtf((float)c->d), &seed);
    a->k = operand_of(c, &c->k, c->d, c->tk, NULL, &n);
    a->k.data = x->k = random_floats(n, 1.0f, &seed);
    a->v = operand_of(c, &c->v, c->tk, c->dv, NULL, &n);
    a->v.data = x->v = random_floats(n, 1.0f, &seed);
    a->o = operand_of(c, &c->o, c->tq, c->dv, NULL, &x->on);
    a->o.data = x->o = aligned(sizeof(float) * x->on);
    a->nmods = c->nmods;
    for (int m = 0; m < c->nmods; m++) {
        const struct mod_spec *ms = &c->mods[m];
        odn_att_mod *md = &a->mods[m];
        md->kind = ms->kind, md->value = ms->value, md->fill_if_true = ms->when;
        if (ms->kind != ODN_ATT_ADD && ms->kind != ODN_ATT_SELECT) continue;
        md->t = operand_of(c, &ms->t, c->tq, c->tk, NULL, &n);
        md->t.data = x->t[m] = aligned(ms->kind == ODN_ATT_ADD ? sizeof(float) * n : n);
        if (!x->t[m]) return false;
        fill_mod(c, ms, &md->t, x->t[m], n, &seed);
    }
    return x->q && x->k && x->v && x->o;
}

static void release(operands *x) {
    free(x->q), free(x->k), free(x->v), free(x->o);
    for (int m = 0; m < ODN_ATT_MAX_MODS; m++) free(x->t[m]);
}

/* One score row of matrix b after the modifiers, each in float. */
static void reference_scores(const acase *c, const operands *x, int64_t b, int64_t i, double *s) {
    const odn_attention *a = &x->a;
    for (int64_t j = 0; j < c->tk; j++) {
        double dot = 0;
        for (int64_t kk = 0; kk < c->d; kk++)
            dot += (double)x->q[offset_of(c, &a->q, b, i, kk)] * x->k[offset_of(c, &a->k, b, kk, j)];
        float f = (float)dot;
        for (int m = 0; m < c->nmods; m++) {
            const odn_att_mod *md = &a->mods[m];
            int64_t at = offset_of(c, &md->t, b, i, j);
            if (md->kind == ODN_ATT_MUL) f = f * md->value;
            else if (md->kind == ODN_ATT_DIV) f = f / md->value;
            else if (md->kind == ODN_ATT_ADD) f = f + ((const float *)md->t.data)[at];
            else if ((((const uint8_t *)md->t.data)[at] != 0) == md->fill_if_true) f = md->value;
        }
        s[j] = f;
    }
}

static void softmax(double *s, int64_t n) {
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < n; j++) mx = s[j] > mx ? s[j] : mx;
    for (int64_t j = 0; j < n; j++) sum += s[j] = exp(s[j] - mx);
    for (int64_t j = 0; j < n; j++) s[j] /= sum;
}

/* Row i of matrix b of O against the reference; the worst error over the
 * tolerance goes to *worst. */
static bool check_row(const acase *c, const operands *x, int64_t b, int64_t i, double *s, double *worst) {
    const odn_attention *a = &x->a;
    reference_scores(c, x, b, i, s);
    softmax(s, c->tk);
    for (int64_t col = 0; col < c->dv; col++) {
        double want = 0, mag = 0;
        for (int64_t j = 0; j < c->tk; j++) {
            double t = s[j] * x->v[offset_of(c, &a->v, b, j, col)];
            want += t, mag += fabs(t);
        }
        float got = x->o[offset_of(c, &a->o, b, i, col)];
        double tol = 1e-5 * mag + 1e-7;
        if (isnan(want) != isnan(got) || (!isnan(want) && !(fabs(got - want) <= tol))) {
            printf("FAIL %s: O[b=%lld, %lld, %lld] = %.9g, want %.9g\n", c->name, (long long)b, (long long)i,
                   (long long)col, got, want);
            return false;
        }
        if (!isnan(want) && fabs(got - want) / tol > *worst) *worst = fabs(got - want) / tol;
    }
    return true;
}

/* O's storage outside the tensor still holds the sentinel. */
static bool padding_kept(const acase *c, const operands *x) {
    unsigned char *hit = calloc(x->on, 1);
    bool ok = hit != NULL;
    for (int64_t b = 0; ok && b < nbatch_of(c); b++)
        for (int64_t i = 0; i < c->tq; i++)
            for (int64_t col = 0; col < c->dv; col++) hit[offset_of(c, &x->a.o, b, i, col)] = 1;
    for (size_t e = 0; ok && e < x->on; e++)
        if (!hit[e] && x->o[e] != SENTINEL) {
            printf("FAIL %s: wrote O's padding at element %zu\n", c->name, e);
            ok = false;
        }
    free(hit);
    return ok;
}

/* Runs the kernel at `threads` into x->o, with a guard after scratch. */
static bool run_kernel(const acase *c, operands *x, int threads) {
    size_t bytes = odn_attention_scratch_bytes(&x->a, threads);
    unsigned char *scratch = aligned(bytes + GUARD_BYTES);
    if (!bytes || !scratch) {
        printf("FAIL %s: scratch of %zu bytes for %d threads\n", c->name, bytes, threads);
        free(scratch);
        return false;
    }
    memset(scratch + bytes, 0xA5, GUARD_BYTES);
    for (size_t e = 0; e < x->on; e++) x->o[e] = SENTINEL;
    omp_set_num_threads(threads);
    odn_attention_run(&x->a, scratch, threads);
    bool ok = true;
    for (size_t e = 0; e < GUARD_BYTES; e++) ok = ok && scratch[bytes + e] == 0xA5;
    if (!ok) printf("FAIL %s: wrote past its %zu bytes of scratch\n", c->name, bytes);
    free(scratch);
    return ok;
}

static bool check_case(const acase *c, double *worst) {
    operands x;
    bool ok = build(c, &x) && odn_attention_supported(&x.a);
    if (!ok) printf("FAIL %s: not built or not supported\n", c->name);
    ok = ok && run_kernel(c, &x, 1) && padding_kept(c, &x);
    double *s = malloc(sizeof(double) * (size_t)c->tk);
    for (int64_t b = 0; ok && s && b < nbatch_of(c); b++)
        for (int64_t i = 0; ok && i < c->tq; i++) ok = check_row(c, &x, b, i, s, worst);
    float *one = ok ? malloc(sizeof(float) * x.on) : NULL;
    if (one) memcpy(one, x.o, sizeof(float) * x.on);
    for (int t = 2; ok && one && t <= 3; t++) {
        ok = run_kernel(c, &x, t);
        if (ok && memcmp(one, x.o, sizeof(float) * x.on)) {
            printf("FAIL %s: %d threads differ from 1\n", c->name, t);
            ok = false;
        }
    }
    free(one);
    free(s);
    release(&x);
    return ok;
}

static acase plain(const char *name, int64_t tq, int64_t tk, int64_t d, int64_t dv) {
    layout p = {PLAIN, ALL, 0};
    acase c = {name, 0, {0}, tq, tk, d, dv, p, p, p, p, 0, {{0}}};
    return c;
}

static void add_mod(acase *c, odn_att_mod_kind kind, float value, bool when, int order, unsigned keep, int gen) {
    struct mod_spec m = {kind, value, when, {order, keep, 0}, gen};
    c->mods[c->nmods++] = m;
}

/* Every size against every other, no batch, no modifiers but a scale. */
static int check_sizes(double *worst, int *cases) {
    static const int64_t sizes[] = {1, 5, 6, 7, 17, 64, 128, 197, 500};
    const int n = sizeof sizes / sizeof *sizes;
    int failed = 0;
    for (int x = 0; x < n; x++)
        for (int y = 0; y < n; y++) {
            int64_t d = sizes[(x + y) % n], dv = sizes[(x + 2 * y + 1) % n];
            while (sizes[x] * sizes[y] * (d + dv) > 40000000) d = d > 64 ? 64 : d, dv = dv > 64 ? 64 : dv;
            acase c = plain("sizes", sizes[x], sizes[y], d, dv);
            if ((x + y) % 2) add_mod(&c, ODN_ATT_DIV, 1.7f, false, PLAIN, 0, 0);
            (*cases)++;
            if (!check_case(&c, worst)) {
                printf("  at tq=%lld tk=%lld d=%lld dv=%lld\n", (long long)c.tq, (long long)c.tk, (long long)d,
                       (long long)dv);
                failed++;
            }
        }
    return failed;
}

/* Layouts and broadcasts over batch dims [2, 3]. */
static int check_layouts(double *worst, int *cases) {
    int failed = 0;
    /* tk 257 and 1024: K packed in two and four 256-column chunks; dv 300:
     * the second product copies P's rows */
    static const int64_t shapes[][4] = {{17, 17, 8, 8},     {64, 197, 64, 32}, {7, 50, 6, 17},
                                        {128, 128, 64, 64}, {6, 257, 64, 16},  {13, 1024, 8, 300}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int variant = 0; variant < 7; variant++) {
            acase c = plain("layouts", shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3]);
            c.nb = 2, c.batch[0] = 2, c.batch[1] = 3;
            switch (variant) {
            case 0: c.name = "batch plain"; break;
            case 1: /* BERT's heads: [B, T, H*d] Q/V/O, K read transposed from [B, T, H*d] */
                c.name = "heads interleaved";
                c.q.order = c.v.order = c.o.order = HEADS;
                c.k.order = HEADS_T;
                break;
            case 2:
                c.name = "transposed";
                c.q.order = c.k.order = c.v.order = c.o.order = TRANS;
                break;
            case 3: /* K and V shared over dim 0, Q over dim 1, O rows padded */
                c.name = "broadcast";
                c.k.keep = c.v.keep = ALL & ~1u;
                c.q.keep = ALL & ~2u;
                c.o.pad = 5;
                break;
            case 4: /* multi-query: one K and V for every head */
                c.name = "multi-query";
                c.k.keep = c.v.keep = ALL & ~2u;
                c.k.order = TRANS;
                break;
            case 5:
                c.name = "one batch dim";
                c.nb = 1, c.batch[0] = 4;
                c.k.order = TRANS;
                c.o.order = TRANS;
                break;
            default:
                c.name = "padded rows";
                c.q.pad = 3, c.k.pad = 1, c.v.pad = 16, c.o.pad = 2;
                break;
            }
            add_mod(&c, ODN_ATT_MUL, 0.7f, false, PLAIN, 0, 0);
            (*cases)++;
            if (!check_case(&c, worst)) {
                printf("  shape %zu\n", s);
                failed++;
            }
        }
    return failed;
}

/* Each modifier alone and combined, with the operand broadcast patterns
 * exporters write, on batch [2, 3]. */
static int check_mods(double *worst, int *cases) {
    const unsigned b0_j = 1u | (1u << 3), rows_cols = ROWCOL(2), h_i_j = 2u | ROWCOL(2);
    int failed = 0;
    static const int64_t shapes[][4] = {{13, 29, 16, 16}, {64, 64, 32, 32}, {5, 197, 64, 64}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int variant = 0; variant < 14; variant++) {
            acase c = plain("mods", shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3]);
            c.nb = 2, c.batch[0] = 2, c.batch[1] = 3;
            switch (variant) {
            case 0: add_mod(&c, ODN_ATT_MUL, 0.125f, false, PLAIN, 0, 0); break;
            case 1: add_mod(&c, ODN_ATT_DIV, 3.0f, false, PLAIN, 0, 0); break;
            case 2: add_mod(&c, ODN_ATT_ADD, 0, false, PLAIN, b0_j, GEN_MASK_INF); break;
            case 3: add_mod(&c, ODN_ATT_ADD, 0, false, PLAIN, rows_cols, GEN_CAUSAL_BIG); break;
            case 4: add_mod(&c, ODN_ATT_ADD, 0, false, PLAIN, h_i_j, GEN_BIAS); break;
            case 5: add_mod(&c, ODN_ATT_SELECT, -INFINITY, true, PLAIN, b0_j, GEN_BOOL); break;
            case 6: add_mod(&c, ODN_ATT_SELECT, -BIG, false, PLAIN, rows_cols, GEN_BOOL); break;
            case 7: /* BERT: Div, Add a [B,1,1,tk] mask, Where on a causal bool */
                add_mod(&c, ODN_ATT_DIV, 8.0f, false, PLAIN, 0, 0);
                add_mod(&c, ODN_ATT_ADD, 0, false, PLAIN, b0_j, GEN_MASK_BIG);
                add_mod(&c, ODN_ATT_SELECT, -INFINITY, true, PLAIN, rows_cols, GEN_BOOL);
                break;
            case 8: /* T5: a position bias per head, then a causal mask, then a scale */
                add_mod(&c, ODN_ATT_ADD, 0, false, PLAIN, h_i_j, GEN_BIAS);
                add_mod(&c, ODN_ATT_ADD, 0, false, PLAIN, rows_cols, GEN_CAUSAL_INF);
                add_mod(&c, ODN_ATT_MUL, 0.5f, false, PLAIN, 0, 0);
                add_mod(&c, ODN_ATT_ADD, 0, false, PLAIN, b0_j, GEN_MASK_BIG);
                break;
            case 9: /* a whole row masked by -inf: NaN */
                add_mod(&c, ODN_ATT_ADD, 0, false, PLAIN, rows_cols, GEN_DEADROW_INF);
                break;
            case 10: /* and by Where's fill */
                add_mod(&c, ODN_ATT_DIV, 2.0f, false, PLAIN, 0, 0);
                add_mod(&c, ODN_ATT_SELECT, -INFINITY, false, PLAIN, ALL, GEN_BOOL_DEADROW);
                break;
            case 11: /* operands read across: transposed, and one value per row */
                add_mod(&c, ODN_ATT_ADD, 0, false, TRANS, h_i_j, GEN_BIAS);
                add_mod(&c, ODN_ATT_ADD, 0, false, PLAIN, 2u | (1u << 2), GEN_BIAS);
                add_mod(&c, ODN_ATT_SELECT, -BIG, true, TRANS, ALL, GEN_BOOL);
                break;
            case 12: /* a per-row and a per-matrix bool */
                add_mod(&c, ODN_ATT_SELECT, 4.0f, true, PLAIN, 1u << 2, GEN_BOOL_DEADROW);
                add_mod(&c, ODN_ATT_SELECT, -1.0f, false, PLAIN, 1u, GEN_BOOL);
                break;
            default: /* a fill that is not a mask, on scores scaled up */
                add_mod(&c, ODN_ATT_MUL, 4.0f, false, PLAIN, 0, 0);
                add_mod(&c, ODN_ATT_SELECT, 2.5f, true, PLAIN, ALL, GEN_BOOL);
                break;
            }
            (*cases)++;
            if (!check_case(&c, worst)) {
                printf("  shape %zu variant %d\n", s, variant);
                failed++;
            }
        }
    return failed;
}

static bool refused(const char *what, const odn_attention *a) {
    if (odn_attention_supported(a) || odn_attention_scratch_bytes(a, 1) != 0) {
        printf("FAIL refusal: %s was taken\n", what);
        return false;
    }
    return true;
}

/* Shapes the kernel must refuse, each a valid one with one thing wrong. */
static int check_refusals(int *cases) {
    float data[64] = {0};
    odn_att_operand op = {data, {0}, 1, 1};
    odn_attention ok = {1, {2}, 2, 2, 2, 2, op, op, op, op, 0, {{0}}}, a;
    ok.o.bstride[0] = 4, ok.o.rs = 2;
    int failed = 0;
    if (!odn_attention_supported(&ok) || odn_attention_scratch_bytes(&ok, 2) == 0) {
        printf("FAIL refusal: the valid shape was refused\n");
        failed++;
    }
#define REFUSE(what, change) (a = ok, change, (*cases)++, failed += !refused(what, &a))
    REFUSE("tq 0", a.tq = 0);
    REFUSE("tk 0", a.tk = 0);
    REFUSE("d 0", a.d = 0);
    REFUSE("dv -1", a.dv = -1);
    REFUSE("batch 0", a.batch[0] = 0);
    REFUSE("nb 5", a.nb = 5);
    REFUSE("nb -1", a.nb = -1);
    REFUSE("nmods 5", a.nmods = 5);
    REFUSE("nmods -1", a.nmods = -1);
    REFUSE("q.rs -1", a.q.rs = -1);
    REFUSE("k.cs -1", a.k.cs = -1);
    REFUSE("v.bstride -1", a.v.bstride[0] = -1);
    REFUSE("mod kind 9", (a.nmods = 1, a.mods[0].kind = (odn_att_mod_kind)9));
    REFUSE("mod t.rs -2", (a.nmods = 1, a.mods[0].kind = ODN_ATT_SELECT, a.mods[0].t = op, a.mods[0].t.rs = -2));
    REFUSE("O rows broadcast", a.o.rs = 0);
    REFUSE("O batch broadcast", a.o.bstride[0] = 0);
    REFUSE("tk 2^40", a.tk = (int64_t)1 << 40);
    REFUSE("d 2^40", a.d = (int64_t)1 << 40);
    REFUSE("batch 2^62 x 4", (a.nb = 2, a.batch[0] = (int64_t)1 << 62, a.batch[1] = 4));
    REFUSE("tk INT64_MAX", a.tk = INT64_MAX);
#undef REFUSE
    /* a plan describes its operands before their buffers exist: supported()
     * reads strides only, and run() with a NULL buffer writes nothing */
    (*cases)++;
    a = ok;
    a.q.data = NULL;
    a.nmods = 1;
    a.mods[0].kind = ODN_ATT_ADD;
    a.mods[0].t = op;
    a.mods[0].t.data = NULL;
    float out[64];
    for (int i = 0; i < 64; i++) out[i] = -7.0f;
    a.o.data = out;
    size_t bytes = odn_attention_scratch_bytes(&a, 1);
    void *scratch = bytes ? aligned_alloc(64, (bytes + 63) / 64 * 64) : NULL;
    if (!odn_attention_supported(&a) || !scratch) {
        printf("FAIL refusal: NULL data pointers refused at planning\n");
        failed++;
    } else {
        odn_attention_run(&a, scratch, 1);
        for (int i = 0; i < 64; i++)
            if (out[i] != -7.0f) {
                printf("FAIL refusal: run with NULL data wrote the output\n");
                failed++;
                break;
            }
    }
    free(scratch);
    (*cases)++;
    if (odn_attention_scratch_bytes(&ok, 1 << 30) != 0) {
        printf("FAIL refusal: scratch for 2^30 threads\n");
        failed++;
    }
    return failed;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int bench(int64_t b, int64_t h, int64_t tq, int64_t tk, int64_t d, int threads, int runs) {
    if (b < 1 || h < 1 || threads < 1 || runs < 1 || runs > 100000) return 2;
    layout p = {PLAIN, ALL, 0};
    acase c = {"bench", 2, {b, h}, tq, tk, d, d, p, p, p, p, 0, {{0}}};
    add_mod(&c, ODN_ATT_DIV, sqrtf((float)d), false, PLAIN, 0, 0);
    add_mod(&c, ODN_ATT_ADD, 0, false, PLAIN, 1u | (1u << 3), GEN_MASK_BIG);
    operands x;
    size_t bytes;
    void *scratch = NULL;
    double *times = malloc(sizeof(double) * (size_t)runs);
    int rc = 2;
    if (build(&c, &x) && (bytes = odn_attention_scratch_bytes(&x.a, threads)) && (scratch = aligned(bytes)) && times) {
        omp_set_num_threads(threads);
        odn_attention_run(&x.a, scratch, threads); /* warm-up */
        for (int i = 0; i < runs; i++) {
            double t0 = now();
            odn_attention_run(&x.a, scratch, threads);
            times[i] = now() - t0;
        }
        qsort(times, (size_t)runs, sizeof(double), cmp_double);
        double flops = 4.0 * (double)b * (double)h * (double)tq * (double)tk * (double)d;
        printf("attention b=%lld h=%lld tq=%lld tk=%lld d=%lld threads=%d: best %.3f ms median %.3f ms %.1f GFLOP/s\n",
               (long long)b, (long long)h, (long long)tq, (long long)tk, (long long)d, threads, times[0] * 1e3,
               times[runs / 2] * 1e3, flops / times[0] * 1e-9);
        rc = 0;
    }
    free(scratch), free(times);
    release(&x);
    return rc;
}

int main(int argc, char **argv) {
    if (!odn_sgemm_supported()) {
        printf("SKIP: no AVX2/FMA\n");
        return 77;
    }
    if (argc == 9 && !strcmp(argv[1], "bench"))
        return bench(atoll(argv[2]), atoll(argv[3]), atoll(argv[4]), atoll(argv[5]), atoll(argv[6]), atoi(argv[7]),
                     atoi(argv[8]));
    if (argc != 1) {
        fprintf(stderr, "usage: onednn_attention [bench B H TQ TK D THREADS RUNS]\n");
        return 2;
    }
    int cases = 0, failed = 0;
    double worst = 0;
    failed += check_sizes(&worst, &cases);
    failed += check_layouts(&worst, &cases);
    failed += check_mods(&worst, &cases);
    failed += check_refusals(&cases);
    printf("%d of %d cases right; worst error %.3f of the tolerance\n", cases - failed, cases, worst);
    return failed ? 1 : 0;
}
