/*
 * The driver shared by RNN, GRU and LSTM: checks the inputs' shapes,
 * converts the parameters to double, then walks each direction, batch row
 * and time step through the cell's step function.
 *
 * Layout 0 is sequence-major (X [seq, batch, input], Y [seq, dirs, batch,
 * hidden], Y_h [dirs, batch, hidden]); layout 1 is batch-major (X [batch,
 * seq, input], Y [batch, seq, dirs, hidden], Y_h [batch, dirs, hidden]).
 * A batch row with sequence_lens[b] = L < seq runs L steps (the reverse
 * direction from step L-1 down to 0); its Y rows past L are zero and its
 * Y_h / Y_c are the state after its last step.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_rnn.h"

typedef struct rnn_dims {
    int64_t seq, batch, input, hidden;
    int dirs, gates, layout;
} rnn_dims;

/* Node input positions shared by the three operators. */
enum { IN_X, IN_W, IN_R, IN_B, IN_SEQ_LENS, IN_INITIAL_H, IN_INITIAL_C, IN_P };

static bool mul3(int64_t a, int64_t b, int64_t c, int64_t *out) {
    int64_t t;
    return !__builtin_mul_overflow(a, b, &t) && !__builtin_mul_overflow(t, c, out);
}

static bool has_dims(const tsr_tensor *t, int32_t rank, int64_t d0, int64_t d1, int64_t d2) {
    if (t->rank != rank) return false;
    const int64_t want[3] = {d0, d1, d2};
    for (int32_t i = 0; i < rank; i++)
        if (t->dims[i] != want[i]) return false;
    return true;
}

static tsr_status *check_float(ref_ctx *c, const tsr_tensor *t, const char *name) {
    if (t && !ref_is_float(t->elem_type))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s has element type %d, not a float type", name,
                       (int)t->elem_type);
    return NULL;
}

/* Checks every input's shape against X, W and R, and fills *d. */
static tsr_status *check_shapes(ref_ctx *c, rnn_cell_kind kind, const rnn_attrs *a, rnn_dims *d) {
    const tsr_tensor *X = ref_in(c, IN_X), *W = ref_in(c, IN_W), *R = ref_in(c, IN_R);
    if (!X || !W || !R) return ref_err(c, TSR_ERR_INVALID_MODEL, "X, W and R are required");
    bool lstm = kind == RNN_CELL_LSTM;
    static const char *const names[] = {"X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"};
    for (size_t i = 0; i <= IN_P; i++) {
        if (i == IN_SEQ_LENS || (!lstm && i >= IN_INITIAL_C)) continue;
        tsr_status *st = check_float(c, ref_in(c, i), names[i]);
        if (st) return st;
    }
    if (X->rank != 3 || W->rank != 3 || R->rank != 3)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "X, W and R must have rank 3 (have %d, %d, %d)", (int)X->rank,
                       (int)W->rank, (int)R->rank);
    d->layout = a->layout;
    d->dirs = a->dirs;
    d->gates = ref_rnn_gate_count(kind);
    d->seq = X->dims[a->layout ? 1 : 0];
    d->batch = X->dims[a->layout ? 0 : 1];
    d->input = X->dims[2];
    d->hidden = R->dims[2];
    if (d->hidden < 1) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "R has no columns (hidden size 0)");
    if (a->hidden_size > 0 && a->hidden_size != d->hidden)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "hidden_size %lld but R has %lld columns",
                       (long long)a->hidden_size, (long long)d->hidden);
    int64_t gh, gh2, p3;
    if (!mul3(d->gates, d->hidden, 1, &gh) || !mul3(gh, 2, 1, &gh2) || !mul3(d->hidden, 3, 1, &p3))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "hidden size %lld is too large", (long long)d->hidden);
    if (!has_dims(W, 3, d->dirs, gh, d->input))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "W must be [%d, %lld, %lld] (directions, %d*hidden, input)",
                       d->dirs, (long long)gh, (long long)d->input, d->gates);
    if (!has_dims(R, 3, d->dirs, gh, d->hidden))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "R must be [%d, %lld, %lld] (directions, %d*hidden, hidden)",
                       d->dirs, (long long)gh, (long long)d->hidden, d->gates);
    const tsr_tensor *B = ref_in(c, IN_B);
    if (B && !has_dims(B, 2, d->dirs, gh2, 0))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "B must be [%d, %lld]", d->dirs, (long long)gh2);
    int64_t s0 = a->layout ? d->batch : d->dirs, s1 = a->layout ? d->dirs : d->batch;
    for (size_t i = IN_INITIAL_H; i <= (lstm ? IN_INITIAL_C : IN_INITIAL_H); i++) {
        const tsr_tensor *t = ref_in(c, i);
        if (t && !has_dims(t, 3, s0, s1, d->hidden))
            return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "%s must be [%lld, %lld, %lld]", names[i], (long long)s0,
                           (long long)s1, (long long)d->hidden);
    }
    const tsr_tensor *P = lstm ? ref_in(c, IN_P) : NULL;
    if (P && !has_dims(P, 2, d->dirs, p3, 0))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "P must be [%d, %lld]", d->dirs, (long long)p3);
    const tsr_tensor *L = ref_in(c, IN_SEQ_LENS);
    if (L && (!ref_is_int(L->elem_type) || !has_dims(L, 1, d->batch, 0, 0)))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "sequence_lens must be an integer tensor of shape [%lld]",
                       (long long)d->batch);
    int64_t y, state;
    if (!mul3(d->seq, d->batch, d->hidden, &y) || !mul3(y, d->dirs, 1, &y) ||
        !mul3(d->dirs, d->batch, d->hidden, &state))
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "outputs would be too large");
    return NULL;
}

/* A double copy of t's first n elements, or n zeros when t is absent. */
static tsr_status *as_double(ref_ctx *c, const tsr_tensor *t, int64_t n, double **out) {
    double *v = calloc((size_t)(n > 0 ? n : 1), sizeof *v);
    if (!v) return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory for %lld values", (long long)n);
    for (int64_t i = 0; t && i < n; i++) v[i] = ref_load(t->elem_type, t->data, (size_t)i);
    *out = v;
    return NULL;
}

/* Element offsets of Y (t, dir, b) and of Y_h / Y_c / initial state (dir, b). */
static int64_t y_row(const rnn_dims *d, int64_t t, int64_t dir, int64_t b) {
    int64_t row = d->layout ? (b * d->seq + t) * d->dirs + dir : (t * d->dirs + dir) * d->batch + b;
    return row * d->hidden;
}

static int64_t state_row(const rnn_dims *d, int64_t dir, int64_t b) {
    return (d->layout ? b * d->dirs + dir : dir * d->batch + b) * d->hidden;
}

static int64_t x_row(const rnn_dims *d, int64_t t, int64_t b) {
    return (d->layout ? b * d->seq + t : t * d->batch + b) * d->input;
}

typedef struct rnn_bufs {
    double *W, *R, *B, *P, *h, *cell, *x, *scratch;
    int64_t *lens;
} rnn_bufs;

static void free_bufs(rnn_bufs *b) {
    free(b->W);
    free(b->R);
    free(b->B);
    free(b->P);
    free(b->h);
    free(b->cell);
    free(b->x);
    free(b->scratch);
    free(b->lens);
}

static tsr_status *load_bufs(ref_ctx *c, rnn_cell_kind kind, const rnn_dims *d, rnn_bufs *b) {
    const tsr_tensor *W = ref_in(c, IN_W), *R = ref_in(c, IN_R), *B = ref_in(c, IN_B);
    const tsr_tensor *P = kind == RNN_CELL_LSTM ? ref_in(c, IN_P) : NULL;
    int64_t gh = d->gates * d->hidden;
    tsr_status *st;
    if ((st = as_double(c, W, (int64_t)ref_numel(W), &b->W)) || (st = as_double(c, R, (int64_t)ref_numel(R), &b->R)) ||
        (st = as_double(c, B, d->dirs * 2 * gh, &b->B)) || (st = as_double(c, P, d->dirs * 3 * d->hidden, &b->P)) ||
        (st = as_double(c, NULL, d->hidden, &b->h)) || (st = as_double(c, NULL, d->hidden, &b->cell)) ||
        (st = as_double(c, NULL, d->input, &b->x)) ||
        (st = as_double(c, NULL, (int64_t)ref_rnn_cell_scratch(kind, d->hidden), &b->scratch)))
        return st;
    const tsr_tensor *L = ref_in(c, IN_SEQ_LENS);
    if (L) {
        size_t n;
        if ((st = ref_tensor_i64(c, L, &b->lens, &n))) return st;
        for (int64_t i = 0; i < d->batch; i++)
            if (b->lens[i] < 0 || b->lens[i] > d->seq)
                return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "sequence_lens[%lld] = %lld is outside [0, %lld]",
                               (long long)i, (long long)b->lens[i], (long long)d->seq);
    }
    return NULL;
}

static void load_row(const tsr_tensor *t, int64_t off, int64_t n, double *dst) {
    for (int64_t i = 0; i < n; i++) dst[i] = t ? ref_load(t->elem_type, t->data, (size_t)(off + i)) : 0.0;
}

static void store_row(tsr_tensor *t, int64_t off, int64_t n, const double *src) {
    for (int64_t i = 0; i < n; i++) ref_store(t->elem_type, t->data, (size_t)(off + i), src[i]);
}

tsr_status *ref_rnn_run(ref_ctx *c, rnn_cell_kind kind) {
    rnn_attrs a;
    char why[256];
    if (ref_rnn_parse_attrs(c->host, c->node, kind, &a, why, sizeof why))
        return ref_err(c, TSR_ERR_INVALID_MODEL, "%s", why);
    rnn_dims d = {0};
    tsr_status *st = check_shapes(c, kind, &a, &d);
    if (st) return st;
    const tsr_tensor *X = ref_in(c, IN_X);
    const tsr_tensor *H0 = ref_in(c, IN_INITIAL_H);
    const tsr_tensor *C0 = kind == RNN_CELL_LSTM ? ref_in(c, IN_INITIAL_C) : NULL;
    bool lstm = kind == RNN_CELL_LSTM;

    int64_t ydims[4], sdims[3];
    if (d.layout) {
        ydims[0] = d.batch, ydims[1] = d.seq;
        sdims[0] = d.batch, sdims[1] = d.dirs;
    } else {
        ydims[0] = d.seq, ydims[1] = d.dirs;
        sdims[0] = d.dirs, sdims[1] = d.batch;
    }
    ydims[2] = d.layout ? d.dirs : d.batch;
    ydims[3] = sdims[2] = d.hidden;
    /* Y can be large and is often dropped: only allocate it when wanted. */
    tsr_tensor *Y = NULL, *Yh = NULL, *Yc = NULL;
    if (ref_out_wanted(c, 0)) {
        if ((st = ref_out(c, 0, X->elem_type, 4, ydims, &Y))) return st;
        if (Y->nbytes) memset(Y->data, 0, Y->nbytes); /* rows past sequence_lens */
    }
    if ((st = ref_out(c, 1, X->elem_type, 3, sdims, &Yh))) return st;
    if (lstm && (st = ref_out(c, 2, X->elem_type, 3, sdims, &Yc))) return st;

    rnn_bufs b = {0};
    if ((st = load_bufs(c, kind, &d, &b))) goto done;
    static const rnn_step_fn steps[] = {ref_rnn_step_simple, ref_rnn_step_gru, ref_rnn_step_lstm};
    rnn_cell_cfg cfg = {d.input, d.hidden, a.clip, a.linear_before_reset, a.input_forget};
    int64_t gh = d.gates * d.hidden;
    for (int dir = 0; dir < d.dirs; dir++) {
        rnn_weights w = {b.W + dir * gh * d.input, b.R + dir * gh * d.hidden, b.B + dir * 2 * gh,
                         b.B + dir * 2 * gh + gh,  b.P + dir * 3 * d.hidden,  a.act[dir]};
        bool backward = a.reverse || dir == 1;
        for (int64_t bi = 0; bi < d.batch; bi++) {
            int64_t len = b.lens ? b.lens[bi] : d.seq;
            load_row(H0, state_row(&d, dir, bi), d.hidden, b.h);
            load_row(C0, state_row(&d, dir, bi), d.hidden, b.cell);
            for (int64_t s = 0; s < len; s++) {
                if (ref_work(c, gh * (d.input + d.hidden))) {
                    st = ref_stopped(c);
                    goto done;
                }
                int64_t t = backward ? len - 1 - s : s;
                load_row(X, x_row(&d, t, bi), d.input, b.x);
                steps[kind](&cfg, &w, b.x, b.h, b.cell, b.scratch);
                if (Y) store_row(Y, y_row(&d, t, dir, bi), d.hidden, b.h);
            }
            store_row(Yh, state_row(&d, dir, bi), d.hidden, b.h);
            if (Yc) store_row(Yc, state_row(&d, dir, bi), d.hidden, b.cell);
        }
    }
done:
    free_bufs(&b);
    return st;
}
