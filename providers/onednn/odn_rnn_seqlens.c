/* LSTM, GRU and RNN whose sequence_lens differ per batch row or are fed at
 * run time (PyTorch's packed sequences), with ONNX's semantics: row b runs
 * its first len_b steps only (the reverse direction from step len_b - 1
 * down to 0), its Y rows from len_b on are zero and its Y_h/Y_c are the
 * state after its last step (the initial state when len_b = 0, as the
 * reference provider does).
 *
 * oneDNN's RNN primitive has no per-row lengths, and its dst_iter is the
 * state after the last step only, so one primitive over all T steps cannot
 * give the cell state of a shorter row (nor start a reversed one at its own
 * last step). Here the recurrence is ours, as ONNX Runtime's is: per
 * direction, X W^T + Wb + Rb for a chunk of steps is one packed GEMM
 * (odn_sgemm.c), then each step is the product H_{t-1} R^T of the rows
 * still inside their length (another packed GEMM) and the gate math of
 * odn_rnn_cell.c, which updates only those rows: frozen rows keep their
 * state, not-yet-started reverse rows the initial one. Steps at or past the
 * longest length are not run. The lengths are read at run time, so one
 * plan serves every set of lengths. With two threads the two directions of
 * a bidirectional node run side by side, one thread each. */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "odn_rnn.h"
#include "odn_rnn_cell.h"
#include "odn_sgemm.h"

/* Floats of one direction's projection chunk at most (4 MiB): whole
 * sequences of speech and OCR models fit, and a chunk is still in cache
 * when its steps read it. */
#define PROJ_FLOATS (1 << 20)

typedef struct seq_dir {
    const float *w;     /* packed W^T (I x GH) */
    const float *bias;  /* the projection's bias [GH] */
    const float *r;     /* packed R^T (H x GH; GRU lbr 0: its z and r gates, H x 2H) */
    const float *rh;    /* GRU lbr 0: the h gate's packed R^T (H x H), else NULL */
    const float *rbias; /* the step product's bias (lbr GRU: 0, 0, Rb_h), else NULL */
    const float *peep;  /* LSTM P [3H] (i, o, f) or NULL */
    bool reverse;
    float *proj;        /* the chunk's projections [chunk, B, GH] */
    float *g, *gh, *rx; /* the step's products [B, GH], [B, H]; r * h [B, H] */
    float *h, *c;       /* the state [B, H] */
} seq_dir;

typedef struct seq_ctx {
    const tsr_node *node;
    int64_t steps, batch, input, hidden, layout, gates, chunk;
    int dirs, cell, act;
    seq_dir dir[2];
    const int64_t *fixed; /* lengths known when built, else NULL */
    dnnl_memory_t lens;   /* int32 or int64 lengths read each run, else NULL */
    bool lens64;
    dnnl_memory_t x, ih, ic, y, yh, yc; /* the ONNX tensors (plain); NULL: absent */
    int64_t *len;                       /* this run's lengths */
    float *scratch;                     /* the plan's packed-GEMM scratch */
    int scratch_threads;
} seq_ctx;

static void *handle(dnnl_memory_t m) {
    void *p = NULL;
    if (m) dnnl_memory_get_data_handle(m, &p);
    return p;
}

/* Offsets (in floats) of X's row (t, b), of Y's (t, dir, b) and of a
 * state's (dir, b) in ONNX's layout 0 or 1. */
static int64_t x_off(const seq_ctx *s, int64_t t, int64_t b) {
    return (s->layout ? b * s->steps + t : t * s->batch + b) * s->input;
}
static int64_t y_off(const seq_ctx *s, int64_t t, int dir, int64_t b) {
    return (s->layout ? (b * s->steps + t) * s->dirs + dir : (t * s->dirs + dir) * s->batch + b) * s->hidden;
}
static int64_t state_off(const seq_ctx *s, int dir, int64_t b) {
    return (s->layout ? b * s->dirs + dir : dir * s->batch + b) * s->hidden;
}

/* This run's lengths into s->len, each checked; `longest` their maximum. */
static tsr_status *load_lens(seq_ctx *s, int64_t *longest) {
    const void *src = s->fixed ? (const void *)s->fixed : handle(s->lens);
    bool wide = s->fixed || s->lens64;
    *longest = 0;
    for (int64_t b = 0; b < s->batch; b++) {
        int64_t v = wide ? ((const int64_t *)src)[b] : ((const int32_t *)src)[b];
        if (v < 0 || v > s->steps)
            return odn_node_error(s->node, TSR_ERR_INVALID_ARGUMENT, "sequence_lens[%lld] = %lld is outside [0, %lld]",
                                  (long long)b, (long long)v, (long long)s->steps);
        s->len[b] = v;
        if (v > *longest) *longest = v;
    }
    return NULL;
}

/* The projections of steps [t0, t0 + count) into the direction's chunk. */
static void project(const seq_ctx *s, const seq_dir *d, int64_t t0, int64_t count, float *scratch, int threads) {
    int64_t B = s->batch, GH = s->gates * s->hidden, I = s->input;
    const float *x = handle(s->x);
    if (!s->layout) {
        odn_sgemm_run(count * B, GH, I, x + x_off(s, t0, 0), I, d->w, d->bias, d->proj, GH, scratch, threads);
        return;
    }
    for (int64_t b = 0; b < B; b++) /* a row's steps are adjacent in X */
        odn_sgemm_run(count, GH, I, x + x_off(s, t0, b), I, d->w, d->bias, d->proj + b * GH, B * GH, scratch, threads);
}

/* Step t (the chunk's step k): the rows with t < len_b move on, the
 * others' Y rows are zero. The products cover rows up to the last moving
 * one (PyTorch sorts rows longest first: then exactly the moving ones). */
static void step(const seq_ctx *s, int dir, int64_t t, int64_t k, float *scratch, int threads) {
    const seq_dir *d = &s->dir[dir];
    int64_t B = s->batch, H = s->hidden, GH = s->gates * H, rows = 0;
    for (int64_t b = 0; b < B; b++)
        if (t < s->len[b]) rows = b + 1;
    bool gru0 = s->cell == ODN_RNN_GRU;
    odn_sgemm_run(rows, gru0 ? 2 * H : GH, H, d->h, H, d->r, d->rbias, d->g, GH, scratch, threads);
    float *y = handle(s->y);
    if (gru0) {
        for (int64_t b = 0; b < rows; b++)
            if (t < s->len[b])
                odn_cell_gru_zr(H, d->proj + (k * B + b) * GH, d->g + b * GH, d->h + b * H, d->rx + b * H);
        odn_sgemm_run(rows, H, H, d->rx, H, d->rh, NULL, d->gh, H, scratch, threads);
    }
    for (int64_t b = 0; b < B; b++) {
        float *yr = y ? y + y_off(s, t, dir, b) : NULL;
        if (t >= s->len[b]) {
            if (yr) memset(yr, 0, (size_t)H * sizeof(float));
            continue;
        }
        const float *px = d->proj + (k * B + b) * GH, *g = d->g + b * GH;
        float *h = d->h + b * H;
        switch (s->cell) {
        case ODN_RNN_LSTM: odn_cell_lstm(H, px, g, d->peep, h, d->c + b * H, yr); break;
        case ODN_RNN_LBR_GRU: odn_cell_gru_lbr(H, px, g, h, yr); break;
        case ODN_RNN_GRU: odn_cell_gru_h(H, px, g, d->gh + b * H, h, yr); break;
        default: odn_cell_rnn(H, px, g, s->act, h, yr); break;
        }
    }
}

/* A state from its initial value (or zeros) and, after the steps, out. */
static void state_in(const seq_ctx *s, int dir, float *state, const float *init) {
    size_t row = (size_t)s->hidden * sizeof(float);
    for (int64_t b = 0; b < s->batch; b++) {
        if (init) memcpy(state + b * s->hidden, init + state_off(s, dir, b), row);
        else memset(state + b * s->hidden, 0, row);
    }
}
static void state_out(const seq_ctx *s, int dir, const float *state, float *out) {
    for (int64_t b = 0; out && b < s->batch; b++)
        memcpy(out + state_off(s, dir, b), state + b * s->hidden, (size_t)s->hidden * sizeof(float));
}

/* One direction's steps below `longest`, chunk by chunk in its order. */
static void run_dir(const seq_ctx *s, int dir, int64_t longest, float *scratch, int threads) {
    const seq_dir *d = &s->dir[dir];
    state_in(s, dir, d->h, handle(s->ih));
    if (d->c) state_in(s, dir, d->c, handle(s->ic));
    for (int64_t k0 = 0; k0 < longest; k0 += s->chunk) {
        int64_t count = longest - k0 < s->chunk ? longest - k0 : s->chunk;
        int64_t t0 = d->reverse ? longest - k0 - count : k0;
        project(s, d, t0, count, scratch, threads);
        for (int64_t k = 0; k < count; k++) {
            int64_t t = d->reverse ? t0 + count - 1 - k : t0 + k;
            step(s, dir, t, t - t0, scratch, threads);
        }
    }
    state_out(s, dir, d->h, handle(s->yh));
    if (d->c) state_out(s, dir, d->c, handle(s->yc));
}

static tsr_status *run_seq(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    (void)src;
    (void)dst;
    seq_ctx *s = (seq_ctx *)ctx;
    int64_t longest;
    tsr_status *e = load_lens(s, &longest);
    if (e) return e;
    float *y = handle(s->y);
    /* every row is past its length from `longest` on */
    for (int64_t t = longest; y && t < s->steps; t++)
        for (int dir = 0; dir < s->dirs; dir++)
            for (int64_t b = 0; b < s->batch; b++)
                memset(y + y_off(s, t, dir, b), 0, (size_t)s->hidden * sizeof(float));
    /* the two directions share nothing but X: a thread each, which spares
     * the per-step GEMMs a fork and join each */
    if (s->dirs == 2 && s->scratch_threads >= 2 && omp_get_max_threads() >= 2) {
        size_t slot = odn_sgemm_scratch_floats(1);
#pragma omp parallel for num_threads(2) schedule(static, 1)
        for (int dir = 0; dir < 2; dir++) run_dir(s, dir, longest, s->scratch + (size_t)omp_get_thread_num() * slot, 1);
        return NULL;
    }
    for (int dir = 0; dir < s->dirs; dir++) run_dir(s, dir, longest, s->scratch, s->scratch_threads);
    return NULL;
}

static odn_value *input(odn_plan *p, const tsr_node *n, size_t k) {
    return k < odn_host->node_input_count(n) ? odn_plan_value(p, odn_host->node_input(n, k)) : NULL;
}

static odn_value *output(odn_plan *p, const tsr_node *n, size_t k) {
    return k < odn_host->node_output_count(n) ? odn_plan_value(p, odn_host->node_output(n, k)) : NULL;
}

/* A zeroed float buffer of the plan of rows x cols. */
static tsr_status *buffer(odn_plan *p, const tsr_node *n, int64_t rows, int64_t cols, float **out) {
    int64_t dims[2] = {rows, cols}, count = odn_numel(2, dims);
    *out = count > 0 && (uint64_t)count <= SIZE_MAX / sizeof(float) ? odn_plan_alloc(p, (size_t)count * sizeof(float))
                                                                    : NULL;
    if (!*out)
        return odn_node_error(n, TSR_ERR_NO_MEMORY, "RNN buffer of %lld x %lld", (long long)rows, (long long)cols);
    memset(*out, 0, (size_t)count * sizeof(float));
    return NULL;
}

/* A float32 input (X, initial_h, initial_c) of shape `want` as plain memory. */
static tsr_status *plain_in(odn_plan *p, const tsr_node *n, odn_value *v, const char *what, const int64_t *want,
                            dnnl_memory_t *mem) {
    if (v->elem_type != TSR_FLOAT && v->elem_type != 0)
        return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "%s is not float32", what);
    if (v->rank != 3 || memcmp(v->dims, want, 3 * sizeof(int64_t)) != 0)
        return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "%s is not [%lld, %lld, %lld]", what, (long long)want[0],
                              (long long)want[1], (long long)want[2]);
    return odn_plan_plain_mem(p, v, n, mem);
}

/* Where the lengths come from: fixed when known now (absent: all T; a
 * constant, or an int64 value input the plan is built for), else read each
 * run. */
static tsr_status *lengths(odn_plan *p, const tsr_node *n, const odn_rnn_consts *c, seq_ctx *s) {
    int64_t B = s->batch;
    if (odn_host->node_input_count(n) <= 4 || !odn_host->node_input(n, 4)) { /* absent: every row runs T */
        int64_t *all = odn_plan_alloc(p, (size_t)B * sizeof(int64_t));
        if (!all) return odn_node_error(n, TSR_ERR_NO_MEMORY, "sequence_lens");
        for (int64_t b = 0; b < B; b++) all[b] = s->steps;
        s->fixed = all;
        return NULL;
    }
    if (c->seq) {
        const tsr_tensor *t = c->seq;
        int64_t *fixed = odn_plan_alloc(p, (size_t)B * sizeof(int64_t));
        if (!fixed) return odn_node_error(n, TSR_ERR_NO_MEMORY, "sequence_lens");
        bool ok = t->rank == 1 && t->dims[0] == B;
        for (int64_t b = 0; ok && b < B; b++) {
            if (t->elem_type == TSR_INT64 && t->nbytes >= (uint64_t)(b + 1) * 8)
                fixed[b] = ((const int64_t *)t->data)[b];
            else if (t->elem_type == TSR_INT32 && t->nbytes >= (uint64_t)(b + 1) * 4)
                fixed[b] = ((const int32_t *)t->data)[b];
            else ok = false;
        }
        if (!ok)
            return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "sequence_lens is not an integer [%lld]", (long long)B);
        s->fixed = fixed;
        return NULL;
    }
    int64_t count = 0;
    const int64_t *v64 = odn_plan_i64(p, odn_host->node_input(n, 4), &count);
    if (v64) {
        if (count != B) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "sequence_lens is not [%lld]", (long long)B);
        s->fixed = v64;
        return NULL;
    }
    odn_value *v = input(p, n, 4);
    if (!v || !v->mem || (v->elem_type != TSR_INT32 && v->elem_type != TSR_INT64))
        return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "sequence_lens is not an int32 or int64 tensor");
    if (v->rank != 1 || v->dims[0] != B)
        return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "sequence_lens is not [%lld]", (long long)B);
    s->lens64 = v->elem_type == TSR_INT64;
    return odn_plan_plain_mem(p, v, n, &s->lens);
}

/* the constant cache's second key of packed RNN weights, per cell kind
 * (the same W read as an LSTM's and as a GRU's would be packed alike, but
 * keeping them apart costs nothing) */
static const char packed_tags[4] = {0};

/* The packed form of B (k x cols, element (i, j) at src[j * k + i]: a
 * slice of W or R read transposed), from the piece's constant cache or
 * packed now into it. */
static tsr_status *packed(odn_plan *p, const tsr_node *n, int cell, const float *src, int64_t k, int64_t cols,
                          const float **out) {
    size_t floats = odn_sgemm_packed_floats(k, cols);
    int64_t fd[1] = {(int64_t)floats}, sd[2] = {cols, k};
    dnnl_memory_desc_t md, src_md;
    if (!floats || odn_plain_md(&md, 1, fd) != dnnl_success || odn_plain_md(&src_md, 2, sd) != dnnl_success)
        return odn_node_error(n, TSR_ERR_NO_MEMORY, "packed weights of %lld x %lld", (long long)k, (long long)cols);
    float *buf = odn_const_cache_find(p->consts, src, &packed_tags[cell], &src_md, &md);
    if (!buf) {
        buf = odn_const_cache_add(p->consts, src, &packed_tags[cell], &src_md, &md, floats * sizeof(float));
        if (!buf) return odn_node_error(n, TSR_ERR_NO_MEMORY, "packed weights of %zu bytes", floats * sizeof(float));
        odn_sgemm_pack(src, k, cols, 1, k, buf);
        odn_const_cache_ready(p->consts, buf);
    }
    *out = buf;
    return NULL;
}

/* Direction dir's biases: the projection's Wb + Rb per gate, but for lbr
 * GRU's h gate Wb only, its Rb_h going to the step product (inside r's
 * product); zeros without B. */
static tsr_status *biases(odn_plan *p, const tsr_node *n, const odn_rnn_consts *c, seq_ctx *s, int dir) {
    int64_t H = s->hidden, GH = s->gates * H;
    seq_dir *d = &s->dir[dir];
    float *bias, *rbias = NULL;
    tsr_status *e = buffer(p, n, 1, GH, &bias);
    if (!e && s->cell == ODN_RNN_LBR_GRU) e = buffer(p, n, 1, GH, &rbias);
    if (e) return e;
    const float *wb = c->b ? (const float *)c->b->data + dir * 2 * GH : NULL;
    for (int64_t j = 0; wb && j < GH; j++) {
        bool split = rbias && j >= 2 * H;
        bias[j] = split ? wb[j] : wb[j] + wb[GH + j];
        if (split) rbias[j] = wb[GH + j];
    }
    d->bias = bias;
    d->rbias = rbias;
    return NULL;
}

/* Direction dir's packed weights, biases and buffers. */
static tsr_status *direction(odn_plan *p, const tsr_node *n, const odn_rnn_consts *c, seq_ctx *s, int dir) {
    int64_t H = s->hidden, I = s->input, B = s->batch, GH = s->gates * H;
    seq_dir *d = &s->dir[dir];
    const float *w = (const float *)c->w->data + dir * GH * I, *r = (const float *)c->r->data + dir * GH * H;
    bool gru0 = s->cell == ODN_RNN_GRU;
    tsr_status *e = packed(p, n, s->cell, w, I, GH, &d->w);
    if (!e) e = packed(p, n, s->cell, r, H, gru0 ? 2 * H : GH, &d->r);
    if (!e && gru0) e = packed(p, n, s->cell, r + 2 * H * H, H, H, &d->rh);
    if (!e) e = biases(p, n, c, s, dir);
    if (!e) e = buffer(p, n, s->chunk * B, GH, &d->proj);
    if (!e) e = buffer(p, n, B, GH, &d->g);
    if (!e) e = buffer(p, n, B, H, &d->h);
    if (!e && s->cell == ODN_RNN_LSTM) e = buffer(p, n, B, H, &d->c);
    if (!e && gru0) e = buffer(p, n, B, H, &d->gh);
    if (!e && gru0) e = buffer(p, n, B, H, &d->rx);
    d->peep = c->p ? (const float *)c->p->data + dir * 3 * H : NULL;
    return e;
}

/* The ONNX tensors the loop reads and writes. */
static tsr_status *tensors(odn_plan *p, const tsr_node *n, const odn_rnn_attrs_t *a, seq_ctx *s) {
    int64_t B = s->batch, T = s->steps, I = s->input, H = s->hidden;
    int64_t xd[3] = {a->layout ? B : T, a->layout ? T : B, I};
    int64_t sd[3] = {a->layout ? B : a->dirs, a->layout ? a->dirs : B, H};
    bool lstm = s->cell == ODN_RNN_LSTM;
    tsr_status *e = plain_in(p, n, input(p, n, 0), "X", xd, &s->x);
    if (e) return e;
    odn_value *ih = input(p, n, 5), *ic = lstm ? input(p, n, 6) : NULL;
    if (ih && (e = plain_in(p, n, ih, "initial_h", sd, &s->ih))) return e;
    if (ic && (e = plain_in(p, n, ic, "initial_c", sd, &s->ic))) return e;
    odn_value *y = output(p, n, 0), *yh = output(p, n, 1), *yc = lstm ? output(p, n, 2) : NULL;
    if (y) {
        int64_t shape[4] = {a->layout ? B : T, a->layout ? T : a->dirs, a->layout ? a->dirs : B, H};
        if ((e = odn_plan_define(p, y, 4, shape, NULL, n)) || (e = odn_plan_plain_mem(p, y, n, &s->y))) return e;
    }
    if (yh && ((e = odn_plan_define(p, yh, 3, sd, NULL, n)) || (e = odn_plan_plain_mem(p, yh, n, &s->yh)))) return e;
    if (yc && ((e = odn_plan_define(p, yc, 3, sd, NULL, n)) || (e = odn_plan_plain_mem(p, yc, n, &s->yc)))) return e;
    return NULL;
}

static int cell_act(dnnl_alg_kind_t alg) {
    return alg == dnnl_eltwise_relu ? ODN_CELL_RELU : alg == dnnl_eltwise_logistic ? ODN_CELL_SIGMOID : ODN_CELL_TANH;
}

tsr_status *odn_build_rnn_seqlens(odn_plan *p, const tsr_node *n, const odn_rnn_attrs_t *a, const odn_rnn_consts *c,
                                  int64_t steps, int64_t batch) {
    if (!odn_sgemm_supported())
        return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "per-row sequence_lens need AVX2 and FMA");
    seq_ctx *s = odn_plan_alloc(p, sizeof *s);
    if (!s) return odn_node_error(n, TSR_ERR_NO_MEMORY, "RNN context");
    int64_t B = batch, GH = (int64_t)a->gates * c->hidden, per_step = B * GH;
    *s = (seq_ctx){.node = n,
                   .steps = steps,
                   .batch = B,
                   .input = c->input,
                   .hidden = c->hidden,
                   .layout = a->layout,
                   .gates = a->gates,
                   .chunk = per_step >= PROJ_FLOATS ? 1 : PROJ_FLOATS / per_step,
                   .dirs = a->dirs,
                   .cell = a->cell,
                   .act = cell_act(a->activation)};
    if (s->chunk > steps) s->chunk = steps;
    s->dir[0].reverse = a->direction == dnnl_unidirectional_right2left;
    s->dir[1].reverse = true;
    s->len = odn_plan_alloc(p, (size_t)B * sizeof(int64_t));
    if (!s->len) return odn_node_error(n, TSR_ERR_NO_MEMORY, "RNN context");
    tsr_status *e = lengths(p, n, c, s);
    if (!e) e = tensors(p, n, a, s);
    for (int d = 0; !e && d < a->dirs; d++) e = direction(p, n, c, s, d);
    if (e) return e;
    if (!p->sgemm_scratch) {
        p->sgemm_threads = omp_get_max_threads();
        p->sgemm_scratch = odn_plan_alloc(p, odn_sgemm_scratch_floats(p->sgemm_threads) * sizeof(float));
        if (!p->sgemm_scratch) return odn_node_error(n, TSR_ERR_NO_MEMORY, "packed gemm scratch");
    }
    s->scratch = p->sgemm_scratch;
    s->scratch_threads = p->sgemm_threads;
    /* the loop reads and writes the ONNX tensors (named for the arena);
     * its dst is an output it writes, or a float of its own when every
     * output is omitted */
    dnnl_memory_t out = s->y ? s->y : s->yh ? s->yh : s->yc;
    if (!out) {
        dnnl_memory_desc_t one;
        int64_t dims[1] = {1};
        if (odn_plain_md(&one, 1, dims) != dnnl_success) return odn_node_error(n, TSR_ERR_PROVIDER, "RNN output");
        if ((e = odn_plan_new_mem(p, &one, DNNL_MEMORY_ALLOCATE, n, &out))) return e;
    }
    dnnl_memory_t touched[7] = {s->x, out, s->ih, s->ic, s->lens, s->yh, s->yc};
    dnnl_exec_arg_t largs[8];
    int k = 0;
    for (int i = 0; i < 7; i++)
        if (touched[i]) largs[k++] = (dnnl_exec_arg_t){i == 1 ? DNNL_ARG_DST : DNNL_ARG_MULTIPLE_SRC + i, touched[i]};
    e = odn_plan_add_loop_args(p, run_seq, s, largs, k, n);
    if (!e) snprintf(p->steps[p->step_count - 1].impl, sizeof p->steps[0].impl, "rnn_steps:avx2");
    return e;
}
